"""The sweep metric ``lyapunov_max`` (``[sweep.lyapunov]``)."""

import numpy as np
import pandas as pd
import pytest

from pipelines.cli import main

from tests.helpers import CONFIGS
from tests.pipelines.bifurcation.test_bifurcation_cli import ideal_slider_crank


def _write(folder, base, lyapunov="[sweep.lyapunov]\ntransient_periods = 2\nperiods = 30\n"):
    path = folder / "sweep.toml"
    path.write_text(f'base = "{base}"\n\n[sweep]\ndesign = "grid"\n\n[[sweep.parameters]]\n'
                    f'path = "drivers.motor.speed"\nvalues = ["600 rpm"]\n\n{lyapunov}\n'
                    '[simulation]\nt_end = "10 ms"\nsolver = "tsit5"\n')
    return path


def test_lyapunov_needs_a_constant_speed_driver(tmp_path, capsys):
    path = tmp_path / "sweep.toml"
    path.write_text(f'base = "{CONFIGS / "flexible_cantilever.toml"}"\n\n[sweep]\n\n[[sweep.parameters]]\n'
                    'path = "gravity"\nvalues = ["1 m/s^2"]\n\n[sweep.lyapunov]\nperiods = 5\n')
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: sweep."), lines


@pytest.mark.slow
@pytest.mark.validation
def test_ideal_slider_crank_exponent_in_a_sweep(tmp_path):
    """The ideal-joint slider-crank at 600 rpm: the exponent of its Baumgarte-stabilised
    constraints, negative and above -alpha = -5 1/s (docs/nonlinear.md)."""
    config = _write(tmp_path, ideal_slider_crank(tmp_path))
    out = tmp_path / "out"
    assert main(["sweep", str(config), "--out", str(out), "--executor", "local", "--no-progress"]) == 0
    results = pd.read_parquet(out / "results.parquet")
    assert np.all((results["lyapunov_max"] < 0.0) & (results["lyapunov_max"] > -5.5))
