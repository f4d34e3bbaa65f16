"""``clearance sweep CONFIG``: a batched, resumable parameter sweep.

Writes ``results.parquet`` (one row per parameter point), ``sweep.json`` (design, counts,
compile and run times per group, lockstep efficiency per chunk, versions, git revision),
``resolved_config.json``, ``chunks/`` (the finished chunks and their manifest, for
``--resume``) and PNG figures to ``--out`` (default ``outputs/sweep/<config name>/``).
See ``docs/sweep.md``.
"""

from __future__ import annotations

import argparse

from ..errors import ConfigError, SweepFailed
from ..io import default_output_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--chunk-size", type=int, default=None, metavar="N",
        help="points per stored chunk (default on CPU: an equal share per worker process, 16-128; "
             "on GPU/TPU: from the device memory)",
    )
    parser.add_argument(
        "--batch-size", type=int, default=None, metavar="N",
        help="points per compiled call inside a chunk (default: the whole chunk, run in refilling lanes; "
             "1 on CPU with --derivatives, measured faster)",
    )
    parser.add_argument("--resume", action="store_true", help="continue a killed sweep from the chunks stored in --out")
    parser.add_argument(
        "--derivatives", nargs="+", default=[], action="extend", metavar="METRIC",
        help="also write d(METRIC)/d(path) for every swept continuous path (forward mode through the solver)",
    )
    parser.add_argument("--executor", choices=("auto", "local", "processes", "ray"), default="auto",
                        help="where chunks run: this process (local), worker processes on this machine (processes), "
                             "a Ray cluster (ray); default auto: one process per CPU core when there are several chunks")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="worker processes for --executor auto/processes (default: one per CPU core)")
    parser.add_argument("--ray-address", default=None, metavar="ADDRESS",
                        help='Ray cluster to join ("auto" after `ray start`); default: start a local Ray')
    parser.add_argument("--ray-workers", type=int, default=None, metavar="N",
                        help="Ray actors (default: one per CPU of the cluster)")
    parser.add_argument(
        "--plot-metric", dest="plot_metrics", action="append", default=[], metavar="METRIC",
        help="metric to plot, e.g. pin.max_normal_force (repeatable; default: a per-joint selection)",
    )
    parser.add_argument("--no-progress", action="store_true", help="do not show the progress bar")


def run(args: argparse.Namespace) -> int:
    """Load, check, run and write; bad input raises :class:`ConfigError` before anything runs."""
    for flag in ("batch_size", "chunk_size", "ray_workers", "workers"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise ConfigError(f"--{flag.replace('_', '-')}", "", f"expected an integer >= 1, got {value}")
    from sweep.run import enable_compilation_cache, prefer_single_threaded_cpu

    prefer_single_threaded_cpu()  # before the first JAX computation of this process
    from ..sweeping.figure_processes import FigureProcesses
    from ..sweeping.study import (
        check_plot_metrics, check_some_point_ran, load_sweep, metric_units, run_sweep, write_failure, write_sweep,
    )

    design, base = load_sweep(args.config, args.overrides, args.derivatives)
    check_plot_metrics(args.plot_metrics, metric_units(base))
    cache = enable_compilation_cache()
    out_dir = default_output_dir("sweep", args.config, args.out)
    with FigureProcesses() as figure_processes:  # their imports overlap the solve
        study = run_sweep(
            design, base, batch_size=args.batch_size, progress=not args.no_progress, chunk_size=args.chunk_size,
            out_dir=out_dir, resume=args.resume, executor=args.executor, ray_address=args.ray_address,
            ray_workers=args.ray_workers, workers=args.workers,
        )
        try:
            written = write_sweep(study, out_dir, args.plot_metrics or None, figure_processes)
        except OSError as error:
            raise SweepFailed(f"{write_failure(error)}; every point is stored in {out_dir / 'chunks'}: "
                              f"`--resume` writes the results without running any") from None
    summary = study.summary()
    compile_seconds = sum(group["compile_seconds"] for group in summary["groups"])
    resumed = f", {study.resumed_points} taken from stored chunks" if study.resumed_points else ""
    print(
        f"{summary['points']} points ({summary['ok']} ok, {summary['failed']} failed{resumed}) in "
        f"{summary['total_seconds']:.1f} s ({compile_seconds:.1f} s compiling; cache {cache})\n"
        f"results: {out_dir / 'results.parquet'}\n"
        f"plots:   {', '.join(str(path) for path in written if path.suffix == '.png')}"
    )
    check_some_point_ran(summary, args.config, out_dir)
    return 0
