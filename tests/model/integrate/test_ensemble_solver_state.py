"""A fresh refilling lane's solver state (``model/integrate/ensemble.py``) where the solver
is wrapped by the constraint projection, as it is for a mechanism with constraint rows (the
absolute engine's ideal joints, a tree's cut joints): the lane starts with the wrapped
first-same-as-last solver's derivative already evaluated, so that no lane takes diffrax's
extra first stage (``_Integrator._initial_solver_state``)."""

import jax.numpy as jnp
import numpy as np
import pytest

from model.integrate.ensemble import _Integrator, _wrapped_terms
from model.integrate.projection import ConstraintProjection
from model.integrate.solve import make_solver, with_projection
from model.integrate.solver_state import carried_rate
from model.integrate.wrapped_solver import state_solver
from model.mechanics.interface import flat_vector_field
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS


@pytest.mark.parametrize("name, engine", [
    ("flores_slider_crank.toml", "absolute"),  # every ideal joint a constraint row
    ("flores_slider_crank.toml", "joint"),  # the ideal twin's pin cuts the loop
])
@pytest.mark.parametrize("solver", ["tsit5", "kvaerno5"])
def test_a_fresh_lane_carries_the_projected_solvers_first_derivative(name, engine, solver):
    """The ideal-joint twin (constrained on both engines) under the projection: the lane's
    solver state is the wrapped solver's ``(first_step = False, f(t0, y0))``, the carried
    derivative equal to the vector field at the start."""
    config = load_mechanism(CONFIGS / name, [f"simulation.solver={solver}"])
    mechanism = build_mechanism(config, engine).idealised()
    settings = solver_settings(config)
    wrapped = with_projection(make_solver(settings, mechanism=mechanism, reverse_differentiable=False), settings,
                              mechanism)
    assert mechanism.constrained and isinstance(wrapped, ConstraintProjection)
    integrator = _Integrator(settings, _wrapped_terms(settings), wrapped, settings.output_times(), None)
    y0 = mechanism.flatten(mechanism.initial_state())
    state = integrator._initial_solver_state(jnp.zeros(()), jnp.asarray(1e-6), y0, mechanism)
    first_step, _ = state
    assert not bool(first_step)
    field = flat_vector_field(0.0, y0, mechanism)
    assert float(jnp.max(jnp.abs(field))) > 0.0
    np.testing.assert_array_equal(carried_rate(state_solver(wrapped), state), field)
