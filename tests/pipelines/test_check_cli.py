"""``clearance check``: prints SI values and exits 0, or one ``error: FILE: KEY: message`` line and 2."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.cli import main

from tests.helpers import REPOSITORY as REPO
CONFIGS = REPO / "configs"
SPEC = CONFIGS / "flores_slider_crank.toml"


def check(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["check", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_error_line(err: str, file: Path | str, key: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {file}: {key}: "), lines[0]
    assert "Traceback" not in err
    return lines[0]


def test_check_mechanism_prints_si_values(capsys):
    code, out, err = check(capsys, SPEC)
    assert code == 0 and err == ""
    report = json.loads(out)
    assert report["joints"]["pin"]["clearance [m]"] == pytest.approx(5e-4)
    assert report["drivers"]["motor"]["speed [rad/s]"] == pytest.approx(523.599, abs=1e-3)
    assert report["materials"]["steel"]["youngs_modulus [Pa]"] == pytest.approx(207e9)


def test_check_applies_overrides(capsys):
    overrides = ["--set", "joints.pin.clearance=0.25 mm", "--set", "joints.pin.contact.restitution=0.5"]
    code, out, _ = check(capsys, SPEC, *overrides)
    report = json.loads(out)
    assert code == 0
    assert report["joints"]["pin"]["clearance [m]"] == pytest.approx(2.5e-4)
    assert report["joints"]["pin"]["contact"]["restitution"] == 0.5


@pytest.mark.parametrize("name", ["sweep_example.toml", "calibrate_example.toml", "optimize_example.toml"])
def test_check_pipeline_examples(capsys, name):
    code, out, err = check(capsys, CONFIGS / name)
    assert code == 0, err
    report = json.loads(out)
    assert report["base"] == str(SPEC)
    assert report["parameters"]


@pytest.mark.parametrize("name", ["calibrate_spatial.toml", "optimize_spatial.toml", "flores_sweep_3d.toml"])
def test_check_spatial_pipelines(capsys, name):
    code, out, err = check(capsys, CONFIGS / name)
    assert code == 0, err
    report = json.loads(out)
    assert report["base"] == str(CONFIGS / "flores_slider_crank_3d.toml") and report["parameters"]


def test_calibration_signals_are_the_base_engine_s(capsys, tmp_path):
    """A spatial base records slider.z; slider.theta is a planar column and is refused."""
    shutil.copy(CONFIGS / "flores_slider_crank_3d.toml", tmp_path)
    path = tmp_path / "calibrate_spatial.toml"
    text = (CONFIGS / path.name).read_text()
    path.write_text(text.replace('signals = ["slider.x", "slider.ax"]', 'signals = ["slider.z", "pin.tilt"]'))
    code, out, err = check(capsys, path)
    assert code == 0, err
    assert json.loads(out)["signals"] == ["slider.z", "pin.tilt"]
    path.write_text(text.replace('signals = ["slider.x", "slider.ax"]', 'signals = ["slider.theta"]'))
    code, _, err = check(capsys, path)
    assert code == 2
    assert "'slider.theta'" in assert_one_error_line(err, path, "data.signals")


def test_check_sweep_reports_parameter_values_in_si(capsys):
    _, out, _ = check(capsys, CONFIGS / "sweep_example.toml")
    parameters = json.loads(out)["parameters"]
    assert parameters["sweep.parameters.0"]["values"] == pytest.approx([1e-4, 2.5e-4, 5e-4])
    assert parameters["sweep.parameters.2"]["values"] == ["lankarani_nikravesh", "flores"]
    assert json.loads(out)["mechanism"]["simulation"]["t_end [s]"] == pytest.approx(0.024)


def test_bad_mechanism_exits_2_with_one_line(capsys, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(SPEC.read_text().replace('clearance = "0.5 mm"', 'clearance = "5 kg"'))
    code, out, err = check(capsys, path)
    assert code == 2 and out == ""
    assert "'5 kg'" in assert_one_error_line(err, path, "joints.pin.clearance")


def test_malformed_set_exits_2(capsys):
    code, _, err = check(capsys, SPEC, "--set", "joints.pin.clearance")
    assert code == 2
    assert_one_error_line(err, "--set", "joints.pin.clearance")


def pipeline_variant(tmp_path: Path, name: str, old: str, new: str) -> Path:
    shutil.copy(SPEC, tmp_path / SPEC.name)
    text = (CONFIGS / name).read_text()
    assert old in text, old
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize(
    "name, old, new, key, fragment",
    [
        ("sweep_example.toml", 'path = "joints.pin.clearance"', 'path = "joints.pim.clearance"',
         "sweep.parameters.0.path", "'pim'"),
        ("sweep_example.toml", 'values = ["0.1 mm", "0.25 mm", "0.5 mm"]', 'values = ["0.1 mm", "0.25 kg"]',
         "sweep.parameters.0.values", "'0.25 kg'"),
        ("sweep_example.toml", "range = [0.5, 0.95]", "range = [0.5, 1.5]", "sweep.parameters.1.range", "<= 1"),
        ("sweep_example.toml", 'values = ["lankarani_nikravesh", "flores"]', 'values = ["flores", "florez"]',
         "sweep.parameters.2.values", "'florez'"),
        ("calibrate_example.toml", "bounds = [0.2, 1.0]", "bounds = [1.0, 0.2]", "fit.0.bounds", "lower < upper"),
        ("calibrate_example.toml", 'signals = ["slider.ax"]', 'signals = ["slider.acc"]', "data.signals",
         "'slider.acc'"),
        ("optimize_example.toml", 'metric = "pin.max_normal_force"', 'metric = "pin.max_force"',
         "constraints.0.metric", "'pin.max_force'"),
        ("optimize_example.toml", 'max = "5 kN"', 'max = "5 kg"', "constraints.0.max", "wrong dimension"),
        ("optimize_example.toml", 'range = ["800 rpm", "1200 rpm"]', 'range = ["800 rpm", "1200 rmp"]',
         "uncertain.1.range", "'rmp'"),
        # table-schema errors: check runs the pipeline's own loader, so it refuses what the command refuses
        ("sweep_example.toml", 'design = "grid"', 'design = "gird"', "sweep.design", "'gird'"),
        ("calibrate_example.toml", 'name = "adam"', 'name = "adamm"', "optimizer.name", "'adamm'"),
    ],
)
def test_bad_pipeline_names_pipeline_file_and_key(capsys, tmp_path, name, old, new, key, fragment):
    path = pipeline_variant(tmp_path, name, old, new)
    code, _, err = check(capsys, path)
    assert code == 2
    assert fragment in assert_one_error_line(err, path, key)


@pytest.mark.parametrize("name", ["bifurcation_speed.toml", "bifurcation_clearance.toml", "bifurcation_fourbar.toml",
                                  "wear_flores.toml"])
def test_check_bifurcation_and_wear_studies(capsys, name):
    """Every shipped study config, checked by its command's own loader."""
    code, out, err = check(capsys, CONFIGS / name)
    assert code == 0, err
    report = json.loads(out)
    assert report["mechanism"] and report["parameters"]
    entry = next(iter(report["parameters"].values()))
    assert "values" not in entry or len(entry["values"]) >= 2


def test_pipeline_without_a_pipeline_table_is_refused(capsys, tmp_path):
    shutil.copy(SPEC, tmp_path / SPEC.name)
    path = tmp_path / "pipeline.toml"
    path.write_text(f'base = "{SPEC.name}"\n[simulation]\nt_end = "1 ms"\n')
    code, _, err = check(capsys, path)
    assert code == 2
    assert err.strip().splitlines() == [
        f"error: {path}: a pipeline config (with `base`) needs a [sweep], [[fit]], [[design]], [bifurcation] or [wear] table"
    ]


def test_bad_base_names_the_base_file(capsys, tmp_path):
    path = pipeline_variant(tmp_path, "sweep_example.toml", "[sweep]", "[sweep]")
    base = tmp_path / SPEC.name
    base.write_text(SPEC.read_text().replace('mass = "0.21 kg"', 'mass = "-0.21 kg"'))
    code, _, err = check(capsys, path)
    assert code == 2
    assert_one_error_line(err, base, "bodies.conrod.mass")


def test_subprocess_exit_code_and_single_line(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(SPEC.read_text().replace("restitution = 0.9", "restitution = 1.5"))
    result = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "check", str(path)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert_one_error_line(result.stderr, path, "joints.pin.contact.restitution")



def test_subprocess_success_prints_everything():
    # the executable ends with os._exit (no interpreter teardown): with the error case
    # above, the exit code and the buffered output still come out
    result = subprocess.run([sys.executable, "-m", "pipelines.cli", "check", str(SPEC)],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stderr == ""
    assert json.loads(result.stdout)["joints"]["pin"]["clearance [m]"] == pytest.approx(5e-4)
