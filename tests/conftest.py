"""Keep JAX's persistent compilation cache out of the test process.

The sweep command turns the cache on for the rest of its process (``sweep.run.
enable_compilation_cache``). Run in-process by a test, that would make every later test
serialise and write each executable it compiles; the suite would share one folder with
the worker processes of the executor tests, and its results would depend on what earlier
runs left there. Each test gets the cache settings it started with, and the suite's cache
folder is a fresh temporary one."""

import jax
import pytest

CACHE_SETTINGS = (
    "jax_compilation_cache_dir",
    "jax_persistent_cache_min_compile_time_secs",
    "jax_persistent_cache_min_entry_size_bytes",
)


@pytest.fixture(scope="session", autouse=True)
def _private_cache_folder(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLEARANCE_JAX_CACHE", str(tmp_path_factory.mktemp("jax_cache")))
        yield


@pytest.fixture(autouse=True)
def _restore_cache_settings():
    before = {name: getattr(jax.config, name) for name in CACHE_SETTINGS}
    yield
    if any(getattr(jax.config, name) != value for name, value in before.items()):
        for name, value in before.items():
            jax.config.update(name, value)
        from jax._src import compilation_cache  # private: the only way to drop an opened cache

        compilation_cache.reset_cache()
