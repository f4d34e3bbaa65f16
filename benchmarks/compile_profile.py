"""Where a simulate's compile time goes: tracing, lowering and XLA, per model.

Each model's ``jax.jit(model.simulate)`` (the program ``clearance simulate`` compiles) is
traced (``jit(f).trace``: Python through diffrax and the model into a jaxpr), lowered
(``.lower()``: jaxpr to StableHLO) and compiled (``.compile()``: XLA to CPU code), each
timed on its own, in a fresh process per model so that no cache is warm. Also counted: the
jaxpr's equations (nested ones included) and how many times the mechanism's vector field
was called while tracing, and the instructions of the optimised HLO.

    python -m benchmarks.compile_profile --case profile                       # every model, the CLI's XLA flags
    python -m benchmarks.compile_profile --case profile --suite-flags         # XLA -O0, as the test suite
    python -m benchmarks.compile_profile --case profile --models flores spatial --repeat 3 --cpu-time

Output: one row per model and repeat (seconds), and the peaks of each solve so that two
revisions can be checked for identical results.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchmarks import harness

REPOSITORY = Path(__file__).resolve().parents[1]
MODELS = {
    "flores": ("configs/flores_slider_crank.toml", []),
    "spatial": ("configs/flores_slider_crank_3d.toml", []),
    "flexible10": ("configs/flores_flexible.toml", ["bodies.conrod.flexible.segments=10"]),
    "flexible20": ("configs/flores_flexible.toml", ["bodies.conrod.flexible.segments=20"]),
    "flexible40": ("configs/flores_flexible.toml", ["bodies.conrod.flexible.segments=40"]),
}


def _count_equations(jaxpr) -> int:
    from jax.extend import core

    count = 0
    for equation in jaxpr.eqns:
        count += 1
        for value in equation.params.values():
            for sub in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(sub, core.ClosedJaxpr):
                    count += _count_equations(sub.jaxpr)
                elif isinstance(sub, core.Jaxpr):
                    count += _count_equations(sub)
    return count


def profile_one(name: str, suite_flags: bool, cpu_time: bool) -> dict:
    """Trace, lower, compile and run one model's simulate; times in seconds."""
    import time

    import jax
    import numpy as np

    import model
    from model._config import add_xla_flags

    model.configure()
    if suite_flags:
        add_xla_flags(("--xla_backend_optimization_level=0",))
    from pipelines.api import load

    path, overrides = MODELS[name]
    configured = load(REPOSITORY / path, overrides)
    traced_fields = 0
    mechanism_class = type(configured.mechanism)
    field = mechanism_class.flat_vector_field

    def counting(*args, **kwargs):
        nonlocal traced_fields
        traced_fields += 1
        return field(*args, **kwargs)

    mechanism_class.flat_vector_field = counting
    function = jax.jit(model.simulate, static_argnums=1)
    clock = time.process_time if cpu_time else time.perf_counter
    start = clock()
    traced = function.trace(configured.mechanism, configured.settings)
    traced_at = clock()
    lowered = traced.lower()
    lowered_at = clock()
    compiled = lowered.compile()
    compiled_at = clock()
    trajectory = jax.block_until_ready(compiled(configured.mechanism))
    ran_at = clock()
    return {
        "model": name,
        "trace_s": traced_at - start,
        "lower_s": lowered_at - traced_at,
        "xla_s": compiled_at - lowered_at,
        "compile_s": compiled_at - start,
        "run_s": ran_at - compiled_at,
        "equations": _count_equations(traced.jaxpr.jaxpr),
        "hlo_instructions": sum(" = " in line for line in compiled.as_text().splitlines()),
        "field_traces": traced_fields,
        "steps": int(trajectory.steps),
        "peak_normal_force": np.asarray(trajectory.peaks.max_normal_force).tolist(),
        "peak_penetration": np.asarray(trajectory.peaks.max_penetration).tolist(),
    }


def profile(argv: list[str] | None = None) -> int:
    """Trace, lower and compile time of each model's simulate, each model in a fresh process."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--repeat", type=int, default=1, help="fresh processes per model")
    parser.add_argument("--suite-flags", action="store_true", help="XLA backend optimisation level 0")
    parser.add_argument("--cpu-time", action="store_true",
                        help="this process's CPU seconds instead of wall seconds (steadier on a shared machine)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(profile_one(args.one, args.suite_flags, args.cpu_time)))
        return 0
    print(f"{'model':<11} {'trace':>6} {'lower':>6} {'XLA':>6} {'total':>6} {'run':>6} {'eqns':>7} {'HLO':>7} {'fields':>6}  peaks")
    for name in args.models:
        for _ in range(args.repeat):
            command = [sys.executable, "-m", "benchmarks.compile_profile", "--case", "profile", "--one", name] + (["--suite-flags"] if args.suite_flags else []) \
                + (["--cpu-time"] if args.cpu_time else [])
            output = subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPOSITORY).stdout
            row = json.loads(output.strip().splitlines()[-1])
            print(f"{row['model']:<11} {row['trace_s']:6.2f} {row['lower_s']:6.2f} {row['xla_s']:6.2f} "
                  f"{row['compile_s']:6.2f} {row['run_s']:6.2f} {row['equations']:7d} {row['hlo_instructions']:7d} {row['field_traces']:6d}  "
                  f"{row['peak_normal_force']} {row['peak_penetration']} steps {row['steps']}", flush=True)
    return 0


CASES = {"profile": profile}

if __name__ == "__main__":
    raise SystemExit(harness.main(CASES, __doc__))
