"""A journal in a lubricated bearing in the planar engine: the film brakes a free journal,
its dissipated power is never negative, and at constant speed under a constant load the
journal settles at the finite-bearing table's eccentricity and attitude while the driver
supplies the film's friction torque (Petroff near the centre, Raimondi & Boyd 1958 loaded).

The rig: the journal (``shaft``) turns about a fixed pin; the bearing (``sleeve``) hangs on
two crossed slides (``rail`` along x, ``slide`` along y), so it translates freely without
turning, loaded by its weight. The film depends only on the relative motion, so this is a
journal under a constant load in a fixed bearing.
"""

from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq

import model
from model.lubrication import tabulated_coefficients
from model.mechanics.dynamics import kinetic_energy
from model.mechanics.forces import film_action, joint_kinematics, point_velocity
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism

RADIUS, CLEARANCE, LENGTH, VISCOSITY, SPEED = 0.01, 5e-5, 0.02, 0.005, 3000.0  # m, m, m, Pa s, rad/s
SLEEVE_MASS, GRAVITY = 0.3, 1000.0  # kg, m/s^2: load 300 N, eps ~ 0.59 (scaled by 0.1: eps ~ 0.11)
SHAFT, SLEEVE = 0, 2  # body indices
PETROFF = 2 * np.pi * VISCOSITY * RADIUS**3 * LENGTH * SPEED / CLEARANCE  # N m, centred journal

RIG = '''
name = "journal-rig"
gravity = ["0 m/s^2", "-{gravity} m/s^2"]
[materials.steel]
youngs_modulus = "207 GPa"
poisson_ratio = 0.3
[[bodies]]
name = "shaft"
mass = "0.1 kg"
inertia = "5e-6 kg*m^2"
position = ["0 mm", "0 mm"]
[[bodies]]
name = "carriage"
mass = "0.05 kg"
inertia = "1e-5 kg*m^2"
position = ["0 mm", "0 mm"]
[[bodies]]
name = "sleeve"
mass = "{mass} kg"
inertia = "1e-5 kg*m^2"
position = ["0 mm", "0 mm"]
[[joints]]
name = "main"
type = "revolute"
bodies = ["ground", "shaft"]
points = [["0 mm", "0 mm"], ["0 mm", "0 mm"]]
[[joints]]
name = "rail"
type = "prismatic"
bodies = ["ground", "carriage"]
axis = [1.0, 0.0]
[[joints]]
name = "slide"
type = "prismatic"
bodies = ["carriage", "sleeve"]
axis = [0.0, 1.0]
[[joints]]
name = "film"
type = "revolute_clearance"
bodies = ["shaft", "sleeve"]
points = [["0 mm", "0 mm"], ["0 mm", "0 mm"]]
bearing_radius = "{radius} m"
clearance = "{clearance} m"
materials = ["steel", "steel"]
initial_eccentricity = ["{ex} m", "{ey} m"]
[joints.contact]
model = "hunt_crossley"
restitution = 0.9
exponent = 1.5
stiffness = "hertz"
[joints.lubrication]
model = "finite_bearing"
viscosity = "{viscosity} Pa*s"
length = "{length} m"
{driver}
[initial]
velocities = "{velocities}"
[simulation]
t_end = "{t_end}"
output_interval = "{interval}"
solver = "auto"
rtol = 1e-8
atol = 1e-11
'''
MOTOR = f'''[[drivers]]
name = "motor"
joint = "main"
type = "constant_speed"
speed = "{SPEED} rad/s"
'''


def rig(tmp_path: Path, driven: bool, t_end: str, interval: str, start_eps: float = 0.5, start_attitude: float = 60.0):
    """The rig's mechanism and solver settings; the journal starts at ``start_eps`` and
    ``start_attitude`` (deg, from the load line +y towards the turning sense)."""
    start = offset(start_eps, start_attitude)
    path = tmp_path / f"rig_{driven}.toml"
    path.write_text(RIG.format(gravity=GRAVITY, interval=interval, mass=SLEEVE_MASS, radius=RADIUS,
                               clearance=CLEARANCE, ex=start[0], ey=start[1],
                               viscosity=VISCOSITY, length=LENGTH, driver=MOTOR if driven else "",
                               velocities="from_drivers" if driven else "zero", t_end=t_end))
    config = load_mechanism(path)
    return build_mechanism(config, "absolute"), solver_settings(config)


def table_steady_state(load: float) -> tuple[float, float]:
    """Eccentricity ratio and attitude angle (deg) of the finite-bearing table for a journal
    at ``SPEED`` under ``load`` (N), L/D = 1: Sommerfeld ``So = 1.5 eps |G(eps, pi/2)|``."""
    sommerfeld = load * (CLEARANCE / RADIUS) ** 2 / (LENGTH * 2 * RADIUS * VISCOSITY * SPEED)

    def coefficients(eps):
        return np.asarray(tabulated_coefficients(eps, np.pi / 2, LENGTH / (2 * RADIUS)))

    eps = brentq(lambda e: 1.5 * e * np.hypot(*coefficients(e)) - sommerfeld, 0.01, 0.97, xtol=1e-12)
    radial, tangential = coefficients(eps)
    return eps, float(np.degrees(np.arctan2(abs(tangential), abs(radial))))


def offset(eps: float, attitude: float) -> np.ndarray:
    """Journal centre minus bearing centre (m) at ``eps`` and ``attitude`` (deg, from the load
    line +y towards the turning sense, counter-clockwise)."""
    angle = np.radians(attitude)
    return eps * CLEARANCE * np.array([-np.sin(angle), np.cos(angle)])


@pytest.fixture(scope="module")
def steady(tmp_path_factory):
    """Driven journal under two loads (gravity scaled), one compile: each starts 10 % of its
    table eccentricity and 5 deg of attitude away from the table state."""
    mechanism, settings = rig(tmp_path_factory.mktemp("steady"), driven=True, t_end="6 ms", interval="1 ms")
    joint = mechanism.clearance_joints[0]

    @jax.jit
    def run(gravity_scale, start):
        loaded = eqx.tree_at(lambda m: (m.gravity, m.clearance_joints[0].initial_eccentricity,
                                        m.initial_positions),
                             mechanism, (mechanism.gravity * gravity_scale, start,
                                         mechanism.initial_positions.at[3 * SLEEVE : 3 * SLEEVE + 2].set(-start)))
        trajectory = model.simulate(loaded, settings)
        q, qd = trajectory.q[-1], trajectory.qd[-1]
        return trajectory, film_action(joint, q, qd, joint_kinematics(joint, q, qd))

    runs = {}
    for scale in (1.0, 0.1):
        eps, attitude = table_steady_state(SLEEVE_MASS * GRAVITY * scale)
        runs[scale] = run(scale, jnp.asarray(offset(0.9 * eps, attitude + 5.0)))
    return runs


@pytest.mark.validation  # two runs of 6 ms with one compile (docs/lubrication.md)
def test_constant_speed_journal_settles_at_the_table_state(steady):
    """The loaded case (eps ~ 0.59); the light one (eps ~ 0.1) whirls for longer, being near
    the stability limit of a lightly loaded plain bearing, and serves the torque below."""
    trajectory, _ = steady[1.0]
    assert all(int(run[0].result) == 0 for run in steady.values())
    eps, attitude = table_steady_state(SLEEVE_MASS * GRAVITY)
    e = np.asarray(trajectory.eccentricity[-1, 0])
    assert np.hypot(*e) / CLEARANCE == pytest.approx(eps, abs=1e-3)
    assert np.degrees(np.arctan2(-e[0], e[1])) == pytest.approx(attitude, abs=0.1)  # from +y, turning sense


@pytest.mark.validation  # shares the runs above
def test_driver_supplies_the_film_friction_torque(steady):
    """At steady speed the driver torque (positive: it supplies power) balances the film's
    torque on the journal: Raimondi & Boyd's (R/c) f = 3.22 at So = 1.3146 (eps = 0.6,
    L/D = 1; the load here is 300 N, So = 1.25), and Petroff's torque near the centre."""
    for scale, (trajectory, action) in steady.items():
        torque = float(trajectory.driver_torques[-1, 0])
        assert torque > 0.0
        assert torque == pytest.approx(-float(action.journal_torque), rel=1e-6)
    heavy = float(steady[1.0][0].driver_torques[-1, 0])
    load = SLEEVE_MASS * GRAVITY
    # (R/c) f of Raimondi & Boyd, L/D = 1, interpolated in S between eps = 0.4 and 0.6
    sommerfeld = load * (CLEARANCE / RADIUS) ** 2 / (LENGTH * 2 * RADIUS * VISCOSITY * SPEED)
    friction_variable = np.interp(1 / (2 * np.pi * sommerfeld), [0.121, 0.264], [3.22, 5.79])
    assert heavy == pytest.approx(friction_variable * CLEARANCE * load, rel=0.03)
    light = float(steady[0.1][0].driver_torques[-1, 0])
    assert PETROFF < light < 1.02 * PETROFF


@pytest.fixture(scope="module")
def spin_down(tmp_path_factory):
    """The same journal, undriven, started at SPEED in the loaded bearing."""
    mechanism, settings = rig(tmp_path_factory.mktemp("free"), driven=False, t_end="4 ms", interval="0.1 ms")
    start = mechanism.initial_state()
    start = start._replace(qd=start.qd.at[3 * SHAFT + 2].set(SPEED))
    states = jax.jit(lambda y0: model.solve(mechanism, settings, y0).ys)(start)
    return mechanism, states


@pytest.mark.slow  # 4 ms of the lubricated journal's spin-down
def test_free_journal_slows_down_and_the_film_dissipates(spin_down):
    mechanism, states = spin_down
    joint = mechanism.clearance_joints[0]
    spin = np.asarray(states.qd[:, 3 * SHAFT + 2])
    assert np.all(np.diff(spin) < 0.0) and spin[-1] < 0.995 * SPEED

    def dissipation(q, qd):
        action = film_action(joint, q, qd, joint_kinematics(joint, q, qd))
        centres = [point_velocity(q, qd, body, point) for body, point in
                   ((joint.journal_body, joint.journal_point), (joint.bearing_body, joint.bearing_point))]
        return -(action.force @ (centres[0] - centres[1]) + action.journal_torque * qd[3 * SHAFT + 2]
                 + action.bearing_torque * qd[3 * SLEEVE + 2])

    power = np.asarray(jax.jit(jax.vmap(dissipation))(states.q, states.qd))  # one compile, not one per operation
    assert np.all(power >= 0.0)
    # energy: what the film dissipates is what the bodies lose (kinetic + the sleeve's weight)
    weights = jnp.repeat(mechanism.masses, 3) * jnp.tile(jnp.append(mechanism.gravity, 0.0), mechanism.num_bodies)
    energy = np.asarray(jax.jit(jax.vmap(lambda q, qd: kinetic_energy(mechanism, qd) - q @ weights))(states.q, states.qd))
    dissipated = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * 1e-4)])
    np.testing.assert_allclose(energy[0] - energy, dissipated, rtol=2e-3, atol=1e-4 * dissipated[-1])
