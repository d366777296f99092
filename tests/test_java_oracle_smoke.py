"""The Java side of the oracle on its own: py4j reaches Iceberg's classes and the helper jar,
and the Java-written tables exist. These run without icefloe."""

from __future__ import annotations

import json

import pytest

import oracle as o

pytestmark = pytest.mark.java


def test_iceberg_classes_reachable(jvm):
    ice = jvm.org.apache.iceberg
    # py4j hands Python ints to Java as Integer, so use an int column here.
    t = ice.types.Types.fromPrimitiveString("int")
    bucket = ice.transforms.Transforms.fromString(t, "bucket[16]")
    # Spec Appendix B: ints hash like longs, hash(34) = 2017239379; bucket = (hash & MAX_INT) % 16.
    assert bucket.bind(t).apply(34) == 2017239379 % 16
    assert (
        str(ice.SingleValueParser.toJson(ice.types.Types.fromPrimitiveString("date"), 17000))
        == '"2016-07-18"'
    )
    assert ice.TableMetadataParser is not None and ice.TableMetadataParser.fromJson is not None


def test_helper_apply_transform(oracle):
    out = oracle.apply_transform("bucket[16]", "string", ['"iceberg"', "null"])
    assert out == [str(1210000089 % 16), "null"]
    assert oracle.result_type("day", "timestamp") == "date"
    assert oracle.apply_transform("identity", "decimal(9,2)", ['"1.5"'])[0].startswith("!error")


def test_codec_round_trip_against_java(oracle):
    samples = {
        "date": [0, -1, 11016, -719162, 2932896],
        "time": [0, 1, 86_399_999_999, 45_296_000_001],
        "timestamp": [0, -1, 1_709_201_472_123_456, -62_135_596_800_000_000],
        "timestamptz": [0, -1, 1_709_201_472_123_456],
        "timestamp_ns": [0, -1, 1_709_201_472_123_456_789],
        "timestamptz_ns": [0, -1, -1_000_000_001],
        "decimal(9,2)": [o.decode("decimal(9,2)", '"-0.01"'), o.decode("decimal(9,2)", '"1234567.89"')],
        "fixed[3]": [b"\x00\x01\xff"],
        "binary": [b"", b"\xde\xad"],
        "uuid": ["f79c3e09-677c-4bbd-a479-3f349cb785e7"],
        "string": ["", 'a\u00e9\U0001f600\n"x'],
    }
    for typ, values in samples.items():
        encoded = [o.encode(typ, v) for v in values]
        back = oracle.apply_transform("identity", typ, encoded)
        assert [o.decode(typ, b) for b in back] == [o.decode(typ, e) for e in encoded], typ
        assert [o.decode(typ, e) for e in encoded] == values, typ


def test_java_tables_written(java_tables, oracle):
    names = {n for n, _ in java_tables}
    assert {
        "evolve_v1",
        "evolve_v2",
        "evolve_v3",
        "transforms_v2",
        "empty_v1",
        "empty_v3",
        "upgraded",
    } <= names
    for name, path in java_tables:
        facts = oracle.metadata_facts(oracle.read_metadata_file(path))
        if name.startswith("evolve_v"):
            assert facts["format-version"] == int(name[-1])
            assert {"main", "audit", "release_1"} <= set(facts["ref-names"])
            assert facts["spec-count"] >= 4 and facts["schema-count"] >= 5
        if name.startswith("empty"):
            assert facts["current-snapshot-id"] is None
    gz = [p for n, p in java_tables if n == "evolve_v2"][0]
    assert gz.name.endswith(".gz.metadata.json")


def test_java_views_written(java_views, oracle):
    for _, path in java_views:
        doc = json.loads(oracle.round_trip_view_metadata(path.read_text()))
        assert doc["format-version"] == 1
