"""What one evaluation costs per lane on each planar engine: the vector field, and the two
queries the peak tracking makes at every sample of a step (body accelerations, contact
values), vmapped over 128 lanes of the Flores slider-crank (clearances 0.1-0.5 mm), best of
200 calls (docs/BENCHMARKS.md, section 1e; docs/engine.md). Run from the repository root::

    python benchmarks/engine_field.py
"""

import time

import jax
import jax.numpy as jnp

import model
from pipelines.build import ParameterMap, build_mechanism
from pipelines.config import load_mechanism

LANES = 128


def main() -> int:
    model.configure()
    config = load_mechanism("configs/flores_slider_crank.toml")
    values = jnp.linspace(1e-4, 5e-4, LANES)[:, None]
    for engine in ("joint", "absolute"):
        base = build_mechanism(config, engine)
        parameters = ParameterMap(base, ["joints.pin.clearance"])
        mechanisms = jax.vmap(parameters.apply, (None, 0))(base, values)
        y0 = jax.jit(jax.vmap(lambda m: m.flatten(m.initial_state())))(mechanisms)
        field = jax.jit(jax.vmap(lambda m, y: m.flat_vector_field(0.0, y)))
        accelerations = jax.jit(jax.vmap(lambda m, y, r: m.body_accelerations(y, r)))
        contact = jax.jit(jax.vmap(lambda m, y: m.contact_values(y)))
        rate = field(mechanisms, y0)
        for name, function, args in (("vector field", field, (mechanisms, y0)),
                                     ("body accelerations", accelerations, (mechanisms, y0, rate)),
                                     ("contact values", contact, (mechanisms, y0))):
            jax.block_until_ready(function(*args))
            times = []
            for _ in range(200):
                start = time.perf_counter()
                jax.block_until_ready(function(*args))
                times.append(time.perf_counter() - start)
            print(f"{engine} engine, {name}: {min(times) / LANES * 1e9:.0f} ns per lane", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
