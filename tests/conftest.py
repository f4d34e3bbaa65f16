"""The whole suite runs in one process; keep that process lean and its settings its own.

- JAX's persistent compilation cache: the sweep command turns it on for the rest of its
  process (``sweep.run.enable_compilation_cache``). Run in-process by a test, that made
  every later test serialise each executable it compiled, and XLA's serialisation
  segfaulted late in the suite (jaxlib 0.10.2). After each test the cache settings go back
  to the session's (a module-scoped fixture may have run the command before a test's own
  fixtures), and the suite's cache folder is a fresh temporary one.
- Compiled executables: freed at the end of each module."""

import gc

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


@pytest.fixture(scope="module", autouse=True)
def _drop_compiled_functions():
    """Free each module's compiled executables when it ends: one process runs the whole
    suite, and XLA aborted or segfaulted while compiling or serialising late in it
    (jaxlib 0.10.2, in a different test each run)."""
    yield
    jax.clear_caches()
    gc.collect()
