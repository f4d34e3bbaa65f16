"""The ``[metrics]`` table (planar and spatial): the window the summary metrics count, built
into the mechanism, and bad input refused as one line naming the key."""

import pytest

from pipelines.build import build_mechanism
from pipelines.cli import main
from pipelines.config import load_mechanism
from pipelines.errors import ConfigError
from tests.helpers import CONFIGS, FLORES

CONICAL = CONFIGS / "conical_pendulum.toml"  # spatial, no driver, 100 ms
CRANK_3D = CONFIGS / "flores_slider_crank_3d.toml"


def test_the_window_starts_after_skip_and_the_crank_s_turns():
    # Flores: the crank turns at 5000 rpm, 12 ms a turn; by default the metrics count everything
    assert float(build_mechanism(load_mechanism(FLORES)).metrics_start()) == 0.0
    config = load_mechanism(FLORES, ["metrics.skip=2 ms", "metrics.skip_revolutions=1"])
    assert float(build_mechanism(config).metrics_start()) == pytest.approx(2e-3 + 60.0 / 5000.0, rel=1e-12)


@pytest.mark.parametrize(
    ("path", "override", "key"),
    [
        (FLORES, "metrics.skip=5 kg", "metrics.skip"),
        (FLORES, "metrics.skip=-1 ms", "metrics.skip"),
        (FLORES, "metrics.skip=24 ms", "metrics.skip"),  # t_end: nothing left to count
        (FLORES, "metrics.skip_revolutions=3", "metrics.skip_revolutions"),  # 24 ms is two turns
        (FLORES, "metrics.start=1 ms", "metrics.start"),
        (CONICAL, "metrics.skip_revolutions=1", "metrics.skip_revolutions"),  # no driver
        (CONICAL, "metrics.skip=0.2 s", "metrics.skip"),
        (CRANK_3D, "metrics.skip=1 kg", "metrics.skip"),
    ],
)
def test_bad_metrics_input_names_the_key(path, override, key):
    with pytest.raises(ConfigError) as error:
        load_mechanism(path, [override])
    assert (error.value.file, error.value.key) == (str(path), key)


def test_a_bad_window_is_one_line_and_status_2(capsys, tmp_path):
    status = main(["simulate", str(FLORES), "--set", "metrics.skip=30 ms", "--out", str(tmp_path)])
    error = capsys.readouterr().err
    assert status == 2
    assert error.count("\n") == 1 and error.startswith(f"error: {FLORES}: metrics.skip: "), error
