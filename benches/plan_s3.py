"""Planning on S3 against planning on local disk, and a one-file append through the REST
catalog on S3, for icefloe and PyIceberg, in one run (docs/benchmarks.md, "Planning on S3").

Usage: python benches/plan_s3.py [--files N] [--repeats R] [--fetch 2,8,16,32] [--appends K]
                                 [--no-pyiceberg]

Needs the servers of scripts/servers.sh (`bash scripts/servers.sh start`): moto for S3 and the
`rest-s3` Iceberg REST server (warehouse on moto, credentials vended). Reads
target/servers/servers.env.

1. The benchmark table of ../shared/bench/make_pyiceberg_table.py (N files in fast appends of
   10,000, built once into target/bench/pyi<N>) is copied to moto: its manifests byte for byte,
   the current snapshot's manifest list and the metadata JSON with their locations rewritten
   to s3:// (the data file paths inside the manifests stay as they are: planning never opens
   data files, and the same bytes are decoded in both places).
2. Each plan (no filter) runs in a fresh process, so that no cache of a previous plan helps:
   icefloe on local disk; icefloe on S3 with each fetch concurrency of --fetch; icefloe on S3
   planning twice in one process (the second plan served by the manifest cache); PyIceberg
   on local disk and on S3. `io.fetch-concurrency` is a FileIO property (the manifests a
   planner reads at once); the manifest cache is off except in the two rows that plan twice in
   one process (with Java's default bound of 100 MiB, and with 300 MiB, which holds this
   table's 204 MB of manifests). PyIceberg plans once each (minutes a plan). The S3 FileIO's request and byte counters are printed per plan.
3. One-file appends (one row, a new Parquet file each) to a table of the REST catalog on S3,
   --appends times, median, for icefloe and PyIceberg.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_BENCH = ROOT.parent / "shared" / "bench"
PREFIX = "bench-plan"


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


def s3_props(env: dict[str, str], **extra: str) -> dict[str, str]:
    return {
        "s3.endpoint": env["ICEFLOE_TEST_S3_ENDPOINT"],
        "s3.access-key-id": "test",
        "s3.secret-access-key": "test",
        "s3.region": "us-east-1",
        "s3.path-style-access": "true",
        **extra,
    }


def ensure_table(n_files: int) -> tuple[Path, str]:
    wh = ROOT / "target" / "bench" / ("pyi1m" if n_files == 1_000_000 else f"pyi{n_files}")
    db = wh / "catalog.db"
    if not db.exists():
        wh.mkdir(parents=True, exist_ok=True)
        print(f"building the {n_files}-file table with PyIceberg (minutes) ...", file=sys.stderr)
        subprocess.run(
            [sys.executable, str(SHARED_BENCH / "make_pyiceberg_table.py"), str(wh), str(n_files), "10000"],
            check=True,
        )
    import sqlite3

    with sqlite3.connect(db) as c:
        (loc,) = c.execute("select metadata_location from iceberg_tables").fetchone()
    path = Path(loc.removeprefix("file://"))
    return wh, str(path if path.is_absolute() else ROOT / path)


def upload(env: dict[str, str], wh: Path, local_metadata: str) -> str:
    """Copies the table to moto (once per server: skipped when the metadata is there) and
    returns its s3:// metadata location."""
    import boto3
    import pyarrow as pa

    import icefloe._native as native

    bucket = env["ICEFLOE_TEST_BUCKET"]
    s3 = boto3.client(
        "s3",
        endpoint_url=env["ICEFLOE_TEST_S3_ENDPOINT"],
        aws_access_key_id="test",
        aws_secret_access_key="test",
        region_name="us-east-1",
    )
    text = Path(local_metadata).read_text()
    meta = json.loads(text)
    # the table's location as written (`file://...`, relative to where it was built if the
    # warehouse was given as a relative path)
    table_loc = meta["location"]
    s3_table = f"s3://{bucket}/{PREFIX}/{wh.name}/" + "/".join(table_loc.rsplit("/", 2)[-2:])

    def local_file(p: str) -> Path:
        path = Path(p.removeprefix("file://").removeprefix("file:"))
        return path if path.is_absolute() else ROOT / path

    def s3_of(p: str) -> str:
        if not p.startswith(table_loc):
            sys.exit(f"{p} is not under the table location {table_loc}")
        return s3_table + p[len(table_loc) :]

    def key_of(p: str) -> str:
        return s3_of(p).removeprefix(f"s3://{bucket}/")

    meta_key = s3_table.removeprefix(f"s3://{bucket}/") + "/metadata/" + Path(local_metadata).name
    try:
        s3.head_object(Bucket=bucket, Key=meta_key)
        return f"s3://{bucket}/{meta_key}"
    except Exception:
        pass
    print("uploading the table to moto ...", file=sys.stderr)
    current = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    list_path = current["manifest-list"]
    batch = native.read_manifest_list_batch(str(local_file(list_path)))
    paths = batch.column("manifest_path").to_pylist()
    for p in paths:
        s3.upload_file(str(local_file(p)), bucket, key_of(p))
    new_paths = pa.array([s3_of(p) for p in paths])
    batch = batch.set_column(batch.schema.get_field_index("manifest_path"), "manifest_path", new_paths)
    tmp = ROOT / "target" / "bench" / f"list-{uuid.uuid4().hex}.avro"
    native.write_manifest_list_batch(
        str(tmp),
        batch,
        format_version=meta["format-version"],
        snapshot_id=current["snapshot-id"],
        parent_snapshot_id=current.get("parent-snapshot-id"),
        sequence_number=current.get("sequence-number", 0),
        first_row_id=None,
        compression="deflate",
    )
    s3.upload_file(str(tmp), bucket, key_of(list_path))
    tmp.unlink()
    s3.put_object(Bucket=bucket, Key=meta_key, Body=text.replace(table_loc, s3_table).encode())
    return f"s3://{bucket}/{meta_key}"


# ---------------------------------------------------------------- children (fresh processes)


def child_icefloe(location: str, props_json: str, plans: int) -> None:
    from icefloe import _native
    from icefloe.table import Table

    props = json.loads(props_json)
    io = _native.FileIO(location, props) if props else None
    out = []
    for _ in range(plans):
        if io is not None:
            io.reset_stats()
        t0 = time.perf_counter()
        table = Table.from_metadata(location, io=io)
        n = table.scan().plan_arrow().num_rows
        ms = (time.perf_counter() - t0) * 1000
        out.append({"ms": ms, "tasks": n, "stats": io.stats() if io is not None else None})
    print(json.dumps(out))


def child_pyiceberg(location: str, props_json: str) -> None:
    from pyiceberg.table import StaticTable

    props = json.loads(props_json)
    t0 = time.perf_counter()
    table = StaticTable.from_metadata(location if props else f"file://{location}", properties=props)
    n = len(list(table.scan().plan_files()))
    print(json.dumps([{"ms": (time.perf_counter() - t0) * 1000, "tasks": n, "stats": None}]))


def run_child(*args: str) -> list[dict]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", *args], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- appends through REST


def append_icefloe(env: dict[str, str], n: int) -> list[float]:
    import pyarrow as pa

    import icefloe

    cat = icefloe.load_catalog(
        "bench_rest_s3",
        type="rest",
        uri=env["ICEFLOE_TEST_REST_S3_URI"],
        warehouse=env["ICEFLOE_TEST_REST_S3_WAREHOUSE"],
        **{"s3.endpoint": env["ICEFLOE_TEST_S3_ENDPOINT"], "s3.path-style-access": "true"},
    )
    ns = f"bench_{uuid.uuid4().hex[:8]}"
    cat.create_namespace(ns)
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
    table = cat.create_table(f"{ns}.t", schema)
    times = []
    for i in range(n):
        rows = pa.table({"id": [i], "name": [f"r{i}"]}, schema=schema)
        t0 = time.perf_counter()
        table = table.append(rows)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def append_pyiceberg(env: dict[str, str], n: int) -> list[float]:
    import pyarrow as pa
    from pyiceberg.catalog import load_catalog

    cat = load_catalog(
        "bench_rest_s3_pyi",
        type="rest",
        uri=env["ICEFLOE_TEST_REST_S3_URI"],
        warehouse=env["ICEFLOE_TEST_REST_S3_WAREHOUSE"],
        **{"s3.endpoint": env["ICEFLOE_TEST_S3_ENDPOINT"], "s3.path-style-access": "true"},
    )
    ns = f"bench_pyi_{uuid.uuid4().hex[:8]}"
    cat.create_namespace(ns)
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
    table = cat.create_table(f"{ns}.t", schema)
    times = []
    for i in range(n):
        rows = pa.table({"id": [i], "name": [f"r{i}"]}, schema=schema)
        t0 = time.perf_counter()
        table.append(rows)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        if sys.argv[2] == "icefloe":
            child_icefloe(sys.argv[3], sys.argv[4], int(sys.argv[5]))
        else:
            child_pyiceberg(sys.argv[3], sys.argv[4])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--fetch", default="2,8,16,32", help="fetch concurrencies to measure on S3")
    ap.add_argument("--appends", type=int, default=20)
    ap.add_argument("--no-pyiceberg", action="store_true")
    ap.add_argument("--no-plan", action="store_true")
    args = ap.parse_args()
    env = servers_env()
    rows: list[tuple[str, list[dict]]] = []
    if not args.no_plan:
        wh, local = ensure_table(args.files)
        remote = upload(env, wh, local)
        cached = json.dumps(s3_props(env, **{"io.manifest.cache-enabled": "true"}))
        sized = json.dumps(
            s3_props(
                env,
                **{"io.manifest.cache-enabled": "true", "io.manifest.cache.max-total-bytes": str(300 << 20)},
            )
        )
        for r in range(args.repeats):
            rows.append(("icefloe, local disk", run_child("icefloe", local, "{}", "1")))
            for f in args.fetch.split(","):
                fetch = json.dumps(
                    s3_props(env, **{"io.fetch-concurrency": f, "io.manifest.cache-enabled": "false"})
                )
                rows.append(
                    (f"icefloe, S3, io.fetch-concurrency={f}", run_child("icefloe", remote, fetch, "1"))
                )
            rows.append(
                ("icefloe, S3, cache (Java's bounds), two plans", run_child("icefloe", remote, cached, "2"))
            )
            rows.append(
                ("icefloe, S3, cache of 300 MiB, two plans", run_child("icefloe", remote, sized, "2"))
            )
            if not args.no_pyiceberg and r == 0:  # minutes a plan: once
                rows.append(("PyIceberg, local disk", run_child("pyiceberg", local, "{}")))
                rows.append(("PyIceberg, S3", run_child("pyiceberg", remote, json.dumps(s3_props(env)))))
        print(f"\nPlanning the {args.files:,}-file table, no filter ({os.cpu_count()} cores):\n")
        print("| run | plan | tasks | time | requests | bytes read | cache hits |")
        print("|---|---|---|---|---|---|---|")
        for name, plans in rows:
            for i, p in enumerate(plans):
                s = p["stats"] or {}
                print(
                    f"| {name} | {i + 1} | {p['tasks']:,} | {p['ms']:,.0f} ms | {s.get('requests', '—')} | "
                    f"{s.get('bytes_read', '—'):,} | {s.get('cache_hits', '—')} |"
                    if s
                    else f"| {name} | {i + 1} | {p['tasks']:,} | {p['ms']:,.0f} ms | — | — | — |"
                )
        by: dict[str, list[float]] = {}
        for name, plans in rows:
            by.setdefault(name, []).append(plans[0]["ms"])
        print("\nmedian of the first plan in each process:\n")
        for name, ms in by.items():
            print(f"- {name}: {statistics.median(ms):,.0f} ms (runs: {', '.join(f'{m:,.0f}' for m in ms)})")
    if args.appends:
        ice = append_icefloe(env, args.appends)
        print(
            f"\nicefloe one-file append via REST on S3: median {statistics.median(ice):.1f} ms, "
            f"min {min(ice):.1f}, max {max(ice):.1f} ({len(ice)} appends)"
        )
        if not args.no_pyiceberg:
            pyi = append_pyiceberg(env, args.appends)
            print(
                f"PyIceberg one-file append via REST on S3: median {statistics.median(pyi):.1f} ms, "
                f"min {min(pyi):.1f}, max {max(pyi):.1f} ({len(pyi)} appends)"
            )


if __name__ == "__main__":
    main()
