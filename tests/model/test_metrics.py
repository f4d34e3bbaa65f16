"""Start transients (:func:`model.start_transient`) on contact-force records whose answer is
known: a periodic force with and without impacts at its start, a journal that leaves its
bearing for good, and bumps too small to count."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.metrics import TRANSIENT_FACTOR

T = np.linspace(0.0, 1.0, 1001)  # s
PERIODIC = 10.0 + 5.0 * np.sin(2 * np.pi * 20.0 * T)  # N: peaks of 15 N


def _bumps(heights, times, width=2e-3):
    """Contact peaks of ``heights`` (N) at ``times`` (s), half-sine pulses ``width`` long."""
    force = np.zeros_like(T)
    for height, time in zip(heights, times):
        inside = np.abs(T - time) < width / 2
        force[inside] = np.maximum(force[inside], height * np.cos(np.pi * (T[inside] - time) / width))
    return force


def _found(*forces):
    """The transients of two joints' forces (one shape for every test: one compile)."""
    return jax.jit(model.start_transient)(jnp.asarray(T), jnp.asarray(np.stack(forces, axis=1)))


def test_impacts_at_the_start_of_a_periodic_force_are_a_transient_that_ends_after_the_last():
    impacts = _bumps([100.0, 60.0, 40.0], [0.05, 0.10, 0.15])
    found = _found(PERIODIC + impacts, PERIODIC)
    assert bool(found.detected[0]) and not bool(found.detected[1])
    # the last sample above 2 x 15 N is in the third impact; the transient ends at the next sample
    last_above = T[np.flatnonzero(PERIODIC + impacts > TRANSIENT_FACTOR * 15.0)[-1]]
    assert float(found.end_time[0]) == pytest.approx(last_above + 1e-3, abs=1e-12)
    assert 0.15 < float(found.end_time[0]) < 0.152
    assert np.isnan(float(found.end_time[1]))
    assert float(found.later_peak[0]) == pytest.approx(15.0, rel=1e-3)
    assert float(found.peak[0]) == pytest.approx(np.max(PERIODIC + impacts), rel=1e-12)


def test_contact_at_the_start_only_is_a_transient():
    # a journal that bounces twice and then flies free: the later half has no contact at all
    found = _found(_bumps([50.0, 5.0], [0.02, 0.3]), np.zeros_like(T))
    assert bool(found.detected[0]) and not bool(found.detected[1])
    assert 0.3 < float(found.end_time[0]) < 0.302
    assert float(found.later_peak[0]) == 0.0


def test_bumps_within_the_factor_and_a_joint_never_in_contact_are_none():
    small = PERIODIC + _bumps([0.9 * TRANSIENT_FACTOR * 15.0 - 10.0], [0.05])
    found = _found(small, np.zeros_like(T))
    assert not np.any(np.asarray(found.detected))
