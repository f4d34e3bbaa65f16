"""Manufacturing cost of a clearance tolerance (dimensionless cost units).

A clearance joint is specified by the band of radial clearances the drawing allows,
``[min_clearance, c]``: the design variable ``c`` (``joints.J.clearance``) is the largest
clearance the mechanism must still tolerate (the worst case the performance is checked
at), ``min_clearance`` the smallest one the joint needs to run (default 0: line-to-line).
The narrower the band ``w = c - min_clearance``, the finer the machining, the higher the
cost. Two classical tolerance-cost curves (Chase, Greenwood, Loosli & Hauglund, Manuf.
Rev. 3 (1990); Speckhart, J. Eng. Ind. 94 (1972); review: Hallmann, Schleich & Wartzack,
J. Mech. Des. 142 (2020)):

- ``reciprocal_power``: ``C = fixed + scale (w_ref / w)^exponent`` (exponent 1: the
  reciprocal model; 2: Spotts' reciprocal-squared model),
- ``exponential``: ``C = fixed + scale exp(-exponent (w - w_ref) / w_ref)``,

both equal to ``fixed + scale`` at the reference band ``w_ref`` and rising as the band
narrows. Other design variables (a bearing radius, a speed) may carry a linear cost
``weight (x - lower) / (upper - lower)`` over their bounds (:class:`LinearCost`).

Everything is pure JAX, so the optimiser differentiates it.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike

COST_MODELS = ("reciprocal_power", "exponential")

# Bands narrower than this share of the reference band are priced as if they were this
# wide, so that the cost stays finite (and differentiable) at a zero-width band.
_MIN_BAND_SHARE = 1e-6


class ToleranceCost(eqx.Module):
    """Cost of the clearance band ``[min_clearance, clearance]`` of one joint.

    **Fields** (lengths in m): ``model`` (one of :data:`COST_MODELS`), ``reference_band``
    ``w_ref`` (> 0), ``min_clearance`` (>= 0), ``scale`` (> 0), ``exponent`` (> 0),
    ``fixed`` (any).
    """

    reference_band: float
    model: str = eqx.field(static=True, default="reciprocal_power")
    min_clearance: float = 0.0
    scale: float = 1.0
    exponent: float = 1.0
    fixed: float = 0.0

    def __check_init__(self):
        if self.model not in COST_MODELS:
            raise ValueError(f"unknown cost model {self.model!r}; expected one of {COST_MODELS}")
        for name in ("reference_band", "scale", "exponent"):
            if not float(getattr(self, name)) > 0.0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        if not float(self.min_clearance) >= 0.0:
            raise ValueError(f"min_clearance must be >= 0, got {self.min_clearance!r}")

    def band(self, clearance: ArrayLike) -> Array:
        """Width ``w`` (m) of the allowed clearance band."""
        return jnp.asarray(clearance) - self.min_clearance

    def __call__(self, clearance: ArrayLike) -> Array:
        band = jnp.maximum(self.band(clearance), _MIN_BAND_SHARE * self.reference_band)
        ratio = band / self.reference_band
        if self.model == "reciprocal_power":
            variable = ratio ** (-self.exponent)
        else:
            variable = jnp.exp(-self.exponent * (ratio - 1.0))
        return self.fixed + self.scale * variable


class LinearCost(eqx.Module):
    """``weight (x - lower) / (upper - lower)``: a cost (or, with a negative weight, a
    benefit) proportional to where a design variable sits within its bounds."""

    weight: float
    lower: float
    upper: float

    def __call__(self, value: ArrayLike) -> Array:
        return self.weight * (jnp.asarray(value) - self.lower) / (self.upper - self.lower)
