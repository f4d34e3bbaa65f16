"""Sweep throughput on the Flores benchmark: our sweep against two scipy peers.

The peers: the hand-derived minimal-coordinate model (``benchmarks/minimal_peer.py``) and
scipy on our compiled JAX vector field (``benchmarks/scipy_peer.py``). One run measures, on
the same machine:

1. a tight reference of the nominal Flores case (2 revolutions, 24 ms) with diffrax's
   8th-order Dopri8 at rtol = 1e-12, cross-checked by scipy's DOP853 at rtol = 1e-10;
2. the accuracy of *our* sweep solver (the config's solver and tolerances) against it, on
   the figures a clearance study reads: first-impact time and speed, and the peak
   penetration and normal force of each of the first impacts (``scipy_peer.impact_figures``);
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

    .venv/bin/python benchmarks/sweep_throughput.py            # full run (~30-60 min on 2 cores)
    .venv/bin/python benchmarks/sweep_throughput.py --quick    # smoke run (< 1 min)
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import resource
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import scipy.stats
from tqdm import tqdm

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import minimal_peer  # noqa: E402
import scipy_peer  # noqa: E402

import model  # noqa: E402
from pipelines.build import ParameterMap  # noqa: E402
from sweep.chunks import cost_order, lockstep_efficiency, point_costs, split_chunks  # noqa: E402
from sweep.run import pad_rows  # noqa: E402

SWEPT_PATHS = ("joints.pin.clearance", "joints.pin.contact.restitution")
FIGURE_NAMES = ("first_impact_time", "first_impact_velocity", "peak_penetration", "peak_normal_force")


# ----------------------------------------------------------------------------- accuracy
def figure_vector(figures: dict) -> np.ndarray:
    """The compared figures as one vector (first-impact time and speed, then the peak
    penetration and normal force of each compared impact)."""
    return np.concatenate([[figures["first_impact_time"], figures["first_impact_velocity"]],
                           figures["peak_penetration"], figures["peak_normal_force"]])


def relative_error(figures: dict, reference: dict) -> float:
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
    figures = scipy_peer.impact_figures(trajectory.t, trajectory.penetration[:, 0], trajectory.normal_force[:, 0],
                                        trajectory.impact_memory[:, 0])
    return figures, int(trajectory.steps)


def match_scipy_tolerances(mechanism, settings, reference, target_error, methods, rtols, atol_ratio,
                           time_cap, field, log) -> dict:
    """For each method, scan rtol from loose to tight until the error <= target."""
    found = {}
    for method in methods:
        scans = []
        for rtol in rtols:
            result = scipy_peer.solve_with_scipy(mechanism, settings, method, rtol, rtol * atol_ratio, field=field)
            error = relative_error(result, reference) if result["success"] else float("inf")
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
    """The same scan for the minimal-coordinate peer (``benchmarks/minimal_peer.py``)."""
    found = {}
    for method in methods:
        scans = []
        for rtol in rtols:
            result = minimal_peer.solve(params, settings.t_end, settings.output_interval, method, rtol, rtol * atol_ratio)
            error = relative_error(result, reference) if result["success"] else float("inf")
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
    compared = scipy_peer.COMPARED_IMPACTS

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

    mechanism, settings = scipy_peer.load_flores(t_end=args.memory_t_end, output_interval=args.memory_output_interval)
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
def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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


def main(argv=None) -> int:
    args = parse_args(argv)
    # the sweep's XLA CPU settings for every JAX computation of this run: the scipy peer's
    # vector field and the vmap baseline get them too (the workers set them themselves)
    from sweep.run import prefer_single_threaded_cpu

    prefer_single_threaded_cpu()
    if args.memory_only:
        print(json.dumps(memory_run(args)))
        return 0
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []

    def log(text: str) -> None:
        print(text, flush=True)

    report: dict = {"argv": sys.argv[1:], "python": platform.python_version(), "jax": jax.__version__,
                    "cpus": os.cpu_count(), "load_before": os.getloadavg()}
    changes = {"t_end": args.t_end}
    if args.output_interval is not None:
        changes["output_interval"] = args.output_interval
    mechanism, settings = scipy_peer.load_flores(**changes)
    log(f"Flores benchmark, t_end = {settings.t_end * 1e3:g} ms, output every {settings.output_interval * 1e6:g} us, "
        f"ours: {settings.solver} rtol={settings.rtol:g} atol={settings.atol:g}; load {os.getloadavg()}")

    # 1-2. reference and our accuracy
    reference, reference_steps = diffrax_figures(mechanism, eqx_replace(settings, solver="dopri8", rtol=1e-12, atol=1e-15))
    ours, our_steps = diffrax_figures(mechanism, settings)
    target = relative_error(ours, reference)
    field = scipy_peer.compile_field(mechanism, with_jacobian=any(m in scipy_peer.IMPLICIT_METHODS for m in args.methods))
    check = scipy_peer.solve_with_scipy(mechanism, settings, "DOP853", 1e-10, 1e-13, field=field)
    report["reference"] = {"solver": "diffrax dopri8 rtol=1e-12 atol=1e-15", "steps": reference_steps,
                           "figures": jsonable(reference),
                           "scipy_DOP853_1e-10_error": relative_error(check, reference)}
    report["ours"] = {"solver": settings.solver, "rtol": settings.rtol, "atol": settings.atol, "steps": our_steps,
                      "error": target, "figures": jsonable(ours)}
    log(f"reference (dopri8 1e-12): {reference_steps} steps; scipy DOP853 1e-10 differs by "
        f"{report['reference']['scipy_DOP853_1e-10_error']:.1e}; ours ({settings.solver}): error {target:.2e}")

    # 3. scipy: matched tolerance per method, the fastest, timed on sweep points
    overhead = scipy_peer.call_overhead(field, calls=200 if args.quick else 3000)
    inside = float("nan") if args.quick else scipy_peer.in_xla_evaluation_seconds(mechanism, calls=3000)
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
    base = minimal_peer.SliderCrank()
    tight = minimal_peer.solve(base, settings.t_end, settings.output_interval, "DOP853", 1e-12, 1e-15)
    report["reference"]["minimal_DOP853_1e-12_error"] = relative_error(tight, reference)
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
            result = scipy_peer.solve_with_scipy(member, settings, fastest, rtol, atol, field=field)
            if result["seconds"] < best:
                best, cpu = result["seconds"], cpu_seconds() - cpu_start
            minimal = minimal_peer.solve(base.replace(clearance=float(values[0]), restitution=float(values[1])),
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
        command = [sys.executable, __file__, "--memory-only", "--memory-points", str(args.memory_points),
                   "--memory-chunk", str(args.memory_chunk), "--memory-t-end", str(args.memory_t_end),
                   "--memory-output-interval", str(args.memory_output_interval)]
        completed = subprocess.run(command, capture_output=True, text=True, check=True)
        report["memory_run"] = json.loads(completed.stdout.strip().splitlines()[-1])
        report["memory_run"]["command"] = " ".join(["python", "benchmarks/sweep_throughput.py"] + command[2:])
        memory = report["memory_run"]
        log(f"memory run: {memory['points']} points in chunks of {memory['chunk']}, t_end {memory['t_end'] * 1e3:g} ms: "
            f"{memory['seconds']:.1f} s, peak RSS {memory['peak_rss_bytes'] / 2**30:.2f} GiB, failed {memory['failed']}")
    report["load_after"] = os.getloadavg()
    (out / "sweep_throughput.json").write_text(json.dumps(report, indent=2, default=float))
    (out / "sweep_throughput.md").write_text(markdown(report))
    print(markdown(report))
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


def markdown(report: dict) -> str:
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


if __name__ == "__main__":
    raise SystemExit(main())
