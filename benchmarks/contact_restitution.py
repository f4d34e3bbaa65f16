"""Obtained vs nominal coefficient of restitution for every normal contact force law.

1-D impact of 1 kg on 1 kg at 1 m/s, K = 1e9 N/m^1.5, n = 1.5 (``model/contact/impact1d.py``).
Prints a Markdown table (nominal e = 0.3, 0.5, 0.7, 0.9, 0.99) and writes the plot
``docs/figures/restitution.png``. Run from the repository root::

    .venv/bin/python benchmarks/contact_restitution.py
"""

import argparse
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from model import NORMAL_FORCE_LAWS, ContactLaw, obtained_restitution  # noqa: E402

TABLE_RESTITUTIONS = (0.3, 0.5, 0.7, 0.9, 0.99)
KELVIN_VOIGT_DAMPING = 1e3  # N s/m (kelvin_voigt ignores e)
PENETRATION_MAX = 1e-4  # m (adams_impact d_max)


def obtained_curve(model: str, restitutions: np.ndarray) -> np.ndarray:
    law = ContactLaw(model, stiffness=1e9, exponent=1.5, damping=KELVIN_VOIGT_DAMPING, penetration_max=PENETRATION_MAX)
    run = jax.jit(jax.vmap(lambda e: obtained_restitution(eqx.tree_at(lambda c: c.restitution, law, e))))
    return np.asarray(run(jnp.asarray(restitutions)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", default="docs/figures/restitution.png")
    args = parser.parse_args()

    table_es = np.array(TABLE_RESTITUTIONS)
    curve_es = np.linspace(0.1, 1.0, 46)
    rows, curves = {}, {}
    for model in NORMAL_FORCE_LAWS:
        rows[model] = obtained_curve(model, table_es)
        curves[model] = obtained_curve(model, curve_es)

    print("| law | " + " | ".join(f"e = {e:g}" for e in table_es) + " | max abs error |")
    print("|---|" + "---:|" * (len(table_es) + 1))
    for model, values in rows.items():
        cells = " | ".join(f"{v:.4f}" for v in values)
        print(f"| {model} | {cells} | {np.max(np.abs(values - table_es)):.4f} |")

    fig, ax = plt.subplots(figsize=(6.5, 5.5))
    ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--", label="obtained = nominal")
    for model, values in curves.items():
        ax.plot(curve_es, values, lw=1.6, label=model)
    ax.set_xlabel("nominal coefficient of restitution e")
    ax.set_ylabel("obtained e (separation / approach speed)")
    ax.set_title("1-D impact, 1 kg on 1 kg, 1 m/s, K = 1e9 N/m^1.5, n = 1.5", fontsize=9)
    ax.set_xlim(0.1, 1.0)
    ax.set_ylim(0.0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    path = pathlib.Path(args.plot)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    print(f"\nplot: {path}")


if __name__ == "__main__":
    main()
