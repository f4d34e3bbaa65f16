"""The augmented-Lagrangian method finds known constrained optima of toy problems."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pipelines.design.optimize import (
    AugmentedLagrangianSettings,
    augmented_lagrangian,
    augmented_lagrangian_value,
)

SETTINGS = AugmentedLagrangianSettings(
    iterations=300, learning_rate=0.05, final_learning_rate_share=0.01, inner_steps=5, feasibility_tolerance=1e-3
)


def with_jacobian(g):
    both = jax.jit(lambda z: (g(z), jax.jacfwd(g)(z)))
    return lambda z: (*both(z), None)


def test_quadratic_with_an_active_linear_constraint():
    # min (x-1)^2 + (y-1)^2  s.t.  x + y <= 1  ->  (0.5, 0.5), multiplier 1
    result = augmented_lagrangian(
        lambda z: jnp.sum((z - 1.0) ** 2), with_jacobian(lambda z: jnp.array([z[0] + z[1] - 1.0])),
        jnp.array([0.9, 0.1]), SETTINGS,
    )
    assert result.feasible
    assert result.best.z == pytest.approx([0.5, 0.5], abs=0.01)


def test_tolerance_like_problem_from_an_infeasible_start():
    # cost falls with z (a wider band), the constraint caps z at 0.5: optimum on the boundary
    result = augmented_lagrangian(
        lambda z: 1.0 / (0.05 + z[0]), with_jacobian(lambda z: jnp.array([(z[0] ** 2 - 0.25) / 0.25])),
        jnp.array([1.0]), SETTINGS,
    )
    assert result.history[0].constraints[0] > 0  # started infeasible
    assert result.feasible
    assert result.best.z[0] == pytest.approx(0.5, abs=0.01)


def test_inactive_constraint_leaves_the_unconstrained_optimum_and_respects_bounds():
    # min (x - 0.3)^2 + (y - 1.4)^2 with x <= 0.9 inactive; y is held by the upper bound 1
    result = augmented_lagrangian(
        lambda z: (z[0] - 0.3) ** 2 + (z[1] - 1.4) ** 2, with_jacobian(lambda z: jnp.array([z[0] - 0.9])),
        jnp.array([0.5, 0.5]), SETTINGS,
    )
    assert result.best.z == pytest.approx([0.3, 1.0], abs=0.01)
    assert np.all(result.best.multipliers == 0.0)


def test_failed_evaluations_are_never_the_answer():
    @jax.jit
    def evaluate(z):
        bad = z[0] > 0.8  # a "failed simulation" region
        return jnp.where(bad, jnp.nan, jnp.array([z[0] - 0.5])), jnp.where(bad, jnp.nan, jnp.ones((1, 1)))

    def constraints(z):
        return (*evaluate(z), None)

    result = augmented_lagrangian(lambda z: -z[0], constraints, jnp.array([0.9]), SETTINGS)
    assert np.all(np.isfinite(result.best.constraints)) and result.best.z[0] <= 0.5 + 1e-3


def test_augmented_lagrangian_value_matches_the_phr_formula():
    g, lam, rho = jnp.array([0.2, -0.5]), jnp.array([1.0, 0.1]), 10.0
    expected = 3.0 + ((1.0 + 2.0) ** 2 - 1.0) / 20.0 + (0.0 - 0.01) / 20.0
    assert float(augmented_lagrangian_value(3.0, g, lam, rho)) == pytest.approx(expected)
