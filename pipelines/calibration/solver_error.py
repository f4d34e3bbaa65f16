"""How far the ODE solver's own error moves the estimate.

The fit integrates at ``[simulation] rtol``/``atol``; the solver's error is then part of every
residual, correlated over the whole record and the same at every noise draw, so the
noise-based covariance cannot see it. On records of a few ms with 2 % noise the parameters
are pinned to 1e-5 relative or better, and at rtol 1e-6 the solver error moves them by
more than that. One Gauss–Newton step estimates the move: with the residuals ``r`` and their
Jacobian ``J = dr/du`` at the optimum (where ``J^T r = 0``) and the residuals ``r_t``
integrated ``TIGHTENING`` times tighter, the optimum of the tighter model lies at

    du = -(J^T J)^+ J^T (r_t - r)

(linearised; Bard 1974, ch. 7 on the Gauss–Newton step; the tolerance comparison is the
standard estimate of a solver's global error, Hairer, Nørsett & Wanner 1993, §II.4). The
calibration reports ``u + du``, the optimum of the more accurate model, and adds
``dx dx^T`` (``dx`` the move in physical units) to the covariance: the move varies with the
adaptive steps' pattern from one optimum to the next, so the corrected value keeps an
error of up to its size. On a noise-free 6 ms record of the Flores slider-crank the fit at
rtol 1e-6 ended 1.20e-5 above the true restitution and the move was -1.24e-5.
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .problem import CalibrationProblem

TIGHTENING = 100.0  # the check integrates with rtol and atol divided by this


@eqx.filter_jit
def _residuals(problem: CalibrationProblem, u):
    return problem.residuals(u)[0]


def tightened(problem: CalibrationProblem) -> CalibrationProblem:
    """The problem with every record's solver tolerances divided by ``TIGHTENING``."""
    return problem.with_settings(lambda settings: dataclasses.replace(
        settings, rtol=settings.rtol / TIGHTENING, atol=settings.atol / TIGHTENING))


def solver_shift(problem: CalibrationProblem, u: np.ndarray, residual: np.ndarray, jacobian: np.ndarray) -> np.ndarray | None:
    """The move ``du`` (unconstrained) of the optimum ``u`` when the model is integrated
    ``TIGHTENING`` times more accurately (module docstring); ``None`` when that solve fails."""
    tight = np.asarray(_residuals(tightened(problem), jnp.asarray(u)))
    if not np.all(np.isfinite(tight)):
        return None
    return gauss_newton_shift(residual, tight, jacobian)


def gauss_newton_shift(residual: np.ndarray, changed: np.ndarray, jacobian: np.ndarray) -> np.ndarray:
    """``-(J^T J)^+ J^T (changed - residual)``: where the least-squares optimum moves when
    the residuals at it change from ``residual`` to ``changed`` (exact for a linear model)."""
    J = np.asarray(jacobian, np.float64)
    return -np.linalg.pinv(J.T @ J, hermitian=True) @ (J.T @ (np.asarray(changed) - np.asarray(residual)))
