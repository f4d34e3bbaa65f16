"""The ``status`` of a point that ran and whose metrics hold (``results.parquet``); any other
status says why a point failed (:func:`sweep.results.point_status`). Its own module so that
readers of the table (the figures, drawn in processes that never import JAX) need nothing
else."""

OK = "ok"
