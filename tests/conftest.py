"""Keep JAX's persistent compilation cache out of the test process.

The sweep command turns the cache on for the rest of its process (``sweep.run.
enable_compilation_cache``). Run in-process by a test, that would make every later test
serialise and write each executable it compiles, and XLA's serialisation segfaulted in
this process late in the suite (jaxlib 0.10.2). After each test the cache settings go
back to those the session started with (a module-scoped fixture may have run the command
before a test's own fixtures), and the suite's cache folder is a fresh temporary one."""

import jax
import pytest

CACHE_SETTINGS = (
    "jax_compilation_cache_dir",
    "jax_persistent_cache_min_compile_time_secs",
    "jax_persistent_cache_min_entry_size_bytes",
)


@pytest.fixture(scope="session", autouse=True)
def _session_cache_settings(tmp_path_factory):
    settings = {name: getattr(jax.config, name) for name in CACHE_SETTINGS}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLEARANCE_JAX_CACHE", str(tmp_path_factory.mktemp("jax_cache")))
        yield settings


@pytest.fixture(autouse=True)
def _restore_cache_settings(_session_cache_settings):
    yield
    if any(getattr(jax.config, name) != value for name, value in _session_cache_settings.items()):
        for name, value in _session_cache_settings.items():
            jax.config.update(name, value)
        from jax._src import compilation_cache  # private: the only way to drop an opened cache

        compilation_cache.reset_cache()
