"""Figures drawn in helper processes: the same images as drawn here, and the processes never
import JAX (that is what makes their start-up cheap enough to overlap the solve)."""

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from pipelines.sweeping.figure_processes import FigureProcesses, imported
from pipelines.sweeping.plot_design import PlotDesign, PlotParameter
from pipelines.sweeping.plots import render_figure


@pytest.fixture(scope="module")
def jobs_arguments():
    clearances, restitutions = (1e-4, 2e-4, 3e-4), (0.5, 0.9)
    rows = [dict(point=n, group=0, status="ok", **{"joints.pin.clearance": c, "joints.pin.contact.restitution": e},
                 **{"pin.max_normal_force": 1e4 * c / 1e-4 * (2 - e), "pin.num_impacts": 3.0 + n})
            for n, (c, e) in enumerate((c, e) for c in clearances for e in restitutions)]
    rows[-1]["status"] = "solver failed"
    frame = pd.DataFrame(rows)
    design = PlotDesign("grid", (PlotParameter("joints.pin.clearance", "m", "linear", False, clearances),
                                 PlotParameter("joints.pin.contact.restitution", "", "linear", False, restitutions)))
    continuous = ("joints.pin.clearance", "joints.pin.contact.restitution")
    metrics, units = ["pin.max_normal_force", "pin.num_impacts"], {"pin.max_normal_force": "N", "pin.num_impacts": ""}
    return [("metrics", (frame, design, continuous, metrics, units)),
            ("main_effects", (frame, design, continuous, metrics, units)),
            ("grid_map", (frame, design, continuous, metrics[0], "N"))]


def test_processes_draw_the_same_images(tmp_path, jobs_arguments):
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()
    for figure, arguments in jobs_arguments:
        render_figure(here / f"{figure}.png", figure, arguments)
    with FigureProcesses() as processes:
        processes.render([(there / f"{figure}.png", figure, arguments) for figure, arguments in jobs_arguments])
        assert not processes.pool.submit(imported, "jax").result()
        assert processes.pool.submit(imported, "matplotlib").result()
    for figure, _ in jobs_arguments:
        drawn_here, drawn_there = (matplotlib.image.imread(folder / f"{figure}.png") for folder in (here, there))
        assert drawn_here.shape[0] > 200 and np.ptp(drawn_here) > 0
        np.testing.assert_array_equal(drawn_here, drawn_there)


def test_an_error_in_a_process_reaches_the_caller(tmp_path, jobs_arguments):
    figure, (frame, *rest) = jobs_arguments[0]
    broken = frame.drop(columns=["pin.num_impacts"])
    with FigureProcesses(workers=1) as processes, pytest.raises(KeyError, match="pin.num_impacts"):
        processes.render([(tmp_path / "metrics.png", figure, (broken, *rest))])
    assert not (tmp_path / "metrics.png").exists()


def test_figures_are_drawn_here_when_a_helper_died(tmp_path, jobs_arguments):
    import os
    from concurrent.futures.process import BrokenProcessPool

    with FigureProcesses(workers=1) as processes:
        dying = processes.pool.submit(os._exit, 1)  # the helper ends abruptly: the pool is broken
        with pytest.raises(BrokenProcessPool):
            dying.result()
        processes.render([(tmp_path / f"{figure}.png", figure, arguments) for figure, arguments in jobs_arguments])
    for figure, _ in jobs_arguments:
        assert matplotlib.image.imread(tmp_path / f"{figure}.png").shape[0] > 200


@pytest.mark.skipif(not hasattr(__import__("os"), "SCHED_IDLE"), reason="SCHED_IDLE is Linux's")
def test_helpers_run_only_on_idle_cores():
    """The helpers' imports must not take CPU from the sweep's workers: Linux's idle
    scheduling policy, not only a niceness (which still took a tenth of busy cores)."""
    import os

    with FigureProcesses(workers=1) as processes:
        assert processes.pool.submit(os.sched_getscheduler, 0).result() == os.SCHED_IDLE
    assert os.sched_getscheduler(0) != os.SCHED_IDLE  # the caller keeps its own policy
