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

    .venv/bin/python benchmarks/stiff_variants.py

Writes ``outputs/benchmarks/stiff_variants.json`` and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from dataclasses import replace

import numpy as np

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))
sys.path.insert(0, str(REPOSITORY / "benchmarks"))
import model  # noqa: E402
import scipy_peer  # noqa: E402
from work_precision import ATOL_PER_RTOL, SIMULATE, timed  # noqa: E402

CONFIG = REPOSITORY / "configs" / "low_speed_slider_crank.toml"
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


def solve(mechanism, settings, rtol: float, repeats: int):
    SIMULATE(mechanism, settings, rtol, ATOL_PER_RTOL * rtol)  # compile (tolerances are traced)
    return timed(SIMULATE, mechanism, settings, rtol, ATOL_PER_RTOL * rtol, repeats=repeats)


def force_error(trajectory, reference) -> float:
    """Largest deviation of the sampled normal force, relative to the reference's peak (-)."""
    force, expected = np.asarray(trajectory.normal_force[:, 0]), np.asarray(reference.normal_force[:, 0])
    return float(np.max(np.abs(force - expected)) / np.max(np.abs(expected)))


def run_variant(overrides, solvers, tolerances, t_end, output_interval, repeats, progress=print) -> dict:
    mechanism, settings = scipy_peer.load_flores(CONFIG, overrides, t_end=t_end, output_interval=output_interval,
                                                 max_steps=2_000_000, dtmax_contact_share=None)
    period = float(model.contact_periods(mechanism).min())
    # the reference keeps a fixed bound: unbounded, Dopri8 at rtol 1e-10 crawled through the chatter
    reference_settings = replace(settings, solver=REFERENCE["solver"], dtmax=REFERENCE_BOUND * period)
    reference, _ = solve(mechanism, reference_settings, REFERENCE["rtol"], 1)
    rows = []
    for solver in solvers:
        for rtol in tolerances:
            trajectory, seconds = solve(mechanism, replace(settings, solver=solver), rtol, repeats)
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
        mechanism, settings = scipy_peer.load_flores(CONFIG, overrides, t_end=t_end, output_interval=interval,
                                                     max_steps=2_000_000, dtmax_contact_share=None)
        for solver in solvers:
            counts[f"{solver} @ {interval:g} s"] = int(SIMULATE(mechanism, replace(settings, solver=solver), rtol,
                                                                ATOL_PER_RTOL * rtol).steps)
    return counts


def table(study: dict) -> str:
    lines = ["| variant (T_c, ratio) | solver | rtol | time (s) | steps | force error |", "|---|---|---|---|---|---|"]
    for name, variant in study["variants"].items():
        label = f"{name} ({variant['contact_period'] * 1e6:.2f} us, {variant['ratio']:.0f})"
        for row in variant["rows"]:
            lines.append(f"| {label} | {row['solver']} | {row['rtol']:.0e} | {row['seconds']:.3f} | {row['steps']} | "
                         f"{row['error']:.1e} |")
            label = ""
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated names of VARIANTS")
    parser.add_argument("--solvers", default="tsit5,rodas4,rodas5p")
    parser.add_argument("--rtols", default="1e-4,1e-6")
    parser.add_argument("--t-end", type=float, default=0.02, help="simulated time (s)")
    parser.add_argument("--output-interval", type=float, default=1e-4, help="output interval (s)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per cell (best counts)")
    args = parser.parse_args(argv)
    solvers, tolerances = args.solvers.split(","), [float(value) for value in args.rtols.split(",")]
    study = dict(command="benchmarks/stiff_variants.py " + " ".join(argv or sys.argv[1:]), variants={})
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
    print(table(study))
    print("steps by output interval:", json.dumps(study["coarse_output"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
