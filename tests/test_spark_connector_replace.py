"""Staged creates and replacements through icefloe's connector (``io.icefloe.spark.SparkCatalog``
as a ``StagingTableCatalog``) against Java Iceberg's SparkCatalog, in one Spark session:
``REPLACE TABLE``, ``CREATE OR REPLACE TABLE``, their ``AS SELECT`` forms, the DataFrameWriterV2
``replace``/``createOrReplace`` and atomic ``CREATE TABLE ... AS SELECT``.

Each test runs the same SQL on twin tables (``db.j_<name>`` through Java, ``db.i_<name>`` through
icefloe, one SQLite catalog) and compares the resulting metadata (schema ids, spec ids, sort
orders, properties, format version, snapshots, refs, snapshot log, with snapshot ids replaced by
their position) and rows; a failed ``... AS SELECT`` leaves either table as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlparse

import pytest

from connector_env import twin_catalogs

JAVA = "r_java"
ICE = "r_ice"

pytestmark = pytest.mark.java


@pytest.fixture(scope="module")
def env(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("spark-connector-replace")
    catalog = twin_catalogs(spark, root, JAVA, ICE)
    yield spark, catalog


def rows(df) -> list[str]:
    return sorted(repr(tuple(r)) for r in df.collect())


def twins(spark, name: str, sql: str) -> None:
    """Runs ``sql`` (``{t}`` the table) on the Java twin, then on the icefloe twin."""
    spark.sql(sql.format(t=f"{JAVA}.db.j_{name}"))
    spark.sql(sql.format(t=f"{ICE}.db.i_{name}"))


def assert_same_rows(spark, name: str) -> None:
    java_by_java = rows(spark.table(f"{JAVA}.db.j_{name}"))
    assert rows(spark.table(f"{JAVA}.db.i_{name}")) == java_by_java
    assert rows(spark.table(f"{ICE}.db.i_{name}")) == java_by_java


SUMMARY_KEYS = (
    "added-data-files",
    "added-records",
    "total-records",
    "total-data-files",
    "deleted-data-files",
    "deleted-records",
    "total-delete-files",
)


def shape(catalog, table: str) -> dict:
    """The table's metadata without what differs between any two commits (uuids, times, file
    names, snapshot ids: a snapshot is named by its position in sequence-number order)."""
    md = json.loads(catalog.load_table(f"db.{table}").metadata.to_json())
    snapshots = sorted(md.get("snapshots", []), key=lambda s: s["sequence-number"])
    pos = {s["snapshot-id"]: i for i, s in enumerate(snapshots)}

    def named(snapshot_id):
        return None if snapshot_id in (None, -1) else pos[snapshot_id]

    return {
        "format-version": md["format-version"],
        "last-column-id": md["last-column-id"],
        "current-schema-id": md["current-schema-id"],
        "schemas": md["schemas"],
        "default-spec-id": md["default-spec-id"],
        "partition-specs": md["partition-specs"],
        "last-partition-id": md["last-partition-id"],
        "default-sort-order-id": md["default-sort-order-id"],
        "sort-orders": md["sort-orders"],
        "properties": md.get("properties", {}),
        "last-sequence-number": md.get("last-sequence-number"),
        "next-row-id": md.get("next-row-id"),
        "current-snapshot": named(md.get("current-snapshot-id")),
        "refs": {
            name: {
                **{k: v for k, v in ref.items() if k != "snapshot-id"},
                "snapshot": named(ref["snapshot-id"]),
            }
            for name, ref in md.get("refs", {}).items()
        },
        "snapshot-log": [named(e["snapshot-id"]) for e in md.get("snapshot-log", [])],
        "metadata-log": len(md.get("metadata-log", [])),
        "snapshots": [
            {
                "parent": named(s.get("parent-snapshot-id")),
                "sequence-number": s["sequence-number"],
                "schema-id": s.get("schema-id"),
                "operation": s["summary"]["operation"],
                "first-row-id": s.get("first-row-id"),
                "added-rows": s.get("added-rows"),
                **{k: s["summary"].get(k) for k in SUMMARY_KEYS},
            }
            for s in snapshots
        ],
    }


def assert_same_metadata(catalog, name: str) -> None:
    java, ours = shape(catalog, f"j_{name}"), shape(catalog, f"i_{name}")
    diff = {k: (java[k], ours[k]) for k in java if java[k] != ours[k]}
    assert not diff, f"Java vs icefloe: {diff}"


def history(spark, catalog, name: str, version: int) -> None:
    """Twin tables with history: two appends, a tag and a branch."""
    twins(
        spark,
        name,
        "CREATE TABLE {t} (id bigint, cat string, v int) USING iceberg PARTITIONED BY (cat) "
        f"TBLPROPERTIES ('format-version'='{version}', 'k1'='v1', 'k2'='v2')",
    )
    twins(spark, name, "INSERT INTO {t} VALUES (1, 'a', 10), (2, 'b', 20), (3, NULL, 30)")
    twins(spark, name, "INSERT INTO {t} VALUES (4, 'a', 40)")
    # refs made by Java on both twins (SQL extensions), so that only the replace differs
    for prefix in ("j", "i"):
        spark.sql(f"ALTER TABLE {JAVA}.db.{prefix}_{name} CREATE TAG t1")
        spark.sql(f"ALTER TABLE {JAVA}.db.{prefix}_{name} CREATE BRANCH b1")


def files_under(catalog, table: str) -> set[str]:
    location = Path(urlparse(catalog.load_table(f"db.{table}").metadata.location).path)
    return {str(p) for p in location.rglob("*.parquet")}


@pytest.mark.parametrize("version", [2, 3])
def test_replace_table_keeps_history_as_javas(env, version):
    spark, catalog = env
    name = f"rep{version}"
    history(spark, catalog, name, version)
    assert_same_metadata(catalog, name)
    # new columns (id and cat keep their ids), a new spec, merged properties, no snapshot
    twins(
        spark,
        name,
        "REPLACE TABLE {t} (id bigint, name string, cat string) USING iceberg "
        "PARTITIONED BY (bucket(4, id)) TBLPROPERTIES ('k2'='w2', 'k3'='v3')",
    )
    assert_same_metadata(catalog, name)
    ours = shape(catalog, f"i_{name}")
    assert ours["current-snapshot"] is None and len(ours["snapshots"]) == 2
    assert ours["format-version"] == version
    assert ours["properties"]["k1"] == "v1" and ours["properties"]["k2"] == "w2"
    assert set(ours["refs"]) == {"t1", "b1"}
    assert_same_rows(spark, name)
    assert spark.table(f"{ICE}.db.i_{name}").count() == 0
    # the tag still reads the old rows
    assert rows(spark.sql(f"SELECT * FROM {ICE}.db.i_{name} VERSION AS OF 't1'")) == rows(
        spark.sql(f"SELECT * FROM {JAVA}.db.j_{name} VERSION AS OF 't1'")
    )
    # back to the first schema and spec: the old ids are reused
    twins(
        spark,
        name,
        "REPLACE TABLE {t} USING iceberg PARTITIONED BY (cat) "
        "AS SELECT id, cat, CAST(id * 3 AS int) AS v FROM range(0, 20) "
        "LATERAL VIEW explode(array('a', 'b')) AS cat",
    )
    assert_same_metadata(catalog, name)
    assert_same_rows(spark, name)
    assert spark.table(f"{ICE}.db.i_{name}").count() == 40
    # a later write goes on from the replacement
    twins(spark, name, "INSERT INTO {t} VALUES (100, 'z', 1)")
    assert_same_metadata(catalog, name)
    assert_same_rows(spark, name)


def test_create_or_replace_as_javas(env):
    spark, catalog = env
    # a missing table is created, with Spark's default version
    twins(
        spark,
        "cor",
        "CREATE OR REPLACE TABLE {t} USING iceberg PARTITIONED BY (bucket(2, id)) "
        "AS SELECT id, concat('s', id) AS s FROM range(0, 10)",
    )
    assert_same_metadata(catalog, "cor")
    assert_same_rows(spark, "cor")
    twins(
        spark,
        "cor",
        "CREATE OR REPLACE TABLE {t} (id bigint, s string, extra double) USING iceberg "
        "TBLPROPERTIES ('format-version'='3')",
    )
    assert_same_metadata(catalog, "cor")
    assert shape(catalog, "i_cor")["format-version"] == 3
    twins(
        spark,
        "cor",
        "CREATE OR REPLACE TABLE {t} USING iceberg AS SELECT id, concat('t', id) AS s FROM range(5, 12)",
    )
    assert_same_metadata(catalog, "cor")
    assert_same_rows(spark, "cor")
    # an empty query still commits a snapshot
    twins(spark, "cor", "CREATE OR REPLACE TABLE {t} USING iceberg AS SELECT id FROM range(0) ")
    assert_same_metadata(catalog, "cor")
    assert spark.table(f"{ICE}.db.i_cor").count() == 0


def test_dataframe_writer_v2_replace_as_javas(env):
    spark, catalog = env
    df = spark.sql("SELECT id, concat('c', id % 3) AS cat FROM range(12)")
    for catalog_name, prefix in ((JAVA, "j"), (ICE, "i")):
        table = f"{catalog_name}.db.{prefix}_dfr"
        df.writeTo(table).using("iceberg").partitionedBy("cat").create()
        df.where("id < 4").selectExpr("id", "cat", "id * 2 AS w").writeTo(table).using("iceberg").replace()
        df.where("id > 8").writeTo(table).using("iceberg").tableProperty("x", "y").createOrReplace()
    assert_same_metadata(catalog, "dfr")
    assert_same_rows(spark, "dfr")


def test_ctas_is_atomic_and_checks_existence_first(env):
    spark, catalog = env
    spark.sql(f"CREATE TABLE {ICE}.db.i_exists (id int) USING iceberg")
    with pytest.raises(Exception, match="TABLE_OR_VIEW_ALREADY_EXISTS"):
        spark.sql(f"CREATE TABLE {ICE}.db.i_exists USING iceberg AS SELECT 1 AS id")
    with pytest.raises(Exception, match="CANNOT_REPLACE_MISSING_TABLE|TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(f"REPLACE TABLE {ICE}.db.i_missing USING iceberg AS SELECT 1 AS id")
    assert not catalog.table_exists("db.i_missing")
    failing = (
        "SELECT id, CASE WHEN id = 999 THEN raise_error('boom') ELSE 1 END AS v FROM range(0, 1000, 1, 4)"
    )
    for prefix, catalog_name in (("j", JAVA), ("i", ICE)):
        with pytest.raises(Exception, match="boom"):
            spark.sql(f"CREATE TABLE {catalog_name}.db.{prefix}_failed_ctas USING iceberg AS {failing}")
        assert not catalog.table_exists(f"db.{prefix}_failed_ctas")


def test_a_failed_replace_as_select_leaves_the_table_unchanged(env):
    spark, catalog = env
    history(spark, catalog, "rfail", 2)
    before = {p: catalog.load_table(f"db.{p}_rfail").metadata_location for p in ("j", "i")}
    files_before = files_under(catalog, "i_rfail")
    rows_before = rows(spark.table(f"{JAVA}.db.j_rfail"))
    # the first task fails at its last row, once the three small ones have written their files
    # (a task still running when the job fails may commit after the job's abort: its files
    # would be orphans, with Java as with icefloe)
    failing = (
        "SELECT id, CASE WHEN id = 2999999 THEN raise_error('boom') ELSE 'x' END AS cat FROM ("
        "SELECT id FROM range(0, 3000000, 1, 1) UNION ALL SELECT id FROM range(3000000, 3000030, 1, 3))"
    )
    for prefix, catalog_name in (("j", JAVA), ("i", ICE)):
        for statement in ("REPLACE TABLE", "CREATE OR REPLACE TABLE"):
            with pytest.raises(Exception, match="boom"):
                spark.sql(f"{statement} {catalog_name}.db.{prefix}_rfail USING iceberg AS {failing}")
            assert catalog.load_table(f"db.{prefix}_rfail").metadata_location == before[prefix]
    assert_same_metadata(catalog, "rfail")
    assert rows(spark.table(f"{ICE}.db.i_rfail")) == rows_before
    # the tasks that succeeded wrote files; the job's abort deleted them
    assert files_under(catalog, "i_rfail") == files_before
