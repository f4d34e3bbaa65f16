"""Work-precision studies: error against compiled run time and steps for every solver, on
the clearance-joint benchmark problems (case ``planar``) and on the flexible-rod
slider-crank (case ``flexible``)::

    python -m benchmarks.work_precision --list
    python -m benchmarks.work_precision --case planar --cases flores --solvers tsit5,kvaerno5
    python -m benchmarks.work_precision --case flexible --elements 5,10,20

docs/integration.md records the results.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time
from dataclasses import dataclass, replace

import jax
import numpy as np

import model
from benchmarks import harness, peers
from model.integrate.settings import STIFF_SOLVERS
from model.integrate.solver_choice import choose_solver, structural_rate
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism
from pipelines.flexible_outputs import midpoint_deflection


# ---------------------------------------------------------------------- planar
REPOSITORY = pathlib.Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Case:
    """A benchmark case: config, overrides, the compared window and its sampling (s)."""

    config: str
    overrides: tuple[str, ...]
    t_end: float
    output_interval: float
    reference: dict | None = None  # None: REFERENCE


PROBLEMS = {
    "flores": Case("configs/flores_slider_crank.toml", (), 1.5e-3, 1e-6),
    "flores_stiff100": Case("configs/flores_slider_crank.toml", ("joints.pin.contact.stiffness_factor=100",), 1.5e-3, 1e-6),
    "low_speed_slider_crank": Case("configs/low_speed_slider_crank.toml", (), 0.02, 1e-5),
    # Dopri8 at rtol 1e-12 exhausts 200,000 steps on the four-bar (13,342 rejected):
    # a 1e-10 reference with more steps (the compared solvers stop at rtol 1e-8)
    "fourbar": Case("configs/fourbar_two_clearances.toml", (), 0.01, 2e-6,
                    dict(solver="dopri8", rtol=1e-10, atol=1e-13, max_steps=2_000_000)),
}


DEFAULT_SOLVERS = tuple(model.SOLVERS)


SCIPY_METHODS = ("LSODA", "Radau", "BDF", "DOP853")


TOLERANCES = (1e-5, 1e-6, 1e-7, 1e-8)


REFERENCE_MAX_STEPS = 200_000  # compared solvers: the model default


ATOL_PER_RTOL = 1e-3  # atol = 1e-3 rtol: the configs' 1e-9 at rtol 1e-6


REFERENCE = dict(solver="dopri8", rtol=1e-12, atol=1e-15)


# Implicit-solver variants: diffrax's defaults (Jacobian once per step, Newton tolerances =
# step tolerances, I controller), the study's first pass (full Newton, optimistix.Newton)
# and the settings the study chose (model defaults: StageChord, see docs/integration.md).
VARIANTS = {
    "diffrax": dict(jacobian="step", pcoeff=0.0, icoeff=1.0, root_tolerance_factor=1.0),
    "newton": dict(jacobian="newton"),
    "tuned": {},
}


def load_case(case: Case, **changes):
    mechanism, settings = peers.load_flores(
        REPOSITORY / case.config, case.overrides, t_end=case.t_end, output_interval=case.output_interval, **changes
    )
    return mechanism, settings


def figures(trajectory) -> dict:
    """``peers.impact_figures`` of the first clearance joint."""
    return peers.impact_figures(
        trajectory.t, trajectory.penetration[:, 0], trajectory.normal_force[:, 0], trajectory.impact_memory[:, 0]
    )


def error(result: dict, reference: dict, contact_period: float) -> float:
    """Largest relative error of the first-impact figures and peak penetrations."""
    errors = [
        abs(result["first_impact_time"] - reference["first_impact_time"]) / contact_period,
        abs(result["first_impact_velocity"] - reference["first_impact_velocity"]) / abs(reference["first_impact_velocity"]),
    ]
    ref_peaks = np.asarray(reference["peak_penetration"])
    peaks = np.asarray(result["peak_penetration"])
    valid = np.isfinite(ref_peaks)
    errors += list(np.abs(peaks[valid] - ref_peaks[valid]) / ref_peaks[valid])
    errors = np.asarray(errors, float)
    return float(np.inf) if not np.all(np.isfinite(errors)) else float(errors.max())


SIMULATE = jax.jit(model.simulate, static_argnums=1)


def timed(function, *args, repeats: int = 5):
    """(result, best wall seconds) of an already compiled function."""
    best, out = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        out = jax.block_until_ready(function(*args))
        best = min(best, time.perf_counter() - start)
    return out, best


def run_diffrax(mechanism, settings, tolerances, progress=print) -> list[dict]:
    """One compile, then one timed solve per tolerance."""
    simulate = SIMULATE
    start = time.perf_counter()
    jax.block_until_ready(simulate(mechanism, settings, tolerances[0], ATOL_PER_RTOL * tolerances[0]))
    compile_seconds = time.perf_counter() - start
    rows = []
    for rtol in tolerances:
        trajectory, seconds = timed(simulate, mechanism, settings, rtol, ATOL_PER_RTOL * rtol)
        rows.append(dict(rtol=rtol, seconds=seconds, compile_seconds=compile_seconds, steps=int(trajectory.steps),
                         rejected=int(trajectory.rejected_steps), result=int(trajectory.result), **figures(trajectory)))
        progress(f"  {settings.solver:9s} rtol {rtol:.0e}: {seconds:7.3f} s, {rows[-1]['steps']} steps "
                 f"({rows[-1]['rejected']} rejected), result {rows[-1]['result']}")
    return rows


def run_case(name: str, solvers, tolerances, scipy_methods, variants, compare_defaults=("kvaerno5",)) -> dict:
    case = PROBLEMS[name]
    reference_settings = case.reference or REFERENCE
    mechanism, settings = load_case(case, **reference_settings)
    period = float(np.min(np.asarray(model.contact_periods(mechanism))))
    print(f"{name}: contact period {period * 1e6:.1f} us; reference {reference_settings}", flush=True)
    reference = run_diffrax(mechanism, settings, (reference_settings["rtol"],))[0]
    if reference["result"] != 0:
        raise RuntimeError(f"{name}: the reference solve failed ({model.result_message(reference['result'])})")
    reference["atol"] = reference_settings["atol"]
    out = {"case": name, "contact_period": period, "reference": _jsonable(reference), "runs": []}
    timed_runs = []
    for solver in solvers:
        for variant in variants if solver in compare_defaults else ("tuned",):
            solver_settings = replace(settings, solver=solver, max_steps=REFERENCE_MAX_STEPS, **VARIANTS[variant])
            for row in run_diffrax(mechanism, solver_settings, tolerances):
                row.update(solver=solver, variant=variant, error=error(row, reference, period))
                out["runs"].append(_jsonable(row))
                timed_runs.append((out["runs"][-1], solver_settings))
    # A second timing pass, minutes after the first: a burst of load on a shared machine
    # (it lasts seconds) then inflates at most one of the two passes of a cell.
    for row, solver_settings in timed_runs:
        _, seconds = timed(SIMULATE, mechanism, solver_settings, row["rtol"], ATOL_PER_RTOL * row["rtol"])
        row["seconds"] = min(row["seconds"], seconds)
    if scipy_methods:
        field = peers.compile_field(mechanism, with_jacobian=True)
        for method in scipy_methods:
            for rtol in tolerances:
                result = peers.solve_with_scipy(mechanism, settings, method, rtol, ATOL_PER_RTOL * rtol, field=field)
                row = {k: result[k] for k in ("first_impact_time", "first_impact_velocity", "peak_penetration", "steps", "seconds", "nfev")}
                row.update(solver=f"scipy-{method}", variant="scipy", rtol=rtol, rejected=-1,
                           result=0 if result["success"] else 1, error=error(result, reference, period))
                out["runs"].append(_jsonable(row))
                print(f"  scipy {method:6s} rtol {rtol:.0e}: {result['seconds']:7.3f} s, {result['steps']} steps", flush=True)
    return out


def _jsonable(row: dict) -> dict:
    return {k: (np.asarray(v).tolist() if isinstance(v, np.ndarray | np.generic) else v) for k, v in row.items()}


def plot(study: dict, path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    groups: dict[tuple, list] = {}
    for row in study["runs"]:
        groups.setdefault((row["solver"], row["variant"]), []).append(row)
    for (solver, variant), rows in groups.items():
        rows = [r for r in rows if r["result"] == 0 and np.isfinite(r["error"])]
        if not rows:
            continue
        implicit = solver in STIFF_SOLVERS
        style = "-" if variant == "tuned" else ":" if variant == "scipy" else "--"
        marker = "s" if implicit else "^" if variant == "scipy" else "o"
        label = solver + {"tuned": "", "scipy": "", "diffrax": " (diffrax defaults)"}.get(variant, f" ({variant})")
        err = [max(r["error"], 1e-12) for r in rows]
        axes[0].loglog([r["seconds"] for r in rows], err, style, marker=marker, label=label)
        axes[1].loglog([max(r["steps"], 1) for r in rows], err, style, marker=marker, label=label)
    axes[0].set_xlabel("compiled run time (s)")
    axes[1].set_xlabel("steps attempted (accepted + rejected)")
    for ax in axes:
        ax.set_ylabel("max relative error (first impacts)")
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=7, ncol=2)
    fig.suptitle(f"work-precision: {study['case']} (window {PROBLEMS[study['case']].t_end * 1e3:g} ms, "
                 f"contact period {study['contact_period'] * 1e6:.1f} us)")
    fig.tight_layout()
    from pipelines.io import save_figure

    save_figure(path, fig)
    plt.close(fig)


def planar(argv=None) -> int:
    """Work-precision study: error against compiled run time for every diffrax solver in
    ``model.SOLVERS`` and ``scipy.integrate.solve_ivp`` peers, on the benchmark cases.

    Error: the largest relative error of the first-impact figures (time, as a share of the
    contact period; closing speed) and of the peak penetration of each of the first
    ``peers.COMPARED_IMPACTS`` impacts, against a tight Dopri8 reference (rtol 1e-12),
    over a window that covers the first impacts only (after several impacts the motion is
    chaotic and any two solvers drift apart). Cost: compiled run time (best of five runs in
    each of two passes minutes apart; the tolerances are traced, so each solver compiles once
    per mechanism structure) and steps.

    Run from the repository root (see ``docs/integration.md``)::

        .venv/bin/python -m benchmarks.work_precision --case planar                      # all cases
        .venv/bin/python -m benchmarks.work_precision --case planar --cases flores --solvers tsit5,kvaerno5

    Writes ``outputs/benchmarks/work_precision_<case>.json`` and ``docs/figures/work_precision/wp_<case>.png``.
    """
    parser = argparse.ArgumentParser(description=planar.__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(PROBLEMS))
    parser.add_argument("--solvers", default=",".join(DEFAULT_SOLVERS))
    parser.add_argument("--scipy", default=",".join(SCIPY_METHODS), help="solve_ivp methods ('' for none)")
    parser.add_argument("--tolerances", default=",".join(f"{t:g}" for t in TOLERANCES))
    parser.add_argument("--variants", default="diffrax,tuned", help="implicit-solver settings: diffrax,tuned")
    parser.add_argument("--compare-defaults", default="kvaerno5", help="implicit solvers also run with diffrax's defaults")
    parser.add_argument("--out", default=str(REPOSITORY / "outputs" / "benchmarks"))
    parser.add_argument("--figures", default=str(REPOSITORY / "docs" / "figures"))
    args = parser.parse_args(argv)
    tolerances = tuple(float(t) for t in args.tolerances.split(","))
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in args.cases.split(","):
        study = run_case(name, [s for s in args.solvers.split(",") if s], tolerances,
                         [m for m in args.scipy.split(",") if m], args.variants.split(","),
                         tuple(args.compare_defaults.split(",")))
        from pipelines.io import write_json

        write_json(out / f"work_precision_{name}.json", study)
        plot(study, pathlib.Path(args.figures) / f"wp_{name}.png")
        print(f"{name}: wrote {out / f'work_precision_{name}.json'} and wp_{name}.png", flush=True)
    return 0


# ---------------------------------------------------------------------- flexible
FLEXIBLE_CONFIG = REPOSITORY / "configs" / "flores_flexible.toml"


FLEXIBLE_REFERENCE = dict(solver="tsit5", rtol=1e-10)


def flexible_load(elements: int, t_end: float, output_interval: float):
    config = load_mechanism(FLEXIBLE_CONFIG, [f"bodies.conrod.flexible.segments={elements}"])
    settings = solver_settings(config, t_end=t_end, output_interval=output_interval, max_steps=2_000_000)
    return build_mechanism(config), settings


def flexible_figures(mechanism, trajectory) -> dict:
    chain = mechanism.beam_chains[0]
    deflection = midpoint_deflection(np.asarray(trajectory.q), chain.segments, float(chain.element_length))
    return dict(peak_force=float(np.asarray(trajectory.peaks.max_normal_force)[0]),
                peak_deflection=float(np.max(np.abs(deflection))))


def flexible_solve(mechanism, settings, rtol: float, repeats: int) -> dict:
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        trajectory = jax.block_until_ready(SIMULATE(mechanism, settings, rtol, ATOL_PER_RTOL * rtol))
        best = min(best, time.perf_counter() - start)
    return dict(rtol=rtol, seconds=best, steps=int(trajectory.steps), rejected=int(trajectory.rejected_steps),
                result=int(trajectory.result), **flexible_figures(mechanism, trajectory))


def flexible_error(row: dict, reference: dict) -> float:
    if row["result"] != 0:
        return float("inf")
    return max(abs(row[k] / reference[k] - 1.0) for k in ("peak_force", "peak_deflection"))


def time_at_error(rows: list[dict], target: float) -> float:
    """The least run time of the solver's runs whose error is at most ``target`` (inf if none):
    an error against run time is not monotonic for a solver on its stability bound, so no
    interpolation between runs."""
    times = [r["seconds"] for r in rows if np.isfinite(r["error"]) and r["error"] <= target]
    return float(min(times)) if times else float("inf")


def flexible_run(elements: int, solvers, tolerances, t_end, output_interval, repeats, target) -> dict:
    mechanism, settings = flexible_load(elements, t_end, output_interval)
    period = float(np.min(np.asarray(model.contact_periods(mechanism))))
    rate = structural_rate(mechanism)
    study = dict(elements=elements, contact_period=period, structural_rate=rate,
                 auto=choose_solver(rate, period, mechanism.initial_positions.size),  # at STUDY_RTOL
                 coordinates=int(mechanism.initial_positions.size), runs=[])
    start = time.perf_counter()
    reference = flexible_solve(mechanism, replace(settings, solver=FLEXIBLE_REFERENCE["solver"]), FLEXIBLE_REFERENCE["rtol"], 1)
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
            row = dict(solver=solver, compile_seconds=compile_seconds, **flexible_solve(mechanism, solver_settings_, rtol, repeats))
            row["error"] = flexible_error(row, reference)
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


def flexible(argv=None) -> int:
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

        python -m benchmarks.work_precision --case flexible --elements 20,5,10         --solvers tsit5,dopri5,bosh3,dopri8,rodas5p,ros34pw2 --tolerances 1e-2,3e-3,1e-3,1e-4,1e-5

    Writes ``outputs/benchmarks/flexible_work_precision.json`` and prints the table.
    """
    parser = argparse.ArgumentParser(description=flexible.__doc__.splitlines()[0])
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
        studies.append(flexible_run(int(m), args.solvers.split(","), tolerances, args.t_end, args.output_interval,
                           args.repeats, args.target))
        out.write_text(json.dumps(studies, indent=1, default=float))
        print(f"wrote {out}", flush=True)
    return 0


CASES = {"planar": planar, "flexible": flexible}

if __name__ == "__main__":
    raise SystemExit(harness.main(CASES, __doc__))
