"""The suite's CPU record (``CLEARANCE_TEST_CPU``, tests/conftest.py) and its summary
(``benchmarks/suite_cpu.py``): one row per test, its tier and outcome; the sums per tier;
the last row of a test recorded twice wins."""

import os
import subprocess
import sys

import pytest

from benchmarks import suite_cpu
from tests.helpers import REPOSITORY

EXAMPLE = """
import pytest

@pytest.mark.slow
def test_slow():
    sum(range(10**6))

def test_fast():
    pass

@pytest.mark.validation
def test_failing_validation():
    assert False
"""
COLUMNS = ["nodeid", "file", "tier", "outcome", "cpu_s", "children_cpu_s", "wall_s", "worker"]


def test_a_run_appends_one_row_per_test_and_the_tiers_sum_them(tmp_path):
    (tmp_path / "test_example.py").write_text(EXAMPLE)
    record = tmp_path / "cpu.csv"
    # the suite's hooks loaded as a plugin, on a file outside the suite; every tier selected
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-p", "no:cacheprovider",
                           "-c", str(REPOSITORY / "pyproject.toml"), "--rootdir", str(tmp_path), "-o", "addopts=",
                           str(tmp_path / "test_example.py")],
                          cwd=REPOSITORY, capture_output=True, text=True, timeout=300,
                          env=os.environ | {"CLEARANCE_TEST_CPU": str(record), "PYTHONPATH": str(REPOSITORY)})
    assert done.returncode == 1 and "1 failed, 2 passed" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    lines = record.read_text().splitlines()
    assert lines[0].split(",") == COLUMNS and len(lines) == 4
    # the same test recorded again (a file run twice): its last row counts
    rerun = lines[1].split(",")
    rerun[COLUMNS.index("cpu_s")], rerun[COLUMNS.index("children_cpu_s")] = "100.0", "20.0"
    record.write_text("\n".join([*lines, ",".join(rerun)]) + "\n")
    table = suite_cpu.load([str(record)]).set_index("file")
    assert sorted(table["tier"]) == ["fast", "slow", "validation"] and len(table) == 3
    outcome = dict(zip(table["tier"], table["outcome"]))
    assert outcome == {"fast": "passed", "slow": "passed", "validation": "call failed"}
    assert (table["cpu_s"] >= 0).all() and (table["wall_s"] > 0).all()
    tiers = suite_cpu.tiers(table).set_index("selection")
    fast = table.loc[table["tier"] == "fast", "total_s"].sum()
    default = fast + table.loc[table["tier"] == "slow", "total_s"].sum()
    assert rerun[2] in ("fast", "slow") and table["total_s"].max() == pytest.approx(120.0)
    assert tiers["CPU (min)"].tolist()[:2] == pytest.approx([fast / 60, default / 60])
    assert tiers["tests"].tolist() == [1, 2, 1]
