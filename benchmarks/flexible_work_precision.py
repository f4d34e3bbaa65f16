"""Work-precision study of the flexible-rod Flores slider-crank (``configs/flores_flexible.toml``)
at several element counts: stiff against explicit solvers at equal accuracy.

Error: the larger relative error of the peak pin normal force (exact peak over the accepted
steps) and of the peak |midpoint deflection| of the rod (output samples) over the window,
against a Tsit5 reference at rtol 1e-10 (explicit, so independent of the stiff solvers;
its step is bounded by the elements' stability limit whatever the tolerance, so the tight
run costs a few times a loose one, not the orders of magnitude of a contact-limited one). Cost: compiled run time (best of ``--repeats``;
the tolerances are traced, so each solver compiles once per element count) and steps. The
time at equal accuracy is each solver's cheapest run within the target error.

Run from the repository root (see ``docs/integration.md``)::

    python benchmarks/flexible_work_precision.py --elements 20,5,10 \
        --solvers tsit5,dopri5,bosh3,dopri8,rodas5p,ros34pw2 --tolerances 1e-2,3e-3,1e-3,1e-4,1e-5

Writes ``outputs/benchmarks/flexible_work_precision.json`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from dataclasses import replace

import jax
import numpy as np

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))
import model  # noqa: E402
from model.integrate.settings import STIFF_SOLVERS  # noqa: E402
from model.integrate.solver_choice import choose_solver, structural_rate  # noqa: E402
from pipelines.build import build_mechanism, solver_settings  # noqa: E402
from pipelines.config import load_mechanism  # noqa: E402
from pipelines.flexible_outputs import midpoint_deflection  # noqa: E402

CONFIG = REPOSITORY / "configs" / "flores_flexible.toml"
REFERENCE = dict(solver="tsit5", rtol=1e-10)
ATOL_PER_RTOL = 1e-3
SIMULATE = jax.jit(model.simulate, static_argnums=1)


def load(elements: int, t_end: float, output_interval: float):
    config = load_mechanism(CONFIG, [f"bodies.conrod.flexible.segments={elements}"])
    settings = solver_settings(config, t_end=t_end, output_interval=output_interval, max_steps=2_000_000)
    return build_mechanism(config), settings


def figures(mechanism, trajectory) -> dict:
    chain = mechanism.beam_chains[0]
    deflection = midpoint_deflection(np.asarray(trajectory.q), chain.segments, float(chain.element_length))
    return dict(peak_force=float(np.asarray(trajectory.peaks.max_normal_force)[0]),
                peak_deflection=float(np.max(np.abs(deflection))))


def solve(mechanism, settings, rtol: float, repeats: int) -> dict:
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        trajectory = jax.block_until_ready(SIMULATE(mechanism, settings, rtol, ATOL_PER_RTOL * rtol))
        best = min(best, time.perf_counter() - start)
    return dict(rtol=rtol, seconds=best, steps=int(trajectory.steps), rejected=int(trajectory.rejected_steps),
                result=int(trajectory.result), **figures(mechanism, trajectory))


def error(row: dict, reference: dict) -> float:
    if row["result"] != 0:
        return float("inf")
    return max(abs(row[k] / reference[k] - 1.0) for k in ("peak_force", "peak_deflection"))


def time_at_error(rows: list[dict], target: float) -> float:
    """The least run time of the solver's runs whose error is at most ``target`` (inf if none):
    an error against run time is not monotonic for a solver on its stability bound, so no
    interpolation between runs."""
    times = [r["seconds"] for r in rows if np.isfinite(r["error"]) and r["error"] <= target]
    return float(min(times)) if times else float("inf")


def run(elements: int, solvers, tolerances, t_end, output_interval, repeats, target) -> dict:
    mechanism, settings = load(elements, t_end, output_interval)
    period = float(np.min(np.asarray(model.contact_periods(mechanism))))
    rate = structural_rate(mechanism)
    study = dict(elements=elements, contact_period=period, structural_rate=rate,
                 auto=choose_solver(rate, period, mechanism.initial_positions.size),  # at STUDY_RTOL
                 coordinates=int(mechanism.initial_positions.size), runs=[])
    start = time.perf_counter()
    reference = solve(mechanism, replace(settings, solver=REFERENCE["solver"]), REFERENCE["rtol"], 1)
    print(f"m = {elements}: contact period {period * 1e6:.1f} us, structural rate {rate:.3e} 1/s, auto "
          f"{study['auto']}; reference {reference['steps']} steps, {time.perf_counter() - start:.0f} s with compile, "
          f"peak force {reference['peak_force']:.1f} N, peak deflection {reference['peak_deflection'] * 1e3:.4f} mm",
          flush=True)
    study["reference"] = reference
    for solver in solvers:
        solver_settings_ = replace(settings, solver=solver)
        start = time.perf_counter()
        jax.block_until_ready(SIMULATE(mechanism, solver_settings_, tolerances[0], ATOL_PER_RTOL * tolerances[0]))
        compile_seconds = time.perf_counter() - start
        print(f"  {solver}: compiled and ran once in {compile_seconds:.0f} s", flush=True)
        for rtol in tolerances:
            row = dict(solver=solver, compile_seconds=compile_seconds, **solve(mechanism, solver_settings_, rtol, repeats))
            row["error"] = error(row, reference)
            study["runs"].append(row)
            print(f"  {solver:9s} rtol {rtol:.0e}: {row['seconds']:8.3f} s, {row['steps']:6d} steps "
                  f"({row['rejected']} rejected), error {row['error']:.2e}, result {row['result']}", flush=True)
    best = {}
    for family, members in (("stiff", [s for s in solvers if s in STIFF_SOLVERS]),
                            ("explicit", [s for s in solvers if s not in STIFF_SOLVERS])):
        times = {s: time_at_error([r for r in study["runs"] if r["solver"] == s], target) for s in members}
        best[family] = min(times.items(), key=lambda item: item[1], default=(None, float("inf")))
    study["target_error"] = target
    study["best"] = best
    study["explicit_over_stiff"] = best["explicit"][1] / best["stiff"][1]
    print(f"  at error {target:g}: best stiff {best['stiff'][0]} {best['stiff'][1]:.3f} s, best explicit "
          f"{best['explicit'][0]} {best['explicit'][1]:.3f} s: explicit / stiff = {study['explicit_over_stiff']:.2f}",
          flush=True)
    return study


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", default="5,10,20")
    parser.add_argument("--solvers", default="tsit5,dopri5,bosh3,dopri8,rodas5p,ros34pw2")
    parser.add_argument("--tolerances", default="1e-2,3e-3,1e-3,1e-4,1e-5")
    parser.add_argument("--t-end", type=float, default=1.5e-3, help="window (s): the first impacts")
    parser.add_argument("--output-interval", type=float, default=1e-5, help="s")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--target", type=float, default=1e-3, help="error at which times are compared")
    parser.add_argument("--out", default=str(REPOSITORY / "outputs" / "benchmarks" / "flexible_work_precision.json"))
    args = parser.parse_args(argv)
    tolerances = tuple(float(t) for t in args.tolerances.split(","))
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    studies = []
    for m in args.elements.split(","):
        studies.append(run(int(m), args.solvers.split(","), tolerances, args.t_end, args.output_interval,
                           args.repeats, args.target))
        out.write_text(json.dumps(studies, indent=1, default=float))
        print(f"wrote {out}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
