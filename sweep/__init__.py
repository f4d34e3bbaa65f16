"""Batched parameter sweeps (``clearance sweep``; docs/sweep.md).

``sweep.design`` reads the ``[sweep]`` table and generates points, ``sweep.plan`` groups
them by their discrete choices and validates them, ``sweep.run`` runs each group through one
``jit(vmap(simulate))``, ``sweep.results`` and ``sweep.plots`` make the table and figures,
``sweep.study`` ties them together. Submodules are imported on use.
"""
