"""The ``icefloe`` Spark data source on object stores: a REST catalog configured in Spark
conf (``spark.icefloe.catalog.<name>.*``) whose warehouse is on S3 with vended credentials,
and a SQLite catalog on S3 configured by options; Spark's executors read and write the
store directly, and no credential shows in Spark's plans. Against the servers of
``scripts/servers.sh start``."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

import icefloe
import icefloe.spark
from icefloe.spark.options import CONF_CATALOG_PREFIX, CONF_DEFAULT_CATALOG
from servers_env import server_env

pytestmark = pytest.mark.java

# the secret scripts/servers.sh gives the REST server to vend
VENDED_SECRET = "icefloe-vended-secret"


def _plan_text(df) -> str:
    """Everything Spark shows of a query's plan: ``explain`` in its extended and formatted
    modes (parsed, analyzed, optimized and physical plans, with the scan's arguments)."""
    utils = df.sparkSession._jvm.PythonSQLUtils
    qe = df._jdf.queryExecution()
    return "\n".join(utils.explainString(qe, mode) for mode in ("extended", "formatted", "cost"))


def _events(spark, n0: int, n: int):
    return spark.range(n0, n0 + n).selectExpr(
        "id",
        "element_at(array('a', 'b', 'c'), cast(id % 3 + 1 AS int)) AS category",
        "CAST(id % 100 AS double) AS amount",
    )


SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("category", pa.string()), ("amount", pa.float64())]
)


@pytest.fixture
def rest_s3_conf(spark):
    """A REST catalog ``lake`` (warehouse on S3, credentials vended by the server) set in
    Spark conf as the data source's default catalog; unset afterwards."""
    uri, warehouse, endpoint = server_env(
        "ICEFLOE_TEST_REST_S3_URI", "ICEFLOE_TEST_REST_S3_WAREHOUSE", "ICEFLOE_TEST_S3_ENDPOINT"
    )
    props = {
        "type": "rest",
        "uri": uri,
        "warehouse": warehouse,
        "s3.endpoint": endpoint,
        "s3.path-style-access": "true",
        "client.region": "us-east-1",
    }
    keys = [CONF_CATALOG_PREFIX + "lake." + k for k in props] + [CONF_DEFAULT_CATALOG]
    for k, v in props.items():
        spark.conf.set(CONF_CATALOG_PREFIX + "lake." + k, v)
    spark.conf.set(CONF_DEFAULT_CATALOG, "lake")
    icefloe.spark.register(spark)
    try:
        yield icefloe.load_catalog("lake", **props), warehouse
    finally:
        for k in keys:
            spark.conf.unset(k)
        icefloe.spark.register(spark)


def test_rest_catalog_from_spark_conf_on_s3(spark, rest_s3_conf):
    catalog, warehouse = rest_s3_conf
    ns = f"sparks3_{uuid.uuid4().hex[:8]}"
    catalog.create_namespace(ns)
    name = f"{ns}.events"
    catalog.create_table(name, SCHEMA, partition_spec=[("category", "identity")])

    # no catalog option at all: the conf's default catalog
    _events(spark, 0, 3000).write.format("icefloe").mode("append").save(name)
    _events(spark, 3000, 1000).write.format("icefloe").mode("append").save(name)
    table = catalog.load_table(name)
    files = table.scan().plan_arrow().column("file_path").to_pylist()
    assert len(files) >= 3 and all(f.startswith(warehouse + "/") for f in files), files

    df = spark.read.format("icefloe").option("pushdown", "true").load(name).where("category = 'b'")
    expected = _events(spark, 0, 4000).where("category = 'b'")
    assert df.count() == expected.count()
    assert df.agg({"amount": "sum"}).first()[0] == expected.agg({"amount": "sum"}).first()[0]
    plan = _plan_text(df)
    assert VENDED_SECRET not in plan and "icefloe-vended-key" not in plan

    # a row-level delete on the executors: DVs written to S3 with the vended credentials
    result = icefloe.spark.delete(spark, table, "id < 500")
    assert result.deleted_rows == 500
    table = catalog.load_table(name)
    deletes = [d["file_path"] for ds in table.scan().plan_arrow().column("deletes").to_pylist() for d in ds]
    assert deletes and all(d.startswith(warehouse + "/") for d in deletes), deletes
    ids = spark.read.format("icefloe").load(name).select("id").toPandas()["id"]
    assert sorted(ids) == list(range(500, 4000))

    # an option wins over the conf: the same catalog with an endpoint nobody serves
    with pytest.raises(Exception, match="127.0.0.1:9/"):
        (
            spark.read.format("icefloe")
            .option("catalog", "lake")
            .option("catalog.s3.endpoint", "http://127.0.0.1:9")
            .option("catalog.io.retry.num-retries", "0")
            .load(name)
        )

    _events(spark, 0, 10).write.format("icefloe").mode("overwrite").save(name)
    assert spark.read.format("icefloe").load(name).count() == 10


def test_sqlite_catalog_on_s3_by_options_keeps_its_secret_out_of_plans(spark, tmp_path):
    (endpoint, bucket) = server_env("ICEFLOE_TEST_S3_ENDPOINT", "ICEFLOE_TEST_BUCKET")
    icefloe.spark.register(spark)
    # moto takes any key; a unique secret so that finding it anywhere means it leaked
    secret = f"sekrit-{uuid.uuid4().hex}"
    warehouse = f"s3://{bucket}/spark-sqlite-{uuid.uuid4().hex[:8]}"
    props = {
        "type": "sql",
        "uri": f"sqlite:///{tmp_path / 'catalog.db'}",
        "warehouse": warehouse,
        "s3.endpoint": endpoint,
        "s3.path-style-access": "true",
        "s3.region": "us-east-1",
        "s3.access-key-id": "spark-test-key",
        "s3.secret-access-key": secret,
    }
    catalog = icefloe.load_catalog("sparksql", **props)
    catalog.create_namespace("db")
    catalog.create_table("db.t", SCHEMA)

    def with_options(rw):
        rw = rw.format("icefloe").option("catalog", "sparksql")
        for k, v in props.items():
            rw = rw.option(k if k in ("type", "uri", "warehouse") else "catalog." + k, v)
        return rw

    with_options(_events(spark, 0, 100).write).mode("append").save("db.t")
    df = with_options(spark.read).load("db.t")
    assert df.count() == 100
    files = catalog.load_table("db.t").scan().plan_arrow().column("file_path").to_pylist()
    assert files and all(f.startswith(warehouse + "/") for f in files)
    assert secret not in _plan_text(df)
    assert secret not in _plan_text(df.where("id > 5").groupBy("category").count())
