"""The time window of the summary metrics: ``t >= start``, so that a start transient can be
left out of the peaks (``[metrics]`` of a config; docs/metrics.md).

:class:`MetricsWindow` is a field of every mechanism (``metrics_window``), so it travels
with the mechanism into :func:`model.simulate` and the refilling-lane ensemble, and under
``vmap`` its start is a traced value of each point (never a Python branch).
"""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float


class MetricsWindow(eqx.Module):
    """The metrics count ``t >= skip + revolutions * 2 pi / |omega|`` only.

    ``skip`` (s); ``revolutions``: turns of the mechanism's first constant-speed driver
    (``omega``, rad/s, its speed), 0 when it has none. Both default to 0: every metric over
    the whole run.
    """

    skip: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(0.0))  # s
    revolutions: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(0.0))

    def start(self, drivers) -> Float[Array, ""]:
        """The window's start (s) for a mechanism with ``drivers`` (each with ``kind`` and
        ``speed``, rad/s)."""
        speeds = [driver.speed for driver in drivers if driver.kind == "constant_speed"]
        if not speeds:
            return jnp.asarray(self.skip, float)
        speed = jnp.abs(speeds[0])
        moving = speed > 0.0
        period = jnp.where(moving, 2.0 * jnp.pi / jnp.where(moving, speed, 1.0), 0.0)
        return self.skip + self.revolutions * period
