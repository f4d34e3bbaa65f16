"""The ``clearance`` command line.

Each subcommand lives in its own module and is imported only when used, so ``clearance
check`` does not pay for compiling the simulator.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# subcommand -> (module, help). Each module provides ``add_arguments(parser)`` and
# ``run(args) -> int``.
COMMANDS = {
    "check": ("pipelines.commands.check", "validate a config and print its SI values"),
    "simulate": ("pipelines.commands.simulate", "simulate one mechanism"),
    "sweep": ("pipelines.commands.sweep", "batched parameter sweep"),
    "calibrate": ("pipelines.commands.calibrate", "fit contact parameters to measurements"),
    "optimize": ("pipelines.commands.optimize", "clearance tolerance design"),
    "converge": ("pipelines.commands.converge", "contact-stiffness convergence study"),
    "export-adams": ("pipelines.commands.export_adams", "ADAMS IMPACT/friction parameters"),
    "bifurcation": ("pipelines.commands.bifurcation", "Poincaré sections, Lyapunov exponents, bifurcation diagram"),
    "animate": ("pipelines.commands.animate", "animate a simulate run (GIF, or MP4 with ffmpeg)"),
    "wear": ("pipelines.commands.wear", "Archard wear of a clearance joint over a service life"),
}
# subcommands whose positional argument is a run folder, not a config file
RUN_DIR_COMMANDS = ("animate",)


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="clearance", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True)
    chosen = next((a for a in argv if a in COMMANDS), None)
    for name, (module_name, help_text) in COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text)
        if name in RUN_DIR_COMMANDS:
            sub.add_argument("config", metavar="RUN_DIR", help="folder written by clearance simulate")
            sub.add_argument("--out", default=None, help="output folder (default RUN_DIR)")
        else:
            sub.add_argument("config", help="TOML config file")
            sub.add_argument(
                "--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE",
                help='override a config value, e.g. --set joints.pin.clearance="0.25 mm"',
            )
            sub.add_argument("--out", default=None, help="output folder (default outputs/<command>/<config name>/)")
        if name == chosen:
            importlib.import_module(module_name).add_arguments(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from .errors import ClearanceError

    argv = sys.argv[1:] if argv is None else argv
    if "sweep" in argv:
        # Equinox reads this once, when first imported (before the command module below):
        # diffrax's runtime checks then return NaN instead of raising through a host
        # callback, so the sweep's executables can go to JAX's persistent cache.
        os.environ.setdefault("EQX_ON_ERROR", "nan")
    args = build_parser(argv).parse_args(argv)
    import model

    model.configure()  # float64 and the tuned XLA CPU flags, before any computation
    module = importlib.import_module(COMMANDS[args.command][0])
    try:
        return int(module.run(args) or 0)
    except ClearanceError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


def console_main() -> None:
    """The ``clearance`` executable: :func:`main`, then an exit that skips the interpreter's
    teardown. Every output is written atomically and closed by then, and tearing down JAX's
    runtime (its compiled executables, thread pools and client) is a noticeable share of a
    short command's wall time (docs/BENCHMARKS.md, section 1c); ``os._exit`` ends the process
    without it, after flushing what is still buffered on stdout and stderr."""
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    console_main()
