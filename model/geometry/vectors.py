"""Small vector algebra for the equations of motion."""

import jax.numpy as jnp
from jaxtyping import Array, Float


def dot(a: Float[Array, "... 3"], b: Float[Array, " 3"]) -> Float[Array, "..."]:
    """``a @ b`` for a vector ``b`` (``a`` a vector, a matrix or a stack of vectors), as a
    product and a sum over the last axis. Under ``vmap`` XLA emits each ``@`` of these
    3-vectors as a kernel of its own, while the product and the sum fuse with the
    operations around them: the spatial vector field had 79 such kernels."""
    return jnp.sum(a * b, axis=-1)
