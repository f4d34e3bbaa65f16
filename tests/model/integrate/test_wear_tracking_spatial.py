"""Archard wear of a cylindrical clearance joint accumulated per slice over a solve
(model/integrate/wear_tracking.py): a journal pressed by its weight into a fixed bushing while
it spins, against Archard's closed form, and the same journal under a moment, whose loaded
end wears most (validation tier: a compile of the spatial solve with wear)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model

from ..mechanics.spatial.journal import (BEARING_RADIUS, CLEARANCE, K_W, LENGTH, LOAD, RESOLUTION, SLICES, SPEED,
                                         WEAR, journal, resting_state, static_penetration)

T_END = 0.01  # s
SETTINGS = model.SolverSettings(t_end=T_END, output_interval=1e-3, solver="tsit5")
TORQUE = 2.0  # N m about +x: the +z end carries (F + 2 T / l ... ) more than the -z end

pytestmark = [pytest.mark.slow, pytest.mark.validation]

_simulate = jax.jit(model.simulate_with_wear, static_argnums=1)


@pytest.fixture(scope="module")
def runs():
    """One compiled program: the uniform load, and the load with a moment."""
    uniform, tilted = (journal(model.WornBore(jnp.zeros((SLICES, RESOLUTION))), torque) for torque in (0.0, TORQUE))
    return {"uniform": _simulate(uniform, SETTINGS, WEAR, resting_state(uniform)),
            "tilted": _simulate(tilted, SETTINGS, WEAR, resting_state(tilted))}


def test_each_slice_and_the_bushing_wear_archards_volume(runs):
    """Each slice's row holds ``k_w (F / N) s`` and the bushing ``k_w F s``, with the sliding
    distance ``s = Omega (R_j - delta) t`` at the contact point, to 1e-9."""
    trajectory, wear = runs["uniform"]
    assert int(trajectory.result) == 0
    sliding = SPEED * (BEARING_RADIUS - CLEARANCE - static_penetration(journal())) * T_END
    per_slice = np.asarray(model.WornBore(wear.depth).volume(BEARING_RADIUS, LENGTH / SLICES))
    np.testing.assert_allclose(per_slice, K_W * LOAD / SLICES * sliding, rtol=1e-9)
    np.testing.assert_allclose(per_slice.sum(), K_W * LOAD * sliding, rtol=1e-9)
    np.testing.assert_allclose(float(wear.load_distance), LOAD * sliding, rtol=1e-9)


def test_a_moment_wears_the_loaded_end_most(runs):
    """Under a moment about +x the journal tilts, its +z end bears more: the worn volume grows
    slice by slice towards that end, the deepest point is in the end slice, and the total is
    still ``k_w int F |v| dt``."""
    trajectory, wear = runs["tilted"]
    assert int(trajectory.result) == 0
    per_slice = np.asarray(model.WornBore(wear.depth).volume(BEARING_RADIUS, LENGTH / SLICES))
    assert np.all(np.diff(per_slice) > 0.0), per_slice
    assert np.unravel_index(np.argmax(wear.depth), wear.depth.shape)[0] == SLICES - 1
    np.testing.assert_allclose(per_slice.sum(), K_W * float(wear.load_distance), rtol=1e-12)
    # the moment balance of the slice forces: the end slices' share differs by about 2 T / l
    assert per_slice[-1] / per_slice[0] > 1.5
