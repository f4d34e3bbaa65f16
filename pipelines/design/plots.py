"""Figures of the design studies (matplotlib, Agg backend); each returns a Figure for
:func:`pipelines.io.save_figure`."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

# Display units per dimension: (factor from SI, label).
DISPLAY_UNITS = {
    "force": (1e-3, "kN"),
    "length": (1e3, "mm"),
    "acceleration": (1.0, "m/s$^2$"),
    "time": (1e3, "ms"),
    "velocity": (1.0, "m/s"),
    "dimensionless": (1.0, ""),
    "cycles": (1.0, "cycles"),
}


def _unit(dimension: str) -> tuple[float, str]:
    return DISPLAY_UNITS.get(dimension, (1.0, ""))


def _path_unit(path: str) -> tuple[float, str]:
    if path.endswith(("clearance", "bearing_radius")):
        return 1e3, "mm"
    if path.endswith(".speed"):
        return 60.0 / (2.0 * np.pi), "rpm"
    return 1.0, "SI"


def pareto_front(costs: np.ndarray, performance: np.ndarray) -> np.ndarray:
    """Indices of the non-dominated points when both cost and performance are minimised,
    sorted by cost."""
    order = np.lexsort((performance, costs))
    front, best = [], np.inf
    for index in order:
        if performance[index] < best:
            front.append(index)
            best = performance[index]
    return np.asarray(front, dtype=int)


def pareto_figure(result) -> plt.Figure:
    """Cost against the worst-case value of each constrained metric, with the front."""
    problem = result.problem
    constraints = problem.constraints
    figure, axes = plt.subplots(1, len(constraints), figsize=(6.2 * len(constraints), 4.6), squeeze=False)
    searched = [p for p in result.points if p.role in ("pareto", "iterate")]
    for axis, constraint in zip(axes[0], constraints):
        factor, unit = _unit(constraint.dimension)
        worst = np.array([p.worst(constraint) for p in searched]) * factor
        costs = np.array([p.cost for p in searched])
        sign = 1.0 if constraint.bound == "max" else -1.0
        front = pareto_front(costs, sign * worst)
        axis.plot(worst[front], costs[front], "-", color="0.6", lw=1.5, zorder=1, label="Pareto front")
        for role, marker, colour in (("pareto", "o", "tab:blue"), ("iterate", ".", "tab:gray")):
            chosen = [i for i, p in enumerate(searched) if p.role == role]
            feasible = [i for i in chosen if searched[i].feasible(constraints)]
            infeasible = [i for i in chosen if i not in feasible]
            name = "sweep" if role == "pareto" else "search iterates"
            axis.scatter(worst[feasible], costs[feasible], marker=marker, color=colour, zorder=2, label=f"{name} (feasible)")
            axis.scatter(worst[infeasible], costs[infeasible], marker=marker, facecolor="none", edgecolor="tab:red",
                         zorder=2, label=f"{name} (infeasible)")
        verified = result.by_role("verification")
        axis.scatter([p.worst(constraint) * factor for p in verified], [p.cost for p in verified], marker="s",
                     facecolor="none", edgecolor="tab:green", s=50, zorder=3, label="verification")
        if result.optimum is not None:
            axis.scatter([result.optimum.worst(constraint) * factor], [result.optimum.cost], marker="*", s=220,
                         color="gold", edgecolor="k", zorder=4, label="optimum")
        axis.axvline(constraint.limit * factor, color="tab:red", ls="--", lw=1, label=f"limit ({constraint.bound})")
        axis.set_xlabel(f"worst case of {constraint.metric} over samples [{unit}]")
        axis.set_ylabel("tolerance cost [-]")
        axis.set_yscale("log")
        axis.grid(alpha=0.3)
        for point in result.by_role("pareto"):
            label = ", ".join(f"{v * _path_unit(d.path)[0]:.3g}" for d, v in zip(problem.design, point.values))
            axis.annotate(label, (point.worst(constraint) * factor, point.cost), fontsize=7,
                          textcoords="offset points", xytext=(4, 4))
    axes[0][0].legend(fontsize=7, loc="best")
    names = ", ".join(f"{v.path} [{_path_unit(v.path)[1]}]" for v in problem.design)
    figure.suptitle(f"Cost-performance trade-off ({names}); worst case over uncertain samples", fontsize=10)
    figure.tight_layout()
    return figure


def history_figure(result) -> plt.Figure:
    """Design variables, cost and robust constraints per search iteration."""
    problem, history = result.problem, result.history
    iterations = [it.iteration for it in history]
    figure, axes = plt.subplots(3, 1, figsize=(7.5, 8), sharex=True)
    for index, variable in enumerate(problem.design):
        factor, unit = _path_unit(variable.path)
        axes[0].plot(iterations, [it.aux["design"][index] * factor for it in history], "o-",
                     label=f"{variable.path} [{unit}]")
    axes[0].set_ylabel("design")
    axes[0].legend(fontsize=8)
    axes[1].plot(iterations, [it.objective for it in history], "o-", color="tab:purple")
    axes[1].set_ylabel("cost")
    for index, constraint in enumerate(problem.constraints):
        axes[2].plot(iterations, [it.constraints[index] for it in history], "o-", label=f"g: {constraint.name}")
    axes[2].axhline(0.0, color="tab:red", ls="--", lw=1)
    axes[2].set_ylabel("robust constraint g (<= 0 holds)")
    axes[2].set_xlabel("iteration")
    axes[2].legend(fontsize=8)
    axes[0].axvline(result.best.iteration, color="gold", lw=2, alpha=0.6)
    for axis in axes:
        axis.grid(alpha=0.3)
    figure.suptitle("Augmented-Lagrangian search (gold: best feasible iterate)", fontsize=10)
    figure.tight_layout()
    return figure


def verification_figure(result) -> plt.Figure:
    """Each constrained metric per verification sample at each verification design."""
    problem = result.problem
    points = result.by_role("verification")
    figure, axes = plt.subplots(1, len(problem.constraints), figsize=(6.5 * len(problem.constraints), 4.4), squeeze=False)
    for axis, constraint in zip(axes[0], problem.constraints):
        factor, unit = _unit(constraint.dimension)
        for position, point in enumerate(points):
            values = point.metrics[constraint.metric]
            within = constraint.normalised(values) <= 0.0
            axis.scatter(np.full(within.sum(), position), values[within] * factor, color="tab:green", alpha=0.7)
            axis.scatter(np.full((~within).sum(), position), values[~within] * factor, color="tab:red", alpha=0.7)
        axis.axhline(constraint.limit * factor, color="tab:red", ls="--", lw=1, label="limit")
        labels = [
            "\n".join([p.label] + [f"{v * _path_unit(d.path)[0]:.4g} {_path_unit(d.path)[1]}" for d, v in zip(problem.design, p.values)]
                      + ["PASS" if p.feasible(problem.constraints) else "FAIL"])
            for p in points
        ]
        axis.set_xticks(range(len(points)), labels, fontsize=7, rotation=30, ha="right")
        axis.set_ylabel(f"{constraint.metric} [{unit}]")
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    figure.suptitle(f"Verification with the full model: {len(result.verification_samples)} uncertain samples per design",
                    fontsize=10)
    figure.tight_layout()
    return figure


def convergence_figure(study) -> plt.Figure:
    """Peak normal force, its relative change and penetration/clearance against the
    stiffness factor."""
    factors = np.array([level["stiffness_factor"] for level in study["levels"]])
    joints = list(study["levels"][0]["joints"])
    figure, axes = plt.subplots(3, 1, figsize=(7, 8.5), sharex=True)
    for joint in joints:
        peaks = np.array([level["joints"][joint]["max_normal_force"] for level in study["levels"]])
        changes = np.array([level["joints"][joint]["peak_force_change"] for level in study["levels"]], dtype=float)
        shares = np.array([level["joints"][joint]["penetration_share"] for level in study["levels"]])
        axes[0].plot(factors, peaks * 1e-3, "o-", label=joint)
        axes[1].plot(factors[1:], 100 * changes[1:], "o-", label=joint)
        axes[2].plot(factors, 100 * shares, "o-", label=joint)
    axes[0].set_ylabel("peak normal force [kN]")
    axes[1].axhline(100 * study["tolerance"], color="tab:red", ls="--", lw=1, label="criterion")
    axes[1].set_ylabel("change from previous level [%]")
    axes[2].axhline(100 * study["penetration_limit"], color="tab:red", ls="--", lw=1, label="limit")
    axes[2].set_ylabel("max penetration / clearance [%]")
    axes[2].set_xlabel("stiffness factor (K / K_config)")
    for axis in axes:
        axis.set_xscale("log")
        axis.grid(alpha=0.3, which="both")
        axis.legend(fontsize=8)
    verdict = "converged" if study["converged"] else "not converged"
    figure.suptitle(f"Contact stiffness convergence: {verdict}", fontsize=10)
    figure.tight_layout()
    return figure
