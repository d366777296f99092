"""icefloe.executor.write: Parquet data files from pyarrow data, read back by pyarrow (by field id),
partition values checked with the Rust transforms, files rolled at the target size, and the
rows written into a manifest as a commit would."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe import transforms
from icefloe.errors import InvalidArgumentError
from icefloe.executor.write import SPEC_ID_KEY, data_files_from_ipc, data_files_to_ipc, write_data_files

FIELDS = [
    {"id": 1, "name": "id", "required": True, "type": "long"},
    {"id": 2, "name": "i", "required": False, "type": "int"},
    {"id": 3, "name": "b", "required": False, "type": "boolean"},
    {"id": 4, "name": "f", "required": False, "type": "float"},
    {"id": 5, "name": "d", "required": False, "type": "double"},
    {"id": 6, "name": "dec", "required": False, "type": "decimal(9, 2)"},
    {"id": 7, "name": "day", "required": False, "type": "date"},
    {"id": 8, "name": "ts", "required": False, "type": "timestamp"},
    {"id": 9, "name": "tstz", "required": False, "type": "timestamptz"},
    {"id": 10, "name": "s", "required": False, "type": "string"},
    {"id": 11, "name": "bin", "required": False, "type": "binary"},
    {"id": 12, "name": "u", "required": False, "type": "uuid"},
    {"id": 13, "name": "fx", "required": False, "type": "fixed[3]"},
    {"id": 14, "name": "t", "required": False, "type": "time"},
    {
        "id": 15,
        "name": "p",
        "required": False,
        "type": {
            "type": "struct",
            "fields": [
                {"id": 16, "name": "x", "required": True, "type": "double"},
                {"id": 17, "name": "tag", "required": False, "type": "string"},
            ],
        },
    },
    {
        "id": 18,
        "name": "tags",
        "required": False,
        "type": {"type": "list", "element-id": 19, "element-required": False, "element": "string"},
    },
    {
        "id": 20,
        "name": "attrs",
        "required": False,
        "type": {
            "type": "map",
            "key-id": 21,
            "key": "string",
            "value-id": 22,
            "value-required": False,
            "value": "long",
        },
    },
]


def metadata(location: Path, fields=FIELDS, partition=(), properties=None, sort_fields=()) -> str:
    spec_fields = [
        {"name": name, "transform": transform, "source-id": source, "field-id": 1000 + i}
        for i, (source, name, transform) in enumerate(partition)
    ]
    return json.dumps(
        {
            "format-version": 2,
            "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location": str(location),
            "last-sequence-number": 0,
            "last-updated-ms": 1,
            "last-column-id": 22,
            "current-schema-id": 0,
            "schemas": [{"type": "struct", "schema-id": 0, "fields": list(fields)}],
            "default-spec-id": 0,
            "partition-specs": [{"spec-id": 0, "fields": spec_fields}],
            "last-partition-id": 999 + len(spec_fields),
            "default-sort-order-id": 1 if sort_fields else 0,
            "sort-orders": [{"order-id": 0, "fields": []}]
            + (
                [
                    {
                        "order-id": 1,
                        "fields": [
                            {
                                "transform": "identity",
                                "source-id": s,
                                "direction": "asc",
                                "null-order": "nulls-first",
                            }
                            for s in sort_fields
                        ],
                    }
                ]
                if sort_fields
                else []
            ),
            "properties": dict(properties or {}),
            "snapshots": [],
            "snapshot-log": [],
            "metadata-log": [],
        }
    )


def sample(n: int = 8) -> pa.Table:
    base = dt.datetime(2024, 1, 1, 12, 30)
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "i": pa.array([None if k % 5 == 0 else k * 7 - 20 for k in range(n)], pa.int32()),
            "b": pa.array([k % 3 == 0 for k in range(n)]),
            "f": pa.array([float("nan") if k == 2 else k / 4 for k in range(n)], pa.float32()),
            "d": pa.array([None if k == 1 else -k * 1.5 for k in range(n)], pa.float64()),
            "dec": pa.array([decimal.Decimal(k * 101) / 100 for k in range(n)], pa.decimal128(9, 2)),
            "day": pa.array([dt.date(2023, 12, 30) + dt.timedelta(days=k) for k in range(n)], pa.date32()),
            "ts": pa.array([base + dt.timedelta(hours=7 * k) for k in range(n)], pa.timestamp("us")),
            "tstz": pa.array(
                [base + dt.timedelta(minutes=k) for k in range(n)], pa.timestamp("us", tz="UTC")
            ),
            "s": pa.array([None if k == 3 else f"value-{k % 3}-" + "x" * k for k in range(n)]),
            "bin": pa.array([bytes([255 - k] * (k + 1)) for k in range(n)], pa.binary()),
            "u": pa.array([bytes([k] * 16) for k in range(n)], pa.binary(16)),
            "fx": pa.array([bytes([k, k, 255]) for k in range(n)], pa.binary(3)),
            "t": pa.array([dt.time(k % 24, 30) for k in range(n)], pa.time64("us")),
            "p": pa.array(
                [None if k == 4 else {"x": k * 0.5, "tag": "t" if k % 2 else None} for k in range(n)],
                pa.struct([("x", pa.float64()), ("tag", pa.string())]),
            ),
            "tags": pa.array([None if k == 0 else [f"a{j}" for j in range(k % 3)] for k in range(n)]),
            "attrs": pa.array(
                [[("k", k), ("z", None)] if k % 2 else [] for k in range(n)], pa.map_(pa.string(), pa.int64())
            ),
        }
    )


def read_back(files: pa.Table) -> pa.Table:
    return pa.concat_tables([pq.read_table(p) for p in files.column("file_path").to_pylist()])


def field_ids(schema: pa.Schema) -> dict[str, int]:
    out = {}

    def visit(field: pa.Field, prefix: str):
        name = f"{prefix}{field.name}"
        out[name] = int(field.metadata[b"PARQUET:field_id"])
        t = field.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                visit(t.field(i), name + ".")
        elif pa.types.is_list(t):
            visit(t.value_field, name + ".")
        elif pa.types.is_map(t):
            visit(t.key_field, name + ".")
            visit(t.item_field, name + ".")

    for f in schema:
        visit(f, "")
    return out


def test_round_trip_unpartitioned_every_type(tmp_path):
    data = sample()
    files = write_data_files(metadata(tmp_path), data)
    assert files.num_rows == 1
    assert files.schema.metadata[SPEC_ID_KEY] == b"0"
    row = files.to_pylist()[0]
    assert row["status"] == 1 and row["content"] == 0 and row["file_format"] == "PARQUET"
    assert row["snapshot_id"] is None and row["sequence_number"] is None
    assert row["record_count"] == data.num_rows
    assert row["file_size_in_bytes"] == Path(row["file_path"]).stat().st_size
    assert re.fullmatch(
        re.escape(str(tmp_path)) + r"/data/00000-0-[0-9a-f-]{36}-00001\.parquet", row["file_path"]
    ), row["file_path"]
    # every field, nested too, carries its Iceberg id
    ids = field_ids(pq.read_schema(row["file_path"]))
    assert ids["id"] == 1 and ids["p.x"] == 16 and ids["tags.element"] == 19
    assert ids["attrs.key"] == 21 and ids["attrs.value"] == 22
    back = pq.read_table(row["file_path"])
    for name in data.column_names:
        if name == "f":  # NaN != NaN: compare the text
            assert [str(v) for v in back[name].to_pylist()] == [str(v) for v in data[name].to_pylist()]
        else:
            assert back[name].to_pylist() == data[name].to_pylist(), name
    # the footer and the row agree
    md = pq.read_metadata(row["file_path"])
    assert len(row["split_offsets"]) == md.num_row_groups
    assert dict(row["value_counts"])[1] == data.num_rows
    assert sum(s for _, s in row["column_sizes"]) < row["file_size_in_bytes"]
    assert md.row_group(0).column(0).compression == "ZSTD"


def test_metrics_match_the_footer_for_flat_columns(tmp_path):
    data = sample(40)
    row = write_data_files(metadata(tmp_path), data).to_pylist()[0]
    md = pq.read_metadata(row["file_path"])
    by_path = {md.schema.column(c).path: c for c in range(md.num_columns)}
    values, nulls = dict(row["value_counts"]), dict(row["null_value_counts"])
    lower, upper = dict(row["lower_bounds"]), dict(row["upper_bounds"])
    for name, fid in [("id", 1), ("i", 2), ("d", 5), ("day", 7), ("s", 10), ("p.tag", 17)]:
        stats = md.row_group(0).column(by_path[name]).statistics
        assert values[fid] == md.row_group(0).column(by_path[name]).num_values, name
        assert nulls[fid] == stats.null_count, name
    # a double inside a struct is counted where the struct is present (Java's field metrics)
    assert (values[16], nulls[16]) == (39, 0)
    assert lower[1] == (0).to_bytes(8, "little", signed=True) and upper[1] == (39).to_bytes(
        8, "little", signed=True
    )
    assert dict(row["nan_value_counts"]) == {4: 1, 5: 0, 16: 0}
    # inside lists and maps only sizes
    assert 19 not in values and 21 not in values and 19 in dict(row["column_sizes"])
    # a 16-character truncation of the strings: "value-2-xxxxxxxx..." -> "value-2-xxxxxxxy"
    assert upper[10] == b"value-2-xxxxxxxy" and lower[10] == b"value-0-"
    # binary bounds: the min of 40 bytes is cut to 16; the max (0xFF, one byte) is kept
    assert upper[11] == b"\xff" and lower[11] == bytes([255 - 39] * 16)
    # uuids are not truncated, fixed is
    assert upper[12] == bytes([39] * 16)


def test_metric_modes_from_properties(tmp_path):
    props = {
        "write.metadata.metrics.default": "counts",
        "write.metadata.metrics.column.s": "full",
        "write.metadata.metrics.column.id": "none",
        "write.metadata.metrics.column.bin": "truncate(2)",
    }
    row = write_data_files(metadata(tmp_path, properties=props), sample()).to_pylist()[0]
    assert 1 not in dict(row["value_counts"]) and 1 not in dict(row["column_sizes"])
    assert set(dict(row["lower_bounds"])) == {10, 11}
    assert dict(row["upper_bounds"])[10] == b"value-2-xxxxx"  # full: not truncated
    assert dict(row["lower_bounds"])[11] == bytes([248, 248])
    # properties given to the call override the table's
    row = write_data_files(
        metadata(tmp_path), sample(), properties={"write.metadata.metrics.default": "none"}
    ).to_pylist()[0]
    assert row["value_counts"] == [] and row["column_sizes"] == []


def test_sorted_columns_get_bounds_and_sort_order_id(tmp_path):
    md = metadata(tmp_path, properties={"write.metadata.metrics.default": "none"}, sort_fields=[2])
    row = write_data_files(md, sample(), sort_order_id=1).to_pylist()[0]
    assert set(dict(row["lower_bounds"])) == {2}
    assert row["sort_order_id"] == 1


def test_partitioned_rows_land_in_their_partition(tmp_path):
    data = sample(50)
    md = metadata(
        tmp_path, partition=[(7, "day_month", "month"), (10, "s_bucket", "bucket[3]"), (3, "b", "identity")]
    )
    files = write_data_files(md, data, task_id=7, partition_id=3)
    assert files.num_rows > 4
    assert sum(files.column("record_count").to_pylist()) == data.num_rows
    seen = set()
    for row in files.to_pylist():
        part = row["partition"]
        key = (part["day_month"], part["s_bucket"], part["b"])
        assert key not in seen
        seen.add(key)
        rows = pq.read_table(row["file_path"])
        months = transforms.apply("month", rows["day"]).to_pylist()
        buckets = transforms.apply("bucket[3]", rows["s"]).to_pylist()
        assert set(months) == {part["day_month"]}
        assert set(buckets) == {part["s_bucket"]}
        assert set(rows["b"].to_pylist()) == {part["b"]}
        month = part["day_month"]
        expected_dir = (
            f"day_month={1970 + month // 12:04d}-{month % 12 + 1:02d}/"
            f"s_bucket={'null' if part['s_bucket'] is None else part['s_bucket']}/b={str(part['b']).lower()}"
        )
        assert row["file_path"].startswith(f"{tmp_path}/data/{expected_dir}/00003-7-"), row["file_path"]
    back = read_back(files).sort_by("id")
    assert back["id"].to_pylist() == list(range(50))


def test_files_roll_at_the_target_size(tmp_path):
    n = 20000
    data = pa.table(
        {"id": pa.array(range(n), pa.int64()), "s": pa.array([f"row {k} " * 3 for k in range(n)])}
    )
    fields = [FIELDS[0], {"id": 10, "name": "s", "required": False, "type": "string"}]
    target = 16 * 1024
    md = metadata(tmp_path, fields=fields, properties={"write.target-file-size-bytes": str(target)})
    files = write_data_files(md, data)
    sizes = files.column("file_size_in_bytes").to_pylist()
    assert len(sizes) > 3
    assert all(s >= target for s in sizes[:-1]), sizes
    assert all(s < 2 * target for s in sizes), sizes
    assert sum(files.column("record_count").to_pylist()) == n
    names = [Path(p).name for p in files.column("file_path").to_pylist()]
    assert [int(x[-13:-8]) for x in names] == list(range(1, len(names) + 1))
    back = read_back(files)
    assert back["id"].to_pylist() == list(range(n))
    # row groups of about the configured size
    files = write_data_files(
        md,
        data,
        properties={
            "write.parquet.row-group-size-bytes": "50000",
            "write.target-file-size-bytes": str(10**9),
        },
    )
    row = files.to_pylist()[0]
    md_ = pq.read_metadata(row["file_path"])
    assert md_.num_row_groups > 3
    assert (
        sorted(row["split_offsets"]) == row["split_offsets"]
        and len(row["split_offsets"]) == md_.num_row_groups
    )


def test_input_is_matched_by_name(tmp_path):
    fields = [
        FIELDS[0],
        {"id": 10, "name": "s", "required": False, "type": "string"},
        {"id": 2, "name": "i", "required": False, "type": "int"},
    ]
    md = metadata(tmp_path, fields=fields)
    # reordered, a missing optional column, narrower and other layouts of types
    data = pa.table({"s": pa.array(["a", "b"], pa.large_string()), "id": pa.array([1, 2], pa.int32())})
    back = read_back(write_data_files(md, data))
    assert back.column_names == ["id", "s", "i"]
    assert back["id"].to_pylist() == [1, 2] and back["i"].to_pylist() == [None, None]
    dictionary = pa.table({"id": [1], "s": pa.array(["x"]).dictionary_encode()})
    assert read_back(write_data_files(md, dictionary))["s"].to_pylist() == ["x"]

    with pytest.raises(InvalidArgumentError, match="'id'.*required"):
        write_data_files(md, pa.table({"s": ["a"]}))
    with pytest.raises(InvalidArgumentError, match="'id'.*nulls"):
        write_data_files(md, pa.table({"id": pa.array([1, None], pa.int64())}))
    with pytest.raises(InvalidArgumentError, match="extra"):
        write_data_files(md, pa.table({"id": [1], "extra": [1]}))
    with pytest.raises(InvalidArgumentError, match="'i'.*cannot write string"):
        write_data_files(md, pa.table({"id": [1], "i": ["1"]}))
    with pytest.raises(InvalidArgumentError, match="'i'.*int64"):
        write_data_files(md, pa.table({"id": [1], "i": pa.array([1], pa.int64())}))
    with pytest.raises(InvalidArgumentError, match=r"'p\.x'.*required"):
        write_data_files(
            metadata(tmp_path),
            sample().set_column(
                14, "p", pa.array([{"x": None}] * 8, pa.struct([("x", pa.float64()), ("tag", pa.string())]))
            ),
        )


def test_nested_input_by_name_and_sliced(tmp_path):
    data = sample(10).slice(3, 5)
    # struct children in another order and the list as a large list
    p = data["p"].combine_chunks()
    swapped = pa.StructArray.from_arrays([p.field("tag"), p.field("x")], names=["tag", "x"], mask=p.is_null())
    data = data.set_column(14, "p", swapped).set_column(
        15, "tags", data["tags"].cast(pa.large_list(pa.string()))
    )
    back = read_back(write_data_files(metadata(tmp_path), data))
    expected = sample(10).slice(3, 5)
    for name in ["p", "tags", "attrs", "id"]:
        assert back[name].to_pylist() == expected[name].to_pylist(), name


def test_rows_are_what_a_commit_needs(tmp_path):
    md_text = metadata(tmp_path, partition=[(7, "day", "day")])
    files = write_data_files(md_text, [b for b in sample(12).to_batches(max_chunksize=5)])
    # over IPC, as an executor ships them
    shipped = data_files_from_ipc(data_files_to_ipc(files))
    assert shipped.equals(files)
    md = icefloe.TableMetadata.from_json(md_text)
    manifest = str(tmp_path / "m.avro")
    icefloe.write_manifest(
        manifest, shipped, schema=md.schema(), spec=md.spec(), format_version=2, snapshot_id=42
    )
    entries = icefloe.read_manifest(manifest)
    assert sorted(entries.column("file_path").to_pylist()) == sorted(files.column("file_path").to_pylist())
    assert entries.column("partition").to_pylist() == shipped.column("partition").to_pylist()
    assert entries.column("lower_bounds").to_pylist() == shipped.column("lower_bounds").to_pylist()
    assert entries.column("record_count").to_pylist() == shipped.column("record_count").to_pylist()
    # left to inherit from the commit's snapshot
    assert set(entries.column("snapshot_id").to_pylist()) == {None}


def test_empty_input_and_codec(tmp_path):
    md = metadata(tmp_path)
    empty = write_data_files(md, sample().slice(0, 0))
    assert empty.num_rows == 0 and "lower_bounds" in empty.column_names
    row = write_data_files(
        md, sample(), properties={"write.parquet.compression-codec": "snappy"}
    ).to_pylist()[0]
    assert pq.read_metadata(row["file_path"]).row_group(0).column(0).compression == "SNAPPY"
    with pytest.raises(InvalidArgumentError, match="compression"):
        write_data_files(md, sample(), properties={"write.parquet.compression-codec": "zip"})
    row = write_data_files(
        md, sample(), properties={"write.data.path": str(tmp_path / "elsewhere")}
    ).to_pylist()[0]
    assert row["file_path"].startswith(str(tmp_path / "elsewhere") + "/")
