"""Manifests and manifest lists through the Python API, without Java: round trips over
format versions and codecs, inheritance, v3 row-id assignment, bad input.

Conformance with Java and PyIceberg is in test_manifest_oracle.py.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe import errors

FIXTURES = Path(__file__).resolve().parent.parent / "crates" / "icefloe" / "tests" / "fixtures"
MD = icefloe.TableMetadata.from_path(str(FIXTURES / "metadata" / "v2-full.metadata.json"))
SCHEMA = MD.schema()
SPEC = MD.spec_by_id(1)  # day(placed_at), bucket[16](customer)


def _entry(i: int, *, status: int = 1, content: int = 0, seq: int | None = None) -> dict:
    return {
        "status": status,
        "snapshot_id": None if status == 1 else 77,
        "sequence_number": seq,
        "file_sequence_number": seq,
        "content": content,
        "file_path": f"s3://b/orders/data/f{i}.parquet",
        "file_format": "PARQUET",
        "partition": {"placed_at_day": 19_000 + i, "customer_bucket": i % 16},
        "record_count": 100 + i,
        "file_size_in_bytes": 4096 + i,
        "column_sizes": [(1, 800), (2, 300)],
        "value_counts": [(1, 100 + i)],
        "null_value_counts": [(2, 0)],
        "nan_value_counts": None,
        "lower_bounds": [(1, struct.pack("<q", i * 1000))],
        "upper_bounds": [(1, struct.pack("<q", i * 1000 + 99))],
        "key_metadata": None,
        "split_offsets": [4],
        "equality_ids": [1] if content == 2 else None,
        "sort_order_id": 0 if content != 1 else None,
        "first_row_id": None,
        "referenced_data_file": None,
        "content_offset": None,
        "content_size_in_bytes": None,
    }


def _table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=icefloe.manifest.entries_schema(SCHEMA, SPEC))


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("codec", ["uncompressed", "deflate", "snappy", "zstd"])
def test_manifest_round_trip(tmp_path, version, codec):
    rows = [_entry(i) for i in range(5)] + [_entry(5, status=0, seq=3)]
    path = tmp_path / f"m-{version}-{codec}.avro"
    written = icefloe.write_manifest(
        str(path),
        _table(rows),
        schema=SCHEMA,
        spec=SPEC,
        format_version=version,
        snapshot_id=42,
        compression=codec,
    )
    assert written["manifest_path"] == str(path)
    assert written["manifest_length"] == path.stat().st_size
    assert (
        written["added_files_count"],
        written["existing_files_count"],
        written["deleted_files_count"],
    ) == (5, 1, 0)
    assert written["added_rows_count"] == sum(100 + i for i in range(5))
    assert written["added_snapshot_id"] == 42 and written["partition_spec_id"] == 1
    # partition summaries: day 19000..19005, bucket 0..5
    day, bucket = written["partitions"]
    assert day["lower_bound"] == struct.pack("<i", 19_000) and day["upper_bound"] == struct.pack("<i", 19_005)
    assert not day["contains_null"] and bucket["upper_bound"] == struct.pack("<i", 5)

    back = icefloe.read_manifest(str(path)).to_pylist()
    assert [r["file_path"] for r in back] == [r["file_path"] for r in rows]
    for got, want in zip(back, rows, strict=True):
        for key in (
            "status",
            "partition",
            "record_count",
            "column_sizes",
            "lower_bounds",
            "split_offsets",
            "sort_order_id",
        ):
            assert got[key] == want[key], key
        if version == 1:
            assert got["snapshot_id"] in (42, 77)  # v1 writes every entry's snapshot id
    meta = icefloe.manifest_metadata(str(path))
    assert meta["format-version"] == str(version) and meta["partition-spec-id"] == "1"
    assert icefloe.Schema.from_json(meta["schema"]) == SCHEMA


def test_inheritance_and_v3_row_ids(tmp_path):
    rows = [_entry(0), _entry(1), _entry(2, status=0, seq=4)]
    m = tmp_path / "m.avro"
    mf = icefloe.write_manifest(
        str(m), _table(rows), schema=SCHEMA, spec=SPEC, format_version=3, snapshot_id=42
    )
    assert mf["sequence_number"] is None  # assigned by the list
    lst = tmp_path / "snap.avro"
    next_row_id = icefloe.write_manifest_list(
        str(lst),
        [mf],
        format_version=3,
        snapshot_id=42,
        parent_snapshot_id=41,
        sequence_number=9,
        first_row_id=1000,
    )
    # every row of the manifest gets an id: added and existing rows
    assert next_row_id == 1000 + 100 + 101 + 102
    (row,) = icefloe.read_manifest_list(str(lst)).to_pylist()
    assert (row["sequence_number"], row["min_sequence_number"], row["first_row_id"]) == (9, 4, 1000)
    entries = icefloe.read_manifest(str(m), row).to_pylist()
    assert [e["sequence_number"] for e in entries] == [9, 9, 4]  # only ADDED entries inherit
    assert [e["snapshot_id"] for e in entries] == [42, 42, 77]
    assert [e["first_row_id"] for e in entries] == [1000, 1100, 1201]
    raw = icefloe.read_manifest(str(m)).to_pylist()
    assert [e["sequence_number"] for e in raw] == [None, None, 4]


def test_delete_manifest_and_v1_refusal(tmp_path):
    rows = [_entry(0, content=2, seq=None)]
    mf = icefloe.write_manifest(
        str(tmp_path / "d.avro"),
        _table(rows),
        schema=SCHEMA,
        spec=SPEC,
        format_version=2,
        snapshot_id=1,
        content=1,
    )
    assert mf["content"] == 1
    assert icefloe.read_manifest(str(tmp_path / "d.avro")).column("equality_ids").to_pylist() == [[1]]
    with pytest.raises(errors.InvalidArgumentError):
        icefloe.write_manifest(
            str(tmp_path / "d1.avro"),
            _table(rows),
            schema=SCHEMA,
            spec=SPEC,
            format_version=1,
            snapshot_id=1,
            content=1,
        )
    with pytest.raises(errors.InvalidArgumentError):  # a delete file in a data manifest
        icefloe.write_manifest(
            str(tmp_path / "x.avro"), _table(rows), schema=SCHEMA, spec=SPEC, format_version=2, snapshot_id=1
        )


def test_bad_files_name_the_file(tmp_path):
    good = tmp_path / "m.avro"
    icefloe.write_manifest(
        str(good), _table([_entry(0)]), schema=SCHEMA, spec=SPEC, format_version=2, snapshot_id=1
    )
    data = good.read_bytes()
    for name, content in [("garbage.avro", b"not avro at all"), ("cut.avro", data[: len(data) * 2 // 3])]:
        p = tmp_path / name
        p.write_bytes(content)
        with pytest.raises(errors.InvalidMetadataError) as e:
            icefloe.read_manifest(str(p))
        assert e.value.file == str(p)
    with pytest.raises(errors.IcefloeIOError):
        icefloe.read_manifest_list(str(tmp_path / "missing.avro"))
    with pytest.raises(errors.InvalidArgumentError):
        icefloe.write_manifest(
            str(tmp_path / "y.avro"),
            _table([_entry(0)]),
            schema=SCHEMA,
            spec=SPEC,
            format_version=2,
            snapshot_id=1,
            compression="lzma",
        )


def test_projection_and_decoded_bounds(tmp_path):
    m = tmp_path / "m.avro"
    rows = [_entry(0), _entry(1)]
    rows[1]["lower_bounds"] = [(1, struct.pack("<q", -5)), (3, struct.pack("<q", 1_700_000_000_000_000))]
    icefloe.write_manifest(str(m), _table(rows), schema=SCHEMA, spec=SPEC, format_version=2, snapshot_id=1)
    slim = icefloe.read_manifest(str(m), stats=False, bounds_for=[3]).to_pylist()
    assert [r["column_sizes"] for r in slim] == [None, None]
    assert [r["lower_bounds"] for r in slim] == [[], [(3, struct.pack("<q", 1_700_000_000_000_000))]]
    assert [r["record_count"] for r in slim] == [100, 101]
    t = icefloe.read_manifest(str(m), decode_bounds=["order_id", 3])
    lower = t.column("lower_bound_values").to_pylist()
    assert [v["order_id"] for v in lower] == [0, -5]
    assert lower[0]["placed_at"] is None
    assert t.schema.field("lower_bound_values").type.field("placed_at").type == pa.timestamp("us")
    assert [v["order_id"] for v in t.column("upper_bound_values").to_pylist()] == [99, 1099]
    with pytest.raises(errors.NotFoundError):
        icefloe.read_manifest(str(m), decode_bounds=["no_such_column"])
