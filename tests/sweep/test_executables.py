"""The cache of traced chunk functions: a second process-level compile loads instead of
tracing, gives the same results, and a change of anything the program depends on misses."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sweep import executables
from sweep.run import enable_compilation_cache


class Outcome(NamedTuple):
    metrics: dict
    total: jax.Array


@pytest.fixture
def cache(tmp_path):
    enable_compilation_cache(tmp_path)  # the conftest restores the session's settings after the test
    return tmp_path / "executables"


def test_second_compile_loads_the_stored_program(cache):
    traces = []

    def function(parameters, values):
        traces.append(1)  # counts Python traces
        return Outcome({"scaled": parameters["scale"] * values}, jnp.sum(values)[None])

    args = ({"scale": jnp.asarray(2.0)}, jax.ShapeDtypeStruct((3,), jnp.float64))
    key = executables.executable_key("test", 3)
    device = jax.devices()[0]
    first = executables.compile_cached(key, function, args, device)
    assert len(traces) == 1 and len(list(cache.glob("*.bin"))) == 1
    second = executables.compile_cached(key, function, args, device)
    assert len(traces) == 1  # loaded, not traced
    values = jnp.arange(3.0)
    a, b = first({"scale": jnp.asarray(3.0)}, values), second({"scale": jnp.asarray(3.0)}, values)
    assert isinstance(b, Outcome)
    np.testing.assert_array_equal(b.metrics["scaled"], 3.0 * np.arange(3.0))
    np.testing.assert_array_equal(a.total, b.total)


def test_key_follows_every_part_and_the_sources():
    assert executables.executable_key("a", 1) != executables.executable_key("a", 2)
    assert executables.executable_key("a", 1) == executables.executable_key("a", 1)
    assert len(executables.source_digest()) == 64


def test_without_the_cache_nothing_is_stored(tmp_path):
    jax.config.update("jax_compilation_cache_dir", None)
    assert executables.cache_folder() is None
    call = executables.compile_cached(executables.executable_key("off"), lambda x: x + 1.0,
                                      (jax.ShapeDtypeStruct((2,), jnp.float64),), jax.devices()[0])
    np.testing.assert_array_equal(call(jnp.zeros(2)), np.ones(2))
