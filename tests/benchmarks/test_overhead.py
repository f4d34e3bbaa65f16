"""The stability-margin probe (``python -m benchmarks.overhead --case stability``): Tsit5's stability
function and the margin it gives a step."""

import numpy as np

from benchmarks import overhead as stability_margin


def test_stability_function_is_exp_to_fifth_order():
    """Tsit5 has order 5: ``R(z) - e^z`` falls as ``|z|^6`` (a misassembled tableau drops it)."""
    z = np.array([0.02, 0.04, 0.08]) * np.exp(0.7j * np.pi)
    error = np.abs(stability_margin.stability_function(z) - np.exp(z))
    slopes = np.diff(np.log(error)) / np.diff(np.log(np.abs(z)))
    np.testing.assert_allclose(slopes, 6.0, atol=0.25)  # 5 or 7 would be another order


def test_margin_of_real_and_oscillatory_modes():
    """A decaying mode ``lambda = -1/s`` at ``h = 1 s`` sits at ~1/3.5 of the boundary;
    the margin scales as ``1/h`` and the stiffest eigenvalue of a step sets it."""
    radius = stability_margin.stability_radius(np.array([np.pi]))[0]
    assert 3.3 < radius < 3.7  # explicit RK methods of 6-7 stages reach ~3-4 on the real axis
    eigenvalues = np.array([[-1.0 + 0j, -0.1 + 0j], [-1.0 + 0j, -100.0 + 0j]])
    margins = stability_margin.stability_margins(eigenvalues, np.array([1.0, 0.01]))
    np.testing.assert_allclose(margins, [radius, radius], rtol=1e-3)
    undamped = stability_margin.stability_margins(np.array([[1j, -1j]]), np.array([1.0]))[0]
    np.testing.assert_allclose(undamped, stability_margin.stability_radius(np.array([np.pi / 2]))[0], rtol=1e-3)
    assert undamped < radius
