"""``clearance wear --life METRIC=LIMIT`` (pipelines/wear/limit.py): the life read from a
``life.parquet`` table at a limit, and the option's one-line errors."""

import numpy as np
import pandas as pd
import pytest

from pipelines.cli import main
from pipelines.errors import ConfigError
from pipelines.wear.limit import life_at_limit, parse_life_limit
from tests.helpers import CONFIGS

TABLE = pd.DataFrame({"cycles": [0.0, 1000.0, 2000.0, 3000.0], "max_depth": [0.0, 2e-5, 4e-5, 6e-5],
                      "equivalent_clearance": [5e-4, 5.2e-4, 5.4e-4, 5.6e-4],
                      "pin.max_normal_force": [1e4, 1.2e4, 3e4, 2e4],
                      "slider.max_abs_ax": [1e5, 1e5, 1e5, 3e5], "slider.max_abs_ay": [1e3, 2e5, 1e3, 1e3]})


def test_parse_converts_the_limit_to_si():
    assert parse_life_limit("equivalent_clearance=0.55 mm") == ("equivalent_clearance", pytest.approx(5.5e-4))
    assert parse_life_limit("peak_force = 20 kN") == ("peak_force", pytest.approx(2e4))


@pytest.mark.parametrize("text, words", [("colour=3 mm", "METRIC=LIMIT"), ("max_depth=3 N", "dimension"),
                                         ("max_depth", "no number")])
def test_parse_refuses_bad_input(text, words):
    with pytest.raises(ConfigError) as error:
        parse_life_limit(text)
    assert error.value.file == "--life" and words in error.value.message, str(error.value)


def test_life_interpolates_the_table():
    # the equivalent clearance grows linearly: 0.55 mm is reached at 2500 cycles
    life = life_at_limit(TABLE, "equivalent_clearance", 5.5e-4, "pin", "slider")
    assert life["crossed"] and life["life"] == pytest.approx(2500.0, rel=1e-12)
    # the peak force passes 20 kN between 1000 (12 kN) and 2000 cycles (30 kN)
    assert life_at_limit(TABLE, "peak_force", 2e4, "pin", "slider")["life"] == pytest.approx(1000 + 1000 * 8 / 18)
    # the larger axis: 2e5 m/s^2 (along y) at 1000 cycles already exceeds 1.5e5
    assert life_at_limit(TABLE, "peak_acceleration", 1.5e5, "pin", "slider")["life"] == pytest.approx(500.0)
    never = life_at_limit(TABLE, "max_depth", 1e-4, "pin", "slider")
    assert not never["crossed"] and never["life"] == 3000.0


def test_bad_life_option_is_one_line(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["wear", str(CONFIGS / "wear_flores.toml"), "--life", "colour=3 mm", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --life: ")
    assert not out.exists()
