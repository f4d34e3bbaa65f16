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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp

from ..build import build_mechanism, parameter_leaf, solver_settings
from ..config import MechanismConfig, load_pipeline_mechanism, si_value_in_base
from ..errors import ConfigError
from ..units import UnitError, quantity_to_si
from .cost import LinearCost, ToleranceCost
from .life import LifeRequirement, load_life
from .performance import metric_dimensions
from .schema import ConstraintEntry, CostTable, DesignEntry, check_optimizer, parse_optimize


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
        """Check the options against the ``[optimizer]`` schema (errors name ``optimizer.<key>``)."""
        check_optimizer(dataclasses.asdict(self), file)
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
    life: LifeRequirement | None = None  # [life]: its constraint J.life >= target is the last of `constraints`

    @property
    def simulated_constraints(self) -> list[Constraint]:
        """The constraints on the metrics of one simulation (all but the life's)."""
        return [c for c in self.constraints if self.life is None or c.metric != self.life.name]

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


def _design_variable(config, mechanism, entry: DesignEntry, index, file) -> DesignVariable:
    key = f"design.{index}"
    path = _check_path(mechanism, entry.path, file, f"{key}.path")
    lower, upper = _interval(config, path, entry.bounds, file, f"{key}.bounds")
    if entry.initial is not None:
        initial = si_value_in_base(config, path, entry.initial, file, f"{key}.initial", require_number=True)
        if not lower <= initial <= upper:
            raise ConfigError(file, f"{key}.initial", f"must lie within the bounds [{lower:g}, {upper:g}] (SI)")
    else:
        initial = min(max(float(config.si_value(path)), lower), upper)
    scale = entry.scale or ("log" if lower > 0 and upper / lower >= 10 else "linear")
    if scale == "log" and not lower > 0:
        raise ConfigError(file, f"{key}.scale", "a log scale needs a positive lower bound")
    weight = entry.cost_weight
    variable = DesignVariable(path, lower, upper, initial, scale == "log", None if weight is None else float(weight))
    if variable.is_clearance and weight is not None:
        raise ConfigError(file, f"{key}.cost_weight", "a clearance is priced by the [cost] tolerance model")
    return variable


def _constraints(mechanism, entries: list[ConstraintEntry], file) -> list[Constraint]:
    dimensions = metric_dimensions(mechanism)
    constraints = []
    for index, entry in enumerate(entries):
        metric = entry.metric
        if metric not in dimensions:
            raise ConfigError(file, f"constraints.{index}.metric", f"unknown metric {metric!r}; metrics: {', '.join(dimensions)}")
        for bound in ("max", "min"):
            if getattr(entry, bound) is None:
                continue
            try:
                limit = quantity_to_si(getattr(entry, bound), dimensions[metric])
            except UnitError as error:
                raise ConfigError(file, f"constraints.{index}.{bound}", str(error)) from None
            constraints.append(Constraint(metric, bound, limit, dimensions[metric]))
    return constraints


def _costs(table: CostTable, design: list[DesignVariable], file: str):
    min_clearance = table.min_clearance
    costs, min_clearances = {}, {}
    for index, variable in enumerate(design):
        if variable.is_clearance:
            if not variable.lower > min_clearance:
                raise ConfigError(
                    file, f"design.{index}.bounds",
                    f"the lower bound {variable.lower:g} m must exceed cost.min_clearance = {min_clearance:g} m",
                )
            reference = table.reference_band if table.reference_band is not None else variable.upper - min_clearance
            costs[variable.path] = ToleranceCost(reference, table.model, min_clearance, table.scale, table.exponent,
                                                 table.fixed)
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
    schema = parse_optimize(raw, file)
    mechanism = build_mechanism(config)
    if not mechanism.clearance_names:
        raise ConfigError(file, "base", f"{config.source} has no clearance joint to design")
    design = [_design_variable(config, mechanism, entry, index, file) for index, entry in enumerate(schema.design)]
    constraints = _constraints(mechanism, schema.constraints, file)
    uncertain = []
    for index, entry in enumerate(schema.uncertain):
        parameter = _check_path(mechanism, entry.path, file, f"uncertain.{index}.path")
        uncertain.append(UncertainParameter(parameter, *_interval(config, parameter, entry.range, file, f"uncertain.{index}.range")))
    paths = [variable.path for variable in design] + [parameter.path for parameter in uncertain]
    for index, parameter in enumerate(paths):
        if paths.index(parameter) != index:
            raise ConfigError(file, parameter, "appears twice among the design and uncertain parameters")
    costs, min_clearances = _costs(schema.cost, design, file)
    options = DesignSearchOptions(**schema.optimizer.model_dump())
    life = None
    if schema.life is not None:
        life = load_life(schema.life, config, file, paths)
        constraints.append(Constraint(life.name, "min", life.target_cycles, "cycles"))
    return DesignProblem(file, config, design, constraints, uncertain, options, costs, min_clearances, life)
