"""Skew, limits and memory of Spark reads through icefloe's connector (issue 22: "partitions
far from equal in size; a task reading a 1 GB file with DVs in bounded memory; cancellation (a
killed query stops its readers)"). tests/test_reader_limits.py checks the same of the Rust
reader outside Spark; these check the Spark task path: the connector's executor-side reader
(crates/icefloe-jni) in a Spark task.

In a ``local`` session the executors are the driver's JVM, so the native library's counters
(``io.icefloe.spark.jni.NativeReader.stats()``: open readers, the core's reading threads,
batches and rows handed to Spark, bytes allocated by the library now and at their peak) are
read through py4j. Nothing here is timed: bounds are generous and the assertions are about
state (every reader closed, no reading thread left, a bounded peak).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest

from connector_env import twin_catalogs
from test_reader_limits import BIG_ROWS, BIG_SCHEMA, PAYLOAD_BYTES, _big_batches

JAVA = "lim_java"
ICE = "lim_ice"

pytestmark = pytest.mark.java


@pytest.fixture(scope="module")
def env(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("spark-connector-limits")
    catalog = twin_catalogs(spark, root, JAVA, ICE)
    return spark, catalog


def stats(spark) -> dict:
    return json.loads(spark._jvm.io.icefloe.spark.jni.NativeReader.stats())


def wait_for(condition, bound_s: float, what: str) -> None:
    """Polls ``condition`` until it holds; fails after ``bound_s`` (generous: the machine may
    be loaded)."""
    deadline = time.monotonic() + bound_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {bound_s} s: {what}")
        time.sleep(0.05)


# ---------------------------------------------------------------------------------------------
# cancellation
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def many_files(env):
    """``db.many``: 16 files of 150,000 rows (ids 0..2,400,000), written by icefloe."""
    _, catalog = env
    t = catalog.create_table("db.many", BIG_SCHEMA)
    for b in _big_batches(16 * 150_000, chunk=150_000):
        t.append(pa.Table.from_batches([b]))
    return "db.many", 16 * 150_000


@pytest.mark.parametrize("interrupt", [False, True], ids=["cancel", "cancel-interrupting"])
def test_a_cancelled_query_closes_its_readers(env, many_files, interrupt):
    """A query cancelled mid-read (its job group cancelled from another thread, with and
    without interrupting the task threads) closes every native reader of its tasks and their
    reading threads end; rows stop flowing. The query's consumer is made slow (a 512-bit hash
    of a 4.8 kB string per row) so that the readers are open, waiting, when it is cancelled."""
    spark, _ = env
    table, total = many_files
    before = stats(spark)
    assert before["open-readers"] == 0 and before["reading-threads"] == 0, before
    slow = spark.table(f"{ICE}.{table}").selectExpr("sha2(repeat(payload, 50), 512) AS h")
    group = f"icefloe-cancel-{interrupt}"
    failure: list[BaseException] = []

    def run():
        spark.sparkContext.setJobGroup(group, "a read to cancel", interruptOnCancel=interrupt)
        try:
            slow.write.format("noop").mode("overwrite").save()
        except BaseException as e:  # noqa: BLE001 (the cancellation, checked below)
            failure.append(e)
        finally:
            spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)

    query = threading.Thread(target=run, daemon=True)
    query.start()
    # reading: readers open and rows handed to Spark
    wait_for(
        lambda: stats(spark)["open-readers"] > 0 and stats(spark)["rows"] > before["rows"],
        300,
        "the query started reading",
    )
    spark.sparkContext.cancelJobGroup(group)
    query.join(300)
    assert not query.is_alive(), "the cancelled query did not return"
    assert failure and "cancel" in str(failure[0]).lower(), failure
    # every reader closed and its threads gone: the killed tasks released their streams
    wait_for(
        lambda: stats(spark)["open-readers"] == 0 and stats(spark)["reading-threads"] == 0,
        120,
        f"readers closed after the cancel ({stats(spark)})",
    )
    wait_for(
        lambda: not spark.sparkContext.statusTracker().getActiveStageIds(),
        120,
        "no stage left running",
    )
    after = stats(spark)
    # the read stopped midway, and nothing reads any more
    read = after["rows"] - before["rows"]
    assert 0 < read < total, (read, total)
    time.sleep(1)
    assert stats(spark)["rows"] == after["rows"]
    # the session reads on: the next query's readers open and close as usual
    assert spark.table(f"{ICE}.{table}").where("id % 100000 = 7").count() == total // 100_000
    assert stats(spark)["open-readers"] == 0


def _descendants(pid: int) -> list[int]:
    """The processes under ``pid`` (the Python workers Spark forks for the data source)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


class WorkerReads:
    """Bytes read (``rchar``: files and sockets) by the processes under a pid, each process
    counted at the last value seen, so that a worker Spark kills keeps its bytes."""

    def __init__(self, pid: int):
        self.pid = pid
        self.seen: dict[int, int] = {}

    def total(self) -> int:
        for child in _descendants(self.pid):
            try:
                text = Path(f"/proc/{child}/io").read_text()
            except OSError:
                continue
            self.seen[child] = int(text.split("rchar:")[1].split()[0])
        return sum(self.seen.values())


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs Linux /proc")
def test_a_cancelled_python_source_read_stops_its_workers(env, many_files):
    """The same through the Python data source: its reader (the Rust reader and its threads)
    runs in a Spark Python worker, a process under the JVM. Once the query is cancelled the
    worker that was reading has no reading thread left (Spark stops the killed task's
    worker, which drops the reader; the worker may stay, idle, for reuse) and reads no
    more."""
    spark, catalog = env
    table, _ = many_files
    import icefloe.spark

    icefloe.spark.register(spark)
    jvm_pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    options = {
        "catalog": JAVA,
        "uri": spark.conf.get(f"spark.sql.catalog.{ICE}.uri"),
        "warehouse": spark.conf.get(f"spark.sql.catalog.{ICE}.warehouse"),
    }
    slow = (
        spark.read.format("icefloe")
        .options(**options)
        .load(table)
        .selectExpr("sha2(repeat(payload, 50), 512) AS h")
    )
    group = "icefloe-cancel-source"
    failure: list[BaseException] = []

    def run():
        spark.sparkContext.setJobGroup(group, "a Python source read to cancel")
        try:
            slow.write.format("noop").mode("overwrite").save()
        except BaseException as e:  # noqa: BLE001 (the cancellation, checked below)
            failure.append(e)
        finally:
            spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)

    tracker = spark.sparkContext.statusTracker()
    query = threading.Thread(target=run, daemon=True)
    query.start()

    # the job's task runs (planning ran in a Python process of its own before)
    def task_running() -> bool:
        for job in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job)
            for stage in info.stageIds if info else []:
                stage_info = tracker.getStageInfo(stage)
                if stage_info is not None and stage_info.numActiveTasks > 0:
                    return True
        return False

    wait_for(task_running, 300, "the query's task is running")
    # the worker reading: the process under the JVM whose byte count grows while the task runs
    reads = WorkerReads(jvm_pid)
    reads.total()
    start = dict(reads.seen)
    reader: list[int] = []
    reading_threads: list[int] = []

    def threads(pid: int) -> int:
        try:
            return len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            return 0

    def reading() -> bool:
        reads.total()
        grown = {p: n - start.get(p, 0) for p, n in reads.seen.items()}
        busy = [p for p, g in grown.items() if g > 0 and Path(f"/proc/{p}").exists()]
        if busy:
            reader[:] = [max(busy, key=lambda p: grown[p])]
            reading_threads.append(threads(reader[0]))
        # past the worker's start (its imports): the Rust reader's threads run beside it
        return bool(busy) and grown[reader[0]] > 1_000_000 and reading_threads[-1] > 1

    wait_for(reading, 300, "a Python worker reads the table")
    spark.sparkContext.cancelJobGroup(group)
    query.join(300)
    assert not query.is_alive(), "the cancelled query did not return"
    assert failure and "cancel" in str(failure[0]).lower(), failure
    # the worker that was reading has no reading thread left (it is gone, or back in
    # Spark's pool of idle workers with its main thread only), and reads no more
    wait_for(lambda: threads(reader[0]) <= 1, 120, f"worker {reader[0]}'s reading threads ended")
    assert max(reading_threads) > 1, reading_threads
    stopped = reads.total()
    time.sleep(1)
    assert reads.total() == stopped
    wait_for(lambda: not tracker.getActiveStageIds(), 120, "no stage left running")


# ---------------------------------------------------------------------------------------------
# skew
# ---------------------------------------------------------------------------------------------

SKEW_ROW_GROUP_BYTES = 64 * 1024


@pytest.fixture(scope="module")
def skewed(env):
    """``db.skew``, written by Java (v3): one file of 300,000 rows in many small row groups,
    then 30 files of 100 rows each (about a thousand times smaller), then a delete of a tenth
    of the rows (deletion vectors on every file)."""
    spark, _ = env
    t = f"{JAVA}.db.skew"
    spark.sql(
        f"CREATE TABLE {t} (id bigint, k int, payload string) USING iceberg TBLPROPERTIES ("
        "'format-version'='3', 'write.delete.mode'='merge-on-read', 'write.distribution-mode'='none', "
        f"'write.parquet.row-group-size-bytes'='{SKEW_ROW_GROUP_BYTES}')"
    )
    spark.sql(
        f"INSERT INTO {t} SELECT /*+ COALESCE(1) */ id, CAST(id % 10 AS int), "
        "concat(repeat(CAST(id AS string), 6), 'x') FROM range(300000)"
    )
    for i in range(30):
        start = 300_000 + i * 100
        spark.sql(
            f"INSERT INTO {t} SELECT /*+ COALESCE(1) */ id, CAST(id % 10 AS int), 'small' "
            f"FROM range({start}, {start + 100})"
        )
    spark.sql(f"DELETE FROM {t} WHERE k = 7")
    return "db.skew"


def _partitions(df) -> int:
    return df._jdf.rdd().getNumPartitions()


def test_skewed_table_splits_the_big_file_as_java(env, skewed):
    """The connector plans a table of one big file and many tiny ones as Java does: at the
    table's ``read.split.target-size`` the big file is split at its row groups into several
    input partitions and the tiny ones packed together, the same number of partitions as
    Java's; the rows (deletes applied) are Java's."""
    spark, catalog = env
    files = spark.sql(
        f"SELECT file_path, file_size_in_bytes, split_offsets FROM {JAVA}.db.skew.files WHERE content = 0"
    ).collect()
    assert len(files) == 31
    big = max(files, key=lambda f: f.file_size_in_bytes)
    small = min(files, key=lambda f: f.file_size_in_bytes)
    assert big.file_size_in_bytes > 100 * small.file_size_in_bytes
    assert len(big.split_offsets) >= 12, big.split_offsets
    # a target of about four row groups
    target = 4 * big.file_size_in_bytes // len(big.split_offsets)
    checksum = "SELECT count(*), sum(id), min(id), max(id), sum(crc32(payload)), count(DISTINCT id) FROM {}"
    for props in ({"read.split.target-size": str(target)}, {"read.split.target-size": str(target * 3)}):
        for k, v in props.items():
            spark.sql(f"ALTER TABLE {JAVA}.db.skew SET TBLPROPERTIES ('{k}'='{v}')")
        ours, java = spark.table(f"{ICE}.db.skew"), spark.table(f"{JAVA}.db.skew")
        assert _partitions(ours) == _partitions(java), props
        # the big file is spread over several partitions
        big_parts = (
            ours.selectExpr("spark_partition_id() AS part", "_file")
            .where(f"_file = '{big.file_path}'")
            .select("part")
            .distinct()
            .count()
        )
        # about one partition per target's bytes of the big file
        chunks = big.file_size_in_bytes // int(props["read.split.target-size"])
        assert big_parts >= max(2, chunks // 2), (big_parts, chunks, props)
        assert rows(spark.sql(checksum.format(f"{ICE}.db.skew"))) == rows(
            spark.sql(checksum.format(f"{JAVA}.db.skew"))
        )
    got = spark.sql(checksum.format(f"{ICE}.db.skew")).collect()[0]
    assert got[0] == 300_000 + 3_000 - 30_300  # k = 7: a tenth of the rows deleted


def rows(df) -> list[str]:
    return sorted(repr(tuple(r)) for r in df.collect())


# ---------------------------------------------------------------------------------------------
# memory
# ---------------------------------------------------------------------------------------------


@pytest.mark.skipif(BIG_ROWS < 1_000_000, reason="the memory bound needs a big file")
def test_one_task_reads_a_big_file_with_dvs_in_bounded_memory(env):
    """One Spark task reads one big file (10,000,000 rows, 1.1 GB decoded; see
    tests/test_reader_limits.py for its size) with a deletion vector through the connector: the
    native library's peak allocations during the read stay far below the decoded size (one row
    group's column chunks and a few batches, not the file)."""
    spark, catalog = env
    t = catalog.create_table(
        "db.big",
        BIG_SCHEMA,
        properties={"format-version": "3", "write.target-file-size-bytes": str(8 << 30)},
    )
    t.append(pa.RecordBatchReader.from_batches(BIG_SCHEMA, _big_batches(BIG_ROWS)))
    t.delete("k = 3")
    t = catalog.load_table("db.big")
    plan = t.scan().plan_arrow()
    assert plan.num_rows == 1 and len(plan.column("deletes")[0].as_py()) == 1
    decoded = BIG_ROWS * (8 + 4 + PAYLOAD_BYTES + 4)

    # one task for the whole file
    df = spark.read.option("split-size", str(1 << 40)).table(f"{ICE}.db.big")
    assert _partitions(df) == 1
    before = stats(spark)
    spark._jvm.io.icefloe.spark.jni.NativeReader.resetPeakAllocated()
    base = stats(spark)["allocated-bytes"]
    got = df.selectExpr("count(*)", "sum(CAST(k = 3 AS int))", "sum(length(payload))").collect()[0]
    after = stats(spark)
    assert tuple(got) == (BIG_ROWS - BIG_ROWS // 10, 0, (BIG_ROWS - BIG_ROWS // 10) * PAYLOAD_BYTES)
    assert after["rows"] - before["rows"] == BIG_ROWS - BIG_ROWS // 10
    grown = after["peak-allocated-bytes"] - base
    print(f"decoded {decoded / 1e6:.0f} MB, the native reader's peak grew by {grown / 1e6:.0f} MB")
    # as tests/test_reader_limits.py bounds the reader outside Spark
    assert 0 < grown < decoded / 3, (grown, decoded)
    assert after["open-readers"] == 0
