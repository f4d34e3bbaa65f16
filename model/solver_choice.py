"""``solver = "auto"``: the integrator the work-precision study found fastest.

The study (``docs/integration.md``, issue 7) measured every solver at matched error on four
cases (Flores, Flores with 100x Hertz stiffness, seed 000's low-speed slider-crank in
mostly continuous contact, the two-clearance four-bar) and on nine stiff variants of seed
000 (Hertz stiffness x1e4 and x1e6, a linear 1e12 N/m contact, restitution 0.05-0.9,
output every 0.1 or 1 ms: output interval / contact period 37-5530):

- the step is set by the contact dynamics, impacts and the micro-impacts of persistent
  contact, which every solver has to follow: the stiff solvers take 0.25-1.6 times Tsit5's
  steps, and the output interval does not change the count (identical at 0.1 and 1 ms);
- each stiff step forms a Jacobian of the field (~1.4 Tsit5 steps) before its stages, so
  at the default rtol 1e-6 Tsit5 is 2-8x faster than the best stiff solver in every case,
  and 2.6-4.6x at matched error in the four study cases.

So no cheap estimate (contact period against output interval, masses, stiffness) predicted
a win of the stiff path: the estimate used until stop 11 sent all nine stiff variants to
Rodas5P, 3-7x slower. ``auto`` therefore means Tsit5; the stiff solvers stay available by
name (``rodas4`` was faster than Tsit5 only at rtol 1e-4 with heavily damped contact,
e = 0.05, at a coarser accuracy).
"""

AUTO_SOLVER = "tsit5"


def resolve_solver(name: str) -> str:
    """The solver ``name`` stands for: ``AUTO_SOLVER`` for ``"auto"``, else ``name``."""
    return AUTO_SOLVER if name == "auto" else name


__all__ = ["AUTO_SOLVER", "resolve_solver"]
