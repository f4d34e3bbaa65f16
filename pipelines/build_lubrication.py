"""The oil film of a clearance joint, from its validated ``[joints.lubrication]`` table;
shared by the planar and spatial builders."""

from __future__ import annotations

import jax.numpy as jnp

from model.lubrication import Lubrication


def build_lubrication(lubrication) -> Lubrication | None:
    """The model's oil film of a validated `[joints.lubrication]` table, or None (dry);
    shared by the planar and spatial builders."""
    if lubrication is None:
        return None
    onset, cap = lubrication.transition
    return Lubrication(
        model=lubrication.model,
        viscosity=_si(lubrication.viscosity),
        length=_si(lubrication.length),
        transition_onset=_si(onset),
        transition_cap=_si(cap),
        supply=lubrication.supply,
    )


def _si(value) -> jnp.ndarray:
    return jnp.asarray(value, dtype=jnp.float64)
