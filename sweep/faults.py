"""Lost workers: which chunks to run again, and the points that keep killing their workers.

A worker process or Ray actor can die in the middle of a chunk (the kernel's out-of-memory
killer, a pre-empted node, a crash in native code) or raise while running it. The executors
(:mod:`sweep.execute`) hand such a chunk back to :class:`WorkQueue`, which decides:

- a chunk that has lost fewer than ``1 + retries`` workers runs again, whole, on a fresh
  worker (a death unrelated to its points, such as a pre-emption, costs one rerun);
- after that it is *suspect*: it is split in halves (bisection), each half runs once, and a
  suspect half that loses its worker too is split again, down to single points;
- a single suspect point that loses its worker is given up: it becomes a failed point whose
  ``status`` says why (``worker lost: ...``), and the rest of the sweep goes on.

A poison point in a chunk of ``n`` points thus costs ``1 + retries + ceil(log2 n)`` workers
(bisection, as in delta debugging: Zeller & Hildebrandt, IEEE TSE 28, 2002). So that a
failure that no split can isolate (every worker dies on start, the cluster is gone) cannot
run forever, :class:`WorkersLost` ends the sweep once ``max_losses_in_a_row`` workers are
lost without any chunk finishing between them (:func:`loss_limit`: more than a bisection
down to one point, plus every worker dying at once, as when a node goes).

The queue is plain Python: no JAX, no processes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Generic, TypeVar

import numpy as np

Task = TypeVar("Task")

RETRIES = 1  # reruns of a whole chunk whose worker died before it is split
FAULT_VARIABLE = "CLEARANCE_SWEEP_FAULT"  # fault injection for tests (:func:`inject_fault`)


class WorkersLost(RuntimeError):
    """Workers kept dying without finishing a chunk: no replacement could do the work."""


def loss_limit(workers: int, largest_chunk: int, retries: int = RETRIES) -> int:
    """Workers that may be lost in a row before the sweep gives up: those a poison point
    costs in the largest chunk (``1 + retries + ceil(log2 n)``) plus two per worker."""
    return 1 + retries + int(np.ceil(np.log2(max(largest_chunk, 1)))) + 2 * max(workers, 1)


@dataclasses.dataclass
class Attempt(Generic[Task]):
    """A chunk (or part of one) on its way to a worker, with the workers it has cost so far."""

    task: Task
    losses: int = 0  # workers lost while running this chunk or the chunk it was split from
    suspect: bool = False  # split from a chunk that kept losing its workers
    last_reason: str = ""


def split_task(task, size: int) -> tuple:
    """The two halves of a :class:`sweep.execute.ChunkTask`-like ``task`` (``group``,
    ``positions``, ``values``), the first ``size`` points and the rest."""
    return (dataclasses.replace(task, positions=task.positions[:size], values=task.values[:size]),
            dataclasses.replace(task, positions=task.positions[size:], values=task.values[size:]))


class WorkQueue(Generic[Task]):
    """Chunks waiting for a worker, in order; a chunk whose worker was lost comes back
    through :meth:`lost` (rerun, split or given up)."""

    def __init__(self, tasks: Iterable[Task], max_losses_in_a_row: int, retries: int = RETRIES):
        self.waiting: deque[Attempt[Task]] = deque(Attempt(task) for task in tasks)
        self.retries = retries
        self.max_losses_in_a_row = max_losses_in_a_row
        self.losses = 0  # every worker lost
        self.losses_in_a_row = 0

    def __len__(self) -> int:
        return len(self.waiting)

    def next(self) -> Attempt[Task] | None:
        """The next chunk to run, or ``None`` when none waits."""
        return self.waiting.popleft() if self.waiting else None

    def finished(self) -> None:
        """A chunk came back: the workers are able to work."""
        self.losses_in_a_row = 0

    def lost(self, attempt: Attempt[Task], reason: str) -> list[tuple[Task, str]]:
        """``attempt``'s worker died (or raised) with ``reason``: queue it again, whole or in
        halves (the front of the queue, so that a poison point is isolated early), or give
        it up; returns the given-up single-point tasks with their status.

        Raises :class:`WorkersLost` after ``max_losses_in_a_row`` losses with no chunk finished."""
        self.losses += 1
        self.losses_in_a_row += 1
        if self.losses_in_a_row >= self.max_losses_in_a_row:
            raise WorkersLost(f"{self.losses_in_a_row} workers in a row were lost without finishing a chunk "
                              f"(last: {reason})")
        losses = attempt.losses + 1
        points = len(attempt.task.values)
        if not attempt.suspect and losses <= self.retries:
            self.waiting.appendleft(Attempt(attempt.task, losses, False, reason))
            return []
        if points == 1:
            return [(attempt.task, f"worker lost: {reason} ({losses} workers lost on chunks holding this point)")]
        halves = split_task(attempt.task, points // 2)
        self.waiting.extendleft(Attempt(half, losses, True, reason) for half in reversed(halves))
        return []


def exit_reason(exitcode: int | None) -> str:
    """How a worker process ended, from ``multiprocessing.Process.exitcode``."""
    if exitcode is None:
        return "the worker process stopped answering"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the worker process was killed by {name}"
    return f"the worker process exited with status {exitcode}"


def inject_fault(values: np.ndarray) -> None:
    """Kill this worker process, as the kernel's out-of-memory killer would (``SIGKILL``),
    when ``$CLEARANCE_SWEEP_FAULT`` asks for it; for tests of the executors' recovery.

    The variable holds JSON ``{"row": [v, ...], "times": n, "count": FILE}``: the worker dies
    when a row of the chunk's ``values`` equals ``row`` (to 1e-12 relative) and ``FILE``
    (one line per death, shared by every worker) has fewer than ``n`` lines (``n < 0``:
    every time, a poison point). Without the variable: nothing."""
    spec = os.environ.get(FAULT_VARIABLE)
    if not spec:
        return
    fault = json.loads(spec)
    row = np.asarray(fault["row"], dtype=np.float64)
    values = np.asarray(values, dtype=np.float64).reshape(-1, row.size)
    if not np.any(np.all(np.isclose(values, row, rtol=1e-12, atol=0.0), axis=1)):
        return
    count = Path(fault["count"])
    deaths = len(count.read_text().splitlines()) if count.exists() else 0
    if 0 <= int(fault["times"]) <= deaths:
        return
    with open(count, "a") as stream:
        stream.write(f"{os.getpid()}\n")
    os.kill(os.getpid(), signal.SIGKILL)
