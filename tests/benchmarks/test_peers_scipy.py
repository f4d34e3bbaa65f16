"""The scipy peer of the sweep benchmark integrates the same model as diffrax.

Both solve the Flores slider-crank over its first impact (t_end = 0.5 ms): the journal
crosses the 0.5 mm clearance, hits the bearing once, and the first-impact figures of the
two independent integrators (diffrax Tsit5 against scipy's DOP853 / LSODA) must agree.
"""


import jax
import numpy as np
import pytest

import model
from benchmarks import peers


T_END = 5e-4  # s: the first impact of the Flores case happens at ~0.23 ms

pytestmark = pytest.mark.slow  # scipy's DOP853 and LSODA on our compiled field


@pytest.fixture(scope="module")
def flores():
    mechanism, settings = peers.load_flores(t_end=T_END)
    return mechanism, settings


@pytest.fixture(scope="module")
def diffrax_figures(flores):
    mechanism, settings = flores
    trajectory = jax.jit(model.simulate, static_argnums=1)(mechanism, settings)
    assert int(trajectory.result) == 0
    joint = 0
    return peers.impact_figures(
        trajectory.t, trajectory.penetration[:, joint], trajectory.normal_force[:, joint],
        trajectory.impact_memory[:, joint],
    ), trajectory


@pytest.fixture(scope="module")
def field(flores):
    return peers.compile_field(flores[0], with_jacobian=True)


@pytest.mark.parametrize("method", ["DOP853", "LSODA"])
def test_first_impact_agrees_with_diffrax(flores, diffrax_figures, field, method):
    mechanism, settings = flores
    ours, _ = diffrax_figures
    peer = peers.solve_with_scipy(mechanism, settings, method, rtol=1e-8, atol=1e-11, field=field)
    assert peer["success"], peer["message"]
    assert peer["num_impacts"] == ours["num_impacts"] == 1
    # the impact happens inside the window, after the journal crossed the clearance
    assert 1e-4 < ours["first_impact_time"] < 4e-4
    np.testing.assert_allclose(peer["first_impact_time"], ours["first_impact_time"], rtol=1e-5)
    np.testing.assert_allclose(peer["first_impact_velocity"], ours["first_impact_velocity"], rtol=1e-3)
    np.testing.assert_allclose(peer["peak_penetration"][0], ours["peak_penetration"][0], rtol=1e-3)
    np.testing.assert_allclose(peer["peak_normal_force"][0], ours["peak_normal_force"][0], rtol=1e-3)
    # the penetration stays well below the clearance (docs/reference.md)
    assert ours["peak_penetration"][0] < 0.2 * 5e-4


def test_peer_trajectory_matches_diffrax_everywhere(flores, diffrax_figures, field):
    """The whole saved penetration history agrees, not just the extracted figures."""
    mechanism, settings = flores
    _, trajectory = diffrax_figures
    peer = peers.solve_with_scipy(mechanism, settings, "DOP853", rtol=1e-8, atol=1e-11, field=field)
    assert peer["y"].shape == (settings.num_outputs, field.y0.size)
    np.testing.assert_allclose(peer["penetration"], np.asarray(trajectory.penetration[:, 0]), rtol=0, atol=1e-7)
    assert peer["steps"] > 0 and peer["nfev"] >= 12 * peer["steps"]


def test_compiled_rhs_is_the_model_vector_field(flores, field):
    """The flat NumPy right-hand side scipy calls is our vector field (same values at a
    state in flight and one in contact), and rebinding it to another mechanism of the same
    structure changes the values without recompiling."""
    import jax.numpy as jnp
    from jax.flatten_util import ravel_pytree

    from pipelines.build import ParameterMap

    mechanism, _ = flores
    state = model.initial_state(mechanism)
    in_contact = state._replace(q=state.q.at[6].add(5.05e-4))  # the slider 5 um past the wall
    for t, probe in ((1e-4, state), (2e-4, in_contact)):
        expected = np.asarray(ravel_pytree(model.vector_field(t, probe, mechanism))[0])
        np.testing.assert_allclose(field.rhs(t, np.asarray(ravel_pytree(probe)[0])), expected, rtol=1e-12, atol=1e-12)
    other = ParameterMap(mechanism, ("joints.pin.clearance",)).apply(mechanism, jnp.array([4e-4]))
    y = np.asarray(ravel_pytree(in_contact)[0])
    expected = np.asarray(ravel_pytree(model.vector_field(2e-4, in_contact, other))[0])
    np.testing.assert_allclose(field.for_mechanism(other).rhs(2e-4, y), expected, rtol=1e-12, atol=1e-12)
    assert not np.allclose(field.for_mechanism(other).rhs(2e-4, y), field.rhs(2e-4, y))
    overhead = peers.call_overhead(field, calls=20)
    assert overhead["python_call_seconds"] > 0 and overhead["trivial_jit_call_seconds"] > 0
