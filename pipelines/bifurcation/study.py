"""Load a bifurcation config, run the mechanism's section and exponents over the values in
compiled batches, and assemble the tables.

Every value runs :func:`model.nonlinear.mechanism_section` on the base mechanism with the
parameter written by :class:`pipelines.build.ParameterMap` (the sweeps' dotted paths);
``jit(vmap(...))`` over batches of ``[bifurcation] batch`` values, the last batch padded
with copies of its last value (:func:`sweep.run.pad_rows`). With ``[bifurcation] lanes``
the values run instead through the refilling lanes (:func:`model.solve_ensemble`), which
save each value's state at its own section times (:func:`model.nonlinear.section_times`
of its mechanism: a swept driver speed changes them), classified by
:func:`model.nonlinear.sampled_section`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from sweep.design import grid_values
from sweep.run import pad_rows

from ..config import MechanismConfig
from ..config.loading import load_pipeline_mechanism, si_value_in_base
from ..errors import ConfigError
from ..sweeping.section import CROSSINGS, DISTINCT, HyperplaneSpec, crossing_rows, section_columns, section_samples
from .schema import BifurcationTable, parse_bifurcation_table

KEY = "bifurcation"
END_STATE = "end_state"  # the flat state at the last section, handed on by continuation


@dataclasses.dataclass(frozen=True)
class BifurcationStudy:
    """A validated bifurcation config: its table, base mechanism and the values (SI)."""

    table: BifurcationTable
    base: MechanismConfig
    source: str
    values: np.ndarray
    unit: str  # SI unit of the values ("" dimensionless)
    hyperplane: HyperplaneSpec | None = None  # [bifurcation.hyperplane] in SI


def load_bifurcation(path: str | Path, overrides: Sequence[str] = ()) -> BifurcationStudy:
    """Read and validate a bifurcation config and its base; a :class:`ConfigError` (one
    line naming the file and key) for bad input, before anything is compiled."""
    source = str(path)
    pipeline, base = load_pipeline_mechanism(path, overrides)
    table = parse_bifurcation_table(pipeline, source)
    if not any(driver.type == "constant_speed" for driver in base.drivers):
        raise ConfigError(source, f"{KEY}.section", "the stroboscopic section needs a constant-speed driver "
                                                    f"(its period); {base.source} has none")
    try:
        base.si_value(table.parameter)
    except ConfigError as error:
        raise ConfigError(source, f"{KEY}.parameter",
                          f"{table.parameter!r} is not a parameter of {base.source}: {error.message}") from None
    bounds = []
    for name in ("start", "stop"):
        value = si_value_in_base(base, table.parameter, getattr(table.values, name), source, f"{KEY}.values.{name}",
                                 require_number=True)
        bounds.append(float(value))
    if not bounds[0] < bounds[1] or (table.values.scale == "log" and bounds[0] <= 0.0):
        raise ConfigError(source, f"{KEY}.values", f"expected start < stop (and start > 0 for scale = \"log\"), "
                                                   f"got {bounds} (SI)")
    solver = _solver(base)
    if table.lyapunov and solver not in _explicit_solvers():
        raise ConfigError(source, "simulation.solver", f"the Lyapunov exponents need an explicit solver "
                                                       f"({', '.join(sorted(_explicit_solvers()))}); got {solver!r}")
    values = grid_values((bounds[0], bounds[1]), table.values.count, table.values.scale)
    hyperplane = HyperplaneSpec.of(table.hyperplane)
    if hyperplane is not None:
        from ..build import build_mechanism

        try:
            hyperplane.hyperplane(build_mechanism(base))
        except ValueError as error:
            raise ConfigError(source, f"{KEY}.hyperplane.quantity", str(error)) from None
    return BifurcationStudy(table, base, source, values, base.unit_of_path(table.parameter), hyperplane)


def _explicit_solvers():
    from model.integrate.settings import EXPLICIT_SOLVERS

    return EXPLICIT_SOLVERS


def _solver(base: MechanismConfig) -> str:
    from ..build import solver_settings

    return solver_settings(base).solver


@dataclasses.dataclass(frozen=True)
class BifurcationResult:
    """``summary``: one row per value; ``sections``: one row per value and section sample;
    ``crossings``: with a hyperplane, one row per value and stored crossing."""

    summary: pd.DataFrame
    sections: pd.DataFrame
    crossings: pd.DataFrame | None = None


def section_function(study: BifurcationStudy):
    """The compiled function of a batch of values (shape ``(batch, 1)``) -> dict of arrays
    with a leading batch axis: ``jit(vmap(f))``, or ``jit(f)`` for a batch of one (a
    vmapped solve advances in lockstep until its slowest member ends, and tracing the
    batched loops costs several times the plain trace; on a CPU one value per call is the
    faster, as for the sweeps' derivative path, :data:`sweep.run.CPU_BATCH`)."""
    import jax

    from model.nonlinear import mechanism_section

    from ..build import ParameterMap, build_mechanism, solver_settings

    mechanism = build_mechanism(study.base)
    settings = solver_settings(study.base)
    parameters = ParameterMap(mechanism, [study.table.parameter], study.source)
    table = study.table
    hyperplane = None if study.hyperplane is None else study.hyperplane.hyperplane(mechanism)

    def one(values, start=None):
        varied = parameters.apply(mechanism, values)
        outcome = mechanism_section(
            varied, settings, transient_periods=table.transient_periods, periods=table.periods,
            phase=table.section, num_exponents=1 if table.lyapunov else 0, max_period=table.max_period,
            period_tolerance=table.period_tolerance, chaos_threshold=table.chaos_threshold,
            reverse_differentiable=False, start=start, hyperplane=hyperplane,
            crossing_transient=None if study.hyperplane is None else study.hyperplane.transient,
        )
        return {**section_samples(outcome, table.lyapunov), END_STATE: outcome.lyapunov.sections[-1]}

    if table.continuation:
        return jax.jit(one), mechanism
    if table.batch > 1:
        return jax.jit(jax.vmap(one)), mechanism
    single = jax.jit(one)
    return (lambda rows: jax.tree.map(lambda leaf: leaf[None], single(rows[0]))), mechanism


LANE_CHUNK = 8  # values per compiled call and lane: the progress bar moves once a call


def lanes_function(study: BifurcationStudy):
    """The compiled function of a chunk of values (shape ``(chunk, 1)``) -> the same dict of
    arrays as :func:`section_function`'s, run through ``[bifurcation] lanes`` refilling
    lanes that save every value's state at its own section times (each value's driver
    period, so a swept crank speed runs through the lanes too). The lanes step the
    same explicit solver and controller as :func:`model.nonlinear.mechanism_section` (no
    constraint projection), with its step budget: ``max_steps`` per driver period (and
    one for the phase)."""
    import jax

    from model.integrate.ensemble import solve_ensemble
    from model.nonlinear import sampled_section, section_times

    from ..build import ParameterMap, build_mechanism, solver_settings

    mechanism = build_mechanism(study.base)
    table = study.table
    settings = solver_settings(study.base)
    intervals = 1 + table.transient_periods + table.periods
    settings = dataclasses.replace(settings, projection_iterations=0, max_steps=settings.max_steps * intervals)
    parameters = ParameterMap(mechanism, [table.parameter], study.source)

    def times_of(varied):
        return section_times(varied, transient_periods=table.transient_periods, periods=table.periods,
                             phase=table.section)

    def one(varied, times, states, result):
        sections = varied.flatten(states)
        outcome = sampled_section(varied, times, sections, result == 0, max_period=table.max_period,
                                  period_tolerance=table.period_tolerance)
        return {**section_samples(outcome, False), END_STATE: sections[-1]}

    @jax.jit
    def run(rows):
        mechanisms = jax.vmap(parameters.apply, (None, 0))(mechanism, rows)
        times = jax.vmap(times_of)(mechanisms)
        solution = solve_ensemble(mechanisms, settings, lanes=table.lanes, output_times=times)
        return jax.vmap(one)(mechanisms, times, solution.ys, solution.result)

    return run, mechanism


def _continued(function, mechanism, study: BifurcationStudy, bar) -> list[dict]:
    """The values in order, each started from the previous one's last section state
    (:class:`model.nonlinear.ContinuedStart`); the first from the base's initial state.
    After a failed value (whose solve stopped before its last section) the next value
    starts afresh from the base's initial state."""
    import jax.numpy as jnp

    from model.nonlinear import ContinuedStart

    state = jnp.asarray(mechanism.flatten(mechanism.initial_state()))
    elapsed, active, outputs = 0.0, False, []
    whole_periods = study.table.transient_periods + study.table.periods
    for value in study.values:
        result = function(jnp.asarray([value]), ContinuedStart(state, jnp.asarray(elapsed), jnp.asarray(active)))
        outputs.append({name: np.asarray(leaf)[None] for name, leaf in result.items()})
        if bool(result["success"]):
            state, elapsed, active = result[END_STATE], (elapsed if active else 0.0) + whole_periods, True
        else:
            elapsed, active = 0.0, False
        bar.update(1)
    return outputs


def run_bifurcation(study: BifurcationStudy, progress: bool = True) -> BifurcationResult:
    """Every value's section, exponent and motion class, in batches, with a progress bar."""
    import jax

    from tqdm import tqdm

    from model.nonlinear import MOTION_NAMES

    if study.table.lanes is None:
        function, mechanism = section_function(study)
        batch = min(study.table.batch, len(study.values))
    else:
        batch = min(study.table.lanes * LANE_CHUNK, len(study.values))
        function, mechanism = lanes_function(study)
    rows = study.values[:, None]
    outputs = []
    with tqdm(total=len(rows), desc="bifurcation", unit="value", disable=not progress) as bar:
        if study.table.continuation:
            outputs = _continued(function, mechanism, study, bar)
        else:
            for start in range(0, len(rows), batch):
                chunk = rows[start:start + batch]
                result = function(pad_rows(chunk, batch))
                outputs.append({name: np.asarray(value)[:len(chunk)] for name, value in result.items()})
                bar.update(len(chunk))
    merged = {name: np.concatenate([out[name] for out in outputs]) for name in outputs[0]}
    path = study.table.parameter
    summary = pd.DataFrame({
        path: study.values,
        "period": merged["period"].astype(np.int64),
        "motion": [MOTION_NAMES[int(code)] for code in merged["motion"]],
        "lyapunov_max": merged["lyapunov_max"],
        "lyapunov_change": merged["lyapunov_change"],
        "success": merged["success"].astype(bool),
    })
    columns = {path: np.repeat(study.values, study.table.periods),
               **section_columns(mechanism, merged, study.table.periods)}
    crossings = None
    if study.hyperplane is not None:
        summary[CROSSINGS] = merged[CROSSINGS].astype(np.int64)
        summary[DISTINCT] = merged[DISTINCT].astype(np.int64)
        rows = crossing_rows(mechanism, merged)
        crossings = pd.DataFrame({path: study.values[rows.pop("run")], **rows})
    return BifurcationResult(summary, pd.DataFrame(columns), crossings)
