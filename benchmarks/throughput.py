"""Throughput: simulations per second of our sweep and single simulations, against the
peers (``benchmarks.peers``), on the planar, spatial and lubricated slider-cranks, per lane
count, on an accelerator, end to end as the command runs, in memory, against another
revision of the repository, and against the numba peer::

    python -m benchmarks.throughput --list
    python -m benchmarks.throughput --case planar --quick
    python -m benchmarks.throughput --case gpu --quick

diffrax's runtime checks return NaN here instead of calling back to the host
(``EQX_ON_ERROR=nan``, unless set), so that the accelerator's executables cache. docs/BENCHMARKS.md
records the results.
"""

from __future__ import annotations

import os

os.environ.setdefault("EQX_ON_ERROR", "nan")  # before equinox is imported

import argparse  # noqa: E402
import collections  # noqa: E402
import dataclasses  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import scipy.integrate  # noqa: E402
import scipy.stats  # noqa: E402
from tqdm import tqdm  # noqa: E402

import model  # noqa: E402
from benchmarks import harness, peers  # noqa: E402
from pipelines.build import ParameterMap, build_mechanism, solver_settings  # noqa: E402
from pipelines.config import load_mechanism  # noqa: E402
from sweep import run as sweep_run  # noqa: E402
from sweep.chunks import cost_order, lockstep_efficiency, point_costs, split_chunks  # noqa: E402
from sweep.run import chunk_runner, pad_rows, prefer_single_threaded_cpu  # noqa: E402

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
FLORES_CONFIG = REPOSITORY / "configs" / "flores_slider_crank.toml"


# ---------------------------------------------------------------------- planar
SWEPT_PATHS = ("joints.pin.clearance", "joints.pin.contact.restitution")


FIGURE_NAMES = ("first_impact_time", "first_impact_velocity", "peak_penetration", "peak_normal_force")


# ----------------------------------------------------------------------------- accuracy
def figure_vector(figures: dict) -> np.ndarray:
    """The compared figures as one vector (first-impact time and speed, then the peak
    penetration and normal force of each compared impact)."""
    return np.concatenate([[figures["first_impact_time"], figures["first_impact_velocity"]],
                           figures["peak_penetration"], figures["peak_normal_force"]])


def figure_error(figures: dict, reference: dict) -> float:
    """Largest relative error of the figures (inf where an impact is missing or extra)."""
    ours, ref = figure_vector(figures), figure_vector(reference)
    if np.any(np.isnan(ours) != np.isnan(ref)):
        return float("inf")
    valid = ~np.isnan(ref)
    return float(np.max(np.abs(ours[valid] - ref[valid]) / np.abs(ref[valid])))


def diffrax_figures(mechanism, settings) -> tuple[dict, int]:
    trajectory = jax.jit(model.simulate, static_argnums=1)(mechanism, settings)
    if int(trajectory.result) != 0:
        raise RuntimeError(f"diffrax {settings.solver}: {model.result_message(int(trajectory.result))}")
    figures = peers.impact_figures(trajectory.t, trajectory.penetration[:, 0], trajectory.normal_force[:, 0],
                                        trajectory.impact_memory[:, 0])
    return figures, int(trajectory.steps)


def match_scipy_tolerances(mechanism, settings, reference, target_error, methods, rtols, atol_ratio,
                           time_cap, field, log) -> dict:
    """For each method, scan rtol from loose to tight until the error <= target."""
    found = {}
    for method in methods:
        scans = []
        for rtol in rtols:
            result = peers.solve_with_scipy(mechanism, settings, method, rtol, rtol * atol_ratio, field=field)
            error = figure_error(result, reference) if result["success"] else float("inf")
            scans.append({"rtol": rtol, "atol": rtol * atol_ratio, "error": error, "seconds": result["seconds"],
                          "steps": result["steps"], "nfev": result["nfev"], "njev": result["njev"]})
            log(f"  {method:7s} rtol={rtol:.0e}: error {error:.2e} (target {target_error:.2e}), "
                f"{result['seconds']:.2f} s, {result['steps']} steps, nfev {result['nfev']}")
            if error <= target_error:
                found[method] = scans[-1] | {"matched": True, "scan": scans}
                break
            if result["seconds"] > time_cap:
                found[method] = scans[-1] | {"matched": False, "scan": scans}
                log(f"  {method}: stopped scanning (one solve took more than {time_cap:.0f} s)")
                break
        else:
            found[method] = scans[-1] | {"matched": False, "scan": scans}
    return found


def match_minimal_tolerances(params, settings, reference, target_error, methods, rtols, atol_ratio, time_cap,
                             log) -> dict:
    """The same scan for the minimal-coordinate peer (``benchmarks/peers.py``)."""
    found = {}
    for method in methods:
        scans = []
        for rtol in rtols:
            result = peers.solve_minimal(params, settings.t_end, settings.output_interval, method, rtol, rtol * atol_ratio)
            error = figure_error(result, reference) if result["success"] else float("inf")
            scans.append({"rtol": rtol, "atol": rtol * atol_ratio, "error": error, "seconds": result["seconds"],
                          "nfev": result["nfev"]})
            log(f"  minimal {method:7s} rtol={rtol:.0e}: error {error:.2e} (target {target_error:.2e}), "
                f"{result['seconds']:.2f} s, nfev {result['nfev']}")
            if error <= target_error or result["seconds"] > time_cap:
                break
        found[method] = scans[-1] | {"matched": scans[-1]["error"] <= target_error, "scan": scans}
    return found


def fastest_matched(matched: dict) -> tuple[str, dict]:
    """The fastest method whose error met the target (else the most accurate one)."""
    candidates = {m: r for m, r in matched.items() if r["matched"]}
    if not candidates:
        best = min(matched, key=lambda m: matched[m]["error"])
        return best, matched[best]
    fastest = min(candidates, key=lambda m: candidates[m]["seconds"])
    return fastest, candidates[fastest]


# ---------------------------------------------------------------------------- our sweep
def sweep_grid(clearances: int, restitutions: int) -> np.ndarray:
    """Clearance (m) x restitution points, sorted by clearance then restitution: the step
    count follows the clearance mostly, so neighbours in a chunk need similar steps."""
    c = np.linspace(0.1e-3, 0.5e-3, clearances)
    e = np.linspace(0.5, 0.99, restitutions)
    grid = np.stack(np.meshgrid(c, e, indexing="ij"), axis=-1).reshape(-1, 2)
    return grid[np.lexsort((grid[:, 1], grid[:, 0]))]


def batched_sweep(mechanism, settings):
    """``values [chunk, params] -> (steps, result, figures...)``, jitted; only these small
    arrays leave the compiled function."""
    parameters = ParameterMap(mechanism, SWEPT_PATHS)
    compared = peers.COMPARED_IMPACTS

    def one(values):
        member = parameters.apply(mechanism, values)
        trajectory = model.simulate(member, settings)
        metrics = model.summary_metrics(member, trajectory)
        penetration, force = trajectory.penetration[:, 0], trajectory.normal_force[:, 0]
        onsets = model.metrics.contact_onsets(penetration)
        episode = jnp.cumsum(onsets).astype(int) * (penetration > 0)
        peaks = jax.ops.segment_max(jnp.stack([penetration, force], 1), episode, num_segments=compared + 1,
                                    indices_are_sorted=False)[1:]
        return {"steps": trajectory.steps, "rejected": trajectory.rejected_steps, "result": trajectory.result,
                "peaks": peaks, **{k: metrics[k] for k in ("pin.first_impact_time", "pin.max_normal_force")}}

    return jax.jit(jax.vmap(one))


def run_chunks(function, points: np.ndarray, chunk: int, progress: bool = True) -> tuple[dict, float]:
    """Run ``points`` in chunks (the last one padded with copies of its last point)."""
    outputs = []
    start = time.perf_counter()
    for begin in tqdm(range(0, len(points), chunk), desc=f"chunks of {chunk}", unit="chunk", disable=not progress,
                      file=sys.stderr):
        block = points[begin:begin + chunk]
        out = jax.device_get(function(jnp.asarray(pad_rows(block, chunk))))
        outputs.append(jax.tree_util.tree_map(lambda a: np.asarray(a)[: len(block)], out))
    seconds = time.perf_counter() - start
    return jax.tree_util.tree_map(lambda *a: np.concatenate(a), *outputs), seconds


def tool_throughput(mechanism, settings, points: np.ndarray, chunk: int, workers: int, repeats: int) -> dict:
    """Throughput of the sweep tool's execution: ``ProcessExecutor`` worker processes, each
    running chunks through ``sweep.run.chunk_runner`` (refilling lanes), the points ordered
    and dealt into chunks as ``clearance sweep`` does (``sweep.chunks``). Every worker
    compiles on a warm-up chunk first; the timed phase is the whole grid, best of ``repeats``."""
    from sweep.execute import ProcessExecutor, _run_in_worker
    from sweep.run import STEP_SLOTS, default_lanes

    costs = point_costs(mechanism, SWEPT_PATHS, points, ParameterMap)
    chunks = split_chunks(cost_order(costs), chunk)
    executor = ProcessExecutor(workers)
    payload = (mechanism, settings, SWEPT_PATHS, ParameterMap, chunk, ())
    try:
        warm = executor.broadcast(_run_in_worker, 0, payload, points[:chunk])
        compile_seconds = max(info["compile_seconds"] for _, info in warm)
        best, best_columns, recompiled = np.inf, None, 0.0
        for _ in range(repeats):
            start = time.perf_counter()
            results = executor.map(_run_in_worker, [(0, payload, points[positions]) for positions in chunks])
            seconds = time.perf_counter() - start
            recompiled = max(recompiled, max(info["compile_seconds"] for _, info in results))
            if seconds < best:
                best, best_columns = seconds, results
    finally:
        executor.close()
    steps = np.empty(len(points))
    steps[np.concatenate(chunks)] = np.concatenate([np.asarray(columns["steps"]) for columns, _ in best_columns])
    slots = sum(float(np.sum(columns[STEP_SLOTS])) for columns, _ in best_columns)
    results = np.concatenate([np.asarray(columns["result"]) for columns, _ in best_columns])
    return {"mode": "sweep tool (refilling lanes, worker processes)", "chunk": chunk, "workers": workers,
            "lanes": default_lanes(chunk, "cpu"), "points": int(len(points)), "seconds": best,
            "compile_seconds": compile_seconds, "compile_seconds_in_timed_phase": recompiled,
            "simulations_per_second": len(points) / best, "mean_steps": float(steps.mean()),
            "max_steps": int(steps.max()), "min_steps": int(steps.min()), "failed": int(np.sum(results != 0)),
            "lockstep_efficiency": float(steps.sum() / slots), "steps_per_point": steps.tolist(),
            "cost_rank_correlation": float(scipy.stats.spearmanr(costs, steps)[0])}


def vmap_throughput(mechanism, settings, points: np.ndarray, chunk: int, repeats: int) -> dict:
    """Plain ``jit(vmap(simulate))`` in chunks, in this process (one core): the lockstep baseline."""
    function = batched_sweep(mechanism, settings)
    start = time.perf_counter()
    jax.block_until_ready(function(jnp.asarray(np.resize(points, (chunk, 2)))))
    compile_seconds = time.perf_counter() - start
    best, best_out = np.inf, None
    for _ in range(repeats):
        out, seconds = run_chunks(function, points, chunk)
        if seconds < best:
            best, best_out = seconds, out
    steps = best_out["steps"]
    return {"mode": "plain jit(vmap(simulate)) (lockstep)", "chunk": chunk, "workers": 1, "lanes": chunk,
            "points": int(len(points)), "seconds": best, "compile_seconds": compile_seconds,
            "simulations_per_second": len(points) / best, "mean_steps": float(steps.mean()),
            "max_steps": int(steps.max()), "min_steps": int(steps.min()), "failed": int(np.sum(best_out["result"] != 0)),
            "lockstep_efficiency": lockstep_efficiency(steps, chunk), "steps_per_point": steps.tolist()}


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# ---------------------------------------------------------------------- the memory run
def memory_run(args) -> dict:
    """The 100,000-point sweep with a short t_end, in chunks, through the sweep tool's chunk
    function (refilling lanes, this process); returns peak RSS and time."""
    from sweep.run import STEP_SLOTS, chunk_runner, default_lanes

    mechanism, settings = peers.load_flores(t_end=args.memory_t_end, output_interval=args.memory_output_interval)
    side = int(np.ceil(np.sqrt(args.memory_points)))
    points = sweep_grid(side, side)[: args.memory_points]
    start = time.perf_counter()
    run, _ = chunk_runner(mechanism, settings, SWEPT_PATHS, args.memory_chunk, resolver=ParameterMap)
    compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    chunks = [run(points[first:first + args.memory_chunk]) for first in range(0, len(points), args.memory_chunk)]
    seconds = time.perf_counter() - start
    steps = np.concatenate([columns["steps"] for columns in chunks])
    return {
        "points": int(len(points)), "chunk": args.memory_chunk, "lanes": default_lanes(args.memory_chunk, "cpu"),
        "t_end": settings.t_end, "output_interval": settings.output_interval, "compile_seconds": compile_seconds,
        "seconds": seconds, "simulations_per_second": len(points) / seconds,
        "failed": int(sum(np.sum(columns["result"] != 0) for columns in chunks)), "mean_steps": float(steps.mean()),
        "lockstep_efficiency": float(steps.sum() / sum(float(np.sum(columns[STEP_SLOTS])) for columns in chunks)),
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }


# ------------------------------------------------------------------------------- main
def planar_parse_args(argv=None):
    parser = argparse.ArgumentParser(description=planar.__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run (< 1 min), numbers not meaningful")
    parser.add_argument("--t-end", type=float, default=24e-3, help="s (2 revolutions at 5000 rpm)")
    parser.add_argument("--output-interval", type=float, default=None, help="s (default: the config's)")
    parser.add_argument("--grid", type=int, nargs=2, default=(16, 16), metavar=("CLEARANCES", "RESTITUTIONS"))
    parser.add_argument("--chunks", type=int, nargs="+", default=(64,),
                        help="chunk sizes of the sweep tool's execution (refilling lanes) to measure")
    parser.add_argument("--workers", type=int, nargs="+", default=(1, 2),
                        help="worker processes to measure (the sweep's ProcessExecutor; 1 = one core)")
    parser.add_argument("--vmap-chunks", type=int, nargs="*", default=(64,),
                        help="also time plain jit(vmap(simulate)) in these chunk sizes (lockstep; for comparison)")
    parser.add_argument("--repeats", type=int, default=2, help="timed repetitions (best is kept)")
    parser.add_argument("--methods", nargs="+", default=("RK45", "DOP853", "RK23", "LSODA"))
    parser.add_argument("--rtols", type=float, nargs="+", default=(1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10))
    parser.add_argument("--minimal-methods", nargs="+", default=("LSODA", "RK45", "DOP853"),
                        help="solve_ivp methods scanned for the minimal-coordinate peer")
    parser.add_argument("--scipy-points", type=int, default=8, help="sweep points the scipy peer is timed on")
    parser.add_argument("--time-cap", type=float, default=120.0, help="s: stop a method's scan beyond this")
    parser.add_argument("--memory-points", type=int, default=100_000)
    parser.add_argument("--memory-chunk", type=int, default=4096)
    parser.add_argument("--memory-t-end", type=float, default=0.2e-3)
    parser.add_argument("--memory-output-interval", type=float, default=50e-6)
    parser.add_argument("--memory-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--out", default="outputs/benchmarks/sweep_throughput")
    args = parser.parse_args(argv)
    if args.quick:
        args.t_end, args.grid, args.chunks, args.repeats, args.vmap_chunks = 0.5e-3, (4, 2), (4,), 1, (4,)
        args.methods, args.rtols, args.scipy_points = ("RK45", "DOP853"), (1e-5, 1e-7), 1
        args.minimal_methods = ("LSODA", "RK45")
        args.memory_points, args.memory_chunk, args.memory_t_end = 2_000, 1_000, 0.05e-3
    return args


def planar(argv=None) -> int:
    """Sweep throughput on the Flores benchmark: our sweep against two scipy peers.

    The peers: the hand-derived minimal-coordinate model (``benchmarks.peers --case minimal``) and
    scipy on our compiled JAX vector field (``benchmarks.peers --case scipy``). One run measures, on
    the same machine:

    1. a tight reference of the nominal Flores case (2 revolutions, 24 ms) with diffrax's
       8th-order Dopri8 at rtol = 1e-12, cross-checked by scipy's DOP853 at rtol = 1e-10;
    2. the accuracy of *our* sweep solver (the config's solver and tolerances) against it, on
       the figures a clearance study reads: first-impact time and speed, and the peak
       penetration and normal force of each of the first impacts (``peers.impact_figures``);
    3. for each ``solve_ivp`` method, the loosest tolerance (rtol in decades, atol = rtol *
       atol/rtol of ours) whose error is no larger than ours, for each peer; the fastest method at that
       accuracy is *the* scipy peer, timed on several sweep points;
    4. our throughput: a clearance x restitution grid through ``ParameterMap`` +
       ``jax.vmap(model.simulate)``, jitted once per chunk size, in chunks (points sorted so
       that members of a chunk need similar step counts), with the metrics computed inside the
       compiled function so that only they leave it; best of ``--repeats``;
    5. in a separate process (so its peak RSS is its own), a 100,000-point sweep with a short
       ``t_end`` and a coarse output interval, in chunks: peak RSS, wall time.

    Prints a Markdown report and writes it (plus ``sweep_throughput.json``) to ``--out``.
    Run from the repository root::

        .venv/bin/python -m benchmarks.throughput --case planar            # full run (~30-60 min on 2 cores)
        .venv/bin/python -m benchmarks.throughput --case planar --quick    # smoke run (< 1 min)
    """
    args = planar_parse_args(argv)
    # the sweep's XLA CPU settings for every JAX computation of this run: the scipy peer's
    # vector field and the vmap baseline get them too (the workers set them themselves)
    prefer_single_threaded_cpu()
    if args.memory_only:
        print(json.dumps(memory_run(args)))
        return 0
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def log(text: str) -> None:
        print(text, flush=True)

    report: dict = {"command": harness.command_line(), "python": platform.python_version(), "jax": jax.__version__,
                    "cpus": os.cpu_count(), "load_before": os.getloadavg()}
    changes = {"t_end": args.t_end}
    if args.output_interval is not None:
        changes["output_interval"] = args.output_interval
    mechanism, settings = peers.load_flores(**changes)
    log(f"Flores benchmark, t_end = {settings.t_end * 1e3:g} ms, output every {settings.output_interval * 1e6:g} us, "
        f"ours: {settings.solver} rtol={settings.rtol:g} atol={settings.atol:g}; load {os.getloadavg()}")

    # 1-2. reference and our accuracy
    reference, reference_steps = diffrax_figures(mechanism, eqx_replace(settings, solver="dopri8", rtol=1e-12, atol=1e-15))
    ours, our_steps = diffrax_figures(mechanism, settings)
    target = figure_error(ours, reference)
    field = peers.compile_field(mechanism, with_jacobian=any(m in peers.IMPLICIT_METHODS for m in args.methods))
    check = peers.solve_with_scipy(mechanism, settings, "DOP853", 1e-10, 1e-13, field=field)
    report["reference"] = {"solver": "diffrax dopri8 rtol=1e-12 atol=1e-15", "steps": reference_steps,
                           "figures": jsonable(reference),
                           "scipy_DOP853_1e-10_error": figure_error(check, reference)}
    report["ours"] = {"solver": settings.solver, "rtol": settings.rtol, "atol": settings.atol, "steps": our_steps,
                      "error": target, "figures": jsonable(ours)}
    log(f"reference (dopri8 1e-12): {reference_steps} steps; scipy DOP853 1e-10 differs by "
        f"{report['reference']['scipy_DOP853_1e-10_error']:.1e}; ours ({settings.solver}): error {target:.2e}")

    # 3. scipy: matched tolerance per method, the fastest, timed on sweep points
    overhead = peers.call_overhead(field, calls=200 if args.quick else 3000)
    inside = float("nan") if args.quick else peers.in_xla_evaluation_seconds(mechanism, calls=3000)
    report["rhs_call"] = overhead | {"in_xla_evaluation_seconds": inside, "compile_seconds": field.compile_seconds}
    log(f"RHS per call from Python {overhead['python_call_seconds'] * 1e6:.1f} us (trivial jitted call "
        f"{overhead['trivial_jit_call_seconds'] * 1e6:.1f} us; inside XLA {inside * 1e6:.2f} us)")
    matched = match_scipy_tolerances(mechanism, settings, reference, target, args.methods, args.rtols,
                                     settings.atol / settings.rtol, args.time_cap, field, log)
    report["scipy_methods"] = matched
    if not any(r["matched"] for r in matched.values()):
        log("no scipy method reached our accuracy; using the most accurate one")
    fastest, chosen = fastest_matched(matched)
    rtol, atol = chosen["rtol"], chosen["atol"]
    # the minimal-coordinate peer: same physics (checked against the reference), own scan
    base = peers.SliderCrank()
    tight = peers.solve_minimal(base, settings.t_end, settings.output_interval, "DOP853", 1e-12, 1e-15)
    report["reference"]["minimal_DOP853_1e-12_error"] = figure_error(tight, reference)
    log(f"minimal peer, DOP853 1e-12, against the reference: {report['reference']['minimal_DOP853_1e-12_error']:.1e}")
    minimal_matched = match_minimal_tolerances(base, settings, reference, target, args.minimal_methods, args.rtols,
                                               settings.atol / settings.rtol, args.time_cap, log)
    report["minimal_methods"] = minimal_matched
    minimal_method, minimal_chosen = fastest_matched(minimal_matched)
    points = sweep_grid(*args.grid)
    timed_indices = np.linspace(0, len(points) - 1, args.scipy_points).round().astype(int)
    timed_points = points[timed_indices]
    parameters = ParameterMap(mechanism, SWEPT_PATHS)
    scipy_seconds, scipy_steps, scipy_cpu, minimal_seconds = [], [], [], []
    for values in timed_points:  # the two peers interleaved, so that both see the same load
        member = parameters.apply(mechanism, jnp.asarray(values))
        best, cpu, best_minimal = np.inf, 0.0, np.inf
        for _ in range(args.repeats):
            cpu_start = cpu_seconds()
            result = peers.solve_with_scipy(member, settings, fastest, rtol, atol, field=field)
            if result["seconds"] < best:
                best, cpu = result["seconds"], cpu_seconds() - cpu_start
            minimal = peers.solve_minimal(base.replace(clearance=float(values[0]), restitution=float(values[1])),
                                         settings.t_end, settings.output_interval, minimal_method,
                                         minimal_chosen["rtol"], minimal_chosen["atol"])
            best_minimal = min(best_minimal, minimal["seconds"])
        scipy_seconds.append(best)
        scipy_steps.append(result["steps"])
        scipy_cpu.append(cpu)
        minimal_seconds.append(best_minimal)
        log(f"at clearance {values[0] * 1e3:.3f} mm, e {values[1]:.3f}: scipy {fastest} rtol={rtol:.0e} "
            f"{best:.2f} s, {result['steps']} steps; minimal peer {minimal_method} rtol={minimal_chosen['rtol']:.0e} "
            f"{best_minimal:.3f} s")
    report["scipy"] = {"method": fastest, "rtol": rtol, "atol": atol, "points": timed_points.tolist(),
                       "seconds": scipy_seconds, "steps": scipy_steps, "cpu_seconds": scipy_cpu,
                       "cores_used": sum(scipy_cpu) / sum(scipy_seconds)}
    report["minimal"] = {"method": minimal_method, "rtol": minimal_chosen["rtol"], "atol": minimal_chosen["atol"],
                         "error": minimal_chosen["error"], "points": timed_points.tolist(), "seconds": minimal_seconds}

    # 4. our sweep, as the sweep tool runs it: chunks of refilling lanes in worker processes
    ours_runs = []
    for chunk in args.chunks:
        for workers in args.workers:
            run = tool_throughput(mechanism, settings, points, chunk, workers, args.repeats)
            ours_runs.append(run)
            log(f"ours chunk {chunk}, {workers} worker(s), {run['lanes']} lanes: {run['simulations_per_second']:.2f} sims/s "
                f"({run['seconds']:.1f} s for {len(points)}), compile {run['compile_seconds']:.1f} s, steps mean "
                f"{run['mean_steps']:.0f} max {run['max_steps']}, lane efficiency {run['lockstep_efficiency']:.2f}, "
                f"failed {run['failed']}, cost-estimate rank correlation with steps {run['cost_rank_correlation']:.2f}")
    for chunk in args.vmap_chunks:
        run = vmap_throughput(mechanism, settings, points, chunk, args.repeats)
        ours_runs.append(run)
        log(f"plain vmap chunk {chunk} (1 core): {run['simulations_per_second']:.2f} sims/s, lockstep "
            f"{run['lockstep_efficiency']:.2f}, steps mean {run['mean_steps']:.0f} max {run['max_steps']}")
    best_run = max(ours_runs, key=lambda r: r["simulations_per_second"])
    one_core = max((r for r in ours_runs if r["workers"] == 1), key=lambda r: r["simulations_per_second"])
    scipy_rate = scipy_grid_rate(report["scipy"], np.asarray(best_run["steps_per_point"]), timed_indices)
    minimal_rate = scipy_grid_rate(report["minimal"], np.asarray(best_run["steps_per_point"]), timed_indices)
    report["ours_sweep"] = ours_runs
    report["ratio_minimal"] = best_run["simulations_per_second"] / minimal_rate
    report["ratio_minimal_one_core"] = one_core["simulations_per_second"] / minimal_rate
    report["ratio"] = best_run["simulations_per_second"] / scipy_rate
    report["ratio_one_core"] = one_core["simulations_per_second"] / scipy_rate
    report["ratio_per_cpu_second"] = (best_run["simulations_per_second"] / best_run["workers"]) / (
        scipy_rate / report["scipy"]["cores_used"])
    log(f"scipy on the whole grid: {1 / scipy_rate:.2f} s per simulation (sample mean "
        f"{np.mean(scipy_seconds):.2f} s; our steps on the sample / on the grid: "
        f"{report['scipy']['sample_step_share']:.2f})")
    log(f"RATIO ours/scipy = {report['ratio']:.1f}x ({best_run['workers']} workers; one core "
        f"{report['ratio_one_core']:.1f}x; per CPU-second {report['ratio_per_cpu_second']:.1f}x)")
    log(f"RATIO ours/minimal peer = {report['ratio_minimal']:.1f}x (one core {report['ratio_minimal_one_core']:.1f}x; "
        f"minimal peer {1 / minimal_rate:.3f} s per simulation)")

    # 5. memory run in its own process
    if not args.skip_memory:
        command = [sys.executable, "-m", "benchmarks.throughput", "--case", "planar", "--memory-only", "--memory-points", str(args.memory_points),
                   "--memory-chunk", str(args.memory_chunk), "--memory-t-end", str(args.memory_t_end),
                   "--memory-output-interval", str(args.memory_output_interval)]
        completed = subprocess.run(command, cwd=REPOSITORY, capture_output=True, text=True, check=True)
        report["memory_run"] = json.loads(completed.stdout.strip().splitlines()[-1])
        report["memory_run"]["command"] = " ".join(["python"] + command[1:])
        memory = report["memory_run"]
        log(f"memory run: {memory['points']} points in chunks of {memory['chunk']}, t_end {memory['t_end'] * 1e3:g} ms: "
            f"{memory['seconds']:.1f} s, peak RSS {memory['peak_rss_bytes'] / 2**30:.2f} GiB, failed {memory['failed']}")
    report["load_after"] = os.getloadavg()
    (out / "sweep_throughput.json").write_text(json.dumps(report, indent=2, default=float))
    (out / "sweep_throughput.md").write_text(planar_markdown(report))
    print(planar_markdown(report))
    return 0


def scipy_grid_rate(scipy: dict, our_steps: np.ndarray, timed_indices: np.ndarray) -> float:
    """Simulations per second of the scipy peer over the whole grid, from its times on the
    sample ``timed_indices``: a ratio estimator with our step counts as the auxiliary
    variable, ``mean(our steps on the grid) x sum(scipy seconds) / sum(our steps on the
    sample)``, so that a sample with more (or fewer) hard points than the grid does not
    bias the ratio. Records the estimate and the sample's step share in ``scipy``."""
    sample_steps = our_steps[timed_indices]
    seconds_per_simulation = our_steps.mean() * sum(scipy["seconds"]) / sample_steps.sum()
    scipy["sample_step_share"] = float(sample_steps.mean() / our_steps.mean())
    scipy["sample_seconds_per_simulation"] = float(np.mean(scipy["seconds"]))
    scipy["seconds_per_simulation"] = float(seconds_per_simulation)
    scipy["simulations_per_second"] = float(1.0 / seconds_per_simulation)
    return scipy["simulations_per_second"]


def eqx_replace(settings, **changes):
    import dataclasses

    return dataclasses.replace(settings, **changes)


def jsonable(figures: dict) -> dict:
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in figures.items() if k in FIGURE_NAMES}


def planar_markdown(report: dict) -> str:
    scipy, best = report["scipy"], max(report["ours_sweep"], key=lambda r: r["simulations_per_second"])
    minimal = report["minimal"]
    rows = ["| execution | chunk | workers | lanes | sims/s | ratio to minimal peer | ratio to scipy on our field | "
            "steps mean / max | lane (lockstep) efficiency | compile (s) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for run in report["ours_sweep"]:
        rows.append(f"| {run['mode']} | {run['chunk']} | {run['workers']} | {run['lanes']} | "
                    f"{run['simulations_per_second']:.2f} | "
                    f"{run['simulations_per_second'] / minimal['simulations_per_second']:.1f}x | "
                    f"{run['simulations_per_second'] / scipy['simulations_per_second']:.1f}x | "
                    f"{run['mean_steps']:.0f} / {run['max_steps']} | {run['lockstep_efficiency']:.2f} | "
                    f"{run['compile_seconds']:.1f} |")
    methods = ["| peer | method | rtol | error | s / sim (nominal point) | nfev | matched |",
               "|---|---|---:|---:|---:|---:|---|"]
    for peer, key in (("minimal coordinates", "minimal_methods"), ("scipy on our field", "scipy_methods")):
        for name, r in report[key].items():
            methods.append(f"| {peer} | {name} | {r['rtol']:.0e} | {r['error']:.2e} | {r['seconds']:.3f} | {r['nfev']} | "
                           f"{'yes' if r['matched'] else 'no'} |")
    text = [
        f"**Ratio to the minimal-coordinate peer: {report['ratio_minimal']:.1f}x** (one core "
        f"{report['ratio_minimal_one_core']:.1f}x): `solve_ivp` {minimal['method']} at rtol {minimal['rtol']:.0e} "
        f"(error {minimal['error']:.2e}), {minimal['seconds_per_simulation']:.3f} s per simulation over the grid "
        f"({minimal['simulations_per_second']:.2f} sims/s).",
        "",
        f"**Ratio: {report['ratio']:.1f}x** simulations per second, ours ({best['mode']}, chunk {best['chunk']}, "
        f"{best['workers']} worker(s)) over scipy `solve_ivp` {scipy['method']} (rtol {scipy['rtol']:.0e}, one "
        f"process) at the same accuracy; on one core {report['ratio_one_core']:.1f}x; per CPU-second "
        f"{report['ratio_per_cpu_second']:.1f}x.",
        "",
        f"- ours: {best['simulations_per_second']:.2f} sims/s; scipy: {scipy['simulations_per_second']:.3f} sims/s "
        f"({scipy['seconds_per_simulation']:.2f} s per simulation over the grid, estimated from "
        f"{len(scipy['seconds'])} timed points: {scipy['sample_seconds_per_simulation']:.2f} s and "
        f"{np.mean(scipy['steps']):.0f} steps on average there, where our steps were "
        f"{scipy['sample_step_share']:.2f} x our grid mean)",
        f"- accuracy (max relative error of the first-impact figures against diffrax dopri8 at rtol 1e-12): ours "
        f"{report['ours']['error']:.2e} ({report['ours']['solver']}, rtol {report['ours']['rtol']:g}); reference "
        f"cross-check scipy DOP853 1e-10: {report['reference']['scipy_DOP853_1e-10_error']:.1e}; the minimal peer "
        f"(DOP853 1e-12) differs from it by {report['reference']['minimal_DOP853_1e-12_error']:.1e}",
        f"- RHS call from Python: {report['rhs_call']['python_call_seconds'] * 1e6:.0f} us; trivial jitted call "
        f"{report['rhs_call']['trivial_jit_call_seconds'] * 1e6:.0f} us; one evaluation inside XLA "
        f"{report['rhs_call']['in_xla_evaluation_seconds'] * 1e6:.1f} us",
        f"- load average before / after: {report['load_before']} / {report['load_after']}",
        "",
        *rows,
        "",
        *methods,
    ]
    if "memory_run" in report:
        memory = report["memory_run"]
        text += ["", f"Memory run: {memory['points']} points in chunks of {memory['chunk']}, t_end "
                     f"{memory['t_end'] * 1e3:g} ms, output every {memory['output_interval'] * 1e6:g} us: "
                     f"peak RSS **{memory['peak_rss_bytes'] / 2**30:.2f} GiB**, {memory['seconds']:.0f} s "
                     f"({memory['simulations_per_second']:.0f} sims/s), mean steps {memory['mean_steps']:.0f}, "
                     f"lockstep {memory['lockstep_efficiency']:.2f}, failed {memory['failed']}."]
    return "\n".join(text) + "\n"


# ---------------------------------------------------------------------- spatial
CONFIGS = REPOSITORY / "configs"


def spatial_load(name: str, t_end: str, output_interval: str):
    config = load_mechanism(CONFIGS / name, [f"simulation.t_end={t_end}",
                                             f"simulation.output_interval={output_interval}"])
    return build_mechanism(config), solver_settings(config)


def spatial_grid(clearances: int, restitutions: int) -> np.ndarray:
    values = np.meshgrid(np.linspace(2.5e-4, 5e-4, clearances), np.linspace(0.5, 0.9, restitutions), indexing="ij")
    return np.stack([v.ravel() for v in values], axis=1)


def compiled_sweep(mechanism, settings, points: np.ndarray, lanes: int):
    """The sweep as ``clearance sweep`` runs it, compiled and run once: ``(run, inputs,
    compile-and-first-run seconds, outputs)``."""
    parameters = ParameterMap(mechanism, SWEPT_PATHS)

    def run(values):
        mechanisms = jax.vmap(parameters.apply, (None, 0))(mechanism, values)
        solution = model.solve_ensemble(mechanisms, settings, lanes)
        return solution.map_points(model.summary_metrics, mechanisms), solution.steps, solution.result

    compiled, inputs = jax.jit(run), jnp.asarray(points)
    start = time.perf_counter()
    outputs = jax.block_until_ready(compiled(inputs))
    return compiled, inputs, time.perf_counter() - start, outputs


def interleaved_best(calls: dict, repeats: int) -> dict:
    """Least wall time of each warm call over ``repeats`` rounds that run every call once in
    turn (:func:`benchmarks.harness.interleaved`): on a shared machine the load drifts over a
    minute, and timing the runs being compared side by side, each at its best, keeps that
    drift out of their ratio."""
    timings = harness.interleaved({name: functools.partial(_blocking, call) for name, call in calls.items()},
                                  repeats, warmup=0)
    return {name: timing.best for name, timing in timings.items()}


def _blocking(call):
    return jax.block_until_ready(call())


def sweep_report(points: np.ndarray, seconds: float, compile_seconds: float, outputs) -> dict:
    metrics, steps, result = outputs
    return {"points": len(points), "seconds": seconds, "points_per_second": len(points) / seconds,
            "compile_and_first_run_seconds": compile_seconds, "steps_mean": float(np.mean(steps)),
            "failed": int(np.sum(np.asarray(result) != 0)),
            "max_normal_force": np.asarray(metrics["pin.max_normal_force"]).tolist()}


def single_run(mechanism, settings) -> dict:
    simulate = jax.jit(model.simulate, static_argnums=1)
    trajectory = jax.block_until_ready(simulate(mechanism, settings))
    field = jax.jit(lambda y: mechanism.flat_vector_field(jnp.asarray(1e-4), y))
    y0 = mechanism.flatten(mechanism.initial_state())
    jax.block_until_ready(field(y0))
    calls = 500
    start = time.perf_counter()
    for _ in range(calls):
        out = field(y0)
    jax.block_until_ready(out)
    return {"steps": int(trajectory.steps), "rejected_steps": int(trajectory.rejected_steps),
            "field_microseconds": 1e6 * (time.perf_counter() - start) / calls,
            "call": lambda: simulate(mechanism, settings)}


def scipy_rate(mechanism, settings, points: np.ndarray) -> dict:
    """Points per second of ``solve_ivp`` (RK45) on our compiled spatial vector field."""
    parameters = ParameterMap(mechanism, SWEPT_PATHS)
    field = jax.jit(lambda t, y, values: parameters.apply(mechanism, values).flat_vector_field(t, y))
    initial = jax.jit(lambda values: (lambda m: m.flatten(m.initial_state()))(parameters.apply(mechanism, values)))
    seconds, evaluations = 0.0, 0
    for values in points:
        values = jnp.asarray(values)
        y0 = np.asarray(initial(values))
        np.asarray(field(0.0, y0, values))  # compiled before the clock starts
        start = time.perf_counter()
        solution = scipy.integrate.solve_ivp(lambda t, y: np.asarray(field(t, y, values)), (0.0, settings.t_end), y0,
                                             method="RK45", rtol=settings.rtol, atol=settings.atol)
        seconds += time.perf_counter() - start
        evaluations += solution.nfev
        if solution.status != 0:
            raise RuntimeError(f"solve_ivp failed at {values}: {solution.message}")
    return {"points": len(points), "seconds": seconds, "points_per_second": len(points) / seconds,
            "evaluations_mean": evaluations / len(points)}


def spatial_markdown(report: dict) -> str:
    spatial, planar, scipy_ = report["spatial_sweep"], report["planar_sweep"], report["scipy_spatial"]
    one, two = report["spatial_single"], report["planar_single"]
    return "\n".join([
        f"# Spatial throughput ({report['t_end']}, rtol {report['rtol']:g}, atol {report['atol']:g}, "
        f"{report['grid']} grid, {report['lanes']} lanes)",
        "",
        "| run | points/s | steps (mean) | per simulation (s) |",
        "|---|---|---|---|",
        f"| spatial sweep (lanes) | {spatial['points_per_second']:.3g} | {spatial['steps_mean']:.0f} | "
        f"{1 / spatial['points_per_second']:.3g} |",
        f"| planar sweep (lanes) | {planar['points_per_second']:.3g} | {planar['steps_mean']:.0f} | "
        f"{1 / planar['points_per_second']:.3g} |",
        f"| scipy RK45 on the spatial field | {scipy_['points_per_second']:.3g} | "
        f"{scipy_['evaluations_mean'] / 6:.0f} (nfev / 6) | {1 / scipy_['points_per_second']:.3g} |",
        f"| spatial single simulate | | {one['steps']} | {one['seconds']:.3g} |",
        f"| planar single simulate | | {two['steps']} | {two['seconds']:.3g} |",
        "",
        f"- spatial / planar cost per simulation: sweep {report['ratios']['spatial_over_planar_sweep']:.2f}x, "
        f"single {report['ratios']['spatial_over_planar_single']:.2f}x; per vector-field evaluation "
        f"{report['ratios']['spatial_over_planar_field']:.2f}x ({one['field_microseconds']:.0f} vs "
        f"{two['field_microseconds']:.0f} us)",
        f"- spatial sweep / scipy on the same field: {report['ratios']['sweep_over_scipy']:.1f}x the throughput",
    ])


def spatial_parse_args(argv=None):
    parser = argparse.ArgumentParser(description=spatial.__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 x 2 grid over 1 ms")
    parser.add_argument("--t-end", default=None, help='horizon (default "5 ms"; --quick "1 ms")')
    parser.add_argument("--grid", type=int, nargs=2, default=None, help="clearances restitutions (default 4 4)")
    parser.add_argument("--lanes", type=int, default=8)
    parser.add_argument("--scipy-points", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed rounds of the warm runs, interleaved; the least time of each counts")
    parser.add_argument("--out", default="outputs/benchmarks/spatial_throughput")
    return parser.parse_args(argv)


def spatial(argv=None) -> int:
    """Spatial sweep throughput: the 3-D Flores slider-crank against the planar one and scipy.

    One run measures, on the same machine, with the same horizon and tolerances:

    1. a clearance x restitution sweep of the aligned spatial slider-crank
       (``configs/flores_slider_crank_3d.toml``, cylindrical clearance joint in 5 slices) run as
       ``clearance sweep`` runs it: ``ParameterMap`` + refilling lanes (``model.solve_ensemble``)
       with the summary metrics inside the compiled call; warm (compiled once, timed on a
       second call);
    2. the same grid on the planar Flores slider-crank (``configs/flores_slider_crank.toml``);
    3. single simulations (``jit(model.simulate)``, warm) of the nominal point of each, with
       their step counts and the cost of one vector-field evaluation;

    the warm runs of 1-3 are timed in ``--repeats`` interleaved rounds, each at its least time;
    4. ``scipy.integrate.solve_ivp`` (RK45, the same rtol/atol) on the same spatial vector
       field, compiled with ``jax.jit`` and called from scipy, on a few points of the grid.

    Prints a Markdown report and writes it (plus ``spatial_throughput.json``) to ``--out``.
    Run from the repository root::

        python -m benchmarks.throughput --case spatial            # 4 x 4 grid, 5 ms
        python -m benchmarks.throughput --case spatial --quick    # 2 x 2 grid, 1 ms
    """
    args = spatial_parse_args(argv)
    t_end = args.t_end or ("1 ms" if args.quick else "5 ms")
    shape = args.grid or ((2, 2) if args.quick else (4, 4))
    points = spatial_grid(*shape)
    spatial, settings = spatial_load("flores_slider_crank_3d.toml", t_end, "10 us")
    planar, planar_settings = spatial_load("flores_slider_crank.toml", t_end, "10 us")
    report = {"t_end": t_end, "grid": f"{shape[0]} x {shape[1]}", "lanes": args.lanes, "rtol": settings.rtol,
              "atol": settings.atol, "solver": settings.solver, "backend": jax.default_backend()}
    report["spatial_single"] = single_run(spatial, settings)
    report["planar_single"] = single_run(planar, planar_settings)
    spatial_sweep = compiled_sweep(spatial, settings, points, args.lanes)
    planar_sweep = compiled_sweep(planar, planar_settings, points, args.lanes)
    best = interleaved_best({"spatial_sweep": lambda: spatial_sweep[0](spatial_sweep[1]),
                             "planar_sweep": lambda: planar_sweep[0](planar_sweep[1]),
                             "spatial_single": report["spatial_single"].pop("call"),
                             "planar_single": report["planar_single"].pop("call")}, args.repeats)
    report["spatial_sweep"] = sweep_report(points, best["spatial_sweep"], *spatial_sweep[2:])
    report["planar_sweep"] = sweep_report(points, best["planar_sweep"], *planar_sweep[2:])
    report["spatial_single"]["seconds"] = best["spatial_single"]
    report["planar_single"]["seconds"] = best["planar_single"]
    report["scipy_spatial"] = scipy_rate(spatial, settings, points[: args.scipy_points])
    report["ratios"] = {
        "spatial_over_planar_sweep": report["planar_sweep"]["points_per_second"]
        / report["spatial_sweep"]["points_per_second"],
        "spatial_over_planar_single": report["spatial_single"]["seconds"] / report["planar_single"]["seconds"],
        "spatial_over_planar_field": report["spatial_single"]["field_microseconds"]
        / report["planar_single"]["field_microseconds"],
        "sweep_over_scipy": report["spatial_sweep"]["points_per_second"] / report["scipy_spatial"]["points_per_second"],
    }
    text = spatial_markdown(report)
    print(text)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "spatial_throughput.md").write_text(text + "\n")
    (out / "spatial_throughput.json").write_text(json.dumps(report, indent=2))
    return 0


# ---------------------------------------------------------------------- lubricated
LUBRICATED = REPOSITORY / "configs" / "flores_lubricated.toml"


DRY = REPOSITORY / "configs" / "flores_slider_crank.toml"


VISCOSITY, CLEARANCE = "joints.pin.lubrication.viscosity", "joints.pin.clearance"


LUBRICATED_PEAKS = ("peak pin force", "peak slider acceleration")


def lubricated_grid(viscosities: int, clearances: int) -> np.ndarray:
    """(viscosity Pa s, clearance m) points: 25-400 cP (log) x 0.1-0.5 mm."""
    mu = np.geomspace(0.025, 0.4, viscosities)
    c = np.linspace(0.1e-3, 0.5e-3, clearances)
    return np.stack(np.meshgrid(mu, c, indexing="ij"), axis=-1).reshape(-1, 2)


def lubricated_peaks(mechanism, trajectory) -> jnp.ndarray:
    """Peak pin force (N) and peak |slider x-acceleration| (m/s^2) over the output samples."""
    slider_ax = 3 * mechanism.body_names.index("slider")
    return jnp.stack([jnp.max(trajectory.normal_force[:, 0]), jnp.max(jnp.abs(trajectory.qdd[:, slider_ax]))])


def ensemble_function(config, paths, lanes, **settings_changes):
    """Compiled ``values [points, len(paths)] -> (peaks [points, 2], steps, result)``."""
    mechanism, settings = peers.load_flores(config, **settings_changes)
    parameters = ParameterMap(mechanism, paths)

    @jax.jit
    def run(values):
        mechanisms = jax.vmap(parameters.apply, (None, 0))(mechanism, values)
        solution = model.solve_ensemble(mechanisms, settings, lanes)
        return solution.map_points(lubricated_peaks, mechanisms), solution.steps, solution.result

    return run, mechanism, settings, parameters


def timed_call(function, *args) -> tuple[float, object]:
    start = time.perf_counter()
    result = jax.block_until_ready(function(*args))
    return time.perf_counter() - start, result


def peaks_error(values: np.ndarray, reference: np.ndarray) -> float:
    return float(np.max(np.abs(values - reference) / np.abs(reference)))


def scipy_arm(mechanism, settings, parameters, points, rtol, field):
    """Peaks of every point with LSODA at ``rtol`` (atol scaled like ours); seconds."""
    results, seconds, steps = [], 0.0, 0
    for values in points:
        member = parameters.apply(mechanism, values)
        solved = peers.solve_with_scipy(member, settings, "LSODA", rtol, rtol * settings.atol / settings.rtol,
                                             field=field)
        results.append(np.asarray(lubricated_peaks(member, solved["trajectory"])) if solved["success"] else [np.inf] * 2)
        seconds += solved["seconds"]
        steps += solved["steps"]
    return np.asarray(results), seconds, steps


def lubricated_sweep(argv=None) -> int:
    """Throughput of the lubricated Flores slider-crank in a sweep: refilling lanes against the
    dry joint on the same grid and against ``scipy.integrate.solve_ivp`` (LSODA) at matched
    accuracy, in one run.

    Arms (the CPU may be shared: the timed arms are interleaved, repeat by repeat, and the
    report's main result is their ratios):

    1. **lubricated**: a viscosity x clearance grid of ``configs/flores_lubricated.toml``
       through :func:`model.solve_ensemble` (refilling lanes, as ``clearance sweep`` runs it),
       with the config's solver and tolerances; the peak pin force and peak slider
       acceleration of each point are reduced inside the compiled function;
    2. **dry**: the same clearances (each repeated once per viscosity, so the same number of
       points) on ``configs/flores_slider_crank.toml``, same solver and tolerances;
    3. **scipy**: LSODA on the same lubricated model's compiled vector field and Jacobian
       (``benchmarks.peers --case scipy``), one ``solve_ivp`` call per point, at the loosest rtol
       (decades) whose largest relative error in the two peaks over the grid is no larger than
       ours.

    Errors are measured against a tight reference of every lubricated point (Dopri8,
    rtol 1e-11, atol 1e-14, through the same lanes). Compilation is excluded from the timings.

    Run from the repository root::

        python -m benchmarks.throughput --case lubricated                 # 16 points, 3 ms (a quarter revolution)
        python -m benchmarks.throughput --case lubricated --quick         # smoke run: 4 points, 1 ms
    """
    parser = argparse.ArgumentParser(description=lubricated_sweep.__doc__.splitlines()[0])
    parser.add_argument("--viscosities", type=int, default=4)
    parser.add_argument("--clearances", type=int, default=4)
    parser.add_argument("--t-end", type=float, default=3e-3, help="s (default 3 ms, a quarter revolution)")
    parser.add_argument("--lanes", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 x 2 points, 1 ms, 1 repeat")
    parser.add_argument("--out", default=str(REPOSITORY / "outputs" / "benchmarks" / "lubrication_throughput"))
    args = parser.parse_args(argv)
    if args.quick:
        args.viscosities, args.clearances, args.t_end, args.repeats = 2, 2, 1e-3, 1
    points = lubricated_grid(args.viscosities, args.clearances)
    common = dict(t_end=args.t_end)
    log = lambda message: print(message, flush=True)  # noqa: E731

    lubricated, mechanism, settings, parameters = ensemble_function(LUBRICATED, (VISCOSITY, CLEARANCE), args.lanes, **common)
    dry, *_ = ensemble_function(DRY, (CLEARANCE,), args.lanes, **common)
    reference_run, *_ = ensemble_function(LUBRICATED, (VISCOSITY, CLEARANCE), args.lanes, solver="dopri8",
                                          rtol=1e-11, atol=1e-14, **common)
    compile_seconds = {}
    for name, function, values in (("lubricated", lubricated, points), ("dry", dry, points[:, 1:]),
                                   ("reference", reference_run, points)):
        compile_seconds[name], _ = timed_call(function, values)
        log(f"compiled and ran {name}: {compile_seconds[name]:.1f} s")
    _, (reference, _, reference_result) = timed_call(reference_run, points)
    assert np.all(np.asarray(reference_result) == 0), "reference solve failed"
    reference = np.asarray(reference)
    _, (ours, our_steps, our_result) = timed_call(lubricated, points)
    assert np.all(np.asarray(our_result) == 0)
    our_error = peaks_error(np.asarray(ours), reference)
    log(f"ours ({settings.solver}, rtol {settings.rtol:g}): largest relative error in the peaks {our_error:.2e}")

    field = peers.compile_field(mechanism, with_jacobian=True)
    scan = []
    for rtol in (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9):
        values, seconds, steps = scipy_arm(mechanism, settings, parameters, points, rtol, field)
        error = peaks_error(values, reference)
        scan.append({"rtol": rtol, "error": error, "seconds": seconds, "steps": steps})
        log(f"LSODA rtol {rtol:.0e}: error {error:.2e} (ours {our_error:.2e}), {seconds:.2f} s, {steps} steps")
        if error <= our_error:
            break
    matched = scan[-1]

    runs = []
    for repeat in range(args.repeats):  # interleaved: each repeat times every arm once
        t_lub, _ = timed_call(lubricated, points)
        t_dry, (_, dry_steps, dry_result) = timed_call(dry, points[:, 1:])
        _, t_scipy, _ = scipy_arm(mechanism, settings, parameters, points, matched["rtol"], field)
        runs.append({"lubricated": t_lub, "dry": t_dry, "scipy": t_scipy})
        log(f"repeat {repeat}: lubricated {t_lub:.2f} s, dry {t_dry:.2f} s, LSODA {t_scipy:.2f} s")
    ratios = {"lubricated / dry": float(np.median([r["lubricated"] / r["dry"] for r in runs])),
              "LSODA / lubricated": float(np.median([r["scipy"] / r["lubricated"] for r in runs]))}
    report = {
        "points": len(points), "t_end": args.t_end, "lanes": args.lanes, "solver": settings.solver,
        "rtol": settings.rtol, "atol": settings.atol, "our_error": our_error, "lsoda_matched": matched,
        "lsoda_scan": scan, "matched": matched["error"] <= our_error,
        "steps": {"lubricated": int(np.sum(our_steps)), "dry": int(np.sum(dry_steps)), "lsoda": matched["steps"]},
        "compile_seconds": compile_seconds, "runs": runs, "median_ratios": ratios,
    }
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "lubrication_throughput.json").write_text(json.dumps(report, indent=2))
    log(f"{len(points)} points, t_end {args.t_end * 1e3:g} ms; median ratios over {args.repeats} interleaved repeats: "
        + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items())
        + f"; steps lubricated {report['steps']['lubricated']}, dry {report['steps']['dry']}, LSODA {matched['steps']}"
        + f"; LSODA matched at rtol {matched['rtol']:.0e}: {report['matched']}")
    return 0


# ---------------------------------------------------------------------- lanes
def cpu_lanes(argv=None) -> int:
    """Refilling lanes per call on one CPU core: throughput of the sweep's chunk function on
    128 points of the Flores 16 x 16 grid (2 revolutions) at each lane count given.

        taskset -c 0 python -m benchmarks.throughput --case lanes 16 32 64      # ~1.5 min; pinned as the sweep's workers are

    The sweep's CPU default is ``sweep.run.CPU_LANES``; docs/BENCHMARKS.md records the table.
    """
    parser = argparse.ArgumentParser(description=cpu_lanes.__doc__.splitlines()[0])
    parser.add_argument("lanes", type=int, nargs="+")
    args = parser.parse_args(argv)
    prefer_single_threaded_cpu()  # as in the sweep's worker processes, before JAX starts
    mechanism, settings = peers.load_flores(t_end=24e-3)
    points = sweep_grid(16, 16)[::2]  # 128 points spread over the grid
    print("| lanes | sims/s | seconds | compile (s) | steps mean |\n|---:|---:|---:|---:|---:|")
    for lanes in args.lanes:
        run, compile_seconds = chunk_runner(mechanism, settings, SWEPT_PATHS, len(points), lanes=lanes,
                                            resolver=ParameterMap)
        start = time.perf_counter()
        columns = run(points)
        seconds = time.perf_counter() - start
        print(f"| {lanes} | {len(points) / seconds:.2f} | {seconds:.1f} | {compile_seconds:.1f} | "
              f"{np.mean(columns['steps']):.0f} |", flush=True)
    return 0


# ---------------------------------------------------------------------- gpu
FIRST_IMPACT = ("pin.first_impact_time", "pin.first_impact_velocity")


GPU_PEAKS = ("pin.max_normal_force", "pin.max_penetration")


FIRST_IMPACT_AGREEMENT = 1e-6  # relative; the integrator's rtol is 1e-6 and no impact precedes it


PEAK_AGREEMENT = 1e-2  # relative


PEAK_SHARE = 0.9  # share of points whose peaks agree within PEAK_AGREEMENT


def gpu_grid(points: int) -> np.ndarray:
    """About ``points`` clearance (0.1-0.5 mm) x restitution (0.5-0.99) points, ordered
    costliest first (``model.relative_solve_cost``) as the sweep tool queues them."""
    side = int(np.ceil(np.sqrt(points)))
    c, e = np.meshgrid(np.linspace(0.1e-3, 0.5e-3, side), np.linspace(0.5, 0.99, side), indexing="ij")
    return np.stack([c.ravel(), e.ravel()], axis=1)[:points]


def lanes_run(mechanism, settings, points: np.ndarray, device, lanes: int | None, chunk: int) -> dict:
    """The sweep tool's chunk function on ``device``: calls of ``chunk`` points."""
    batch = min(chunk, len(points))
    lanes = lanes or sweep_run.default_lanes(batch, device.platform)
    with jax.default_device(device):  # compile for, and run on, ``device`` (not just the default one)
        mechanism = jax.device_put(mechanism, device)
        run, compile_seconds = sweep_run.chunk_runner(mechanism, settings, SWEPT_PATHS, batch, devices=(device,), lanes=lanes,
                                                          resolver=ParameterMap)
        start = time.perf_counter()
        columns = run(points)
        seconds = time.perf_counter() - start
    slots = float(np.sum(columns.pop(sweep_run.STEP_SLOTS)))
    steps = np.asarray(columns["steps"])
    return {"device": device.platform, "lanes": lanes, "chunk": batch, "compile_seconds": compile_seconds,
            "seconds": seconds, "columns": columns, "efficiency": float(steps.sum() / slots)}


def vmap_run(mechanism, settings, points: np.ndarray, device, chunk: int) -> dict:
    """``jit(vmap(simulate))`` on ``device`` in calls of ``chunk`` points (lockstep)."""
    batch = min(chunk, len(points))

    def batched(mechanism, values):
        return sweep_run._lockstep_points(mechanism, values, settings, SWEPT_PATHS, ParameterMap, ())

    spec = jax.ShapeDtypeStruct((batch, len(SWEPT_PATHS)), jnp.float64)
    start = time.perf_counter()
    mechanism = jax.device_put(mechanism, device)
    with jax.default_device(device):
        compiled = jax.jit(batched).lower(mechanism, spec).compile()
    compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    columns: dict[str, list] = {}
    slots = 0.0
    for first in range(0, len(points), batch):
        chosen = points[first:first + batch]
        outcome, call_slots = jax.device_get(compiled(mechanism, jax.device_put(sweep_run.pad_rows(chosen, batch), device)))
        slots += float(call_slots)
        for name, column in {**outcome.metrics, "steps": outcome.steps, "result": outcome.result}.items():
            columns.setdefault(name, []).append(np.asarray(column)[: len(chosen)])
    seconds = time.perf_counter() - start
    merged = {name: np.concatenate(parts) for name, parts in columns.items()}
    return {"device": device.platform, "lanes": batch, "chunk": batch, "compile_seconds": compile_seconds,
            "seconds": seconds, "columns": merged, "efficiency": float(merged["steps"].sum() / slots)}


def agreement(columns: dict, reference: dict, rows: np.ndarray) -> dict:
    """Relative differences of ``columns[rows]`` from the CPU's ``reference`` (same points)."""
    out = {}
    for name in FIRST_IMPACT + GPU_PEAKS:
        ours, ref = np.asarray(columns[name])[rows], np.asarray(reference[name])
        difference = np.abs(ours - ref) / np.maximum(np.abs(ref), 1e-300)
        out[name] = {"max": float(np.nanmax(difference)), "median": float(np.nanmedian(difference)),
                     "share_within_peak_tolerance": float(np.mean(difference <= PEAK_AGREEMENT))}
    first_ok = all(out[name]["max"] <= FIRST_IMPACT_AGREEMENT for name in FIRST_IMPACT)
    peaks_ok = all(out[name]["share_within_peak_tolerance"] >= PEAK_SHARE for name in GPU_PEAKS)
    out["passed"] = bool(first_ok and peaks_ok)
    return out


def summarise(mode: str, size: int, result: dict, check: dict | None) -> dict:
    steps = np.asarray(result["columns"]["steps"])
    return {"mode": mode, "points": size, "device": result["device"], "lanes": result["lanes"],
            "chunk": result["chunk"], "compile_seconds": result["compile_seconds"], "seconds": result["seconds"],
            "simulations_per_second": len(steps) / result["seconds"], "lane_efficiency": result["efficiency"],
            "steps_mean": float(steps.mean()), "steps_max": int(steps.max()),
            "failed": int(np.sum(np.asarray(result["columns"]["result"]) != 0)), "agreement_with_cpu": check}


def gpu_markdown(report: dict) -> str:
    lines = [f"Flores sweep, t_end = {report['t_end'] * 1e3:g} ms, backend `{report['backend']}` "
             f"({report['device']}); agreement with the CPU on {report['cpu_points']} points: first-impact "
             f"figures within {FIRST_IMPACT_AGREEMENT:g} (max), peaks within {PEAK_AGREEMENT:g} on at least "
             f"{PEAK_SHARE:.0%} of points.", "",
             "| points | execution | device | lanes | chunk | sims/s | run (s) | compile (s) | lane efficiency | "
             "steps mean / max | failed | first impact vs CPU (max) | peaks vs CPU (share within) | agrees |",
             "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for row in report["runs"]:
        check = row["agreement_with_cpu"]
        first = max(check[name]["max"] for name in FIRST_IMPACT) if check else float("nan")
        peaks = min(check[name]["share_within_peak_tolerance"] for name in GPU_PEAKS) if check else float("nan")
        lines.append(f"| {row['points']} | {row['mode']} | {row['device']} | {row['lanes']} | {row['chunk']} | "
                     f"{row['simulations_per_second']:.1f} | {row['seconds']:.2f} | {row['compile_seconds']:.1f} | "
                     f"{row['lane_efficiency']:.2f} | {row['steps_mean']:.0f} / {row['steps_max']} | {row['failed']} | "
                     f"{first:.1e} | {peaks:.2f} | {'yes' if check and check['passed'] else ('-' if not check else 'NO')} |")
    return "\n".join(lines) + "\n"


def gpu_parse_args(argv=None):
    parser = argparse.ArgumentParser(description=gpu.__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=(1024, 4096, 16384))
    parser.add_argument("--t-end", type=float, default=24e-3, help="s (2 revolutions at 5000 rpm)")
    parser.add_argument("--lanes", type=int, default=None, help="refilling lanes (default: sweep.run.default_lanes)")
    parser.add_argument("--chunk", type=int, default=16384, help="points per refilling-lanes call at most")
    parser.add_argument("--vmap-chunk", type=int, default=1024, help="points per plain-vmap call")
    parser.add_argument("--cpu-points", type=int, default=256, help="points the CPU path runs (spread over the grid)")
    parser.add_argument("--cpu-chunk", type=int, default=sweep_run.CPU_CHUNK, help="points per CPU call")
    parser.add_argument("--skip-vmap", action="store_true")
    parser.add_argument("--quick", action="store_true", help="smoke run on any machine (< 2 min)")
    parser.add_argument("--out", default="outputs/benchmarks/gpu_sweep")
    args = parser.parse_args(argv)
    if args.quick:
        # one compiled batch of 8 serves every call, so the run compiles twice (lanes, vmap)
        args.sizes, args.t_end, args.cpu_points = (8, 16), 0.5e-3, 16
        args.chunk = args.vmap_chunk = args.cpu_chunk = 8
    return args


def gpu(argv=None) -> int:
    """The Flores sweep on an accelerator: refilling lanes, plain ``jax.vmap`` and the CPU path.

    For each sweep size (default 1k, 4k and 16k points of a clearance x restitution grid on the
    Flores slider-crank, 2 revolutions) one run measures, on the default JAX device:

    1. **refilling lanes** — the sweep tool's own chunk function (``sweep.run.chunk_runner``,
       :func:`model.solve_ensemble`), the whole size in one call, with the lanes
       ``sweep.run.default_lanes`` chooses for the backend (thousands on a GPU; ``--lanes`` to
       override);
    2. **plain vmap** — ``jit(vmap(simulate))`` of the same points in calls of ``--vmap-chunk``
       (lockstep: every call runs as long as its slowest point);
    3. **the CPU path** — the same chunk function on ``jax.devices("cpu")[0]`` with the CPU's
       lanes and chunks (one process), on ``--cpu-points`` points spread over the grid
       (the CPU would take minutes for 16k).

    The metrics of every accelerator run are checked against the CPU's on those points:
    first-impact time and speed, which precede any chaos, to ``FIRST_IMPACT_AGREEMENT``
    (relative); the peaks over 2 revolutions depend on every impact before them, and two float64
    solves that only order their arithmetic differently drift apart after a few impacts
    (``benchmarks.peers --case scipy``), so for them the share of points within
    ``PEAK_AGREEMENT`` is reported and must reach ``PEAK_SHARE``.

    Writes ``gpu_sweep.json`` and ``gpu_sweep.md`` to ``--out`` after every size (a run cut
    short keeps what it measured). Run from the repository root::

        python -m benchmarks.throughput --case gpu                 # on a machine with a GPU (~5-8 min)
        python -m benchmarks.throughput --case gpu --quick         # end to end on a CPU (< 2 min), numbers not meaningful
    """
    args = gpu_parse_args(argv)
    sweep_run.prefer_single_threaded_cpu()
    config = load_mechanism(FLORES_CONFIG)
    mechanism = build_mechanism(config)
    settings = dataclasses.replace(solver_settings(config), t_end=args.t_end)
    device, cpu = jax.devices()[0], jax.devices("cpu")[0]
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"command": harness.command_line(), "python": platform.python_version(), "jax": jax.__version__,
              "backend": jax.default_backend(), "device": str(device.device_kind), "cpus": os.cpu_count(),
              "t_end": args.t_end, "cpu_points": 0, "runs": []}
    for size in args.sizes:
        points = gpu_grid(size)
        points = points[cost_order(point_costs(mechanism, SWEPT_PATHS, points, ParameterMap))]
        rows = np.unique(np.linspace(0, size - 1, min(args.cpu_points, size)).round().astype(int))
        report["cpu_points"] = len(rows)
        reference = lanes_run(mechanism, settings, points[rows], cpu, None, args.cpu_chunk)
        runs = [("refilling lanes", lanes_run(mechanism, settings, points, device, args.lanes, args.chunk))]
        if not args.skip_vmap:
            runs.append(("plain vmap", vmap_run(mechanism, settings, points, device, args.vmap_chunk)))
        for mode, result in runs:
            report["runs"].append(summarise(mode, size, result, agreement(result["columns"], reference["columns"], rows)))
        report["runs"].append(summarise("CPU path (refilling lanes, one process)", len(rows), reference, None))
        for row in report["runs"][-len(runs) - 1:]:
            print(f"{row['points']:6d} {row['mode']:40s} {row['device']:4s} lanes {row['lanes']:5d}: "
                  f"{row['simulations_per_second']:8.1f} sims/s, compile {row['compile_seconds']:.1f} s, "
                  f"efficiency {row['lane_efficiency']:.2f}, agrees with CPU: "
                  f"{row['agreement_with_cpu']['passed'] if row['agreement_with_cpu'] else '-'}", flush=True)
        (out / "gpu_sweep.json").write_text(json.dumps(report, indent=2))
        (out / "gpu_sweep.md").write_text(gpu_markdown(report))
    print(gpu_markdown(report))
    return 0 if all(r["agreement_with_cpu"] is None or r["agreement_with_cpu"]["passed"] for r in report["runs"]) else 1


# ---------------------------------------------------------------------- end_to_end
# phase -> (file suffix, function name) whose cumulative CPU time it is
PHASES = {
    "imports (JAX, the packages; all of them)": ("<frozen importlib._bootstrap>", "_find_and_load"),
    "load and check the config": ("pipelines/sweeping/study.py", "load_sweep"),
    "trace / load the chunk function": ("sweep/run.py", "compiled_batch"),
    "solve (chunk calls)": ("sweep/run.py", "run_batches"),
    "worker processes (start, wait)": ("sweep/execute.py", "run"),
    "results.parquet, sweep.json": ("sweep/files.py", "write_parquet"),
    "plots": ("pipelines/io.py", "save_figure"),
}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def end_to_end(argv=None) -> int:
    """Where the time of a warm ``clearance sweep`` goes: imports, loading executables, solving,
    writing results, plots.

    Runs the command in this process under ``cProfile`` with a CPU-time clock (the 2-core
    development machine is shared, so wall time mostly measures the neighbours; CPU time of
    this process and its workers does not) after one untimed run that fills JAX's and the
    sweep's caches, and prints one Markdown row per phase (cumulative CPU time of the functions
    named in ``PHASES``, in the driver process; worker processes count in the total only). Run from the repository root::

        python -m benchmarks.throughput --case end-to-end benchmarks/flores_sweep_256.toml
        python -m benchmarks.throughput --case end-to-end benchmarks/flores_sweep_256.toml \
            --set sweep.parameters.0.num=4 --set sweep.parameters.1.num=4     # 16 points
    """
    parser = argparse.ArgumentParser(description=end_to_end.__doc__.splitlines()[0])
    parser.add_argument("config")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args, extra = parser.parse_known_args(argv)
    out = tempfile.mkdtemp(prefix="sweep_e2e_")
    command = ["sweep", args.config, "--out", out, "--no-progress", *extra]
    for override in args.overrides:
        command += ["--set", override]
    warm = subprocess.run([sys.executable, "-m", "pipelines.cli", *command], capture_output=True, text=True)
    if warm.returncode:
        print(warm.stderr[-2000:])
        return warm.returncode
    start = time.perf_counter()  # what a user waits for: the warm command, unprofiled
    plain = subprocess.run([sys.executable, "-m", "pipelines.cli", *command], capture_output=True, text=True)
    plain_wall = time.perf_counter() - start
    if plain.returncode:
        print(plain.stderr[-2000:])
        return plain.returncode
    script = ("import cProfile, pstats, sys, time; start = time.process_time(); "
              "profile = cProfile.Profile(time.process_time); profile.enable(); "
              "from pipelines.cli import main; code = main(sys.argv[1:]); profile.disable(); "
              f"profile.dump_stats({out + '/profile.prof'!r}); sys.exit(code)")
    before, start = children_cpu(), time.perf_counter()
    timed = subprocess.run([sys.executable, "-c", script, *command], capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, children_cpu() - before
    print(timed.stdout.strip().splitlines()[0] if timed.stdout else timed.stderr[-2000:])
    stats = pstats.Stats(out + "/profile.prof").stats
    cumulative = {}
    for (filename, _, function), (_, _, _, cumtime, _) in stats.items():
        for phase, where in PHASES.items():
            if where and filename.endswith(where[0]) and function == where[1]:
                cumulative[phase] = max(cumulative.get(phase, 0.0), cumtime)
    main_cpu = max(row[3] for key, row in stats.items() if key[2] == "main" and key[0].endswith("pipelines/cli.py"))
    print(f"\n`python -m pipelines.cli {' '.join(command[:2] + command[4:])}`, warm caches: wall {plain_wall:.1f} s "
          f"unprofiled; profiled wall {wall:.1f} s, CPU {cpu:.1f} s (this process and its workers; load average "
          f"{os.getloadavg()[0]:.1f})\n")
    print("| phase | CPU s (this process) |\n|---|---:|")
    for phase in PHASES:
        print(f"| {phase} | {cumulative.get(phase, 0.0):.2f} |")
    print(f"| whole command (`main`) | {main_cpu:.2f} |")
    return 0


# ---------------------------------------------------------------------- memory
PAGE = os.sysconf("SC_PAGE_SIZE")


def process_tree(root: int) -> list[int]:
    """``root`` and every process descended from it (from ``/proc/*/stat``)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = pathlib.Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        found += frontier
    return found


def resident(pid: int) -> int:
    """Resident memory of ``pid`` in bytes (0 once it has ended)."""
    try:
        return int(pathlib.Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except OSError:
        return 0


def memory_measure(shape: str, t_end: str, out: pathlib.Path, extra: list[str]) -> dict:
    first, second = (int(n) for n in shape.split("x"))
    command = [sys.executable, "-m", "pipelines.cli", "sweep", str(REPOSITORY / "benchmarks" / "flores_sweep_256.toml"),
               "--set", f"sweep.parameters.0.num={first}", "--set", f"sweep.parameters.1.num={second}",
               "--set", f'simulation.t_end="{t_end}"', "--out", str(out / shape), "--no-progress", *extra]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak_sum = peak_one = 0
    while process.poll() is None:
        sizes = [resident(pid) for pid in process_tree(process.pid)]
        peak_sum, peak_one = max(peak_sum, sum(sizes)), max(peak_one, max(sizes))
        time.sleep(0.2)
    stdout, stderr = process.communicate()
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{stderr[-2000:]}")
    return {"points": first * second, "t_end": t_end, "wall_seconds": round(time.perf_counter() - start, 1),
            "peak_rss_sum_MB": round(peak_sum / 2**20), "peak_rss_largest_process_MB": round(peak_one / 2**20),
            "summary": stdout.strip().splitlines()[0], "command": " ".join(command[1:])}


def memory(argv=None) -> int:
    """Peak memory of `clearance sweep` against the number of points (docs/BENCHMARKS.md,
    "Memory of a large sweep").

    Runs the command on the Flores grid of ``flores_sweep_256.toml`` resized to each point
    count (``--set sweep.parameters.N.num``) with a short ``t_end``, samples the resident memory
    of the command and every process it started (its worker processes and figure processes)
    every 0.2 s from ``/proc``, and writes one JSON line per run: the peak of their sum, the
    peak of the largest single process and the wall time.

        python -m benchmarks.throughput --case memory 25x40 100x100 250x400 --t-end "0.3 ms"
    """
    parser = argparse.ArgumentParser(description=memory.__doc__.splitlines()[0])
    parser.add_argument("shapes", nargs="+", help="grid sizes, e.g. 25x40 (1,000 points)")
    parser.add_argument("--t-end", default="0.3 ms")
    parser.add_argument("--out", default="outputs/benchmarks/sweep_memory")
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="more options for the command, after --")
    args = parser.parse_args(argv)
    for shape in args.shapes:
        print(json.dumps(memory_measure(shape, args.t_end, pathlib.Path(args.out), [a for a in args.extra if a != "--"])), flush=True)
    return 0


# ---------------------------------------------------------------------- same_run
DEFAULT_CONFIG = "benchmarks/flores_sweep_256.toml"


def git(*args: str, cwd: pathlib.Path = REPOSITORY) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def in_run_rate(summary: dict) -> float:
    """Points per second of the busiest worker's chunk time."""
    busy: collections.Counter = collections.Counter()
    for chunk in summary["chunks"]:
        busy[chunk["worker"]] += chunk["seconds"]
    return summary["points"] / max(busy.values())


def run_sweep(tree: pathlib.Path, config: str, overrides: list[str], out: pathlib.Path, cache: pathlib.Path) -> dict:
    command = [sys.executable, "-m", "pipelines.cli", "sweep", config, "--no-progress", "--out", str(out)]
    for override in overrides:
        command += ["--set", override]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True,
                          env={**os.environ, "CLEARANCE_JAX_CACHE": str(cache)})
    wall = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{tree}: clearance sweep failed:\n{done.stderr[-3000:]}")
    summary = json.loads((out / "sweep.json").read_text())
    return {"wall": wall, "sweep": summary["total_seconds"], "in_run": in_run_rate(summary), "points": summary["points"],
            "executor": summary["executor"], "git_revision": summary.get("git_revision")}


def same_run(argv=None) -> int:
    """The sweep against another revision of this repository, in the same run.

    Throughput figures measured on different days on a shared machine differ by up to 2x from
    load alone, so a speed-up is only measured against another revision run side by side. This
    case checks that revision out as a git worktree (any commit: the old path stays
    runnable without keeping old code in the tree), then runs the same warm ``clearance sweep``
    alternately in both trees, each with its own compilation cache, and reports per tree:

    - **wall**: the whole command as a user waits for it (interpreter start to exit);
    - **sweep**: ``total_seconds`` of ``sweep.json`` (planning, worker start, solving, storing);
    - **in-run**: points / the busiest worker's summed chunk seconds (``sweep.json`` chunks:
      each chunk's time inside its worker, compiled function called to results returned).

    Medians over ``--repeats`` interleaved runs, after one untimed run per tree that fills its
    caches. Run from the repository root::

        python -m benchmarks.throughput --case same-run --baseline REVISION
        python -m benchmarks.throughput --case same-run --baseline REVISION --set sweep.parameters.0.num=4 \
            --set sweep.parameters.1.num=4                                       # 16 points

    Writes ``same_run.json`` and ``same_run.md`` to ``--out``.
    """
    parser = argparse.ArgumentParser(description=same_run.__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="the revision to compare with (a commit, tag or branch)")
    parser.add_argument("--config", default=DEFAULT_CONFIG, help="sweep config, relative to the repository root")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=pathlib.Path, default=REPOSITORY / "outputs" / "benchmarks" / "same_run")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="same_run_"))
    baseline_tree = scratch / "baseline"
    git("worktree", "add", "--detach", str(baseline_tree), args.baseline)
    try:
        # the config may be newer than the baseline: the same file, at the same place
        (baseline_tree / args.config).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPOSITORY / args.config, baseline_tree / args.config)
        trees = {"baseline": baseline_tree, "current": REPOSITORY}
        revisions = {"baseline": git("rev-parse", "--short", "HEAD", cwd=baseline_tree),
                     "current": git("rev-parse", "--short", "HEAD") + (" + changes" if git("status", "--porcelain") else "")}
        runs: dict[str, list[dict]] = {name: [] for name in trees}
        for repeat in range(args.repeats + 1):  # the first round fills the caches
            for name, tree in trees.items():
                result = run_sweep(tree, args.config, args.overrides, scratch / f"out_{name}", scratch / f"cache_{name}")
                print(f"{'warm-up' if repeat == 0 else f'run {repeat}'} {name}: wall {result['wall']:.2f} s, "
                      f"sweep {result['sweep']:.2f} s, in-run {result['in_run']:.1f} sims/s", flush=True)
                if repeat:
                    runs[name].append(result)
    finally:
        git("worktree", "remove", "--force", str(baseline_tree))
        shutil.rmtree(scratch, ignore_errors=True)
    medians = {name: {key: statistics.median(r[key] for r in rows) for key in ("wall", "sweep", "in_run")}
               for name, rows in runs.items()}
    report = {"config": args.config, "overrides": args.overrides, "repeats": args.repeats, "revisions": revisions,
              "points": runs["current"][0]["points"], "runs": runs, "medians": medians}
    (args.out / "same_run.json").write_text(json.dumps(report, indent=2))
    base, now = medians["baseline"], medians["current"]
    lines = [
        f"`python -m benchmarks.throughput --case same-run --baseline {args.baseline}"
        + "".join(f" --set {o}" for o in args.overrides) + f"`: {report['points']} points, medians of "
        f"{args.repeats} interleaved warm runs",
        "",
        "| tree | revision | wall (s) | sweep (s) | in-run (sims/s) |",
        "|---|---|---:|---:|---:|",
        *(f"| {name} | {revisions[name]} | {medians[name]['wall']:.2f} | {medians[name]['sweep']:.2f} | "
          f"{medians[name]['in_run']:.1f} |" for name in trees),
        f"| **current / baseline** | | **{base['wall'] / now['wall']:.2f}x faster** | "
        f"**{base['sweep'] / now['sweep']:.2f}x** | **{now['in_run'] / base['in_run']:.2f}x** |",
    ]
    (args.out / "same_run.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


# ---------------------------------------------------------------------- numba
def numba_ours(engine: str) -> dict:
    """``model.simulate`` on the nominal config, dopri5 at the same tolerances: the solve
    alone (best of 5, compiled), steps and peaks."""
    config = load_mechanism(REPOSITORY / "configs" / "flores_slider_crank.toml")
    mechanism = build_mechanism(config, engine)
    settings = solver_settings(config, solver="dopri5", t_end=peers.T_END, rtol=peers.RTOL, atol=peers.ATOL)
    run = jax.jit(model.solve, static_argnums=1)
    jax.block_until_ready(run(mechanism, settings))
    times = []
    for _ in range(5):
        start = time.perf_counter()
        solution = jax.block_until_ready(run(mechanism, settings))
        times.append(time.perf_counter() - start)
    trajectory = model.simulate(mechanism, settings)
    metrics = {k: float(v) for k, v in model.summary_metrics(mechanism, trajectory).items()}
    return {"seconds": min(times), "steps": int(solution.stats["num_accepted_steps"]),
            "rejected": int(solution.stats["num_rejected_steps"]), "max_normal_force": metrics["pin.max_normal_force"],
            "max_penetration": metrics["pin.max_penetration"], "num_impacts": int(metrics["pin.num_impacts"]),
            "first_impact_time": metrics["pin.first_impact_time"]}


def timed_command(command: list[str]) -> dict:
    """Wall time (s) of ``command`` and the in-run rate it prints (points/s)."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=REPOSITORY, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return {"wall": time.perf_counter() - start, **json.loads(done.stdout.strip().splitlines()[-1])}


NUMBA_GRIDS = {16: "benchmarks/flores_sweep_256.toml", 64: "benchmarks/flores_sweep_4096.toml"}


def numba_sweeps(repeats: int, grids=tuple(NUMBA_GRIDS), cache: pathlib.Path | None = None) -> list[dict]:
    """End to end, warm, medians of ``repeats`` after one untimed run each: the peer's grid
    and ``clearance sweep`` on each engine (wall, and the sweep's in-run rate)."""
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="numba_peer_"))
    cache = cache or scratch / "jax_cache"
    rows = []
    for num in grids:
        config = NUMBA_GRIDS[num]
        runs: dict[str, list] = {"numba peer": [], "joint engine": [], "absolute engine": []}
        for repeat in range(repeats + 1):
            peer = timed_command([sys.executable, "-m", "benchmarks.peers", "--case", "numba-grid", "--grid", str(num),
                                  "--out", str(scratch / f"peer_{num}.npy")])
            for engine in ("joint", "absolute"):
                result = run_sweep(REPOSITORY, config, [f"simulation.engine={engine}"], scratch / f"{engine}_{num}", cache)
                if repeat:
                    runs[f"{engine} engine"].append(result)
                print(f"  {num * num} points, round {repeat}, {engine} engine: {result['wall']:.1f} s, "
                      f"in-run {result['in_run']:.1f}/s", flush=True)
            if repeat:
                runs["numba peer"].append(peer)
            print(f"  {num * num} points, round {repeat}: peer {peer['wall']:.2f} s, in-run {peer['in_run']:.0f}/s",
                  flush=True)
        for name, results in runs.items():
            rows.append({"points": num * num, "who": name, "wall": statistics.median(r["wall"] for r in results),
                         "in_run": statistics.median(r["in_run"] for r in results)})
    return rows


# ==== cases


def numba(argv=None) -> int:
    """The Flores slider-crank in minimal coordinates, integrated by Dormand-Prince 5(4) with a
    PI step-size controller, all compiled by numba: the fastest hand-written peer of our sweep.

    Same equations, contact law and impact-velocity memory as ``benchmarks.peers --case minimal``
    (derived in ``docs/minimal_peer.md``): state ``[beta, x, beta', x', m]``, crank driven at
    ``phi = omega t``. The integrator is Dormand & Prince (1980) with the step-size control of
    ``diffrax.PIDController`` at our settings (``rtol``, ``atol``, ``pcoeff`` 0.3, ``icoeff``
    0.4, safety 0.9, factors 0.2-10; Hairer, Norsett & Wanner 1993, §II.4 for the starting
    step); peaks (normal force, penetration) and impacts are read at the accepted steps' ends.
    numba is an optional benchmark dependency; the package and its tests never import it.

    What it measures (one run, same machine, ``docs/BENCHMARKS.md`` section 1e):

    1. one simulation of 2 crank revolutions: time, accepted and rejected steps, and the
       peaks against ours (``model.simulate``, dopri5 at the same tolerances, on the joint-
       coordinate and on the absolute engine);
    2. the 256-point (16 clearances x 16 restitutions) and 4,096-point (64 x 64) grids, end to
       end (a fresh interpreter: import, worker processes, solve, results file) on 2 processes,
       against ``clearance sweep benchmarks/flores_sweep_256.toml`` / ``flores_sweep_4096.toml``
       on each engine, warm (one untimed run of each first, as ``benchmarks.throughput --case same-run``).

    Run from the repository root::

        python -m benchmarks.throughput --case numba --repeats 1           # everything (tens of minutes)
        python -m benchmarks.throughput --case numba --skip-sweeps         # the single simulation only
        python -m benchmarks.throughput --case numba --skip-single --grids 64 --jax-cache DIR   # 4,096 points only
        python -m benchmarks.peers --case numba-grid --grid 16 --out FILE  # one peer grid (what the timing runs)
    """
    parser = argparse.ArgumentParser(description=numba.__doc__.splitlines()[0])
    parser.add_argument("--skip-sweeps", action="store_true")
    parser.add_argument("--skip-single", action="store_true", help="the sweeps only")
    parser.add_argument("--jax-cache", type=pathlib.Path, help="the sweeps' compilation cache (default: a fresh one)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--grids", type=int, nargs="+", default=list(NUMBA_GRIDS), help="grid sizes (16: 256 points, 64: 4,096)")
    args = parser.parse_args(argv)
    if args.skip_single:
        report = {"sweeps": numba_sweeps(args.repeats, args.grids, args.jax_cache)}
        for row in report["sweeps"]:
            print(row)
        return 0
    peer = peers.numba_single()
    print(f"numba peer, one simulation: {peer['seconds'] * 1e3:.2f} ms, {peer['steps']} steps "
          f"({peer['rejected']} rejected), {peer['seconds'] / (peer['steps'] + peer['rejected']) * 1e6:.3f} us/step")
    report = {"peer": peer}
    for engine in ("joint", "absolute"):
        result = numba_ours(engine)
        report[engine] = result
        print(f"ours ({engine} engine, dopri5): {result['seconds'] * 1e3:.2f} ms, {result['steps']} steps "
              f"({result['rejected']} rejected), "
              f"{result['seconds'] / (result['steps'] + result['rejected']) * 1e6:.3f} us/step")
        for key in ("max_normal_force", "max_penetration", "first_impact_time", "num_impacts"):
            relative = (peer[key] - result[key]) / result[key]
            print(f"  {key}: peer {peer[key]:.9g}, ours {result[key]:.9g}, relative difference {relative:.2e}")
    if not args.skip_sweeps:
        report["sweeps"] = numba_sweeps(args.repeats, args.grids, args.jax_cache)
        for row in report["sweeps"]:
            print(row)
    out = REPOSITORY / "outputs" / "benchmarks" / "numba_peer.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, default=float))
    return 0


CASES = {"planar": planar, "spatial": spatial, "lubricated": lubricated_sweep, "lanes": cpu_lanes, "gpu": gpu,
         "end-to-end": end_to_end, "memory": memory, "same-run": same_run, "numba": numba}

if __name__ == "__main__":
    raise SystemExit(harness.main(CASES, __doc__))
