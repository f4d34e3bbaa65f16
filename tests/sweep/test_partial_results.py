"""The growing results table beside a chunk store (``sweep.store.PartialResults``): one part
per listed chunk; on resume a stray part (a run stopped between the part and the manifest)
goes and a listed chunk's missing part comes back from its stored rows."""

import pandas as pd

from sweep.store import ChunkStore, PartialResults


def label(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.assign(status="ok", doubled=2.0 * rows["value"])


def chunk(points):
    return pd.DataFrame({"point": points, "value": [float(p) for p in points]})


def test_parts_follow_the_listed_chunks(tmp_path):
    partial = PartialResults(tmp_path / "results", label)
    store = ChunkStore(tmp_path / "chunks", "sweep", partial=partial)
    store.add(chunk([0, 1]), {})
    store.add(chunk([4, 5]), {})
    table = pd.read_parquet(tmp_path / "results").sort_values("point").reset_index(drop=True)
    pd.testing.assert_frame_equal(table, label(chunk([0, 1, 4, 5])))

    # stopped between the writes of a third chunk: its part is there, the manifest lacks it;
    # and the part of the second chunk was lost
    partial.write(2, chunk([2, 3]))
    partial.path(1).unlink()
    resumed = ChunkStore(tmp_path / "chunks", "sweep", resume=True, partial=partial)
    assert sorted(path.name for path in (tmp_path / "results").iterdir()) == ["part-00000.parquet", "part-00001.parquet"]
    assert sorted(pd.read_parquet(tmp_path / "results")["point"]) == [0, 1, 4, 5]
    resumed.add(chunk([2, 3]), {})
    assert sorted(pd.read_parquet(tmp_path / "results")["point"]) == [0, 1, 2, 3, 4, 5]

    # a fresh run starts an empty table
    ChunkStore(tmp_path / "chunks", "sweep", partial=partial)
    assert not (tmp_path / "results").exists()
