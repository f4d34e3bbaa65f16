"""The vector field as the integrators call it.

:func:`vector_field` is :meth:`~model.mechanics.interface.AbstractMechanism.flat_vector_field`
in diffrax's ``(t, y, args)`` signature as a nested jit
(:func:`~model.mechanics.interface.traced_once`): a solve traces the equations of motion
once, however many solver stages, traces of diffrax's step (three,
``model/mechanics/interface.py``) and peak-tracking evaluations call them, whether or not
the mechanism's own method is a nested jit (the joint-coordinate engine's are not), and a
later solve of the same mechanism structure in the same process reuses that trace. The
numbers are the same: XLA inlines the nested call.
"""

from ..mechanics.interface import flat_vector_field, traced_once

vector_field = traced_once(flat_vector_field)
