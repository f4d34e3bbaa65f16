"""``clearance sweep CONFIG``: a batched parameter sweep (contract: ``shared/CONTRACT.md``).

Writes ``results.parquet`` (one row per parameter point), ``sweep.json`` (design, counts,
compile and run times per group) and PNG figures to ``--out`` (default
``outputs/sweep/<config name>/``). See ``docs/sweep.md``.
"""

from __future__ import annotations

import argparse

from ..errors import ConfigError
from ..io import default_output_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--batch-size", type=int, default=None, metavar="N",
        help="points per vmapped call (default: 1 on CPU, 256 on GPU/TPU)",
    )
    parser.add_argument(
        "--plot-metric", dest="plot_metrics", action="append", default=[], metavar="METRIC",
        help="metric to plot, e.g. pin.max_normal_force (repeatable; default: a per-joint selection)",
    )
    parser.add_argument("--no-progress", action="store_true", help="do not show the progress bar")


def run(args: argparse.Namespace) -> int:
    """Load, check, run and write; bad input raises :class:`ConfigError` before anything runs."""
    from sweep.study import check_plot_metrics, load_sweep, metric_units, run_sweep, write_sweep

    if args.batch_size is not None and args.batch_size < 1:
        raise ConfigError("--batch-size", "", f"expected an integer >= 1, got {args.batch_size}")
    design, base = load_sweep(args.config, args.overrides)
    check_plot_metrics(args.plot_metrics, metric_units(base))
    study = run_sweep(design, base, batch_size=args.batch_size, progress=not args.no_progress)
    out_dir = default_output_dir("sweep", args.config, args.out)
    write_sweep(study, out_dir, args.plot_metrics or None)
    summary = study.summary()
    compile_seconds = sum(group["compile_seconds"] for group in summary["groups"])
    print(
        f"{summary['points']} points ({summary['ok']} ok, {summary['failed']} failed) in "
        f"{summary['total_seconds']:.1f} s ({compile_seconds:.1f} s compiling) -> {out_dir}"
    )
    return 0
