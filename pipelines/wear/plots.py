"""Figures of a life run (matplotlib, Agg backend): the worn profiles around the bushing,
the wear's growth and the dynamics against the operating cycles."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..io import save_figure  # noqa: E402

PROFILES_SHOWN = 6


def profiles_figure(profiles: pd.DataFrame, joint: str, bearing_body: str) -> plt.Figure:
    """Polar plot of the wear depth (um) around the bushing for up to ``PROFILES_SHOWN``
    updates spread over the life."""
    updates = np.unique(profiles["update"].to_numpy())
    shown = updates[np.unique(np.linspace(0, updates.size - 1, min(PROFILES_SHOWN, updates.size)).round().astype(int))]
    figure = plt.figure(figsize=(6.4, 6.0), layout="constrained")
    axis = figure.add_subplot(projection="polar")
    colours = plt.cm.viridis(np.linspace(0.0, 0.9, shown.size))
    for update, colour in zip(shown, colours):
        rows = profiles[profiles["update"] == update]
        angle = np.append(rows["angle"].to_numpy(), rows["angle"].iloc[0] + 2 * np.pi)
        depth = np.append(rows["depth"].to_numpy(), rows["depth"].iloc[0]) * 1e6
        axis.plot(angle, depth, color=colour, lw=1.4, label=f"{rows['cycles'].iloc[0]:.3g} cycles")
    axis.set_title(f"{joint}: wear depth of the bushing (um)")
    axis.set_xlabel(f"angle from the x axis of {bearing_body} (deg)")
    axis.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")
    return figure


def growth_figure(life: pd.DataFrame, joint: str) -> plt.Figure:
    """Largest depth (um) and worn volume (mm^3) against the operating cycles."""
    figure, (depth_axis, volume_axis) = plt.subplots(1, 2, figsize=(11.0, 4.2), layout="constrained")
    cycles = life["cycles"].to_numpy()
    depth_axis.plot(cycles, life["max_depth"].to_numpy() * 1e6, "o-")
    depth_axis.set_xlabel("operating cycles")
    depth_axis.set_ylabel("largest wear depth (um)")
    depth_axis.set_title(f"{joint}: largest depth of the bushing")
    volume_axis.plot(cycles, life["volume"].to_numpy() * 1e9, "o-", color="tab:orange")
    volume_axis.set_xlabel("operating cycles")
    volume_axis.set_ylabel("worn volume (mm$^3$)")
    volume_axis.set_title(f"{joint}: worn volume (Archard)")
    for axis in (depth_axis, volume_axis):
        axis.grid(alpha=0.3)
    return figure


def dynamics_figure(life: pd.DataFrame, joint: str, bearing_body: str) -> plt.Figure:
    """Peak contact force (N), peak acceleration of the bearing body (m/s^2) and impacts per
    cycle of the worn joint against the operating cycles."""
    figure, axes = plt.subplots(1, 3, figsize=(14.0, 4.2), layout="constrained")
    cycles = life["cycles"].to_numpy()
    series = (
        (f"{joint}.max_normal_force", 1.0, "peak contact force (N)", f"{joint}: peak normal force"),
        (f"{bearing_body}.max_abs_ax", 1.0, "peak |a_x| (m/s$^2$)", f"{bearing_body}: peak acceleration along x"),
        (f"{joint}.num_impacts", 1.0, "impacts per cycle", f"{joint}: contact onsets per cycle"),
    )
    for axis, (column, factor, label, title) in zip(axes, series):
        axis.plot(cycles, life[column].to_numpy() * factor, "o-")
        axis.set_xlabel("operating cycles")
        axis.set_ylabel(label)
        axis.set_title(title)
        axis.grid(alpha=0.3)
    return figure


def plot_life(profiles: pd.DataFrame, life: pd.DataFrame, joint: str, bearing_body: str, out: Path) -> list[str]:
    """Write the three figures into ``out``; their file names."""
    figures = {"wear_profiles.png": profiles_figure(profiles, joint, bearing_body),
               "wear_growth.png": growth_figure(life, joint),
               "wear_dynamics.png": dynamics_figure(life, joint, bearing_body)}
    for name, figure in figures.items():
        save_figure(out / name, figure)
    return list(figures)
