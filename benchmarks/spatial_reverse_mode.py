"""Reverse against forward mode through the spatial Flores slider-crank over a long record,
with and without ``model.NonFiniteStepsCarryNoGradient``.

Derivative of the summed squared penetrations and normal forces at the output samples by
(clearance, restitution), Tsit5 at rtol 1e-9. Without the wrapper a rejected step whose
stages overflowed turns the reverse-mode gradient into NaN (over 12 ms); forward mode
never reads that step. ``docs/integration.md`` ("A rejected step passes no gradient back")
has the numbers.

    python benchmarks/spatial_reverse_mode.py --t-end 0.012     # ~5 min on 2 cores
"""

from __future__ import annotations

import argparse
from pathlib import Path

import model  # float64 before JAX starts

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

from model.integrate import make_controller, make_solver, trajectory_from_states
from model.integrate.peaks import PeakTracking
from model.mechanics.interface import flat_vector_field
from pipelines.build import ParameterMap, build_mechanism, solver_settings
from pipelines.config import load_mechanism

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "flores_slider_crank_3d.toml"
PATHS = ("joints.pin.clearance", "joints.pin.contact.restitution")


def objective(trajectory):
    return jnp.sum(trajectory.penetration**2) + jnp.sum(trajectory.normal_force**2)


def loss_of(mechanism, parameters, settings, wrap: bool):
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=0.012, help="record length (s)")
    args = parser.parse_args(argv)
    config = load_mechanism(CONFIG)
    mechanism = build_mechanism(config)
    parameters = ParameterMap(mechanism, PATHS)
    x0 = parameters.read(mechanism)
    window = dict(t_end=args.t_end, output_interval=args.t_end / 40, rtol=1e-9, atol=1e-12)
    forward_settings = solver_settings(config, adjoint="forward", **window)
    forward = jax.jit(jax.jacfwd(lambda x: objective(model.simulate(parameters.apply(mechanism, x), forward_settings))))(x0)
    print(f"t_end {args.t_end} s, d/d{PATHS}")
    print(f"forward mode:            {np.asarray(forward)}")
    for wrap in (True, False):
        reverse = jax.jit(jax.grad(loss_of(mechanism, parameters, solver_settings(config, **window), wrap)))(x0)
        label = "reverse, wrapped:" if wrap else "reverse, bare:"
        print(f"{label:24} {np.asarray(reverse)}  relative to forward {np.asarray(jnp.abs(reverse / forward - 1))}",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
