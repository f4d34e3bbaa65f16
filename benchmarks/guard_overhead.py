"""What the non-finite-step guard (``model.RejectNonFinite``) costs on the hot path: the
Flores sweep's ensemble path and one ``model.simulate``, guarded and unguarded, compiled
once each and timed interleaved in one process (so both arms share the machine's state).

Run from the repository root::

    .venv/bin/python benchmarks/guard_overhead.py [--repeats 6]
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))
sys.path.insert(0, str(REPOSITORY / "benchmarks"))
import model  # noqa: E402
import scipy_peer  # noqa: E402
from pipelines.build import ParameterMap  # noqa: E402

ENSEMBLE = sys.modules["model.integrate.ensemble"]
SIMULATE = sys.modules["model.integrate.solve"]


def unguarded(make_controller):
    """``make_controller`` with the guard taken out of the wrapper chain."""

    def make(mechanism, settings, rtol=None, atol=None):
        controller = make_controller(mechanism, settings, rtol, atol)
        if isinstance(controller, model.RejectNonFinite):
            return controller.controller
        return eqx.tree_at(lambda c: c.controller, controller, controller.controller.controller)

    return make


def compiled(function, module, guarded: bool):
    """``jit(function)`` traced with or without the guard in ``module.make_controller``."""

    def traced(*args):
        original = module.make_controller
        module.make_controller = original if guarded else unguarded(original)
        try:
            return function(*args)
        finally:
            module.make_controller = original

    return jax.jit(traced)


def interleaved(arms: dict, args, repeats: int) -> dict:
    for function in arms.values():
        jax.block_until_ready(function(*args))
    times = {name: [] for name in arms}
    for _ in range(repeats):
        for name, function in arms.items():
            start = time.perf_counter()
            jax.block_until_ready(function(*args))
            times[name].append(time.perf_counter() - start)
    return {name: (min(values), float(np.median(values))) for name, values in times.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=6)
    args = parser.parse_args(argv)
    mechanism, settings = scipy_peer.load_flores(t_end=0.024)
    parameters = ParameterMap(mechanism, ["joints.pin.clearance", "joints.pin.contact.restitution"])
    clearance, restitution = np.meshgrid(np.linspace(1e-4, 5e-4, 8), np.linspace(0.5, 0.99, 4))
    values = jnp.asarray(np.stack([clearance.ravel(), restitution.ravel()], axis=1))
    mechanisms = jax.vmap(parameters.apply, (None, 0))(mechanism, values)

    def ensemble(points):
        return model.solve_ensemble(points, settings, 22).steps

    def single(point):
        return model.simulate(point, settings).steps

    cases = (("solve_ensemble, 32 Flores points, 22 lanes", ensemble, ENSEMBLE, (mechanisms,)),
             ("simulate, one Flores solve", single, SIMULATE, (mechanism,)))
    for label, function, module, call_args in cases:
        arms = {guard: compiled(function, module, guard == "guarded") for guard in ("guarded", "unguarded")}
        result = interleaved(arms, call_args, args.repeats)
        (best_on, median_on), (best_off, median_off) = result["guarded"], result["unguarded"]
        print(f"{label}: best {best_on:.3f} s guarded / {best_off:.3f} s unguarded ({best_on / best_off - 1:+.1%}); "
              f"median {median_on:.3f} / {median_off:.3f} s ({median_on / median_off - 1:+.1%})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
