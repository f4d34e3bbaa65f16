"""Benchmarks of ``clearance``: scripts of cases over one harness (docs/BENCHMARKS.md).

Each script runs as ``python -m benchmarks.<script> --case NAME [options]``
(``--list``: its cases; ``--case NAME --help``: a case's options):

- ``throughput``: sweep and simulation throughput (planar, spatial, lubricated, lanes,
  accelerator, end to end, memory, same-run baselines, the numba peer);
- ``overhead``: ablations of the hot path (guard, peaks, projection, constraint drift,
  stiff variants, stability margin, roofline, engine field);
- ``gradients``: reverse-mode noise, spatial reverse mode, the API's slope;
- ``work_precision``: work-precision studies (planar, flexible);
- ``compile_profile``: compile time and program size per model, and of the examples;
- ``flexible_exudyn``: the flexible slider-crank against Exudyn;
- ``accuracy``: model checks (restitution, lubrication, slicing, calibration coverage);
- ``peers``: the reference models (scipy on our field, minimal coordinates, numba).

``harness`` holds the shared timing, machine record and Markdown output. Nothing here is
imported by ``model``, ``sweep`` or ``pipelines``.
"""
