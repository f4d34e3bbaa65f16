"""The flexible work-precision study's comparison rule (``python -m benchmarks.work_precision --case flexible``):
each solver's cost at a target error is its cheapest run within that error."""

from benchmarks.work_precision import time_at_error


def test_cheapest_run_within_the_target():
    # a solver on its stability bound: error not monotonic in run time
    runs = [dict(error=5.4e-3, seconds=0.383), dict(error=9.4e-4, seconds=0.386), dict(error=6.9e-4, seconds=0.385),
            dict(error=3.8e-6, seconds=0.395), dict(error=float("nan"), seconds=0.1)]
    assert time_at_error(runs, 1e-3) == 0.385
    assert time_at_error(runs, 1e-5) == 0.395
    # a run just above the target does not count, however cheap
    assert time_at_error([dict(error=1.03e-3, seconds=0.031)], 1e-3) == float("inf")
