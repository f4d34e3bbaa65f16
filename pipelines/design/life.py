"""The service-life requirement of a tolerance design (``[life]`` of an optimize config).

The worn joint's life under Archard wear (``model.simulate_life``: the life loop of
``clearance wear`` as one differentiable scan; ``model.service_life``: the cycles at which
the chosen metric first exceeds its limit, interpolated between the passes that bracket the
crossing) becomes the constraint ``J.life >= target_cycles`` of the design study, evaluated
per uncertain sample with its forward-mode derivative like every other constraint. A life
that never reaches the limit within the wear schedule's ``cycles`` is that many cycles
(``J.life_crossed`` = 0).

The wear law and schedule are a wear config (``clearance wear``'s format, on the same base)
or an inline ``[life.wear]`` table of its ``[wear]`` keys on the design config's own base
and ``[simulation]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jax.numpy as jnp
from jaxtyping import Array

import model

from ..build import solver_settings
from ..config import MechanismConfig
from ..errors import ConfigError
from ..units import UnitError, quantity_to_si
from ..wear.limit import LIMIT_DIMENSIONS
from ..wear.study import WearStudy, load_wear_study, wear_study
from .schema import LifeTable, parse_life_wear



@dataclass(frozen=True)
class LifeRequirement:
    """``study``'s worn joint must last ``target_cycles`` operating cycles before the life
    metric ``metric`` (of ``model.LIFE_METRICS``; ``peak_acceleration`` of body ``body``)
    exceeds ``limit`` (SI)."""

    study: WearStudy
    metric: str
    limit: float
    target_cycles: float
    body: int

    @property
    def name(self) -> str:
        """The constraint's metric: ``J.life`` (operating cycles)."""
        return f"{self.study.joint_name}.life"

    @property
    def schedule(self) -> model.LifeSchedule:
        table = self.study.table
        return model.LifeSchedule.covering(table.cycles, self.study.cycles_per_update, table.cycles_per_update)

    @property
    def settings(self) -> model.SolverSettings:
        """One pass's settings, solved in forward mode (the design's derivatives are forward-mode)."""
        return solver_settings(self.study.config, t_end=self.study.settings.t_end, adjoint="forward")

    def metrics(self, mechanism: model.Mechanism) -> dict[str, Array]:
        """``J.life`` (cycles), ``J.life_crossed`` (1 when the limit is reached within the
        schedule), ``J.life_<metric>`` (the metric at the end of the schedule, SI) and
        ``life.result`` (the worst solver result of the passes) of ``mechanism`` (the
        study's mechanism with the design's values written in)."""
        history = model.simulate_life(mechanism, self.settings, self.study.law, self.schedule)
        values = history.metric(self.metric, self.body)
        life, crossed = model.service_life(history.cycles, values, self.limit)
        joint = self.study.joint_name
        return {self.name: life, f"{joint}.life_crossed": crossed.astype(float), f"{joint}.life_{self.metric}": values[-1],
                "life.result": jnp.max(history.result).astype(int)}


def _study(table: LifeTable, config: MechanismConfig, file: str) -> WearStudy:
    if isinstance(table.wear, str):
        path = Path(file).parent / table.wear
        if not path.is_file():
            raise ConfigError(file, "life.wear", f"no wear config {str(path)!r}")
        study = load_wear_study(path)
        if Path(study.config.source).resolve() != Path(config.source).resolve():
            raise ConfigError(file, "life.wear", f"the wear config's base {study.config.source} is not this "
                                                 f"config's base {config.source}")
        return study
    wear = parse_life_wear(table.wear, file)
    try:
        return wear_study(file, config, wear)
    except ConfigError as error:
        raise ConfigError(file, f"life.{error.key}", error.message) from None


def load_life(table: LifeTable, config: MechanismConfig, file: str, paths: list[str]) -> LifeRequirement:
    """The requirement of a validated ``[life]`` table on the design config ``file``, whose
    design and uncertain parameters are ``paths``; every error is one :class:`ConfigError`."""
    study = _study(table, config, file)
    try:
        limit = quantity_to_si(table.limit, LIMIT_DIMENSIONS[table.metric])
    except UnitError as error:
        raise ConfigError(file, "life.limit", str(error)) from None
    if table.target_cycles > study.table.cycles:
        raise ConfigError(file, "life.target_cycles", f"{table.target_cycles:g} exceeds the {study.table.cycles:g} "
                                                      "cycles of the wear schedule: simulate a longer life")
    mechanism = study.mechanism
    if table.body is not None:
        if table.body not in mechanism.body_names:
            raise ConfigError(file, "life.body", f"unknown body {table.body!r}; choose from {list(mechanism.body_names)}")
        body = mechanism.body_names.index(table.body)
    else:
        body = max(mechanism.clearance_joints[study.joint].bearing_body, 0)
    if table.body is None and table.metric == "peak_acceleration" and mechanism.clearance_joints[study.joint].bearing_body < 0:
        raise ConfigError(file, "life.body", "the worn joint's bushing is the ground: name the body to watch")
    for path in paths:
        if path.startswith("drivers.") and study.table.period is None:
            raise ConfigError(file, "life", f"{path!r} varies the driver that sets the wear cycle's period; give "
                                            "the wear table a fixed period")
    return LifeRequirement(study, table.metric, limit, float(table.target_cycles), body)
