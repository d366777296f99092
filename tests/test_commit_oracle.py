"""icefloe's commits against Java Iceberg 1.11.

New-table metadata: icefloe's `MetadataBuilder::new_table` and Java's
`TableMetadata.newTableMetadata` build the same metadata from the same schema, partition spec,
sort order, location and properties (fresh column ids in Java's order, partition field ids from
1000, sort order id 1, persisted default properties), for format versions 1 to 3.

Create-or-replace: `MetadataBuilder::replace` and Java's `TableMetadata.buildReplacement` on the
same base give the same metadata (column ids kept by name, partition field ids kept by source and
transform in v2+, v1's void carry-over, history kept, `main` removed, the base file logged).

Documents are compared as parsed JSON, without `table-uuid` and `last-updated-ms` (random / the
clock).
"""

from __future__ import annotations

import json

import pytest

from icefloe import _native

pytestmark = pytest.mark.java

NESTED_SCHEMA = {
    "type": "struct",
    "schema-id": 3,
    "identifier-field-ids": [20],
    "fields": [
        {"id": 20, "name": "id", "required": True, "type": "long"},
        {"id": 21, "name": "ts", "required": False, "type": "timestamptz"},
        {
            "id": 22,
            "name": "tags",
            "required": False,
            "type": {"type": "list", "element-id": 30, "element-required": False, "element": {
                "type": "struct",
                "fields": [
                    {"id": 31, "name": "k", "required": True, "type": "string"},
                    {"id": 32, "name": "v", "required": False, "type": "double"},
                ],
            }},
        },
        {
            "id": 23,
            "name": "attrs",
            "required": False,
            "type": {"type": "map", "key-id": 40, "key": "string", "value-id": 41,
                     "value-required": True, "value": {"type": "list", "element-id": 42,
                                                        "element-required": True, "element": "int"}},
        },
        {
            "id": 24,
            "name": "loc",
            "required": True,
            "type": {"type": "struct", "fields": [
                {"id": 50, "name": "lat", "required": True, "type": "float"},
                {"id": 51, "name": "city", "required": False, "type": "string"},
            ]},
        },
        {"id": 25, "name": "price", "required": False, "type": "decimal(10, 2)"},
    ],
}

SPECS = {
    "unpartitioned": {"spec-id": 0, "fields": []},
    "many": {"spec-id": 5, "fields": [
        {"source-id": 21, "field-id": 1007, "name": "ts_day", "transform": "day"},
        {"source-id": 20, "field-id": 1003, "name": "id_bucket", "transform": "bucket[16]"},
        {"source-id": 51, "field-id": 1001, "name": "city", "transform": "identity"},
        {"source-id": 25, "field-id": 1000, "name": "price_trunc", "transform": "truncate[4]"},
    ]},
}

ORDERS = {
    "unsorted": {"order-id": 0, "fields": []},
    "sorted": {"order-id": 4, "fields": [
        {"transform": "identity", "source-id": 51, "direction": "asc", "null-order": "nulls-first"},
        {"transform": "bucket[4]", "source-id": 20, "direction": "desc", "null-order": "nulls-last"},
    ]},
}


def _java_new_table(jvm, schema_json, spec_json, order_json, location, props):
    ib = jvm.org.apache.iceberg
    schema = ib.SchemaParser.fromJson(schema_json)
    spec = ib.PartitionSpecParser.fromJson(schema, spec_json)
    order = ib.SortOrderParser.fromJson(schema, order_json)
    jprops = jvm.java.util.HashMap()
    for k, v in props.items():
        jprops.put(k, v)
    md = ib.TableMetadata.newTableMetadata(schema, spec, order, location, jprops)
    return json.loads(ib.TableMetadataParser.toJson(md))


def _comparable(doc):
    doc = dict(doc)
    for k in ("table-uuid", "last-updated-ms"):
        doc.pop(k, None)
    return doc


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("spec_name", sorted(SPECS))
@pytest.mark.parametrize("order_name", sorted(ORDERS))
def test_new_table_metadata_matches_java(jvm, version, spec_name, order_name):
    schema_json = json.dumps(NESTED_SCHEMA)
    spec_json = json.dumps(SPECS[spec_name])
    order_json = json.dumps(ORDERS[order_name])
    props = {"format-version": str(version), "owner": "me", "commit.retry.num-retries": "7"}
    location = "file:///tmp/warehouse/db/t"
    java = _java_new_table(jvm, schema_json, spec_json, order_json, location, props)
    ours = json.loads(
        _native.new_table_metadata_json(schema_json, spec_json, order_json, location, list(props.items()))
    )
    assert java["format-version"] == version
    assert _comparable(ours) == _comparable(java)
    assert ours["table-uuid"] and ours["last-updated-ms"] > 0


# ---------------------------------------------------------------------------------------------
# create-or-replace: Java's TableMetadata.buildReplacement
# ---------------------------------------------------------------------------------------------

REPLACEMENT_SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        # kept by name (ids come from the base), in another order
        {"id": 1, "name": "price", "required": False, "type": "decimal(10, 2)"},
        {"id": 2, "name": "id", "required": True, "type": "long"},
        # new columns
        {"id": 3, "name": "note", "required": False, "type": "string"},
        {"id": 4, "name": "loc", "required": True, "type": {"type": "struct", "fields": [
            {"id": 5, "name": "city", "required": False, "type": "string"},
            {"id": 6, "name": "zip", "required": False, "type": "int"},
        ]}},
    ],
}

REPLACEMENT_SPECS = {
    "unpartitioned": {"spec-id": 0, "fields": []},
    # id bucket[16] exists in the base's spec: it keeps its field id (v2+)
    "overlapping": {"spec-id": 0, "fields": [
        {"source-id": 2, "field-id": 1000, "name": "id_bucket", "transform": "bucket[16]"},
        {"source-id": 3, "field-id": 1001, "name": "note", "transform": "identity"},
    ]},
}


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("spec_name", sorted(REPLACEMENT_SPECS))
@pytest.mark.parametrize("order_name", ["unsorted", "sorted"])
def test_replacement_matches_java_build_replacement(jvm, version, spec_name, order_name):
    ib = jvm.org.apache.iceberg
    base_props = {"format-version": str(version), "keep": "1"}
    java_base = _java_new_table(jvm, json.dumps(NESTED_SCHEMA), json.dumps(SPECS["many"]),
                                json.dumps(ORDERS["sorted"]), "file:///tmp/w/db/t", base_props)
    base_json = json.dumps(java_base)
    base_location = "file:///tmp/w/db/t/metadata/00000-a.metadata.json"
    base = ib.TableMetadataParser.fromJson(base_location, base_json)

    schema_json = json.dumps(REPLACEMENT_SCHEMA)
    spec_json = json.dumps(REPLACEMENT_SPECS[spec_name])
    order = {"order-id": 1, "fields": [
        {"transform": "identity", "source-id": 3, "direction": "desc", "null-order": "nulls-last"}]}
    order_json = json.dumps(order if order_name == "sorted" else ORDERS["unsorted"])
    schema = ib.SchemaParser.fromJson(schema_json)
    spec = ib.PartitionSpecParser.fromJson(schema, spec_json)
    sort = ib.SortOrderParser.fromJson(schema, order_json)
    props = {"new": "2"}
    jprops = jvm.java.util.HashMap()
    for k, v in props.items():
        jprops.put(k, v)
    java = json.loads(ib.TableMetadataParser.toJson(
        base.buildReplacement(schema, spec, sort, "file:///tmp/w/db/t2", jprops)))
    ours = json.loads(_native.replace_table_metadata_json(
        base_json, base_location, schema_json, spec_json, order_json, "file:///tmp/w/db/t2",
        list(props.items())))

    def comparable(doc):
        doc = _comparable(doc)
        doc["metadata-log"] = [{"metadata-file": e["metadata-file"]} for e in doc.get("metadata-log", [])]
        return doc

    assert comparable(ours) == comparable(java)
    assert ours["metadata-log"][0]["timestamp-ms"] == java_base["last-updated-ms"]
