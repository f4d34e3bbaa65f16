"""Oil film of a cylindrical clearance joint per slice: an aligned journal reproduces the
planar lubricated joint (pressure resultant and viscous torques) for any number of slices, a
tilting journal meets a restoring film moment, and the force differentiates in the
viscosity."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.geometry.cylindrical import end_forces, slice_kinematics
from model.geometry.quaternion import axis_angle_quaternion, rotation_matrix
from model.lubrication import Lubrication
from model.mechanics.spatial.lubrication import slice_film_forces

RADIUS, CLEARANCE, LENGTH = 10e-3, 0.5e-3, 40e-3
FILM = Lubrication("finite_bearing", viscosity=jnp.asarray(0.4), length=jnp.asarray(LENGTH))
Z = jnp.array([0.0, 0.0, 1.0])


def _planar_velocity(velocity, omega, point, position):
    """``v + omega x (P - r)`` in the plane (``omega`` about z)."""
    arm = point - position
    return velocity + omega * jnp.array([-arm[1], arm[0]])


def _spatial_slices(rotation, slices, journal, bearing, lubrication=FILM, journal_axis=Z):
    """Slice film forces of bodies moving in the plane z = 0, all turned by ``rotation``."""
    positions, velocities, omegas, centres = [], [], [], []
    for body in (journal, bearing):
        positions.append(rotation @ jnp.append(body["position"], 0.0))
        velocities.append(rotation @ jnp.append(body["velocity"], 0.0))
        omegas.append(rotation @ (body["omega"] * Z))
        centres.append(rotation @ jnp.append(body["centre"], 0.0))
    axis, u, w = rotation @ Z, rotation[:, 0], rotation[:, 1]
    z = -0.5 * LENGTH + (jnp.arange(slices) + 0.5) * LENGTH / slices
    kin = slice_kinematics(centres[0], rotation @ journal_axis, positions[0], velocities[0], omegas[0],
                           centres[1], axis, positions[1], velocities[1], omegas[1], u, RADIUS, CLEARANCE, z)
    return kin, slice_film_forces(lubrication, kin, u, w, axis, omegas[0], omegas[1], RADIUS, CLEARANCE)


def _motion(eccentricity):
    journal = dict(position=jnp.array([0.03, 0.01]), velocity=jnp.array([0.4, -1.1]), omega=jnp.asarray(140.0),
                   centre=jnp.array([0.09, 0.002]) + jnp.asarray(eccentricity))
    bearing = dict(position=jnp.array([0.092, 0.004]), velocity=jnp.array([0.7, 0.2]), omega=jnp.asarray(-35.0),
                   centre=jnp.array([0.09, 0.002]))
    return journal, bearing


@pytest.mark.slow  # 6 CPU s, most of it compiling
@pytest.mark.parametrize("slices", [1, 5])
@pytest.mark.parametrize("eccentricity", [(0.3e-3, -0.1e-3), (0.48e-3, 0.05e-3)])  # eps 0.63; 0.965 (saturated)
def test_aligned_journal_sums_to_the_planar_joint(slices, eccentricity):
    journal, bearing = _motion(eccentricity)
    velocity = [_planar_velocity(b["velocity"], b["omega"], b["centre"], b["position"]) for b in (journal, bearing)]
    action = FILM.action(journal["centre"] - bearing["centre"], velocity[0] - velocity[1], journal["omega"],
                         bearing["omega"], RADIUS, CLEARANCE)
    planar = action.force
    rotation = rotation_matrix(axis_angle_quaternion(jnp.array([1.0, 2.0, -0.5]) / jnp.sqrt(5.25), 0.7))
    for turn in (jnp.eye(3), rotation):
        _, film = _spatial_slices(turn, slices, journal, bearing)
        expected = turn @ jnp.append(planar, 0.0)
        np.testing.assert_allclose(film.force.sum(axis=0), expected, rtol=1e-10,
                                   atol=1e-9 * float(jnp.abs(planar).max()))
        np.testing.assert_allclose(film.force, jnp.broadcast_to(expected / slices, film.force.shape), rtol=1e-10,
                                   atol=1e-6)
        for torques, torque in ((film.journal_torque, action.journal_torque), (film.bearing_torque,
                                                                                action.bearing_torque)):
            np.testing.assert_allclose(torques.sum(axis=0), torque * (turn @ Z), rtol=1e-10,
                                       atol=1e-10 * float(jnp.abs(torque)))
    assert float(jnp.linalg.norm(planar)) > 1.0  # a real film force, not a trivial zero
    assert abs(float(action.journal_torque)) > 1e-3  # and a real viscous torque


def test_tilting_journal_meets_a_restoring_film_moment():
    """Journal centred and tilted about u while the tilt grows: each end's eccentricity grows
    in opposite directions, so the film pushes the ends back (squeeze) and its moment about
    the centre opposes the tilting rate; the resultant vanishes by symmetry."""
    tilt, tilt_rate = 0.01, 2.0
    journal = dict(position=jnp.zeros(2), velocity=jnp.zeros(2), omega=jnp.asarray(0.0), centre=jnp.zeros(2))
    bearing = dict(position=jnp.zeros(2), velocity=jnp.zeros(2), omega=jnp.asarray(0.0), centre=jnp.zeros(2))
    journal_axis = jnp.array([0.0, -jnp.sin(tilt), jnp.cos(tilt)])
    slices = 8
    z = -0.5 * LENGTH + (jnp.arange(slices) + 0.5) * LENGTH / slices
    kin = slice_kinematics(jnp.zeros(3), journal_axis, jnp.zeros(3), jnp.zeros(3), jnp.array([tilt_rate, 0.0, 0.0]),
                           jnp.zeros(3), Z, jnp.zeros(3), jnp.zeros(3), jnp.zeros(3), jnp.array([1.0, 0, 0]),
                           RADIUS, CLEARANCE, z)
    film = slice_film_forces(FILM, kin, jnp.array([1.0, 0, 0]), jnp.array([0.0, 1, 0]), Z,
                             jnp.array([tilt_rate, 0.0, 0.0]), jnp.zeros(3), RADIUS, CLEARANCE).force
    end_a, end_b = end_forces(film, kin.axial, LENGTH)
    end_rate = kin.eccentricity_rate[-1] - kin.eccentricity_rate[0]
    assert float((end_b - end_a) @ end_rate) < 0.0  # the film resists the tilting
    moment = jnp.sum(jnp.cross(kin.axial[:, None] * Z, film), axis=0)
    assert float(moment[0]) < 0.0  # opposes the tilt rate about +u
    np.testing.assert_allclose(film.sum(axis=0), 0.0, atol=1e-9 * float(jnp.abs(film).max()))
    _, aligned = _spatial_slices(jnp.eye(3), slices, journal, bearing)  # no motion, no film
    for part in aligned:
        np.testing.assert_allclose(part, 0.0, atol=1e-12)


def test_slice_force_sum_differentiates_in_the_viscosity():
    journal, bearing = _motion((0.3e-3, -0.1e-3))
    tilted = jnp.array([0.0, -0.005, 1.0]) / jnp.sqrt(1.0 + 0.005**2)

    def total(viscosity):
        film = Lubrication("finite_bearing", viscosity=viscosity, length=jnp.asarray(LENGTH))
        forces = _spatial_slices(jnp.eye(3), 5, journal, bearing, film, tilted)[1].force
        return jnp.sum(forces @ jnp.array([0.6, -0.8, 0.0]))

    derivative = jax.grad(total)(jnp.asarray(0.4))
    step = 1e-4
    central = (total(jnp.asarray(0.4 + step)) - total(jnp.asarray(0.4 - step))) / (2 * step)
    assert np.isfinite(float(derivative)) and abs(float(derivative)) > 0.0
    assert float(derivative) == pytest.approx(float(central), rel=1e-8)


@pytest.mark.slow
@pytest.mark.validation  # end to end; the slice forces are checked against the planar film above
def test_lubricated_slider_crank_in_3d_matches_the_planar_one(tmp_path):
    """The 3-D slider-crank with the planar example's oil film on its pin (axes parallel, so
    every slice sees the planar cross-section): same film force and journal path."""
    from pathlib import Path

    import model
    from model.integrate import simulate
    from pipelines.build import build_mechanism, solver_settings
    from pipelines.build_spatial import build_spatial
    from pipelines.config import load_mechanism

    configs = Path(__file__).resolve().parents[4] / "configs"
    table = '\n[joints.lubrication]\nmodel = "finite_bearing"\nviscosity = "400 cP"\nlength = "40 mm"\ntransition = 0.95\n'
    text = (configs / "flores_slider_crank_3d.toml").read_text().replace("coefficient = 0.0\n", "coefficient = 0.0\n" + table, 1)
    (tmp_path / "lubricated_3d.toml").write_text(text)
    window = ["simulation.t_end=0.3 ms", 'simulation.output_interval="1 us"']
    planar_config = load_mechanism(configs / "flores_lubricated.toml", window)
    planar = model.simulate(build_mechanism(planar_config), solver_settings(planar_config))
    spatial_config = load_mechanism(tmp_path / "lubricated_3d.toml", window)
    spatial = simulate(build_spatial(spatial_config), solver_settings(spatial_config))
    planar_peak = float(jnp.max(jnp.abs(planar.normal_force[:, 0])))
    assert planar_peak > 100.0  # the film carries the pin load
    assert float(jnp.max(spatial.normal_force[:, 0])) == pytest.approx(planar_peak, rel=1e-2)
    planar_path = jnp.max(jnp.linalg.norm(planar.eccentricity[:, 0], axis=-1))
    spatial_path = jnp.max(jnp.linalg.norm(spatial.eccentricity[:, 0, :2], axis=-1))
    assert float(spatial_path) == pytest.approx(float(planar_path), rel=1e-2)
