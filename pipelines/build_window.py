"""The ``[metrics]`` table of a planar or spatial config as the model's
:class:`~model.window.MetricsWindow` (shared by both builders)."""

from __future__ import annotations

import jax.numpy as jnp

from model.window import MetricsWindow


def metrics_window(config) -> MetricsWindow:
    """The window the summary metrics count: ``skip`` (s) and the turns of the first
    constant-speed driver, ``skip_revolutions``, both from ``config.metrics``."""
    return MetricsWindow(skip=jnp.asarray(config.metrics.skip, float),
                         revolutions=jnp.asarray(config.metrics.skip_revolutions, float))
