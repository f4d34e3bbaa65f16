"""CPU seconds of a test run, per tier and per file, from the rows ``tests/conftest.py``
appends with ``CLEARANCE_TEST_CPU=FILE.csv`` set.

    CLEARANCE_TEST_CPU=cpu.csv python -m pytest -n 0 tests/model
    python -m benchmarks.suite_cpu cpu.csv [--top 30]

Tiers: the fast tier is the ``fast`` rows (``-m "not slow"``), the default run the ``fast``
and ``slow`` rows (``-m "not validation"``). A test recorded more than once (a file run
again) counts with its last row. CPU is the test process's own plus its waited-for child
processes'; the interpreter's start, imports and collection are not in any row."""

import argparse

import pandas as pd


def load(paths: list[str]) -> pd.DataFrame:
    """The rows of one or more record files, read as one; the last row of each test kept
    (later files win), with ``total_s`` (own plus child processes' CPU seconds)."""
    table = pd.concat([pd.read_csv(path, dtype=str) for path in paths], ignore_index=True)
    table = table[table["nodeid"] != "nodeid"]  # a header two workers both wrote
    for column in ("cpu_s", "children_cpu_s", "wall_s"):
        table[column] = table[column].astype(float)
    table = table.drop_duplicates("nodeid", keep="last")
    return table.assign(total_s=table["cpu_s"] + table["children_cpu_s"])


def tiers(table: pd.DataFrame) -> pd.DataFrame:
    """Tests and CPU seconds of the fast tier, the default run and the validation tier."""
    selections = {
        'fast tier (-m "not slow")': table["tier"] == "fast",
        "default run (-m 'not validation')": table["tier"] != "validation",
        "validation tier (-m validation)": table["tier"] == "validation",
    }
    return pd.DataFrame([(name, int(rows.sum()), table.loc[rows, "total_s"].sum() / 60)
                         for name, rows in selections.items()],
                        columns=["selection", "tests", "CPU (min)"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", nargs="+", help="files the test runs appended to")
    parser.add_argument("--top", type=int, default=25, help="how many files and tests to list")
    args = parser.parse_args(argv)
    table = load(args.csv)
    pd.set_option("display.width", 200, "display.max_colwidth", 110)
    print(tiers(table).to_string(index=False, float_format="%.2f"))
    if "outcome" in table:  # records of the current tests/conftest.py
        failed = table[table["outcome"].fillna("passed") != "passed"]
        print(f"\n{len(failed)} tests did not pass")
        for nodeid, outcome in zip(failed["nodeid"], failed["outcome"]):
            print(f"  {nodeid} ({outcome})")
    per_file = table.pivot_table(index="file", columns="tier", values="total_s", aggfunc="sum",
                                 fill_value=0.0)
    per_file["total"] = per_file.sum(axis=1)
    print(f"\nCPU seconds per file, the {args.top} costliest:")
    print(per_file.sort_values("total", ascending=False).head(args.top).to_string(float_format="%.1f"))
    print(f"\nThe {args.top} costliest tests (CPU seconds):")
    print(table.sort_values("total_s", ascending=False).head(args.top)[["nodeid", "tier", "total_s"]]
          .to_string(index=False, float_format="%.1f"))


if __name__ == "__main__":
    main()
