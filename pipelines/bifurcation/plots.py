"""Figures of a bifurcation study (matplotlib, Agg): the bifurcation diagram, the
Poincaré map, the largest exponent against the parameter, the section's phase plane and,
with a hyperplane section, the crossings' diagram."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..io import save_figure  # noqa: E402
from .study import BifurcationResult, BifurcationStudy  # noqa: E402

MOTION_COLOURS = {"periodic": "tab:blue", "quasi-periodic": "tab:green", "chaotic": "tab:red",
                  "aperiodic": "tab:orange", "failed": "black"}


def _parameter_label(study: BifurcationStudy) -> str:
    return f"{study.table.parameter} ({study.unit or '-'})"


def _joint(result: BifurcationResult) -> str | None:
    names = [column[:-3] for column in result.sections.columns if column.endswith(".ex")]
    return names[0] if names else None


def plot_bifurcation(study: BifurcationStudy, result: BifurcationResult, out: Path) -> list[str]:
    """Write the figures to ``out``; their file names."""
    path, sections, summary = study.table.parameter, result.sections, result.summary
    joint = _joint(result)
    body = [c[:-2] for c in sections.columns if c.endswith(".x")][-1]
    written = []

    figure, axis = plt.subplots(figsize=(7, 4.5), layout="constrained")
    coordinate = f"{joint}.ex" if joint else f"{body}.x"
    axis.plot(sections[path], sections[coordinate] * 1e3, ",", color="k", alpha=0.7)
    axis.plot(sections[path], sections[coordinate] * 1e3, ".", color="k", markersize=1.5)
    axis.set(title=f"Bifurcation diagram: {coordinate} at the section", xlabel=_parameter_label(study),
             ylabel=f"{coordinate} (mm)")
    save_figure(out / "bifurcation_diagram.png", figure)
    written.append("bifurcation_diagram.png")

    if joint:
        figure, axis = plt.subplots(figsize=(5.5, 5), layout="constrained")
        points = axis.scatter(sections[f"{joint}.ex"] * 1e3, sections[f"{joint}.ey"] * 1e3, c=sections[path], s=4,
                              cmap="viridis")
        figure.colorbar(points, label=_parameter_label(study))
        axis.set(title=f"Poincaré map: journal centre of {joint}", xlabel="e_x (mm)", ylabel="e_y (mm)")
        axis.set_aspect("equal", adjustable="datalim")
        save_figure(out / "poincare_map.png", figure)
        written.append("poincare_map.png")

    if np.isfinite(summary["lyapunov_max"]).any():
        figure, axis = plt.subplots(figsize=(7, 4), layout="constrained")
        axis.plot(summary[path], summary["lyapunov_max"], "-", color="0.6", linewidth=0.8)
        for motion, colour in MOTION_COLOURS.items():
            chosen = summary["motion"] == motion
            if chosen.any():
                axis.errorbar(summary[path][chosen], summary["lyapunov_max"][chosen],
                              yerr=summary["lyapunov_change"][chosen], fmt="o", color=colour, label=motion, markersize=4)
        axis.axhline(0.0, color="k", linewidth=0.6)
        axis.legend()
        axis.set(title="Largest Lyapunov exponent (bars: change over the last quarter)",
                 xlabel=_parameter_label(study), ylabel="lambda_max (1/s)")
        save_figure(out / "lyapunov.png", figure)
        written.append("lyapunov.png")

    if result.crossings is not None and len(result.crossings):
        written.append(_plot_crossings(study, result, out))

    figure, axis = plt.subplots(figsize=(6, 4.5), layout="constrained")
    points = axis.scatter(sections[f"{body}.x"] * 1e3, sections[f"{body}.vx"], c=sections[path], s=4, cmap="viridis")
    figure.colorbar(points, label=_parameter_label(study))
    axis.set(title=f"Phase portrait at the section: {body}", xlabel=f"{body} x (mm)", ylabel=f"{body} v_x (m/s)")
    save_figure(out / "phase_portrait.png", figure)
    written.append("phase_portrait.png")
    return written


def _companion(quantity: str) -> str:
    """The section column plotted at a hyperplane's crossings: the other in-plane
    eccentricity component of a joint (``.ey`` for ``.ex``, ``.ex`` otherwise), a body's
    velocity for its position along the same axis and the position for the velocity."""
    owner, suffix = quantity.rsplit(".", 1)
    if suffix.startswith("e"):
        return f"{owner}.{'ey' if suffix == 'ex' else 'ex'}"
    return f"{owner}.{suffix[1:] if suffix.startswith('v') else 'v' + suffix}"


def _plot_crossings(study: BifurcationStudy, result: BifurcationResult, out: Path) -> str:
    crossings, path, hyperplane = result.crossings, study.table.parameter, study.hyperplane
    coordinate = _companion(hyperplane.quantity)
    velocity = coordinate.rsplit(".", 1)[1].startswith("v")
    scale, unit = (1.0, "m/s") if velocity else (1e3, "mm")
    figure, axis = plt.subplots(figsize=(7, 4.5), layout="constrained")
    for direction, colour, label in ((1, "tab:blue", "up"), (-1, "tab:red", "down")):
        chosen = crossings["direction"] == direction
        if chosen.any():
            axis.plot(crossings[path][chosen], crossings[coordinate][chosen] * scale, ".", color=colour, markersize=2,
                      label=f"crossing {label}")
    axis.legend()
    level_unit = "m/s" if hyperplane.quantity.rsplit(".", 1)[1].startswith("v") else "m"
    axis.set(title=f"Hyperplane section: {coordinate} where {hyperplane.quantity} = {hyperplane.value:g} {level_unit}",
             xlabel=_parameter_label(study), ylabel=f"{coordinate} ({unit})")
    save_figure(out / "crossings.png", figure)
    return "crossings.png"
