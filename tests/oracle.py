"""Java Iceberg as a conformance oracle, reached through PySpark's py4j gateway.

The JVM is the one PySpark starts for a local SparkSession. Besides Spark itself it has on its
class path the Iceberg Spark runtime jar and ``icefloe-oracle.jar`` (compiled by
``scripts/setup.sh`` from ``tests/java/IcefloeOracle.java``), whose static methods take and
return plain strings so that one py4j round trip handles a whole batch.

Single values cross the bridge as JSON in the spec's single-value serialisation (Appendix D).
This module also owns the creation of Java-written tables used by the metadata tests.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import re
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JAR_DIR = ROOT / ".cache" / "jars"
ICEBERG_VERSION = "1.11.0"
RUNTIME_JAR = JAR_DIR / f"iceberg-spark-runtime-4.1_2.13-{ICEBERG_VERSION}.jar"
ORACLE_JAR = JAR_DIR / "icefloe-oracle.jar"
# the SQLite JDBC driver, for Java's JdbcCatalog on the catalog files icefloe writes
SQLITE_JDBC_JAR = JAR_DIR / "sqlite-jdbc-3.50.3.0.jar"
# the AWS SDK that Java's S3FileIO needs (the runtime jar ships S3FileIO without it), for the
# REST catalog on S3 (tests/test_rest_s3_interop.py)
AWS_BUNDLE_JAR = JAR_DIR / f"iceberg-aws-bundle-{ICEBERG_VERSION}.jar"
ORACLE_CLASS = "icefloe.oracle.IcefloeOracle"


# ---------------------------------------------------------------------------------------------
# Spark session
# ---------------------------------------------------------------------------------------------


def missing_jars() -> list[Path]:
    return [p for p in (RUNTIME_JAR, ORACLE_JAR, SQLITE_JDBC_JAR, AWS_BUNDLE_JAR) if not p.is_file()]


def start_spark(warehouse: Path, view_warehouse: Path, driver_memory: str = "1g"):
    """A small local SparkSession with two Iceberg catalogs.

    ``java``: Hadoop catalog (tables only) whose warehouse is ``warehouse``.
    ``javamem``: in-memory catalog (supports views; its files live in Java's InMemoryFileIO, so
    view metadata is fetched through the Java API, see ``create_java_views``).
    """
    from pyspark.sql import SparkSession

    jars = [str(RUNTIME_JAR), str(ORACLE_JAR), str(SQLITE_JDBC_JAR)]
    # The AWS bundle (63 MB) only goes on the driver class path: in local mode the executors
    # run in the driver's JVM, and spark.jars would copy it into every session's work dir.
    driver_class_path = [*jars, str(AWS_BUNDLE_JAR)]
    # Keep the JVM quiet and quick to start; tests never look at Spark's own logs.
    os.environ.setdefault("PYSPARK_SUBMIT_ARGS", "--driver-java-options -Dlog4j2.level=WARN pyspark-shell")
    # Spark's Python workers (the icefloe data source runs in them) need this interpreter,
    # the one icefloe is installed in
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("icefloe-oracle")
        .config("spark.driver.memory", driver_memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # the icefloe data source takes pushed filters over (tests/test_spark_source.py)
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        # spark.jars alone is not visible to py4j's class loader: also put them on the driver
        # class path.
        .config("spark.jars", ",".join(jars))
        .config("spark.driver.extraClassPath", os.pathsep.join(driver_class_path))
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.java", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.java.type", "hadoop")
        .config("spark.sql.catalog.java.warehouse", warehouse.as_uri())
        .config("spark.sql.catalog.javamem", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.javamem.catalog-impl", "org.apache.iceberg.inmemory.InMemoryCatalog")
        # no caching wrapper, so that icebergCatalog() is the InMemoryCatalog (a ViewCatalog)
        .config("spark.sql.catalog.javamem.cache-enabled", "false")
        .config("spark.sql.catalog.javamem.warehouse", view_warehouse.as_uri())
    )
    # icefloe's JVM connector (io.icefloe.spark.SparkCatalog), when this installation has it:
    # its tests (tests/test_spark_connector.py) register catalogs in this session
    from icefloe.errors import UnsupportedError
    from icefloe.spark import configure

    try:
        builder = configure(builder)
    except UnsupportedError:
        pass
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def oracle_class(jvm):
    cls = jvm
    for part in ORACLE_CLASS.split("."):
        cls = getattr(cls, part)
    return cls


class Oracle:
    """Thin Python face of ``IcefloeOracle`` (see tests/java/IcefloeOracle.java)."""

    def __init__(self, jvm):
        self.jvm = jvm
        self.cls = oracle_class(jvm)

    def result_type(self, transform: str, source_type: str) -> str:
        return str(self.cls.resultType(transform, source_type))

    def apply_transform(self, transform: str, source_type: str, json_values: list[str]) -> list[str]:
        """Java's result for each single-value JSON input, as single-value JSON ("null" for null).

        A value Java rejects comes back as ``"!error: ..."``.
        """
        if not json_values:
            return []
        for v in json_values:
            assert "\n" not in v, v
        out = str(self.cls.applyTransformLines(transform, source_type, "\n".join(json_values)))
        result = out.split("\n")
        assert len(result) == len(json_values)
        return result

    def read_metadata_file(self, path) -> str:
        return str(self.cls.readMetadataFile(str(path)))

    def round_trip_metadata(self, text: str) -> str:
        return str(self.cls.roundTripMetadata(text))

    def metadata_facts(self, text: str) -> dict:
        return json.loads(str(self.cls.metadataFacts(text)))

    def current_schema_fields(self, text: str) -> list[tuple[int, str, bool, str]]:
        out = []
        for line in str(self.cls.currentSchemaFields(text)).splitlines():
            fid, name, required, typ = line.split("\t")
            out.append((int(fid), name, required == "true", typ))
        return out

    def round_trip_view_metadata(self, text: str) -> str:
        return str(self.cls.roundTripViewMetadata(text))

    def round_trip_name_mapping(self, text: str) -> str:
        return str(self.cls.roundTripNameMapping(text))

    def name_mapping_for_schema(self, schema_json: str) -> str:
        return str(self.cls.nameMappingForSchema(schema_json))

    def current_schema_json(self, metadata_json: str) -> str:
        return str(self.cls.currentSchemaJson(metadata_json))


# ---------------------------------------------------------------------------------------------
# Single-value JSON (Appendix D) <-> canonical Python values
#
# Canonical forms used for comparing icefloe with Java:
#   int/long/date(days)/time(us)/timestamp*(us or ns): int
#   decimal: (decimal.Decimal, exponent)  -- scale matters
#   string: str ; uuid: str (lowercase) ; fixed/binary: bytes
# ---------------------------------------------------------------------------------------------

_WIDE = decimal.Context(prec=100)  # decimal(38, s) needs more than the default 28 digits
EPOCH_DATE = dt.date(1970, 1, 1)
EPOCH = dt.datetime(1970, 1, 1)
_DECIMAL_RE = re.compile(r"decimal\((\d+),\s*(\d+)\)")
_FIXED_RE = re.compile(r"fixed\[(\d+)\]")


def decimal_params(type_str: str) -> tuple[int, int]:
    m = _DECIMAL_RE.fullmatch(type_str)
    assert m, type_str
    return int(m.group(1)), int(m.group(2))


def _fmt_frac(frac: int, digits: int) -> str:
    return f"{frac:0{digits}d}"


def days_to_iso(days: int) -> str:
    return (EPOCH_DATE + dt.timedelta(days=days)).isoformat()


def micros_to_time_iso(us: int) -> str:
    secs, frac = divmod(us, 1_000_000)
    h, rem = divmod(secs, 3600)
    m, s = divmod(rem, 60)
    return f"{h:02d}:{m:02d}:{s:02d}.{_fmt_frac(frac, 6)}"


def _ts_iso(units: int, per_second: int, digits: int) -> str:
    secs, frac = divmod(units, per_second)
    base = EPOCH + dt.timedelta(seconds=secs)
    return f"{base.isoformat(timespec='seconds')}.{_fmt_frac(frac, digits)}"


def encode(type_str: str, value) -> str:
    """Single-value JSON for a canonical value of ``type_str`` (None -> "null")."""
    if value is None:
        return "null"
    if type_str in ("int", "long"):
        return str(int(value))
    if type_str.startswith("decimal"):
        _, scale = decimal_params(type_str)
        d = value[0] if isinstance(value, tuple) else value
        q = _WIDE.quantize(d, decimal.Decimal(1).scaleb(-scale))
        return json.dumps(format(q, "f"))
    if type_str == "date":
        return json.dumps(days_to_iso(value))
    if type_str == "time":
        return json.dumps(micros_to_time_iso(value))
    if type_str == "timestamp":
        return json.dumps(_ts_iso(value, 1_000_000, 6))
    if type_str == "timestamptz":
        return json.dumps(_ts_iso(value, 1_000_000, 6) + "+00:00")
    if type_str == "timestamp_ns":
        return json.dumps(_ts_iso(value, 1_000_000_000, 9))
    if type_str == "timestamptz_ns":
        return json.dumps(_ts_iso(value, 1_000_000_000, 9) + "+00:00")
    if type_str == "string":
        return json.dumps(value, ensure_ascii=True)
    if type_str == "uuid":
        return json.dumps(str(uuid.UUID(bytes=value) if isinstance(value, bytes) else value))
    if type_str == "binary" or _FIXED_RE.fullmatch(type_str):
        return json.dumps(bytes(value).hex().upper())
    raise AssertionError(f"no encoder for {type_str}")


def _parse_offset_ts(text: str, per_second: int):
    """ISO timestamp text (optionally with a UTC offset) -> units since epoch (exact)."""
    m = re.fullmatch(
        r"(-?\d{4,})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,9}))?)?(Z|[+-]\d\d:\d\d)?", text
    )
    assert m, f"unparseable timestamp {text!r}"
    y, mo, d, h, mi = (int(m.group(i)) for i in range(1, 6))
    s = int(m.group(6) or 0)
    frac = (m.group(7) or "").ljust(9, "0")
    nanos = int(frac)
    days = (dt.date(y, mo, d) - EPOCH_DATE).days
    secs = days * 86400 + h * 3600 + mi * 60 + s
    off = m.group(8)
    if off and off != "Z":
        sign = 1 if off[0] == "+" else -1
        secs -= sign * (int(off[1:3]) * 3600 + int(off[4:6]) * 60)
    total_ns = secs * 1_000_000_000 + nanos
    if per_second == 1_000_000:
        assert total_ns % 1000 == 0, text
        return total_ns // 1000
    return total_ns


def decode(type_str: str, text: str):
    """Canonical value from single-value JSON text of ``type_str``."""
    v = json.loads(text)
    if v is None:
        return None
    if type_str in ("int", "long"):
        assert isinstance(v, int), text
        return v
    if type_str.startswith("decimal"):
        d = decimal.Decimal(v)
        return (d, d.as_tuple().exponent)
    if type_str == "date":
        return (dt.date.fromisoformat(v) - EPOCH_DATE).days
    if type_str == "time":
        t = dt.time.fromisoformat(v) if len(v) <= 15 else dt.time.fromisoformat(v[:15])
        return ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond
    if type_str in ("timestamp", "timestamptz"):
        return _parse_offset_ts(v, 1_000_000)
    if type_str in ("timestamp_ns", "timestamptz_ns"):
        return _parse_offset_ts(v, 1_000_000_000)
    if type_str == "string":
        return v
    if type_str == "uuid":
        return str(uuid.UUID(v))
    if type_str == "binary" or _FIXED_RE.fullmatch(type_str):
        return bytes.fromhex(v)
    raise AssertionError(f"no decoder for {type_str}")


# ---------------------------------------------------------------------------------------------
# Java-written tables
# ---------------------------------------------------------------------------------------------


def _sql(spark, statements: str) -> None:
    for stmt in (s.strip() for s in statements.split(";")):
        if stmt:
            try:
                spark.sql(stmt)
            except Exception as e:
                first = str(e).strip().splitlines()[0][:500]
                raise RuntimeError(f"Spark SQL failed: {first}\n--- statement ---\n{stmt}") from None


def _try_sql(spark, stmt: str) -> str | None:
    """Runs an optional statement; returns None on success or Spark's error message."""
    try:
        spark.sql(stmt)
        return None
    except Exception as e:  # noqa: BLE001 - feature probes
        return str(e).splitlines()[0][:300]


def create_java_tables(spark, warehouse: Path) -> dict:
    """Creates a handful of tables through Spark SQL in the ``java`` Hadoop catalog.

    Returns ``{"tables": {name: table_dir}, "notes": [...]}``; ``notes`` lists optional features
    Spark refused (e.g. default values) so tests can report them.
    """
    notes: list[str] = []
    _sql(spark, "CREATE NAMESPACE IF NOT EXISTS java.db")
    tables: dict[str, Path] = {}

    for version in (1, 2, 3):
        name = f"evolve_v{version}"
        fq = f"java.db.{name}"
        props = f"'format-version'='{version}', 'icefloe.owner'='icefloe-tests', 'comment.note'='héllo ✓'"
        if version == 2:
            props += ", 'write.metadata.compression-codec'='gzip'"
        _sql(
            spark,
            f"""
            CREATE TABLE {fq} (
                id BIGINT NOT NULL COMMENT 'row id',
                small INT,
                name STRING,
                price DECIMAL(10, 2),
                d DATE,
                ts TIMESTAMP,
                ts_ntz TIMESTAMP_NTZ,
                payload BINARY,
                point STRUCT<x: DOUBLE, y: DOUBLE>,
                tags ARRAY<STRING>,
                attrs MAP<STRING, INT>
            ) USING iceberg
            PARTITIONED BY (bucket(8, id), truncate(4, name), days(ts), identity(small))
            TBLPROPERTIES ({props});
            INSERT INTO {fq} VALUES
                (1, 10, 'alpha', 1.25, DATE'2024-02-29', TIMESTAMP'2024-02-29 10:11:12.123456',
                 TIMESTAMP_NTZ'2024-02-29 10:11:12', X'00FF', named_struct('x', 1.0D, 'y', 2.0D),
                 array('a', 'b'), map('k', 1)),
                (2, NULL, 'βeta ✓', -3.50, DATE'1969-12-31', TIMESTAMP'1969-12-31 23:59:59.999999',
                 NULL, X'', NULL, array(), map());
            ALTER TABLE {fq} ADD COLUMN added_col STRING COMMENT 'added later';
            ALTER TABLE {fq} RENAME COLUMN name TO label;
            ALTER TABLE {fq} ALTER COLUMN small TYPE BIGINT;
            ALTER TABLE {fq} ADD COLUMN point.z DOUBLE;
            ALTER TABLE {fq} DROP COLUMN payload;
            ALTER TABLE {fq} ADD PARTITION FIELD hours(ts_ntz);
            ALTER TABLE {fq} ADD PARTITION FIELD months(d);
            ALTER TABLE {fq} DROP PARTITION FIELD days(ts);
            ALTER TABLE {fq} ADD PARTITION FIELD years(ts);
            ALTER TABLE {fq} WRITE ORDERED BY id ASC NULLS FIRST, label DESC NULLS LAST;
            INSERT INTO {fq} (id, small, label, price, d, ts, ts_ntz, point, tags, attrs, added_col) VALUES
                (3, 30000000000, 'gamma', 99999999.99, DATE'2000-01-01', TIMESTAMP'2000-01-01 00:00:00',
                 TIMESTAMP_NTZ'1970-01-01 00:00:00', named_struct('x', 0.0D, 'y', -0.0D, 'z', 1.5D),
                 array('c'), map('z', 26), 'new');
            ALTER TABLE {fq} CREATE BRANCH audit;
            ALTER TABLE {fq} CREATE TAG release_1 RETAIN 7 DAYS;
            ALTER TABLE {fq} SET TBLPROPERTIES ('commit.retry.num-retries'='5');
            INSERT INTO {fq}.branch_audit (id, label) VALUES (4, 'on-branch');
            DELETE FROM {fq} WHERE id = 2
            """,
        )
        if version == 3:
            err = _try_sql(spark, f"ALTER TABLE {fq} ADD COLUMN with_default INT DEFAULT 42")
            if err:
                # Spark SQL refuses DEFAULT on Iceberg tables; add the columns through Java's API.
                notes.append(f"v3 column default not supported by Spark SQL (added via Java API): {err}")
                catalog = (
                    spark._jsparkSession.sessionState().catalogManager().catalog("java").icebergCatalog()
                )
                oracle_class(spark._jvm).addColumnsWithDefaults(catalog, f"db.{name}")
            else:
                _try_sql(spark, f"INSERT INTO {fq} (id, label) VALUES (5, 'defaulted')")
        tables[name] = warehouse / "db" / name

    # Identity on many types and time transforms on every temporal type, in one spec.
    _sql(
        spark,
        """
        CREATE TABLE java.db.transforms_v2 (
            i INT, l BIGINT, dec DECIMAL(38, 10), s STRING, b BINARY,
            d DATE, ts TIMESTAMP, tsn TIMESTAMP_NTZ, bo BOOLEAN
        ) USING iceberg
        PARTITIONED BY (bucket(16, i), truncate(10, l), bucket(3, dec), truncate(2, b), years(d),
                        months(ts), hours(tsn), bo)
        TBLPROPERTIES ('format-version'='2');
        INSERT INTO java.db.transforms_v2 VALUES
            (7, -1, -12345.6789012345, 'x', X'0102', DATE'1970-01-01', TIMESTAMP'1970-01-01 00:00:00',
             TIMESTAMP_NTZ'1969-12-31 23:00:00', true)
        """,
    )
    tables["transforms_v2"] = warehouse / "db" / "transforms_v2"

    # A table that never gets a snapshot (current-snapshot-id absent/-1/null).
    for version in (1, 3):
        _sql(
            spark,
            f"CREATE TABLE java.db.empty_v{version} (a INT, b STRING) USING iceberg "
            f"TBLPROPERTIES ('format-version'='{version}')",
        )
        tables[f"empty_v{version}"] = warehouse / "db" / f"empty_v{version}"

    # Format upgrade 2 -> 3 in place.
    _sql(
        spark,
        """
        CREATE TABLE java.db.upgraded (a INT, b STRING) USING iceberg PARTITIONED BY (a)
            TBLPROPERTIES ('format-version'='2');
        INSERT INTO java.db.upgraded VALUES (1, 'one');
        ALTER TABLE java.db.upgraded SET TBLPROPERTIES ('format-version'='3');
        INSERT INTO java.db.upgraded VALUES (2, 'two')
        """,
    )
    tables["upgraded"] = warehouse / "db" / "upgraded"
    return {"tables": tables, "notes": notes}


_VERSION_RE = re.compile(r"^v(\d+)(\.gz)?\.metadata\.json$|^(\d+)-.*\.metadata\.json$")


def metadata_files(table_dir: Path) -> list[Path]:
    """All metadata JSON files of a table, oldest first."""
    files = []
    for p in (table_dir / "metadata").iterdir():
        m = _VERSION_RE.match(p.name)
        if m:
            files.append((int(m.group(1) or m.group(3)), p))
    assert files, f"no metadata files in {table_dir}"
    return [p for _, p in sorted(files)]


def create_java_views(spark, out_dir: Path) -> dict[str, Path]:
    """Creates views through Spark SQL in the in-memory catalog and writes Java's serialisation
    of each view's current metadata (what the catalog wrote, via ``ViewMetadataParser.toJson``)
    to ``out_dir``; returns name -> file."""
    _sql(
        spark,
        """
        CREATE NAMESPACE IF NOT EXISTS javamem.db;
        CREATE TABLE javamem.db.base (id BIGINT, name STRING) USING iceberg;
        CREATE VIEW javamem.db.v_simple AS SELECT id, name FROM javamem.db.base WHERE id > 0;
        CREATE VIEW javamem.db.v_commented (ident COMMENT 'the id', upper_name)
            COMMENT 'a view with comments' TBLPROPERTIES ('icefloe.owner'='icefloe-tests')
            AS SELECT id, upper(name) FROM javamem.db.base;
        CREATE OR REPLACE VIEW javamem.db.v_simple AS SELECT id FROM javamem.db.base
        """,
    )
    jvm = spark._jvm
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog("javamem").icebergCatalog()
    out = {}
    for name in ("v_simple", "v_commented"):
        view = catalog.loadView(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(f"db.{name}"))
        text = str(jvm.org.apache.iceberg.view.ViewMetadataParser.toJson(view.operations().current()))
        path = out_dir / f"{name}.metadata.json"
        path.write_text(text, encoding="utf-8")
        out[name] = path
    return out


# ---------------------------------------------------------------------------------------------
# Manifests, manifest lists and deletion vectors (tests/java/IcefloeManifestOracle.java)
# ---------------------------------------------------------------------------------------------

MANIFEST_ORACLE_CLASS = "org.apache.iceberg.IcefloeManifestOracle"


class ManifestOracle:
    """Python face of ``IcefloeManifestOracle``: Java's view of manifests as parsed JSON.

    Manifest files and entries come back as dicts keyed by the spec's field names; binary values
    (bounds, key metadata) as upper-case hex; each partition value as
    ``{"name", "field_id", "type", "value"}`` with ``value`` in single-value JSON.
    """

    def __init__(self, jvm):
        self.jvm = jvm
        cls = jvm
        for part in MANIFEST_ORACLE_CLASS.split("."):
            cls = getattr(cls, part)
        self.cls = cls

    def manifest_list(self, metadata_path, snapshot_id: int) -> list[dict]:
        return json.loads(str(self.cls.manifestListJson(str(metadata_path), snapshot_id)))

    def table_manifests(self, metadata_path) -> dict:
        """Every snapshot with its manifests and their entries (inherited values filled in)."""
        return json.loads(str(self.cls.tableManifestsJson(str(metadata_path))))

    def read_manifest_lists(self, list_paths, metadata_path) -> list[dict]:
        """Java reads manifest lists (and their manifests) written by someone else."""
        paths = [str(p) for p in list_paths]
        if not paths:
            return []
        return json.loads(str(self.cls.readManifestListsJson("\n".join(paths), str(metadata_path))))

    def manifest_self_description(self, manifest_paths) -> list[dict]:
        """Spec and schema Java takes from each manifest's own key-value metadata."""
        paths = [str(p) for p in manifest_paths]
        return json.loads(str(self.cls.manifestSelfDescriptionJson("\n".join(paths))))

    def read_dv_positions(self, requests) -> list:
        """requests: ``(path, offset, length, referenced_data_file, cardinality)``; per request the
        positions Java reads, or ``"!error: ..."``."""
        lines = "\n".join("\t".join(str(x) for x in r) for r in requests)
        return json.loads(str(self.cls.readDVPositionsJson(lines)))

    def puffin_blobs(self, path) -> list[dict]:
        return json.loads(str(self.cls.puffinBlobsJson(str(path))))

    def write_dvs(self, path, dvs: dict[str, list[int]]) -> list[dict]:
        """Java's ``BaseDVFileWriter`` writes one Puffin file with a DV per referenced data file."""
        lines = "\n".join(f"{ref}\t{','.join(str(p) for p in positions)}" for ref, positions in dvs.items())
        return json.loads(str(self.cls.writeDVsJson(str(path), lines)))


def create_manifest_tables(spark) -> dict[str, Path]:
    """Tables for the manifest tests, in the ``java`` catalog's namespace ``mdb``; returns
    name -> latest metadata file.

    ``api_v1``/``api_v2``/``api_v3``/``api_upgraded`` (v2 to v3)/``api_v1_to_v2``/``api_v1_to_v3``:
    built through the Java API (manifests only reference data files, see
    ``IcefloeManifestOracle.buildApiTables``).
    ``mor_v2``/``mor_v3``: Spark SQL merge-on-read DELETE/UPDATE, which write position delete
    files (v2) and deletion vectors in Puffin files (v3).
    """
    _sql(spark, "CREATE NAMESPACE IF NOT EXISTS java.mdb")
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog("java").icebergCatalog()
    cls = spark._jvm
    for part in MANIFEST_ORACLE_CLASS.split("."):
        cls = getattr(cls, part)
    built = json.loads(str(cls.buildApiTables(catalog, "mdb")))
    out = {name: Path(re.sub(r"^file:", "", loc)) for name, loc in built.items()}
    for version in (2, 3):
        fq = f"java.mdb.mor_v{version}"
        _sql(
            spark,
            f"""
            CREATE TABLE {fq} (id BIGINT, cat STRING, ts TIMESTAMP) USING iceberg
                PARTITIONED BY (cat, days(ts))
                TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read',
                               'write.update.mode'='merge-on-read', 'write.distribution-mode'='none');
            INSERT INTO {fq} SELECT id, CASE WHEN id % 3 = 0 THEN 'a' ELSE 'b' END,
                TIMESTAMP'2024-01-01 00:00:00' + make_interval(0, 0, 0, CAST(id % 2 AS INT)) FROM range(0, 2000);
            INSERT INTO {fq} VALUES (5000, NULL, NULL), (5001, 'c', TIMESTAMP'1969-12-31 23:59:59');
            DELETE FROM {fq} WHERE id % 7 = 0;
            UPDATE {fq} SET id = id + 10000 WHERE id % 11 = 0;
            DELETE FROM {fq} WHERE id < 100 OR id = 5000
            """,
        )
        out[f"mor_v{version}"] = metadata_files(spark._icefloe_warehouse / "mdb" / f"mor_v{version}")[-1]
    return out
