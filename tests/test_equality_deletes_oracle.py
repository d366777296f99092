"""Equality deletes written by icefloe (``write_equality_deletes``, ``table.write_changes``),
read by Java Iceberg: Spark on a JDBC catalog over the same SQLite file must see exactly the
rows left after applying them (by sequence number, partition and NULL-equals-NULL, as the
spec says), and Java's ``delete_files`` table must show them as equality deletes with their
``equality_ids``. v2 and v3, partitioned and unpartitioned."""

from __future__ import annotations

import pyarrow as pa
import pytest

import icefloe
from icefloe.executor.equality_deletes import write_equality_deletes
from test_catalog_oracle import paths, spark_catalog  # noqa: F401
from test_spark_delete import _rows

pytestmark = pytest.mark.java


def _key(row: tuple) -> tuple:
    return tuple((v is not None, v) for v in row)


def _java_rows(spark, sc: str, name: str) -> list[tuple]:
    return sorted((tuple(r) for r in spark.table(f"{sc}.db.{name}").collect()), key=_key)


def _ours(t) -> list[tuple]:
    t.refresh()
    rows = t.scan(selected_fields=["id", "category", "v"]).to_arrow().to_pylist()
    return sorted((tuple(r.values()) for r in rows), key=_key)


def _make(cat, name: str, version: int, partitioned: bool):
    cat.create_namespace_if_not_exists("db")
    t = cat.create_table(
        name,
        _rows(0).schema,
        partition_spec=[("category", "identity")] if partitioned else None,
        properties={"format-version": str(version)},
    )
    t.append(_rows(300))
    t.append(_rows(300, 300))
    return t


@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "unpartitioned"])
@pytest.mark.parametrize("version", [2, 3])
def test_write_changes_read_by_java(spark, paths, version, partitioned):  # noqa: F811
    db, wh, _ = paths
    sc = spark_catalog(spark, db, wh)
    cat = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh)
    name = f"eq{version}{'p' if partitioned else 'u'}"
    t = _make(cat, f"db.{name}", version, partitioned)
    expected = {r["id"]: (r["id"], r["category"], r["v"]) for r in _rows(600).to_pylist()}

    upsert = pa.table(
        {
            "id": pa.array([3, 4, 700], pa.int64()),
            "category": pa.array(["a", "b", "c"]),
            "v": pa.array([-3.0, -4.0, 7.0]),
        }
    )
    # delete rows: the key and (partitioned) the partition source column only
    delete = pa.table({"id": pa.array([10, 11, 599], pa.int64()), "category": pa.array(["b", "c", "c"])})
    # a key in both delete and insert: the inserted row stays (same sequence number)
    insert = pa.table({"id": pa.array([11], pa.int64()), "category": pa.array(["c"]), "v": pa.array([11.5])})
    # an upsert into a partitioned table keys on the partition source too (as Flink's upsert
    # mode asks): an equality delete only reaches its own partition
    keys = ["id", "category"] if partitioned else ["id"]
    r = t.write_changes(upsert=upsert, delete=delete, insert=insert, equality_fields=keys)
    assert r.delete_files_added > 0 and r.data_files_added > 0
    for i in (10, 11, 599):
        expected.pop(i)
    for row in upsert.to_pylist() + insert.to_pylist():
        expected[row["id"]] = (row["id"], row["category"], row["v"])
    want = sorted(expected.values(), key=_key)
    assert _java_rows(spark, sc, name) == want
    assert _ours(t) == want

    cols = "content, equality_ids" + (", partition" if partitioned else "")
    files = spark.sql(f"SELECT {cols} FROM {sc}.db.{name}.delete_files").collect()
    assert files and all(f.content == 2 and list(f.equality_ids) == [1, 2][: len(keys)] for f in files)
    if partitioned:
        # files per partition of the deleted keys (the delete rows' and the upserts')
        assert {f.partition.category for f in files} == {"a", "b", "c"}

    # the upserted row is replaced again by a later commit (its file is older now)
    t.write_changes(
        upsert=pa.table({"id": pa.array([700], pa.int64()), "category": ["c"], "v": [70.0]}),
        equality_fields=keys,
    )
    expected[700] = (700, "c", 70.0)
    assert _java_rows(spark, sc, name) == sorted(expected.values(), key=_key)


@pytest.mark.parametrize("version", [2, 3])
def test_write_equality_deletes_row_delta_null_keys(spark, paths, version):  # noqa: F811
    """The executor writer plus a row delta, with two equality columns one of which is NULL:
    the spec's equality deletes treat NULL as equal to NULL, and Java applies them so."""
    db, wh, _ = paths
    sc = spark_catalog(spark, db, wh)
    cat = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh)
    name = f"eqn{version}"
    cat.create_namespace_if_not_exists("db")
    t = cat.create_table(f"db.{name}", _rows(0).schema, properties={"format-version": str(version)})
    rows = pa.table(
        {
            "id": pa.array([1, 2, 3, 4], pa.int64()),
            "category": pa.array([None, "x", None, "y"]),
            "v": pa.array([1.0, 2.0, 3.0, 4.0]),
        }
    )
    t.append(rows)
    deletes = write_equality_deletes(
        t.metadata,
        pa.table({"category": pa.array([None, "y"]), "id": pa.array([1, 2], pa.int64()), "v": [0.0, 0.0]}),
        ["id", "category"],
        io_properties=t.io.properties_for(t.metadata.location),
    )
    assert deletes.column("content").to_pylist() == [2]
    assert deletes.column("equality_ids").to_pylist() == [[1, 2]]
    t.row_delta(add_delete_files=deletes)
    # (1, NULL) matches row 1; (2, "y") matches nothing
    want = [(2, "x", 2.0), (3, None, 3.0), (4, "y", 4.0)]
    assert _java_rows(spark, sc, name) == sorted(want, key=_key)
    assert _ours(t) == sorted(want, key=_key)


def test_write_changes_refuses_bad_requests(tmp_path):
    cat = icefloe.load_catalog("eqbad", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    t = _make(cat, "db.bad", 2, True)
    with pytest.raises(ValueError, match="identifier fields"):
        t.write_changes(delete=pa.table({"id": [1], "category": ["a"]}))
    with pytest.raises(ValueError, match="duplicate keys"):
        t.write_changes(upsert=_rows(1).take([0, 0]), equality_fields=["id", "category"])
    with pytest.raises(ValueError, match="partition source column"):
        t.write_changes(upsert=_rows(1), equality_fields=["id"])
    with pytest.raises(ValueError, match="lack the column"):
        t.write_changes(delete=pa.table({"id": pa.array([1], pa.int64())}), equality_fields=["id"])
    with pytest.raises(ValueError, match="not in the table schema"):
        t.write_changes(delete=pa.table({"id": [1]}), equality_fields=["nope"])
    v1 = _make(cat, "db.v1", 1, False)
    with pytest.raises(ValueError, match="format version 2"):
        v1.write_changes(delete=pa.table({"id": [1]}), equality_fields=["id"])
    assert len(t.snapshots()) == 2
