"""Every diffrax and equinox internal the model relies on, in one place.

The refilling-lane ensemble (``ensemble.py``) mirrors the loop body of ``diffeqsolve`` and
so needs three things diffrax does not export: the integer code behind a ``RESULTS`` item
(to carry outcomes in an integer array), the message of a code, and ``WrapTerm`` (the term
wrapper ``diffeqsolve`` puts around a user's term, which Rosenbrock solvers unwrap). They
are stable within a diffrax minor version; ``pyproject.toml`` pins the one tested
(``diffrax>=0.7,<0.8``), and this module is the only file to revisit when moving on.
The peak reduction (``peaks.py``) also needs equinox's ``unvmap_any``, the reduction over a
``vmap`` batch that diffrax itself uses to keep a ``lax.cond`` a real conditional inside a
batched solve (``equinox>=0.11.4,<0.14``). The lean explicit steps (``explicit.py``)
keep the solver state ``(first_step, f0)`` and the dense information ``(y0, y1, k)`` of
diffrax's FSAL Runge-Kutta solvers, conventions of theirs rather than API;
``tests/model/integrate/test_explicit.py`` compares them with diffrax's own step.
"""

import diffrax
import jax.numpy as jnp
from diffrax._term import WrapTerm as WrapTerm  # noqa: F401 - re-exported
from equinox.internal import unvmap_any as unvmap_any  # noqa: F401 - re-exported
from jaxtyping import Array, Int

RESULT_SUCCESSFUL = 0


def result_code(result: diffrax.RESULTS) -> Int[Array, "..."]:
    """The integer code of a ``diffrax.RESULTS`` item (0 = successful)."""
    return jnp.asarray(result._value)


RESULT_MAX_STEPS_REACHED = int(diffrax.RESULTS.max_steps_reached._value)


def result_message(code: int) -> str:
    """The diffrax message of a result code; ``"ok"`` for success."""
    if int(code) == RESULT_SUCCESSFUL:
        return "ok"
    return diffrax.RESULTS._index_to_message[int(code)].strip() or f"solver failure {int(code)}"
