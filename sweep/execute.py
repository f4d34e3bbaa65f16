"""Executors: who runs the chunks. ``LocalExecutor`` (this process, every local JAX device),
``ProcessExecutor`` (worker processes on this machine: one compiled loop runs on one CPU
core, so a multi-core CPU needs one process per core) and ``RayExecutor`` (a Ray cluster,
its actors in a ``ray.util.ActorPool``; optional extra ``[distributed]``).

All take the same :class:`ChunkTask` list and report each finished chunk through
``on_chunk(task, columns, info)`` in the driver process, which stores it
(:mod:`sweep.store`), so a worker never writes files and a lost worker loses no stored chunk.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import dataclasses
import multiprocessing
import os
import time
from collections.abc import Callable, Sequence

import jax
import numpy as np

from .plan import Group
from .run import (
    STEP_SLOTS, chunk_runner, enable_compilation_cache, pad_rows, prefer_single_threaded_cpu, resolver_by_name,
    stop_compilation_cache_writes,
)

EXECUTORS = ("auto", "local", "processes", "ray")


class ExecutorUnavailable(RuntimeError):
    """An executor that cannot start here (Ray not installed)."""


@dataclasses.dataclass
class ChunkTask:
    """One chunk: ``positions`` of points within group ``group`` (in run order) and their values."""

    group: int
    positions: np.ndarray
    values: np.ndarray  # float64 [points, paths]


@dataclasses.dataclass
class GroupRun:
    """How a group was run (for ``sweep.json``)."""

    batch_size: int = 0
    compile_seconds: float = 0.0  # this process (local) or the slowest worker (ray)
    run_seconds: float = 0.0
    workers: int = 1


OnChunk = Callable[[ChunkTask, dict, dict], None]


def _payloads(groups: Sequence[Group], tasks: Sequence[ChunkTask], batch: int,
              derivative_metrics: tuple[str, ...]) -> dict[int, tuple]:
    """What a worker needs to compile each group that has chunks to run (the resolver by
    name: :class:`sweep.plan.ResolverByName`)."""
    return {group.index: (group.mechanism, group.settings, group.paths, resolver_by_name(group.resolver), batch,
                          derivative_metrics)
            for group in groups if any(task.group == group.index for task in tasks)}


def _finish_chunk(record: GroupRun, task: ChunkTask, columns: dict, info: dict, batch: int, started: float,
                  on_chunk: OnChunk, on_points: Callable[[int], None] | None) -> None:
    """Book a chunk a worker returned: the group's slowest compile and its run time so far,
    then the store and the progress bar."""
    record.compile_seconds = max(record.compile_seconds, info["compile_seconds"])
    record.run_seconds = time.perf_counter() - started
    on_chunk(task, columns, info | {"batch_size": batch})
    if on_points:
        on_points(len(task.values))


def _batch(batch_size: int | None, chunk_size: int) -> int:
    return max(1, min(batch_size or chunk_size, chunk_size))


class LocalExecutor:
    """Chunks in this process. With several JAX devices, a round of one chunk per device runs
    as one ``shard_map`` call (each device its own vmapped solve, no communication)."""

    name = "local"

    def __init__(self, devices: Sequence[jax.Device] | None = None):
        self.devices = tuple(devices or jax.local_devices())

    def run(self, groups: Sequence[Group], tasks: Sequence[ChunkTask], batch_size: int | None, chunk_size: int,
            derivative_metrics: tuple[str, ...], on_chunk: OnChunk,
            on_points: Callable[[int], None] | None = None, on_status: Callable[[str], None] | None = None) -> dict[int, GroupRun]:
        runs: dict[int, GroupRun] = {}
        for group in groups:
            mine = [task for task in tasks if task.group == group.index]
            if not mine:
                continue
            batch = _batch(batch_size, chunk_size)
            devices = self.devices[: max(1, min(len(self.devices), len(mine)))]
            if on_status:
                on_status(f"group {group.index + 1}/{len(groups)} {group.label()}: compiling")
            run, seconds = chunk_runner(group.mechanism, group.settings, group.paths, batch, derivative_metrics, devices,
                                        resolver=group.resolver)
            runs[group.index] = record = GroupRun(batch_size=batch, compile_seconds=seconds, workers=len(devices))
            if on_status:
                on_status(f"group {group.index + 1}/{len(groups)} {group.label()}")
            start = time.perf_counter()
            for first in range(0, len(mine), len(devices)):
                round_ = mine[first : first + len(devices)]
                began = time.perf_counter()
                columns = _run_round(run, round_, len(devices), batch, len(group.paths), on_points)
                seconds_each = (time.perf_counter() - began) / len(round_)
                for task, chunk_columns in zip(round_, columns):
                    on_chunk(task, chunk_columns, {"seconds": seconds_each, "worker": "local", "batch_size": batch})
            record.run_seconds = time.perf_counter() - start
        return runs


def _run_round(run: Callable, round_: Sequence[ChunkTask], devices: int, batch: int, width: int,
               on_points: Callable[[int], None] | None) -> list[dict]:
    """Run up to ``devices`` chunks side by side: batch ``b`` of every chunk goes to its device
    in one call (short chunks padded with their last point)."""
    if devices == 1:
        return [run(round_[0].values, on_batch=on_points)]
    longest = max(len(task.values) for task in round_)
    stacked = []
    for batch_start in range(0, longest, batch):
        for device in range(devices):
            values = round_[min(device, len(round_) - 1)].values
            rows = values[batch_start : batch_start + batch]
            stacked.append(pad_rows(rows if len(rows) else values[-1:], batch))
    columns = run(np.concatenate(stacked).reshape(-1, width))
    slots = columns.pop(STEP_SLOTS)
    if on_points:
        on_points(sum(len(task.values) for task in round_))
    calls = len(stacked) // devices
    shaped = {name: np.asarray(column).reshape(calls, devices, batch) for name, column in columns.items()}
    return [{name: column[:, device, :].reshape(-1)[: len(task.values)] for name, column in shaped.items()}
            | {STEP_SLOTS: slots[device : device + 1]} for device, task in enumerate(round_)]


class ProcessExecutor:
    """Chunks in ``workers`` spawned processes of this machine, each a :class:`SweepWorker`
    (compiles a group once, through the shared persistent compilation cache). XLA runs a
    compiled solve on one core, and several forced host devices of one process did not
    run side by side here, so processes are how a sweep uses a multi-core CPU."""

    name = "processes"

    def __init__(self, workers: int | None = None):
        self.workers = max(1, workers or os.cpu_count() or 1)
        cache = os.environ.get("CLEARANCE_JAX_CACHE") or str(os.path.abspath(".jax_cache"))
        context = multiprocessing.get_context("spawn")
        cores = worker_cores(self.workers)
        self.pool = concurrent.futures.ProcessPoolExecutor(
            self.workers, mp_context=context, initializer=_start_worker,
            initargs=(cache, cores, context.Value("i", 0)),
        )
        stop_compilation_cache_writes()

    def run(self, groups: Sequence[Group], tasks: Sequence[ChunkTask], batch_size: int | None, chunk_size: int,
            derivative_metrics: tuple[str, ...], on_chunk: OnChunk,
            on_points: Callable[[int], None] | None = None, on_status: Callable[[str], None] | None = None) -> dict[int, GroupRun]:
        batch = _batch(batch_size, chunk_size)
        payloads = _payloads(groups, tasks, batch, derivative_metrics)
        runs = {index: GroupRun(batch_size=batch, workers=self.workers) for index in payloads}
        if on_status:
            on_status(f"{self.workers} worker processes")
        started = time.perf_counter()
        futures = {self.pool.submit(_run_in_worker, task.group, payloads[task.group], task.values): task
                   for task in tasks}
        for future in concurrent.futures.as_completed(futures):
            task = futures[future]
            columns, info = future.result()
            _finish_chunk(runs[task.group], task, columns, info, batch, started, on_chunk, on_points)
        return runs

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)


# The worker of a ProcessExecutor process (set by its initializer): a process-wide slot is
# the only way concurrent.futures lets a task reach state kept between tasks.
_PROCESS_WORKER: "SweepWorker | None" = None


def worker_cores(workers: int) -> tuple[int, ...]:
    """The cores worker processes are pinned to, one each: this process's usable cores when
    there are at least ``workers`` of them (Linux), else ``()`` (no pinning). Pinned, a
    worker's idle XLA threads spin on its own core instead of taking another worker's
    (what a second worker gains with and without pinning: docs/BENCHMARKS.md §1)."""
    try:
        cores = tuple(sorted(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return ()
    return cores if len(cores) >= workers else ()


def pin_to_core(core: int) -> None:
    """Pin every thread of this process (and so the threads it starts later) to ``core``."""
    for thread in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(thread), {core})
        except (ProcessLookupError, PermissionError):  # a thread that ended meanwhile
            pass


def _start_worker(cache_folder: str, cores: tuple[int, ...], started) -> None:
    global _PROCESS_WORKER
    # A worker's results have gone back through the pool's pipe by the time it exits, and
    # multiprocessing has run its own exit handlers before the interpreter's teardown:
    # ending there skips tearing down JAX's runtime, which the executor's close would wait for.
    atexit.register(os._exit, 0)
    if cores:
        with started.get_lock():
            index = started.value
            started.value += 1
        pin_to_core(cores[index % len(cores)])
    _PROCESS_WORKER = SweepWorker(cache_folder)


def _run_in_worker(group: int, payload: tuple, values: np.ndarray) -> tuple[dict, dict]:
    return _PROCESS_WORKER.run(group, payload, values)


class RayExecutor:
    """Chunks on Ray actors, one per worker CPU (or ``workers``), handed out by a
    ``ray.util.ActorPool``: each actor keeps the compiled function of every group it has run,
    so it compiles a group once, and takes the next chunk as soon as it returns one.

    ``address``: ``None`` starts a local Ray instance; ``"auto"`` joins the cluster this
    machine is part of (``ray start`` was run), or ``ray://host:10001``.
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None, init_kwargs: dict | None = None):
        try:
            import ray
            from ray.util import ActorPool
        except ImportError:
            raise ExecutorUnavailable('Ray is not installed; pip install "clearance[distributed]"') from None
        self.ray = ray
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, log_to_driver=False, **(init_kwargs or {}))
        stop_compilation_cache_writes()
        self.workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        cache = os.environ.get("CLEARANCE_JAX_CACHE") or str(os.path.abspath(".jax_cache"))
        worker_class = ray.remote(num_cpus=1)(SweepWorker)
        self.actors = [worker_class.remote(cache) for _ in range(self.workers)]
        self.pool = ActorPool(self.actors)

    def run(self, groups: Sequence[Group], tasks: Sequence[ChunkTask], batch_size: int | None, chunk_size: int,
            derivative_metrics: tuple[str, ...], on_chunk: OnChunk,
            on_points: Callable[[int], None] | None = None, on_status: Callable[[str], None] | None = None) -> dict[int, GroupRun]:
        batch = _batch(batch_size, chunk_size)
        payloads = {index: self.ray.put(payload)
                    for index, payload in _payloads(groups, tasks, batch, derivative_metrics).items()}
        runs = {index: GroupRun(batch_size=batch, workers=self.workers) for index in payloads}
        if on_status:
            on_status(f"ray: {self.workers} workers")
        started: dict[int, float] = {}  # group -> when its first chunk was handed out

        def submit(actor, numbered: tuple[int, ChunkTask]):
            number, task = numbered
            started.setdefault(task.group, time.perf_counter())
            return actor.run_numbered.remote(number, task.group, payloads[task.group], task.values)

        # Each result carries its task's number: the pool returns them as they finish.
        for number, columns, info in self.pool.map_unordered(submit, list(enumerate(tasks))):
            task = tasks[number]
            _finish_chunk(runs[task.group], task, columns, info, batch, started[task.group], on_chunk, on_points)
        return runs

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)


class SweepWorker:
    """A Ray actor or worker process: compiles each group's chunk function once and runs
    chunks with it."""

    def __init__(self, cache_folder: str):
        prefer_single_threaded_cpu()  # before this process's first JAX computation
        import model

        model.configure()  # float64 and the package's XLA CPU flags, before the first computation

        enable_compilation_cache(cache_folder)
        self.runners: dict[int, Callable] = {}
        self.name = f"{os.uname().nodename}:{os.getpid()}"

    def run(self, group: int, payload: tuple, values: np.ndarray) -> tuple[dict, dict]:
        compile_seconds = 0.0
        if group not in self.runners:
            mechanism, settings, paths, resolver, batch, derivative_metrics = payload
            self.runners[group], compile_seconds = chunk_runner(mechanism, settings, paths, batch, derivative_metrics,
                                                                resolver=resolver)
        start = time.perf_counter()
        columns = self.runners[group](values)
        return columns, {"seconds": time.perf_counter() - start, "worker": self.name, "compile_seconds": compile_seconds}

    def run_numbered(self, number: int, group: int, payload: tuple, values: np.ndarray) -> tuple[int, dict, dict]:
        """:meth:`run`, its result tagged with the caller's task ``number``."""
        return (number, *self.run(group, payload, values))
