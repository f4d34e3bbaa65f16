"""What the step-wise contact peaks (``model/integrate/peaks.py``) cost: the Flores sweep's
ensemble path and one ``model.simulate`` (24 ms, 10 us output), with the per-step reduction
and with it replaced by the identity, compiled once each and timed interleaved in one
process (so both arms share the machine's state). The step counts are printed too: the
reduction reads the steps and must not change them.

Run from the repository root::

    .venv/bin/python benchmarks/peaks_overhead.py [--repeats 6]
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))
sys.path.insert(0, str(REPOSITORY / "benchmarks"))
import model  # noqa: E402
import scipy_peer  # noqa: E402
from guard_overhead import interleaved  # noqa: E402
from pipelines.build import ParameterMap  # noqa: E402

PEAKS = sys.modules["model.integrate.peaks"]


def compiled(function, with_peaks: bool):
    """``jit(function)`` traced with the per-step reduction, or with the identity instead."""

    def traced(*args):
        original = PEAKS.update_peaks  # what simulate's and the lanes' steps both call
        if not with_peaks:
            PEAKS.update_peaks = lambda peaks, *_: peaks
        try:
            return function(*args)
        finally:
            PEAKS.update_peaks = original

    return jax.jit(traced)


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
        return jnp.sum(model.solve_ensemble(points, settings, 22).steps)

    def single(point):
        return model.simulate(point, settings).steps

    cases = (("solve_ensemble, 32 Flores points, 22 lanes", ensemble, (mechanisms,)),
             ("simulate, one Flores solve", single, (mechanism,)))
    for label, function, call_args in cases:
        arms = {arm: compiled(function, arm == "peaks") for arm in ("peaks", "no peaks")}
        steps = {arm: int(arms[arm](*call_args)) for arm in arms}
        result = interleaved(arms, call_args, args.repeats)
        (best_on, median_on), (best_off, median_off) = result["peaks"], result["no peaks"]
        print(f"{label}: steps {steps['peaks']} with peaks / {steps['no peaks']} without; "
              f"best {best_on:.3f} s / {best_off:.3f} s ({best_on / best_off - 1:+.1%}); "
              f"median {median_on:.3f} / {median_off:.3f} s ({median_on / median_off - 1:+.1%})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
