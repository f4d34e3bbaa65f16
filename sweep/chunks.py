"""Split a group's points into chunks, ordered so that batched solves waste little.

A *chunk* is the unit of work that is stored (one parquet file, :mod:`sweep.store`), resumed
and sent to a worker (:mod:`sweep.execute`). Inside a chunk the points run in compiled calls
of ``batch_size`` points, as refilling lanes (:func:`model.solve_ensemble`) or, for
derivative sweeps, vmapped.

Refilling lanes want the longest simulations queued first (so they do not form the tail);
``jax.vmap`` of diffrax's adaptive ``while_loop`` advances every member of a batch until the
slowest has finished, so a batch costs ``batch_size x max(steps)`` and members should need
similar step counts. One order serves both. The step count of a clearance joint's solve is
set mostly by the stiffness of its contacts (the shortest contact period bounds the step
during an impact) and then by how often it rebounds; points are ordered by the
contact-period estimate ``model.contact_periods`` (Seed 000 §4.3) and then by their
parameter values, so a chunk holds neighbours (shortest period, i.e. stiffest and
presumably longest, first). ``lockstep_efficiency`` is the share of a vmapped chunk's
step work that its members needed; the sweep reports ``sum(steps) / step slots`` for both
ways of running.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import numpy as np

import model
from pipelines.build import ParameterMap

from .plan import Group


def contact_period_estimates(group: Group) -> np.ndarray:
    """Shortest contact period (s) over the clearance joints of each runnable point of ``group``
    (``inf`` without clearance joints); pure JAX, vmapped over the points."""
    runnable = group.runnable
    if not runnable.size or not group.mechanism.clearance_joints:
        return np.full(runnable.size, np.inf)
    parameters = ParameterMap(group.mechanism, group.paths)

    def shortest(values):
        return model.contact_periods(parameters.apply(group.mechanism, values)).min()

    if not group.paths:
        return np.full(runnable.size, float(shortest(np.zeros(0))))
    return np.asarray(jax.jit(jax.vmap(shortest))(group.values[runnable]))


def lockstep_order(group: Group) -> np.ndarray:
    """Positions (within ``group``) of its runnable points, shortest contact period first,
    ties (periods equal to 3 digits) broken by the parameter values in design order."""
    runnable = group.runnable
    if runnable.size == 0:
        return runnable
    periods = contact_period_estimates(group)
    rounded = np.array([float(f"{p:.3g}") if np.isfinite(p) else np.inf for p in periods])
    keys = [group.values[runnable, k] for k in reversed(range(len(group.paths)))] + [rounded]
    return runnable[np.lexsort(keys)] if keys else runnable


def split_chunks(positions: np.ndarray, chunk_size: int) -> list[np.ndarray]:
    """Consecutive runs of at most ``chunk_size`` positions."""
    return [positions[first : first + chunk_size] for first in range(0, len(positions), chunk_size)]


def lockstep_efficiency(steps: Sequence[int], batch_size: int) -> float:
    """Useful share of the lockstep work of a chunk run in batches of ``batch_size``:
    ``sum(steps) / sum over batches of (batch_size x max steps)``, in (0, 1]; 1 when every
    member of every (full) batch needs the same number of steps, and always for batches of
    one. A last batch padded to the compiled shape pays for its padding too."""
    steps = np.asarray(steps, dtype=float)
    if steps.size == 0:
        return 1.0
    batches = [steps[first : first + batch_size] for first in range(0, steps.size, batch_size)]
    paid = sum(batch_size * batch.max() for batch in batches)
    return float(steps.sum() / paid) if paid > 0 else 1.0
