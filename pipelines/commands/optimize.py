"""``clearance optimize CONFIG``: clearance tolerance design.

Writes ``optimum.json``, ``sweep.parquet`` (every evaluated design and sample) and PNG
figures (``pareto.png``, ``history.png``, ``verification.png``) to ``--out`` (default
``outputs/optimize/<config name>/``). See ``docs/design.md``.
"""

from __future__ import annotations

import argparse
import time


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--samples", type=int, default=None, metavar="N",
                        help="uncertain samples per gradient evaluation (default 4, or [optimizer].samples)")
    parser.add_argument("--iterations", type=int, default=None, metavar="N",
                        help="augmented-Lagrangian iterations (default 10)")
    parser.add_argument("--verify-samples", dest="verification_samples", type=int, default=None, metavar="N",
                        help="uncertain samples of the verification sweep (default 8)")
    parser.add_argument("--verify-points", dest="verification_points", type=int, default=None, metavar="N",
                        help="designs per variable in the verification sweep, odd (default 3)")
    parser.add_argument("--pareto-points", type=int, default=None, metavar="N",
                        help="designs in the cost-performance sweep over the bounds (default 5; 0: none)")
    parser.add_argument("--backoff-steps", type=int, default=None, metavar="N",
                        help="if the optimum fails verification, shrink the clearances up to N times (default 3)")
    parser.add_argument("--learning-rate", type=float, default=None, metavar="X",
                        help="Adam step in normalised design units (default 0.08)")
    parser.add_argument("--batching", choices=("vmap", "map"), default=None,
                        help="batch the uncertain samples with vmap (default) or run them in sequence")
    parser.add_argument("--seed", type=int, default=None, help="seed of the Latin-hypercube samples")
    parser.add_argument("--no-progress", action="store_true", help="do not show progress bars")


def run(args: argparse.Namespace) -> int:
    """Load and check everything first (bad input: one error line, nothing written), then
    search, sweep, verify and write."""
    import numpy as np
    import pandas as pd

    from ..design.plots import history_figure, pareto_figure, verification_figure
    from ..design.problem import load_design_problem
    from ..design.study import optimum_report, run_study
    from ..io import default_output_dir, save_figure, write_json, write_parquet

    started = time.perf_counter()
    problem = load_design_problem(args.config, args.overrides).with_options(
        samples=args.samples, iterations=args.iterations, verification_samples=args.verification_samples,
        verification_points=args.verification_points, pareto_points=args.pareto_points,
        backoff_steps=args.backoff_steps,
        learning_rate=args.learning_rate, batching=args.batching, seed=args.seed,
    )
    out_dir = default_output_dir("optimize", args.config, args.out)
    result = run_study(problem, progress=not args.no_progress)
    result.timings["total_seconds"] = time.perf_counter() - started
    report = optimum_report(result)

    rows = []
    for point in result.points:
        for s in range(len(point.samples)):
            row = {"role": point.role, "label": point.label, "cost": point.cost}
            row.update({v.path: float(x) for v, x in zip(problem.design, point.values)})
            row.update({f"uncertain:{u.path}": float(point.samples[s, i]) for i, u in enumerate(problem.uncertain)})
            row.update({name: float(np.asarray(value)[s]) for name, value in point.metrics.items()})
            rows.append(row)
    write_parquet(out_dir / "sweep.parquet", pd.DataFrame(rows))
    save_figure(out_dir / "pareto.png", pareto_figure(result))
    save_figure(out_dir / "history.png", history_figure(result))
    save_figure(out_dir / "verification.png", verification_figure(result))
    write_json(out_dir / "optimum.json", report)

    design = ", ".join(f"{path} = {value:.6g}" for path, value in report["design"].items())
    verdict = "feasible (verified)" if report["feasible"] else "NOT feasible in verification"
    print(f"optimum: {design}; cost {report['objective']:.4g}; {verdict}; "
          f"{result.timings['total_seconds']:.1f} s -> {out_dir}")
    for joint, band in report["recommended_clearance"].items():
        if band["max_clearance"] is not None:
            print(f"  {joint}: radial clearance {band['min_clearance'] * 1e3:.4g}..{band['max_clearance'] * 1e3:.4g} mm"
                  f" at diameter {band['nominal_diameter'] * 1e3:.4g} mm; fit: {band.get('recommended_fit') or 'none of the standard fits'}")
    return 0
