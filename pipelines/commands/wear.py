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
    parser.add_argument("--life", metavar="METRIC=LIMIT", default=None,
                        help="also report the cycles at which METRIC (max_depth, equivalent_clearance, peak_force, "
                             "peak_acceleration) first exceeds LIMIT, e.g. 'equivalent_clearance=0.6 mm' (life.json)")


def run(args: argparse.Namespace) -> int:
    from ..errors import ConfigError
    from ..wear.life import run_life
    from ..wear.limit import life_at_limit, parse_life_limit
    from ..wear.study import load_wear_study

    life_limit = None if args.life is None else parse_life_limit(args.life)
    study = load_wear_study(args.config, args.overrides)
    bearing = study.worn_joint.bearing_body
    bearing_name = "ground" if bearing < 0 else study.mechanism.body_names[bearing]
    if life_limit is not None and life_limit[0] == "peak_acceleration" and bearing < 0:
        raise ConfigError("--life", "peak_acceleration", "the worn joint's bushing is the ground, which does not move")
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

        moving = study.worn_joint.journal_body if bearing < 0 else bearing
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
    written = ["life.parquet"]
    if life_limit is not None:
        from ..io import write_json

        life = life_at_limit(result.life, *life_limit, study.joint_name, bearing_name)
        write_json(out / "life.json", life)
        written.append("life.json")
        print(f"life: {life['life']:.6g} cycles until {life['metric']} exceeds {life['limit']:g} (SI)"
              if life["crossed"] else f"life: {life['metric']} stays within {life['limit']:g} (SI) for all "
                                      f"{life['life']:.6g} cycles")
    print(f"wrote {out}/profiles.parquet, {', '.join(written)}" + (f", {', '.join(plots)}" if plots else ""))
    return 0
