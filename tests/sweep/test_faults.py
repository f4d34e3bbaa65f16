"""The work queue of lost workers (sweep.faults): a chunk whose worker died runs again,
then is bisected down to the point that keeps killing its workers, which is given up with
its reason; workers that die without end stop the sweep."""

import dataclasses

import numpy as np
import pytest

from sweep.faults import RETRIES, WorkersLost, WorkQueue, exit_reason, loss_limit


@dataclasses.dataclass
class Task:
    group: int
    positions: np.ndarray
    values: np.ndarray


def chunk(points) -> Task:
    points = np.asarray(points)
    return Task(0, points, points[:, None].astype(float))


def run(queue: WorkQueue, poison: set[int], transient: list[int]) -> tuple[list[int], list[tuple[Task, str]], int]:
    """Drain ``queue`` on one worker: a chunk holding a ``poison`` point kills it every
    time, one holding a point of ``transient`` once (the point is then removed)."""
    finished, given_up, deaths = [], [], 0
    while (attempt := queue.next()) is not None:
        points = set(attempt.task.positions.tolist())
        hit = points & (poison | set(transient))
        if hit:
            deaths += 1
            for point in hit & set(transient):
                transient.remove(point)
            given_up += queue.lost(attempt, "the worker process was killed by SIGKILL")
        else:
            queue.finished()
            finished += sorted(points)
    return finished, given_up, deaths


def test_a_chunk_that_lost_its_worker_once_runs_again_whole():
    queue = WorkQueue([chunk(range(8)), chunk(range(8, 16))], max_losses_in_a_row=loss_limit(1, 8))
    finished, given_up, deaths = run(queue, poison=set(), transient=[3])
    assert deaths == 1 and not given_up
    assert sorted(finished) == list(range(16))


def test_a_poison_point_is_isolated_by_bisection_and_the_rest_completes():
    size = 16
    queue = WorkQueue([chunk(range(size)), chunk(range(size, 2 * size))], max_losses_in_a_row=loss_limit(1, size))
    finished, given_up, deaths = run(queue, poison={5}, transient=[])
    assert sorted(finished) == sorted(set(range(2 * size)) - {5})  # every other point, once
    assert len(finished) == 2 * size - 1
    assert [task.positions.tolist() for task, _ in given_up] == [[5]]
    assert given_up[0][1].startswith("worker lost: the worker process was killed by SIGKILL")
    assert deaths == 1 + RETRIES + int(np.log2(size))  # whole chunk, then one death per halving


def test_two_poison_points_are_both_given_up():
    queue = WorkQueue([chunk(range(8))], max_losses_in_a_row=loss_limit(1, 8))
    finished, given_up, _ = run(queue, poison={0, 7}, transient=[])
    assert sorted(task.positions[0] for task, _ in given_up) == [0, 7]
    assert sorted(finished) == list(range(1, 7))


def test_workers_that_never_finish_anything_stop_the_sweep():
    queue = WorkQueue([chunk([n]) for n in range(50)], max_losses_in_a_row=loss_limit(2, 1))
    with pytest.raises(WorkersLost, match="in a row"):
        run(queue, poison=set(range(50)), transient=[])


def test_exit_reasons():
    assert exit_reason(-9) == "the worker process was killed by SIGKILL"
    assert exit_reason(3) == "the worker process exited with status 3"
