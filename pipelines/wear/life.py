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
    ``status``); ``resumed``
    the passes taken from stored tables and ``seconds`` the wall time of the new ones."""

    profiles: pd.DataFrame
    life: pd.DataFrame
    resumed: int
    seconds: float


def dynamics_metrics(study: WearStudy, trajectory: model.Trajectory) -> dict[str, float]:
    """Metrics of the counted cycles (``t >= start_time``), from the output samples: per
    clearance joint J ``J.max_normal_force`` (N), ``J.num_impacts`` (contact onsets per
    counted cycle), ``J.contact_fraction``; per body B ``B.max_abs_ax``, ``B.max_abs_ay``
    (m/s^2)."""
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
    return metrics


def wear_metrics(study: WearStudy, depth: np.ndarray) -> dict[str, float]:
    """The profile's largest depth (m) and its angle (rad), the worn volume (m^3) and the
    equivalent clearance ``c + max h`` (m)."""
    joint = study.mechanism.clearance_joints[study.joint]
    deepest = int(np.argmax(depth))
    volume = float(model.WornBore(np.asarray(depth)).volume(joint.bearing_radius, study.table.bearing_length))
    return {"max_depth": float(depth[deepest]), "max_depth_angle": float(2.0 * np.pi * deepest / depth.size),
            "volume": volume, "equivalent_clearance": float(joint.clearance) + float(depth[deepest])}


def _warn_beyond_window(study: WearStudy, depth: float) -> None:
    """Warn once the largest depth passes ``c (1 - cos w)``, ``w`` the angle of the worn
    contact's search window (:attr:`model.WornBore.window`): a scar deeper than that may hold
    the journal outside the window, where the contact is not searched."""
    joint = study.mechanism.clearance_joints[study.joint]
    resolution = study.table.resolution
    window = 2.0 * math.pi * model.WornBore(np.zeros(resolution)).window / resolution
    limit = float(joint.clearance) * (1.0 - math.cos(window))
    if depth > limit:
        warnings.warn(f"{study.file}: wear.cycles: the largest depth passes {limit * 1e6:.3g} um, beyond which the "
                      f"worn contact's search window ({math.degrees(window):.0f} deg) may miss the contact",
                      stacklevel=2)


def _profile_rows(update: int, cycles: float, depth: np.ndarray) -> pd.DataFrame:
    angles = 2.0 * np.pi * np.arange(depth.size) / depth.size
    return pd.DataFrame({"update": np.full(depth.size, update), "cycles": np.full(depth.size, cycles),
                         "angle": angles, "depth": np.asarray(depth, float)})


def _stored(study: WearStudy, out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tables of a run in ``out`` to resume, checked against ``study``."""
    paths = [out / name for name in (FINGERPRINT, PROFILES, LIFE)]
    if not all(path.exists() for path in paths):
        return _profile_rows(0, 0.0, np.zeros(study.table.resolution)), pd.DataFrame()
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
    profiles, life = _stored(study, out) if resume else (_profile_rows(0, 0.0, np.zeros(study.table.resolution)),
                                                         pd.DataFrame())
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
            worn = depth + np.asarray(accumulated.depth) * (advance / study.table.cycles_per_update)
            profiles = pd.concat([profiles, _profile_rows(update + 1, cycles + advance, worn)], ignore_index=True)
        life = pd.concat([life, pd.DataFrame([row])], ignore_index=True)
        write_parquet(out / PROFILES, profiles)
        write_parquet(out / LIFE, life)
        bar.update(1)
        bar.set_postfix(cycles=f"{cycles:.3g}", depth_um=f"{row['max_depth'] * 1e6:.3g}")
    bar.close()
    return LifeRun(profiles, life, start, time.perf_counter() - began)
