"""A disk cache of the sweep's traced chunk functions, so a second run skips tracing.

JAX's persistent compilation cache saves XLA's compile, but its key is the lowered program,
so every process still traces and lowers the solver first: for the Flores chunk function
that is ~5-10 s of CPU per process, most of a small sweep's run time. Here the traced
program is exported (``jax.export``, StableHLO) and written next to JAX's cache
(``<cache>/executables/``) under a key made of
everything the traced program depends on — the mechanism's tree structure (static fields
included) and leaf shapes, the solver settings, swept paths, batch size, lanes, derivative
metrics, the device kind, JAX/jaxlib versions, ``XLA_FLAGS`` and a digest of the source of
the packages it is traced from (``model``, ``sweep``, and the module of the parameter
resolver, :func:`module_digest`). A later run
deserialises it and compiles it, which JAX's persistent cache answers, since the program is
the same. (Serialising the XLA:CPU executable itself, ``jax.experimental.serialize_executable``,
segfaulted or lost functions on loading with jaxlib 0.10.2.)

Only single-device functions are cached, and only while JAX's persistent cache is on
(``sweep.run.enable_compilation_cache``): a driver that turned it off
(``stop_compilation_cache_writes``) neither reads nor writes here. A file that does not
load (another JAX, a truncated write) is ignored and replaced. The files are pickles:
like JAX's own cache, the folder must be trusted.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.export
import numpy as np

CACHE_FORMAT = 1
_SOURCES = ("model", "sweep")


@functools.cache
def source_digest() -> str:
    """SHA-256 over the Python sources the chunk functions are traced from."""
    root = Path(__file__).resolve().parents[1]
    files = sorted(p for package in _SOURCES for p in (root / package).rglob("*.py"))
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@functools.cache
def module_digest(function: Any) -> str:
    """SHA-256 of the source file that defines ``function`` (a parameter resolver traced
    into the chunk functions), or of its name when it has no file."""
    import inspect

    try:
        return hashlib.sha256(Path(inspect.getsourcefile(function)).read_bytes()).hexdigest()
    except (TypeError, OSError):
        return hashlib.sha256(repr(function).encode()).hexdigest()


def cache_folder() -> Path | None:
    """``<JAX's persistent cache>/executables``, or None while that cache is off."""
    folder = jax.config.jax_compilation_cache_dir
    return Path(folder) / "executables" if folder else None


def executable_key(*parts: Any) -> str:
    """Hex key of an executable from ``parts`` (reprs) plus versions, flags and sources."""
    import jaxlib

    context = (CACHE_FORMAT, jax.__version__, jaxlib.__version__, os.environ.get("XLA_FLAGS", ""),
               bool(jax.config.jax_enable_x64), source_digest())
    return hashlib.sha256(repr((context, parts)).encode()).hexdigest()


def compile_cached(key: str | None, function: Callable, example_args: tuple, device: jax.Device) -> Callable:
    """``function`` compiled for ``example_args`` (pytrees of arrays or ``ShapeDtypeStruct``)
    on ``device``, its traced program taken from the cache under ``key`` when there, else
    traced, exported and stored there. Returns a callable with ``function``'s signature.
    With ``key = None`` (or the cache off) it traces every time, without storing."""
    flat_specs, in_tree = jax.tree_util.tree_flatten(example_args)
    flat_specs = [jax.ShapeDtypeStruct(np.shape(leaf), getattr(leaf, "dtype", None) or np.result_type(leaf))
                  for leaf in flat_specs]
    folder = cache_folder() if key else None
    path = folder / f"{key}.bin" if folder else None
    exported, out_tree = _read(path) if path else (None, None)
    if exported is None:
        out_trees = []

        def flat_function(*leaves):
            outputs, tree = jax.tree_util.tree_flatten(function(*jax.tree_util.tree_unflatten(in_tree, leaves)))
            out_trees.append(tree)
            return outputs

        try:
            exported = jax.export.export(jax.jit(flat_function), platforms=(device.platform,))(*flat_specs)
        except NotImplementedError:
            # a program with host callbacks (equinox's runtime checks when EQX_ON_ERROR is
            # not "nan", e.g. a sweep started from Python) cannot be exported: compile it
            # directly, uncached
            with jax.default_device(device):
                compiled = jax.jit(function).lower(*example_args).compile()
            return compiled
        out_tree = out_trees[0]
        if path:
            _write(path, exported, out_tree)
    with jax.default_device(device):
        compiled = jax.jit(exported.call).lower(*flat_specs).compile()

    def call(*args):
        return jax.tree_util.tree_unflatten(out_tree, compiled(*jax.tree_util.tree_leaves(args)))

    return call


def _read(path: Path) -> tuple[Any, Any]:
    """``(Exported, output tree)`` stored at ``path``, or ``(None, None)``."""
    if not path.exists():
        return None, None
    try:
        blob, out_tree = pickle.loads(path.read_bytes())
        return jax.export.deserialize(blob), out_tree
    except Exception:  # noqa: BLE001 - an unreadable entry is a miss; it is rewritten
        return None, None


def _write(path: Path, exported: Any, out_tree: Any) -> None:
    """Store atomically; an output tree that does not pickle only costs the next run a trace."""
    try:
        blob = pickle.dumps((exported.serialize(), out_tree))
    except Exception:  # noqa: BLE001
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(blob)
    os.replace(temporary, path)
