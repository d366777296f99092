"""The Python scan API (``Table.scan``, ``TableScan.plan_*``, incremental append scans) on a
small table PyIceberg wrote with real Parquet data (see ``pyiceberg_tables.small_table``):
the plan's columns, types, values and schema metadata, task groups and their bytes,
column selection, time travel and its errors, case sensitivity, the forms of filters, and
an empty table. No Java: the Java comparisons are in ``test_scan_oracle.py``.
"""

from __future__ import annotations

import datetime as dt
import json
import struct

import pyarrow as pa
import pytest

import icefloe
from icefloe import errors
from icefloe import expressions as E

pytest.importorskip("pyiceberg")

import pyiceberg_tables  # noqa: E402


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return pyiceberg_tables.small_table(tmp_path_factory.mktemp("scan-api"))


@pytest.fixture(scope="module")
def table(small):
    return icefloe.Table.from_metadata(small.metadata_path)


def _pyiceberg_files(small, **kwargs) -> dict[str, object]:
    """path -> PyIceberg's DataFile, for PyIceberg's plan of the same scan."""
    return {t.file.file_path: t.file for t in small.table.scan(**kwargs).plan_files()}


def _paths(plan: pa.Table) -> list[str]:
    return sorted(plan.column("file_path").to_pylist())


def _id_range(small, path: str) -> tuple[int, int]:
    for t in small.table.scan().plan_files():
        if t.file.file_path == path:
            f = t.file
            return struct.unpack("<q", f.lower_bounds[1])[0], struct.unpack("<q", f.upper_bounds[1])[0]
    raise KeyError(path)


# --- the plan table -----------------------------------------------------------------------

DELETE_STRUCT = pa.struct(
    [
        pa.field("content", pa.int32(), False),
        pa.field("file_path", pa.string(), False),
        pa.field("file_format", pa.string(), False),
        pa.field("record_count", pa.int64(), False),
        pa.field("file_size_in_bytes", pa.int64(), False),
        pa.field("data_sequence_number", pa.int64(), False),
        pa.field("referenced_data_file", pa.string()),
        pa.field("content_offset", pa.int64()),
        pa.field("content_size_in_bytes", pa.int64()),
        pa.field("equality_ids", pa.list_(pa.int32())),
    ]
)

PLAN_FIELDS = [
    pa.field("group", pa.int32()),
    pa.field("file_path", pa.string(), False),
    pa.field("file_format", pa.string(), False),
    pa.field("start", pa.int64(), False),
    pa.field("length", pa.int64(), False),
    pa.field("record_count", pa.int64(), False),
    pa.field("file_size_in_bytes", pa.int64(), False),
    pa.field("spec_id", pa.int32(), False),
    # partition fields carry their partition field id, so readers find a spec's fields
    pa.field(
        "partition", pa.struct([pa.field("cat", pa.string(), metadata={b"PARQUET:field_id": b"1000"})]), False
    ),
    pa.field("data_sequence_number", pa.int64(), False),
    pa.field("file_sequence_number", pa.int64()),
    pa.field("first_row_id", pa.int64()),
    pa.field("residual", pa.int32(), False),
    pa.field("deletes", pa.list_(pa.field("item", DELETE_STRUCT)), False),
    # where a v4 plan found the data file (leaf, ordinal): null in the root and before v4
    pa.field("v4_leaf", pa.string()),
    pa.field("v4_ordinal", pa.int64()),
    # the entry's Avro block in the leaf (offset, length): null where v4_leaf is
    pa.field("v4_block_offset", pa.int64()),
    pa.field("v4_block_length", pa.int64()),
]


def test_plan_arrow_schema_and_metadata(small, table):
    plan = table.scan().plan_arrow()
    assert plan.schema.remove_metadata() == pa.schema(PLAN_FIELDS)
    md = plan.schema.metadata
    assert set(md) == {
        b"icefloe.snapshot_id",
        b"icefloe.schema",
        b"icefloe.projected_schema",
        b"icefloe.partition_specs",
        b"icefloe.residuals",
        b"icefloe.filter",
        b"icefloe.format_version",
    }  # and icefloe.name_mapping when the table has one
    assert md[b"icefloe.format_version"] == str(table.metadata.format_version).encode()
    assert int(md[b"icefloe.snapshot_id"]) == small.snapshots[-1]
    schema = json.loads(md[b"icefloe.schema"])
    assert [f["name"] for f in schema["fields"]] == ["id", "cat", "ts", "v", "info", "extra"]
    assert json.loads(md[b"icefloe.projected_schema"]) == schema
    specs = json.loads(md[b"icefloe.partition_specs"])
    assert [
        (s["spec-id"], [(f["name"], f["transform"], f["source-id"]) for f in s["fields"]]) for s in specs
    ] == [(0, [("cat", "identity", 2)])]
    assert json.loads(md[b"icefloe.residuals"]) == [True]
    assert json.loads(md[b"icefloe.filter"]) is True


def test_plan_arrow_values_equal_pyiceberg(small, table):
    plan = table.scan().plan_arrow()
    theirs = _pyiceberg_files(small)
    assert plan.num_rows == len(theirs) == 7
    seqs = {e.data_file.file_path: e.sequence_number for e in _live_entries(small)}
    for row in plan.to_pylist():
        f = theirs[row["file_path"]]
        assert row["group"] is None
        assert row["file_format"] == "PARQUET"
        assert (row["start"], row["length"]) == (0, f.file_size_in_bytes)
        assert row["record_count"] == f.record_count
        assert row["file_size_in_bytes"] == f.file_size_in_bytes
        assert row["spec_id"] == 0
        assert row["partition"] == {"cat": f.partition[0]}
        assert row["data_sequence_number"] == row["file_sequence_number"] == seqs[row["file_path"]]
        assert row["first_row_id"] is None  # a v2 table
        assert row["residual"] == 0
        assert row["deletes"] == []  # PyIceberg deletes by rewriting files
    assert sum(plan.column("record_count").to_pylist()) == 350 - 10


def _live_entries(small):
    io = small.table.io
    out = []
    for m in small.table.current_snapshot().manifests(io):
        out.extend(m.fetch_manifest_entry(io, discard_deleted=True))
    return out


def test_plan_metrics(table):
    plan = table.scan("cat = 'd'").plan()
    m = plan.metrics
    assert set(m) == {
        "total_data_manifests",
        "scanned_data_manifests",
        "skipped_data_manifests",
        "total_delete_manifests",
        "scanned_delete_manifests",
        "skipped_delete_manifests",
        "result_data_files",
        "skipped_data_files",
        "result_delete_files",
        "skipped_delete_files",
    }
    assert m["total_data_manifests"] == m["scanned_data_manifests"] + m["skipped_data_manifests"]
    # the manifests whose partition summaries exclude 'd' are skipped
    assert 1 <= m["scanned_data_manifests"] < m["total_data_manifests"]
    assert m["result_data_files"] == plan.table.num_rows == 1
    assert (m["total_delete_manifests"], m["result_delete_files"]) == (0, 0)
    assert plan.snapshot_id == table.metadata.current_snapshot().snapshot_id


def test_residuals(small, table):
    plan = table.scan("cat = 'b' and id > 150").plan()
    assert plan.residuals == [{"type": "gt", "term": "id", "value": 150}]
    # of the two files of 'b', the one with ids 11..99 is pruned by its bounds
    assert [r["partition"]["cat"] for r in plan.table.to_pylist()] == ["b"]
    # an OR: files of 'b' need no more filtering, the others keep `id > 320`
    plan = table.scan("cat = 'b' or id > 320").plan()
    residuals = plan.residuals
    by_cat = {}
    for row in plan.table.to_pylist():
        by_cat.setdefault(row["partition"]["cat"], set()).add(json.dumps(residuals[row["residual"]]))
    assert by_cat == {
        "b": {"true"},
        "a": {json.dumps({"type": "gt", "term": "id", "value": 320})},
        "e": {json.dumps({"type": "gt", "term": "id", "value": 320})},
    }
    assert json.loads(plan.table.schema.metadata[b"icefloe.filter"]) == {
        "type": "or",
        "left": {"type": "eq", "term": "cat", "value": "b"},
        "right": {"type": "gt", "term": "id", "value": 320},
    }


def test_plan_files_objects(table):
    plan = table.scan("id >= 192").plan_arrow()
    tasks = list(table.scan("id >= 192").plan_files())
    assert all(isinstance(t, icefloe.FileScanTask) for t in tasks)
    rows = plan.to_pylist()
    assert [t.file_path for t in tasks] == [r["file_path"] for r in rows]
    for t, r in zip(tasks, rows, strict=True):
        assert (t.file_format, t.start, t.length, t.record_count, t.file_size_in_bytes, t.spec_id) == (
            r["file_format"],
            r["start"],
            r["length"],
            r["record_count"],
            r["file_size_in_bytes"],
            r["spec_id"],
        )
        assert (t.partition, t.data_sequence_number, t.first_row_id, t.deletes) == (
            r["partition"],
            r["data_sequence_number"],
            r["first_row_id"],
            r["deletes"],
        )
        assert t.residual == {"type": "gt-eq", "term": "id", "value": 192}
    # files whose ids all lie below 192 are pruned by their bounds
    assert len(tasks) == 5


# --- task groups ----------------------------------------------------------------------------


def test_plan_tasks_default_is_one_group(table):
    groups = table.scan().plan_tasks()
    assert len(groups) == 1  # 7 small files, 4 MiB open cost each, 128 MiB target
    (group,) = groups
    assert set(group.table.column("group").to_pylist()) == {0}
    # PyIceberg writes split offsets [4]: one range per file, from the first row group on
    assert sorted((t.file_path, t.start, t.length) for t in group.tasks) == sorted(
        (r["file_path"], 4, r["file_size_in_bytes"] - 4) for r in table.scan().plan_arrow().to_pylist()
    )


@pytest.mark.parametrize("target", [1024, 4096, 8192, 20_000])
def test_plan_tasks_small_targets(table, target):
    groups = table.scan().plan_tasks(target_split_size=target)
    files = table.scan().plan_arrow()
    assert sum(g.table.num_rows for g in groups) == files.num_rows
    # a group's weight is at most the target, or it has a single range
    open_cost = 4 * 1024 * 1024
    for i, g in enumerate(groups):
        assert set(g.table.column("group").to_pylist()) == {i}
        if target < open_cost:
            assert g.table.num_rows == 1  # every range weighs the open cost
    assert len(groups) == files.num_rows


def test_plan_tasks_lookback_packing_with_small_open_cost(small, tmp_path):
    # with the open cost below the file sizes, ranges are packed by their length
    md = small.table.metadata
    text = json.loads(open(small.metadata_path).read())
    text["properties"]["read.split.open-file-cost"] = "1"
    path = tmp_path / "v.metadata.json"
    path.write_text(json.dumps(text))
    t = icefloe.Table.from_metadata(str(path))
    total = sum(r["file_size_in_bytes"] - 4 for r in t.scan().plan_arrow().to_pylist())
    groups = t.scan().plan_tasks(target_split_size=8000)
    weights = [sum(x.length for x in g.tasks) for g in groups]
    assert sum(weights) == total
    assert all(w <= 8000 for w in weights)
    assert len(groups) < len(md.snapshots) + 2  # two ranges of ~3.3 KB fit in one group


def test_packed_plan_arrow_and_threads(table):
    packed = table.scan().plan_arrow(packed=True)
    assert packed.column("group").null_count == 0
    assert packed.drop_columns(["group"]).to_pylist() == [
        dict(r, start=4, length=r["file_size_in_bytes"] - 4)
        for r in table.scan().plan_arrow().drop_columns(["group"]).to_pylist()
    ]
    # the plan (and its order) does not depend on the number of decoding threads
    one = table.scan("id > 20").plan_arrow(threads=1)
    assert one.equals(table.scan("id > 20").plan_arrow(threads=4))


def test_combined_task_bytes_round_trip(table):
    for target in (None, 4096):
        for group in table.scan("cat in ('a', 'b') and id > 20").plan_tasks(target_split_size=target):
            data = group.to_bytes()
            assert isinstance(data, bytes)
            back = icefloe.CombinedScanTask.from_bytes(data)
            assert back.table.equals(group.table)
            assert back.table.schema.metadata == group.table.schema.metadata
            assert back.tasks == group.tasks
            assert all(t.residual == {"type": "gt", "term": "id", "value": 20} for t in back.tasks)


def test_task_payloads_equal_plan_tasks(table):
    from icefloe import _native
    from icefloe.executor.read import read_tasks

    for flt, target in ((None, None), ("cat in ('a', 'b') and id > 20", 4096), ("id > 20", 1024)):
        groups = table.scan(flt).plan_tasks(target_split_size=target)
        payloads = table.scan(flt).plan_task_payloads(target_split_size=target)
        assert [n for _, n in payloads] == [g.table.num_rows for g in groups]
        for (payload, _), group in zip(payloads, groups, strict=True):
            assert payload[:4] == b"\x04\x22\x4d\x18"  # an LZ4 frame
            back = icefloe.CombinedScanTask.from_bytes(payload)
            assert back.table.equals(group.table)
            assert back.table.schema.metadata == group.table.schema.metadata
            assert pa.Table.from_batches(list(read_tasks(payload))).equals(
                pa.Table.from_batches(list(read_tasks(group)))
            )
        # uncompressed IPC bytes pass through unchanged
        assert _native.task_group_ipc(groups[0].to_bytes()) == groups[0].to_bytes()
    assert table.scan(False).plan_task_payloads() == []
    corrupt = bytearray(table.scan().plan_task_payloads()[0][0])
    corrupt[20:40] = b"\xff" * 20
    with pytest.raises(errors.InvalidArgumentError, match="LZ4"):
        icefloe.CombinedScanTask.from_bytes(bytes(corrupt))


def test_plan_tasks_of_empty_plan(table):
    assert table.scan(False).plan_tasks() == []
    assert table.scan("cat = 'zzz'").plan_tasks() == []


def test_plan_tasks_bad_target(table):
    for bad in (0, -1):
        with pytest.raises(errors.InvalidArgumentError, match="split size must be > 0"):
            table.scan().plan_tasks(target_split_size=bad)


# --- column selection -------------------------------------------------------------------------


def _projected(plan: pa.Table) -> dict:
    return json.loads(plan.schema.metadata[b"icefloe.projected_schema"])


def test_selected_fields(table):
    full = table.scan("id > 100").plan_arrow()
    sel = table.scan("id > 100", selected_fields=["id", "info.a"]).plan_arrow()
    assert sel.drop_columns([]).equals(full) or sel.to_pylist() == full.to_pylist()
    assert _projected(sel)["fields"] == [
        {"id": 1, "name": "id", "required": False, "type": "long"},
        {
            "id": 5,
            "name": "info",
            "required": False,
            "type": {"type": "struct", "fields": [{"id": 6, "name": "a", "required": False, "type": "int"}]},
        },
    ]
    # the read schema stays whole
    assert json.loads(sel.schema.metadata[b"icefloe.schema"]) == json.loads(
        full.schema.metadata[b"icefloe.schema"]
    )
    # a struct selects its children; "*" and None select everything
    assert [f["name"] for f in _projected(table.scan(selected_fields=["info"]).plan_arrow())["fields"]] == [
        "info"
    ]
    everything = json.loads(full.schema.metadata[b"icefloe.schema"])
    assert _projected(table.scan(selected_fields=("*",)).plan_arrow()) == everything
    assert _projected(table.scan(selected_fields=None).plan_arrow()) == everything


def test_selected_fields_errors(table):
    for names in (["zzz"], ["id", "info.zzz"], ["ID"]):
        with pytest.raises(errors.NotFoundError, match="cannot find column"):
            table.scan(selected_fields=names).plan_arrow()
    with pytest.raises(TypeError, match="sequence of column names"):
        table.scan(selected_fields="id")
    # case-insensitive selection
    sel = table.scan(selected_fields=["ID", "Info.A"], case_sensitive=False).plan_arrow()
    assert [f["name"] for f in _projected(sel)["fields"]] == ["id", "info"]


# --- time travel --------------------------------------------------------------------------------


def test_snapshot_id(small, table):
    for sid in small.snapshots:
        plan = table.scan(snapshot_id=sid).plan()
        assert plan.snapshot_id == sid
        assert _paths(plan.table) == sorted(_pyiceberg_files(small, snapshot_id=sid))
    counts = [table.scan(snapshot_id=sid).plan_arrow().num_rows for sid in small.snapshots]
    assert counts == [2, 4, 5, 5, 7]


def test_time_travel_uses_the_snapshot_schema(small, table):
    old = table.scan(snapshot_id=small.before_evolution).plan_arrow()
    assert "extra" not in [f["name"] for f in json.loads(old.schema.metadata[b"icefloe.schema"])["fields"]]
    with pytest.raises(errors.NotFoundError, match="extra"):
        table.scan("extra = 1", snapshot_id=small.before_evolution).plan_arrow()
    # the current snapshot and branches read with the current schema, tags with theirs (Java's
    # SnapshotUtil.schemaFor)
    assert table.scan("extra = 1").plan_arrow().num_rows == 7  # files without `extra` may match (null)
    assert table.scan("extra = 1", ref="b2").plan_arrow().num_rows == 5
    with pytest.raises(errors.NotFoundError, match="extra"):
        table.scan("extra = 1", ref="t1").plan_arrow()


def test_refs(small, table):
    assert table.scan(ref="t1").plan().snapshot_id == small.snapshots[1]
    assert table.scan(ref="b2").plan().snapshot_id == small.snapshots[2]
    assert table.scan(ref="main").plan().snapshot_id == small.snapshots[-1]
    assert _paths(table.scan(ref="t1").plan_arrow()) == _paths(
        table.scan(snapshot_id=small.snapshots[1]).plan_arrow()
    )


def test_as_of(small, table):
    snaps = {s.snapshot_id: s.timestamp_ms for s in table.metadata.snapshots}
    times = [snaps[sid] for sid in small.snapshots]
    assert times == sorted(times) and len(set(times)) == len(times)
    for sid, ms in zip(small.snapshots, times, strict=True):
        assert table.scan(as_of=ms).plan().snapshot_id == sid
        assert table.scan(as_of=ms + 1).plan().snapshot_id == sid  # the snapshots are >= 5 ms apart
        aware = dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc)
        assert table.scan(as_of=aware).plan().snapshot_id == sid
        assert (
            table.scan(as_of=aware.astimezone(dt.timezone(dt.timedelta(hours=-5)))).plan().snapshot_id == sid
        )
    assert table.scan(as_of=times[2] - 1).plan().snapshot_id == small.snapshots[1]
    assert table.scan(as_of=2**62).plan().snapshot_id == small.snapshots[-1]


def test_as_of_datetime_to_millis():
    from icefloe._time import epoch_millis

    def _millis(t):
        return epoch_millis(t, "as_of")

    utc = dt.timezone.utc
    epoch = dt.datetime(1970, 1, 1, tzinfo=utc)
    # a float product (timestamp() * 1000) gives 273447737922 here
    assert _millis(epoch + dt.timedelta(microseconds=273447737923000)) == 273447737923
    assert _millis(epoch + dt.timedelta(microseconds=1999)) == 1  # floor, not rounding
    assert _millis(dt.datetime(1969, 12, 31, 23, 59, 59, 999500, tzinfo=utc)) == -1  # floor before 1970
    assert _millis(dt.datetime(2024, 1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1)))) == 1704067200000
    assert _millis(1704067200000) == 1704067200000


def test_time_travel_errors(small, table):
    with pytest.raises(errors.NotFoundError, match="cannot find snapshot with id 12345"):
        table.scan(snapshot_id=12345).plan_arrow()
    with pytest.raises(errors.NotFoundError, match="cannot find ref 'nope'"):
        table.scan(ref="nope").plan_arrow()
    with pytest.raises(errors.NotFoundError, match="snapshot-log starts later"):
        table.scan(as_of=small.table.metadata.snapshots[0].timestamp_ms - 1).plan_arrow()
    for kwargs in (
        {"snapshot_id": small.snapshots[0], "ref": "main"},
        {"snapshot_id": small.snapshots[0], "as_of": 1},
        {"ref": "main", "as_of": 1},
    ):
        with pytest.raises(ValueError, match="at most one of snapshot_id, ref and as_of"):
            table.scan(**kwargs)
    with pytest.raises(errors.InvalidArgumentError, match="at most one"):
        icefloe._native.plan_scan(table.metadata, snapshot_id=small.snapshots[0], ref_name="main")
    with pytest.raises(ValueError, match="timezone-aware"):
        table.scan(as_of=dt.datetime(2024, 1, 1))
    for bad in ("2024-01-01", True, 1.5):
        with pytest.raises(TypeError, match="as_of must be"):
            table.scan(as_of=bad)


# --- filters --------------------------------------------------------------------------------


def test_case_insensitive(table):
    lower = _paths(table.scan("cat = 'a' and id > 5").plan_arrow())
    assert len(lower) == 2
    assert _paths(table.scan("CAT = 'a' and Id > 5", case_sensitive=False).plan_arrow()) == lower
    assert (
        _paths(table.scan(E.EqualTo("Cat", "a") & E.GreaterThan("ID", 5), case_sensitive=False).plan_arrow())
        == lower
    )
    with pytest.raises(errors.NotFoundError, match="cannot find column 'CAT'"):
        table.scan("CAT = 'a'").plan_arrow()
    # residuals keep the names as written, as Java's (test_scan_oracle compares them)
    assert table.scan("CAT = 'a' and Id > 5", case_sensitive=False).plan().residuals == [
        {"type": "gt", "term": "Id", "value": 5}
    ]


@pytest.mark.parametrize(
    "text, expr",
    [
        ("cat = 'b' and id > 150", E.And(E.EqualTo("cat", "b"), E.GreaterThan("id", 150))),
        ("cat in ('a', 'e')", E.In("cat", ["a", "e"])),
        ("cat not in ('a', 'b', 'c')", E.NotIn("cat", ["a", "b", "c"])),
        ("cat like 'd%'", E.StartsWith("cat", "d")),
        ("not (id < 300)", E.Not(E.LessThan("id", 300))),
        ("ts >= '2024-01-09T00:00:00'", E.GreaterThanOrEqual("ts", dt.datetime(2024, 1, 9))),
        ("v >= 96.0", E.GreaterThanOrEqual("v", 96.0)),  # a decimal literal on a double column
        ("v > 100.0 or cat is null", E.Or(E.GreaterThan("v", 100.0), E.IsNull("cat"))),
        ("info.a < 50", E.LessThan("info.a", 50)),  # no bounds for nested fields: nothing pruned
    ],
)
def test_string_and_expression_filters_agree(small, table, text, expr):
    by_text = _paths(table.scan(text).plan_arrow())
    assert by_text == _paths(table.scan(expr).plan_arrow())
    pyiceberg = _pyiceberg_files(small, row_filter=text)
    if text.startswith("v >"):
        # NaN is above every number (docs/conformance.md): a file may match `v > x` when it
        # may hold NaN, and PyIceberg records no NaN counts, so icefloe keeps the files
        # PyIceberg prunes by their NaN-free upper bound: exactly those
        v_id = table.schema().find_field("v").id
        extra = set(by_text) - set(pyiceberg)
        assert set(pyiceberg) <= set(by_text) and extra
        every_file = _pyiceberg_files(small)
        for path in extra:
            assert v_id not in (every_file[path].nan_value_counts or {}), path
    else:
        assert by_text == sorted(pyiceberg)


def test_filter_prunes_by_bounds(small, table):
    ids = {p: _id_range(small, p) for p in _paths(table.scan().plan_arrow())}
    for lo in (0, 50, 99, 100, 199, 200, 300, 349, 350):
        got = set(_paths(table.scan(f"id >= {lo}").plan_arrow()))
        assert got == {p for p, (_, hi) in ids.items() if hi >= lo}, lo


def test_true_false_and_none_filters(table):
    everything = _paths(table.scan().plan_arrow())
    assert len(everything) == 7
    assert _paths(table.scan(True).plan_arrow()) == everything
    assert _paths(table.scan(E.AlwaysTrue()).plan_arrow()) == everything
    assert table.scan(False).plan_arrow().num_rows == 0
    assert table.scan(E.AlwaysFalse()).plan_arrow().num_rows == 0
    assert table.scan("cat = 'zzz'").plan_arrow().num_rows == 0


def test_filter_errors(table):
    with pytest.raises(errors.NotFoundError, match="cannot find column 'nope'"):
        table.scan("nope = 1").plan_arrow()
    with pytest.raises(errors.NotFoundError):
        table.scan(E.EqualTo("info.nope", 1)).plan_arrow()
    with pytest.raises(errors.InvalidArgumentError, match="cannot convert string value 'abc' to type long"):
        table.scan("id = 'abc'").plan_arrow()
    with pytest.raises(errors.InvalidArgumentError, match="cannot parse filter"):
        table.scan("id >")
    with pytest.raises(errors.InvalidArgumentError, match="a row filter is a str"):
        table.scan(123)
    with pytest.raises(errors.InvalidArgumentError, match="not both"):
        icefloe._native.plan_scan(table.metadata, filter_json="true", filter=E.AlwaysTrue())


def test_filter_json_form(table):
    # the JSON form (what the Java comparisons use) gives the same plan
    scan = table.scan()
    scan._filter_json = json.dumps(
        {
            "type": "and",
            "left": {"type": "eq", "term": "cat", "value": "b"},
            "right": {"type": "gt", "term": "id", "value": 150},
        }
    )
    assert _paths(scan.plan_arrow()) == _paths(table.scan("cat = 'b' and id > 150").plan_arrow())


# --- incremental append scans ---------------------------------------------------------------


def _added_by(small, snapshot_ids) -> set[str]:
    """Files that the given snapshots added, from their own manifests (PyIceberg)."""
    io = small.table.io
    out = set()
    for s in small.table.metadata.snapshots:
        if s.snapshot_id not in snapshot_ids:
            continue
        for m in s.manifests(io):
            if m.added_snapshot_id != s.snapshot_id:
                continue
            for e in m.fetch_manifest_entry(io, discard_deleted=True):
                if e.status.name == "ADDED" and e.snapshot_id == s.snapshot_id:
                    out.add(e.data_file.file_path)
    return out


def test_incremental_append_scan(small, table):
    s = small.snapshots  # append, append, append, overwrite (delete), append
    appends = [s[0], s[1], s[2], s[4]]
    cases = [
        ((None, None), appends),
        ((s[0], None), [s[1], s[2], s[4]]),
        ((s[1], None), [s[2], s[4]]),
        ((s[2], None), [s[4]]),
        ((s[3], None), [s[4]]),
        ((None, s[2]), [s[0], s[1], s[2]]),
        ((s[0], s[2]), [s[1], s[2]]),
        ((s[2], s[3]), []),  # only the delete in between
        ((None, s[0]), [s[0]]),
    ]
    for (start, end), added in cases:
        plan = table.incremental_append_scan(start, end).plan_arrow()
        got = _paths(plan)
        assert got == sorted(_added_by(small, set(added))), (start, end)
        assert all(r["deletes"] == [] for r in plan.to_pylist())
    # the first append's files of 'a' and 'b' were rewritten by the delete, and still count
    # as appended (as in Java, each append's own manifests are read)
    assert len(_paths(table.incremental_append_scan(None).plan_arrow())) == 2 + 2 + 1 + 2


def test_incremental_append_scan_options(small, table):
    s = small.snapshots
    got = table.incremental_append_scan(None, row_filter="cat = 'b'").plan_arrow()
    assert sorted(r["partition"]["cat"] for r in got.to_pylist()) == ["b", "b"]
    got = table.incremental_append_scan(s[0], row_filter="CAT = 'b'", case_sensitive=False).plan_arrow()
    assert [r["partition"]["cat"] for r in got.to_pylist()] == ["b"]
    sel = table.incremental_append_scan(s[0], selected_fields=["id"]).plan_arrow()
    assert [f["name"] for f in _projected(sel)["fields"]] == ["id"]
    # incremental scans read with the current schema, even up to an older snapshot
    got = table.incremental_append_scan(None, s[1], row_filter="extra is null").plan_arrow()
    assert got.num_rows == 4
    groups = table.incremental_append_scan(s[1]).plan_tasks(target_split_size=1024)
    assert sorted(t.file_path for g in groups for t in g.tasks) == sorted(_added_by(small, {s[2], s[4]}))


def test_incremental_append_scan_errors(small, table):
    s = small.snapshots
    for start, end in ((s[2], s[2]), (s[2], s[1]), (12345, None)):
        with pytest.raises(errors.InvalidArgumentError, match="is not a parent ancestor"):
            table.incremental_append_scan(start, end).plan_arrow()
    with pytest.raises(errors.NotFoundError, match="cannot find snapshot with id 12345"):
        table.incremental_append_scan(None, 12345).plan_arrow()


# --- a table without snapshots ------------------------------------------------------------


def test_empty_table(small):
    t = icefloe.Table.from_metadata(small.empty_metadata_path)
    plan = t.scan("id > 5").plan()
    assert plan.table.num_rows == 0
    assert plan.table.schema.remove_metadata() == pa.schema(PLAN_FIELDS)
    assert plan.snapshot_id is None
    assert plan.residuals == []
    assert all(v == 0 for v in plan.metrics.values())
    assert list(t.scan().plan_files()) == []
    assert t.scan().plan_tasks() == []
    assert t.incremental_append_scan(None).plan_arrow().num_rows == 0
    with pytest.raises(errors.InvalidArgumentError, match="no current snapshot"):
        t.incremental_append_scan(5).plan_arrow()
    # filters are still checked against the schema
    with pytest.raises(errors.NotFoundError):
        t.scan("nope = 1").plan_arrow()
    with pytest.raises(errors.NotFoundError):
        t.scan(snapshot_id=1).plan_arrow()


# --- streamed plans -----------------------------------------------------------------------


def _rows_with_residuals(batches, residuals) -> list[tuple]:
    rows = [r for b in batches for r in b.to_pylist()]
    out = []
    for r in rows:
        r = dict(r)
        r["residual"] = json.dumps(residuals[r.pop("residual")], sort_keys=True)
        out.append(tuple(sorted((k, json.dumps(v, sort_keys=True, default=str)) for k, v in r.items())))
    return out


@pytest.mark.parametrize("row_filter", [None, "cat = 'b' or id > 320", "id >= 192", "cat = 'zzz'"])
def test_plan_batches_equal_plan_arrow(table, row_filter):
    expected = table.scan(row_filter).plan()
    # one planning thread: the same batches in the same order
    with table.scan(row_filter).plan_batches(threads=1) as stream:
        assert stream.schema.remove_metadata() == expected.table.schema.remove_metadata()
        got = stream.read_all()
        assert got.equals(expected.table)
        assert got.schema.metadata == expected.table.schema.metadata
        assert stream.metrics == expected.metrics
    # more threads and one-row batches: the same rows, manifests in any order
    stream = table.scan(row_filter).plan_batches(batch_rows=1, threads=4, queue=1)
    batches = list(stream)
    assert all(b.num_rows == 1 for b in batches)
    assert all(b.schema == stream.schema for b in batches)
    assert sorted(_rows_with_residuals(batches, stream.residuals)) == sorted(
        _rows_with_residuals(expected.table.to_batches(), expected.residuals)
    )
    assert stream.metrics == expected.metrics


def test_plan_batches_reader_and_early_stop(table):
    everything = table.scan().plan_arrow()
    reader = table.scan().plan_batches(batch_rows=2, threads=1, queue=1).to_reader()
    assert isinstance(reader, pa.RecordBatchReader)
    assert reader.read_all().equals(everything.replace_schema_metadata(reader.schema.metadata))
    # a reader that stops after one batch: planning stops, nothing hangs
    stream = table.scan().plan_batches(batch_rows=1, threads=1, queue=1)
    first = next(stream)
    assert first.num_rows == 1
    stream.close()
    assert list(stream) == []
    assert stream.metrics is None
    # dropped without closing, mid-plan
    for _ in range(20):
        s = table.scan().plan_batches(batch_rows=1, queue=1)
        next(s)
        del s


def test_plan_batches_errors(small, table, tmp_path):
    # errors in the scan's settings come from plan_batches() itself
    with pytest.raises(errors.NotFoundError, match="cannot find snapshot with id 12345"):
        table.scan(snapshot_id=12345).plan_batches()
    with pytest.raises(errors.NotFoundError, match="cannot find column 'nope'"):
        table.scan("nope = 1").plan_batches()
    with pytest.raises(errors.InvalidArgumentError, match="cannot convert string value 'abc' to type long"):
        table.scan("id = 'abc'").plan_batches()
    # errors while planning come from the iteration, as the same exception as plan_arrow()
    md = json.loads(open(small.metadata_path).read())
    for snap in md["snapshots"]:
        snap["manifest-list"] = str(tmp_path / "missing-list.avro")
    broken = tmp_path / "broken.metadata.json"
    broken.write_text(json.dumps(md))
    t = icefloe.Table.from_metadata(str(broken))
    with pytest.raises(errors.IcefloeIOError) as from_plan:
        t.scan().plan_arrow()
    stream = t.scan().plan_batches()
    with pytest.raises(errors.IcefloeIOError) as from_stream:
        list(stream)
    assert str(from_stream.value) == str(from_plan.value)
    assert list(stream) == []


def test_plan_batches_of_empty_table(small):
    t = icefloe.Table.from_metadata(small.empty_metadata_path)
    stream = t.scan("id > 5").plan_batches()
    assert stream.schema.remove_metadata() == pa.schema(PLAN_FIELDS)
    assert list(stream) == []
    assert stream.residuals == []
    assert all(v == 0 for v in stream.metrics.values())
