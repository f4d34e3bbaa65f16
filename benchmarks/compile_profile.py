"""Where a simulate's compile time goes: tracing, lowering and XLA, per model.

Each model's ``jax.jit(model.simulate)`` (the program ``clearance simulate`` compiles) is
traced (``jit(f).trace``: Python through diffrax and the model into a jaxpr), lowered
(``.lower()``: jaxpr to StableHLO) and compiled (``.compile()``: XLA to CPU code), each
timed on its own, in a fresh process per model so that no cache is warm. Also counted: the
jaxpr's equations (nested ones included) and how many times the mechanism's vector field
was called while tracing, and the instructions of the optimised HLO; with ``--sites`` the
nested jits of the solve, each with its call sites (XLA inlines every one: a copy each) and
its size.

    python -m benchmarks.compile_profile --case profile                       # every model, the CLI's XLA flags
    python -m benchmarks.compile_profile --case profile --suite-flags         # XLA -O0, as the test suite
    python -m benchmarks.compile_profile --case profile --models flores spatial --repeat 3 --cpu-time
    python -m benchmarks.compile_profile --case profile --models spatial --cpu-time --sites

Output: one row per model and repeat (seconds), and the peaks of each solve so that two
revisions can be checked for identical results. Case ``examples``: the same for each step
of the README's and docs/api.md's examples (``--suite-flags``: as the test suite runs them).
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
    "spatial": ("configs/flores_slider_crank_3d.toml", ["simulation.engine=absolute"]),
    "spatial-joint": ("configs/flores_slider_crank_3d.toml", ["simulation.engine=joint"]),
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


def _nested_jits(jaxpr, sites: dict | None = None) -> dict:
    """``{name: [call sites, equations of one copy]}`` of the nested jits in ``jaxpr`` (at
    any depth): XLA inlines each call site, so a function called from ``k`` places of the
    solve is ``k`` copies in the program it compiles."""
    from jax.extend import core

    sites = {} if sites is None else sites
    for equation in jaxpr.eqns:
        if equation.primitive.name in ("pjit", "jit"):
            entry = sites.setdefault(equation.params["name"], [0, 0])
            entry[0] += 1
            entry[1] = _count_equations(equation.params["jaxpr"].jaxpr)
        for value in equation.params.values():
            for sub in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(sub, core.ClosedJaxpr):
                    _nested_jits(sub.jaxpr, sites)
                elif isinstance(sub, core.Jaxpr):
                    _nested_jits(sub, sites)
    return sites


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
        "nested_jits": {key: value for key, value in _nested_jits(traced.jaxpr.jaxpr).items() if value[1] >= 200},
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
    parser.add_argument("--sites", action="store_true",
                        help="also list the nested jits of 200 equations or more: call sites (copies) and size")
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
            if args.sites:
                for key, (sites, equations) in sorted(row["nested_jits"].items(), key=lambda item: -item[1][1]):
                    print(f"    {key:<24} {sites:3d} call sites x {equations:6d} equations", flush=True)
    return 0


def examples(argv: list[str] | None = None) -> int:
    """CPU and wall time of each step of the README's and docs/api.md's examples, in this
    process: loading, the first solve and its metrics, the reverse-mode gradient, the batch
    of three, forward mode and its batch of two, each followed by a second call."""
    parser = argparse.ArgumentParser(description=examples.__doc__.splitlines()[0])
    parser.add_argument("--suite-flags", action="store_true", help="XLA backend optimisation level 0, as the test suite")
    parser.add_argument("--no-jit", action="store_true", help="peak_force called without jax.jit")
    parser.add_argument("--overrides", nargs="*", default=["simulation.t_end=0.5 ms", "simulation.rtol=1e-8"],
                        help="the examples' overrides of configs/flores_slider_crank.toml")
    args = parser.parse_args(argv)
    import time

    import model
    from model._config import add_xla_flags

    model.configure()
    if args.suite_flags:
        add_xla_flags(("--xla_backend_optimization_level=0",))
    import jax
    import jax.numpy as jnp

    import pipelines

    rows = []

    def step(name, function):
        start, start_cpu = time.perf_counter(), time.process_time()
        jax.block_until_ready(function())
        rows.append((name, f"{time.process_time() - start_cpu:.1f}", f"{time.perf_counter() - start:.1f}"))
        print(" | ".join(rows[-1]), flush=True)

    loaded = {}
    step("load the config", lambda: loaded.setdefault("crank", pipelines.load(
        REPOSITORY / "configs" / "flores_slider_crank.toml", args.overrides)).mechanism.clearance_joints[0].clearance)
    crank = loaded["crank"]
    step("first solve and its metrics", lambda: crank.metrics()["pin.max_normal_force"])

    def peak(configured):
        def peak_force(clearance):
            return configured.with_parameters({"joints.pin.clearance": clearance}).metrics()["pin.max_normal_force"]

        return peak_force if args.no_jit else jax.jit(peak_force)

    reverse, forward = peak(crank), peak(crank.with_settings(adjoint="forward"))
    step("reverse-mode gradient", lambda: jax.grad(reverse)(0.5e-3))
    step("again", lambda: jax.grad(reverse)(0.4e-3))
    step("batch of three", lambda: jax.vmap(reverse)(jnp.array([0.1e-3, 0.25e-3, 0.5e-3])))
    step("again", lambda: jax.vmap(reverse)(jnp.array([0.2e-3, 0.3e-3, 0.4e-3])))
    step("forward-mode slope", lambda: jax.jacfwd(forward)(0.5e-3))
    step("again", lambda: jax.jacfwd(forward)(0.4e-3))
    step("forward batch of two", lambda: jax.vmap(forward)(jnp.array([0.3e-3, 0.5e-3])))
    print("\n" + harness.markdown_table(["step", "CPU (s)", "wall (s)"], rows))
    return 0


CASES = {"profile": profile, "examples": examples}

if __name__ == "__main__":
    raise SystemExit(harness.main(CASES, __doc__))
