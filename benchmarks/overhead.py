"""What each piece of the hot path costs, and what it buys: ablations measured in one process
with the arms interleaved (the non-finite-step guard, the step-wise contact peaks, the
projection onto the constraints, the constraint drift without it, the stiff variants of the
low-speed slider-crank, the stability margin of the explicit steps, the roofline of one
evaluation and step, the field's cost per lane on each engine)::

    python -m benchmarks.overhead --list
    python -m benchmarks.overhead --case guard --repeats 6

docs/BENCHMARKS.md, docs/integration.md, docs/metrics.md and docs/engine.md record the
results.
"""

from __future__ import annotations

import model  # noqa: I001  (float64 before JAX computes anything)

import argparse
import functools
import json
import pathlib
import statistics
import sys
import time
from dataclasses import replace

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from diffrax._solver.tsit5 import _tsit5_tableau

from benchmarks import harness, peers, work_precision
from benchmarks.throughput import SWEPT_PATHS, sweep_grid
from benchmarks.work_precision import ATOL_PER_RTOL, SIMULATE, timed
from model.integrate import explicit
from model.integrate.solve import make_controller, make_solver
from model.mechanics import dynamics
from model.mechanics.interface import flat_vector_field
from pipelines.build import ParameterMap, build_mechanism, solver_settings
from pipelines.config import load_mechanism
from sweep.run import CPU_LANES, chunk_runner, prefer_single_threaded_cpu

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------- guard
ENSEMBLE_MODULE = sys.modules["model.integrate.ensemble"]


SOLVE_MODULE = sys.modules["model.integrate.solve"]


def unguarded(make_controller):
    """``make_controller`` with the guard taken out of the wrapper chain."""

    def make(mechanism, settings, rtol=None, atol=None):
        controller = make_controller(mechanism, settings, rtol, atol)
        if isinstance(controller, model.RejectNonFinite):
            return controller.controller
        return eqx.tree_at(lambda c: c.controller, controller, controller.controller.controller)

    return make


def guard_compiled(function, module, guarded: bool):
    """``jit(function)`` traced with or without the guard in ``module.make_controller``."""

    def traced(*args):
        original = module.make_controller
        module.make_controller = original if guarded else unguarded(original)
        try:
            return function(*args)
        finally:
            module.make_controller = original

    return jax.jit(traced)


def best_and_median(arms: dict, args, repeats: int) -> dict:
    """``name -> (best, median)`` wall seconds of the compiled ``arms`` called on ``args``:
    one warm-up round, then ``repeats`` interleaved rounds (:func:`benchmarks.harness.interleaved`)."""
    timings = harness.interleaved({name: functools.partial(_blocking, function, args) for name, function in arms.items()},
                                  repeats)
    return {name: (timing.best, timing.median) for name, timing in timings.items()}


def _blocking(function, args):
    return jax.block_until_ready(function(*args))


def guard(argv=None) -> int:
    """What the non-finite-step guard (``model.RejectNonFinite``) costs on the hot path: the
    Flores sweep's ensemble path and one ``model.simulate``, guarded and unguarded, compiled
    once each and timed interleaved in one process (so both arms share the machine's state).

    Run from the repository root::

        .venv/bin/python -m benchmarks.overhead --case guard [--repeats 6]
    """
    parser = argparse.ArgumentParser(description=guard.__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=6)
    args = parser.parse_args(argv)
    mechanism, settings = peers.load_flores(t_end=0.024)
    parameters = ParameterMap(mechanism, ["joints.pin.clearance", "joints.pin.contact.restitution"])
    clearance, restitution = np.meshgrid(np.linspace(1e-4, 5e-4, 8), np.linspace(0.5, 0.99, 4))
    values = jnp.asarray(np.stack([clearance.ravel(), restitution.ravel()], axis=1))
    mechanisms = jax.vmap(parameters.apply, (None, 0))(mechanism, values)

    def ensemble(points):
        return model.solve_ensemble(points, settings, 22).steps

    def single(point):
        return model.simulate(point, settings).steps

    cases = (("solve_ensemble, 32 Flores points, 22 lanes", ensemble, ENSEMBLE_MODULE, (mechanisms,)),
             ("simulate, one Flores solve", single, SOLVE_MODULE, (mechanism,)))
    for label, function, module, call_args in cases:
        arms = {guard: guard_compiled(function, module, guard == "guarded") for guard in ("guarded", "unguarded")}
        result = best_and_median(arms, call_args, args.repeats)
        (best_on, median_on), (best_off, median_off) = result["guarded"], result["unguarded"]
        print(f"{label}: best {best_on:.3f} s guarded / {best_off:.3f} s unguarded ({best_on / best_off - 1:+.1%}); "
              f"median {median_on:.3f} / {median_off:.3f} s ({median_on / median_off - 1:+.1%})", flush=True)
    return 0


# ---------------------------------------------------------------------- peaks
PEAKS_MODULE = sys.modules["model.integrate.peaks"]


def peaks_compiled(function, with_peaks: bool):
    """``jit(function)`` traced with the per-step reduction, or with the identity instead."""

    def traced(*args):
        original = PEAKS_MODULE.update_peaks  # what simulate's and the lanes' steps both call
        if not with_peaks:
            PEAKS_MODULE.update_peaks = lambda peaks, *_: peaks
        try:
            return function(*args)
        finally:
            PEAKS_MODULE.update_peaks = original

    return jax.jit(traced)


def peaks(argv=None) -> int:
    """What the step-wise contact peaks (``model/integrate/peaks.py``) cost: the Flores sweep's
    ensemble path and one ``model.simulate`` (24 ms, 10 us output), with the per-step reduction
    and with it replaced by the identity, compiled once each and timed interleaved in one
    process (so both arms share the machine's state). The step counts are printed too: the
    reduction reads the steps and must not change them.

    Run from the repository root::

        .venv/bin/python -m benchmarks.overhead --case peaks [--repeats 6]
    """
    parser = argparse.ArgumentParser(description=peaks.__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=6)
    args = parser.parse_args(argv)
    mechanism, settings = peers.load_flores(t_end=0.024)
    parameters = ParameterMap(mechanism, ["joints.pin.clearance", "joints.pin.contact.restitution"])
    clearance, restitution = np.meshgrid(np.linspace(1e-4, 5e-4, 8), np.linspace(0.5, 0.99, 4))
    values = jnp.asarray(np.stack([clearance.ravel(), restitution.ravel()], axis=1))
    mechanisms = jax.vmap(parameters.apply, (None, 0))(mechanism, values)

    def ensemble(points):
        return jnp.sum(model.solve_ensemble(points, settings, 22).steps)

    def single(point):
        return model.simulate(point, settings).steps

    cases = (("solve_ensemble, 32 Flores points, 22 lanes", ensemble, (mechanisms,)),
             ("simulate, one Flores solve", single, (mechanism,)))
    for label, function, call_args in cases:
        arms = {arm: peaks_compiled(function, arm == "peaks") for arm in ("peaks", "no peaks")}
        steps = {arm: int(arms[arm](*call_args)) for arm in arms}
        result = best_and_median(arms, call_args, args.repeats)
        (best_on, median_on), (best_off, median_off) = result["peaks"], result["no peaks"]
        print(f"{label}: steps {steps['peaks']} with peaks / {steps['no peaks']} without; "
              f"best {best_on:.3f} s / {best_off:.3f} s ({best_on / best_off - 1:+.1%}); "
              f"median {median_on:.3f} / {median_off:.3f} s ({median_on / median_off - 1:+.1%})", flush=True)
    return 0


# ---------------------------------------------------------------------- projection
def projection(argv=None) -> int:
    """In-run throughput of the Flores sweep with and without the projection onto the ideal
    joints' constraints after each step (``SolverSettings.projection_iterations``), in one run.

    The sweep's chunk function (``sweep.run.chunk_runner``: refilling lanes, metrics inside the
    compiled function) on points of the Flores 16 x 16 clearance x restitution grid over two
    revolutions, one compiled function per setting, timed alternately ``--repeats`` times: medians of the wall
    time and of the process's CPU time (single-threaded, so on a loaded shared machine the CPU
    time is the steadier figure)::

        taskset -c 0 python -m benchmarks.overhead --case projection --points 128 --repeats 5   # ~3 min

    docs/integration.md ("Projection onto the constraints") records the result.
    """
    parser = argparse.ArgumentParser(description=projection.__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=128, help="points of the 16 x 16 grid (spread over it)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--lanes", type=int, default=CPU_LANES)
    args = parser.parse_args(argv)
    prefer_single_threaded_cpu()  # as in the sweep's worker processes, before JAX starts
    grid = sweep_grid(16, 16)
    points = grid[:: max(1, len(grid) // args.points)][: args.points]
    runners = {}
    for iterations in (0, 1):
        mechanism, settings = peers.load_flores(t_end=24e-3, projection_iterations=iterations)
        runners[iterations], compile_seconds = chunk_runner(mechanism, settings, SWEPT_PATHS, len(points),
                                                            lanes=args.lanes, resolver=ParameterMap)
        print(f"projection_iterations={iterations}: compiled in {compile_seconds:.1f} s", flush=True)
    timings = harness.interleaved({iterations: functools.partial(run, points) for iterations, run in runners.items()},
                                  args.repeats)
    seconds = {iterations: timing.wall for iterations, timing in timings.items()}
    cpu = {iterations: timing.cpu for iterations, timing in timings.items()}
    steps = {iterations: float(np.mean(timing.result["steps"])) for iterations, timing in timings.items()}
    print("| projection_iterations | sims/s (median wall) | sims/s (median CPU) | wall runs (s) | CPU runs (s) "
          "| steps mean |")
    print("|---:|---:|---:|---|---|---:|")
    for iterations, times in seconds.items():
        print(f"| {iterations} | {len(points) / statistics.median(times):.1f} | "
              f"{len(points) / statistics.median(cpu[iterations]):.1f} | {', '.join(f'{t:.2f}' for t in times)} | "
              f"{', '.join(f'{t:.2f}' for t in cpu[iterations])} | {steps[iterations]:.0f} |")
    for label, record in (("wall", seconds), ("CPU", cpu)):
        ratio = statistics.median(record[0]) / statistics.median(record[1])
        print(f"throughput with projection / without ({label} time): {ratio:.3f}")
    return 0


# ---------------------------------------------------------------------- drift
def drift(argv=None) -> int:
    """Ideal-joint drift of configs: the largest constraint violation over a run, with
    Baumgarte stabilisation alone (``projection_iterations = 0``) and with the projection onto
    the constraints after every step (the default), in one process::

        python -m benchmarks.overhead --case drift --t-end "150 ms" configs/flores_slider_crank.toml
        python -m benchmarks.overhead --case drift --t-end "1 s" --ideal configs/flores_slider_crank.toml
        python -m benchmarks.overhead --case drift --t-end "1 s" --only 1 configs/*.toml   # projection only

    docs/integration.md ("Projection onto the constraints") records the results.
    """
    parser = argparse.ArgumentParser(description=drift.__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="+")
    parser.add_argument("--t-end", default="150 ms", help="window, with its unit")
    parser.add_argument("--output-interval", default="0.1 ms")
    parser.add_argument("--ideal", action="store_true", help="the mechanism with its clearance joints made ideal")
    parser.add_argument("--only", type=int, choices=(0, 1), help="one setting of projection_iterations only")
    args = parser.parse_args(argv)
    print("| config | solver | projection_iterations | max violation | final violation | steps | status | "
          "run (s) |\n|---|---|---:|---:|---:|---:|---|---:|", flush=True)
    for path in args.configs:
        config = load_mechanism(path, [f"simulation.t_end={args.t_end}",
                                       f"simulation.output_interval={args.output_interval}"])
        mechanism = build_mechanism(config)
        mechanism = mechanism.idealised() if args.ideal else mechanism
        for iterations in (0, 1) if args.only is None else (args.only,):
            settings = solver_settings(config, projection_iterations=iterations)
            compiled = jax.jit(model.simulate, static_argnums=1).lower(mechanism, settings).compile()
            start = time.perf_counter()
            trajectory = jax.block_until_ready(compiled(mechanism))
            seconds = time.perf_counter() - start
            violation = np.asarray(trajectory.constraint_violation)
            print(f"| {path} | {settings.solver} | {iterations} | {violation.max():.2e} | {violation[-1]:.2e} | "
                  f"{int(trajectory.steps)} | {model.result_message(int(trajectory.result))} | {seconds:.1f} |",
                  flush=True)
    return 0


# ---------------------------------------------------------------------- stiff
LOW_SPEED_CONFIG = REPOSITORY / "configs" / "low_speed_slider_crank.toml"


LINEAR = ("joints.pin.contact.exponent=1.0", 'joints.pin.contact.stiffness="1e12 N/m"')


VARIANTS = {
    "hertz x1e4 e0.9": ("joints.pin.contact.stiffness_factor=1e4", "joints.pin.contact.restitution=0.9"),
    "hertz x1e4 e0.05": ("joints.pin.contact.stiffness_factor=1e4", "joints.pin.contact.restitution=0.05"),
    "hertz x1e6 e0.9": ("joints.pin.contact.stiffness_factor=1e6", "joints.pin.contact.restitution=0.9"),
    "hertz x1e6 e0.05": ("joints.pin.contact.stiffness_factor=1e6", "joints.pin.contact.restitution=0.05"),
    "linear 1e12 N/m e0.9": (*LINEAR, "joints.pin.contact.restitution=0.9"),
    "linear 1e12 N/m e0.05": (*LINEAR, "joints.pin.contact.restitution=0.05"),
}


REFERENCE = dict(solver="dopri8", rtol=1e-10)


REFERENCE_BOUND = 0.2  # share of the contact period, as a fixed dtmax on every step (the simpler alternative)


def stiff_solve(mechanism, settings, rtol: float, repeats: int):
    SIMULATE(mechanism, settings, rtol, ATOL_PER_RTOL * rtol)  # compile (tolerances are traced)
    return timed(SIMULATE, mechanism, settings, rtol, ATOL_PER_RTOL * rtol, repeats=repeats)


def force_error(trajectory, reference) -> float:
    """Largest deviation of the sampled normal force, relative to the reference's peak (-)."""
    force, expected = np.asarray(trajectory.normal_force[:, 0]), np.asarray(reference.normal_force[:, 0])
    return float(np.max(np.abs(force - expected)) / np.max(np.abs(expected)))


def run_variant(overrides, solvers, tolerances, t_end, output_interval, repeats, progress=print) -> dict:
    mechanism, settings = peers.load_flores(LOW_SPEED_CONFIG, overrides, t_end=t_end, output_interval=output_interval,
                                                 max_steps=2_000_000, dtmax_contact_share=None)
    period = float(model.contact_periods(mechanism).min())
    # the reference keeps a fixed bound: unbounded, Dopri8 at rtol 1e-10 crawled through the chatter
    reference_settings = replace(settings, solver=REFERENCE["solver"], dtmax=REFERENCE_BOUND * period)
    reference, _ = stiff_solve(mechanism, reference_settings, REFERENCE["rtol"], 1)
    rows = []
    for solver in solvers:
        for rtol in tolerances:
            trajectory, seconds = stiff_solve(mechanism, replace(settings, solver=solver), rtol, repeats)
            rows.append(dict(solver=solver, rtol=rtol, seconds=seconds, steps=int(trajectory.steps),
                             rejected=int(trajectory.rejected_steps), result=int(trajectory.result),
                             error=force_error(trajectory, reference)))
            progress(f"  {solver:8s} rtol {rtol:.0e}: {seconds:7.3f} s, {rows[-1]['steps']:6d} steps, "
                     f"error {rows[-1]['error']:.1e}")
    return dict(contact_period=period, ratio=output_interval / period, reference_steps=int(reference.steps), rows=rows)


def coarse_output_steps(overrides, solvers, rtol, t_end, output_interval) -> dict:
    """Steps at the study's output interval and at ten times it."""
    counts = {}
    for interval in (output_interval, 10 * output_interval):
        mechanism, settings = peers.load_flores(LOW_SPEED_CONFIG, overrides, t_end=t_end, output_interval=interval,
                                                     max_steps=2_000_000, dtmax_contact_share=None)
        for solver in solvers:
            counts[f"{solver} @ {interval:g} s"] = int(SIMULATE(mechanism, replace(settings, solver=solver), rtol,
                                                                ATOL_PER_RTOL * rtol).steps)
    return counts


def stiff_table(study: dict) -> str:
    lines = ["| variant (T_c, ratio) | solver | rtol | time (s) | steps | force error |", "|---|---|---|---|---|---|"]
    for name, variant in study["variants"].items():
        label = f"{name} ({variant['contact_period'] * 1e6:.2f} us, {variant['ratio']:.0f})"
        for row in variant["rows"]:
            lines.append(f"| {label} | {row['solver']} | {row['rtol']:.0e} | {row['seconds']:.3f} | {row['steps']} | "
                         f"{row['error']:.1e} |")
            label = ""
    return "\n".join(lines)


def stiff(argv=None) -> int:
    """Stiff variants of the low-speed slider-crank (persistent contact): does a stiff
    solver win anywhere? The evidence behind ``solver = "auto"`` (``model/integrate/solver_choice.py``).

    Each variant stiffens the contact of (Hertz stiffness x1e4 and x1e6, or a linear
    1e12 N/m law) and sets its restitution (0.9 lightly damped, 0.05 heavily damped); the
    ratio output interval / contact period runs from tens to thousands. Every solver runs at
    each rtol (atol = 1e-3 rtol) without the contact-period step bound (``dtmax_contact_share =
    None``: a bound of a fifth of the period would cap every solver's step alike); error: the largest deviation of the sampled normal force
    from a Dopri8 rtol-1e-10 reference, relative to its peak. Cost: compiled run time (best
    of three) and steps. One variant is rerun at a ten times coarser output to show that the
    output interval does not change the steps.

    Run from the repository root (see ``docs/integration.md``)::

        .venv/bin/python -m benchmarks.overhead --case stiff

    Writes ``outputs/benchmarks/stiff_variants.json`` and prints a Markdown table.
    """
    parser = argparse.ArgumentParser(description=stiff.__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated names of VARIANTS")
    parser.add_argument("--solvers", default="tsit5,rodas4,rodas5p")
    parser.add_argument("--rtols", default="1e-4,1e-6")
    parser.add_argument("--t-end", type=float, default=0.02, help="simulated time (s)")
    parser.add_argument("--output-interval", type=float, default=1e-4, help="output interval (s)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per cell (best counts)")
    args = parser.parse_args(argv)
    solvers, tolerances = args.solvers.split(","), [float(value) for value in args.rtols.split(",")]
    study = dict(command="python -m benchmarks.overhead --case stiff " + " ".join(argv or []), variants={})
    for name in args.variants.split(","):
        print(name, flush=True)
        study["variants"][name] = run_variant(VARIANTS[name], solvers, tolerances, args.t_end, args.output_interval,
                                              args.repeats, progress=lambda line: print(line, flush=True))
    first = args.variants.split(",")[-1]
    study["coarse_output"] = {first: coarse_output_steps(VARIANTS[first], solvers, tolerances[0], args.t_end,
                                                         args.output_interval)}
    out = REPOSITORY / "outputs" / "benchmarks" / "stiff_variants.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(study, indent=1))
    temporary.replace(out)
    print(stiff_table(study))
    print("steps by output interval:", json.dumps(study["coarse_output"]))
    return 0


# ---------------------------------------------------------------------- stability
AT_BOUNDARY = 1.5  # margin below which a step counts as held by stability


GROWTH_TOLERANCE = 1e-3  # |R| - 1 per step that still counts as stable (see the module docstring)


def stability_function(z: np.ndarray) -> np.ndarray:
    """Tsit5's ``R(z) = 1 + z b^T (I - zA)^{-1} 1`` for complex ``z`` (any shape).

    ``A`` is strictly lower triangular (explicit), so ``(I - zA)^{-1} = sum_k (zA)^k`` ends
    at ``k = stages - 1`` and ``R`` is the polynomial ``1 + sum_k (b^T A^k 1) z^(k+1)``."""
    tableau = _tsit5_tableau
    stages = len(tableau.c) + 1
    a = np.zeros((stages, stages))
    for row, coefficients in enumerate(tableau.a_lower, start=1):
        a[row, : len(coefficients)] = coefficients
    b = np.asarray(tableau.b_sol)
    coefficients = [b @ np.linalg.matrix_power(a, k) @ np.ones(stages) for k in range(stages)]
    z = np.asarray(z, complex)
    return 1 + sum(c * z ** (k + 1) for k, c in enumerate(coefficients))


def stability_radius(angles: np.ndarray, r_max: float = 10.0, samples: int = 4000) -> np.ndarray:
    """``r(theta)``: distance from 0 to the first point of ``|R| > 1 + GROWTH_TOLERANCE``
    along each ray."""
    radii = np.linspace(r_max / samples, r_max, samples)
    unstable = np.abs(stability_function(radii[None, :] * np.exp(1j * angles[:, None]))) > 1 + GROWTH_TOLERANCE
    first = np.where(unstable.any(axis=1), unstable.argmax(axis=1), samples - 1)
    return radii[np.maximum(first - 1, 0)]


def accepted_steps(mechanism, settings, rtol: float):
    """``(t, y)`` at every accepted Tsit5 step of the case, with the model's controller."""
    settings = replace(settings, solver="tsit5", rtol=rtol, atol=ATOL_PER_RTOL * rtol)
    solution = diffrax.diffeqsolve(
        diffrax.ODETerm(flat_vector_field), make_solver(settings), 0.0, settings.t_end, None,
        mechanism.flatten(mechanism.initial_state()), args=mechanism, saveat=diffrax.SaveAt(steps=True),
        stepsize_controller=make_controller(mechanism, settings), max_steps=settings.max_steps,
    )
    count = int(solution.stats["num_accepted_steps"])
    return np.asarray(solution.ts[: count]), np.asarray(solution.ys[: count])


def jacobian_eigenvalues(mechanism, ts: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Eigenvalues (1/s) of ``df/dy`` at every saved state but the last."""
    jacobian = jax.jit(jax.vmap(jax.jacfwd(lambda t, y: mechanism.flat_vector_field(t, y), argnums=1)))
    return np.linalg.eigvals(np.asarray(jacobian(jnp.asarray(ts[:-1]), jnp.asarray(ys[:-1]))))


def stability_margins(eigenvalues: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """``h_stab / h`` per step, from each step's Jacobian eigenvalues (rows) and size (s)."""
    # the left half plane only: growing modes are limited by accuracy, not stability
    angles = np.clip(np.abs(np.angle(eigenvalues)), np.pi / 2, np.pi)
    grid = np.linspace(np.pi / 2, np.pi, 181)
    radius = np.interp(angles, grid, stability_radius(grid))
    magnitude = np.abs(eigenvalues)
    stable_step = np.min(np.where(magnitude > 0, radius / np.where(magnitude > 0, magnitude, 1.0), np.inf), axis=1)
    return stable_step / steps


def in_contact(mechanism, ys: np.ndarray) -> np.ndarray:
    """Steps that start with any clearance joint penetrated."""
    contact = jax.vmap(lambda y: model.evaluate(mechanism, 0.0, mechanism.unflatten(y)).contact)(jnp.asarray(ys[:-1]))
    return np.asarray(contact.penetration > 0).any(axis=1)


def stability_load(name: str):
    if name in work_precision.PROBLEMS:
        return work_precision.load_case(work_precision.PROBLEMS[name])
    overrides = VARIANTS[name]
    return peers.load_flores(LOW_SPEED_CONFIG, overrides, t_end=0.002, output_interval=1e-4,
                                  max_steps=2_000_000)


def stability_study(name: str, rtol: float) -> tuple[dict, dict]:
    """The case's summary row and its per-step series (step start times, margins, contact)."""
    mechanism, settings = stability_load(name)
    ts, ys = accepted_steps(mechanism, settings, rtol)
    eigenvalues, steps = jacobian_eigenvalues(mechanism, ts, ys), np.diff(ts)
    margin, spectral = stability_margins(eigenvalues, steps), steps * np.abs(eigenvalues).max(axis=1)
    contact = in_contact(mechanism, ys)
    series = dict(t=ts[:-1], margin=margin, contact=contact)
    row = dict(case=name, rtol=rtol, steps=int(margin.size), contact_steps=int(contact.sum()),
               contact_period=float(model.contact_periods(mechanism).min()))
    for label, mask in (("all", np.ones_like(contact)), ("contact", contact)):
        selected = margin[mask]
        row[f"{label}_median_margin"] = float(np.median(selected)) if selected.size else None
        row[f"{label}_min_margin"] = float(selected.min()) if selected.size else None
        row[f"{label}_share_at_boundary"] = float(np.mean(selected < AT_BOUNDARY)) if selected.size else None
        row[f"{label}_max_h_rho"] = float(spectral[mask].max()) if selected.size else None
    return row, series


def stability_plot(rows: list[dict], series: list[dict], path: pathlib.Path) -> None:
    """One panel per case: every step's margin against time, contact steps highlighted."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(len(rows), 3)
    lines = -(-len(rows) // columns)
    fig, axes = plt.subplots(lines, columns, figsize=(4.5 * columns, 3.4 * lines), squeeze=False, sharey=True)
    for ax, row, steps in zip(axes.flat, rows, series):
        time_ms = 1e3 * steps["t"]
        ax.semilogy(time_ms[~steps["contact"]], steps["margin"][~steps["contact"]], ".", ms=3, color="0.6",
                    label="free flight")
        ax.semilogy(time_ms[steps["contact"]], steps["margin"][steps["contact"]], ".", ms=3, color="C3",
                    label="in contact")
        ax.axhline(1.0, color="k", lw=1)
        ax.axhline(AT_BOUNDARY, color="k", lw=0.8, ls=":")
        ax.set_title(f"{row['case']} (rtol {row['rtol']:g})", fontsize=9)
        ax.set_xlabel("t (ms)")
        ax.grid(True, which="both", alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("stable step / step taken")
    for ax in list(axes.flat)[len(rows):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=7)
    fig.suptitle("Tsit5 stability margin per accepted step (1 = on the stability boundary; "
                 "above it accuracy sets the step)", fontsize=10)
    fig.tight_layout()
    from pipelines.io import save_figure

    save_figure(path, fig)
    plt.close(fig)


def stability_table(rows: list[dict]) -> str:
    lines = ["| case | rtol | steps (in contact) | contact steps: median / min margin | "
             f"share of contact steps with margin < {AT_BOUNDARY} | max h rho(J) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['rtol']:g} | {r['steps']} ({r['contact_steps']}) | "
            f"{r['contact_median_margin']:.2f} / {r['contact_min_margin']:.2f} | "
            f"{100 * r['contact_share_at_boundary']:.0f} % | {r['contact_max_h_rho']:.2f} |")
    return "\n".join(lines)


def stability(argv=None) -> int:
    """Is the explicit solver's step set by stability or by accuracy? The stability margin of
    every accepted Tsit5 step, and what it says about the stiff path.

    An implicit solver can beat an explicit one only where the explicit step is held down by
    its stability region rather than by its error estimate. For each accepted step
    ``(t_n, y_n, h_n)`` of a Tsit5 solve this script takes the eigenvalues ``lambda`` of the
    Jacobian ``df/dy`` at ``y_n`` and the largest step Tsit5 could take along each of them
    and stay stable,

        h_stab = min_lambda  r(arg lambda) / |lambda|,   r(theta) = sup{r : |R(r e^{i theta})| <= 1 + eps},

    where ``R(z) = 1 + z b^T (I - z A)^{-1} 1`` is Tsit5's stability function (Hairer &
    Wanner, *Solving ODEs II*, IV.2; tableau from ``diffrax``). The step's **margin** is
    ``h_stab / h_n``: near 1 the step sits on the stability boundary (the problem is stiff at
    this tolerance, an L-stable method could step further); well above 1 the step is set by
    accuracy, and an implicit method of similar order must take as many steps while paying a
    Jacobian and a linear solve on each. Eigenvalues in the right half plane (growing modes of
    the dynamics, e.g. constraint drift) are taken on the imaginary axis. ``eps = 1e-3``
    (``GROWTH_TOLERANCE``): Tsit5's region leaves the imaginary axis at 0.48 but grows there
    only by 1e-4 per step at |z| = 1 (3e-3 at 1.5), which accuracy, not stability, limits; a
    growth of 0.1 % per step puts the boundary at 1.25 on the axis and leaves it at 3.5 on the
    negative real axis.

    Run from the repository root::

        .venv/bin/python -m benchmarks.overhead --case stability [--cases ...] [--rtols 1e-6]

    Prints a Markdown table and writes ``outputs/benchmarks/stability_margin.json`` and the
    figure ``docs/figures/stability_margin.png`` (margin of every step against time).
    """
    parser = argparse.ArgumentParser(description=stability.__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="flores,flores_stiff100,low_speed_slider_crank,fourbar,hertz x1e4 e0.9,hertz x1e4 e0.05,hertz x1e6 e0.05")
    parser.add_argument("--rtols", default="1e-6")
    parser.add_argument("--out", default=str(REPOSITORY / "outputs" / "benchmarks" / "stability_margin.json"))
    parser.add_argument("--figure", default=str(REPOSITORY / "docs" / "figures" / "stability_margin.png"))
    args = parser.parse_args(argv)
    jax.config.update("jax_enable_x64", True)
    rows, series = [], []
    for name in args.cases.split(","):
        for rtol in (float(r) for r in args.rtols.split(",")):
            row, steps = stability_study(name, rtol)
            rows.append(row)
            series.append(steps)
            print(json.dumps(row), flush=True)
    print(stability_table(rows))
    stability_plot(rows, series, pathlib.Path(args.figure))
    from pipelines.io import write_json

    command = "python -m benchmarks.overhead --case stability " + " ".join(argv or [])
    write_json(args.out, dict(command=command, rows=rows))
    return 0


# ---------------------------------------------------------------------- roofline
FLORES_CONFIG = REPOSITORY / "configs" / "flores_slider_crank.toml"


STEP = 1e-6  # s, a typical Tsit5 step of the Flores benchmark in free flight


def clock_ghz() -> float:
    try:
        megahertz = [float(line.split(":")[1]) for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("cpu MHz")]
        return megahertz[0] / 1e3 if megahertz else 2.6
    except OSError:
        return 2.6


def cost(function, *args) -> tuple[float, float]:
    """(flop, bytes accessed) of one call, by XLA's cost analysis of the compiled program."""
    analysis = jax.jit(function).lower(*args).compile().cost_analysis()
    analysis = analysis[0] if isinstance(analysis, list) else analysis
    return float(analysis.get("flops", 0.0)), float(analysis.get("bytes accessed", 0.0))


def seconds_per_call(function, y0, mechanism, calls: int, repeats: int = 5) -> float:
    """Time of one ``function(y, mechanism)`` call, from ``calls`` chained calls in one
    compiled loop; the mechanism is an argument, not a constant XLA could fold."""
    looped = jax.jit(lambda y, m: jax.lax.fori_loop(0, calls, lambda _, y: function(y, m), y))
    jax.block_until_ready(looped(y0, mechanism))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(looped(y0, mechanism))
        best = min(best, time.perf_counter() - start)
    return best / calls


def per_lane(mechanism, lanes: int):
    """One mechanism per lane, built as the sweep builds its points' (``vmap`` of a
    :class:`~pipelines.build.ParameterMap`, here writing the config's own clearance), so
    every leaf has a lanes axis and no parameter is a compile-time constant."""
    parameters = ParameterMap(mechanism, ("joints.pin.clearance",))
    values = jnp.broadcast_to(parameters.read(mechanism), (lanes, 1))
    return jax.vmap(parameters.apply, (None, 0))(mechanism, values)


def roofline(argv=None) -> int:
    """How far one vector-field evaluation and one Tsit5 step of the Flores slider-crank are from
    what a CPU core allows: XLA's cost analysis (flop and bytes of one call) against the
    measured time of many calls inside one compiled loop (no Python dispatch), for one
    simulation and for a batch of lanes (``jax.vmap``, as the refilling lanes run them: each
    lane with its own copy of the mechanism, so that XLA cannot fold its parameters). The step
    is timed as a solve takes it (first stage from the previous step), with the lanes' Tsit5
    (``model.integrate.explicit``) and, for comparison, with diffrax's own stage loop.

        python -m benchmarks.overhead --case roofline                    # 1 and 32 lanes
        python -m benchmarks.overhead --case roofline --lanes 1 16 32 64 --peak 41.6

    ``--peak``: the core's float64 peak in GFLOP/s (default: 16 flop per cycle, two 256-bit
    FMA units, at the clock ``/proc/cpuinfo`` reports); the scalar peak is a quarter of it.
    Prints one Markdown table.
    """
    parser = argparse.ArgumentParser(description=roofline.__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--calls", type=int, default=2000, help="chained calls per timed loop")
    parser.add_argument("--peak", type=float, default=None, help="float64 GFLOP/s of one core")
    args = parser.parse_args(argv)
    peak = args.peak or 16 * clock_ghz()
    mechanism = build_mechanism(load_mechanism(FLORES_CONFIG))
    y0 = mechanism.flatten(mechanism.initial_state())
    terms = diffrax.ODETerm(flat_vector_field)
    # a step inside a solve: the first stage is the previous step's last (FSAL), 6 evaluations
    state = (jnp.array(False), flat_vector_field(0.0, y0, mechanism))

    def evaluation(y, mechanism):
        # chained so XLA cannot hoist the calls out of the loop; 2 flop per state entry extra
        return y + 1e-12 * flat_vector_field(0.0, y, mechanism)

    def stepper(solver):
        return lambda y, mechanism: solver.step(terms, 0.0, STEP, y, mechanism, state, made_jump=False)[0]

    print(f"Flores slider-crank, {y0.size} states; peak {peak:.1f} GFLOP/s float64 per core "
          f"(vector), {peak / 4:.1f} scalar; {jax.devices()[0].device_kind}\n")
    print("| what | lanes | flop / lane | bytes / lane | flop / byte | time / lane | GFLOP/s | share of scalar peak | share of vector peak |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    evaluation_flop: dict[int, float] = {}
    for name, function, evaluations in (("vector-field evaluation", evaluation, 1),
                                        ("Tsit5 step", stepper(explicit.Tsit5()), 6),
                                        ("Tsit5 step, diffrax's stage loop", stepper(diffrax.Tsit5()), 6)):
        for lanes in args.lanes:
            batched = function if lanes == 1 else jax.vmap(function)
            ys = y0 if lanes == 1 else jnp.broadcast_to(y0, (lanes, y0.size)) * (1 + 1e-9 * jnp.arange(lanes))[:, None]
            mechanisms = mechanism if lanes == 1 else per_lane(mechanism, lanes)
            flop, moved = cost(batched, ys, mechanisms)
            if evaluations == 1:
                evaluation_flop[lanes] = flop
                traffic = f"{moved / lanes:,.0f} | {flop / max(moved, 1):.2f}"
            else:
                # diffrax runs the stages in a loop, whose body XLA's analysis counts once: count
                # the evaluations instead (a lower bound, without the stage sums); bytes unknown
                flop, traffic = evaluations * evaluation_flop[lanes], " | "
            per_call = seconds_per_call(batched, ys, mechanisms, args.calls // evaluations)
            rate = flop / per_call / 1e9
            print(f"| {name} | {lanes} | {flop / lanes:,.0f} | {traffic} | {per_call / lanes * 1e6:.2f} us | "
                  f"{rate:.2f} | {rate / (peak / 4):.0%} | {rate / peak:.0%} |")
    return 0


# ---------------------------------------------------------------------- engine_field
LANES = 128
EVALUATIONS = 100  # per compiled loop


def _looped(function):
    """``EVALUATIONS`` evaluations of ``function(mechanisms, y, *rest)`` in one compiled loop
    (each one's input depends on the last one's output, so none is hoisted)."""

    def run(mechanisms, y, *rest):
        def body(_, y):
            out = function(mechanisms, y, *rest)
            return y + 1e-300 * jnp.sum(out.reshape(LANES, -1), axis=1, keepdims=True)

        return jax.lax.fori_loop(0, EVALUATIONS, body, y)

    return jax.jit(run)


def _engine_config(case, argv, default: str):
    """The config named on the command line of an engine comparison ``case`` (``default``
    without one), the project's JAX settings on."""
    parser = argparse.ArgumentParser(description=case.__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default=default)
    args = parser.parse_args(argv)
    model.configure()
    return load_mechanism(args.config)


def engine_field(argv=None) -> int:
    """What one evaluation costs per lane on each engine: the vector field, and the two
    queries the peak tracking makes at every sample of a step (body accelerations, contact
    values), vmapped over 128 lanes of a config (default the Flores slider-crank; its first
    clearance joint's clearance from 0.2 to 1 times the configured one, 0.1-0.5 mm for the
    slider-crank): 100 evaluations in one compiled loop (a single call's time is mostly
    dispatch), 20 rounds in which every query of both engines runs once in turn (so that a
    change of the machine's load reaches both engines alike), wall and CPU time of the best
    round and the median CPU time, and the joint engine's over the absolute engine's
    (docs/BENCHMARKS.md, section 1e; docs/engine.md)::

        python -m benchmarks.overhead --case engine-field
        python -m benchmarks.overhead --case engine-field configs/double_link_clearance.toml
    """
    config = _engine_config(engine_field, argv, "configs/flores_slider_crank.toml")
    path = f"joints.{build_mechanism(config, 'absolute').clearance_names[0]}.clearance"
    arms = {}
    for engine in ("joint", "absolute"):
        base = build_mechanism(config, engine)
        parameters = ParameterMap(base, [path])
        values = jnp.linspace(0.2, 1.0, LANES)[:, None] * parameters.read(base)
        mechanisms = jax.vmap(parameters.apply, (None, 0))(base, values)
        y0 = jax.jit(jax.vmap(lambda m: m.flatten(m.initial_state())))(mechanisms)
        rate = jax.jit(jax.vmap(lambda m, y: m.flat_vector_field(0.0, y)))(mechanisms, y0)
        queries = {"vector field": (_looped(jax.vmap(lambda m, y: m.flat_vector_field(0.0, y))), (mechanisms, y0)),
                   "body accelerations": (_looped(jax.vmap(lambda m, y, r: m.body_accelerations(y, r))),
                                          (mechanisms, y0, rate)),
                   "contact values": (_looped(jax.vmap(lambda m, y: m.contact_values(y))), (mechanisms, y0))}
        arms.update({(engine, name): functools.partial(lambda f, a: jax.block_until_ready(f(*a)), function, args)
                     for name, (function, args) in queries.items()})
    timings = harness.interleaved(arms, repeats=20)
    per_lane = 1e9 / (LANES * EVALUATIONS)
    rows = [[f"{engine}: {name}", f"{t.best * per_lane:.0f}", f"{t.best_cpu * per_lane:.0f}",
             f"{t.median_cpu * per_lane:.0f}",
             f"{t.median_cpu / timings['absolute', name].median_cpu:.2f}" if engine == "joint" else ""]
            for (engine, name), t in timings.items()]
    print(harness.markdown_table(["engine: evaluation", "ns per lane (wall, best)", "ns per lane (CPU, best)",
                                  "ns per lane (CPU, median)", "joint / absolute (CPU, median)"], rows))
    return 0


# ---------------------------------------------------------------------- engine_jacobian
def engine_jacobian(argv=None) -> int:
    """What a stiff solver's Jacobian costs on each engine: ``jax.jit(f)`` and
    ``jax.jit(jax.jacfwd(f))`` of ``f = lambda y: mechanism.flat_vector_field(0.0, y)`` at a
    config's start state (default the 3-D flexible cantilever), one lane, best of 20 calls in
    CPU milliseconds (docs/engine.md)::

        python -m benchmarks.overhead --case engine-jacobian
        python -m benchmarks.overhead --case engine-jacobian configs/double_link_flexible.toml
    """
    config = _engine_config(engine_jacobian, argv, "configs/flexible_cantilever_3d.toml")
    rows = []
    for engine in ("joint", "absolute"):
        mechanism = build_mechanism(config, engine)
        y0 = jax.jit(lambda m: m.flatten(m.initial_state()))(mechanism)
        field = jax.jit(lambda m, y: m.flat_vector_field(0.0, y))
        jacobian = jax.jit(jax.jacfwd(lambda m, y: m.flat_vector_field(0.0, y), argnums=1))
        arms = {name: functools.partial(lambda f: jax.block_until_ready(f(mechanism, y0)), function)
                for name, function in (("vector field", field), ("its Jacobian", jacobian))}
        timings = harness.interleaved(arms, repeats=20)
        rows += [[f"{engine}: {name}", f"{y0.size}", f"{t.best * 1e3:.2f}", f"{t.best_cpu * 1e3:.2f}"]
                 for name, t in timings.items()]
    print(harness.markdown_table(["engine: evaluation", "state entries", "ms (wall)", "ms (CPU)"], rows))
    return 0


# ---------------------------------------------------------------------- engine_outputs
OUTPUT_SAMPLES = 301  # a 3 ms simulate run's samples at its 0.01 ms output interval


def engine_outputs(argv=None) -> int:
    """What a joint-engine trajectory's post-processing costs: its own outputs
    (``trajectory_from_states`` on the tree: :meth:`~model.mechanics.tree.TreeMechanism.outputs`)
    against the absolute engine's evaluation at the mapped absolute states
    (``trajectory_from_states`` on the absolute description), over ``OUTPUT_SAMPLES`` states
    of a config on the joint engine (default the Flores slider-crank; its start, coordinates
    and rates moved by 1e-4 per sample): CPU seconds to trace, lower and compile each
    (a new function every repeat, best of 3) and to run it (best of 20), in one process
    (docs/engine.md)::

        python -m benchmarks.overhead --case engine-outputs
        python -m benchmarks.overhead --case engine-outputs configs/double_link_clearance.toml
    """
    from model.integrate.trajectory import trajectory_from_states

    tree = build_mechanism(_engine_config(engine_outputs, argv, "configs/flores_slider_crank.toml"), "joint")
    start = tree.initial_state()
    steps = jnp.arange(OUTPUT_SAMPLES, dtype=start.zd.dtype)[:, None] * 1e-4
    states = jax.tree_util.tree_map(lambda leaf: jnp.broadcast_to(leaf, (OUTPUT_SAMPLES,) + leaf.shape), start)
    states = states._replace(z=states.z + steps, zd=states.zd + steps)
    t = jnp.linspace(0.0, 3e-3, OUTPUT_SAMPLES)
    paths = {"joint engine's outputs": lambda m, t, y: trajectory_from_states(m, t, y),
             "absolute engine at the absolute states": lambda m, t, y: trajectory_from_states(
                 m.absolute, t, jax.vmap(m.state_absolute)(y))}
    rows = []
    for name, path in paths.items():
        compile_cpu = []
        for _ in range(3):
            begin = time.process_time()
            compiled = jax.jit(lambda m, t, y, path=path: path(m, t, y)).lower(tree, t, states).compile()
            compile_cpu.append(time.process_time() - begin)
        timing = harness.interleaved({name: lambda: jax.block_until_ready(compiled(tree, t, states))}, repeats=20)[name]
        rows.append([name, f"{min(compile_cpu):.2f}", f"{timing.best_cpu * 1e3:.2f}"])
    print(harness.markdown_table(["post-processing", "compile (CPU s)", "run (CPU ms)"], rows))
    return 0


CASES = {"guard": guard, "peaks": peaks, "projection": projection, "drift": drift, "stiff": stiff,
         "stability": stability, "roofline": roofline, "engine-field": engine_field,
         "engine-jacobian": engine_jacobian, "engine-outputs": engine_outputs}

if __name__ == "__main__":
    raise SystemExit(harness.main(CASES, __doc__))
