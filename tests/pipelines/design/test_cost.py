"""Tolerance cost: rises as the clearance band narrows, finite and differentiable."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pipelines.design.cost import LinearCost, ToleranceCost


@pytest.mark.parametrize("model", ["reciprocal_power", "exponential"])
@pytest.mark.parametrize("exponent", [0.5, 1.0, 2.0])
def test_cost_rises_as_the_band_narrows(model, exponent):
    cost = ToleranceCost(reference_band=0.5e-3, model=model, min_clearance=5e-6, exponent=exponent)
    clearances = jnp.linspace(6e-6, 0.5e-3, 200)
    values = np.asarray(jax.vmap(cost)(clearances))
    assert np.all(np.diff(values) < 0)
    slopes = np.asarray(jax.vmap(jax.grad(cost))(clearances))
    assert np.all(np.isfinite(slopes)) and np.all(slopes < 0)


def test_reference_band_costs_fixed_plus_scale_and_reciprocal_law():
    cost = ToleranceCost(reference_band=0.4e-3, min_clearance=0.1e-3, scale=2.0, fixed=0.5)
    assert float(cost(0.5e-3)) == pytest.approx(2.5)
    assert float(cost(0.3e-3)) == pytest.approx(0.5 + 2.0 * 2.0)  # half the band, twice the variable cost


def test_zero_width_band_stays_finite():
    cost = ToleranceCost(reference_band=1e-3, min_clearance=1e-5)
    assert np.isfinite(float(cost(1e-5))) and float(cost(1e-5)) > float(cost(2e-5))


def test_invalid_parameters_are_refused():
    with pytest.raises(ValueError, match="exponent"):
        ToleranceCost(reference_band=1e-3, exponent=0.0)
    with pytest.raises(ValueError, match="unknown cost model"):
        ToleranceCost(reference_band=1e-3, model="quadratic")


def test_linear_cost_over_bounds():
    cost = LinearCost(weight=-1.0, lower=80.0, upper=120.0)
    assert float(cost(80.0)) == 0.0 and float(cost(120.0)) == -1.0
