"""Small vector and matrix products for the equations of motion, written as a broadcast
product and a sum.

Under ``vmap`` XLA's CPU backend emits each ``@`` of a few rows as a batched ``dot``, a
kernel of its own that runs one small product per lane; a product and a sum instead fuse
with the elementwise operations around them into one loop over the lanes (with the
package's CPU flags, :func:`model.configure`), which is faster per lane for a mechanism's
products (measurements: docs/BENCHMARKS.md, "XLA CPU flags" and section 1d)."""

import jax.numpy as jnp
from jaxtyping import Array, Float


def dot(a: Float[Array, "... k"], b: Float[Array, "... k"]) -> Float[Array, "..."]:
    """``a @ b`` over the last axis, the leading axes broadcast: a vector ``b`` against a
    vector, a matrix or a stack of vectors ``a``, or stacks of both."""
    return jnp.sum(a * b, axis=-1)


def times_transpose(a: Float[Array, "... r k"], b: Float[Array, "... s k"]) -> Float[Array, "... r s"]:
    """``a @ b^T`` for small matrices, as a broadcast product summed over the rows' common
    last axis."""
    return jnp.sum(a[..., :, None, :] * b[..., None, :, :], axis=-1)


def matmul(a: Float[Array, "... m k"], b: Float[Array, "... k n"]) -> Float[Array, "... m n"]:
    """``a @ b`` for small matrices, by :func:`times_transpose`."""
    return times_transpose(a, jnp.swapaxes(b, -1, -2))
