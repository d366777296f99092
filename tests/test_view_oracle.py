"""Views created and replaced by icefloe (``catalog.create_view`` / ``replace_view``) against
Java's view builder (``BaseMetastoreViewCatalog.BaseViewBuilder`` in a JdbcCatalog on the
same SQLite file):

- Java loads icefloe's views, and Spark (with Java Iceberg) runs their SQL;
- the same random sequences of creates and replaces, made by Java on one view and by icefloe
  on another, give the same versions, schema ids, version log and representations, and
  both refuse the same replacements.
"""

from __future__ import annotations

import gzip
import json
import random

import pyarrow as pa
import pytest

import icefloe
from icefloe import errors
from icefloe.update.transaction import to_schema
from test_catalog_oracle import java_catalog, jident, jnamespace, paths, spark_catalog  # noqa: F401


def _jschema(spark, schema: icefloe.Schema):
    return spark._jvm.org.apache.iceberg.SchemaParser.fromJson(schema.to_json())


def _java_build(
    spark, jcat, name: str, schema, queries: dict, namespace: list[str], properties: dict, replace: bool
):
    b = (
        jcat.buildView(jident(spark, name))
        .withSchema(_jschema(spark, schema))
        .withDefaultNamespace(jnamespace(spark, namespace))
    )
    for dialect, sql in queries.items():
        b = b.withQuery(dialect, sql)
    for k, v in properties.items():
        b = b.withProperty(k, v)
    return b.replace() if replace else b.create()


def _shape_of_java(jmd) -> dict:
    """What a view's history is made of, without uuids, timestamps and summaries (which name
    the engine)."""
    versions = []
    for v in jmd.versions():
        versions.append(
            {
                "id": v.versionId(),
                "schema": v.schemaId(),
                "namespace": list(v.defaultNamespace().levels()),
                "sql": [(r.dialect(), r.sql()) for r in v.representations()],
            }
        )
    return {
        "current": jmd.currentVersionId(),
        "versions": versions,
        "log": [e.versionId() for e in jmd.history()],
        "schemas": {s.schemaId(): str(s.asStruct()) for s in jmd.schemas()},
    }


def _shape_of(md: icefloe.ViewMetadata, spark) -> dict:
    # through Java's parser, so both sides are described by the same code
    jmd = spark._jvm.org.apache.iceberg.view.ViewMetadataParser.fromJson(md.to_json())
    return _shape_of_java(jmd)


SCHEMAS = [
    pa.schema([pa.field("id", pa.int64(), nullable=False)]),
    pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("s", pa.string())]),
    pa.schema([pa.field("s", pa.string())]),
]
QUERIES = [
    {"spark": "SELECT id FROM t"},
    {"spark": "SELECT id FROM t WHERE id > 1"},
    {"spark": "SELECT id FROM t", "trino": "SELECT id FROM t"},
    {"trino": "SELECT id FROM t"},
    {"Spark": "SELECT 1 AS id"},
]


@pytest.mark.java
def test_java_loads_and_runs_icefloe_views(spark, paths):  # noqa: F811
    db, wh, _ = paths
    sc = spark_catalog(spark, db, wh)
    cat = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("db")
    t = cat.create_table("db.t", pa.schema([pa.field("id", pa.int64()), pa.field("s", pa.string())]))
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["a", "b", "c"]}))

    out = pa.schema([pa.field("id", pa.int64())])
    v = cat.create_view("db.v", out, "SELECT id FROM t WHERE id >= 2", properties={"comment": "mine"})
    assert v.metadata_location.endswith(".gz.metadata.json"), "views are gzip by default, as Java's"
    with gzip.open(v.metadata_location.removeprefix("file:"), "rt") as f:
        assert json.load(f)["versions"][0]["summary"]["engine-name"] == "icefloe"
    with pytest.raises(errors.AlreadyExistsError):
        cat.create_view("db.v", out, "SELECT 1 AS id")
    with pytest.raises(errors.AlreadyExistsError):
        cat.create_view("db.t", out, "SELECT 1 AS id")

    jcat = java_catalog(spark, sc, db, wh)
    jview = jcat.loadView(jident(spark, "db.v"))
    assert jview.operations().current().metadataFileLocation() == v.metadata_location
    assert jview.currentVersion().versionId() == 1
    assert list(jview.currentVersion().defaultNamespace().levels()) == ["db"]
    assert jview.properties().get("comment") == "mine"
    rows = sorted(r.id for r in spark.sql(f"SELECT * FROM {sc}.db.v").collect())
    assert rows == [2, 3]

    v2 = cat.replace_view("db.v", out, {"spark": "SELECT id FROM t WHERE id = 1", "trino": "SELECT 1"})
    assert v2.metadata.current_version_id == 2
    jview = jcat.loadView(jident(spark, "db.v"))
    assert jview.currentVersion().versionId() == 2
    assert [r.id for r in spark.sql(f"SELECT * FROM {sc}.db.v").collect()] == [1]

    # Java replaces, icefloe loads and replaces again
    _java_build(
        spark,
        jcat,
        "db.v",
        v2.metadata.schema(),
        {"spark": "SELECT id FROM t", "trino": "SELECT 2"},
        ["db"],
        {},
        replace=True,
    )
    loaded = cat.load_view("db.v")
    assert loaded.metadata.current_version_id == 3
    assert loaded.metadata.sql_for("spark") == "SELECT id FROM t"
    with pytest.raises(errors.ValidationError):
        cat.replace_view("db.v", out, "SELECT 3 AS id")  # would drop trino
    v4 = cat.create_or_replace_view("db.v", out, {"spark": "SELECT 3 AS id", "trino": "SELECT 3"})
    assert v4.metadata.current_version_id == 4
    assert [r.id for r in spark.sql(f"SELECT * FROM {sc}.db.v").collect()] == [3]
    with pytest.raises(errors.NoSuchViewError):
        cat.replace_view("db.nothing", out, "SELECT 1 AS id")


def _random_ops(rng: random.Random, n: int):
    ops = []
    for _i in range(n):
        props = {}
        if rng.random() < 0.2:
            props["version.history.num-entries"] = str(rng.randint(1, 4))
        if rng.random() < 0.15:
            props["replace.drop-dialect.allowed"] = rng.choice(["true", "false"])
        ops.append(
            (
                rng.randrange(len(SCHEMAS)),
                rng.randrange(len(QUERIES)),
                rng.choice([["db"], ["db"], ["other"]]),
                props,
            )
        )
    return ops


@pytest.mark.java
def test_view_histories_equal_javas(spark, paths):  # noqa: F811
    db, wh, _ = paths
    sc = spark_catalog(spark, db, wh)
    cat = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("db")
    jcat = java_catalog(spark, sc, db, wh)
    # each schema with its ids fixed once, so both sides are given the same ids
    schemas = [to_schema(s) for s in SCHEMAS]
    rng = random.Random(20261124)
    compared = refused = 0
    for seq in range(30):
        ops = _random_ops(rng, rng.randint(2, 9))
        mine, theirs = f"db.mine{seq}", f"db.java{seq}"
        for step, (schema_i, query_i, namespace, props) in enumerate(ops):
            schema, queries = schemas[schema_i], QUERIES[query_i]
            java_error = None
            try:
                _java_build(spark, jcat, theirs, schema, queries, namespace, props, replace=step > 0)
            except Exception as e:  # py4j wraps Java's exception
                java_error = str(e)
            try:
                build = cat.replace_view if step > 0 else cat.create_view
                build(mine, schema, queries, default_namespace=namespace, properties=props)
                icefloe_error = None
            except (errors.ValidationError, errors.InvalidArgumentError) as e:
                icefloe_error = str(e)
            assert (java_error is None) == (icefloe_error is None), (seq, step, java_error, icefloe_error)
            if java_error is not None:
                refused += 1
                continue
            java_md = jcat.loadView(jident(spark, theirs)).operations().current()
            assert _shape_of(cat.load_view(mine).metadata, spark) == _shape_of_java(java_md), (seq, step, ops)
            assert dict(java_md.properties()) == cat.load_view(mine).metadata.properties
            compared += 1
    print(f"{compared} states compared, {refused} replacements refused by both")
    assert compared > 100 and refused > 5, (compared, refused)


@pytest.mark.java
def test_a_view_with_two_queries_for_one_dialect_is_read_and_repaired_like_java(spark, paths):  # noqa: F811
    """Java reads a view whose version has two SQL representations of one dialect (its
    builder refuses them only in versions it adds), and a replacement with one query per
    dialect repairs it: icefloe the same, on twin views in one catalog."""
    db, wh, _ = paths
    sc = spark_catalog(spark, db, wh)
    cat = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("db")
    jcat = java_catalog(spark, sc, db, wh)
    schema = to_schema(SCHEMAS[0])
    for name in ("db.mine", "db.java"):
        v = cat.create_view(name, schema, {"spark": "SELECT id FROM t", "trino": "SELECT id FROM t"})
        doc = json.loads(v.metadata.to_json())
        doc["versions"][0]["representations"].append(
            {"type": "sql", "sql": "SELECT 2 AS id", "dialect": "Spark"}
        )
        cat._commit_view(name, v, icefloe.ViewMetadata.from_json(json.dumps(doc)))

    broken = cat.load_view("db.mine").metadata
    assert [d for d, _ in _shape_of(broken, spark)["versions"][0]["sql"]] == ["spark", "trino", "Spark"]
    java_broken = jcat.loadView(jident(spark, "db.java")).operations().current()
    assert _shape_of(cat.load_view("db.java").metadata, spark) == _shape_of_java(java_broken)

    # one query per dialect repairs it, in both
    queries = {"spark": "SELECT 3 AS id", "trino": "SELECT 3 AS id"}
    _java_build(spark, jcat, "db.java", schema, queries, ["db"], {}, replace=True)
    fixed = cat.replace_view("db.mine", schema, queries, default_namespace=["db"])
    java_fixed = jcat.loadView(jident(spark, "db.java")).operations().current()
    assert _shape_of(cat.load_view("db.mine").metadata, spark) == _shape_of_java(java_fixed)
    assert fixed.metadata.current_version_id == 2 and fixed.metadata.sql_for("spark") == "SELECT 3 AS id"
    # the old version is kept as it was
    assert [d for d, _ in _shape_of(fixed.metadata, spark)["versions"][0]["sql"]] == [
        "spark",
        "trino",
        "Spark",
    ]

    # a replacement that has two queries for one dialect is still refused by both
    twice = {"spark": "SELECT 4 AS id", "SPARK": "SELECT 4 AS id", "trino": "SELECT 4"}
    with pytest.raises(Exception, match="(?i)dialect spark"):
        _java_build(spark, jcat, "db.java", schema, twice, ["db"], {}, replace=True)
    with pytest.raises(errors.InvalidArgumentError, match="dialect 'spark'"):
        cat.replace_view("db.mine", schema, twice, default_namespace=["db"])
