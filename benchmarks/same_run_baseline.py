"""The sweep now against an earlier revision of this repository, in the same run.

Throughput figures measured on different days on a shared machine differ by up to 2x from
load alone, so a speed-up is only measured against an old revision run side by side. This
script checks the old revision out as a git worktree (any commit: the old path stays
runnable without keeping old code in the tree), then runs the same warm ``clearance sweep``
alternately in both trees, each with its own compilation cache, and reports per tree:

- **wall**: the whole command as a user waits for it (interpreter start to exit);
- **sweep**: ``total_seconds`` of ``sweep.json`` (planning, worker start, solving, storing);
- **in-run**: points / the busiest worker's summed chunk seconds (``sweep.json`` chunks:
  each chunk's time inside its worker, compiled function called to results returned).

Medians over ``--repeats`` interleaved runs, after one untimed run per tree that fills its
caches. Run from the repository root::

    python benchmarks/same_run_baseline.py --baseline ae4e731
    python benchmarks/same_run_baseline.py --baseline ae4e731 --set sweep.parameters.0.num=4 \\
        --set sweep.parameters.1.num=4                                       # 16 points

Writes ``same_run.json`` and ``same_run.md`` to ``--out``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_CONFIG = "benchmarks/flores_sweep_256.toml"


def git(*args: str, cwd: pathlib.Path = REPOSITORY) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def in_run_rate(summary: dict) -> float:
    """Points per second of the busiest worker's chunk time."""
    busy: collections.Counter = collections.Counter()
    for chunk in summary["chunks"]:
        busy[chunk["worker"]] += chunk["seconds"]
    return summary["points"] / max(busy.values())


def run_sweep(tree: pathlib.Path, config: str, overrides: list[str], out: pathlib.Path, cache: pathlib.Path) -> dict:
    command = [sys.executable, "-m", "pipelines.cli", "sweep", config, "--no-progress", "--out", str(out)]
    for override in overrides:
        command += ["--set", override]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True,
                          env={**os.environ, "CLEARANCE_JAX_CACHE": str(cache)})
    wall = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{tree}: clearance sweep failed:\n{done.stderr[-3000:]}")
    summary = json.loads((out / "sweep.json").read_text())
    return {"wall": wall, "sweep": summary["total_seconds"], "in_run": in_run_rate(summary), "points": summary["points"],
            "executor": summary["executor"], "git_revision": summary.get("git_revision")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="the earlier revision (a commit, tag or branch)")
    parser.add_argument("--config", default=DEFAULT_CONFIG, help="sweep config, relative to the repository root")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=pathlib.Path, default=REPOSITORY / "outputs" / "benchmarks" / "same_run")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="same_run_"))
    baseline_tree = scratch / "baseline"
    git("worktree", "add", "--detach", str(baseline_tree), args.baseline)
    try:
        # the config may be newer than the baseline: the same file, at the same place
        (baseline_tree / args.config).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPOSITORY / args.config, baseline_tree / args.config)
        trees = {"baseline": baseline_tree, "current": REPOSITORY}
        revisions = {"baseline": git("rev-parse", "--short", "HEAD", cwd=baseline_tree),
                     "current": git("rev-parse", "--short", "HEAD") + (" + changes" if git("status", "--porcelain") else "")}
        runs: dict[str, list[dict]] = {name: [] for name in trees}
        for repeat in range(args.repeats + 1):  # the first round fills the caches
            for name, tree in trees.items():
                result = run_sweep(tree, args.config, args.overrides, scratch / f"out_{name}", scratch / f"cache_{name}")
                print(f"{'warm-up' if repeat == 0 else f'run {repeat}'} {name}: wall {result['wall']:.2f} s, "
                      f"sweep {result['sweep']:.2f} s, in-run {result['in_run']:.1f} sims/s", flush=True)
                if repeat:
                    runs[name].append(result)
    finally:
        git("worktree", "remove", "--force", str(baseline_tree))
        shutil.rmtree(scratch, ignore_errors=True)
    medians = {name: {key: statistics.median(r[key] for r in rows) for key in ("wall", "sweep", "in_run")}
               for name, rows in runs.items()}
    report = {"config": args.config, "overrides": args.overrides, "repeats": args.repeats, "revisions": revisions,
              "points": runs["current"][0]["points"], "runs": runs, "medians": medians}
    (args.out / "same_run.json").write_text(json.dumps(report, indent=2))
    base, now = medians["baseline"], medians["current"]
    lines = [
        f"`python benchmarks/same_run_baseline.py --baseline {args.baseline}"
        + "".join(f" --set {o}" for o in args.overrides) + f"`: {report['points']} points, medians of "
        f"{args.repeats} interleaved warm runs",
        "",
        "| tree | revision | wall (s) | sweep (s) | in-run (sims/s) |",
        "|---|---|---:|---:|---:|",
        *(f"| {name} | {revisions[name]} | {medians[name]['wall']:.2f} | {medians[name]['sweep']:.2f} | "
          f"{medians[name]['in_run']:.1f} |" for name in trees),
        f"| **current / baseline** | | **{base['wall'] / now['wall']:.2f}x faster** | "
        f"**{base['sweep'] / now['sweep']:.2f}x** | **{now['in_run'] / base['in_run']:.2f}x** |",
    ]
    (args.out / "same_run.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
