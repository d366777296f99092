"""Format v4 tables (the proposal of docs/v4.md) through the Python API, end to end: twin v3
and v4 tables in one SQLite catalog take the same seeded sequences of commits (appends,
row-level deletes with DVs, whole-file deletes, overwrites, file rewrites, a rollback), and
after every commit ``to_arrow`` reads the same rows from both and the plans name the same
data files. icefloe's v3, checked against Java elsewhere, is the oracle. Also: a v4 commit
adds one root manifest and the metadata file, and nothing else to ``metadata/``."""

from __future__ import annotations

import json
import random
import shutil
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import icefloe
from icefloe.executor.read import output_schema, read_tasks
from icefloe.executor.write import write_data_files

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("cat", pa.string()), ("v", pa.float64())])


def _catalog(tmp_path):
    cat = icefloe.load_catalog("c", uri=f"sqlite:///{tmp_path / 'cat.db'}", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    return cat


def _twins(cat, name: str, partitioned: bool, properties: dict[str, str] | None = None):
    spec = [("cat", "identity")] if partitioned else None
    return [
        cat.create_table(
            f"db.{name}_v{version}",
            SCHEMA,
            partition_spec=spec,
            properties=properties or {},
            format_version=version,
        )
        for version in (3, 4)
    ]


def _rows(rng: random.Random, first_id: int, n: int) -> pa.Table:
    ids = list(range(first_id, first_id + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "cat": pa.array([rng.choice("abcd") for _ in ids]),
            "v": pa.array([rng.random() for _ in ids]),
        },
        schema=SCHEMA,
    )


def _read(table) -> list[tuple]:
    t = table.refresh().scan().to_arrow().sort_by("id")
    return list(zip(*(t.column(c).to_pylist() for c in ("id", "cat", "v")), strict=True))


def _planned(table) -> list[tuple]:
    """The planned data files as the twins can compare them (their names hold random ids):
    partition, record count and the number of deletes, sorted."""
    plan = table.refresh().scan().plan_arrow()
    return sorted(
        (str(part), count, len(deletes))
        for part, count, deletes in zip(
            plan.column("partition").to_pylist(),
            plan.column("record_count").to_pylist(),
            plan.column("deletes").to_pylist(),
            strict=True,
        )
    )


def _step(rng: random.Random, tables, next_id: int) -> tuple[str, int]:
    """Applies one random operation to both twins; returns its name and the next free id."""
    op = rng.choice(["append", "append", "delete", "delete_where", "overwrite", "rewrite"])
    if op == "append":
        data = _rows(rng, next_id, rng.randint(1, 40))
        for t in tables:
            t.append(data)
        return op, next_id + data.num_rows
    if op == "delete":
        lo = rng.randrange(max(next_id, 1))
        flt = f"id >= {lo} and id < {lo + rng.randint(1, 15)}"
        for t in tables:
            t.refresh().delete(flt)
        return f"delete {flt}", next_id
    if op == "delete_where":
        flt = f"cat = '{rng.choice('abcd')}'"
        for t in tables:
            # whole files only where every row matches (partitioned twins); else nothing
            try:
                t.refresh().delete_where(flt)
            except icefloe.errors.ValidationError:
                pass
        return f"delete_where {flt}", next_id
    if op == "overwrite":
        cat = rng.choice("abcd")
        data = _rows(rng, next_id, rng.randint(1, 10))
        data = data.set_column(1, "cat", pa.array([cat] * data.num_rows))
        for t in tables:
            try:
                t.refresh().overwrite(data, f"cat = '{cat}'")
            except icefloe.errors.ValidationError:
                pass
        return f"overwrite cat = {cat}", next_id + data.num_rows
    # rewrite: the files of one partition replaced by one file of their live rows
    for t in tables:
        t = t.refresh()
        plan = t.scan().plan_arrow()
        if plan.num_rows < 2 or any(len(d) for d in plan.column("deletes").to_pylist()):
            continue
        # the same two files in both twins (plan orders differ): those with the lowest ids
        first_id = {
            p: pc.min(_rows_of_files(t, [p]).column("id")).as_py()
            for p in plan.column("file_path").to_pylist()
        }
        paths = sorted(first_id, key=first_id.__getitem__)[:2]
        rows = _rows_of_files(t, paths).select(["id", "cat", "v"]).cast(SCHEMA)
        t.overwrite_files(paths, write_data_files(t.metadata, rows))
    return "rewrite", next_id


def _rows_of_files(table, paths: list[str]) -> pa.Table:
    """The rows of the given data files (which have no deletes), read from their tasks."""
    plan = table.scan().plan_arrow()
    tasks = plan.filter(pc.is_in(plan.column("file_path"), value_set=pa.array(paths)))
    return pa.Table.from_batches(list(read_tasks(tasks)), schema=output_schema(plan.schema))


@pytest.mark.parametrize("partitioned", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_v4_twin_reads_equal_v3(tmp_path, seed, partitioned):
    rng = random.Random(seed * 2 + partitioned)
    cat = _catalog(tmp_path)
    # a small root threshold, so that sequences flush roots into leaves and remove from them
    v3, v4 = _twins(cat, "t", partitioned, {"commit.v4.root.max-file-entries": "4"})
    next_id = 0
    history: list[str] = []
    for _ in range(14):
        op, next_id = _step(rng, (v3, v4), next_id)
        history.append(op)
        assert _read(v4) == _read(v3), history
        assert _planned(v4) == _planned(v3), history
    assert v4.refresh().metadata.format_version == 4
    # a rollback to an earlier snapshot reads that snapshot's rows on both
    for t in (v3, v4):
        t.refresh()
    target3, target4 = v3.snapshots()[len(v3.snapshots()) // 2], v4.snapshots()[len(v4.snapshots()) // 2]
    v3.manage_snapshots().rollback_to(target3.snapshot_id).commit()
    v4.manage_snapshots().rollback_to(target4.snapshot_id).commit()
    assert _read(v4) == _read(v3)


def test_v4_append_writes_one_root_manifest(tmp_path):
    cat = _catalog(tmp_path)
    v3, v4 = _twins(cat, "one", partitioned=True)
    rng = random.Random(7)
    first, second = _rows(rng, 0, 20), _rows(rng, 100, 5)
    added = {}
    for t in (v3, v4):
        t.append(first)
        meta = tmp_path / "wh" / "db" / t.name()[-1] / "metadata"
        before = set(meta.iterdir())
        t.append(second)
        added[t.metadata.format_version] = sorted(p.name for p in set(meta.iterdir()) - before)
    # v3: a manifest, a manifest list and the metadata file; v4: the root and the metadata file
    assert len(added[3]) == 3, added[3]
    assert len(added[4]) == 2, added[4]
    assert sum(n.endswith(".metadata.json") for n in added[4]) == 1
    assert sum(n.startswith("root-") and n.endswith(".avro") for n in added[4]) == 1
    assert _read(v4) == _read(v3)


def test_v4_snapshot_operations_match_v3(tmp_path):
    """Branches, cherry-pick, rewrite manifests, incremental append scans and expiry with file
    cleanup through the Python API: the v4 twin reads what the v3 twin reads after each, and
    an expiry deletes no file the table still reads."""
    cat = _catalog(tmp_path)
    v3, v4 = _twins(cat, "ops", partitioned=True, properties={"commit.v4.root.max-file-entries": "3"})
    rng = random.Random(11)
    batches = [_rows(rng, 100 * i, 8) for i in range(6)]
    incremental = {}
    for t in (v3, v4):
        for b in batches[:3]:
            t.append(b)
        t.refresh().delete("id >= 3 and id < 6")
        first = t.refresh().snapshots()[0].snapshot_id
        # a staged append on a branch, cherry-picked onto main after main moved on
        t.manage_snapshots().create_branch(None, "audit").commit()
        t.refresh().append(batches[3], branch="audit")
        staged = t.refresh().metadata.snapshot_by_ref("audit").snapshot_id
        t.refresh().append(batches[4])
        t.refresh().manage_snapshots().cherry_pick(staged).commit()
        t.refresh().rewrite_manifests()
        t.refresh().append(batches[5])
        incremental[t.metadata.format_version] = _read_scan(t.refresh().incremental_append_scan(first))
    assert _read(v4) == _read(v3)
    # the appends after the first: two on main, the cherry-picked one, the last one
    assert incremental[4] == incremental[3]
    assert len(incremental[4]) == 5 * 8
    assert _read_scan(v4.refresh().scan(ref="audit")) == _read_scan(v3.refresh().scan(ref="audit"))

    deleted = {}
    for t in (v3, v4):
        before = _read(t)
        now_ms = int(time.time() * 1000) + 1000
        result = t.refresh().expire_snapshots().retain_last(1).older_than(now_ms).commit()
        deleted[t.metadata.format_version] = result
        assert _read(t) == before
    # the same data files go (the deleted rows' files are DV'd, none was wholly removed), and
    # the v4 twin deletes roots instead of manifest lists
    r3, r4 = deleted[3], deleted[4]
    assert len(r3.data_files) == len(r4.data_files)
    assert len(r3.removed_snapshot_ids) == len(r4.removed_snapshot_ids) > 0
    assert r4.manifest_lists and all("/root-" in p for p in r4.manifest_lists)
    assert _read_scan(v4.refresh().scan(ref="audit")) == _read_scan(v3.refresh().scan(ref="audit"))


def _read_scan(scan) -> list[tuple]:
    t = scan.to_arrow().sort_by("id")
    return list(zip(*(t.column(c).to_pylist() for c in ("id", "cat", "v")), strict=True))


def test_v4_table_reads_where_it_is_moved(tmp_path):
    """A v4 table stores the paths under its location relative to it (upstream's spec, "Paths
    in Metadata"): its directory copied elsewhere, the original deleted, and the copy's
    metadata given the new location, the copy reads the same rows from its own data files and
    DVs, through roots, leaves and the metadata file, and takes new commits."""
    cat = _catalog(tmp_path)
    t = cat.create_table(
        "db.orig",
        SCHEMA,
        partition_spec=[("cat", "identity")],
        properties={"commit.v4.root.max-file-entries": "2"},
        format_version=4,
    )
    rng = random.Random(5)
    for i in range(4):
        t.refresh().append(_rows(rng, 20 * i, 10))
    t.refresh().delete("id >= 3 and id < 25")
    before = _read(t)
    deletes = t.scan().plan_arrow().column("deletes").to_pylist()
    assert any(deletes), "the delete should have left DVs to move"

    src = Path(t.metadata.location)
    dst = tmp_path / "moved" / "t"
    metadata_file = dst / Path(t.metadata_location).relative_to(src)
    shutil.copytree(src, dst)
    shutil.rmtree(src)
    doc = json.loads(metadata_file.read_text())
    # the file names its snapshots' roots and earlier metadata files relative to the location
    assert all(not s["manifest-list"].startswith("/") for s in doc["snapshots"]), doc["snapshots"]
    assert doc["metadata-log"] and all(
        e["metadata-file"].startswith("metadata/") for e in doc["metadata-log"]
    )
    doc["location"] = str(dst)
    metadata_file.write_text(json.dumps(doc))

    moved = cat.register_table("db.moved", str(metadata_file))
    assert _read(moved) == before
    plan = moved.scan().plan_arrow()
    paths = plan.column("file_path").to_pylist()
    dv_paths = [d["file_path"] for ds in plan.column("deletes").to_pylist() for d in ds]
    assert paths and dv_paths
    assert all(p.startswith(f"{dst}/data/") for p in paths + dv_paths), paths + dv_paths

    # and it takes commits where it is now
    moved.refresh().append(_rows(rng, 200, 5))
    moved.refresh().delete("id = 30")
    after = _read(moved)
    assert [r for r in after if r[0] < 200] == [r for r in before if r[0] != 30]
    assert [r[0] for r in after if r[0] >= 200] == list(range(200, 205))
