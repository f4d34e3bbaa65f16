"""The constraint solve by blocks of rows (``jacobian_row_groups`` and
``constrained_accelerations``) against the dense augmented system
``[M Phi_v^T; Phi_v 0] [vdot; lambda] = [Q; gamma]`` solved by LU, on mechanisms whose rows
split into one block (a cantilever), several coupled blocks (the double link) and blocks
with dropped redundant rows (the slider-crank)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.mechanics.spatial import dynamics, forces
from model.mechanics.spatial.constraints import acceleration_rhs, constraint_jacobian, jacobian_row_groups
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS


def mass_matrix(mechanism, x):
    blocks = [jnp.eye(3) * mechanism.masses[b] for b in range(mechanism.num_bodies)]
    inertias = dynamics.world_inertias(mechanism, x)
    return jax.scipy.linalg.block_diag(*[m for b in range(mechanism.num_bodies) for m in (blocks[b], inertias[b])])


@eqx.filter_jit
def both_solves(mechanism, state, t):
    """The dense augmented system's solution, the engine's ``(vdot, multipliers)`` and the
    row groups' rows (static: read at trace time), in one compiled program."""
    x, v = state.x, state.v
    generalised, _ = forces.contact_forces(mechanism, x, v, state.impact_memory)
    omegas = v.reshape(-1, 2, 3)[:, 1]
    momenta = jnp.einsum("bij,bj->bi", dynamics.world_inertias(mechanism, x), omegas)
    gyroscopic = jnp.stack([jnp.zeros_like(omegas), -jnp.cross(omegas, momenta)], axis=1).reshape(-1)
    applied = forces.applied_forces(mechanism, x) + generalised + gyroscopic + dynamics.beam_forces(mechanism, x, v)
    jacobian = constraint_jacobian(mechanism, x, t)
    rows = jacobian.shape[0]
    augmented = jnp.block([[mass_matrix(mechanism, x), jacobian.T], [jacobian, jnp.zeros((rows, rows))]])
    solution = jnp.linalg.solve(augmented, jnp.concatenate([applied, acceleration_rhs(mechanism, x, v, t)]))
    out = dynamics.evaluate(mechanism, t, state)
    grouped = [row for group in jacobian_row_groups(mechanism, x, t) for row in group.rows]
    return solution, out.acceleration, out.multipliers, jnp.asarray(grouped), rows


@pytest.mark.slow  # 14 CPU s, most of it compiling
@pytest.mark.parametrize("config", ["flores_slider_crank_3d.toml", "double_link_ideal.toml",
                                    "flexible_cantilever_3d.toml"])
def test_block_solve_equals_the_dense_augmented_system(config):
    mechanism = build_mechanism(load_mechanism(CONFIGS / config), "absolute")
    state = mechanism.initial_state()
    rng = np.random.default_rng(3)
    state = state._replace(v=state.v + jnp.asarray(rng.normal(size=state.v.shape)))  # gyroscopic and convective terms on
    solution, vdot, multipliers, grouped, rows = both_solves(mechanism, state, 1e-3)
    size = state.v.size
    assert sorted(np.asarray(grouped).tolist()) == list(range(rows))
    scale = float(jnp.max(jnp.abs(solution[:size])))
    np.testing.assert_allclose(vdot, solution[:size], rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(multipliers, solution[size:], rtol=0, atol=1e-11 * float(jnp.max(jnp.abs(solution[size:]))))


def test_slider_crank_splits_into_blocks():
    """Crank alone, crank and rod, slider alone: the slider's block is not coupled to the
    others once the redundant axial row of the clearance joint is dropped."""
    mechanism = build_mechanism(load_mechanism(CONFIGS / "flores_slider_crank_3d.toml"), "absolute")
    groups = jacobian_row_groups(mechanism, mechanism.initial_state().x, 0.0)
    assert [tuple(group.blocks) for group in groups] == [(0,), (0, 1), (2,)]
    assert [len(group.rows) for group in groups] == [6, 5, 5]
