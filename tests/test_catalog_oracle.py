"""One SQLite catalog file, three implementations: Java's JdbcCatalog (through py4j, with the
SQLite JDBC driver), PyIceberg's SqlCatalog and icefloe open the same file and must see the
same namespaces, properties, tables (same metadata_location) and views, whichever wrote them.
Java and icefloe also commit alternately to one table without losing a commit."""

from __future__ import annotations

import itertools
import json
import os
import uuid

import pytest

import icefloe
from icefloe import errors
from test_catalog import create, with_property

_names = itertools.count()


# ---------------------------------------------------------------------------------------------
# Java's JdbcCatalog
# ---------------------------------------------------------------------------------------------


def java_catalog(spark, name: str, db: str, warehouse: str):
    """A JdbcCatalog on the SQLite file ``db`` (schema V1, so it has views)."""
    jvm = spark._jvm
    cat = jvm.org.apache.iceberg.jdbc.JdbcCatalog()
    cat.setConf(spark._jsc.hadoopConfiguration())
    props = jvm.java.util.HashMap()
    for k, v in {"uri": f"jdbc:sqlite:{db}", "warehouse": warehouse, "jdbc.schema-version": "V1"}.items():
        props.put(k, v)
    cat.initialize(name, props)
    return cat


def jnamespace(spark, levels):
    gateway = spark.sparkContext._gateway
    arr = gateway.new_array(gateway.jvm.java.lang.String, len(levels))
    for i, level in enumerate(levels):
        arr[i] = level
    return gateway.jvm.org.apache.iceberg.catalog.Namespace.of(arr)


def jident(spark, dotted: str):
    return spark._jvm.org.apache.iceberg.catalog.TableIdentifier.parse(dotted)


def java_namespaces(spark, jcat, parent=()):
    return sorted(tuple(ns.levels()) for ns in jcat.listNamespaces(jnamespace(spark, list(parent))))


def java_tables(spark, jcat, ns):
    return sorted(tuple(t.namespace().levels()) + (t.name(),) for t in jcat.listTables(jnamespace(spark, ns)))


def java_views(spark, jcat, ns):
    return sorted(tuple(t.namespace().levels()) + (t.name(),) for t in jcat.listViews(jnamespace(spark, ns)))


def java_location(jcat, spark, dotted: str) -> str:
    return jcat.loadTable(jident(spark, dotted)).operations().current().metadataFileLocation()


def spark_catalog(spark, db: str, warehouse: str) -> str:
    """A Spark catalog over the same file (Spark reads catalog settings when first used)."""
    name = f"jdbc{next(_names)}"
    for k, v in {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".type": "jdbc",
        ".uri": f"jdbc:sqlite:{db}",
        ".warehouse": warehouse,
        ".jdbc.schema-version": "V1",
        ".cache-enabled": "false",
    }.items():
        spark.conf.set(f"spark.sql.catalog.{name}{k}", v)
    return name


@pytest.fixture
def paths(tmp_path):
    db = str(tmp_path / "catalog.db")
    return db, (tmp_path / "wh").as_uri(), tmp_path


def view_metadata(location: str) -> icefloe.ViewMetadata:
    from test_catalog import FIXTURES

    md = json.loads((FIXTURES / "view" / "multi-dialect.json").read_text())
    md["location"] = location
    md["view-uuid"] = str(uuid.uuid4())
    return icefloe.ViewMetadata.from_json(json.dumps(md))


@pytest.mark.java
def test_java_reads_what_icefloe_writes(spark, paths):
    db, wh, _ = paths
    cat = icefloe.load_catalog("shared", uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("db", {"owner": "icefloe"})
    cat.create_namespace(("db", "inner"))
    cat.create_namespace("empty")
    t = create(cat, "db.t")
    t = cat._commit_table("db.t", t, with_property(t, "written.by", "icefloe"))
    create(cat, "db.inner.u")
    v = cat._commit_view("db.v", None, view_metadata(cat.default_table_location("db.v")))

    jcat = java_catalog(spark, "shared", db, wh)
    assert java_namespaces(spark, jcat) == sorted(cat.list_namespaces()) == [("db",), ("empty",)]
    assert java_namespaces(spark, jcat, ["db"]) == cat.list_namespaces("db") == [("db", "inner")]
    for ns in (["db"], ["db", "inner"], ["empty"]):
        assert dict(jcat.loadNamespaceMetadata(jnamespace(spark, ns))) == cat.load_namespace_properties(
            tuple(ns)
        )
    assert java_tables(spark, jcat, ["db"]) == cat.list_tables("db") == [("db", "t")]
    assert java_tables(spark, jcat, ["db", "inner"]) == [("db", "inner", "u")]
    assert java_location(jcat, spark, "db.t") == t.metadata_location
    jtable = jcat.loadTable(jident(spark, "db.t"))
    assert jtable.properties().get("written.by") == "icefloe"
    assert java_views(spark, jcat, ["db"]) == cat.list_views("db") == [("db", "v")]
    jview = jcat.loadView(jident(spark, "db.v"))
    assert jview.operations().current().metadataFileLocation() == v.metadata_location
    assert jview.sqlFor("spark").sql() == v.metadata.sql_for("spark")
    # another catalog name in the same file sees nothing
    assert java_namespaces(spark, java_catalog(spark, "other", db, wh)) == []


@pytest.mark.java
def test_icefloe_reads_what_java_writes(spark, paths):
    db, wh, tmp = paths
    # Spark's catalog name is the catalog_name of the rows it writes: all three use it
    sc = spark_catalog(spark, db, wh)
    jcat = java_catalog(spark, sc, db, wh)
    props = spark._jvm.java.util.HashMap()
    props.put("owner", "java")
    jcat.createNamespace(jnamespace(spark, ["jdb"]), props)
    jcat.createNamespace(jnamespace(spark, ["jdb", "sub"]), spark._jvm.java.util.HashMap())
    spark.sql(f"CREATE TABLE {sc}.jdb.t (id bigint, s string) USING iceberg PARTITIONED BY (s)")
    spark.sql(f"INSERT INTO {sc}.jdb.t VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"DELETE FROM {sc}.jdb.t WHERE id = 1")
    spark.sql(f"CREATE VIEW {sc}.jdb.v AS SELECT id FROM {sc}.jdb.t")

    cat = icefloe.load_catalog(sc, uri=f"jdbc:sqlite:{db}", warehouse=wh)
    assert cat.list_namespaces() == java_namespaces(spark, jcat) == [("jdb",)]
    assert cat.list_namespaces("jdb") == [("jdb", "sub")]
    assert cat.load_namespace_properties("jdb") == dict(
        jcat.loadNamespaceMetadata(jnamespace(spark, ["jdb"]))
    )
    assert cat.list_tables("jdb") == java_tables(spark, jcat, ["jdb"]) == [("jdb", "t")]
    t = cat.load_table("jdb.t")
    assert t.metadata_location == java_location(jcat, spark, "jdb.t")
    assert len(t.metadata.snapshots) == 2
    planned = sorted(task.file_path for task in t.scan().plan_files())
    java_files = sorted(r.file_path for r in spark.sql(f"SELECT file_path FROM {sc}.jdb.t.files").collect())
    assert planned == java_files
    assert cat.list_views("jdb") == java_views(spark, jcat, ["jdb"]) == [("jdb", "v")]
    view = cat.load_view("jdb.v")
    assert (
        view.metadata_location
        == jcat.loadView(jident(spark, "jdb.v")).operations().current().metadataFileLocation()
    )
    assert "SELECT id" in view.metadata.sql_for("spark")
    # dropping a namespace that holds a view is refused
    with pytest.raises(errors.NamespaceNotEmptyError):
        cat.drop_namespace("jdb")

    # icefloe renames and drops; Java sees it
    cat.rename_table("jdb.t", "jdb.sub.t2")
    assert java_tables(spark, jcat, ["jdb", "sub"]) == [("jdb", "sub", "t2")]
    assert not jcat.tableExists(jident(spark, "jdb.t"))
    # a purge deletes every file Java wrote for the table
    table_dir = tmp / "wh" / "jdb" / "t"
    assert any(files for _, _, files in os.walk(table_dir))
    cat.purge_table("jdb.sub.t2")
    assert not jcat.tableExists(jident(spark, "jdb.sub.t2"))
    assert [f for _, _, files in os.walk(table_dir) for f in files if not f.endswith(".crc")] == []


def _all_files(root) -> set[str]:
    return {
        str(p)
        for p in root.rglob("*")
        if p.is_file() and not p.name.startswith("catalog.db") and not p.name.endswith(".crc")
    }


@pytest.mark.java
def test_purge_outside_location_deletes_what_java_drop_table_data_deletes(spark, paths):
    """``purge_table(..., delete_outside_location=True)`` deletes exactly the files Java's
    ``CatalogUtil.dropTableData`` deletes, for a table whose metadata names another table's
    data file and one outside the warehouse; by default, those two stay."""
    import shutil
    import tempfile
    from pathlib import Path

    from test_failed_writes import _borrowing_table, rows

    db, wh, tmp = paths
    cat = icefloe.load_catalog("shared", uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("db")
    borrower, foreign, _ = _borrowing_table(cat, tmp)
    borrower.append(rows([7, 8]))
    borrower.delete("id = 7")  # a delete file and a delete manifest too
    before = _all_files(tmp)
    backup = Path(tempfile.mkdtemp())
    for d in ("wh", "elsewhere"):
        shutil.copytree(tmp / d, backup / d)

    def restore():
        for d in ("wh", "elsewhere"):
            shutil.copytree(backup / d, tmp / d, dirs_exist_ok=True)
        assert _all_files(tmp) == before

    jvm = spark._jvm
    io = jvm.org.apache.iceberg.hadoop.HadoopFileIO(spark._jsc.hadoopConfiguration())
    jmd = jvm.org.apache.iceberg.TableMetadataParser.read(io, borrower.metadata_location)
    jvm.org.apache.iceberg.CatalogUtil.dropTableData(io, jmd)
    java_deleted = before - _all_files(tmp)
    foreign_paths = {f.removeprefix("file://") for f in foreign}
    assert foreign_paths <= java_deleted
    restore()

    # by default: what Java deletes but the two foreign files (registered: the metadata
    # names whatever its writer chose)
    cat.register_table("db.default", borrower.metadata_location)
    result = cat.purge_table("db.default")
    assert sorted(f.removeprefix("file://") for f in result.kept_outside_location) == sorted(foreign_paths)
    assert before - _all_files(tmp) == java_deleted - foreign_paths
    assert result.deleted_files == len(java_deleted) - 2 and result.failed == []
    restore()

    # with the explicit choice: exactly what Java deletes
    cat.register_table("db.everything", borrower.metadata_location)
    result = cat.purge_table("db.everything", delete_outside_location=True)
    assert result.kept_outside_location == [] and result.failed == []
    assert before - _all_files(tmp) == java_deleted
    assert result.deleted_files == len(java_deleted)
    shutil.rmtree(backup)


@pytest.mark.java
def test_java_and_icefloe_commits_interleave_without_loss(spark, paths):
    db, wh, _ = paths
    cat = icefloe.load_catalog("shared", uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("db")
    create(cat, "db.t")
    jcat = java_catalog(spark, "shared", db, wh)
    jtable = jcat.loadTable(jident(spark, "db.t"))
    rounds = 5
    for i in range(rounds):
        jtable.updateProperties().set(f"java{i}", "1").commit()
        # an icefloe writer whose base is stale fails, changes nothing, and wins on retry
        stale = cat.load_table("db.t")
        jtable.updateProperties().set(f"java{i}b", "1").commit()
        with pytest.raises(errors.CommitFailedError):
            cat._commit_table("db.t", stale, with_property(stale, f"ice{i}", "1"))
        fresh = cat.load_table("db.t")
        cat._commit_table("db.t", fresh, with_property(fresh, f"ice{i}", "1"))
        jtable.refresh()
    expected = {f"{who}{i}" for i in range(rounds) for who in ("java", "ice")} | {
        f"java{i}b" for i in range(rounds)
    }
    final = cat.load_table("db.t")
    assert expected <= set(final.metadata.properties)
    assert expected <= set(dict(jcat.loadTable(jident(spark, "db.t")).properties()))
    assert final.metadata_location == java_location(jcat, spark, "db.t")
    # every commit left one file in the chain: 1 create + 3 per round
    assert f"/{3 * rounds:05d}-" in final.metadata_location
    assert len(final.metadata.metadata_log) == 3 * rounds


# ---------------------------------------------------------------------------------------------
# PyIceberg's SqlCatalog (no Java needed)
# ---------------------------------------------------------------------------------------------


def pyiceberg_catalog(name, db, wh):
    sql = pytest.importorskip("pyiceberg.catalog.sql")
    return sql.SqlCatalog(name, uri=f"sqlite:///{db}", warehouse=wh)


def test_pyiceberg_reads_what_icefloe_writes(paths):
    db, wh, _ = paths
    cat = icefloe.load_catalog("shared", uri=f"sqlite:///{db}", warehouse=wh)
    cat.create_namespace("db", {"owner": "icefloe"})
    cat.create_namespace(("db", "inner"))
    t = create(cat, "db.t")
    t = cat._commit_table("db.t", t, with_property(t, "written.by", "icefloe"))

    py = pyiceberg_catalog("shared", db, wh)
    assert py.list_namespaces() == [("db",)]
    assert py.list_namespaces("db") == [("db", "inner")]
    # PyIceberg shows the stored rows (with the reserved `exists`, without a default location)
    assert py.load_namespace_properties("db") == {"owner": "icefloe", "exists": "true"}
    assert py.list_tables("db") == [("db", "t")]
    pt = py.load_table("db.t")
    assert pt.metadata_location == t.metadata_location
    assert pt.properties["written.by"] == "icefloe"
    assert str(pt.metadata.table_uuid) == t.metadata.table_uuid


def test_icefloe_reads_what_pyiceberg_writes(paths):
    """PyIceberg creates the file (without `iceberg_type`); icefloe opens, upgrades and
    shares it, and PyIceberg keeps working on it afterwards."""
    import pyarrow as pa

    db, wh, _ = paths
    py = pyiceberg_catalog("shared", db, wh)
    py.create_namespace("pns", {"a": "b"})
    pt = py.create_table("pns.t", schema=pa.schema([pa.field("id", pa.int64())]))
    pt.append(pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    pt = py.load_table("pns.t")

    cat = icefloe.load_catalog("shared", uri=f"sqlite:///{db}", warehouse=wh)
    assert cat.list_namespaces() == [("pns",)]
    props = cat.load_namespace_properties("pns")
    assert props["a"] == "b"
    assert cat.list_tables("pns") == [("pns", "t")]
    t = cat.load_table("pns.t")
    assert t.metadata_location == pt.metadata_location
    assert t.metadata.current_snapshot_id == pt.metadata.current_snapshot_id
    assert sorted(task.file_path for task in t.scan().plan_files()) == sorted(
        task.file.file_path for task in pt.scan().plan_files()
    )

    # icefloe commits; PyIceberg sees it and commits on top
    t2 = cat._commit_table("pns.t", t, with_property(t, "from", "icefloe"))
    pt = py.load_table("pns.t")
    assert pt.metadata_location == t2.metadata_location and pt.properties["from"] == "icefloe"
    with pt.transaction() as tx:
        tx.set_properties({"from2": "pyiceberg"})
    assert cat.load_table("pns.t").metadata.properties["from2"] == "pyiceberg"
    cat.create_namespace("ice")
    assert ("ice",) in py.list_namespaces()


# ---------------------------------------------------------------------------------------------
# File-system tables: Java's HadoopCatalog and icefloe's FileSystemCatalog on one warehouse
# ---------------------------------------------------------------------------------------------


@pytest.mark.java
def test_filesystem_catalog_shares_a_warehouse_with_java_hadoop_catalog(spark, tmp_path):
    name = f"hadoop{next(_names)}"
    for k, v in {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".type": "hadoop",
        ".warehouse": tmp_path.as_uri(),
        ".cache-enabled": "false",
    }.items():
        spark.conf.set(f"spark.sql.catalog.{name}{k}", v)
    spark.sql(f"CREATE NAMESPACE {name}.db")
    spark.sql(f"CREATE TABLE {name}.db.t (id bigint) USING iceberg")
    spark.sql(f"INSERT INTO {name}.db.t VALUES (1), (2)")

    cat = icefloe.load_catalog("fs", type="filesystem", warehouse=str(tmp_path))
    assert cat.list_namespaces() == [("db",)]
    assert cat.list_tables("db") == [("db", "t")]
    t = cat.load_table("db.t")
    assert t.metadata_location.endswith("/v2.metadata.json")
    # icefloe commits v3; Java reads it and commits v4 on top; icefloe reads that
    t3 = cat._commit_table("db.t", t, with_property(t, "from", "icefloe"))
    assert t3.metadata_location.endswith("/v3.metadata.json")
    props = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {name}.db.t").collect()}
    assert props["from"] == "icefloe"
    assert spark.sql(f"SELECT count(*) AS n FROM {name}.db.t").collect()[0].n == 2
    spark.sql(f"ALTER TABLE {name}.db.t SET TBLPROPERTIES ('from2' = 'java')")
    t4 = cat.load_table("db.t")
    assert t4.metadata_location.endswith("/v4.metadata.json")
    assert t4.metadata.properties["from"] == "icefloe" and t4.metadata.properties["from2"] == "java"
    # a commit from the stale v3 base loses against Java's v4
    with pytest.raises(errors.CommitFailedError):
        cat._commit_table("db.t", t3, with_property(t3, "late", "1"))
