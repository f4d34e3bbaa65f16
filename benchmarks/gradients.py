"""Derivatives through the solver: how noisy a reverse-mode gradient is against forward
mode and differences (case ``noise``: the low-speed slider-crank with friction), the
spatial slider-crank's reverse-mode gradient (case ``spatial``), and the forward-mode slope
of the docs/api.md example against central differences (case ``api-slope``)::

    python -m benchmarks.gradients --list
    python -m benchmarks.gradients --case api-slope --rtol 1e-8

docs/integration.md and docs/api.md record the results.
"""

from __future__ import annotations

import model  # noqa: I001  (float64 before JAX computes anything)

import argparse
from pathlib import Path

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

import pipelines
from benchmarks import harness
from model.integrate import explicit, make_controller, make_solver, trajectory_from_states
from model.integrate.peaks import PeakTracking
from model.mechanics.interface import flat_vector_field
from pipelines.build import ParameterMap, build_mechanism, solver_settings
from pipelines.config import load_mechanism

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------- noise
NOISE_CONFIG = ROOT / "configs" / "low_speed_slider_crank.toml"


NOISE_PATHS = ("joints.pin.friction.coefficient", "joints.pin.clearance")


NOISE_POINT = (0.05, 2e-4)


def noise_loss_of(mechanism, parameters, settings, stage_loop: type | None):
    """The objective as a function of the parameters; ``stage_loop`` replaces the solver
    ``make_solver`` would pick (``None``: keep it)."""

    def loss(x):
        point = parameters.apply(mechanism, x)
        if stage_loop is None:
            trajectory = model.simulate(point, settings)
        else:
            # model.integrate.solve's call with the stage loop chosen here
            solution = diffrax.diffeqsolve(
                diffrax.ODETerm(flat_vector_field), PeakTracking(stage_loop()), 0.0, settings.output_times()[-1],
                None, point.flatten(point.initial_state()), point, saveat=diffrax.SaveAt(ts=settings.output_times()),
                stepsize_controller=make_controller(point, settings), max_steps=settings.max_steps,
                adjoint=diffrax.RecursiveCheckpointAdjoint(), throw=False)
            trajectory = trajectory_from_states(point, settings.output_times(), point.unflatten(solution.ys))
        return jnp.sum(trajectory.q[:, 6] ** 2) + jnp.sum(trajectory.qd[:, 3] ** 2)

    return loss


def noise(argv=None) -> int:
    """Reverse against forward mode over a long run in persistent sliding contact, with diffrax's
    stage loop and with the lean one of ``model.integrate.explicit``.

    The low-speed slider-crank with friction, 10 ms (about 2,000 steps), derivative of
    ``sum(q_6^2) + sum(qd_3^2)`` over the output samples by (friction coefficient, clearance)
    at (0.05, 0.2 mm). For each rtol: forward mode, reverse mode with each stage loop, and
    reverse mode again with the parameters moved by 1e-12 relative (a change far below any
    physical scale, which moves a noisy derivative and not a sound one); central differences
    of the tightest solve as the reference. ``docs/integration.md`` ("Gradients") has the table.

        python -m benchmarks.gradients --case noise                      # rtol 1e-8 1e-9 1e-10, ~6 min
        python -m benchmarks.gradients --case noise --rtols 1e-8
    """
    parser = argparse.ArgumentParser(description=noise.__doc__.splitlines()[0])
    parser.add_argument("--rtols", type=float, nargs="+", default=[1e-8, 1e-9, 1e-10])
    args = parser.parse_args(argv)
    config = load_mechanism(NOISE_CONFIG)
    mechanism = build_mechanism(config)
    parameters = ParameterMap(mechanism, NOISE_PATHS)
    x0 = jnp.asarray(NOISE_POINT)
    moved = x0 * (1 + 1e-12)
    print("| rtol | forward mode | reverse, diffrax's loop | moved | reverse, lean loop | moved |")
    print("|---|---:|---:|---:|---:|---:|")
    for rtol in args.rtols:
        window = dict(t_end=1e-2, output_interval=5e-4, rtol=rtol, atol=rtol * 1e-3)
        forward = jax.jit(jax.jacfwd(noise_loss_of(mechanism, parameters, solver_settings(config, adjoint="forward", **window),
                                             None)))(x0)
        row = [f"{float(forward[1]):.1f}"]
        for loop in (diffrax.Tsit5, explicit.Tsit5):
            gradient = jax.jit(jax.grad(noise_loss_of(mechanism, parameters, solver_settings(config, **window), loop)))
            row += [f"{float(gradient(x0)[1]):.1f}", f"{float(gradient(moved)[1]):.1f}"]
        print(f"| {rtol:.0e} | " + " | ".join(row) + " |", flush=True)
    window = dict(t_end=1e-2, output_interval=5e-4, rtol=min(args.rtols), atol=min(args.rtols) * 1e-3)
    loss = jax.jit(noise_loss_of(mechanism, parameters, solver_settings(config, **window), None))
    step = NOISE_POINT[1] * 1e-4
    difference = (loss(x0.at[1].add(step)) - loss(x0.at[1].add(-step))) / (2 * step)
    print(f"\ncentral difference (rtol {min(args.rtols):.0e}, step 1e-4 relative): {float(difference):.2f}")
    return 0


# ---------------------------------------------------------------------- spatial
SPATIAL_CONFIG = ROOT / "configs" / "flores_slider_crank_3d.toml"


SPATIAL_PATHS = ("joints.pin.clearance", "joints.pin.contact.restitution")


def objective(trajectory):
    return jnp.sum(trajectory.penetration**2) + jnp.sum(trajectory.normal_force**2)


def spatial_loss_of(mechanism, parameters, settings, wrap: bool):
    """The objective as a function of the parameters: through ``model.simulate`` (which wraps
    the solver of a reverse-mode solve), or, ``wrap=False``, through the same diffrax call
    without the wrapper."""

    def loss(x):
        point = parameters.apply(mechanism, x)
        if wrap:
            return objective(model.simulate(point, settings))
        solution = diffrax.diffeqsolve(
            diffrax.ODETerm(flat_vector_field), PeakTracking(make_solver(settings, mechanism=point)),
            0.0, settings.output_times()[-1], None, point.flatten(point.initial_state()), point,
            saveat=diffrax.SaveAt(ts=settings.output_times()), stepsize_controller=make_controller(point, settings),
            max_steps=settings.max_steps, adjoint=diffrax.RecursiveCheckpointAdjoint(), throw=False)
        return objective(trajectory_from_states(point, settings.output_times(), point.unflatten(solution.ys)))

    return loss


def spatial(argv=None) -> int:
    """Reverse against forward mode through the spatial Flores slider-crank over a long record,
    with and without ``model.NonFiniteStepsCarryNoGradient``.

    Derivative of the summed squared penetrations and normal forces at the output samples by
    (clearance, restitution), Tsit5 at rtol 1e-9. Without the wrapper a rejected step whose
    stages overflowed turns the reverse-mode gradient into NaN (over 12 ms); forward mode
    never reads that step. ``docs/integration.md`` ("A rejected step passes no gradient back")
    has the numbers.

        python -m benchmarks.gradients --case spatial --t-end 0.012     # ~5 min on 2 cores
    """
    parser = argparse.ArgumentParser(description=spatial.__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=0.012, help="record length (s)")
    args = parser.parse_args(argv)
    config = load_mechanism(SPATIAL_CONFIG)
    mechanism = build_mechanism(config)
    parameters = ParameterMap(mechanism, SPATIAL_PATHS)
    x0 = parameters.read(mechanism)
    window = dict(t_end=args.t_end, output_interval=args.t_end / 40, rtol=1e-9, atol=1e-12)
    forward_settings = solver_settings(config, adjoint="forward", **window)
    forward = jax.jit(jax.jacfwd(lambda x: objective(model.simulate(parameters.apply(mechanism, x), forward_settings))))(x0)
    print(f"t_end {args.t_end} s, d/d{SPATIAL_PATHS}")
    print(f"forward mode:            {np.asarray(forward)}")
    for wrap in (True, False):
        reverse = jax.jit(jax.grad(spatial_loss_of(mechanism, parameters, solver_settings(config, **window), wrap)))(x0)
        label = "reverse, wrapped:" if wrap else "reverse, bare:"
        print(f"{label:24} {np.asarray(reverse)}  relative to forward {np.asarray(jnp.abs(reverse / forward - 1))}",
              flush=True)
    return 0


# ---------------------------------------------------------------------- api_slope
def api_slope(argv=None) -> int:
    """The forward-mode slope of the docs/api.md example against central differences.

    ``d(peak pin force)/d(clearance)`` of the Flores slider-crank over its first impact
    (0.5 ms unless ``--t-end``) at 0.5 mm by
    ``jax.jacfwd`` through the solve (``adjoint="forward"``), and by central differences of the
    batched metric over two steps; docs/api.md ("Accuracy of the slope") records the result::

        python -m benchmarks.gradients --case api-slope                 # the config's rtol (1e-6)
        python -m benchmarks.gradients --case api-slope --rtol 1e-8     # the example's
    """
    parser = argparse.ArgumentParser(description=api_slope.__doc__.splitlines()[0])
    parser.add_argument("--rtol", type=float, default=None, help="relative tolerance (default: the config's)")
    parser.add_argument("--t-end", default="0.5 ms", help="simulated time, with its unit (the example's: the first impact)")
    parser.add_argument("--steps", type=float, nargs="+", default=[2e-6, 2e-5], help="half-widths of the differences (m)")
    args = parser.parse_args(argv)
    model.configure()  # the command line's XLA flags, before the first computation
    overrides = [f"simulation.t_end={args.t_end}"] + ([f"simulation.rtol={args.rtol}"] if args.rtol is not None else [])
    crank = pipelines.load(ROOT / "configs" / "flores_slider_crank.toml", overrides).with_settings(adjoint="forward")

    def peak_force(clearance):
        return crank.with_parameters({"joints.pin.clearance": clearance}).metrics()["pin.max_normal_force"]

    clearance = 0.5e-3
    slope = float(jax.jit(jax.jacfwd(peak_force))(clearance))
    print(f"rtol {crank.settings.rtol:g}: forward-mode slope {slope:.5g} N/m")
    batched = jax.jit(jax.vmap(peak_force))
    for step in args.steps:
        below, above = batched(jnp.array([clearance - step, clearance + step]))
        difference = float(above - below) / (2 * step)
        print(f"central difference over +-{step:g} m: {difference:.5g} N/m (slope {slope / difference - 1:+.2%} off)")
    return 0


CASES = {"noise": noise, "spatial": spatial, "api-slope": api_slope}

if __name__ == "__main__":
    raise SystemExit(harness.main(CASES, __doc__))
