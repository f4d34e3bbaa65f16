"""Hyperplane sections (``model/nonlinear/crossings.py``) against closed forms.

The harmonic oscillator ``x'' = -x`` from ``(1, 0)`` is ``x = cos t``: it crosses
``x = c`` upward at ``t = 2 pi (k + 1) - arccos c`` and downward at ``arccos c + 2 pi k``,
with ``v = -sin t`` there. The crossings are located on the solver's dense output, so
they hold to the integrator's tolerance whatever the solve's segmentation (the section
interval), which only moves the step ends.
"""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model.nonlinear import DIRECTIONS, CrossingTracking, Hyperplane, crossing_period
from model.nonlinear.crossings import empty_crossings, record_crossing
from model.nonlinear.lyapunov import lyapunov_exponents

INTERVALS = 6


def _oscillator(y, _args=None):
    return y[0]


def _crossings(level, interval, direction):
    hyperplane = Hyperplane(lambda args, y: _oscillator(y), level, DIRECTIONS[direction], 16)
    result = lyapunov_exponents(
        lambda t, y, args: jnp.stack([y[1], -y[0]]), jnp.array([1.0, 0.0]), None, t0=0.0, interval=interval,
        num_intervals=INTERVALS, num_exponents=0, stepsize_controller=diffrax.PIDController(rtol=1e-11, atol=1e-12),
        hyperplane=hyperplane, crossings_start=0.0)
    return result.crossings


def test_oscillator_crossings_are_the_closed_form_for_any_segmentation():
    levels = jnp.array([0.5, -0.3])
    # two section intervals (two different step sequences), two levels, one vmapped compile
    run = jax.jit(jax.vmap(jax.vmap(lambda level, interval: _crossings(level, interval, "both"), (0, None)),
                           (None, 0)))
    crossings = run(levels, jnp.array([2 * np.pi, 0.77]))
    for k, level in enumerate(np.asarray(levels)):
        down = np.arccos(level) + 2 * np.pi * np.arange(8)
        expected = np.sort(np.concatenate([down, 2 * np.pi * np.arange(1, 9) - np.arccos(level)]))
        for segmentation in range(2):
            c = jax.tree.map(lambda leaf: np.asarray(leaf[segmentation, k]), crossings)
            span = 2 * np.pi * INTERVALS if segmentation == 0 else 0.77 * INTERVALS
            wanted = expected[expected < span]
            assert int(c.count) == wanted.size
            np.testing.assert_allclose(c.times[:wanted.size], wanted, rtol=0, atol=1e-8)
            np.testing.assert_allclose(c.states[:wanted.size, 0], level, rtol=0, atol=1e-9)
            np.testing.assert_allclose(c.states[:wanted.size, 1], -np.sin(wanted), rtol=0, atol=1e-8)
            np.testing.assert_array_equal(c.directions[:wanted.size], np.where(np.sin(wanted) > 0, -1.0, 1.0))


STEP = 0.05  # the forced step of the grazing oscillator
GRAZE = 0.3 * STEP  # half the time the oscillator spends beyond the level


def _grazing_crossings(sign, direction, level_shift=0.0, mode="forward"):
    """``x = sign cos(t - 1.5 h)`` with constant Tsit5 steps of ``h`` (0, h, 2h, 3h)
    through the level ``sign cos(0.3 h)``: the excursion beyond the level lasts from
    ``1.2 h`` to ``1.8 h``, inside the second step, whose two ends lie on the near side."""
    peak = 1.5 * STEP
    hyperplane = Hyperplane(lambda args, y: y[0], sign * jnp.cos(GRAZE) + level_shift, DIRECTIONS[direction], 4)
    tracker = CrossingTracking(diffrax.Tsit5(), hyperplane, empty_crossings(hyperplane, 2, 0.0))
    solution = diffrax.diffeqsolve(
        diffrax.ODETerm(lambda t, y, args: jnp.stack([y[1], -y[0]])), tracker, 0.0, 3 * STEP, STEP,
        sign * jnp.array([jnp.cos(peak), jnp.sin(peak)]), stepsize_controller=diffrax.ConstantStepSize(),
        saveat=diffrax.SaveAt(t1=True, solver_state=True),
        adjoint=diffrax.ForwardMode() if mode == "forward" else diffrax.RecursiveCheckpointAdjoint())
    return CrossingTracking.crossings_of(solution.solver_state)


def test_out_and_back_within_one_step():
    """Both crossings of an excursion that goes out and back within one step are found, at
    the closed form ``1.5 h -+ 0.3 h`` to 1e-8, over a maximum (up then down) and a minimum
    (down then up), with the state on the plane; a level just beyond the turning point is
    not crossed."""
    expected = 1.5 * STEP + np.array([-GRAZE, GRAZE])
    both = jax.jit(jax.vmap(lambda sign, shift: _grazing_crossings(sign, "both", shift)))(
        jnp.array([1.0, -1.0, 1.0]), jnp.array([0.0, 0.0, 1e-3]))
    for index, sign in enumerate((1.0, -1.0)):
        c = jax.tree.map(lambda leaf: np.asarray(leaf[index]), both)
        assert int(c.count) == 2
        np.testing.assert_allclose(c.times[:2], expected, rtol=0, atol=1e-8)
        np.testing.assert_allclose(c.states[:2, 0], sign * np.cos(GRAZE), rtol=0, atol=1e-9)
        np.testing.assert_allclose(c.states[:2, 1], -sign * np.sin(expected - 1.5 * STEP), rtol=0, atol=1e-8)
        np.testing.assert_array_equal(c.directions[:2], [sign, -sign])
    assert int(both.count[2]) == 0


@pytest.mark.validation
def test_derivative_of_out_and_back_crossing_times():
    """The out-and-back times ``1.5 h -+ arccos c`` move with the level ``c`` at ``+- 1 /
    sqrt(1 - c^2)`` (the excursion shortens as the level rises), by ``jacfwd`` (forward
    mode) and ``jacrev`` (checkpointed adjoint) through the constant steps and the root
    searches."""
    expected = np.array([1.0, -1.0]) / np.sin(GRAZE)
    forward = jax.jit(jax.jacfwd(lambda shift: _grazing_crossings(1.0, "both", shift).times[:2]))(0.0)
    reverse = jax.jit(jax.jacrev(lambda shift: _grazing_crossings(1.0, "both", shift, "reverse").times[:2]))(0.0)
    np.testing.assert_allclose(forward, expected, rtol=1e-6)
    np.testing.assert_allclose(reverse, expected, rtol=1e-6)


class _Line:
    """A step's dense output ``y(t) = y0 + (t - t0) rate``."""

    def __init__(self, t0, y0, rate):
        self.t0, self.y0, self.rate = t0, y0, rate

    def evaluate(self, t):
        return self.y0 + (t - self.t0) * self.rate


def test_direction_transient_and_capacity():
    """Steps of a straight line up and down through 0: ``up`` keeps the rising crossings,
    from ``start`` on, in a buffer of 2 that overflows while the count goes on."""
    hyperplane = Hyperplane(lambda args, y: y[0], jnp.asarray(0.0), DIRECTIONS["up"], 2)
    crossings = empty_crossings(hyperplane, 1, start=1.0)
    crossings = eqx.tree_at(lambda c: c.level, crossings, jnp.asarray(-1.0))
    record = jax.jit(lambda c, t0, y0, rate: record_crossing(c, hyperplane, None, _Line(t0, y0, rate), t0, t0 + 1.0,
                                                             y0 + rate))
    for k in range(8):  # rising from -1 to 1 on even steps (root at t0 + 0.5), falling back on odd
        rising = k % 2 == 0
        start, rate = (-1.0, 2.0) if rising else (1.0, -2.0)
        crossings = record(crossings, float(k), jnp.array([start]), jnp.array([rate]))
    assert int(crossings.count) == 3  # the rising crossings at 2.5, 4.5, 6.5 (0.5 is before start)
    np.testing.assert_allclose(crossings.times, [2.5, 4.5], rtol=0, atol=1e-14)
    np.testing.assert_array_equal(crossings.directions, [1.0, 1.0])


class _Parabola:
    """A step's dense output ``y(t) = sign (1 - (t - peak)^2)``: beyond 0 on ``|t - peak| < 1``."""

    def __init__(self, sign, peak):
        self.sign, self.peak = sign, peak

    def evaluate(self, t):
        return self.sign * jnp.atleast_1d(1.0 - (t - self.peak) ** 2)


@pytest.mark.parametrize("direction", ["up", "down", "both"])
def test_out_and_back_keeps_the_wanted_direction(direction):
    """One step ``[0, 4]`` of a parabola whose ends lie below 0 and whose peak lies above
    (up at 1, back down at 3), and of the same parabola upside down (down at 1, up at 3):
    each direction keeps its own crossings; the rate at the step's end is carried. Without a
    rate at the start (a run's first step) only an end-point sign change is looked for."""
    hyperplane = Hyperplane(lambda args, y: y[0], jnp.asarray(0.0), DIRECTIONS[direction], 4)

    def step(sign):
        # as carried from a previous step: the level and its rate at this step's start
        crossings = eqx.tree_at(lambda c: (c.level, c.rate), empty_crossings(hyperplane, 1, start=0.0),
                                (-3.0 * sign, 4.0 * sign))
        return record_crossing(crossings, hyperplane, None, _Parabola(sign, 2.0), 0.0, 4.0, jnp.array([-3.0 * sign]))

    both_signs = jax.jit(jax.vmap(step))(jnp.array([1.0, -1.0]))
    for index, sign in enumerate((1.0, -1.0)):
        crossings = jax.tree.map(lambda leaf: np.asarray(leaf[index]), both_signs)
        directions = np.array([sign, -sign])
        kept = {"up": directions > 0, "down": directions < 0, "both": directions != 0}[direction]
        assert int(crossings.count) == kept.sum()
        np.testing.assert_allclose(crossings.times[:kept.sum()], np.array([1.0, 3.0])[kept], rtol=0, atol=1e-12)
        np.testing.assert_array_equal(crossings.directions[:kept.sum()], directions[kept])
        np.testing.assert_allclose(crossings.rate, -4.0 * sign, rtol=1e-12)
    first_step = jax.jit(lambda c: record_crossing(c, hyperplane, None, _Parabola(1.0, 2.0), 0.0, 4.0,
                                                   jnp.array([-3.0])))
    assert int(first_step(eqx.tree_at(lambda c: c.level, empty_crossings(hyperplane, 1, start=0.0), -3.0)).count) == 0


def test_crossing_period_counts_distinct_points():
    """A period-2 orbit crossing twice per forcing period: four distinct points, period 2;
    a sequence that never repeats: none."""
    forcing = 0.1
    points = np.array([[0.0, 1.0], [0.5, -1.0], [0.2, 1.0], [0.7, -1.0]] * 4)
    times = np.arange(16) * forcing / 2
    period = jax.jit(lambda p, count: crossing_period(p, jnp.asarray(times), count, forcing, 4, 1e-6))
    assert tuple(map(int, period(jnp.asarray(points), 16))) == (2, 4)
    assert tuple(map(int, period(jnp.asarray(points + np.arange(16)[:, None] * 1e-3), 16))) == (0, 0)
    # stored slots past the count are not compared
    assert tuple(map(int, period(jnp.asarray(points).at[12:].set(9.0), 12))) == (2, 4)


@pytest.mark.validation
def test_derivative_of_a_crossing_time():
    """``d t / d c = 1 / sqrt(1 - c^2)`` for the first upward crossing of ``x = cos t``
    through ``c`` (``t = 2 pi - arccos c``), by ``grad`` (checkpointed adjoint) and by
    ``jacfwd`` (forward mode) through the solve and the root search."""
    def first(level, adjoint):
        hyperplane = Hyperplane(lambda args, y: _oscillator(y), level, DIRECTIONS["up"], 4)
        result = lyapunov_exponents(
            lambda t, y, args: jnp.stack([y[1], -y[0]]), jnp.array([1.0, 0.0]), None, t0=0.0, interval=2 * np.pi,
            num_intervals=2, num_exponents=0, stepsize_controller=diffrax.PIDController(rtol=1e-11, atol=1e-12),
            hyperplane=hyperplane, crossings_start=0.0, adjoint=adjoint)
        return result.crossings.times[0]

    level = 0.3
    reverse = jax.jit(jax.grad(lambda c: first(c, diffrax.RecursiveCheckpointAdjoint())))(level)
    forward = jax.jit(jax.jacfwd(lambda c: first(c, diffrax.ForwardMode())))(level)
    np.testing.assert_allclose([reverse, forward], 1.0 / np.sqrt(1.0 - level**2), rtol=1e-8)
