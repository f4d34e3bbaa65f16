"""``solver = "auto"``: the integrator the work-precision study found fastest.

The study (``docs/integration.md``) measured every solver at matched error on four
cases (Flores, Flores with 100x Hertz stiffness, the low-speed slider-crank in
mostly continuous contact, the two-clearance four-bar) and on six stiff persistent-contact
variants of the low-speed slider-crank (``benchmarks/stiff_variants.py``: Hertz stiffness x1e4 and x1e6 or a
linear 1e12 N/m law, restitution 0.9 or 0.05; output interval / contact period 37-550):

- the step is set by the contact dynamics (impacts, and the micro-impacts of persistent
  contact), which every solver has to follow, and not by the output interval: step counts
  are identical at 0.1 and 1 ms output;
- each stiff step forms a Jacobian of the field (~1.4 Tsit5 steps) before its stages, so
  wherever both reached an error level Tsit5 was faster: 2.6-4.6x in the study cases,
  1.2-7.6x in the stiff variants (a few cells that Tsit5 did not reach by rtol 1e-9 are
  undecided).

No cheap estimate predicted a win of the stiff path: an earlier rule (output
interval >= 4 contact periods -> Rodas5P) grew with the output interval while the work did
not change, and would have sent every stiff variant to Rodas5P. ``auto`` therefore means
Tsit5; the stiff solvers stay available by name (their error at a given rtol is smaller in
chattering stiff contact).
"""

AUTO_SOLVER = "tsit5"


def resolve_solver(name: str) -> str:
    """The solver ``name`` stands for: ``AUTO_SOLVER`` for ``"auto"``, else ``name``."""
    return AUTO_SOLVER if name == "auto" else name


__all__ = ["AUTO_SOLVER", "resolve_solver"]
