"""Each test process (one per xdist worker) runs many test files; keep it lean, its settings
its own, and its compiles short.

- JAX's persistent compilation cache: the sweep command turns it on for the rest of its
  process (``sweep.run.enable_compilation_cache``). Run in-process by a test, that made
  every later test serialise each executable it compiled, and XLA's serialisation
  segfaulted late in the suite (jaxlib 0.10.2). After each test the cache settings go back
  to the session's (a module-scoped fixture may have run the command before a test's own
  fixtures), and the suite's cache folder is a fresh temporary one.
- Compiled executables: kept from one module to the next (a later module's equal program,
  and every eager operation it repeats, is not compiled again) while the process holds less
  than ``CACHE_BYTES`` of memory; past that, freed at the end of each module.
- XLA's backend optimisation level 0 (``SUITE_XLA_FLAGS``): the suite spends most of its
  time compiling programs it then runs for well under a second. Level 0 skips LLVM's
  optimisation passes: compiles are shorter and the runs somewhat slower
  (docs/BENCHMARKS.md, "Test suite"). The programs (the HLO) are the ones users run; only
  their machine code is less optimised. Added to ``XLA_FLAGS`` beside the package's own CPU
  flags (``model.configure()``, as the command line applies them) before the first
  computation, and inherited by the processes tests start.
- CPU seconds per test, opt in (``CLEARANCE_TEST_CPU=FILE.csv``): each test appends one row
  to FILE (a header first when FILE is new); see ``pytest_runtest_protocol`` below and
  docs/BENCHMARKS.md, "Test suite"."""

import collections
import gc
import os
import time

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


# Resident memory of a test process past which its compiled executables are freed after
# each module. One process runs about half the suite; with every cache kept it held 2.5 GB
# after about 150 of the fast tier's tests (docs/BENCHMARKS.md, "Test suite").
CACHE_BYTES = 3 * 1024**3


def resident_bytes() -> int | None:
    """This process's resident memory in bytes (``/proc/self/statm``), or None where there
    is no such file."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@pytest.fixture(scope="module", autouse=True)
def _drop_compiled_functions():
    """Free the compiled executables when a module ends, once the process holds more than
    ``CACHE_BYTES`` (or its memory cannot be read). Below that they stay: a later module
    that runs an equal program, or the eager operations (one small compiled program each
    per shape) that most modules share, reuses them; a per-module clear made the eager
    operations compile again in every module. The bound keeps one process's memory from
    growing without limit over the half of the suite it runs (XLA has aborted or
    segfaulted late in a run, jaxlib 0.10.2, in a different test each time)."""
    yield
    resident = resident_bytes()
    if resident is None or resident > CACHE_BYTES:
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


CPU_RECORD_ENV = "CLEARANCE_TEST_CPU"
CPU_RECORD_COLUMNS = ("nodeid", "file", "tier", "outcome", "cpu_s", "children_cpu_s", "wall_s", "worker")
OUTCOME_KEY = pytest.StashKey[str]()


def _tier(item: pytest.Item) -> str:
    """``validation``, ``slow`` or ``fast``: the narrowest tier that holds the test."""
    if item.get_closest_marker("validation"):
        return "validation"
    return "slow" if item.get_closest_marker("slow") else "fast"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """The test's outcome for the CPU record: its first phase that did not pass, or passed."""
    outcome = yield
    report = outcome.get_result()
    if not report.passed and item.stash.get(OUTCOME_KEY, "passed") == "passed":
        item.stash[OUTCOME_KEY] = f"{report.when} {report.outcome}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """With ``CLEARANCE_TEST_CPU=FILE.csv`` set, append one row per test to FILE: this
    process's CPU seconds (``time.process_time``: all its threads) over the test's set-up,
    call and tear-down, so a module-scoped fixture counts with the first test of its module
    (and a module's tear-down with its last); the CPU seconds of the child processes the
    test waited for (``os.times``: the ``subprocess`` runs of the command line); wall
    seconds; the outcome (``passed``, or the first phase that did not pass: ``call
    failed``, ``setup skipped``). Each xdist worker appends its own rows (one ``write``
    per row, the file opened for appending), so one file gathers a whole run. Sum per file
    or tier with ``python -m benchmarks.suite_cpu FILE.csv``."""
    path = os.environ.get(CPU_RECORD_ENV)
    if not path:
        yield
        return
    start_wall, start_cpu, start_times = time.perf_counter(), time.process_time(), os.times()
    yield
    end_times = os.times()
    children = (end_times.children_user - start_times.children_user
                + end_times.children_system - start_times.children_system)
    row = (item.nodeid, item.nodeid.split("::")[0], _tier(item), item.stash.get(OUTCOME_KEY, "passed"),
           f"{time.process_time() - start_cpu:.3f}", f"{children:.3f}",
           f"{time.perf_counter() - start_wall:.3f}", os.environ.get("PYTEST_XDIST_WORKER", "main"))
    line = ",".join(f'"{value}"' if "," in value or '"' in value else value
                    for value in (v.replace('"', '""') for v in row)) + "\n"
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if os.fstat(descriptor).st_size == 0:
            os.write(descriptor, (",".join(CPU_RECORD_COLUMNS) + "\n").encode())
        os.write(descriptor, line.encode())
    finally:
        os.close(descriptor)
