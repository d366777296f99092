"""The REST catalog from Python, against Apache Iceberg's own REST server (started by
``scripts/servers.sh``, which ``scripts/test.sh`` runs before the tests), with Java's
``RESTCatalog`` and Spark on the same server as the oracle: icefloe writes and Java reads,
Java writes and icefloe reads."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

import icefloe
from icefloe import errors
from servers_env import server_env


def _server() -> tuple[str, str]:
    uri, warehouse = server_env("ICEFLOE_TEST_REST_URI", "ICEFLOE_TEST_REST_WAREHOUSE")
    return uri, warehouse


@pytest.fixture()
def rest():
    uri, warehouse = _server()
    catalog = icefloe.load_catalog("rest", type="rest", uri=uri, warehouse=warehouse)
    namespace = f"py_{uuid.uuid4().hex[:8]}"
    catalog.create_namespace(namespace)
    return catalog, namespace, uri, warehouse


SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


def _rows(n0: int, n: int) -> pa.Table:
    return pa.table(
        {"id": pa.array(range(n0, n0 + n), pa.int64()), "name": [f"n{i}" for i in range(n0, n0 + n)]},
        schema=SCHEMA,
    )


def test_tables_through_the_rest_server(rest):
    catalog, ns, _, _ = rest
    table = catalog.create_table(f"{ns}.t", SCHEMA, properties={"owner": "icefloe"})
    table.append(_rows(0, 3))
    table.append(_rows(3, 2))
    loaded = catalog.load_table(f"{ns}.t")
    assert loaded.properties["owner"] == "icefloe"
    assert len(loaded.snapshots()) == 2
    assert sorted(loaded.scan().to_arrow().column("id").to_pylist()) == list(range(5))
    assert catalog.list_tables(ns) == [(ns, "t")]
    assert catalog.table_exists(f"{ns}.t")
    with pytest.raises(errors.AlreadyExistsError):
        catalog.create_table(f"{ns}.t", SCHEMA)
    with pytest.raises(errors.NoSuchTableError, match=f"{ns}.missing"):
        catalog.load_table(f"{ns}.missing")
    with pytest.raises(errors.NamespaceNotEmptyError):
        catalog.drop_namespace(ns)
    catalog.drop_table(f"{ns}.t")
    assert not catalog.table_exists(f"{ns}.t")
    catalog.drop_namespace(ns)
    with pytest.raises(errors.NoSuchNamespaceError):
        catalog.list_tables(ns)


def test_concurrent_appends_are_retried_on_the_new_base(rest):
    catalog, ns, _, _ = rest
    catalog.create_table(f"{ns}.c", SCHEMA)
    first, second = catalog.load_table(f"{ns}.c"), catalog.load_table(f"{ns}.c")
    first.append(_rows(0, 2))
    # `second` still has the empty table as its base: the server refuses the stale
    # requirement (409), and icefloe re-applies the append on the refreshed metadata
    second.append(_rows(2, 2))
    fresh = catalog.load_table(f"{ns}.c")
    assert len(fresh.snapshots()) == 2
    assert sorted(fresh.scan().to_arrow().column("id").to_pylist()) == [0, 1, 2, 3]


def test_a_closed_port_is_a_typed_error():
    _server()
    with pytest.raises(errors.IcefloeError, match="127.0.0.1:9"):
        icefloe.load_catalog("rest", type="rest", uri="http://127.0.0.1:9").list_namespaces()


def _java_rest_catalog(spark, uri: str, warehouse: str):
    jvm = spark._jvm
    cat = jvm.org.apache.iceberg.rest.RESTCatalog()
    props = jvm.java.util.HashMap()
    props.put("uri", uri)
    props.put("warehouse", warehouse)
    cat.initialize("rest", props)
    return cat


@pytest.mark.java
def test_icefloe_writes_java_reads_and_back(rest, spark):
    catalog, ns, uri, warehouse = rest
    table = catalog.create_table(f"{ns}.w", SCHEMA, partition_spec=[("id", "bucket[4]")])
    table.append(_rows(0, 10))

    jcat = _java_rest_catalog(spark, uri, warehouse)
    jtable = jcat.loadTable(spark._jvm.org.apache.iceberg.catalog.TableIdentifier.parse(f"{ns}.w"))
    assert jtable.currentSnapshot().snapshotId() == table.current_snapshot().snapshot_id
    tasks = jtable.newScan().planFiles().iterator()
    java_files = []
    while tasks.hasNext():
        java_files.append(str(tasks.next().file().location()))
    java_files.sort()
    ours = sorted(table.scan().plan_arrow().column("file_path").to_pylist())
    assert java_files == ours

    # Spark with Java Iceberg writes through the same server; icefloe reads it
    spark.conf.set("spark.sql.catalog.restcat", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set("spark.sql.catalog.restcat.type", "rest")
    spark.conf.set("spark.sql.catalog.restcat.uri", uri)
    spark.conf.set("spark.sql.catalog.restcat.warehouse", warehouse)
    spark.sql(f"INSERT INTO restcat.{ns}.w VALUES (100, 'java'), (101, 'java')")
    spark_rows = sorted(r["id"] for r in spark.sql(f"SELECT id FROM restcat.{ns}.w").collect())

    table.refresh()
    assert len(table.snapshots()) == 2
    assert (
        sorted(table.scan().to_arrow().column("id").to_pylist()) == spark_rows == list(range(10)) + [100, 101]
    )


VIEW_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False)])


def test_views_are_created_and_replaced_through_the_rest_server(rest):
    catalog, ns, _, _ = rest
    view = catalog.create_view(f"{ns}.v", VIEW_SCHEMA, "SELECT id FROM t", properties={"owner": "me"})
    assert view.metadata.current_version_id == 1
    assert view.metadata.sql_for("spark") == "SELECT id FROM t"
    assert view.metadata.properties["owner"] == "me"
    assert catalog.list_views(ns) == [(ns, "v")]
    with pytest.raises(errors.AlreadyExistsError):
        catalog.create_view(f"{ns}.v", VIEW_SCHEMA, "SELECT 1")

    replaced = catalog.replace_view(
        f"{ns}.v", SCHEMA, {"spark": "SELECT id, name FROM t", "trino": "SELECT 2"}
    )
    assert replaced.metadata.current_version_id == 2
    assert replaced.metadata.view_uuid == view.metadata.view_uuid
    loaded = catalog.load_view(f"{ns}.v")
    assert loaded.metadata_location == replaced.metadata_location
    assert loaded.metadata.sql_for("trino") == "SELECT 2"
    assert len(loaded.metadata.schemas) == 2
    # Java's rule, checked before anything is sent: a replacement may not drop a dialect
    with pytest.raises(errors.ValidationError):
        catalog.replace_view(f"{ns}.v", SCHEMA, "SELECT 3")
    with pytest.raises(errors.NoSuchViewError):
        catalog.replace_view(f"{ns}.missing", SCHEMA, "SELECT 3")
    catalog.drop_view(f"{ns}.v")
    assert catalog.list_views(ns) == []


def test_a_multi_table_commit_moves_every_table_or_none(rest):
    catalog, ns, _, _ = rest
    a = catalog.create_table(f"{ns}.a", SCHEMA)
    b = catalog.create_table(f"{ns}.b", SCHEMA)
    tx_a, tx_b = a.transaction(), b.transaction()
    tx_a.append(_rows(0, 3))
    tx_b.append(_rows(3, 2)).set_properties(source="a")
    tables = catalog.commit_transactions(tx_a, tx_b)
    assert tables == [a, b]
    assert sorted(catalog.load_table(f"{ns}.a").scan().to_arrow().column("id").to_pylist()) == [0, 1, 2]
    fresh_b = catalog.load_table(f"{ns}.b")
    assert fresh_b.properties["source"] == "a"
    assert fresh_b.metadata_location == b.metadata_location

    # one stale table fails the whole commit
    stale = catalog.load_table(f"{ns}.b")
    catalog.load_table(f"{ns}.b").append(_rows(10, 1))
    before_a = catalog.load_table(f"{ns}.a").metadata_location
    tx_a, tx_b = a.transaction(), stale.transaction()
    tx_a.append(_rows(20, 1))
    tx_b.append(_rows(21, 1))
    with pytest.raises(errors.CommitFailedError, match="not retried"):
        catalog.commit_transactions(tx_a, tx_b)
    assert catalog.load_table(f"{ns}.a").metadata_location == before_a
    assert len(catalog.load_table(f"{ns}.b").snapshots()) == 2
    with pytest.raises(errors.InvalidArgumentError, match="already committed"):
        catalog.commit_transactions(tx_a)


def test_a_multi_table_commit_is_unsupported_by_the_embedded_catalog(tmp_path):
    catalog = icefloe.load_catalog("local", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    catalog.create_namespace("db")
    a = catalog.create_table("db.a", SCHEMA)
    b = catalog.create_table("db.b", SCHEMA)
    tx_a, tx_b = a.transaction(), b.transaction()
    tx_a.append(_rows(0, 1))
    tx_b.append(_rows(1, 1))
    with pytest.raises(errors.UnsupportedError, match="db.a, db.b"):
        catalog.commit_transactions(tx_a, tx_b)
    assert catalog.load_table("db.a").snapshots() == []
    # the files the append wrote are gone: nothing references them
    assert not list((tmp_path / "wh").rglob("*.parquet"))


def test_a_staged_create_appears_with_its_first_data(rest):
    catalog, ns, _, _ = rest
    tx = catalog.create_table_transaction(f"{ns}.ctas", SCHEMA, properties={"owner": "ctas"})
    tx.append(_rows(0, 4))
    # staged: the server chose the location and added created-at; nothing exists yet
    assert "created-at" in tx._table.metadata.properties
    assert not catalog.table_exists(f"{ns}.ctas")
    table = tx.commit_transaction()
    assert table.metadata_location is not None
    loaded = catalog.load_table(f"{ns}.ctas")
    assert loaded.metadata_location == table.metadata_location
    assert loaded.properties["owner"] == "ctas"
    assert len(loaded.snapshots()) == 1
    assert sorted(loaded.scan().to_arrow().column("id").to_pylist()) == [0, 1, 2, 3]

    # created by someone else between the stage and the commit
    with pytest.raises(errors.AlreadyExistsError):
        with catalog.create_table_transaction(f"{ns}.raced", SCHEMA) as tx:
            tx.append(_rows(0, 1))
            catalog.create_table(f"{ns}.raced", SCHEMA)
    assert catalog.load_table(f"{ns}.raced").snapshots() == []


@pytest.mark.java
def test_java_sees_views_multi_table_commits_and_staged_tables(rest, spark):
    catalog, ns, uri, warehouse = rest
    jvm = spark._jvm
    catalog.create_table(f"{ns}.t", SCHEMA).append(_rows(0, 5))
    catalog.create_view(f"{ns}.v", VIEW_SCHEMA, "SELECT id FROM t WHERE id >= 3")
    catalog.replace_view(f"{ns}.v", VIEW_SCHEMA, "SELECT id FROM t WHERE id >= 1")
    a = catalog.create_table(f"{ns}.a", SCHEMA)
    b = catalog.create_table(f"{ns}.b", SCHEMA)
    tx_a, tx_b = a.transaction(), b.transaction()
    tx_a.append(_rows(0, 2))
    tx_b.append(_rows(2, 3))
    catalog.commit_transactions(tx_a, tx_b)
    with catalog.create_table_transaction(f"{ns}.s", SCHEMA) as tx:
        tx.append(_rows(7, 2))

    jcat = _java_rest_catalog(spark, uri, warehouse)
    ident = jvm.org.apache.iceberg.catalog.TableIdentifier.parse
    jview = jcat.loadView(ident(f"{ns}.v"))
    assert jview.currentVersion().versionId() == 2
    assert jview.sqlFor("spark").sql() == "SELECT id FROM t WHERE id >= 1"
    for name, snapshot in [("a", a.current_snapshot()), ("b", b.current_snapshot())]:
        assert jcat.loadTable(ident(f"{ns}.{name}")).currentSnapshot().snapshotId() == snapshot.snapshot_id

    spark.conf.set("spark.sql.catalog.restcat", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set("spark.sql.catalog.restcat.type", "rest")
    spark.conf.set("spark.sql.catalog.restcat.uri", uri)
    spark.conf.set("spark.sql.catalog.restcat.warehouse", warehouse)
    rows = spark.sql(f"SELECT id FROM restcat.{ns}.v").collect()
    assert sorted(r["id"] for r in rows) == [1, 2, 3, 4]
    rows = spark.sql(f"SELECT id FROM restcat.{ns}.s").collect()
    assert sorted(r["id"] for r in rows) == [7, 8]
