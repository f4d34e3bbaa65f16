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

    python benchmarks/spatial_throughput.py            # 4 x 4 grid, 5 ms
    python benchmarks/spatial_throughput.py --quick    # 2 x 2 grid, 1 ms
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import scipy.integrate

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import model  # noqa: E402
from pipelines.build import ParameterMap, build_mechanism, solver_settings  # noqa: E402
from pipelines.config import load_mechanism  # noqa: E402

CONFIGS = pathlib.Path(__file__).resolve().parents[1] / "configs"
PATHS = ("joints.pin.clearance", "joints.pin.contact.restitution")


def load(name: str, t_end: str, output_interval: str):
    config = load_mechanism(CONFIGS / name, [f"simulation.t_end={t_end}",
                                             f"simulation.output_interval={output_interval}"])
    return build_mechanism(config), solver_settings(config)


def grid(clearances: int, restitutions: int) -> np.ndarray:
    values = np.meshgrid(np.linspace(2.5e-4, 5e-4, clearances), np.linspace(0.5, 0.9, restitutions), indexing="ij")
    return np.stack([v.ravel() for v in values], axis=1)


def compiled_sweep(mechanism, settings, points: np.ndarray, lanes: int):
    """The sweep as ``clearance sweep`` runs it, compiled and run once: ``(run, inputs,
    compile-and-first-run seconds, outputs)``."""
    parameters = ParameterMap(mechanism, PATHS)

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
    turn: on a shared machine the load drifts over a minute, and timing the runs being
    compared side by side, each at its best, keeps that drift out of their ratio."""
    best = {name: float("inf") for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            start = time.perf_counter()
            jax.block_until_ready(call())
            best[name] = min(best[name], time.perf_counter() - start)
    return best


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
    parameters = ParameterMap(mechanism, PATHS)
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


def markdown(report: dict) -> str:
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


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 x 2 grid over 1 ms")
    parser.add_argument("--t-end", default=None, help='horizon (default "5 ms"; --quick "1 ms")')
    parser.add_argument("--grid", type=int, nargs=2, default=None, help="clearances restitutions (default 4 4)")
    parser.add_argument("--lanes", type=int, default=8)
    parser.add_argument("--scipy-points", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed rounds of the warm runs, interleaved; the least time of each counts")
    parser.add_argument("--out", default="outputs/benchmarks/spatial_throughput")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    t_end = args.t_end or ("1 ms" if args.quick else "5 ms")
    shape = args.grid or ((2, 2) if args.quick else (4, 4))
    points = grid(*shape)
    spatial, settings = load("flores_slider_crank_3d.toml", t_end, "10 us")
    planar, planar_settings = load("flores_slider_crank.toml", t_end, "10 us")
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
    text = markdown(report)
    print(text)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "spatial_throughput.md").write_text(text + "\n")
    (out / "spatial_throughput.json").write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
