"""The `files` metadata table against planning the same table, in one process.

Usage: python benches/inspect_compare.py [--files N] [--per-commit K] [--repeats R]

Uses the table of benches/plan_compare.py (N files in fast appends of K files, built once
with PyIceberg into .cache/bench; 1,000,000 files in appends of 10,000 by default) and
times, alternately and best of R: `table.scan().plan_arrow()` (an unfiltered plan: every
live data file with its deletes and residual, as Arrow) and `table.inspect.files()` (every
live file with all its metrics, readable_metrics decoded, as a pyarrow Table). The goal is
`files` within 2x of planning. Prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plan_compare import ensure_table, metadata_location  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--files", type=int, default=1_000_000)
    p.add_argument("--per-commit", type=int, default=10_000)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    from icefloe.table import Table

    location = metadata_location(ensure_table(a.files, a.per_commit))
    plan_ms, files_ms = [], []
    rows = (0, 0)
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        plan = Table.from_metadata(location).scan().plan_arrow()
        plan_ms.append((time.perf_counter() - t0) * 1000)
        n_plan = plan.num_rows
        del plan
        t0 = time.perf_counter()
        files = Table.from_metadata(location).inspect.files()
        files_ms.append((time.perf_counter() - t0) * 1000)
        rows = (n_plan, files.num_rows)
        del files
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    best_plan, best_files = min(plan_ms), min(files_ms)
    print(
        f"plan: {[round(x) for x in plan_ms]} ms, files: {[round(x) for x in files_ms]} ms", file=sys.stderr
    )
    print("| table | rows | plan_arrow() | inspect.files() | ratio | max RSS |")
    print("|---|---|---|---|---|---|")
    print(
        f"| {a.files:,} files | {rows[0]:,} / {rows[1]:,} | {best_plan:,.0f} ms | {best_files:,.0f} ms "
        f"| {best_files / best_plan:.2f}x | {rss:,.0f} MiB |"
    )


if __name__ == "__main__":
    main()
