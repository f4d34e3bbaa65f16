"""Variance-based global sensitivity: Sobol' indices of every metric with SALib.

The sampled parameters follow SALib's Saltelli design (``sweep.design.saltelli_unit_samples``): ``samples * (D + 2)`` rows
per combination of the crossed (``values``) parameters, in the order that
``SALib.analyze.sobol.analyze`` reads (Saltelli et al., Comput. Phys. Commun. 181, 2010;
Jansen's total-effect estimator). Indices are computed per combination of the crossed
values (one per contact law, say), for the parameters' own input distributions (uniform, or
log-uniform with ``scale = "log"``). A metric with a failed or non-finite point in a
combination gets NaN indices there: the estimator needs every row.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .status import OK

COLUMNS = ("metric", "parameter", "S1", "S1_conf", "ST", "ST_conf")


def sobol_indices(frame: pd.DataFrame, sampled: Sequence[str], crossed: Sequence[str], metrics: Sequence[str],
                  seed: int) -> pd.DataFrame:
    """One row per (crossed combination, metric, sampled parameter): S1, ST and their 95 %
    bootstrap confidence half-widths (``seed``: the bootstrap's); the crossed parameters'
    values are columns too. ``frame`` holds the Saltelli rows of every crossed combination
    (columns ``point``, ``status``, the parameters and the metrics)."""
    from SALib.analyze import sobol as salib_sobol

    sampled, crossed = list(sampled), list(crossed)
    problem = {"num_vars": len(sampled), "names": sampled, "bounds": [[0.0, 1.0]] * len(sampled)}
    rows = []
    ordered = frame.sort_values("point", kind="stable")
    blocks = ordered.groupby(crossed, sort=False) if crossed else [((), ordered)]
    for key, block in blocks:
        key = key if isinstance(key, tuple) else (key,)
        where = dict(zip(crossed, key))
        for metric in metrics:
            values = block[metric].to_numpy(float)
            usable = bool((block["status"] == OK).all()) and np.isfinite(values).all() and np.ptp(values) > 0
            if usable:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = salib_sobol.analyze(problem, values, calc_second_order=False, print_to_console=False,
                                                 seed=seed)
            for k, path in enumerate(sampled):
                row = {**where, "metric": metric, "parameter": path}
                row.update({name: float(result[name][k]) if usable else np.nan for name in COLUMNS[2:]})
                rows.append(row)
    return pd.DataFrame(rows, columns=[*crossed, *COLUMNS])
