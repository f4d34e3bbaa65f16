"""The static deflected shape of a spatial flexible body at t = 0
(``initial.deformation = "static"``, :meth:`~model.mechanics.absolute.AbstractAbsoluteMechanism.static_shape`):
a steel cantilever of five elements under its own weight starts at the Timoshenko
deflection of a uniformly loaded cantilever, to the chain's second-order discretisation
error, in equilibrium (nothing accelerates), and does not ring: its deformation rates stay
small over a short run, where the cantilever released straight swings about that shape.

Marked ``validation``: the Gauss–Newton solve differentiates the spatial equations of
motion (about a minute of compile on the shared machine) and the runs compile twice more."""

import copy
import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.geometry.quaternion import rotation_matrix
from model.mechanics.spatial.beams import deformation_rate_rows
from model.mechanics.spatial.dynamics import evaluate
from pipelines.build import build_mechanism, solver_settings
from pipelines.config.loading import mechanism_from_dict

GRAVITY = 9.81  # m/s^2
MODULUS, POISSON, DENSITY = 207e9, 0.3, 7850.0  # Pa, -, kg/m^3
LENGTH, SIDE = 0.3, 0.01  # m
ELEMENTS = 5
SHEAR_FACTOR = 1.2  # rectangle (kappa of the chain's sections)
MASS = DENSITY * LENGTH * SIDE**2
INERTIA = [f"{MASS * SIDE**2 / 6} kg*m^2", f"{MASS * LENGTH**2 / 12} kg*m^2", f"{MASS * LENGTH**2 / 12} kg*m^2"]
CANTILEVER = {
    "name": "cantilever", "dimension": 3, "gravity": ["0 m/s^2", f"-{GRAVITY} m/s^2", "0 m/s^2"],
    "materials": {"steel": {"youngs_modulus": f"{MODULUS} Pa", "poisson_ratio": POISSON}},
    "bodies": [{"name": "beam", "mass": f"{MASS} kg", "inertia": INERTIA,
                "position": [f"{LENGTH / 2} m", "0 m", "0 m"],
                "flexible": {"segments": ELEMENTS, "length": f"{LENGTH} m", "material": "steel",
                             "section": {"shape": "rectangle", "width": f"{SIDE} m", "height": f"{SIDE} m"}}}],
    "joints": [{"name": "clamp", "type": "fixed", "bodies": ["ground", "beam"], "axis": [0.0, 0.0, 1.0],
                "points": [["0 m", "0 m", "0 m"], [f"{-LENGTH / 2} m", "0 m", "0 m"]]}],
    "initial": {"velocities": "zero", "deformation": "static"},
    "simulation": {"t_end": "2 ms", "output_interval": "0.02 ms", "solver": "tsit5", "rtol": 1e-8, "atol": 1e-12},
}


def _cantilever(deformation: str = "static"):
    raw = copy.deepcopy(CANTILEVER)
    raw["initial"]["deformation"] = deformation
    return mechanism_from_dict(raw, "cantilever.toml")


def _tip(x) -> float:
    """The free end's vertical position (m): a quarter element beyond the last segment's
    centre along its axis (model/mechanics/segmentation.py)."""
    last = x.reshape(-1, 7)[-1]
    return float(last[1] + rotation_matrix(last[3:])[1, 0] * LENGTH / ELEMENTS / 4)


@eqx.filter_jit
def _start(mechanism):
    state = mechanism.initial_state()
    return state, evaluate(mechanism, jnp.zeros(()), state).acceleration


@pytest.mark.validation
def test_a_spatial_cantilever_under_its_weight_starts_deflected_and_does_not_ring():
    config = _cantilever()
    mechanism = build_mechanism(config)
    state, vdot = _start(mechanism)
    load = MASS * GRAVITY / LENGTH  # N/m
    inertia, area = SIDE**4 / 12, SIDE**2
    shear_modulus = MODULUS / (2 * (1 + POISSON))
    timoshenko = load * LENGTH**4 / (8 * MODULUS * inertia) + load * LENGTH**2 / (2 * SHEAR_FACTOR * shear_modulus * area)
    tip = _tip(np.asarray(state.x))
    # the chain's uniform-load deflection is second order in the element length (docs/flexible.md)
    assert -tip == pytest.approx(timoshenko, rel=1e-2)
    # in equilibrium: the deflected beam at rest does not accelerate (vs 1 g undeformed)
    assert np.max(np.abs(np.asarray(vdot).reshape(-1, 6)[:, :3])) < 1e-6 * GRAVITY
    # over 2 ms (a fifth of the first bending period) the static start's deformation rates
    # stay at rest, where the straight start's swing towards the static shape
    rates = {}
    for shape in ("static", "undeformed"):
        mechanism = dataclasses.replace(build_mechanism(_cantilever(shape)), initial_deformation=shape)
        trajectory = jax.jit(model.simulate, static_argnums=1)(mechanism, solver_settings(config))
        assert int(trajectory.result) == 0
        chain = mechanism.beam_chains[0]
        rate = jax.vmap(lambda x, v: deformation_rate_rows(chain, x) @ v)(trajectory.x, trajectory.v)
        rates[shape] = float(jnp.max(jnp.abs(rate)))
    assert rates["static"] < 1e-3 * rates["undeformed"]
