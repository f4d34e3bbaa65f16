"""Grouping points by their discrete choices, and checking each point before it runs."""

from pathlib import Path

import jax
import numpy as np
import pytest

import model
from pipelines.build import ParameterMap, build_mechanism
from pipelines.errors import ConfigError
from pipelines.sweeping import plan
from pipelines.sweeping.plan import plan_groups
from pipelines.sweeping.study import load_sweep
from tests.helpers import CLEARANCE_RANGE, write_sweep
from tests.helpers import CONFIGS

CLEARANCE_VALUES = 'path = "joints.pin.clearance"\nvalues = ["0.1 mm", "0.5 mm"]'


def test_spec_example_has_one_group_per_contact_law():
    design, base = load_sweep(CONFIGS / "sweep_example.toml")
    groups = plan_groups(design, base)
    assert [group.choices for group in groups] == [
        {"joints.pin.contact.model": "lankarani_nikravesh"},
        {"joints.pin.contact.model": "flores"},
    ]
    points = design.points()
    for group in groups:
        assert group.paths == ("joints.pin.clearance", "joints.pin.contact.restitution")
        assert len(group.points) == 12 and group.runnable.size == 12
        assert group.settings.solver == "tsit5" and group.settings.t_end == pytest.approx(0.024)
        assert group.mechanism.clearance_joints[0].contact.model == group.choices["joints.pin.contact.model"]
        for n, index in enumerate(group.points):
            assert group.values[n] == pytest.approx([points[index][0].si, points[index][1].si])
    assert sorted(np.concatenate([g.points for g in groups]).tolist()) == list(range(24))


def test_numeric_stiffness_on_a_hertz_base_batches_without_hertz(tmp_path):
    path = write_sweep(
        tmp_path, 'design = "grid"',
        'path = "joints.pin.contact.stiffness"\nvalues = ["6.6e10 N/m^1.5", "1e10 N/m^1.5"]', CLEARANCE_VALUES,
    )
    design, base = load_sweep(path)
    assert base.joints[2].contact.stiffness == "hertz"
    (group,) = plan_groups(design, base)
    assert design.parameters[0].unit == "N/m^1.5"
    assert not group.mechanism.clearance_joints[0].hertz
    parameters = ParameterMap(group.mechanism, group.paths)
    for row in group.values:
        joint = parameters.apply(group.mechanism, row).clearance_joints[0]
        assert float(joint.stiffness()) == pytest.approx(row[0])


def test_invalid_combinations_are_marked_not_refused(tmp_path):
    # 0.4 mm bearing radius is refused by the base (clearance 0.5 mm) but fits 0.1 mm.
    path = write_sweep(
        tmp_path, 'design = "grid"', CLEARANCE_VALUES,
        'path = "joints.pin.bearing_radius"\nvalues = ["10 mm", "0.4 mm"]',
    )
    design, base = load_sweep(path)
    (group,) = plan_groups(design, base)
    assert group.problems[:3] == [None, None, None]
    assert group.problems[3].startswith("invalid: joints.pin.clearance: must be smaller than bearing_radius")
    assert group.runnable.tolist() == [0, 1, 2]


def test_a_value_valid_in_no_combination_is_refused(tmp_path):
    path = write_sweep(
        tmp_path, 'design = "grid"', 'path = "joints.pin.clearance"\nvalues = ["0.1 mm", "12 mm"]',
        'path = "joints.pin.bearing_radius"\nvalues = ["10 mm", "11 mm"]',
    )
    design, base = load_sweep(path)
    with pytest.raises(ConfigError, match="'12 mm' is refused") as caught:
        plan_groups(design, base)
    assert caught.value.file == str(path) and caught.value.key == "sweep.parameters.0.values"


def test_valid_box_corners_spare_the_per_point_checks(tmp_path, monkeypatch):
    path = write_sweep(tmp_path, 'design = "grid"', CLEARANCE_RANGE + "\nnum = 5",
                       'path = "joints.pin.contact.restitution"\nrange = [0.5, 0.9]\nnum = 4')
    design, base = load_sweep(path)
    calls = []
    original = plan._problem
    monkeypatch.setattr(plan, "_problem", lambda *args: calls.append(args[-1]) or original(*args))
    (group,) = plan_groups(design, base)
    assert group.problems == [None] * 20
    assert len(calls) == 4  # the corners of the clearance x restitution box


def test_discrete_only_sweep_runs_one_group_per_solver(tmp_path):
    path = write_sweep(tmp_path, 'design = "grid"', 'path = "simulation.solver"\nvalues = ["tsit5", "dopri5"]')
    design, base = load_sweep(path)
    groups = plan_groups(design, base)
    assert [g.settings.solver for g in groups] == ["tsit5", "dopri5"]
    assert all(g.paths == () and g.values.shape == (1, 0) for g in groups)
    # both groups share the mechanism structure: only the solver differs
    assert jax.tree_util.tree_structure(groups[0].mechanism) == jax.tree_util.tree_structure(build_mechanism(base))


def test_only_continuous_parameters_can_be_sampled(tmp_path):
    path = write_sweep(tmp_path, 'design = "lhs"\nsamples = 4', 'path = "simulation.rtol"\nrange = [1e-8, 1e-6]')
    design, base = load_sweep(path)
    with pytest.raises(ConfigError, match="cannot be sampled") as caught:
        plan_groups(design, base)
    assert caught.value.key == "sweep.parameters.0.range"


def test_automatic_solver_keeps_stiffness_points_together(tmp_path):
    """The example's solver = "auto" resolves once, to model.AUTO_SOLVER, whatever the stiffness
    (the study found no stiffness at which a stiff solver wins): a 10^4 stiffness factor
    batches with the others in one compiled group, and refused points run nowhere."""
    path = write_sweep(
        tmp_path, 'design = "grid"', 'path = "joints.pin.contact.stiffness_factor"\nvalues = [1.0, 1e4, 1.0e-2]',
        'path = "joints.pin.clearance"\nvalues = ["0.1 mm", "12 mm"]',  # 12 mm: refused points
        'path = "joints.pin.bearing_radius"\nvalues = ["10 mm", "15 mm"]',
    )
    design, base = load_sweep(path)
    assert base.simulation.solver == "auto"
    (group,) = plan_groups(design, base)
    assert group.settings.solver == model.AUTO_SOLVER == "tsit5"
    assert set(group.values[group.runnable, 0]) == {1.0, 1e4, 1e-2}
    assert sorted(group.points.tolist()) == list(range(12))
    assert sum(problem is not None for problem in group.problems) == 3  # 12 mm clearance in a 10 mm bearing


@pytest.mark.parametrize(
    ("base", "path", "values", "count"),
    [
        ("flores_slider_crank_3d.toml", "joints.pin.slices", "[3, 7]", lambda m: m.cylindrical_joints[0].slices),
        ("flores_flexible.toml", "bodies.conrod.flexible.segments", "[2, 4]", lambda m: len(m.beam_chains[0].segments) - 1),
    ],
)
@pytest.mark.slow  # 6 CPU s, most of it compiling
def test_integer_counts_sweep_as_discrete_choices(tmp_path, base, path, values, count):
    """Slices and segments are integer choices: one group per value, built with that many,
    every point runnable (read as floats they were refused at every point)."""
    config = write_sweep(tmp_path, 'design = "grid"', f'path = "{path}"\nvalues = {values}', base=CONFIGS / base)
    design, mechanism_config = load_sweep(config)
    groups = plan_groups(design, mechanism_config)
    expected = [int(v) for v in values.strip("[]").split(",")]
    assert [group.choices[path] for group in groups] == expected
    for group, number in zip(groups, expected):
        assert type(group.choices[path]) is int and group.runnable.size == len(group.points) == 1
        assert count(group.mechanism) == number  # slices, or beam elements between segments + 1 rigid parts


def test_a_sweep_whose_every_point_failed_is_an_error(tmp_path):
    from pipelines.errors import ClearanceError
    from pipelines.sweeping.study import check_some_point_ran

    check_some_point_ran({"points": 2, "ok": 1, "statuses": {"ok": 1, "max_steps_reached": 1}}, "s.toml", tmp_path)
    with pytest.raises(ClearanceError, match=r"every point .* failed \(2 x max_steps_reached\)"):
        check_some_point_ran({"points": 2, "ok": 0, "statuses": {"max_steps_reached": 2}}, "s.toml", tmp_path)
