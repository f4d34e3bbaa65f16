"""The one harness every benchmark script runs on: cases on the command line, timings with
warm-up and interleaved repetitions (wall and CPU time), the machine and its load, and
Markdown output that pastes into docs/BENCHMARKS.md with its command and date.

A script is a module ``benchmarks.<name>`` with a ``CASES`` dict (case name -> function
``case(argv) -> int`` that parses its own options) and, at its end::

    if __name__ == "__main__":
        raise SystemExit(harness.main(CASES, __doc__))

so that ``python -m benchmarks.<name> --list`` lists the cases and
``python -m benchmarks.<name> --case NAME [options]`` runs one (``--case NAME --help``: its
options). Before a case runs, :func:`main` prints :func:`header`: the command, the date, the
machine and its load average, as one Markdown line.

This module imports no JAX: :func:`interleaved` takes any callables (block on their results
yourself, e.g. ``lambda: jax.block_until_ready(f(x))``).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Timing:
    """Seconds of the timed repetitions of one arm: wall clock (``time.perf_counter``) and
    this process's CPU time (``time.process_time``: all its threads, no child processes)."""

    name: str
    wall: tuple[float, ...]
    cpu: tuple[float, ...]
    result: object = field(default=None, compare=False, repr=False)

    @property
    def best(self) -> float:
        """Least wall time (s): the run least disturbed by the machine's other work."""
        return min(self.wall)

    @property
    def median(self) -> float:
        """Median wall time (s)."""
        return statistics.median(self.wall)

    @property
    def best_cpu(self) -> float:
        """Least CPU time (s)."""
        return min(self.cpu)

    @property
    def median_cpu(self) -> float:
        """Median CPU time (s): the steadier figure on a shared machine for single-threaded work."""
        return statistics.median(self.cpu)


def interleaved(arms: Mapping[str, Callable[[], object]], repeats: int, warmup: int = 1) -> dict[str, Timing]:
    """Time each of ``arms`` (name -> callable of no arguments, returning once its work is
    done) ``repeats`` times, interleaved: round after round, every arm once in turn, so that
    a drift of the machine's load over the run reaches every arm alike and stays out of
    their ratios. ``warmup`` untimed rounds first (compilation, caches). Each
    :class:`Timing` keeps the last call's return value as ``result``."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, not {repeats}")
    results: dict[str, object] = {}
    for _ in range(warmup):
        for name, call in arms.items():
            results[name] = call()
    wall: dict[str, list[float]] = {name: [] for name in arms}
    cpu: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(repeats):
        for name, call in arms.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            results[name] = call()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return {name: Timing(name, tuple(wall[name]), tuple(cpu[name]), results[name]) for name in arms}


def machine() -> dict[str, object]:
    """What a timing depends on: host, processor, cores, Python, JAX (if imported) and the
    1-, 5- and 15-minute load averages."""
    info: dict[str, object] = {
        "host": platform.node(),
        "system": f"{platform.system()} {platform.machine()}",
        "processor": _processor(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average": tuple(round(value, 2) for value in os.getloadavg()),
    }
    jax = sys.modules.get("jax")
    if jax is not None:
        info["jax"] = jax.__version__
    return info


def _processor() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command that reproduces this run, as typed: ``python -m benchmarks.x ...``."""
    argv = list(sys.argv if argv is None else argv)
    program = argv[0]
    main_module = sys.modules.get("__main__")
    spec = getattr(main_module, "__spec__", None)
    if spec is not None and spec.name:
        program = f"python -m {spec.name}"
    return " ".join([program, *(shlex.quote(arg) for arg in argv[1:])])


def header(argv: Sequence[str] | None = None) -> str:
    """One Markdown line naming the command, the date (UTC) and the machine with its load."""
    info = machine()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = " ".join(f"{value:.2f}" for value in info["load_average"])
    return (f"Command: `{command_line(argv)}`; {date}; {info['processor']}, {info['cpus']} CPUs, "
            f"{info['system']}, Python {info['python']}; load average {load}")


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[object]], numeric: Sequence[bool] | None = None) -> str:
    """A Markdown table: ``columns`` (header cells), ``rows`` (cells, formatted with
    ``str``); numeric columns are right-aligned (default: every column but the first)."""
    numeric = [index > 0 for index in range(len(columns))] if numeric is None else list(numeric)
    lines = ["| " + " | ".join(columns) + " |",
             "|" + "|".join("---:" if right else "---" for right in numeric) + "|"]
    for row in rows:
        if len(row) != len(columns):
            raise ValueError(f"a row of {len(row)} cells under {len(columns)} columns")
        lines.append("| " + " | ".join(str(cell) for cell in row) + " |")
    return "\n".join(lines)


def timing_table(timings: Mapping[str, Timing], unit: str = "s", scale: float = 1.0) -> str:
    """:func:`markdown_table` of :func:`interleaved`'s timings: best and median wall and CPU
    time per arm, in ``unit`` (seconds times ``scale``), and each arm's best relative to the
    first arm's."""
    first = next(iter(timings.values()))
    rows = [[name, f"{t.best * scale:.4g}", f"{t.median * scale:.4g}", f"{t.best_cpu * scale:.4g}",
             f"{t.median_cpu * scale:.4g}", f"{t.best / first.best:.3f}", len(t.wall)]
            for name, t in timings.items()]
    return markdown_table(["arm", f"best wall ({unit})", f"median wall ({unit})", f"best CPU ({unit})",
                           f"median CPU ({unit})", f"best / {first.name}", "repeats"], rows)


def main(cases: Mapping[str, Callable[[list[str]], int | None]], doc: str | None = None,
         argv: Sequence[str] | None = None) -> int:
    """Run the case named by ``--case`` with the remaining arguments (its own options), or
    list the cases (``--list``). Prints :func:`header` first. Returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0], add_help=False,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="cases:\n" + "\n".join(f"  {name:20s} {_summary(case)}"
                                                                   for name, case in cases.items()))
    parser.add_argument("--case", choices=list(cases), help="the case to run; its options follow")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("-h", "--help", action="store_true", help="this help, or the case's with --case")
    known, rest = parser.parse_known_args(argv)
    if known.list:
        for name, case in cases.items():
            print(f"{name:20s} {_summary(case)}")
        return 0
    if known.case is None:
        parser.print_help()
        return 0 if known.help else 2
    program = f"{command_line([sys.argv[0]])} --case {known.case}"
    if not known.help:
        print(header([sys.argv[0], "--case", known.case, *rest]), flush=True)
    saved = sys.argv[0]
    sys.argv[0] = program  # argparse's prog of the case
    try:
        status = cases[known.case](rest + (["--help"] if known.help else []))
    except SystemExit as exit_:  # argparse's --help and usage errors
        status = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    finally:
        sys.argv[0] = saved
    return int(status or 0)


def _summary(case: Callable) -> str:
    """The first sentence of a case's docstring, on one line."""
    paragraph = " ".join((case.__doc__ or "").strip().split("\n\n")[0].split())
    sentence = paragraph.split(". ")[0].rstrip(".")
    return sentence if len(sentence) <= 100 else sentence[:97] + "..."
