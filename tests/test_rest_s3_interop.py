"""Java Iceberg, PyIceberg and icefloe on the same tables: Apache Iceberg's REST server whose
warehouse is on S3 (moto), both started by ``scripts/servers.sh`` (``scripts/test.sh`` runs it
before the tests; source ``target/servers/servers.env``). Spark reaches the tables through a
``type=rest`` catalog with Java's ``S3FileIO`` (the AWS SDK comes from the Iceberg AWS bundle
that ``scripts/setup.sh`` fetches); icefloe through ``load_catalog(type="rest")`` with the
PyIceberg property names, its data files read and written by the Python executor code
(pyarrow file systems configured from the table's FileIO properties, vended keys included).

Each direction is checked on rows, not just on metadata: icefloe reads what Spark wrote, Spark
reads what icefloe appended, deleted (v3 deletion vectors, v2 position delete files),
overwrote and evolved, then writes on top of icefloe's commits and icefloe reads again."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

import icefloe
from servers_env import server_env

JAVA_CATALOG = "rests3"


def _env() -> dict[str, str]:
    names = (
        "ICEFLOE_TEST_REST_S3_URI",
        "ICEFLOE_TEST_REST_S3_WAREHOUSE",
        "ICEFLOE_TEST_S3_ENDPOINT",
        "ICEFLOE_TEST_REST_S3_VENDED_KEY_ID",
    )
    return dict(zip(names, server_env(*names), strict=True))


def _client_properties(env: dict[str, str]) -> dict[str, str]:
    """What a PyIceberg user would pass: where S3 is and how to address it. No keys: the REST
    server vends them with each table."""
    return {
        "uri": env["ICEFLOE_TEST_REST_S3_URI"],
        "warehouse": env["ICEFLOE_TEST_REST_S3_WAREHOUSE"],
        "s3.endpoint": env["ICEFLOE_TEST_S3_ENDPOINT"],
        "s3.path-style-access": "true",
        "client.region": "us-east-1",
    }


@pytest.fixture(scope="module")
def server():
    return _env()


@pytest.fixture(scope="module")
def java(spark, server):
    """Spark's catalog ``rests3`` on the REST server, with Java's S3FileIO pointed at moto. No
    table cache: each statement sees the commits icefloe made in between."""
    prefix = f"spark.sql.catalog.{JAVA_CATALOG}"
    conf = {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".type": "rest",
        ".io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        ".cache-enabled": "false",
        **{f".{k}": v for k, v in _client_properties(server).items()},
    }
    for key, value in conf.items():
        spark.conf.set(prefix + key, value)
    return spark


@pytest.fixture()
def catalog(server):
    return icefloe.load_catalog("rest_s3_interop", type="rest", **_client_properties(server))


@pytest.fixture()
def namespace(catalog):
    ns = f"interop_{uuid.uuid4().hex[:8]}"
    catalog.create_namespace(ns)
    return ns


def _spark_rows(spark, sql: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.sql(sql).collect())


def _icefloe_rows(table, columns: list[str]) -> list[tuple]:
    data = table.scan().to_arrow().select(columns)
    return sorted(zip(*(data.column(c).to_pylist() for c in columns), strict=True))


def _java_snapshots(spark, name: str) -> list[tuple[int, str]]:
    rows = spark.sql(f"SELECT snapshot_id, operation FROM {name}.snapshots ORDER BY committed_at").collect()
    return [(r.snapshot_id, r.operation) for r in rows]


def _ours_snapshots(table) -> list[tuple[int, str]]:
    return [(s.snapshot_id, s.summary["operation"]) for s in table.snapshots()]


def _delete_files(table) -> list[dict]:
    plan = table.scan().plan_arrow()
    return [d for ds in plan.column("deletes").to_pylist() for d in ds]


SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("cat", pa.string()),
    ]
)


def _batch(ids, cat_of) -> pa.Table:
    ids = list(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": [f"n{i}" for i in ids],
            "cat": [cat_of(i) for i in ids],
        },
        schema=SCHEMA,
    )


@pytest.mark.java
@pytest.mark.parametrize("version", [2, 3])
def test_java_and_icefloe_take_turns_on_one_s3_table(java, catalog, namespace, server, version):
    spark, ns = java, namespace
    warehouse = server["ICEFLOE_TEST_REST_S3_WAREHOUSE"]
    name = f"{JAVA_CATALOG}.{ns}.t"
    cat_of = {0: "a", 1: "b", 2: "c"}

    # --- Java creates a partitioned table on S3 and writes ---
    spark.sql(
        f"CREATE TABLE {name} (id bigint NOT NULL, name string, cat string) USING iceberg "
        f"PARTITIONED BY (cat) TBLPROPERTIES ('format-version'='{version}', "
        "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
        "'write.merge.mode'='merge-on-read')"
    )
    values = ", ".join(f"({i}, 'n{i}', '{cat_of[i % 3]}')" for i in range(12))
    spark.sql(f"INSERT INTO {name} VALUES {values}")

    table = catalog.load_table(f"{ns}.t")
    assert table.metadata.location.startswith(warehouse), table.metadata.location
    assert table.metadata.format_version == version
    files = table.scan().plan_arrow().column("file_path").to_pylist()
    assert len(files) == 3 and all(f.startswith("s3://") for f in files), files
    expected = _spark_rows(spark, f"SELECT id, name, cat FROM {name}")
    assert _icefloe_rows(table, ["id", "name", "cat"]) == expected
    assert [i for i, _, _ in expected] == list(range(12))

    # --- icefloe appends, deletes rows, overwrites; Java reads each state ---
    table.append(_batch(range(12, 18), lambda i: cat_of[i % 3]))
    expected = [(i, f"n{i}", cat_of[i % 3]) for i in range(18)]
    assert _spark_rows(spark, f"SELECT id, name, cat FROM {name}") == expected

    result = table.delete("id = 1 or id = 5 or id = 13")
    assert result.deleted_rows == 3
    table = catalog.load_table(f"{ns}.t")
    deletes = _delete_files(table)
    assert deletes and all(d["file_path"].startswith("s3://") for d in deletes), deletes
    if version == 3:
        # deletion vectors: Puffin blobs, one per data file they apply to
        assert all(d["file_format"].lower() == "puffin" for d in deletes), deletes
    else:
        assert all(d["file_format"].lower() == "parquet" for d in deletes), deletes
    expected = [r for r in expected if r[0] not in (1, 5, 13)]
    assert _spark_rows(spark, f"SELECT id, name, cat FROM {name}") == expected
    assert _icefloe_rows(table, ["id", "name", "cat"]) == expected

    # replace the rows of category 'c' by two new ones
    table.overwrite(_batch([100, 101], lambda i: "c"), "cat = 'c'")
    expected = [r for r in expected if r[2] != "c"] + [(100, "n100", "c"), (101, "n101", "c")]
    expected.sort()
    assert _spark_rows(spark, f"SELECT id, name, cat FROM {name}") == expected

    # schema evolution: a new optional column, and a rename
    table = catalog.load_table(f"{ns}.t")
    with table.update_schema() as update:
        update.add_column("score", "double")
        update.rename_column("name", "label")
    table = catalog.load_table(f"{ns}.t")
    table.append(
        pa.table(
            {
                "id": pa.array([200], pa.int64()),
                "label": ["n200"],
                "cat": ["a"],
                "score": pa.array([2.5], pa.float64()),
            },
            schema=pa.schema(
                [
                    pa.field("id", pa.int64(), nullable=False),
                    pa.field("label", pa.string()),
                    pa.field("cat", pa.string()),
                    pa.field("score", pa.float64()),
                ]
            ),
        )
    )
    expected = sorted([(i, n, c, None) for i, n, c in expected] + [(200, "n200", "a", 2.5)])
    assert [f.name for f in spark.table(name).schema.fields] == ["id", "label", "cat", "score"]
    assert _spark_rows(spark, f"SELECT id, label, cat, score FROM {name}") == expected

    table = catalog.load_table(f"{ns}.t")
    ours = _ours_snapshots(table)
    assert _java_snapshots(spark, name) == ours
    assert len(ours) == 5 and [op for _, op in ours][:2] == ["append", "append"]
    current = spark.sql(
        f"SELECT snapshot_id FROM {name}.history WHERE is_current_ancestor ORDER BY made_current_at"
    )
    assert [r.snapshot_id for r in current.collect()][-1] == table.current_snapshot().snapshot_id

    # --- Java writes on top of icefloe's commits; icefloe reads again ---
    spark.sql(f"INSERT INTO {name} VALUES (300, 'n300', 'b', 3.5)")
    spark.sql(f"DELETE FROM {name} WHERE id = 0 OR id = 100")
    spark.sql(f"UPDATE {name} SET score = 9.0 WHERE id = 3")
    want = sorted(
        [(i, n, c, 9.0 if i == 3 else s) for i, n, c, s in expected if i not in (0, 100)]
        + [(300, "n300", "b", 3.5)]
    )
    expected = _spark_rows(spark, f"SELECT id, label, cat, score FROM {name}")
    assert expected == want
    table = catalog.load_table(f"{ns}.t")
    assert _icefloe_rows(table, ["id", "label", "cat", "score"]) == expected
    assert _ours_snapshots(table) == _java_snapshots(spark, name)


def _pyiceberg_catalog(server):
    rest = pytest.importorskip("pyiceberg.catalog.rest", reason="pyiceberg is not installed")
    return rest.RestCatalog("rest_s3_pyiceberg", **_client_properties(server))


@pytest.mark.parametrize("version", [2, 3])
def test_pyiceberg_and_icefloe_on_one_s3_table(catalog, namespace, server, version):
    """PyIceberg as a second witness on the same server and bucket: it reads what icefloe
    committed (appends, deleted rows, an overwrite), icefloe reads what PyIceberg appends (v2:
    PyIceberg does not write v3)."""
    ns = namespace
    table = catalog.create_table(
        f"{ns}.p", SCHEMA, partition_spec=[("cat", "identity")], properties={"format-version": str(version)}
    )
    table.append(_batch(range(10), lambda i: "ab"[i % 2]))
    table.append(_batch(range(10, 14), lambda i: "ab"[i % 2]))
    assert table.delete("id = 3 or id = 10").deleted_rows == 2
    table = catalog.load_table(f"{ns}.p")
    assert _delete_files(table), "the delete should have written delete files, not rewritten data"
    # category 'b' replaced by two new rows
    table.overwrite(_batch([50, 51], lambda i: "b"), "cat = 'b'")
    expected = sorted(
        [(i, f"n{i}", "a") for i in range(0, 14, 2) if i != 10] + [(50, "n50", "b"), (51, "n51", "b")]
    )
    table = catalog.load_table(f"{ns}.p")
    assert _icefloe_rows(table, ["id", "name", "cat"]) == expected

    pycat = _pyiceberg_catalog(server)
    theirs = pycat.load_table(f"{ns}.p")
    assert theirs.metadata.format_version == version
    assert theirs.current_snapshot().snapshot_id == table.current_snapshot().snapshot_id
    got = theirs.scan().to_arrow()
    assert sorted(zip(*(got.column(c).to_pylist() for c in ("id", "name", "cat")), strict=True)) == expected

    if version == 3:
        # PyIceberg 0.11 reads v3 (deletion vectors included, above) but writes no v3
        # manifests ("Cannot write manifest for table version: 3")
        return
    theirs.append(_batch([60, 61, 62], lambda i: "a"))
    expected = sorted(expected + [(60, "n60", "a"), (61, "n61", "a"), (62, "n62", "a")])
    table = catalog.load_table(f"{ns}.p")
    assert table.current_snapshot().snapshot_id == theirs.current_snapshot().snapshot_id
    assert _icefloe_rows(table, ["id", "name", "cat"]) == expected
    # and icefloe commits on top of PyIceberg's commit, which PyIceberg sees
    table.append(_batch([70], lambda i: "b"))
    expected = sorted(expected + [(70, "n70", "b")])
    got = pycat.load_table(f"{ns}.p").scan().to_arrow()
    assert sorted(zip(*(got.column(c).to_pylist() for c in ("id", "name", "cat")), strict=True)) == expected


@pytest.mark.java
def test_spark_executors_write_through_icefloe_and_java_reads(java, catalog, namespace, server):
    """The executor side: icefloe's Spark data source, distributed delete and update run their
    Parquet and deletion-vector I/O in Spark's Python workers (pyarrow's S3 file system from
    the properties the driver hands them), on a table Java created; Java reads each result and
    icefloe's source reads Java's own row-level changes."""
    import icefloe.spark

    spark, ns = java, namespace
    icefloe.spark.register(spark)
    name = f"{JAVA_CATALOG}.{ns}.e"
    spark.sql(
        f"CREATE TABLE {name} (id bigint NOT NULL, name string) USING iceberg PARTITIONED BY (bucket(4, id)) "
        "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')"
    )
    spark.sql(f"INSERT INTO {name} SELECT id, concat('n', id) FROM range(20)")
    props = _client_properties(server)
    options = {
        "catalog": "rest_s3_interop",
        "type": "rest",
        "uri": props.pop("uri"),
        "warehouse": props.pop("warehouse"),
        **{f"catalog.{k}": v for k, v in props.items()},
    }

    def ours() -> list[tuple]:
        df = spark.read.format("icefloe").options(**options).load(f"{ns}.e")
        return sorted((r.id, r.name) for r in df.collect())

    assert ours() == _spark_rows(spark, f"SELECT id, name FROM {name}") == [(i, f"n{i}") for i in range(20)]

    df = spark.createDataFrame([(i, f"n{i}") for i in range(20, 30)], "id long, name string").repartition(2)
    df.write.format("icefloe").options(**options).mode("append").save(f"{ns}.e")
    expected = [(i, f"n{i}") for i in range(30)]
    assert _spark_rows(spark, f"SELECT id, name FROM {name}") == expected

    table = catalog.load_table(f"{ns}.e")
    assert icefloe.spark.delete(spark, table, "id < 4 or id = 25").deleted_rows == 5
    expected = [r for r in expected if not (r[0] < 4 or r[0] == 25)]
    assert _spark_rows(spark, f"SELECT id, name FROM {name}") == expected
    icefloe.spark.update(spark, catalog.load_table(f"{ns}.e"), "id = 10", {"name": "'ten'"})
    expected = [(i, "ten" if i == 10 else n) for i, n in expected]
    assert _spark_rows(spark, f"SELECT id, name FROM {name}") == expected

    spark.sql(f"DELETE FROM {name} WHERE id = 11 OR id = 27")
    expected = [r for r in expected if r[0] not in (11, 27)]
    assert ours() == _spark_rows(spark, f"SELECT id, name FROM {name}") == expected
    assert _ours_snapshots(catalog.load_table(f"{ns}.e")) == _java_snapshots(spark, name)


def test_source_options_reopen_the_same_catalog():
    """``icefloe.spark.update`` reads through the data source with options made from the
    table's catalog: every property must survive (it used to pass ``s3.endpoint`` without the
    ``catalog.`` prefix, so the source dropped it and went to AWS's endpoint)."""
    from icefloe.spark.options import catalog_of, source_options

    props = {
        "type": "rest",
        "uri": "http://127.0.0.1:9",
        "warehouse": "s3://b/wh",
        "s3.endpoint": "http://127.0.0.1:10",
        "s3.path-style-access": "true",
        "client.region": "us-east-1",
    }
    options = {**source_options("c", props), "path": "ns.t"}
    reopened = catalog_of(options)
    assert (reopened.name, dict(reopened.properties), reopened.table) == ("c", props, "ns.t")
