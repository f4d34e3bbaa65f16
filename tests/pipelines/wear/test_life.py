"""``clearance wear``: the life loop's tables, figures and resume on a short life of the
Flores slider-crank (a 3 ms "cycle", three passes), and the convergence of the extrapolation.
Validation tier (a compile of the worn Flores solve and three passes, about 20 s of CPU;
the default run checks the wear through the model's tests and the config through
``test_schema.py``): docs/wear.md records the results."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipelines.cli import main
from pipelines.wear.life import run_life
from pipelines.wear.study import load_wear_study
from tests.helpers import CONFIGS

pytestmark = [pytest.mark.slow, pytest.mark.validation]

SHORT_LIFE = ["--set", "wear.period=3 ms", "--set", "wear.warmup_cycles=0", "--set", "wear.cycles=2000"]


@pytest.fixture(scope="module")
def life(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wear")
    assert main(["wear", str(CONFIGS / "wear_flores.toml"), "--out", str(out), "--no-progress", *SHORT_LIFE]) == 0
    return out


def test_life_tables_follow_archard(life):
    table = pd.read_parquet(life / "life.parquet")
    profiles = pd.read_parquet(life / "profiles.parquet")
    assert list(table["cycles"]) == [0.0, 1000.0, 2000.0] and set(table["status"]) == {"ok"}
    assert sorted(set(profiles["update"])) == [0, 1, 2] and len(profiles) == 3 * 720
    radius, length, k_w, factor = 0.01, 0.02, 8e-14, 1000.0
    for update, row in table.iterrows():
        depth = profiles[profiles["update"] == update]["depth"].to_numpy()
        assert row["max_depth"] == depth.max()
        np.testing.assert_allclose(row["volume"], depth.sum() * radius * 2 * np.pi / 720 * length, rtol=1e-12)
    # each update adds k_w x extrapolation x int F |v| dt of the pass before it
    np.testing.assert_allclose(np.diff(table["volume"]), k_w * factor * table["load_distance"][:-1], rtol=1e-9)
    assert table["volume"].iloc[0] == 0.0 and np.all(np.diff(table["volume"]) > 0)
    assert np.all(table["pin.max_normal_force"] > 0) and "slider.max_abs_ax" in table
    for name in ("wear_profiles.png", "wear_growth.png", "wear_dynamics.png"):
        assert (life / name).stat().st_size > 10_000


def test_resume_takes_the_stored_passes(life, capsys):
    before = pd.read_parquet(life / "life.parquet")
    argv = ["wear", str(CONFIGS / "wear_flores.toml"), "--out", str(life), "--no-progress", "--no-plots", *SHORT_LIFE]
    assert main([*argv, "--resume"]) == 0
    assert "3 resumed" in capsys.readouterr().out
    pd.testing.assert_frame_equal(pd.read_parquet(life / "life.parquet"), before)
    assert main([*argv, "--resume", "--set", "wear.resolution=360"]) == 2
    assert "run without --resume" in capsys.readouterr().err


def test_extrapolation_converges(tmp_path):
    """Halving the extrapolation factor (1000 -> 500 operating cycles per simulated cycle)
    changes the largest depth after 10,000 cycles of the shipped life by less than 10 %
    (docs/wear.md records the numbers)."""
    depths = {}
    for factor in (1000, 500):
        study = load_wear_study(CONFIGS / "wear_flores.toml", [f"wear.extrapolation={factor}", "wear.cycles=10000"])
        result = run_life(study, tmp_path / str(factor), progress=False)
        depths[factor] = float(result.life["max_depth"].iloc[-1])
        volume = float(result.life["volume"].iloc[-1])
        print(f"extrapolation {factor}: largest depth {depths[factor] * 1e6:.4g} um, volume {volume * 1e9:.4g} mm^3")
    assert abs(depths[500] - depths[1000]) < 0.1 * depths[500]


def test_extrapolated_life_converges_to_the_fully_resolved_one(tmp_path):
    """The procedure against a fully resolved run on a short life: with the coefficient
    raised 1000-fold, 20 cycles (the 3 ms "cycle" above) each simulated and its wear applied
    before the next (extrapolation 1), against passes standing for 2 and for 5 cycles each:
    the largest depth and the volume after the life approach the resolved ones as the
    factor falls (docs/wear.md records the numbers and the error)."""
    final = {}
    for factor in (1, 2, 5):
        study = load_wear_study(CONFIGS / "wear_flores.toml", [
            "wear.period=3 ms", "wear.warmup_cycles=0", "wear.cycles=20", f"wear.extrapolation={factor}",
            "wear.coefficient=8e-11 1/Pa"])
        result = run_life(study, tmp_path / str(factor), progress=False)
        assert list(result.life["cycles"])[-1] == 20.0 and set(result.life["status"]) == {"ok"}
        final[factor] = np.array([result.life["max_depth"].iloc[-1], result.life["volume"].iloc[-1]])
        print(f"extrapolation {factor}: {len(result.life)} passes, largest depth {final[factor][0] * 1e6:.4g} um, "
              f"volume {final[factor][1] * 1e9:.4g} mm^3")
    assert final[1][0] > 1e-6  # the life wears the bushing measurably
    error_2, error_5 = (np.abs(final[f] - final[1]) / final[1] for f in (2, 5))
    print(f"relative error of depth, volume: factor 2 {error_2}, factor 5 {error_5}")
    assert np.all(error_2 < error_5)
