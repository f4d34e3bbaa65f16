"""Type aliases shared by the model: one name per kind of value."""

from jaxtyping import Array, Float

# A real parameter: a Python float, or a 0-d float array (a leaf that jit, vmap and grad trace).
Scalar = float | Float[Array, ""]
