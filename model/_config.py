"""Numerical set-up shared by every dynamics module.

- **float64.** Contact mechanics spans penetrations of ~1e-7 m against positions of ~1e-1
  m and forces that rise by orders of magnitude within microseconds; float32 cannot
  resolve that, so the package enables JAX's 64-bit mode as soon as any part of it is
  imported.
- **XLA's CPU code generator.** A mechanism's vector field is a few thousand scalar
  operations on arrays of a few elements per lane; two of XLA's CPU defaults in jaxlib
  0.10 cost time there, so importing the package adds both flags below to ``XLA_FLAGS``
  (each unless the user set it). Like any XLA flag they take effect only if JAX has not
  yet started its CPU backend in the process (import ``model`` before the first
  computation).

  - ``--xla_cpu_use_fusion_emitters=false``: the fusion emitters spend 1.4-2x longer
    compiling than the elemental emitters and the code they emit is no faster. Measured
    on this project's 2-core machine (compile of one ``jit(simulate)``, Flores
    slider-crank): planar 5.2 s against 2.7 s, spatial 17.5 s against 12.7 s, flexible
    7.4 s against 3.6 s; the refilling-lane sweep of 64 Flores points ran 13.6 against
    15.7 simulations per second.
  - ``--xla_cpu_experimental_ynn_fusion_type=`` (empty: none): by default XLA hands
    reductions and small matrix products to the YNNPACK library, one call per fusion,
    which for a product of 5 x 6 blocks over 32 lanes took 6-30 us where the elemental
    loop takes about 1 us. With the products written as a broadcast and a sum
    (:mod:`model.geometry.vectors`), one evaluation of the spatial slider-crank's vector
    field fell from 3.0 to 1.9 us per lane at 32 lanes.
"""

import os
from collections.abc import Sequence
from importlib import metadata

import jax

jax.config.update("jax_enable_x64", True)

CPU_FLAGS = ("--xla_cpu_use_fusion_emitters=false", "--xla_cpu_experimental_ynn_fusion_type=")
# XLA aborts the process on a flag it does not know: both are in jaxlib 0.10.0 to 0.10.2 (read
# from the libraries; runs tested with 0.10.2), so they are applied from 0.10 on and not before.
_CPU_FLAGS_SINCE = (0, 10)


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


if _jaxlib_version() >= _CPU_FLAGS_SINCE:
    add_xla_flags(CPU_FLAGS)
