"""Reverse against forward mode over a long run in persistent sliding contact, with diffrax's
stage loop and with the lean one of ``model.integrate.explicit``.

The low-speed slider-crank with friction, 10 ms (about 2,000 steps), derivative of
``sum(q_6^2) + sum(qd_3^2)`` over the output samples by (friction coefficient, clearance)
at (0.05, 0.2 mm). For each rtol: forward mode, reverse mode with each stage loop, and
reverse mode again with the parameters moved by 1e-12 relative (a change far below any
physical scale, which moves a noisy derivative and not a sound one); central differences
of the tightest solve as the reference. ``docs/integration.md`` ("Gradients") has the table.

    python benchmarks/reverse_mode_noise.py                      # rtol 1e-8 1e-9 1e-10, ~6 min
    python benchmarks/reverse_mode_noise.py --rtols 1e-8
"""

from __future__ import annotations

import argparse
from pathlib import Path

import model  # float64 before JAX starts

import diffrax
import jax
import jax.numpy as jnp

from model.integrate import explicit, make_controller, trajectory_from_states
from model.integrate.peaks import PeakTracking
from model.mechanics.interface import flat_vector_field
from pipelines.build import ParameterMap, build_mechanism, solver_settings
from pipelines.config import load_mechanism

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "low_speed_slider_crank.toml"
PATHS = ("joints.pin.friction.coefficient", "joints.pin.clearance")
POINT = (0.05, 2e-4)


def loss_of(mechanism, parameters, settings, stage_loop: type | None):
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtols", type=float, nargs="+", default=[1e-8, 1e-9, 1e-10])
    args = parser.parse_args(argv)
    config = load_mechanism(CONFIG)
    mechanism = build_mechanism(config)
    parameters = ParameterMap(mechanism, PATHS)
    x0 = jnp.asarray(POINT)
    moved = x0 * (1 + 1e-12)
    print("| rtol | forward mode | reverse, diffrax's loop | moved | reverse, lean loop | moved |")
    print("|---|---:|---:|---:|---:|---:|")
    for rtol in args.rtols:
        window = dict(t_end=1e-2, output_interval=5e-4, rtol=rtol, atol=rtol * 1e-3)
        forward = jax.jit(jax.jacfwd(loss_of(mechanism, parameters, solver_settings(config, adjoint="forward", **window),
                                             None)))(x0)
        row = [f"{float(forward[1]):.1f}"]
        for loop in (diffrax.Tsit5, explicit.Tsit5):
            gradient = jax.jit(jax.grad(loss_of(mechanism, parameters, solver_settings(config, **window), loop)))
            row += [f"{float(gradient(x0)[1]):.1f}", f"{float(gradient(moved)[1]):.1f}"]
        print(f"| {rtol:.0e} | " + " | ".join(row) + " |", flush=True)
    window = dict(t_end=1e-2, output_interval=5e-4, rtol=min(args.rtols), atol=min(args.rtols) * 1e-3)
    loss = jax.jit(loss_of(mechanism, parameters, solver_settings(config, **window), None))
    step = POINT[1] * 1e-4
    difference = (loss(x0.at[1].add(step)) - loss(x0.at[1].add(-step))) / (2 * step)
    print(f"\ncentral difference (rtol {min(args.rtols):.0e}, step 1e-4 relative): {float(difference):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
