"""Tangential (friction) force laws, regularised so that they are continuous in the slip.

Every law returns ``F_t = mu(v) F_n`` with ``mu`` odd in the slip velocity ``v`` (so ``F_t``
has the sign of ``v`` and vanishes at ``v = 0``); the engine applies ``-F_t t`` to the
journal, i.e. friction opposes slip. A discontinuous Coulomb law would chatter at slip
reversals and break ``grad``, hence the regularisations.

Each law is one final subclass of :class:`AbstractFrictionLaw`, registered by name in
:data:`FRICTION_LAW_CLASSES` with its default transition velocities; :class:`FrictionLaw`
holds the parameters and a law name, and :attr:`FrictionLaw.law` gives the law object.

- ``none``: no friction.
- ``coulomb_tanh``: ``mu F_n tanh(v / v0)``; default ``v0 = 10 mm/s`` (typical values
  5–50 mm/s).
- ``ambrosio``: ``mu c_d F_n sign(v)`` with ``c_d = 0`` for ``|v| <= v0``, linear to 1 at
  ``v1``, 1 above (Ambrósio, 2003; Flores et al., LNACM 34, 2008). Defaults
  ``v0 = 0.1 mm/s``, ``v1 = 1 mm/s`` (order of the values used by Flores et al.).
- ``static_dynamic``: the ADAMS contact friction: ``mu`` rises from 0 at ``v = 0`` to
  ``mu_s`` at ``|v| = v_s`` by a cubic step, falls from ``mu_s`` to ``mu_d`` between ``v_s``
  and ``v_d`` along a half-sine (haversine) step, and stays ``mu_d`` above ``v_d``.
  Defaults ``v_s = 1.0 mm/s``, ``v_d = 1.5 mm/s``.
"""

import abc
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from .._typing import Scalar
from .blend import cubic_step, haversine_step


class AbstractFrictionLaw(eqx.Module):
    """A friction law ``mu(v)``, odd in the slip velocity ``v`` (m/s).

    Subclasses set ``name`` (the config's ``friction.model``) and ``default_velocities``
    (``(stiction_velocity, dynamic_velocity)`` in m/s, taken when a run gives none), and
    implement :meth:`coefficient`.
    """

    name: ClassVar[str]
    default_velocities: ClassVar[tuple[float, float]]

    @abc.abstractmethod
    def coefficient(self, params: "FrictionLaw", slip_velocity: Array) -> Array:
        """Signed friction coefficient ``mu(v)`` (dimensionless)."""


FRICTION_LAW_CLASSES: dict[str, type[AbstractFrictionLaw]] = {}


def register_friction_law(cls: type[AbstractFrictionLaw]) -> type[AbstractFrictionLaw]:
    """Class decorator: make ``cls`` selectable as ``friction.model = cls.name``."""
    FRICTION_LAW_CLASSES[cls.name] = cls
    return cls


@register_friction_law
class NoFriction(AbstractFrictionLaw):
    """``mu = 0``."""

    name = "none"
    default_velocities = (1e-2, 1e-2)

    def coefficient(self, params, slip_velocity):
        return jnp.zeros_like(slip_velocity)


@register_friction_law
class CoulombTanh(AbstractFrictionLaw):
    """``mu tanh(v / v0)``: Coulomb friction smoothed over ``v0`` (only ``v0`` is used)."""

    name = "coulomb_tanh"
    default_velocities = (1e-2, 1e-2)

    def coefficient(self, params, slip_velocity):
        stiction_velocity, _ = params.velocities
        return params.coefficient * jnp.tanh(slip_velocity / stiction_velocity)


@register_friction_law
class Ambrosio(AbstractFrictionLaw):
    """``mu sign(v) clip((|v| - v0)/(v1 - v0), 0, 1)`` (Ambrósio 2003)."""

    name = "ambrosio"
    default_velocities = (1e-4, 1e-3)

    def coefficient(self, params, slip_velocity):
        stiction_velocity, dynamic_velocity = params.velocities
        ramp = (jnp.abs(slip_velocity) - stiction_velocity) / (dynamic_velocity - stiction_velocity)
        # The ramp is 0 near v = 0, so sign(0) = 0 is harmless.
        return params.coefficient * jnp.sign(slip_velocity) * jnp.clip(ramp, 0.0, 1.0)


@register_friction_law
class StaticDynamic(AbstractFrictionLaw):
    """ADAMS contact friction: cubic step to ``mu_s`` at ``v_s``, haversine step to ``mu_d``
    at ``v_d``, ``mu_d`` above."""

    name = "static_dynamic"
    default_velocities = (1.0e-3, 1.5e-3)

    def coefficient(self, params, slip_velocity):
        stiction_velocity, dynamic_velocity = params.velocities
        speed = jnp.abs(slip_velocity)
        # Every branch is finite everywhere, so the where() is grad-safe.
        stiction = cubic_step(slip_velocity, -stiction_velocity, -params.static, stiction_velocity, params.static)
        transition = jnp.sign(slip_velocity) * haversine_step(
            speed, stiction_velocity, params.static, dynamic_velocity, params.coefficient
        )
        return jnp.where(speed <= stiction_velocity, stiction, transition)


FRICTION_LAWS: tuple[str, ...] = tuple(FRICTION_LAW_CLASSES)
# (stiction_velocity, dynamic_velocity) defaults per law, m/s.
DEFAULT_FRICTION_VELOCITIES: dict[str, tuple[float, float]] = {
    name: cls.default_velocities for name, cls in FRICTION_LAW_CLASSES.items()
}


def friction_law(name: str) -> AbstractFrictionLaw:
    """The law object registered as ``name``; ``ValueError`` names the known laws."""
    if name not in FRICTION_LAW_CLASSES:
        raise ValueError(f"unknown friction law {name!r}; expected one of {FRICTION_LAWS}")
    return FRICTION_LAW_CLASSES[name]()


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
        friction_law(self.model)

    @property
    def law(self) -> AbstractFrictionLaw:
        """The :class:`AbstractFrictionLaw` that ``model`` names."""
        return friction_law(self.model)

    @property
    def velocities(self) -> tuple[Scalar, Scalar]:
        """``(stiction_velocity, dynamic_velocity)`` (m/s) with the law's defaults filled in."""
        default_stiction, default_dynamic = self.law.default_velocities
        stiction = default_stiction if self.stiction_velocity is None else self.stiction_velocity
        dynamic = default_dynamic if self.dynamic_velocity is None else self.dynamic_velocity
        return stiction, dynamic

    @property
    def static(self) -> Scalar:
        """``mu_s``, defaulting to ``coefficient``."""
        return self.coefficient if self.static_coefficient is None else self.static_coefficient


def friction_coefficient(law: FrictionLaw, slip_velocity: Float[ArrayLike, "..."]) -> Float[Array, "..."]:
    """Signed friction coefficient ``mu(v)``, odd in the slip velocity ``v`` (m/s)."""
    return law.law.coefficient(law, jnp.asarray(slip_velocity, dtype=float))


def friction_force(
    law: FrictionLaw,
    normal_force: Float[ArrayLike, "..."],
    slip_velocity: Float[ArrayLike, "..."],
) -> Float[Array, "..."]:
    """Friction force ``F_t = mu(v) F_n`` (N), with the sign of the slip velocity ``v`` (m/s).

    ``normal_force`` is ``F_n >= 0`` (N). The engine applies ``-F_t t`` to the journal.
    """
    return friction_coefficient(law, slip_velocity) * jnp.asarray(normal_force, dtype=float)
