"""The forward-mode slope of the docs/api.md example against central differences.

``d(peak pin force)/d(clearance)`` of the Flores slider-crank over 3 ms at 0.5 mm by
``jax.jacfwd`` through the solve (``adjoint="forward"``), and by central differences of the
batched metric over two steps; docs/api.md ("Accuracy of the slope") records the result::

    python benchmarks/api_slope.py                 # the config's rtol (1e-6)
    python benchmarks/api_slope.py --rtol 1e-8
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtol", type=float, default=None, help="relative tolerance (default: the config's)")
    parser.add_argument("--steps", type=float, nargs="+", default=[2e-6, 2e-5], help="half-widths of the differences (m)")
    args = parser.parse_args(argv)

    import model

    model.configure()
    import jax
    import jax.numpy as jnp

    import pipelines

    overrides = ["simulation.t_end=3 ms"] + ([f"simulation.rtol={args.rtol}"] if args.rtol is not None else [])
    crank = pipelines.load(ROOT / "configs" / "flores_slider_crank.toml", overrides).with_settings(adjoint="forward")

    def peak_force(clearance):
        return crank.with_parameters({"joints.pin.clearance": clearance}).metrics()["pin.max_normal_force"]

    clearance = 0.5e-3
    slope = float(jax.jit(jax.jacfwd(peak_force))(clearance))
    print(f"rtol {crank.settings.rtol:g}: forward-mode slope {slope:.5g} N/m")
    batched = jax.jit(jax.vmap(peak_force))
    for step in args.steps:
        below, above = batched(jnp.array([clearance - step, clearance + step]))
        difference = float(above - below) / (2 * step)
        print(f"central difference over +-{step:g} m: {difference:.5g} N/m (slope {slope / difference - 1:+.2%} off)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
