"""Exponents and sections of mechanisms (validation tier: runs of tens of driver periods).

- An ideal-joint slider-crank driven at constant speed has no degree of freedom: every
  tangent direction violates a constraint and decays at the Baumgarte rate (``alpha = 5``
  1/s, critically damped), so its largest exponent is negative and tends to ``-alpha``; its
  section repeats every revolution.
- The Flores slider-crank with Coulomb friction 0.3 and restitution 0.5 at 2000 rpm runs
  a period-1 orbit in persistent contact; its largest exponent is zero to the run's
  resolution (the impact memory, frozen in contact, is a neutral direction).
- The Flores slider-crank (0.5 mm clearance, 5000 rpm, restitution 0.9, no friction) is
  chaotic: its largest exponent is positive, and two solves started 1e-12 m/s apart
  separate at a rate of the same order (an independent estimate without tangents).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.nonlinear import MOTION_NAMES, mechanism_section
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism

from tests.helpers import FLORES
from tests.pipelines.bifurcation.test_bifurcation_cli import ideal_slider_crank

pytestmark = [pytest.mark.slow, pytest.mark.validation]


def _mechanism(path, *overrides):
    config = load_mechanism(path, list(overrides))
    return build_mechanism(config, "absolute"), solver_settings(config, solver="tsit5")


def test_ideal_slider_crank_has_no_positive_exponent(tmp_path):
    mechanism, settings = _mechanism(ideal_slider_crank(tmp_path), "drivers.motor.speed=600 rpm")
    result = jax.jit(lambda m: mechanism_section(m, settings, transient_periods=2, periods=30))(mechanism)
    assert MOTION_NAMES[int(result.motion)] == "periodic" and int(result.period) == 1
    largest = float(result.lyapunov.exponents[0])
    assert -5.0 - 0.5 < largest < 0.0  # tends to -alpha = -5 1/s from above


def test_flores_slider_crank_with_friction_is_periodic():
    mechanism, settings = _mechanism(FLORES, "joints.pin.friction.model=coulomb_tanh",
                                     "joints.pin.friction.coefficient=0.3", "joints.pin.contact.restitution=0.5",
                                     "drivers.motor.speed=2000 rpm")
    result = jax.jit(lambda m: mechanism_section(m, settings, transient_periods=5, periods=20))(mechanism)
    assert MOTION_NAMES[int(result.motion)] == "periodic" and int(result.period) == 1
    period = 60.0 / 2000.0
    assert float(result.lyapunov.exponents[0]) * period < 0.01  # the chaos threshold per revolution


def test_flores_slider_crank_is_chaotic():
    mechanism, settings = _mechanism(FLORES)
    result = jax.jit(lambda m: mechanism_section(m, settings, transient_periods=5, periods=20))(mechanism)
    largest = float(result.lyapunov.exponents[0])
    assert MOTION_NAMES[int(result.motion)] == "chaotic" and int(result.period) == 0
    assert largest > 10 * float(result.lyapunov.change[0]) > 0.0

    # twin solves: the separation of the pin's eccentricity grows at a rate of order lambda
    long_settings = solver_settings(load_mechanism(FLORES, ["simulation.t_end=60 ms"]), solver="tsit5")
    start = mechanism.initial_state()
    nudged = start._replace(qd=start.qd.at[-3].add(1e-12))
    run = jax.jit(lambda y0: model.solve(mechanism, long_settings, y0=y0).ys.q)
    separation = jnp.linalg.norm(run(start) - run(nudged), axis=1)
    times = np.asarray(long_settings.output_times())
    growing = (np.asarray(separation) > 1e-13) & (np.asarray(separation) < 1e-6)
    rate = np.polyfit(times[growing], np.log(np.asarray(separation)[growing]), 1)[0]
    assert 0.2 * largest < rate < 5.0 * largest


CRANK_BALL = """name = "crank-ball"
dimension = 3
gravity = ["0 m/s^2", "0 m/s^2", "0 m/s^2"]
[materials.steel]
youngs_modulus = "207 GPa"
poisson_ratio = 0.3
[[bodies]]
name = "crank"
mass = "0.3 kg"
inertia = ["2e-5 kg*m^2", "1e-4 kg*m^2", "1e-4 kg*m^2"]
position = ["25 mm", "0 mm", "0 mm"]
[[bodies]]
name = "ball"
mass = "0.1 kg"
inertia = ["4e-6 kg*m^2", "4e-6 kg*m^2", "4e-6 kg*m^2"]
position = ["50 mm", "0 mm", "0 mm"]
[[joints]]
name = "main"
type = "revolute"
bodies = ["ground", "crank"]
points = [["0 mm", "0 mm", "0 mm"], ["-25 mm", "0 mm", "0 mm"]]
axis = [0.0, 0.0, 1.0]
[[joints]]
name = "socket"
type = "spherical_clearance"
bodies = ["ball", "crank"]
points = [["0 mm", "0 mm", "0 mm"], ["25 mm", "0 mm", "0 mm"]]
socket_radius = "10 mm"
clearance = "0.1 mm"
materials = ["steel", "steel"]
[joints.contact]
model = "lankarani_nikravesh"
stiffness = "hertz"
restitution = 0.5
[joints.friction]
model = "coulomb_tanh"
coefficient = 0.2
[[drivers]]
name = "motor"
joint = "main"
type = "constant_speed"
speed = "300 rpm"
[simulation]
t_end = "10 ms"
output_interval = "0.1 ms"
solver = "tsit5"
"""


def test_spatial_crank_with_a_ball_in_its_socket_settles_on_a_period_one_orbit(tmp_path):
    """A spatial crank at 300 rpm carrying a ball in a spherical socket (0.1 mm clearance,
    friction 0.2, no gravity): the ball, started at rest, settles pressed outward against
    the socket, so the section repeats every revolution at an eccentricity of the
    clearance plus the Hertz penetration under the centripetal load m r omega^2, and the
    largest exponent is zero to the run's resolution."""
    path = tmp_path / "crank_ball.toml"
    path.write_text(CRANK_BALL)
    config = load_mechanism(path)
    mechanism, settings = build_mechanism(config), solver_settings(config)
    result = jax.jit(lambda m: mechanism_section(m, settings, transient_periods=10, periods=8, max_period=3))(mechanism)
    assert bool(result.lyapunov.success)
    assert MOTION_NAMES[int(result.motion)] == "periodic" and int(result.period) == 1
    # no positive exponent: the ball's spin about the crank direction is free (a neutral
    # direction, whose perturbation grows linearly), so the finite-time estimate is of the
    # order log(1 + a t) / t > 0 and falls towards 0 with the run's length; a chaotic
    # motion has lambda T of order 1 (docs/nonlinear.md)
    assert abs(float(result.lyapunov.exponents[0])) * 0.2 < 0.05
    radial = np.asarray(result.section.eccentricity[:, 0, 0])  # along the crank at the section
    load = 0.1 * 0.05 * (300 * 2 * np.pi / 60) ** 2  # N, centripetal
    stiffness = float(mechanism.clearance_joints[0].stiffness())
    assert np.allclose(radial - 1e-4, (load / stiffness) ** (2 / 3), rtol=0.02)  # the penetration


def test_hyperplane_section_of_a_periodic_orbit_agrees_with_the_stroboscopic_one():
    """The Flores slider-crank's period-1 orbit with friction (above): its crossings of
    ``slider.vx = 0`` both ways (the dead centres) give two distinct points, repeating
    every revolution, as its stroboscopic section repeats every revolution."""
    from model.nonlinear import DIRECTIONS, Hyperplane, SectionQuantity, section_period
    from model.nonlinear.mechanism import section_coordinates

    mechanism, settings = _mechanism(FLORES, "joints.pin.friction.model=coulomb_tanh",
                                     "joints.pin.friction.coefficient=0.3", "joints.pin.contact.restitution=0.5",
                                     "drivers.motor.speed=2000 rpm")
    slider = list(mechanism.body_names).index("slider")
    hyperplane = Hyperplane(SectionQuantity("velocity", slider, 0), jnp.asarray(0.0), DIRECTIONS["both"], 64)
    result = jax.jit(lambda m: mechanism_section(m, settings, transient_periods=5, periods=20, num_exponents=0,
                                                 hyperplane=hyperplane, reverse_differentiable=False))(mechanism)
    stroboscopic = section_period(section_coordinates(mechanism, result.section), 8, 1e-3)
    assert int(stroboscopic) == int(result.period) == 1 and int(result.distinct) == 2
    assert int(result.crossings.count) == 40 and MOTION_NAMES[int(result.motion)] == "periodic"


def test_a_value_alone_and_in_a_batch_gives_the_same_crossings(tmp_path):
    """The ideal slider-crank at 5000 rpm alone (``jit``) and beside 6000 rpm in a vmapped
    batch (``jit(vmap)``, as ``[bifurcation] batch = 2``): the same stroboscopic section and
    the same crossings of ``slider.x = L`` to the integrator's tolerance."""
    from model.nonlinear import DIRECTIONS, Hyperplane, SectionQuantity
    from pipelines.build import ParameterMap

    mechanism, settings = _mechanism(ideal_slider_crank(tmp_path))
    hyperplane = Hyperplane(SectionQuantity("position", list(mechanism.body_names).index("slider"), 0),
                            jnp.asarray(0.12), DIRECTIONS["both"], 8)
    parameters = ParameterMap(mechanism, ["drivers.motor.speed"], "test")

    def one(values):
        outcome = mechanism_section(parameters.apply(mechanism, values), settings, transient_periods=1, periods=3,
                                    max_period=1, num_exponents=0, hyperplane=hyperplane, reverse_differentiable=False)
        return outcome.section.t, outcome.section.q, outcome.crossings.times, outcome.crossings.states

    speeds = jnp.array([[5000.0], [6000.0]]) * 2 * np.pi / 60
    alone = jax.jit(one)(speeds[0])
    batched = jax.jit(jax.vmap(one))(speeds)
    for single, together in zip(alone, batched):
        np.testing.assert_allclose(single, together[0], rtol=1e-7, atol=1e-9)
