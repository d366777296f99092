"""The Python reader's row filters on the data of ``benches/read_filter.rs``, for comparison.

Usage: python benches/read_filter_pyarrow.py [--repeats R]

Builds the same 1,000,000 rows in batches of 65,536 (id, cat = ``c{id % 10}``, amount with a
NaN every 1,000 rows and a null every 100) and times, best of R, what
``icefloe.executor.read`` does per batch today:

- a residual mask: the pyarrow expression of ``_residual_expression`` evaluated as
  ``_evaluate`` does (``Table.filter`` of a row-number column, then a numpy mask), and the
  bare pyarrow kernel (``pc.equal`` etc.) without that indirection;
- equality deletes: ``_EqualityDeletes.keep_mask`` (joint ``dictionary_encode`` and a
  left-semi join) with 10,000 delete rows keyed by ``id`` and by (``id``, ``cat``).

Prints one line per case in milliseconds for all 1,000,000 rows.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe.executor.read import _EqualityDeletes, _evaluate

ROWS = 1_000_000
BATCH = 65_536
DELETES = 10_000


def batches() -> list[pa.Table]:
    out = []
    for start in range(0, ROWS, BATCH):
        ids = np.arange(start, min(start + BATCH, ROWS), dtype=np.int64)
        cats = pa.array([f"c{i % 10}" for i in ids])
        amounts = (ids / 1000.0).astype(np.float64)
        amounts[ids % 1000 == 0] = np.nan
        amount_arr = pa.array(amounts, mask=(ids % 100 == 0) & (ids % 1000 != 0))
        out.append(pa.table({"id": ids, "cat": cats, "amount": amount_arr}))
    return out


def best(f: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    data = batches()
    ref = pc.field
    in_values = pa.array([v * 997 for v in range(100)], pa.int64())
    cases = {
        "string_eq": (pc.equal(ref("cat"), pc.scalar("c3")), lambda t: pc.equal(t["cat"], "c3")),
        "long_range": (
            pc.and_kleene(
                pc.greater_equal(ref("id"), pc.scalar(250_000)), pc.less(ref("id"), pc.scalar(750_000))
            ),
            lambda t: pc.and_kleene(pc.greater_equal(t["id"], 250_000), pc.less(t["id"], 750_000)),
        ),
        "long_in_100": (
            pc.and_kleene(ref("id").is_valid(), pc.is_in(ref("id"), value_set=in_values)),
            lambda t: pc.is_in(t["id"], value_set=in_values),
        ),
        "double_gt": (
            pc.or_kleene(
                pc.greater(ref("amount"), pc.scalar(500.0)),
                pc.and_kleene(ref("amount").is_valid(), pc.is_nan(ref("amount"))),
            ),
            lambda t: pc.greater(t["amount"], 500.0),
        ),
    }
    for name, (expr, kernel) in cases.items():
        as_reader = best(lambda expr=expr: [_evaluate(t, expr) for t in data], args.repeats)
        bare = best(lambda kernel=kernel: [kernel(t) for t in data], args.repeats)
        print(f"residual {name}: read.py _evaluate {as_reader:.1f} ms, bare pyarrow kernel {bare:.1f} ms")
    del_ids = np.arange(DELETES, dtype=np.int64) * 100 + 7
    del_cats = pa.array([f"c{i % 10}" for i in del_ids])
    for name, ids in (("id", [1]), ("id_cat", [1, 2])):
        cols = {"0": pa.array(del_ids)} if ids == [1] else {"0": pa.array(del_ids), "1": del_cats}
        eq = _EqualityDeletes(ids, pa.table(cols), "bench.parquet")

        def run(eq=eq, ids=ids) -> None:
            for t in data:
                columns = {1: t["id"].combine_chunks(), 2: t["cat"].combine_chunks()}
                eq.keep_mask({i: columns[i] for i in ids}, t.num_rows)

        print(f"equality deletes keep_mask_{name}: {best(run, args.repeats):.1f} ms")


if __name__ == "__main__":
    main()
