"""The [sweep] table of a config: SI levels, grid / Latin hypercube / Sobol' points, refused input."""

import numpy as np
import pytest

from pipelines.errors import ConfigError
from sweep.design import grid_values
from pipelines.sweeping.study import load_sweep

from tests.helpers import CLEARANCE_RANGE, CONFIGS, RESTITUTION_RANGE, write_sweep


def test_spec_example_grid_in_si():
    design, base = load_sweep(CONFIGS / "sweep_example.toml")
    assert design.kind == "grid" and base.simulation.t_end == pytest.approx(0.024)
    points = design.points()
    assert len(points) == 3 * 4 * 2
    clearances = sorted({point[0].si for point in points})
    assert clearances == pytest.approx([1e-4, 2.5e-4, 5e-4])
    assert sorted({point[1].si for point in points}) == pytest.approx([0.5, 0.65, 0.8, 0.95])
    # the last parameter varies fastest
    assert [point[2].si for point in points[:2]] == ["lankarani_nikravesh", "flores"]
    assert points[0][0].si == points[7][0].si != points[8][0].si
    # each parameter knows the SI unit of its levels, read from the mechanism's schema
    assert design.parameters[0].unit == "m" and design.parameters[1].unit == ""


def test_set_overrides_reach_the_sweep_table():
    design, base = load_sweep(
        CONFIGS / "sweep_example.toml", ["sweep.parameters.1.num=2", "joints.pin.contact.exponent=1.5"]
    )
    assert len(design.points()) == 3 * 2 * 2


def test_log_grid_is_geometric(tmp_path):
    path = write_sweep(tmp_path, 'design = "grid"', CLEARANCE_RANGE + '\nnum = 3\nscale = "log"')
    levels = [level.si for level in load_sweep(path)[0].parameters[0].levels]
    assert levels == pytest.approx([1e-4, np.sqrt(5e-8), 5e-4])
    assert load_sweep(path)[0].parameters[0].unit == "m"
    assert grid_values((1.0, 3.0), 3, "linear") == pytest.approx([1.0, 2.0, 3.0])


@pytest.mark.parametrize("kind", ["lhs", "sobol"])
def test_sampled_designs_stay_in_bounds_and_are_reproducible(tmp_path, kind):
    path = write_sweep(tmp_path, f'design = "{kind}"\nsamples = 16\nseed = 3', CLEARANCE_RANGE, RESTITUTION_RANGE)
    design = load_sweep(path)[0]
    points = np.array([[level.si for level in point] for point in design.points()])
    assert points.shape == (16, 2)
    assert np.all((points[:, 0] >= 1e-4) & (points[:, 0] <= 5e-4))
    assert np.all((points[:, 1] >= 0.5) & (points[:, 1] <= 0.95))
    again = np.array([[level.si for level in point] for point in load_sweep(path)[0].points()])
    np.testing.assert_array_equal(points, again)
    other = np.array([[level.si for level in point] for point in load_sweep(path, ["sweep.seed=4"])[0].points()])
    assert not np.allclose(points, other)


def test_values_are_crossed_with_sampled_points(tmp_path):
    path = write_sweep(
        tmp_path, 'design = "lhs"\nsamples = 5',
        'path = "joints.pin.contact.model"\nvalues = ["hertz", "flores"]', CLEARANCE_RANGE,
    )
    points = load_sweep(path)[0].points()
    assert len(points) == 10
    first, second = points[:5], points[5:]
    assert {p[0].si for p in first} == {"hertz"} and {p[0].si for p in second} == {"flores"}
    # both laws see the same sampled clearances
    assert [p[1].si for p in first] == [p[1].si for p in second]


@pytest.mark.parametrize(
    "sweep, parameter, key, fragment",
    [
        ('design = "random"', CLEARANCE_RANGE, "sweep.design", "unknown design"),
        ('design = "lhs"', CLEARANCE_RANGE, "sweep.samples", "required"),
        ('design = "sobol"\nsamples = 0', CLEARANCE_RANGE, "sweep.samples", ">= 1"),
        ('design = "grid"', CLEARANCE_RANGE, "sweep.parameters.0.num", "required"),
        ('design = "grid"', CLEARANCE_RANGE + "\nnum = 1", "sweep.parameters.0.num", ">= 2"),
        ('design = "grid"\nsteps = 3', CLEARANCE_RANGE, "sweep.steps", "unknown key"),
        ('design = "grid"', CLEARANCE_RANGE + "\nnum = 2\nstep = 1", "sweep.parameters.0.step", "unknown key"),
        ('design = "grid"', 'path = "joints.pin.clearance"\nvalues = ["0.1 mm"]\nrange = [1, 2]', "sweep.parameters.0", "exactly one"),
        ('design = "grid"', 'path = "joints.pin.clearence"\nvalues = ["0.1 mm"]', "sweep.parameters.0.path", "not a parameter"),
        ('design = "grid"', 'path = "joints.pin.clearance"\nvalues = ["0.1 kg"]', "sweep.parameters.0.values", "wrong dimension"),
        ('design = "grid"', 'path = "joints.pin.clearance"\nvalues = []', "sweep.parameters.0.values", "non-empty"),
        ('design = "grid"', 'path = "joints.pin.contact.restitution"\nvalues = [1.5]', "sweep.parameters.0.values", "<= 1"),
        ('design = "grid"', 'path = "joints.pin.clearance"\nrange = ["0.5 mm", "0.1 mm"]\nnum = 2', "sweep.parameters.0.range", "lower < upper"),
        ('design = "lhs"\nsamples = 4', 'path = "joints.pin.contact.damping"\nrange = ["0 N*s/m", "1 N*s/m"]\nscale = "log"',
         "sweep.parameters.0.range", "positive range"),
        ('design = "grid"', 'path = "joints.pin.contact.model"\nvalues = ["flores", "magic"]', "sweep.parameters.0.values", "unknown value"),
    ],
)
def test_bad_sweep_tables_name_the_file_and_key(tmp_path, sweep, parameter, key, fragment):
    path = write_sweep(tmp_path, sweep, parameter)
    with pytest.raises(ConfigError) as caught:
        load_sweep(path)
    assert caught.value.file == str(path)
    assert caught.value.key == key, str(caught.value)
    assert fragment in caught.value.message


def test_a_path_may_be_swept_once(tmp_path):
    path = write_sweep(tmp_path, 'design = "grid"', CLEARANCE_RANGE + "\nnum = 2", CLEARANCE_RANGE + "\nnum = 3")
    with pytest.raises(ConfigError, match="already swept") as caught:
        load_sweep(path)
    assert caught.value.key == "sweep.parameters.1.path"


def test_unknown_top_level_key_and_missing_table(tmp_path):
    path = write_sweep(tmp_path, 'design = "grid"', CLEARANCE_RANGE + "\nnum = 2")
    path.write_text("extra = 1\n" + path.read_text())
    with pytest.raises(ConfigError) as caught:
        load_sweep(path)
    assert caught.value.key == "extra"
    path.write_text('base = "flores_slider_crank.toml"\n')
    with pytest.raises(ConfigError) as caught:
        load_sweep(path)
    assert caught.value.key == "sweep"
