"""Plots of a calibration: loss history, fitted against measured signals, correlation matrix."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..io import save_figure  # noqa: E402


def plot_loss_history(histories: Sequence[Sequence[float]], best: int, target: Path) -> None:
    """Loss per step of every start (log scale), the best start emphasised."""
    figure, axis = plt.subplots(figsize=(7, 4))
    for index, history in enumerate(histories):
        history = np.asarray(history, float)
        axis.semilogy(np.arange(history.size), np.where(history > 0, history, np.nan),
                      lw=2.2 if index == best else 1.0, alpha=1.0 if index == best else 0.6,
                      label=f"start {index}{' (best)' if index == best else ''}")
    axis.set_xlabel("step")
    axis.set_ylabel("loss = mean(r²)")
    axis.set_title("Calibration loss history")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=8)
    save_figure(target, figure)


def plot_signals(
    times: np.ndarray,
    names: Sequence[str],
    units: Sequence[str],
    raw: np.ndarray,
    measured: np.ndarray,
    initial: np.ndarray,
    fitted: np.ndarray,
    windows: Sequence[tuple[float, float]],
    filtered: bool,
    target: Path,
    misfit: bool = False,
) -> None:
    """Per signal: the record (raw, and low-passed when a filter is set), the simulation at
    the initial values and at the fit; the loss windows shaded. A ``misfit`` (the fit's
    residuals inconsistent with the record's noise) is said in the title."""
    figure, axes = plt.subplots(len(names), 1, figsize=(9, 2.8 * len(names)), sharex=True, squeeze=False)
    milliseconds = 1e3 * np.asarray(times)
    for k, (axis, name, unit) in enumerate(zip(axes[:, 0], names, units)):
        if filtered:
            axis.plot(milliseconds, raw[:, k], color="0.75", lw=0.8, label="measured (raw)")
        axis.plot(milliseconds, measured[:, k], color="k", lw=1.2, label="measured" + (" (low-passed)" if filtered else ""))
        axis.plot(milliseconds, initial[:, k], color="tab:orange", lw=1.0, ls="--", label="initial parameters")
        axis.plot(milliseconds, fitted[:, k], color="tab:blue", lw=1.2, label="fitted")
        for low, high in windows:
            axis.axvspan(1e3 * low, 1e3 * high, color="tab:green", alpha=0.07)
        axis.set_ylabel(f"{name} [{unit}]")
        axis.grid(True, alpha=0.3)
    axes[0, 0].legend(fontsize=8, loc="best")
    title = "Measured and simulated signals (shaded: loss windows)"
    if misfit:
        title = "MISFIT: the fit does not describe the record within its noise\n" + title
    axes[0, 0].set_title(title, color="tab:red" if misfit else "black")
    axes[-1, 0].set_xlabel("record time [ms]")
    save_figure(target, figure)


def plot_correlation(paths: Sequence[str], correlation: np.ndarray, target: Path) -> None:
    """The parameter correlation matrix at the optimum, with its values written in."""
    size = len(paths)
    figure, axis = plt.subplots(figsize=(2.2 + 1.1 * size, 1.6 + 1.0 * size))
    image = axis.imshow(np.nan_to_num(correlation), vmin=-1, vmax=1, cmap="RdBu_r")
    labels = [path.replace("joints.", "").replace("contact.", "") for path in paths]
    axis.set_xticks(range(size), labels, rotation=30, ha="right", fontsize=8)
    axis.set_yticks(range(size), labels, fontsize=8)
    for i in range(size):
        for j in range(size):
            value = correlation[i, j]
            axis.text(j, i, "n/a" if not np.isfinite(value) else f"{value:+.2f}", ha="center", va="center",
                      color="white" if np.isfinite(value) and abs(value) > 0.6 else "black", fontsize=9)
    figure.colorbar(image, ax=axis, fraction=0.046, pad=0.04)
    axis.set_title("Parameter correlation (Gauss–Newton)")
    save_figure(target, figure)
