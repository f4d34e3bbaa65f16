"""Where the time of a warm ``clearance sweep`` goes: imports, loading executables, solving,
writing results, plots.

Runs the command in this process under ``cProfile`` with a CPU-time clock (the 2-core
development machine is shared, so wall time mostly measures the neighbours; CPU time of
this process and its workers does not) after one untimed run that fills JAX's and the
sweep's caches, and prints one Markdown row per phase (cumulative CPU time of the functions
named in ``PHASES``, in the driver process; worker processes count in the total only). Run from the repository root::

    python benchmarks/sweep_end_to_end.py benchmarks/flores_sweep_256.toml
    python benchmarks/sweep_end_to_end.py benchmarks/flores_sweep_256.toml \\
        --set sweep.parameters.0.num=4 --set sweep.parameters.1.num=4     # 16 points
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time

# phase -> (file suffix, function name) whose cumulative CPU time it is
PHASES = {
    "imports (JAX, the packages; all of them)": ("<frozen importlib._bootstrap>", "_find_and_load"),
    "load and check the config": ("pipelines/sweeping/study.py", "load_sweep"),
    "trace / load the chunk function": ("sweep/run.py", "compiled_batch"),
    "solve (chunk calls)": ("sweep/run.py", "run_batches"),
    "worker processes (start, wait)": ("sweep/execute.py", "run"),
    "results.parquet, sweep.json": ("sweep/files.py", "write_parquet"),
    "plots": ("pipelines/io.py", "save_figure"),
}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args, extra = parser.parse_known_args(argv)
    out = tempfile.mkdtemp(prefix="sweep_e2e_")
    command = ["sweep", args.config, "--out", out, "--no-progress", *extra]
    for override in args.overrides:
        command += ["--set", override]
    warm = subprocess.run([sys.executable, "-m", "pipelines.cli", *command], capture_output=True, text=True)
    if warm.returncode:
        print(warm.stderr[-2000:])
        return warm.returncode
    start = time.perf_counter()  # what a user waits for: the warm command, unprofiled
    plain = subprocess.run([sys.executable, "-m", "pipelines.cli", *command], capture_output=True, text=True)
    plain_wall = time.perf_counter() - start
    if plain.returncode:
        print(plain.stderr[-2000:])
        return plain.returncode
    script = ("import cProfile, pstats, sys, time; start = time.process_time(); "
              "profile = cProfile.Profile(time.process_time); profile.enable(); "
              "from pipelines.cli import main; code = main(sys.argv[1:]); profile.disable(); "
              f"profile.dump_stats({out + '/profile.prof'!r}); sys.exit(code)")
    before, start = children_cpu(), time.perf_counter()
    timed = subprocess.run([sys.executable, "-c", script, *command], capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, children_cpu() - before
    print(timed.stdout.strip().splitlines()[0] if timed.stdout else timed.stderr[-2000:])
    stats = pstats.Stats(out + "/profile.prof").stats
    cumulative = {}
    for (filename, _, function), (_, _, _, cumtime, _) in stats.items():
        for phase, where in PHASES.items():
            if where and filename.endswith(where[0]) and function == where[1]:
                cumulative[phase] = max(cumulative.get(phase, 0.0), cumtime)
    main_cpu = max(row[3] for key, row in stats.items() if key[2] == "main" and key[0].endswith("pipelines/cli.py"))
    print(f"\n`python -m pipelines.cli {' '.join(command[:2] + command[4:])}`, warm caches: wall {plain_wall:.1f} s "
          f"unprofiled; profiled wall {wall:.1f} s, CPU {cpu:.1f} s (this process and its workers; load average "
          f"{os.getloadavg()[0]:.1f})\n")
    print("| phase | CPU s (this process) |\n|---|---:|")
    for phase in PHASES:
        print(f"| {phase} | {cumulative.get(phase, 0.0):.2f} |")
    print(f"| whole command (`main`) | {main_cpu:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
