"""Chunked runs with a store: a killed sweep resumes without recomputing or losing a finished
chunk and gives the results of an uninterrupted run; a changed sweep is refused; the manifest
lists every chunk with its lockstep efficiency; chunk ordering and efficiency arithmetic."""

import json

import numpy as np
import pandas as pd
import pytest

from pipelines.errors import ConfigError
from sweep import store as store_module
from sweep.chunks import cost_estimates, costliest_first, lockstep_efficiency, split_chunks
from pipelines.sweeping.plan import plan_groups
from pipelines.sweeping.study import PARTIAL_RESULTS, load_sweep, run_sweep
from tests.helpers import write_sweep

# 0.5 ms of the Flores slider-crank: the first impact comes at ~0.2 ms, so every point has a
# contact and the metrics differ from point to point.
SHORT = ['simulation.t_end="0.5 ms"']
CLEARANCES = 'path = "joints.pin.clearance"\nvalues = ["0.1 mm", "0.3 mm", "0.5 mm"]'
RESTITUTIONS = 'path = "joints.pin.contact.restitution"\nvalues = [0.5, 0.9]'
METRICS = ["pin.max_normal_force", "pin.max_penetration", "pin.first_impact_time", "slider.max_abs_ax", "steps"]

pytestmark = pytest.mark.slow  # interrupted and resumed sweeps


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    return write_sweep(tmp_path_factory.mktemp("store"), 'design = "grid"', CLEARANCES, RESTITUTIONS)


@pytest.fixture(scope="module")
def uninterrupted(config):
    return run_sweep(*load_sweep(config, SHORT), batch_size=1, progress=False, executor="local", chunk_size=2)


class SimulatedKill(RuntimeError):
    """The sweep process dies right after a chunk was stored."""


def _killed_after_first_chunk(add):
    def add_then_die(self, rows, info):
        entry = add(self, rows, info)
        raise SimulatedKill(f"simulated kill after chunk {entry['number']}")

    return add_then_die


@pytest.fixture(scope="module")
def killed_and_resumed(config, tmp_path_factory, monkeypatch_module):
    """Run into ``out``, killed right after its first chunk was stored; then resume."""
    out = tmp_path_factory.mktemp("killed")
    design, base = load_sweep(config, SHORT)
    monkeypatch_module.setattr(store_module.ChunkStore, "add", _killed_after_first_chunk(store_module.ChunkStore.add))
    with pytest.raises(SimulatedKill):
        run_sweep(design, base, batch_size=1, progress=False, executor="local", chunk_size=2, out_dir=out)
    monkeypatch_module.undo()
    manifest = json.loads((out / "chunks" / "manifest.json").read_text())
    first = out / "chunks" / manifest["chunks"][0]["file"]
    before = (first.stat().st_mtime_ns, first.read_bytes())
    partial = pd.read_parquet(out / PARTIAL_RESULTS)  # what a reader sees while the sweep is down
    resumed = run_sweep(design, base, batch_size=1, progress=False, executor="local", chunk_size=2, out_dir=out, resume=True)
    return out, manifest, first, before, resumed, partial


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.mark.slow
def test_kill_leaves_one_listed_chunk(killed_and_resumed):
    _, manifest, first, *_ = killed_and_resumed
    assert len(manifest["chunks"]) == 1 and len(manifest["chunks"][0]["points"]) == 2
    assert first.exists()


def test_resume_does_not_recompute_finished_chunks(killed_and_resumed):
    out, manifest, first, before, resumed, _ = killed_and_resumed
    assert (first.stat().st_mtime_ns, first.read_bytes()) == before
    assert resumed.resumed_points == 2
    # the resumed run ran only the other four points, in chunks of its own
    new_chunks = resumed.chunks[1:]
    assert sorted(p for chunk in new_chunks for p in chunk["points"]) == sorted(
        set(range(6)) - set(manifest["chunks"][0]["points"])
    )
    stored = json.loads((out / "chunks" / "manifest.json").read_text())
    assert stored["resumed"] == 1 and stored["chunks"][0] == manifest["chunks"][0]


def test_resumed_results_equal_an_uninterrupted_run(killed_and_resumed, uninterrupted):
    resumed = killed_and_resumed[4].frame
    assert (resumed["status"] == "ok").all() and len(resumed) == 6
    pd.testing.assert_frame_equal(resumed[["point", *METRICS]], uninterrupted.frame[["point", *METRICS]])
    # the points really differ, so a mix-up of rows would show
    assert resumed["pin.max_normal_force"].nunique() == 6


def test_an_interrupted_sweep_leaves_its_finished_rows_readable(killed_and_resumed, uninterrupted):
    _, manifest, _, _, _, partial = killed_and_resumed
    finished = manifest["chunks"][0]["points"]
    assert sorted(partial["point"]) == sorted(finished)
    expected = uninterrupted.frame.set_index("point").loc[sorted(finished)].reset_index()
    pd.testing.assert_frame_equal(partial.sort_values("point").reset_index(drop=True), expected, check_dtype=False)


def test_the_resumed_partial_table_is_the_final_one(killed_and_resumed, uninterrupted):
    out, resumed = killed_and_resumed[0], killed_and_resumed[4]
    grown = pd.read_parquet(out / PARTIAL_RESULTS).sort_values("point").reset_index(drop=True)
    pd.testing.assert_frame_equal(grown, resumed.frame, check_dtype=False)
    pd.testing.assert_frame_equal(resumed.frame, uninterrupted.frame)
    assert sorted(path.name for path in (out / PARTIAL_RESULTS).iterdir()) == [
        f"part-{chunk['number']:05d}.parquet" for chunk in resumed.chunks]


def test_resuming_a_changed_sweep_is_refused(config, killed_and_resumed):
    out = killed_and_resumed[0]
    design, base = load_sweep(config, [*SHORT, "sweep.parameters.1.values=[0.5, 0.8]"])
    with pytest.raises(ConfigError) as error:
        run_sweep(design, base, batch_size=1, progress=False, executor="local", chunk_size=2, out_dir=out, resume=True)
    assert "--resume" in str(error.value) and "different sweep" in str(error.value)
    assert len(str(error.value).splitlines()) == 1
    # the refused run touched nothing
    assert len(json.loads((out / "chunks" / "manifest.json").read_text())["chunks"]) == 3


def test_manifest_lists_every_chunk_with_provenance(killed_and_resumed):
    out = killed_and_resumed[0]
    manifest = json.loads((out / "chunks" / "manifest.json").read_text())
    assert len(manifest["fingerprint"]) == 64 and manifest["format"] == store_module.STORE_FORMAT
    assert manifest["versions"]["jax"] and manifest["versions"]["equinox"] and manifest["git_revision"]
    points = [p for chunk in manifest["chunks"] for p in chunk["points"]]
    assert sorted(points) == list(range(6))
    for chunk in manifest["chunks"]:
        rows = pd.read_parquet(out / "chunks" / chunk["file"])
        assert rows["point"].tolist() == chunk["points"]
        assert 0.0 < chunk["lockstep_efficiency"] <= 1.0 and chunk["steps_max"] >= chunk["steps_mean"] > 0


def test_fresh_run_replaces_an_old_store(config, tmp_path):
    (tmp_path / "chunks").mkdir()
    (tmp_path / "chunks" / "manifest.json").write_text('{"fingerprint": "x", "chunks": []}')
    (tmp_path / "chunks" / "chunk-00007.parquet").write_text("stale")
    design, base = load_sweep(config, [*SHORT, "sweep.parameters.0.values=[\"0.5 mm\"]"])
    study = run_sweep(design, base, batch_size=1, progress=False, executor="local", chunk_size=2, out_dir=tmp_path)
    assert not (tmp_path / "chunks" / "chunk-00007.parquet").exists()
    assert (study.frame["status"] == "ok").all() and study.resumed_points == 0


def test_chunks_are_dealt_costliest_first(config):
    """Costliest first: the livelier contact (e = 0.9 before 0.5), then the stiffer one (a
    smaller clearance, shorter contact period). Dealt chunks keep that order and share the
    cost more evenly than consecutive runs would."""
    group = plan_groups(*load_sweep(config, SHORT))[0]
    costs = cost_estimates(group)
    order = costliest_first(group)
    assert group.values[order].tolist() == [[c * 1e-3, e] for e in (0.9, 0.5) for c in (0.1, 0.3, 0.5)]
    assert np.all(np.diff(costs[order]) < 0)
    chunks = split_chunks(order, 2)
    assert [len(chunk) for chunk in chunks] == [2, 2, 2]
    assert sorted(np.concatenate(chunks).tolist()) == list(range(6))
    assert all(np.all(np.diff(costs[chunk]) <= 0) for chunk in chunks)
    consecutive = [order[first : first + 2] for first in range(0, 6, 2)]
    assert np.ptp([costs[chunk].sum() for chunk in chunks]) < np.ptp([costs[chunk].sum() for chunk in consecutive])
    assert [len(chunk) for chunk in split_chunks(order, 4)] == [3, 3]  # as few chunks as the size allows


def test_lockstep_efficiency_arithmetic():
    assert lockstep_efficiency([100, 100, 100, 100], 2) == 1.0
    assert lockstep_efficiency([100, 300], 1) == 1.0
    assert lockstep_efficiency([100, 300], 2) == pytest.approx(400 / 600)
    assert lockstep_efficiency([100, 300, 200], 2) == pytest.approx(600 / (600 + 400))  # padded last batch pays too
