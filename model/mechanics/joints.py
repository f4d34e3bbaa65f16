"""The joints and drivers of a planar mechanism, as data.

Joints reference bodies by index, with ``GROUND = -1`` for the fixed frame, and points in
each body's own frame (m). Every continuous parameter is an array leaf (swept, fitted,
differentiated); the bodies joined and the choice of law are static.
"""

import abc

import equinox as eqx
from equinox import AbstractVar
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..contact.friction import FrictionLaw
from ..contact.normal import ContactLaw
from ..contact.stiffness import hertz_pin_stiffness
from ..geometry.worn import WornBore

GROUND = -1


class RevoluteJoint(eqx.Module):
    """Ideal pin: point ``P_j`` of body ``j`` coincides with ``P_i`` of body ``i``.

    ``offset`` (m, ground frame) shifts the constraint to ``P_j - P_i = offset``; it is
    used only to place a journal at its initial eccentricity.
    """

    body_i: int = eqx.field(static=True)
    body_j: int = eqx.field(static=True)
    point_i: Float[Array, "2"]
    point_j: Float[Array, "2"]
    offset: Float[Array, "2"] = eqx.field(default_factory=lambda: jnp.zeros(2))


class PrismaticJoint(eqx.Module):
    """Slider: body ``j`` keeps its angle relative to ``i`` and its point ``P_j`` stays on
    the line through ``P_i`` along ``axis`` (unit, body ``i``'s frame)."""

    body_i: int = eqx.field(static=True)
    body_j: int = eqx.field(static=True)
    point_i: Float[Array, "2"]
    point_j: Float[Array, "2"]
    axis: Float[Array, "2"]
    angle: Float[Array, ""]  # theta_j - theta_i to keep (rad)


class FixedJoint(eqx.Module):
    """Weld: ``P_j = P_i`` and ``theta_j - theta_i = angle``."""

    body_i: int = eqx.field(static=True)
    body_j: int = eqx.field(static=True)
    point_i: Float[Array, "2"]
    point_j: Float[Array, "2"]
    angle: Float[Array, ""]


class AbstractRoundClearance(eqx.Module):
    """A round journal (or ball) in a round bearing (or socket) whose contact stiffness
    follows the geometry: ``K = stiffness_factor * (hertz_pin_stiffness(E*, R, c) if hertz
    else contact.stiffness)``, the Hertz stiffness of the journal (radius ``R - c``) in the
    bearing ``R``, ``K = 4/3 E* sqrt(R R_j / c)`` (Hertz 1882; Johnson, *Contact Mechanics*,
    1985, §4.2, the concave radius negative; Flores et al. 2006), recomputed from the
    current radius and clearance, so that a sweep of either keeps K consistent."""

    clearance: AbstractVar[Float[Array, ""]]  # c = R - R_j (m)
    contact: AbstractVar[ContactLaw]  # its ``stiffness`` is used only when ``hertz`` is False
    effective_modulus: AbstractVar[Float[Array, ""]]  # E* (Pa), used when ``hertz`` is True
    stiffness_factor: AbstractVar[Float[Array, ""]]
    hertz: AbstractVar[bool]

    @property
    @abc.abstractmethod
    def outer_radius(self) -> Float[Array, ""]:
        """``R`` (m): the bearing's (socket's) radius."""

    def stiffness(self) -> Float[Array, ""]:
        """Contact stiffness K (N/m^n)."""
        base = hertz_pin_stiffness(self.effective_modulus, self.outer_radius, self.clearance) if self.hertz else (
            self.contact.stiffness)
        return self.stiffness_factor * base

    def contact_law(self) -> ContactLaw:
        """The contact law with its stiffness resolved."""
        return eqx.tree_at(lambda law: law.stiffness, self.contact, self.stiffness())


class ClearanceJoint(AbstractRoundClearance):
    """Revolute clearance joint: a journal on ``journal_body`` inside a bearing on
    ``bearing_body``, coupled only by contact forces.

    The contact stiffness is derived at evaluation time, so that sweeping the clearance
    with ``stiffness = "hertz"`` keeps the stiffness consistent with the geometry:
    ``K = stiffness_factor * (hertz_pin_stiffness(E*, R_b, c) if hertz else stiffness)``.
    """

    journal_body: int = eqx.field(static=True)
    bearing_body: int = eqx.field(static=True)
    journal_point: Float[Array, "2"]
    bearing_point: Float[Array, "2"]
    bearing_radius: Float[Array, ""]  # R_b (m)
    clearance: Float[Array, ""]  # c = R_b - R_j (m)
    contact: ContactLaw  # its ``stiffness`` is used only when ``hertz`` is False
    friction: FrictionLaw
    effective_modulus: Float[Array, ""]  # E* (Pa), used when ``hertz`` is True
    stiffness_factor: Float[Array, ""]
    initial_eccentricity: Float[Array, "2"]  # journal centre minus bearing centre at t = 0 (m)
    hertz: bool = eqx.field(static=True, default=True)
    lubrication: eqx.Module | None = None  # model.lubrication.Lubrication: oil film, or dry
    # the bushing's wear depth over the angle (model/geometry/worn.py); None: a new bushing
    wear: WornBore | None = None

    bodies = property(lambda self: (self.journal_body, self.bearing_body), doc="``(journal body, bearing body)``")
    outer_radius = property(lambda self: self.bearing_radius)


class Driver(eqx.Module):
    """Drive on revolute joint ``joint`` (an index into ``Mechanism.revolute_joints``, or
    into ``SpatialMechanism.joints``).

    ``kind = "constant_speed"``: rheonomic constraint ``theta_j - theta_i = angle + speed t``;
    its multiplier gives the driving torque. ``kind = "constant_torque"``: torque (N m) on
    body ``j`` about the joint's axis and its reaction on body ``i``.
    """

    joint: int = eqx.field(static=True)
    kind: str = eqx.field(static=True)
    speed: Float[Array, ""]  # rad/s
    torque: Float[Array, ""]  # N m
    angle: Float[Array, ""]  # theta_j - theta_i at t = 0 (rad)
