"""Figures of a sweep: metrics against each swept parameter, and grid maps.

Each compiled group (a combination of discrete choices) has its own colour. On a grid the
points that differ only in the plotted parameter are joined by lines; sampled designs are
scatter plots. Points whose status is not ``"ok"`` are left out and counted in the title.

The figures read the design as a :class:`~pipelines.sweeping.plot_design.PlotDesign`, so that
a process drawing them never imports the simulator (and JAX): ``clearance sweep`` draws its
figures in helper processes (:mod:`pipelines.sweeping.figure_processes`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from sweep.status import OK  # noqa: E402

from ..io import save_figure  # noqa: E402
from .plot_design import PlotDesign  # noqa: E402


def _axis_label(name: str, unit: str) -> str:
    return f"{name} [{unit}]" if unit else name


# Smaller units to show SI values in, as a config would write them (0.25 mm, not 0.00025 m).
_DISPLAY_UNITS = {
    "m": (("mm", 1e-3), ("µm", 1e-6)),
    "s": (("ms", 1e-3), ("µs", 1e-6)),
    "m/s": (("mm/s", 1e-3),),
    "Pa": (("GPa", 1e9), ("MPa", 1e6)),
    "N": (("kN", 1e3),),
}


def display_unit(unit: str, values: Sequence[float]) -> tuple[str, float]:
    """``(unit name, SI value of one unit)`` that shows ``values`` (SI) between 0.1 and 1000."""
    finite = np.abs(np.asarray(values, dtype=float))
    finite = finite[np.isfinite(finite) & (finite > 0)]
    if not unit or not len(finite):
        return unit, 1.0
    for name, factor in sorted(((unit, 1.0), *_DISPLAY_UNITS.get(unit, ())), key=lambda pair: -pair[1]):
        if 0.1 <= finite.max() / factor < 1000.0:
            return name, factor
    return unit, 1.0


def _show_in(axis, unit: str, values: Sequence[float]) -> str:
    """Tick labels of ``axis`` (data in SI) in the readable unit of ``values``; returns it."""
    name, factor = display_unit(unit, values)
    if factor != 1.0:
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value / factor:.4g}"))
    return name


def _group_labels(frame: pd.DataFrame, discrete: Sequence[str]) -> dict[int, str]:
    labels = {}
    for group, rows in frame.groupby("group", sort=True):
        first = rows.iloc[0]
        labels[int(group)] = ", ".join(f"{path.rsplit('.', 1)[-1]}={first[path]}" for path in discrete) or "all points"
    return labels


def metrics_figure(
    frame: pd.DataFrame,
    design: PlotDesign,
    continuous: Sequence[str],
    metrics: Sequence[str],
    units: Mapping[str, str],
) -> Figure:
    """A grid of panels: one row per metric, one column per continuous parameter."""
    discrete = [path for path in design.paths if path not in continuous]
    ok = frame[frame["status"] == OK]
    failed = len(frame) - len(ok)
    labels = _group_labels(frame, discrete)
    colours = {group: plt.cm.tab10(i % 10) for i, group in enumerate(labels)}
    x_paths = list(continuous) or ["group"]
    scales = {p.path: p.scale for p in design.parameters}
    figure, axes = plt.subplots(
        len(metrics), len(x_paths), figsize=(4.2 * len(x_paths) + 1.0, 2.8 * len(metrics) + 0.8),
        squeeze=False, constrained_layout=True,
    )
    for column, x_path in enumerate(x_paths):
        others = [path for path in continuous if path != x_path]
        for row, metric in enumerate(metrics):
            ax = axes[row, column]
            for group, rows in ok.groupby("group", sort=True):
                colour = colours[int(group)]
                if design.kind == "grid" and others:
                    for _, line in rows.groupby(others, sort=True):
                        line = line.sort_values(x_path)
                        ax.plot(line[x_path], line[metric], "-o", color=colour, alpha=0.55, markersize=3, linewidth=1)
                elif design.kind == "grid":
                    rows = rows.sort_values(x_path)
                    ax.plot(rows[x_path], rows[metric], "-o", color=colour, markersize=4, linewidth=1.2)
                else:
                    ax.scatter(rows[x_path], rows[metric], color=colour, s=10, alpha=0.7)
            if scales.get(x_path) == "log":
                ax.set_xscale("log")
            elif x_path != "group":
                ax.ticklabel_format(axis="x", style="sci", scilimits=(-2, 4), useMathText=True)
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 4), useMathText=True)
            x_unit = next((p.unit for p in design.parameters if p.path == x_path), "")
            if x_path == "group":
                ax.set_xticks(list(labels), [labels[g] for g in labels], rotation=20, fontsize=7)
            else:
                x_unit = _show_in(ax.xaxis, x_unit, ok[x_path])
            ax.grid(True, alpha=0.3)
            if row == len(metrics) - 1:
                ax.set_xlabel(_axis_label(x_path, x_unit), fontsize=8)
            if column == 0:
                ax.set_ylabel(_axis_label(metric, units.get(metric, "")), fontsize=8)
    title = f"{design.kind} sweep, {len(frame)} points" + (f" ({failed} failed, not shown)" if failed else "")
    figure.suptitle(title, fontsize=10)
    handles = [plt.Line2D([], [], color=colours[g], marker="o", linestyle="-") for g in labels]
    if len(labels) > 1:
        figure.legend(handles, list(labels.values()), loc="outside lower center", ncol=min(len(labels), 4), fontsize=8)
    return figure


def middle_levels(design: PlotDesign, paths: Sequence[str]) -> dict[str, float]:
    """The middle level (of the sorted levels) of each of ``paths``: where a 2-D slice cuts."""
    levels = {p.path: sorted(p.levels) for p in design.parameters}
    return {path: levels[path][len(levels[path]) // 2] for path in paths}


def grid_map_figure(frame: pd.DataFrame, design: PlotDesign, continuous: Sequence[str], metric: str, unit: str) -> Figure:
    """``metric`` over the first two continuous parameters of a grid, one panel per group; with
    more continuous parameters, on the slice through their middle levels (named in the title)."""
    x_path, y_path = continuous[:2]
    cut = middle_levels(design, continuous[2:])
    sliced = frame
    for path, value in cut.items():
        sliced = sliced[np.isclose(sliced[path].to_numpy(float), value, rtol=1e-12, atol=0.0)]
    discrete = [path for path in design.paths if path not in continuous]
    labels = _group_labels(frame, discrete)
    figure, axes = plt.subplots(1, len(labels), figsize=(4.6 * len(labels), 3.8), squeeze=False, constrained_layout=True)
    values = sliced[metric].where(sliced["status"] == OK)
    finite = values[np.isfinite(values)]
    limits = (finite.min(), finite.max()) if len(finite) else (0.0, 1.0)
    image = None
    units = {p.path: p.unit for p in design.parameters}
    for ax, (group, label) in zip(axes[0], labels.items()):
        rows = sliced[sliced["group"] == group].assign(value=values)
        table = rows.pivot_table(index=y_path, columns=x_path, values="value", aggfunc="mean", dropna=False)
        image = ax.pcolormesh(np.arange(table.shape[1] + 1), np.arange(table.shape[0] + 1), table.to_numpy(),
                              vmin=limits[0], vmax=limits[1], cmap="viridis")
        x_unit, x_factor = display_unit(units[x_path], table.columns)
        y_unit, y_factor = display_unit(units[y_path], table.index)
        ax.set_xticks(np.arange(table.shape[1]) + 0.5, [f"{v / x_factor:.3g}" for v in table.columns], fontsize=7,
                      rotation=30 if table.shape[1] > 6 else 0)
        ax.set_yticks(np.arange(table.shape[0]) + 0.5, [f"{v / y_factor:.3g}" for v in table.index], fontsize=7)
        ax.set_xlabel(_axis_label(x_path, x_unit), fontsize=8)
        ax.set_ylabel(_axis_label(y_path, y_unit), fontsize=8)
        ax.set_title(label, fontsize=9)
    if cut:
        figure.suptitle("slice at " + ", ".join(f"{path} = {value:.3g}" for path, value in cut.items()), fontsize=9)
    figure.colorbar(image, ax=axes[0].tolist(), label=_axis_label(metric, unit))
    return figure


MAIN_EFFECT_BINS = 6  # sampled parameters: quantile bins


def main_effects(frame: pd.DataFrame, path: str, metric: str, sampled: bool) -> pd.Series:
    """Mean of ``metric`` over the ok points at each level of ``path`` (each quantile bin of a
    sampled parameter, indexed by the bin's mean value): its main effect."""
    ok = frame[frame["status"] == OK]
    if sampled:
        bins = pd.qcut(ok[path], min(MAIN_EFFECT_BINS, max(1, ok[path].nunique())), duplicates="drop")
        grouped = ok.groupby(bins, observed=True)
        return pd.Series(grouped[metric].mean().to_numpy(), index=grouped[path].mean().to_numpy())
    return ok.groupby(path, sort=True)[metric].mean()


def main_effects_figure(
    frame: pd.DataFrame, design: PlotDesign, continuous: Sequence[str], metrics: Sequence[str], units: Mapping[str, str]
) -> Figure:
    """Main effects: one row per metric, one column per swept parameter (discrete ones as
    categories), the mean metric at each level over every other parameter."""
    parameters = list(design.parameters)
    figure, axes = plt.subplots(len(metrics), len(parameters), figsize=(3.6 * len(parameters) + 1.0, 2.5 * len(metrics) + 0.8),
                                squeeze=False, constrained_layout=True)
    for column, parameter in enumerate(parameters):
        for row, metric in enumerate(metrics):
            ax = axes[row, column]
            effect = main_effects(frame, parameter.path, metric, parameter.sampled)
            if parameter.path in continuous:
                ax.plot(effect.index.to_numpy(float), effect.to_numpy(), "-o", markersize=4)
                if parameter.scale == "log":
                    ax.set_xscale("log")
                else:
                    ax.ticklabel_format(axis="x", style="sci", scilimits=(-2, 4), useMathText=True)
            else:
                ax.bar(np.arange(len(effect)), effect.to_numpy(), color="tab:blue", alpha=0.7)
                ax.set_xticks(np.arange(len(effect)), [str(v) for v in effect.index], rotation=20, fontsize=7)
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 4), useMathText=True)
            ax.grid(True, alpha=0.3)
            x_unit = _show_in(ax.xaxis, parameter.unit, effect.index) if parameter.path in continuous else parameter.unit
            if row == len(metrics) - 1:
                ax.set_xlabel(_axis_label(parameter.path, x_unit), fontsize=8)
            if column == 0:
                ax.set_ylabel(_axis_label(metric, units.get(metric, "")), fontsize=8)
    figure.suptitle("main effects: mean over the other parameters (ok points)", fontsize=10)
    return figure


def sobol_figure(indices: pd.DataFrame, design: PlotDesign, metrics: Sequence[str]) -> Figure:
    """First-order (S1) and total (ST) Sobol' indices with 95 % confidence intervals: one row
    per metric, one column per combination of the crossed (``values``) parameters."""
    crossed = [p.path for p in design.parameters if not p.sampled]
    combos = list(indices.groupby(crossed, sort=False).groups) if crossed else [()]
    sampled = [p.path for p in design.sampled_parameters]
    figure, axes = plt.subplots(len(metrics), len(combos), figsize=(1.2 * len(sampled) * len(combos) + 3.0, 2.4 * len(metrics) + 0.8),
                                squeeze=False, constrained_layout=True)
    positions = np.arange(len(sampled))
    for column, combo in enumerate(combos):
        combo = combo if isinstance(combo, tuple) else (combo,)
        chosen = indices
        for path, value in zip(crossed, combo):
            chosen = chosen[chosen[path] == value]
        for row, metric in enumerate(metrics):
            ax = axes[row, column]
            rows = chosen[chosen["metric"] == metric].set_index("parameter").reindex(sampled)
            ax.bar(positions - 0.2, rows["S1"], 0.4, yerr=rows["S1_conf"], label="S1", color="tab:blue", capsize=2)
            ax.bar(positions + 0.2, rows["ST"], 0.4, yerr=rows["ST_conf"], label="ST", color="tab:orange", capsize=2)
            ax.set_xticks(positions, [path.split(".", 2)[-1] for path in sampled], rotation=20, fontsize=7)
            tops = (rows[["S1", "ST"]].to_numpy() + rows[["S1_conf", "ST_conf"]].to_numpy()).ravel()
            tops = tops[np.isfinite(tops)]
            ax.set_ylim(-0.1, max(1.1, float(tops.max()) + 0.05) if tops.size else 1.1)  # estimates can pass 1
            ax.grid(True, axis="y", alpha=0.3)
            if column == 0:
                ax.set_ylabel(metric, fontsize=8)
            if row == 0:
                ax.set_title(", ".join(f"{p.rsplit('.', 1)[-1]}={v}" for p, v in zip(crossed, combo)) or "Sobol' indices", fontsize=8)
    axes[0, 0].legend(fontsize=7)
    return figure


def poincare_figure(poincare: pd.DataFrame, frame: pd.DataFrame, continuous: Sequence[str]) -> Figure:
    """Every point's Poincaré section: the first clearance joint's journal centre at the
    section (µm), one colour per point, and, where a continuous path is swept, the section's
    ``e_x`` against its first such path (the bifurcation diagram of the sweep)."""
    joints = [column[:-3] for column in poincare.columns if column.endswith(".ex")]
    panels = 2 if continuous else 1
    figure, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4.5), layout="constrained", squeeze=False)
    if not joints or poincare.empty:
        for ax in axes[0]:
            ax.text(0.5, 0.5, "no section samples (no clearance joint, or no point ran)", ha="center",
                    va="center", transform=ax.transAxes)
            ax.set_axis_off()
        return figure
    joint = joints[0]
    ex, ey = poincare[f"{joint}.ex"] * 1e6, poincare[f"{joint}.ey"] * 1e6
    ax = axes[0, 0]
    ax.scatter(ex, ey, c=poincare["point"], s=4, cmap="viridis")
    ax.set(title=f"Poincaré map: journal centre of {joint}", xlabel="e_x (µm)", ylabel="e_y (µm)")
    ax.set_aspect("equal", adjustable="datalim")
    if continuous:
        path = continuous[0]
        values = frame.set_index("point")[path].reindex(poincare["point"]).to_numpy()
        ax = axes[0, 1]
        ax.plot(values, ex, ".", color="k", markersize=2)
        ax.set(title=f"Section of {joint} against {path.rsplit('.', 1)[-1]}", xlabel=path, ylabel="e_x (µm)")
    return figure


FIGURES: dict[str, Callable[..., Figure]] = {
    "metrics": metrics_figure, "main_effects": main_effects_figure, "grid_map": grid_map_figure, "sobol": sobol_figure,
    "poincare": poincare_figure,
}


def render_figure(path, figure: str, arguments: tuple) -> None:
    """Draw ``FIGURES[figure](*arguments)`` and save it to ``path`` (PNG, atomically): a
    figure as one picklable job."""
    save_figure(path, FIGURES[figure](*arguments))
