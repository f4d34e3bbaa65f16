"""Ideal-joint drift of configs: the largest constraint violation over a run, with
Baumgarte stabilisation alone (``projection_iterations = 0``) and with the projection onto
the constraints after every step (the default), in one process::

    python benchmarks/constraint_drift.py --t-end "150 ms" configs/flores_slider_crank.toml
    python benchmarks/constraint_drift.py --t-end "1 s" --ideal configs/flores_slider_crank.toml
    python benchmarks/constraint_drift.py --t-end "1 s" --only 1 configs/*.toml   # projection only

docs/integration.md ("Projection onto the constraints") records the results.
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np

import model
from pipelines.build import build_mechanism, solver_settings
from pipelines.config import load_mechanism


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="+")
    parser.add_argument("--t-end", default="150 ms", help="window, with its unit")
    parser.add_argument("--output-interval", default="0.1 ms")
    parser.add_argument("--ideal", action="store_true", help="the mechanism with its clearance joints made ideal")
    parser.add_argument("--only", type=int, choices=(0, 1), help="one setting of projection_iterations only")
    args = parser.parse_args(argv)
    print("| config | solver | projection_iterations | max violation | final violation | steps | status | "
          "run (s) |\n|---|---|---:|---:|---:|---:|---|---:|", flush=True)
    for path in args.configs:
        config = load_mechanism(path, [f"simulation.t_end={args.t_end}",
                                       f"simulation.output_interval={args.output_interval}"])
        mechanism = build_mechanism(config)
        mechanism = mechanism.idealised() if args.ideal else mechanism
        for iterations in (0, 1) if args.only is None else (args.only,):
            settings = solver_settings(config, projection_iterations=iterations)
            compiled = jax.jit(model.simulate, static_argnums=1).lower(mechanism, settings).compile()
            start = time.perf_counter()
            trajectory = jax.block_until_ready(compiled(mechanism))
            seconds = time.perf_counter() - start
            violation = np.asarray(trajectory.constraint_violation)
            print(f"| {path} | {settings.solver} | {iterations} | {violation.max():.2e} | {violation[-1]:.2e} | "
                  f"{int(trajectory.steps)} | {model.result_message(int(trajectory.result))} | {seconds:.1f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
