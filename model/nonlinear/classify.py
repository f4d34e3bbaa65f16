"""Classification of a motion from its stroboscopic section and largest exponent.

A motion whose section points repeat after ``p`` driver periods (every point within
``tolerance`` of the point ``p`` samples later, in the caller's dimensionless section
coordinates) is periodic of period ``p`` (a period-``p`` orbit, Parker & Chua 1989,
"Practical Numerical Algorithms for Chaotic Systems", ch. 6); otherwise it is chaotic when
its largest Lyapunov exponent is positive beyond its own uncertainty, and quasi-periodic
when that exponent is not positive (a torus: a closed curve of section points, zero
largest exponent). Without an exponent a non-repeating motion is only "aperiodic".
Pure JAX: ``vmap`` classifies a batch.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float, Int

FAILED, PERIODIC, QUASI_PERIODIC, CHAOTIC, APERIODIC = 0, 1, 2, 3, 4
MOTION_NAMES = ("failed", "periodic", "quasi-periodic", "chaotic", "aperiodic")


def section_period(points: Float[Array, "samples d"], max_period: int, tolerance: ArrayLike) -> Int[Array, ""]:
    """The smallest ``p`` in ``1..max_period`` with ``|x_{i+p} - x_i|_inf <= tolerance``
    for every sample ``i`` (dimensionless coordinates), else 0 (none found). Needs
    ``samples > max_period``."""
    samples = points.shape[0]
    if samples <= max_period:
        raise ValueError(f"{samples} section samples cannot show a period up to {max_period}; need more")
    periods = jnp.arange(1, max_period + 1)
    # the same pairs for every p: each of the last samples - max_period points against
    # the point p samples earlier
    later = points[max_period:]
    earlier = jnp.stack([points[max_period - p : samples - p] for p in range(1, max_period + 1)])
    repeats = jnp.all(jnp.max(jnp.abs(later - earlier), axis=-1) <= tolerance, axis=-1)
    return jnp.where(jnp.any(repeats), periods[jnp.argmax(repeats)], 0)


def classify_motion(period: Int[Array, ""], largest_exponent: Float[Array, ""] | None, change: Float[Array, ""] | None,
                    threshold: ArrayLike, success: ArrayLike = True) -> Int[Array, ""]:
    """The motion code (``MOTION_NAMES[code]``): ``FAILED`` for a failed solve, ``PERIODIC``
    when ``period > 0``, else ``CHAOTIC`` when ``largest_exponent > threshold`` and
    ``> change`` (its change over the last quarter of the run, the convergence
    indicator), ``QUASI_PERIODIC`` otherwise, ``APERIODIC`` without an exponent
    (``largest_exponent=None``). ``threshold`` in the exponent's units."""
    if largest_exponent is None:
        other = jnp.asarray(APERIODIC)
    else:
        chaotic = (largest_exponent > threshold) & (largest_exponent > change)
        other = jnp.where(chaotic, CHAOTIC, QUASI_PERIODIC)
    code = jnp.where(period > 0, PERIODIC, other)
    return jnp.where(jnp.asarray(success), code, FAILED)


__all__ = ["APERIODIC", "CHAOTIC", "FAILED", "MOTION_NAMES", "PERIODIC", "QUASI_PERIODIC", "classify_motion",
           "section_period"]
