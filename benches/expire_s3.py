"""Snapshot expiry on S3 (moto): the clean-up of many expired files, deleted one request per file
one at a time (the request pattern of the expiry before `FileIO::delete_many`) against bulk
requests in flight at once (docs/benchmarks.md, "Snapshot expiry on S3").

Usage: python benches/expire_s3.py [--files N] [--modes one-by-one,bulk-1,bulk]

Needs moto from scripts/servers.sh (`bash scripts/servers.sh start`); reads
target/servers/servers.env.

For each mode a fresh table of the SQL catalog on moto gets N data files (objects of 1 byte,
written 32 at a time) in appends of 1,000 files, a snapshot deleting all of them and a last
append of one file; then `expire_snapshots().retain_last(1)` expires every snapshot but the last
one and deletes the N data files, the manifests and the manifest lists. Timed: the expiry
(commit included), its S3 requests (`FileIO.stats()`) and this process's CPU time.

Modes (`s3.delete.batch-size` and `max_concurrent_deletes` of the same build):
  one-by-one  1 key a request, 1 request at a time: what the expiry did before (one
              `FileIO::delete` per file, in a loop);
  bulk-1      250 keys a request (Java's `s3.delete.batch-size`), 1 request at a time;
  bulk        250 keys a request, the default 16 requests at a time (`io.fetch-concurrency`);
  delete-loop no expiry: `FileIO.delete` of each data file in a Python loop, to check that a
              one-key bulk request costs what a single DELETE costs.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

import icefloe  # noqa: E402
from icefloe import _native  # noqa: E402

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False)])
MODES = {
    "one-by-one": ("1", 1),
    "bulk-1": ("250", 1),
    "bulk": ("250", None),
    "delete-loop": ("250", None),
}


def servers_env() -> dict[str, str]:
    env = {}
    path = ROOT / "target" / "servers" / "servers.env"
    if not path.exists():
        sys.exit(f"{path} not found: run `bash scripts/servers.sh start` first")
    for line in path.read_text().splitlines():
        if line.startswith("export "):
            k, _, v = line[len("export ") :].partition("=")
            env[k] = v
    return env


def data_files(table, paths: list[str]) -> pa.Table:
    schema = _native.manifest_entries_schema(table.schema(), table.metadata.spec())
    for name in ("status", "snapshot_id", "sequence_number", "file_sequence_number"):
        schema = schema.remove(schema.get_field_index(name))
    rows = [
        {
            "content": 0,
            "file_path": p,
            "file_format": "PARQUET",
            "partition": {},
            "record_count": 1,
            "file_size_in_bytes": 1,
        }
        for p in paths
    ]
    return pa.Table.from_pylist(rows, schema=schema)


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(env: dict[str, str], mode: str, n: int, db: Path) -> dict:
    batch, concurrency = MODES[mode]
    warehouse = f"s3://{env['ICEFLOE_TEST_BUCKET']}/bench-expire-{uuid.uuid4().hex[:8]}"
    catalog = icefloe.load_catalog(
        f"e{uuid.uuid4().hex[:6]}",
        type="sql",
        uri=f"sqlite:///{db}",
        warehouse=warehouse,
        **{
            "s3.endpoint": env["ICEFLOE_TEST_S3_ENDPOINT"],
            "s3.path-style-access": "true",
            "s3.access-key-id": "test",
            "s3.secret-access-key": "test",
            "s3.region": "us-east-1",
            "s3.delete.batch-size": batch,
        },
    )
    catalog.create_namespace("db")
    t = catalog.create_table("db.t", SCHEMA, properties={"format-version": "2"})
    loc = t.metadata.location
    paths = [f"{loc}/data/f{i:06d}.parquet" for i in range(n)]
    start = time.perf_counter()
    with ThreadPoolExecutor(32) as pool:
        list(pool.map(lambda p: t.io.write_new(p, b"x"), paths))
    for i in range(0, n, 1000):
        t.append_files(data_files(t, paths[i : i + 1000]))
    t.delete_files(paths)
    live = f"{loc}/data/live.parquet"
    t.io.write_new(live, b"x")
    t.append_files(data_files(t, [live]))
    setup_s = time.perf_counter() - start

    t.io.reset_stats()
    cpu0, t0 = cpu_s(), time.perf_counter()
    if mode == "delete-loop":
        for p in paths:
            t.io.delete(p)
        deleted = n
    else:
        ex = t.expire_snapshots().older_than(int(time.time() * 1000) + 1).retain_last(1)
        if concurrency is not None:
            ex = ex.max_concurrent_deletes(concurrency)
        result = ex.commit()
        assert not result.failed_deletes, result.failed_deletes[:3]
        assert len(result.data_files) == n, len(result.data_files)
        deleted = len(result.deleted_files())
    wall = time.perf_counter() - t0
    cpu = cpu_s() - cpu0
    requests = t.io.stats()["requests"]
    assert t.io.exists(live)
    assert not any(t.io.exists(p) for p in paths[:: max(1, n // 20)])
    return {
        "mode": mode,
        "files": deleted,
        "wall_s": wall,
        "cpu_s": cpu,
        "requests": requests,
        "files_per_s": deleted / wall,
        "setup_s": setup_s,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--modes", default="one-by-one,bulk-1,bulk,delete-loop")
    args = ap.parse_args()
    env = servers_env()
    print(f"icefloe from {icefloe.__file__}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        print("| mode | files deleted | wall | CPU (this process) | S3 requests | files/s |")
        print("|---|---|---|---|---|---|")
        for mode in args.modes.split(","):
            r = run(env, mode, args.files, Path(tmp) / f"{mode}.db")
            print(
                f"| {r['mode']} | {r['files']:,} | {r['wall_s']:.2f} s | {r['cpu_s']:.2f} s "
                f"| {r['requests']:,} | {r['files_per_s']:,.0f} |",
                flush=True,
            )
            print(f"<!-- setup of {mode}: {r['setup_s']:.1f} s -->", flush=True)


if __name__ == "__main__":
    main()
