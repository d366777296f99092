"""Schema evolution and appends of pyarrow data through ``table.update_schema()`` and
``table.append()`` on the SQLite catalog; the Java test reads the result with Spark and Java
Iceberg on the same catalog file."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import icefloe
from icefloe import errors

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int32(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("score", pa.float32()),
    ]
)


def _catalog(tmp_path):
    cat = icefloe.load_catalog(
        "t", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=(tmp_path / "wh").as_uri()
    )
    cat.create_namespace("db")
    return cat


def _rows(table) -> list[dict]:
    """Every row of the current snapshot, read by field id (no deletes are involved)."""
    schema = table.schema()
    out = []
    for task in table.scan().plan_files():
        f = pq.read_table(task.file_path.removeprefix("file://"))
        by_id = {fld.metadata[b"PARQUET:field_id"].decode(): fld.name for fld in f.schema if fld.metadata}
        for r in f.to_pylist():
            out.append({fld.name: r.get(by_id.get(str(fld.id))) for fld in schema.fields})
    return sorted(out, key=lambda r: r["id"])


def test_append_evolve_append(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", SCHEMA, properties={"format-version": "3"})
    t.append(
        pa.table(
            {
                "id": pa.array([2, 1], pa.int32()),
                "name": ["b", "a"],
                "score": pa.array([1.5, None], pa.float32()),
            }
        )
    )
    assert t.current_snapshot().summary["added-records"] == "2"

    with t.update_schema() as u:
        u.add_column(
            "tags", {"type": "list", "element-id": 1, "element-required": False, "element": "string"}
        )
        u.add_column("level", "int", required=True, default=7)
        u.rename_column("name", "full_name")
        u.update_column("id", field_type="long")
        u.update_column("score", field_type=pa.float64(), doc="points")
        u.move_first("level")
    t = cat.load_table("db.t")
    s = t.schema()
    assert [f.name for f in s.fields] == ["level", "id", "full_name", "score", "tags"]
    assert s.find_field("id").field_type == "long"
    assert s.find_field("score").doc == "points"
    assert (
        s.find_field("tags").id == 4
        and s.find_field("tags.element").id == 5
        and s.find_field("level").id == 6
    )
    assert t.metadata.last_column_id == 6
    assert len(t.metadata.schemas) == 2

    t.append(
        pa.table({"id": [3], "full_name": ["c"], "tags": [["x", "y"]], "level": pa.array([1], pa.int32())})
    )
    rows = _rows(t)
    # renamed and widened columns read by id; the added column reads its initial default
    # only in a real reader (issue 6): here old files simply lack it
    assert [(r["id"], r["full_name"]) for r in rows] == [(1, "a"), (2, "b"), (3, "c")]
    assert rows[2]["tags"] == ["x", "y"] and rows[2]["level"] == 1


def test_schema_change_made_against_an_old_schema_is_refused(tmp_path):
    cat = _catalog(tmp_path)
    t1 = cat.create_table("db.t", SCHEMA)
    t2 = cat.load_table("db.t")
    u1 = t1.update_schema().add_column("a", "int")
    u2 = t2.update_schema().add_column("b", "int")
    u1.commit()
    with pytest.raises(errors.ValidationError):
        u2.commit()
    # nothing of u2 landed, u1 is there
    names = [f.name for f in cat.load_table("db.t").schema().fields]
    assert names == ["id", "name", "score", "a"]


def test_incompatible_changes_need_permission(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", SCHEMA)
    with pytest.raises(errors.InvalidArgumentError, match="optional -> required"):
        t.update_schema().update_column("name", required=True)
    with pytest.raises(errors.InvalidArgumentError, match="without a default value"):
        t.update_schema().add_column("r", "int", required=True)
    with pytest.raises(errors.InvalidArgumentError, match="Cannot change column type"):
        t.update_schema().update_column("name", field_type="int")
    with t.update_schema(allow_incompatible_changes=True) as u:
        u.update_column("name", required=True)
    assert cat.load_table("db.t").schema().find_field("name").required
    # a v2 table cannot take defaults
    t2 = cat.create_table("db.v2", SCHEMA, format_version=2)
    with pytest.raises(errors.IcefloeError, match="default"):
        with t2.update_schema() as u:
            u.add_column("d", "int", default=1)
    assert [f.name for f in cat.load_table("db.v2").schema().fields] == ["id", "name", "score"]


def test_schema_change_and_append_in_one_transaction(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", SCHEMA)
    with t.transaction() as tx:
        with tx.update_schema() as u:
            u.union_by_name(pa.schema([pa.field("id", pa.int64()), pa.field("extra", pa.string())]))
        tx.set_properties(owner="etl")
    t = cat.load_table("db.t")
    assert len(t.metadata.metadata_log) == 1  # one commit after the create
    assert t.schema().find_field("extra") is not None
    assert t.schema().find_field("id").field_type == "long" and not t.schema().find_field("id").required
    assert t.properties["owner"] == "etl"


@pytest.mark.java
def test_java_reads_the_evolved_table(spark, tmp_path):
    from test_catalog_oracle import java_catalog, jident, spark_catalog

    db, wh = str(tmp_path / "c.db"), (tmp_path / "wh").as_uri()
    name = spark_catalog(spark, db, wh)  # JDBC catalogs scope rows by catalog name
    cat = icefloe.load_catalog(name, uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("db")
    t = cat.create_table("db.t", SCHEMA, partition_spec=[("id", "bucket[4]")], format_version=2)
    t.append(
        pa.table(
            {
                "id": pa.array([1, 2, 3], pa.int32()),
                "name": ["a", "b", "c"],
                "score": pa.array([1.0, 2.0, 3.0], pa.float32()),
            }
        )
    )
    with t.update_schema() as u:
        u.rename_column("name", "full_name")
        u.update_column("score", field_type="double")
        u.add_column("note", "string")
    t = cat.load_table("db.t")
    t.append(pa.table({"id": pa.array([4], pa.int32()), "full_name": ["d"], "score": [4.5], "note": ["new"]}))
    t = cat.load_table("db.t")

    jtable = java_catalog(spark, name, db, wh).loadTable(jident(spark, "db.t"))
    jschema = spark._jvm.org.apache.iceberg.SchemaParser.toJson(jtable.schema())
    assert json.loads(icefloe.Schema.from_json(jschema).to_json()) == json.loads(t.schema().to_json())
    rows = spark.sql(f"select id, full_name, score, note from {name}.db.t order by id").collect()
    assert [tuple(r) for r in rows] == [
        (1, "a", 1.0, None),
        (2, "b", 2.0, None),
        (3, "c", 3.0, None),
        (4, "d", 4.5, "new"),
    ]


def test_partition_and_sort_evolution(tmp_path):
    cat = _catalog(tmp_path)
    ts_schema = pa.schema(
        [pa.field("id", pa.int64(), nullable=False), pa.field("ts", pa.timestamp("us", tz="UTC"))]
    )
    t = cat.create_table("db.t", ts_schema, partition_spec=[("id", "bucket[16]")])
    with t.update_spec() as u:
        u.add_field("ts", "day")
        u.remove_field("id_bucket")  # Java's create-time name; evolution names it id_bucket_16
    t = cat.load_table("db.t")
    assert [(f.name, f.transform, f.field_id) for f in t.metadata.spec().fields] == [("ts_day", "day", 1001)]
    assert t.metadata.last_partition_id == 1001 and len(t.metadata.specs) == 2
    # adding the removed field back re-uses its id
    with t.update_spec() as u:
        u.add_field("id", "bucket[16]")
    t = cat.load_table("db.t")
    assert [(f.name, f.field_id) for f in t.metadata.spec().fields] == [
        ("ts_day", 1001),
        ("id_bucket", 1000),
    ]  # the old field, name and all
    assert t.metadata.last_partition_id == 1001
    with t.replace_sort_order() as s:
        s.asc("id").desc("ts", "day")
    t = cat.load_table("db.t")
    assert t.metadata.default_sort_order_id == 1 and len(t.metadata.sort_order().fields) == 2
    # a change made against an old spec is refused
    stale = cat.load_table("db.t")
    t.update_spec().add_identity("id").commit()
    with pytest.raises(errors.ValidationError):
        stale.update_spec().rename_field("ts_day", "d").commit()
    with pytest.raises(errors.InvalidArgumentError):
        t.update_spec().add_field("nope", "identity")
