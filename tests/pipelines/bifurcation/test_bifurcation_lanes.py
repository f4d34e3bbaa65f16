"""``[bifurcation] lanes``: the values' stroboscopic sections through the refilling lanes
against the one-value-per-call path, and the studies the lanes refuse, as one error line."""

import dataclasses

import numpy as np
import pytest

from pipelines.bifurcation.study import lanes_function, load_bifurcation, run_bifurcation
from pipelines.cli import main

from tests.helpers import CONFIGS, FLORES

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


def test_lanes_refused_for_the_driver_speed(tmp_path, capsys):
    """The crank speed sets each value's section times; the lanes share one set."""
    study = STUDY.format(extra="lanes = 2").replace('"joints.pin.clearance"', '"drivers.motor.speed"').replace(
        '"0.1 mm"', '"4000 rpm"').replace('"0.15 mm"', '"5000 rpm"')
    config = write_config(tmp_path, FLORES, study)
    assert main(["bifurcation", str(config), "--out", str(tmp_path / "out")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"error: {config}: bifurcation.lanes: drivers.motor.speed changes the driver period"), lines
