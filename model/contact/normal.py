"""Normal contact force laws of a compliant (penalty) contact.

Every law maps the penetration ``delta`` (m), its rate ``delta_dot`` (m/s, > 0 closing) and
the impact-velocity memory (m/s, see ``model/contact/memory.py``) to a normal force ``F_n`` (N) with

- ``F_n = 0`` while apart (``delta <= 0``),
- ``F_n >= 0`` always: a dissipative term may never pull the bodies together, so the sum is
  clipped at zero (Flores et al. 2011, §2),
- finite values *and gradients* at ``delta <= 0`` and ``delta_dot = 0`` (``delta^n`` uses the
  double-``where`` trick; ``x^n`` with ``x <= 0`` has a NaN derivative otherwise).

Most dissipative laws share the hysteresis form::

    F_n = K delta^n [1 + chi(e) delta_dot / delta_dot_minus]

with ``chi`` the law's :meth:`AbstractNormalLaw.hysteresis_factor` and ``delta_dot_minus``
the closing speed at the onset of the impact, floored at ``impact_velocity_floor``
(``model.contact.memory.impact_velocity``) so that persistent contact does not blow the
damping term up.

Each law is one final subclass of :class:`AbstractNormalLaw` (in the manner of diffrax's
solvers), registered by name in :data:`NORMAL_LAW_CLASSES`; :class:`ContactLaw` holds the
parameters and a law name, and :attr:`ContactLaw.law` gives the law object. Adding a law is
one subclass decorated with :func:`register_normal_law`, plus its test.

Sources: Hunt & Crossley, J. Appl. Mech. 42 (1975); Lankarani & Nikravesh, J. Mech. Des. 112
(1990); Flores, Machado, Silva & Martins, Multibody Syst. Dyn. 25 (2011); Gonthier, McPhee,
Lange & Piedboeuf, Multibody Syst. Dyn. 11 (2004); Hu & Guo, Multibody Syst. Dyn. 35 (2015);
MSC ADAMS/Solver, IMPACT function. The ``chi`` table follows the reviews of Machado et al.,
Mech. Mach. Theory 53 (2012) and Corral et al., Nonlinear Dyn. 104 (2021); every factor is
checked numerically with ``model/contact/impact1d.py`` (see ``docs/contact_models.md``).
"""

import abc
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from .._typing import Scalar
from .blend import cubic_step
from .memory import DEFAULT_IMPACT_VELOCITY_FLOOR, impact_velocity


class AbstractNormalLaw(eqx.Module):
    """A normal force law: ``F_n`` before the clip to ``>= 0`` and to 0 while apart.

    Subclasses set ``name`` (the config's ``contact.model``) and ``uses_restitution`` (False
    for laws whose force does not depend on ``e``), and implement the two methods.
    """

    name: ClassVar[str]
    uses_restitution: ClassVar[bool] = True

    @abc.abstractmethod
    def hysteresis_factor(self, restitution: Array) -> Array:
        """``chi(e)`` (dimensionless) of ``F_n = K delta^n (1 + chi delta_dot / delta_dot_minus)``."""

    @abc.abstractmethod
    def force(self, params: "ContactLaw", penetration: Array, rate: Array, approach_speed: Array) -> Array:
        """Unclipped force (N) at ``penetration`` (m), ``rate`` (m/s) and impact speed (m/s)."""


class _HysteresisLaw(AbstractNormalLaw):
    """``K delta^n [1 + chi(e) delta_dot / delta_dot_minus]``: the shared hysteresis form."""

    def force(self, params, penetration, rate, approach_speed):
        chi = self.hysteresis_factor(jnp.asarray(params.restitution, dtype=float))
        return _elastic(params, penetration) * (1.0 + chi * rate / approach_speed)


NORMAL_LAW_CLASSES: dict[str, type[AbstractNormalLaw]] = {}


def register_normal_law(cls: type[AbstractNormalLaw]) -> type[AbstractNormalLaw]:
    """Class decorator: make ``cls`` selectable as ``contact.model = cls.name``."""
    NORMAL_LAW_CLASSES[cls.name] = cls
    return cls


@register_normal_law
class Hertz(AbstractNormalLaw):
    """Elastic Hertz contact ``K delta^n`` (no dissipation)."""

    name = "hertz"
    uses_restitution = False

    def hysteresis_factor(self, restitution):
        return jnp.zeros_like(restitution)

    def force(self, params, penetration, rate, approach_speed):
        return _elastic(params, penetration)


@register_normal_law
class KelvinVoigt(AbstractNormalLaw):
    """``K delta^n + C_d max(delta_dot, 0)``: a dashpot ``C_d`` switched off while separating,
    so that it never does positive work (no hysteresis factor)."""

    name = "kelvin_voigt"
    uses_restitution = False

    def hysteresis_factor(self, restitution):
        return jnp.zeros_like(restitution)

    def force(self, params, penetration, rate, approach_speed):
        return _elastic(params, penetration) + params.damping * jnp.maximum(rate, 0.0)


@register_normal_law
class HuntCrossley(_HysteresisLaw):
    """Hunt & Crossley (1975): ``chi = 3(1 - e)/2``, from a linear ``e(v) ~ 1 - alpha v``."""

    name = "hunt_crossley"

    def hysteresis_factor(self, restitution):
        return 3.0 * (1.0 - restitution) / 2.0


@register_normal_law
class LankaraniNikravesh(_HysteresisLaw):
    """Lankarani & Nikravesh (1990): ``chi = 3(1 - e^2)/4`` (valid for ``e`` near 1)."""

    name = "lankarani_nikravesh"

    def hysteresis_factor(self, restitution):
        return 3.0 * (1.0 - restitution**2) / 4.0


@register_normal_law
class Flores(_HysteresisLaw):
    """Flores et al. (2011), eq. (25): ``chi = 8(1 - e)/(5e)``, valid for ``0 < e <= 1``."""

    name = "flores"

    def hysteresis_factor(self, restitution):
        return 8.0 * (1.0 - restitution) / (5.0 * restitution)


@register_normal_law
class Gonthier(_HysteresisLaw):
    """Gonthier et al. (2004): ``chi = (1 - e^2)/e``, their first-order approximation."""

    name = "gonthier"

    def hysteresis_factor(self, restitution):
        return (1.0 - restitution**2) / restitution


@register_normal_law
class HuGuo(_HysteresisLaw):
    """Hu & Guo (2015): ``chi = 3(1 - e)/(2e)``.

    (A circulating ``3(1-e)/(4e)`` is a typo: it halves the damping and overestimates the
    restitution; the impact1d tests would catch it.)
    """

    name = "hu_guo"

    def hysteresis_factor(self, restitution):
        return 3.0 * (1.0 - restitution) / (2.0 * restitution)


@register_normal_law
class AdamsImpact(AbstractNormalLaw):
    """ADAMS IMPACT: ``K delta^n + STEP(delta, 0, 0, d_max, c_max) delta_dot`` with ``c_max``
    from :func:`adams_damping_max` (its ``chi`` is the Lankarani–Nikravesh factor)."""

    name = "adams_impact"

    def hysteresis_factor(self, restitution):
        return 3.0 * (1.0 - restitution**2) / 4.0

    def force(self, params, penetration, rate, approach_speed):
        damping_max = adams_damping_max(
            params.stiffness, params.exponent, params.restitution, approach_speed, params.penetration_max
        )
        damping = cubic_step(penetration, 0.0, 0.0, params.penetration_max, damping_max)
        return _elastic(params, penetration) + damping * rate


NORMAL_FORCE_LAWS: tuple[str, ...] = tuple(NORMAL_LAW_CLASSES)
# Laws whose force does not depend on the coefficient of restitution.
LAWS_WITHOUT_RESTITUTION: tuple[str, ...] = tuple(
    name for name, cls in NORMAL_LAW_CLASSES.items() if not cls.uses_restitution
)


def normal_law(name: str) -> AbstractNormalLaw:
    """The law object registered as ``name``; ``ValueError`` names the known laws."""
    if name not in NORMAL_LAW_CLASSES:
        raise ValueError(f"unknown normal force law {name!r}; expected one of {NORMAL_FORCE_LAWS}")
    return NORMAL_LAW_CLASSES[name]()


class ContactLaw(eqx.Module):
    """Parameters of a normal contact force law (SI units).

    **Fields:**

    - ``model``: one of :data:`NORMAL_FORCE_LAWS` (static: selects the code path, so
      batches group by it).
    - ``stiffness``: ``K`` in ``N/m^exponent`` (see ``model/contact/stiffness.py``).
    - ``exponent``: ``n``; 1.5 for Hertz point/pin contact, 10/9 for Palmgren line contact.
    - ``restitution``: coefficient of restitution ``e`` in (0, 1]; ignored by the laws in
      :data:`LAWS_WITHOUT_RESTITUTION`.
    - ``damping``: Kelvin–Voigt dashpot ``C_d`` (N s/m); numerically 0.1 %–1 % of ``K`` is
      typical. Only ``kelvin_voigt`` uses it.
    - ``penetration_max``: ADAMS IMPACT ``d_max`` (m): the damping ramps in by a cubic step
      over ``[0, d_max]``. Only ``adams_impact`` uses it.
    - ``impact_velocity_floor``: lower bound (m/s) on ``delta_dot_minus`` (``model/contact/memory.py``).
    """

    model: str = eqx.field(static=True)
    stiffness: Scalar
    exponent: Scalar = 1.5
    restitution: Scalar = 0.9
    damping: Scalar = 0.0
    penetration_max: Scalar = 1e-4
    impact_velocity_floor: Scalar = DEFAULT_IMPACT_VELOCITY_FLOOR

    def __check_init__(self):
        normal_law(self.model)

    @property
    def law(self) -> AbstractNormalLaw:
        """The :class:`AbstractNormalLaw` that ``model`` names."""
        return normal_law(self.model)


def hysteresis_factor(model: str, restitution: ArrayLike) -> Array:
    """Dimensionless hysteresis factor ``chi(e)`` of the law named ``model`` (see its class)."""
    return jnp.asarray(normal_law(model).hysteresis_factor(jnp.asarray(restitution, dtype=float)))


def adams_damping_max(
    stiffness: ArrayLike,
    exponent: ArrayLike,
    restitution: ArrayLike,
    impact_velocity: ArrayLike,
    penetration_max: ArrayLike,
) -> Array:
    """ADAMS IMPACT maximum damping ``c_max`` (N s/m) from the coefficient of restitution.

    With the IMPACT force ``F_n = K delta^n + D delta_dot`` and the Hunt–Crossley damping
    ``D = mu delta^n``, equating the energy dissipated around the hysteresis loop,
    ``(2/3) (mu / K) m_eff delta_dot_minus^3``, to the kinetic-energy loss
    ``m_eff delta_dot_minus^2 (1 - e^2) / 2`` gives (Lankarani & Nikravesh 1990)::

        mu = 3 K (1 - e^2) / (4 delta_dot_minus)          (N s / m^(n+1))

    IMPACT's damping is constant once ``delta >= d_max`` (the step has ramped in), so it is
    evaluated there::

        c_max = 3 K (1 - e^2) d_max^n / (4 delta_dot_minus)

    i.e. the IMPACT force coincides with Lankarani–Nikravesh at ``delta = d_max``.
    Units: ``K`` in N/m^n, ``delta_dot_minus`` in m/s, ``d_max`` in m.
    """
    chi = hysteresis_factor("adams_impact", restitution)
    return chi * stiffness * jnp.asarray(penetration_max) ** exponent / impact_velocity


def _positive_power(x: Array, exponent: ArrayLike) -> Array:
    """``x^exponent`` for ``x > 0`` and 0 otherwise, with finite gradients everywhere.

    ``jnp.where(x > 0, x**n, 0)`` alone still differentiates ``x**n`` at ``x <= 0`` (NaN for
    fractional ``n``, inf slope at 0); feeding the power a safe argument avoids it.
    """
    positive = x > 0.0
    safe_x = jnp.where(positive, x, 1.0)
    return jnp.where(positive, safe_x**exponent, 0.0)


def _elastic(params: ContactLaw, penetration: Array) -> Array:
    """``K delta^n`` (N), 0 while apart."""
    return params.stiffness * _positive_power(penetration, params.exponent)


def normal_force(
    law: ContactLaw,
    penetration: Float[ArrayLike, "..."],
    penetration_rate: Float[ArrayLike, "..."],
    impact_memory: Float[ArrayLike, "..."],
) -> Float[Array, "..."]:
    """Normal contact force ``F_n >= 0`` (N).

    **Arguments:**

    - ``law``: the :class:`ContactLaw` (its ``model`` picks the :class:`AbstractNormalLaw`).
    - ``penetration``: ``delta = e - c`` (m); contact iff ``delta > 0``.
    - ``penetration_rate``: ``delta_dot`` (m/s), positive while closing.
    - ``impact_memory``: raw memory state ``m`` (m/s); the impact velocity used is
      ``max(m, law.impact_velocity_floor)``.

    The law's force is clipped to ``>= 0`` and set to 0 while apart.
    """
    penetration = jnp.asarray(penetration, dtype=float)
    penetration_rate = jnp.asarray(penetration_rate, dtype=float)
    approach_speed = impact_velocity(jnp.asarray(impact_memory, dtype=float), law.impact_velocity_floor)
    force = law.law.force(law, penetration, penetration_rate, approach_speed)
    return jnp.where(penetration > 0.0, jnp.maximum(force, 0.0), 0.0)
