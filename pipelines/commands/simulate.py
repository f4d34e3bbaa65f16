"""``clearance simulate CONFIG``: timeseries.parquet, summary.json and plots."""

from __future__ import annotations

import argparse
import sys

from ..config import load_mechanism
from ..errors import ClearanceError
from ..io import default_output_dir, write_json, write_parquet


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-ideal", action="store_true", help="skip the ideal-joint comparison run")
    parser.add_argument("--no-plots", action="store_true", help="write data only")
    parser.add_argument("--animate", action="store_true", help="also write animation.gif (see clearance animate)")
    from .animate import add_animation_options

    add_animation_options(parser)


def _progress() -> bool:
    """A progress bar over simulated time when a person watches the terminal."""
    return sys.stderr.isatty()


def _finish(out, mechanism, name: str, args: argparse.Namespace) -> list[str]:
    """``geometry.json`` (what ``clearance animate`` draws from) and, with ``--animate``, the animation."""
    from ..animation import animate_run, write_geometry

    write_geometry(out, mechanism, name)
    if not args.animate:
        return []
    path = animate_run(out, frames=args.animation_frames, fps=args.animation_fps, fmt=args.animation_format)
    return [path.name]


def run(args: argparse.Namespace) -> int:
    from ..simulation import run_simulation, summary, timeseries_frame
    from ..simulation_plots import plot_simulation

    config = load_mechanism(args.config, args.overrides)
    out = default_output_dir("simulate", args.config, args.out)
    spatial = ", spatial" if getattr(config, "dimension", 2) == 3 else ""
    print(f"simulating {config.name} ({config.simulation.t_end * 1e3:g} ms{spatial}) ...", flush=True)
    result = run_simulation(config, with_ideal=not args.no_ideal, progress=_progress())
    write_parquet(out / "timeseries.parquet", timeseries_frame(result))
    data = summary(result)
    write_json(out / "summary.json", data)
    plots = [] if args.no_plots else plot_simulation(result, out)
    plots += _finish(out, result.mechanism, config.name, args)
    solver = data["solver"]
    print(
        f"{solver['name']}: {solver['steps']} steps ({solver['rejected_steps']} rejected), "
        f"compile {solver['compile_seconds']:.1f} s, run {solver['run_seconds']:.2f} s, status {solver['status']}"
    )
    for name in result.mechanism.clearance_names:
        print(
            f"{name}: max normal force {data[f'{name}.max_normal_force']:.4g} N, "
            f"max penetration {data[f'{name}.max_penetration'] * 1e6:.3g} um "
            f"({100 * data[f'{name}.max_penetration_over_clearance']:.2g} % of c), "
            f"{int(data[f'{name}.num_impacts'])} impacts"
        )
    print(f"wrote {out}/timeseries.parquet, summary.json" + (f", {', '.join(plots)}" if plots else ""))
    if result.status != "ok":
        raise ClearanceError(f"solve failed: {result.status} (partial results in {out})")
    return 0
