"""What a row-level writer pays to find the deletes of the data files it touches, on the
1,000,000-file table (`.cache/bench/pyi1m`, 100 manifests of 10,000 files): reading them
from the snapshot's manifests (`deletes_for`, what every connector executor task and every
`table.delete` group did) against taking them from the rows the write's scan planned
(`write::scanned_deletes`). Both through the extension's `position_delete_files_for` (the
lookup `write_dv_deletes` and the connector's `writeDeletes` make), best of `--repeats`.

    .venv/bin/python benches/scanned_deletes_compare.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import glob
import time

from icefloe import _native
from icefloe.executor.position_deletes import _scanned
from icefloe.table import Table

FILTERS = {
    "id point lookup (1 file)": "id = 4000500",
    "5-day ts range (13,699 files)": "ts >= '1970-01-05T00:00:00' and ts < '1970-01-10T00:00:00'",
}


def best(repeats: int, *call) -> float:
    """The best time of ``position_delete_files_for(*call)``, in milliseconds."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        _native.position_delete_files_for(*call)
        times.append(time.perf_counter() - t0)
    return min(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    (location,) = glob.glob(".cache/bench/pyi1m/db/t1000000/metadata/00100-*.metadata.json")
    t = Table.from_metadata(location)
    md, io = t.metadata, t.io
    print("| plan | touched files | manifests walk | scanned rows | scanned bytes |")
    print("|---|---|---|---|---|")
    for name, where in FILTERS.items():
        plan = t.scan(row_filter=where).plan().table
        # a writer task touches a handful of the planned files
        paths = plan.column("file_path").to_pylist()[:3]
        scanned = _scanned(plan)
        old = _native.position_delete_files_for(io, md, paths)
        new = _native.position_delete_files_for(io, md, paths, None, scanned)
        assert old == new, (old, new)
        t_old = best(args.repeats, io, md, paths)
        t_new = best(args.repeats, io, md, paths, None, scanned)
        print(f"| {name} | {len(paths)} | {t_old:,.1f} ms | {t_new:,.2f} ms | {len(scanned):,} |")


if __name__ == "__main__":
    main()
