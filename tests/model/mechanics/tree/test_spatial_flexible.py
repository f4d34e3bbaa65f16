"""Spatial flexible bodies on the joint-coordinate engine: a body's segments are bodies of
the tree (the one an ideal joint places hangs on it, the others get spatial free joints),
its beam elements force elements. The clamped cantilever of
``configs/flexible_cantilever_3d.toml`` with four elements (24 velocities, all on the four
free segments, whose columns of ``J`` are identity blocks and whose blocks of ``H`` are
solved one by one): its tree, the split of ``J``, one deformed, moving state against the absolute engine, and ``jit``, ``vmap`` and
``grad`` through a short solve (``slow``). Whole runs: ``test_spatial_flexible_simulation.py``
(``validation``)."""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.mechanics.interface import flat_vector_field
from model.mechanics.linalg import UNROLLED_CHOLESKY_MAX
from model.mechanics.spatial.beams import strain_energy
from model.mechanics.spatial.dynamics import kinetic_energy
from model.mechanics.tree import SpatialTreeMechanism
from model.mechanics.tree.dynamics import TreeState
from model.mechanics.tree.spatial_dynamics import evaluate
from model.mechanics.tree.spatial_kinematics import joint_coordinates, tree_motion
from model.mechanics.tree.topology import SPATIAL_SIZES, coupled_rates, decoupled_joints
from pipelines.build import build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS, write_variant

CANTILEVER = CONFIGS / "flexible_cantilever_3d.toml"
STEPS, DT = 60, 2.5e-7  # the short solve: 15 us in fixed Tsit5 steps (the elements' fastest rate is 3.2e6 1/s)


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> SpatialTreeMechanism:
    """The spatial cantilever with four beam elements, on the joint engine."""
    path = write_variant(tmp_path_factory.mktemp("spatial_flexible"), CANTILEVER, "segments = 20", "segments = 4",
                         "four_elements.toml")
    return build_mechanism(load_mechanism(path), "joint")


def test_segments_not_placed_by_an_ideal_joint_get_spatial_free_joints(tree):
    """Four elements, five segments: the first on the clamp, four on free joints (seven
    coordinates and six velocities each) that move their segment alone, so their blocks of
    H are the segments' mass matrices; no cut joints."""
    topology = tree.topology
    kinds = {joint.body: joint.kind for joint in topology.joints}
    assert [kinds[body] for body in tree.beam_chains[0].segments] == ["fixed"] + ["free"] * 4
    assert (topology.size, topology.rate_size) == (28, 24) and topology.rate_size > UNROLLED_CHOLESKY_MAX
    assert {joint.body for joint in decoupled_joints(topology)} == set(tree.beam_chains[0].segments[1:])
    assert topology.cuts == () and not tree.constrained


@pytest.fixture(scope="module")
def values(tree):
    """The four-element cantilever at its configured pose in joint coordinates with every
    coordinate moved (bending, twisting and stretching the elements) and moving with
    disturbed velocities: the joint engine's evaluation there, the absolute engine's at the
    same absolute state, and the tree's ``J`` in full and on the coupled velocities only."""

    @jax.jit
    def evaluations(tree):
        z, p = joint_coordinates(tree.absolute, tree.topology, tree.absolute.initial_positions)
        wiggle = jnp.sin(1.0 + jnp.arange(tree.topology.size))
        rates = jnp.cos(1.0 + 2.0 * jnp.arange(tree.topology.rate_size))
        zero = jnp.zeros((), z.dtype)
        state = TreeState(z + 2e-4 * wiggle, 0.3 * rates, jnp.zeros(tree.absolute.memory_size), zero, p)
        absolute = tree.state_absolute(state)
        motion = tree_motion(tree.absolute, tree.topology, state.z, state.zd, p, jnp.zeros_like(p))
        carried = tree_motion(tree.absolute, tree.topology, state.z, state.zd, p, jnp.zeros_like(p),
                              carried=coupled_rates(tree.topology, SPATIAL_SIZES))
        jacobians = (motion.jacobian, carried.jacobian)
        return evaluate(tree.absolute, tree.topology, state), tree.absolute.evaluate(0.0, absolute), jacobians, absolute

    return evaluations(tree)


def test_a_deformed_flexible_body_moves_as_on_the_absolute_engine(tree, values):
    """Elastic, damping, gyroscopic and inertial forces of the bent beam: every segment's
    twist rate equals the absolute engine's (multipliers on 7 coordinates per body, an
    independent formulation, so the block-diagonal solve of ``H`` holds); the clamp holds by
    construction."""
    joint, absolute, _, state = values
    assert float(jnp.max(jnp.abs(tree.absolute.constraint_values(state.x, 0.0)))) < 1e-15
    scale = float(jnp.max(jnp.abs(absolute.acceleration)))
    assert scale > 1e5  # m/s^2, rad/s^2: the elements push hard
    np.testing.assert_allclose(joint.vdot, absolute.acceleration, rtol=0, atol=1e-11 * scale)


def test_free_segments_columns_of_j_are_identity_blocks(tree, values):
    """What the engine leaves out of the recursion: each free segment's six columns of the
    full ``J`` are the identity on its own twist rows and zero elsewhere, at a bent, moving
    state; the recursion on the coupled velocities (none here: the clamped segment has no
    velocities) gives the full ``J``'s other columns."""
    _, _, (full, carried), _ = values
    coupled = coupled_rates(tree.topology, SPATIAL_SIZES)
    assert coupled == () and carried.shape == (full.shape[0], 0)
    expected = np.zeros(full.shape)
    for joint in decoupled_joints(tree.topology):
        expected[6 * joint.body : 6 * joint.body + 6, joint.rate : joint.rate + 6] = np.eye(6)
    assert len(decoupled_joints(tree.topology)) == 4
    np.testing.assert_array_equal(np.asarray(full), expected)


def _tip_deflection(tree, force):
    """The tip segment's y position (m) after :data:`STEPS` fixed Tsit5 steps from rest
    with the tip force ``force`` (N, ground frame)."""
    loaded = eqx.tree_at(lambda t: t.absolute.loads[0].value, tree, force)
    y0 = loaded.flatten(loaded.initial_state())
    solution = diffrax.diffeqsolve(diffrax.ODETerm(flat_vector_field), diffrax.Tsit5(), 0.0, STEPS * DT, DT, y0,
                                   args=loaded, stepsize_controller=diffrax.ConstantStepSize(), max_steps=STEPS)
    x = loaded.absolute_state(solution.ys[-1]).x
    return x[7 * loaded.beam_chains[0].segments[-1] + 1]


@pytest.mark.slow  # one compile of a solve, its vmap and its reverse-mode derivative: 30 s of CPU
def test_jit_vmap_and_grad_through_a_short_solve(tree):
    """The tip's travel is linear in the tip force over a short solve from rest (small
    deflections): in one compiled program, lanes of ``vmap`` equal single solves, the
    travel scales with the force, and ``grad`` equals the travel per unit of the force's
    scale; the load moves the tip within the solve."""
    base = tree.absolute.loads[0].value
    scales = jnp.asarray([0.0, 0.5, 1.0, 2.0])

    @jax.jit
    def solves(tree):
        deflection = lambda s: _tip_deflection(tree, s * base)  # noqa: E731
        return jax.vmap(deflection)(scales), deflection(1.0), jax.grad(deflection)(1.0)

    lanes, single, slope = solves(tree)
    np.testing.assert_allclose(lanes[2], single, rtol=1e-12)
    travel = lanes[1:] - lanes[0]
    assert float(jnp.abs(travel[1])) > 1e-9  # m
    np.testing.assert_allclose(travel, scales[1:] * travel[1], rtol=1e-5)  # linear elasticity, small strains
    np.testing.assert_allclose(slope, travel[1], rtol=1e-5)


# the free beam: the cantilever's body without its clamp and load, undamped, spinning
FREE_BEAM_START = """
[initial.velocities.beam]
v = ["1 m/s", "0 m/s", "0.5 m/s"]
w = ["40 rad/s", "30 rad/s", "200 rad/s"]

[simulation]
t_end = "2 ms"
output_interval = "0.1 ms"
"""


def _free_beam_text() -> str:
    """The cantilever's materials and body (four elements, no damping), nothing else."""
    text = CANTILEVER.read_text()
    body = text[: text.index("[[joints]]")].replace("segments = 20", "segments = 4")
    assert "damping_ratio = 0.05" in body
    return body.replace("damping_ratio = 0.05", "damping_ratio = 0.0") + FREE_BEAM_START


def test_an_undamped_free_flexible_body_keeps_its_energy(tmp_path):
    """A free steel beam of four undamped elements, no gravity, spinning about all three
    axes: its segments (all on free joints) stretch and bend under the centrifugal and
    gyroscopic loads, trading kinetic for strain energy, and the sum stays constant to
    1e-8 of it (Tsit5, rtol 1e-11) over 2 ms, while the strain energy takes up more than
    1e-7 of it (the check sees the exchange, not a rigid spin)."""
    path = tmp_path / "free_beam.toml"
    path.write_text(_free_beam_text())
    beam = build_mechanism(load_mechanism(path), "joint")
    assert {joint.kind for joint in beam.topology.joints} == {"free"}

    @jax.jit
    def energies(beam):
        y0 = beam.flatten(beam.initial_state())
        solution = diffrax.diffeqsolve(
            diffrax.ODETerm(flat_vector_field), diffrax.Tsit5(), 0.0, 2e-3, 1e-6, y0, args=beam,
            saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, 2e-3, 41)),
            stepsize_controller=diffrax.PIDController(rtol=1e-11, atol=1e-13), max_steps=200_000)

        def energy(flat):
            state = beam.absolute_state(flat)
            return kinetic_energy(beam.absolute, state.x, state.v), strain_energy(beam.absolute, state.x)

        return jax.vmap(energy)(solution.ys)

    kinetic, strain = energies(beam)
    total = kinetic + strain
    assert float(jnp.max(strain)) > 1e-7 * float(total[0])
    np.testing.assert_allclose(total, total[0], rtol=1e-8)
