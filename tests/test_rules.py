"""Spec rules written once, in Rust, and taken by the Python package through ``_native``
(no Java): where new files go, the reserved field ids, single values in their JSON form
(Appendix D), the plan's schema metadata keys, default partition field names and ids, and
the isolation levels. Each test would catch a Python copy of a rule drifting from Rust."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe import _native, errors
from icefloe.executor import read as reader
from icefloe.executor.position_deletes import write_position_deletes
from icefloe.executor.write import SPEC_ID_KEY, write_data_files
from icefloe.update.row_deletes import check_isolation_level

# Java 1.11's LocationProviders message for the deprecated properties
DEPRECATED = "has been deprecated and will be removed in 2.0.0, use 'write.data.path' instead"


@pytest.fixture
def cat(tmp_path):
    c = icefloe.load_catalog("t", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=(tmp_path / "wh").as_uri())
    c.create_namespace("db")
    return c


def _rows(ids, category="a") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "category": [category] * len(ids)})


SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("category", pa.string())])


# --- locations --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "props",
    [
        {},
        {"write.data.path": "OUT"},
        {"write.object-storage.enabled": "true"},
        {"write.object-storage.enabled": "true", "write.data.path": "OUT"},
    ],
)
@pytest.mark.parametrize("version", [2, 3])
def test_delete_files_go_where_the_location_provider_puts_them(cat, tmp_path, props, version):
    """Data files, position delete files (v2) and DVs (v3) are all placed by the Rust
    location provider (Java's ``newDataLocation``), not by a Python rule of their own."""
    out = (tmp_path / "elsewhere").as_uri()
    props = {k: out if v == "OUT" else v for k, v in props.items()}
    t = cat.create_table("db.t", SCHEMA, format_version=version, properties=props)
    t.append(_rows(range(10)))
    t = cat.load_table("db.t")
    provider = _native.LocationProvider(t.metadata)
    want_root = out if "write.data.path" in props else f"{t.metadata.location.rstrip('/')}/data"
    assert provider.data_location == want_root

    data = t.scan().plan_arrow().column("file_path").to_pylist()
    written = write_position_deletes(t.metadata, {data[0]: [1, 2]})
    paths = written.added.column("file_path").to_pylist()
    assert paths
    for p in data + paths:
        assert p.startswith(want_root + "/")
        name = p.rsplit("/", 1)[1]
        # the provider gives exactly this location for a file of this name (with object
        # storage: the hash directories of the name)
        assert p == provider.new_data_location(name)

    # and table.delete (driver-side placement of each group's Puffin file, or the v2 files)
    t.delete("id = 5")
    t = cat.load_table("db.t")
    for row in t.scan().plan_arrow().column("deletes").to_pylist()[0]:
        name = row["file_path"].rsplit("/", 1)[1]
        assert row["file_path"] == provider.new_data_location(name)


@pytest.mark.parametrize("key", ["write.folder-storage.path", "write.object-storage.path"])
def test_deprecated_location_properties_are_refused_everywhere(cat, tmp_path, key):
    """Java 1.11 refuses the deprecated properties (unless ``write.data.path`` is set); so
    does every Python path that places a file: the error is the Rust provider's."""
    props = {key: (tmp_path / "legacy").as_uri(), "format-version": "3"}
    if key == "write.object-storage.path":
        props["write.object-storage.enabled"] = "true"
    t = cat.create_table("db.t", SCHEMA, properties=props)
    with pytest.raises(
        errors.InvalidArgumentError, match=re.escape(f"Property '{key}' {DEPRECATED}")
    ) as rust:
        _native.LocationProvider(t.metadata)
    message = str(rust.value)
    with pytest.raises(errors.InvalidArgumentError) as e:
        write_data_files(
            t.metadata, pa.table({"id": pa.array([], pa.int64()), "category": pa.array([], pa.string())})
        )
    assert str(e.value) == message
    with pytest.raises(errors.InvalidArgumentError) as e:
        t.append(_rows([1]))
    assert str(e.value) == message
    with pytest.raises(errors.InvalidArgumentError) as e:
        write_position_deletes(t.metadata, {"file:///x.parquet": [0]})
    assert str(e.value) == message
    assert not (tmp_path / "legacy").exists()

    # write.data.path wins, as in Java: the deprecated key is then not read at all
    fixed = _native.LocationProvider(t.metadata, {"write.data.path": (tmp_path / "d").as_uri()})
    assert fixed.data_location == (tmp_path / "d").as_uri()


def test_write_overrides_go_through_the_same_rule(cat, tmp_path):
    t = cat.create_table("db.t", SCHEMA)
    with pytest.raises(errors.InvalidArgumentError, match=DEPRECATED):
        _native.LocationProvider(t.metadata, {"write.folder-storage.path": (tmp_path / "x").as_uri()})
    with pytest.raises(errors.InvalidArgumentError, match=DEPRECATED):
        write_data_files(
            t.metadata, _rows([1]), properties={"write.folder-storage.path": (tmp_path / "x").as_uri()}
        )
    elsewhere = (tmp_path / "over").as_uri()
    files = write_data_files(t.metadata, _rows([1]), properties={"write.data.path": elsewhere})
    (path,) = files.column("file_path").to_pylist()
    assert path == _native.LocationProvider(t.metadata, {"write.data.path": elsewhere}).new_data_location(
        path.rsplit("/", 1)[1]
    )
    assert files.schema.metadata[SPEC_ID_KEY] == b"0"
    assert SPEC_ID_KEY == _native.SPEC_ID_KEY


# --- reserved field ids -----------------------------------------------------------------------

# the spec's table ("Reserved Field IDs"), written out here as the reference
SPEC_RESERVED = {
    "_file": 2147483646,
    "_pos": 2147483645,
    "_deleted": 2147483644,
    "_spec_id": 2147483643,
    "_partition": 2147483642,
    "file_path": 2147483546,
    "pos": 2147483545,
    "row": 2147483544,
    "_change_type": 2147483543,
    "_change_ordinal": 2147483542,
    "_commit_snapshot_id": 2147483541,
    "_row_id": 2147483540,
    "_last_updated_sequence_number": 2147483539,
}


def test_reserved_field_ids_are_the_specs_and_the_readers(cat):
    assert _native.RESERVED_FIELD_IDS == SPEC_RESERVED
    t = cat.create_table("db.t", SCHEMA, format_version=2)
    t.append(_rows(range(4)))
    t = cat.load_table("db.t")
    names = list(reader.METADATA_COLUMNS)
    out = reader.output_schema(t.scan().plan_arrow().schema, names)
    for name in names:
        assert int(out.field(name).metadata[b"PARQUET:field_id"]) == SPEC_RESERVED[name]
    (path,) = t.scan().plan_arrow().column("file_path").to_pylist()
    written = write_position_deletes(t.metadata, {path: [0]})
    import pyarrow.parquet as pq

    delete_file = written.added.column("file_path")[0].as_py()
    schema = pq.read_schema(delete_file.removeprefix("file://"))
    assert {f.name: int(f.metadata[b"PARQUET:field_id"]) for f in schema} == {
        "file_path": SPEC_RESERVED["file_path"],
        "pos": SPEC_RESERVED["pos"],
    }


def test_metadata_column_types_are_the_specs():
    spec_types = {
        "_file": "string",
        "_pos": "long",
        "_deleted": "boolean",
        "_spec_id": "int",
        "_row_id": "long",
    }
    for name, t in spec_types.items():
        assert _native.RESERVED_FIELD_TYPES[name] == t
        assert reader.METADATA_COLUMNS[name][1] == _native.arrow_type(t)
    assert reader.METADATA_COLUMNS["_last_updated_sequence_number"][1] == pa.int64()


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("decimal(9, 2)", ("decimal", [9, 2])),
        ("decimal(38,0)", ("decimal", [38, 0])),
        ("fixed[16]", ("fixed", [16])),
        ("long", ("long", [])),
        ("timestamptz_ns", ("timestamptz_ns", [])),
        ("decimal(39, 2)", None),  # beyond the spec's precision
        ("fixed[x]", None),
        ("nope", None),
    ],
)
def test_type_strings_are_parsed_in_rust(text, want):
    assert _native.primitive_type_parameters(text) == want


def test_spark_type_mapping_takes_type_strings_from_rust():
    pytest.importorskip("pyspark")
    from pyspark.sql import types as ST

    from icefloe.spark import types as T

    assert T.spark_type("decimal(12, 3)") == ST.DecimalType(12, 3)
    assert T.spark_type("fixed[4]") == ST.BinaryType()
    with pytest.raises(errors.UnsupportedError):
        T.spark_type("decimal(39, 2)")  # not an Iceberg type: nothing Spark could read


# --- plan keys --------------------------------------------------------------------------------


def test_plan_keys_are_the_ones_rust_writes(cat):
    t = cat.create_table("db.t", SCHEMA)
    t.append(_rows(range(3)))
    plan = cat.load_table("db.t").scan().plan_arrow()
    keys = set(plan.schema.metadata)
    for k in (
        _native.SNAPSHOT_ID_KEY,
        _native.SCHEMA_KEY,
        _native.PROJECTED_SCHEMA_KEY,
        _native.SPECS_KEY,
        _native.RESIDUALS_KEY,
        _native.FILTER_KEY,
        _native.FORMAT_VERSION_KEY,
    ):
        assert k in keys, k
    assert all(k.startswith(b"icefloe.") for k in keys if k != b"ARROW:schema")


def test_no_python_module_spells_a_plan_key_or_reserved_id():
    """The keys and ids live in Rust; a literal copy in the package would drift."""
    root = Path(icefloe.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text()
        assert not re.search(r"""b["']icefloe\.""", text), path
        assert not re.search(r"21474835\d\d|21474836\d\d", text), path
        assert "write.folder-storage.path" not in text, path


# --- single values (Appendix D) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_json", "value", "want"),
    [
        ("int", 34, 34),
        ("long", -7, -7),
        ("double", 1.5, 1.5),
        ("date", "2017-11-16", dt.date(2017, 11, 16)),
        ("time", "22:31:08.123456", dt.time(22, 31, 8, 123456)),
        ("timestamp", "2017-11-16T22:31:08.000001", dt.datetime(2017, 11, 16, 22, 31, 8, 1)),
        (
            "timestamptz",
            "2017-11-16T22:31:08.000001+00:00",
            dt.datetime(2017, 11, 16, 22, 31, 8, 1, tzinfo=dt.timezone.utc),
        ),
        ("decimal(9, 2)", "14.20", decimal.Decimal("14.20")),
        ("string", "iceberg", "iceberg"),
        (
            "uuid",
            "f79c3e09-677c-4bbd-a479-3f349cb785e7",
            uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7").bytes,
        ),
        ("fixed[2]", "0A0B", b"\x0a\x0b"),
        ("binary", "0A0B", b"\x0a\x0b"),
    ],
)
def test_single_values_parse_in_rust(type_json, value, want):
    arr = _native.single_values_to_arrow(json.dumps(type_json), [json.dumps(value), "null"])
    assert arr.to_pylist() == [want, None]


def test_nanosecond_timestamps_keep_their_nanoseconds():
    arr = _native.single_values_to_arrow('"timestamp_ns"', ['"1970-01-01T00:00:01.000000001"'])
    assert arr.type == pa.timestamp("ns")
    assert arr.cast(pa.int64()).to_pylist() == [1_000_000_001]


def test_struct_values_are_keyed_by_field_id():
    t = {
        "type": "struct",
        "fields": [
            {"id": 1, "name": "x", "required": False, "type": "int"},
            {"id": 2, "name": "y", "required": False, "type": "date"},
        ],
    }
    arr = _native.single_values_to_arrow(json.dumps(t), ['{"1": 3, "2": "1970-01-02"}', "{}", "null"])
    assert arr.to_pylist() == [{"x": 3, "y": dt.date(1970, 1, 2)}, {"x": None, "y": None}, None]
    assert [int(f.metadata[b"PARQUET:field_id"]) for f in arr.type] == [1, 2]


def test_bad_single_values_are_invalid_arguments():
    # Appendix D: a timestamptz's offset must be +00:00 (the Python parser this replaced took
    # any offset)
    with pytest.raises(errors.InvalidArgumentError, match=re.escape("+00:00")):
        _native.single_values_to_arrow('"timestamptz"', ['"2017-11-16T23:31:08+01:00"'])
    with pytest.raises(errors.InvalidArgumentError):
        _native.single_values_to_arrow('"date"', ['"not a date"'])
    with pytest.raises(errors.InvalidArgumentError):
        _native.single_values_to_arrow('"int"', ['"1"'])


def test_reader_defaults_and_residuals_use_the_rust_values(cat):
    """A v3 ``initial-default`` of a timestamp with a zone offset, and a residual on it: the
    reader's values are Rust's parse of the JSON."""
    t = cat.create_table("db.t", SCHEMA, format_version=3, partition_spec=[("category", "identity")])
    t.append(_rows([1, 2], "a"))
    with t.update_schema() as u:
        u.add_column("ts", "timestamptz", default="2020-01-01T01:00:00.000001+00:00")
    t = cat.load_table("db.t")
    default = t.schema().find_field("ts").initial_default
    got = t.scan().to_arrow()
    want = _native.single_values_to_arrow('"timestamptz"', [json.dumps(default)])[0]
    assert got.column("ts").to_pylist() == [want.as_py()] * 2
    assert t.scan(row_filter="ts = '2020-01-01T01:00:00.000001+00:00'").to_arrow().num_rows == 2
    assert t.scan(row_filter="ts > '2020-01-01T01:00:00.000001+00:00'").to_arrow().num_rows == 0
    assert (
        t.scan(row_filter="ts in ('2020-01-01T02:00:00.000001+01:00', '1999-01-01T00:00:00+00:00')")
        .to_arrow()
        .num_rows
        == 2
    )


# --- partition field names and ids, isolation levels ------------------------------------------


@pytest.mark.parametrize(
    ("column", "transform", "name"),
    [
        ("id", "identity", "id"),
        ("id", "bucket[16]", "id_bucket"),
        ("category", "truncate[4]", "category_trunc"),
        ("category", "void", "category_null"),
    ],
)
def test_default_partition_names_and_ids_come_from_rust(cat, column, transform, name):
    assert _native.default_partition_field_name(column, transform) == name
    t = cat.create_table("db.t", SCHEMA, partition_spec=[(column, transform), ("id", "identity", "other")])
    fields = t.metadata.spec().fields
    assert [(f.name, f.field_id) for f in fields] == [
        (name, _native.PARTITION_DATA_ID_START),
        ("other", _native.PARTITION_DATA_ID_START + 1),
    ]
    assert _native.PARTITION_DATA_ID_START == 1000  # the spec's first partition field id


def test_isolation_levels_are_the_commit_layers():
    assert check_isolation_level("serializable") == "serializable"
    assert check_isolation_level("SNAPSHOT") == "snapshot"  # any case, as Java's fromName
    with pytest.raises(errors.InvalidArgumentError, match="isolation_level") as e:
        check_isolation_level("read-committed")
    assert isinstance(e.value, ValueError)
    assert e.value.field == "isolation_level"


def test_delete_refuses_an_unknown_isolation_level(cat):
    t = cat.create_table("db.t", SCHEMA, format_version=2)
    t.append(_rows(range(3)))
    with pytest.raises(errors.InvalidArgumentError, match="isolation_level"):
        cat.load_table("db.t").delete("id = 1", isolation_level="read-committed")


# --- typed errors -----------------------------------------------------------------------------


def test_argument_errors_are_typed_and_keep_their_builtin_bases(cat):
    t = cat.create_table("db.t", SCHEMA)
    with pytest.raises(errors.InvalidArgumentTypeError) as e:
        t.scan(selected_fields="id")
    assert isinstance(e.value, TypeError) and isinstance(e.value, errors.InvalidArgumentError)
    with pytest.raises(errors.InvalidArgumentError) as e2:
        t.scan(snapshot_id=1, ref="main")
    assert isinstance(e2.value, ValueError)
    with pytest.raises(errors.InvalidArgumentError):
        icefloe.Table.from_metadata(t.metadata_location).transaction().commit_transaction()
