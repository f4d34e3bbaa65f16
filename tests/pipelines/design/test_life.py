"""The service-life requirement of a tolerance design (``[life]``, pipelines/design/life.py):
the shipped config loads in SI, a wear config file serves as well as an inline table, bad
input is one ConfigError naming the key; the run itself is in the validation tier."""

import json
from pathlib import Path

import pytest

from pipelines.cli import main
from pipelines.design.problem import load_design_problem
from pipelines.errors import ConfigError
from tests.helpers import CONFIGS, write_variant

SPEC = CONFIGS / "optimize_life.toml"


def test_life_config_loads_in_si():
    problem = load_design_problem(SPEC)
    (constraint,) = problem.constraints
    assert (constraint.metric, constraint.bound, constraint.limit) == ("pin.life", "min", 10000.0)
    assert problem.simulated_constraints == []
    life = problem.life
    assert life.metric == "equivalent_clearance" and life.limit == pytest.approx(5.5e-4)
    assert life.study.joint_name == "pin" and life.study.table.extrapolation == 5000
    schedule = life.schedule
    assert schedule.updates == 3 and float(schedule.cycles_per_update) == 5000.0
    assert life.settings.adjoint == "forward"
    assert life.settings.t_end == pytest.approx(2 * 60.0 / 5000.0)  # a warm-up and a counted crank turn at 5000 rpm
    assert life.study.mechanism.body_names[life.body] == "slider"  # the pin's bushing


def write(tmp_path: Path, old: str, new: str, name: str = "bad_life.toml") -> Path:
    return write_variant(tmp_path, SPEC, old, new, name, bases=("flores_slider_crank.toml", "wear_flores.toml"))


@pytest.mark.parametrize(
    "old, new, key, words",
    [
        ('metric = "equivalent_clearance"', 'metric = "clearance"', "life.metric", "one of"),
        ('limit = "0.55 mm"', 'limit = "0.6 N"', "life.limit", "dimension"),
        ("target_cycles = 10000", "target_cycles = 30000", "life.target_cycles", "exceeds"),
        ("target_cycles = 10000", "target_cycles = 10000\ncolour = 1", "life.colour", "unknown key"),
        ('joint = "pin"', 'joint = "main"', "life.wear.joint", "not a revolute clearance joint"),
        ("resolution = 720", "resolution = 720\nspeed = 3", "life.wear.speed", "unknown key"),
        ("resolution = 720", "resolution = 36", "life.wear.resolution", "use at least"),
        ('coefficient = "8e-14 1/Pa"', "coefficient = 1e-6", "life.wear.hardness", "needs a hardness"),
    ],
)
def test_bad_life_tables_name_the_key(tmp_path, old, new, key, words):
    with pytest.raises(ConfigError) as error:
        load_design_problem(write(tmp_path, old, new))
    assert error.value.key == key and words in error.value.message, str(error.value)
    assert error.value.file.endswith("bad_life.toml")


def test_wear_config_file_serves_as_the_life_schedule(tmp_path):
    inline = SPEC.read_text().split("[life.wear]")[0].split("[optimizer]")[0]
    path = write(tmp_path, SPEC.read_text(), inline.replace("target_cycles = 10000", 'target_cycles = 20000\n'
                                                                                       'wear = "wear_flores.toml"'))
    life = load_design_problem(path).life
    assert life.study.table.extrapolation == 1000 and life.schedule.updates == 20
    assert life.study.file.endswith("wear_flores.toml")
    # a wear config on another base is refused
    (tmp_path / "other.toml").write_text((CONFIGS / "flores_slider_crank.toml").read_text())
    (tmp_path / "wear_other.toml").write_text((CONFIGS / "wear_flores.toml").read_text().replace(
        'base = "flores_slider_crank.toml"', 'base = "other.toml"'))
    path.write_text(path.read_text().replace("wear_flores.toml", "wear_other.toml"))
    with pytest.raises(ConfigError) as error:
        load_design_problem(path)
    assert error.value.key == "life.wear" and "base" in error.value.message


def test_a_design_needs_constraints_or_a_life(tmp_path):
    text = SPEC.read_text()
    path = write(tmp_path, text, text.split("[life]")[0])
    with pytest.raises(ConfigError) as error:
        load_design_problem(path)
    assert error.value.key == "constraints" and "[life]" in error.value.message


@pytest.mark.slow
@pytest.mark.validation  # the life's scan of five worn solves, in forward mode: minutes of CPU
def test_life_design_runs_end_to_end(tmp_path):
    """Two updates (10,000 and 5,000 turns), one search iteration and the optimum's verification: the
    report carries the life constraint and its per-design life."""
    out = tmp_path / "out"
    code = main(["optimize", str(SPEC), "--set", "life.wear.extrapolation=10000", "--iterations", "1",
                 "--verify-points", "1", "--pareto-points", "0", "--backoff-steps", "0", "--no-progress",
                 "--out", str(out)])
    assert code == 0
    report = json.loads((out / "optimum.json").read_text())
    assert set(report["constraints"]) == {"pin.life"}
    life = report["constraints"]["pin.life"]
    assert 0.0 < life <= 15000.0
    assert (out / "pareto.png").exists() and (out / "sweep.parquet").exists()
