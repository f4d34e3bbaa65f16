"""The tolerance-design study: robust constraints over uncertain samples, the augmented-
Lagrangian search, the cost-performance (Pareto) sweep and the verification sweep.

One compiled function does all the simulation work::

    evaluate(z [d], samples [S, k]) -> (dg/dz [m, d], aux)

It maps the normalised design ``z`` to SI values, writes them and one draw of the
uncertain parameters into the mechanism (:class:`pipelines.build.ParameterMap`), simulates
the ``S`` draws as one batch (``jax.vmap``, or ``lax.map`` on request), and returns the
robust constraints ``g`` (in ``aux``) with their forward-mode Jacobian (the solver runs with
``adjoint="forward"``; forward mode costs one tangent per design variable, the right
trade for a handful of them). ``aux`` also holds every hard metric per sample, so the
sweeps reuse the same compiled function (one compilation per run).

Robust constraint ``i`` on metric ``M`` with limit ``L``: per sample, ``M`` with its maximum
over time replaced by ``T_t log sum exp(M(t) / T_t)``; over the samples, again a soft-max
with ``T_s``; ``g_i = (softmax - L) / |L|`` (``<= 0`` holds). ``T_t`` and ``T_s`` are
``time_smoothing`` and ``sample_smoothing`` times ``|L|``. Both soft-maxes bound the hard
maxima from above, so a design that meets the smooth constraints meets the hard ones on the
same samples; the verification sweep then checks the hard ones on fresh samples.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
from tqdm import tqdm

from sweep.design import latin_hypercube as _latin_hypercube
from sweep.run import pad_rows

from ..build import ParameterMap
from .optimize import AugmentedLagrangianSettings, Iterate, augmented_lagrangian
from .performance import (
    SMOOTHABLE_METRICS,
    ZERO_GRADIENT_METRICS,
    metric_kind,
    needs_ideal,
    simulate_metrics,
    smooth_max,
    smooth_min,
)
from .problem import DesignProblem


def latin_hypercube(problem: DesignProblem, count: int, seed: int) -> np.ndarray:
    """``count`` draws (rows, SI) of the uncertain parameters, Latin hypercube in their ranges."""
    lower = np.array([p.lower for p in problem.uncertain])
    upper = np.array([p.upper for p in problem.uncertain])
    return _latin_hypercube(lower, upper, count, seed)


def verification_samples(problem: DesignProblem, count: int, seed: int) -> np.ndarray:
    """The corners of the uncertain box (when there are at most ``count`` of them, since
    worst cases often sit there), filled up with Latin-hypercube draws to ``count``."""
    k = len(problem.uncertain)
    if k == 0:
        return np.zeros((1, 0))
    lower = np.array([p.lower for p in problem.uncertain])
    upper = np.array([p.upper for p in problem.uncertain])
    rows = []
    if 2**k <= count:
        for index in range(2**k):
            bits = np.array([(index >> j) & 1 for j in range(k)], dtype=float)
            rows.append(lower + bits * (upper - lower))
    if len(rows) < count:
        rows.extend(latin_hypercube(problem, count - len(rows), seed))
    return np.asarray(rows)


class DesignEvaluator:
    """The compiled batch evaluation of a design problem (see the module docstring)."""

    def __init__(self, problem: DesignProblem):
        self.problem = problem
        options = problem.options
        self.mechanism = problem.mechanism()
        self.settings = problem.settings(self.mechanism, adjoint="forward")
        self.parameters = ParameterMap(
            self.mechanism, [v.path for v in problem.design] + [u.path for u in problem.uncertain], problem.source
        )
        metrics = [c.metric for c in problem.simulated_constraints]
        self.with_ideal = needs_ideal(metrics) or options.ideal_metrics
        # a design limited by its life alone needs no other simulation
        self.simulates = bool(metrics) or options.ideal_metrics
        paths = [v.path for v in problem.design] + [u.path for u in problem.uncertain]
        self.life_parameters = (None if problem.life is None
                                else ParameterMap(problem.life.study.mechanism, paths, problem.source))
        self.temperatures = {
            c.metric: options.time_smoothing * abs(c.limit) or options.time_smoothing
            for c in problem.constraints
            if metric_kind(c.metric) in SMOOTHABLE_METRICS and c.bound == "max"  # stays an upper bound
        }
        self.batch_size = options.samples if problem.uncertain else 1
        self.calls = 0
        self.seconds = 0.0
        self._compiled = jax.jit(jax.jacfwd(self._constraints, has_aux=True))

    def design_values(self, z) -> jax.Array:
        return jnp.stack([variable.to_physical(z[i]) for i, variable in enumerate(self.problem.design)])

    def _per_sample(self, design_values, uncertain_values) -> dict:
        values = jnp.concatenate([design_values, uncertain_values])
        if self.simulates:
            metrics = simulate_metrics(self.parameters.apply(self.mechanism, values), self.settings, self.with_ideal,
                                       self.temperatures)
        else:
            metrics = {"solver.result": jnp.asarray(0), "solver.steps": jnp.asarray(0)}
        life = self.problem.life
        if life is not None:
            metrics.update(life.metrics(self.life_parameters.apply(life.study.mechanism, values)))
            metrics["solver.result"] = jnp.maximum(metrics["solver.result"], metrics["life.result"])
        return metrics

    def _constraints(self, z, samples):
        design_values = self.design_values(z)
        if self.problem.options.batching == "map":
            metrics = jax.lax.map(lambda u: self._per_sample(design_values, u), samples)
        else:
            metrics = jax.vmap(lambda u: self._per_sample(design_values, u))(samples)
        hard = {name: value for name, value in metrics.items() if not name.startswith("smooth:")}
        failed = jnp.any(hard["solver.result"] != 0)
        options = self.problem.options
        values = []
        for constraint in self.problem.constraints:
            per_sample = metrics.get(f"smooth:{constraint.metric}", hard[constraint.metric])
            temperature = options.sample_smoothing * (abs(constraint.limit) or 1.0)
            robust = smooth_max(per_sample, temperature) if constraint.bound == "max" else smooth_min(per_sample, temperature)
            values.append(constraint.normalised(robust))
        g = jnp.where(failed, jnp.nan, jnp.stack(values))
        return g, {"g": g, "design": design_values, "metrics": hard}

    def __call__(self, z, samples) -> tuple[np.ndarray, np.ndarray, dict]:
        """``(g, dg/dz, aux)`` at ``z`` for a batch of exactly ``batch_size`` samples."""
        started = time.perf_counter()
        jacobian, aux = self._compiled(jnp.asarray(z, dtype=jnp.float64), jnp.asarray(samples, dtype=jnp.float64))
        jacobian = jax.block_until_ready(jacobian)
        self.seconds += time.perf_counter() - started
        self.calls += 1
        aux = jax.tree_util.tree_map(np.asarray, aux)
        return np.asarray(aux["g"]), np.asarray(jacobian), aux

    def evaluate_samples(self, z, samples: np.ndarray) -> dict[str, np.ndarray]:
        """Hard metrics (per sample, SI) of design ``z`` over any number of samples, in
        chunks of ``batch_size`` (the last one padded by repeating its last row)."""
        chunks = []
        for start in range(0, len(samples), self.batch_size):
            chunk = samples[start : start + self.batch_size]
            _, _, aux = self(z, pad_rows(chunk, self.batch_size))
            chunks.append({name: value[: len(chunk)] for name, value in aux["metrics"].items()})
        return {name: np.concatenate([c[name] for c in chunks]) for name in chunks[0]}


@dataclass
class DesignPoint:
    """A design evaluated with hard metrics over a set of samples."""

    role: str  # "iterate" | "pareto" | "verification"
    z: np.ndarray
    values: np.ndarray  # SI, in problem.design order
    cost: float
    metrics: dict[str, np.ndarray]  # per sample
    samples: np.ndarray
    label: str = ""

    def solver_ok(self) -> bool:
        return bool(np.all(self.metrics["solver.result"] == 0))

    def worst(self, constraint) -> float:
        values = self.metrics[constraint.metric]
        return float(np.max(values) if constraint.bound == "max" else np.min(values))

    def satisfied(self, constraint) -> bool:
        return bool(self.solver_ok() and constraint.normalised(self.worst(constraint)) <= 0.0)

    def feasible(self, constraints) -> bool:
        return all(self.satisfied(c) for c in constraints)


@dataclass
class StudyResult:
    problem: DesignProblem
    history: list[Iterate]
    best: Iterate
    smooth_feasible: bool
    training_samples: np.ndarray
    verification_samples: np.ndarray
    points: list[DesignPoint] = field(default_factory=list)
    optimum: DesignPoint | None = None  # the verified design (the search optimum, or a backed-off one)
    search_optimum: DesignPoint | None = None
    timings: dict[str, float] = field(default_factory=dict)

    def by_role(self, role: str) -> list[DesignPoint]:
        return [p for p in self.points if p.role == role]


def _cost(problem: DesignProblem, design_values) -> float:
    return float(problem.cost(jnp.asarray(design_values)))


def run_study(problem: DesignProblem, progress: bool = True) -> StudyResult:
    """Search, Pareto sweep and verification; returns everything the outputs need."""
    options = problem.options
    evaluator = DesignEvaluator(problem)
    training = verification_samples(problem, evaluator.batch_size, options.seed)
    verifying = verification_samples(problem, options.verification_samples, options.seed + 1)
    z0 = np.array([v.to_unit(v.initial) for v in problem.design])
    reference_cost = _cost(problem, [v.initial for v in problem.design])
    scale = 1.0 / reference_cost if reference_cost > 0 else 1.0
    timings: dict[str, float] = {}

    def objective(z):
        return scale * problem.cost(evaluator.design_values(z))

    bar = tqdm(total=options.iterations, desc="optimize", unit="it", disable=not progress)

    def on_iterate(record: Iterate):
        design = ", ".join(f"{v.path.split('.')[-1]}={float(x):.4g}" for v, x in zip(problem.design, record.aux["design"]))
        bar.set_postfix_str(f"{design} cost={record.objective / scale:.4g} g_max={record.max_violation:+.3f}")
        bar.update(1)

    started = time.perf_counter()
    settings = AugmentedLagrangianSettings(
        iterations=options.iterations, learning_rate=options.learning_rate, momentum=options.momentum,
        inner_steps=options.inner_steps, penalty=options.penalty,
    )
    search = augmented_lagrangian(objective, lambda z: evaluator(z, training), z0, settings, on_iterate)
    bar.close()
    timings["search_seconds"] = time.perf_counter() - started
    for record in search.history:
        record.objective = record.objective / scale  # report in cost units

    result = StudyResult(problem, search.history, search.best, search.feasible, training, verifying, timings=timings)
    for record in search.history:
        metrics = record.aux["metrics"]
        result.points.append(DesignPoint("iterate", record.z, record.aux["design"], record.objective, metrics, training,
                                         f"iteration {record.iteration}"))

    z_best = np.asarray(search.best.z)
    jobs = []
    if options.pareto_points:
        clearance_axes = [i for i, v in enumerate(problem.design) if v.is_clearance] or list(range(len(problem.design)))
        for t in np.linspace(0.0, 1.0, options.pareto_points):
            z = z_best.copy()
            z[clearance_axes] = t
            jobs.append(("pareto", z, training, f"pareto z={t:.2f}"))
    half = options.verification_points // 2
    jobs.append(("verification", z_best, verifying, "optimum"))
    for i, variable in enumerate(problem.design):
        x_best = float(variable.to_physical(z_best[i]))
        for k in [k for k in range(-half, half + 1) if k != 0]:
            value = min(max(x_best * (1.0 + k * options.verification_step), variable.lower), variable.upper)
            z = z_best.copy()
            z[i] = variable.to_unit(value)
            jobs.append(("verification", z, verifying,
                         f"{'.'.join(variable.path.split('.')[1:])} {k * options.verification_step:+.0%}"))

    started = time.perf_counter()
    bar = tqdm(total=len(jobs), desc="sweep", unit="design", disable=not progress)
    for role, z, samples, label in jobs:
        result.points.append(_evaluate_point(problem, evaluator, role, z, samples, label))
        bar.update(1)
    result.search_optimum = next(p for p in result.points if p.label == "optimum")
    result.optimum = _verified_design(result)
    # back off when the search optimum fails verification: bisect (in log scale) the share
    # of its clearances between the largest failing and the largest passing verified share;
    # before a passing one is known, try the largest sweep design that met the constraints
    # on the training samples, then the lower bounds
    if not result.search_optimum.feasible(problem.constraints) and any(v.is_clearance for v in problem.design):
        verified = _verified_shares(result, z_best)
        passing = [share for share, p in verified if p.feasible(problem.constraints)]
        low = max(passing, default=None)
        high = min(share for share, p in verified if not p.feasible(problem.constraints) and share > (low or 0.0))
        lowest = max(v.lower / float(v.to_physical(z_best[i])) for i, v in enumerate(problem.design) if v.is_clearance)
        trials = sorted({share for share, p in _swept_shares(result, z_best)
                         if p.feasible(problem.constraints) and lowest < share < high}, reverse=True)[:1] + [lowest]
        for _ in range(options.backoff_steps):
            if low is not None and high / low < 1.0 + options.verification_step / 2:
                break  # bracket finer than half the verification step
            if low is None and not trials:
                break  # even the lower bounds fail
            share = trials.pop(0) if low is None else math.sqrt(low * high)
            bar.total += 1
            point = _evaluate_point(problem, evaluator, "verification", _scaled_clearances(problem, z_best, share),
                                    verifying, f"back-off {share - 1.0:+.0%}")
            result.points.append(point)
            bar.update(1)
            if point.feasible(problem.constraints):
                low = share
            else:
                high = share
        result.optimum = _verified_design(result)
    bar.close()
    result.optimum = result.optimum or result.search_optimum
    timings["sweep_seconds"] = time.perf_counter() - started
    timings["simulation_calls"] = evaluator.calls
    timings["evaluation_seconds"] = evaluator.seconds
    return result


def _smaller_clearances(problem: DesignProblem, point: DesignPoint, reference: DesignPoint) -> bool:
    """``point`` differs from ``reference`` only by equal or smaller designed clearances."""
    for index, variable in enumerate(problem.design):
        value, base = float(point.values[index]), float(reference.values[index])
        if variable.is_clearance and value > base * (1 + 1e-12):
            return False
        if not variable.is_clearance and not math.isclose(value, base, rel_tol=1e-12, abs_tol=0.0):
            return False
    return True


def _scaled_clearances(problem: DesignProblem, z_best: np.ndarray, share: float) -> np.ndarray:
    """``z`` with every designed clearance at ``share`` times its value at ``z_best``."""
    z = np.asarray(z_best, dtype=float).copy()
    for i, variable in enumerate(problem.design):
        if variable.is_clearance:
            z[i] = variable.to_unit(min(max(float(variable.to_physical(z_best[i])) * share, variable.lower), variable.upper))
    return z


def _shares(problem: DesignProblem, points: list[DesignPoint], z_best: np.ndarray) -> list[tuple[float, DesignPoint]]:
    """``(share, point)`` for points that differ from ``z_best`` only by a common factor on
    the designed clearances."""
    reference = np.asarray([float(v.to_physical(z_best[i])) for i, v in enumerate(problem.design)])
    clearance = np.array([v.is_clearance for v in problem.design])
    out = []
    for point in points:
        if not np.allclose(point.values[~clearance], reference[~clearance], rtol=1e-12, atol=0.0):
            continue
        shares = point.values[clearance] / reference[clearance]
        if shares.size and np.allclose(shares, shares[0], rtol=1e-9):
            out.append((float(shares[0]), point))
    return out


def _verified_shares(result: StudyResult, z_best) -> list[tuple[float, DesignPoint]]:
    return _shares(result.problem, result.by_role("verification"), z_best)


def _swept_shares(result: StudyResult, z_best) -> list[tuple[float, DesignPoint]]:
    return _shares(result.problem, result.by_role("pareto"), z_best)


def _verified_design(result: StudyResult) -> DesignPoint | None:
    """The cheapest verification design that passes and has clearances no larger than the
    search optimum's (the search optimum itself when it passes); ``None`` if none passes."""
    problem = result.problem
    passing = [
        p for p in result.by_role("verification")
        if p.feasible(problem.constraints) and _smaller_clearances(problem, p, result.search_optimum)
    ]
    return min(passing, key=lambda p: p.cost, default=None)


def _evaluate_point(problem, evaluator, role, z, samples, label) -> DesignPoint:
    metrics = evaluator.evaluate_samples(z, samples)
    values = np.asarray(evaluator.design_values(jnp.asarray(z)))
    return DesignPoint(role, np.asarray(z), values, _cost(problem, values), metrics, samples, label)


# ---------------------------------------------------------------------------------------------
# Reading the result
# ---------------------------------------------------------------------------------------------


def optimum_report(result: StudyResult) -> dict:
    """``optimum.json``; see :func:`pipelines.design.report.optimum_report`."""
    from .report import optimum_report as report

    return report(result)
