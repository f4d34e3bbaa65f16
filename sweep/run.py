"""Batched execution: each group's points run through one ``jit(vmap(simulate))``.

Only the summary metrics and solver counters leave the device, never the trajectories, so
the memory of a batch is that of the integrator state. A batch whose members need different
step counts runs until the slowest finishes (``vmap`` of a while loop steps in lockstep), and
on a CPU a vmapped step costs about as much as the members one after another; there the
default batch is one point, while accelerators take large batches (``default_batch_size``).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import model
from model.mechanism import Mechanism
from model.simulate import SolverSettings
from pipelines.build import ParameterMap

from .plan import Group

NOT_RUN = -1  # result code of a point that was refused before it ran
CPU_BATCH = 1
ACCELERATOR_BATCH = 256


class PointOutcome(NamedTuple):
    """What one simulated point returns (each field gains a leading batch axis under vmap)."""

    metrics: dict[str, jnp.ndarray]
    steps: jnp.ndarray
    rejected_steps: jnp.ndarray
    result: jnp.ndarray


@dataclasses.dataclass
class GroupOutcome:
    """Results of a group, one entry per point of the group (NaN / ``NOT_RUN`` where not run)."""

    metrics: dict[str, np.ndarray]
    steps: np.ndarray
    rejected_steps: np.ndarray
    result: np.ndarray
    compile_seconds: float = 0.0
    run_seconds: float = 0.0
    batch_size: int = 0


def default_batch_size() -> int:
    """Points per vmapped call: one on a CPU, many on an accelerator."""
    return CPU_BATCH if jax.default_backend() == "cpu" else ACCELERATOR_BATCH


def simulate_point(mechanism: Mechanism, values: jnp.ndarray, settings: SolverSettings, paths: tuple[str, ...]) -> PointOutcome:
    """Simulate ``mechanism`` with the SI ``values`` of ``paths`` written in; pure JAX."""
    point = ParameterMap(mechanism, paths).apply(mechanism, values)
    trajectory = model.simulate(point, settings)
    return PointOutcome(model.summary_metrics(point, trajectory), trajectory.steps, trajectory.rejected_steps, trajectory.result)


# (mechanism structure, leaf shapes, settings, paths, batch size) -> (compiled, compile seconds)
_COMPILED: dict[tuple, tuple[Callable, float]] = {}


def compiled_batch(mechanism: Mechanism, settings: SolverSettings, paths: tuple[str, ...], batch_size: int) -> tuple[Callable, float]:
    """``f(mechanism, values[batch_size, len(paths)]) -> PointOutcome`` compiled ahead of time,
    and the seconds its compilation took (0 when it was compiled before in this process)."""
    leaves = jax.tree_util.tree_leaves(mechanism)
    key = (
        jax.tree_util.tree_structure(mechanism),
        tuple((leaf.shape, str(leaf.dtype)) for leaf in leaves),
        settings,
        paths,
        batch_size,
    )
    if key in _COMPILED:
        return _COMPILED[key][0], 0.0
    batched = jax.jit(jax.vmap(functools.partial(simulate_point, settings=settings, paths=paths), in_axes=(None, 0)))
    start = time.perf_counter()
    values = jax.ShapeDtypeStruct((batch_size, len(paths)), jnp.float64)
    compiled = batched.lower(mechanism, values).compile()
    seconds = time.perf_counter() - start
    _COMPILED[key] = (compiled, seconds)
    return compiled, seconds


def run_group(group: Group, batch_size: int, on_batch: Callable[[int], None] | None = None) -> GroupOutcome:
    """Run the valid points of ``group`` in batches of ``batch_size``.

    The last batch is padded with copies of its final point so that every call has the
    compiled shape; ``on_batch(n)`` is told after each batch how many points finished.
    """
    count = len(group.points)
    runnable = group.runnable
    outcome = GroupOutcome(
        metrics={},
        steps=np.full(count, NOT_RUN),
        rejected_steps=np.full(count, NOT_RUN),
        result=np.full(count, NOT_RUN),
    )
    if not runnable.size:
        return outcome
    size = max(1, min(batch_size, runnable.size))
    compiled, outcome.compile_seconds = compiled_batch(group.mechanism, group.settings, group.paths, size)
    outcome.batch_size = size
    start = time.perf_counter()
    for first in range(0, runnable.size, size):
        chosen = runnable[first : first + size]
        padded = np.concatenate([chosen, np.repeat(chosen[-1:], size - chosen.size)])
        result = jax.device_get(compiled(group.mechanism, jnp.asarray(group.values[padded])))
        for name, column in result.metrics.items():
            outcome.metrics.setdefault(name, np.full(count, np.nan))[chosen] = column[: chosen.size]
        outcome.steps[chosen] = result.steps[: chosen.size]
        outcome.rejected_steps[chosen] = result.rejected_steps[: chosen.size]
        outcome.result[chosen] = result.result[: chosen.size]
        if on_batch is not None:
            on_batch(int(chosen.size))
    outcome.run_seconds = time.perf_counter() - start
    return outcome
