"""``clearance bifurcation``: tables and figures on an ideal-joint slider-crank (its section
against the slider-crank's closed-form kinematics), and bad input as one error line."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipelines.cli import main

from tests.helpers import CONFIGS, FLORES

IDEAL_PIN = '''[[joints]]
name = "pin"
type = "revolute"
bodies = ["conrod", "slider"]
points = [["60 mm", "0 mm"], ["0 mm", "0 mm"]]

'''
CRANK, CONROD = 0.05, 0.12  # m: crank radius and conrod length of configs/flores_slider_crank.toml
# the section at 90 deg of crank angle, at two speeds
TWO_SPEEDS_AT_90_DEG = '''parameter = "drivers.motor.speed"
transient_periods = 1
periods = 3
max_period = 1
section = "90 deg"
lyapunov = false

[bifurcation.values]
start = "5000 rpm"
stop = "6000 rpm"
count = 2'''


# the slider crossing x = L (both directions): r cos(theta) + sqrt(L^2 - r^2 sin^2 theta) = L
# at cos(theta) = r / (2 L)
HYPERPLANE = '''

[bifurcation.hyperplane]
quantity = "slider.x"
value = "120 mm"
direction = "both"
capacity = 8

[simulation]
rtol = 1e-9  # at 1e-6 the constraints' drift moves the crossings by up to 2e-8 s
atol = 1e-12'''


def ideal_slider_crank(folder: Path) -> Path:
    """configs/flores_slider_crank.toml with the clearance pin made an ideal revolute joint."""
    text = FLORES.read_text()
    start, end = text.index('[[joints]]\nname = "pin"'), text.index('[[joints]]\nname = "guide"')
    path = folder / "ideal_slider_crank.toml"
    path.write_text(text[:start] + IDEAL_PIN + text[end:])
    return path


def write_config(folder: Path, base: Path, bifurcation: str, name: str = "bifurcation.toml") -> Path:
    path = folder / name
    path.write_text(f'base = "{base}"\n\n[bifurcation]\n{bifurcation}\n')
    return path


@pytest.mark.slow  # over four revolutions at each of two speeds at rtol 1e-9, with the crossings
def test_ideal_slider_crank_section_is_its_kinematics(tmp_path, capsys):
    """At the section (crank at 90 deg) every revolution: the slider at
    ``sqrt(L^2 - r^2)`` moving at ``-r omega``, for both speeds, one compile. Its crossings
    of ``x = L`` at the closed-form crank angles ``+-arccos(r / 2L)``, one point per
    direction: period 1 from the crossings as from the stroboscopic section."""
    config = write_config(tmp_path, ideal_slider_crank(tmp_path), TWO_SPEEDS_AT_90_DEG + HYPERPLANE)
    out = tmp_path / "out"
    assert main(["bifurcation", str(config), "--out", str(out), "--no-progress"]) == 0
    summary = pd.read_parquet(out / "bifurcation.parquet")
    sections = pd.read_parquet(out / "sections.parquet")
    speeds = np.array([5000.0, 6000.0]) * 2 * np.pi / 60
    np.testing.assert_allclose(summary["drivers.motor.speed"], speeds)
    assert list(summary["motion"]) == ["periodic", "periodic"] and list(summary["period"]) == [1, 1]
    assert len(sections) == 6
    # Baumgarte-stabilised constraints at rtol 1e-6: a drift of a few 1e-7 m
    np.testing.assert_allclose(sections["slider.x"], np.sqrt(CONROD**2 - CRANK**2), atol=1e-6)
    np.testing.assert_allclose(sections["slider.vx"], -CRANK * np.repeat(speeds, 3), rtol=1e-5)
    period = 2 * np.pi / np.repeat(speeds, 3)  # after 1 transient period and the 90 deg phase: 2.25, 3.25, 4.25
    np.testing.assert_allclose(sections["t"], (np.tile(np.arange(3), 2) + 2.25) * period, rtol=1e-12)
    crossings = pd.read_parquet(out / "crossings.parquet")
    assert list(summary["crossings"]) == [6, 6] and list(summary["distinct_crossings"]) == [2, 2]
    down = np.arccos(CRANK / (2 * CONROD))  # crank angle of the falling crossing, rad
    # after the start at 2.25 revolutions: rising at 4 pi - down, falling at 4 pi + down, ...
    angles = np.array([4 * np.pi - down, 4 * np.pi + down, 6 * np.pi - down, 6 * np.pi + down, 8 * np.pi - down,
                       8 * np.pi + down])
    theta, omega = np.tile(angles, 2), np.repeat(speeds, 6)
    np.testing.assert_array_equal(crossings["direction"], np.tile([1, -1], 6))
    np.testing.assert_allclose(crossings["t"], theta / omega, rtol=0, atol=1e-8)
    slider_speed = -omega * (CRANK * np.sin(theta) + CRANK**2 * np.sin(theta) * np.cos(theta)
                             / np.sqrt(CONROD**2 - CRANK**2 * np.sin(theta) ** 2))
    np.testing.assert_allclose(crossings["slider.vx"], slider_speed, rtol=1e-5)
    for figure in ("bifurcation_diagram.png", "phase_portrait.png", "crossings.png"):
        assert (out / figure).stat().st_size > 0


@pytest.mark.slow
def test_continuation_starts_each_speed_where_the_previous_one_ended(tmp_path):
    """Continuation on the absolute-coordinate engine: the second speed starts from the
    first one's last section state, at the time where its own driver angle is the one that
    state reached, with the velocities projected onto its faster driver. Its section is
    still the closed-form kinematics at 90 deg, moving at ``-r omega`` of the new speed,
    at ``(4.25 + 2 + k) T`` (the first value's 4 whole periods and phase, then 1 transient
    period)."""
    config = write_config(tmp_path, ideal_slider_crank(tmp_path), TWO_SPEEDS_AT_90_DEG.replace(
        "lyapunov = false", "lyapunov = false\ncontinuation = true") + '\n\n[simulation]\nengine = "absolute"')
    out = tmp_path / "out"
    assert main(["bifurcation", str(config), "--out", str(out), "--no-progress"]) == 0
    summary = pd.read_parquet(out / "bifurcation.parquet")
    sections = pd.read_parquet(out / "sections.parquet")
    speeds = np.array([5000.0, 6000.0]) * 2 * np.pi / 60
    assert list(summary["motion"]) == ["periodic", "periodic"] and bool(summary["success"].all())
    np.testing.assert_allclose(sections["slider.x"], np.sqrt(CONROD**2 - CRANK**2), atol=1e-6)
    np.testing.assert_allclose(sections["slider.vx"], -CRANK * np.repeat(speeds, 3), rtol=1e-5)
    period = 2 * np.pi / np.repeat(speeds, 3)
    first = np.arange(3) + 2.25
    np.testing.assert_allclose(sections["t"], np.concatenate([first, first + 4.0]) * period, rtol=1e-12)


@pytest.mark.parametrize("base, bifurcation, key", [
    (CONFIGS / "flexible_cantilever.toml", 'parameter = "gravity"\n'
     '[bifurcation.values]\nstart = "0.1 mm"\nstop = "0.2 mm"\ncount = 2', "bifurcation.section"),
    (FLORES, 'parameter = "drivers.motor.speed"\nperiods = 4\nmax_period = 6\n'
     '[bifurcation.values]\nstart = "1000 rpm"\nstop = "2000 rpm"\ncount = 2', "bifurcation.periods"),
    (FLORES, 'parameter = "drivers.motor.speed"\nsection_phase = 0\n'
     '[bifurcation.values]\nstart = "1000 rpm"\nstop = "2000 rpm"\ncount = 2', "bifurcation.section_phase"),
    (FLORES, 'parameter = "joints.pin.speed"\n'
     '[bifurcation.values]\nstart = "1000 rpm"\nstop = "2000 rpm"\ncount = 2', "bifurcation.parameter"),
    (FLORES, 'parameter = "drivers.motor.speed"\n'
     '[bifurcation.values]\nstart = "1 mm"\nstop = "2000 rpm"\ncount = 2', "bifurcation.values.start"),
    (FLORES, 'parameter = "drivers.motor.speed"\ncontinuation = true\nbatch = 2\n'
     '[bifurcation.values]\nstart = "1000 rpm"\nstop = "2000 rpm"\ncount = 2', "bifurcation.batch"),
    (FLORES, 'parameter = "drivers.motor.speed"\n[bifurcation.values]\nstart = "1000 rpm"\nstop = "2000 rpm"\n'
     'count = 2\n[bifurcation.hyperplane]\nquantity = "piston.x"\nvalue = "0.1 m"', "bifurcation.hyperplane.quantity"),
    (FLORES, 'parameter = "drivers.motor.speed"\n[bifurcation.values]\nstart = "1000 rpm"\nstop = "2000 rpm"\n'
     'count = 2\n[bifurcation.hyperplane]\nquantity = "slider.vx"\nvalue = "0.1 m"', "bifurcation.hyperplane.value"),
    (FLORES, 'parameter = "drivers.motor.speed"\n[bifurcation.values]\nstart = "1000 rpm"\nstop = "2000 rpm"\n'
     'count = 2\n[bifurcation.hyperplane]\nquantity = "pin.ex"\nvalue = "0 m"\ndirection = "left"',
     "bifurcation.hyperplane.direction"),
])
def test_bad_input_is_one_line(tmp_path, capsys, base, bifurcation, key):
    config = write_config(tmp_path, base, bifurcation)
    assert main(["bifurcation", str(config), "--out", str(tmp_path / "out")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {config}: {key}: "), lines
    assert not (tmp_path / "out").exists()
