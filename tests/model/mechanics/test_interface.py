"""The integrators' interface (model/mechanics/interface.py) on the planar and the spatial
Flores slider-crank: state round trip, and the contact rows the step bound and the peak
tracking read agree with the engines' own contact state."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.mechanics import AbstractMechanism
from model.mechanics.spatial import SpatialMechanism
from model.mechanics.spatial import evaluate as evaluate_spatial
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS


@pytest.fixture(scope="module", params=["flores_slider_crank.toml", "flores_slider_crank_3d.toml"])
def mechanism(request):
    return build_mechanism(load_mechanism(CONFIGS / request.param), "absolute")


def touching_state(mechanism):
    """The initial state with the journal moved 1 % of the clearance into the wall along
    the slider's x axis, closing at 0.1 m/s."""
    state = mechanism.initial_state()
    depth = 1.01 * float(mechanism.clearance_joints[0].clearance)
    if isinstance(mechanism, SpatialMechanism):  # conrod: body 1, positions 7 per body, velocities 6
        return state._replace(x=state.x.at[7].add(depth), v=state.v.at[6].add(0.1))
    return state._replace(q=state.q.at[3].add(depth), qd=state.qd.at[3].add(0.1))


@pytest.mark.slow  # 8 CPU s, most of it compiling
def test_both_engines_implement_the_interface(mechanism):
    assert isinstance(mechanism, AbstractMechanism)
    flat = mechanism.flatten(mechanism.initial_state())
    assert flat.ndim == 1
    np.testing.assert_array_equal(mechanism.flatten(mechanism.unflatten(flat)), flat)
    assert jax.eval_shape(mechanism.flat_vector_field, 0.0, flat).shape == flat.shape


@pytest.mark.slow  # 5 CPU s, most of it compiling
def test_contact_rows_agree_with_the_engine(mechanism):
    state = touching_state(mechanism)
    flat = mechanism.flatten(state)
    kinematics, values = mechanism.contact_kinematics(flat), mechanism.contact_values(flat)
    np.testing.assert_allclose(kinematics, values[:2], rtol=1e-12)
    if isinstance(mechanism, SpatialMechanism):
        contact = evaluate_spatial(mechanism, 0.0, state).contact
    else:
        contact = model.evaluate(mechanism, 0.0, state).contact
    penetration, rate, force = values[:, 0]
    assert float(penetration) == pytest.approx(float(contact.penetration[0]), rel=1e-12)
    assert float(force) == pytest.approx(float(contact.normal_force[0]), rel=1e-12)
    assert float(penetration) == pytest.approx(0.01 * float(mechanism.clearance_joints[0].clearance), rel=1e-6)
    assert float(rate) == pytest.approx(0.1, rel=1e-6) and float(force) > 0.0


def test_spatial_contact_period_matches_the_planar_one():
    """The aligned 3-D slider-crank's joint (whole-joint stiffness, same bodies) has the
    planar joint's contact period when both have the same stiffness."""
    planar = build_mechanism(load_mechanism(CONFIGS / "flores_slider_crank.toml"), "absolute")
    spatial = build_mechanism(load_mechanism(CONFIGS / "flores_slider_crank_3d.toml"), "absolute")
    ratio = spatial.clearance_joints[0].stiffness() / planar.clearance_joints[0].stiffness()
    periods = model.contact_periods(spatial), model.contact_periods(planar)
    # T ~ K^(-1/2)
    np.testing.assert_allclose(periods[0] * jnp.sqrt(ratio), periods[1], rtol=1e-12)


def test_a_solve_traces_the_vector_field_and_the_projection_once(monkeypatch):
    """The methods a solve calls from several places (solver stages and start, peak
    tracking, projection, each in diffrax's three traces of its step) are nested jits
    (``interface.traced_once``): tracing a whole simulate runs the Python of the planar
    equations of motion and of the projection once each."""
    from model.mechanics import Mechanism

    calls = {"field": 0, "projection": 0}

    def counted(name, function):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(Mechanism, "vector_field", counted("field", Mechanism.vector_field))
    monkeypatch.setattr(Mechanism, "project_state", counted("projection", Mechanism.project_state))
    jax.clear_caches()  # no jaxpr of an earlier test
    mechanism = build_mechanism(load_mechanism(CONFIGS / "flores_slider_crank.toml"), "absolute")
    jax.jit(model.simulate, static_argnums=1).trace(mechanism, model.SolverSettings(t_end=1e-3, output_interval=1e-4))
    assert calls == {"field": 1, "projection": 1}


def test_a_solve_traces_the_tree_engines_vector_field_once(monkeypatch):
    """The joint-coordinate engine inherits the interface's nested jit of the flat vector
    field (``AbstractMechanism.flat_vector_field``), and the peak tracking's evaluations are
    nested jits: a solve traces its equations of motion once however many stages and traces
    of diffrax's step call them."""
    from model.mechanics.tree import mechanism as tree

    calls = {"field": 0}
    field = tree.vector_field

    def counted(*args, **kwargs):
        calls["field"] += 1
        return field(*args, **kwargs)

    monkeypatch.setattr(tree, "vector_field", counted)
    jax.clear_caches()  # no jaxpr of an earlier test
    mechanism = build_mechanism(load_mechanism(CONFIGS / "flores_slider_crank.toml"), "tree")
    assert isinstance(mechanism, tree.TreeMechanism)
    jax.jit(model.simulate, static_argnums=1).trace(mechanism, model.SolverSettings(t_end=1e-3, output_interval=1e-4))
    assert calls == {"field": 1}
