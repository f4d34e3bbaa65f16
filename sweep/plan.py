"""A group of sweep points that share one compiled simulation, and how its parameters are
written into the mechanism.

A *continuous* parameter is an array leaf of the mechanism pytree: its values are written
into one compiled mechanism by a :class:`ParameterWriter`, so they batch under ``jax.vmap``
and differentiate under ``jax.jacfwd``. Every other parameter (a contact law, a solver,
``t_end``) changes the static structure or the solver settings; each combination of their
values is a *group* with its own mechanism, settings and compilation. Who turns a
configuration into groups (``pipelines.sweeping.plan``) is not this package's business.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from model.integrate.settings import SolverSettings
from model.mechanics.mechanism import Mechanism


class ParameterWriter(Protocol):
    """Writes SI ``values[len(paths)]`` into a mechanism; pure JAX (``vmap``, ``jacfwd``)."""

    def apply(self, mechanism: Mechanism, values) -> Mechanism: ...


# ``resolver(mechanism, paths) -> ParameterWriter``: resolves dotted parameter paths once into
# pytree setters. It travels to worker processes, so it must pickle by reference (a class or
# a module-level function, such as ``pipelines.build.ParameterMap``).
ParameterResolver = Callable[[Mechanism, Sequence[str]], ParameterWriter]


@dataclasses.dataclass(frozen=True)
class ResolverByName:
    """A :data:`ParameterResolver` sent by name, imported when first called.

    Worker processes receive this instead of the resolver, so that unpickling a chunk's
    payload imports nothing a cached chunk function does not need: the resolver is only
    called to trace the chunk function, and ``pipelines.build.ParameterMap`` would import
    the config schema and pint (0.4 s of every worker's start). ``source_digest`` is the
    digest of the resolver's source file (:func:`sweep.executables.module_digest`), which
    the executable cache's key needs, taken where the resolver is imported
    (:func:`sweep.run.resolver_by_name`).
    """

    module: str
    qualified_name: str
    source_digest: str

    def resolve(self) -> ParameterResolver:
        target = importlib.import_module(self.module)
        for part in self.qualified_name.split("."):
            target = getattr(target, part)
        return target

    def __call__(self, mechanism: Mechanism, paths: Sequence[str]) -> ParameterWriter:
        return self.resolve()(mechanism, paths)


@dataclasses.dataclass
class Group:
    """Points of a sweep that share one compiled simulation.

    ``values[n]`` holds the SI values of ``paths`` (the continuous parameters) at global point
    ``points[n]``; ``problems[n]`` is why that point cannot run (``None`` when it can).
    ``mechanism`` and ``settings`` are ``None`` when no point of the group is valid;
    ``resolver`` writes ``paths`` into ``mechanism``.
    """

    index: int
    choices: dict[str, Any]  # discrete path -> SI value shared by the group
    paths: tuple[str, ...]
    points: np.ndarray  # int, global point indices
    values: np.ndarray  # float64 [points, paths]
    problems: list[str | None]
    mechanism: Mechanism | None = None
    settings: SolverSettings | None = None
    resolver: ParameterResolver | None = None

    @property
    def runnable(self) -> np.ndarray:
        """Positions (within the group) of the points that can run."""
        return np.array([n for n, problem in enumerate(self.problems) if problem is None], dtype=int)

    def label(self) -> str:
        """``"contact.model=flores"``-style name of the group (``"all"`` without choices)."""
        return ", ".join(f"{path.split('.', 2)[-1]}={value}" for path, value in self.choices.items()) or "all"
