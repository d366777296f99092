"""Spark finds the ``icefloe`` data source by itself (the ``pyspark_icefloe`` module), and
``icefloe.spark.register`` still replaces that registration (with its conf catalogs). A
Spark session of its own in a subprocess: Spark looks Python data sources up once per JVM."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

import icefloe

pytestmark = pytest.mark.java

SCRIPT = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession

    uri, warehouse, other_uri, other_warehouse = sys.argv[1:5]
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    # nothing registered by hand: found through pyspark_icefloe
    found = spark.read.format("icefloe").option("catalog", "first").option("uri", uri).option("warehouse", warehouse).load("db.t")
    print("discovered", found.count(), flush=True)

    # register() replaces it: a default catalog from the conf, pointing at the other table
    import icefloe.spark

    spark.conf.set("spark.icefloe.catalog.other.uri", other_uri)
    spark.conf.set("spark.icefloe.catalog.other.warehouse", other_warehouse)
    spark.conf.set("spark.icefloe.default-catalog", "other")
    icefloe.spark.register(spark)
    print("registered", spark.read.format("icefloe").load("db.t").count(), flush=True)
    spark.stop()
    """
)


def _catalog_with_rows(root, name: str, n: int) -> tuple[str, str]:
    uri, warehouse = f"sqlite:///{root / (name + '.db')}", (root / name).as_uri()
    catalog = icefloe.load_catalog(name, uri=uri, warehouse=warehouse)
    catalog.create_namespace("db")
    t = catalog.create_table("db.t", pa.schema([("id", pa.int64())]))
    t.append(pa.table({"id": pa.array(range(n), pa.int64())}))
    return uri, warehouse


def test_spark_finds_the_source_and_register_replaces_it(tmp_path):
    pytest.importorskip("pyspark")
    first = _catalog_with_rows(tmp_path, "first", 7)
    other = _catalog_with_rows(tmp_path, "other", 11)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    env.setdefault("PYSPARK_SUBMIT_ARGS", "--driver-java-options -Dlog4j2.level=ERROR pyspark-shell")
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, *first, *other],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [line for line in out.stdout.splitlines() if line.startswith(("discovered", "registered"))]
    assert lines == ["discovered 7", "registered 11"], out.stdout[-2000:] + out.stderr[-2000:]
