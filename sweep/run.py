"""Compiled execution of a group's points, one chunk at a time.

Only the summary metrics, their requested derivatives and the solver counters leave the
compiled function, never trajectories, so a call's memory is that of the integrator state
and the saved outputs of its points.

Two ways to run a batch of points in one compiled call:

- **Refilling lanes** (the default, :func:`model.solve_ensemble`): ``lanes`` simulations
  advance together and a lane that finishes takes the next point of the batch, so nobody
  waits for the slowest member. Measured on one pinned core of this project's 2-core CPU
  (Flores, 24 ms, 128 points of a 16 x 16 clearance x restitution grid,
  ``benchmarks.throughput --case lanes``): 21.4 simulations per second at 32 lanes, 20.7 at 16, 17.3
  at 64; one unbatched Tsit5 step costs ~49 us, a lane's share of a 32-lane step 15-19 us.
  The lanes stay busy ~0.9 of the time, where a vmapped solve of 64 points is busy 0.37.
- **vmap** (``jit(vmap(simulate))``, lockstep): used when derivatives are requested
  (forward mode through a refilling loop would carry a tangent per point). A vmapped
  ``diffeqsolve`` advances all members until the slowest finishes; on a CPU one point per
  call measured faster than a batch (docs/BENCHMARKS.md), so that path's CPU batch is one
  point.

Derivatives (``derivative_metrics``): ``jax.jacfwd`` of the chosen metrics with respect to
the group's continuous values, through the solver in forward mode (the settings must have
``adjoint="forward"``); one tangent per swept path rides along each solve.

Every call also returns its *step slots*: the steps it could have taken (lanes x loop
iterations, or batch x the slowest member's steps); the sum of the steps over them is the
lockstep efficiency reported per chunk.
"""

from __future__ import annotations

import dataclasses
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
from model._config import add_xla_flags
from model.mechanics.mechanism import Mechanism
from model.integrate.settings import SolverSettings

from . import executables
from .plan import ParameterResolver, ResolverByName

STEP_SLOTS = "step_slots"  # key of run_batches' total step slots (not a per-point column)
NOT_RUN = -1  # result code of a point that was refused before it ran
CPU_BATCH = 1  # vmap path (derivatives): measured, see the module docstring
CPU_CHUNK = 128  # points per stored chunk on a CPU: ~10-25 s of Flores work, lost at most on a kill
CPU_LANES = 32  # refilling lanes per call on a CPU (measured, see the module docstring)
MIN_CPU_CHUNK = 16  # points per chunk at least, so that a call's lanes have work to refill from
MEMORY_SHARE = 0.5  # share of an accelerator's memory a batch may take
MAX_CHUNK = 16384  # points per chunk that memory_chunk_size allows at most
ACCELERATOR_MAX_CHUNK = 16384  # points per chunk on an accelerator
ACCELERATOR_MIN_LANES = 1024  # refilling lanes per call on an accelerator, at least ...
ACCELERATOR_MAX_LANES = 8192  # ... and at most
ACCELERATOR_POINTS_PER_LANE = 2  # points a lane runs on an accelerator (see default_lanes)
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


def default_batch_size(derivatives: bool = False) -> int | None:
    """Points per compiled call: the whole chunk (``None``), except for derivative sweeps
    on a CPU, which run one point per call (measured, see the module docstring)."""
    return CPU_BATCH if derivatives and jax.default_backend() == "cpu" else None


def default_lanes(batch_size: int, platform: str | None = None) -> int:
    """Refilling lanes per call, chosen for the backend (``jax.default_backend()`` unless
    ``platform`` is given).

    - CPU: about a third of the batch (each lane then runs ~3 points, so the lanes that
      finish early have work), between 4 and ``CPU_LANES``: a lane step costs the CPU time
      of its arithmetic, so more lanes than that only lengthen each loop iteration.
    - Accelerator (GPU, TPU): a loop iteration costs about the same for any width up to
      thousands of lanes (kernel launches, not arithmetic, set it), so as many lanes as
      give each lane ~2 points — refilling beats one point per lane when a lane runs fewer
      points than the slowest point's steps over the mean (~3 on the Flores grid) — at
      least ``ACCELERATOR_MIN_LANES`` and at most ``ACCELERATOR_MAX_LANES``.
    """
    platform = platform or jax.default_backend()
    if platform == "cpu":
        return max(1, min(batch_size, CPU_LANES, max(4, -(-batch_size // 3))))
    wanted = max(ACCELERATOR_MIN_LANES, -(-batch_size // ACCELERATOR_POINTS_PER_LANE))
    return max(1, min(batch_size, ACCELERATOR_MAX_LANES, wanted))


def default_chunk_size(platform: str, points: int, workers: int, memory_points: int) -> int:
    """Points per stored chunk, chosen for the backend.

    - CPU with worker processes: an equal share of ``points`` per worker, between
      ``MIN_CPU_CHUNK`` (so the lanes of a call have points to refill from) and
      ``CPU_CHUNK`` (so a kill loses little).
    - Accelerator: as many points as fit in memory (``memory_points``, from
      :func:`memory_chunk_size`), at most ``ACCELERATOR_MAX_CHUNK``: one wide call keeps
      the device busy, and each call pays a fixed launch and transfer overhead.
    """
    if platform == "cpu":
        return int(np.clip(-(-points // max(workers, 1)), MIN_CPU_CHUNK, CPU_CHUNK))
    return int(max(1, min(memory_points, ACCELERATOR_MAX_CHUNK)))


# XLA's CPU runtime hands dot products to a multi-threaded Eigen pool; for the tiny dots of
# a mechanism's vector field the hand-offs cost more than they save. Measured (Flores, 64
# points, 16 lanes, one process pinned to one core, quiet 2-core machine): 28.0 against
# 24.2 simulations per second. XLA still starts its pools, whose threads spin while idle;
# worker processes are therefore pinned to a core each (``sweep.execute.worker_cores``).
SINGLE_THREADED_CPU_FLAGS = ("--xla_cpu_multi_thread_eigen=false",)


def prefer_single_threaded_cpu() -> None:
    """Add ``SINGLE_THREADED_CPU_FLAGS`` to ``XLA_FLAGS`` (unless the user set those flags).
    Takes effect only if called before JAX starts its backend in this process."""
    add_xla_flags(SINGLE_THREADED_CPU_FLAGS)


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


def stop_compilation_cache_writes() -> None:
    """Stop this process reading and writing JAX's persistent compilation cache (its worker
    processes keep theirs). For the driver of worker processes or Ray actors: XLA's
    executable serialisation segfaulted in such a driver once its workers had started
    (jaxlib 0.10.2; three times in the test suite, with either executor), and a driver
    compiles nothing its workers need."""
    jax.config.update("jax_compilation_cache_dir", None)
    try:
        from jax._src import compilation_cache

        compilation_cache.reset_cache()
    except (ImportError, AttributeError):  # pragma: no cover - private API moved
        pass


def simulate_point(
    mechanism: Mechanism,
    values: jnp.ndarray,
    settings: SolverSettings,
    paths: tuple[str, ...],
    resolver: ParameterResolver,
    derivative_metrics: tuple[str, ...] = (),
) -> PointOutcome:
    """Simulate ``mechanism`` with the SI ``values`` of ``paths`` written in by
    ``resolver(mechanism, paths)``; pure JAX."""
    parameters = resolver(mechanism, paths)

    def solve(values):
        point = parameters.apply(mechanism, values)
        outcome = _outcome(point, model.simulate(point, settings))
        return {name: outcome.metrics[name] for name in derivative_metrics}, outcome

    if not derivative_metrics:
        return solve(values)[1]
    derivatives, outcome = jax.jacfwd(solve, has_aux=True)(values)
    return outcome._replace(derivatives=derivatives)


def simulate_points(
    mechanism: Mechanism, values: jnp.ndarray, settings: SolverSettings, paths: tuple[str, ...],
    resolver: ParameterResolver, lanes: int,
) -> tuple[PointOutcome, jnp.ndarray]:
    """Simulate ``values[points, paths]`` with refilling lanes (:func:`model.solve_ensemble`);
    returns the batched outcome and the call's step slots. Pure JAX."""
    parameters = resolver(mechanism, paths)
    mechanisms = jax.vmap(parameters.apply, (None, 0))(mechanism, values)
    solution = model.solve_ensemble(mechanisms, settings, lanes)
    outcomes = solution.map_points(_outcome, mechanisms)
    return outcomes, solution.step_slots.astype(jnp.float64)


def _outcome(point: Mechanism, trajectory: model.Trajectory) -> PointOutcome:
    """The summary metrics and solver counters of one simulated point (no derivatives)."""
    return PointOutcome(model.summary_metrics(point, trajectory), {}, trajectory.steps,
                        trajectory.rejected_steps, trajectory.result)


def _lockstep_points(mechanism, values, settings, paths, resolver, derivative_metrics) -> tuple[PointOutcome, jnp.ndarray]:
    """``vmap(simulate_point)`` and its step slots (batch x the slowest member's steps)."""
    outcomes = jax.vmap(functools.partial(simulate_point, settings=settings, paths=paths, resolver=resolver,
                                          derivative_metrics=derivative_metrics), in_axes=(None, 0))(mechanism, values)
    return outcomes, (values.shape[0] * jnp.max(outcomes.steps)).astype(jnp.float64)


# key -> (compiled function, compile seconds)
_COMPILED: dict[tuple, tuple[Callable, float]] = {}


def compiled_batch(
    mechanism: Mechanism,
    settings: SolverSettings,
    paths: tuple[str, ...],
    batch_size: int,
    derivative_metrics: tuple[str, ...] = (),
    devices: Sequence[jax.Device] | None = None,
    lanes: int | None = None,
    *,
    resolver: ParameterResolver,
) -> tuple[Callable, float]:
    """``f(mechanism, values[len(devices) * batch_size, len(paths)]) -> (PointOutcome,
    step slots[len(devices)])`` compiled ahead of time, and the seconds its compilation took
    (0 when it was compiled before in this process; small when JAX's persistent cache had it).
    ``resolver(mechanism, paths)`` writes the values into the mechanism.
    Refilling lanes (``lanes`` per device, default :func:`default_lanes` for the devices'
    platform) unless derivatives are requested.

    With several ``devices`` each gets its own batch through ``jax.shard_map``: every device
    runs its own solve, and nothing is communicated inside it.
    """
    devices = tuple(devices) if devices else (jax.devices()[0],)
    leaves = jax.tree_util.tree_leaves(mechanism)
    key = (
        jax.tree_util.tree_structure(mechanism),
        tuple((leaf.shape, str(leaf.dtype)) for leaf in leaves),
        settings,
        paths,
        resolver,
        batch_size,
        tuple(derivative_metrics),
        tuple(str(device) for device in devices),
        lanes,
    )
    if key in _COMPILED:
        return _COMPILED[key][0], 0.0
    derivative_metrics = tuple(derivative_metrics)
    if derivative_metrics:
        lanes = None

        def batched(mechanism, values):
            outcomes, slots = _lockstep_points(mechanism, values, settings, paths, resolver, derivative_metrics)
            return outcomes, slots[None]
    else:
        lanes = lanes or default_lanes(batch_size, devices[0].platform)

        def batched(mechanism, values):
            outcomes, slots = simulate_points(mechanism, values, settings, paths, resolver, lanes)
            return outcomes, slots[None]
    if len(devices) > 1:
        from jax.sharding import Mesh, PartitionSpec

        mesh = Mesh(np.asarray(devices), ("chunk",))
        batched = jax.shard_map(
            batched, mesh=mesh, in_specs=(PartitionSpec(), PartitionSpec("chunk")),
            out_specs=PartitionSpec("chunk"), check_vma=False,
        )
    start = time.perf_counter()
    values = jax.ShapeDtypeStruct((len(devices) * batch_size, len(paths)), jnp.float64)
    # Under EQX_ON_ERROR=nan (set by `clearance sweep`) diffrax's runtime checks return NaN
    # instead of raising through a host callback, which JAX never caches: a failed check
    # still shows, as a non-finite point, and the executable persists across runs.
    disk_key = _executable_key(mechanism, settings, paths, resolver, batch_size, derivative_metrics, devices, lanes)
    if disk_key:
        compiled = executables.compile_cached(disk_key, batched, (mechanism, values), devices[0])
    else:
        compiled = jax.jit(batched).lower(mechanism, values).compile()
    seconds = time.perf_counter() - start
    _COMPILED[key] = (compiled, seconds)
    return compiled, seconds


def _executable_key(mechanism, settings, paths, resolver, batch_size, derivative_metrics, devices, lanes) -> str | None:
    """Key of the chunk function in the executable cache (:mod:`sweep.executables`); None
    (not cached: compiled directly) for several devices or while the cache is off."""
    if len(devices) != 1 or executables.cache_folder() is None:
        return None
    settings_fields = tuple((field.name, getattr(settings, field.name)) for field in dataclasses.fields(settings))
    leaves = tuple((np.shape(leaf), str(np.asarray(leaf).dtype)) for leaf in jax.tree_util.tree_leaves(mechanism))
    named = resolver_by_name(resolver)
    return executables.executable_key(
        str(jax.tree_util.tree_structure(mechanism)), leaves, settings_fields, tuple(paths),
        f"{named.module}.{named.qualified_name}", named.source_digest, batch_size,
        tuple(derivative_metrics), lanes, devices[0].platform, devices[0].device_kind,
    )


def resolver_by_name(resolver: ParameterResolver) -> ResolverByName:
    """``resolver`` as a :class:`~sweep.plan.ResolverByName` (itself if it is one): what a
    worker process receives, and what names the resolver in the executable cache's key."""
    if isinstance(resolver, ResolverByName):
        return resolver
    return ResolverByName(getattr(resolver, "__module__", ""), getattr(resolver, "__qualname__", repr(resolver)),
                          executables.module_digest(resolver))


def pad_rows(rows: np.ndarray, size: int) -> np.ndarray:
    """``rows`` filled up to ``size`` rows with copies of its last row: a compiled call has a
    fixed batch shape, and a copy of a real point cannot fail where the point does not."""
    rows = np.asarray(rows)
    return np.concatenate([rows, np.repeat(rows[-1:], size - len(rows), axis=0)]) if len(rows) < size else rows


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
    ``d(metric)/d(path)`` columns, ``steps``, ``rejected_steps``, ``result``, and
    ``STEP_SLOTS`` (per device: the step slots of its calls, padding included)."""
    width = devices * batch_size
    count = len(values)
    columns: dict[str, np.ndarray] = {}
    slots = np.zeros(devices)
    for first in range(0, count, width):
        chosen = values[first : first + width]
        outcome, call_slots = jax.device_get(compiled(mechanism, jnp.asarray(pad_rows(chosen, width))))
        slots += np.asarray(call_slots, dtype=np.float64)
        flat = {name: column for name, column in outcome.metrics.items()}
        for name, jacobian in outcome.derivatives.items():
            flat.update({f"d({name})/d({path})": jacobian[:, k] for k, path in enumerate(paths)})
        flat.update(steps=outcome.steps, rejected_steps=outcome.rejected_steps, result=outcome.result)
        for name, column in flat.items():
            columns.setdefault(name, np.empty(count, dtype=np.asarray(column).dtype))[first : first + len(chosen)] = column[: len(chosen)]
        if on_batch is not None:
            on_batch(len(chosen))
    columns[STEP_SLOTS] = slots
    return columns


def chunk_runner(
    mechanism: Mechanism, settings: SolverSettings, paths: tuple[str, ...], batch_size: int,
    derivative_metrics: tuple[str, ...] = (), devices: Sequence[jax.Device] | None = None, lanes: int | None = None,
    *, resolver: ParameterResolver,
) -> tuple[Callable[..., dict[str, np.ndarray]], float]:
    """``run(values, on_batch=None) -> columns`` for one group, and its compile seconds."""
    devices = tuple(devices) if devices else (jax.devices()[0],)
    compiled, seconds = compiled_batch(mechanism, settings, paths, batch_size, derivative_metrics, devices, lanes,
                                       resolver=resolver)

    def run(values: np.ndarray, on_batch: Callable[[int], None] | None = None) -> dict[str, np.ndarray]:
        values = np.asarray(values, dtype=np.float64)
        # (points, paths); a group without continuous paths has shape (points, 0), which
        # ``reshape(-1, 0)`` cannot infer
        points = values.shape[0] if values.ndim == 2 else values.size // max(len(paths), 1)
        return run_batches(compiled, mechanism, values.reshape(points, len(paths)), paths, batch_size,
                           len(devices), on_batch)

    return run, seconds
