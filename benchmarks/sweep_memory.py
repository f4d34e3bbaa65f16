"""Peak memory of `clearance sweep` against the number of points (docs/BENCHMARKS.md,
"Memory of a large sweep").

Runs the command on the Flores grid of ``flores_sweep_256.toml`` resized to each point
count (``--set sweep.parameters.N.num``) with a short ``t_end``, samples the resident memory
of the command and every process it started (its worker processes and figure processes)
every 0.2 s from ``/proc``, and writes one JSON line per run: the peak of their sum, the
peak of the largest single process and the wall time.

    python benchmarks/sweep_memory.py 25x40 100x100 250x400 --t-end "0.3 ms"
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGE = os.sysconf("SC_PAGE_SIZE")


def tree(root: int) -> list[int]:
    """``root`` and every process descended from it (from ``/proc/*/stat``)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        found += frontier
    return found


def resident(pid: int) -> int:
    """Resident memory of ``pid`` in bytes (0 once it has ended)."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except OSError:
        return 0


def measure(shape: str, t_end: str, out: Path, extra: list[str]) -> dict:
    first, second = (int(n) for n in shape.split("x"))
    command = [sys.executable, "-m", "pipelines.cli", "sweep", str(HERE / "flores_sweep_256.toml"),
               "--set", f"sweep.parameters.0.num={first}", "--set", f"sweep.parameters.1.num={second}",
               "--set", f'simulation.t_end="{t_end}"', "--out", str(out / shape), "--no-progress", *extra]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak_sum = peak_one = 0
    while process.poll() is None:
        sizes = [resident(pid) for pid in tree(process.pid)]
        peak_sum, peak_one = max(peak_sum, sum(sizes)), max(peak_one, max(sizes))
        time.sleep(0.2)
    stdout, stderr = process.communicate()
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{stderr[-2000:]}")
    return {"points": first * second, "t_end": t_end, "wall_seconds": round(time.perf_counter() - start, 1),
            "peak_rss_sum_MB": round(peak_sum / 2**20), "peak_rss_largest_process_MB": round(peak_one / 2**20),
            "summary": stdout.strip().splitlines()[0], "command": " ".join(command[1:])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shapes", nargs="+", help="grid sizes, e.g. 25x40 (1,000 points)")
    parser.add_argument("--t-end", default="0.3 ms")
    parser.add_argument("--out", default="outputs/benchmarks/sweep_memory")
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="more options for the command, after --")
    args = parser.parse_args()
    for shape in args.shapes:
        print(json.dumps(measure(shape, args.t_end, Path(args.out), [a for a in args.extra if a != "--"])), flush=True)


if __name__ == "__main__":
    main()
