"""Refilling lanes per call on one CPU core: throughput of the sweep's chunk function on
128 points of the Flores 16 x 16 grid (2 revolutions) at each lane count given.

    taskset -c 0 python benchmarks/cpu_lanes.py 16 32 64      # ~1.5 min; pinned as the sweep's workers are

The sweep's CPU default is ``sweep.run.CPU_LANES``; docs/BENCHMARKS.md records the table.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sweep.run import chunk_runner, prefer_single_threaded_cpu  # noqa: E402

prefer_single_threaded_cpu()  # as in the sweep's worker processes, before JAX starts

import numpy as np  # noqa: E402

import scipy_peer  # noqa: E402
from sweep_throughput import SWEPT_PATHS, ParameterMap, sweep_grid  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lanes", type=int, nargs="+")
    args = parser.parse_args(argv)
    mechanism, settings = scipy_peer.load_flores(t_end=24e-3)
    points = sweep_grid(16, 16)[::2]  # 128 points spread over the grid
    print("| lanes | sims/s | seconds | compile (s) | steps mean |\n|---:|---:|---:|---:|---:|")
    for lanes in args.lanes:
        run, compile_seconds = chunk_runner(mechanism, settings, SWEPT_PATHS, len(points), lanes=lanes,
                                            resolver=ParameterMap)
        start = time.perf_counter()
        columns = run(points)
        seconds = time.perf_counter() - start
        print(f"| {lanes} | {len(points) / seconds:.2f} | {seconds:.1f} | {compile_seconds:.1f} | "
              f"{np.mean(columns['steps']):.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
