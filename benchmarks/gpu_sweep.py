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
(``benchmarks/scipy_peer.py``), so for them the share of points within
``PEAK_AGREEMENT`` is reported and must reach ``PEAK_SHARE``.

Writes ``gpu_sweep.json`` and ``gpu_sweep.md`` to ``--out`` after every size (a run cut
short keeps what it measured). Run from the repository root::

    python benchmarks/gpu_sweep.py                 # on a machine with a GPU (~5-8 min)
    python benchmarks/gpu_sweep.py --quick         # end to end on a CPU (< 2 min), numbers not meaningful
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import platform
import sys
import time

# diffrax's runtime checks return NaN instead of a host callback, so executables cache
os.environ.setdefault("EQX_ON_ERROR", "nan")

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import model  # noqa: E402
from pipelines.build import build_mechanism, solver_settings  # noqa: E402
from pipelines.config import load_mechanism  # noqa: E402
from pipelines.build import ParameterMap  # noqa: E402
from sweep import run as sweep_run  # noqa: E402
from sweep.chunks import cost_order, point_costs  # noqa: E402

CONFIG = pathlib.Path(__file__).resolve().parents[1] / "configs" / "flores_slider_crank.toml"
PATHS = ("joints.pin.clearance", "joints.pin.contact.restitution")
FIRST_IMPACT = ("pin.first_impact_time", "pin.first_impact_velocity")
PEAKS = ("pin.max_normal_force", "pin.max_penetration")
FIRST_IMPACT_AGREEMENT = 1e-6  # relative; the integrator's rtol is 1e-6 and no impact precedes it
PEAK_AGREEMENT = 1e-2  # relative
PEAK_SHARE = 0.9  # share of points whose peaks agree within PEAK_AGREEMENT


def grid(points: int) -> np.ndarray:
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
        run, compile_seconds = sweep_run.chunk_runner(mechanism, settings, PATHS, batch, devices=(device,), lanes=lanes,
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
        return sweep_run._lockstep_points(mechanism, values, settings, PATHS, ParameterMap, ())

    spec = jax.ShapeDtypeStruct((batch, len(PATHS)), jnp.float64)
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
    for name in FIRST_IMPACT + PEAKS:
        ours, ref = np.asarray(columns[name])[rows], np.asarray(reference[name])
        difference = np.abs(ours - ref) / np.maximum(np.abs(ref), 1e-300)
        out[name] = {"max": float(np.nanmax(difference)), "median": float(np.nanmedian(difference)),
                     "share_within_peak_tolerance": float(np.mean(difference <= PEAK_AGREEMENT))}
    first_ok = all(out[name]["max"] <= FIRST_IMPACT_AGREEMENT for name in FIRST_IMPACT)
    peaks_ok = all(out[name]["share_within_peak_tolerance"] >= PEAK_SHARE for name in PEAKS)
    out["passed"] = bool(first_ok and peaks_ok)
    return out


def summarise(mode: str, size: int, result: dict, check: dict | None) -> dict:
    steps = np.asarray(result["columns"]["steps"])
    return {"mode": mode, "points": size, "device": result["device"], "lanes": result["lanes"],
            "chunk": result["chunk"], "compile_seconds": result["compile_seconds"], "seconds": result["seconds"],
            "simulations_per_second": len(steps) / result["seconds"], "lane_efficiency": result["efficiency"],
            "steps_mean": float(steps.mean()), "steps_max": int(steps.max()),
            "failed": int(np.sum(np.asarray(result["columns"]["result"]) != 0)), "agreement_with_cpu": check}


def markdown(report: dict) -> str:
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
        peaks = min(check[name]["share_within_peak_tolerance"] for name in PEAKS) if check else float("nan")
        lines.append(f"| {row['points']} | {row['mode']} | {row['device']} | {row['lanes']} | {row['chunk']} | "
                     f"{row['simulations_per_second']:.1f} | {row['seconds']:.2f} | {row['compile_seconds']:.1f} | "
                     f"{row['lane_efficiency']:.2f} | {row['steps_mean']:.0f} / {row['steps_max']} | {row['failed']} | "
                     f"{first:.1e} | {peaks:.2f} | {'yes' if check and check['passed'] else ('-' if not check else 'NO')} |")
    return "\n".join(lines) + "\n"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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


def main(argv=None) -> int:
    args = parse_args(argv)
    sweep_run.prefer_single_threaded_cpu()
    config = load_mechanism(CONFIG)
    mechanism = build_mechanism(config)
    settings = dataclasses.replace(solver_settings(config), t_end=args.t_end)
    device, cpu = jax.devices()[0], jax.devices("cpu")[0]
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"argv": sys.argv[1:], "python": platform.python_version(), "jax": jax.__version__,
              "backend": jax.default_backend(), "device": str(device.device_kind), "cpus": os.cpu_count(),
              "t_end": args.t_end, "cpu_points": 0, "runs": []}
    for size in args.sizes:
        points = grid(size)
        points = points[cost_order(point_costs(mechanism, PATHS, points, ParameterMap))]
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
        (out / "gpu_sweep.md").write_text(markdown(report))
    print(markdown(report))
    return 0 if all(r["agreement_with_cpu"] is None or r["agreement_with_cpu"]["passed"] for r in report["runs"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
