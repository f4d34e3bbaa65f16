"""The section metrics of a sweep (``[sweep.section]``): ``period``, ``motion``,
``lyapunov_max`` and ``poincare.parquet``."""

import numpy as np
import pandas as pd
import pytest

from pipelines.cli import main

from tests.helpers import CONFIGS
from tests.pipelines.bifurcation.test_bifurcation_cli import ideal_slider_crank

SECTION = "[sweep.section]\ntransient_periods = 2\nperiods = 12\nmax_period = 4\n"


def _write(folder, base, section=SECTION, speeds='["600 rpm"]'):
    path = folder / "sweep.toml"
    path.write_text(f'base = "{base}"\n\n[sweep]\ndesign = "grid"\n\n[[sweep.parameters]]\n'
                    f'path = "drivers.motor.speed"\nvalues = {speeds}\n\n{section}\n'
                    '[simulation]\nt_end = "10 ms"\nsolver = "tsit5"\n')
    return path


def _one_error_line(capsys, path, key):
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: {key}"), lines


def test_the_section_needs_a_constant_speed_driver(tmp_path, capsys):
    path = tmp_path / "sweep.toml"
    path.write_text(f'base = "{CONFIGS / "flexible_cantilever.toml"}"\n\n[sweep]\n\n[[sweep.parameters]]\n'
                    'path = "simulation.t_end"\nvalues = ["1 ms"]\n\n[sweep.section]\nperiods = 20\n')
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    _one_error_line(capsys, path, "sweep.section")


def test_too_few_periods_for_the_longest_period(tmp_path, capsys):
    path = _write(tmp_path, CONFIGS / "flores_slider_crank.toml",
                  section="[sweep.section]\nperiods = 6\nmax_period = 4\n")
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    _one_error_line(capsys, path, "sweep.section.periods")


def test_a_hyperplane_of_an_unknown_column_is_refused(tmp_path, capsys):
    path = _write(tmp_path, CONFIGS / "flores_slider_crank.toml",
                  section=SECTION + '[sweep.section.hyperplane]\nquantity = "piston.vx"\nvalue = "0 m/s"\n')
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    _one_error_line(capsys, path, "sweep.section.hyperplane.quantity")


@pytest.mark.slow
@pytest.mark.validation
def test_ideal_slider_crank_hyperplane_section_in_a_sweep(tmp_path):
    """The slider's velocity crossing 0 both ways: at the dead centres, crank angle k pi
    (``t = k pi / omega``), the slider at L + r and L - r; two distinct points, period 1 as
    the stroboscopic section's; ``crossings.parquet`` has every point's crossings."""
    section = (SECTION + 'lyapunov = false\n[sweep.section.hyperplane]\nquantity = "slider.vx"\nvalue = "0 m/s"\n'
               'direction = "both"\n')
    config = _write(tmp_path, ideal_slider_crank(tmp_path), section=section, speeds='["600 rpm", "900 rpm"]')
    out = tmp_path / "out"
    assert main(["sweep", str(config), "--out", str(out), "--executor", "local", "--no-progress"]) == 0
    results = pd.read_parquet(out / "results.parquet")
    assert (results["period"] == 1).all() and (results["distinct_crossings"] == 2).all()
    assert (results["crossings"] == 2 * 12).all()  # two per revolution over the 12 counted ones
    crossings = pd.read_parquet(out / "crossings.parquet")
    for point, rows in crossings.groupby("point"):
        omega = results.set_index("point").loc[point, "drivers.motor.speed"]
        half_turns = np.round(rows["t"].to_numpy() * omega / np.pi)
        np.testing.assert_allclose(rows["t"], half_turns * np.pi / omega, rtol=0, atol=1e-7)
        top = half_turns % 2 == 0  # crank angle 2 k pi: the slider at L + r, turning back (down)
        np.testing.assert_array_equal(rows["direction"], np.where(top, -1, 1))
        np.testing.assert_allclose(rows["slider.x"], np.where(top, 0.17, 0.07), atol=1e-6)


@pytest.mark.slow
def test_ideal_slider_crank_section_in_a_sweep(tmp_path):
    """The ideal-joint slider-crank at two speeds: period 1 (one section point repeated),
    periodic, and the exponent of its Baumgarte-stabilised constraints negative and above
    -alpha = -5 1/s (docs/nonlinear.md); the section table has every point's samples."""
    config = _write(tmp_path, ideal_slider_crank(tmp_path), speeds='["600 rpm", "900 rpm"]')
    out = tmp_path / "out"
    assert main(["sweep", str(config), "--out", str(out), "--executor", "local", "--no-progress"]) == 0
    results = pd.read_parquet(out / "results.parquet")
    assert (results["period"] == 1).all() and (results["motion"] == "periodic").all()
    assert np.all((results["lyapunov_max"] < 0.0) & (results["lyapunov_max"] > -5.5))
    poincare = pd.read_parquet(out / "poincare.parquet")
    assert sorted(poincare["point"].unique()) == sorted(results["point"])
    assert (poincare.groupby("point")["section"].count() == 12).all()
    crank_x = [column for column in poincare.columns if column.endswith(".x")][0]
    for _, samples in poincare.groupby("point"):  # a period-1 motion: the same point every period
        assert np.ptp(samples[crank_x]) < 1e-6
    assert (out / "poincare.png").stat().st_size > 0


def test_section_columns_of_a_spatial_mechanism():
    """A spatial section: each body's x, y, z and vx, vy, vz; a cylindrical joint's ex, ey
    (its third component is axial, as in the simulate timeseries) and a spherical joint's
    ex, ey, ez, each sample in its row."""
    from types import SimpleNamespace

    from pipelines.sweeping.section import section_columns

    periods, values = 3, 2
    mechanism = SimpleNamespace(clearance_names=("journal", "ball"), clearance_joints=(None, None),
                                cylindrical_joints=(None,), body_names=("crank", "conrod"))
    rng = np.random.default_rng(0)
    samples = {"t": rng.random((values, periods)), "eccentricity": rng.random((values, periods, 2, 3)),
               "positions": rng.random((values, periods, 2, 3)), "velocities": rng.random((values, periods, 2, 3))}
    columns = section_columns(mechanism, samples, periods)
    assert "journal.ez" not in columns and {"journal.ex", "journal.ey", "ball.ex", "ball.ey", "ball.ez"} <= set(columns)
    for body, name in enumerate(mechanism.body_names):
        for axis, label in enumerate("xyz"):
            assert np.array_equal(columns[f"{name}.{label}"], samples["positions"][:, :, body, axis].reshape(-1))
            assert np.array_equal(columns[f"{name}.v{label}"], samples["velocities"][:, :, body, axis].reshape(-1))
    assert np.array_equal(columns["ball.ez"], samples["eccentricity"][:, :, 1, 2].reshape(-1))
    assert np.array_equal(columns["section"], np.tile(np.arange(periods), values))
