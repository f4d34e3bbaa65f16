"""``clearance animate RUN_DIR``: an animation of a ``simulate`` run (pipelines/animation.py)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_animation_options(parser, prefix="")


def add_animation_options(parser: argparse.ArgumentParser, prefix: str = "animation-") -> None:
    """``--frames``, ``--fps``, ``--format`` (``simulate`` takes them as ``--animation-frames`` ...)."""
    parser.add_argument(f"--{prefix}frames", type=int, default=120, help="frames drawn, evenly spaced in time (default 120)")
    parser.add_argument(f"--{prefix}fps", type=int, default=20, help="frames per second of the file (default 20)")
    parser.add_argument(f"--{prefix}format", choices=("gif", "mp4"), default="gif",
                        help="gif (Pillow) or mp4 (needs ffmpeg); default gif")


def run(args: argparse.Namespace) -> int:
    from ..animation import animate_run

    path = animate_run(args.config, frames=args.frames, fps=args.fps, fmt=args.format, out_dir=args.out)
    print(f"wrote {path}")
    return 0
