"""The metrics' window in the step-wise reductions (``model/integrate/peaks.py``): one step
of a journal moving straight through its clearance, the interpolant linear in time, so
every reduction has a closed form. Evaluated eagerly (no compile)."""

import copy

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest

from model.integrate.peaks import initial_peaks, update_peaks
from model.window import MetricsWindow
from pipelines.build import build_mechanism
from pipelines.config.loading import mechanism_from_dict

CLEARANCE = 1e-4  # m
ARM = 0.15  # m: the journal above the rod's centre
HANGER = {
    "name": "hanger", "gravity": ["0 m/s^2", "0 m/s^2"],
    "materials": {"steel": {"youngs_modulus": "207 GPa", "poisson_ratio": 0.3}},
    "bodies": [{"name": "rod", "mass": "1 kg", "inertia": "7.5e-3 kg*m^2", "position": ["0 mm", f"-{ARM} m"],
                "angle": "0 deg"}],
    "joints": [{"name": "top", "type": "revolute_clearance", "bodies": ["rod", "ground"],
                "points": [["0 mm", f"{ARM} m"], ["0 mm", "0 mm"]], "bearing_radius": "10 mm",
                "clearance": f"{CLEARANCE} m", "materials": ["steel", "steel"],
                "contact": {"model": "hertz", "exponent": 1.5, "stiffness": "hertz"}}],
    "simulation": {"t_end": "1 s", "output_interval": "0.1 s"},
}


class Line:
    """A linear interpolant between two flat states over ``[0, 1]`` s."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def evaluate(self, t):
        return self.start + t * (self.end - self.start)

    def derivative(self, t):
        return self.end - self.start


@pytest.fixture(scope="module")
def hanger():
    return build_mechanism(mechanism_from_dict(copy.deepcopy(HANGER), "hanger.toml"), "absolute")  # states written in x, y, theta


def _state(drop: float) -> jnp.ndarray:
    """The flat state with the rod ``drop`` (m) below its centred position: the journal's
    penetration is ``drop - CLEARANCE``."""
    q = jnp.asarray([0.0, -ARM - drop, 0.0])
    return jnp.concatenate([q, jnp.zeros(3), jnp.zeros(1), jnp.zeros(1)])


@eqx.filter_jit
def _reduce(mechanism, window_start, first, last):
    mechanism = eqx.tree_at(lambda m: m.metrics_window, mechanism, MetricsWindow(skip=window_start))
    start, end = _state(first + CLEARANCE), _state(last + CLEARANCE)
    line = Line(start, end)
    peaks = initial_peaks(mechanism, start, 0.0, initial_rate=jnp.zeros_like(start))
    return update_peaks(peaks, mechanism, line, jnp.asarray(0.0), jnp.asarray(1.0), line.derivative(1.0))


def _step(mechanism, window_start: float, first: float, last: float):
    """The peaks after one step over [0, 1] s from penetration ``first`` to ``last`` (m), the
    window from ``window_start`` (s) on (one compiled reduction for every case)."""
    return _reduce(mechanism, *(jnp.asarray(value, float) for value in (window_start, first, last)))


def test_no_window_counts_the_whole_step(hanger):
    # penetration -c .. c: closes at t = 1/2, one impact, in contact for half the step
    peaks = _step(hanger, 0.0, -CLEARANCE, CLEARANCE)
    assert float(peaks.max_penetration[0]) == pytest.approx(CLEARANCE, rel=1e-9)
    assert float(peaks.num_impacts[0]) == 1.0
    assert float(peaks.contact_time[0]) == pytest.approx(0.5, rel=1e-9)
    assert float(peaks.first_impact_time[0]) == pytest.approx(0.5, rel=1e-9)


@pytest.mark.parametrize("window_start", [0.6, 0.9])
def test_a_window_counts_what_follows_its_start(hanger, window_start):
    # the onset (t = 1/2) is before the window: the joint is in contact at its start, which
    # counts one impact, and the time in contact is the window's; the first impact is the run's
    peaks = _step(hanger, window_start, -CLEARANCE, CLEARANCE)
    assert float(peaks.max_penetration[0]) == pytest.approx(CLEARANCE, rel=1e-9)
    assert float(peaks.num_impacts[0]) == 1.0
    assert float(peaks.contact_time[0]) == pytest.approx(1.0 - window_start, rel=1e-9)
    assert float(peaks.first_impact_time[0]) == pytest.approx(0.5, rel=1e-9)


def test_a_peak_before_the_window_is_left_out(hanger):
    # opening from c to -c: without a window the peak is the start's; from t = 0.6 on the
    # largest sample is at t = 3/4, the penetration -c/2 there
    whole = _step(hanger, 0.0, CLEARANCE, -CLEARANCE)
    windowed = _step(hanger, 0.6, CLEARANCE, -CLEARANCE)
    assert float(whole.max_penetration[0]) == pytest.approx(CLEARANCE, rel=1e-9)
    assert float(whole.max_normal_force[0]) > 0.0
    assert float(windowed.max_penetration[0]) == pytest.approx(-CLEARANCE / 2, rel=1e-9)
    assert float(windowed.max_normal_force[0]) == 0.0
    assert float(windowed.num_impacts[0]) == 0.0
    assert float(windowed.contact_time[0]) == pytest.approx(0.0, abs=1e-12)  # rounding at t = 1/2


def test_a_window_after_the_step_holds_nothing_yet(hanger):
    peaks = _step(hanger, 2.0, -CLEARANCE, CLEARANCE)
    assert np.isneginf(float(peaks.max_penetration[0])) and np.isneginf(float(peaks.max_normal_force[0]))
    assert np.all(np.isneginf(np.asarray(peaks.max_abs_acceleration)))
    assert float(peaks.num_impacts[0]) == 0.0 and float(peaks.contact_time[0]) == 0.0
