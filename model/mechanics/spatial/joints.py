"""The joints, clearance joints, loads and drivers of a spatial mechanism, as data.

Joints reference bodies by index, ``GROUND = -1``, points in each body's frame (origin at
its centre of mass), axes in each body's frame (the builder converts the ground-frame axes
of the input at t = 0). A body's coordinates are ``POSITION_SIZE`` entries of ``x``
(position, unit quaternion) and ``VELOCITY_SIZE`` entries of ``v`` (``rdot``, ``omega``).
"""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ...contact.friction import FrictionLaw
from ...contact.normal import ContactLaw
from ...contact.stiffness import palmgren_stiffness
from ...geometry.quaternion import rotate_by_vector
from ...geometry.worn import WornBore
from ...lubrication import Lubrication
from ..joints import AbstractRoundClearance
from ..joints import Driver as SpatialDriver  # noqa: F401 (one driver for both engines)

GROUND = -1
POSITION_SIZE = 7
VELOCITY_SIZE = 6


class SpatialJoint(eqx.Module):
    """Ideal joint between bodies ``i`` and ``j`` (``kind``: revolute | spherical | cylindrical |
    prismatic | fixed).

    ``axis_i``/``axis_j``: the joint axis in each body's frame; ``reference_i``/``reference_j``:
    a unit vector normal to it in each body's frame, equal in the ground frame at t = 0 (the
    zero of the relative angle). ``relative``: ``conj(p_i) (x) p_j`` at t = 0, kept by
    prismatic and fixed joints. ``offset`` (m, body ``i``'s frame) shifts ``P_j - P_i`` to
    ``R_i offset`` (the initial eccentricity of an idealised clearance joint).
    """

    kind: str = eqx.field(static=True)
    body_i: int = eqx.field(static=True)
    body_j: int = eqx.field(static=True)
    point_i: Float[Array, "3"]
    point_j: Float[Array, "3"]
    axis_i: Float[Array, "3"]
    axis_j: Float[Array, "3"]
    reference_i: Float[Array, "3"]
    reference_j: Float[Array, "3"]
    relative: Float[Array, "4"]
    offset: Float[Array, "3"] = eqx.field(default_factory=lambda: jnp.zeros(3))


class CylindricalClearanceJoint(eqx.Module):
    """Journal on ``journal_body`` in a bearing on ``bearing_body`` (Tian et al. 2009;
    Yao, Chen, Wang & Liu): contact by ``slices`` discs along the contact length.

    ``bearing_axis``/``bearing_u``/``bearing_w``: the bearing's axis and its cross-section axes
    in the bearing body's frame; ``journal_axis`` in the journal body's frame.
    ``stiffness`` of ``contact`` is the whole joint's (``palmgren``: derived from the length).
    ``wear``: the bushing's wear depth per slice (rows, ``slices x bins``) over the angle from
    ``bearing_u`` towards ``bearing_w`` (:class:`model.geometry.worn.WornBore`); ``None``: a new
    bushing. ``effective_modulus`` (Pa): the Hertz modulus of the two materials, which the
    wear law's contact width needs (the contact force does not use it).
    """

    journal_body: int = eqx.field(static=True)
    bearing_body: int = eqx.field(static=True)
    slices: int = eqx.field(static=True)
    axial_fixed: bool = eqx.field(static=True)
    palmgren: bool = eqx.field(static=True)
    journal_point: Float[Array, "3"]
    bearing_point: Float[Array, "3"]
    journal_axis: Float[Array, "3"]
    bearing_axis: Float[Array, "3"]
    bearing_u: Float[Array, "3"]
    bearing_w: Float[Array, "3"]
    length: Float[Array, ""]  # m
    bearing_radius: Float[Array, ""]  # m
    clearance: Float[Array, ""]  # m
    contact: ContactLaw
    friction: FrictionLaw
    initial_eccentricity: Float[Array, "2"]  # in the bearing's (u, w) axes (m)
    lubrication: Lubrication | None = None  # oil film per slice (model.mechanics.spatial.lubrication)
    stiffness_factor: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(1.0))  # scales K
    # the journal's rotation at t = 0 relative to the bearing, about the bearing's (u, w) axes (rad)
    initial_tilt: Float[Array, "2"] = eqx.field(default_factory=lambda: jnp.zeros(2))
    # the bushing's wear depth per slice and angle (m, slices x bins); None: a new bushing
    wear: WornBore | None = None
    effective_modulus: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(0.0))  # Pa

    @property
    def bodies(self) -> tuple[int, int]:
        """``(journal body, bearing body)``."""
        return self.journal_body, self.bearing_body

    def stiffness(self) -> Float[Array, ""]:
        """The whole joint's stiffness K (N/m^n), times ``stiffness_factor``."""
        return self.stiffness_factor * (palmgren_stiffness(self.length) if self.palmgren else self.contact.stiffness)

    def slice_law(self) -> ContactLaw:
        """The contact law of one slice: stiffness ``K / N``."""
        return eqx.tree_at(lambda law: law.stiffness, self.contact, self.stiffness() / self.slices)

    def tilted_bearing_frame(self) -> tuple[Float[Array, "3"], Float[Array, "3"]]:
        """The bearing's axis and ``u`` axis turned by ``initial_tilt`` (bearing body's frame):
        the rotation vector ``theta_u u + theta_w w`` applied by Rodrigues' formula. The ideal
        joint that holds the journal at t = 0 keeps the journal's axis along the first."""
        rotation = self.initial_tilt[0] * self.bearing_u + self.initial_tilt[1] * self.bearing_w
        return rotate_by_vector(self.bearing_axis, rotation), rotate_by_vector(self.bearing_u, rotation)

    def slice_positions(self) -> Float[Array, " slices"]:
        """``z_k = -l/2 + (k + 1/2) l / N`` (m)."""
        k = jnp.arange(self.slices, dtype=float)
        return -0.5 * self.length + (k + 0.5) * self.length / self.slices


class SphericalClearanceJoint(AbstractRoundClearance):
    """Ball on ``ball_body`` in a socket on ``socket_body``: point contact (Flores et al. 2006)."""

    ball_body: int = eqx.field(static=True)
    socket_body: int = eqx.field(static=True)
    ball_point: Float[Array, "3"]
    socket_point: Float[Array, "3"]
    socket_radius: Float[Array, ""]
    clearance: Float[Array, ""]
    contact: ContactLaw
    friction: FrictionLaw
    initial_eccentricity: Float[Array, "3"]
    stiffness_factor: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(1.0))  # scales K
    # stiffness = "hertz": K from the effective modulus (Pa) and the radii, whatever they are set to
    hertz: bool = eqx.field(static=True, default=False)
    effective_modulus: Float[Array, ""] = eqx.field(default_factory=lambda: jnp.asarray(0.0))

    bodies = property(lambda self: (self.ball_body, self.socket_body), doc="``(ball body, socket body)``")
    outer_radius = property(lambda self: self.socket_radius)


class Load(eqx.Module):
    """Constant applied load: a force (N, ground frame) at body point ``point`` (m, body
    frame) or a torque (N m, ground frame); ``enabled`` (0 or 1) switches it."""

    body: int = eqx.field(static=True)
    kind: str = eqx.field(static=True)  # force | torque
    point: Float[Array, "3"]
    value: Float[Array, "3"]
    enabled: Float[Array, ""]
