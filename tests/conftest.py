"""Each test process (one per xdist worker) runs many test files; keep it lean, its settings
its own, and its compiles short.

- JAX's persistent compilation cache: the sweep command turns it on for the rest of its
  process (``sweep.run.enable_compilation_cache``). Run in-process by a test, that made
  every later test serialise each executable it compiled, and XLA's serialisation
  segfaulted late in the suite (jaxlib 0.10.2). After each test the cache settings go back
  to the session's (a module-scoped fixture may have run the command before a test's own
  fixtures), and the suite's cache folder is a fresh temporary one.
- Compiled executables: freed at the end of each module.
- XLA's backend optimisation level 0 (``SUITE_XLA_FLAGS``): the suite spends most of its
  time compiling programs it then runs for well under a second. Level 0 skips LLVM's
  optimisation passes: compiles are shorter and the runs somewhat slower
  (docs/BENCHMARKS.md, "Test suite"). The programs (the HLO) are the ones users run; only
  their machine code is less optimised. Added to ``XLA_FLAGS`` beside the package's own CPU
  flags (``model.configure()``, as the command line applies them) before the first
  computation, and inherited by the processes tests start."""

import collections
import gc

import jax
import pytest

import model
from model._config import add_xla_flags

SUITE_XLA_FLAGS = ("--xla_backend_optimization_level=0",)
model.configure()  # float64 and the package's CPU flags, as the command line sets them
add_xla_flags(SUITE_XLA_FLAGS)  # before this process's first computation

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


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects: the added marks count there
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every ``validation`` test is also ``slow``: the fast tier (``-m "not slow"``, whose
    ``-m`` replaces the default ``-m 'not validation'``) is a part of the default run, not
    a selection that takes in the validations without a ``slow`` mark.

    Then the costliest files first: files with more ``slow`` tests (each over 10 s of
    compilation and solving) before the others, collection order otherwise. The two
    workers take a file at a time as they free up (``--dist loadfile``, with xdist's own
    reordering by test count turned off in ``pyproject.toml``); with the long files first,
    the run ends on short ones instead of one worker finishing a long file alone."""
    slow_per_file = collections.Counter(item.path for item in items if item.get_closest_marker("slow"))
    for item in items:
        if item.get_closest_marker("validation") and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: -slow_per_file[item.path])  # stable: collection order otherwise
