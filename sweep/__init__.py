"""Batched parameter sweeps (``clearance sweep``; docs/sweep.md).

``sweep.design`` reads the ``[sweep]`` table and generates points, ``sweep.plan`` groups
them by their discrete choices and validates them, ``sweep.chunks`` orders each group's
points for lockstep and splits them into chunks, ``sweep.run`` compiles and runs
``jit(vmap(simulate))`` (with the persistent compilation cache), ``sweep.execute`` runs the
chunks locally or on Ray, ``sweep.store`` keeps finished chunks for ``--resume``,
``sweep.results``, ``sweep.sensitivity`` and ``sweep.plots`` make the table, Sobol' indices
and figures, ``sweep.study`` ties them together. Submodules are imported on use.
"""
