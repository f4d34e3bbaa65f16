"""The section metrics of a sweep, asked for by ``[sweep.section]``: per point the period of
the motion in driver cycles (``period``, 0 where none up to ``max_period``), its class
(``motion``: periodic, quasi-periodic, chaotic, aperiodic, or failed: a solve that did not finish) and, with ``lyapunov = true``,
the largest Lyapunov exponent (``lyapunov_max``, 1/s); and the Poincaré section itself
(``poincare.parquet``: every point's stroboscopic samples, one row per point and sample).
With a hyperplane (``[sweep.section.hyperplane]``) also its crossings (``crossings.parquet``,
one row per point and stored crossing), and ``period`` and ``motion`` are the crossings'.

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
UNITS = {PERIOD: "", LYAPUNOV: "1/s", "crossings": "", "distinct_crossings": ""}  # numeric; MOTION is a label


@dataclasses.dataclass(frozen=True)
class HyperplaneSpec:
    """A validated hyperplane section in SI: ``quantity`` (a section column name),
    ``value`` (m or m/s), ``direction`` (up, down, both), ``capacity`` (crossings stored
    per run) and ``transient`` (s from the start before crossings count; ``None``: the
    transient periods)."""

    quantity: str
    value: float
    direction: str
    capacity: int
    transient: float | None

    @classmethod
    def of(cls, table) -> "HyperplaneSpec | None":
        """From a :class:`pipelines.sweeping.table.HyperplaneTable` (or ``None``)."""
        if table is None:
            return None
        return cls(table.quantity, table.si("value"), table.direction, table.capacity, table.si("transient"))

    def hyperplane(self, mechanism):
        """The :class:`model.nonlinear.Hyperplane` of ``mechanism``; a ``ValueError`` naming
        the known columns when ``quantity`` is not one of its section columns."""
        import jax.numpy as jnp

        from model.nonlinear import DIRECTIONS, Hyperplane

        return Hyperplane(section_quantity(mechanism, self.quantity), jnp.asarray(self.value),
                          DIRECTIONS[self.direction], self.capacity)


def section_quantity(mechanism, name: str):
    """The :class:`model.nonlinear.SectionQuantity` of the section column ``name`` of
    ``mechanism`` (:func:`section_columns`: ``<body>.x`` ... ``.vz``, ``<joint>.ex`` ...);
    a ``ValueError`` listing the known ones otherwise."""
    from model.nonlinear import SectionQuantity

    owner, suffix = name.rsplit(".", 1)
    dimension = getattr(mechanism, "dimension", 2)
    axes = "xyz"[:dimension]
    cylinders = len(getattr(mechanism, "cylindrical_joints", mechanism.clearance_joints))
    known = [f"{body}.{prefix}{axis}" for body in mechanism.body_names for prefix in ("", "v") for axis in axes]
    for index, joint in enumerate(mechanism.clearance_names):
        known += [f"{joint}.e{axis}" for axis in ("xyz" if dimension == 3 and index >= cylinders else "xy")]
    if name not in known:
        raise ValueError(f"{name!r} is not a section column of this mechanism; expected one of {known}")
    if suffix.startswith("e"):
        return SectionQuantity("eccentricity", list(mechanism.clearance_names).index(owner), "xyz".index(suffix[1]))
    kind = "velocity" if suffix.startswith("v") else "position"
    return SectionQuantity(kind, list(mechanism.body_names).index(owner), "xyz".index(suffix[-1]))


@dataclasses.dataclass(frozen=True)
class SectionSpec:
    """A validated ``[sweep.section]`` table."""

    transient_periods: int
    periods: int
    max_period: int
    lyapunov: bool
    hyperplane: HyperplaneSpec | None = None

    def record(self) -> dict:
        """The table as plain data; ``hyperplane`` only when set, so that a sweep without
        one hashes the same record into its fingerprint whatever the schema's optional
        tables."""
        record = dataclasses.asdict(self)
        if self.hyperplane is None:
            record.pop("hyperplane")
        return record


def section_samples(outcome, lyapunov: bool) -> dict:
    """The arrays of one :class:`model.nonlinear.MechanismSection` that the tables keep
    (with a hyperplane, its crossings under the keys ``crossing.*``)."""
    import jax.numpy as jnp

    section = outcome.section
    samples = {
        LYAPUNOV: outcome.lyapunov.exponents[0] if lyapunov else jnp.nan,
        "lyapunov_change": outcome.lyapunov.change[0] if lyapunov else jnp.nan,
        PERIOD: outcome.period, MOTION: outcome.motion, "success": outcome.lyapunov.success,
        "t": section.t, "eccentricity": section.eccentricity, "positions": section.body_positions,
        "velocities": section.body_velocities,
    }
    if outcome.crossing_section is not None:
        crossed = outcome.crossing_section
        samples.update({
            CROSSINGS: outcome.crossings.count, DISTINCT: outcome.distinct, "crossing.t": crossed.t,
            "crossing.direction": outcome.crossings.directions, "crossing.eccentricity": crossed.eccentricity,
            "crossing.positions": crossed.body_positions, "crossing.velocities": crossed.body_velocities,
        })
    return samples


CROSSINGS = "crossings"  # crossings after the transient, stored or not
DISTINCT = "distinct_crossings"  # distinct crossing points of a periodic motion (0: none)


def crossing_rows(mechanism, samples: dict) -> dict[str, np.ndarray]:
    """The rows of a crossings table from ``samples`` stacked over runs (leading axis):
    ``crossing`` (index), ``direction`` (+1 up, -1 down), ``t`` (s) and the section
    columns (:func:`section_columns`) of every stored crossing; ``run``: each row's index on
    the leading axis."""
    capacity = np.asarray(samples["crossing.t"]).shape[1]
    stored = np.minimum(np.asarray(samples[CROSSINGS]).reshape(-1), capacity)
    renamed = {name.removeprefix("crossing."): value for name, value in samples.items() if name.startswith("crossing.")}
    columns = section_columns(mechanism, renamed, capacity)
    keep = (np.arange(capacity)[None, :] < stored[:, None]).reshape(-1)
    directions = np.asarray(renamed["direction"]).reshape(-1).astype(np.int64)
    columns = {"crossing": columns.pop("section"), "direction": directions, **columns}
    runs = np.repeat(np.arange(stored.size), capacity)
    return {"run": runs[keep], **{name: value[keep] for name, value in columns.items()}}


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
                    progress: bool = True) -> tuple[dict[str, np.ndarray], pd.DataFrame, pd.DataFrame | None]:
    """The section metric columns of every point in ``points`` (in their order; NaN, period
    0 and motion ``"failed"`` for a point that did not run or whose solve failed), the
    Poincaré table (``point`` then :func:`section_columns`, the points that ran) and, with
    a hyperplane, the crossings table (``point`` then :func:`crossing_rows`; else ``None``)
    and the metric columns ``crossings`` and ``distinct_crossings``."""
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

            hyperplane = None if spec.hyperplane is None else spec.hyperplane.hyperplane(group.mechanism)

            def one(values, mechanism=group.mechanism, parameters=parameters, settings=settings, hyperplane=hyperplane):
                outcome = mechanism_section(parameters.apply(mechanism, values), settings,
                                            transient_periods=spec.transient_periods, periods=spec.periods,
                                            num_exponents=1 if spec.lyapunov else 0, max_period=spec.max_period,
                                            reverse_differentiable=False, hyperplane=hyperplane,
                                            crossing_transient=spec.hyperplane and spec.hyperplane.transient)
                return section_samples(outcome, spec.lyapunov)

            compiled = jax.jit(one)
            for n in group.runnable:
                by_point[int(group.points[n])] = {**jax.tree.map(np.asarray, compiled(group.values[n])),
                                                  "mechanism": group.mechanism}
                bar.update(1)
    failed = MOTION_NAMES.index("failed")
    metrics: dict[str, list] = {PERIOD: [], MOTION: [], LYAPUNOV: [], CROSSINGS: [], DISTINCT: []}
    for point in points:
        result = by_point.get(int(point))
        ran = result is not None and bool(result["success"])
        metrics[PERIOD].append(int(result[PERIOD]) if ran else 0)
        metrics[MOTION].append(MOTION_NAMES[int(result[MOTION])] if result is not None else MOTION_NAMES[failed])
        metrics[LYAPUNOV].append(float(result[LYAPUNOV]) if ran else np.nan)
        if spec.hyperplane is not None:
            metrics[CROSSINGS].append(int(result[CROSSINGS]) if ran else 0)
            metrics[DISTINCT].append(int(result[DISTINCT]) if ran else 0)
    columns = {PERIOD: np.array(metrics[PERIOD], np.int64), MOTION: np.array(metrics[MOTION], dtype=object)}
    if spec.lyapunov:
        columns[LYAPUNOV] = np.array(metrics[LYAPUNOV])
    if spec.hyperplane is not None:
        columns[CROSSINGS] = np.array(metrics[CROSSINGS], np.int64)
        columns[DISTINCT] = np.array(metrics[DISTINCT], np.int64)
    frames, crossing_frames = [], []
    for point, result in sorted(by_point.items()):
        stacked = {name: np.asarray(value)[None] for name, value in result.items() if name != "mechanism"}
        frames.append(pd.DataFrame({"point": point, **section_columns(result["mechanism"], stacked, spec.periods)}))
        if spec.hyperplane is not None:
            rows = crossing_rows(result["mechanism"], stacked)
            rows.pop("run")
            crossing_frames.append(pd.DataFrame({"point": point, **rows}))
    poincare = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({"point": [], "section": [], "t": []})
    crossings = None
    if spec.hyperplane is not None:
        crossings = (pd.concat(crossing_frames, ignore_index=True) if crossing_frames
                     else pd.DataFrame({"point": [], "crossing": [], "direction": [], "t": []}))
    return columns, poincare, crossings
