"""icefloe on a Spark standalone cluster: the tests start a master and one worker (Spark's
own ``spark-class`` from the pyspark package, on 127.0.0.1), and a driver process writes,
reads and deletes through the ``icefloe`` data source with its Python code running in the
worker's executors. The session's local Spark (the ``spark`` fixture) then checks the table
with Java Iceberg over the same SQLite catalog.

A driver is one process per SparkContext, so the cluster's driver runs as a subprocess
(``DRIVER`` below) and reports what it saw as JSON.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import icefloe
from test_catalog_oracle import spark_catalog

pytestmark = pytest.mark.java

DRIVER = r'''
import json, os, sys
from pyspark.sql import SparkSession
import icefloe, icefloe.spark

def runs_in():
    """'executor' when an ancestor process is an executor JVM of the cluster's worker."""
    pid = os.getppid()
    for _ in range(6):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"CoarseGrainedExecutorBackend" in f.read():
                    return "executor"
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
    return "elsewhere"

master, db, wh, n, name = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
spark = (SparkSession.builder.master(master).appName("icefloe-standalone")
         .config("spark.ui.enabled", "false").config("spark.executor.memory", "1g")
         .config("spark.executor.cores", "2").config("spark.cores.max", "2")
         .config("spark.pyspark.python", sys.executable)
         .config("spark.sql.session.timeZone", "UTC").getOrCreate())
icefloe.spark.register(spark)
opts = {"catalog": name, "uri": f"sqlite:///{db}", "warehouse": wh}
cat = icefloe.load_catalog(name, uri=f"sqlite:///{db}", warehouse=wh)
cat.create_namespace("db")
import pyarrow as pa
cat.create_table("db.t", pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("g", pa.string())]),
                 partition_spec=[("g", "identity")])
df = spark.range(n).selectExpr("id", "concat('g', cast(id % 4 AS string)) AS g").repartition(4)
df.write.format("icefloe").options(**opts).mode("append").save("db.t")
reader = spark.read.format("icefloe").options(**opts)
out = {"count": reader.load("db.t").count(),
       "filtered": reader.load("db.t").where("g = 'g1' AND id < 1000").count(),
       "partitions": reader.load("db.t").rdd.getNumPartitions(),
       "executors": sorted(set(spark.sparkContext.parallelize(range(8), 4).map(lambda _: runs_in()).collect()))}
t = cat.load_table("db.t")
r = icefloe.spark.delete(spark, t, "g = 'g2' and id >= 500", parallelism=4)
out["deleted"] = r.deleted_rows
out["after_delete"] = reader.load("db.t").count()
print("RESULT " + json.dumps(out), flush=True)
spark.stop()
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _wait_for_port(port: int, proc: subprocess.Popen, what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the {what} exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise TimeoutError(f"the {what} did not listen on port {port} in {timeout} s")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A standalone master and one worker (2 cores, 2 GiB) on 127.0.0.1."""
    home = _spark_home()
    logs = tmp_path_factory.mktemp("standalone")
    env = dict(
        os.environ,
        SPARK_HOME=str(home),
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
        SPARK_LOG_DIR=str(logs),
        SPARK_WORKER_DIR=str(logs / "work"),
    )
    spark_class = str(home / "bin" / "spark-class")
    port, worker_port = _free_port(), _free_port()
    procs = []
    try:
        master = subprocess.Popen(
            [
                spark_class,
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(_free_port()),
            ],
            env=env,
            stdout=open(logs / "master.log", "w"),
            stderr=subprocess.STDOUT,
        )
        procs.append(master)
        _wait_for_port(port, master, "master")
        worker = subprocess.Popen(
            [
                spark_class,
                "org.apache.spark.deploy.worker.Worker",
                f"spark://127.0.0.1:{port}",
                "--host",
                "127.0.0.1",
                "--port",
                str(worker_port),
                "--webui-port",
                str(_free_port()),
                "--cores",
                "2",
                "--memory",
                "2g",
                "--work-dir",
                str(logs / "work"),
            ],
            env=env,
            stdout=open(logs / "worker.log", "w"),
            stderr=subprocess.STDOUT,
        )
        procs.append(worker)
        _wait_for_port(worker_port, worker, "worker")
        yield f"spark://127.0.0.1:{port}", env, logs
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def test_write_read_delete_on_a_standalone_cluster(cluster, spark, tmp_path):
    master, env, logs = cluster
    db, wh = str(tmp_path / "catalog.db"), (tmp_path / "wh").as_uri()
    n = 20_000
    # the catalog name scopes the rows of a SQL catalog: the driver writes under the name of
    # the Spark catalog that reads the table with Java afterwards
    sc = spark_catalog(spark, db, wh)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, master, db, wh, str(n), sc],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, (
        proc.stdout[-3000:],
        proc.stderr[-6000:],
        (logs / "worker.log").read_text()[-3000:],
    )
    out = json.loads(lines[0][len("RESULT ") :])
    deleted = sum(1 for i in range(n) if i % 4 == 2 and i >= 500)
    assert out["count"] == n
    assert out["filtered"] == sum(1 for i in range(1000) if i % 4 == 1)
    assert out["partitions"] >= 1
    assert out["executors"] == ["executor"], "the Python code ran in the worker's executors"
    assert out["deleted"] == deleted
    assert out["after_delete"] == n - deleted

    # the session's own (local) Spark, with Java Iceberg on the same catalog file
    java_ids = sorted(r.id for r in spark.table(f"{sc}.db.t").select("id").collect())
    assert java_ids == [i for i in range(n) if not (i % 4 == 2 and i >= 500)]
    table = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh).load_table("db.t")
    assert table.scan().count() == n - deleted
