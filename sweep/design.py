"""Designs of experiments in the unit cube, and their mapping onto parameter ranges.

``grid`` points are evenly (or geometrically) spaced levels; ``lhs`` is a Latin hypercube
(McKay, Beckman & Conover, Technometrics 21, 1979), ``sobol`` a scrambled Sobol' sequence
(Owen 1998), and ``saltelli_unit_samples`` SALib's Saltelli design for Sobol' indices. Every
sampled design of the project (sweeps, the tolerance design's uncertain samples) draws
through :func:`unit_samples`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

SAMPLED_DESIGNS = ("lhs", "sobol")
SCALES = ("linear", "log")


def unit_samples(kind: str, dimensions: int, samples: int, seed: int) -> np.ndarray:
    """``samples`` points in the unit cube ``[0, 1)^dimensions`` (``kind``: ``"lhs"`` or ``"sobol"``)."""
    from scipy.stats import qmc  # imported here: scipy.stats costs ~0.5 s, and grids never need it

    if kind not in SAMPLED_DESIGNS:
        raise ValueError(f"unknown sampled design {kind!r}; expected one of {list(SAMPLED_DESIGNS)}")
    engine_type = qmc.LatinHypercube if kind == "lhs" else qmc.Sobol
    try:
        engine = engine_type(dimensions, rng=seed)
    except TypeError:  # scipy < 1.15 names the generator `seed`
        engine = engine_type(dimensions, seed=seed)
    if kind == "sobol" and samples & (samples - 1) == 0:
        return engine.random_base2(int(math.log2(samples)))
    with warnings.catch_warnings():
        # Sobol' balance holds for powers of 2; other counts are still low-discrepancy
        # (docs/sweep.md says so), so scipy's warning is not passed on.
        warnings.simplefilter("ignore", UserWarning)
        return engine.random(samples)


def latin_hypercube(lower: np.ndarray, upper: np.ndarray, samples: int, seed: int) -> np.ndarray:
    """``samples`` rows drawn as a Latin hypercube, uniform in the box ``[lower, upper]``."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if lower.size == 0:
        return np.zeros((samples, 0))
    return lower + unit_samples("lhs", lower.size, samples, seed) * (upper - lower)


def saltelli_unit_samples(dimensions: int, samples: int, seed: int) -> np.ndarray:
    """SALib's Sobol'-sequence Saltelli design in the unit cube: ``samples * (dimensions + 2)``
    rows (first-order and total indices; Saltelli et al., Comput. Phys. Commun. 181, 2010),
    in the order ``SALib.analyze.sobol`` expects."""
    from SALib.sample import sobol as salib_sobol

    problem = {"num_vars": dimensions, "names": [f"x{i}" for i in range(dimensions)], "bounds": [[0.0, 1.0]] * dimensions}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SALib warns for non-powers of 2, as docs/sweep.md does
        return salib_sobol.sample(problem, samples, calc_second_order=False, scramble=True, seed=seed)


def scale_unit_samples(unit: np.ndarray, bounds: tuple[float, float], scale: str) -> np.ndarray:
    """Map unit-interval samples onto ``bounds``, uniformly or log-uniformly."""
    low, high = bounds
    if scale == "log":
        return np.exp(np.log(low) + unit * (np.log(high) - np.log(low)))
    return low + unit * (high - low)


def grid_values(bounds: tuple[float, float], num: int, scale: str) -> np.ndarray:
    """``num`` points from ``bounds[0]`` to ``bounds[1]`` inclusive, evenly or geometrically spaced."""
    return np.geomspace(*bounds, num) if scale == "log" else np.linspace(*bounds, num)
