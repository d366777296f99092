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
