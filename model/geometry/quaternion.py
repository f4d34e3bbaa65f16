"""Unit quaternions (scalar first, ``q = [q0, q1, q2, q3]``) for spatial rigid bodies.

Conventions: ``R(q)`` maps body-frame vectors to the ground frame; angular velocities are
in the ground frame, so the kinematic equation is ``dq/dt = 1/2 [0, omega] (x) q``
(Shabana, *Computational Dynamics*, 2010, §7; Nikravesh, *Computer-Aided Analysis of
Mechanical Systems*, 1988, §6 with the spatial angular velocity on the left).
"""

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float


def quaternion_product(p: Float[ArrayLike, "4"], q: Float[ArrayLike, "4"]) -> Float[Array, "4"]:
    """Hamilton product ``p (x) q``."""
    p, q = jnp.asarray(p), jnp.asarray(q)
    p0, pv = p[0], p[1:]
    q0, qv = q[0], q[1:]
    return jnp.concatenate([(p0 * q0 - pv @ qv)[None], p0 * qv + q0 * pv + jnp.cross(pv, qv)])


def rotation_matrix(q: Float[ArrayLike, "4"]) -> Float[Array, "3 3"]:
    """``R(q / |q|)``: the rotation of the normalised quaternion, so that a drift of the norm
    never scales body vectors."""
    q = jnp.asarray(q)
    q = q / jnp.sqrt(q @ q)
    w, x, y, z = q
    return jnp.stack([  # one stack, not jnp.array of nested lists: much cheaper to trace
        1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
        2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
    ]).reshape(3, 3)


def axis_angle_quaternion(axis: Float[ArrayLike, "3"], angle: ArrayLike) -> Float[Array, "4"]:
    """The rotation by ``angle`` (rad) about the unit ``axis``."""
    axis = jnp.asarray(axis, dtype=float)
    half = 0.5 * jnp.asarray(angle, dtype=float)
    return jnp.concatenate([jnp.cos(half)[None], jnp.sin(half) * axis])


def rotate_by_vector(vector: Float[ArrayLike, "3"], rotation: Float[ArrayLike, "3"]) -> Float[Array, "3"]:
    """``vector`` turned by the rotation vector ``rotation`` (angle = its length, rad), by
    Rodrigues' formula ``v + sin(a)/a (r x v) + (1 - cos(a))/a^2 (r x (r x v))``; below
    ``a = 1e-10`` the ratios' Taylor series (exact to rounding there), so that the
    derivatives are finite at zero rotation in both modes."""
    rotation = jnp.asarray(rotation)
    squared = rotation @ rotation
    small = squared < 1e-20
    safe = jnp.where(small, 1.0, squared)
    angle = jnp.sqrt(safe)
    sine_ratio = jnp.where(small, 1.0 - squared / 6.0, jnp.sin(angle) / angle)
    cosine_ratio = jnp.where(small, 0.5 - squared / 24.0, (1.0 - jnp.cos(angle)) / safe)
    turned = jnp.cross(rotation, vector)
    return vector + sine_ratio * turned + cosine_ratio * jnp.cross(rotation, turned)


def quaternion_rate(q: Float[Array, "4"], omega: Float[Array, "3"], restoring_rate: ArrayLike) -> Float[Array, "4"]:
    """``dq/dt = 1/2 [0, omega] (x) q + k (1 - |q|^2) q`` (``omega`` in the ground frame).

    The second term is zero on the unit sphere and pulls a drifted norm back at rate ``2k``
    (1/s); it is orthogonal in effect to the motion because :func:`rotation_matrix`
    normalises, so the dynamics never see the norm. A Lie-group integrator (e.g. RKMK
    on SO(3)) would keep ``|q| = 1`` exactly, but diffrax's error control, dense output,
    ``vmap`` and adjoints all work on a vector space; the restoring term keeps the state in
    R^4 at the price of one extra, harmless decaying mode.
    """
    pure = jnp.concatenate([jnp.zeros((1,), q.dtype), omega])
    return 0.5 * quaternion_product(pure, q) + restoring_rate * (1.0 - q @ q) * q


def perpendicular_pair(axis: Float[ArrayLike, "3"]) -> tuple[Float[Array, "3"], Float[Array, "3"]]:
    """Two unit vectors ``(u, w)`` with ``(u, w, axis)`` right-handed and orthonormal.

    ``u`` is the ground ``x`` axis made orthogonal to ``axis`` (the ``y`` axis when ``axis``
    is nearly along ``x``), so that an axis along ``z`` gets ``u = x, w = y``.
    """
    axis = jnp.asarray(axis, dtype=float)
    seed = jnp.where(jnp.abs(axis[0]) > 0.9, jnp.array([0.0, 1.0, 0.0]), jnp.array([1.0, 0.0, 0.0]))
    u = seed - (seed @ axis) * axis
    u = u / jnp.sqrt(u @ u)
    return u, jnp.cross(axis, u)


def conjugate(q: Float[ArrayLike, "4"]) -> Float[Array, "4"]:
    """``conj(q) = [q0, -q1, -q2, -q3]``: the inverse rotation of a unit quaternion."""
    q = jnp.asarray(q)
    return jnp.concatenate([q[:1], -q[1:]])


def matrix_quaternion(matrix: Float[ArrayLike, "3 3"]) -> Float[Array, "4"]:
    """The unit quaternion of the rotation ``matrix`` (the inverse of :func:`rotation_matrix`,
    up to sign), by Shepperd's method (Shepperd 1978): of the four candidate formulas, the
    one whose square root is largest (at least 1/2), so that it is well conditioned for
    every rotation. The other candidates' square roots are taken of at least a tiny positive
    number, so that derivatives stay finite in both modes."""
    m = jnp.asarray(matrix)
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    squares = jnp.stack([1.0 + trace, 1.0 + 2.0 * m[0, 0] - trace, 1.0 + 2.0 * m[1, 1] - trace,
                         1.0 + 2.0 * m[2, 2] - trace])  # 4 q_k^2
    roots = jnp.sqrt(jnp.maximum(squares, 1e-30))
    a, b, c = m[2, 1] - m[1, 2], m[0, 2] - m[2, 0], m[1, 0] - m[0, 1]
    d, e, f = m[1, 0] + m[0, 1], m[0, 2] + m[2, 0], m[2, 1] + m[1, 2]
    candidates = jnp.stack([
        jnp.stack([roots[0] ** 2, a, b, c]) / (2.0 * roots[0]),
        jnp.stack([a, roots[1] ** 2, d, e]) / (2.0 * roots[1]),
        jnp.stack([b, d, roots[2] ** 2, f]) / (2.0 * roots[2]),
        jnp.stack([c, e, f, roots[3] ** 2]) / (2.0 * roots[3]),
    ])
    return candidates[jnp.argmax(squares)]
