"""A wear config resolved against its base mechanism: the worn joint, the cycle's period, the
Archard law and the solver settings of one update's simulation (SI units throughout).

The worn joint is a planar revolute clearance joint (a profile of ``resolution`` angle bins)
or a spatial cylindrical clearance joint (one row of bins per slice, ``slices x resolution``;
its bearing length is the joint's contact length)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import jax.numpy as jnp
import numpy as np

import model
from model.contact.stiffness import effective_modulus
from model.contact.wear import hertz_half_width_squared
from model.integrate.life import with_clearance_joint, with_profile
from model.mechanics.spatial import CylindricalClearanceJoint, SpatialMechanism
from model.mechanics.tree import TreeMechanism

from ..build import build_mechanism, solver_settings
from ..config import MechanismConfig, SpatialConfig, load_pipeline_mechanism
from ..errors import ConfigError
from .schema import MAX_BIN_PER_HALF_WIDTH, WearTable, parse_wear


@dataclass(frozen=True)
class WearStudy:
    """Everything a life run needs: the base mechanism (its worn joint's profile set per
    update), the index and name of that joint, the ``[wear]`` table, the cycle period (s)
    and the settings of one update's simulation (warm-up plus counted cycles)."""

    file: str
    config: MechanismConfig | SpatialConfig
    mechanism: model.Mechanism | TreeMechanism | SpatialMechanism
    joint: int
    joint_name: str
    table: WearTable
    period: float
    settings: model.SolverSettings

    @property
    def start_time(self) -> float:
        """When the wear starts to count in each simulation (s): after the warm-up cycles."""
        return self.table.warmup_cycles * self.period

    @property
    def worn_joint(self) -> model.ClearanceJoint | CylindricalClearanceJoint:
        return self.mechanism.clearance_joints[self.joint]

    @property
    def cylindrical(self) -> bool:
        """Whether the worn joint is a spatial cylindrical clearance joint (a profile per slice)."""
        return isinstance(self.worn_joint, CylindricalClearanceJoint)

    @property
    def profile_shape(self) -> tuple[int, ...]:
        """``(resolution,)``, or ``(slices, resolution)`` for a cylindrical joint."""
        return (self.worn_joint.slices, self.table.resolution) if self.cylindrical else (self.table.resolution,)

    @property
    def bearing_length(self) -> float:
        """The bushing's axial length (m): ``[wear] bearing_length``, or a cylindrical joint's contact length."""
        return float(self.worn_joint.length) if self.cylindrical else self.table.bearing_length

    @property
    def axial_positions(self) -> np.ndarray | None:
        """The slices' centres along the bearing's axis (m, from its centre); ``None`` for a planar joint."""
        return np.asarray(self.worn_joint.slice_positions()) if self.cylindrical else None

    @property
    def law(self) -> model.ArchardWear:
        return model.ArchardWear(coefficient=jnp.asarray(self.table.coefficient_per_pascal),
                                 length=jnp.asarray(self.bearing_length), start_time=jnp.asarray(self.start_time),
                                 joint=self.joint, resolution=self.table.resolution)

    @property
    def cycles_per_update(self) -> float:
        """Operating cycles one update stands for (the last may stand for fewer)."""
        return self.table.extrapolation * self.table.cycles_per_update

    @property
    def updates(self) -> int:
        """Profile updates over the life: the life loop runs one simulation more (of the final profile)."""
        return math.ceil(self.table.cycles / self.cycles_per_update - 1e-9)

    def with_profile(self, depth: np.ndarray) -> model.Mechanism | TreeMechanism | SpatialMechanism:
        """The mechanism with the worn joint's bushing at ``depth`` (m per angle bin; per slice
        and bin for a cylindrical joint, any array of :attr:`profile_shape`'s size)."""
        return with_profile(self.mechanism, self.joint, jnp.asarray(np.reshape(depth, self.profile_shape)))

    def fingerprint(self) -> dict:
        """What a stored life must share with this study to be resumed (the life's length may grow)."""
        table = self.table.model_dump(exclude={"cycles"})
        return {"base": str(self.config.source), "joint": self.joint_name, "period": self.period,
                "t_end": self.settings.t_end, "output_interval": self.settings.output_interval,
                "solver": self.settings.solver, "rtol": self.settings.rtol, "atol": self.settings.atol,
                **{key: list(value) if isinstance(value, tuple) else value for key, value in table.items()}}


def _period(config: MechanismConfig, table: WearTable, file: str) -> float:
    if table.period is not None:
        return table.period
    speeds = [driver.speed for driver in config.drivers if driver.type == "constant_speed"]
    if len(speeds) != 1 or speeds[0] == 0.0:
        raise ConfigError(file, "wear.period", "the base has no single constant-speed driver to take one cycle from; "
                                               'give the cycle\'s duration, e.g. period = "12 ms"')
    return 2.0 * math.pi / abs(speeds[0])


def _with_modulus(config: MechanismConfig, mechanism: model.Mechanism, index: int, name: str, file: str):
    """The joint's effective modulus, which the Hertz contact width needs, also where its
    stiffness is given as a number (the modulus is then not used by the contact force)."""
    joint_config = next(j for j in config.joints if j.name == name)
    if joint_config.materials is None:
        raise ConfigError(file, "wear.joint", f"joint {name!r} of {config.source} names no materials: "
                                              "the Hertz contact width of the wear law needs them")
    first, second = (config.materials[material] for material in joint_config.materials)
    modulus = effective_modulus(first.youngs_modulus, first.poisson_ratio, second.youngs_modulus, second.poisson_ratio)
    return with_clearance_joint(mechanism, index, effective_modulus=jnp.asarray(modulus))


def _check_resolution(joint, length: float, table: WearTable, file: str) -> None:
    """No bin wider than the Hertz half-width under ``reference_force`` over ``length``: the
    line load, and so the half-width, of a cylindrical joint's slice is the joint's."""
    half_width = math.sqrt(float(hertz_half_width_squared(table.reference_force, length,
                                                          joint.effective_modulus, joint.bearing_radius,
                                                          joint.clearance)))
    bin_width = 2.0 * math.pi * float(joint.bearing_radius) / table.resolution
    if bin_width > MAX_BIN_PER_HALF_WIDTH * half_width:
        needed = math.ceil(2.0 * math.pi * float(joint.bearing_radius) / (MAX_BIN_PER_HALF_WIDTH * half_width))
        raise ConfigError(file, "wear.resolution",
                          f"{table.resolution} bins are {bin_width * 1e6:.3g} um wide, wider than the Hertz contact "
                          f"half-width {half_width * 1e6:.3g} um under reference_force = {table.reference_force:g} N; "
                          f"use at least {needed}")


def load_wear_study(path: str | Path, overrides: tuple[str, ...] | list[str] = ()) -> WearStudy:
    """Read and validate a wear config and its base; every error is one :class:`ConfigError`."""
    file = str(path)
    raw, config = load_pipeline_mechanism(path, overrides)
    return wear_study(file, config, parse_wear(raw, file).wear)


def wear_study(file: str, config: MechanismConfig, table: WearTable) -> WearStudy:
    """The study of the ``[wear]`` table ``table`` on the loaded mechanism config ``config``
    of the pipeline file ``file`` (errors name ``wear.KEY`` of that file)."""
    # the engine of ``simulation.engine``: the worn bore is written into the clearance joint
    # of the absolute description either engine holds (model.integrate.life.with_profile)
    mechanism = build_mechanism(config)
    spatial = mechanism.dimension == 3
    worn = mechanism.clearance_names[:len(mechanism.cylindrical_joints)] if spatial else mechanism.clearance_names
    kind = "cylindrical clearance joint" if spatial else "revolute clearance joint"
    if table.joint not in worn:
        raise ConfigError(file, "wear.joint", f"{table.joint!r} is not a {kind} of {config.source}; "
                                              f"choose from {list(worn)}")
    index = mechanism.clearance_names.index(table.joint)
    if spatial and table.bearing_length is not None:
        raise ConfigError(file, "wear.bearing_length", f"the bearing length of the cylindrical joint {table.joint!r} "
                                                       "is its contact length `length`; leave bearing_length out")
    if not spatial and table.bearing_length is None:
        raise ConfigError(file, "wear.bearing_length", "give the axial length of the bushing, e.g. "
                                                       'bearing_length = "20 mm"')
    mechanism = _with_modulus(config, mechanism, index, table.joint, file)
    joint = mechanism.clearance_joints[index]
    _check_resolution(joint, float(joint.length) if spatial else table.bearing_length, table, file)
    period = _period(config, table, file)
    t_end = (table.warmup_cycles + table.cycles_per_update) * period
    settings = solver_settings(config, t_end=t_end)
    return WearStudy(file, config, mechanism, index, table.joint, table, period, settings)
