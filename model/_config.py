"""Numerical set-up shared by every dynamics module.

- **float64.** Contact mechanics spans penetrations of ~1e-7 m against positions of ~1e-1
  m and forces that rise by orders of magnitude within microseconds; float32 cannot
  resolve that, so the package enables JAX's 64-bit mode as soon as any part of it is
  imported.
- **XLA's CPU code generator.** A mechanism's vector field is a few thousand scalar
  operations with no large arrays. For such programs the fusion emitters, the default of
  XLA's CPU backend in jaxlib 0.10, spend 1.4-2x longer compiling than its elemental
  emitters and the code they emit is no faster. Measured on this project's 2-core
  machine (compile of one ``jit(simulate)``, Flores slider-crank): planar 5.2 s against
  2.7 s, spatial 17.5 s against 12.7 s, flexible 7.4 s against 3.6 s; the refilling-lane
  sweep of 64 Flores points ran 13.6 against 15.7 simulations per second. Importing the
  package therefore adds ``--xla_cpu_use_fusion_emitters=false`` to ``XLA_FLAGS`` unless
  the user set that flag; like any XLA flag it takes effect only if JAX has not yet
  started its CPU backend in the process (import ``model`` before the first computation).
"""

import os
from collections.abc import Sequence
from importlib import metadata

import jax

jax.config.update("jax_enable_x64", True)

FAST_COMPILING_CPU_FLAGS = ("--xla_cpu_use_fusion_emitters=false",)
# XLA aborts the process on a flag it does not know; tested with jaxlib 0.10.2, so applied
# from 0.10 on and not to older releases.
_FAST_COMPILING_SINCE = (0, 10)


def add_xla_flags(flags: Sequence[str]) -> None:
    """Append ``flags`` (``--name=value``) to ``XLA_FLAGS``, except those whose name the
    user already set there. Takes effect only for a backend JAX starts afterwards (in this
    process, or in processes started from it, which inherit the environment)."""
    current = os.environ.get("XLA_FLAGS", "").split()
    names = {flag.split("=")[0] for flag in current}
    current += [flag for flag in flags if flag.split("=")[0] not in names]
    os.environ["XLA_FLAGS"] = " ".join(current)


def _jaxlib_version() -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in metadata.version("jaxlib").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return (0, 0)


if _jaxlib_version() >= _FAST_COMPILING_SINCE:
    add_xla_flags(FAST_COMPILING_CPU_FLAGS)
