"""The static deflected shape of a flexible body at t = 0 (``initial.deformation = "static"``,
:meth:`~model.mechanics.absolute.AbstractAbsoluteMechanism.static_shape`): a steel cantilever of five elements under its
own weight starts at the Timoshenko deflection of a uniformly loaded cantilever, to the
chain's second-order discretisation error, and in equilibrium (nothing accelerates); the
flexible connecting rod of the Flores slider-crank started static follows its load instead
of ringing about it.

Marked ``validation``: the Gauss–Newton solve differentiates the equations of motion, a
compile of about a minute of CPU on the shared machine (the slider-crank: two solves, about
six minutes)."""

import copy
import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.mechanics.dynamics import evaluate
from model.mechanics.flexible import section_loads
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from pipelines.config.loading import mechanism_from_dict
from tests.helpers import CONFIGS

GRAVITY = 9.81  # m/s^2
MODULUS, POISSON, DENSITY = 207e9, 0.3, 7850.0  # Pa, -, kg/m^3
LENGTH, SIDE = 0.3, 0.01  # m
ELEMENTS = 5
SHEAR_FACTOR = 1.2  # rectangle (kappa of the chain's sections)
MASS = DENSITY * LENGTH * SIDE**2
CANTILEVER = {
    "name": "cantilever", "gravity": ["0 m/s^2", f"-{GRAVITY} m/s^2"],
    "materials": {"steel": {"youngs_modulus": f"{MODULUS} Pa", "poisson_ratio": POISSON}},
    "bodies": [{"name": "beam", "mass": f"{MASS} kg", "inertia": f"{MASS * LENGTH**2 / 12} kg*m^2",
                "position": [f"{LENGTH / 2} m", "0 m"], "angle": "0 deg",
                "flexible": {"segments": ELEMENTS, "length": f"{LENGTH} m", "material": "steel",
                             "section": {"shape": "rectangle", "width": f"{SIDE} m", "height": f"{SIDE} m"}}}],
    "joints": [{"name": "clamp", "type": "fixed", "bodies": ["ground", "beam"],
                "points": [["0 m", "0 m"], [f"{-LENGTH / 2} m", "0 m"]]}],
    "initial": {"velocities": "zero", "deformation": "static"},
    "simulation": {"t_end": "1 ms", "output_interval": "0.1 ms"},
}


@eqx.filter_jit
def _start(mechanism):
    state = mechanism.initial_state()
    return state, evaluate(mechanism, jnp.zeros(()), state).acceleration


@pytest.mark.validation
def test_a_cantilever_under_its_weight_starts_deflected_and_at_rest():
    mechanism = build_mechanism(mechanism_from_dict(copy.deepcopy(CANTILEVER), "cantilever.toml"))
    state, qdd = _start(mechanism)
    q = np.asarray(state.q).reshape(-1, 3)
    # the free end: a quarter element beyond the last segment's centre (model/mechanics/segmentation.py)
    tip = q[-1, 1] + np.sin(q[-1, 2]) * LENGTH / ELEMENTS / 4
    load = MASS * GRAVITY / LENGTH  # N/m
    inertia, area = SIDE**4 / 12, SIDE**2
    shear_modulus = MODULUS / (2 * (1 + POISSON))
    timoshenko = load * LENGTH**4 / (8 * MODULUS * inertia) + load * LENGTH**2 / (2 * SHEAR_FACTOR * shear_modulus * area)
    # the chain's uniform-load deflection is second order in the element length: -0.67 % at
    # five elements (docs/flexible.md, Validation)
    assert -tip == pytest.approx(timoshenko, rel=1e-2)
    assert -tip < timoshenko
    # in equilibrium: the deflected beam at rest does not accelerate (vs 1 g undeformed)
    assert np.max(np.abs(np.asarray(qdd))) < 1e-6 * GRAVITY
    np.testing.assert_array_equal(np.asarray(state.qd), 0.0)


def _tip(mechanism, gravity):
    """The free end's vertical position (m) of the cantilever started static under ``gravity`` (m/s^2, along y)."""
    state = dataclasses.replace(mechanism, gravity=jnp.stack([jnp.zeros_like(gravity), gravity])).initial_state()
    q = state.q.reshape(-1, 3)
    return q[-1, 1] + jnp.sin(q[-1, 2]) * LENGTH / ELEMENTS / 4


@pytest.mark.validation
def test_the_static_shape_differentiates_in_both_modes():
    # linear elasticity: the deflection is proportional to the load, d tip / d g = tip / g
    # (up to the geometric terms, 1e-7), in forward and reverse mode
    mechanism = build_mechanism(mechanism_from_dict(copy.deepcopy(CANTILEVER), "cantilever.toml"))
    gravity = jnp.asarray(-GRAVITY)
    tip, slope = jax.jit(jax.jvp, static_argnums=0)(lambda g: _tip(mechanism, g), (gravity,), (jnp.ones(()),))
    assert float(slope) == pytest.approx(float(tip) / -GRAVITY, rel=1e-6)
    assert float(jax.jit(jax.grad(lambda g: _tip(mechanism, g)))(gravity)) == pytest.approx(float(slope), rel=1e-9)


@pytest.mark.validation
def test_the_flexible_slider_crank_started_static_does_not_ring_before_its_first_impact():
    # configs/flores_flexible.toml over its first 0.2 ms (the first impact is at 0.23 ms): the
    # rod released straight rings axially about the load the motion puts on it; started in
    # its static shape it follows that load (within 2 %, a trend, no ringing)

    config = load_mechanism(CONFIGS / "flores_flexible.toml", ["simulation.t_end=0.2 ms"])
    settings = solver_settings(config)
    middle = {}
    for shape in ("undeformed", "static"):
        mechanism = dataclasses.replace(build_mechanism(config), initial_deformation=shape)
        trajectory = jax.jit(model.simulate, static_argnums=1)(mechanism, settings)
        assert int(trajectory.result) == 0
        chain = mechanism.beam_chains[0]
        axial = jax.vmap(lambda q, qd: section_loads(chain, q, qd)[0])(trajectory.q, trajectory.qd)
        middle[shape] = np.asarray(axial[:, axial.shape[1] // 2])  # N, at the rod's middle cut
    static, straight = middle["static"], middle["undeformed"]
    assert abs(straight[0]) < 1e-6  # released straight: no axial force yet
    assert abs(static[0]) > 1e3  # the static shape carries the inertia load from t = 0
    assert np.ptp(static) < 0.02 * abs(static[0])
    assert np.ptp(straight) > 0.5 * abs(static[0])  # the straight rod rings up to it and beyond
