"""Tangential (friction) force laws, regularised so that they are continuous in the slip.

Every law returns ``F_t = mu(v) F_n`` with ``mu`` odd in the slip velocity ``v`` (so ``F_t``
has the sign of ``v`` and vanishes at ``v = 0``); the engine applies ``-F_t t`` to the
journal, i.e. friction opposes slip (REFERENCE.md §1). A discontinuous Coulomb law would
chatter at slip reversals and break ``grad``, hence the regularisations (seed 000 §2.3).

Laws (REFERENCE.md §3):

- ``none``: no friction.
- ``coulomb_tanh``: ``mu F_n tanh(v / v0)`` (seed 000 §2.3). Default ``v0 = 0.01 m/s``
  (seed 000: 0.005–0.05 m/s; §6.4 start value 0.01 m/s).
- ``ambrosio``: ``mu c_d F_n sign(v)`` with ``c_d = 0`` for ``|v| <= v0``, linear to 1 at
  ``v1``, 1 above (Ambrósio, 2003; Flores et al., LNACM 34, 2008). Defaults
  ``v0 = 1e-4 m/s``, ``v1 = 1e-3 m/s`` (order of the values used by Flores et al.).
- ``static_dynamic``: ADAMS-style static/dynamic transition (Yao, Chen, Wang & Liu; MSC ADAMS
  contact friction): ``mu`` rises from 0 at ``v = 0`` to ``mu_s`` at ``|v| = v_s`` by
  ``STEP(v, -v_s, -mu_s, v_s, mu_s)``, falls from ``mu_s`` to ``mu_d`` between ``v_s`` and
  ``v_d`` along the haversine (half-sine) curve ``havsin`` of that method, and stays
  ``mu_d`` above ``v_d``. Defaults ``v_s = 1.0 mm/s``, ``v_d = 1.5 mm/s`` (Yao, Chen, Wang & Liu, §3.3).
"""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from .normal import step

FRICTION_LAWS = ("none", "coulomb_tanh", "ambrosio", "static_dynamic")

Scalar = float | Float[Array, ""]

# (stiction_velocity, dynamic_velocity) defaults per law, m/s; see the module docstring.
DEFAULT_FRICTION_VELOCITIES: dict[str, tuple[float, float]] = {
    "none": (1e-2, 1e-2),
    "coulomb_tanh": (1e-2, 1e-2),  # only v0 is used
    "ambrosio": (1e-4, 1e-3),
    "static_dynamic": (1.0e-3, 1.5e-3),
}


class FrictionLaw(eqx.Module):
    """Parameters of a friction law (SI units).

    **Fields:**

    - ``model``: one of :data:`FRICTION_LAWS` (static).
    - ``coefficient``: ``mu`` (the dynamic ``mu_d`` for ``static_dynamic``).
    - ``static_coefficient``: ``mu_s`` for ``static_dynamic``; ``None`` means ``mu_s = mu``.
    - ``stiction_velocity`` (m/s): ``v0`` of ``coulomb_tanh`` and ``ambrosio``, ``v_s`` of
      ``static_dynamic``; ``None`` takes the law's default.
    - ``dynamic_velocity`` (m/s): ``v1`` of ``ambrosio``, ``v_d`` of ``static_dynamic``;
      ``None`` takes the law's default.
    """

    model: str = eqx.field(static=True)
    coefficient: Scalar = 0.0
    static_coefficient: Scalar | None = None
    stiction_velocity: Scalar | None = None
    dynamic_velocity: Scalar | None = None

    def __check_init__(self):
        if self.model not in FRICTION_LAWS:
            raise ValueError(f"unknown friction law {self.model!r}; expected one of {FRICTION_LAWS}")

    @property
    def velocities(self) -> tuple[Scalar, Scalar]:
        """``(stiction_velocity, dynamic_velocity)`` (m/s) with the law's defaults filled in."""
        default_stiction, default_dynamic = DEFAULT_FRICTION_VELOCITIES[self.model]
        stiction = default_stiction if self.stiction_velocity is None else self.stiction_velocity
        dynamic = default_dynamic if self.dynamic_velocity is None else self.dynamic_velocity
        return stiction, dynamic

    @property
    def static(self) -> Scalar:
        """``mu_s``, defaulting to ``coefficient``."""
        return self.coefficient if self.static_coefficient is None else self.static_coefficient


def haversine(x: ArrayLike, x0: ArrayLike, h0: ArrayLike, x1: ArrayLike, h1: ArrayLike) -> Array:
    """ADAMS ``HAVSIN(x, x0, h0, x1, h1)``: half-sine from ``h0`` at ``x0`` to ``h1`` at ``x1``.

    ``h0 + (h1 - h0) (1 - cos(pi D)) / 2`` with ``D`` clamped to [0, 1]; equal to ADAMS'
    ``(h0+h1)/2 + (h1-h0)/2 sin(pi D - pi/2)``. Zero slope at both ends.
    """
    fraction = jnp.clip((jnp.asarray(x) - x0) / (jnp.asarray(x1) - x0), 0.0, 1.0)
    return h0 + (jnp.asarray(h1) - h0) * 0.5 * (1.0 - jnp.cos(jnp.pi * fraction))


def friction_coefficient(law: FrictionLaw, slip_velocity: Float[ArrayLike, "..."]) -> Float[Array, "..."]:
    """Signed friction coefficient ``mu(v)``, odd in the slip velocity ``v`` (m/s)."""
    v = jnp.asarray(slip_velocity, dtype=float)
    stiction_velocity, dynamic_velocity = law.velocities
    if law.model == "none":
        return jnp.zeros_like(v)
    if law.model == "coulomb_tanh":
        return law.coefficient * jnp.tanh(v / stiction_velocity)
    speed = jnp.abs(v)
    if law.model == "ambrosio":
        # sign(v) * ramp; the ramp is 0 near v = 0, so sign(0) = 0 is harmless.
        ramp = jnp.clip((speed - stiction_velocity) / (dynamic_velocity - stiction_velocity), 0.0, 1.0)
        return law.coefficient * jnp.sign(v) * ramp
    # static_dynamic: every branch is finite everywhere, so the where() is grad-safe.
    stiction = step(v, -stiction_velocity, -law.static, stiction_velocity, law.static)
    transition = jnp.sign(v) * haversine(
        speed, stiction_velocity, law.static, dynamic_velocity, law.coefficient
    )
    return jnp.where(speed <= stiction_velocity, stiction, transition)


def friction_force(
    law: FrictionLaw,
    normal_force: Float[ArrayLike, "..."],
    slip_velocity: Float[ArrayLike, "..."],
) -> Float[Array, "..."]:
    """Friction force ``F_t = mu(v) F_n`` (N), with the sign of the slip velocity ``v`` (m/s).

    ``normal_force`` is ``F_n >= 0`` (N). The engine applies ``-F_t t`` to the journal.
    """
    return friction_coefficient(law, slip_velocity) * jnp.asarray(normal_force, dtype=float)
