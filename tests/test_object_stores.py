"""Tables whose data files are on object stores, read and written from Python (pyarrow
configured by ``_native.pyarrow_file_system`` from the table's FileIO properties), against
the servers of ``scripts/servers.sh start`` (source ``target/servers/servers.env``)."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

import icefloe
from icefloe import _native
from icefloe.errors import IcefloeError
from servers_env import server_env


def _rows(n0: int, n: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(n0, n0 + n), pa.int64()),
            "name": pa.array([f"r{i}" for i in range(n0, n0 + n)]),
        }
    )


SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


def _round_trip(catalog, location_prefix: str) -> None:
    """Create, append twice, scan, delete rows (v3: deletion vectors; v2: position delete
    files), read back: every file on the object store."""
    ns = f"os_{uuid.uuid4().hex[:8]}"
    catalog.create_namespace(ns)
    for version in (2, 3):
        t = catalog.create_table(f"{ns}.t{version}", SCHEMA, properties={"format-version": str(version)})
        assert t.metadata.location.startswith(location_prefix), t.metadata.location
        t.append(_rows(0, 10))
        t.append(_rows(10, 5))
        t = catalog.load_table(f"{ns}.t{version}")
        got = t.scan().to_arrow().sort_by("id")
        assert got.column("id").to_pylist() == list(range(15))
        assert got.column("name").to_pylist() == [f"r{i}" for i in range(15)]
        files = t.scan().plan_arrow().column("file_path").to_pylist()
        assert files and all(f.startswith(location_prefix) for f in files), files
        result = t.delete("id < 3 or id = 12")
        assert result.deleted_rows == 4
        t = catalog.load_table(f"{ns}.t{version}")
        plan = t.scan().plan_arrow()
        deletes = [d["file_path"] for ds in plan.column("deletes").to_pylist() for d in ds]
        assert deletes and all(d.startswith(location_prefix) for d in deletes), deletes
        ids = sorted(t.scan().to_arrow().column("id").to_pylist())
        assert ids == [i for i in range(15) if not (i < 3 or i == 12)]
        assert t.scan().count() == 11


def test_rest_catalog_with_vended_credentials_on_s3(monkeypatch):
    uri, warehouse, endpoint, vended = server_env(
        "ICEFLOE_TEST_REST_S3_URI",
        "ICEFLOE_TEST_REST_S3_WAREHOUSE",
        "ICEFLOE_TEST_S3_ENDPOINT",
        "ICEFLOE_TEST_REST_S3_VENDED_KEY_ID",
    )
    # the client has no keys of its own: only what loadTable vends
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    catalog = icefloe.load_catalog(
        "rest_s3",
        type="rest",
        uri=uri,
        warehouse=warehouse,
        **{"s3.endpoint": endpoint, "s3.path-style-access": "true", "client.region": "us-east-1"},
    )
    assert "s3.access-key-id" not in catalog.properties
    ns = f"vend_{uuid.uuid4().hex[:8]}"
    catalog.create_namespace(ns)
    t = catalog.create_table(f"{ns}.t", SCHEMA)
    t = catalog.load_table(f"{ns}.t")
    props = t.io.properties_for(t.metadata.location)
    # the executors get the vended key with the catalog's endpoint, and no catalog secret
    assert props["s3.access-key-id"] == vended
    assert props["s3.endpoint"] == endpoint
    assert "token" not in props and "uri" not in props
    assert vended not in repr(t.io)
    _round_trip(catalog, warehouse)


def test_sqlite_catalog_with_s3_properties(tmp_path):
    endpoint, bucket = server_env("ICEFLOE_TEST_S3_ENDPOINT", "ICEFLOE_TEST_BUCKET")
    warehouse = f"s3://{bucket}/sqlite-{uuid.uuid4().hex[:8]}"
    catalog = icefloe.load_catalog(
        "s3sql",
        type="sql",
        uri=f"sqlite:///{tmp_path}/c.db",
        warehouse=warehouse,
        **{
            "s3.endpoint": endpoint,
            "s3.path-style-access": "true",
            "s3.access-key-id": "test",
            "s3.secret-access-key": "test",
            "s3.region": "us-east-1",
        },
    )
    _round_trip(catalog, warehouse)


def test_sqlite_catalog_on_gcs(tmp_path):
    endpoint, bucket = server_env("ICEFLOE_TEST_GCS_ENDPOINT", "ICEFLOE_TEST_BUCKET")
    warehouse = f"gs://{bucket}/sqlite-{uuid.uuid4().hex[:8]}"
    props = {"gcs.service.host": endpoint, "gcs.no-auth": "true"}
    catalog = icefloe.load_catalog(
        "gcs", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=warehouse, **props
    )
    _round_trip(catalog, warehouse)


def test_pyarrow_settings_come_from_rust():
    kind, options, path = _native.pyarrow_file_system(
        "s3a://b/wh/f.parquet",
        {"s3.endpoint": "http://127.0.0.1:9/", "s3.path-style-access": "true", "client.region": "eu-west-1"},
    )
    assert (kind, path) == ("s3", "b/wh/f.parquet")
    assert options["endpoint_override"] == "127.0.0.1:9" and options["scheme"] == "http"
    assert options["region"] == "eu-west-1" and options["force_virtual_addressing"] is False
    with pytest.raises(icefloe.errors.InvalidArgumentError, match="s3.path-style-access"):
        _native.pyarrow_file_system("s3://b/k", {"s3.path-style-access": "maybe"})
    assert _native.FileIO("/tmp/x").properties_for("/tmp/x") is None
    # defaults as the Rust S3 FileIO's: us-east-1, virtual-hosted addressing, io.* timeouts
    _, options, _ = _native.pyarrow_file_system("s3://b/k", {})
    assert options["region"] == "us-east-1" and "endpoint_override" not in options
    assert options["request_timeout"] == 120.0
    # pyarrow retries as many times as the Rust FileIO (io.retry.num-retries, default 5)
    assert options["retry_max_attempts"] == 6
    _, options, _ = _native.pyarrow_file_system("s3://b/k", {"s3.retry.num-retries": "1"})
    assert options["retry_max_attempts"] == 2
    # path style without an endpoint: AWS's regional endpoint, addressed by path
    _, options, _ = _native.pyarrow_file_system("s3://b/k", {"s3.path-style-access": "true"})
    assert options["endpoint_override"] == "s3.us-east-1.amazonaws.com"
    # Azure: an emulator's connection string, an account key, and a SAS token per account
    azure = {
        "adls.connection-string.devstoreaccount1": "http://127.0.0.1:10000/devstoreaccount1",
        "adls.account-key": "KEY",
        "adls.sas-token.other.dfs.core.windows.net": "?sv=1&sig=x",
    }
    kind, options, path = _native.pyarrow_file_system(
        "abfs://c@devstoreaccount1.dfs.core.windows.net/wh/f", azure
    )
    assert (kind, path) == ("azure", "c/wh/f")
    assert options["blob_storage_authority"] == "127.0.0.1:10000" and options["account_key"] == "KEY"
    _, options, _ = _native.pyarrow_file_system("wasbs://c@other.blob.core.windows.net/f", azure)
    assert options["sas_token"] == "sv=1&sig=x" and "account_key" not in options
    # local paths keep their escapes; GCS; unsupported schemes and a missing bucket
    assert _native.pyarrow_file_system("file:/tmp/a%3D1/f", {})[::2] == ("local", "/tmp/a%3D1/f")
    gcs = _native.pyarrow_file_system("gs://b/k", {"gcs.service.host": "http://127.0.0.1:4443"})
    assert gcs[::2] == ("gcs", "b/k")
    with pytest.raises(icefloe.errors.UnsupportedError):
        _native.pyarrow_file_system("hdfs://nn/x", {})
    with pytest.raises(icefloe.errors.IcefloeError):
        _native.pyarrow_file_system("s3:///k", {})


def test_scrubbing_hides_keys_but_not_every_letter_of_a_short_one():
    from icefloe.executor.files import scrub

    props = {"s3.access-key-id": "k", "s3.secret-access-key": "s3cr3t-value"}
    text = scrub("in bucket 'b' key 'k': s3cr3t-value sig=abc", "s3://b/k", props)
    assert text == "in bucket 'b' key 'k': *** sig=***", text


def test_wrong_credentials_are_a_typed_error_without_the_secret(tmp_path):
    # moto accepts any key; Azurite checks the shared-key signature
    endpoint, account, key, bucket = server_env(
        "ICEFLOE_TEST_AZURE_ENDPOINT",
        "ICEFLOE_TEST_AZURE_ACCOUNT",
        "ICEFLOE_TEST_AZURE_KEY",
        "ICEFLOE_TEST_BUCKET",
    )
    warehouse = f"abfs://{bucket}@{account}.dfs.core.windows.net/wh-{uuid.uuid4().hex[:8]}"
    props = {f"adls.connection-string.{account}": endpoint, "adls.account-key": key}
    catalog = icefloe.load_catalog(
        "az", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=warehouse, **props
    )
    catalog.create_namespace("ns")
    t = catalog.create_table("ns.t", SCHEMA)
    t.append(_rows(0, 4))
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [0, 1, 2, 3]
    data_file = t.scan().plan_arrow().column("file_path")[0].as_py()
    from icefloe.executor.read import read_tasks

    wrong = "V3JvbmdXcm9uZ1dyb25nV3JvbmdXcm9uZ1dyb25nV3JvbmdXcm9uZw=="
    bad = {f"adls.connection-string.{account}": endpoint, "adls.account-key": wrong}
    with pytest.raises(IcefloeError) as e:
        list(read_tasks(t.scan().plan_arrow(), io_properties=bad))
    text = str(e.value) + repr(e.value)
    assert data_file in text
    assert wrong not in text and key not in text
    # typed as the store's refusal of the credentials (an I/O and an authorization error)
    assert isinstance(e.value, icefloe.errors.AccessDeniedError), text


@pytest.mark.java
def test_spark_source_on_s3_with_vended_credentials(spark):
    """The ``icefloe`` Spark data source writes and reads a table on S3 through the REST
    catalog: the driver hands the executors the table's FileIO properties (vended keys
    included), the executors write and read with pyarrow."""
    uri, warehouse, endpoint = server_env(
        "ICEFLOE_TEST_REST_S3_URI", "ICEFLOE_TEST_REST_S3_WAREHOUSE", "ICEFLOE_TEST_S3_ENDPOINT"
    )
    import icefloe.spark

    icefloe.spark.register(spark)
    props = {"s3.endpoint": endpoint, "s3.path-style-access": "true"}
    catalog = icefloe.load_catalog("rest_s3_spark", type="rest", uri=uri, warehouse=warehouse, **props)
    ns = f"spark_{uuid.uuid4().hex[:8]}"
    catalog.create_namespace(ns)
    catalog.create_table(f"{ns}.t", SCHEMA)
    options = {
        "catalog": "rest_s3_spark",
        "type": "rest",
        "uri": uri,
        "warehouse": warehouse,
        **{f"catalog.{k}": v for k, v in props.items()},
    }
    df = spark.createDataFrame([(i, f"r{i}") for i in range(20)], "id long, name string").repartition(3)
    df.write.format("icefloe").options(**options).mode("append").save(f"{ns}.t")
    t = catalog.load_table(f"{ns}.t")
    files = t.scan().plan_arrow().column("file_path").to_pylist()
    assert len(files) == 3 and all(f.startswith(warehouse) for f in files), files
    rows = spark.read.format("icefloe").options(**options).load(f"{ns}.t").where("id >= 5").collect()
    assert sorted((r.id, r.name) for r in rows) == [(i, f"r{i}") for i in range(5, 20)]


def test_file_io_counts_requests_and_bytes_and_plans_are_counted():
    """``FileIO.stats()``: the requests and bytes of an S3 FileIO, what benches/plan_s3.py
    reports per plan; with ``io.manifest.cache-enabled`` a manifest is fetched once."""
    endpoint, bucket = server_env("ICEFLOE_TEST_S3_ENDPOINT", "ICEFLOE_TEST_BUCKET")
    root = f"s3://{bucket}/stats-{uuid.uuid4().hex[:8]}"
    props = {
        "s3.endpoint": endpoint,
        "s3.path-style-access": "true",
        "s3.access-key-id": "test",
        "s3.secret-access-key": "test",
        "s3.region": "us-east-1",
    }
    io = _native.FileIO(root, props)
    assert io.stats() == {"requests": 0, "bytes_read": 0, "bytes_written": 0, "cache_hits": 0}
    io.write_new(f"{root}/metadata/m.avro", b"x" * 100)
    assert io.read(f"{root}/metadata/m.avro") == b"x" * 100
    assert io.read(f"{root}/metadata/m.avro") == b"x" * 100
    assert io.stats() == {"requests": 3, "bytes_read": 200, "bytes_written": 100, "cache_hits": 0}
    io.reset_stats()
    assert io.stats() == {"requests": 0, "bytes_read": 0, "bytes_written": 0, "cache_hits": 0}
    cached = _native.FileIO(root, {**props, "io.manifest.cache-enabled": "true"})
    for _ in range(3):
        assert cached.read(f"{root}/metadata/m.avro") == b"x" * 100
    assert cached.stats() == {"requests": 1, "bytes_read": 100, "bytes_written": 0, "cache_hits": 2}
    # local files are not counted
    assert _native.FileIO("/tmp").stats() is None
