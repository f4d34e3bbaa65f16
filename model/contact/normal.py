"""Normal contact force laws of a compliant (penalty) contact.

Every law maps the penetration ``delta`` (m), its rate ``delta_dot`` (m/s, > 0 closing) and
the impact-velocity memory (m/s, see ``model/contact/memory.py``) to a normal force ``F_n`` (N) with

- ``F_n = 0`` while apart (``delta <= 0``),
- ``F_n >= 0`` always: a dissipative term may never pull the bodies together, so the sum is
  clipped at zero (Flores et al. 2011, §2; seed 000 §2.2),
- finite values *and gradients* at ``delta <= 0`` and ``delta_dot = 0`` (``delta^n`` uses the
  double-``where`` trick; ``x^n`` with ``x <= 0`` has a NaN derivative otherwise).

Most dissipative laws share the hysteresis form (REFERENCE.md §2)::

    F_n = K delta^n [1 + chi(e) delta_dot / delta_dot_minus]

with ``chi`` from :func:`hysteresis_factor` and ``delta_dot_minus`` the closing speed at the
onset of the impact, floored at ``impact_velocity_floor`` (``model.contact.memory.impact_velocity``)
so that persistent contact does not blow the damping term up.

Sources: seed 000 §2.2 (Hertz, Lankarani–Nikravesh, Kelvin–Voigt), seed 003 §3.3.3 (ADAMS
IMPACT, eqs. 3-12 to 3-21), Hunt & Crossley, J. Appl. Mech. 42 (1975); Lankarani & Nikravesh,
J. Mech. Des. 112 (1990); Flores, Machado, Silva & Martins, Multibody Syst. Dyn. 25 (2011);
Gonthier, McPhee, Lange & Piedboeuf, Multibody Syst. Dyn. 11 (2004); Hu & Guo, Multibody
Syst. Dyn. 35 (2015). The ``chi`` table follows the reviews of Machado et al., Mech. Mach.
Theory 53 (2012) and Corral et al., Nonlinear Dyn. 104 (2021); the HC, LN, Flores and
Gonthier factors were confirmed against a retrieved secondary table, and every factor is
checked numerically with ``model/contact/impact1d.py`` (see ``docs/contact_models.md``).
"""

from collections.abc import Callable

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float

from .memory import DEFAULT_IMPACT_VELOCITY_FLOOR, impact_velocity

NORMAL_FORCE_LAWS = (
    "hertz",
    "kelvin_voigt",
    "hunt_crossley",
    "lankarani_nikravesh",
    "flores",
    "gonthier",
    "hu_guo",
    "adams_impact",
)

# Laws whose force does not depend on the coefficient of restitution (their hysteresis
# factor below is 0): ``hertz`` is elastic, ``kelvin_voigt`` has a dashpot ``C_d`` instead.
LAWS_WITHOUT_RESTITUTION = ("hertz", "kelvin_voigt")

Scalar = float | Float[Array, ""]

# chi(e) of F_n = K delta^n [1 + chi delta_dot / delta_dot_minus] (dimensionless).
# "adams_impact" derives its c_max from the Lankarani–Nikravesh factor (seed 003 eq. 3-21);
# "kelvin_voigt" has a constant dashpot instead and no hysteresis factor (0).
_HYSTERESIS_FACTORS: dict[str, Callable[[ArrayLike], Array]] = {
    "hertz": lambda e: jnp.zeros_like(jnp.asarray(e, dtype=float)),
    "kelvin_voigt": lambda e: jnp.zeros_like(jnp.asarray(e, dtype=float)),
    # Hunt & Crossley (1975): energy balance with a linear e(v) relation, e ~ 1 - alpha v.
    "hunt_crossley": lambda e: 3.0 * (1.0 - e) / 2.0,
    # Lankarani & Nikravesh (1990); seed 000 eq. in §2.2, seed 003 eq. 3-21.
    "lankarani_nikravesh": lambda e: 3.0 * (1.0 - e**2) / 4.0,
    # Flores et al. (2011), eq. (25): valid over the whole range 0 < e <= 1.
    "flores": lambda e: 8.0 * (1.0 - e) / (5.0 * e),
    # Gonthier et al. (2004): chi = (1 - e^2)/e, their first-order approximation of the
    # exact Hunt–Crossley-type dissipation, accurate over a wide range of e.
    "gonthier": lambda e: (1.0 - e**2) / e,
    # Hu & Guo (2015): chi = 3(1 - e)/(2e). (A circulating 3(1-e)/(4e) is a typo: it halves
    # the damping and overestimates the restitution; impact1d tests would catch it.)
    "hu_guo": lambda e: 3.0 * (1.0 - e) / (2.0 * e),
    "adams_impact": lambda e: 3.0 * (1.0 - e**2) / 4.0,
}


class ContactLaw(eqx.Module):
    """Parameters of a normal contact force law (SI units).

    **Fields:**

    - ``model``: one of :data:`NORMAL_FORCE_LAWS` (static: selects the code path).
    - ``stiffness``: ``K`` in ``N/m^exponent`` (see ``model/contact/stiffness.py``).
    - ``exponent``: ``n``; 1.5 for Hertz point/pin contact, 10/9 for Palmgren line contact.
    - ``restitution``: coefficient of restitution ``e`` in (0, 1]; ignored by ``hertz`` and
      ``kelvin_voigt``.
    - ``damping``: Kelvin–Voigt dashpot ``C_d`` (N s/m); seed 000 suggests numerically 0.1 %–1 %
      of ``K``. Only ``kelvin_voigt`` uses it.
    - ``penetration_max``: ADAMS IMPACT ``d_max`` (m): the damping ramps in by STEP over
      ``[0, d_max]``. Only ``adams_impact`` uses it.
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
        if self.model not in NORMAL_FORCE_LAWS:
            raise ValueError(
                f"unknown normal force law {self.model!r}; expected one of {NORMAL_FORCE_LAWS}"
            )


def hysteresis_factor(model: str, restitution: ArrayLike) -> Array:
    """Dimensionless hysteresis factor ``chi(e)`` of ``F_n = K delta^n (1 + chi v / v_minus)``.

    Table in REFERENCE.md §2: hertz 0, hunt_crossley ``3(1-e)/2``, lankarani_nikravesh
    ``3(1-e^2)/4``, flores ``8(1-e)/(5e)``, gonthier ``(1-e^2)/e``, hu_guo ``3(1-e)/(2e)``.
    ``kelvin_voigt`` has none (0); ``adams_impact`` uses the Lankarani–Nikravesh factor to set
    its ``c_max`` (seed 003 eq. 3-21).
    """
    if model not in _HYSTERESIS_FACTORS:
        raise ValueError(f"unknown normal force law {model!r}; expected one of {NORMAL_FORCE_LAWS}")
    return jnp.asarray(_HYSTERESIS_FACTORS[model](jnp.asarray(restitution, dtype=float)))


def step(x: ArrayLike, x0: ArrayLike, h0: ArrayLike, x1: ArrayLike, h1: ArrayLike) -> Array:
    """ADAMS ``STEP(x, x0, h0, x1, h1)``: cubic from ``h0`` at ``x0`` to ``h1`` at ``x1``.

    ``h0 + (h1 - h0) D^2 (3 - 2 D)`` with ``D = (x - x0)/(x1 - x0)`` clamped to [0, 1]
    (seed 003; MSC ADAMS function reference). Continuous with zero slope at both ends.
    """
    fraction = jnp.clip((jnp.asarray(x) - x0) / (jnp.asarray(x1) - x0), 0.0, 1.0)
    return h0 + (jnp.asarray(h1) - h0) * fraction**2 * (3.0 - 2.0 * fraction)


def adams_damping_max(
    stiffness: ArrayLike,
    exponent: ArrayLike,
    restitution: ArrayLike,
    impact_velocity: ArrayLike,
    penetration_max: ArrayLike,
) -> Array:
    """ADAMS IMPACT maximum damping ``c_max`` (N s/m) from the coefficient of restitution.

    Seed 003 writes the IMPACT force as ``F_n = K delta^n + D delta_dot`` (eq. 3-16) with the
    Hunt–Crossley damping ``D = mu delta^n`` (3-17); equating the energy dissipated around
    the hysteresis loop, ``Delta T ~ (2/3) (mu / K) m_eff delta_dot_minus^3`` (3-20), to the
    kinetic-energy loss ``m_eff delta_dot_minus^2 (1 - e^2) / 2`` (3-18) gives the hysteresis
    damping factor (3-21)::

        mu = 3 K (1 - e^2) / (4 delta_dot_minus)          (N s / m^(n+1))

    and "``c_max = D = mu delta^n``". IMPACT's damping is constant once
    ``delta >= d_max`` (the STEP has ramped in), so the damping is evaluated there::

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


def normal_force(
    law: ContactLaw,
    penetration: Float[ArrayLike, "..."],
    penetration_rate: Float[ArrayLike, "..."],
    impact_memory: Float[ArrayLike, "..."],
) -> Float[Array, "..."]:
    """Normal contact force ``F_n >= 0`` (N).

    **Arguments:**

    - ``law``: the :class:`ContactLaw`.
    - ``penetration``: ``delta = e - c`` (m); contact iff ``delta > 0``.
    - ``penetration_rate``: ``delta_dot`` (m/s), positive while closing.
    - ``impact_memory``: raw memory state ``m`` (m/s); the impact velocity used is
      ``max(m, law.impact_velocity_floor)``.

    **Laws:**

    - ``hertz``: ``K delta^n`` (seed 000 §2.2).
    - ``kelvin_voigt``: ``K delta^n + C_d max(delta_dot, 0)`` (seed 000 §2.2 and §4.2: the
      dashpot is switched off while separating so it never does positive work).
    - ``hunt_crossley``, ``lankarani_nikravesh``, ``flores``, ``gonthier``, ``hu_guo``:
      ``K delta^n [1 + chi(e) delta_dot / delta_dot_minus]``, ``chi`` from
      :func:`hysteresis_factor`.
    - ``adams_impact``: ``K delta^n + STEP(delta, 0, 0, d_max, c_max) delta_dot`` with
      ``c_max`` from :func:`adams_damping_max` (seed 003 eqs. 3-12, 3-21).

    All are then clipped to ``>= 0`` and set to 0 while apart.
    """
    penetration = jnp.asarray(penetration, dtype=float)
    penetration_rate = jnp.asarray(penetration_rate, dtype=float)
    elastic = law.stiffness * _positive_power(penetration, law.exponent)
    approach_speed = impact_velocity(jnp.asarray(impact_memory, dtype=float), law.impact_velocity_floor)

    if law.model == "hertz":
        force = elastic
    elif law.model == "kelvin_voigt":
        force = elastic + law.damping * jnp.maximum(penetration_rate, 0.0)
    elif law.model == "adams_impact":
        damping_max = adams_damping_max(
            law.stiffness, law.exponent, law.restitution, approach_speed, law.penetration_max
        )
        damping = step(penetration, 0.0, 0.0, law.penetration_max, damping_max)
        force = elastic + damping * penetration_rate
    else:
        chi = hysteresis_factor(law.model, law.restitution)
        force = elastic * (1.0 + chi * penetration_rate / approach_speed)

    return jnp.where(penetration > 0.0, jnp.maximum(force, 0.0), 0.0)
