"""The quasi-static seat of a cylindrical clearance joint (``initial.clearance = "static"``,
:func:`model.mechanics.spatial.dynamics.seated`): a pin in a fixed bushing loaded off the
middle of its contact length, so that the ideal joint carries a moment, starts with its
journal eccentric and tilted so that the slices' contact forces balance the load's force
and moment; a journal seated parallel to the bearing is not in equilibrium there."""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.integrate.settings import SolverSettings
from model.integrate.solve import simulate
from model.mechanics.spatial.dynamics import evaluate, seat_quality
from model.mechanics.start import seated_eccentricity

from .cases import LENGTH, LOAD, PIN_INERTIA, PIN_MASS, bushing

SLICES = 10
LOAD_POINT = -LENGTH / 4  # m along the axis: the ideal joint carries the moment LOAD * LENGTH / 4


def offset_pin(load_point=LOAD_POINT):
    """The load cases' pin, its end load moved to ``load_point`` along the axis; an elastic
    contact law (no damping to hide a start transient)."""
    mechanism = dataclasses.replace(bushing(end_force=True, slices=SLICES, model="hertz"), initial_clearance="static")
    return eqx.tree_at(lambda m: m.loads[0].point, mechanism, jnp.array([0.0, 0.0, load_point]))


def parallel_pin():
    """The same pin started where a seat without tilt puts it: parallel to the bearing at the
    whole joint's uniform penetration under the load's force."""
    mechanism = offset_pin()
    joint = mechanism.cylindrical_joints[0]
    law = eqx.tree_at(lambda law_: law_.stiffness, joint.contact, joint.stiffness())
    load = jnp.array([0.0, -(LOAD + PIN_MASS * 9.81)])
    eccentricity = seated_eccentricity(law, joint.clearance, load, joint.initial_eccentricity)
    return dataclasses.replace(eqx.tree_at(lambda m: m.cylindrical_joints[0].initial_eccentricity, mechanism,
                                           eccentricity), initial_clearance="configured")


@eqx.filter_jit
def _start(mechanism):
    state = mechanism.initial_state()
    return state, evaluate(mechanism, jnp.zeros(()), state)


@pytest.fixture(scope="module")
def starts():
    return {name: _start(build()) for name, build in (("tilted", offset_pin), ("parallel", parallel_pin))}


def test_the_tilted_seat_balances_the_load_force_and_moment(starts):
    # nothing accelerates at t = 0: the slices carry the load's force and its moment
    # LOAD * LENGTH / 4 about the cross axis (the journal tilted within the clearance)
    _, out = starts["tilted"]
    linear, angular = np.asarray(out.vdot[:3]), np.asarray(out.vdot[3:])
    assert np.max(np.abs(linear)) < 1e-6 * LOAD / PIN_MASS
    assert np.max(np.abs(angular)) < 1e-6 * LOAD * LENGTH / 4 / PIN_INERTIA[0]
    assert float(out.contact.tilt[0]) > 1e-5  # it is tilted
    # statics of the end forces: F_a + F_b = LOAD + m g, (l/2)(F_a - F_b) = LOAD l/4
    weight = PIN_MASS * 9.81
    assert float(out.contact.normal_force_a[0]) == pytest.approx(0.75 * LOAD + weight / 2, rel=1e-6)
    assert float(out.contact.normal_force_b[0]) == pytest.approx(0.25 * LOAD + weight / 2, rel=1e-6)
    # the journal seated parallel: the force balanced, the moment not
    _, parallel = starts["parallel"]
    assert np.max(np.abs(np.asarray(parallel.vdot[:3]))) < 1e-6 * LOAD / PIN_MASS
    assert abs(float(parallel.vdot[3])) > 0.9 * LOAD * LENGTH / 4 / PIN_INERTIA[0]


@pytest.mark.validation  # two compiled runs of the pin (about a minute of CPU)
def test_the_tilted_seat_starts_without_a_hammer():
    # over 2 ms (elastic contact, no damping) the tilted seat's forces stay at their static
    # values; the journal seated parallel swings about its cross axis onto the loaded end
    # and overshoots the static end force
    settings = SolverSettings(t_end=2e-3, output_interval=1e-5, solver="tsit5", rtol=1e-8, atol=1e-12)
    peaks = {}
    for name, build in (("tilted", offset_pin), ("parallel", parallel_pin)):
        trajectory = jax.jit(simulate, static_argnums=1)(build(), settings)
        assert int(trajectory.result) == 0
        peaks[name] = float(jnp.max(trajectory.normal_force_a)), float(jnp.max(trajectory.normal_force))
    static_a, static_total = 0.75 * LOAD + PIN_MASS * 9.81 / 2, LOAD + PIN_MASS * 9.81
    assert peaks["tilted"][0] == pytest.approx(static_a, rel=0.01)
    assert peaks["tilted"][1] == pytest.approx(static_total, rel=0.01)
    assert peaks["parallel"][0] > 1.3 * static_a
