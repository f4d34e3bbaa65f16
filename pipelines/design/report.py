"""The tolerance-design report: ``optimum.json`` and the recommended clearance bands with
their ISO 286 fits, from a finished :class:`~pipelines.design.study.StudyResult`."""

from __future__ import annotations

import numpy as np

from . import iso286
from .performance import ZERO_GRADIENT_METRICS, metric_kind
from .problem import DesignProblem
from .study import DesignPoint, StudyResult


def recommended_bands(result: StudyResult) -> dict[str, dict]:
    """Per designed clearance: the recommended radial clearance band ``[min_clearance, c]``
    with ``c`` from the verified design, and the ISO 286 fits that deliver it."""
    problem, optimum, search = result.problem, result.optimum, result.search_optimum
    verified = optimum.feasible(problem.constraints)
    bands = {}
    for index, variable in enumerate(problem.design):
        if not variable.is_clearance:
            continue
        upper = float(optimum.values[index]) if verified else None
        if upper is None:
            basis = "no verified clearance meets the constraints"
        elif optimum is search:
            basis = "search optimum, verified with the full model"
        else:
            basis = f"verified design '{optimum.label}' below the search optimum {float(search.values[index]):.6g} m"
        lower = problem.min_clearances.get(variable.joint, 0.0)
        bearing_radius = _design_or_base(problem, optimum, f"joints.{variable.joint}.bearing_radius")
        entry = {
            "min_clearance": lower,
            "max_clearance": upper,
            "basis": basis,
            "nominal_diameter": 2.0 * bearing_radius,
            "clearance_kind": "radial (bearing radius minus journal radius); ISO fit clearances are diametral = 2 x radial",
        }
        if upper is not None:
            try:
                fits = iso286.fits_for_band(2.0 * bearing_radius, lower, upper)
            except ValueError as error:
                fits, entry["iso286_note"] = [], str(error)
            entry["iso286_fits"] = fits
            entry["recommended_fit"] = next((f["fit"] for f in fits if f["within_band"]), None)
        bands[variable.joint] = entry
    return bands


def _design_or_base(problem: DesignProblem, point: DesignPoint, path: str) -> float:
    for index, variable in enumerate(problem.design):
        if variable.path == path:
            return float(point.values[index])
    return float(problem.config.si_value(path))


def optimum_report(result: StudyResult) -> dict:
    """``optimum.json`` (contract keys first)."""
    problem, optimum = result.problem, result.optimum
    constraints = {c.metric: optimum.worst(c) for c in problem.constraints}
    details = []
    for c in problem.constraints:
        best_g = result.best.constraints[problem.constraints.index(c)]
        details.append({
            "metric": c.metric, "bound": c.bound, "limit": c.limit,
            "verified_worst": optimum.worst(c), "satisfied": optimum.satisfied(c),
            "smooth_robust_value_at_search_optimum": c.limit + best_g * (abs(c.limit) or 1.0),
            "differentiable": metric_kind(c.metric) not in ZERO_GRADIENT_METRICS,
        })
    verification = []
    for point in result.by_role("verification"):
        verification.append({
            "label": point.label,
            "design": dict(zip([v.path for v in problem.design], map(float, point.values))),
            "cost": point.cost,
            "feasible": point.feasible(problem.constraints),
            "solver_ok": point.solver_ok(),
            "worst": {c.metric: point.worst(c) for c in problem.constraints},
            "metrics_max_over_samples": {name: float(np.nanmax(v)) for name, v in point.metrics.items() if not name.startswith("solver")},
        })
    return {
        "design": dict(zip([v.path for v in problem.design], map(float, optimum.values))),
        "objective": optimum.cost,
        "constraints": constraints,
        "feasible": optimum.feasible(problem.constraints),
        "objective_description": "manufacturing cost of the clearance tolerance band (cost units; 1 = reference band)",
        "constraint_details": details,
        "recommended_clearance": recommended_bands(result),
        "search_optimum": {
            "design": dict(zip([v.path for v in problem.design], map(float, result.search_optimum.values))),
            "cost": result.search_optimum.cost,
            "verified_feasible": result.search_optimum.feasible(problem.constraints),
            "verified_worst": {c.metric: result.search_optimum.worst(c) for c in problem.constraints},
        },
        "verification": {
            "samples": _samples_dict(problem, result.verification_samples),
            "points": verification,
        },
        "search": {
            "method": "augmented Lagrangian (PHR) with projected Adam (optax), forward-mode gradients",
            "smooth_feasible": result.smooth_feasible,
            "best_iteration": result.best.iteration,
            "training_samples": _samples_dict(problem, result.training_samples),
            "history": [
                {
                    "iteration": it.iteration,
                    "design": dict(zip([v.path for v in problem.design], map(float, it.aux["design"]))),
                    "cost": it.objective,
                    "g": it.constraints.tolist(),
                    "dg_dz": None if it.jacobian is None else it.jacobian.tolist(),
                    "multipliers": it.multipliers.tolist(),
                    "penalty": it.penalty,
                    "worst": {c.metric: float(np.max(it.aux["metrics"][c.metric])) for c in problem.constraints},
                }
                for it in result.history
            ],
        },
        "pareto": [
            {"design": dict(zip([v.path for v in problem.design], map(float, p.values))), "cost": p.cost,
             "worst": {c.metric: p.worst(c) for c in problem.constraints}, "feasible": p.feasible(problem.constraints)}
            for p in result.by_role("pareto")
        ],
        "options": {k: getattr(problem.options, k) for k in problem.options.__dataclass_fields__},
        "timings": result.timings,
    }


def _samples_dict(problem: DesignProblem, samples: np.ndarray) -> dict[str, list[float]]:
    return {p.path: samples[:, i].tolist() for i, p in enumerate(problem.uncertain)}
