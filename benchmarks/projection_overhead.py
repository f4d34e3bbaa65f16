"""In-run throughput of the Flores sweep with and without the projection onto the ideal
joints' constraints after each step (``SolverSettings.projection_iterations``), in one run.

The sweep's chunk function (``sweep.run.chunk_runner``: refilling lanes, metrics inside the
compiled function) on points of the Flores 16 x 16 clearance x restitution grid over two
revolutions, one compiled function per setting, timed alternately ``--repeats`` times: medians of the wall
time and of the process's CPU time (single-threaded, so on a loaded shared machine the CPU
time is the steadier figure)::

    taskset -c 0 python benchmarks/projection_overhead.py --points 128 --repeats 5   # ~3 min

docs/integration.md ("Projection onto the constraints") records the result.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sweep.run import CPU_LANES, chunk_runner, prefer_single_threaded_cpu  # noqa: E402

prefer_single_threaded_cpu()  # as in the sweep's worker processes, before JAX starts

import numpy as np  # noqa: E402

import scipy_peer  # noqa: E402
from sweep_throughput import SWEPT_PATHS, ParameterMap, sweep_grid  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=128, help="points of the 16 x 16 grid (spread over it)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--lanes", type=int, default=CPU_LANES)
    args = parser.parse_args(argv)
    grid = sweep_grid(16, 16)
    points = grid[:: max(1, len(grid) // args.points)][: args.points]
    runners, seconds, cpu = {}, {}, {}
    for iterations in (0, 1):
        mechanism, settings = scipy_peer.load_flores(t_end=24e-3, projection_iterations=iterations)
        runners[iterations], compile_seconds = chunk_runner(mechanism, settings, SWEPT_PATHS, len(points),
                                                            lanes=args.lanes, resolver=ParameterMap)
        runners[iterations](points)  # warm
        seconds[iterations], cpu[iterations] = [], []
        print(f"projection_iterations={iterations}: compiled in {compile_seconds:.1f} s", flush=True)
    steps = {}
    for _ in range(args.repeats):
        for iterations, run in runners.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            columns = run(points)
            seconds[iterations].append(time.perf_counter() - start)
            cpu[iterations].append(time.process_time() - start_cpu)
            steps[iterations] = float(np.mean(columns["steps"]))
    print("| projection_iterations | sims/s (median wall) | sims/s (median CPU) | wall runs (s) | CPU runs (s) "
          "| steps mean |")
    print("|---:|---:|---:|---|---|---:|")
    for iterations, times in seconds.items():
        print(f"| {iterations} | {len(points) / statistics.median(times):.1f} | "
              f"{len(points) / statistics.median(cpu[iterations]):.1f} | {', '.join(f'{t:.2f}' for t in times)} | "
              f"{', '.join(f'{t:.2f}' for t in cpu[iterations])} | {steps[iterations]:.0f} |")
    for label, record in (("wall", seconds), ("CPU", cpu)):
        ratio = statistics.median(record[0]) / statistics.median(record[1])
        print(f"throughput with projection / without ({label} time): {ratio:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
