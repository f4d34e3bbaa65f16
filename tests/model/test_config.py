"""The process-wide set-up: importing ``model`` turns float64 on and leaves ``XLA_FLAGS``
alone; ``model.configure()`` (the command line's and the suite's) adds the CPU flags."""

import os
import subprocess
import sys

import pytest

from model._config import CPU_FLAGS, add_xla_flags

PROBE = (
    "import os, model, jax, jax.numpy as jnp;"
    "{configure}"
    "print(jnp.ones(3).dtype, float(jax.jit(lambda x: (x * x).sum())(jnp.arange(3.0))));"
    "print(os.environ.get('XLA_FLAGS', ''))"
)


def _probe(xla_flags: str | None, configure: bool = True) -> list[str]:
    env = {key: value for key, value in os.environ.items() if key != "XLA_FLAGS"}
    if xla_flags is not None:
        env["XLA_FLAGS"] = xla_flags
    code = PROBE.format(configure="model.configure();" if configure else "")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr  # XLA aborts the process on a flag it does not know
    values, flags = done.stdout.split("\n")[:2]
    return [values, flags]


def test_import_sets_float64_and_leaves_xla_flags_alone():
    values, flags = _probe(None, configure=False)
    assert values == "float64 5.0"
    assert flags == ""


def test_configure_adds_flags_xla_accepts():
    values, flags = _probe(None)
    assert values == "float64 5.0"
    assert flags.split() == list(CPU_FLAGS)


def test_the_users_xla_flags_are_kept():
    _, flags = _probe("--xla_cpu_use_fusion_emitters=true --xla_cpu_multi_thread_eigen=false")
    assert flags.split() == ["--xla_cpu_use_fusion_emitters=true", "--xla_cpu_multi_thread_eigen=false",
                             *CPU_FLAGS[1:]]


def test_add_xla_flags_appends_once(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x")
    add_xla_flags(["--xla_a=1", "--xla_dump_to=/tmp/y"])
    add_xla_flags(["--xla_a=2"])
    assert os.environ["XLA_FLAGS"].split() == ["--xla_dump_to=/tmp/x", "--xla_a=1"]
