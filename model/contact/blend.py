"""Smooth blends between two levels, as the ADAMS solver's ``STEP`` and ``HAVSIN`` functions.

Both go from ``h0`` at ``x0`` to ``h1`` at ``x1`` with zero slope at both ends and are
constant outside ``[x0, x1]``; they are continuous and differentiable everywhere, so they
keep ``grad`` finite where a law switches regime (MSC ADAMS/Solver function reference).
"""

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike


def _fraction(x: ArrayLike, x0: ArrayLike, x1: ArrayLike) -> Array:
    """``D = (x - x0)/(x1 - x0)`` clamped to [0, 1]."""
    return jnp.clip((jnp.asarray(x) - x0) / (jnp.asarray(x1) - x0), 0.0, 1.0)


def cubic_step(x: ArrayLike, x0: ArrayLike, h0: ArrayLike, x1: ArrayLike, h1: ArrayLike) -> Array:
    """Cubic blend (ADAMS ``STEP``): ``h0 + (h1 - h0) D^2 (3 - 2 D)``, ``D`` as above."""
    fraction = _fraction(x, x0, x1)
    return h0 + (jnp.asarray(h1) - h0) * fraction**2 * (3.0 - 2.0 * fraction)


def haversine_step(x: ArrayLike, x0: ArrayLike, h0: ArrayLike, x1: ArrayLike, h1: ArrayLike) -> Array:
    """Half-sine blend (ADAMS ``HAVSIN``): ``h0 + (h1 - h0) (1 - cos(pi D)) / 2``.

    Equal to ADAMS' form ``(h0 + h1)/2 + (h1 - h0)/2 sin(pi D - pi/2)``.
    """
    fraction = _fraction(x, x0, x1)
    return h0 + (jnp.asarray(h1) - h0) * 0.5 * (1.0 - jnp.cos(jnp.pi * fraction))
