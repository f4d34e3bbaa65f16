"""A whole sweep of a config: load the pipeline config, run every group in stored chunks
(:mod:`sweep`), write the results, the study's files and its figures.

``load_sweep`` -> ``run_sweep`` -> ``write_sweep``; the command line
(``pipelines/commands/sweep.py``) is these three calls.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pandas as pd
from tqdm import tqdm

from sweep.chunks import costliest_first, split_chunks
from sweep.execute import (
    EXECUTORS, ChunkTask, ExecutorUnavailable, GroupRun, LocalExecutor, ProcessExecutor, RayExecutor,
)
from sweep.plan import Group
from sweep.faults import WorkersLost
from sweep.results import FAILURE
from sweep.status import OK
from sweep.results import derivative_columns as _derivative_columns
from sweep.run import CPU_CHUNK, NOT_RUN, STEP_SLOTS, default_batch_size, default_chunk_size, memory_chunk_size
from sweep.store import ChunkStore, MemoryStore, PartialResults, StoreMismatch, fingerprint, git_revision, package_versions

from ..config import MechanismConfig, load_pipeline_mechanism
from ..errors import ClearanceError, ConfigError, SweepFailed, SweepInterrupted
from ..io import atomic_path, write_json, write_parquet
from .design import SweepDesign, parse_design
from .figure_processes import FigureProcesses
from .plan import plan_groups
from .plot_design import PlotDesign
from .results import chunk_labels, metric_units, sweep_results

__all__ = ["SweepStudy", "check_plot_metrics", "load_sweep", "metric_units", "run_sweep", "write_sweep"]

# ``<out>/results/``: the results table of the chunks finished so far, a parquet dataset
# (:class:`sweep.store.PartialResults`); ``results.parquet`` is the whole table at the end
PARTIAL_RESULTS = "results"
JOINT_PLOT_METRICS = ("max_normal_force", "max_penetration", "num_impacts")


@dataclasses.dataclass
class SweepStudy:
    """A finished sweep: its design, groups, how each group ran, its chunks and the results."""

    design: SweepDesign
    base: MechanismConfig
    groups: list[Group]
    runs: dict[int, GroupRun]
    frame: pd.DataFrame
    units: dict[str, str]  # metric -> SI unit
    seconds: float
    chunks: list[dict] = dataclasses.field(default_factory=list)  # the manifest's entries
    resolved: dict = dataclasses.field(default_factory=dict)  # what the fingerprint hashes
    fingerprint: str = ""
    executor: str = "local"
    chunk_size: int = 0
    resumed_points: int = 0  # points taken from an earlier run's chunks
    provenance: dict = dataclasses.field(default_factory=dict)
    sobol: pd.DataFrame | None = None
    poincare: pd.DataFrame | None = None  # with [sweep.section]: every point's section samples
    crossings: pd.DataFrame | None = None  # with [sweep.section.hyperplane]: every point's crossings

    @property
    def continuous_paths(self) -> tuple[str, ...]:
        return self.groups[0].paths if self.groups else ()

    @property
    def derivative_columns(self) -> list[str]:
        return derivative_columns(self.design, self.continuous_paths)

    def summary(self) -> dict:
        """The content of ``sweep.json``: design, counts, per-group and per-chunk timings."""
        statuses = self.frame["status"].value_counts().to_dict()
        efficiencies = [chunk["lockstep_efficiency"] for chunk in self.chunks]
        return {
            "config": self.design.source,
            "base": self.base.source,
            "design": self.design.kind,
            "samples": self.design.samples,
            "seed": self.design.seed if self.design.kind != "grid" else None,
            "sensitivity": self.design.sensitivity,
            "derivatives": list(self.design.derivatives),
            **({"section": self.design.section.record()} if self.design.section else {}),
            "parameters": {
                p.path: {"continuous": p.path in self.continuous_paths, "unit": p.unit, "scale": p.scale,
                         **({"bounds": list(p.bounds)} if p.sampled else {"levels": [level.si for level in p.levels]})}
                for p in self.design.parameters
            },
            "points": len(self.frame),
            "ok": int(statuses.get(OK, 0)),
            "failed": int(len(self.frame) - statuses.get(OK, 0)),
            "statuses": {str(k): int(v) for k, v in statuses.items()},
            "backend": jax.default_backend(),
            "devices": len(jax.local_devices()),
            "executor": self.executor,
            "chunk_size": self.chunk_size,
            "resumed_points": self.resumed_points,
            "total_seconds": self.seconds,
            "fingerprint": self.fingerprint,
            **self.provenance,
            "lockstep_efficiency": {
                "mean": float(np.mean(efficiencies)) if efficiencies else None,
                "min": float(np.min(efficiencies)) if efficiencies else None,
            },
            "groups": [
                {
                    "group": group.index,
                    "choices": group.choices,
                    "points": len(group.points),
                    "runnable": int(group.runnable.size),
                    "solver": group.settings.solver if group.settings is not None else None,
                    "batch_size": self.runs.get(group.index, GroupRun()).batch_size,
                    "compile_seconds": self.runs.get(group.index, GroupRun()).compile_seconds,
                    "run_seconds": self.runs.get(group.index, GroupRun()).run_seconds,
                    "workers": self.runs.get(group.index, GroupRun()).workers,
                }
                for group in self.groups
            ],
            "chunks": [
                {key: chunk[key] for key in ("number", "group", "points", "lockstep_efficiency", "steps_mean",
                                             "steps_max", "seconds", "worker") if key in chunk}
                for chunk in self.chunks
            ],
        }


def derivative_columns(design: SweepDesign, continuous: Sequence[str]) -> list[str]:
    """``d(<metric>)/d(<path>)`` for every chosen metric and swept continuous path."""
    return _derivative_columns(design.derivatives, continuous)


def load_sweep(path: str | Path, overrides: Sequence[str] = (), derivatives: Sequence[str] = ()) -> tuple[SweepDesign, MechanismConfig]:
    """Read and validate a sweep config and its base mechanism (with ``--set`` overrides and
    ``--derivatives`` metrics added to ``[sweep] derivatives``)."""
    pipeline, base = load_pipeline_mechanism(path, overrides)
    design = parse_design(pipeline, base, str(path))
    if derivatives:
        design = dataclasses.replace(design, derivatives=tuple(dict.fromkeys([*design.derivatives, *derivatives])))
    units = metric_units(base)
    for metric in design.derivatives:
        if metric not in units:
            source, key = (str(path), "sweep.derivatives") if metric not in derivatives else ("--derivatives", metric)
            raise ConfigError(source, key, f"unknown metric {metric!r}; metrics: {', '.join(units)}")
    return design, base


def resolved_sweep(design: SweepDesign, base: MechanismConfig, groups: Sequence[Group]) -> dict[str, Any]:
    """Everything a sweep's numbers depend on, in SI: the fingerprint hashes it and
    ``resolved_config.json`` records it."""
    return {
        "mechanism": base.si_summary(),
        "design": {
            "kind": design.kind, "samples": design.samples, "seed": design.seed, "sensitivity": design.sensitivity,
            "derivatives": list(design.derivatives),
            **({"section": design.section.record()} if design.section else {}),
            "parameters": [
                {"path": p.path, "unit": p.unit, "scale": p.scale,
                 **({"bounds": list(p.bounds)} if p.sampled else {"levels": [level.si for level in p.levels]})}
                for p in design.parameters
            ],
        },
        "groups": [{"choices": group.choices, "paths": list(group.paths), "points": group.points.tolist(),
                    "settings": repr(group.settings)} for group in groups],
    }


def make_executor(executor: str | object, ray_address: str | None = None, ray_workers: int | None = None,
                  chunks: int = 1, workers: int | None = None):
    """The executor named ``executor``; ``"auto"``: worker processes (one per CPU core, at most
    one per chunk) when JAX runs on a multi-core CPU and there is more than one chunk, else
    this process."""
    if not isinstance(executor, str):
        return executor
    if executor not in EXECUTORS:
        raise ConfigError("--executor", executor, f"unknown executor; expected one of {list(EXECUTORS)}")
    if executor == "auto":
        cores = workers or os.cpu_count() or 1
        use_processes = jax.default_backend() == "cpu" and min(cores, chunks) > 1
        executor, workers = ("processes", min(cores, chunks)) if use_processes else ("local", None)
    if executor == "processes":
        return ProcessExecutor(workers)
    if executor == "local":
        return LocalExecutor()
    try:
        return RayExecutor(ray_address, ray_workers)
    except ExecutorUnavailable as error:
        raise ConfigError("--ray-address" if ray_address else "--executor", ray_address or "ray", str(error)) from None


def cpu_chunk_size(points: int, workers: int) -> int:
    """Points per chunk on a CPU with worker processes (:func:`sweep.run.default_chunk_size`)."""
    return default_chunk_size("cpu", points, workers, CPU_CHUNK)


def run_sweep(
    design: SweepDesign,
    base: MechanismConfig,
    batch_size: int | None = None,
    progress: bool = True,
    *,
    chunk_size: int | None = None,
    out_dir: str | Path | None = None,
    resume: bool = False,
    executor: str | object = "auto",
    ray_address: str | None = None,
    ray_workers: int | None = None,
    workers: int | None = None,
) -> SweepStudy:
    """Run every point of ``design`` in chunks; a failing point becomes a row with its status.

    With ``out_dir`` each finished chunk is stored in ``out_dir/chunks`` (:mod:`sweep.store`)
    and ``resume=True`` continues a killed run of the same sweep there. ``executor``:
    ``"auto"`` (default; see :func:`make_executor`), ``"local"``, ``"processes"`` (``workers``
    processes, default one per core) or ``"ray"``.
    """
    start = time.perf_counter()
    batch_size = default_batch_size(bool(design.derivatives)) if batch_size is None else batch_size
    groups = plan_groups(design, base)
    if design.derivatives:
        for group in groups:
            if group.settings is not None:
                group.settings = dataclasses.replace(group.settings, adjoint="forward")
    resolved = resolved_sweep(design, base, groups)
    key = fingerprint(resolved)
    provenance = {"versions": package_versions(), "git_revision": git_revision()}
    units = metric_units(base)
    continuous = groups[0].paths if groups else ()
    if out_dir is not None:
        partial = PartialResults(Path(out_dir) / PARTIAL_RESULTS, chunk_labels(design, groups, list(units), continuous))
        try:
            store = ChunkStore(Path(out_dir) / "chunks", key, resume, provenance=provenance, partial=partial)
        except StoreMismatch as error:
            raise ConfigError(design.source, "--resume", str(error)) from None
        except OSError as error:
            raise SweepFailed(write_failure(error)) from None
    else:
        store = MemoryStore(key)
    finished = store.finished_points()
    runnable_groups = [group for group in groups if group.runnable.size]
    remaining = {group.index: np.array([n for n in costliest_first(group) if int(group.points[n]) not in finished],
                                       dtype=int) for group in runnable_groups}
    if chunk_size is None:
        chunk_size = min((memory_chunk_size(group.mechanism, group.settings) for group in runnable_groups), default=1)
        backend = jax.default_backend()
        if backend != "cpu" or executor in ("auto", "processes"):
            chunk_size = default_chunk_size(backend, sum(map(len, remaining.values())), workers or os.cpu_count() or 1,
                                            chunk_size)
    tasks = [ChunkTask(group.index, positions, group.values[positions])
             for group in runnable_groups for positions in split_chunks(remaining[group.index], chunk_size)]
    total = sum(len(group.points) for group in groups)
    pending = sum(len(task.positions) for task in tasks)
    by_index = {group.index: group for group in groups}

    def store_chunk(task: ChunkTask, columns: dict, info: dict) -> None:
        group = by_index[task.group]
        if "failed" in info:  # points whose workers kept dying: stored, so --resume skips them
            rows = pd.DataFrame({"point": group.points[task.positions], "group": task.group,
                                 "steps": NOT_RUN, "rejected_steps": NOT_RUN, "result": NOT_RUN,
                                 FAILURE: info["failed"]})
            store.add(rows, {"group": task.group, **info})
            return
        slots = float(np.sum(columns.pop(STEP_SLOTS)))
        rows = pd.DataFrame({"point": group.points[task.positions], "group": task.group, **columns})
        steps = np.asarray(columns["steps"])
        store.add(rows, {
            "group": task.group, **info,
            "lockstep_efficiency": float(steps.sum() / slots) if slots > 0 else 1.0,
            "steps_mean": float(steps.mean()), "steps_max": int(steps.max()),
        })

    runner = make_executor(executor, ray_address, ray_workers, chunks=len(tasks), workers=workers)
    try:
        with tqdm(total=total, initial=total - pending, desc="sweep", unit="point", disable=not progress,
                  dynamic_ncols=True) as bar:
            runs = runner.run(
                groups, tasks, batch_size, chunk_size, design.derivatives, store_chunk,
                on_points=bar.update, on_status=lambda text: bar.set_postfix_str(text, refresh=True),
            )
    except KeyboardInterrupt:
        raise SweepInterrupted(_stopped(design, store, total, out_dir, "interrupted")) from None
    except WorkersLost as error:
        raise SweepFailed(_stopped(design, store, total, out_dir, str(error))) from None
    except OSError as error:
        raise SweepFailed(_stopped(design, store, total, out_dir, write_failure(error))) from None
    finally:
        if isinstance(executor, str) and isinstance(runner, (ProcessExecutor, RayExecutor)):  # made here
            runner.close()
    frame = sweep_results(design, groups, store.rows(), list(units), continuous)
    poincare = crossings = None
    if design.section is not None:
        from .section import UNITS, section_metrics

        columns, poincare, crossings = section_metrics(groups, frame["point"].to_numpy(), design.section,
                                                       progress=progress)
        for name, column in columns.items():
            frame[name] = column
        units = {**units, **{name: UNITS[name] for name in columns if name in UNITS}}
    study = SweepStudy(
        design, base, groups, runs, frame, units, time.perf_counter() - start, list(store.chunks), resolved, key,
        getattr(runner, "name", str(executor)), chunk_size, len(finished), provenance,
    )
    study.poincare = poincare
    study.crossings = crossings
    if design.sensitivity:
        from sweep.sensitivity import sobol_indices

        study.sobol = sobol_indices(frame, [p.path for p in design.sampled_parameters],
                                    [p.path for p in design.parameters if not p.sampled], list(units), design.seed)
    return study


def write_failure(error: OSError) -> str:
    """One line for an output that could not be written (a full disk: ``ENOSPC``), or for
    another operating-system error (a lost connection to a Ray cluster)."""
    if error.filename:
        return f"cannot write {error.filename}: {error.strerror or error}"
    return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else error.strerror}"


def _stopped(design: SweepDesign, store, total: int, out_dir: str | Path | None, reason: str) -> str:
    """Why a sweep stopped, what of it is stored and how to go on."""
    if out_dir is None:
        return f"{reason}; nothing stored (no output folder)"
    stored = len(store.finished_points())
    return (f"{reason}; {stored} of {total} points are stored in {Path(out_dir) / 'chunks'} (their rows of the "
            f"results table in {Path(out_dir) / PARTIAL_RESULTS}): continue with "
            f"`clearance sweep {design.source} --out {out_dir} --resume` (with the same --set options)")


def default_plot_metrics(base: MechanismConfig) -> list[str]:
    """Per clearance joint: peak force, peak penetration, impacts; and the peak horizontal
    acceleration of each joint's bearing body (the slider in the Flores benchmark)."""
    metrics = [f"{joint.name}.{metric}" for joint in base.clearance_joints for metric in JOINT_PLOT_METRICS]
    bearings = [joint.bodies[1] if joint.bodies[1] != "ground" else joint.bodies[0] for joint in base.clearance_joints]
    metrics += [f"{body}.max_abs_ax" for body in dict.fromkeys(bearings)]
    return metrics or [f"{base.bodies[0].name}.max_abs_ax"]


def check_plot_metrics(metrics: Sequence[str], units: dict[str, str]) -> None:
    for metric in metrics:
        if metric not in units:
            raise ConfigError("--plot-metric", metric, f"unknown metric; metrics: {', '.join(units)}")


def write_sweep(study: SweepStudy, out_dir: str | Path, plot_metrics: Sequence[str] | None = None,
                figure_processes: FigureProcesses | None = None) -> list[Path]:
    """Write ``results.parquet``, ``sweep.json``, ``resolved_config.json``, the Sobol' indices
    (with ``sensitivity``) and the PNG figures; returns their paths. The figures are drawn
    here, or by ``figure_processes`` (:mod:`pipelines.sweeping.figure_processes`) when given."""
    out_dir = Path(out_dir)
    metrics = list(plot_metrics) if plot_metrics else default_plot_metrics(study.base)
    check_plot_metrics(metrics, study.units)
    written = [out_dir / "results.parquet", out_dir / "sweep.json", out_dir / "resolved_config.json"]
    write_parquet(written[0], study.frame)
    write_json(written[1], study.summary())
    write_json(written[2], {"fingerprint": study.fingerprint, **study.provenance, **study.resolved})
    if study.sobol is not None:
        written += [out_dir / "sobol_indices.csv", out_dir / "sobol_indices.json"]
        with atomic_path(written[-2]) as temporary:
            study.sobol.to_csv(temporary, index=False)
        write_json(written[-1], {"indices": study.sobol.to_dict(orient="records")})
    if study.poincare is not None:
        written.append(out_dir / "poincare.parquet")
        write_parquet(written[-1], study.poincare)
    if study.crossings is not None:
        written.append(out_dir / "crossings.parquet")
        write_parquet(written[-1], study.crossings)
    # the figures last, so the results are on disk before matplotlib is even imported
    design, continuous = PlotDesign.of(study.design), study.continuous_paths
    jobs = [(out_dir / "metrics.png", "metrics", (study.frame, design, continuous, metrics, study.units)),
            (out_dir / "main_effects.png", "main_effects", (study.frame, design, continuous, metrics, study.units))]
    if study.design.kind == "grid" and len(continuous) >= 2:
        jobs.append((out_dir / f"map_{metrics[0]}.png", "grid_map",
                     (study.frame, design, continuous, metrics[0], study.units[metrics[0]])))
    if study.sobol is not None:
        jobs.append((out_dir / "sobol_indices.png", "sobol", (study.sobol, design, metrics)))
    if study.poincare is not None:
        jobs.append((out_dir / "poincare.png", "poincare", (study.poincare, study.frame, continuous)))
    if figure_processes is None:
        from .plots import render_figure

        for job in jobs:
            render_figure(*job)
    else:
        figure_processes.render(jobs)
    written += [path for path, _, _ in jobs]
    return written


def check_some_point_ran(summary: dict, source, out_dir) -> None:
    """A sweep whose every point failed is an error (after its results are written): one
    line with the count of each failure status. A sweep with some points ok is not: a
    failed point is a row with its status."""
    if summary["points"] and not summary["ok"]:
        reasons = "; ".join(f"{count} x {status}" for status, count in summary["statuses"].items())
        raise ClearanceError(f"{source}: every point of the sweep failed ({reasons}); "
                             f"{out_dir}/results.parquet lists each point's status")
