"""Atomic output files: a reader sees the old file or the complete new one, never half.

Each writer renders to a temporary file in the destination folder, flushes it to disk and
renames it over the target (``os.replace`` is atomic on POSIX within one filesystem). The
chunk store relies on it; the pipelines write their outputs through it too
(``pipelines.io``).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success it replaces ``target``."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(handle)
    try:
        yield Path(temporary)
        with open(temporary, "rb+") as stream:
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def jsonable(value):
    """``value`` with arrays as lists, NumPy scalars as Python ones and NaN/inf as ``None``."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list) and all(type(v) is int for v in value):  # a chunk's points: as they are
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (np.generic, np.ndarray)) or hasattr(value, "__array__"):
        array = np.asarray(value)
        return jsonable(array.tolist()) if array.ndim else jsonable(array.item())
    if isinstance(value, float) and not np.isfinite(value):
        return None  # JSON has no NaN/inf; null means "not reached / undefined"
    return value


def write_json(target: str | os.PathLike, data: dict, indent: int | None = 2) -> None:
    """Write ``data`` as JSON atomically (NaN/inf become null, arrays lists), indented by
    ``indent`` (``None``: on one line, through the json module's C encoder, which its
    indenting encoder is not)."""
    with atomic_path(target) as temporary:
        temporary.write_text(json.dumps(jsonable(data), indent=indent, allow_nan=False) + "\n")


def write_parquet(target: str | os.PathLike, frame) -> None:
    """Write a pandas DataFrame to parquet atomically."""
    with atomic_path(target) as temporary:
        frame.to_parquet(temporary, index=False)
