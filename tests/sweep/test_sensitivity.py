"""Sensitivity: forward-mode derivatives through the solver against central finite
differences, and Sobol' indices (SALib) of a Saltelli design."""

import numpy as np
import pytest

from sweep.design import saltelli_unit_samples
from pipelines.sweeping.study import load_sweep, run_sweep, write_sweep as write_outputs
from tests.helpers import CLEARANCE_RANGE, RESTITUTION_RANGE, write_sweep

# 0.5 ms of the Flores slider-crank (first impact at ~0.2 ms), tight tolerances so that the
# finite differences are not drowned by the adaptive stepping's noise.
SHORT = ['simulation.t_end="0.5 ms"', "simulation.rtol=1e-10", "simulation.atol=1e-13"]
PATHS = ("joints.pin.clearance", "joints.pin.contact.restitution")
DIFFERENTIATED = ("pin.max_penetration", "pin.max_normal_force")
STEPS = {"joints.pin.clearance": 2e-8, "joints.pin.contact.restitution": 1e-4}  # SI, central differences
# The clearance moves the contact onset; the impact memory's switch at the onset is smoothed
# over 20 nm (model/contact/memory.py), so the vector field stays smooth there and forward mode
# misses no saltation term. Measured at rtol 1e-10 (two restitutions, both metrics, central
# steps of 1e-8 to 1e-7 m): the clearance derivatives agree to 0.1-9 ppm, within the scatter of
# the finite differences over those steps; the bound leaves an order of magnitude for that noise.
AGREEMENT = {"joints.pin.clearance": 1e-4, "joints.pin.contact.restitution": 1e-4}

pytestmark = pytest.mark.slow  # derivative and Sobol' sweeps


def point_config(tmp_path, clearances, restitutions, name):
    return write_sweep(
        tmp_path, 'design = "grid"',
        f'path = "joints.pin.clearance"\nvalues = [{", ".join(repr(f"{float(c)!r} m") for c in clearances)}]'.replace("'", '"'),
        f'path = "joints.pin.contact.restitution"\nvalues = [{", ".join(repr(float(e)) for e in restitutions)}]',
        name=name,
    )


@pytest.fixture(scope="module")
def derivatives(tmp_path_factory):
    """Two points (one vmapped batch of two, so lockstep is exercised) with derivatives."""
    folder = tmp_path_factory.mktemp("derivatives")
    config = point_config(folder, [3e-4], [0.6, 0.9], "points.toml")
    design, base = load_sweep(config, SHORT, derivatives=DIFFERENTIATED)
    return run_sweep(design, base, batch_size=2, progress=False, executor="local", chunk_size=2)


def test_derivatives_match_central_differences(derivatives, tmp_path):
    frame = derivatives.frame
    assert (frame["status"] == "ok").all()
    (c,) = frame["joints.pin.clearance"].unique()
    restitutions = frame["joints.pin.contact.restitution"].tolist()
    h_c, h_e = STEPS[PATHS[0]], STEPS[PATHS[1]]
    # one grid holds every shifted point: (c +- h, e) and (c, e +- h) for both restitutions
    config = point_config(tmp_path, [c - h_c, c, c + h_c], [v for e in restitutions for v in (e - h_e, e, e + h_e)], "fd.toml")
    fd = run_sweep(*load_sweep(config, SHORT), batch_size=1, progress=False, executor="local").frame
    assert (fd["status"] == "ok").all()

    def at(clearance, restitution):
        (row,) = fd[np.isclose(fd[PATHS[0]], clearance, rtol=1e-12) & np.isclose(fd[PATHS[1]], restitution, rtol=1e-12)].index
        return fd.loc[row]

    for _, row in frame.iterrows():
        e = row[PATHS[1]]
        pairs = {PATHS[0]: (at(c + h_c, e), at(c - h_c, e), h_c), PATHS[1]: (at(c, e + h_e), at(c, e - h_e), h_e)}
        for path, (plus, minus, step) in pairs.items():
            for metric in DIFFERENTIATED:
                expected = (plus[metric] - minus[metric]) / (2 * step)
                got = row[f"d({metric})/d({path})"]
                print(f"{metric} / {path} at e = {e}: forward {got:.6g}, central difference {expected:.6g}")
                assert got == pytest.approx(expected, rel=AGREEMENT[path]), (metric, path, e)


def test_derivative_chunk_reports_lockstep_efficiency(derivatives):
    (chunk,) = derivatives.chunks
    assert chunk["batch_size"] == 2 and 0.0 < chunk["lockstep_efficiency"] <= 1.0
    steps = derivatives.frame["steps"].to_numpy()
    assert chunk["lockstep_efficiency"] == pytest.approx(steps.sum() / (2 * steps.max()))


def test_saltelli_design_has_salib_layout():
    rows = saltelli_unit_samples(2, 8, seed=0)
    assert rows.shape == (8 * (2 + 2), 2) and (rows >= 0).all() and (rows <= 1).all()
    # rows A_B^i differ from A only in column i (the layout SALib's analysis reads)
    a, ab0 = rows[0::4], rows[1::4]
    np.testing.assert_array_equal(a[:, 1], ab0[:, 1])


@pytest.fixture(scope="module")
def sobol_study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sobol")
    config = write_sweep(folder, 'design = "sobol"\nsamples = 8\nsensitivity = true', CLEARANCE_RANGE, RESTITUTION_RANGE)
    study = run_sweep(*load_sweep(config, ['simulation.t_end="0.5 ms"']), progress=False, executor="local")
    return study, write_outputs(study, folder / "out")


def test_sobol_indices_compute_and_sum_sensibly(sobol_study):
    study, written = sobol_study
    assert len(study.frame) == 8 * (2 + 2) and (study.frame["status"] == "ok").all()
    indices = study.sobol
    force = indices[indices["metric"] == "pin.max_penetration"].set_index("parameter")
    assert list(force.index) == list(PATHS)
    assert np.isfinite(force[["S1", "ST", "S1_conf", "ST_conf"]].to_numpy()).all()
    # total effects are non-negative, and the first-order ones cannot explain more than all
    # of the variance (with the estimator's sampling error at 8 base samples)
    assert (force["ST"] > -0.05).all() and force["S1"].sum() < 1.3
    # the clearance sets the penetration far more than the restitution does
    assert force.loc[PATHS[0], "ST"] > force.loc[PATHS[1], "ST"]
    names = {path.name for path in written}
    assert {"sobol_indices.csv", "sobol_indices.json", "sobol_indices.png", "main_effects.png"} <= names
