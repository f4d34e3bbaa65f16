"""The chunk store of a sweep: ``<out>/chunks/`` with one parquet file per finished chunk and a
``manifest.json`` that lists them.

Every write is atomic (:mod:`sweep.files`): the chunk's parquet file first, then the manifest
that names it, so a sweep killed at any instant leaves either a chunk listed and complete or
not listed at all (an unlisted stray file is ignored and overwritten). ``--resume`` reads the
manifest, runs only the points of no listed chunk, and refuses a store whose fingerprint (a
hash of the resolved sweep: base mechanism in SI, design, derivatives, solver settings) is not
that of the sweep being run.

With a :class:`PartialResults` the store also keeps the results table growing beside it
(``<out>/results/``, one parquet file of labelled rows per listed chunk), written before
the manifest names the chunk, so that a reader of the folder sees the finished rows while
the sweep runs and after it stops.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .files import jsonable, write_json, write_parquet

MANIFEST = "manifest.json"
STORE_FORMAT = 1
PACKAGES = ("jax", "jaxlib", "diffrax", "equinox", "optimistix", "lineax", "numpy", "scipy", "pandas", "pyarrow",
            "pint", "pydantic", "SALib", "ray")


class StoreMismatch(ValueError):
    """``--resume`` on a store that holds the chunks of another sweep."""


def fingerprint(resolved: Mapping[str, Any]) -> str:
    """SHA-256 of the resolved sweep as canonical JSON (sorted keys, SI floats by ``repr``)."""
    text = json.dumps(jsonable(dict(resolved)), sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages a sweep's numbers depend on (``None``: not installed)."""
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    versions["python"] = platform.python_version()
    return versions


def git_revision(folder: str | os.PathLike | None = None) -> str:
    """``git rev-parse HEAD`` of the project (with ``+dirty`` for uncommitted changes), or
    ``"unknown"`` outside a git checkout or without git."""
    folder = Path(folder) if folder else Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=folder,
                               capture_output=True, text=True, timeout=10)
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


class PartialResults:
    """The results table of the finished chunks, growing as they finish: ``folder`` holds
    ``part-NNNNN.parquet`` with the rows ``label(rows)`` gives for chunk ``NNNNN``'s stored
    rows (``label``: the stored rows -> the final table's rows of those points, same
    columns and types), so that ``pandas.read_parquet(folder)`` is the table of every
    point finished so far (a parquet dataset). Every write is atomic."""

    PREFIX = "part-"

    def __init__(self, folder: str | os.PathLike, label: Callable[[pd.DataFrame], pd.DataFrame]):
        self.folder = Path(folder)
        self.label = label

    def path(self, number: int) -> Path:
        return self.folder / f"{self.PREFIX}{number:05d}.parquet"

    def write(self, number: int, rows: pd.DataFrame) -> None:
        """The labelled rows of chunk ``number`` (its stored ``rows``)."""
        write_parquet(self.path(number), self.label(rows))

    def clear(self) -> None:
        if self.folder.exists():
            shutil.rmtree(self.folder)

    def match(self, chunks: list[dict], read_rows: Callable[[dict], pd.DataFrame]) -> None:
        """Make the parts those of the listed ``chunks`` (a store being resumed): remove
        the part of a chunk the manifest does not list (a run stopped between the two
        writes) and write a listed chunk's missing part from its stored rows."""
        listed = {self.path(chunk["number"]).name: chunk for chunk in chunks}
        if self.folder.exists():
            for path in self.folder.glob(f"{self.PREFIX}*.parquet"):
                if path.name not in listed:
                    path.unlink()
        for name, chunk in listed.items():
            if not (self.folder / name).exists():
                self.write(chunk["number"], read_rows(chunk))


class ChunkStore:
    """Finished chunks of one sweep in ``folder`` (``<out>/chunks``).

    ``ChunkStore(folder, fingerprint, resume=False)`` starts afresh (removing an earlier
    store there); with ``resume=True`` it keeps the finished chunks of a store with the same
    fingerprint and refuses (:class:`StoreMismatch`) one of another sweep. ``partial``: the
    growing results table kept beside the store (removed on a fresh start, matched to the
    listed chunks on resume).
    """

    def __init__(self, folder: str | os.PathLike, fingerprint: str, resume: bool = False,
                 provenance: Mapping[str, Any] | None = None, partial: PartialResults | None = None):
        self.folder = Path(folder)
        self.fingerprint = fingerprint
        self.partial = partial
        self.written_here = 0  # chunks written by this process
        manifest = self._read_manifest()
        if resume and manifest is not None:
            if manifest.get("fingerprint") != fingerprint:
                raise StoreMismatch(
                    f"{self.folder} holds chunks of a different sweep (fingerprint {str(manifest.get('fingerprint'))[:12]}, "
                    f"this sweep {fingerprint[:12]}); run without --resume to start afresh, or choose another --out",
                )
            self.manifest = manifest
            self.manifest["resumed"] = int(self.manifest.get("resumed", 0)) + 1
        else:
            if self.folder.exists():
                shutil.rmtree(self.folder)
            if partial is not None:
                partial.clear()
            self.manifest = {"format": STORE_FORMAT, "fingerprint": fingerprint, "resumed": 0, "chunks": []}
        if partial is not None and resume:
            partial.match(self.chunks, lambda chunk: pd.read_parquet(self.folder / chunk["file"]))
        self.manifest.update(dict(provenance or {}))
        self._write_manifest()

    def _read_manifest(self) -> dict | None:
        path = self.folder / MANIFEST
        if not path.exists():
            return None
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            return None

    def _write_manifest(self) -> None:
        # rewritten after every chunk, with every stored point: on one line, so that writing
        # it stays a small share of a sweep of 100,000 points (the indenting encoder is Python)
        write_json(self.folder / MANIFEST, self.manifest, indent=None)

    @property
    def chunks(self) -> list[dict]:
        return self.manifest["chunks"]

    def finished_points(self) -> set[int]:
        """Global indices of the points of every listed chunk."""
        return {int(point) for chunk in self.chunks for point in chunk["points"]}

    def add(self, rows: pd.DataFrame, info: Mapping[str, Any]) -> dict:
        """Write one finished chunk (``rows`` with a ``point`` column) and list it; returns its entry."""
        number = max((chunk["number"] for chunk in self.chunks), default=-1) + 1
        name = f"chunk-{number:05d}.parquet"
        write_parquet(self.folder / name, rows)
        if self.partial is not None:
            self.partial.write(number, rows)
        entry = {"number": number, "file": name, "points": [int(p) for p in rows["point"]], **dict(info)}
        self.chunks.append(entry)
        self._write_manifest()
        self.written_here += 1
        return entry

    def rows(self) -> pd.DataFrame:
        """Every listed chunk's rows, one per point, ordered by point."""
        frames = [pd.read_parquet(self.folder / chunk["file"]) for chunk in self.chunks]
        if not frames:
            return pd.DataFrame({"point": np.zeros(0, dtype=int)})
        return pd.concat(frames, ignore_index=True).sort_values("point", kind="stable").reset_index(drop=True)


class MemoryStore:
    """The same interface without files (the Python API without an output folder)."""

    def __init__(self, fingerprint: str = ""):
        self.fingerprint = fingerprint
        self.manifest: dict = {"chunks": []}
        self._frames: list[pd.DataFrame] = []

    @property
    def chunks(self) -> list[dict]:
        return self.manifest["chunks"]

    def finished_points(self) -> set[int]:
        return set()

    def add(self, rows: pd.DataFrame, info: Mapping[str, Any]) -> dict:
        entry = {"number": len(self.chunks), "points": [int(p) for p in rows["point"]], **dict(info)}
        self.chunks.append(entry)
        self._frames.append(rows)
        return entry

    def rows(self) -> pd.DataFrame:
        if not self._frames:
            return pd.DataFrame({"point": np.zeros(0, dtype=int)})
        return pd.concat(self._frames, ignore_index=True).sort_values("point", kind="stable").reset_index(drop=True)
