"""The period of a section and the motion class, on constructed sections."""

import jax.numpy as jnp
import numpy as np
import pytest

from model.nonlinear import MOTION_NAMES, classify_motion, section_period


def _cycle(period: int, samples: int, noise: float = 0.0):
    base = jnp.stack([jnp.cos(2 * jnp.pi * jnp.arange(period) / period), jnp.sin(jnp.arange(period))], axis=1)
    points = jnp.tile(base, (samples // period + 1, 1))[:samples]
    return points + noise * jnp.sin(7.3 * jnp.arange(samples))[:, None]


def test_period_of_repeating_sections():
    periods = [int(section_period(_cycle(n, 20), 6, 1e-3)) for n in (1, 2, 3, 5)]
    assert periods == [1, 2, 3, 5]


def test_no_period_beyond_the_tolerance_or_the_longest_period():
    assert int(section_period(_cycle(3, 20, noise=1e-2), 6, 1e-3)) == 0
    assert int(section_period(_cycle(7, 20), 6, 1e-3)) == 0
    with pytest.raises(ValueError, match="section samples"):
        section_period(_cycle(2, 6), 6, 1e-3)


def test_motion_classes():
    cases = [(2, 5.0, 0.1, True, "periodic"), (0, 5.0, 0.1, True, "chaotic"), (0, 5.0, 8.0, True, "quasi-periodic"),
             (0, -1.0, 0.1, True, "quasi-periodic"), (0, 5.0, 0.1, False, "failed")]
    for period, exponent, change, success, name in cases:
        code = classify_motion(jnp.asarray(period), jnp.asarray(exponent), jnp.asarray(change), 1.0, success)
        assert MOTION_NAMES[int(code)] == name
    assert MOTION_NAMES[int(classify_motion(jnp.asarray(0), None, None, 1.0))] == "aperiodic"
