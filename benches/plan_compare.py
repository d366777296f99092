"""Scan planning on the 1,000,000-file table, icefloe against PyIceberg and Java, in one run.

Usage: python benches/plan_compare.py [--files N] [--per-commit K] [--skip-pyiceberg-id] [--repeats R]

Builds (once, cached in .cache/bench/pyi<N>) the table of ../shared/bench/make_pyiceberg_table.py:
N files in fast appends of K files, day(ts) partitioning, full metrics for 4 columns. Then plans
three scans with each engine: no filter, a point lookup on `id` (pruned by metrics) and a 5-day
range on `ts` (pruned by partition):

- icefloe: `Table.from_metadata(...).scan(row_filter).plan_arrow()`, in a fresh process per
  filter so that its peak memory (max RSS) is the planning's own;
- PyIceberg: `table.scan(row_filter).plan_files()` listed (as ../shared/bench/plan_pyiceberg.py);
- Java Iceberg 1.11: `TableScan.planFiles()` iterated to the end, in the JVM of a local Spark
  session (worker pool as Java configures it), timed inside Java.

Prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_BENCH = ROOT.parent / "shared" / "bench"

FILTERS = {
    "none": None,
    "id": "id = 4000500",
    "day": "ts >= '1970-01-05T00:00:00' and ts < '1970-01-10T00:00:00'",
}
FILTERS_JSON = {
    "none": None,
    "id": {"type": "eq", "term": "id", "value": 4000500},
    "day": {
        "type": "and",
        "left": {"type": "gt-eq", "term": "ts", "value": "1970-01-05T00:00:00"},
        "right": {"type": "lt", "term": "ts", "value": "1970-01-10T00:00:00"},
    },
}


def ensure_table(n_files: int, per_commit: int) -> Path:
    wh = ROOT / ".cache" / "bench" / f"pyi{n_files}"
    if n_files == 1_000_000:
        wh = ROOT / ".cache" / "bench" / "pyi1m"
    db = wh / "catalog.db"
    if not db.exists():
        wh.mkdir(parents=True, exist_ok=True)
        print(f"building the {n_files}-file table with PyIceberg (minutes) ...", file=sys.stderr)
        subprocess.run(
            [
                sys.executable,
                str(SHARED_BENCH / "make_pyiceberg_table.py"),
                str(wh),
                str(n_files),
                str(per_commit),
            ],
            check=True,
        )
    return wh


def metadata_location(wh: Path) -> str:
    with sqlite3.connect(wh / "catalog.db") as c:
        (loc,) = c.execute("select metadata_location from iceberg_tables").fetchone()
    return loc.removeprefix("file://")


def child_icefloe(location: str, which: str, repeats: int) -> None:
    """Runs in a fresh process: plans `repeats` times, prints JSON with times and max RSS."""
    import icefloe
    from icefloe.table import Table

    times = []
    rows = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        table = Table.from_metadata(location)
        plan = table.scan(row_filter=FILTERS[which]).plan_arrow()
        times.append((time.perf_counter() - t0) * 1000)
        rows = plan.num_rows
        del plan
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"tasks": rows, "ms": times, "max_rss_mib": rss_mib, "version": icefloe.__version__}))


def run_icefloe(location: str, which: str, repeats: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", location, which, str(repeats)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_pyiceberg(wh: Path, which: str) -> dict:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.expressions import AlwaysTrue, And, EqualTo, GreaterThanOrEqual, LessThan

    cat = SqlCatalog("bench", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    (name,) = [".".join(t) for t in cat.list_tables("db")]
    t = cat.load_table(name)
    flt = {
        "none": AlwaysTrue(),
        "id": EqualTo("id", 4_000_500),
        "day": And(GreaterThanOrEqual("ts", "1970-01-05T00:00:00"), LessThan("ts", "1970-01-10T00:00:00")),
    }[which]
    t0 = time.perf_counter()
    tasks = list(t.scan(row_filter=flt).plan_files())
    return {"tasks": len(tasks), "ms": [(time.perf_counter() - t0) * 1000]}


def run_java(location: str, which: str, repeats: int, spark) -> dict:
    cls = spark._jvm
    for part in "org.apache.iceberg.IcefloeScanOracle".split("."):
        cls = getattr(cls, part)
    flt = FILTERS_JSON[which]
    return json.loads(str(cls.timePlanFiles(location, None if flt is None else json.dumps(flt), repeats)))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_icefloe(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--per-commit", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-pyiceberg-id", action="store_true", help="skip PyIceberg's ~70 s point lookup")
    ap.add_argument("--no-java", action="store_true")
    ap.add_argument("--no-pyiceberg", action="store_true")
    args = ap.parse_args()
    wh = ensure_table(args.files, args.per_commit)
    location = metadata_location(wh)
    results: dict[str, dict[str, dict]] = {}
    for which in FILTERS:
        results.setdefault(which, {})["icefloe"] = run_icefloe(location, which, args.repeats)
    if not args.no_java:
        sys.path.insert(0, str(ROOT / "tests"))
        import tempfile

        import oracle

        tmp = Path(tempfile.mkdtemp())
        spark = oracle.start_spark(tmp / "wh", tmp / "vwh")
        try:
            for which in FILTERS:
                # one warm-up run: the first planning in a JVM pays class loading and JIT
                results[which]["java"] = run_java(location, which, args.repeats + 1, spark)
                results[which]["java"]["ms"] = results[which]["java"]["ms"][1:]
        finally:
            spark.stop()
    if not args.no_pyiceberg:
        for which in FILTERS:
            if which == "id" and args.skip_pyiceberg_id:
                continue
            results[which]["pyiceberg"] = run_pyiceberg(wh, which)

    print(f"\nPlanning the {args.files:,}-file table ({os.cpu_count()} cores), best of runs:\n")
    print("| filter | tasks | icefloe | icefloe max RSS | Java 1.11 | PyIceberg | vs Java | vs PyIceberg |")
    print("|---|---|---|---|---|---|---|---|")
    for which, r in results.items():
        ice = min(r["icefloe"]["ms"])
        java = min(r["java"]["ms"]) if "java" in r else None
        pyi = min(r["pyiceberg"]["ms"]) if "pyiceberg" in r else None
        tasks = {k: v["tasks"] for k, v in r.items()}
        assert len(set(tasks.values())) == 1, f"engines disagree on the number of tasks: {tasks}"
        fmt = lambda ms: "—" if ms is None else f"{ms:,.0f} ms"  # noqa: E731
        ratio = lambda other, ice=ice: "—" if other is None else f"{other / ice:.1f}×"  # noqa: E731
        print(
            f"| {which} | {r['icefloe']['tasks']:,} | {fmt(ice)} | {r['icefloe']['max_rss_mib']:,.0f} MiB | "
            f"{fmt(java)} | {fmt(pyi)} | {ratio(java)} | {ratio(pyi)} |"
        )


if __name__ == "__main__":
    main()
