"""Faults against real servers: S3 (moto) throttling for a while then recovering, or for
longer than the retry budget; a missing bucket; wrong credentials; and the Iceberg REST
server losing a commit's answer, answering 503, or being killed while a commit is on its
way. Between the client and the server sits ``tests/faultproxy.py``, a real HTTP proxy
that injects the faults (the client is not mocked).

What must hold: errors are typed and name the location, never a credential; a table is
never half-written; after an unknown commit state the files the commit wrote are kept.
The servers come from ``scripts/servers.sh start`` (``source target/servers/servers.env``);
the kill test starts a REST server of its own, on a SQLite catalog that survives a restart.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

import icefloe
from icefloe import _native, errors
from icefloe.executor.position_deletes import write_position_deletes
from icefloe.executor.read import read_tasks
from icefloe.executor.write import write_data_files
from servers_env import server_env

sys.path.insert(0, str(Path(__file__).parent))
from faultproxy import FaultProxy  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SECRET = "fault-secret-Zq8w3Rk2"  # moto accepts any key; this one must never be shown
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


def _rows(n0: int, n: int) -> pa.Table:
    return pa.table(
        {"id": pa.array(range(n0, n0 + n), pa.int64()), "name": [f"r{i}" for i in range(n0, n0 + n)]},
        schema=SCHEMA,
    )


def _ids(table) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def _shown(e: BaseException) -> str:
    return f"{e} {e!r} {getattr(e, 'file', '')}"


# ---------------------------------------------------------------------------------------------
# S3


@pytest.fixture(scope="module")
def s3_proxy():
    (endpoint,) = server_env("ICEFLOE_TEST_S3_ENDPOINT")
    proxy = FaultProxy(endpoint)
    yield proxy
    proxy.close()


@pytest.fixture()
def s3(s3_proxy, tmp_path):
    """A SQLite catalog whose warehouse is on moto behind the proxy, and the S3 properties."""
    (bucket,) = server_env("ICEFLOE_TEST_BUCKET")
    s3_proxy.clear()
    props = {
        "s3.endpoint": s3_proxy.url,
        "s3.path-style-access": "true",
        "s3.access-key-id": "fault-key",
        "s3.secret-access-key": SECRET,
        "s3.region": "us-east-1",
        # short waits keep the test quick; the budget is still 5 retries
        "io.retry.min-wait-ms": "20",
        "io.retry.max-wait-ms": "200",
    }
    warehouse = f"s3://{bucket}/faults-{uuid.uuid4().hex[:8]}"

    def catalog(**extra: str):
        return icefloe.load_catalog(
            "faults", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=warehouse, **{**props, **extra}
        )

    yield catalog, props, warehouse
    s3_proxy.clear()


def _table_with_rows(catalog, **properties: str):
    catalog.create_namespace("ns")
    t = catalog.create_table("ns.t", SCHEMA, properties=properties)
    t.append(_rows(0, 4))
    return catalog.load_table("ns.t")


def test_s3_throttled_for_a_few_requests_then_recovering(s3, s3_proxy):
    make, props, _ = s3
    catalog = make()
    t = _table_with_rows(catalog)
    snapshot = t.current_snapshot().snapshot_id
    assert len(t.scan().plan_arrow().column("file_path")) == 1

    # planning (Rust FileIO: metadata, manifest list, manifests)
    s3_proxy.add(action="status", status=503, count=3)
    t = catalog.load_table("ns.t")
    assert t.scan().plan_arrow().num_rows == 1
    assert len(s3_proxy.actions("status")) == 3

    # reading the data file (pyarrow, the executors): three 503s in a row on the one file
    # is more than pyarrow's default of 3 attempts, within io.retry.num-retries (5)
    s3_proxy.clear()
    s3_proxy.add(action="status", status=503, method="GET", path=r"\.parquet$", count=3)
    assert _ids(t) == [0, 1, 2, 3]
    assert len(s3_proxy.actions("status")) == 6

    # a commit: data file written by pyarrow, manifests and metadata by Rust
    s3_proxy.add(action="status", status=503, method="PUT", count=3)
    t.append(_rows(4, 2))
    s3_proxy.clear()
    fresh = catalog.load_table("ns.t")
    assert fresh.current_snapshot().parent_snapshot_id == snapshot
    assert _ids(fresh) == list(range(6))


def test_s3_throttled_for_a_while_then_recovering(s3, s3_proxy):
    make, _, _ = s3
    _table_with_rows(make())
    # every request refused for 1 s; 10 retries waiting at least 200 ms each outlast it
    catalog = make(
        **{"io.retry.num-retries": "10", "io.retry.min-wait-ms": "200", "io.retry.max-wait-ms": "400"}
    )
    s3_proxy.add(action="status", status=503, seconds=1.0)
    started = time.monotonic()
    t = catalog.load_table("ns.t")
    assert t.scan().plan_arrow().num_rows == 1
    assert time.monotonic() - started >= 0.9
    throttled = len(s3_proxy.actions("status"))
    assert throttled >= 3
    # the executors' reads too
    s3_proxy.add(action="status", status=503, seconds=1.0)
    assert _ids(t) == [0, 1, 2, 3]
    assert len(s3_proxy.actions("status")) > throttled


def test_s3_throttled_past_the_retry_budget_is_a_typed_error(s3, s3_proxy):
    make, props, warehouse = s3
    t = _table_with_rows(make())
    plan = t.scan().plan_arrow()
    data_file = plan.column("file_path")[0].as_py()
    metadata_location = t.metadata_location
    tight = {**props, "io.retry.num-retries": "1"}
    # one retry keeps this quick: pyarrow's S3 client waits the AWS SDK's backoff (seconds)
    tight_table = make(**{"io.retry.num-retries": "1"}).load_table("ns.t")
    s3_proxy.add(action="status", status=503, count=1000)

    # planning: the table's metadata file cannot be read
    with pytest.raises(errors.IcefloeIOError) as e:
        make(**{"io.retry.num-retries": "1"}).load_table("ns.t")
    text = _shown(e.value)
    assert metadata_location in text and "SlowDown" in text, text
    assert SECRET not in text

    # the executors' read of the data file
    with pytest.raises(errors.IcefloeIOError) as e:
        list(read_tasks(plan, io_properties=tight))
    text = _shown(e.value)
    assert data_file in text and SECRET not in text, text

    # a commit: refused before anything is committed
    with pytest.raises(errors.IcefloeIOError) as e:
        tight_table.append(_rows(4, 2))
    text = _shown(e.value)
    assert warehouse in text and SECRET not in text, text
    s3_proxy.clear()
    fresh = make().load_table("ns.t")
    assert fresh.metadata_location == metadata_location
    assert _ids(fresh) == [0, 1, 2, 3]


def test_s3_upload_throttled_past_the_retry_budget_is_a_typed_error(s3, s3_proxy):
    """The upload itself (after the file was opened) refused until the retries run out."""
    make, props, warehouse = s3
    # v2: row deletes are Parquet position delete files, written by pyarrow
    t = _table_with_rows(make(), **{"format-version": "2"})
    data_file = t.scan().plan_arrow().column("file_path")[0].as_py()
    tight = {**props, "io.retry.num-retries": "1"}
    s3_proxy.add(action="status", status=503, method="PUT", path=r"\.parquet$")
    # a data file (the executors' writer)
    with pytest.raises(errors.IcefloeIOError) as e:
        write_data_files(t.metadata, _rows(0, 3), location_prefix=f"{warehouse}/data", io_properties=tight)
    text = _shown(e.value)
    assert f"{warehouse}/data/" in text and "SLOW_DOWN" in text and SECRET not in text, text
    # a position delete file
    with pytest.raises(errors.IcefloeIOError) as e:
        write_position_deletes(t.metadata, {data_file: [0]}, io_properties=tight)
    text = _shown(e.value)
    assert "-deletes.parquet" in text and "SLOW_DOWN" in text and SECRET not in text, text
    assert s3_proxy.actions("status")


def test_s3_write_whose_answer_is_lost_is_recognised_as_its_own(s3, s3_proxy):
    """moto stores the object, the proxy drops the answer, the client sends the create-only
    PUT again and is refused (412): the FileIO finds its own bytes there, and the commit goes
    on instead of failing after a write that succeeded."""
    make, props, warehouse = s3
    catalog = make()
    t = _table_with_rows(catalog)
    for written_by_the_commit in (r"-m0\.avro$", r"\.metadata\.json$"):
        s3_proxy.add(action="drop", method="PUT", path=written_by_the_commit, count=1)
        t.append(_rows(len(t.snapshots()) * 10, 1))
        puts = [
            e for e in s3_proxy.stats()["log"] if e[0] == "PUT" and re.search(written_by_the_commit, e[1])
        ]
        assert [e[2:] for e in puts[-2:]] == [["drop", 0], ["forward", 412]], puts
    fresh = catalog.load_table("ns.t")
    assert len(fresh.snapshots()) == 3
    assert _ids(fresh) == [0, 1, 2, 3, 10, 20]
    # another writer's object under the name is still refused
    location = f"{warehouse}/other.bin"
    io = _native.FileIO(location, props)
    io.write_new(location, b"theirs")
    s3_proxy.add(action="drop", method="PUT", path=r"/other2\.bin$", count=1)
    io.write_new(location.replace("other", "other2"), b"mine")
    assert io.read(location.replace("other", "other2")) == b"mine"
    with pytest.raises(errors.IcefloeIOError, match="already exists"):
        io.write_new(location, b"mine")
    assert io.read(location) == b"theirs"


def test_a_missing_bucket_is_a_typed_error_naming_the_location(s3, tmp_path):
    _, props, _ = s3
    missing = f"icefloe-missing-{uuid.uuid4().hex[:8]}"
    warehouse = f"s3://{missing}/wh"
    catalog = icefloe.load_catalog(
        "missing", type="sql", uri=f"sqlite:///{tmp_path}/m.db", warehouse=warehouse, **props
    )
    catalog.create_namespace("ns")
    # create table: its first metadata file cannot be written
    with pytest.raises(errors.IcefloeIOError) as e:
        catalog.create_table("ns.t", SCHEMA)
    text = _shown(e.value)
    assert f"s3://{missing}/wh/ns/t/metadata/" in text and "bucket" in text, text
    assert SECRET not in text
    assert not catalog.table_exists("ns.t")

    # read (Rust FileIO)
    location = f"s3://{missing}/wh/f.parquet"
    with pytest.raises(errors.IcefloeIOError) as e:
        _native.FileIO(location, props).read(location)
    text = _shown(e.value)
    assert location in text and "bucket" in text and SECRET not in text, text

    # write and read (pyarrow, the executors), with the metadata of a table in the bucket
    local = icefloe.load_catalog(
        "local", uri=f"sqlite:///{tmp_path}/l.db", warehouse=(tmp_path / "wh").as_uri()
    )
    local.create_namespace("ns")
    md = local.create_table("ns.t", SCHEMA).metadata
    with pytest.raises(errors.IcefloeIOError) as e:
        write_data_files(md, _rows(0, 3), location_prefix=f"s3://{missing}/wh/data", io_properties=props)
    text = _shown(e.value)
    assert f"s3://{missing}/wh/data/" in text and SECRET not in text, text


def _moto_with_auth():
    """A moto server of its own that checks credentials (moto's IAM has no users, so every
    key is unknown), with a bucket made by its one unauthenticated request."""
    port = _free_port()
    moto = Path(sys.executable).parent / "moto_server"
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "1"}
    proc = subprocess.Popen(
        [str(moto), "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    _wait_http(f"{url}/moto-api/", proc, 30)
    req = urllib.request.Request(f"{url}/authbucket", method="PUT")
    urllib.request.urlopen(req, timeout=10).close()
    return proc, url


def test_wrong_s3_credentials_are_a_typed_error_without_the_secret(tmp_path):
    server_env("ICEFLOE_TEST_S3_ENDPOINT")
    proc, url = _moto_with_auth()
    try:
        props = {
            "s3.endpoint": url,
            "s3.path-style-access": "true",
            "s3.access-key-id": "AKIAWRONGWRONGWRONG0",
            "s3.secret-access-key": SECRET,
            "s3.region": "us-east-1",
        }
        location = "s3://authbucket/wh/f.parquet"
        with pytest.raises(errors.AccessDeniedError) as e:
            _native.FileIO(location, props).read(location)
        text = _shown(e.value)
        assert location in text and "access denied" in text and SECRET not in text, text
        assert e.value.file == location
        # one class for a refusal by the catalog or the store, and still an I/O error
        assert isinstance(e.value, (errors.NotAuthorizedError, PermissionError, errors.IcefloeIOError))

        catalog = icefloe.load_catalog(
            "auth", type="sql", uri=f"sqlite:///{tmp_path}/a.db", warehouse="s3://authbucket/wh", **props
        )
        catalog.create_namespace("ns")
        with pytest.raises(errors.AccessDeniedError) as e:
            catalog.create_table("ns.t", SCHEMA)
        text = _shown(e.value)
        assert "s3://authbucket/wh/ns/t/metadata/" in text and SECRET not in text, text

        local = icefloe.load_catalog(
            "local", uri=f"sqlite:///{tmp_path}/l.db", warehouse=(tmp_path / "wh").as_uri()
        )
        local.create_namespace("ns")
        md = local.create_table("ns.t", SCHEMA).metadata
        with pytest.raises(errors.AccessDeniedError) as e:
            write_data_files(md, _rows(0, 3), location_prefix="s3://authbucket/wh/data", io_properties=props)
        text = _shown(e.value)
        assert "s3://authbucket/wh/data/" in text and SECRET not in text, text
    finally:
        proc.kill()
        proc.wait()


# ---------------------------------------------------------------------------------------------
# REST


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except urllib.error.HTTPError:
            return  # it answers
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"{url}: the server exited ({proc.returncode})") from None
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not answer in {timeout} s") from None
            time.sleep(0.2)


@pytest.fixture(scope="module")
def rest_proxy():
    (uri,) = server_env("ICEFLOE_TEST_REST_URI")
    proxy = FaultProxy(uri)
    yield proxy
    proxy.close()


@pytest.fixture()
def rest(rest_proxy):
    (warehouse,) = server_env("ICEFLOE_TEST_REST_WAREHOUSE")
    rest_proxy.clear()
    catalog = icefloe.load_catalog("rest_faults", type="rest", uri=rest_proxy.url, warehouse=warehouse)
    ns = f"faults_{uuid.uuid4().hex[:8]}"
    catalog.create_namespace(ns)
    yield catalog, ns
    rest_proxy.clear()


COMMIT = r"/v1/namespaces/[^/]+/tables/t$"


def _local_files(table) -> set[str]:
    """The Parquet files under a table on a file: warehouse."""
    root = Path(table.metadata.location.split(":", 1)[1].lstrip("/"))
    return {str(p) for p in Path("/" + str(root)).rglob("*.parquet")}


def _names_kept(error: BaseException, written: set[str]) -> None:
    """The user is told which files were kept (the table may reference them)."""
    for f in written:
        assert Path(f).name in str(error), error


def _consistent(table, expected_ids: list[int]) -> None:
    """Every file the table references exists, and it reads as `expected_ids`."""
    plan = table.scan().plan_arrow()
    for f in plan.column("file_path").to_pylist():
        assert Path(f.split(":", 1)[1]).exists(), f
    assert _ids(table) == expected_ids


def test_rest_commit_whose_answer_is_lost_is_state_unknown_and_keeps_files(rest, rest_proxy):
    catalog, ns = rest
    t = catalog.create_table(f"{ns}.t", SCHEMA)
    t.append(_rows(0, 2))
    before = _local_files(t)
    # the server applies the commit; its answer never reaches the client
    rest_proxy.add(action="drop", method="POST", path=COMMIT, count=1)
    with pytest.raises(errors.CommitStateUnknownError) as e:
        t.append(_rows(2, 2))
    assert f"{ns}/tables/t" in str(e.value), e.value
    written = _local_files(t) - before
    assert len(written) == 1, written
    _names_kept(e.value, written)
    assert rest_proxy.actions("drop")
    # the server did apply it: the table has the new snapshot and every file it references
    fresh = catalog.load_table(f"{ns}.t")
    assert len(fresh.snapshots()) == 2
    _consistent(fresh, [0, 1, 2, 3])


def test_rest_commit_answered_503_is_state_unknown_and_keeps_files(rest, rest_proxy):
    catalog, ns = rest
    t = catalog.create_table(f"{ns}.t", SCHEMA)
    t.append(_rows(0, 2))
    before = _local_files(t)
    body = '{"error": {"message": "overloaded", "type": "ServiceUnavailableException", "code": 503}}'
    rest_proxy.add(
        action="status",
        status=503,
        method="POST",
        path=COMMIT,
        count=1,
        body=body,
        content_type="application/json",
    )
    with pytest.raises(errors.CommitStateUnknownError) as e:
        t.append(_rows(2, 2))
    assert "503" in str(e.value), e.value
    written = _local_files(t) - before
    assert len(written) == 1 and all(Path(f).exists() for f in written), written
    _names_kept(e.value, written)
    # the proxy refused it for the server: the table is as it was, and usable
    fresh = catalog.load_table(f"{ns}.t")
    assert len(fresh.snapshots()) == 1
    _consistent(fresh, [0, 1])
    fresh.append(_rows(4, 1))
    _consistent(catalog.load_table(f"{ns}.t"), [0, 1, 4])


def test_rest_commit_that_times_out_is_state_unknown_and_keeps_files(rest, rest_proxy):
    catalog, ns = rest
    catalog.create_table(f"{ns}.t", SCHEMA).append(_rows(0, 2))
    (uri,) = server_env("ICEFLOE_TEST_REST_WAREHOUSE")
    impatient = icefloe.load_catalog(
        "rest_impatient",
        type="rest",
        uri=rest_proxy.url,
        warehouse=uri,
        **{"rest.client.socket-timeout-ms": "1000"},
    )
    t = impatient.load_table(f"{ns}.t")
    before = _local_files(t)
    rest_proxy.add(action="hold", method="POST", path=COMMIT, count=1)
    with pytest.raises(errors.CommitStateUnknownError) as e:
        t.append(_rows(2, 2))
    assert "timed out" in str(e.value), e.value
    written = _local_files(t) - before
    assert len(written) == 1 and all(Path(f).exists() for f in written), written
    _names_kept(e.value, written)
    # the request reaches the server late, after the client gave up: it is applied
    rest_proxy.release()
    deadline = time.monotonic() + 30
    while not [x for x in rest_proxy.stats()["log"] if x[2] == "hold" and len(x) > 3]:
        assert time.monotonic() < deadline, rest_proxy.stats()["log"]
        time.sleep(0.05)
    fresh = catalog.load_table(f"{ns}.t")
    assert len(fresh.snapshots()) == 2
    _consistent(fresh, [0, 1, 2, 3])


def test_rest_reads_throttled_for_a_while_are_retried(rest, rest_proxy):
    catalog, ns = rest
    catalog.create_table(f"{ns}.t", SCHEMA).append(_rows(0, 2))
    (warehouse,) = server_env("ICEFLOE_TEST_REST_WAREHOUSE")
    body = '{"error": {"message": "slow down", "type": "ServiceUnavailableException", "code": 503}}'
    # one 503 on loadTable: sent again after Java's first wait (1 s)
    rest_proxy.add(
        action="status",
        status=503,
        method="GET",
        path=COMMIT,
        count=1,
        body=body,
        content_type="application/json",
    )
    t = catalog.load_table(f"{ns}.t")
    loads = [e[3] for e in rest_proxy.stats()["log"] if e[0] == "GET" and e[1].endswith(f"{ns}/tables/t")]
    assert loads == [503, 200], loads
    assert _ids(t) == [0, 1]
    # throttled past rest.client.max-retries: a typed error naming the request
    tight = icefloe.load_catalog(
        "rest_tight", type="rest", uri=rest_proxy.url, warehouse=warehouse, **{"rest.client.max-retries": "1"}
    )
    rest_proxy.add(
        action="status", status=429, method="GET", path=COMMIT, body=body, content_type="application/json"
    )
    with pytest.raises(errors.ServiceFailureError) as e:
        tight.load_table(f"{ns}.t")
    text = str(e.value)
    assert f"GET /v1/namespaces/{ns}/tables/t" in text and "429" in text and "after 1 retries" in text, text


def test_rest_conflict_is_retried_on_a_refreshed_base(rest, rest_proxy):
    catalog, ns = rest
    catalog.create_table(f"{ns}.t", SCHEMA)
    first, second = catalog.load_table(f"{ns}.t"), catalog.load_table(f"{ns}.t")
    first.append(_rows(0, 2))
    second.append(_rows(2, 2))  # stale base: the server answers 409, icefloe retries
    commits = [e for e in rest_proxy.stats()["log"] if e[0] == "POST" and e[1].endswith(f"{ns}/tables/t")]
    # the create, the first append, the stale one refused, then retried
    assert [e[3] for e in commits] == [200, 200, 409, 200], commits
    fresh = catalog.load_table(f"{ns}.t")
    assert len(fresh.snapshots()) == 2
    _consistent(fresh, [0, 1, 2, 3])


class _RestServer:
    """An Iceberg REST server of this test's own (the jar of scripts/servers.sh), its JDBC
    catalog in a SQLite file and its warehouse on local disk, so both survive a restart."""

    def __init__(self, root: Path):
        jars = sorted((ROOT / ".cache" / "jars").glob("iceberg-open-api-*.jar"))
        if not jars or not shutil.which("java"):
            pytest.skip("no Iceberg REST server jar in .cache/jars or no java (scripts/servers.sh install)")
        self.jar = jars[-1]
        self.port = _free_port()
        self.warehouse = f"file://{root / 'wh'}"
        self.db = root / "rest.db"
        self.log = root / "rest.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        env = {
            **os.environ,
            "CATALOG_REST_PORT": str(self.port),
            "CATALOG_WAREHOUSE": self.warehouse,
            "CATALOG_URI": f"jdbc:sqlite:{self.db}",
            "CATALOG_JDBC_SCHEMA__VERSION": "V1",
        }
        cmd = ["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-jar", str(self.jar)]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=log, start_new_session=True)
        _wait_http(f"http://127.0.0.1:{self.port}/v1/config", self.proc, 120)

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def test_rest_server_killed_while_a_commit_is_on_its_way(tmp_path):
    server_env("ICEFLOE_TEST_REST_URI")  # the servers of scripts/servers.sh are up: java is there
    server = _RestServer(tmp_path)
    server.start()
    proxy = FaultProxy(f"127.0.0.1:{server.port}")
    try:
        catalog = icefloe.load_catalog("killed", type="rest", uri=proxy.url, warehouse=server.warehouse)
        catalog.create_namespace("ns")
        t = catalog.create_table("ns.t", SCHEMA)
        t.append(_rows(0, 2))
        before = _local_files(t)

        proxy.add(action="hold", method="POST", path=COMMIT, count=1)
        outcome: list[BaseException | None] = []

        def append() -> None:
            try:
                t.append(_rows(2, 2))
                outcome.append(None)
            except BaseException as e:  # noqa: BLE001 (handed to the test thread)
                outcome.append(e)

        writer = threading.Thread(target=append)
        writer.start()
        proxy.wait_held()
        server.kill()
        proxy.release()  # the request goes on to a server that is gone: no answer
        writer.join(60)
        assert outcome and isinstance(outcome[0], errors.CommitStateUnknownError), outcome
        written = _local_files(t) - before
        assert len(written) == 1 and all(Path(f).exists() for f in written), written
        _names_kept(outcome[0], written)

        server.start()
        fresh = catalog.load_table("ns.t")
        assert len(fresh.snapshots()) == 1
        _consistent(fresh, [0, 1])
        fresh.append(_rows(4, 1))
        _consistent(catalog.load_table("ns.t"), [0, 1, 4])
    finally:
        proxy.close()
        server.kill()
