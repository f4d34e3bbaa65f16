"""The benchmark harness: interleaved timings with warm-up, a Markdown table of them, the
command line every script shares, and every case of every script answering ``--help``."""

import importlib
import pathlib
import subprocess
import sys

import pytest

from benchmarks import harness

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = ("throughput", "overhead", "gradients", "work_precision", "compile_profile", "flexible_exudyn", "accuracy",
           "peers")


def test_interleaved_timing_of_a_trivial_function_yields_a_table():
    calls = []
    arms = {"a": lambda: calls.append("a") or 1.0, "b": lambda: calls.append("b") or 2.0}
    timings = harness.interleaved(arms, repeats=3, warmup=1)
    # one warm-up round, then three rounds with every arm once in turn
    assert calls == ["a", "b"] * 4
    assert [timing.result for timing in timings.values()] == [1.0, 2.0]
    for timing in timings.values():
        assert len(timing.wall) == len(timing.cpu) == 3
        assert 0.0 <= timing.best <= timing.median and 0.0 <= timing.best_cpu <= timing.median_cpu
    table = harness.timing_table(timings, unit="us", scale=1e6).splitlines()
    assert table[0].startswith("| arm | best wall (us) |") and table[1].startswith("|---|---:|")
    assert [row.split(" | ")[0] for row in table[2:]] == ["| a", "| b"]
    assert table[2].split(" | ")[5] == "1.000"  # the first arm against itself


def test_markdown_table_and_header():
    assert harness.markdown_table(["x", "y"], [["a", 1]]) == "| x | y |\n|---|---:|\n| a | 1 |"
    with pytest.raises(ValueError):
        harness.markdown_table(["x", "y"], [["a"]])
    with pytest.raises(ValueError):
        harness.interleaved({"a": lambda: None}, repeats=0)
    line = harness.header(["prog", "--case", "planar"])
    assert line.startswith("Command: `") and "--case planar`" in line and "load average" in line
    assert f"{harness.machine()['cpus']} CPUs" in line


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_case_of_every_script_has_help(script, capsys):
    module = importlib.import_module(f"benchmarks.{script}")
    assert module.CASES and harness.main(module.CASES, module.__doc__, ["--list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == list(module.CASES)
    for case in module.CASES:
        assert harness.main(module.CASES, module.__doc__, ["--case", case, "--help"]) == 0
        assert "usage:" in capsys.readouterr().out
    assert harness.main(module.CASES, module.__doc__, []) == 2  # no case named


def test_a_script_runs_as_a_module():
    done = subprocess.run([sys.executable, "-m", "benchmarks.compile_profile", "--list"], cwd=REPOSITORY,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "profile"
