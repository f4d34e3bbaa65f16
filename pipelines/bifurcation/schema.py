"""The schema of a bifurcation config: ``base``, ``[bifurcation]`` (with its
``[bifurcation.values]`` range) and a ``[simulation]`` merged over the base's, validated by
pydantic with the one-line errors of :func:`pipelines.config.config_error`.

Checks that need the mechanism (is the path a parameter, do the range's values convert,
has the mechanism a constant-speed driver) are in :mod:`pipelines.bifurcation.study`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..config import Angle, FieldError, config_error
from ..sweeping.table import SCALES, Boolean, DottedPath, HyperplaneTable, _choice, _integer, check_hyperplane_capacity


class ValuesTable(BaseModel):
    """``[bifurcation.values]``: the parameter's values, written in the path's units."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: Any = Field(description="first value, with units (e.g. \"500 rpm\", \"0.1 mm\")")
    stop: Any = Field(description="last value, with units; larger than `start`")
    count: _integer(2) = Field(description="number of values from `start` to `stop` inclusive")
    scale: _choice("scale", SCALES) = Field("linear", description="spacing of the values: `linear` or `log`")


class BifurcationTable(BaseModel):
    """The ``[bifurcation]`` table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    parameter: DottedPath = Field(description="dotted path of the varied parameter, as in sweeps "
                                              "(e.g. drivers.motor.speed, joints.pin.clearance)")
    values: ValuesTable = Field(description="the values of `parameter`")
    transient_periods: _integer(0) = Field(20, description="driver periods discarded before the section (count)")
    periods: _integer(2) = Field(30, description="section samples kept, one per driver period (count); "
                                                  "more than `max_period`")
    section: Angle = Field(0.0, description="driver angle of the section past its initial angle (rad; "
                                             "e.g. \"90 deg\")")
    hyperplane: HyperplaneTable | None = Field(
        None, description="also a Poincaré section on crossing a hyperplane (crossings.parquet); period and motion are "
                          "then the crossings' (docs/nonlinear.md)")
    lyapunov: Boolean = Field(True, description="also compute the largest Lyapunov exponent (1/s)")
    max_period: _integer(1) = Field(8, description="longest period looked for, in driver periods (count)")
    period_tolerance: float = Field(1e-3, gt=0.0, description="section points repeat when they agree within this "
                                                               "share of each joint's clearance (dimensionless)")
    chaos_threshold: float = Field(0.01, gt=0.0, description="a non-periodic motion is chaotic when its largest "
                                                              "exponent times the driver period exceeds this "
                                                              "(dimensionless)")
    batch: _integer(1) = Field(1, description="values per compiled call (count): 1 runs them one after another "
                                               "(the faster on a CPU), more batches them with vmap (accelerators)")
    lanes: _integer(1) | None = Field(None, description="run the values through this many refilling lanes (count; "
                                                         "model.solve_ensemble): one compiled loop where a lane whose "
                                                         "value ends takes the next, so a slow value holds no other. "
                                                         "Each value is sampled at its own section times (a swept "
                                                         "driver speed included). Only for a stroboscopic section "
                                                         "without `lyapunov`, `continuation` or `hyperplane`; "
                                                         "absent: one value per call (`batch`)")
    continuation: Boolean = Field(False, description="start each value from the state the previous value reached at "
                                                     "its last section (numerical continuation in the order of the "
                                                     "values; one value per call), instead of from the base's initial "
                                                     "state")

    @model_validator(mode="after")
    def _continuation_runs_in_order(self) -> "BifurcationTable":
        if self.continuation and self.batch > 1:
            raise FieldError(["batch"], f"continuation runs the values one after another, each from the previous "
                                        f"one's end; got batch = {self.batch} (use 1)")
        return self

    @model_validator(mode="after")
    def _lanes_sample_the_state_only(self) -> "BifurcationTable":
        if self.lanes is None:
            return self
        need = "lanes carry each value's state only, sampled at the section times"
        if self.lyapunov:
            raise FieldError(["lanes"], f"the Lyapunov exponent needs tangent vectors; {need}: set lyapunov = false "
                                        f"or remove lanes")
        if self.continuation:
            raise FieldError(["lanes"], f"continuation starts each value from the previous one's end; {need}: "
                                        f"set continuation = false or remove lanes")
        if self.hyperplane is not None:
            raise FieldError(["lanes"], f"the hyperplane section needs each step's crossings; {need}: remove "
                                        f"[bifurcation.hyperplane] or lanes")
        if self.batch > 1:
            raise FieldError(["lanes"], f"batch = {self.batch} and lanes are two ways to run several values at "
                                        f"once; give one")
        return self

    @model_validator(mode="after")
    def _enough_periods(self) -> "BifurcationTable":
        if self.periods <= self.max_period:
            raise FieldError(["periods"], f"{self.periods} section samples after the transient cannot show a period "
                                          f"up to max_period = {self.max_period}; give more than {self.max_period}")
        check_hyperplane_capacity(self.hyperplane, self.max_period)
        return self


class BifurcationConfig(BaseModel):
    """A bifurcation config file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base: str = Field(description="the mechanism file, relative to this config's folder")
    bifurcation: BifurcationTable = Field(description="the varied parameter, its values and the section")
    simulation: dict[str, Any] = Field(
        {}, description="[simulation] keys merged over the base's (the run's length follows from transient_periods and periods)")


def parse_bifurcation_table(pipeline: dict, source: str) -> BifurcationTable:
    """Validate a bifurcation config's raw dict; a :class:`~pipelines.errors.ConfigError`
    naming ``source`` and the key otherwise."""
    try:
        return BifurcationConfig.model_validate(pipeline).bifurcation
    except ValidationError as error:
        raise config_error(error, pipeline, source, BifurcationConfig) from None
