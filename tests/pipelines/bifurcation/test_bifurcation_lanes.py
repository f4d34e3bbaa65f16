"""``[bifurcation] lanes``: the values' stroboscopic sections through the refilling lanes
against the one-value-per-call path (a clearance study, and a crank-speed study whose
values each have their own section times), and the studies the lanes refuse, as one
error line."""

import dataclasses

import numpy as np
import pytest

from pipelines.bifurcation.study import lanes_function, load_bifurcation, run_bifurcation, section_function
from pipelines.cli import main

from tests.helpers import CONFIGS

LOW_SPEED = CONFIGS / "low_speed_slider_crank.toml"  # the pin in continuous contact at 20 rad/s
STUDY = '''parameter = "joints.pin.clearance"
transient_periods = 0
periods = 3
max_period = 2
section = "90 deg"
lyapunov = false
{extra}

[bifurcation.values]
start = "0.1 mm"
stop = "0.15 mm"
count = 3
'''
SECTION = ("eccentricity", "positions", "velocities")


def write_config(folder, base, bifurcation, name="bifurcation.toml"):
    path = folder / name
    path.write_text(f'base = "{base}"\n\n[simulation]\nsolver = "tsit5"\n\n[bifurcation]\n{bifurcation}\n')
    return path


@pytest.fixture(scope="module")
def lanes_study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lanes")
    return load_bifurcation(write_config(folder, LOW_SPEED, STUDY.format(extra="lanes = 2")),
                            ["simulation.rtol=1e-9", "simulation.atol=1e-12"])


@pytest.mark.validation
def test_lanes_sample_the_per_value_sections(lanes_study):
    """Each value's section through the lanes is the one-value-per-call path's
    (:func:`model.nonlinear.mechanism_section`) at the same times, to the integrator's
    tolerance: at rtol 1e-9, atol 1e-12 the first sample (one period and the 90 deg phase
    from the start) agrees to 1e-10 m in position and 1e-7 m/s in velocity. Later samples
    drift apart as the impacts amplify the two paths' different step sequences (the
    per-value path restarts its step control every period; the lanes interpolate one
    continuous solve). The period and motion class agree."""
    per_value = run_bifurcation(dataclasses.replace(
        lanes_study, table=lanes_study.table.model_copy(update={"lanes": None})), progress=False)
    lanes = run_bifurcation(lanes_study, progress=False)
    np.testing.assert_allclose(lanes.sections["t"], per_value.sections["t"], rtol=1e-14)
    first = lanes.sections["section"] == 0
    for column in per_value.sections.columns[3:]:
        tolerance = 1e-7 if ".v" in column else 1e-10
        np.testing.assert_allclose(lanes.sections[column][first], per_value.sections[column][first], rtol=0,
                                   atol=tolerance, err_msg=column)
    for column in ("period", "motion", "success"):
        assert list(lanes.summary[column]) == list(per_value.summary[column])
    assert bool(lanes.summary["success"].all())


@pytest.mark.validation
def test_lanes_section_is_independent_of_the_other_values(lanes_study):
    """A value's section does not depend on which values share the loop or which lane
    takes it: the last value among the others equals the same value run in every lane
    (one compile)."""
    run, _ = lanes_function(lanes_study)
    values = lanes_study.values[:, None]
    mixed = run(values)
    alone = run(np.repeat(values[-1:], len(values), axis=0))
    for name in SECTION:
        np.testing.assert_allclose(np.asarray(alone[name])[0], np.asarray(mixed[name])[-1], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(np.asarray(alone[name])[1], np.asarray(alone[name])[0], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("extra, base, key, reason", [
    ("lanes = 2\nlyapunov = true", LOW_SPEED, "bifurcation.lanes", "the Lyapunov exponent needs tangent vectors"),
    ("lanes = 2\ncontinuation = true", LOW_SPEED, "bifurcation.lanes", "continuation starts each value"),
    ("lanes = 2\n[bifurcation.hyperplane]\nquantity = \"slider.x\"\nvalue = \"0.1 m\"", LOW_SPEED,
     "bifurcation.lanes", "the hyperplane section needs"),
    ("lanes = 2\nbatch = 2", LOW_SPEED, "bifurcation.lanes", "batch = 2 and lanes are two ways"),
    ("lanes = 0", LOW_SPEED, "bifurcation.lanes", "expected an integer >= 1"),
])
def test_lanes_refused_where_the_study_needs_more_than_states(tmp_path, capsys, extra, base, key, reason):
    config = write_config(tmp_path, base, STUDY.replace("lyapunov = false\n", "").format(extra=extra)
                          if "lyapunov" in extra else STUDY.format(extra=extra))
    assert main(["bifurcation", str(config), "--out", str(tmp_path / "out")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {config}: {key}: {reason}"), lines
    assert not (tmp_path / "out").exists()


# A pendulum hung from the tip of a driven crank (r = 50 mm, pendulum centre 60 mm below
# the pin, gravity): one degree of freedom, parametrically forced at the crank speed.
CRANK_PENDULUM = '''name = "crank-pendulum"
gravity = ["0 m/s^2", "-9.81 m/s^2"]

[[bodies]]
name = "crank"
mass = "0.20 kg"
inertia = "4.17e-5 kg*m^2"
position = ["25 mm", "0 mm"]

[[bodies]]
name = "bob"
mass = "0.30 kg"
inertia = "3.6e-4 kg*m^2"
position = ["50 mm", "-60 mm"]

[[joints]]
name = "main"
type = "revolute"
bodies = ["ground", "crank"]
points = [["0 mm", "0 mm"], ["-25 mm", "0 mm"]]

[[joints]]
name = "pin"
type = "revolute"
bodies = ["crank", "bob"]
points = [["25 mm", "0 mm"], ["0 mm", "60 mm"]]

[[drivers]]
name = "motor"
joint = "main"
type = "constant_speed"
speed = "20 rad/s"

[initial]
velocities = "from_drivers"

[simulation]
t_end = "0.1 s"
output_interval = "1 ms"
rtol = 1e-9
atol = 1e-12
'''
SPEED_STUDY = '''parameter = "drivers.motor.speed"
transient_periods = 0
periods = 2
max_period = 1
section = "90 deg"
lyapunov = false
lanes = 2

[bifurcation.values]
start = "18 rad/s"
stop = "24 rad/s"
count = 3
'''


@pytest.fixture(scope="module")
def speed_sections(tmp_path_factory):
    """A crank-speed study of the crank pendulum (18, 21 and 24 rad/s, sections at 90 deg
    after 1 and 2 revolutions) through the lanes, on the values in order and on the
    fastest value in every lane (one compile), and the one-value-per-call path's sections
    of the same values (one compile)."""
    folder = tmp_path_factory.mktemp("speed_lanes")
    (folder / "crank_pendulum.toml").write_text(CRANK_PENDULUM)
    study = load_bifurcation(write_config(folder, "crank_pendulum.toml", SPEED_STUDY))
    run, _ = lanes_function(study)
    values = study.values[:, None]
    mixed = run(values)
    alone = run(np.repeat(values[-1:], len(values), axis=0))
    single, _ = section_function(dataclasses.replace(study, table=study.table.model_copy(update={"lanes": None})))
    per_value = [single(row[None]) for row in values]
    return study, mixed, alone, per_value


def test_speed_lanes_sample_each_value_at_its_own_period(speed_sections):
    """Each crank speed is sampled at its own section times ``(1/4 + 1 + k) 2 pi / omega``
    and its first sample equals the one-value-per-call path's to the integrator's tolerance
    (rtol 1e-9 on coordinates of 0.1 m and velocities of 1 m/s); at the section the crank
    stands at 90 deg (its centre at ``(0, r/2)``, moving at ``-omega r/2`` along x)."""
    study, mixed, _, per_value = speed_sections
    speeds = study.values
    np.testing.assert_allclose(np.asarray(mixed["t"]),
                               (1.25 + np.arange(2))[None, :] * 2.0 * np.pi / speeds[:, None], rtol=1e-14)
    for index, reference in enumerate(per_value):
        np.testing.assert_allclose(np.asarray(mixed["t"])[index], np.asarray(reference["t"])[0], rtol=1e-14)
        np.testing.assert_allclose(np.asarray(mixed["positions"])[index, 0], np.asarray(reference["positions"])[0, 0],
                                   rtol=0, atol=1e-10)
        np.testing.assert_allclose(np.asarray(mixed["velocities"])[index, 0], np.asarray(reference["velocities"])[0, 0],
                                   rtol=0, atol=1e-9)
    crank = np.asarray(mixed["positions"])[:, :, 0]
    np.testing.assert_allclose(crank, np.broadcast_to([0.0, 0.025], crank.shape), atol=1e-9)
    np.testing.assert_allclose(np.asarray(mixed["velocities"])[:, :, 0, 0], -0.025 * speeds[:, None] * np.ones((1, 2)),
                               rtol=1e-8)
    assert np.all(np.asarray(mixed["success"]))


def test_speed_lanes_section_is_independent_of_the_other_values(speed_sections):
    """The fastest value (the shortest run) among slower ones equals itself in every lane:
    each lane ends at its own value's last section time."""
    _, mixed, alone, _ = speed_sections
    for name in ("positions", "velocities", "t"):
        np.testing.assert_allclose(np.asarray(alone[name])[0], np.asarray(mixed[name])[-1], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(np.asarray(alone[name])[1], np.asarray(alone[name])[0], rtol=1e-12, atol=1e-15)
