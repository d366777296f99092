"""The `files` metadata table against planning the same table, in one process.

Usage: python benches/inspect_compare.py [--files N] [--per-commit K] [--repeats R]
       [--tables files,entries,all_files]

Uses the table of benches/plan_compare.py (N files in fast appends of K files, built once
with PyIceberg into .cache/bench; 1,000,000 files in appends of 10,000 by default) and
times, alternately and best of R: `table.scan().plan_arrow()` (an unfiltered plan: every
live data file with its deletes and residual, as Arrow) and `table.inspect.files()` (every
live file with all its metrics, readable_metrics decoded, as a pyarrow Table), or each
metadata table of --tables. Wall time and CPU time (getrusage of the process, all threads:
steadier on a loaded machine). The goal is `files` within 2x of planning. Prints a
Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plan_compare import ensure_table, metadata_location  # noqa: E402


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--files", type=int, default=1_000_000)
    p.add_argument("--per-commit", type=int, default=10_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--tables", default="files", help="metadata tables to time, comma-separated")
    a = p.parse_args()
    from icefloe.table import Table

    location = metadata_location(ensure_table(a.files, a.per_commit))
    names = ["plan", *a.tables.split(",")]
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    rows: dict[str, int] = {}
    for _ in range(a.repeats):
        for n in names:
            t0, c0 = time.perf_counter(), cpu_seconds()
            t = Table.from_metadata(location)
            result = t.scan().plan_arrow() if n == "plan" else getattr(t.inspect, n)()
            wall[n].append((time.perf_counter() - t0) * 1000)
            cpu[n].append((cpu_seconds() - c0) * 1000)
            rows[n] = result.num_rows
            del result
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for n in names:
        print(f"{n}: {[round(x) for x in wall[n]]} ms, cpu {[round(x) for x in cpu[n]]} ms", file=sys.stderr)
    plan_wall, plan_cpu = min(wall["plan"]), min(cpu["plan"])
    print("| table | rows | plan_arrow() | metadata table | ratio | CPU ratio | max RSS |")
    print("|---|---|---|---|---|---|---|")
    for n in names[1:]:
        print(
            f"| {a.files:,} files, `{n}` | {rows['plan']:,} / {rows[n]:,} | {plan_wall:,.0f} ms "
            f"| {min(wall[n]):,.0f} ms | {min(wall[n]) / plan_wall:.2f}x "
            f"| {min(cpu[n]) / plan_cpu:.2f}x | {rss:,.0f} MiB |"
        )


if __name__ == "__main__":
    main()
