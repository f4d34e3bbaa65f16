"""Forward and reverse derivatives through a full spatial solve (the 3-D Flores
slider-crank, cylindrical clearance joint in 5 slices, over its first impact) agree with
central finite differences of a tightly solved problem.

Both modes are in the validation tier: reverse mode compiles for 2 minutes on 2 cores,
forward mode for 40 s (docs/BENCHMARKS.md, "Test suite")."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from pipelines.build import ParameterMap, build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import CONFIGS, central_differences

PATHS = ("joints.pin.contact.restitution", "bodies.slider.mass", "joints.pin.clearance")
WINDOW = dict(t_end=5.0e-4, output_interval=1e-5, solver="tsit5")
TIGHT = dict(rtol=1e-11, atol=1e-14)  # finite differences need a nearly exact solve
AD = dict(rtol=1e-9, atol=1e-12)
RELATIVE_STEP = 1e-5
# as the planar engine's gradient test (tests/model/integrate/test_gradients.py)
AGREEMENT = 1e-4


@pytest.fixture(scope="module")
def problem():
    config = load_mechanism(CONFIGS / "flores_slider_crank_3d.toml")
    mechanism = build_mechanism(config)
    parameters = ParameterMap(mechanism, PATHS)
    x0 = parameters.read(mechanism)

    def objective(settings):
        def f(x):
            trajectory = model.simulate(parameters.apply(mechanism, x), settings)
            # smooth in every parameter: a penetration integral of the first impact and the
            # slider's final velocity
            contact = jnp.sum(jnp.maximum(trajectory.penetration[:, 0], 0.0) ** 2) / 1e-12
            return contact + trajectory.v[-1, 12]

        return f

    settings = {name: solver_settings(config, adjoint=adjoint, **WINDOW, **tolerances)
                for name, adjoint, tolerances in (("tight", "checkpoint", TIGHT), ("reverse", "checkpoint", AD),
                                                  ("forward", "forward", AD))}
    return x0, {name: objective(s) for name, s in settings.items()}


@pytest.fixture(scope="module")
def finite_differences(problem):
    x0, f = problem
    return central_differences(f["tight"], x0, RELATIVE_STEP)


@pytest.mark.slow
# both modes in the validation tier; the default run keeps forward and reverse mode through a
# planar solve (tests/model/integrate/test_gradients.py) and the spatial field's derivatives
# (tests/model/mechanics/spatial/test_gradients.py)
@pytest.mark.validation
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_spatial_derivatives_match_finite_differences(problem, finite_differences, mode):
    x0, f = problem
    derivative = jax.grad if mode == "reverse" else jax.jacfwd
    gradient = np.asarray(jax.jit(derivative(f[mode]))(x0))
    assert np.all(finite_differences != 0.0)  # every parameter reaches the objective
    np.testing.assert_allclose(gradient, finite_differences, rtol=AGREEMENT)
