import jax
import numpy as np
import pytest

from model import cubic_step, haversine_step


@pytest.mark.parametrize("blend", [cubic_step, haversine_step])
def test_blends_hold_their_levels_outside_the_interval(blend):
    assert float(blend(-1.0, 0.0, 2.0, 1.0, 5.0)) == 2.0
    assert float(blend(2.0, 0.0, 2.0, 1.0, 5.0)) == 5.0
    # Both are symmetric about the midpoint, where they are halfway.
    assert float(blend(0.5, 0.0, 2.0, 1.0, 5.0)) == pytest.approx(3.5)


@pytest.mark.parametrize("blend", [cubic_step, haversine_step])
def test_blends_have_zero_slope_at_both_ends(blend):
    slope = jax.grad(lambda x: blend(x, 0.0, 2.0, 1.0, 5.0))
    assert float(slope(1e-9)) == pytest.approx(0.0, abs=1e-6)
    assert float(slope(1.0 - 1e-9)) == pytest.approx(0.0, abs=1e-6)


def test_cubic_and_haversine_formulas():
    # D^2 (3 - 2 D) at D = 0.1 is 0.028; (1 - cos(pi D)) / 2 at D = 1/3 is 1/4.
    assert float(cubic_step(0.1, 0.0, 0.0, 1.0, 1.0)) == pytest.approx(0.028)
    assert float(haversine_step(1.0 / 3.0, 0.0, 0.0, 1.0, 1.0)) == pytest.approx(0.25)
    # The haversine equals ADAMS' (h0+h1)/2 + (h1-h0)/2 sin(pi D - pi/2).
    d = np.linspace(0.0, 1.0, 7)
    adams = 3.5 + 1.5 * np.sin(np.pi * d - np.pi / 2)
    np.testing.assert_allclose(haversine_step(d, 0.0, 2.0, 1.0, 5.0), adams, rtol=1e-14)
