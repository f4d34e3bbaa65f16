"""Batched execution of ``model`` simulations over parameter points: a library that knows
nothing of config files (those are ``pipelines.sweeping``'s business).

``sweep.design`` draws designs in the unit cube (grid levels, Latin hypercube, Sobol',
Saltelli), ``sweep.plan`` holds a group of points that share one compiled simulation and
the resolver that writes their parameters into the mechanism, ``sweep.chunks`` orders each
group's points for lockstep and splits them into chunks, ``sweep.run`` compiles and runs a
chunk (refilling lanes, or ``jit(vmap(simulate))`` with derivatives; persistent compilation
cache, ``sweep.executables``), ``sweep.execute`` runs the chunks in this process, worker
processes or Ray actors, ``sweep.store`` keeps finished chunks atomically for resuming
(``sweep.files``), ``sweep.results`` builds the results table and ``sweep.sensitivity``
Sobol' indices. Nothing here imports ``pipelines`` (a test walks the imports).
Submodules are imported on use.
"""
