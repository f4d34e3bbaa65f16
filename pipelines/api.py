"""The Python entry point: a mechanism config loaded once, simulated and varied in JAX.

``pipelines.load(path)`` returns a :class:`ConfiguredMechanism`: the built model
(:func:`pipelines.build.build_mechanism`), its solver settings
(:func:`pipelines.build.solver_settings`) and the config it came from. Its methods are thin
wrappers over the machinery the commands use: :func:`model.simulate`,
:func:`model.summary_metrics` and :class:`pipelines.build.ParameterMap` for dotted parameter
paths. Everything below ``with_parameters`` is pure JAX, so ``jax.grad``, ``jax.jvp`` and
``jax.vmap`` go through a function of the parameter values (see docs/api.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

import jax
import jax.numpy as jnp

import model
from model.integrate.settings import SolverSettings
from model.mechanics.interface import AbstractMechanism

from .build import ParameterMap, build_mechanism, solver_settings
from .config import MechanismConfig, load_mechanism

# One compiled solve per (mechanism structure, settings): jit caches on both.
_simulate = jax.jit(model.simulate, static_argnums=1)


@dataclasses.dataclass(frozen=True)
class ConfiguredMechanism:
    """A mechanism built from a config, with the solver settings of its ``[simulation]``.

    ``mechanism``: the model pytree (:class:`model.Mechanism` or
    :class:`model.mechanics.spatial.SpatialMechanism`, SI units); ``settings``: the static
    :class:`model.SolverSettings`; ``config``: the validated config (SI values).
    """

    mechanism: AbstractMechanism
    settings: SolverSettings
    config: MechanismConfig

    def simulate(self) -> model.Trajectory | model.SpatialTrajectory:
        """Solve from t = 0 to ``settings.t_end`` (:func:`model.simulate`, compiled once per
        mechanism structure and settings). Pure JAX: traceable inside ``grad``/``vmap``."""
        return _simulate(self.mechanism, self.settings)

    def metrics(self, trajectory=None) -> dict[str, jax.Array]:
        """The summary metrics of ``trajectory`` (solved here when omitted), keyed
        ``"<joint>.<metric>"`` and ``"<body>.<metric>"`` in SI units
        (:func:`model.summary_metrics`; the list is in docs/metrics.md)."""
        return model.summary_metrics(self.mechanism, self.simulate() if trajectory is None else trajectory)

    def parameters(self, paths: Sequence[str]) -> jax.Array:
        """The current SI values of the dotted ``paths`` (``joints.pin.clearance``, ...)."""
        return ParameterMap(self.mechanism, paths, self.config.source).read(self.mechanism)

    def with_parameters(self, values: Mapping[str, jax.typing.ArrayLike]) -> ConfiguredMechanism:
        """A copy with the continuous parameters at dotted config paths set to SI
        ``values`` (``{"joints.pin.clearance": 0.3e-3}``; which paths:
        :func:`pipelines.build.parameter_leaf`). The values may be JAX tracers, so a
        function of them can be differentiated or batched."""
        paths = tuple(values)
        parameter_map = ParameterMap(self.mechanism, paths, self.config.source)
        stacked = jnp.stack([jnp.asarray(values[path], dtype=jnp.float64) for path in paths])
        return dataclasses.replace(self, mechanism=parameter_map.apply(self.mechanism, stacked))

    def with_settings(self, **changes) -> ConfiguredMechanism:
        """A copy with solver settings changed (``t_end``, ``rtol``, ``adjoint``, ...:
        the fields of :class:`model.SolverSettings`, SI units)."""
        return dataclasses.replace(self, settings=dataclasses.replace(self.settings, **changes))

    def idealised(self) -> ConfiguredMechanism:
        """The same mechanism with every clearance joint replaced by its ideal joint."""
        return dataclasses.replace(self, mechanism=self.mechanism.idealised())


def load(path: str | Path, overrides: Sequence[str] = ()) -> ConfiguredMechanism:
    """Load, validate and build a mechanism config (planar or ``dimension = 3``).

    ``overrides``: ``--set`` strings, ``"joints.pin.clearance=0.25 mm"``. Bad input raises
    :class:`pipelines.errors.ConfigError` naming the file and the key. A planar config's
    initial positions are checked against its joints as ``clearance simulate`` does.
    """
    config = load_mechanism(path, overrides)
    mechanism = build_mechanism(config)
    if getattr(config, "dimension", 2) == 2:
        from .simulation import check_initial_positions

        check_initial_positions(config, mechanism)
    return ConfiguredMechanism(mechanism, solver_settings(config), config)
