"""What a schema update does to table properties, against Java's ``SchemaUpdate.commit``:
the default name mapping (``schema.name-mapping.default``) follows renames and additions
(``MappingUtil.update``), and column-keyed properties (metrics modes, bloom filters, stats)
follow renamed columns and go with deleted ones (``PropertyUtil.applySchemaChanges``).

One table in a SQLite catalog shared with Java's ``JdbcCatalog`` is registered twice per
random sequence of changes; Java applies the sequence to one twin, icefloe to the other,
and the properties (name lists compared as sets: Java keeps them in hash sets) and schemas
must be equal.
"""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pytest

import icefloe
from test_catalog_oracle import java_catalog, jident, paths  # noqa: F401

pytestmark = pytest.mark.java

MAPPING = "schema.name-mapping.default"


def _canonical_mapping(text: str) -> list:
    def fields(items):
        return [(f.get("field-id"), sorted(f["names"]), fields(f.get("fields") or [])) for f in items]

    return fields(json.loads(text))


def _comparable(properties: dict) -> dict:
    out = {k: v for k, v in properties.items() if k != MAPPING}
    if MAPPING in properties:
        out[MAPPING] = _canonical_mapping(properties[MAPPING])
    return out


def _java_type(jvm, name: str):
    types = jvm.org.apache.iceberg.types.Types
    return {"long": types.LongType.get(), "string": types.StringType.get(), "double": types.DoubleType.get()}[
        name
    ]


def _random_ops(rng: random.Random) -> list[tuple]:
    """Changes within one update name columns as the base schema does; each base column is
    renamed, deleted or promoted at most once; new names avoid the names in use."""
    untouched = ["id", "name", "loc", "tags", "n"]
    untouched_nested = ["lat", "lon"]
    taken = set(untouched)
    taken_nested = set(untouched_nested)
    ops = []
    for _ in range(rng.randint(1, 5)):
        kind = rng.choice(["rename", "rename", "add", "add_nested", "delete", "promote", "rename_nested"])
        if kind == "rename" and untouched:
            old = rng.choice(untouched)
            new = rng.choice(["legacy", "nm", "ident", "full", f"c{rng.randint(0, 99)}"])
            if new not in taken:
                ops.append(("rename", old, new))
                untouched.remove(old)
                taken.add(new)  # the old name stays taken: Java finds base names first
        elif kind == "rename_nested" and untouched_nested:
            old = rng.choice(untouched_nested)
            new = rng.choice(["latitude", "x", "lon2"])
            if new not in taken_nested:
                ops.append(("rename", f"loc.{old}", new))
                untouched_nested.remove(old)
                taken_nested.add(new)
        elif kind == "add":
            name = rng.choice(["legacy", "nm", "extra", f"a{rng.randint(0, 99)}"])
            if name not in taken:
                ops.append(("add", None, name, rng.choice(["long", "string"])))
                taken.add(name)
        elif kind == "add_nested":
            name = rng.choice(["alt", "lat", "x"])
            if name not in taken_nested:
                ops.append(("add", "loc", name, "double"))
                taken_nested.add(name)
        elif kind == "delete":
            candidates = [c for c in untouched if c not in ("id", "loc")]
            if candidates:
                victim = rng.choice(candidates)
                ops.append(("delete", victim))
                untouched.remove(victim)
                taken.discard(victim)
        elif kind == "promote" and "n" in untouched:
            ops.append(("promote", "n"))
            untouched.remove("n")
    return ops


def _apply_java(jvm, table, ops) -> None:
    u = table.updateSchema()
    for op in ops:
        if op[0] == "rename":
            u = u.renameColumn(op[1], op[2])
        elif op[0] == "add":
            u = (
                u.addColumn(op[2], _java_type(jvm, op[3]))
                if op[1] is None
                else u.addColumn(op[1], op[2], _java_type(jvm, op[3]))
            )
        elif op[0] == "delete":
            u = u.deleteColumn(op[1])
        elif op[0] == "promote":
            u = u.updateColumn(op[1], _java_type(jvm, "long"))
    u.commit()


def _apply_icefloe(table, ops) -> None:
    with table.update_schema() as u:
        for op in ops:
            if op[0] == "rename":
                u.rename_column(op[1], op[2])
            elif op[0] == "add":
                u.add_column(op[2] if op[1] is None else f"{op[1]}.{op[2]}", op[3])
            elif op[0] == "delete":
                u.delete_column(op[1])
            elif op[0] == "promote":
                u.update_column(op[1], field_type="long")


def test_schema_updates_change_properties_as_java(spark, paths):  # noqa: F811
    db, wh, _ = paths
    jvm = spark._jvm
    cat = icefloe.load_catalog("props", uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("db")
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("name", pa.string()),
            pa.field("loc", pa.struct([pa.field("lat", pa.float64()), pa.field("lon", pa.float64())])),
            pa.field("tags", pa.list_(pa.string())),
            pa.field("n", pa.int32()),
        ]
    )
    base = cat.create_table("db.base", schema)
    jschema = jvm.org.apache.iceberg.SchemaParser.fromJson(base.schema().to_json())
    mapping = json.loads(
        jvm.org.apache.iceberg.mapping.NameMappingParser.toJson(
            jvm.org.apache.iceberg.mapping.MappingUtil.create(jschema)
        )
    )
    mapping[0]["names"].append("legacy")  # id was once called legacy
    mapping[1]["names"].append("nm")  # and name nm
    base.set_properties(
        {
            MAPPING: json.dumps(mapping),
            "write.metadata.metrics.column.name": "full",
            "write.metadata.metrics.column.loc.lat": "counts",
            "write.metadata.metrics.column.n": "none",
            "write.parquet.bloom-filter-enabled.column.id": "true",
            "write.parquet.stats-enabled.column.loc.lon": "false",
            "unrelated": "kept",
        }
    )
    jcat = java_catalog(spark, "props", db, wh)
    rng = random.Random(1124)
    changed_mapping = changed_columns = 0
    for seq in range(30):
        ops = _random_ops(rng)
        if not ops:
            continue
        cat.register_table(f"db.j{seq}", base.metadata_location)
        mine = cat.register_table(f"db.i{seq}", base.metadata_location)
        _apply_java(jvm, jcat.loadTable(jident(spark, f"db.j{seq}")), ops)
        _apply_icefloe(mine, ops)
        theirs = cat.load_table(f"db.j{seq}")
        mine = cat.load_table(f"db.i{seq}")
        assert json.loads(mine.schema().to_json()) == json.loads(theirs.schema().to_json()), ops
        assert _comparable(mine.properties) == _comparable(theirs.properties), ops
        changed_mapping += mine.properties[MAPPING] != base.properties[MAPPING]
        changed_columns += {k for k in mine.properties if ".column." in k} != {
            k for k in base.properties if ".column." in k
        }
    assert changed_mapping > 10 and changed_columns > 5, (changed_mapping, changed_columns)
