"""Output files of the pipelines, every one written atomically (:mod:`sweep.files`: a reader
sees the old file or the complete new one, never half), and the default output folder."""

from __future__ import annotations

import os
from pathlib import Path

from sweep.files import atomic_path, jsonable, write_json, write_parquet  # noqa: F401  (the pipelines' writers)


def save_figure(target: str | os.PathLike, figure) -> None:
    """Save a matplotlib figure as PNG atomically and close it.

    A figure laid out by matplotlib's constrained layout already fits its canvas, so it is
    saved as is; ``bbox_inches="tight"`` would draw it twice (half the saving time)."""
    import matplotlib.pyplot as plt
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    constrained = isinstance(figure.get_layout_engine(), ConstrainedLayoutEngine)
    with atomic_path(target) as temporary:
        figure.savefig(temporary, format="png", dpi=110, bbox_inches=None if constrained else "tight")
    plt.close(figure)


def default_output_dir(command: str, config_path: str | os.PathLike, out: str | None) -> Path:
    """``--out`` if given, else ``outputs/<command>/<config name>/``."""
    return Path(out) if out else Path("outputs") / command / Path(config_path).stem
