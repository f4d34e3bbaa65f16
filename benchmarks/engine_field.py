"""What one evaluation costs per lane on each planar engine: the vector field, and the two
queries the peak tracking makes at every sample of a step (body accelerations, contact
values), vmapped over 128 lanes of the Flores slider-crank (clearances 0.1-0.5 mm): 100
evaluations in one compiled loop (each one's input depends on the last one's output, so
none is hoisted; a single call's time is mostly dispatch), best of 20 loops, in wall and in
CPU time of this process (docs/BENCHMARKS.md, section 1e; docs/engine.md). Run from the
repository root::

    python benchmarks/engine_field.py
"""

import time

import jax
import jax.numpy as jnp

import model
from pipelines.build import ParameterMap, build_mechanism
from pipelines.config import load_mechanism

LANES = 128
REPEATS = 100  # evaluations per compiled loop


def looped(function):
    """``REPEATS`` evaluations of ``function(mechanisms, y, *rest)`` in one compiled loop."""

    def run(mechanisms, y, *rest):
        def body(_, y):
            out = function(mechanisms, y, *rest)
            return y + 1e-300 * jnp.sum(out.reshape(LANES, -1), axis=1, keepdims=True)

        return jax.lax.fori_loop(0, REPEATS, body, y)

    return jax.jit(run)


def main() -> int:
    model.configure()
    config = load_mechanism("configs/flores_slider_crank.toml")
    values = jnp.linspace(1e-4, 5e-4, LANES)[:, None]
    for engine in ("joint", "absolute"):
        base = build_mechanism(config, engine)
        parameters = ParameterMap(base, ["joints.pin.clearance"])
        mechanisms = jax.vmap(parameters.apply, (None, 0))(base, values)
        y0 = jax.jit(jax.vmap(lambda m: m.flatten(m.initial_state())))(mechanisms)
        field = looped(jax.vmap(lambda m, y: m.flat_vector_field(0.0, y)))
        accelerations = looped(jax.vmap(lambda m, y, r: m.body_accelerations(y, r)))
        contact = looped(jax.vmap(lambda m, y: m.contact_values(y)))
        rate = jax.jit(jax.vmap(lambda m, y: m.flat_vector_field(0.0, y)))(mechanisms, y0)
        for name, function, args in (("vector field", field, (mechanisms, y0)),
                                     ("body accelerations", accelerations, (mechanisms, y0, rate)),
                                     ("contact values", contact, (mechanisms, y0))):
            jax.block_until_ready(function(*args))
            wall, cpu = [], []
            for _ in range(20):
                start, start_cpu = time.perf_counter(), time.process_time()
                jax.block_until_ready(function(*args))
                wall.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
            per_lane = 1e9 / (LANES * REPEATS)
            print(f"{engine} engine, {name}: {min(wall) * per_lane:.0f} ns per lane ({min(cpu) * per_lane:.0f} ns of CPU)",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
