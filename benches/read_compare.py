"""Reading a table into Arrow: icefloe's ``to_arrow`` against PyIceberg's and against raw
``pyarrow.parquet.read_table`` of the same files and columns, in one run.

Usage: python benches/read_compare.py [--rows N] [--repeats R] [--dir D]

Builds (once, cached in D/read<N>, by default .cache/bench) two tables of N rows (default 1,000,000; issue
22 measures 10,000,000) with the columns of issue 22 (``id`` long, ``ts`` timestamp, ``cat``
string, ``amount`` double, ``note`` string), partitioned by ``days(ts)`` over 30 days:

- ``db.plain``, format v2, written by PyIceberg 0.11 (a third-party writer): one file per day;
- ``db.dvs``, format v3, written by icefloe, then ``delete("amount < 100")`` committed as
  deletion vectors (one DV per data file, a tenth of the rows deleted).

Reads, best of R, each engine in this process one after the other:

- all rows, all columns; ``cat = 'c'`` (a residual on every file); one column (``id``);
  all rows of ``db.dvs``;
- icefloe: ``Table.from_metadata(...).scan(...).to_arrow()``;
- PyIceberg: ``table.scan(...).to_arrow()``;
- raw pyarrow: ``pq.read_table(files, columns=..., filters=...)`` of the plan's data files
  (no deletes applied: the cost of decoding alone).

Prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

import icefloe  # noqa: E402
from icefloe.executor.files import local_path  # noqa: E402

DAY_US = 86_400_000_000
START_US = 1_700_000_000_000_000 // DAY_US * DAY_US


def data(n: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    ts = np.sort(rng.integers(START_US, START_US + 30 * DAY_US, n))
    cats = np.array(list("abcdefghij"))
    return pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "ts": pa.array(ts, pa.timestamp("us")),
            "cat": pa.array(cats[rng.integers(0, 10, n)]),
            "amount": pa.array(rng.random(n) * 1000),
            "note": pc.cast(pa.array(rng.integers(0, 100_000, n)), pa.string()),
        }
    )


def build(wh: Path, n: int) -> None:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import DayTransform
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestampType

    wh.mkdir(parents=True, exist_ok=True)
    table = data(n)
    cat = SqlCatalog("bench", uri=f"sqlite:///{wh}/pyiceberg.db", warehouse=f"file://{wh}")
    cat.create_namespace_if_not_exists("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "ts", TimestampType(), required=False),
        NestedField(3, "cat", StringType(), required=False),
        NestedField(4, "amount", DoubleType(), required=False),
        NestedField(5, "note", StringType(), required=False),
    )
    spec = PartitionSpec(PartitionField(2, 1000, DayTransform(), "ts_day"))
    t = cat.create_table("db.plain", schema=schema, partition_spec=spec)
    t.append(table)
    (wh / "plain.location").write_text(cat.load_table("db.plain").metadata_location)

    ice = icefloe.load_catalog("bench", uri=f"sqlite:///{wh}/icefloe.db", warehouse=wh.as_uri())
    ice.create_namespace("db")
    dvs = ice.create_table(
        "db.dvs", table.schema, partition_spec=[("ts", "day")], properties={"format-version": "3"}
    )
    dvs.append(table)
    # `amount` is uniform in [0, 1000): a tenth of the rows of every file
    ice.load_table("db.dvs").delete("amount < 100")
    (wh / "dvs.location").write_text(ice.load_table("db.dvs").metadata_location)


def best(fn, repeats: int) -> tuple[float, int]:
    times = []
    rows = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        rows = fn().num_rows
        times.append(time.perf_counter() - t0)
    return min(times) * 1000, rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=ROOT / ".cache" / "bench", help="where the tables are kept")
    args = ap.parse_args()
    wh = args.dir.resolve() / f"read{args.rows}"
    if not (wh / "dvs.location").exists():
        print(f"building the {args.rows}-row tables (PyIceberg and icefloe) ...", file=sys.stderr)
        build(wh, args.rows)

    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.expressions import EqualTo

    pyi = SqlCatalog("bench", uri=f"sqlite:///{wh}/pyiceberg.db", warehouse=f"file://{wh}")
    results = []
    for name in ("plain", "dvs"):
        location = (wh / f"{name}.location").read_text()
        t = icefloe.Table.from_metadata(location)
        files = [local_path(p) for p in t.scan().plan_arrow().column("file_path").to_pylist()]
        pt = pyi.load_table("db.plain") if name == "plain" else None
        if name == "dvs":
            from pyiceberg.table import StaticTable

            pt = StaticTable.from_metadata(location)
        cases = (
            [
                ("all rows, all columns", {}, {}, {}),
                (
                    "`cat = 'c'`",
                    {"row_filter": "cat = 'c'"},
                    {"row_filter": EqualTo("cat", "c")},
                    {"filters": [("cat", "=", "c")]},
                ),
                (
                    "one column (`id`)",
                    {"selected_fields": ["id"]},
                    {"selected_fields": ("id",)},
                    {"columns": ["id"]},
                ),
            ]
            if name == "plain"
            else [("all rows, with DVs (a tenth deleted)", {}, {}, {})]
        )
        for label, ice_kw, pyi_kw, pa_kw in cases:
            ice_ms, ice_rows = best(lambda t=t, kw=ice_kw: t.scan(**kw).to_arrow(), args.repeats)
            try:
                pyi_ms, pyi_rows = best(lambda pt=pt, kw=pyi_kw: pt.scan(**kw).to_arrow(), args.repeats)
                pyi_text = f"{pyi_ms:,.0f} ms"
                if pyi_rows != ice_rows:
                    pyi_text += f" ({pyi_rows:,} rows)"
            except Exception as e:  # noqa: BLE001 (PyIceberg may not read v3 DVs)
                pyi_text = f"fails: {type(e).__name__}"
            raw_ms, raw_rows = best(lambda f=files, kw=pa_kw: pq.read_table(f, **kw), args.repeats)
            results.append((label, ice_ms, ice_rows, pyi_text, raw_ms, raw_rows))

    print(f"\n{args.rows:,} rows, best of {args.repeats}\n")
    print("| read | icefloe | PyIceberg | raw pyarrow | icefloe / raw |")
    print("|---|---|---|---|---|")
    for label, ice_ms, ice_rows, pyi_text, raw_ms, raw_rows in results:
        print(
            f"| {label} ({ice_rows:,} rows) | {ice_ms:,.0f} ms | {pyi_text} | "
            f"{raw_ms:,.0f} ms ({raw_rows:,} rows) | {ice_ms / raw_ms:.2f}x |"
        )


if __name__ == "__main__":
    main()
