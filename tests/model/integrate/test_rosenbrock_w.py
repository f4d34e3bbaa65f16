"""The Rosenbrock-W solver (``model.integrate.rosenbrock_w``): order 3 with the exact
Jacobian, with a kept one and with a wrong matrix (the W-method property), on a smooth
problem and on a linear stiff one; the Jacobian schedule; ``vmap`` and ``grad`` through
it; agreement with Tsit5 on the flexible-rod slider-crank."""

import dataclasses

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from model.integrate.rosenbrock_w import ROS34PW2, AbstractRosenbrockW, Ros34PW2
from model.integrate.settings import ROSENBROCK_SOLVERS, STIFF_SOLVERS
from model.integrate.solve import make_solver
from tests.helpers import CONFIGS, flores_restitution_objective

ORDER = 3  # Rang & Angermann (2005): ROS34PW2 is a W-method of order 3


class PerturbedMatrix(AbstractRosenbrockW):
    """ROS34PW2 with ``A = 0.3 J + 0.5`` (every entry) and no ``df/dt``: far from the
    Jacobian, which a W-method tolerates without losing its order."""

    tableau = ROS34PW2

    def linearisation(self, field, t0, flat_y0):
        jacobian, time_derivative = super().linearisation(field, t0, flat_y0)
        return 0.3 * jacobian + 0.5, jnp.zeros_like(time_derivative)


SOLVERS = {"exact": Ros34PW2(jacobian_reuse=1), "kept": Ros34PW2(jacobian_reuse=10**6),
           "perturbed": PerturbedMatrix(jacobian_reuse=1)}


def _pendulum(t, y, args):
    # nonlinear, damped, driven: exercises the df/dt term of every stage
    return jnp.stack([y[1], -jnp.sin(y[0]) + 0.3 * jnp.cos(2.0 * t) - 0.1 * y[1] * y[0] ** 2])


STIFF_MATRIX = np.array([[-1.0, 2.0, 0.0], [-2.0, -1.0, 1.0], [0.0, 0.0, -1e4]])  # 1/s


def _linear_stiff(t, y, args):
    # a slow damped oscillation fed by a component relaxing at 1e4 1/s
    return jnp.asarray(STIFF_MATRIX) @ y


# the step as an array, not a Python float (which ``diffeqsolve``'s filter_jit keeps
# static): one compiled solve serves every step count
def _final(field, solver, y0, t_end, steps):
    return diffrax.diffeqsolve(diffrax.ODETerm(field), solver, 0.0, t_end, jnp.asarray(t_end / steps), y0,
                               stepsize_controller=diffrax.ConstantStepSize()).ys[-1]


def _observed_orders(field, solver, y0, t_end, steps, exact):
    errors = np.array([float(jnp.max(jnp.abs(_final(field, solver, y0, t_end, n) - exact))) for n in steps])
    return np.log2(errors[:-1] / errors[1:])


@pytest.mark.parametrize("matrix", sorted(SOLVERS))
def test_order_on_a_smooth_problem_whatever_the_matrix(matrix):
    y0 = jnp.array([1.0, 0.2])
    exact = diffrax.diffeqsolve(diffrax.ODETerm(_pendulum), diffrax.Dopri8(), 0.0, 2.0, 1e-3, y0, max_steps=100_000,
                                stepsize_controller=diffrax.PIDController(rtol=1e-14, atol=1e-14)).ys[-1]
    observed = _observed_orders(_pendulum, SOLVERS[matrix], y0, 2.0, (40, 80, 160), exact)
    assert np.all(np.abs(observed - ORDER) < 0.1), observed


@pytest.mark.parametrize("matrix", ["exact", "kept"])
def test_order_on_a_linear_stiff_problem(matrix):
    # h |lambda_stiff| = 1e2 .. 25: the stiff component is damped (L-stability), the slow
    # pair converges at the method's order
    y0 = jnp.array([1.0, 0.0, 1.0])
    t_end = 2.0
    exact = jnp.asarray(jax.scipy.linalg.expm(jnp.asarray(STIFF_MATRIX) * t_end) @ y0)
    observed = _observed_orders(_linear_stiff, SOLVERS[matrix], y0, t_end, (200, 400, 800), exact)
    assert np.all(np.abs(observed - ORDER) < 0.15), observed


def test_tableau_is_the_published_method_in_the_u_formulation():
    # stiffly accurate: the solution is the last stage's argument plus its increment
    assert ROS34PW2.m[:-1] == pytest.approx(ROS34PW2.a[-1], abs=1e-14) and ROS34PW2.m[-1] == 1.0
    assert ROS34PW2.alpha == pytest.approx((0.0, 0.87173304301691801, 0.73157995778885238, 1.0), abs=1e-15)
    # the first solution weight in the u formulation, as other implementations list it
    assert ROS34PW2.m[0] == pytest.approx(4.18476048231916042397, rel=1e-14)
    assert Ros34PW2().order(None) == ORDER


def test_jacobian_is_kept_for_its_reuse_count():
    solver = Ros34PW2(jacobian_reuse=3)
    term = diffrax.ODETerm(_pendulum)
    y0 = jnp.array([1.0, 0.2])
    state = solver.init(term, 0.0, 0.1, y0, None)
    ages, jacobians = [], []
    for index in range(7):
        y0, _, _, state, _ = solver.step(term, 0.1 * index, 0.1 * (index + 1), y0, None, state, False)
        ages.append(int(state.age))
        jacobians.append(np.asarray(state.jacobian))
    assert ages == [1, 2, 3, 1, 2, 3, 1]
    np.testing.assert_array_equal(jacobians[0], jacobians[2])  # kept
    assert not np.array_equal(jacobians[2], jacobians[3])  # formed anew at the new state
    np.testing.assert_allclose(state.field, _pendulum(0.7, y0, None), rtol=1e-15)  # first same as last


def _prothero_robinson(t, y, rate):
    # y' = -L (y - cos t) - sin t: the transient from y(0) = 2 decays at e^{-L t}
    return -rate * (y - jnp.cos(t)) - jnp.sin(t)


def _transient_end(rate, t_end=1e-3):
    return diffrax.diffeqsolve(diffrax.ODETerm(_prothero_robinson), Ros34PW2(), 0.0, t_end, None, jnp.array([2.0]),
                               args=rate, stepsize_controller=diffrax.PIDController(rtol=1e-10, atol=1e-13),
                               max_steps=100_000).ys[-1, 0]


def test_vmap_and_grad():
    rates = jnp.array([2e3, 4e3])
    exact = np.cos(1e-3) + np.exp(-np.asarray(rates) * 1e-3)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(_transient_end))(rates)), exact, rtol=1e-8)
    # d y(t) / dL = -t e^{-L t}; the kept matrix enters as a constant, the step's
    # derivative is the W-method on the variational equation
    rate, step = 2e3, 1.0
    derivative = float(jax.jit(jax.grad(_transient_end))(rate))
    value = jax.jit(_transient_end)  # the rate traced: one compile for both points
    central = float((value(rate + step) - value(rate - step)) / (2 * step))
    assert derivative == pytest.approx(-1e-3 * np.exp(-2.0), rel=1e-5)
    assert derivative == pytest.approx(central, rel=1e-5)


def test_second_order_elimination_solves_the_full_system():
    # flat state [q, v, r] with dq/dt = v: A's first rows are [0, I, 0]
    rng = np.random.default_rng(0)
    positions, rest = 5, 2
    size = 2 * positions + rest
    matrix = rng.normal(size=(size, size))
    matrix[:positions] = 0.0
    matrix[:positions, positions:2 * positions] = np.eye(positions)
    rhs, shift = rng.normal(size=size), 3.7
    reduced = Ros34PW2(second_order_size=positions).w_solver(jnp.asarray(matrix), shift)(jnp.asarray(rhs))
    full = Ros34PW2().w_solver(jnp.asarray(matrix), shift)(jnp.asarray(rhs))
    exact = np.linalg.solve(shift * np.eye(size) - matrix, rhs)
    np.testing.assert_allclose(np.asarray(reduced), exact, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(full), exact, rtol=1e-12, atol=1e-14)


def test_registered_with_its_jacobian_reuse_and_the_state_layout():
    assert "ros34pw2" in ROSENBROCK_SOLVERS and "ros34pw2" in STIFF_SOLVERS
    settings = model.SolverSettings(t_end=1e-3, output_interval=1e-4, solver="ros34pw2", jacobian_reuse=4)
    assert make_solver(settings).jacobian_reuse == 4
    assert make_solver(settings).second_order_size is None
    from pipelines.build import build_mechanism
    from pipelines.config import load_mechanism

    mechanism = build_mechanism(load_mechanism(CONFIGS / "flores_slider_crank.toml"), "absolute")
    coordinates = mechanism.initial_positions.size
    assert make_solver(settings, mechanism=mechanism).second_order_size == coordinates
    assert mechanism.flatten(mechanism.initial_state()).size == 2 * coordinates + 2  # one memory, the work


@pytest.mark.slow  # two compiles of the flexible mechanism (~30 s)
def test_agrees_with_tsit5_on_the_flexible_slider_crank():
    from pipelines.build import build_mechanism, solver_settings
    from pipelines.config import load_mechanism

    config = load_mechanism(CONFIGS / "flores_flexible.toml", ["bodies.conrod.flexible.segments=3"])
    mechanism = build_mechanism(config, "absolute")
    # 0.4 ms: the first impact (~0.2 ms) and its rebound
    settings = solver_settings(config, t_end=4e-4, output_interval=1e-5, rtol=1e-8, atol=1e-11)
    simulate = jax.jit(model.simulate, static_argnums=1)
    explicit = simulate(mechanism, dataclasses.replace(settings, solver="tsit5"))
    stiff = simulate(mechanism, dataclasses.replace(settings, solver="ros34pw2"))
    assert int(stiff.result) == 0 and int(explicit.result) == 0
    np.testing.assert_allclose(stiff.q, explicit.q, rtol=0, atol=1e-8)  # m, rad
    peak = float(explicit.peaks.max_normal_force[0])
    assert peak > 1e3  # the window holds an impact
    assert float(stiff.peaks.max_normal_force[0]) == pytest.approx(peak, rel=1e-5)


@pytest.mark.slow
@pytest.mark.validation  # reverse mode through a Flores solve compiles for about a minute on 2 cores
def test_gradient_through_simulate_matches_finite_differences():
    # the set-up of the Rodas4 check in test_rosenbrock.py
    objective = flores_restitution_objective("ros34pw2")

    restitution, step = 0.9, 1e-4
    value = jax.jit(lambda e: objective(e, "checkpoint"))
    central = float((value(restitution + step) - value(restitution - step)) / (2 * step))
    reverse = float(jax.jit(jax.grad(lambda e: objective(e, "checkpoint")))(restitution))
    forward = float(jax.jit(jax.jacfwd(lambda e: objective(e, "forward")))(restitution))
    assert abs(central) > 1e-3  # the objective does depend on e through the impact
    # measured 4.0e-6 (reverse) and 2.0e-7 (forward)
    assert reverse == pytest.approx(central, rel=2e-5)
    assert forward == pytest.approx(central, rel=2e-5)
