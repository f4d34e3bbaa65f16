"""Dry against lubricated Flores slider-crank: journal orbits, pin force and slider
acceleration from the two ``simulate`` outputs, in one figure (docs/lubrication.md).

    PYTHONPATH=$PWD python -m pipelines.cli simulate configs/flores_slider_crank.toml
    PYTHONPATH=$PWD python -m pipelines.cli simulate configs/flores_lubricated.toml
    PYTHONPATH=$PWD python benchmarks/lubrication_comparison.py
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

RUNS = {"dry": "flores_slider_crank", "lubricated": "flores_lubricated"}
CLEARANCE_MM = 0.5
CRANK_SPEED = 5000 * 2 * np.pi / 60  # rad/s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=Path, default=Path("outputs/simulate"))
    parser.add_argument("--figure", type=Path, default=Path("docs/figures/lubrication/dry_vs_lubricated.png"))
    args = parser.parse_args()
    runs = {label: pd.read_parquet(args.outputs / name / "timeseries.parquet") for label, name in RUNS.items()}
    figure, (orbit, force, acceleration) = plt.subplots(1, 3, figsize=(15, 4.6))
    circle = np.linspace(0, 2 * np.pi, 400)
    orbit.plot(CLEARANCE_MM * np.cos(circle), CLEARANCE_MM * np.sin(circle), "k--", lw=1, label="clearance circle")
    for (label, data), colour in zip(runs.items(), ("tab:red", "tab:blue")):
        crank_angle = np.degrees(CRANK_SPEED * data["t"])
        orbit.plot(1e3 * data["pin.ex"], 1e3 * data["pin.ey"], color=colour, lw=0.8, label=label)
        force.plot(crank_angle, 1e-3 * data["pin.normal_force"], color=colour, lw=0.8, label=label)
        acceleration.plot(crank_angle, 1e-3 * data["slider.ax"], color=colour, lw=0.8, label=label)
        print(f"{label}: peak pin force {data['pin.normal_force'].max():.4g} N, "
              f"peak |slider a| {data['slider.ax'].abs().max():.4g} m/s^2, "
              f"max e/c {np.hypot(data['pin.ex'], data['pin.ey']).max() / (CLEARANCE_MM * 1e-3):.3f}")
    orbit.set(xlabel="e_x (mm)", ylabel="e_y (mm)", title="journal orbit", aspect="equal")
    force.set(xlabel="crank angle (deg)", ylabel="pin normal force (kN)", title="pin force (film + contact)")
    acceleration.set(xlabel="crank angle (deg)", ylabel="slider a_x (km/s^2)", title="slider acceleration")
    for axis in (orbit, force, acceleration):
        axis.legend(fontsize=8)
    figure.tight_layout()
    args.figure.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(args.figure, dpi=110)
    print(f"wrote {args.figure}")


if __name__ == "__main__":
    main()
