"""icefloe on a Spark standalone cluster: the tests start a master and two workers (Spark's
own ``spark-class`` from the pyspark package, on 127.0.0.1; each worker runs its executor in
a JVM of its own), and a driver process writes, reads with pushdown and deletes through the
``icefloe`` data source with its Python code running in the executors. The session's local
Spark (the ``spark`` fixture) then checks the table with Java Iceberg over the same SQLite
catalog.

The executors get icefloe only from its wheel, as on a real cluster: the test builds the
wheel (``maturin build``), installs it with its dependencies (offline, from the wheels
``scripts/setup.sh`` downloaded into ``.cache/wheels``) into a fresh virtual environment,
packs that with ``venv-pack`` and ships it with ``spark.archives``; Python on the driver's
side of the data source runs from the same environment. Spark's own Python library comes
with Spark (``pyspark.zip``), as on any Spark node.

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

ROOT = Path(__file__).resolve().parent.parent
WHEELS = ROOT / ".cache" / "wheels"
WORKERS = 2

DRIVER = r'''
import json, os, sys
from pyspark.sql import SparkSession
import icefloe, icefloe.spark

def runs_in(_):
    """Where this Python worker runs: the executor JVM that started it (None outside one),
    and where its icefloe and Python come from."""
    import icefloe as i, sys as s
    pid, executor = os.getppid(), None
    for _ in range(6):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"CoarseGrainedExecutorBackend" in f.read():
                    executor = pid
                    break
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
    return (executor, os.path.realpath(i.__file__), s.prefix)

master, db, wh, n, name, archive = sys.argv[1:7]
n = int(n)
spark = (SparkSession.builder.master(master).appName("icefloe-standalone")
         .config("spark.ui.enabled", "false").config("spark.executor.memory", "768m")
         .config("spark.executor.cores", "1").config("spark.cores.max", "2")
         # the executors' Python: the environment made from icefloe's wheel, unpacked by
         # Spark as ./environment in each executor's directory (and linked there for the
         # driver's own Python workers, which plan the data source)
         .config("spark.archives", archive + "#environment")
         .config("spark.pyspark.python", "./environment/bin/python")
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
pushed = spark.read.format("icefloe").options(**opts).option("pushdown", "true")
out = {"count": reader.load("db.t").count(),
       "filtered": reader.load("db.t").where("g = 'g1' AND id < 1000").count(),
       "pushed": pushed.load("db.t").where("g = 'g1' AND id < 1000").count(),
       "partitions": reader.load("db.t").rdd.getNumPartitions(),
       "workers": sorted(set(spark.sparkContext.parallelize(range(32), 16).map(runs_in).collect()))}
t = cat.load_table("db.t")
r = icefloe.spark.delete(spark, t, "g = 'g2' and id >= 500", parallelism=4)
out["deleted"] = r.deleted_rows
out["after_delete"] = reader.load("db.t").count()
print("RESULT " + json.dumps(out), flush=True)
spark.stop()
'''


# The JVM connector on the same cluster: its jars come from the wheel's environment
# (``icefloe/spark/jars``) and reach the executors through ``spark.jars`` only; nothing on an
# executor's class path names them, so the executors load the connector from the copy Spark
# fetched into their work directories. The executors run no Python.
CONNECTOR_DRIVER = r"""
import json, sys
from pyspark.sql import SparkSession

master, db, wh, n, name, jars = sys.argv[1:7]
n = int(n)
spark = (SparkSession.builder.master(master).appName("icefloe-standalone-connector")
         .config("spark.ui.enabled", "false").config("spark.executor.memory", "768m")
         .config("spark.executor.cores", "1").config("spark.cores.max", "2")
         .config("spark.jars", jars)
         # the driver is on this machine, where the wheel is installed
         .config("spark.driver.extraClassPath", jars.replace(",", ":"))
         .config("spark.sql.catalog.ice", "io.icefloe.spark.SparkCatalog")
         .config("spark.sql.catalog.ice.uri", f"sqlite:///{db}")
         .config("spark.sql.catalog.ice.warehouse", wh)
         .config("spark.sql.catalog.ice.catalog-name", name)
         .config("spark.sql.session.timeZone", "UTC").getOrCreate())
q = lambda s: spark.sql(s).collect()
q("CREATE NAMESPACE ice.cdb")
# small splits, so that both executors get read tasks
q("CREATE TABLE ice.cdb.t (id bigint NOT NULL, g string, amount double) USING iceberg "
  "PARTITIONED BY (g) TBLPROPERTIES ('format-version'='3', 'read.split.target-size'='4096')")
# the executors write the data files (the Rust writer, through the connector)
q(f"INSERT INTO ice.cdb.t SELECT /*+ REPARTITION(4) */ id, concat('g', cast(id % 3 AS string)), id * 0.5 "
  f"FROM range({n})")
out = {
    "count": q("SELECT count(*) FROM ice.cdb.t")[0][0],
    "rows": list(q("SELECT count(*), sum(id) FROM (SELECT id FROM ice.cdb.t WHERE amount >= 0)")[0]),
    "filtered": list(q("SELECT count(*), sum(amount) FROM ice.cdb.t WHERE g = 'g1' AND id < 1000")[0]),
    "partitions": spark.table("ice.cdb.t").rdd.getNumPartitions(),
}
# a row-level delete: deletion vectors written by the executors, one row delta
q("DELETE FROM ice.cdb.t WHERE id >= 100 AND id < 300")
out["after_delete"] = list(q("SELECT count(*), sum(id) FROM ice.cdb.t")[0])
print("RESULT " + json.dumps(out), flush=True)
spark.stop()
"""


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
    """A standalone master and two workers (1 core, 1 GiB each) on 127.0.0.1."""
    home = _spark_home()
    logs = tmp_path_factory.mktemp("standalone")
    env = dict(
        os.environ,
        SPARK_HOME=str(home),
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
        SPARK_LOG_DIR=str(logs),
    )
    spark_class = str(home / "bin" / "spark-class")
    port = _free_port()
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
        for w in range(WORKERS):
            worker_port = _free_port()
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
                    "1",
                    "--memory",
                    "1g",
                    "--work-dir",
                    str(logs / f"work{w}"),
                ],
                env=env,
                stdout=open(logs / f"worker{w}.log", "w"),
                stderr=subprocess.STDOUT,
            )
            procs.append(worker)
            _wait_for_port(worker_port, worker, f"worker {w}")
        yield f"spark://127.0.0.1:{port}", env, logs
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.fixture(scope="module")
def wheel_environment(tmp_path_factory):
    """A virtual environment holding icefloe from its wheel and nothing of this checkout,
    packed for ``spark.archives``: (the environment, the archive)."""
    if not any(WHEELS.glob("pyarrow-*.whl")):
        pytest.fail(f"no dependency wheels in {WHEELS}: run scripts/setup.sh")
    tmp = tmp_path_factory.mktemp("wheel-env")
    bin_dir = Path(sys.executable).parent
    # the Cargo profile scripts/setup.sh built with (scripts/test.sh: quick), so that the
    # wheel reuses that build
    profile = os.environ.get("ICEFLOE_BUILD_PROFILE", "release")
    subprocess.run(
        # for this interpreter, as scripts/setup.sh's maturin develop: the same build, not
        # a recompilation of the extension for another interpreter
        [
            str(bin_dir / "maturin"),
            "build",
            *(["--release"] if profile == "release" else ["--profile", profile]),
            "--quiet",
            "-i",
            sys.executable,
            "-o",
            str(tmp / "dist"),
        ],
        cwd=ROOT,
        check=True,
        timeout=1800,
    )
    env_dir = tmp / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=300)
    # offline: icefloe's wheel and the dependency wheels only; pandas for PySpark's Arrow
    # conversions in the Python workers
    subprocess.run(
        [
            str(env_dir / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--find-links",
            str(tmp / "dist"),
            "--find-links",
            str(WHEELS),
            "icefloe",
            "pandas",
        ],
        check=True,
        timeout=600,
    )
    # .tar.gz (Spark unpacks a plain .tar itself and refuses the venv's symlink to its base
    # interpreter), compressed lightly: the copy is local
    archive = tmp / "env.tar.gz"
    subprocess.run(
        [
            str(bin_dir / "venv-pack"),
            "--quiet",
            "--compress-level",
            "1",
            "-p",
            str(env_dir),
            "-o",
            str(archive),
        ],
        check=True,
        timeout=600,
    )
    return env_dir, archive


def test_write_read_delete_on_a_standalone_cluster(cluster, wheel_environment, spark, tmp_path):
    master, env, logs = cluster
    env_dir, archive = wheel_environment
    # the driver's own Python workers (which plan the data source) start in its directory
    driver_dir = tmp_path / "driver"
    driver_dir.mkdir()
    (driver_dir / "environment").symlink_to(env_dir)
    db, wh = str(tmp_path / "catalog.db"), (tmp_path / "wh").as_uri()
    n = 20_000
    # the catalog name scopes the rows of a SQL catalog: the driver writes under the name of
    # the Spark catalog that reads the table with Java afterwards
    sc = spark_catalog(spark, db, wh)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, master, db, wh, str(n), sc, str(archive)],
        env=dict(env, PYSPARK_PYTHON="./environment/bin/python"),
        cwd=driver_dir,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, (
        proc.stdout[-3000:],
        proc.stderr[-6000:],
        [(p.name, p.read_text()[-2000:]) for p in sorted(logs.rglob("stderr"))][-2:],
    )
    out = json.loads(lines[0][len("RESULT ") :])
    deleted = sum(1 for i in range(n) if i % 4 == 2 and i >= 500)
    assert out["count"] == n
    assert out["filtered"] == sum(1 for i in range(1000) if i % 4 == 1)
    assert out["partitions"] >= 1
    assert out["pushed"] == out["filtered"]
    executors = {pid for pid, _, _ in out["workers"]}
    assert None not in executors and len(executors) == WORKERS, out["workers"]
    for _, icefloe_file, prefix in out["workers"]:
        # unpacked by Spark into the executor's directory under the worker's work dir
        assert prefix.endswith("/environment") and str(logs) in os.path.realpath(prefix), prefix
        assert str(ROOT / "python") not in icefloe_file and str(logs) in icefloe_file, icefloe_file
    assert out["deleted"] == deleted
    assert out["after_delete"] == n - deleted

    # the session's own (local) Spark, with Java Iceberg on the same catalog file
    java_ids = sorted(r.id for r in spark.table(f"{sc}.db.t").select("id").collect())
    assert java_ids == [i for i in range(n) if not (i % 4 == 2 and i >= 500)]
    table = icefloe.load_catalog(sc, uri=f"sqlite:///{db}", warehouse=wh).load_table("db.t")
    assert table.scan().count() == n - deleted


def test_connector_on_a_standalone_cluster(cluster, wheel_environment, spark, tmp_path):
    """The JVM connector's SQL pipeline (the Rust writer and reader in the executors, planning
    and commits on the driver) with the connector shipped from the wheel's environment
    through ``spark.jars``."""
    master, env, logs = cluster
    env_dir, _ = wheel_environment
    jar_dirs = list(env_dir.glob("lib/python*/site-packages/icefloe/spark/jars"))
    assert len(jar_dirs) == 1, jar_dirs
    jars = sorted(jar_dirs[0].glob("*.jar"))
    assert {p.name for p in jars} >= {"icefloe-spark.jar"}, jars
    db, wh = str(tmp_path / "catalog.db"), (tmp_path / "wh").as_uri()
    n = 20_000
    sc = spark_catalog(spark, db, wh)
    proc = subprocess.run(
        [sys.executable, "-c", CONNECTOR_DRIVER, master, db, wh, str(n), sc, ",".join(map(str, jars))],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, (
        proc.stdout[-3000:],
        proc.stderr[-6000:],
        [(p.name, p.read_text()[-2000:]) for p in sorted(logs.rglob("stderr"))][-2:],
    )
    out = json.loads(lines[0][len("RESULT ") :])
    kept = list(range(n))
    assert out["count"] == len(kept)
    assert out["rows"] == [len(kept), sum(kept)]
    g1 = [i for i in kept if i % 3 == 1 and i < 1000]
    assert out["filtered"][0] == len(g1)
    assert out["filtered"][1] == pytest.approx(sum(i * 0.5 for i in g1))
    assert out["partitions"] >= 2
    # the executors fetched the connector's jar from the driver into their own directories
    # (the workers' work dirs hold one directory per application and executor)
    fetched = [p for p in logs.rglob("icefloe-spark.jar") if "work" in p.parent.parent.parent.name]
    assert len(fetched) >= WORKERS, sorted(logs.rglob("*.jar"))

    kept = [i for i in kept if not 100 <= i < 300]
    assert out["after_delete"] == [len(kept), sum(kept)]

    # Java Iceberg reads the same table, deletes applied
    java = spark.sql(f"SELECT count(*), sum(id) FROM {sc}.cdb.t").collect()[0]
    assert (java[0], java[1]) == (len(kept), sum(kept))
