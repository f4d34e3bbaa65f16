"""``clearance bifurcation CONFIG``: stroboscopic Poincaré sections, the largest Lyapunov
exponent and the motion class (periodic with its period, quasi-periodic, chaotic) of a
mechanism over one parameter.

Writes ``bifurcation.parquet`` (one row per value), ``sections.parquet`` (one row per value
and section sample), with ``[bifurcation.hyperplane]`` ``crossings.parquet`` (one row per
value and crossing), ``bifurcation.json`` (the resolved study and timings) and PNG figures
to ``--out`` (default ``outputs/bifurcation/<config name>/``). See ``docs/nonlinear.md``.
"""

from __future__ import annotations

import argparse
import time

from ..io import default_output_dir, write_json, write_parquet


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-plots", action="store_true", help="write the tables only")
    parser.add_argument("--no-progress", action="store_true", help="do not show the progress bar")


def run(args: argparse.Namespace) -> int:
    from ..bifurcation.study import load_bifurcation, run_bifurcation

    study = load_bifurcation(args.config, args.overrides)
    out = default_output_dir("bifurcation", args.config, args.out)
    table = study.table
    print(f"bifurcation of {study.base.name} over {table.parameter}: {len(study.values)} values, "
          f"{table.transient_periods} + {table.periods} driver periods each", flush=True)
    started = time.perf_counter()
    result = run_bifurcation(study, progress=not args.no_progress)
    seconds = time.perf_counter() - started
    write_parquet(out / "bifurcation.parquet", result.summary)
    write_parquet(out / "sections.parquet", result.sections)
    if result.crossings is not None:
        write_parquet(out / "crossings.parquet", result.crossings)
    write_json(out / "bifurcation.json", {
        "config": str(args.config), "base": study.base.source, "parameter": table.parameter, "unit": study.unit,
        "values": study.values.tolist(), "table": table.model_dump(), "seconds": seconds,
        "counts": result.summary["motion"].value_counts().to_dict(),
    })
    plots = []
    if not args.no_plots:
        from ..bifurcation.plots import plot_bifurcation

        plots = plot_bifurcation(study, result, out)
    print(result.summary.to_string(index=False))
    print(f"{seconds:.1f} s; wrote {out}/bifurcation.parquet, sections.parquet, "
          + ("crossings.parquet, " if result.crossings is not None else "") + "bifurcation.json"
          + (f", {', '.join(plots)}" if plots else ""))
    return 0
