"""icefloe.load_catalog and the Catalog API (no Java): the SQLite catalog, the file-system
catalog, the embedded default, errors, and writers in several processes at once."""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
from pathlib import Path

import pytest

import icefloe
from icefloe import errors

FIXTURES = Path(__file__).resolve().parent.parent / "crates" / "icefloe" / "tests" / "fixtures"


def new_metadata(location: str, properties: dict | None = None) -> icefloe.TableMetadata:
    """Metadata of a new, empty v2 table (what ``create_table`` will build)."""
    return icefloe.TableMetadata.from_json(
        json.dumps(
            {
                "format-version": 2,
                "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
                "location": location,
                "last-sequence-number": 0,
                "last-updated-ms": 1,
                "last-column-id": 1,
                "current-schema-id": 0,
                "schemas": [
                    {
                        "type": "struct",
                        "schema-id": 0,
                        "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}],
                    }
                ],
                "default-spec-id": 0,
                "partition-specs": [{"spec-id": 0, "fields": []}],
                "last-partition-id": 999,
                "default-sort-order-id": 0,
                "sort-orders": [{"order-id": 0, "fields": []}],
                "properties": properties or {},
            }
        )
    )


def with_property(table: icefloe.Table, key: str, value: str) -> icefloe.TableMetadata:
    """The table's metadata with one more property and the current file in the log, as a
    commit builds it."""
    md = json.loads(table.metadata.to_json())
    md["properties"][key] = value
    md.setdefault("metadata-log", []).append(
        {"timestamp-ms": md["last-updated-ms"], "metadata-file": table.metadata_location}
    )
    return icefloe.TableMetadata.from_json(json.dumps(md))


def create(cat, name: str, properties: dict | None = None) -> icefloe.Table:
    return cat._commit_table(name, None, new_metadata(cat.default_table_location(name), properties))


@pytest.fixture
def cat(tmp_path):
    return icefloe.load_catalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=(tmp_path / "wh").as_uri()
    )


def test_namespaces(cat, tmp_path):
    assert cat.list_namespaces() == []
    cat.create_namespace("db", {"owner": "me"})
    cat.create_namespace(("db", "inner"))
    cat.create_namespace_if_not_exists("db")
    with pytest.raises(errors.AlreadyExistsError):
        cat.create_namespace("db")
    assert cat.list_namespaces() == [("db",)]
    assert cat.list_namespaces("db") == [("db", "inner")]
    assert cat.namespace_exists("db.inner") and not cat.namespace_exists("nope")
    assert cat.load_namespace_properties("db") == {
        "owner": "me",
        "location": f"{(tmp_path / 'wh').as_uri()}/db",
    }
    summary = cat.update_namespace_properties("db", removals={"owner", "ghost"}, updates={"k": "v"})
    assert summary == icefloe.catalog.PropertiesUpdateSummary(
        removed=["owner"], updated=["k"], missing=["ghost"]
    )
    assert cat.load_namespace_properties("db")["k"] == "v"
    assert "owner" not in cat.load_namespace_properties("db")
    with pytest.raises(errors.NoSuchNamespaceError):
        cat.load_namespace_properties("nope")
    with pytest.raises(errors.NoSuchNamespaceError):
        cat.list_namespaces("nope")
    with pytest.raises(errors.NamespaceNotEmptyError):
        cat.drop_namespace("db")
    cat.drop_namespace("db.inner")
    cat.drop_namespace("db")
    assert cat.list_namespaces() == []
    with pytest.raises(errors.NoSuchNamespaceError):
        cat.drop_namespace("db")
    with pytest.raises(ValueError):
        cat.create_namespace("")


def test_tables(cat, tmp_path):
    cat.create_namespace("db")
    with pytest.raises(errors.NoSuchNamespaceError):
        create(cat, "nope.t")
    t = create(cat, "db.t")
    assert isinstance(t, icefloe.Table)
    assert t.name() == ("db", "t") and t.catalog is cat
    assert t.metadata_location.startswith(f"{(tmp_path / 'wh').as_uri()}/db/t/metadata/00000-")
    assert cat.list_tables("db") == [("db", "t")]
    assert cat.table_exists("db.t") and cat.table_exists(("db", "t"))
    assert not cat.table_exists("db.u")
    with pytest.raises(errors.AlreadyExistsError):
        create(cat, "db.t")

    loaded = cat.load_table("db.t")
    assert loaded.metadata_location == t.metadata_location
    assert loaded.schema().find_field("id") is not None
    assert list(loaded.scan().plan_files()) == []

    t2 = cat._commit_table("db.t", loaded, with_property(loaded, "k", "1"))
    assert "/00001-" in t2.metadata_location
    with pytest.raises(errors.CommitFailedError):
        cat._commit_table("db.t", loaded, with_property(loaded, "k", "2"))
    assert loaded.refresh().metadata_location == t2.metadata_location
    assert loaded.metadata.properties["k"] == "1"
    # the loser's file was removed
    assert len(os.listdir(tmp_path / "wh" / "db" / "t" / "metadata")) == 2

    # rename, register, drop
    cat.create_namespace("other")
    renamed = cat.rename_table("db.t", "other.t")
    assert renamed.name() == ("other", "t") and not cat.table_exists("db.t")
    with pytest.raises(errors.NoSuchTableError):
        cat.rename_table("db.t", "other.x")
    reg = cat.register_table("db.copy", t.metadata_location)
    assert reg.metadata_location == t.metadata_location and reg.metadata.properties == {}
    with pytest.raises(errors.AlreadyExistsError):
        cat.register_table("db.copy", t.metadata_location)
    cat.drop_table("db.copy")
    with pytest.raises(errors.NoSuchTableError):
        cat.load_table("db.copy")
    with pytest.raises(errors.NoSuchTableError):
        cat.drop_table("db.copy")
    metadata_dir = tmp_path / "wh" / "db" / "t" / "metadata"
    assert len(os.listdir(metadata_dir)) == 2  # drop keeps the files
    cat.purge_table("other.t")
    assert os.listdir(metadata_dir) == []
    with pytest.raises(ValueError):
        cat.load_table("t")


def test_views(cat, tmp_path, monkeypatch):
    cat.create_namespace("db")
    text = (FIXTURES / "view" / "spec-example-create.json").read_text()
    # The spec's example lives at s3n://, which the local file IO refuses rather than
    # writing it as a relative folder named "s3n:" under the working directory.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(errors.UnsupportedError, match="s3n"):
        cat._commit_view("db.v", None, icefloe.ViewMetadata.from_json(text))
    assert not (tmp_path / "s3n:").exists() and cat.list_views("db") == []
    location = (tmp_path / "views" / "common_view").as_uri()
    md = icefloe.ViewMetadata.from_json(
        text.replace("s3n://my_company/my/warehouse/anorwood.db/common_view", location)
    )
    v = cat._commit_view("db.v", None, md)
    assert v.metadata_location.startswith(location + "/metadata/")
    assert "/00000-" in v.metadata_location
    assert cat.list_views("db") == [("db", "v")] and cat.list_tables("db") == []
    assert cat.view_exists("db.v") and not cat.table_exists("db.v")
    loaded = cat.load_view("db.v")
    assert loaded.metadata.sql_for("presto") == md.sql_for("presto")
    with pytest.raises(errors.AlreadyExistsError):
        create(cat, "db.v")
    cat.rename_view("db.v", "db.w")
    assert cat.list_views("db") == [("db", "w")]
    with pytest.raises(errors.NoSuchViewError):
        cat.load_view("db.v")
    cat.drop_view("db.w")
    assert not cat.view_exists("db.w")
    cat.drop_namespace("db")


def test_default_catalog_lives_in_icefloe_home(tmp_path, monkeypatch):
    monkeypatch.setenv("ICEFLOE_HOME", str(tmp_path / "home"))
    cat = icefloe.load_catalog()
    assert cat.name == "default"
    cat.create_namespace("db")
    assert (tmp_path / "home" / "catalog.db").is_file()
    assert cat.default_table_location("db.t") == f"{(tmp_path / 'home' / 'warehouse').as_uri()}/db/t"
    # the same folder again is the same catalog
    assert icefloe.load_catalog().list_namespaces() == [("db",)]


def test_default_catalog_without_home_is_in_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("ICEFLOE_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    icefloe.load_catalog().create_namespace("db")
    assert (tmp_path / "icefloe-warehouse" / "catalog.db").is_file()


def test_bad_properties(tmp_path):
    with pytest.raises(errors.InvalidArgumentError):
        icefloe.load_catalog("x", uri=f"sqlite:///{tmp_path}/c.db")
    with pytest.raises(errors.UnsupportedError):
        icefloe.load_catalog("x", uri="postgresql://h/db", warehouse=str(tmp_path))
    with pytest.raises(errors.UnsupportedError):
        icefloe.load_catalog("x", type="glue", warehouse=str(tmp_path))


def test_sqlite_layout_is_java_and_pyiceberg_compatible(cat, tmp_path):
    cat.create_namespace("db")
    create(cat, "db.t")
    con = sqlite3.connect(tmp_path / "catalog.db")
    rows = con.execute(
        "SELECT catalog_name, table_namespace, table_name, previous_metadata_location, "
        "iceberg_type FROM iceberg_tables"
    ).fetchall()
    assert rows == [("test", "db", "t", None, "TABLE")]
    props = con.execute(
        "SELECT catalog_name, namespace, property_key, property_value FROM iceberg_namespace_properties"
    ).fetchall()
    assert props == [("test", "db", "exists", "true")]


def test_filesystem_catalog(tmp_path):
    cat = icefloe.load_catalog("fs", type="filesystem", warehouse=str(tmp_path))
    cat.create_namespace("db")
    t = create(cat, "db.t")
    assert t.metadata_location.endswith("/db/t/metadata/v1.metadata.json")
    assert (tmp_path / "db" / "t" / "metadata" / "version-hint.text").read_text() == "1"
    t2 = cat._commit_table("db.t", t, with_property(t, "k", "v"))
    assert t2.metadata_location.endswith("/v2.metadata.json")
    with pytest.raises(errors.CommitFailedError):
        cat._commit_table("db.t", t, with_property(t, "k", "w"))
    assert cat.list_tables("db") == [("db", "t")]
    assert cat.list_namespaces() == [("db",)]
    # the directory is what Table.from_metadata and Java's HadoopCatalog read
    assert icefloe.Table.from_metadata(str(tmp_path / "db" / "t")).metadata.properties == {"k": "v"}
    with pytest.raises(errors.UnsupportedError):
        cat.list_views("db")
    cat.drop_table("db.t")
    assert not (tmp_path / "db" / "t").exists()


def _writer(args):
    uri, warehouse, worker, commits = args
    cat = icefloe.load_catalog("test", uri=uri, warehouse=warehouse)
    retries = 0
    for i in range(commits):
        while True:
            table = cat.load_table("db.t")
            try:
                cat._commit_table("db.t", table, with_property(table, f"p{worker}-{i}", "1"))
                break
            except errors.CommitFailedError:
                retries += 1
    return retries


def test_processes_committing_at_once_lose_nothing(tmp_path):
    uri, warehouse = f"sqlite:///{tmp_path}/catalog.db", (tmp_path / "wh").as_uri()
    cat = icefloe.load_catalog("test", uri=uri, warehouse=warehouse)
    cat.create_namespace("db")
    create(cat, "db.t")
    workers, commits = 4, 6
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers) as pool:
        pool.map(_writer, [(uri, warehouse, w, commits) for w in range(workers)])
    table = cat.load_table("db.t")
    props = table.metadata.properties
    assert {f"p{w}-{i}" for w in range(workers) for i in range(commits)} <= set(props)
    assert f"/{workers * commits:05d}-" in table.metadata_location
    # one file per successful commit plus the first: losers cleaned up after themselves
    assert len(os.listdir(tmp_path / "wh" / "db" / "t" / "metadata")) == workers * commits + 1
