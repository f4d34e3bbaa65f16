"""Fitted parameters: bounds and linear/log scales, mapped to an unconstrained space.

The optimisers work on ``u in R^p``; each parameter's physical value (SI) is

- bounded, linear: ``x = lo + (hi - lo) sigmoid(u)``
- bounded, log:    ``x = exp(log lo + (log hi - log lo) sigmoid(u))``
- unbounded, linear: ``x = x0 + |x0| u`` (``u`` in units of the initial value)
- unbounded, log:    ``x = x0 exp(u)``

so the bounds can never be left and a log-scaled stiffness moves by decades. The *scaled
position* ``s = sigmoid(u)`` in ``[0, 1]`` says where a bounded value sits in its range.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

SCALES = ("linear", "log")
# Starting points are kept this far inside the scaled range [0, 1] (a sigmoid at 0 or 1
# has a vanishing gradient).
EDGE = 1e-6
START_EDGE = 0.02


@dataclasses.dataclass(frozen=True)
class FitParameter:
    """One fitted quantity: a dotted ``path``, its ``initial`` value and bounds in SI, its scale."""

    path: str
    initial: float
    lower: float | None = None
    upper: float | None = None
    scale: str = "linear"

    @property
    def bounded(self) -> bool:
        return self.lower is not None


class ParameterTransform(eqx.Module):
    """Pure-JAX map between unconstrained ``u`` and physical values ``x`` (SI)."""

    initial: Float[Array, " p"]
    low: Float[Array, " p"]  # log(lower) for log scale
    high: Float[Array, " p"]
    bounded: tuple[bool, ...] = eqx.field(static=True)
    log: tuple[bool, ...] = eqx.field(static=True)

    def __init__(self, parameters: Sequence[FitParameter]):
        self.bounded = tuple(p.bounded for p in parameters)
        self.log = tuple(p.scale == "log" for p in parameters)

        def ends(p: FitParameter) -> tuple[float, float]:
            if not p.bounded:
                return 0.0, 1.0
            return (np.log(p.lower), np.log(p.upper)) if p.scale == "log" else (p.lower, p.upper)

        self.initial = jnp.asarray([p.initial for p in parameters], jnp.float64)
        self.low = jnp.asarray([ends(p)[0] for p in parameters], jnp.float64)
        self.high = jnp.asarray([ends(p)[1] for p in parameters], jnp.float64)

    def _one(self, i: int, u):
        if self.bounded[i]:
            y = self.low[i] + (self.high[i] - self.low[i]) * jax.nn.sigmoid(u)
            return jnp.exp(y) if self.log[i] else y
        if self.log[i]:
            return self.initial[i] * jnp.exp(u)
        scale = jnp.where(self.initial[i] != 0.0, jnp.abs(self.initial[i]), 1.0)
        return self.initial[i] + scale * u

    def to_physical(self, u: Float[Array, " p"]) -> Float[Array, " p"]:
        """Physical values (SI) of the unconstrained ``u``."""
        return jnp.stack([self._one(i, u[i]) for i in range(len(self.bounded))])

    def derivative(self, u: Float[Array, " p"]) -> Float[Array, " p"]:
        """``dx_i / du_i``; the map is diagonal, so one JVP with a tangent of ones gives all."""
        return jax.jvp(self.to_physical, (u,), (jnp.ones_like(u),))[1]

    def scaled_position(self, x) -> np.ndarray:
        """Where each bounded value sits in its range, ``0`` at the lower bound, ``1`` at the
        upper (log-scaled parameters on the log axis); NaN for unbounded parameters."""
        x = np.asarray(x, np.float64)
        y = np.where(np.asarray(self.log), np.log(np.maximum(x, 1e-300)), x)
        low, high = np.asarray(self.low), np.asarray(self.high)
        return np.where(np.asarray(self.bounded), (y - low) / (high - low), np.nan)

    def to_unconstrained(self, x) -> np.ndarray:
        """Inverse of :meth:`to_physical` (values at a bound are moved just inside it)."""
        x = np.asarray(x, np.float64)
        initial = np.asarray(self.initial)
        u = np.empty_like(x)
        position = np.clip(self.scaled_position(x), EDGE, 1.0 - EDGE)
        for i in range(x.size):
            if self.bounded[i]:
                u[i] = np.log(position[i] / (1.0 - position[i]))
            elif self.log[i]:
                u[i] = np.log(x[i] / initial[i])
            else:
                u[i] = (x[i] - initial[i]) / (abs(initial[i]) if initial[i] != 0.0 else 1.0)
        return u

    def starts(self, count: int, spread: float, seed: int) -> np.ndarray:
        """``count`` unconstrained starting points: the initial values, then random points
        around them: uniform within ``+-spread`` of the scaled range for a bounded
        parameter, normal with standard deviation ``spread`` (relative, or in log) else."""
        rng = np.random.default_rng(seed)
        first = self.to_unconstrained(np.asarray(self.initial))
        points = [first]
        position = np.clip(self.scaled_position(np.asarray(self.initial)), START_EDGE, 1.0 - START_EDGE)
        for _ in range(count - 1):
            u = first + spread * rng.standard_normal(first.size)
            moved = np.clip(position + spread * rng.uniform(-1.0, 1.0, first.size), START_EDGE, 1.0 - START_EDGE)
            u = np.where(np.asarray(self.bounded), np.log(moved / (1.0 - moved)), u)
            points.append(u)
        return np.stack(points)

    def screen(self, count: int, spread: float, seed: int) -> np.ndarray:
        """``count`` unconstrained points spread evenly (scrambled Sobol sequence; Owen 1998)
        over the whole scaled range of every bounded parameter, and over ``+-3 spread``
        (normal quantiles) around the initial value of an unbounded one: the candidates of a
        start search in a rough loss landscape."""
        from scipy.stats import norm, qmc

        unit = qmc.Sobol(len(self.bounded), scramble=True, seed=seed).random(count)
        unit = np.clip(unit, START_EDGE, 1.0 - START_EDGE)
        around = self.to_unconstrained(np.asarray(self.initial)) + 3.0 * spread * norm.ppf(unit) / norm.ppf(1.0 - START_EDGE)
        return np.where(np.asarray(self.bounded), np.log(unit / (1.0 - unit)), around)
