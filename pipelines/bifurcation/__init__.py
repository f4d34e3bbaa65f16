"""``clearance bifurcation``: stroboscopic sections, Lyapunov exponents and the motion class
of a mechanism over one parameter (schema, study, plots)."""
