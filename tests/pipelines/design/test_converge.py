"""Stiffness convergence study on a short case."""

import json
import math
from pathlib import Path

import pytest

from pipelines.cli import main
from pipelines.design.converge import ConvergenceOptions, relative_change, stiffness_levels
from pipelines.errors import ConfigError

from tests.helpers import FLORES as SPEC


def test_levels_run_from_the_start_factor_to_the_configured_stiffness():
    levels = stiffness_levels(ConvergenceOptions(start_factor=0.01, ratio=math.sqrt(10.0)))
    assert levels == pytest.approx([0.01, 0.0316228, 0.1, 0.316228, 1.0], rel=1e-5)
    assert stiffness_levels(ConvergenceOptions(start_factor=0.3, ratio=10.0)) == [0.3, 1.0]
    assert relative_change(105.0, 100.0) == pytest.approx(5.0 / 105.0)


def test_bad_options_name_the_flag():
    with pytest.raises(ConfigError, match="--ratio"):
        ConvergenceOptions(ratio=1.0).validate()


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("converge")
    # the first impact of the Flores case (0.23 ms), three levels a decade apart
    code = main(["converge", str(SPEC), "--set", "simulation.t_end=0.6 ms", "--set", "simulation.output_interval=1 us",
                 "--start-factor", "0.01", "--ratio", "10", "--no-progress", "--out", str(out)])
    assert code == 0
    return out, json.loads((out / "convergence.json").read_text())


@pytest.mark.slow  # 6 CPU s, most of it compiling
def test_study_reports_each_level(study):
    out, report = study
    assert (out / "convergence.png").stat().st_size > 10_000
    factors = [level["stiffness_factor"] for level in report["levels"]]
    assert factors == pytest.approx([0.01, 0.1, 1.0][: len(factors)])
    pins = [level["joints"]["pin"] for level in report["levels"]]
    assert pins[0]["peak_force_change"] is None
    for previous, current in zip(pins, pins[1:]):
        assert current["stiffness"] == pytest.approx(10 * previous["stiffness"])
        assert current["peak_force_change"] == pytest.approx(relative_change(current["max_normal_force"], previous["max_normal_force"]))
        # a stiffer contact penetrates less and, in an impact, pushes back harder
        assert current["max_penetration"] < previous["max_penetration"]
        assert current["max_normal_force"] > previous["max_normal_force"]
    assert all(p["penetration_share"] == pytest.approx(p["max_penetration"] / 5e-4) for p in pins)


def test_criterion_decides_convergence(study):
    _, report = study
    last = report["levels"][-1]["joints"]["pin"]["peak_force_change"]
    assert report["converged"] == (last is not None and last < 0.05)
    # a Hertz impact's peak grows like K^(2/5): a decade changes it by far more than 5 %
    assert not report["converged"] and len(report["levels"]) == 3
