"""Sweeps of a config (``clearance sweep``; docs/sweep.md): the config-aware side of the
:mod:`sweep` library.

``table`` is the pydantic schema of a sweep config, ``design`` turns its ``[sweep]`` table
into parameter levels in SI, ``plan`` groups the points into compiled groups
(:class:`sweep.plan.Group`) and checks each against the mechanism's schema, ``results``
labels the results table with the config's metrics, ``plots`` draws the figures and
``study`` ties them together: ``load_sweep`` -> ``run_sweep`` -> ``write_sweep``.
Submodules are imported on use.
"""
