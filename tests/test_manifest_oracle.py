"""icefloe's manifests, manifest lists and deletion vectors against Java Iceberg (and PyIceberg).

Tables (see ``oracle.create_manifest_tables``): v1/v2/v3 tables, a v2 table upgraded to v3 and
v1 tables upgraded to v2 and to v3 (v1 manifests in newer tables), built through Java's API (fast and merge appends, overwrite, delete, row deltas with position,
equality and DV deletes, partition evolution, full metrics, key metadata, split offsets), plus
Spark SQL merge-on-read DELETE/UPDATE on v2 (position delete files) and v3 (DVs in Puffin files).

(a) Java writes, icefloe reads: for every snapshot, ``icefloe.read_manifest_list`` equals Java's
    ``snapshot.allManifests(io)`` and ``icefloe.read_manifest(path, manifest_file=row)`` equals
    Java's manifest entries (status, inherited snapshot id / sequence numbers / first_row_id and
    every data_file field), in file order. ``icefloe.manifest_metadata`` equals the spec and schema
    Java takes from the same file.
(b) icefloe writes, Java reads: every manifest is read raw (no inheritance) and written back with
    ``icefloe.write_manifest`` under each codec, then listed with ``icefloe.write_manifest_list``;
    Java's list and manifest readers see exactly the original Java view (only the manifest path
    and length differ). For v3, first_row_id assignment by icefloe's list writer equals Java's.
(c) DVs: icefloe reads every DV Java/Spark wrote (positions equal Java's); Java reads DVs icefloe
    wrote (positions, Puffin footer); icefloe reads DVs Java's BaseDVFileWriter wrote; keep_mask
    agrees with positions.
(d) PyIceberg writes (SQL catalog on SQLite), icefloe reads, compared with PyIceberg's own reader.

Normalisation (spec-allowed only): an absent optional map/list and an empty one are treated alike
(Java returns null for metrics it did not write); partition values are compared as canonical
values of their type (a day is a count of days whether Java calls the type "date" or icefloe
int32).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import random
import uuid
from pathlib import Path

import pytest

import oracle as o

CODECS = ("null", "deflate", "snappy", "zstd")
MANIFEST_FILE_FIELDS = (
    "manifest_path",
    "manifest_length",
    "partition_spec_id",
    "content",
    "sequence_number",
    "min_sequence_number",
    "added_snapshot_id",
    "added_files_count",
    "existing_files_count",
    "deleted_files_count",
    "added_rows_count",
    "existing_rows_count",
    "deleted_rows_count",
    "partitions",
    "key_metadata",
    "first_row_id",
)
ENTRY_FIELDS = (
    "status",
    "snapshot_id",
    "sequence_number",
    "file_sequence_number",
    "content",
    "file_path",
    "file_format",
    "partition",
    "record_count",
    "file_size_in_bytes",
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
    "key_metadata",
    "split_offsets",
    "equality_ids",
    "sort_order_id",
    "first_row_id",
    "referenced_data_file",
    "content_offset",
    "content_size_in_bytes",
)
_MAPS = (
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
)
_LISTS = ("split_offsets", "equality_ids")


def _icefloe():
    import icefloe

    return icefloe


def local(path: str) -> str:
    """Local file system path of a ``file:`` URI (Hadoop catalogs write ``file:/...``)."""
    if path.startswith("file://"):
        return path[len("file://") :]
    if path.startswith("file:"):
        return path[len("file:") :]
    return path


# ---------------------------------------------------------------------------------------------
# canonical forms
# ---------------------------------------------------------------------------------------------


def _hex(b):
    return None if b is None else bytes(b).hex().upper()


def decode_partition_value(type_str: str, text: str):
    """Canonical value of a partition value in single-value JSON (see ``oracle.decode``)."""
    if type_str in ("boolean", "float", "double"):
        v = json.loads(text)
        return None if v is None else (bool(v) if type_str == "boolean" else float(v))
    return o.decode(type_str, text)


def canonical_python_value(v):
    """Canonical value of a partition value as Python/pyarrow hands it out."""
    if isinstance(v, bool) or v is None or isinstance(v, (int, str, float)):
        return v
    if isinstance(v, decimal.Decimal):
        return (v, v.as_tuple().exponent)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, dt.datetime):  # only reached if a temporal child was not cast (see below)
        raise AssertionError(f"uncast timestamp partition value {v!r}")
    if isinstance(v, dt.date):
        return (v - o.EPOCH_DATE).days
    raise AssertionError(f"unexpected partition value {v!r}")


def _empty_to_none(v):
    return None if v is None or len(v) == 0 else v


def canon_java_manifest_file(mf: dict) -> dict:
    out = {k: mf[k] for k in MANIFEST_FILE_FIELDS}
    out["partitions"] = _empty_to_none(out["partitions"])
    return out


def canon_icefloe_manifest_file(row: dict) -> dict:
    missing = [k for k in MANIFEST_FILE_FIELDS if k not in row]
    assert not missing, f"icefloe manifest_file row lacks {missing}"
    out = {k: row[k] for k in MANIFEST_FILE_FIELDS}
    if out["partitions"] is not None:
        out["partitions"] = [
            {
                "contains_null": p["contains_null"],
                "contains_nan": p["contains_nan"],
                "lower_bound": _hex(p["lower_bound"]),
                "upper_bound": _hex(p["upper_bound"]),
            }
            for p in out["partitions"]
        ]
    out["partitions"] = _empty_to_none(out["partitions"])
    out["key_metadata"] = _hex(out["key_metadata"])
    return out


def canon_java_entry(e: dict) -> dict:
    out = {k: e[k] for k in ENTRY_FIELDS}
    out["partition"] = [(p["name"], decode_partition_value(p["type"], p["value"])) for p in e["partition"]]
    for k in _MAPS:
        m = e[k]
        out[k] = None if not m else {int(key): v for key, v in m.items()}
    for k in _LISTS:
        out[k] = _empty_to_none(e[k])
    return out


def _arrow_partition_canonical(table):
    """``table`` with the partition struct's temporal children cast to their integer counts
    (days / microseconds / nanoseconds), so that values compare with Java's canonical ones."""
    import pyarrow as pa
    import pyarrow.compute as pc  # noqa: F401 - cast lives on arrays

    idx = table.schema.get_field_index("partition")
    col = table.column(idx).combine_chunks()
    if not pa.types.is_struct(col.type):
        return table
    children, fields = [], []
    for i in range(col.type.num_fields):
        f = col.type.field(i)
        child = col.field(i)
        t = f.type
        if isinstance(t, pa.ExtensionType):
            child = child.storage
            t = child.type
        if pa.types.is_date32(t):
            child = child.cast(pa.int32())
        elif pa.types.is_timestamp(t) or pa.types.is_time64(t):
            child = child.cast(pa.int64())
        elif pa.types.is_date64(t) or pa.types.is_time32(t):
            raise AssertionError(f"unexpected partition type {t}")
        children.append(child)
        fields.append(pa.field(f.name, child.type))
    struct = pa.StructArray.from_arrays(children, fields=fields, mask=col.is_null())
    return table.set_column(idx, "partition", struct)


def canon_icefloe_entries(table) -> list[dict]:
    missing = [k for k in ENTRY_FIELDS if k not in table.column_names]
    assert not missing, f"icefloe manifest table lacks columns {missing}"
    rows = _arrow_partition_canonical(table).to_pylist()
    out = []
    for r in rows:
        e = {k: r[k] for k in ENTRY_FIELDS}
        e["partition"] = [(name, canonical_python_value(v)) for name, v in (r["partition"] or {}).items()]
        for k in _MAPS:
            m = r[k]
            if m is not None and not isinstance(m, dict):
                m = dict(m)
            if k in ("lower_bounds", "upper_bounds") and m:
                m = {key: _hex(v) for key, v in m.items()}
            e[k] = m or None
        for k in _LISTS:
            e[k] = _empty_to_none(r[k])
        e["key_metadata"] = _hex(r["key_metadata"])
        out.append(e)
    return out


def diff(a, b, path="$"):
    """Differences between two canonical values (icefloe first, Java second)."""
    out = []
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(dict.fromkeys([*a, *b])):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: icefloe={a.get(k, '<absent>')!r} java={b.get(k, '<absent>')!r}")
            else:
                out.extend(diff(a[k], b[k], f"{path}.{k}"))
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and a != b:
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out.extend(diff(x, y, f"{path}[{i}]"))
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: icefloe={a!r:.200} java={b!r:.200}")
    return out


def assert_same(icefloe_value, java_value, what):
    d = diff(icefloe_value, java_value)
    assert not d, f"{what}: {len(d)} difference(s):\n  " + "\n  ".join(d[:15])


# ---------------------------------------------------------------------------------------------
# fixtures
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def manifest_oracle(jvm):
    return o.ManifestOracle(jvm)


@pytest.fixture(scope="module")
def java_views(manifest_tables, manifest_oracle):
    """name -> (metadata path, Java's view: every snapshot's manifests and entries)."""
    return {name: (path, manifest_oracle.table_manifests(path)) for name, path in manifest_tables.items()}


def _java_dvs(java_views) -> list[dict]:
    """Every distinct DV entry (PUFFIN delete file) in the Java-written tables."""
    seen, out = set(), []
    for _, (_, view) in sorted(java_views.items()):
        for snap in view["snapshots"]:
            for entries in snap["entries"]:
                for e in entries:
                    key = (e["file_path"], e["content_offset"])
                    if e["file_format"] == "PUFFIN" and key not in seen:
                        seen.add(key)
                        out.append(e)
    return out


def _dv_request(e):
    return (
        e["file_path"],
        e["content_offset"],
        e["content_size_in_bytes"],
        e["referenced_data_file"],
        e["record_count"],
    )


# ---------------------------------------------------------------------------------------------
# Java side only (runs without the icefloe manifest API): the oracle is self-consistent
# ---------------------------------------------------------------------------------------------


@pytest.mark.java
def test_java_side_tables_cover_the_cases(java_views):
    facts = {"versions": set(), "status": set(), "content": set(), "formats": set(), "specs": set()}
    for name, (_, view) in java_views.items():
        facts["versions"].add(view["format_version"])
        for snap in view["snapshots"]:
            for mf, entries in zip(snap["manifests"], snap["entries"], strict=True):
                facts["specs"].add((name, mf["partition_spec_id"]))
                for e in entries:
                    facts["status"].add(e["status"])
                    facts["content"].add(e["content"])
                    facts["formats"].add(e["file_format"])
    assert facts["versions"] == {1, 2, 3}
    assert facts["status"] == {0, 1, 2}
    assert facts["content"] == {0, 1, 2}
    assert {"PARQUET", "PUFFIN", "AVRO", "ORC"} <= facts["formats"]
    assert {("api_v1", 1), ("api_v2", 1), ("api_v3", 1)} <= facts["specs"]
    upgraded = java_views["api_upgraded"][1]["snapshots"]
    assert upgraded[0]["first_row_id"] is None and upgraded[-1]["first_row_id"] is not None
    # tables upgraded from v1: after the upgrade, snapshots list manifests written in v1
    # (sequence number 0) next to newer ones
    for name, version in (("api_v1_to_v2", 2), ("api_v1_to_v3", 3)):
        view = java_views[name][1]
        assert view["format_version"] == version, name
        mixed = [
            s
            for s in view["snapshots"]
            if s["sequence_number"] > 0 and any(m["sequence_number"] == 0 for m in s["manifests"])
        ]
        assert mixed, f"{name}: no snapshot after the upgrade lists a v1 manifest"


@pytest.mark.java
def test_java_side_readers_agree(java_views, manifest_oracle):
    """Java's list reader on the lists Java wrote gives the same view as the snapshot API (the
    path used in (b)); ``manifestListJson`` agrees with the full view."""
    for name, (path, view) in java_views.items():
        lists = [local(s["manifest_list"]) for s in view["snapshots"]]
        reread = manifest_oracle.read_manifest_lists(lists, path)
        for snap, got in zip(view["snapshots"], reread, strict=True):
            assert got["manifests"] == snap["manifests"], name
            assert got["entries"] == snap["entries"], name
        last = view["snapshots"][-1]
        assert manifest_oracle.manifest_list(path, last["snapshot_id"]) == last["manifests"], name
        # canonical forms of Java's view are computable (decoders cover every partition type)
        for snap in view["snapshots"]:
            for entries in snap["entries"]:
                for e in entries:
                    canon_java_entry(e)


@pytest.mark.java
def test_java_side_dvs_round_trip(java_views, manifest_oracle, tmp_path):
    dvs = _java_dvs(java_views)
    assert len(dvs) >= 6
    for e, positions in zip(
        dvs, manifest_oracle.read_dv_positions([_dv_request(e) for e in dvs]), strict=True
    ):
        assert not isinstance(positions, str), positions
        assert len(positions) == e["record_count"]
        assert positions == sorted(set(positions))
    sets = _dv_sets()
    written = manifest_oracle.write_dvs(tmp_path / "java.puffin", sets)
    assert sorted(w["referenced_data_file"] for w in written) == sorted(sets)
    reqs = [
        (str(tmp_path / "java.puffin"), w["offset"], w["length"], w["referenced_data_file"], w["cardinality"])
        for w in written
    ]
    for w, positions in zip(written, manifest_oracle.read_dv_positions(reqs), strict=True):
        assert positions == sorted(set(sets[w["referenced_data_file"]]))
    blobs = manifest_oracle.puffin_blobs(tmp_path / "java.puffin")
    assert [(b["offset"], b["length"]) for b in blobs] == [(w["offset"], w["length"]) for w in written]
    assert {b["type"] for b in blobs} == {"deletion-vector-v1"}


def _dv_sets() -> dict[str, list[int]]:
    """Position sets that exercise array, bitmap and run containers and 64-bit keys."""
    rng = random.Random(20240229)
    big = 1 << 32
    return {
        "s3://bucket/data/single.parquet": [0],
        "file:/tmp/data/sparse.parquet": sorted(rng.sample(range(1_000_000), 300)),
        "file:/tmp/data/dense.parquet": [p for p in range(0, 70_000) if rng.random() < 0.6],
        "file:/tmp/data/runs.parquet": list(range(10, 5000)) + list(range(65_530, 65_560)),
        "file:/tmp/data/wide keys.parquet": [5, big - 1, big, big + 7, 3 * big + 65_536, (1 << 40) + 1],
        "file:/tmp/data/ünïcode.parquet": [1, 2, 3, 65_535, 65_536, 131_071],
    }


# ---------------------------------------------------------------------------------------------
# (a) Java writes, icefloe reads
# ---------------------------------------------------------------------------------------------


@pytest.mark.java
def test_manifest_lists_match_java(java_views):
    icefloe = _icefloe()
    for name, (_, view) in java_views.items():
        for snap in view["snapshots"]:
            got = icefloe.read_manifest_list(local(snap["manifest_list"])).to_pylist()
            assert_same(
                [canon_icefloe_manifest_file(r) for r in got],
                [canon_java_manifest_file(m) for m in snap["manifests"]],
                f"{name} snapshot {snap['snapshot_id']} manifest list",
            )


@pytest.mark.java
def test_manifest_entries_match_java(java_views):
    icefloe = _icefloe()
    checked = 0
    for name, (_, view) in java_views.items():
        for snap in view["snapshots"]:
            rows = icefloe.read_manifest_list(local(snap["manifest_list"])).to_pylist()
            for row, java_entries in zip(rows, snap["entries"], strict=True):
                got = icefloe.read_manifest(local(row["manifest_path"]), manifest_file=row)
                assert_same(
                    canon_icefloe_entries(got),
                    [canon_java_entry(e) for e in java_entries],
                    f"{name} snapshot {snap['snapshot_id']} manifest {row['manifest_path']}",
                )
                checked += 1
    assert checked >= 50


@pytest.mark.java
def test_manifest_metadata_matches_java(java_views, manifest_oracle):
    icefloe = _icefloe()
    manifests = {}
    for name, (_, view) in java_views.items():
        for snap in view["snapshots"]:
            for mf in snap["manifests"]:
                manifests[mf["manifest_path"]] = (name, view["format_version"], mf)
    paths = list(manifests)
    java_desc = manifest_oracle.manifest_self_description([local(p) for p in paths])
    for path, desc in zip(paths, java_desc, strict=True):
        name, version, mf = manifests[path]
        meta = icefloe.manifest_metadata(local(path))
        what = f"{name} {path}"
        assert meta["partition-spec-id"] == str(mf["partition_spec_id"]), what
        assert json.loads(meta["partition-spec"]) == json.loads(desc["spec"])["fields"], what
        assert json.loads(meta["schema"]) == json.loads(desc["schema"]), what
        # key-value metadata exactly as Java reads it from the Avro header (a v2 manifest carried
        # into a v3 snapshot of an upgraded table keeps "format-version" 2)
        raw = desc["metadata"]
        for key in (
            "schema",
            "schema-id",
            "partition-spec",
            "partition-spec-id",
            "format-version",
            "content",
        ):
            assert meta.get(key) == raw.get(key), f"{what}: {key}"
        assert int(meta["format-version"]) <= version, what
        if int(meta["format-version"]) >= 2:  # (a v1 manifest in an upgraded table has no content key)
            assert meta["content"] == ("deletes" if mf["content"] == 1 else "data"), what
        # (The spec lists "schema-id" as required from v2 on, but Java 1.11's manifest writer does
        # not write it; readers must not depend on it.)


# ---------------------------------------------------------------------------------------------
# (b) icefloe writes, Java reads
# ---------------------------------------------------------------------------------------------


def _schema_for(icefloe, meta):
    """The schema a manifest was written with: its own "schema" key-value entry."""
    return icefloe.Schema.from_json(meta["schema"])


def _rewrite_snapshot(
    icefloe, md, version, snap, out_dir: Path, codec: str, *, commit_like: bool, cache: dict
):
    """Writes every manifest of a snapshot (raw entries, no inheritance) and a manifest list.
    ``cache`` maps an original manifest path to its rewrite (manifests are shared by snapshots).

    ``commit_like``: data manifests whose first_row_id this snapshot's commit assigned get none,
    so that icefloe's list writer assigns them (as the commit did). Returns (list path, manifest rows, next row id)."""
    rows = []
    originals = icefloe.read_manifest_list(local(snap["manifest_list"])).to_pylist()
    for i, mf in enumerate(originals):
        src = local(mf["manifest_path"])
        if src in cache:
            rows.append(_list_row(cache[src], mf, snap, commit_like))
            continue
        raw = icefloe.read_manifest(src)
        meta = icefloe.manifest_metadata(src)
        new_path = out_dir / f"{snap['snapshot_id']}-m{i}-{codec}.avro"
        written = icefloe.write_manifest(
            str(new_path),
            raw,
            schema=_schema_for(icefloe, meta),
            spec=md.spec_by_id(mf["partition_spec_id"]),
            format_version=int(meta["format-version"]),  # as originally written (upgraded tables mix)
            content=mf["content"],
            snapshot_id=mf["added_snapshot_id"],
            compression=codec,
        )
        what = f"write_manifest {new_path.name}"
        assert written["manifest_path"] == str(new_path), what
        assert written["manifest_length"] == new_path.stat().st_size, what
        # The list assigns the sequence number; the minimum is known already when live entries
        # carry explicit data sequence numbers (Java's writer reports the same).
        explicit = [
            e["sequence_number"]
            for e in raw.to_pylist()
            if e["status"] != 2 and e["sequence_number"] is not None
        ]
        assert written["sequence_number"] is None, what
        assert written["min_sequence_number"] == (min(explicit) if explicit else None), what
        mine, theirs = canon_icefloe_manifest_file(written), canon_icefloe_manifest_file(mf)
        for k in (
            "manifest_path",
            "manifest_length",
            "sequence_number",
            "min_sequence_number",
            "first_row_id",
        ):
            mine.pop(k), theirs.pop(k)
        assert_same(mine, theirs, what)
        cache[src] = written
        rows.append(_list_row(written, mf, snap, commit_like))
    # the list's version: v3 lists carry first-row-id; snapshots from before an upgrade have none
    list_version = version if version < 3 or snap["first_row_id"] is not None else 2
    list_path = out_dir / f"snap-{snap['snapshot_id']}-{codec}{'-commit' if commit_like else ''}.avro"
    next_row_id = icefloe.write_manifest_list(
        str(list_path),
        rows,
        format_version=list_version,
        snapshot_id=snap["snapshot_id"],
        parent_snapshot_id=snap["parent_snapshot_id"],
        sequence_number=snap["sequence_number"],
        first_row_id=snap["first_row_id"],
        compression=codec,
    )
    return list_path, rows, next_row_id


def _list_row(written: dict, mf: dict, snap: dict, commit_like: bool) -> dict:
    """The manifest list row for a rewritten manifest: icefloe's row with the original's
    sequence numbers and first_row_id filled in (as a commit's list writer would)."""
    row = dict(written)
    row["sequence_number"] = mf["sequence_number"]
    row["min_sequence_number"] = mf["min_sequence_number"]
    # ids at or above the snapshot's first-row-id were assigned by this very commit (row ids
    # only grow), including ones given to manifests carried over from before a v3 upgrade
    fresh = commit_like and mf["first_row_id"] is not None and mf["first_row_id"] >= snap["first_row_id"]
    row["first_row_id"] = None if fresh else mf["first_row_id"]
    return row


def _without_location(manifests: list[dict]) -> list[dict]:
    return [{k: v for k, v in m.items() if k not in ("manifest_path", "manifest_length")} for m in manifests]


@pytest.mark.java
@pytest.mark.parametrize("codec", CODECS)
def test_icefloe_written_manifests_read_by_java(java_views, manifest_oracle, tmp_path, codec):
    icefloe = _icefloe()
    for name, (md_path, view) in java_views.items():
        md = icefloe.TableMetadata.from_path(str(md_path))
        version = view["format_version"]
        out_dir = tmp_path / name
        out_dir.mkdir()
        cache: dict = {}
        written = [
            _rewrite_snapshot(icefloe, md, version, s, out_dir, codec, commit_like=False, cache=cache)
            for s in view["snapshots"]
        ]
        java = manifest_oracle.read_manifest_lists([w[0] for w in written], md_path)
        for snap, (_list_path, rows, _), got in zip(view["snapshots"], written, java, strict=True):
            what = f"{name} snapshot {snap['snapshot_id']} ({codec})"
            assert [m["manifest_path"] for m in got["manifests"]] == [r["manifest_path"] for r in rows], what
            assert_same(
                _without_location(got["manifests"]), _without_location(snap["manifests"]), what + " list"
            )
            assert_same(got["entries"], snap["entries"], what + " entries")
        if codec == "deflate":
            # Java describes icefloe's manifests from their own key-value metadata (no table specs)
            # exactly as it describes the originals.
            old_paths = list(cache)
            new_paths = [cache[p]["manifest_path"] for p in old_paths]
            mine = manifest_oracle.manifest_self_description(new_paths)
            theirs = manifest_oracle.manifest_self_description(old_paths)
            for p, a, b in zip(new_paths, mine, theirs, strict=True):
                assert json.loads(a["spec"]) == json.loads(b["spec"]), p
                assert json.loads(a["schema"]) == json.loads(b["schema"]), p
                for key in ("partition-spec-id", "format-version", "content"):
                    assert a["metadata"].get(key) == b["metadata"].get(key), f"{p}: {key}"
                assert json.loads(a["metadata"]["partition-spec"]) == json.loads(
                    b["metadata"]["partition-spec"]
                ), p


@pytest.mark.java
def test_icefloe_assigns_first_row_ids_like_java(java_views, manifest_oracle, tmp_path):
    """v3: icefloe's list writer assigns first_row_id to the snapshot's new data manifests exactly
    as Java did, and returns first-row-id + added-rows as the next row id."""
    icefloe = _icefloe()
    for name, (md_path, view) in java_views.items():
        if view["format_version"] < 3:
            continue
        md = icefloe.TableMetadata.from_path(str(md_path))
        out_dir = tmp_path / name
        out_dir.mkdir()
        snaps = [s for s in view["snapshots"] if s["first_row_id"] is not None]
        cache: dict = {}
        written = [
            _rewrite_snapshot(icefloe, md, 3, s, out_dir, "zstd", commit_like=True, cache=cache)
            for s in snaps
        ]
        java = manifest_oracle.read_manifest_lists([w[0] for w in written], md_path)
        for snap, (_, _, next_row_id), got in zip(snaps, written, java, strict=True):
            what = f"{name} snapshot {snap['snapshot_id']}"
            assert [m["first_row_id"] for m in got["manifests"]] == [
                m["first_row_id"] for m in snap["manifests"]
            ], what
            assert_same(got["entries"], snap["entries"], what + " entries")
            assert next_row_id == snap["first_row_id"] + snap["added_rows"], what


# ---------------------------------------------------------------------------------------------
# (c) deletion vectors
# ---------------------------------------------------------------------------------------------


def _positions(dv) -> list[int]:
    return [int(p) for p in dv.positions().to_pylist()]


@pytest.mark.java
def test_icefloe_reads_java_dvs(java_views, manifest_oracle):
    icefloe = _icefloe()
    dvs = _java_dvs(java_views)
    java = manifest_oracle.read_dv_positions([_dv_request(e) for e in dvs])
    for e, positions in zip(dvs, java, strict=True):
        dv = icefloe.DeletionVector.read(
            local(e["file_path"]), e["content_offset"], e["content_size_in_bytes"]
        )
        what = f"{e['file_path']}@{e['content_offset']}"
        assert dv.cardinality == e["record_count"], what
        assert _positions(dv) == positions, what


@pytest.mark.java
def test_java_reads_icefloe_dvs(manifest_oracle, tmp_path):
    import pyarrow as pa

    icefloe = _icefloe()
    sets = _dv_sets()
    path = tmp_path / "icefloe-dvs.puffin"
    dvs = {ref: icefloe.DeletionVector.from_positions(pa.array(pos, pa.int64())) for ref, pos in sets.items()}
    written = icefloe.write_deletion_vectors(str(path), dvs)
    assert sorted(w["referenced_data_file"] for w in written) == sorted(sets)
    reqs = [
        (str(path), w["offset"], w["length"], w["referenced_data_file"], w["cardinality"]) for w in written
    ]
    java = manifest_oracle.read_dv_positions(reqs)
    for w, positions in zip(written, java, strict=True):
        assert positions == sorted(set(sets[w["referenced_data_file"]])), w
        assert w["cardinality"] == len(positions), w
    blobs = manifest_oracle.puffin_blobs(path)
    assert len(blobs) == len(written)
    by_ref = {w["referenced_data_file"]: w for w in written}
    for b in blobs:
        w = by_ref[b["properties"]["referenced-data-file"]]
        assert b["type"] == "deletion-vector-v1"
        assert (b["offset"], b["length"]) == (w["offset"], w["length"])
        assert b["properties"]["cardinality"] == str(w["cardinality"])
        assert b["compression_codec"] is None
        assert (b["snapshot_id"], b["sequence_number"]) == (-1, -1)


@pytest.mark.java
def test_icefloe_reads_dvs_java_wrote(manifest_oracle, tmp_path):
    icefloe = _icefloe()
    sets = _dv_sets()
    path = tmp_path / "java-dvs.puffin"
    written = manifest_oracle.write_dvs(path, sets)
    assert len(written) == len(sets)
    for w in written:
        dv = icefloe.DeletionVector.read(str(path), w["offset"], w["length"])
        assert dv.cardinality == w["cardinality"]
        assert _positions(dv) == sorted(set(sets[w["referenced_data_file"]]))
        # icefloe's own serialisation of the same set reads back in Java to the same positions
        again = tmp_path / f"again-{w['offset']}.puffin"
        [re] = icefloe.write_deletion_vectors(str(again), {w["referenced_data_file"]: dv})
        [positions] = manifest_oracle.read_dv_positions(
            [(str(again), re["offset"], re["length"], re["referenced_data_file"], re["cardinality"])]
        )
        assert positions == _positions(dv)


def test_keep_mask_agrees_with_positions():
    import pyarrow as pa

    icefloe = _icefloe()
    rng = random.Random(7)
    for ref, pos in _dv_sets().items():
        dv = icefloe.DeletionVector.from_positions(pa.array(pos, pa.int64()))
        assert _positions(dv) == sorted(set(pos)), ref
        deleted = set(pos)
        windows = [(0, 100), (max(max(pos) - 5, 0), 20), (min(pos), 1), (max(pos) + 1, 0)]
        windows += [(rng.randrange(0, max(pos) + 10), rng.randrange(0, 70_000)) for _ in range(20)]
        for start, length in windows:
            mask = dv.keep_mask(start, length).to_pylist()
            assert len(mask) == length, (ref, start, length)
            expected = [(start + i) not in deleted for i in range(length)]
            assert mask == expected, (ref, start, length)


# ---------------------------------------------------------------------------------------------
# (d) PyIceberg writes, icefloe reads
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pyiceberg_table(tmp_path_factory):
    pytest.importorskip("pyiceberg", reason="pyiceberg is not installed (see requirements-dev.txt)")
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import DayTransform, IdentityTransform
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestampType

    root = tmp_path_factory.mktemp("pyiceberg")
    catalog = SqlCatalog("icefloe", uri=f"sqlite:///{root}/catalog.db", warehouse=(root / "wh").as_uri())
    catalog.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "cat", StringType(), required=False),
        NestedField(3, "ts", TimestampType(), required=False),
        NestedField(4, "v", DoubleType(), required=False),
    )
    spec = PartitionSpec(
        PartitionField(source_id=3, field_id=1000, transform=DayTransform(), name="ts_day"),
        PartitionField(source_id=2, field_id=1001, transform=IdentityTransform(), name="cat"),
    )
    table = catalog.create_table(
        "db.events", schema=schema, partition_spec=spec, properties={"format-version": "2"}
    )
    arrow_schema = pa.schema(
        [("id", pa.int64()), ("cat", pa.string()), ("ts", pa.timestamp("us")), ("v", pa.float64())]
    )
    base = dt.datetime(2024, 2, 28, 12)
    for batch in range(3):
        n = 5 + batch
        rows = {
            "id": [batch * 100 + i for i in range(n)],
            "cat": [None if i == 0 else f"c{i % 2}" for i in range(n)],
            "ts": [
                base + dt.timedelta(hours=13 * i + batch) if i != 1 else dt.datetime(1969, 12, 31, 23)
                for i in range(n)
            ],
            "v": [float("nan") if i == 2 else i / 3 for i in range(n)],
        }
        table.append(pa.Table.from_pydict(rows, schema=arrow_schema))
    table.delete("id = 100")  # copy-on-write: rewrites a file, DELETED/EXISTING entries
    return catalog.load_table("db.events")


def test_pyiceberg_manifests_read_by_icefloe(pyiceberg_table):
    icefloe = _icefloe()
    table = pyiceberg_table
    io = table.io
    snapshots = table.metadata.snapshots
    assert len(snapshots) >= 4
    for snap in snapshots:
        rows = icefloe.read_manifest_list(local(snap.manifest_list)).to_pylist()
        theirs = snap.manifests(io)
        assert len(rows) == len(theirs)
        for row, mf in zip(rows, theirs, strict=True):
            expected = {
                "manifest_path": mf.manifest_path,
                "manifest_length": mf.manifest_length,
                "partition_spec_id": mf.partition_spec_id,
                "content": int(mf.content),
                "sequence_number": mf.sequence_number,
                "min_sequence_number": mf.min_sequence_number,
                "added_snapshot_id": mf.added_snapshot_id,
                "added_files_count": mf.added_files_count,
                "existing_files_count": mf.existing_files_count,
                "deleted_files_count": mf.deleted_files_count,
                "added_rows_count": mf.added_rows_count,
                "existing_rows_count": mf.existing_rows_count,
                "deleted_rows_count": mf.deleted_rows_count,
                "partitions": _empty_to_none(
                    [
                        {
                            "contains_null": p.contains_null,
                            "contains_nan": p.contains_nan,
                            "lower_bound": _hex(p.lower_bound),
                            "upper_bound": _hex(p.upper_bound),
                        }
                        for p in (mf.partitions or [])
                    ]
                ),
                "key_metadata": _hex(mf.key_metadata),
                "first_row_id": None,
            }
            assert_same(canon_icefloe_manifest_file(row), expected, f"pyiceberg list {snap.snapshot_id}")
            got = canon_icefloe_entries(icefloe.read_manifest(local(row["manifest_path"]), manifest_file=row))
            entries = mf.fetch_manifest_entry(io, discard_deleted=False)
            assert len(got) == len(entries)
            for g, e in zip(got, entries, strict=True):
                f = e.data_file
                names = [pf.name for pf in table.specs()[mf.partition_spec_id].fields]
                expected_entry = {
                    "status": int(e.status),
                    "snapshot_id": e.snapshot_id,
                    "sequence_number": e.sequence_number,
                    "file_sequence_number": e.file_sequence_number,
                    "content": int(f.content),
                    "file_path": f.file_path,
                    "file_format": str(
                        f.file_format.value if hasattr(f.file_format, "value") else f.file_format
                    ),
                    "partition": [(n, canonical_python_value(f.partition[i])) for i, n in enumerate(names)],
                    "record_count": f.record_count,
                    "file_size_in_bytes": f.file_size_in_bytes,
                    "column_sizes": dict(f.column_sizes) if f.column_sizes else None,
                    "value_counts": dict(f.value_counts) if f.value_counts else None,
                    "null_value_counts": dict(f.null_value_counts) if f.null_value_counts else None,
                    "nan_value_counts": dict(f.nan_value_counts) if f.nan_value_counts else None,
                    "lower_bounds": {k: _hex(v) for k, v in f.lower_bounds.items()}
                    if f.lower_bounds
                    else None,
                    "upper_bounds": {k: _hex(v) for k, v in f.upper_bounds.items()}
                    if f.upper_bounds
                    else None,
                    "key_metadata": _hex(f.key_metadata),
                    "split_offsets": _empty_to_none(f.split_offsets),
                    "equality_ids": _empty_to_none(f.equality_ids),
                    "sort_order_id": f.sort_order_id,
                    "first_row_id": None,
                    "referenced_data_file": None,
                    "content_offset": None,
                    "content_size_in_bytes": None,
                }
                assert_same(g, expected_entry, f"pyiceberg manifest {row['manifest_path']}")


def test_pyiceberg_inspect_agrees(pyiceberg_table):
    """PyIceberg's own metadata tables (current snapshot) against icefloe's reading."""
    icefloe = _icefloe()
    table = pyiceberg_table
    snap = table.current_snapshot()
    rows = icefloe.read_manifest_list(local(snap.manifest_list)).to_pylist()
    inspected = table.inspect.manifests().to_pylist()
    assert sorted(r["manifest_path"] for r in rows) == sorted(m["path"] for m in inspected)
    entries = []
    for row in rows:
        t = icefloe.read_manifest(local(row["manifest_path"]), manifest_file=row).to_pylist()
        entries.extend((e["file_path"], e["status"], e["sequence_number"], e["record_count"]) for e in t)
    theirs = [
        (e["data_file"]["file_path"], e["status"], e["sequence_number"], e["data_file"]["record_count"])
        for e in table.inspect.entries().to_pylist()
    ]
    assert sorted(entries) == sorted(theirs)
