"""Slicing convergence of the cylindrical clearance joint (``python -m benchmarks.accuracy --case slicing``):
uniform contact is exact for any number of slices; a tilted journal converges to the
continuum line contact (closed-form integrals of the penetration wedge) as N grows."""

import numpy as np
import pytest

from benchmarks import accuracy as slicing

SLICES = (5, 10, 20, 40)


@pytest.fixture(scope="module")
def edge_rows():
    """(N, aligned resultant, edge F_a, F_b, edge peak penetration) per N: one compile per N."""
    rows = []
    for n in SLICES:
        aligned = slicing.contact_at(n, slicing.ALIGNED_PENETRATION, 0.0)
        edge = slicing.contact_at(n, *slicing.EDGE_POSE)
        rows.append((n, float(np.linalg.norm(aligned[0][:3])), float(edge[1]), float(edge[2]), float(edge[3])))
    return np.array(rows)


def test_uniform_contact_is_the_whole_length_law_for_any_slice_count(edge_rows):
    np.testing.assert_allclose(edge_rows[:, 1], slicing.aligned_law(), rtol=1e-12)


def test_edge_contact_end_forces_converge_to_the_continuum(edge_rows):
    exact_a, exact_b = slicing.wedge_end_forces(*slicing.EDGE_POSE)
    error_a = np.abs(edge_rows[:, 2] - exact_a) / exact_a
    error_b = np.abs(edge_rows[:, 3] - exact_b) / exact_b
    assert np.all(np.diff(error_a) < 0) and np.all(np.diff(error_b) < 0)
    # midpoint sampling of a wedge whose edge lies inside a slice: about second order
    assert slicing.observed_order(SLICES, error_b) > 1.5 and slicing.observed_order(SLICES, error_a) > 1.2
    assert error_a[-1] < 1e-2 and error_b[-1] < 1e-2


def test_peak_penetration_is_the_deepest_slice_centre(edge_rows):
    # the slices sample the wedge at their centres: a lag of tilt * l / (2N) behind the end
    expected = [slicing.slice_peak(*slicing.EDGE_POSE, n) for n in SLICES]
    np.testing.assert_allclose(edge_rows[:, 4], expected, rtol=1e-9)


@pytest.mark.slow
def test_loaded_tilted_pin_converges_with_statically_exact_end_forces():
    # load case 4 (1000 N at the centre, 10 N m about x): for every N the end forces are the
    # statics' 250 N and 750 N; the balanced pose converges to the continuum's at first order
    slices = SLICES[:3]
    rows = [slicing.row(n) for n in slices]
    for r in rows:
        np.testing.assert_allclose([r.loaded_end_a, r.loaded_end_b], [250.0, 750.0], rtol=1e-6)
    error = slicing.errors(rows)["loaded_peak_penetration"]
    assert np.all(np.diff(error) < 0)
    assert 0.8 < slicing.observed_order(slices, error) < 1.2
