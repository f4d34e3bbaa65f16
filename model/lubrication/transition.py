"""Hand-over from the fluid film to dry (asperity) contact as the journal nears the wall.

Flores, Ambrosio, Claro & Lankarani (Nonlinear Dyn. 56, 2009) let the hydrodynamic model
act below an eccentricity ``e0`` and the dry contact model above ``e1``, with a transition
zone between. Here the two act together, with no switch:

- the film force is evaluated at a saturated eccentricity ratio
  ``eps_h = eps`` for ``eps <= eps_0`` and
  ``eps_h = eps_0 + (eps_1 - eps_0) tanh((eps - eps_0)/(eps_1 - eps_0))`` above, so it
  follows the film model exactly while the film holds and levels off below ``eps_1 < 1``
  as the film thins to asperity height (value, slope and curvature continuous at
  ``eps_0``); the squeeze rate is kept, so the film still damps the approach;
- the dry contact law (``model.normal_force``) and its friction (``model.friction_force``,
  driven by the dry normal force only) add to it; they start from zero at ``eps = 1``.

So the total force is continuous and differentiable everywhere, bounded at and beyond the
wall (the film models are singular at ``eps = 1``), and dry contact carries what the
saturated film cannot.
"""

import jax.numpy as jnp
from jaxtyping import Array, Float

from .film import FilmMotion

DEFAULT_TRANSITION_ONSET = 0.95


def default_transition_cap(onset):
    """``eps_1`` when only ``eps_0`` is given: halfway from ``eps_0`` to the wall."""
    return 0.5 * (1.0 + onset)


def saturated_eccentricity(eps, onset, cap) -> Float[Array, ""]:
    """``eps_h`` above; grad-safe (both branches finite everywhere)."""
    width = cap - onset
    saturated = onset + width * jnp.tanh((eps - onset) / width)
    return jnp.where(eps <= onset, eps, saturated)


def saturated_motion(motion: FilmMotion, onset, cap) -> FilmMotion:
    """The film motion seen by the film model: ``eps -> eps_h``; the wedge rate
    ``eps w`` is rescaled by ``eps_h / eps`` (``gamma_dot`` and ``w`` unchanged)."""
    eps = motion.eccentricity_ratio
    eps_h = saturated_eccentricity(eps, onset, cap)
    above = eps > onset
    ratio = jnp.where(above, eps_h / jnp.where(above, eps, 1.0), 1.0)
    return motion._replace(eccentricity_ratio=eps_h, wedge_rate=motion.wedge_rate * ratio)
