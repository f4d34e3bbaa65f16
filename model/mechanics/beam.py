"""The Timoshenko beam element that joins neighbouring rigid segments of a flexible body.

Rigid finite element method (Wittbrodt, Adamiec-Wójcik & Wojciech 2006): a flexible body is
a chain of rigid segments; two neighbours ``i`` and ``j`` are joined by a beam element of
length ``L`` whose node ``i`` is the centre of segment ``i`` and node ``j`` the centre of
segment ``j``. The element is written in the frame of node ``i`` as a cantilever clamped at
``i``: its deformation is the displacement and rotation of node ``j`` relative to where the
undeformed element would put it, and its strain energy is ``1/2 d^T K d`` with the 6x6
stiffness of a Timoshenko cantilever (Przemieniecki 1968, §5.6; shear correction after
Cowper 1966). For end loads this stiffness is exact, so the chain is an exact Timoshenko
beam between the first and last segment centres, with rigid half-segments at its ends.

Deformations ``d = (u, v, w, phi_x, phi_y, phi_z)``: axial, the two transverse
displacements, twist and the two bending rotations. The planar case keeps ``(u, v, phi_z)``
(rows and columns 0, 1, 5).
"""

import jax.numpy as jnp
from jaxtyping import Array, Float

PLANAR_DOFS = (0, 1, 5)

# Shear correction factors (the inverse of Cowper's k; Cowper 1966, Table 1, for nu = 0.3
# they are within 2 % of these classical values: Timoshenko & Gere 1972).
SHEAR_FACTORS = {"rectangle": 1.2, "circle": 10.0 / 9.0, "tube": 2.0}


def shear_parameter(modulus, shear_modulus, area, inertia, length, shear_factor) -> Float[Array, ""]:
    """``P = 12 E I S / (G A L^2)``: the ratio of shear to bending flexibility (dimensionless)."""
    return 12.0 * modulus * inertia * shear_factor / (shear_modulus * area * length**2)


def timoshenko_stiffness(
    modulus, shear_modulus, area, inertia_y, inertia_z, inertia_x, length, shear_factor_y, shear_factor_z
) -> Float[Array, "6 6"]:
    """6x6 stiffness (SI) of a Timoshenko cantilever of ``length`` (m), local frame, x axial.

    ``K11 = EA/L``, ``K22 = 12 E Izz / (L^3 (1+Py))``, ``K33 = 12 E Iyy / (L^3 (1+Pz))``,
    ``K44 = G Ixx / L``, ``K55 = (4+Pz) E Iyy / (L (1+Pz))``, ``K66 = (4+Py) E Izz / (L (1+Py))``,
    ``K26 = -6 E Izz / (L^2 (1+Py))``, ``K35 = 6 E Iyy / (L^2 (1+Pz))``, with
    ``Py = 12 E Izz Sy / (G A L^2)`` and ``Pz = 12 E Iyy Sz / (G A L^2)``.
    """
    e, g, length = modulus, shear_modulus, length
    p_y = shear_parameter(e, g, area, inertia_z, length, shear_factor_y)
    p_z = shear_parameter(e, g, area, inertia_y, length, shear_factor_z)
    k = jnp.zeros((6, 6), jnp.result_type(modulus, area, length, float))
    k = k.at[0, 0].set(e * area / length)
    k = k.at[1, 1].set(12.0 * e * inertia_z / (length**3 * (1.0 + p_y)))
    k = k.at[2, 2].set(12.0 * e * inertia_y / (length**3 * (1.0 + p_z)))
    k = k.at[3, 3].set(g * inertia_x / length)
    k = k.at[4, 4].set((4.0 + p_z) * e * inertia_y / (length * (1.0 + p_z)))
    k = k.at[5, 5].set((4.0 + p_y) * e * inertia_z / (length * (1.0 + p_y)))
    k26 = -6.0 * e * inertia_z / (length**2 * (1.0 + p_y))
    k35 = 6.0 * e * inertia_y / (length**2 * (1.0 + p_z))
    return k.at[1, 5].set(k26).at[5, 1].set(k26).at[2, 4].set(k35).at[4, 2].set(k35)


def planar_stiffness(full: Float[Array, "6 6"]) -> Float[Array, "3 3"]:
    """The in-plane block ``(u, v, phi_z)`` of a 6x6 element stiffness."""
    index = jnp.asarray(PLANAR_DOFS)
    return full[index[:, None], index[None, :]]


def section_properties(shape: str, **dims: float) -> dict[str, float]:
    """Area (m^2) and second moments ``Iyy, Izz`` (bending) and ``Ixx`` (torsion, m^4).

    Rectangle ``width`` (out of plane, along z) x ``height`` (in plane, along y): bending
    in the plane of the mechanism uses ``Izz = width height^3 / 12``; torsion constant
    ``Ixx = beta a b^3`` with ``beta = 1/3 - 0.21 (b/a)(1 - (b/a)^4/12)`` (Roark, Young &
    Budynas 2002, Table 10.7). Circle ``diameter``; tube ``outer_diameter``,
    ``inner_diameter``: ``Ixx`` is the polar moment. ``properties``: ``area``, ``iyy``,
    ``izz``, ``ixx`` as given.
    """
    if shape == "properties":
        return {key: dims[key] for key in ("area", "iyy", "izz", "ixx")}
    if shape == "rectangle":
        width, height = dims["width"], dims["height"]
        long_side, short_side = max(width, height), min(width, height)
        ratio = short_side / long_side
        torsion = (1.0 / 3.0 - 0.21 * ratio * (1.0 - ratio**4 / 12.0)) * long_side * short_side**3
        return dict(area=width * height, iyy=height * width**3 / 12.0, izz=width * height**3 / 12.0, ixx=torsion)
    if shape == "circle":
        outer, inner = dims["diameter"], 0.0
    elif shape == "tube":
        outer, inner = dims["outer_diameter"], dims["inner_diameter"]
    else:
        raise ValueError(f"unknown section shape {shape!r}")
    area = jnp.pi * (outer**2 - inner**2) / 4.0
    second = jnp.pi * (outer**4 - inner**4) / 64.0
    return dict(area=float(area), iyy=float(second), izz=float(second), ixx=float(2.0 * second))
