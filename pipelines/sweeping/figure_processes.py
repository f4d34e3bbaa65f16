"""Helper processes that draw a sweep's figures while the sweep is still solving.

Importing matplotlib and pandas and drawing three figures took 1.7 s of a 5 s warm 16-point
``clearance sweep``, after the last point had solved. ``clearance sweep`` therefore starts
these processes (spawned: a forked JAX process is unsafe) as soon as its config is loaded,
so that their imports overlap the solve; :func:`pipelines.sweeping.study.write_sweep` then
hands each figure to them as one job (:func:`pipelines.sweeping.plots.render_figure`) and
waits for all. They import only the plotting module, never the simulator or JAX
(``tests/pipelines/sweeping/test_figure_processes.py`` checks it).
"""

from __future__ import annotations

import atexit
import concurrent.futures
import multiprocessing
import os
import signal
import sys
from collections.abc import Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

DEFAULT_WORKERS = 2  # the default sweep draws three figures; the longest takes half the time


def _yield_to_the_solve() -> None:
    """Run this process only on a core the solve leaves idle: its imports are meant to fill
    idle time, not to slow the sweep's workers. Linux's ``SCHED_IDLE`` policy does that; a
    niceness does not quite: at nice 10 the imports still took about a tenth of the busy
    cores, and the warm 256-point Flores sweep's chunks ran 11 % slower (in-run 131-138
    against 152-155 sims/s, wall 6.7-7.2 against 6.5-7.0 s, three runs each, interleaved).
    Elsewhere the lowest niceness (where there is one: not on Windows)."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        if hasattr(os, "nice"):
            os.nice(19)


def _import_plotting() -> None:
    _yield_to_the_solve()
    # Ctrl-C reaches every process of the terminal's group: the command reports it in one
    # line and closes these processes, which must not print a traceback of their own
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # as a sweep worker (sweep.execute): the figures are written and reported before the
    # process exits, so it skips the interpreter's teardown (0.2 s the command waited for)
    atexit.register(os._exit, 0)
    import pipelines.sweeping.plots  # noqa: F401


def imported(module: str) -> bool:
    """Whether this process has imported ``module`` (what a test asks a helper process)."""
    return module in sys.modules


def _render(path: Path, figure: str, arguments: tuple) -> None:
    # here, and not plots.render_figure itself, so that the driver submitting it never
    # imports matplotlib
    from .plots import render_figure

    render_figure(path, figure, arguments)


class FigureProcesses:
    """``workers`` spawned processes that have imported the plotting module (started now)."""

    def __init__(self, workers: int = DEFAULT_WORKERS):
        self.pool = concurrent.futures.ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn"), initializer=_import_plotting)
        # a process pool spawns a process per submitted job while none is idle: start them all
        for _ in range(workers):
            self.pool.submit(int)

    def render(self, jobs: Sequence[tuple[Path, str, tuple]]) -> None:
        """Draw every ``(path, figure, arguments)`` job (:func:`~pipelines.sweeping.plots.render_figure`)
        and wait for all; then raise the first job's error, if any. Jobs that a helper
        process could not run because it died (a broken pool: killed, out of memory) are
        drawn here instead, so that a sweep's figures never depend on the helpers."""
        try:
            futures = [self.pool.submit(_render, *job) for job in jobs]
        except BrokenProcessPool:
            futures = []
        concurrent.futures.wait(futures)
        errors = [future.exception() for future in futures]
        for error in errors:
            if error is not None and not isinstance(error, BrokenProcessPool):
                raise error
        leftover = [job for job, error in zip(jobs, errors) if isinstance(error, BrokenProcessPool)] if futures else jobs
        if leftover:
            from .plots import render_figure

            for job in leftover:
                render_figure(*job)

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)

    def __enter__(self) -> FigureProcesses:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
