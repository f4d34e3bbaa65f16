"""Figures of a life run (matplotlib, Agg backend): the worn profiles around the bushing,
the wear's growth and the dynamics against the operating cycles, and for a cylindrical
joint the depth over the angle and the axial position."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..io import save_figure  # noqa: E402

PROFILES_SHOWN = 6


def _around(profiles: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The profiles over the angle: a cylindrical joint's (with a ``slice`` column) averaged
    over its slices, and the words for it."""
    if "slice" not in profiles:
        return profiles, ""
    mean = profiles.groupby(["update", "angle"], as_index=False).agg(cycles=("cycles", "first"),
                                                                     depth=("depth", "mean"))
    return mean, ", mean over the slices"


def _shown(profiles: pd.DataFrame) -> np.ndarray:
    updates = np.unique(profiles["update"].to_numpy())
    return updates[np.unique(np.linspace(0, updates.size - 1, min(PROFILES_SHOWN, updates.size)).round().astype(int))]


def profiles_figure(profiles: pd.DataFrame, joint: str, bearing_body: str) -> plt.Figure:
    """Polar plot of the wear depth (um) around the bushing for up to ``PROFILES_SHOWN``
    updates spread over the life (a cylindrical joint's: the mean over its slices)."""
    profiles, averaged = _around(profiles)
    shown = _shown(profiles)
    figure = plt.figure(figsize=(6.4, 6.0), layout="constrained")
    axis = figure.add_subplot(projection="polar")
    colours = plt.cm.viridis(np.linspace(0.0, 0.9, shown.size))
    for update, colour in zip(shown, colours):
        rows = profiles[profiles["update"] == update]
        angle = np.append(rows["angle"].to_numpy(), rows["angle"].iloc[0] + 2 * np.pi)
        depth = np.append(rows["depth"].to_numpy(), rows["depth"].iloc[0]) * 1e6
        axis.plot(angle, depth, color=colour, lw=1.4, label=f"{rows['cycles'].iloc[0]:.3g} cycles")
    axis.set_title(f"{joint}: wear depth of the bushing (um{averaged})")
    axis.set_xlabel(f"angle from the {'u' if averaged else 'x'} axis of {bearing_body} (deg)")
    axis.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")
    return figure


def axial_map_figure(profiles: pd.DataFrame, joint: str, bearing_body: str) -> plt.Figure:
    """A cylindrical joint's final profile: the depth (um) over the angle (deg, from the
    bearing's u axis) and the axial position (mm, from the bearing's centre), and each
    slice's largest depth against its axial position for the updates shown."""
    figure, (map_axis, line_axis) = plt.subplots(1, 2, figsize=(12.0, 4.6), layout="constrained",
                                                 gridspec_kw={"width_ratios": (2.0, 1.0)})
    last = profiles[profiles["update"] == profiles["update"].max()]
    angles = np.degrees(np.unique(last["angle"].to_numpy()))
    axial = np.unique(last["axial"].to_numpy()) * 1e3
    depth = last.sort_values(["slice", "angle"])["depth"].to_numpy().reshape(axial.size, angles.size) * 1e6
    mesh = map_axis.pcolormesh(angles, axial, depth, shading="nearest", cmap="magma")
    figure.colorbar(mesh, ax=map_axis, label="wear depth (um)")
    map_axis.set_xlabel(f"angle from the u axis of {bearing_body} (deg)")
    map_axis.set_ylabel("axial position from the bearing's centre (mm)")
    map_axis.set_title(f"{joint}: wear depth after {last['cycles'].iloc[0]:.3g} cycles")
    shown = _shown(profiles)
    colours = plt.cm.viridis(np.linspace(0.0, 0.9, shown.size))
    for update, colour in zip(shown, colours):
        rows = profiles[profiles["update"] == update]
        deepest = rows.groupby("axial")["depth"].max()
        line_axis.plot(deepest.to_numpy() * 1e6, deepest.index.to_numpy() * 1e3, "o-", color=colour, ms=3,
                       label=f"{rows['cycles'].iloc[0]:.3g} cycles")
    line_axis.set_xlabel("largest depth of the slice (um)")
    line_axis.set_ylabel("axial position from the bearing's centre (mm)")
    line_axis.set_title(f"{joint}: axial distribution")
    line_axis.grid(alpha=0.3)
    line_axis.legend(fontsize="small")
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


def dynamics_figure(life: pd.DataFrame, joint: str, body: str) -> plt.Figure:
    """Peak contact force (N), peak acceleration of ``body`` (the bearing body, or the
    journal's where the bearing is the ground; m/s^2) and impacts per cycle of the worn joint
    against the operating cycles."""
    figure, axes = plt.subplots(1, 3, figsize=(14.0, 4.2), layout="constrained")
    cycles = life["cycles"].to_numpy()
    series = (
        (f"{joint}.max_normal_force", 1.0, "peak contact force (N)", f"{joint}: peak normal force"),
        (f"{body}.max_abs_ax", 1.0, "peak |a_x| (m/s$^2$)", f"{body}: peak acceleration along x"),
        (f"{joint}.num_impacts", 1.0, "impacts per cycle", f"{joint}: contact onsets per cycle"),
    )
    for axis, (column, factor, label, title) in zip(axes, series):
        axis.plot(cycles, life[column].to_numpy() * factor, "o-")
        axis.set_xlabel("operating cycles")
        axis.set_ylabel(label)
        axis.set_title(title)
        axis.grid(alpha=0.3)
    return figure


def plot_life(profiles: pd.DataFrame, life: pd.DataFrame, joint: str, bearing_body: str, out: Path,
              body: str | None = None) -> list[str]:
    """Write the figures into ``out`` (``wear_axial_map.png`` too for a cylindrical joint's
    profiles); their file names. ``body``: the body whose accelerations are plotted (default
    ``bearing_body``)."""
    figures = {"wear_profiles.png": profiles_figure(profiles, joint, bearing_body),
               "wear_growth.png": growth_figure(life, joint),
               "wear_dynamics.png": dynamics_figure(life, joint, body or bearing_body)}
    if "slice" in profiles:
        figures["wear_axial_map.png"] = axial_map_figure(profiles, joint, bearing_body)
    for name, figure in figures.items():
        save_figure(out / name, figure)
    return list(figures)
