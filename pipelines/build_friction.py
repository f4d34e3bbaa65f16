"""The friction law of a clearance joint, from its validated ``[joints.friction]`` table;
shared by the planar and spatial builders."""

from __future__ import annotations

import jax.numpy as jnp

from model.contact.friction import FrictionLaw


def build_friction(friction) -> FrictionLaw:
    """The model's friction law of a validated ``[joints.friction]`` table. Values the table
    leaves out are filled in as array leaves, so that sweeps, fits and designs can address
    them: ``static_coefficient`` defaults to ``coefficient`` (``mu_s = mu``, as
    :attr:`FrictionLaw.static` reads it), the velocities to the law's own defaults."""
    static_coefficient = friction.coefficient if friction.static_coefficient is None else friction.static_coefficient
    stiction_velocity, dynamic_velocity = friction.velocities
    return FrictionLaw(
        model=friction.model,
        coefficient=_si(friction.coefficient),
        static_coefficient=_si(static_coefficient),
        stiction_velocity=_si(stiction_velocity),
        dynamic_velocity=_si(dynamic_velocity),
    )


def _si(value) -> jnp.ndarray:
    return jnp.asarray(value, dtype=jnp.float64)
