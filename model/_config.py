"""Numerical set-up shared by every dynamics module.

- **float64, on import.** Contact mechanics spans penetrations of ~1e-7 m against
  positions of ~1e-1 m and forces that rise by orders of magnitude within microseconds;
  float32 cannot resolve that, so importing any part of the package enables JAX's 64-bit
  mode (``jax_enable_x64``). This is the only global setting an import changes.
- **XLA's CPU code generator, on request.** :func:`configure` adds the two flags of
  :data:`CPU_FLAGS` to ``XLA_FLAGS`` (each unless the user set it there). The ``clearance``
  command, its sweep workers and the test suite call it; a Python user may, before the
  first JAX computation of the process (XLA reads its flags once, when JAX starts its CPU
  backend). Importing ``model`` leaves ``XLA_FLAGS`` alone.

  - ``--xla_cpu_use_fusion_emitters=false``: XLA's fusion emitters compile a mechanism's
    vector field (a few thousand scalar operations on arrays of a few elements) markedly
    slower than the elemental emitters, and the code they emit is no faster.
  - ``--xla_cpu_experimental_ynn_fusion_type=`` (empty: none): by default XLA hands
    reductions and small matrix products to the YNNPACK library, one call per fusion,
    which costs far more than the elemental loop for the 3 x 3 to 6 x 6 products of a
    mechanism (:mod:`model.geometry.vectors` writes them as a broadcast and a sum).

  The measurements behind both choices: docs/BENCHMARKS.md, "XLA CPU flags".
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


def configure() -> None:
    """Apply the package's tuned XLA CPU flags (:data:`CPU_FLAGS`, jaxlib 0.10 and later)
    and make sure float64 is on. Call it before the process's first JAX computation; the
    flags apply to a CPU backend started afterwards, in this process or in processes
    started from it (they inherit ``XLA_FLAGS``). Idempotent."""
    jax.config.update("jax_enable_x64", True)
    if _jaxlib_version() >= _CPU_FLAGS_SINCE:
        add_xla_flags(CPU_FLAGS)
