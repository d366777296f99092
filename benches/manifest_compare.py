"""Manifest decoding from Python: icefloe against PyIceberg, in the same run.

Usage: python benches/manifest_compare.py [N_FILES]   (default 10000)

Builds (once, cached in .cache/bench/) a table with PyIceberg using
shared/bench/make_pyiceberg_table.py: N_FILES data files in one fast append, so one manifest
of N_FILES entries with full metrics for 4 columns, partitioned by day(ts). Then times, best
of several runs:
  - PyIceberg: ManifestFile.fetch_manifest_entry (all fields);
  - icefloe:   read_manifest with inheritance, all fields (a pyarrow Table);
  - icefloe:   read_manifest with only the fields a scan needs (no counts, bounds of one column).
Run it on a release build (scripts/setup.sh builds one).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def best_of(fn, runs: int = 7) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    from pyiceberg.catalog.sql import SqlCatalog

    import icefloe

    n_files = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    wh = ROOT / ".cache" / "bench" / f"pyi{n_files}"
    name = f"db.t{n_files}"
    if not (wh / "catalog.db").exists():
        wh.mkdir(parents=True, exist_ok=True)
        maker = ROOT.parent / "shared" / "bench" / "make_pyiceberg_table.py"
        subprocess.run([sys.executable, str(maker), str(wh), str(n_files), str(n_files)], check=True)
    cat = SqlCatalog("bench", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    table = cat.load_table(name)
    (manifest,) = table.current_snapshot().manifests(table.io)

    ml_path = table.current_snapshot().manifest_list
    (row,) = icefloe.read_manifest_list(ml_path).to_pylist()
    path = row["manifest_path"]
    assert (
        icefloe.read_manifest(path, row).num_rows
        == n_files
        == len(manifest.fetch_manifest_entry(table.io, discard_deleted=False))
    )

    results = {
        "pyiceberg, all fields": best_of(
            lambda: manifest.fetch_manifest_entry(table.io, discard_deleted=False), 3
        ),
        "icefloe, all fields": best_of(lambda: icefloe.read_manifest(path, row)),
        "icefloe, scan fields": best_of(
            lambda: icefloe.read_manifest(path, row, stats=False, bounds_for=[1])
        ),
    }
    base = results["pyiceberg, all fields"]
    print(
        f"one manifest of {n_files} entries ({Path(path.removeprefix('file://')).stat().st_size / 1e6:.2f} MB, deflate)"
    )
    for what, secs in results.items():
        print(
            f"  {what:24s} {secs * 1e3:9.2f} ms  {n_files / secs:12,.0f} entries/s  {base / secs:7.1f}x PyIceberg"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
