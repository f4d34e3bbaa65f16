"""The state at t = 0 built from ``[initial]`` (planar and spatial): flexible bodies start
with the rigid-body velocity field of their frame, requested body velocities are projected
onto the ideal joints, clearance joints start seated under the initial loads, and bad input
is one line naming the key.

Only initial states are evaluated here (no solve): each test costs its build and one
compiled evaluation (compiled, the start costs a third to a sixth of its eager evaluation)."""

import copy
import re
import tomllib
from types import SimpleNamespace
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.mechanics.dynamics import evaluate, kinetic_energy
from model.mechanics.flexible import chain_strain_energy
from model.mechanics.spatial.dynamics import SpatialState, evaluate as spatial_evaluate
from pipelines.build import build_mechanism, solver_settings
from pipelines.build_spatial import _start as spatial_start
from pipelines.cli import main
from pipelines.simulation import velocity_projection
from pipelines.config.loading import load_mechanism, mechanism_from_dict

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
GRAVITY = 9.81
STEEL = {"steel": {"youngs_modulus": "207 GPa", "poisson_ratio": 0.3}}
SECTION = {"shape": "rectangle", "width": "10 mm", "height": "10 mm"}
SPEED = 100.0  # rad/s


def _arm(dimension: int) -> dict:
    """A flexible arm of 200 mm (one element: two segments) on a hub at the origin, driven at ``SPEED``."""
    zero = ["0 mm"] * dimension
    raw = {
        "name": "arm", "gravity": ["0 m/s^2"] * dimension, "materials": STEEL,
        "bodies": [{"name": "arm", "mass": "0.2 kg", "position": ["100 mm"] + zero[1:],
                    "flexible": {"segments": 1, "length": "200 mm", "material": "steel", "section": SECTION}}],
        "joints": [{"name": "hub", "type": "revolute", "bodies": ["ground", "arm"],
                    "points": [zero, ["-100 mm"] + zero[1:]]}],
        "drivers": [{"name": "motor", "joint": "hub", "type": "constant_speed", "speed": f"{SPEED} rad/s"}],
        "simulation": {"t_end": "1 ms", "output_interval": "0.1 ms"},
    }
    if dimension == 3:
        raw["dimension"] = 3
        raw["bodies"][0]["inertia"] = ["1e-5 kg*m^2", "1e-3 kg*m^2", "1e-3 kg*m^2"]
        raw["joints"][0]["axis"] = [0.0, 0.0, 1.0]
    else:
        raw["bodies"][0]["inertia"] = "1e-3 kg*m^2"
        raw["bodies"][0]["angle"] = "0 deg"
    return raw


def _build(raw: dict):
    return build_mechanism(mechanism_from_dict(copy.deepcopy(raw), "test.toml"), "absolute")


@eqx.filter_jit
def _initial(mechanism):
    return mechanism.initial_state()


@eqx.filter_jit
def _start(mechanism):
    """The initial state and the equations of motion evaluated on it."""
    state = mechanism.initial_state()
    engine = evaluate if mechanism.dimension == 2 else spatial_evaluate
    return state, engine(mechanism, jnp.zeros(()), state)


def _twists(mechanism, state) -> np.ndarray:
    velocities = state.qd if mechanism.dimension == 2 else state.v
    return np.asarray(velocities).reshape(mechanism.num_bodies, -1)


def _positions(mechanism, state) -> np.ndarray:
    if mechanism.dimension == 2:
        return np.asarray(state.q).reshape(-1, 3)[:, :2]
    return np.asarray(state.x).reshape(-1, 7)[:, :3]


def test_a_driven_spatial_flexible_arm_starts_as_a_rigid_body():
    # every segment on the rigid rotation about the hub: v_k = w x r_k, omega_k = w, i.e. no
    # element deforms at any rate (the minimum-norm joint velocities would move only the
    # segment at the hub); the planar engine's rows are checked on the slider-crank's rod below
    mechanism = _build(_arm(3))
    state = _initial(mechanism)
    twists, positions = _twists(mechanism, state), _positions(mechanism, state)
    omega = np.array([0.0, 0.0, SPEED])
    expected = np.concatenate([np.cross(omega, positions), np.tile(omega, (len(positions), 1))], axis=1)
    np.testing.assert_allclose(twists, expected, atol=1e-9 * SPEED)
    assert np.all(np.abs(expected[:, 1]) > 0.0)  # every segment moves


def test_the_flexible_conrod_of_the_slider_crank_moves_rigidly():
    # the rod's segments on one rigid field between the crank pin and the slider: their
    # angular velocities equal, their velocities linear along the rod
    mechanism = build_mechanism(load_mechanism(CONFIGS / "flores_flexible.toml"), "absolute")
    state = _initial(mechanism)
    twists = _twists(mechanism, state)
    rod = [k for k, name in enumerate(mechanism.body_names) if name.startswith("conrod[")]
    omega = twists[rod, 2]
    np.testing.assert_allclose(omega, omega[0], rtol=1e-9)
    positions = _positions(mechanism, state)[rod]
    rigid = twists[rod[0], :2] + omega[0] * np.stack([-(positions[:, 1] - positions[0, 1]),
                                                      positions[:, 0] - positions[0, 0]], axis=1)
    np.testing.assert_allclose(twists[rod, :2], rigid, atol=1e-9 * np.max(np.abs(rigid)))
    crank_speed = 5000 * 2 * np.pi / 60
    assert omega[0] == pytest.approx(-crank_speed * 0.05 / 0.12, rel=1e-6)  # -w r / L at crank angle 0


def _pendulum(dimension: int, clearance_type: str | None = None) -> dict:
    """A 1 kg rod of 300 mm hung from its top end at the origin, hanging along -y."""
    zero = ["0 mm"] * dimension
    joint = {"name": "top", "type": "revolute", "bodies": ["ground", "rod"],
             "points": [zero, ["0 mm", "150 mm"] + zero[2:]]}
    raw = {
        "name": "pendulum", "gravity": ["0 m/s^2", f"-{GRAVITY} m/s^2"] + ["0 m/s^2"] * (dimension - 2),
        "materials": STEEL,
        "bodies": [{"name": "rod", "mass": "1 kg", "position": ["0 mm", "-150 mm"] + zero[2:]}],
        "joints": [joint], "simulation": {"t_end": "1 ms", "output_interval": "0.1 ms"},
    }
    if dimension == 3:
        raw["dimension"] = 3
        raw["bodies"][0]["inertia"] = ["7.5e-3 kg*m^2"] * 3
        joint["axis"] = [0.0, 0.0, 1.0]
    else:
        raw["bodies"][0]["inertia"] = "7.5e-3 kg*m^2"
        raw["bodies"][0]["angle"] = "0 deg"
    if clearance_type == "revolute_clearance":
        joint.update(type="revolute_clearance", bodies=["rod", "ground"], points=joint["points"][::-1],
                     bearing_radius="10 mm", clearance="0.1 mm", materials=["steel", "steel"],
                     contact={"model": "hertz", "exponent": 1.5, "stiffness": "hertz"})
    elif clearance_type == "spherical_clearance":
        joint.pop("axis")
        joint.update(type="spherical_clearance", bodies=["rod", "ground"], points=joint["points"][::-1],
                     socket_radius="10 mm", clearance="0.1 mm", materials=["steel", "steel"],
                     contact={"model": "hertz", "exponent": 1.5, "stiffness": "hertz"})
    return raw


def test_requested_velocities_are_projected_onto_the_joints():
    # a pendulum asked to move at (1, 0.5) m/s and 2 rad/s: about its pin it can only turn,
    # and the closest turning motion (least change in the coordinates) is w = (vx r + omega)
    # / (r^2 + 1) with the centre's velocity w r along x (r = 0.15 m below the pin)
    raw = _pendulum(2)
    raw["initial"] = {"velocities": {"rod": {"vx": "1 m/s", "vy": "0.5 m/s", "omega": "2 rad/s"}}}
    twist = _twists(mechanism := _build(raw), _initial(mechanism))[0]
    arm = 0.15
    omega = (1.0 * arm + 2.0) / (arm**2 + 1.0)
    np.testing.assert_allclose(twist, [omega * arm, 0.0, omega], atol=1e-12)


def test_the_summary_measures_the_projection_in_kinetic_energy():
    # the same pendulum (one compiled start): the start's change from the request, in the
    # kinetic-energy metric, 1/2 [m (dvx^2 + dvy^2) + I domega^2], against 1/2 v*^T M v*
    raw = _pendulum(2)
    raw["initial"] = {"velocities": {"rod": {"vx": "1 m/s", "vy": "0.5 m/s", "omega": "2 rad/s"}}}
    mechanism = _build(raw)
    state = _initial(mechanism)
    arm, mass, inertia = 0.15, 1.0, 7.5e-3
    omega = (1.0 * arm + 2.0) / (arm**2 + 1.0)
    change = 0.5 * (mass * ((omega * arm - 1.0) ** 2 + 0.5**2) + inertia * (omega - 2.0) ** 2)
    requested = 0.5 * (mass * (1.0 + 0.5**2) + inertia * 2.0**2)
    found = velocity_projection(mechanism, SimpleNamespace(qd=state.qd[None]))["initial_velocity_projection"]
    assert found["change"] == pytest.approx(change, rel=1e-9)
    assert found["requested"] == pytest.approx(requested, rel=1e-12)
    assert found["relative"] == pytest.approx(np.sqrt(change / requested), rel=1e-9)


def test_a_free_body_keeps_its_requested_spin():
    # a spatial rotor without joints: nothing to project on, the request is the start
    raw = _pendulum(3)
    raw["joints"], raw["gravity"] = [], ["0 m/s^2"] * 3
    raw["initial"] = {"velocities": {"rod": {"v": ["0 m/s", "0 m/s", "-2 m/s"], "w": ["0 rad/s", "30 rad/s", "5 rad/s"]}}}
    twist = _twists(mechanism := _build(raw), _initial(mechanism))[0]
    np.testing.assert_allclose(twist, [0.0, 0.0, -2.0, 0.0, 30.0, 5.0], atol=1e-12)


def test_a_static_start_seats_the_planar_journal_under_the_weight():
    # hung on its clearance joint, the rod presses down with m g: the journal starts at
    # e = c + (m g / K)^(2/3) straight below, carried by the contact force, so that nothing
    # accelerates at t = 0 (a centred journal would fall through the clearance)
    raw = _pendulum(2, "revolute_clearance")
    raw["initial"] = {"clearance": "static"}
    mechanism = _build(raw)
    state, out = _start(mechanism)
    joint = mechanism.clearance_joints[0]
    weight = 1.0 * GRAVITY
    np.testing.assert_allclose(float(out.contact.normal_force[0]), weight, rtol=1e-9)
    penetration = (weight / float(joint.stiffness())) ** (1 / 1.5)
    np.testing.assert_allclose(np.asarray(out.contact.eccentricity[0]), [0.0, -(1e-4 + penetration)], atol=1e-15)
    np.testing.assert_allclose(np.asarray(out.acceleration), 0.0, atol=1e-9 * GRAVITY)


def test_a_static_start_seats_the_spherical_joint_under_the_weight():
    # the spherical pendulum of the socket: the ball starts on its seat, the contact force
    # equal to the weight and no acceleration at t = 0
    raw = _pendulum(3, "spherical_clearance")
    raw["initial"] = {"clearance": "static", "velocities": "zero"}
    mechanism = _build(raw)
    state, out = _start(mechanism)
    np.testing.assert_allclose(float(out.contact.normal_force[0]), GRAVITY, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(out.acceleration), 0.0, atol=1e-9 * GRAVITY)


def _with_initial(tmp_path: Path, config: str, initial: str) -> Path:
    """``config`` with its ``[initial]`` table replaced by ``initial`` (TOML text)."""
    text = re.sub(r"^\[initial\]\n(?:(?!\[).*\n)*", "", (CONFIGS / config).read_text(), flags=re.M)
    path = tmp_path / config
    path.write_text(text + "\n" + initial + "\n")
    return path


@pytest.mark.parametrize(
    ("config", "initial", "key"),
    [
        ("flores_slider_crank.toml", '[initial.velocities.piston]\nvx = "1 m/s"', "initial.velocities.piston"),
        ("flores_slider_crank.toml", '[initial.velocities.slider]\nvx = "1 rad/s"', "initial.velocities.slider.vx"),
        ("flores_slider_crank.toml", '[initial.velocities.slider]\nvz = "1 m/s"', "initial.velocities.slider.vz"),
        ("flores_slider_crank.toml", '[initial]\nvelocities = "still"', "initial.velocities"),
        ("flores_lubricated.toml", '[initial]\nclearance = "static"', "initial.clearance"),
        ("flores_slider_crank.toml", '[initial]\ndeformation = "bent"', "initial.deformation"),
        ("double_link_clearance.toml", '[initial.velocities.link3]\nw = ["1 rad/s", "0 rad/s", "0 rad/s"]',
         "initial.velocities.link3"),
        ("double_link_clearance.toml", '[initial.velocities.link1]\nomega = "1 rad/s"', "initial.velocities.link1.omega"),
    ],
)
def test_bad_initial_input_is_one_line_naming_the_key(config, initial, key, tmp_path, capsys):
    path = _with_initial(tmp_path, config, initial)
    status = main(["check", str(path)])
    error = capsys.readouterr().err
    assert status == 2
    assert error.count("\n") == 1 and error.startswith(f"error: {path}: {key}: "), error


@pytest.mark.slow
@pytest.mark.validation  # a compiled solve of the flexible slider-crank (about a minute of CPU)
def test_the_undamped_ideal_pin_flexible_slider_crank_runs_and_conserves_energy():
    # with the rigid-body start the undamped rod rings only with what the motion excites,
    # and the solve completes; kinetic + strain energy - driver work stays constant
    raw = tomllib.loads((CONFIGS / "flores_flexible.toml").read_text())
    pin = next(joint for joint in raw["joints"] if joint["name"] == "pin")
    raw["joints"][raw["joints"].index(pin)] = {"name": "pin", "type": "revolute", "bodies": pin["bodies"],
                                                "points": pin["points"]}
    rod = next(body for body in raw["bodies"] if body["name"] == "conrod")
    rod["flexible"].update(segments=4, damping_ratio=0.0)
    config = mechanism_from_dict(raw, "flores_flexible.toml")
    mechanism = build_mechanism(config, "absolute")
    trajectory = jax.jit(model.simulate, static_argnums=1)(mechanism, solver_settings(config, t_end=6e-3))
    assert int(trajectory.result) == 0
    energy = np.asarray(jax.vmap(lambda q, qd: kinetic_energy(mechanism, qd) + chain_strain_energy(
        mechanism.beam_chains[0], q))(trajectory.q, trajectory.qd)) - np.asarray(trajectory.driver_work)
    strain = np.asarray(jax.vmap(lambda q: chain_strain_energy(mechanism.beam_chains[0], q))(trajectory.q))
    assert np.max(strain) > 0.0
    np.testing.assert_allclose(energy, energy[0], atol=1e-3 * np.max(strain))



def test_a_spatial_flexible_body_may_start_in_its_static_shape(tmp_path, capsys):
    # the key is accepted in a dimension = 3 file (the shape itself:
    # tests/model/mechanics/spatial/test_static_shape.py)
    path = _with_initial(tmp_path, "flexible_cantilever_3d.toml", '[initial]\nvelocities = "zero"\ndeformation = "static"')
    assert main(["check", str(path)]) == 0
    assert '"deformation": "static"' in capsys.readouterr().out


def _offset_pin(directory: Path, load_point: str) -> Path:
    """configs/cylindrical_joint_loads.toml (a pin in a fixed bushing, 40 mm contact length,
    1000 N at a point of its axis) started static, the load at ``load_point`` along the axis."""
    text = (CONFIGS / "cylindrical_joint_loads.toml").read_text()
    text = text.replace('velocities = "zero"', 'velocities = "zero"\nclearance = "static"')
    text = text.replace('point = ["0 mm", "0 mm", "-20 mm"]', f'point = ["0 mm", "0 mm", "{load_point}"]')
    path = directory / f"pin{load_point.replace(' ', '')}.toml"
    path.write_text(text)
    return path


@eqx.filter_jit
def _at_rest(mechanism, x):
    """The spatial equations of motion at positions ``x``, every body at rest."""
    zero = jnp.zeros(6 * mechanism.num_bodies)
    state = SpatialState(x, zero, jnp.zeros(mechanism.memory_size), jnp.zeros(()))
    return spatial_evaluate(mechanism, jnp.zeros(()), state)


@pytest.mark.slow  # 4 CPU s, most of it compiling
def test_a_static_start_tilts_the_journal_under_an_offset_load(tmp_path):
    # the load 10 mm off the middle of the contact length: the ideal joint carries its
    # moment (10 N m) as well as its force; the journal starts eccentric and tilted so that
    # its slices carry both, and nothing accelerates at t = 0 (a journal seated parallel to
    # the bearing turns at M / I: tests/model/mechanics/spatial/test_seat.py)
    mechanism = build_mechanism(load_mechanism(_offset_pin(tmp_path, "-10 mm")))
    out = _at_rest(mechanism, spatial_start(mechanism)[0])
    mass, inertia, load, length = 0.0986, 1.561e-5, 1000.0, 0.040
    assert np.max(np.abs(np.asarray(out.acceleration[:3]))) < 1e-6 * load / mass
    assert np.max(np.abs(np.asarray(out.acceleration[3:]))) < 1e-6 * load * length / 4 / inertia
    assert float(out.contact.tilt[0]) > 1e-5
    # statics of the end forces: F_a + F_b = F + m g, (l/2)(F_a - F_b) = F l/4
    weight = mass * GRAVITY
    assert float(out.contact.normal_force_a[0]) == pytest.approx(0.75 * load + weight / 2, rel=1e-6)
    assert float(out.contact.normal_force_b[0]) == pytest.approx(0.25 * load + weight / 2, rel=1e-6)


def test_a_static_start_without_a_seat_is_refused_in_one_line(tmp_path, capsys):
    # the load at the end of the contact length: its moment about the bearing's centre is the
    # force times half the length, which slices within the length cannot carry on one side;
    # no seat within the clearance (the same compiled start as the test above)
    path = _offset_pin(tmp_path, "-20 mm")
    status = main(["simulate", str(path), "--out", str(tmp_path / "out"), "--no-ideal", "--no-plots"])
    error = capsys.readouterr().err
    assert status == 2
    assert error.count("\n") == 1 and error.startswith(f"error: {path}: initial.clearance: joint 'bush' "), error
