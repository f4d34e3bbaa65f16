"""Configs in, results out: the ``clearance`` commands and the Python entry point.

``pipelines.load(path)`` loads a mechanism config and returns a
:class:`~pipelines.api.ConfiguredMechanism` (simulate, metrics, parameters by dotted path;
docs/api.md). It is imported on first use, so the command line starts without JAX.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["ConfiguredMechanism", "load"]

if TYPE_CHECKING:
    from .api import ConfiguredMechanism, load


def __getattr__(name: str):
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'pipelines' has no attribute {name!r}")
