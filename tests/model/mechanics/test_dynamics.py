"""The engine against analytic kinematics, independent inverse dynamics and energy balance."""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from pipelines.build import ParameterMap, build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS

CRANK, CONROD = 0.05, 0.12  # m, Flores slider-crank


@pytest.fixture(scope="module")
def flores():
    config = load_mechanism(CONFIGS / "flores_slider_crank.toml")
    return config, build_mechanism(config, "absolute")


@pytest.fixture(scope="module")
def ideal_run(flores):
    config, mechanism = flores
    ideal = mechanism.idealised()
    settings = solver_settings(config, solver="tsit5", t_end=0.012, output_interval=1e-4, rtol=1e-10, atol=1e-12)
    return ideal, jax.jit(model.simulate, static_argnums=1)(ideal, settings)


def slider_x(phi):
    """Analytic slider position (m) of the ideal slider-crank at crank angle ``phi``."""
    return CRANK * jnp.cos(phi) + jnp.sqrt(CONROD**2 - (CRANK * jnp.sin(phi)) ** 2)


@pytest.mark.slow
def test_ideal_slider_kinematics_match_analytic(flores, ideal_run):
    _, mechanism = flores
    ideal, trajectory = ideal_run
    omega = float(mechanism.drivers[0].speed)
    phi = omega * trajectory.t
    x = jax.vmap(slider_x)(phi)
    v = jax.vmap(jax.grad(slider_x))(phi) * omega
    a = jax.vmap(jax.grad(jax.grad(slider_x)))(phi) * omega**2
    slider = 3 * mechanism.body_names.index("slider")
    np.testing.assert_allclose(trajectory.q[:, slider], x, rtol=1e-6)
    np.testing.assert_allclose(trajectory.qd[:, slider], v, atol=1e-6 * np.max(np.abs(v)))
    np.testing.assert_allclose(trajectory.qdd[:, slider], a, atol=1e-6 * np.max(np.abs(a)))
    # the published peak: r w^2 (1 + r/L) = 19,419 m/s^2 (docs/reference.md)
    assert np.max(np.abs(trajectory.qdd[:, slider])) == pytest.approx(19419, rel=1e-4)


@pytest.mark.slow
def test_ideal_driver_torque_matches_inverse_dynamics(flores, ideal_run):
    """Independent inverse dynamics: with constant speed and no other loads, the driver's
    power equals dT/dt, so torque = 0.5 w^2 dG/dphi with T = 0.5 w^2 G(phi)."""
    _, mechanism = flores
    ideal, trajectory = ideal_run
    omega = float(mechanism.drivers[0].speed)
    m_crank, m_rod, m_slider = (float(m) for m in mechanism.masses)
    j_crank, j_rod, _ = (float(j) for j in mechanism.inertias)

    def inertia_function(phi):
        def coordinates(phi):
            pin = CRANK * jnp.array([jnp.cos(phi), jnp.sin(phi)])
            slider = jnp.array([slider_x(phi), 0.0])
            rod_angle = jnp.arctan2(slider[1] - pin[1], slider[0] - pin[0])
            return pin / 2, phi, (pin + slider) / 2, rod_angle, slider

        crank_c, crank_angle, rod_c, rod_angle, slider = jax.jacfwd(coordinates)(phi)
        return (
            m_crank * crank_c @ crank_c + j_crank * crank_angle**2
            + m_rod * rod_c @ rod_c + j_rod * rod_angle**2 + m_slider * slider @ slider
        )

    phi = omega * trajectory.t
    expected = 0.5 * omega**2 * jax.vmap(jax.grad(inertia_function))(phi)
    np.testing.assert_allclose(trajectory.driver_torques[:, 0], expected, atol=1e-6 * np.max(np.abs(expected)))


@pytest.mark.slow  # 5 CPU s, most of it compiling
def test_constraint_violation_stays_small(ideal_run):
    _, trajectory = ideal_run
    assert float(jnp.max(trajectory.constraint_violation)) < 1e-9


@pytest.mark.slow
def test_elastic_contact_conserves_energy(flores):
    """Hertz law, no damping, no friction: kinetic energy + contact potential - driver
    work is constant (Baumgarte terms vanish on the constraint manifold)."""
    config, _ = flores
    raw = config.raw
    raw["joints"][2]["contact"]["model"] = "hertz"
    from pipelines.config import mechanism_from_dict

    elastic_config = mechanism_from_dict(raw, "test")
    mechanism = build_mechanism(elastic_config, "absolute")
    settings = solver_settings(elastic_config, solver="dopri8", t_end=0.004, output_interval=2e-6,
                               rtol=1e-10, atol=1e-13)
    trajectory = jax.jit(model.simulate, static_argnums=1)(mechanism, settings)
    assert model.result_message(int(trajectory.result)) == "ok"
    joint = mechanism.clearance_joints[0]
    penetration = jnp.maximum(trajectory.penetration[:, 0], 0.0)
    exponent = joint.contact.exponent
    potential = joint.stiffness() * penetration ** (exponent + 1) / (exponent + 1)
    kinetic = jax.vmap(lambda qd: model.kinetic_energy(mechanism, qd))(trajectory.qd)
    balance = kinetic + potential - trajectory.driver_work
    assert float(jnp.max(penetration)) > 1e-6  # there were impacts
    peak_potential = float(jnp.max(potential))
    assert peak_potential > 1e-3 * float(jnp.max(kinetic))
    drift = float(jnp.max(jnp.abs(balance - balance[0])))
    assert drift < 1e-6 * float(jnp.max(kinetic)), drift


@pytest.mark.slow
def test_clearance_converges_to_ideal(flores):
    """Shrinking the clearance with rising stiffness approaches the ideal joint: the RMS
    deviation of the slider acceleration from the ideal mechanism's falls."""
    config, mechanism = flores
    raw = config.raw
    raw["joints"][2]["contact"]["restitution"] = 0.5
    raw["joints"][2]["contact"]["model"] = "flores"
    from pipelines.config import mechanism_from_dict

    damped = mechanism_from_dict(raw, "test")
    mechanism = build_mechanism(damped, "absolute")
    settings = solver_settings(damped, solver="tsit5", t_end=0.006, output_interval=1e-5)
    params = ParameterMap(mechanism, ["joints.pin.clearance", "joints.pin.contact.stiffness_factor"])
    simulate = jax.jit(model.simulate, static_argnums=1)
    ideal = simulate(mechanism.idealised(), settings)
    slider = 3 * mechanism.body_names.index("slider")
    reference = float(jnp.sqrt(jnp.mean(ideal.qdd[:, slider] ** 2)))
    deviations = []
    for clearance, factor in ((1e-4, 1.0), (1e-5, 10.0), (1e-6, 100.0)):
        trajectory = simulate(params.apply(mechanism, jnp.array([clearance, factor])), settings)
        assert model.result_message(int(trajectory.result)) == "ok"
        deviations.append(float(jnp.sqrt(jnp.mean((trajectory.qdd[:, slider] - ideal.qdd[:, slider]) ** 2))) / reference)
    # each tenfold reduction of c (with 10x K) cuts the deviation by at least 1.5x
    assert deviations[0] > 1.5 * deviations[1] > 2.25 * deviations[2], deviations
    assert deviations[2] < 0.2, deviations


@pytest.mark.slow  # 4 CPU s, most of it compiling
def test_flat_state_is_the_same_field(flores):
    """The integrators step ``flatten_state`` vectors: the round trip is exact (also with
    batch axes) and the flat field is the pytree field, flattened, at a state in contact."""
    from model.mechanics import flat_vector_field, flatten_state

    _, mechanism = flores
    joints = len(mechanism.clearance_joints)
    state = model.initial_state(mechanism)
    state = state._replace(q=state.q.at[3].add(6e-4), qd=state.qd + 0.1)  # journal pushed into the bearing
    flat = flatten_state(state)
    assert flat.shape == (2 * state.q.size + joints + 1,)
    for original, back in zip(state, mechanism.unflatten(flat)):
        np.testing.assert_array_equal(original, back)
    batched = jnp.stack([flat, 2 * flat])
    np.testing.assert_array_equal(flatten_state(mechanism.unflatten(batched)), batched)
    assert float(jnp.max(model.evaluate(mechanism, 0.0, state).contact.penetration)) > 0
    # both in one compiled program (the flat field is a nested jit, ``traced_once``)
    fields = jax.jit(lambda flat_, state_: (flat_vector_field(0.0, flat_, mechanism),
                                             flatten_state(model.vector_field(0.0, state_, mechanism))))
    np.testing.assert_array_equal(*fields(flat, state))


def test_lanes_field_kernels(flores):
    """As the sweep's lanes run it (a mechanism per lane, vmapped), the planar field
    compiles with no ``dot`` but the Schur system's two matrix-vector products (the small
    products written out so that they fuse with their neighbours, ``model.geometry.vectors``;
    a batched ``dot`` per rotation had cost the CPU sweep 1.2x) and with one sine and one
    cosine per body angle (``model.geometry.planar.rotate``;
    XLA had recomputed them in each kernel that read them, 20 times per evaluation, 30 % of
    its time), and the lanes agree with one evaluation each."""
    from model.mechanics import flat_vector_field, flatten_state

    _, mechanism = flores
    lanes = 4
    state = model.initial_state(mechanism)
    flats = jnp.stack([flatten_state(state._replace(qd=state.qd * (1 + 0.1 * k))) for k in range(lanes)])
    parameters = ParameterMap(mechanism, ("joints.pin.clearance",))  # as the sweep builds its lanes' mechanisms
    mechanisms = jax.vmap(parameters.apply, (None, 0))(mechanism, jnp.broadcast_to(parameters.read(mechanism), (lanes, 1)))
    field = jax.jit(jax.vmap(lambda flat, m: flat_vector_field(0.0, flat, m)))
    compiled = field.lower(flats, mechanisms).compile().as_text()
    assert compiled.count(" dot(") <= 2
    angles = len(mechanism.masses)
    assert compiled.count(" sine(") <= angles and compiled.count(" cosine(") <= angles
    expected = jnp.stack([flat_vector_field(0.0, flat, mechanism) for flat in flats])
    np.testing.assert_allclose(field(flats, mechanisms), expected, rtol=1e-12, atol=1e-9)


def test_projection_reaches_the_constraints_and_reports_failure(flores):
    from model.mechanics.dynamics import constraints, project_onto_constraints

    _, mechanism = flores
    ideal = mechanism.idealised()
    # 2 mm and 0.06 rad off every coordinate: Gauss-Newton lands on Phi = 0
    perturbed = ideal.initial_positions + 2e-3 * (1.0 + jnp.arange(ideal.initial_positions.size) % 3 * 14.0)
    projection = project_onto_constraints(ideal, perturbed)
    assert bool(projection.converged)
    assert float(jnp.max(jnp.abs(constraints(ideal, projection.positions, jnp.zeros(()))))) < 1e-12
    # one step is not enough from there: the status says so instead of returning a bad point
    assert not bool(project_onto_constraints(ideal, perturbed, max_steps=1).converged)
