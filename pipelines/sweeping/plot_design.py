"""What a sweep's figures need of its design, as plain picklable data: a process that draws
them (:mod:`pipelines.sweeping.figure_processes`) unpickles it without importing the config
schema, the simulator or JAX, which a :class:`~pipelines.sweeping.design.SweepDesign` would
pull in."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .design import SweepDesign


@dataclasses.dataclass(frozen=True)
class PlotParameter:
    """What the figures need of a swept parameter: its path, display unit, scale
    (``"linear"``/``"log"``), whether it is sampled, and its levels (SI values, or the
    choices' names of a discrete parameter)."""

    path: str
    unit: str
    scale: str
    sampled: bool
    levels: tuple


@dataclasses.dataclass(frozen=True)
class PlotDesign:
    """What the figures need of a :class:`~pipelines.sweeping.design.SweepDesign`."""

    kind: str
    parameters: tuple[PlotParameter, ...]

    @classmethod
    def of(cls, design: SweepDesign) -> PlotDesign:
        return cls(design.kind, tuple(
            PlotParameter(p.path, p.unit, p.scale, p.sampled, tuple(level.si for level in p.levels))
            for p in design.parameters))

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(p.path for p in self.parameters)

    @property
    def sampled_parameters(self) -> tuple[PlotParameter, ...]:
        return tuple(p for p in self.parameters if p.sampled)
