"""Flexible bodies as chains of rigid segments (rigid finite element method) and point loads.

A flexible body of length ``L`` and mass ``M`` is divided into ``m`` elements of length
``L/m`` with nodes ``x_k = -L/2 + k L/m`` and its mass into ``m + 1`` rigid segments, segment
``k`` holding node ``k`` and the beam within ``L/(2m)`` of it (half-length segments at the
ends; Wittbrodt, Adamiec-Wójcik & Wojciech 2006, §2.1; :mod:`model.mechanics.segmentation`).
Each segment has its piece's mass ``m_s`` and in-plane inertia ``m_s (L_s^2/12 + Izz/A)``.
Element ``k`` is the Timoshenko element of :mod:`model.mechanics.beam` from node ``k`` (on
segment ``k``) to node ``k + 1`` (on segment ``k + 1``): the segment centres for inner
segments, the outer ends of the end segments. Neighbouring elements share their node, so
the chain is a beam of exact Timoshenko elements with the mass lumped at the nodes: exact
statics under nodal loads and second-order frequencies.

Structural damping is stiffness proportional (Rayleigh, ``C = beta K``), with
``beta = 2 zeta / omega_1``: the first bending mode gets the damping ratio ``zeta``, higher
modes more (``zeta_k = zeta omega_k / omega_1``), so the stiff high modes that set the
explicit step size are damped hardest (Chopra 2012, §11.4). ``omega_1 = c sqrt(E Izz / mu)``
(``mu = M/L``) with the coefficient ``c`` (1/m^2) computed once for the body's supports,
so ``beta`` follows the modulus and section when they are varied.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..geometry.planar import cross2, rotate
from .beam import planar_stiffness, timoshenko_stiffness


class BeamChain(eqx.Module):
    """The beam elements of one flexible body: element ``k`` joins segments
    ``segments[k]`` and ``segments[k + 1]`` (body indices), all with one section (SI)."""

    modulus: Float[Array, ""]  # E (Pa)
    poisson_ratio: Float[Array, ""]
    area: Float[Array, ""]  # A (m^2)
    inertia_y: Float[Array, ""]  # Iyy (m^4), out-of-plane bending
    inertia_z: Float[Array, ""]  # Izz (m^4), in-plane bending
    inertia_x: Float[Array, ""]  # torsion constant (m^4)
    shear_factor_y: Float[Array, ""]
    shear_factor_z: Float[Array, ""]
    element_length: Float[Array, ""]  # L/m (m)
    mass_per_length: Float[Array, ""]  # mu = M/L (kg/m)
    damping_ratio: Float[Array, ""]  # zeta of the first bending mode
    frequency_coefficient: Float[Array, ""]  # c in omega_1 = c sqrt(E Izz / mu) (1/m^2)
    segments: tuple[int, ...] = eqx.field(static=True)
    name: str = eqx.field(static=True, default="")

    def stiffness(self) -> Float[Array, "6 6"]:
        shear_modulus = self.modulus / (2.0 * (1.0 + self.poisson_ratio))
        return timoshenko_stiffness(
            self.modulus, shear_modulus, self.area, self.inertia_y, self.inertia_z, self.inertia_x,
            self.element_length, self.shear_factor_y, self.shear_factor_z,
        )

    def first_bending_frequency(self) -> Float[Array, ""]:
        """``omega_1`` (rad/s) of the body on its supports."""
        return self.frequency_coefficient * jnp.sqrt(self.modulus * self.inertia_z / self.mass_per_length)

    def rayleigh_beta(self) -> Float[Array, ""]:
        """``beta = 2 zeta / omega_1`` (s)."""
        return 2.0 * self.damping_ratio / self.first_bending_frequency()


class PointLoad(eqx.Module):
    """A constant force (N, ground frame) or torque (N m) on ``body`` at ``point`` (m, body frame)."""

    body: int = eqx.field(static=True)
    kind: str = eqx.field(static=True)  # "force" or "torque"
    point: Float[Array, "2"]
    value: Float[Array, "2"]  # force (fx, fy), or (torque, 0)


def node_offsets(chain: BeamChain) -> tuple[Float[Array, " elements"], Float[Array, " elements"]]:
    """x (m) of each element's node i on segment ``k`` and node j on segment ``k + 1``, in the
    segments' frames: zero at inner segments' centres, ``-+L_e/4`` at the outer ends of the
    half-length end segments."""
    count = len(chain.segments) - 1
    quarter = jnp.asarray(chain.element_length) / 4.0
    start = jnp.zeros(count, dtype=quarter.dtype).at[0].set(-quarter)
    return start, jnp.zeros(count, dtype=quarter.dtype).at[-1].set(quarter)


def planar_deformation(chain: BeamChain, q) -> Float[Array, "elements 3"]:
    """Element deformations ``(u, v, phi)`` (m, m, rad), in the frame of each element's node i.

    ``(u, v) = R(theta_i)^T (p_j - p_i) - (L_e, 0)`` and ``phi = theta_j - theta_i``, with
    ``p = r + R(theta) (a, 0)`` the nodes (offsets ``a`` from :func:`node_offsets`): the
    displacement and rotation of node j relative to the undeformed element clamped at node i.
    """
    poses = q.reshape(-1, 3)
    index = jnp.asarray(chain.segments)
    first, second = poses[index[:-1]], poses[index[1:]]
    offset_i, offset_j = node_offsets(chain)
    cos, sin = jnp.cos(first[:, 2]), jnp.sin(first[:, 2])
    node_i = first[:, :2] + offset_i[:, None] * jnp.stack([cos, sin], axis=1)
    node_j = second[:, :2] + offset_j[:, None] * jnp.stack([jnp.cos(second[:, 2]), jnp.sin(second[:, 2])], axis=1)
    chord = node_j - node_i
    axial = cos * chord[:, 0] + sin * chord[:, 1] - chain.element_length
    transverse = -sin * chord[:, 0] + cos * chord[:, 1]
    return jnp.stack([axial, transverse, second[:, 2] - first[:, 2]], axis=1)


def deformation_rate_rows(chain: BeamChain, q) -> Float[Array, "rows coords"]:
    """``D = d(deformation)/dq``, one row per element deformation: ``D qd = 0`` holds exactly
    when every segment of the chain moves with one rigid-body velocity field."""
    return jax.jacfwd(lambda q_: planar_deformation(chain, q_).reshape(-1))(q)


def element_forces(chain: BeamChain, q, qd) -> Float[Array, "elements 3"]:
    """End loads ``K (d + beta d_dot)`` (N, N, N m) that hold each element's node j deformed."""
    deformation, rate = jax.jvp(lambda q_: planar_deformation(chain, q_), (q,), (qd,))
    return (deformation + chain.rayleigh_beta() * rate) @ planar_stiffness(chain.stiffness())


def section_loads(chain: BeamChain, q, qd) -> tuple[Float[Array, " elements"], Float[Array, " elements"]]:
    """Axial force (N, tension positive) and bending moment (N m, positive with positive
    curvature) at the middle of each element, i.e. at the cut between two segments.

    Equilibrium of the element clamped at i with end loads ``(N, V, M_j)`` at j:
    ``M(L/2) = M_j + V L/2``.
    """
    loads = element_forces(chain, q, qd)
    return loads[:, 0], loads[:, 2] + loads[:, 1] * chain.element_length / 2.0


def chain_generalised_forces(chain: BeamChain, q, qd) -> Float[Array, " coords"]:
    """``-(d d/d q)^T K (d + beta d_dot)``: elastic and damping forces on the segments."""
    loads = element_forces(chain, q, qd)
    _, pullback = jax.vjp(lambda q_: planar_deformation(chain, q_), q)
    return -pullback(loads)[0]


def chain_strain_energy(chain: BeamChain, q) -> Float[Array, ""]:
    """``1/2 sum d^T K d`` (J)."""
    deformation = planar_deformation(chain, q)
    return 0.5 * jnp.sum(deformation * (deformation @ planar_stiffness(chain.stiffness())))


def load_generalised_force(load: PointLoad, q) -> Float[Array, " coords"]:
    """Generalised force of a point load: ``[f, (P - r) x f]`` or ``[0, 0, T]``."""
    theta = q[3 * load.body + 2]
    if load.kind == "torque":
        entry = jnp.stack([jnp.zeros_like(theta), jnp.zeros_like(theta), load.value[0]])
    else:
        arm = rotate(theta, load.point)
        entry = jnp.stack([load.value[0], load.value[1], cross2(arm, load.value)])
    return jnp.zeros_like(q).at[3 * load.body : 3 * load.body + 3].add(entry)
