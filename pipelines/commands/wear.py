"""``clearance wear CONFIG``: Archard wear of a clearance joint's bushing over a service life
(a planar revolute or a spatial cylindrical clearance joint).

Writes ``profiles.parquet`` (the worn profile after each update), ``life.parquet`` (per
update: cycles, largest depth, worn volume, dynamics metrics) and PNG figures to ``--out``
(default ``outputs/wear/<config name>/``); ``--resume`` continues a killed run.
"""

from __future__ import annotations

import argparse

from ..io import default_output_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--resume", action="store_true", help="continue a killed run from the tables stored in --out")
    parser.add_argument("--no-plots", action="store_true", help="write data only")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from ..wear.life import run_life
    from ..wear.study import load_wear_study

    study = load_wear_study(args.config, args.overrides)
    out = default_output_dir("wear", args.config, args.out)
    table = study.table
    print(f"wear of {study.joint_name} in {study.config.name}: {table.cycles:g} cycles in {study.updates} updates of "
          f"{study.cycles_per_update:g} cycles ({table.cycles_per_update} simulated after {table.warmup_cycles} "
          f"warm-up, period {study.period * 1e3:.4g} ms), {table.resolution} angle bins"
          + (f" x {study.profile_shape[0]} slices" if study.cylindrical else ""), flush=True)
    result = run_life(study, out, resume=args.resume, progress=not args.no_progress)
    plots = []
    if not args.no_plots:
        from ..wear.plots import plot_life

        joint = study.worn_joint
        bearing_name = "ground" if joint.bearing_body < 0 else study.mechanism.body_names[joint.bearing_body]
        moving = joint.journal_body if joint.bearing_body < 0 else joint.bearing_body
        plots = plot_life(result.profiles, result.life, study.joint_name, bearing_name, out,
                          body=study.mechanism.body_names[moving])
    last = result.life.iloc[-1]
    axial = f" and {last['max_depth_axial'] * 1e3:.3g} mm along the axis" if study.cylindrical else ""
    print(f"after {last['cycles']:.4g} cycles: largest depth {last['max_depth'] * 1e6:.4g} um at "
          f"{last['max_depth_angle'] * 180 / 3.141592653589793:.4g} deg{axial}, "
          f"volume {last['volume'] * 1e9:.4g} mm^3, "
          f"peak force {last[f'{study.joint_name}.max_normal_force']:.4g} N "
          f"({len(result.life) - result.resumed} passes in {result.seconds:.1f} s"
          + (f", {result.resumed} resumed)" if result.resumed else ")"))
    print(f"wrote {out}/profiles.parquet, life.parquet" + (f", {', '.join(plots)}" if plots else ""))
    return 0
