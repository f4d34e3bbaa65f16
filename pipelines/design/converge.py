"""Contact-stiffness convergence study.

A theoretical (Hertz) contact stiffness makes the equations very stiff;
start with a stiffness one to two orders of magnitude below it, raise it step by step and
watch the peak contact force and the penetration. Once the peak force changes by less
than 5 % the stiffness is "basically sufficient" and need not be pushed to the theoretical
value; a stiffness that is too low shows as low forces and large penetrations, so the final
penetration must stay well below the clearance (e.g. 10 % of it;
docs/reference.md).

The stiffness is scaled through ``joints.J.contact.stiffness_factor`` (an array leaf), so
every level reuses one compiled simulation. Levels are ``start, start r, start r^2, ...``
up to ``max_factor`` (1 = the configured stiffness), run in order, stopping at the first
level whose peak force differs from the previous level's by less than ``tolerance`` (for
every studied joint). Peak forces come from the output samples: keep the output interval
below the contact period (reported per level).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Annotated

import jax
import jax.numpy as jnp
import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, model_validator
from pydantic_core import PydanticCustomError
from tqdm import tqdm

import model

from ..build import ParameterMap, build_mechanism, solver_settings
from ..config import MechanismConfig
from ..errors import ConfigError


# Output samples per contact period below which a peak force may fall between samples.
MIN_SAMPLES_PER_CONTACT = 5


@dataclass(frozen=True)
class ConvergenceOptions:
    """Levels and criteria of the study (factors relative to the configured stiffness)."""

    start_factor: float = 0.01  # one to two orders of magnitude below the theory
    ratio: float = math.sqrt(10.0)  # two levels per decade
    max_factor: float = 1.0  # the configured (theoretical) stiffness
    tolerance: float = 0.05  # peak force change < 5 %
    penetration_limit: float = 0.1  # max penetration / clearance must stay below this
    joints: tuple[str, ...] = ()  # clearance joints to scale together; () = all

    def validate(self) -> "ConvergenceOptions":
        """Refuse impossible settings (:class:`ConvergenceFlags`), naming the command-line flag."""
        values = {name: getattr(self, name) for name in ConvergenceFlags.model_fields}
        try:
            ConvergenceFlags.model_validate(values)
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            name = str(first["loc"][0]) if first["loc"] else "start_factor"
            message = str(first["ctx"]["error"]) if "error" in (first.get("ctx") or {}) else first["msg"]
            raise ConfigError(f"--{name.replace('_', '-')}", "", message) from None
        return self


def _bounded(test, describe: str):
    """A float flag that must pass ``test``: refused as ``must be <describe>, got <value>``."""

    def check(value: float) -> float:
        if not test(value):
            raise PydanticCustomError("message", f"must be {describe}, got {value:g}")
        return value

    return Annotated[float, BeforeValidator(check)]


class ConvergenceFlags(BaseModel):
    """The schema of the study's settings (given as command-line flags)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start_factor: _bounded(lambda v: v > 0, "> 0")
    ratio: _bounded(lambda v: v > 1, "> 1")
    max_factor: float
    tolerance: _bounded(lambda v: 0 < v < 1, "in (0, 1)")
    penetration_limit: _bounded(lambda v: v > 0, "> 0")

    @model_validator(mode="after")
    def _ordered(self) -> "ConvergenceFlags":
        if not self.start_factor <= self.max_factor:
            raise ValueError(f"must be > 0 and <= max_factor ({self.max_factor:g}), got {self.start_factor:g}")
        return self


def stiffness_levels(options: ConvergenceOptions) -> list[float]:
    """``start r^k`` below ``max_factor``, then ``max_factor`` itself."""
    levels, factor = [], options.start_factor
    while factor < options.max_factor * (1 - 1e-9):
        levels.append(factor)
        factor *= options.ratio
    levels.append(options.max_factor)
    return levels


def relative_change(current: float, previous: float) -> float:
    """``|F_k - F_{k-1}| / F_k`` (the change a further stiffening step made)."""
    return abs(current - previous) / abs(current) if current != 0 else (0.0 if previous == 0 else math.inf)


def run_convergence(config: MechanismConfig, options: ConvergenceOptions = ConvergenceOptions(),
                    progress: bool = True) -> dict:
    """Run the levels in order until the criterion holds; returns the study as a dict (SI)."""
    mechanism = build_mechanism(config)
    names = options.joints or mechanism.clearance_names
    if not mechanism.clearance_names:
        raise ConfigError(config.source, "joints", "no revolute_clearance joint: nothing to converge")
    for name in names:
        if name not in mechanism.clearance_names:
            raise ConfigError("--joint", name, f"not a clearance joint; clearance joints: {', '.join(mechanism.clearance_names)}")
    settings = solver_settings(config)
    parameters = ParameterMap(mechanism, [f"joints.{name}.contact.stiffness_factor" for name in names], config.source)
    configured = np.asarray(parameters.read(mechanism))
    indices = [mechanism.clearance_names.index(name) for name in names]

    def level_outputs(factors):
        scaled = parameters.apply(mechanism, factors)
        trajectory = model.simulate(scaled, settings)
        metrics = model.summary_metrics(scaled, trajectory)
        return {
            "max_normal_force": jnp.stack([metrics[f"{n}.max_normal_force"] for n in names]),
            "max_penetration": jnp.stack([metrics[f"{n}.max_penetration"] for n in names]),
            "stiffness": jnp.stack([scaled.clearance_joints[i].stiffness() for i in indices]),
            "contact_period": model.contact_periods(scaled)[jnp.asarray(indices)],
            "steps": trajectory.steps,
            "result": trajectory.result,
        }

    simulate = jax.jit(level_outputs)
    clearances = [float(mechanism.clearance_joints[i].clearance) for i in indices]
    study = {
        "config": config.source,
        "joints": list(names),
        "criterion": "relative change of the peak normal force from the previous level < tolerance",
        "tolerance": options.tolerance,
        "penetration_limit": options.penetration_limit,
        "ratio": options.ratio,
        "solver": settings.solver,
        "output_interval": settings.output_interval,
        "levels": [],
        "converged": False,
    }
    previous = None
    levels = stiffness_levels(options)
    bar = tqdm(levels, desc="converge", unit="level", disable=not progress)
    for factor in bar:
        started = time.perf_counter()
        out = jax.tree_util.tree_map(np.asarray, jax.block_until_ready(simulate(jnp.asarray(configured * factor))))
        seconds = time.perf_counter() - started
        level = {"stiffness_factor": factor, "seconds_incl_compile" if previous is None else "seconds": seconds,
                 "steps": int(out["steps"]), "status": model.result_message(int(out["result"])), "joints": {}}
        changes = []
        for k, name in enumerate(names):
            peak = float(out["max_normal_force"][k])
            change = None if previous is None else relative_change(peak, previous[k])
            changes.append(change)
            level["joints"][name] = {
                "stiffness": float(out["stiffness"][k]),
                "max_normal_force": peak,
                "peak_force_change": change,
                "max_penetration": float(out["max_penetration"][k]),
                "penetration_share": float(out["max_penetration"][k]) / clearances[k],
                "contact_period": float(out["contact_period"][k]),
                # peaks between output samples are missed when the contact lasts only a few samples
                "sampling_ok": settings.output_interval <= float(out["contact_period"][k]) / MIN_SAMPLES_PER_CONTACT,
            }
        study["levels"].append(level)
        shown = ", ".join(f"{n}: {level['joints'][n]['max_normal_force']:.4g} N" for n in names)
        bar.set_postfix_str(f"x{factor:.3g} {shown}")
        if level["status"] != "ok":
            study["stopped"] = f"solver failed at factor {factor:g}: {level['status']}"
            break
        previous = [float(v) for v in out["max_normal_force"]]
        if all(change is not None and change < options.tolerance for change in changes):
            study["converged"] = True
            break
    bar.close()

    final = study["levels"][-1]
    study["final_stiffness_factor"] = final["stiffness_factor"]
    study["penetration_ok"] = all(j["penetration_share"] < options.penetration_limit for j in final["joints"].values())
    study["recommended"] = {
        name: {"stiffness_factor": final["stiffness_factor"] * float(configured[k]),
               "stiffness": final["joints"][name]["stiffness"]}
        for k, name in enumerate(names)
    } if study["converged"] else None
    study["verdict"] = _verdict(study, options)
    return study


def _verdict(study: dict, options: ConvergenceOptions) -> str:
    final = study["levels"][-1]
    if "stopped" in study:
        return study["stopped"]
    penetration = "penetration below" if study["penetration_ok"] else "penetration NOT below"
    sampled = all(j["sampling_ok"] for level in study["levels"] for j in level["joints"].values())
    warning = "" if sampled else (f"; WARNING: output_interval > contact period / {MIN_SAMPLES_PER_CONTACT} at some "
                                  "level, peaks may fall between samples (refine simulation.output_interval)")
    limit = f"{100 * options.penetration_limit:g} % of the clearance"
    if study["converged"]:
        return (f"converged at {final['stiffness_factor']:g} x the configured stiffness "
                f"(peak force change < {100 * options.tolerance:g} %), {penetration} {limit}{warning}")
    return (f"not converged up to {final['stiffness_factor']:g} x the configured stiffness: the peak force still "
            f"changes by >= {100 * options.tolerance:g} % per step (impact peaks grow with K, roughly K^0.4 for a "
            f"Hertz impact); {penetration} {limit}{warning}")
