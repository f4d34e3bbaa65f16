"""``clearance converge CONFIG``: contact-stiffness convergence study.

CONFIG is a mechanism file, or a pipeline config whose ``base`` names one. Writes
``convergence.json`` and ``convergence.png`` to ``--out`` (default
``outputs/converge/<config name>/``). See ``docs/design.md``.
"""

from __future__ import annotations

import argparse
import math


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--start-factor", type=float, default=0.01, metavar="X",
                        help="first stiffness, as a share of the configured one (default 0.01)")
    parser.add_argument("--ratio", type=float, default=math.sqrt(10.0), metavar="R",
                        help="stiffness ratio between levels (default sqrt(10): two per decade)")
    parser.add_argument("--max-factor", type=float, default=1.0, metavar="X",
                        help="last level, as a share of the configured stiffness (default 1)")
    parser.add_argument("--tolerance", type=float, default=0.05, metavar="X",
                        help="stop when the peak force changes by less than this (default 0.05)")
    parser.add_argument("--penetration-limit", type=float, default=0.1, metavar="X",
                        help="max penetration / clearance to report as acceptable (default 0.1)")
    parser.add_argument("--joint", dest="joints", action="append", default=[], metavar="NAME",
                        help="clearance joint to scale (repeatable; default: all together)")
    parser.add_argument("--no-progress", action="store_true", help="do not show the progress bar")


def run(args: argparse.Namespace) -> int:
    from ..config import load_mechanism, load_pipeline_mechanism, load_toml
    from ..design.converge import ConvergenceOptions, run_convergence
    from ..design.plots import convergence_figure
    from ..io import default_output_dir, save_figure, write_json

    options = ConvergenceOptions(
        start_factor=args.start_factor, ratio=args.ratio, max_factor=args.max_factor, tolerance=args.tolerance,
        penetration_limit=args.penetration_limit, joints=tuple(args.joints),
    ).validate()
    if "base" in load_toml(args.config):
        _, config = load_pipeline_mechanism(args.config, args.overrides)
    else:
        config = load_mechanism(args.config, args.overrides)
    study = run_convergence(config, options, progress=not args.no_progress)
    out_dir = default_output_dir("converge", args.config, args.out)
    save_figure(out_dir / "convergence.png", convergence_figure(study))
    write_json(out_dir / "convergence.json", study)
    for level in study["levels"]:
        cells = []
        for name, joint in level["joints"].items():
            change = "   -  " if joint["peak_force_change"] is None else f"{100 * joint['peak_force_change']:5.1f}%"
            cells.append(f"{name}: K={joint['stiffness']:.3g} F={joint['max_normal_force']:.4g} N "
                         f"dF={change} pen/c={100 * joint['penetration_share']:.2f}%")
        print(f"x{level['stiffness_factor']:<8.3g} " + "; ".join(cells))
    print(f"{study['verdict']} -> {out_dir}")
    return 0
