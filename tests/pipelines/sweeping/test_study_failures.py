"""A sweep that stops ends in one line that says what is stored and how to resume: Ctrl-C,
workers that could not be replaced, a full disk. An executor that stores one chunk and then
fails stands in for the real ones (which tests/sweep/test_execute.py and test_ray.py kill),
so nothing here compiles a solve."""

import contextlib
import errno
import json

import numpy as np
import pytest

import sweep.store
from pipelines.cli import main
from pipelines.errors import SweepFailed, SweepInterrupted
from pipelines.sweeping.study import load_sweep, run_sweep
from sweep.faults import WorkersLost
from sweep.run import STEP_SLOTS
from tests.helpers import write_sweep


class StopsAfterOneChunk:
    """Stores the first chunk (made-up metrics), then raises ``error`` (before the second
    chunk, or while storing it when ``store_second``)."""

    name = "stub"

    def __init__(self, error: BaseException, store_second: bool = False):
        self.error, self.store_second = error, store_second

    def run(self, groups, tasks, batch_size, chunk_size, derivative_metrics, on_chunk, on_points=None, on_status=None):
        for number, task in enumerate(tasks[:2]):
            if number == 1 and not self.store_second:
                raise self.error
            size = len(task.values)
            on_chunk(task, {"pin.max_normal_force": np.ones(size), "steps": np.ones(size, int),
                            "rejected_steps": np.zeros(size, int), "result": np.zeros(size, int),
                            STEP_SLOTS: np.array([float(size)])},
                     {"seconds": 0.0, "worker": "stub", "batch_size": size})
        raise AssertionError("the stub should have stopped")


class NoFigureProcesses(contextlib.nullcontext):
    """In place of the command's helper processes (they start at idle priority)."""


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return write_sweep(tmp_path_factory.mktemp("failures"), 'design = "grid"',
                       'path = "joints.pin.clearance"\nvalues = ["0.1 mm", "0.2 mm"]',
                       'path = "joints.pin.contact.restitution"\nvalues = [0.5, 0.9]')


def stored_points(out) -> list[int]:
    manifest = json.loads((out / "chunks" / "manifest.json").read_text())
    return [point for chunk in manifest["chunks"] for point in chunk["points"]]


@pytest.mark.parametrize("error, kind, reason", [
    (KeyboardInterrupt(), SweepInterrupted, "interrupted"),
    (WorkersLost("9 workers in a row were lost without finishing a chunk"), SweepFailed, "9 workers in a row"),
])
def test_a_stopped_sweep_keeps_its_chunks_and_says_how_to_resume(config, tmp_path, error, kind, reason):
    design, base = load_sweep(config)
    out = tmp_path / "out"
    with pytest.raises(kind) as stopped:
        run_sweep(design, base, progress=False, chunk_size=2, out_dir=out, executor=StopsAfterOneChunk(error))
    message = str(stopped.value)
    assert len(message.splitlines()) == 1 and message.startswith(reason)
    assert f"2 of 4 points are stored in {out / 'chunks'}" in message
    assert f"clearance sweep {config} --out {out} --resume" in message
    assert len(stored_points(out)) == 2


def test_a_full_disk_while_storing_a_chunk_is_one_line(config, tmp_path, monkeypatch):
    written = sweep.store.write_parquet

    def full_after_one(target, frame):
        if "chunk-00001" in str(target):
            raise OSError(errno.ENOSPC, "No space left on device", str(target))
        written(target, frame)

    monkeypatch.setattr(sweep.store, "write_parquet", full_after_one)
    design, base = load_sweep(config)
    out = tmp_path / "out"
    with pytest.raises(SweepFailed, match=r"^cannot write .*chunk-00001\.parquet: No space left on device; "
                                          r"2 of 4 points are stored"):
        run_sweep(design, base, progress=False, chunk_size=2, out_dir=out,
                  executor=StopsAfterOneChunk(AssertionError(), store_second=True))
    assert len(stored_points(out)) == 2


def test_ctrl_c_on_the_command_line_is_one_line_and_status_130(config, tmp_path, monkeypatch, capsys):
    import pipelines.sweeping.figure_processes as figure_processes
    import pipelines.sweeping.study as study

    monkeypatch.setattr(study, "make_executor", lambda *args, **kwargs: StopsAfterOneChunk(KeyboardInterrupt()))
    monkeypatch.setattr(figure_processes, "FigureProcesses", NoFigureProcesses)  # no figure is drawn
    out = tmp_path / "out"
    code = main(["sweep", str(config), "--out", str(out), "--no-progress", "--chunk-size", "2"])
    err = capsys.readouterr().err.strip()
    assert code == 130 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("error: interrupted; 2 of 4 points are stored") and err.endswith(
        "--resume` (with the same --set options)")
    assert not (out / "results.parquet").exists()
