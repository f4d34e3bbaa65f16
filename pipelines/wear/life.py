"""The life loop: simulate, accumulate the wear of the counted cycles, extrapolate, update
the bushing's profile, repeat (the iterative procedure of Flores 2009 and Mukras et al.
2010). Each pass writes ``profiles.parquet`` and ``life.parquet`` atomically, so that a
killed run resumes from the last completed pass (``--resume``).

Pass ``k`` simulates the mechanism with profile ``k`` (profile 0: a new bushing), records
its dynamics in row ``k`` of ``life.parquet``, and adds the wear of its counted cycles,
scaled to the operating cycles one update stands for, to give profile ``k + 1``.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import jax
import numpy as np
import pandas as pd
from tqdm import tqdm

import model

from ..errors import ClearanceError
from ..io import write_json, write_parquet
from ..simulation import check_initial_positions, trajectory_status
from .study import WearStudy

PROFILES, LIFE, FINGERPRINT = "profiles.parquet", "life.parquet", "wear.json"


@dataclass
class LifeRun:
    """The tables of a life run: ``profiles`` (long: ``update``, ``cycles``, ``angle`` (rad,
    the bearing body's frame), ``depth`` (m)) and ``life`` (one row per pass: the profile's
    :func:`wear_metrics`, the pass's ``load_distance`` (N m) and :func:`dynamics_metrics`,
    ``status``); a cylindrical joint's profiles also have ``slice`` and ``axial`` (m, the
    slice's centre along the bearing's axis from its centre), one row per slice and bin; ``resumed``
    the passes taken from stored tables and ``seconds`` the wall time of the new ones."""

    profiles: pd.DataFrame
    life: pd.DataFrame
    resumed: int
    seconds: float


def dynamics_metrics(study: WearStudy, trajectory: model.Trajectory) -> dict[str, float]:
    """Metrics of the counted cycles (``t >= start_time``), from the output samples: per
    clearance joint J ``J.max_normal_force`` (N), ``J.num_impacts`` (contact onsets per
    counted cycle), ``J.contact_fraction``; per body B ``B.max_abs_ax``, ``B.max_abs_ay``
    (and ``B.max_abs_az`` in a spatial mechanism; m/s^2)."""
    t = np.asarray(trajectory.t)
    counted = t >= study.start_time - 1e-12
    mechanism = study.mechanism
    metrics: dict[str, float] = {}
    penetration = np.asarray(trajectory.penetration)[counted]
    force = np.asarray(trajectory.normal_force)[counted]
    for k, name in enumerate(mechanism.clearance_names):
        touching = penetration[:, k] > 0.0
        metrics[f"{name}.max_normal_force"] = float(np.max(force[:, k]))
        metrics[f"{name}.num_impacts"] = float(np.sum(~touching[:-1] & touching[1:])) / study.table.cycles_per_update
        metrics[f"{name}.contact_fraction"] = float(np.mean(touching))
    accelerations = np.asarray(trajectory.body_accelerations)[counted]
    for b, name in enumerate(mechanism.body_names):
        metrics[f"{name}.max_abs_ax"] = float(np.max(np.abs(accelerations[:, b, 0])))
        metrics[f"{name}.max_abs_ay"] = float(np.max(np.abs(accelerations[:, b, 1])))
        if accelerations.shape[-1] == 3:
            metrics[f"{name}.max_abs_az"] = float(np.max(np.abs(accelerations[:, b, 2])))
    return metrics


def wear_metrics(study: WearStudy, depth: np.ndarray) -> dict[str, float]:
    """The profile's largest depth (m) and its angle (rad), the worn volume (m^3) and the
    equivalent clearance ``c + max h`` (m); for a cylindrical joint also the largest depth's
    axial position ``max_depth_axial`` (m, along the bearing's axis from its centre)."""
    joint = study.worn_joint
    depth = np.reshape(depth, study.profile_shape)
    rows = depth.reshape(-1, study.table.resolution)
    slice_index, deepest = np.unravel_index(int(np.argmax(rows)), rows.shape)
    slice_length = study.bearing_length / rows.shape[0]
    volume = float(np.sum(model.WornBore(np.asarray(rows)).volume(joint.bearing_radius, slice_length)))
    metrics = {"max_depth": float(rows[slice_index, deepest]),
               "max_depth_angle": float(2.0 * np.pi * deepest / study.table.resolution),
               "volume": volume, "equivalent_clearance": float(joint.clearance) + float(rows[slice_index, deepest])}
    if study.cylindrical:
        metrics["max_depth_axial"] = float(study.axial_positions[slice_index])
    return metrics


def _warn_beyond_window(study: WearStudy, depth: float) -> None:
    """Warn once the largest depth passes ``c (1 - cos w)``, ``w`` the angle of the worn
    contact's search window (:attr:`model.WornBore.window`): a scar deeper than that may hold
    the journal outside the window, where the contact is not searched."""
    joint = study.worn_joint
    resolution = study.table.resolution
    window = 2.0 * math.pi * model.WornBore(np.zeros(resolution)).window / resolution
    limit = float(joint.clearance) * (1.0 - math.cos(window))
    if depth > limit:
        warnings.warn(f"{study.file}: wear.cycles: the largest depth passes {limit * 1e6:.3g} um, beyond which the "
                      f"worn contact's search window ({math.degrees(window):.0f} deg) may miss the contact",
                      stacklevel=2)


def _profile_rows(study: WearStudy, update: int, cycles: float, depth: np.ndarray) -> pd.DataFrame:
    """Long rows of one profile: per bin (planar) or per slice and bin (cylindrical, slice-major)."""
    resolution = study.table.resolution
    depth = np.asarray(depth, float).reshape(-1)
    count = depth.size // resolution
    angles = np.tile(2.0 * np.pi * np.arange(resolution) / resolution, count)
    columns = {"update": np.full(depth.size, update), "cycles": np.full(depth.size, cycles)}
    if study.cylindrical:
        columns["slice"] = np.repeat(np.arange(count), resolution)
        columns["axial"] = np.repeat(study.axial_positions, resolution)
    return pd.DataFrame({**columns, "angle": angles, "depth": depth})


def _stored(study: WearStudy, out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tables of a run in ``out`` to resume, checked against ``study``."""
    paths = [out / name for name in (FINGERPRINT, PROFILES, LIFE)]
    if not all(path.exists() for path in paths):
        return _profile_rows(study, 0, 0.0, np.zeros(study.profile_shape)), pd.DataFrame()
    stored = json.loads(paths[0].read_text())
    if stored != json.loads(json.dumps(study.fingerprint())):
        changed = sorted(key for key in set(stored) | set(study.fingerprint())
                         if stored.get(key) != study.fingerprint().get(key))
        raise ClearanceError(f"{out}: the stored life was run with other settings ({', '.join(changed)}); "
                             "run without --resume to start afresh")
    return pd.read_parquet(paths[1]), pd.read_parquet(paths[2])


def run_life(study: WearStudy, out: Path, resume: bool = False, progress: bool = True) -> LifeRun:
    """Run (or resume) the life of ``study``, writing its tables to ``out`` after every pass."""
    check_initial_positions(study.config, study.mechanism)
    profiles, life = _stored(study, out) if resume else (
        _profile_rows(study, 0, 0.0, np.zeros(study.profile_shape)), pd.DataFrame())
    start = len(life)
    write_json(out / FINGERPRINT, study.fingerprint())
    simulate = jax.jit(model.simulate_with_wear, static_argnums=1)
    law = study.law
    began = time.perf_counter()
    bar = tqdm(total=study.updates + 1, initial=start, desc="wear", unit="update", disable=not progress)
    for update in range(start, study.updates + 1):
        current = profiles[profiles["update"] == update]
        depth, cycles = current["depth"].to_numpy(), float(current["cycles"].iloc[0])
        trajectory, accumulated = simulate(study.with_profile(depth), study.settings, law)
        status = trajectory_status(trajectory)
        if status != "ok":
            bar.close()
            raise ClearanceError(f"solve failed at update {update} ({cycles:g} cycles): {status} "
                                 f"(the tables in {out} hold the passes before it)")
        # load_distance: int F |v_t| dt over the counted cycles (N m); the pass adds k_w times it, scaled
        row = {"update": update, "cycles": cycles, **wear_metrics(study, depth), "status": status,
               "load_distance": float(accumulated.load_distance), **dynamics_metrics(study, trajectory)}
        _warn_beyond_window(study, row["max_depth"])
        profiles = profiles[profiles["update"] <= update]
        if update < study.updates:
            advance = min(study.cycles_per_update, study.table.cycles - cycles)
            worn = depth + np.asarray(accumulated.depth).reshape(-1) * (advance / study.table.cycles_per_update)
            profiles = pd.concat([profiles, _profile_rows(study, update + 1, cycles + advance, worn)],
                                 ignore_index=True)
        life = pd.concat([life, pd.DataFrame([row])], ignore_index=True)
        write_parquet(out / PROFILES, profiles)
        write_parquet(out / LIFE, life)
        bar.update(1)
        bar.set_postfix(cycles=f"{cycles:.3g}", depth_um=f"{row['max_depth'] * 1e6:.3g}")
    bar.close()
    return LifeRun(profiles, life, start, time.perf_counter() - began)
