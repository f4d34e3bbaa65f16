"""The tolerance-design config: the example loads in SI, bad input is one ConfigError naming the key."""

import math
from pathlib import Path

import pytest

from pipelines.build import build_mechanism
from pipelines.design.performance import metric_dimensions
from pipelines.design.problem import load_design_problem
from pipelines.errors import ConfigError

from tests.helpers import CONFIGS, write_variant
SPEC = CONFIGS / "optimize_example.toml"


def test_spec_loads_in_si():
    problem = load_design_problem(SPEC)
    (clearance,) = problem.design
    assert clearance.path == "joints.pin.clearance"
    assert (clearance.lower, clearance.upper) == pytest.approx((1e-5, 5e-4))
    assert clearance.log and clearance.initial == pytest.approx(5e-4)  # the base's 0.5 mm, within the bounds
    (constraint,) = problem.constraints
    assert (constraint.metric, constraint.bound, constraint.limit) == ("pin.max_normal_force", "max", 5000.0)
    speed = next(u for u in problem.uncertain if u.path == "drivers.motor.speed")
    assert (speed.lower, speed.upper) == pytest.approx((800 * math.pi / 30, 1200 * math.pi / 30))
    assert problem.config.simulation.t_end == pytest.approx(0.12)
    assert float(problem.cost([5e-4])) == pytest.approx(1.0)  # reference band = the widest allowed


@pytest.mark.slow  # 4 CPU s, most of it compiling
def test_spatial_base_loads_with_its_metrics():
    """A spatial base (a sliced cylindrical clearance joint) is designed like a planar one;
    its bodies have the out-of-plane acceleration metric too."""
    problem = load_design_problem(CONFIGS / "optimize_spatial.toml")
    assert problem.config.dimension == 3
    (clearance,) = problem.design
    assert clearance.is_clearance and clearance.joint == "pin"
    assert (clearance.lower, clearance.upper) == pytest.approx((1e-5, 5e-4))
    assert problem.min_clearances == {"pin": pytest.approx(0.0)}
    mechanism = build_mechanism(problem.config)
    metrics = metric_dimensions(mechanism)
    assert metrics["slider.max_abs_az"] == "acceleration" and metrics["slider.max_position_error"] == "length"
    assert metrics["pin.max_normal_force"] == "force"
    speed = next(u for u in problem.uncertain if u.path == "drivers.motor.speed")
    assert (speed.lower, speed.upper) == pytest.approx((4000 * math.pi / 30, 6000 * math.pi / 30))


def test_normalisation_round_trip_exact_bounds_and_live_gradient():
    import jax

    (clearance,) = load_design_problem(SPEC).design
    for value in (1e-5, 7e-5, 5e-4):
        assert float(clearance.to_physical(clearance.to_unit(value))) == pytest.approx(value)
    assert float(clearance.to_physical(0.0)) == 1e-5 and float(clearance.to_physical(1.0)) == 5e-4
    # d value / d z = value * log(upper / lower), also at the bounds
    for z in (0.0, 1.0):
        slope = float(jax.grad(clearance.to_physical)(z))
        assert slope == pytest.approx(float(clearance.to_physical(z)) * math.log(50.0))


def write(tmp_path: Path, old: str, new: str) -> Path:
    return write_variant(tmp_path, SPEC, old, new, "bad_optimize.toml")


@pytest.mark.parametrize(
    "old, new, key, words",
    [
        ('bounds = ["0.01 mm", "0.5 mm"]', 'bounds = ["0.5 mm", "0.01 mm"]', "design.0.bounds", "lower < upper"),
        ('bounds = ["0.01 mm", "0.5 mm"]', 'bounds = ["0.01 kg", "0.5 mm"]', "design.0.bounds", "refused"),
        ('bounds = ["0.01 mm", "0.5 mm"]', 'bounds = ["0.01 mm", "12 mm"]', "design.0.bounds", "bearing_radius"),
        ('metric = "pin.max_normal_force"', 'metric = "pin.max_force"', "constraints.0.metric", "unknown metric"),
        ('max = "5 kN"', 'max = "5 m"', "constraints.0.max", "dimension"),
        ("range = [0.6, 0.95]", "range = [0.6, 1.2]", "uncertain.0.range", "refused"),
        ('path = "joints.pin.clearance"', 'path = "joints.pin.contact.model"', "design.0.path", "continuous"),
        ('[simulation]', '[optimiser]\nsamples = 2\n[simulation]', "optimiser", "unknown key"),
    ],
)
def test_bad_configs_name_the_key(tmp_path, old, new, key, words):
    with pytest.raises(ConfigError) as error:
        load_design_problem(write(tmp_path, old, new))
    assert error.value.key == key and words in error.value.message, str(error.value)
    assert error.value.file.endswith("bad_optimize.toml")


def test_optimizer_table_is_validated(tmp_path):
    path = write(tmp_path, "[simulation]", "[optimizer]\nsamples = 0\n[simulation]")
    with pytest.raises(ConfigError, match="optimizer.samples"):
        load_design_problem(path)
    path = write(tmp_path, "[simulation]", '[optimizer]\nsamples = 2\nbatching = "map"\n[cost]\nmin_clearance = "5 um"\n[simulation]')
    problem = load_design_problem(path)
    assert problem.options.samples == 2 and problem.options.batching == "map"
    assert problem.min_clearances == {"pin": pytest.approx(5e-6)}
