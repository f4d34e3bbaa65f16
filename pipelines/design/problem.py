"""A tolerance-design config (``configs/optimize_example.toml``) read into a :class:`DesignProblem`.

Format (the example's keys, plus optional ones)::

    base = "flores_slider_crank.toml"

    [[design]]                      # one per design variable
    path = "joints.pin.clearance"   # a continuous parameter (pipelines.build.parameter_leaf)
    bounds = ["0.01 mm", "0.5 mm"]
    initial = "0.3 mm"              # optional; default: the base's value, clipped to the bounds
    scale = "log"                   # optional: "log" | "linear"; default log when upper/lower >= 10
    cost_weight = 0.5               # optional linear cost over the bounds (not for clearances)

    [[constraints]]
    metric = "pin.max_normal_force" # see pipelines.design.performance
    max = "5 kN"                    # and/or min = ...

    [[uncertain]]                   # uniform over range, sampled (Latin hypercube)
    path = "joints.pin.contact.restitution"
    range = [0.6, 0.95]

    [simulation]                    # merged over the base's [simulation]
    t_end = "120 ms"

    [optimizer]                     # optional, see DesignSearchOptions
    samples = 4

    [cost]                          # optional, see pipelines.design.cost
    model = "reciprocal_power"
    min_clearance = "0 mm"

Every value with a unit is converted to SI through the base mechanism's own validation, so
a bound the mechanism would refuse (a clearance above the bearing radius, a restitution
above 1) is refused here, naming the pipeline file and key.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp

from ..build import build_mechanism, parameter_leaf, solver_settings
from ..config import MechanismConfig, load_pipeline_mechanism, si_value_in_base
from ..errors import ConfigError
from ..units import UnitError, quantity_to_si
from .cost import COST_MODELS, LinearCost, ToleranceCost
from .performance import metric_dimensions

TOP_LEVEL_KEYS = ("base", "name", "description", "design", "constraints", "uncertain", "simulation", "optimizer", "cost")
DESIGN_KEYS = ("path", "bounds", "initial", "scale", "cost_weight")
CONSTRAINT_KEYS = ("metric", "max", "min")
UNCERTAIN_KEYS = ("path", "range")
COST_KEYS = ("model", "exponent", "scale", "fixed", "reference_band", "min_clearance")


@dataclass(frozen=True)
class DesignSearchOptions:
    """Knobs of the design study (``[optimizer]`` table; CLI flags override)."""

    samples: int = 4  # uncertain samples per gradient evaluation (the vmap batch)
    iterations: int = 10  # augmented-Lagrangian iterations (one batched evaluation each)
    learning_rate: float = 0.08  # Adam step in normalised design units (box [0, 1])
    momentum: float = 0.5  # Adam b1
    inner_steps: int = 1  # Adam steps per multiplier update
    penalty: float = 10.0  # initial augmented-Lagrangian penalty rho
    time_smoothing: float = 0.01  # LogSumExp temperature over time, share of the limit
    sample_smoothing: float = 0.02  # LogSumExp temperature over samples, share of the limit
    seed: int = 0
    verification_samples: int = 8  # uncertain samples of the verification sweep
    verification_points: int = 3  # designs in the verification sweep per variable (odd)
    verification_step: float = 0.1  # relative spacing of the verification designs
    backoff_steps: int = 4  # if the optimum fails verification: verified bisection steps on the clearances
    pareto_points: int = 5  # designs of the cost-performance sweep over the bounds
    batching: str = "vmap"  # "vmap" (batched) | "map" (sequential; less wasted work on CPU)
    ideal_metrics: bool = False  # also simulate the ideal mechanism when no constraint needs it

    def validate(self, file: str) -> "DesignSearchOptions":
        counts = ("samples", "iterations", "inner_steps", "verification_samples", "verification_points",
                  "pareto_points", "backoff_steps", "seed")
        for name in counts:
            value = getattr(self, name)
            minimum = 0 if name in ("pareto_points", "backoff_steps", "seed") else 1
            if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
                raise ConfigError(file, f"optimizer.{name}", f"must be an integer >= {minimum}, got {value!r}")
        for name in ("learning_rate", "penalty", "time_smoothing", "sample_smoothing", "verification_step"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ConfigError(file, f"optimizer.{name}", f"must be a number > 0, got {value!r}")
        if not self.verification_step < 1.0:
            raise ConfigError(file, "optimizer.verification_step", f"must be < 1, got {self.verification_step!r}")
        if not 0.0 <= self.momentum < 1.0:
            raise ConfigError(file, "optimizer.momentum", f"must be in [0, 1), got {self.momentum!r}")
        if self.batching not in ("vmap", "map"):
            raise ConfigError(file, "optimizer.batching", f'must be "vmap" or "map", got {self.batching!r}')
        if not isinstance(self.ideal_metrics, bool):
            raise ConfigError(file, "optimizer.ideal_metrics", f"must be true or false, got {self.ideal_metrics!r}")
        return self


@dataclass(frozen=True)
class DesignVariable:
    """A design variable: dotted path, bounds and start value (SI), and its normalisation
    ``z in [0, 1]`` (linear, or linear in ``log x``)."""

    path: str
    lower: float
    upper: float
    initial: float
    log: bool
    cost_weight: float | None = None

    @property
    def is_clearance(self) -> bool:
        return self.path.startswith("joints.") and self.path.endswith(".clearance")

    @property
    def joint(self) -> str:
        return self.path.split(".")[1]

    def to_physical(self, z):
        if self.log:
            value = jnp.exp(jnp.log(self.lower) + z * (jnp.log(self.upper) - jnp.log(self.lower)))
        else:
            value = self.lower + z * (self.upper - self.lower)
        # exact bounds despite exp/log round-off, without zeroing the derivative at a bound
        return value + jax.lax.stop_gradient(jnp.clip(value, self.lower, self.upper) - value)

    def to_unit(self, value: float) -> float:
        if self.log:
            return (math.log(value) - math.log(self.lower)) / (math.log(self.upper) - math.log(self.lower))
        return (value - self.lower) / (self.upper - self.lower)


@dataclass(frozen=True)
class Constraint:
    """``metric <= limit`` (``bound = "max"``) or ``metric >= limit`` (``"min"``), SI."""

    metric: str
    bound: str
    limit: float
    dimension: str

    @property
    def name(self) -> str:
        return f"{self.metric} {'<=' if self.bound == 'max' else '>='} {self.limit:g}"

    def normalised(self, value):
        """``g <= 0`` when satisfied, in units of the limit."""
        scale = abs(self.limit) if self.limit != 0 else 1.0
        return (value - self.limit) / scale if self.bound == "max" else (self.limit - value) / scale


@dataclass(frozen=True)
class UncertainParameter:
    """A parameter drawn uniformly from ``[lower, upper]`` (SI)."""

    path: str
    lower: float
    upper: float


@dataclass
class DesignProblem:
    """Everything a design study needs, validated and in SI."""

    source: str
    config: MechanismConfig
    design: list[DesignVariable]
    constraints: list[Constraint]
    uncertain: list[UncertainParameter]
    options: DesignSearchOptions
    costs: dict[str, Any] = field(default_factory=dict)  # path -> ToleranceCost | LinearCost
    min_clearances: dict[str, float] = field(default_factory=dict)  # joint -> lower band edge (m)

    @property
    def stem(self) -> str:
        return Path(self.source).stem

    def mechanism(self):
        return build_mechanism(self.config)

    def settings(self, mechanism=None, **changes):
        return solver_settings(self.config, **changes)

    def cost(self, values) -> Any:
        """Total cost of the design values (SI, in :attr:`design` order); pure JAX."""
        total = 0.0
        for index, variable in enumerate(self.design):
            term = self.costs.get(variable.path)
            if term is not None:
                total = total + term(values[index])
        return total

    def with_options(self, **changes) -> "DesignProblem":
        options = dataclasses.replace(self.options, **{k: v for k, v in changes.items() if v is not None})
        return dataclasses.replace(self, options=options.validate(self.source))


# ---------------------------------------------------------------------------------------------


def _entries(raw: Mapping[str, Any], key: str, allowed: tuple[str, ...], file: str, required: bool) -> list[dict]:
    entries = raw.get(key, [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(file, key, f"expected an array of tables [[{key}]]")
    if required and not entries:
        raise ConfigError(file, key, f"at least one [[{key}]] entry is required")
    for index, entry in enumerate(entries):
        for name in entry:
            if name not in allowed:
                raise ConfigError(file, f"{key}.{index}.{name}", f"unknown key; allowed keys: {', '.join(allowed)}")
    return entries


def _interval(config, path, values, file, key) -> tuple[float, float]:
    if not isinstance(values, list) or len(values) != 2:
        raise ConfigError(file, key, f"expected [lower, upper], got {values!r}")
    lower, upper = (si_value_in_base(config, path, value, file, key, require_number=True) for value in values)
    if not lower < upper:
        raise ConfigError(file, key, f"expected lower < upper, got {lower:g} >= {upper:g} (SI)")
    return lower, upper


def _check_path(mechanism, path: Any, file: str, key: str) -> str:
    if not isinstance(path, str):
        raise ConfigError(file, key, f"expected a dotted path string, got {path!r}")
    try:
        parameter_leaf(mechanism, path, file)
    except ConfigError as error:
        raise ConfigError(file, key, f"{path!r}: {error.message}") from None
    return path


def _design_variable(config, mechanism, entry, index, file) -> DesignVariable:
    key = f"design.{index}"
    path = _check_path(mechanism, entry.get("path"), file, f"{key}.path")
    if "bounds" not in entry:
        raise ConfigError(file, f"{key}.bounds", "required key is missing")
    lower, upper = _interval(config, path, entry["bounds"], file, f"{key}.bounds")
    if "initial" in entry:
        initial = si_value_in_base(config, path, entry["initial"], file, f"{key}.initial", require_number=True)
        if not lower <= initial <= upper:
            raise ConfigError(file, f"{key}.initial", f"must lie within the bounds [{lower:g}, {upper:g}] (SI)")
    else:
        initial = min(max(float(config.si_value(path)), lower), upper)
    scale = entry.get("scale", "log" if lower > 0 and upper / lower >= 10 else "linear")
    if scale not in ("log", "linear"):
        raise ConfigError(file, f"{key}.scale", f'expected "log" or "linear", got {scale!r}')
    if scale == "log" and not lower > 0:
        raise ConfigError(file, f"{key}.scale", "a log scale needs a positive lower bound")
    weight = entry.get("cost_weight")
    if weight is not None and (isinstance(weight, bool) or not isinstance(weight, (int, float))):
        raise ConfigError(file, f"{key}.cost_weight", f"expected a number, got {weight!r}")
    variable = DesignVariable(path, lower, upper, initial, scale == "log", None if weight is None else float(weight))
    if variable.is_clearance and weight is not None:
        raise ConfigError(file, f"{key}.cost_weight", "a clearance is priced by the [cost] tolerance model")
    return variable


def _constraints(mechanism, entries, file) -> list[Constraint]:
    dimensions = metric_dimensions(mechanism)
    constraints = []
    for index, entry in enumerate(entries):
        metric = entry.get("metric")
        if metric not in dimensions:
            raise ConfigError(file, f"constraints.{index}.metric", f"unknown metric {metric!r}; metrics: {', '.join(dimensions)}")
        bounds = [bound for bound in ("max", "min") if bound in entry]
        if not bounds:
            raise ConfigError(file, f"constraints.{index}", "needs max = ... and/or min = ...")
        for bound in bounds:
            try:
                limit = quantity_to_si(entry[bound], dimensions[metric])
            except UnitError as error:
                raise ConfigError(file, f"constraints.{index}.{bound}", str(error)) from None
            constraints.append(Constraint(metric, bound, limit, dimensions[metric]))
    return constraints


def _options(raw: Any, file: str) -> DesignSearchOptions:
    if raw is None:
        return DesignSearchOptions()
    if not isinstance(raw, dict):
        raise ConfigError(file, "optimizer", "expected a table")
    allowed = [f.name for f in dataclasses.fields(DesignSearchOptions)]
    for name in raw:
        if name not in allowed:
            raise ConfigError(file, f"optimizer.{name}", f"unknown key; allowed keys: {', '.join(allowed)}")
    return DesignSearchOptions(**raw).validate(file)


def _costs(raw: Any, design: list[DesignVariable], config: MechanismConfig, file: str):
    raw = {} if raw is None else raw
    if not isinstance(raw, dict):
        raise ConfigError(file, "cost", "expected a table")
    for name in raw:
        if name not in COST_KEYS:
            raise ConfigError(file, f"cost.{name}", f"unknown key; allowed keys: {', '.join(COST_KEYS)}")
    model = raw.get("model", "reciprocal_power")
    if model not in COST_MODELS:
        raise ConfigError(file, "cost.model", f"unknown cost model {model!r}; expected one of {COST_MODELS}")
    numbers = {}
    for name, default in (("exponent", 1.0), ("scale", 1.0), ("fixed", 0.0)):
        value = raw.get(name, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (name != "fixed" and not value > 0):
            raise ConfigError(file, f"cost.{name}", f"expected a number{' > 0' if name != 'fixed' else ''}, got {value!r}")
        numbers[name] = float(value)
    lengths = {}
    for name in ("min_clearance", "reference_band"):
        if name in raw:
            try:
                lengths[name] = quantity_to_si(raw[name], "length")
            except UnitError as error:
                raise ConfigError(file, f"cost.{name}", str(error)) from None
    min_clearance = lengths.get("min_clearance", 0.0)
    if min_clearance < 0:
        raise ConfigError(file, "cost.min_clearance", f"must be >= 0, got {min_clearance:g} m")
    if "reference_band" in lengths and not lengths["reference_band"] > 0:
        raise ConfigError(file, "cost.reference_band", "must be > 0")
    costs, min_clearances = {}, {}
    for index, variable in enumerate(design):
        if variable.is_clearance:
            if not variable.lower > min_clearance:
                raise ConfigError(
                    file, f"design.{index}.bounds",
                    f"the lower bound {variable.lower:g} m must exceed cost.min_clearance = {min_clearance:g} m",
                )
            reference = lengths.get("reference_band", variable.upper - min_clearance)
            costs[variable.path] = ToleranceCost(reference, model, min_clearance, numbers["scale"],
                                                 numbers["exponent"], numbers["fixed"])
            min_clearances[variable.joint] = min_clearance
        elif variable.cost_weight is not None:
            costs[variable.path] = LinearCost(variable.cost_weight, variable.lower, variable.upper)
    if not costs:
        raise ConfigError(file, "design", "no design variable carries a cost: design a joints.J.clearance or give cost_weight")
    return costs, min_clearances


def load_design_problem(path: str | Path, overrides: tuple[str, ...] | list[str] = ()) -> DesignProblem:
    """Read and validate a tolerance-design config; every error is one :class:`ConfigError`."""
    file = str(path)
    raw, config = load_pipeline_mechanism(path, overrides)
    for name in raw:
        if name not in TOP_LEVEL_KEYS:
            raise ConfigError(file, name, f"unknown key; allowed keys: {', '.join(TOP_LEVEL_KEYS)}")
    if getattr(config, "dimension", 2) == 3:
        # the design metrics compare against the ideal twin in planar coordinates
        raise ConfigError(file, "base", f"{config.source} is a spatial mechanism; optimize needs a planar base")
    mechanism = build_mechanism(config)
    if not mechanism.clearance_names:
        raise ConfigError(file, "base", f"{config.source} has no revolute_clearance joint to design")
    design = [
        _design_variable(config, mechanism, entry, index, file)
        for index, entry in enumerate(_entries(raw, "design", DESIGN_KEYS, file, required=True))
    ]
    constraints = _constraints(mechanism, _entries(raw, "constraints", CONSTRAINT_KEYS, file, required=True), file)
    uncertain = []
    for index, entry in enumerate(_entries(raw, "uncertain", UNCERTAIN_KEYS, file, required=False)):
        parameter = _check_path(mechanism, entry.get("path"), file, f"uncertain.{index}.path")
        if "range" not in entry:
            raise ConfigError(file, f"uncertain.{index}.range", "required key is missing")
        uncertain.append(UncertainParameter(parameter, *_interval(config, parameter, entry["range"], file, f"uncertain.{index}.range")))
    paths = [variable.path for variable in design] + [parameter.path for parameter in uncertain]
    for index, parameter in enumerate(paths):
        if paths.index(parameter) != index:
            raise ConfigError(file, parameter, "appears twice among the design and uncertain parameters")
    costs, min_clearances = _costs(raw.get("cost"), design, config, file)
    return DesignProblem(file, config, design, constraints, uncertain, _options(raw.get("optimizer"), file),
                         costs, min_clearances)
