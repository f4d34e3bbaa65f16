"""Executors: who runs the chunks. ``LocalExecutor`` (this process, every local JAX device),
``ProcessExecutor`` (worker processes on this machine: one compiled loop runs on one CPU
core, so a multi-core CPU needs one process per core) and ``RayExecutor`` (a Ray cluster,
a dead actor replaced by a new one; optional extra ``[distributed]``).

All take the same :class:`ChunkTask` list and report each finished chunk through
``on_chunk(task, columns, info)`` in the driver process, which stores it
(:mod:`sweep.store`), so a worker never writes files and a lost worker loses no stored chunk.
The chunk a lost worker was running runs again on a fresh worker, or is split to isolate
a point that keeps killing its workers (:mod:`sweep.faults`); such a point is reported with
empty ``columns`` and ``info["failed"]``, the reason.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from .faults import Attempt, WorkQueue, WorkersLost, exit_reason, inject_fault, loss_limit
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


class _WorkerProcess:
    """One spawned worker process and the pipe to it; ``attempt`` is the chunk it runs."""

    def __init__(self, context, cache_folder: str, core: int | None):
        self.core = core
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, cache_folder, core), daemon=True)
        self.process.start()
        child.close()
        self.attempt: Attempt | None = None

    def send(self, function: Callable | None, *args) -> bool:
        """Ask the worker to run ``function(*args)`` (``None``: to end); ``False`` if it is gone."""
        try:
            self.connection.send(None if function is None else (function, args))
            return True
        except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
            return False

    def receive(self) -> tuple[bool, Any] | None:
        """``(True, result)`` or ``(False, error text)`` of the worker's call, or ``None`` if
        the worker died."""
        try:
            return self.connection.recv()
        except (EOFError, ConnectionResetError, OSError):
            return None

    def lost_reason(self) -> str:
        self.process.join(timeout=5)
        return exit_reason(self.process.exitcode)

    def stop(self, wait: float = 2.0) -> None:
        self.send(None)
        self.process.join(timeout=wait)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=wait)
        self.connection.close()


def _worker_main(connection, cache_folder: str, core: int | None) -> None:
    """A worker process: pinned to ``core``, a :class:`SweepWorker`, then calls from the pipe
    until it closes. Ctrl-C reaches every process of the terminal's group: the driver stores
    what is finished and stops the workers, so a worker ignores it."""
    global _PROCESS_WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if core is not None:
        pin_to_core(core)
    _PROCESS_WORKER = SweepWorker(cache_folder)
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            break
        if message is None:
            break
        function, args = message
        try:
            reply = (True, function(*args))
        except Exception as error:  # reported to the driver, which reruns or splits the chunk
            reply = (False, f"{type(error).__name__}: {error}".splitlines()[0])
        connection.send(reply)
    # Every result has gone back through the pipe: ending here skips tearing down JAX's
    # runtime (0.5 s that the executor's close waited for on a warm 256-point sweep).
    os._exit(0)


class ProcessExecutor:
    """Chunks in ``workers`` spawned processes of this machine, each a :class:`SweepWorker`
    (compiles a group once, through the shared persistent compilation cache). XLA runs a
    compiled solve on one core, and several forced host devices of one process did not
    run side by side here, so processes are how a sweep uses a multi-core CPU.

    Each process has its own pipe, so the driver knows which chunk a process that dies was
    running: that chunk goes back to :class:`sweep.faults.WorkQueue` (rerun, split or given
    up) and a fresh process, pinned to the same core, takes the dead one's place."""

    name = "processes"

    def __init__(self, workers: int | None = None):
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.cache = os.environ.get("CLEARANCE_JAX_CACHE") or str(os.path.abspath(".jax_cache"))
        self.context = multiprocessing.get_context("spawn")
        cores = worker_cores(self.workers)
        self.processes = [self._start(cores[k] if cores else None) for k in range(self.workers)]
        self.replaced = 0  # processes started in place of lost ones
        stop_compilation_cache_writes()

    def _start(self, core: int | None) -> _WorkerProcess:
        return _WorkerProcess(self.context, self.cache, core)

    def _replace(self, k: int) -> None:
        old = self.processes[k]
        old.stop(wait=0.1)
        self.processes[k] = self._start(old.core)
        self.replaced += 1

    def run(self, groups: Sequence[Group], tasks: Sequence[ChunkTask], batch_size: int | None, chunk_size: int,
            derivative_metrics: tuple[str, ...], on_chunk: OnChunk,
            on_points: Callable[[int], None] | None = None, on_status: Callable[[str], None] | None = None) -> dict[int, GroupRun]:
        batch = _batch(batch_size, chunk_size)
        payloads = _payloads(groups, tasks, batch, derivative_metrics)
        runs = {index: GroupRun(batch_size=batch, workers=self.workers) for index in payloads}
        if on_status:
            on_status(f"{self.workers} worker processes")
        started = time.perf_counter()
        queue = WorkQueue(tasks, loss_limit(self.workers, max((len(t.values) for t in tasks), default=1)))
        while True:
            for k, worker in enumerate(self.processes):
                while worker.attempt is None and len(queue):
                    attempt = queue.next()
                    worker.attempt = attempt
                    task = attempt.task
                    if not worker.send(_run_in_worker, task.group, payloads[task.group], task.values):
                        self._lose(k, queue, on_chunk, on_points, on_status)
                        worker = self.processes[k]
            busy = [worker for worker in self.processes if worker.attempt is not None]
            if not busy:
                return runs
            ready = set(multiprocessing.connection.wait(
                [w.connection for w in busy] + [w.process.sentinel for w in busy]))
            for k, worker in enumerate(self.processes):
                if worker.attempt is None or not ({worker.connection, worker.process.sentinel} & ready):
                    continue
                reply = worker.receive() if worker.connection in ready or worker.connection.poll() else None
                if reply is None or not reply[0]:
                    self._lose(k, queue, on_chunk, on_points, on_status, None if reply is None else reply[1])
                    continue
                task, worker.attempt = worker.attempt.task, None
                queue.finished()
                columns, info = reply[1]
                _finish_chunk(runs[task.group], task, columns, info, batch, started, on_chunk, on_points)

    def _lose(self, k: int, queue: WorkQueue, on_chunk: OnChunk, on_points, on_status, error: str | None = None) -> None:
        """Worker ``k`` died (or its call raised ``error``): its chunk back to ``queue``, a
        fresh process in its place (one that raised stays)."""
        worker = self.processes[k]
        attempt, worker.attempt = worker.attempt, None
        if error is None:
            reason = worker.lost_reason()
            self._replace(k)
        else:
            reason = f"the worker raised {error}"
        _rerun_lost(queue, attempt, reason, "worker processes", on_chunk, on_points, on_status)

    def broadcast(self, function: Callable, *args) -> list:
        """``function(*args)`` in every worker process, once each; their results (for
        benchmarks and tests)."""
        for worker in self.processes:
            worker.send(function, *args)
        return [self._reply(worker) for worker in self.processes]

    def map(self, function: Callable, arguments: Sequence[tuple]) -> list:
        """``function(*args)`` for each of ``arguments`` on the next free worker; the results
        in order (no recovery from a lost worker: for benchmarks)."""
        results: list = [None] * len(arguments)
        jobs = deque(enumerate(arguments))
        running: dict[int, int] = {}
        while jobs or running:
            for k, worker in enumerate(self.processes):
                if k not in running and jobs:
                    index, args = jobs.popleft()
                    worker.send(function, *args)
                    running[k] = index
            ready = multiprocessing.connection.wait([self.processes[k].connection for k in running])
            for k in [k for k in running if self.processes[k].connection in ready]:
                results[running.pop(k)] = self._reply(self.processes[k])
        return results

    @staticmethod
    def _reply(worker: _WorkerProcess):
        reply = worker.receive()
        if reply is None:
            raise WorkersLost(worker.lost_reason())
        if not reply[0]:
            raise RuntimeError(reply[1])
        return reply[1]

    def close(self) -> None:
        for worker in self.processes:
            worker.send(None)
        for worker in self.processes:
            worker.stop()


def _rerun_lost(queue: WorkQueue, attempt: Attempt, reason: str, workers: str, on_chunk: OnChunk,
                on_points: Callable[[int], None] | None, on_status: Callable[[str], None] | None) -> None:
    """A chunk whose worker was lost (``reason``): back to ``queue`` to run again, bisected
    or given up (:meth:`WorkQueue.lost`); ``workers`` names the kind in the error raised
    when too many are lost."""
    if on_status:
        on_status(f"worker lost ({reason}); its chunk runs again")
    try:
        given_up = queue.lost(attempt, reason)
    except WorkersLost as lost:
        raise WorkersLost(f"{workers}: {lost}") from None
    for task, status in given_up:
        _give_up(task, status, on_chunk, on_points)


def _give_up(task: ChunkTask, status: str, on_chunk: OnChunk, on_points: Callable[[int], None] | None) -> None:
    """A point whose workers kept dying: stored as failed, with ``status`` saying why."""
    on_chunk(task, {}, {"failed": status, "seconds": 0.0, "worker": ""})
    if on_points:
        on_points(len(task.values))


# The worker of a ProcessExecutor process (set by _worker_main): a process-wide slot through
# which the functions sent to it reach the state it keeps between chunks.
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


def _run_in_worker(group: int, payload: tuple, values: np.ndarray) -> tuple[dict, dict]:
    return _PROCESS_WORKER.run(group, payload, values)


class RayExecutor:
    """Chunks on Ray actors, one per worker CPU (or ``workers``); each actor keeps the
    compiled function of every group it has run, so it compiles a group once, and takes the
    next chunk as soon as it returns one.

    An actor that dies (its process killed, its node lost) is replaced by a new actor, which
    Ray places on any node with a free CPU, and its chunk goes back to
    :class:`sweep.faults.WorkQueue` (rerun, split or given up). Ray's own restarts
    (``max_restarts``) and task retries (``max_task_retries``) are left off: a call sent to an
    actor that Ray is restarting failed at once without task retries, and with them Ray
    would rerun a poison chunk on its own, hiding from the queue which chunk costs workers.

    ``address``: ``None`` starts a local Ray instance; ``"auto"`` joins the cluster this
    machine is part of (``ray start`` was run), or ``ray://host:10001``.
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None, init_kwargs: dict | None = None):
        try:
            import ray
        except ImportError:
            raise ExecutorUnavailable('Ray is not installed; pip install "clearance[distributed]"') from None
        self.ray = ray
        if not ray.is_initialized():
            _check_reachable(address)
            try:
                ray.init(address=address, include_dashboard=False, log_to_driver=False, **(init_kwargs or {}))
            except (ConnectionError, RuntimeError, ValueError, TimeoutError) as error:
                where = f"the Ray cluster at {address!r}" if address else "a local Ray instance"
                raise ExecutorUnavailable(f"cannot start or reach {where}: {str(error).splitlines()[0]}") from None
        stop_compilation_cache_writes()
        self.workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.cache = os.environ.get("CLEARANCE_JAX_CACHE") or str(os.path.abspath(".jax_cache"))
        self.worker_class = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(SweepWorker)
        self.actors = [self.worker_class.remote(self.cache) for _ in range(self.workers)]

    def run(self, groups: Sequence[Group], tasks: Sequence[ChunkTask], batch_size: int | None, chunk_size: int,
            derivative_metrics: tuple[str, ...], on_chunk: OnChunk,
            on_points: Callable[[int], None] | None = None, on_status: Callable[[str], None] | None = None) -> dict[int, GroupRun]:
        from ray.exceptions import RayActorError, RayTaskError

        batch = _batch(batch_size, chunk_size)
        payloads = {index: self.ray.put(payload)
                    for index, payload in _payloads(groups, tasks, batch, derivative_metrics).items()}
        runs = {index: GroupRun(batch_size=batch, workers=self.workers) for index in payloads}
        if on_status:
            on_status(f"ray: {self.workers} workers")
        started: dict[int, float] = {}  # group -> when its first chunk was handed out
        queue = WorkQueue(tasks, loss_limit(self.workers, max((len(t.values) for t in tasks), default=1)))
        running: dict[Any, tuple[int, Attempt]] = {}  # result reference -> (actor slot, chunk)
        while True:
            idle = sorted(set(range(self.workers)) - {slot for slot, _ in running.values()})
            for slot in idle:
                attempt = queue.next()
                if attempt is None:
                    break
                task = attempt.task
                started.setdefault(task.group, time.perf_counter())
                reference = self.actors[slot].run.remote(task.group, payloads[task.group], task.values)
                running[reference] = (slot, attempt)
            if not running:
                return runs
            done, _ = self.ray.wait(list(running), num_returns=1)
            for reference in done:
                slot, attempt = running.pop(reference)
                task = attempt.task
                try:
                    columns, info = self.ray.get(reference)
                except (RayActorError, RayTaskError) as error:
                    reason = _ray_reason(error)
                    if isinstance(error, RayActorError):
                        self._replace(slot)
                    _rerun_lost(queue, attempt, reason, "Ray actors", on_chunk, on_points, on_status)
                    continue
                queue.finished()
                _finish_chunk(runs[task.group], task, columns, info, batch, started[task.group], on_chunk, on_points)

    def _replace(self, slot: int) -> None:
        """A new actor in place of a dead one."""
        self.ray.kill(self.actors[slot], no_restart=True)
        self.actors[slot] = self.worker_class.remote(self.cache)

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor, no_restart=True)


def _check_reachable(address: str | None, timeout: float = 10.0) -> None:
    """Raise :class:`ExecutorUnavailable` if ``address`` (``host:port`` or
    ``ray://host:port``) takes no TCP connection within ``timeout`` seconds: ``ray.init``
    itself retries an unreachable cluster without end. ``None`` and ``"auto"`` are left to
    Ray, which refuses them at once when no cluster runs here."""
    if not address or address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ExecutorUnavailable(f"expected host:port or ray://host:port, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as error:
        raise ExecutorUnavailable(f"cannot reach the Ray cluster at {address!r}: {error.strerror or error}") from None


def _ray_reason(error: Exception) -> str:
    """One line on why a Ray actor's call failed."""
    from ray.exceptions import RayActorError

    if isinstance(error, RayActorError):
        return "the Ray actor died (its process or node was lost)"
    cause = getattr(error, "cause", None)
    return f"the worker raised {type(cause).__name__}: {cause}".splitlines()[0] if cause is not None else \
        f"the worker raised {str(error).splitlines()[0]}"


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
        """The columns of the chunk ``values`` of ``group`` (compiled from ``payload`` on its
        first chunk) and how it ran."""
        inject_fault(values)
        compile_seconds = 0.0
        if group not in self.runners:
            mechanism, settings, paths, resolver, batch, derivative_metrics = payload
            self.runners[group], compile_seconds = chunk_runner(mechanism, settings, paths, batch, derivative_metrics,
                                                                resolver=resolver)
        start = time.perf_counter()
        columns = self.runners[group](values)
        return columns, {"seconds": time.perf_counter() - start, "worker": self.name, "compile_seconds": compile_seconds}

