"""``clearance export-adams CONFIG``: ADAMS IMPACT and friction parameters per clearance joint.

CONFIG is a mechanism file, or a pipeline config whose ``base`` names one. Writes
``adams_contact.txt`` (paste-ready, conversions shown) and ``adams_contact.json`` to
``--out`` (default ``outputs/export-adams/<config name>/``). See ``docs/design.md``.
"""

from __future__ import annotations

import argparse
import math


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--impact-velocity", type=float, default=None, metavar="M_PER_S",
        help="closing speed (m/s) for c_max; default: the first impact velocity of a simulation of the config",
    )
    parser.add_argument(
        "--no-simulate", action="store_true",
        help="do not simulate: use --impact-velocity or the documented default of 1 m/s",
    )


def run(args: argparse.Namespace) -> int:
    from ..config import load_mechanism, load_pipeline_mechanism, load_toml
    from ..design.adams import (
        DEFAULT_IMPACT_VELOCITY,
        ImpactVelocity,
        adams_parameters,
        simulated_impact_velocities,
        write_adams_files,
    )
    from ..errors import ConfigError
    from ..io import default_output_dir

    if args.impact_velocity is not None and not (math.isfinite(args.impact_velocity) and args.impact_velocity > 0):
        raise ConfigError("--impact-velocity", "", f"must be a speed > 0 in m/s, got {args.impact_velocity!r}")
    if "base" in load_toml(args.config):
        _, config = load_pipeline_mechanism(args.config, args.overrides)
    else:
        config = load_mechanism(args.config, args.overrides)
    names = [joint.name for joint in config.clearance_joints]
    if not names:
        raise ConfigError(args.config, "joints", "no clearance joint to export")
    if args.impact_velocity is not None:
        velocities = {n: ImpactVelocity(args.impact_velocity, "given with --impact-velocity") for n in names}
    elif args.no_simulate:
        velocities = {n: ImpactVelocity(DEFAULT_IMPACT_VELOCITY, f"default {DEFAULT_IMPACT_VELOCITY:g} m/s (--no-simulate)")
                      for n in names}
    else:
        velocities = simulated_impact_velocities(config)
    parameters = adams_parameters(config, velocities)
    out_dir = default_output_dir("export-adams", args.config, args.out)
    text_path, _ = write_adams_files(out_dir, config, parameters)
    for name, p in parameters.items():
        print(f"{name}: stiffness {p['stiffness']:.4g} {p['stiffness_unit']}, exponent {p['exponent']:g}, "
              f"c_max {p['damping']:.4g} N*s/mm (v_imp {p['impact_velocity_m_s']:.3g} m/s), dmax {p['dmax']:.4g} mm")
    print(f"-> {text_path}")
    return 0
