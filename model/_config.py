"""Numerical set-up shared by every dynamics module.

Contact mechanics spans penetrations of ~1e-7 m against positions of ~1e-1 m and forces
that rise by orders of magnitude within microseconds; float32 cannot resolve that, so the
package enables JAX's 64-bit mode as soon as any part of it is imported.
"""

import jax

jax.config.update("jax_enable_x64", True)
