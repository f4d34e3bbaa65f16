"""The quasi-static seat of a cylindrical clearance joint (``initial.clearance = "static"``,
:meth:`~model.mechanics.absolute.AbstractAbsoluteMechanism.seat`) in motion: a pin in a fixed bushing loaded
off the middle of its contact length, so that the ideal joint carries a moment, started
eccentric and tilted stays at its static contact forces; started parallel to the bearing
(the force seated, the moment not) it swings onto the loaded end and overshoots.
The balance at t = 0 and the refusal of a load with no seat are checked on the same pin
from its config (tests/pipelines/test_initial_state.py).

Marked ``validation``: two compiled runs of the pin (about a minute and a half of CPU)."""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

from model.integrate.settings import SolverSettings
from model.integrate.solve import simulate
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


@pytest.mark.validation
def test_the_tilted_seat_starts_without_a_hammer():
    # over 2 ms (elastic contact, no damping) the tilted seat's forces stay at their static
    # values; the journal seated parallel swings about its cross axis onto the loaded end
    # and overshoots the static end force
    settings = SolverSettings(t_end=2e-3, output_interval=1e-5, solver="tsit5", rtol=1e-8, atol=1e-12)
    peaks = {}
    for name, build in (("tilted", offset_pin), ("parallel", parallel_pin)):
        trajectory = jax.jit(simulate, static_argnums=1)(build(), settings)
        assert int(trajectory.result) == 0
        if name == "parallel":  # the force balanced at t = 0, the moment not: it turns
            angular = float(trajectory.vdot[0, 3]) * PIN_INERTIA[0]
            assert abs(angular) > 0.9 * LOAD * LENGTH / 4
        peaks[name] = float(jnp.max(trajectory.normal_force_a)), float(jnp.max(trajectory.normal_force))
    static_a, static_total = 0.75 * LOAD + PIN_MASS * 9.81 / 2, LOAD + PIN_MASS * 9.81
    assert peaks["tilted"][0] == pytest.approx(static_a, rel=0.01)
    assert peaks["tilted"][1] == pytest.approx(static_total, rel=0.01)
    assert peaks["parallel"][0] > 1.3 * static_a



def _tilt(load):
    """The seated journal's tilt about the bearing's u axis (rad) under ``load`` (N)."""
    mechanism = eqx.tree_at(lambda m: m.loads[0].value, offset_pin(), jnp.stack([0.0, -load, 0.0]))
    return mechanism.start()[1][0].tilt[0]


@pytest.mark.validation
def test_the_seat_differentiates_in_reverse_mode_and_maps():
    # the implicit derivative of the seat against a central difference, and vmap over loads
    load = jnp.asarray(LOAD)
    slope = float(jax.jit(jax.grad(_tilt))(load))
    step = 1.0
    tilt = jax.jit(_tilt)
    difference = float((tilt(load + step) - tilt(load - step)) / (2 * step))
    assert slope == pytest.approx(difference, rel=1e-6)
    batch = jax.jit(jax.vmap(_tilt))(jnp.stack([load / 2, load]))
    assert float(batch[1]) == pytest.approx(float(tilt(load)), rel=1e-12)
