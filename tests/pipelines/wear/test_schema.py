"""``clearance wear``: bad input is one ``error: FILE: KEY: message`` line and exit status 2."""

from pathlib import Path

import pytest

from pipelines.cli import main
from pipelines.wear.study import load_wear_study
from tests.helpers import FLORES

TABLE = """base = "{base}"
[wear]
joint = "pin"
coefficient = {coefficient}
bearing_length = "20 mm"
cycles = 2000
extrapolation = 1000
resolution = {resolution}
{extra}
"""


def write(tmp_path: Path, coefficient: str = '"8e-14 1/Pa"', resolution: int = 720, extra: str = "") -> Path:
    path = tmp_path / "wear.toml"
    path.write_text(TABLE.format(base=FLORES, coefficient=coefficient, resolution=resolution, extra=extra))
    return path


def refused(capsys, path: Path, key: str) -> str:
    assert main(["wear", str(path), "--out", str(path.parent / "out")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: {key}: "), lines
    return lines[0]


def test_valid_config_resolves_to_si(tmp_path):
    study = load_wear_study(write(tmp_path))
    assert study.table.coefficient_per_pascal == pytest.approx(8e-14)
    assert study.period == pytest.approx(60.0 / 5000.0)  # one turn of the 5000 rpm crank
    assert study.updates == 2 and study.settings.t_end == pytest.approx(2 * 0.012)
    dimensionless = load_wear_study(write(tmp_path, coefficient="1.6e-4", extra='hardness = "2 GPa"'))
    assert dimensionless.table.coefficient_per_pascal == pytest.approx(8e-14)


@pytest.mark.parametrize("coefficient, message", [
    ('"-8e-14 1/Pa"', "must be > 0"), ('"8e-14 m"', "1/Pa"), ("-1e-4", "must be > 0")])
def test_bad_coefficient(tmp_path, capsys, coefficient, message):
    assert message in refused(capsys, write(tmp_path, coefficient=coefficient), "wear.coefficient")


def test_dimensionless_coefficient_needs_a_hardness(tmp_path, capsys):
    assert "hardness" in refused(capsys, write(tmp_path, coefficient="1e-4"), "wear.hardness")


def test_resolution_must_resolve_the_contact_width(tmp_path, capsys):
    """At 1 kN the Flores pin's Hertz half-width is 0.33 mm: 190 bins of a 10 mm bore at least."""
    line = refused(capsys, write(tmp_path, resolution=90), "wear.resolution")
    assert "use at least 19" in line


@pytest.mark.parametrize("extra, key", [
    ("colour = 3", "wear.colour"), ('period = "-1 ms"', "wear.period"),
    ("cycles_per_update = 0", "wear.cycles_per_update")])
def test_unknown_and_bad_keys(tmp_path, capsys, extra, key):
    refused(capsys, write(tmp_path, extra=extra), key)


def test_unknown_joint(tmp_path, capsys):
    path = write(tmp_path)
    path.write_text(path.read_text().replace('joint = "pin"', 'joint = "crankpin"'))
    assert "choose from ['pin']" in refused(capsys, path, "wear.joint")
