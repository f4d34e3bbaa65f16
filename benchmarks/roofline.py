"""How far one vector-field evaluation and one Tsit5 step of the Flores slider-crank are from
what a CPU core allows: XLA's cost analysis (flop and bytes of one call) against the
measured time of many calls inside one compiled loop (no Python dispatch), for one
simulation and for a batch of lanes (``jax.vmap``, as the refilling lanes run them: each
lane with its own copy of the mechanism, so that XLA cannot fold its parameters). The step
is timed as a solve takes it (first stage from the previous step), with the lanes' Tsit5
(``model.integrate.explicit``) and, for comparison, with diffrax's own stage loop.

    python benchmarks/roofline.py                    # 1 and 32 lanes
    python benchmarks/roofline.py --lanes 1 16 32 64 --peak 41.6

``--peak``: the core's float64 peak in GFLOP/s (default: 16 flop per cycle, two 256-bit
FMA units, at the clock ``/proc/cpuinfo`` reports); the scalar peak is a quarter of it.
Prints one Markdown table.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import model  # noqa: F401  (float64 and the package's XLA flags, before JAX starts)

import diffrax
import jax
import jax.numpy as jnp

from model.integrate import explicit
from model.mechanics.interface import flat_vector_field
from pipelines.build import ParameterMap, build_mechanism
from pipelines.config import load_mechanism

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "flores_slider_crank.toml"
STEP = 1e-6  # s, a typical Tsit5 step of the Flores benchmark in free flight


def clock_ghz() -> float:
    try:
        megahertz = [float(line.split(":")[1]) for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("cpu MHz")]
        return megahertz[0] / 1e3 if megahertz else 2.6
    except OSError:
        return 2.6


def cost(function, *args) -> tuple[float, float]:
    """(flop, bytes accessed) of one call, by XLA's cost analysis of the compiled program."""
    analysis = jax.jit(function).lower(*args).compile().cost_analysis()
    analysis = analysis[0] if isinstance(analysis, list) else analysis
    return float(analysis.get("flops", 0.0)), float(analysis.get("bytes accessed", 0.0))


def seconds_per_call(function, y0, mechanism, calls: int, repeats: int = 5) -> float:
    """Time of one ``function(y, mechanism)`` call, from ``calls`` chained calls in one
    compiled loop; the mechanism is an argument, not a constant XLA could fold."""
    looped = jax.jit(lambda y, m: jax.lax.fori_loop(0, calls, lambda _, y: function(y, m), y))
    jax.block_until_ready(looped(y0, mechanism))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(looped(y0, mechanism))
        best = min(best, time.perf_counter() - start)
    return best / calls


def per_lane(mechanism, lanes: int):
    """One mechanism per lane, built as the sweep builds its points' (``vmap`` of a
    :class:`~pipelines.build.ParameterMap`, here writing the config's own clearance), so
    every leaf has a lanes axis and no parameter is a compile-time constant."""
    parameters = ParameterMap(mechanism, ("joints.pin.clearance",))
    values = jnp.broadcast_to(parameters.read(mechanism), (lanes, 1))
    return jax.vmap(parameters.apply, (None, 0))(mechanism, values)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--calls", type=int, default=2000, help="chained calls per timed loop")
    parser.add_argument("--peak", type=float, default=None, help="float64 GFLOP/s of one core")
    args = parser.parse_args(argv)
    peak = args.peak or 16 * clock_ghz()
    mechanism = build_mechanism(load_mechanism(CONFIG))
    y0 = mechanism.flatten(mechanism.initial_state())
    terms = diffrax.ODETerm(flat_vector_field)
    # a step inside a solve: the first stage is the previous step's last (FSAL), 6 evaluations
    state = (jnp.array(False), flat_vector_field(0.0, y0, mechanism))

    def evaluation(y, mechanism):
        # chained so XLA cannot hoist the calls out of the loop; 2 flop per state entry extra
        return y + 1e-12 * flat_vector_field(0.0, y, mechanism)

    def stepper(solver):
        return lambda y, mechanism: solver.step(terms, 0.0, STEP, y, mechanism, state, made_jump=False)[0]

    print(f"Flores slider-crank, {y0.size} states; peak {peak:.1f} GFLOP/s float64 per core "
          f"(vector), {peak / 4:.1f} scalar; {jax.devices()[0].device_kind}\n")
    print("| what | lanes | flop / lane | bytes / lane | flop / byte | time / lane | GFLOP/s | share of scalar peak | share of vector peak |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    evaluation_flop: dict[int, float] = {}
    for name, function, evaluations in (("vector-field evaluation", evaluation, 1),
                                        ("Tsit5 step", stepper(explicit.Tsit5()), 6),
                                        ("Tsit5 step, diffrax's stage loop", stepper(diffrax.Tsit5()), 6)):
        for lanes in args.lanes:
            batched = function if lanes == 1 else jax.vmap(function)
            ys = y0 if lanes == 1 else jnp.broadcast_to(y0, (lanes, y0.size)) * (1 + 1e-9 * jnp.arange(lanes))[:, None]
            mechanisms = mechanism if lanes == 1 else per_lane(mechanism, lanes)
            flop, moved = cost(batched, ys, mechanisms)
            if evaluations == 1:
                evaluation_flop[lanes] = flop
                traffic = f"{moved / lanes:,.0f} | {flop / max(moved, 1):.2f}"
            else:
                # diffrax runs the stages in a loop, whose body XLA's analysis counts once: count
                # the evaluations instead (a lower bound, without the stage sums); bytes unknown
                flop, traffic = evaluations * evaluation_flop[lanes], " | "
            per_call = seconds_per_call(batched, ys, mechanisms, args.calls // evaluations)
            rate = flop / per_call / 1e9
            print(f"| {name} | {lanes} | {flop / lanes:,.0f} | {traffic} | {per_call / lanes * 1e6:.2f} us | "
                  f"{rate:.2f} | {rate / (peak / 4):.0%} | {rate / peak:.0%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
