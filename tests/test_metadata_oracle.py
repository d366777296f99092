"""icefloe's table/view metadata against Java Iceberg's parser and writer.

(a) Everything Java wrote (every metadata version of tables created through Spark SQL: formats
    1-3, schema and partition evolution, sort orders, branches/tags, gzip) parses in icefloe and
    icefloe's view of it equals Java's (`TableMetadataParser.toJson` of the same file).
(b) What icefloe writes parses in Java and Java re-serialises it to the same document.

Documents are compared as parsed JSON after `normalise`, which only removes differences the spec
allows: optional fields written as null or as an empty list/object versus omitted, and the
"no current snapshot" marker (-1, null or absent).
"""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

pytestmark = pytest.mark.java


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def normalise(doc):
    if isinstance(doc, dict):
        out = {}
        for k, v in doc.items():
            if k == "current-snapshot-id" and v == -1:
                v = None
            v = normalise(v)
            if v is None or v == [] or v == {}:
                continue
            out[k] = v
        return out
    if isinstance(doc, list):
        return [normalise(v) for v in doc]
    return doc


def diff(a, b, path="$"):
    """First few differences between two JSON values, as readable strings."""
    out = []
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append(f"{path}.{k}: missing in icefloe, java={json.dumps(b[k])[:200]}")
            elif k not in b:
                out.append(f"{path}.{k}: missing in java, icefloe={json.dumps(a[k])[:200]}")
            else:
                out.extend(diff(a[k], b[k], f"{path}.{k}"))
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out.extend(diff(x, y, f"{path}[{i}]"))
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: icefloe={json.dumps(a)[:200]} java={json.dumps(b)[:200]}")
    return out


def assert_same_doc(icefloe_doc, java_doc, what):
    a, b = normalise(icefloe_doc), normalise(java_doc)
    differences = diff(a, b)
    assert not differences, f"{what}: {len(differences)} difference(s):\n  " + "\n  ".join(differences[:15])


def _icefloe():
    import icefloe

    return icefloe


@pytest.fixture(scope="module")
def java_docs(java_metadata_versions, oracle):
    """name -> (path, Java's JSON of that file) for every metadata version Java wrote."""
    return {name: (path, oracle.read_metadata_file(path)) for name, path in java_metadata_versions}


def _ids(items):
    return [n for n, _ in items]


# ---------------------------------------------------------------------------------------------
# (a) Java writes, icefloe reads
# ---------------------------------------------------------------------------------------------


def test_every_java_metadata_version_parses_and_matches(java_docs):
    icefloe = _icefloe()
    assert len(java_docs) >= 30
    for name, (path, java_json) in java_docs.items():
        md = icefloe.TableMetadata.from_path(str(path))
        assert_same_doc(json.loads(md.to_json()), json.loads(java_json), f"{name} (from_path)")
        # Same through from_json for plain files.
        if not path.name.endswith(".gz.metadata.json"):
            md2 = icefloe.TableMetadata.from_json(path.read_text(encoding="utf-8"))
            assert md2.to_json() == md.to_json(), name


def test_accessors_match_java(java_tables, oracle):
    icefloe = _icefloe()
    for name, path in java_tables:
        java_json = oracle.read_metadata_file(path)
        facts = oracle.metadata_facts(java_json)
        java_doc = json.loads(java_json)
        md = icefloe.TableMetadata.from_path(str(path))
        assert md.format_version == facts["format-version"], name
        assert str(md.table_uuid).lower() == facts["table-uuid"].lower(), name
        assert md.location == java_doc["location"], name
        assert md.last_sequence_number == facts["last-sequence-number"], name
        assert md.current_schema_id == facts["current-schema-id"], name
        assert md.default_spec_id == facts["default-spec-id"], name
        assert md.current_snapshot_id == facts["current-snapshot-id"], name
        assert dict(md.properties) == java_doc.get("properties", {}), name
        assert len(md.schemas) == facts["schema-count"], name
        assert len(md.specs) == facts["spec-count"], name
        assert len(md.snapshots) == facts["snapshot-count"], name
        assert len(md.sort_orders) == len(java_doc["sort-orders"]), name
        assert sorted(md.refs) == facts["ref-names"], name

        schema = md.schema()
        current = [s for s in java_doc["schemas"] if s["schema-id"] == facts["current-schema-id"]][0]
        assert_same_doc(json.loads(schema.to_json()), current, f"{name} current schema")
        for fid, fname, required, ftype in oracle.current_schema_fields(java_json):
            field = schema.find_field(fname)
            assert field is not None, f"{name}: {fname} not found"
            assert (field.id, field.required) == (fid, required), f"{name}: {fname}"
            assert field.name == fname.rsplit(".", 1)[-1], f"{name}: {fname}"
            if not ftype.startswith(("struct<", "list<", "map<")):
                assert field.field_type.replace(" ", "") == ftype.replace(" ", ""), f"{name}: {fname}"
            upper = schema.find_field(fname.upper(), case_sensitive=False)
            assert upper is not None and upper.id == fid, f"{name}: {fname} (case-insensitive)"


def test_java_table_features_are_present(java_docs):
    """Guards the fixture: the interesting metadata shapes really are in the corpus."""
    docs = [json.loads(j) for _, j in java_docs.values()]
    transforms = {
        f["transform"].split("[")[0] for d in docs for s in d["partition-specs"] for f in s["fields"]
    }
    assert {"identity", "bucket", "truncate", "day", "hour", "month", "year", "void"} <= transforms
    assert {d["format-version"] for d in docs} == {1, 2, 3}
    assert any(r["type"] == "tag" for d in docs for r in d.get("refs", {}).values())
    assert any(r["type"] == "branch" and n != "main" for d in docs for n, r in d.get("refs", {}).items())
    assert any(so["fields"] for d in docs for so in d["sort-orders"])
    assert any(p.name.endswith(".gz.metadata.json") for p, _ in java_docs.values())
    assert any(
        "initial-default" in f and "write-default" in f
        for d in docs
        for s in d["schemas"]
        for f in s["fields"]
    )
    assert any("next-row-id" in d for d in docs)


def test_from_path_on_table_directory_picks_latest(java_table_dirs, java_tables):
    icefloe = _icefloe()
    latest = dict(java_tables)
    for name, table_dir in java_table_dirs:
        by_dir = icefloe.TableMetadata.from_path(str(table_dir))
        by_file = icefloe.TableMetadata.from_path(str(latest[name]))
        assert by_dir.to_json() == by_file.to_json(), name


def test_gzip_metadata_without_gz_in_name(java_docs, tmp_path):
    """A gzip-compressed file is recognised by content too (Java writes `.gz.metadata.json`,
    older writers `.metadata.json.gz`)."""
    icefloe = _icefloe()
    path, java_json = next((p, j) for p, j in java_docs.values() if p.name.endswith(".gz.metadata.json"))
    assert gzip.decompress(path.read_bytes())
    old_style = tmp_path / "00001-abc.metadata.json.gz"
    shutil.copy(path, old_style)
    md = icefloe.TableMetadata.from_path(str(old_style))
    assert_same_doc(json.loads(md.to_json()), json.loads(java_json), "gzip .metadata.json.gz")


# ---------------------------------------------------------------------------------------------
# (b) icefloe writes, Java reads
# ---------------------------------------------------------------------------------------------


def test_icefloe_output_round_trips_through_java(java_docs, oracle):
    icefloe = _icefloe()
    for name, (path, _java_json) in java_docs.items():
        text = icefloe.TableMetadata.from_path(str(path)).to_json()
        java_rt = oracle.round_trip_metadata(text)
        assert_same_doc(json.loads(text), json.loads(java_rt), f"{name}: icefloe -> Java -> JSON")
        # and icefloe reads its own output back unchanged
        assert icefloe.TableMetadata.from_json(text).to_json() == text, name


# ---------------------------------------------------------------------------------------------
# rejections agree with Java
# ---------------------------------------------------------------------------------------------


def _java_rejects(oracle, text) -> bool:
    try:
        oracle.round_trip_metadata(text)
    except Exception:  # noqa: BLE001 - py4j wraps Java's exception
        return True
    return False


def _mutations(doc):
    d = json.loads(json.dumps(doc))
    # 4 is read since the v4 increment (docs/v4.md); 5 is above every version
    d["format-version"] = 5
    yield "format-version 5", d, "UnsupportedFormatVersionError", "format-version"

    d = json.loads(json.dumps(doc))
    del d["location"]
    yield "missing location", d, "InvalidMetadataError", "location"

    d = json.loads(json.dumps(doc))
    d["schemas"][0]["fields"][0]["type"] = "varchar"
    yield "unknown type", d, "UnknownTypeError", None

    d = json.loads(json.dumps(doc))
    fields = d["schemas"][0]["fields"]
    fields[1]["id"] = fields[0]["id"]
    yield "duplicate field id", d, "FieldIdClashError", None

    d = json.loads(json.dumps(doc))
    d["last-sequence-number"] = "seven"
    yield "wrong JSON type", d, "InvalidMetadataError", "last-sequence-number"


def test_rejections_agree_with_java(java_tables, oracle):
    icefloe = _icefloe()
    errors = icefloe.errors
    path = dict(java_tables)["evolve_v2"]
    doc = json.loads(oracle.read_metadata_file(path))
    for what, bad, err_name, field in _mutations(doc):
        text = json.dumps(bad)
        assert _java_rejects(oracle, text), f"Java accepts {what}; fix the test"
        with pytest.raises(errors.IcefloeError) as info:
            icefloe.TableMetadata.from_json(text)
        assert isinstance(info.value, getattr(errors, err_name)), (
            f"{what}: got {type(info.value).__name__}: {info.value}"
        )
        if field is not None:
            assert field in (str(info.value.field or "") + str(info.value)), f"{what}: {info.value!r}"

    with pytest.raises(errors.InvalidJsonError):
        icefloe.TableMetadata.from_json(json.dumps(doc)[:-10])


def test_error_names_the_file(tmp_path):
    icefloe = _icefloe()
    bad = tmp_path / "v1.metadata.json"
    bad.write_text('{"format-version": 2,', encoding="utf-8")
    with pytest.raises(icefloe.errors.InvalidJsonError) as info:
        icefloe.TableMetadata.from_path(str(bad))
    assert info.value.file is not None and str(bad) in str(info.value.file)


# ---------------------------------------------------------------------------------------------
# views and name mappings
# ---------------------------------------------------------------------------------------------


def test_java_views_parse_and_round_trip(java_views, oracle):
    icefloe = _icefloe()
    for name, path in java_views:
        java_json = path.read_text(encoding="utf-8")
        vm = icefloe.ViewMetadata.from_path(str(path))
        text = vm.to_json()
        assert_same_doc(json.loads(text), json.loads(java_json), f"view {name}")
        assert_same_doc(
            json.loads(text),
            json.loads(oracle.round_trip_view_metadata(text)),
            f"view {name}: icefloe -> Java",
        )
        assert icefloe.ViewMetadata.from_json(java_json).to_json() == text, name


def test_name_mappings_round_trip(java_tables, oracle):
    icefloe = _icefloe()
    name_mapping = getattr(icefloe, "NameMapping", None)
    if name_mapping is None or not hasattr(name_mapping, "from_json"):
        pytest.skip("icefloe's Python API has no NameMapping.from_json/to_json (not in the current contract)")
    for name, path in java_tables:
        schema_json = oracle.current_schema_json(oracle.read_metadata_file(path))
        java_mapping = oracle.name_mapping_for_schema(schema_json)
        text = name_mapping.from_json(java_mapping).to_json()
        assert_same_doc(json.loads(text), json.loads(java_mapping), f"{name} name mapping")
        assert_same_doc(
            json.loads(text), json.loads(oracle.round_trip_name_mapping(text)), f"{name}: icefloe -> Java"
        )


# ---------------------------------------------------------------------------------------------
# documents Java's own parser tests are about: what Java accepts and rejects, and exactly what
# it writes back (key for key, in order, nulls included; no `normalise`)
# ---------------------------------------------------------------------------------------------


def _java_or_error(oracle, text, round_trip):
    try:
        return round_trip(text), None
    except Exception as e:  # noqa: BLE001 - py4j wraps Java's exception
        return None, str(e).splitlines()[0]


def _check_like_java(oracle, text, parse, round_trip, what, *, accepted):
    """Java and icefloe both accept `text` (and write back the same JSON text, key order
    included) or both refuse it (icefloe with a typed error naming a field)."""
    icefloe = _icefloe()
    java_text, java_error = _java_or_error(oracle, text, round_trip)
    assert (java_error is None) == accepted, (
        f"{what}: Java {'refuses' if java_error else 'accepts'} it; fix the test"
    )
    if not accepted:
        with pytest.raises(icefloe.errors.InvalidMetadataError) as info:
            parse(text)
        assert info.value.field, f"{what}: {info.value!r}"
        return info.value
    ours = json.loads(parse(text).to_json())
    theirs = json.loads(java_text)
    differences = diff(ours, theirs)
    assert not differences, f"{what}: {len(differences)} difference(s):\n  " + "\n  ".join(differences[:15])
    assert json.dumps(_view_maps_sorted(ours)) == json.dumps(_view_maps_sorted(theirs)), (
        f"{what}: same values, another key order"
    )
    return ours


def _view_maps_sorted(doc):
    """icefloe keeps a view's `properties` and version `summary` sorted by key (docs/conformance.md);
    Java keeps the order it read. Everything else must be in Java's order."""
    if "view-uuid" not in doc:
        return doc
    doc = json.loads(json.dumps(doc))
    if "properties" in doc:
        doc["properties"] = dict(sorted(doc["properties"].items()))
    for v in doc["versions"]:
        v["summary"] = dict(sorted(v["summary"].items()))
    return doc


def _first_doc(java_docs, version, min_snapshots=1):
    for name, (_, text) in sorted(java_docs.items()):
        doc = json.loads(text)
        if doc["format-version"] == version and len(doc.get("snapshots", [])) >= min_snapshots:
            return name, doc
    raise AssertionError(f"no v{version} metadata in the corpus")


def test_table_documents_like_javas_parser(java_docs, oracle):
    icefloe = _icefloe()

    def check(doc, what, accepted=True):
        return _check_like_java(
            oracle,
            json.dumps(doc),
            icefloe.TableMetadata.from_json,
            oracle.round_trip_metadata,
            what,
            accepted=accepted,
        )

    def copy(doc):
        return json.loads(json.dumps(doc))

    _, v2 = _first_doc(java_docs, 2, min_snapshots=2)
    assert "main" in v2["refs"]
    current = v2["current-snapshot-id"]

    # a schema must say it is a struct, at any depth
    d = copy(v2)
    del d["schemas"][0]["type"]
    assert check(d, "schema without type", accepted=False).field == "schemas[0].type"
    d = copy(v2)
    d["schemas"][0]["fields"][0]["type"] = {"element-id": 999, "element": "int", "element-required": False}
    assert check(d, "list without type", accepted=False).field == "schemas[0].fields[0].type.type"

    # refs as written: no main is added when refs exists without it
    d = copy(v2)
    del d["refs"]["main"]
    out = check(d, "refs without main")
    assert "main" not in out["refs"] and out["current-snapshot-id"] == current
    assert (
        icefloe.TableMetadata.from_json(json.dumps(d)).current_snapshot_id
        == oracle.metadata_facts(json.dumps(d))["current-snapshot-id"]
        == current
    )
    d = copy(v2)
    d["refs"] = {}
    assert check(d, "empty refs")["refs"] == {}
    d = copy(v2)
    del d["refs"]
    assert check(d, "no refs field")["refs"] == {"main": {"snapshot-id": current, "type": "branch"}}
    for key in (
        "refs",
        "snapshots",
        "properties",
        "statistics",
        "partition-statistics",
        "schemas",
        "partition-specs",
        "sort-orders",
    ):
        d = copy(v2)
        d[key] = None
        assert check(d, f"{key} null", accepted=False).field == key
    # a negative current snapshot id that names no snapshot: none, when refs are written...
    d = copy(v2)
    d["refs"] = {k: r for k, r in d["refs"].items() if k != "main"}
    d["current-snapshot-id"] = -5
    assert check(d, "negative current snapshot id, refs without main")["current-snapshot-id"] == -1
    # ...but without refs Java makes a main branch of it, which names no snapshot
    del d["refs"]
    assert check(d, "negative current snapshot id, no refs", accepted=False).field == "current-snapshot-id"

    # sequence numbers: written only above 0, as Java's SnapshotParser
    d = copy(v2)
    d["snapshots"][0].pop("sequence-number", None)
    assert "sequence-number" not in check(d, "v2 snapshot without sequence number")["snapshots"][0]
    d = copy(v2)
    d["snapshots"][0]["sequence-number"] = 0
    assert "sequence-number" not in check(d, "v2 snapshot with sequence number 0")["snapshots"][0]
    name, v1 = _first_doc(java_docs, 1)
    d = copy(v1)
    for s in d["snapshots"]:
        s["sequence-number"] = 0
    out = check(d, f"{name}: v1 snapshots with sequence number 0")
    assert all("sequence-number" not in s for s in out["snapshots"])

    # summaries Java reads leniently
    d = copy(v2)
    d["snapshots"][0]["summary"] = {}
    assert "summary" not in check(d, "empty summary")["snapshots"][0]
    d = copy(v2)
    d["snapshots"][0]["summary"] = {"added-records": "1"}
    assert check(d, "summary without operation")["snapshots"][0]["summary"] == {
        "operation": "overwrite",
        "added-records": "1",
    }

    # a v1 table without a uuid
    d = copy(v1)
    del d["table-uuid"]
    assert check(d, "v1 without table-uuid")["table-uuid"] is None


def test_icefloe_writes_javas_text_for_javas_tables(java_docs, oracle):
    """Every metadata file Java wrote, re-serialised by icefloe, is Java's own serialisation of
    that file: the same keys in the same order, with the same values."""
    icefloe = _icefloe()
    for name, (path, java_json) in java_docs.items():
        ours = json.loads(icefloe.TableMetadata.from_path(str(path)).to_json())
        theirs = json.loads(java_json)
        differences = diff(ours, theirs)
        assert not differences, f"{name}: {len(differences)} difference(s):\n  " + "\n  ".join(
            differences[:15]
        )
        assert json.dumps(ours) == json.dumps(theirs), f"{name}: same values, another key order"


def test_view_documents_like_javas_parser(java_views, oracle):
    icefloe = _icefloe()

    def check(doc, what, accepted=True):
        return _check_like_java(
            oracle,
            json.dumps(doc),
            icefloe.ViewMetadata.from_json,
            oracle.round_trip_view_metadata,
            what,
            accepted=accepted,
        )

    for name, path in java_views:
        base = json.loads(path.read_text(encoding="utf-8"))
        check(base, f"{name} as Java wrote it")

        # Java reads and drops a top-level current-schema-id
        d = json.loads(json.dumps(base))
        d["current-schema-id"] = d["versions"][0]["schema-id"]
        assert "current-schema-id" not in check(d, f"{name} with current-schema-id")

        # two SQL representations of one dialect (case-insensitive) are read on purpose
        d = json.loads(json.dumps(base))
        current = next(v for v in d["versions"] if v["version-id"] == d["current-version-id"])
        first = current["representations"][0]
        current["representations"].append(
            {"type": "sql", "sql": "SELECT 2", "dialect": first["dialect"].upper()}
        )
        out = check(d, f"{name} with two queries for one dialect")
        cur = next(v for v in out["versions"] if v["version-id"] == out["current-version-id"])
        assert len(cur["representations"]) == len(current["representations"])

        # a schema without its type is refused by both
        d = json.loads(json.dumps(base))
        del d["schemas"][0]["type"]
        assert check(d, f"{name} schema without type", accepted=False).field == "schemas[0].type"
