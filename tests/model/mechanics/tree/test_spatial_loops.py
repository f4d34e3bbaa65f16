"""A closed spatial loop on the joint-coordinate engine: the ideal twin of the spatial
Flores slider-crank (its clearance pin made a revolute joint, every axis along z). The
pin is cut; of its five rows only the two in-plane ones are independent of the tree's
joints. At one state the accelerations, the driver torque and the pin's multipliers equal
the absolute engine's, and the projection returns a perturbed state onto the pin's rows.
Whole runs against the closed-form kinematics: ``test_spatial_loops_simulation.py``.

Building the config and evaluating both engines op by op takes tens of seconds of CPU, so
the module is ``validation``; the default run checks the cut rows' redundancy on a
hand-built bushing (``test_spatial.py``). Results: docs/engine.md."""

import jax.numpy as jnp
import numpy as np
import pytest

from model.mechanics.spatial.constraints import all_constraints
from model.mechanics.tree import SpatialTreeMechanism, tree_mechanism
from model.mechanics.tree.spatial_dynamics import evaluate
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS

pytestmark = [pytest.mark.slow, pytest.mark.validation]


@pytest.fixture(scope="module")
def twin():
    return build_mechanism(load_mechanism(CONFIGS / "flores_slider_crank_3d.toml"), "absolute").idealised()


def _compare(tree, state):
    projected = tree.project_state(0.0, state, 3)
    return projected, evaluate(tree.absolute, tree.topology, projected), tree.absolute.evaluate(
        0.0, tree.state_absolute(projected))


def test_the_pin_is_cut_with_its_independent_rows(twin):
    tree = tree_mechanism(twin)
    assert isinstance(tree, SpatialTreeMechanism)
    pin = len(twin.joints) - 1  # the clearance pin made ideal: the last joint
    assert tree.topology.cuts == (("revolute", pin),)
    assert len(tree.topology.cut_rows) == 2  # the in-plane rows; the other three repeat the tree's


def test_accelerations_and_multipliers_match_the_absolute_engine(twin):
    """Moved off the loop (every coordinate by 1 mrad or 1 mm) with velocities of 0.3 rad/s
    or m/s, projected; then the twists' rates, the driver torque and the pin's rows'
    multipliers agree with the absolute engine's (a regular system: both sets of rows are
    independent, and ``lambda`` of the cut rows is unique)."""
    tree = tree_mechanism(twin)
    start = tree.initial_state()
    state = start._replace(z=start.z + 1e-3, zd=start.zd + 0.3)
    rows = lambda s: all_constraints(tree.absolute, tree.state_absolute(s).x, 0.0)  # noqa: E731
    projected, out, reference = _compare(tree, state)
    assert float(jnp.max(jnp.abs(rows(state)))) > 1e-5
    assert float(jnp.max(jnp.abs(rows(projected)))) < 1e-12
    scale = float(jnp.max(jnp.abs(reference.acceleration)))
    np.testing.assert_allclose(out.vdot, reference.acceleration, rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(out.driver_torques, reference.driver_torques, rtol=0,
                               atol=1e-10 * float(jnp.max(jnp.abs(out.multipliers))))
    kept = [twin.kept_rows.index(row) for row in tree.topology.cut_rows]
    np.testing.assert_allclose(out.multipliers, reference.multipliers[np.asarray(kept)], rtol=0,
                               atol=1e-9 * float(jnp.max(jnp.abs(out.multipliers))))
