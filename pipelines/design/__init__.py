"""Clearance tolerance design (``clearance optimize``), the contact-stiffness convergence
study (``clearance converge``) and the ADAMS export (``clearance export-adams``).

See ``docs/design.md``. Importing the package enables JAX float64 (through ``model``).
"""

import model as _model  # noqa: F401  (float64 before any array is made)
