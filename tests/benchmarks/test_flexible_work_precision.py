"""The flexible work-precision study's comparison rule (``benchmarks/flexible_work_precision.py``):
each solver's cost at a target error is its cheapest run within that error."""

import importlib.util
import pathlib

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "flexible_work_precision.py"
_spec = importlib.util.spec_from_file_location("flexible_work_precision", _PATH)
flexible_work_precision = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(flexible_work_precision)


def test_cheapest_run_within_the_target():
    # a solver on its stability bound: error not monotonic in run time
    runs = [dict(error=5.4e-3, seconds=0.383), dict(error=9.4e-4, seconds=0.386), dict(error=6.9e-4, seconds=0.385),
            dict(error=3.8e-6, seconds=0.395), dict(error=float("nan"), seconds=0.1)]
    assert flexible_work_precision.time_at_error(runs, 1e-3) == 0.385
    assert flexible_work_precision.time_at_error(runs, 1e-5) == 0.395
    # a run just above the target does not count, however cheap
    assert flexible_work_precision.time_at_error([dict(error=1.03e-3, seconds=0.031)], 1e-3) == float("inf")
