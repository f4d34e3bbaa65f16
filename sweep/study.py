"""A whole sweep: load the pipeline config, run every group, write the results.

``load_sweep`` -> ``run_sweep`` -> ``write_sweep``; the command line
(``pipelines/commands/sweep.py``) is these three calls.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path

import jax
import pandas as pd
from tqdm import tqdm

from pipelines.config import MechanismConfig, load_pipeline_mechanism
from pipelines.errors import ConfigError
from pipelines.io import save_figure, write_json, write_parquet

from .design import SweepDesign, parse_design
from .plan import Group, plan_groups
from .plots import grid_map_figure, metrics_figure
from .results import OK, metric_units, results_frame
from .run import GroupOutcome, default_batch_size, run_group

__all__ = ["SweepStudy", "check_plot_metrics", "load_sweep", "metric_units", "run_sweep", "write_sweep"]

JOINT_PLOT_METRICS = ("max_normal_force", "max_penetration", "num_impacts")


@dataclasses.dataclass
class SweepStudy:
    """A finished sweep: its design, groups, per-group outcomes and the results table."""

    design: SweepDesign
    base: MechanismConfig
    groups: list[Group]
    outcomes: list[GroupOutcome]
    frame: pd.DataFrame
    units: dict[str, str]  # metric -> SI unit
    seconds: float

    @property
    def continuous_paths(self) -> tuple[str, ...]:
        return self.groups[0].paths if self.groups else ()

    def summary(self) -> dict:
        """The content of ``sweep.json``: design, counts, per-group timings."""
        statuses = self.frame["status"].value_counts().to_dict()
        return {
            "config": self.design.source,
            "base": self.base.source,
            "design": self.design.kind,
            "samples": self.design.samples,
            "seed": self.design.seed if self.design.kind != "grid" else None,
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
            "total_seconds": self.seconds,
            "groups": [
                {
                    "group": group.index,
                    "choices": group.choices,
                    "points": len(group.points),
                    "runnable": int(group.runnable.size),
                    "solver": group.settings.solver if group.settings is not None else None,
                    "batch_size": outcome.batch_size,
                    "compile_seconds": outcome.compile_seconds,
                    "run_seconds": outcome.run_seconds,
                }
                for group, outcome in zip(self.groups, self.outcomes)
            ],
        }


def load_sweep(path: str | Path, overrides: Sequence[str] = ()) -> tuple[SweepDesign, MechanismConfig]:
    """Read and validate a sweep config and its base mechanism (with ``--set`` overrides)."""
    pipeline, base = load_pipeline_mechanism(path, overrides)
    return parse_design(pipeline, base, str(path)), base


def run_sweep(design: SweepDesign, base: MechanismConfig, batch_size: int | None = None, progress: bool = True) -> SweepStudy:
    """Run every point of ``design``; a failing point becomes a row with its status."""
    start = time.perf_counter()
    batch_size = default_batch_size() if batch_size is None else batch_size
    groups = plan_groups(design, base)
    outcomes = []
    total = sum(len(group.points) for group in groups)
    with tqdm(total=total, desc="sweep", unit="point", disable=not progress, dynamic_ncols=True) as bar:
        for group in groups:
            bar.set_postfix_str(f"group {group.index + 1}/{len(groups)} {group.label()}: compiling", refresh=True)
            refused = len(group.points) - group.runnable.size

            def advance(count: int, group: Group = group) -> None:
                bar.set_postfix_str(f"group {group.index + 1}/{len(groups)} {group.label()}", refresh=False)
                bar.update(count)

            outcomes.append(run_group(group, batch_size, on_batch=advance))
            bar.update(refused)
    units = metric_units(base)
    frame = results_frame(design, groups, outcomes, list(units))
    return SweepStudy(design, base, groups, outcomes, frame, units, time.perf_counter() - start)


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


def write_sweep(study: SweepStudy, out_dir: str | Path, plot_metrics: Sequence[str] | None = None) -> list[Path]:
    """Write ``results.parquet``, ``sweep.json`` and the PNG figures; returns their paths."""
    out_dir = Path(out_dir)
    metrics = list(plot_metrics) if plot_metrics else default_plot_metrics(study.base)
    check_plot_metrics(metrics, study.units)
    continuous = study.continuous_paths
    figures = {"metrics.png": metrics_figure(study.frame, study.design, continuous, metrics, study.units)}
    if study.design.kind == "grid" and len(continuous) == 2:
        figures[f"map_{metrics[0]}.png"] = grid_map_figure(study.frame, study.design, continuous, metrics[0], study.units[metrics[0]])
    written = [out_dir / "results.parquet", out_dir / "sweep.json"]
    write_parquet(written[0], study.frame)
    write_json(written[1], study.summary())
    for name, figure in figures.items():
        save_figure(out_dir / name, figure)
        written.append(out_dir / name)
    return written
