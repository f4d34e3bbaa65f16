"""One-dimensional impact of two bodies on a compliant contact: the obtained restitution.

Body 1 (mass ``m1``) at ``x1`` moves towards body 2 (``m2``, at ``x2``, at rest) with the
approach speed ``v``; the penetration is ``delta = x1 - x2`` and its rate
``delta_dot = v1 - v2``. The contact force ``F_n = normal_force(law, delta, delta_dot, m)``
pushes them apart (``-F_n`` on body 1, ``+F_n`` on body 2). The impact memory ``m`` is an
extra state driven by ``model.contact.memory.impact_memory_rate`` with the normal acceleration
``d(delta_dot)/dt = a1 - a2``, started at the approach speed, exactly as the planar engine
carries it, so this also tests the memory.

The obtained coefficient of restitution is the separation speed over the approach speed
after the bodies have parted. Used by ``tests/model/test_impact1d.py`` and
``benchmarks.accuracy --case restitution``.
"""

import diffrax
import jax.numpy as jnp
import optimistix as optx
from jaxtyping import Array, ArrayLike, Float

from .normal import ContactLaw, normal_force
from .memory import impact_memory_rate

# Integration settings: the contact period T ~ 2 pi sqrt(m_eff/K_lin) sets every scale.
_STEPS_PER_PERIOD = 50  # dtmax = T / 50 (1/20 to 1/50 of T resolves the impact)
_FLIGHT_PERIODS = 0.1  # initial gap flown in T/10
_CONTACT_PERIODS = 4.0  # time allowed for compression + restitution (> T/2 elastic)
_RTOL, _ATOL = 1e-10, 1e-13
_MAX_STEPS = 200_000


def hertz_contact_period(
    stiffness: ArrayLike, exponent: ArrayLike, effective_mass: ArrayLike, approach_speed: ArrayLike
) -> Array:
    """Contact period estimate ``T = 2 pi sqrt(m_eff / K_lin)`` (s) of an elastic impact.

    ``K_lin = n K delta_max^(n-1)`` is the tangent stiffness at the elastic maximum
    penetration ``delta_max = ((n+1) m_eff v^2 / (2 K))^(1/(n+1))`` (energy balance); the
    impact itself lasts roughly ``T/2``.
    """
    max_penetration = ((exponent + 1.0) * effective_mass * approach_speed**2 / (2.0 * stiffness)) ** (
        1.0 / (exponent + 1.0)
    )
    linear_stiffness = exponent * stiffness * max_penetration ** (exponent - 1.0)
    return 2.0 * jnp.pi * jnp.sqrt(effective_mass / linear_stiffness)


def _vector_field(t, state, args):
    law, mass1, mass2 = args
    x1, x2, v1, v2, memory = state
    penetration = x1 - x2
    penetration_rate = v1 - v2
    force = normal_force(law, penetration, penetration_rate, memory)
    a1 = -force / mass1
    a2 = force / mass2
    memory_rate = impact_memory_rate(penetration, penetration_rate, a1 - a2, memory)
    return jnp.stack([v1, v2, a1, a2, memory_rate])


def simulate_impact(
    law: ContactLaw,
    masses: tuple[ArrayLike, ArrayLike] = (1.0, 1.0),
    approach_speed: ArrayLike = 1.0,
) -> diffrax.Solution:
    """Integrate the 1-D impact from just before contact to well after separation.

    Returns the diffrax solution saved at the final time; state ``(x1, x2, v1, v2, m)``
    (m, m, m/s, m/s, m/s). Tsit5 with a PID controller (rtol 1e-10, atol 1e-13) and
    ``dtmax = T/50``, ``T`` from :func:`hertz_contact_period`.
    """
    mass1, mass2 = (jnp.asarray(m, dtype=float) for m in masses)
    speed = jnp.asarray(approach_speed, dtype=float)
    effective_mass = mass1 * mass2 / (mass1 + mass2)
    period = hertz_contact_period(law.stiffness, law.exponent, effective_mass, speed)
    gap = _FLIGHT_PERIODS * period * speed
    initial_state = jnp.stack([-gap, jnp.zeros_like(gap), speed, jnp.zeros_like(speed), speed])
    t1 = (_FLIGHT_PERIODS + _CONTACT_PERIODS) * period
    return diffrax.diffeqsolve(
        diffrax.ODETerm(_vector_field),
        diffrax.Tsit5(),
        t0=0.0,
        t1=t1,
        dt0=period / (10 * _STEPS_PER_PERIOD),
        y0=initial_state,
        args=(law, mass1, mass2),
        saveat=diffrax.SaveAt(t1=True),
        stepsize_controller=diffrax.PIDController(
            rtol=_RTOL, atol=_ATOL, dtmax=period / _STEPS_PER_PERIOD
        ),
        max_steps=_MAX_STEPS,
    )


def obtained_restitution(
    law: ContactLaw,
    masses: tuple[ArrayLike, ArrayLike] = (1.0, 1.0),
    approach_speed: ArrayLike = 1.0,
) -> Float[Array, ""]:
    """Separation speed / approach speed of a 1-D two-body impact (dimensionless).

    ``masses`` in kg, ``approach_speed`` in m/s. Sensible defaults: 1 kg on 1 kg at 1 m/s;
    use ``K = 1e9 N/m^1.5, n = 1.5`` in ``law``. NaN if the bodies are still in contact at
    the end of the window (``4 T`` after the onset), so a non-separating law cannot pass
    for a restitution of ~0. Pure JAX: ``jit`` and ``vmap`` over ``law``'s array fields.
    """
    solution = simulate_impact(law, masses, approach_speed)
    x1, x2, v1, v2, _ = solution.ys[-1]
    separated = x1 - x2 < 0.0
    restitution = -(v1 - v2) / jnp.asarray(approach_speed, dtype=float)
    return jnp.where(separated, restitution, jnp.nan)


def hysteresis_restitution(hysteresis_factor: ArrayLike) -> Float[Array, "..."]:
    """Exact restitution of a 1-D impact under ``F_n = K delta^n (1 + chi delta_dot / v_minus)``.

    With ``m_eff v dv/d(delta) = -K delta^n (1 + chi v / v_minus)`` and ``integral delta^n
    d(delta) = 0`` over the whole impact, ``integral v dv / (1 + a v)`` from ``v_minus`` to
    ``-e v_minus`` vanishes (``a = chi / v_minus``), which gives the implicit relation::

        ln((1 + chi) / (1 - e chi)) = chi (1 + e)

    independent of ``K``, ``n``, the masses and the approach speed. Its root is unique in
    ``(0, min(1, 1/chi))`` (so the force never reaches the ``F_n >= 0`` clip before
    separation); found here by ``optimistix.Bisection``. ``chi = 0`` gives 1. Used to check
    the integrator and each law's ``chi(e)`` against the ``e`` it promises.
    """
    chi = jnp.asarray(hysteresis_factor, dtype=float)
    return jnp.vectorize(_restitution_of_one_factor)(chi)


def _restitution_of_one_factor(chi: Float[Array, ""]) -> Float[Array, ""]:
    safe_chi = jnp.where(chi > 0.0, chi, 1.0)

    def residual(e, _):
        return jnp.log((1.0 + safe_chi) / (1.0 - e * safe_chi)) - safe_chi * (1.0 + e)

    upper = jnp.minimum(1.0, 1.0 / safe_chi) * (1.0 - 1e-15)
    solution = optx.root_find(
        residual, optx.Bisection(rtol=1e-14, atol=1e-15), 0.5 * upper,
        options=dict(lower=jnp.zeros_like(upper), upper=upper), max_steps=256, throw=False,
    )
    return jnp.where(chi > 0.0, solution.value, 1.0)
