"""The sweep metric ``lyapunov_max`` (1/s): the largest Lyapunov exponent of every point
that ran, asked for by ``[sweep.lyapunov]``.

Each point's mechanism (its group's, with the point's values written by the group's
resolver) runs :func:`model.nonlinear.mechanism_section` with one tangent vector, over
``transient_periods`` discarded and ``periods`` counted driver periods from the base's
initial state, one compiled call per group (a value per call, as the derivative path on a
CPU). These solves are separate from the sweep's own (whose window is
``[simulation] t_end``) and are not kept in the chunk store: a resumed sweep computes them
again.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sweep.plan import Group

METRIC = "lyapunov_max"
UNIT = "1/s"


def lyapunov_column(groups: Sequence[Group], points: np.ndarray, transient_periods: int, periods: int,
                    progress: bool = True) -> np.ndarray:
    """``lyapunov_max`` (1/s) of every point in ``points`` (NaN for a point that did not
    run or whose solve failed), in the order of ``points``."""
    import jax
    from tqdm import tqdm

    from model.nonlinear import mechanism_section

    exponents: dict[int, float] = {}
    total = sum(len(group.runnable) for group in groups)
    with tqdm(total=total, desc=METRIC, unit="point", disable=not progress) as bar:
        for group in groups:
            if group.mechanism is None or not group.runnable.size:
                continue
            parameters = group.resolver(group.mechanism, group.paths)
            settings = group.settings

            def largest(values, mechanism=group.mechanism, parameters=parameters, settings=settings):
                outcome = mechanism_section(parameters.apply(mechanism, values), settings,
                                            transient_periods=transient_periods, periods=periods, max_period=1,
                                            reverse_differentiable=False)
                return jax.numpy.where(outcome.lyapunov.success, outcome.lyapunov.exponents[0], jax.numpy.nan)

            compiled = jax.jit(largest)
            for n in group.runnable:
                exponents[int(group.points[n])] = float(compiled(group.values[n]))
                bar.update(1)
    return np.array([exponents.get(int(point), np.nan) for point in points])
