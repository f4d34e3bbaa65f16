"""What the planar and the spatial builders share: SI array leaves, a clearance joint's
laws (contact, friction, oil film) and effective modulus, the ``[metrics]`` window, and the
fields every absolute-coordinate mechanism carries
(:class:`~model.mechanics.absolute.AbstractAbsoluteMechanism`)."""

from __future__ import annotations

import jax.numpy as jnp

from model.contact.friction import FrictionLaw
from model.contact.normal import ContactLaw
from model.contact.stiffness import effective_modulus
from model.lubrication import Lubrication
from model.window import MetricsWindow

from .build_flexible import beam_chains


def leaf(value) -> jnp.ndarray:
    """``value`` (SI) as a float64 array leaf."""
    return jnp.asarray(value, dtype=jnp.float64)


def contact_law(contact, marker_stiffness: float) -> ContactLaw:
    """The joint's contact law of a validated ``[joints.contact]`` table; where a marker
    (``"hertz"``, ``"palmgren"``) names the stiffness the joint computes it from its
    geometry, and the law holds ``marker_stiffness``."""
    stiffness = marker_stiffness if isinstance(contact.stiffness, str) else contact.stiffness
    return ContactLaw(contact.model, stiffness=leaf(stiffness), exponent=leaf(contact.exponent),
                      restitution=leaf(contact.restitution), damping=leaf(contact.damping),
                      penetration_max=leaf(contact.penetration_max),
                      impact_velocity_floor=leaf(contact.impact_velocity_floor))


def joint_modulus(config, joint) -> float:
    """Effective modulus E* (Pa) of the joint's two materials (Johnson 1985); 0 without them."""
    if joint.materials is None:
        return 0.0
    first, second = (config.materials[name] for name in joint.materials)
    return float(effective_modulus(first.youngs_modulus, first.poisson_ratio,
                                   second.youngs_modulus, second.poisson_ratio))


def build_friction(friction) -> FrictionLaw:
    """The model's friction law of a validated ``[joints.friction]`` table. Values the table
    leaves out are filled in as array leaves, so that sweeps, fits and designs can address
    them: ``static_coefficient`` defaults to ``coefficient`` (``mu_s = mu``, as
    :attr:`FrictionLaw.static` reads it), the velocities to the law's own defaults."""
    static_coefficient = friction.coefficient if friction.static_coefficient is None else friction.static_coefficient
    stiction_velocity, dynamic_velocity = friction.velocities
    return FrictionLaw(model=friction.model, coefficient=leaf(friction.coefficient),
                       static_coefficient=leaf(static_coefficient), stiction_velocity=leaf(stiction_velocity),
                       dynamic_velocity=leaf(dynamic_velocity))


def build_lubrication(lubrication) -> Lubrication | None:
    """The model's oil film of a validated ``[joints.lubrication]`` table, or None (dry)."""
    if lubrication is None:
        return None
    onset, cap = lubrication.transition
    return Lubrication(model=lubrication.model, viscosity=leaf(lubrication.viscosity),
                       length=leaf(lubrication.length), transition_onset=leaf(onset), transition_cap=leaf(cap),
                       supply=lubrication.supply)


def metrics_window(config) -> MetricsWindow:
    """The window the summary metrics count: ``skip`` (s) and the turns of the first
    constant-speed driver, ``skip_revolutions``, both from ``config.metrics``."""
    return MetricsWindow(skip=jnp.asarray(config.metrics.skip, float),
                         revolutions=jnp.asarray(config.metrics.skip_revolutions, float))


def absolute_fields(config, layout, velocity_targets) -> dict:
    """The keyword fields of :class:`~model.mechanics.absolute.AbstractAbsoluteMechanism`
    from ``[simulation]``, ``[initial]``, ``[metrics]``, the drivers and the flexible
    bodies (``layout``: the engine's bodies); ``velocity_targets``: the requested start
    velocities per engine body (:func:`pipelines.build_flexible.velocity_targets`)."""
    velocities = config.initial.velocities
    return dict(
        baumgarte_alpha=leaf(config.simulation.baumgarte_alpha), baumgarte_beta=leaf(config.simulation.baumgarte_beta),
        beam_chains=beam_chains(config, layout),
        initial_velocities=velocities if isinstance(velocities, str) else "from_drivers",
        initial_velocity_targets=velocity_targets, initial_clearance=config.initial.clearance,
        initial_deformation=config.initial.deformation, body_names=tuple(layout.names),
        driver_names=tuple(driver.name for driver in config.drivers), metrics_window=metrics_window(config))
