"""Reverse mode (checkpointed adjoint) and forward mode agree with central finite
differences of tightly solved problems, on a short window over the first impact of the
Flores benchmark."""

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from pipelines.build import ParameterMap, build_mechanism, solver_settings
from pipelines.config import load_mechanism
from tests.helpers import FLORES, central_differences

CONFIG = FLORES
PATHS = ("joints.pin.contact.restitution", "bodies.slider.mass", "joints.pin.clearance")
WINDOW = dict(t_end=3.0e-4, output_interval=5e-6, solver="tsit5")
TIGHT = dict(rtol=1e-11, atol=1e-14)  # finite differences need a nearly exact solve
AD = dict(rtol=1e-9, atol=1e-12)
RELATIVE_STEP = 1e-5
# Measured: all three derivatives within 7e-6 of the finite differences. The clearance,
# which moves the contact onset, needed the smoothed memory switch (model/contact/memory.py): with
# a hard switch it was 2.5 % off (the missed saltation term).
AGREEMENT = 1e-4
# forward and reverse differentiate the same adaptive solve (the error control watches the
# states, not their sensitivities): they must agree with each other as closely as each
# agrees with the finite differences
MODES_AGREE = AGREEMENT

pytestmark = pytest.mark.slow  # forward and reverse derivatives through a full Flores solve


@pytest.fixture(scope="module")
def problem():
    config = load_mechanism(CONFIG)
    mechanism = build_mechanism(config, "absolute")
    parameters = ParameterMap(mechanism, PATHS)
    x0 = parameters.read(mechanism)

    def objective(settings):
        def f(x):
            trajectory = model.simulate(parameters.apply(mechanism, x), settings)
            # smooth in the parameters: penetration energy-like integral of the first
            # impact, and the slider's final velocity (both depend on every parameter)
            contact = jnp.sum(jnp.maximum(trajectory.penetration[:, 0], 0.0) ** 2) / 1e-12
            return contact + trajectory.qd[-1, 6]

        return f

    settings = {name: solver_settings(config, adjoint=adjoint, **WINDOW, **tol)
                for name, adjoint, tol in (("tight", "checkpoint", TIGHT), ("reverse", "checkpoint", AD),
                                           ("forward", "forward", AD))}
    return x0, {name: objective(s) for name, s in settings.items()}


@pytest.fixture(scope="module")
def finite_differences(problem):
    x0, f = problem
    return central_differences(f["tight"], x0, RELATIVE_STEP)


@pytest.fixture(scope="module")
def gradients(problem):
    x0, f = problem
    return {
        "reverse": np.asarray(jax.jit(jax.grad(f["reverse"]))(x0)),
        "forward": np.asarray(jax.jit(jax.jacfwd(f["forward"]))(x0)),
    }


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_mode_matches_finite_differences(gradients, finite_differences, mode):
    grad = gradients[mode]
    np.testing.assert_allclose(grad, finite_differences, rtol=AGREEMENT)


def test_reverse_and_forward_agree(gradients):
    np.testing.assert_allclose(gradients["reverse"], gradients["forward"], rtol=MODES_AGREE)


def test_finite_differences_are_not_trivial(finite_differences):
    assert np.all(np.abs(finite_differences) > 0)


@pytest.mark.validation  # 36 s on 2 cores; which stage loop reverse mode gets: tests/model/integrate/test_explicit.py
def test_reverse_mode_over_many_steps_with_friction():
    """Reverse mode recomputes the solve's steps from checkpoints; over a long run in
    persistent sliding contact (the low-speed slider-crank, 10 ms, about 2,000 steps) it
    still agrees with forward mode. Measured 0.01-0.07 % (the two modes' solves round
    differently, and this contact's derivatives are sensitive to it); code that computed the
    planar field's matrix-vector products as sums gave a friction derivative 13 % off and a
    clearance derivative of the wrong sign (model/mechanics/dynamics.py)."""
    config = load_mechanism(pathlib.Path(__file__).resolve().parents[3] / "configs" / "low_speed_slider_crank.toml")
    mechanism = build_mechanism(config, "absolute")
    parameters = ParameterMap(mechanism, ("joints.pin.friction.coefficient", "joints.pin.clearance"))
    x0 = jnp.asarray([0.05, 2e-4])  # the config's friction, twice its clearance

    def loss(settings):
        def f(x):
            trajectory = model.simulate(parameters.apply(mechanism, x), settings)
            return jnp.sum(trajectory.q[:, 6] ** 2) + jnp.sum(trajectory.qd[:, 3] ** 2)

        return f

    window = dict(t_end=1e-2, output_interval=5e-4, rtol=1e-10, atol=1e-13)
    reverse = jax.jit(jax.grad(loss(solver_settings(config, adjoint="checkpoint", **window))))(x0)
    forward = jax.jit(jax.jacfwd(loss(solver_settings(config, adjoint="forward", **window))))(x0)
    np.testing.assert_allclose(reverse, forward, rtol=1e-2)
