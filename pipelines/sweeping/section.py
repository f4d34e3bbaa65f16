"""The section metrics of a sweep, asked for by ``[sweep.section]``: per point the period of
the motion in driver cycles (``period``, 0 where none up to ``max_period``), its class
(``motion``: periodic, quasi-periodic, chaotic, aperiodic, or failed: a solve that did not finish) and, with ``lyapunov = true``,
the largest Lyapunov exponent (``lyapunov_max``, 1/s); and the Poincaré section itself
(``poincare.parquet``: every point's stroboscopic samples, one row per point and sample).

Each point's mechanism (its group's, with the point's values written by the group's
resolver) runs :func:`model.nonlinear.mechanism_section` over ``transient_periods``
discarded and ``periods`` counted driver periods from the base's initial state, one
compiled call per group (a value per call, as the derivative path on a CPU). These solves
are separate from the sweep's own (whose window is ``[simulation] t_end``) and are not kept
in the chunk store: a resumed sweep computes them again. The same samples and columns as
``clearance bifurcation`` (:func:`section_samples`, :func:`section_columns`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from sweep.plan import Group

LYAPUNOV = "lyapunov_max"
PERIOD = "period"
MOTION = "motion"
UNITS = {PERIOD: "", LYAPUNOV: "1/s"}  # the numeric metrics; MOTION is a label


@dataclasses.dataclass(frozen=True)
class SectionSpec:
    """A validated ``[sweep.section]`` table."""

    transient_periods: int
    periods: int
    max_period: int
    lyapunov: bool

    def record(self) -> dict:
        return dataclasses.asdict(self)


def section_samples(outcome, lyapunov: bool) -> dict:
    """The arrays of one :class:`model.nonlinear.MechanismSection` that the tables keep."""
    import jax.numpy as jnp

    section = outcome.section
    return {
        LYAPUNOV: outcome.lyapunov.exponents[0] if lyapunov else jnp.nan,
        "lyapunov_change": outcome.lyapunov.change[0] if lyapunov else jnp.nan,
        PERIOD: outcome.period, MOTION: outcome.motion, "success": outcome.lyapunov.success,
        "t": section.t, "eccentricity": section.eccentricity, "positions": section.body_positions,
        "velocities": section.body_velocities,
    }


def section_columns(mechanism, samples: dict, periods: int) -> dict[str, np.ndarray]:
    """The per-sample columns of a section table from ``samples`` stacked over values
    (leading axis): ``section`` (index), ``t`` (s), each clearance joint's ``<joint>.ex``,
    ``.ey`` (m; and ``.ez`` for a spatial spherical joint, as the simulate timeseries) and
    each body's ``<body>.x``, ``.y`` (``.z`` in a spatial mechanism; m) and ``.vx``, ``.vy``
    (``.vz``; m/s), its centre of mass in the ground frame."""
    count = samples["t"].shape[0]
    columns = {"section": np.tile(np.arange(periods), count), "t": np.asarray(samples["t"]).reshape(-1)}
    eccentricity = np.asarray(samples["eccentricity"])
    # a spatial mechanism's clearance joints: its cylindrical ones (axial third component) first
    cylinders = len(getattr(mechanism, "cylindrical_joints", mechanism.clearance_joints))
    for index, name in enumerate(mechanism.clearance_names):
        columns[f"{name}.ex"] = eccentricity[:, :, index, 0].reshape(-1)
        columns[f"{name}.ey"] = eccentricity[:, :, index, 1].reshape(-1)
        if eccentricity.shape[-1] == 3 and index >= cylinders:
            columns[f"{name}.ez"] = eccentricity[:, :, index, 2].reshape(-1)
    positions, velocities = np.asarray(samples["positions"]), np.asarray(samples["velocities"])
    for index, name in enumerate(mechanism.body_names):
        for axis, label in enumerate("xyz"[:positions.shape[-1]]):
            columns[f"{name}.{label}"] = positions[:, :, index, axis].reshape(-1)
            columns[f"{name}.v{label}"] = velocities[:, :, index, axis].reshape(-1)
    return columns


def section_metrics(groups: Sequence[Group], points: np.ndarray, spec: SectionSpec,
                    progress: bool = True) -> tuple[dict[str, np.ndarray], pd.DataFrame]:
    """The section metric columns of every point in ``points`` (in their order; NaN, period
    0 and motion ``"failed"`` for a point that did not run or whose solve failed) and the
    Poincaré table (``point`` then :func:`section_columns`, the points that ran)."""
    import jax
    from tqdm import tqdm

    from model.nonlinear import MOTION_NAMES, mechanism_section

    by_point: dict[int, dict] = {}
    total = sum(len(group.runnable) for group in groups)
    with tqdm(total=total, desc="section", unit="point", disable=not progress) as bar:
        for group in groups:
            if group.mechanism is None or not group.runnable.size:
                continue
            parameters = group.resolver(group.mechanism, group.paths)
            settings = group.settings

            def one(values, mechanism=group.mechanism, parameters=parameters, settings=settings):
                outcome = mechanism_section(parameters.apply(mechanism, values), settings,
                                            transient_periods=spec.transient_periods, periods=spec.periods,
                                            num_exponents=1 if spec.lyapunov else 0, max_period=spec.max_period,
                                            reverse_differentiable=False)
                return section_samples(outcome, spec.lyapunov)

            compiled = jax.jit(one)
            for n in group.runnable:
                by_point[int(group.points[n])] = {**jax.tree.map(np.asarray, compiled(group.values[n])),
                                                  "mechanism": group.mechanism}
                bar.update(1)
    failed = MOTION_NAMES.index("failed")
    metrics: dict[str, list] = {PERIOD: [], MOTION: [], LYAPUNOV: []}
    for point in points:
        result = by_point.get(int(point))
        ran = result is not None and bool(result["success"])
        metrics[PERIOD].append(int(result[PERIOD]) if ran else 0)
        metrics[MOTION].append(MOTION_NAMES[int(result[MOTION])] if result is not None else MOTION_NAMES[failed])
        metrics[LYAPUNOV].append(float(result[LYAPUNOV]) if ran else np.nan)
    columns = {PERIOD: np.array(metrics[PERIOD], np.int64), MOTION: np.array(metrics[MOTION], dtype=object)}
    if spec.lyapunov:
        columns[LYAPUNOV] = np.array(metrics[LYAPUNOV])
    frames = []
    for point, result in sorted(by_point.items()):
        stacked = {name: np.asarray(value)[None] for name, value in result.items() if name != "mechanism"}
        frames.append(pd.DataFrame({"point": point, **section_columns(result["mechanism"], stacked, spec.periods)}))
    poincare = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({"point": [], "section": [], "t": []})
    return columns, poincare
