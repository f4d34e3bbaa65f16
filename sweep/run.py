"""Compiled execution of a group's points: ``jit(vmap(simulate))``, one chunk at a time.

Only the summary metrics, their requested derivatives and the solver counters leave the
compiled function, never trajectories, so a batch's memory is that of the integrator state
and the saved outputs of its members.

Batch size (points per vmapped call). A vmapped ``diffeqsolve`` advances all members in
lockstep until the slowest finishes. Measured on this project's 2-core CPU machine (Flores,
24 ms, four points of one clearance with restitutions 0.5-0.95, 1991-7819 steps): one batch
of four took 2.74-2.87 s, the four one after another 2.32-2.51 s. A vmapped step of four
members costs ~2.9 single steps, so batching gains at most ~1.4x on a CPU and only when the
members need nearly the same steps, which restitution sweeps break (lockstep efficiency
0.5 above). The CPU default is therefore one point per call; accelerators take the chunk.

Derivatives (``derivative_metrics``): ``jax.jacfwd`` of the chosen metrics with respect to
the group's continuous values, through the solver in forward mode (the settings must have
``adjoint="forward"``); one tangent per swept path rides along each solve.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import model
from model.mechanism import Mechanism
from model.simulate import SolverSettings
from pipelines.build import ParameterMap

NOT_RUN = -1  # result code of a point that was refused before it ran
CPU_BATCH = 1  # measured, see the module docstring
CPU_CHUNK = 8  # points per stored chunk on a CPU: a kill loses at most a few seconds of Flores work
MEMORY_SHARE = 0.5  # share of an accelerator's memory a batch may take
MAX_CHUNK = 4096
CACHE_ENV = "CLEARANCE_JAX_CACHE"  # folder of JAX's persistent compilation cache


class PointOutcome(NamedTuple):
    """What one simulated point returns (each field gains a leading batch axis under vmap).

    ``derivatives[metric]`` has one entry per swept continuous path (empty without derivatives).
    """

    metrics: dict[str, jnp.ndarray]
    derivatives: dict[str, jnp.ndarray]
    steps: jnp.ndarray
    rejected_steps: jnp.ndarray
    result: jnp.ndarray


def default_batch_size() -> int | None:
    """Points per vmapped call: one on a CPU (measured), ``None`` (the whole chunk) elsewhere."""
    return CPU_BATCH if jax.default_backend() == "cpu" else None


def enable_compilation_cache(folder: str | os.PathLike | None = None) -> Path:
    """Turn on JAX's persistent compilation cache in ``folder`` (default ``$CLEARANCE_JAX_CACHE``
    or ``.jax_cache/`` in the working directory), so a second run loads its executables
    instead of compiling them. Every compilation is cached, however short."""
    folder = Path(folder or os.environ.get(CACHE_ENV) or ".jax_cache").resolve()
    folder.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    try:  # a cache already initialised (by an earlier compile in this process) keeps its folder
        from jax._src import compilation_cache

        if compilation_cache.is_initialized():
            compilation_cache.reset_cache()
    except (ImportError, AttributeError):  # private API: without it the cache still works in new processes
        pass
    return folder


@contextlib.contextmanager
def runtime_checks_as_nan():
    """Trace with equinox's runtime checks (``eqx.error_if``: diffrax's own sanity checks)
    returning NaN instead of raising through a host callback. JAX never writes an executable
    with host callbacks to its persistent cache, so without this every run recompiles; a
    failed check still shows, as a non-finite point. (``equinox._errors.EQX_ON_ERROR`` is the
    module-level default that the ``EQX_ON_ERROR`` environment variable sets at import.)"""
    try:
        from equinox import _errors
    except ImportError:  # pragma: no cover - equinox moved it: keep its behaviour, lose the cache
        yield
        return
    previous = getattr(_errors, "EQX_ON_ERROR", None)
    if previous == "raise":
        _errors.EQX_ON_ERROR = "nan"
    try:
        yield
    finally:
        if previous is not None:
            _errors.EQX_ON_ERROR = previous


def simulate_point(
    mechanism: Mechanism,
    values: jnp.ndarray,
    settings: SolverSettings,
    paths: tuple[str, ...],
    derivative_metrics: tuple[str, ...] = (),
) -> PointOutcome:
    """Simulate ``mechanism`` with the SI ``values`` of ``paths`` written in; pure JAX."""
    parameters = ParameterMap(mechanism, paths)

    def solve(values):
        point = parameters.apply(mechanism, values)
        trajectory = model.simulate(point, settings)
        metrics = model.summary_metrics(point, trajectory)
        outcome = PointOutcome(metrics, {}, trajectory.steps, trajectory.rejected_steps, trajectory.result)
        return {name: metrics[name] for name in derivative_metrics}, outcome

    if not derivative_metrics:
        return solve(values)[1]
    derivatives, outcome = jax.jacfwd(solve, has_aux=True)(values)
    return outcome._replace(derivatives=derivatives)


# key -> (compiled function, compile seconds)
_COMPILED: dict[tuple, tuple[Callable, float]] = {}


def compiled_batch(
    mechanism: Mechanism,
    settings: SolverSettings,
    paths: tuple[str, ...],
    batch_size: int,
    derivative_metrics: tuple[str, ...] = (),
    devices: Sequence[jax.Device] | None = None,
) -> tuple[Callable, float]:
    """``f(mechanism, values[len(devices) * batch_size, len(paths)]) -> PointOutcome``
    compiled ahead of time, and the seconds its compilation took (0 when it was compiled
    before in this process; small when JAX's persistent cache had it).

    With several ``devices`` each gets its own batch through ``jax.shard_map``: every device
    runs its own vmapped solve with its own lockstep, and nothing is communicated inside it.
    """
    devices = tuple(devices) if devices else (jax.devices()[0],)
    leaves = jax.tree_util.tree_leaves(mechanism)
    key = (
        jax.tree_util.tree_structure(mechanism),
        tuple((leaf.shape, str(leaf.dtype)) for leaf in leaves),
        settings,
        paths,
        batch_size,
        tuple(derivative_metrics),
        tuple(str(device) for device in devices),
    )
    if key in _COMPILED:
        return _COMPILED[key][0], 0.0
    point = functools.partial(simulate_point, settings=settings, paths=paths, derivative_metrics=tuple(derivative_metrics))
    batched = jax.vmap(point, in_axes=(None, 0))
    if len(devices) > 1:
        from jax.sharding import Mesh, PartitionSpec

        mesh = Mesh(np.asarray(devices), ("chunk",))
        batched = jax.shard_map(
            batched, mesh=mesh, in_specs=(PartitionSpec(), PartitionSpec("chunk")),
            out_specs=PartitionSpec("chunk"), check_vma=False,
        )
    start = time.perf_counter()
    values = jax.ShapeDtypeStruct((len(devices) * batch_size, len(paths)), jnp.float64)
    with runtime_checks_as_nan():
        compiled = jax.jit(batched).lower(mechanism, values).compile()
    seconds = time.perf_counter() - start
    _COMPILED[key] = (compiled, seconds)
    return compiled, seconds


def memory_chunk_size(mechanism: Mechanism, settings: SolverSettings, device: jax.Device | None = None) -> int:
    """Points per chunk that fit in ``MEMORY_SHARE`` of an accelerator's memory.

    A member's memory is dominated by its saved outputs (every field of the trajectory at
    every output time, measured with ``jax.eval_shape``); a factor of 4 covers the solver's
    stages and the metrics' temporaries. A CPU gets ``CPU_CHUNK``.
    """
    device = device or jax.devices()[0]
    if device.platform == "cpu":
        return CPU_CHUNK
    shapes = jax.eval_shape(functools.partial(model.simulate, settings=settings), mechanism)
    per_point = 4 * sum(np.prod(leaf.shape) * leaf.dtype.itemsize for leaf in jax.tree_util.tree_leaves(shapes))
    stats = device.memory_stats() or {}
    available = stats.get("bytes_limit", 8 * 2**30) - stats.get("bytes_in_use", 0)
    return int(np.clip(MEMORY_SHARE * available // max(per_point, 1), 1, MAX_CHUNK))


def run_batches(
    compiled: Callable, mechanism: Mechanism, values: np.ndarray, paths: tuple[str, ...], batch_size: int,
    devices: int = 1, on_batch: Callable[[int], None] | None = None,
) -> dict[str, np.ndarray]:
    """Run ``values[n, paths]`` through ``compiled`` (shape ``devices * batch_size``), padding
    the last call with copies of its final point. Returns flat arrays: ``metric`` columns,
    ``d(metric)/d(path)`` columns, ``steps``, ``rejected_steps``, ``result``."""
    width = devices * batch_size
    count = len(values)
    columns: dict[str, np.ndarray] = {}
    for first in range(0, count, width):
        chosen = values[first : first + width]
        padded = np.concatenate([chosen, np.repeat(chosen[-1:], width - len(chosen), axis=0)])
        outcome = jax.device_get(compiled(mechanism, jnp.asarray(padded)))
        flat = {name: column for name, column in outcome.metrics.items()}
        for name, jacobian in outcome.derivatives.items():
            flat.update({f"d({name})/d({path})": jacobian[:, k] for k, path in enumerate(paths)})
        flat.update(steps=outcome.steps, rejected_steps=outcome.rejected_steps, result=outcome.result)
        for name, column in flat.items():
            columns.setdefault(name, np.empty(count, dtype=np.asarray(column).dtype))[first : first + len(chosen)] = column[: len(chosen)]
        if on_batch is not None:
            on_batch(len(chosen))
    return columns


def chunk_runner(
    mechanism: Mechanism, settings: SolverSettings, paths: tuple[str, ...], batch_size: int,
    derivative_metrics: tuple[str, ...] = (), devices: Sequence[jax.Device] | None = None,
) -> tuple[Callable[..., dict[str, np.ndarray]], float]:
    """``run(values, on_batch=None) -> columns`` for one group, and its compile seconds."""
    devices = tuple(devices) if devices else (jax.devices()[0],)
    compiled, seconds = compiled_batch(mechanism, settings, paths, batch_size, derivative_metrics, devices)

    def run(values: np.ndarray, on_batch: Callable[[int], None] | None = None) -> dict[str, np.ndarray]:
        return run_batches(compiled, mechanism, np.asarray(values, dtype=np.float64).reshape(-1, len(paths)),
                           paths, batch_size, len(devices), on_batch)

    return run, seconds
