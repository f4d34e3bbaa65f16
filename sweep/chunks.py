"""Split a group's points into chunks, ordered so that batched solves waste little.

A *chunk* is the unit of work that is stored (one parquet file, :mod:`sweep.store`), resumed
and sent to a worker (:mod:`sweep.execute`). Inside a chunk the points run in compiled calls
of ``batch_size`` points, as refilling lanes (:func:`model.solve_ensemble`) or, for
derivative sweeps, vmapped.

Refilling lanes want the longest simulations queued first, so that the queue ends with
short ones and no lane runs a long tail alone (longest-processing-time-first scheduling);
``jax.vmap`` of diffrax's adaptive ``while_loop`` advances every member of a batch until the
slowest has finished, so a batch costs ``batch_size x max(steps)`` and members should need
similar step counts. One order serves both: points by their estimated cost
(:func:`model.relative_solve_cost`: contact period and restitution), costliest first.
Chunks are dealt from that order like cards (chunk ``k`` of ``n`` takes positions ``k, k +
n, ...``), so every chunk holds the whole range of costs, costliest first, and worker
processes given one chunk each finish together. ``lockstep_efficiency`` is the share of a
vmapped chunk's step work that its members needed; the sweep reports ``sum(steps) / step
slots`` for both ways of running.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

import model
from model import Mechanism

from .plan import Group, ParameterResolver


def cost_estimates(group: Group) -> np.ndarray:
    """:func:`point_costs` of each runnable point of ``group``."""
    runnable = group.runnable
    if not runnable.size:
        return np.zeros(0)
    return point_costs(group.mechanism, group.paths, group.values[runnable], group.resolver)


def point_costs(mechanism: Mechanism, paths: tuple[str, ...], values: np.ndarray,
                resolver: ParameterResolver) -> np.ndarray:
    """:func:`model.relative_solve_cost` (1/s) of ``mechanism`` with each row of
    ``values[points, paths]`` (SI) written in by ``resolver(mechanism, paths)`` (0 without
    clearance joints); vmapped."""
    if not mechanism.clearance_joints:
        return np.zeros(len(values))
    parameters = resolver(mechanism, paths)

    def cost(row):
        return model.relative_solve_cost(parameters.apply(mechanism, row))

    return np.asarray(jax.jit(jax.vmap(cost))(jnp.asarray(values, dtype=jnp.float64).reshape(len(values), len(paths))))


def costliest_first(group: Group) -> np.ndarray:
    """Positions (within ``group``) of its runnable points, highest estimated cost first."""
    runnable = group.runnable
    return runnable[cost_order(cost_estimates(group))] if runnable.size else runnable


def cost_order(costs: np.ndarray) -> np.ndarray:
    """Indices of ``costs``, highest first; equal costs keep their order (design order)."""
    return np.argsort(-np.asarray(costs), kind="stable")


def split_chunks(positions: np.ndarray, chunk_size: int) -> list[np.ndarray]:
    """``ceil(len / chunk_size)`` chunks of at most ``chunk_size`` positions, dealt in turn:
    chunk ``k`` of ``n`` takes ``positions[k::n]``, so chunks keep the order of ``positions``
    and share its costly and cheap points evenly."""
    count = -(-len(positions) // max(chunk_size, 1))
    return [positions[first::count] for first in range(count)]


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
