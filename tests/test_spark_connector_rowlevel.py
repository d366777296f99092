"""Row-level SQL through icefloe's Spark catalog (``io.icefloe.spark.SparkCatalog``):
``DELETE FROM``, ``UPDATE`` and ``MERGE INTO`` against Java Iceberg, in one Spark session.

Each test makes twin tables with Java (same schema, partitioning, properties and rows) in one
SQLite catalog that Java's ``JdbcCatalog`` (``rl_java``) and icefloe's connector (``rl_ice``)
both open; the same statement then runs on one twin through Java and on the other through
icefloe. The rows must be equal, Java must read the table icefloe changed, and the new
snapshots' summaries must say the same (operation, files and records added and removed). Both
twins are merge-on-read (``write.delete.mode`` and friends), the only mode icefloe's catalog
implements (docs/architecture.md).
"""

from __future__ import annotations

import itertools
import os

import pytest

from connector_env import twin_catalogs

JAVA = "rl_java"
ICE = "rl_ice"

# the summary fields both engines must agree on
SUMMARY_KEYS = (
    "added-data-files",
    "deleted-data-files",
    "added-records",
    "deleted-records",
    "added-delete-files",
    "removed-delete-files",
    "added-position-delete-files",
    "removed-position-delete-files",
    "added-dvs",
    "removed-dvs",
    "added-position-deletes",
    "removed-position-deletes",
    "total-records",
    "total-data-files",
    "total-delete-files",
    "total-position-deletes",
)

_names = itertools.count()

pytestmark = pytest.mark.java


@pytest.fixture(scope="module")
def env(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("spark-rowlevel")
    catalog = twin_catalogs(spark, root, JAVA, ICE)
    spark._rl_catalog = catalog  # type: ignore[attr-defined]
    return spark


def _rows(i: int) -> str:
    category = "NULL" if i % 11 == 0 else f"'{'abc'[i % 3]}'"
    n = "NULL" if i % 7 == 3 else str(i % 6)
    amount = "NULL" if i % 13 == 0 else f"{i * 1.25:.2f}"
    return f"({i}, {category}, {n}, {amount}, 'note {i}')"


def twins(spark, version: int, partitioned: bool = True, rows: int = 90) -> tuple[str, str]:
    """Two equal tables written by Java: (the Java twin as Java names it, the icefloe twin
    as icefloe's catalog names it)."""
    base = f"t{next(_names)}_v{version}"
    names = (f"{base}_java", f"{base}_ice")
    for name in names:
        spark.sql(
            f"CREATE TABLE {JAVA}.db.{name} (id bigint, category string, n int, amount decimal(10,2), "
            f"note string) USING iceberg {'PARTITIONED BY (category)' if partitioned else ''} "
            f"TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read', "
            "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')"
        )
        # two commits: two data files per partition
        half = rows // 2
        for chunk in (range(half), range(half, rows)):
            values = ", ".join(_rows(i) for i in chunk)
            spark.sql(f"INSERT INTO {JAVA}.db.{name} VALUES {values}")
    return f"{JAVA}.db.{names[0]}", f"{ICE}.db.{names[1]}"


def java_name(table: str) -> str:
    """The Java catalog's name of a table named through either catalog."""
    return f"{JAVA}.{table.split('.', 1)[1]}"


def rows_of(spark, table: str) -> list:
    return sorted(spark.table(java_name(table)).collect(), key=lambda r: r.id)


def head(spark, table: str) -> tuple[int | None, str | None, dict]:
    """(snapshot id, operation, summary) of the table's current snapshot, read by Java."""
    t = java_name(table)
    refs = spark.sql(f"SELECT snapshot_id FROM {t}.refs WHERE name = 'main'").collect()
    if not refs:
        return None, None, {}
    snap = spark.sql(
        f"SELECT operation, summary FROM {t}.snapshots WHERE snapshot_id = {refs[0][0]}"
    ).collect()[0]
    return refs[0][0], snap.operation, dict(snap.summary)


# what an UPDATE or MERGE must agree on: Java and icefloe may cut the new rows into data
# files differently (each engine's writer and distribution)
ROW_KEYS = (
    "added-records",
    "added-position-deletes",
    "added-delete-files",
    "added-dvs",
    "added-position-delete-files",
    "removed-dvs",
    "total-records",
    "total-position-deletes",
)


def run_both(spark, statement: str, java_table: str, ice_table: str, keys=SUMMARY_KEYS) -> None:
    """Runs ``statement`` (``{t}`` for the table) on both twins and checks they agree."""
    spark.sql(statement.format(t=java_table))
    spark.sql(statement.format(t=ice_table))
    assert rows_of(spark, ice_table) == rows_of(spark, java_table), statement
    # icefloe's reader agrees with Java's on the table icefloe changed
    ours = sorted(spark.table(ice_table).collect(), key=lambda r: r.id)
    assert ours == rows_of(spark, ice_table)
    _, java_op, java_summary = head(spark, java_table)
    _, ice_op, ice_summary = head(spark, ice_table)
    assert ice_op == java_op, statement
    picked = {k: (ice_summary.get(k), java_summary.get(k)) for k in keys}
    assert {k: v[0] for k, v in picked.items()} == {k: v[1] for k, v in picked.items()}, statement


@pytest.mark.parametrize("version", [2, 3])
def test_delete_whole_partitions_from_metadata(env, version):
    spark = env
    java_t, ice_t = twins(spark, version)
    run_both(spark, "DELETE FROM {t} WHERE category = 'a'", java_t, ice_t)
    _, op, summary = head(spark, ice_t)
    # whole files removed, no delete file written, as Java's metadata delete
    assert op == "delete"
    assert int(summary["deleted-data-files"]) > 0
    assert "added-delete-files" not in summary
    run_both(spark, "DELETE FROM {t} WHERE category IS NULL", java_t, ice_t)
    assert spark.table(ice_t).where("category = 'a' OR category IS NULL").count() == 0


@pytest.mark.parametrize("version", [2, 3])
def test_row_level_deletes(env, version):
    spark = env
    java_t, ice_t = twins(spark, version)
    # a partition filter and a row filter: delete files in one partition only
    run_both(spark, "DELETE FROM {t} WHERE category = 'b' AND id % 4 = 1", java_t, ice_t)
    _, op, summary = head(spark, ice_t)
    assert op == "delete"
    assert int(summary["added-delete-files"]) > 0
    assert "deleted-data-files" not in summary
    if version >= 3:
        assert int(summary["added-dvs"]) == int(summary["added-delete-files"])
    else:
        assert int(summary["added-position-delete-files"]) == int(summary["added-delete-files"])
    # no partition filter; then rows of files that already have deletes (v3: the DVs merge)
    run_both(spark, "DELETE FROM {t} WHERE id % 5 = 0", java_t, ice_t)
    if version >= 3:
        run_both(spark, "DELETE FROM {t} WHERE id % 4 = 3", java_t, ice_t)
        _, _, summary = head(spark, ice_t)
        assert int(summary["removed-dvs"]) > 0


@pytest.mark.parametrize("version", [2, 3])
def test_deletes_with_nulls(env, version):
    spark = env
    java_t, ice_t = twins(spark, version, partitioned=False)
    # NOT and <> keep the rows where n is null (Spark's three-valued logic)
    run_both(spark, "DELETE FROM {t} WHERE n <> 2", java_t, ice_t)
    assert spark.table(ice_t).where("n IS NULL").count() > 0
    run_both(spark, "DELETE FROM {t} WHERE NOT (amount > 40)", java_t, ice_t)
    run_both(spark, "DELETE FROM {t} WHERE n IS NULL AND amount IS NOT NULL", java_t, ice_t)


@pytest.mark.parametrize("version", [2, 3])
def test_merge_matched_delete(env, version):
    spark = env
    java_t, ice_t = twins(spark, version)
    statement = (
        "MERGE INTO {t} t USING (SELECT id FROM range(0, 90) WHERE id % 3 = 0) s ON t.id = s.id "
        "WHEN MATCHED AND t.n IS NOT NULL THEN DELETE"
    )
    run_both(spark, statement, java_t, ice_t)


@pytest.mark.parametrize("version", [2, 3])
def test_updates(env, version):
    spark = env
    java_t, ice_t = twins(spark, version)
    # a partition filter, NULL handling (n <> 3 is not true for a null n)
    run_both(
        spark,
        "UPDATE {t} SET amount = amount * 2, note = 'updated' WHERE category = 'b' AND n <> 3",
        java_t,
        ice_t,
        ROW_KEYS,
    )
    _, op, summary = head(spark, ice_t)
    assert op == "overwrite"
    assert int(summary["added-records"]) == int(summary["added-position-deletes"]) > 0
    # no partition filter, setting nulls
    run_both(spark, "UPDATE {t} SET n = NULL, amount = NULL WHERE id % 7 = 1", java_t, ice_t, ROW_KEYS)
    # rows moving to another partition
    run_both(spark, "UPDATE {t} SET category = 'c' WHERE id % 9 = 2", java_t, ice_t, ROW_KEYS)


@pytest.mark.parametrize("version", [2, 3])
def test_merge_update_delete_insert(env, version):
    spark = env
    java_t, ice_t = twins(spark, version)
    statement = (
        "MERGE INTO {t} t USING (SELECT id, CAST(id % 3 AS INT) AS k FROM range(75, 105)) s "
        "ON t.id = s.id "
        "WHEN MATCHED AND s.k = 0 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET t.note = 'merged', t.n = s.k "
        "WHEN NOT MATCHED AND s.k = 2 THEN INSERT (id, category, n, amount, note) "
        "VALUES (s.id, NULL, s.k, NULL, 'new') "
        "WHEN NOT MATCHED THEN INSERT (id, category, n, amount, note) VALUES (s.id, 'a', s.k, 1.5, 'new')"
    )
    run_both(spark, statement, java_t, ice_t, ROW_KEYS)
    assert spark.table(ice_t).where("note = 'new'").count() == 15
    # inserts only
    run_both(
        spark,
        "MERGE INTO {t} t USING (SELECT id FROM range(200, 210)) s ON t.id = s.id "
        "WHEN NOT MATCHED THEN INSERT (id, category, n, amount, note) VALUES (s.id, 'b', 1, 2.5, 'x')",
        java_t,
        ice_t,
        ROW_KEYS,
    )


def test_a_delete_that_matches_nothing(env):
    spark = env
    java_t, ice_t = twins(spark, 3)
    before_java, before_ice = head(spark, java_t)[0], head(spark, ice_t)[0]
    spark.sql(f"DELETE FROM {java_t} WHERE id > 1000 AND note = 'x'")
    spark.sql(f"DELETE FROM {ice_t} WHERE id > 1000 AND note = 'x'")
    assert rows_of(spark, ice_t) == rows_of(spark, java_t)
    # whether a snapshot is committed: as Java does
    assert (head(spark, ice_t)[0] == before_ice) == (head(spark, java_t)[0] == before_java)


# ---------------------------------------------------------------------------------------------
# concurrent commits
# ---------------------------------------------------------------------------------------------


def _append_during_scan(spark, table: str, category: str, marker: str):
    """A Python UDF that, the first time a worker evaluates it, appends a row in
    ``category`` to ``table`` with icefloe's Python API: a commit between the delete's scan
    and its commit. Returns the UDF's SQL name."""
    from pyspark.sql.types import BooleanType

    catalog = spark._rl_catalog
    uri, warehouse = catalog.properties["uri"], catalog.properties["warehouse"]
    ident = table.split(".")[1:]

    def once(_value):
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return True
        os.close(fd)
        import pyarrow as pa

        import icefloe as ice

        t = ice.load_catalog(JAVA, uri=uri, warehouse=warehouse).load_table(tuple(ident))
        t.append(
            pa.table(
                {
                    "id": pa.array([1000], pa.int64()),
                    "category": [category],
                    "n": pa.array([1], pa.int32()),
                    "amount": pa.array([None], pa.decimal128(10, 2)),
                    "note": ["concurrent"],
                }
            )
        )
        return True

    name = f"append_once_{next(_names)}"
    spark.udf.register(name, once, BooleanType())
    return name


@pytest.mark.parametrize("engine", ["java", "ice"])
def test_a_conflicting_concurrent_append_fails_the_delete(env, tmp_path, engine):
    spark = env
    java_t, ice_t = twins(spark, 3, rows=30)
    table = java_t if engine == "java" else ice_t
    udf = _append_during_scan(spark, table, "b", str(tmp_path / "appended"))
    before = rows_of(spark, table)
    # serializable isolation (the default): new data in the deleted range is a conflict
    with pytest.raises(Exception) as info:
        spark.sql(f"DELETE FROM {table} WHERE category = 'b' AND id % 2 = 1 AND {udf}(id)")
    text = str(info.value)
    if engine == "ice":
        assert "IcefloeValidationException" in text, text
    else:
        assert "ValidationException" in text, text
    after = rows_of(spark, table)
    # the concurrent append landed, the delete did not
    assert len(after) == len(before) + 1


@pytest.mark.parametrize("engine", ["java", "ice"])
def test_an_append_outside_the_deleted_rows_does_not_conflict(env, tmp_path, engine):
    spark = env
    java_t, ice_t = twins(spark, 3, rows=30)
    table = java_t if engine == "java" else ice_t
    udf = _append_during_scan(spark, table, "c", str(tmp_path / "appended"))
    before = rows_of(spark, table)
    spark.sql(f"DELETE FROM {table} WHERE category = 'b' AND id % 2 = 1 AND {udf}(id)")
    after = rows_of(spark, table)
    deleted = [r for r in before if r.category == "b" and r.id % 2 == 1]
    assert deleted
    assert len(after) == len(before) - len(deleted) + 1
