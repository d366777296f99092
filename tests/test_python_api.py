"""The Python API on hand-written, spec-faithful fixtures (no Java needed).

The fixtures are shared with the Rust integration tests (crates/icefloe/tests/fixtures).
"""

from __future__ import annotations

import ast
import datetime as dt
import decimal
import gzip
import json
import shutil
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe import _native, errors, transforms
from icefloe.cli import main as cli_main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "crates" / "icefloe" / "tests" / "fixtures"
V1 = FIXTURES / "metadata" / "v1-deprecated.metadata.json"
V2 = FIXTURES / "metadata" / "v2-full.metadata.json"
V2_GZ = FIXTURES / "metadata" / "v2-full.gz.metadata.json"
V3 = FIXTURES / "metadata" / "v3-lineage.metadata.json"
VIEW = FIXTURES / "view" / "multi-dialect.json"


# --- the stub matches the module ------------------------------------------------------------


def _stub_names() -> dict[str, set[str]]:
    tree = ast.parse((ROOT / "python" / "icefloe" / "_native.pyi").read_text())
    out: dict[str, set[str]] = {"": set()}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[""].add(node.name)
            # dunders are documented in the stub for readers, but not compared
            out[node.name] = {
                n.name for n in node.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
            }
        elif isinstance(node, ast.FunctionDef):
            out[""].add(node.name)
        elif isinstance(node, ast.AnnAssign):
            out[""].add(node.target.id)
    return out


def test_stub_matches_native_module():
    stub = _stub_names()
    # private functions (`_project`, for the oracle tests) are in the stub too; dunders are not
    module_names = {n for n in dir(_native) if not n.startswith("__")} | {"__version__"}
    assert stub[""] == module_names
    for cls, members in stub.items():
        if not cls:
            continue
        actual = {n for n in dir(getattr(_native, cls)) if not n.startswith("_")}
        assert members == actual, cls


# --- table metadata -------------------------------------------------------------------------


def test_v2_metadata_fields():
    md = icefloe.TableMetadata.from_path(str(V2))
    assert md.format_version == 2
    assert md.table_uuid == "9c12d441-03fe-4693-9a96-a0705ddf69c1"
    assert md.location == "s3://bucket/warehouse/db.db/orders"
    assert md.last_sequence_number == 34
    assert md.current_snapshot_id == 3055729675574597006
    assert [s.snapshot_id for s in md.snapshots] == [
        3055729675574597004,
        3055729675574597005,
        3055729675574597006,
    ]
    assert md.current_snapshot().snapshot_id == md.current_snapshot_id
    schema = md.schema()
    assert schema.schema_id == 1 and schema.identifier_field_ids == [1]
    assert schema.find_field("ORDER_ID", case_sensitive=False).id == 1
    assert schema.find_field("ORDER_ID") is None
    assert schema.find_field("amount").field_type.startswith("decimal(12")
    assert [s.schema_id for s in md.schemas] == [0, 1]
    refs = md.refs
    assert set(refs) == {"main", "audit", "release-1"}
    assert refs["audit"].type == "branch" and refs["audit"].min_snapshots_to_keep == 3
    assert refs["release-1"].type == "tag" and refs["release-1"].max_ref_age_ms == 31536000000
    assert md.snapshot_by_ref("release-1").snapshot_id == 3055729675574597004
    assert md.spec().spec_id == md.default_spec_id == 1
    assert md.sort_order().order_id == 1
    assert len(md.statistics) == 1 and len(md.partition_statistics) == 1
    ancestors = [s.snapshot_id for s in md.ancestors_of(md.current_snapshot_id)]
    assert ancestors[0] == md.current_snapshot_id
    assert "TableMetadata(format_version=2" in repr(md)


def test_gzip_metadata_equals_plain():
    plain = icefloe.TableMetadata.from_path(str(V2))
    gz = icefloe.TableMetadata.from_path(str(V2_GZ))
    assert json.loads(plain.to_json()) == json.loads(gz.to_json())


def test_v1_deprecated_fields_get_appendix_e_defaults():
    md = icefloe.TableMetadata.from_path(str(V1))
    assert md.format_version == 1
    assert md.last_sequence_number == 0
    assert [s.sequence_number for s in md.snapshots] == [0, 0]
    assert md.current_schema_id == 0 and md.default_spec_id == 0
    assert [f.field_id for f in md.spec().fields] == [1000, 1001][: len(md.spec().fields)]
    assert md.sort_order().is_unsorted()
    assert md.refs["main"].snapshot_id == md.current_snapshot_id


def test_v3_row_lineage_and_encryption():
    md = icefloe.TableMetadata.from_path(str(V3))
    assert md.format_version == 3
    assert md.next_row_id == 375
    assert [k["key-id"] for k in md.encryption_keys] == ["5f819b", "kms-root"]
    spec = md.spec()
    assert [f.transform for f in spec.fields] == ["hour", "geohash[6]"]  # unknown transform kept
    assert spec.fields[1].source_ids == [2, 3]
    ptype = spec.partition_type(md.schema())
    assert [(f.id, f.field_type) for f in ptype] == [(1000, "int"), (1001, "string")]
    assert md.schema().find_field("attrs").field_type == "variant"
    assert all(s.first_row_id is not None for s in md.snapshots)


@pytest.mark.parametrize("path", [V1, V2, V3], ids=lambda p: p.name)
def test_json_round_trip(path):
    md = icefloe.TableMetadata.from_path(str(path))
    again = icefloe.TableMetadata.from_json(md.to_json())
    assert json.loads(again.to_json()) == json.loads(md.to_json())
    assert json.loads(md.to_json(pretty=True)) == json.loads(md.to_json())


def test_write_plain_and_gzip(tmp_path):
    md = icefloe.TableMetadata.from_path(str(V2))
    plain = tmp_path / "v1.metadata.json"
    gz = tmp_path / "v2.gz.metadata.json"
    md.write(str(plain))
    md.write(str(gz), compress=True)
    assert gzip.decompress(gz.read_bytes()).decode() == plain.read_text()
    with pytest.raises(errors.IcefloeIOError):
        md.write(str(plain))  # metadata files are never overwritten


def test_table_directory_resolves_latest_metadata(tmp_path):
    meta = tmp_path / "metadata"
    meta.mkdir()
    shutil.copy(V1, meta / "v1.metadata.json")
    shutil.copy(V2, meta / "v2.metadata.json")
    (meta / "version-hint.text").write_text("2")
    assert icefloe.TableMetadata.from_path(str(tmp_path)).format_version == 2
    with pytest.raises(errors.NotFoundError):
        icefloe.TableMetadata.from_path(str(tmp_path / "metadata"))  # no metadata/ under it


# --- errors name the file and the field -----------------------------------------------------


def _broken(tmp_path, mutate) -> Path:
    doc = json.loads(V2.read_text())
    mutate(doc)
    p = tmp_path / "broken.metadata.json"
    p.write_text(json.dumps(doc))
    return p


def test_invalid_json(tmp_path):
    p = tmp_path / "bad.metadata.json"
    p.write_text('{"format-version": 2,')
    with pytest.raises(errors.InvalidJsonError) as e:
        icefloe.TableMetadata.from_path(str(p))
    assert e.value.file == str(p)


def test_missing_required_field_names_file_and_field(tmp_path):
    p = _broken(tmp_path, lambda d: d.pop("last-sequence-number"))
    with pytest.raises(errors.InvalidMetadataError) as e:
        icefloe.TableMetadata.from_path(str(p))
    assert (e.value.file, e.value.field) == (str(p), "last-sequence-number")
    assert str(p) in str(e.value)


def test_unknown_type_and_field_id_clash(tmp_path):
    def bad_type(d):
        d["schemas"][0]["fields"][1]["type"] = "varchar"

    with pytest.raises(errors.UnknownTypeError) as e:
        icefloe.TableMetadata.from_path(str(_broken(tmp_path, bad_type)))
    assert e.value.field == "schemas[0].fields[1].type"

    def clash(d):
        d["schemas"][0]["fields"][1]["id"] = 1

    with pytest.raises(errors.FieldIdClashError) as e:
        icefloe.TableMetadata.from_json(json.dumps(json.loads(_broken(tmp_path, clash).read_text())))
    assert e.value.file is None and e.value.field.startswith("schemas[0]")
    assert isinstance(e.value, errors.InvalidMetadataError)


def test_unsupported_format_version():
    with pytest.raises(errors.UnsupportedFormatVersionError) as e:
        icefloe.TableMetadata.from_json(json.dumps({**json.loads(V2.read_text()), "format-version": 5}))
    assert e.value.field == "format-version"


# --- views and name mappings ----------------------------------------------------------------


def test_view_metadata():
    vm = icefloe.ViewMetadata.from_path(str(VIEW))
    assert vm.view_uuid == "fa6506c3-7681-40c8-86dc-e36561f83385"
    assert vm.current_version_id == 3
    assert vm.current_version().version_id == 3
    assert vm.sql_for("spark") is not None
    assert vm.schema().schema_id == vm.current_version().schema_id
    assert json.loads(icefloe.ViewMetadata.from_json(vm.to_json()).to_json()) == json.loads(vm.to_json())
    with pytest.raises(errors.UnsupportedFormatVersionError):
        icefloe.ViewMetadata.from_json(json.dumps({**json.loads(vm.to_json()), "format-version": 2}))


def test_name_mapping_from_schema():
    schema = icefloe.TableMetadata.from_path(str(V2)).schema()
    nm = icefloe.NameMapping.from_schema(schema)
    assert nm.find(["customer"]) == schema.find_field("customer").id
    assert nm.find(["nope"]) is None
    assert icefloe.NameMapping.from_json(nm.to_json()).to_json() == nm.to_json()


# --- transforms -----------------------------------------------------------------------------


def test_transform_spec_examples():
    # Appendix B: bucket hashes are (hash & MAX) % N; with N = MAX the hash itself shows.
    big = "bucket[2147483647]"
    assert transforms.apply_scalar(big, "int", 34) == 2017239379
    assert transforms.apply_scalar(big, "long", 34) == 2017239379
    assert transforms.apply_scalar(big, "decimal(4, 2)", decimal.Decimal("14.20")) == -500754589 & 0x7FFFFFFF
    assert transforms.apply_scalar(big, "date", dt.date(2017, 11, 16)) == -653330422 & 0x7FFFFFFF
    assert transforms.apply_scalar(big, "string", "iceberg") == 1210000089
    assert (
        transforms.apply_scalar(big, "uuid", uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")) == 1488055340
    )
    assert transforms.apply_scalar(big, "binary", b"\x00\x01\x02\x03") == -188683207 & 0x7FFFFFFF
    # truncate examples of the spec
    assert transforms.apply_scalar("truncate[10]", "int", -1) == -10
    assert transforms.apply_scalar(
        "truncate[50]", "decimal(4, 2)", decimal.Decimal("10.65")
    ) == decimal.Decimal("10.50")
    assert transforms.apply_scalar("truncate[3]", "string", "iceberg") == "ice"
    assert transforms.apply_scalar("truncate[3]", "binary", b"\x01\x02\x03\x04\x05") == b"\x01\x02\x03"
    assert transforms.apply_scalar("truncate[2]", "string", "😀é😀") == "😀é"


def test_transform_arrays_keep_nulls_and_chunks():
    out = transforms.apply("day", pa.array([0, -1, None, 86_400_000_000], pa.timestamp("us")))
    assert out.type == pa.int32() and out.to_pylist() == [0, -1, None, 1]
    chunked = transforms.apply("truncate[2]", pa.chunked_array([["abc", None], ["xyz"]]))
    assert isinstance(chunked, pa.ChunkedArray) and chunked.to_pylist() == ["ab", None, "xy"]
    assert transforms.apply("void", pa.array([1, 2], pa.int64())).null_count == 2
    assert transforms.source_type_of(pa.decimal128(9, 2)) == "decimal(9, 2)"
    assert transforms.arrow_type("timestamptz_ns") == pa.timestamp("ns", tz="UTC")


def test_transform_errors():
    with pytest.raises(errors.InvalidArgumentError):
        transforms.apply("bucket[4]", pa.array([1.5]))
    with pytest.raises(errors.InvalidArgumentError):
        transforms.apply("bucket[0]", pa.array([1]))
    with pytest.raises(errors.InvalidArgumentError):
        transforms.apply("hour", pa.array([1], pa.int32()), "date")  # int32 array is not a date array
    with pytest.raises(errors.UnsupportedError):
        transforms.apply("zorder", pa.array([1]))


# --- CLI ------------------------------------------------------------------------------------


def test_cli_show_and_transform(capsys):
    assert cli_main(["show", str(V2)]) == 0
    out = capsys.readouterr().out
    assert "format version 2" in out
    assert "3055729675574597006 (current)" in out
    assert "tag    release-1: 3055729675574597004" in out
    assert "1: order_id required long" in out
    assert cli_main(["transform", "bucket[16]", "long", "34"]) == 0
    assert capsys.readouterr().out.strip() == f"bucket[16](34) = {2017239379 % 16}"
    assert cli_main(["view", str(VIEW)]) == 0
    assert "[spark]" in capsys.readouterr().out


def test_cli_reports_errors(tmp_path, capsys):
    p = tmp_path / "x.metadata.json"
    p.write_text("{}")
    assert cli_main(["schema", str(p)]) == 1
    assert "InvalidMetadataError" in capsys.readouterr().err
