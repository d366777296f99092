"""Scan planning against Java Iceberg's ``TableScan.planFiles()`` / ``planTasks()``.

For every Java-written table of the conformance suite (v1, v2 with position and equality
deletes, v3 with deletion vectors, partition and schema evolution, branches and tags, an
upgraded table, empty tables) and many generated row filters per table (at least 30, built
from values that are really in the table, around them, and out of the range of the column
types), icefloe's planned data files, the delete files attached to each, and each file's
residual filter must equal Java's, for the current snapshot and for time travel by id, ref
and time. Java's residuals are bound (after pushing NOT down, as icefloe's are) so that both
sides are in the same JSON form.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import os
from pathlib import Path

import pytest

import oracle as o

pytestmark = pytest.mark.java

SCAN_ORACLE_CLASS = "org.apache.iceberg.IcefloeScanOracle"


def _icefloe():
    import icefloe

    return icefloe


@pytest.fixture(scope="module")
def scan_oracle(jvm):
    cls = jvm
    for part in SCAN_ORACLE_CLASS.split("."):
        cls = getattr(cls, part)
    return cls


@pytest.fixture(scope="module")
def scan_tables(spark, java_tables, manifest_tables) -> dict[str, Path]:
    """name -> latest metadata file: the foundation and manifest tables, plus one built here
    with many files, NaN and null values, several snapshots, partition evolution, a tag and a
    branch."""
    tables = {name: path for name, path in java_tables}
    tables.update(manifest_tables)
    o._sql(
        spark,
        """
        CREATE NAMESPACE IF NOT EXISTS java.sdb;
        CREATE TABLE java.sdb.many (id BIGINT, cat STRING, v DOUBLE, d DATE, amount DECIMAL(9, 2))
            USING iceberg PARTITIONED BY (cat)
            TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read',
                           'write.distribution-mode'='none');
        INSERT INTO java.sdb.many SELECT id, CASE WHEN id % 4 = 0 THEN 'a' WHEN id % 4 = 1 THEN 'b'
            WHEN id % 4 = 2 THEN NULL ELSE 'cc' END,
            CASE WHEN id % 10 = 0 THEN CAST('NaN' AS DOUBLE) ELSE id / 3.0 END,
            DATE'2023-12-25' + CAST(id % 20 AS INT), CAST(id AS DECIMAL(9, 2)) / 8
            FROM range(0, 400);
        INSERT INTO java.sdb.many VALUES (1000, 'b', NULL, NULL, NULL), (1001, 'zz', -1.5, DATE'1969-12-31', -0.01);
        ALTER TABLE java.sdb.many CREATE TAG first_two;
        ALTER TABLE java.sdb.many ADD PARTITION FIELD months(d);
        INSERT INTO java.sdb.many VALUES (2000, 'a', 2.5, DATE'2024-03-01', 1.00), (2001, 'q', 0.0, DATE'2024-04-01', 2.00);
        DELETE FROM java.sdb.many WHERE id % 9 = 0;
        ALTER TABLE java.sdb.many CREATE BRANCH side;
        INSERT INTO java.sdb.many.branch_side VALUES (3000, 'side', 1.0, DATE'2025-01-01', 3.00)
        """,
    )
    tables["many"] = o.metadata_files(spark._icefloe_warehouse / "sdb" / "many")[-1]
    return tables


def _type_name(t: str) -> str:
    return t.split("(")[0].strip()


def _json_value(type_str: str, v):
    """A Python value from Spark as it is written in the JSON form of expressions (what a
    user would write as a literal: numbers, strings; timestamps with zone get +00:00)."""
    t = _type_name(type_str)
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if t in ("int", "long"):
        return int(v)
    if t in ("float", "double"):
        f = float(v)
        return None if math.isnan(f) or math.isinf(f) else f
    if t == "decimal":
        return str(v)
    if t == "date":
        return v.isoformat()
    if t == "timestamptz":
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return v.isoformat() + "+00:00"
    if t == "timestamp":
        return v.replace(tzinfo=None).isoformat()
    if t == "string":
        return v
    return None


def _shift(type_str: str, value, direction: int):
    """A value next to ``value`` in the column's order (to probe strict bounds)."""
    t = _type_name(type_str)
    if t in ("int", "long"):
        return value + direction
    if t in ("float", "double"):
        return value + direction * 0.5
    if t == "decimal":
        return str(decimal.Decimal(value) + direction * decimal.Decimal("0.01"))
    if t == "date":
        try:
            return (dt.date.fromisoformat(value) + dt.timedelta(days=direction)).isoformat()
        except OverflowError:  # the first or last day Python knows
            return value
    if t == "string":
        return value + "a" if direction > 0 else value[:-1]
    return value


def _pred(op, term, value=None, values=None):
    p = {"type": op, "term": term}
    if values is not None:
        p["values"] = values
    elif value is not None:
        p["value"] = value
    return p


def generate_filters(spark, metadata_path: Path, limit_rows: int = 200) -> list:
    """Row filters for one table, from the values in it."""
    icefloe = _icefloe()
    md = icefloe.TableMetadata.from_path(str(metadata_path))
    schema = md.schema()
    table_dir = metadata_path.parent.parent
    try:
        rows = [
            r.asDict() for r in spark.read.format("iceberg").load(str(table_dir)).limit(limit_rows).collect()
        ]
    except Exception:  # noqa: BLE001 - tables built through the Java API have no data files
        rows = _rows_from_bounds(md, schema)
    filters: list = [True, False]
    per_column = []
    for f in schema.fields:
        t = _type_name(f.field_type)
        if t not in (
            "int",
            "long",
            "float",
            "double",
            "decimal",
            "date",
            "timestamp",
            "timestamptz",
            "string",
        ):
            continue
        name = f.name
        samples = []
        for r in rows:
            if name not in r:
                continue
            jv = _json_value(f.field_type, r[name])
            if jv is not None and jv not in samples:
                samples.append(jv)
        samples = sorted(samples, key=lambda x: (str(type(x)), x))
        picks = [samples[0], samples[len(samples) // 2], samples[-1]] if samples else []
        preds = [_pred("is-null", name), _pred("not-null", name)]
        if t in ("float", "double"):
            preds += [_pred("is-nan", name), _pred("not-nan", name)]
        for v in dict.fromkeys(map(json.dumps, picks)):
            v = json.loads(v)
            for op in ("eq", "not-eq", "lt", "lt-eq", "gt", "gt-eq"):
                preds.append(_pred(op, name, v))
            preds.append(_pred("lt", name, _shift(f.field_type, v, -1)))
            preds.append(_pred("gt", name, _shift(f.field_type, v, 1)))
            if t == "string" and v:
                preds.append(_pred("starts-with", name, v[:2]))
                preds.append(_pred("not-starts-with", name, v[:1]))
        if picks:
            preds.append(_pred("in", name, values=picks[:2]))
            preds.append(_pred("not-in", name, values=picks[:2]))
        if t == "int":
            # out of the int range: Java binds these to true/false
            preds.append(_pred("lt", name, 2**40))
            preds.append(_pred("gt-eq", name, -(2**40)))
            preds.append(_pred("in", name, values=[2**40, 7]))
        per_column.append(preds)
        filters.extend(preds)
    # combinations across columns
    flat = [p for preds in per_column for p in preds]
    for i in range(0, max(0, len(flat) - 7), 7):
        a, b = flat[i], flat[i + 5]
        filters.append({"type": "and", "left": a, "right": b})
        filters.append({"type": "or", "left": a, "right": {"type": "not", "child": b}})
    return filters


def _rows_from_bounds(md, schema) -> list[dict]:
    """Pseudo-rows made of the lower and upper bounds of the current snapshot's data files,
    for tables whose data files are metadata only."""
    icefloe = _icefloe()
    snap = md.current_snapshot()
    if snap is None or snap.manifest_list is None:
        return []
    names = [f.name for f in schema.fields if _type_name(f.field_type) not in ("struct", "list", "map")]
    rows = []
    for m in icefloe.read_manifest_list(snap.manifest_list).to_pylist():
        if m["content"] != 0:
            continue
        entries = icefloe.read_manifest(m["manifest_path"], decode_bounds=names).to_pylist()
        for e in entries:
            for key in ("lower_bound_values", "upper_bound_values"):
                if e.get(key):
                    rows.append(dict(e[key]))
    return rows


def _canon_expr(e):
    """A residual JSON with set values sorted (Java's literal sets have no order)."""
    if isinstance(e, dict):
        out = {k: _canon_expr(v) for k, v in e.items()}
        if "values" in out:
            out["values"] = sorted(out["values"], key=json.dumps)
        return out
    return e


def _canon_java(tasks: list[dict]) -> list[tuple]:
    return sorted(
        (
            t["path"],
            t["start"],
            t["length"],
            t["spec_id"],
            t["data_sequence_number"],
            t["first_row_id"],
            tuple(sorted((d["path"], d["content"]) for d in t["deletes"])),
            json.dumps(_canon_expr(t["residual"]), sort_keys=True),
        )
        for t in tasks
    )


def _canon_icefloe(table) -> list[tuple]:
    residuals = json.loads(table.schema.metadata[b"icefloe.residuals"])
    return sorted(
        (
            r["file_path"],
            r["start"],
            r["length"],
            r["spec_id"],
            r["data_sequence_number"],
            r["first_row_id"],
            tuple(sorted((d["file_path"], d["content"]) for d in r["deletes"])),
            json.dumps(_canon_expr(residuals[r["residual"]]), sort_keys=True),
        )
        for r in table.to_pylist()
    )


def _selections(md) -> list[dict]:
    """Time-travel options for a table: current, a few snapshot ids, every ref, one time."""
    out: list[dict] = [{}]
    snaps = md.snapshots
    for s in snaps[:3]:
        out.append({"snapshot_id": s.snapshot_id})
    for name in md.refs:
        out.append({"ref": name})
    if len(snaps) > 1:
        out.append({"as_of": snaps[1].timestamp_ms})
    return out


def _icefloe_plan(icefloe, md_path: Path, filter_json, options: dict):
    table = icefloe.Table.from_metadata(str(md_path))
    scan = table.scan(
        row_filter=None,
        snapshot_id=options.get("snapshot_id"),
        ref=options.get("ref"),
        as_of=options.get("as_of"),
        case_sensitive=options.get("case_sensitive", True),
    )
    scan._filter_json = None if filter_json is None else json.dumps(filter_json)
    return scan.plan_arrow()


def _nan_may_match(flt, floats: set[str], negated: bool = False) -> bool:
    """Whether a NaN row of a float or double column matches some comparison of ``flt``
    where Java's metrics pruning leaves it out: ``>`` and ``>=`` (NaN is above every
    number), also as the negation of ``<`` and ``<=``."""
    if not isinstance(flt, dict):
        return False
    t = flt["type"]
    if t in ("and", "or"):
        return _nan_may_match(flt["left"], floats, negated) or _nan_may_match(flt["right"], floats, negated)
    if t == "not":
        return _nan_may_match(flt["child"], floats, not negated)
    ops = ("lt", "lt-eq") if negated else ("gt", "gt-eq")
    return t in ops and flt.get("term") in floats


def test_plans_equal_java(spark, scan_tables, scan_oracle):
    icefloe = _icefloe()
    compared = 0
    errors_both = 0
    nan_kept: list = []
    java_npe: list = []
    per_table: dict[str, int] = {}
    failures = []
    for name, md_path in sorted(scan_tables.items()):
        md = icefloe.TableMetadata.from_path(str(md_path))
        filters = (
            generate_filters(spark, md_path)
            if md.snapshots
            else [True, {"type": "eq", "term": "a", "value": 1}]
        )
        per_table[name] = len(filters)
        floats = {f.name for f in md.schema().fields if _type_name(f.field_type) in ("float", "double")}
        for options in _selections(md):
            for flt in filters:
                fj = None if flt is True else flt
                try:
                    java_text = str(
                        scan_oracle.planJson(
                            str(md_path), None if fj is None else json.dumps(fj), json.dumps(options)
                        )
                    )
                    java = _canon_java(json.loads(java_text))
                except Exception as e:  # noqa: BLE001 - e.g. a column not in a time-travel schema
                    java = ("error", str(e).split("\n")[1][:200] if "\n" in str(e) else str(e)[:200])
                try:
                    ours = _canon_icefloe(_icefloe_plan(icefloe, md_path, fj, options))
                except icefloe.errors.IcefloeError as e:
                    ours = ("error", str(e))
                compared += 1
                if isinstance(java, tuple) and isinstance(ours, tuple):
                    errors_both += 1
                    continue
                if isinstance(java, tuple) and "NullPointerException" in java[1] and isinstance(ours, list):
                    # Java's ResidualEvaluator dereferences a null partition value for
                    # starts-with and string in-lists (1.11); icefloe treats null as matching
                    # nothing there, as Java's row Evaluator does (see docs/conformance.md)
                    java_npe.append((name, flt))
                    continue
                if (
                    java != ours
                    and isinstance(java, list)
                    and isinstance(ours, list)
                    and set(java) < set(ours)
                    and _nan_may_match(flt, floats)
                ):
                    # the one planned difference (docs/conformance.md): Java prunes files
                    # whose NaN-free upper bound is below the value, NaN rows and all;
                    # icefloe keeps every file that may hold NaN for `>` and `>=`
                    nan_kept.append((name, flt))
                    continue
                if java != ours:
                    failures.append((name, options, flt, java[:3], ours[:3], len(java), len(ours)))
    if failures and os.environ.get("ICEFLOE_SCAN_ORACLE_DUMP"):
        Path(os.environ["ICEFLOE_SCAN_ORACLE_DUMP"]).write_text(json.dumps(failures, default=str, indent=1))
    by_kind: dict[str, int] = {}
    for name, _, flt, *_ in failures:
        kind = f"{name}:{flt['type'] if isinstance(flt, dict) else flt}"
        by_kind[kind] = by_kind.get(kind, 0) + 1
    assert not failures, f"{len(failures)} of {compared} plans differ ({by_kind}); first: {failures[:2]}"
    assert min(n for t, n in per_table.items() if not t.startswith("empty")) >= 30, per_table
    assert errors_both < compared / 4, f"{errors_both} of {compared} plans failed on both sides"
    npe_ops = {(flt["type"] if isinstance(flt, dict) else flt) for _, flt in java_npe}
    assert npe_ops <= {"starts-with", "not-starts-with", "in", "not-in", "or", "and"}, npe_ops
    assert len(java_npe) < compared / 50, len(java_npe)
    print(
        f"compared {compared} plans over {len(per_table)} tables ({errors_both} rejected by both, {len(java_npe)} where Java fails with a NullPointerException, {len(nan_kept)} where icefloe keeps files with NaN that Java prunes): {per_table}"
    )


# ---------------------------------------------------------------------------------------------
# planTasks, incremental append scans, column selection, case-insensitive filters
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def more_tables(spark, scan_tables) -> dict[str, Path]:
    """The scan tables plus ``splits`` (data files of many small row groups, so many split
    offsets; its first snapshot has one manifest) and ``incr`` (appends around a copy-on-write
    delete, an INSERT OVERWRITE and a compaction, whose first snapshot then expires)."""
    tables = dict(scan_tables)
    o._sql(
        spark,
        """
        CREATE TABLE java.sdb.splits (id BIGINT, part INT, s STRING) USING iceberg PARTITIONED BY (part)
            TBLPROPERTIES ('format-version'='2', 'write.parquet.row-group-size-bytes'='4096',
                           'write.parquet.page-size-bytes'='1024', 'write.distribution-mode'='none');
        INSERT INTO java.sdb.splits SELECT id, CAST(id % 2 AS INT), repeat(CAST(id AS STRING), 5) FROM range(0, 20000);
        INSERT INTO java.sdb.splits SELECT id, 2, CAST(id AS STRING) FROM range(0, 50);
        CREATE TABLE java.sdb.incr (id BIGINT, cat STRING) USING iceberg PARTITIONED BY (cat)
            TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='copy-on-write',
                           'write.distribution-mode'='none');
        INSERT INTO java.sdb.incr SELECT id, CASE WHEN id % 2 = 0 THEN 'a' ELSE 'b' END FROM range(0, 100);
        INSERT INTO java.sdb.incr SELECT id, 'c' FROM range(100, 150);
        DELETE FROM java.sdb.incr WHERE id < 10;
        INSERT INTO java.sdb.incr SELECT id, 'd' FROM range(150, 160);
        INSERT OVERWRITE java.sdb.incr PARTITION (cat = 'c') SELECT id FROM range(200, 210);
        INSERT INTO java.sdb.incr VALUES (300, 'a'), (301, 'e');
        CALL java.system.rewrite_data_files(table => 'sdb.incr', where => "cat = 'a'",
                                            options => map('rewrite-all', 'true'));
        INSERT INTO java.sdb.incr VALUES (400, 'b')
        """,
    )
    incr_dir = spark._icefloe_warehouse / "sdb" / "incr"
    first = _icefloe().TableMetadata.from_path(str(o.metadata_files(incr_dir)[-1])).snapshots[0].snapshot_id
    o._sql(spark, f"CALL java.system.expire_snapshots(table => 'sdb.incr', snapshot_ids => array({first}))")
    tables["splits"] = o.metadata_files(spark._icefloe_warehouse / "sdb" / "splits")[-1]
    tables["incr"] = o.metadata_files(incr_dir)[-1]
    tables["_incr_expired"] = first  # type: ignore[assignment]
    return tables


def _java(scan_oracle, md_path, filter_json, options) -> list[dict] | tuple:
    try:
        text = str(
            scan_oracle.planJson(
                str(md_path), None if filter_json is None else json.dumps(filter_json), json.dumps(options)
            )
        )
        return json.loads(text)
    except Exception as e:  # noqa: BLE001
        lines = str(e).split("\n")
        return ("error", lines[1][:200] if len(lines) > 1 else lines[0][:200])


def _data_manifest_count(icefloe, md, options: dict) -> int:
    if "snapshot_id" in options:
        snap = next(s for s in md.snapshots if s.snapshot_id == options["snapshot_id"])
    else:
        snap = md.current_snapshot()
    if snap is None or snap.manifest_list is None:
        return 0
    return sum(1 for m in icefloe.read_manifest_list(snap.manifest_list).to_pylist() if m["content"] == 0)


def _some_filters(spark, md_path, md) -> list:
    """True and two generated filters that prune (when the table has data)."""
    if not md.snapshots:
        return [True]
    gen = [
        f
        for f in generate_filters(spark, md_path)
        if isinstance(f, dict) and f["type"] in ("eq", "lt", "gt-eq")
    ]
    return [True] + gen[:1] + gen[len(gen) // 2 : len(gen) // 2 + 1]


def _coverage(ranges: list[tuple]) -> list[tuple]:
    """Sorted (path, start, length) ranges with the ranges of a file that follow each other
    joined."""
    out: list[list] = []
    for path, start, length in sorted(ranges):
        if out and out[-1][0] == path and out[-1][1] + out[-1][2] == start:
            out[-1][2] += length
        else:
            out.append([path, start, length])
    return [tuple(r) for r in out]


def test_plan_tasks_equal_java(spark, more_tables, scan_oracle):
    """``planTasks()`` with small and default target split sizes: the multiset of split ranges
    (path, start, length) must equal Java's for every plan. The groups themselves are compared
    where the snapshot has a single data manifest: bin packing depends on the order of the
    tasks, and Java plans a snapshot with more than one manifest through a ParallelIterable
    whose order depends on thread timing (icefloe keeps manifest-list order). With one
    manifest Java reads its entries in order, so the groups must be equal, in order.
    (At the default target, ranges of one file that land in one group are merged, as Java's
    BaseCombinedScanTask does; with several manifests that depends on the order too, so
    there the bytes each file is read over are compared instead. At 1 and 4 KiB every range
    outweighs the target through the 4 MiB open-file cost and is alone in its group.)"""
    icefloe = _icefloe()
    compared = grouped = 0
    failures = []
    for name, md_path in sorted(more_tables.items()):
        if name.startswith("_"):
            continue
        md = icefloe.TableMetadata.from_path(str(md_path))
        selections = [{}] + ([{"snapshot_id": md.snapshots[0].snapshot_id}] if md.snapshots else [])
        for sel in selections:
            single = _data_manifest_count(icefloe, md, sel) <= 1
            for flt in _some_filters(spark, md_path, md):
                fj = None if flt is True else flt
                for target in (1024, 4096, None):
                    options = dict(sel, packed=True)
                    if target is not None:
                        options["target_split_size"] = target
                    java = _java(scan_oracle, md_path, fj, options)
                    scan = icefloe.Table.from_metadata(str(md_path)).scan(snapshot_id=sel.get("snapshot_id"))
                    scan._filter_json = None if fj is None else json.dumps(fj)
                    try:
                        groups = scan.plan_tasks(target_split_size=target)
                        ours = [[(t.file_path, t.start, t.length) for t in g.tasks] for g in groups]
                    except icefloe.errors.IcefloeError as e:
                        ours = ("error", str(e))
                    compared += 1
                    if isinstance(java, tuple) or isinstance(ours, tuple):
                        if not (isinstance(java, tuple) and isinstance(ours, tuple)):
                            failures.append((name, sel, flt, target, java, ours))
                        continue
                    java_groups: list[list[tuple]] = []
                    for t in java:
                        if t["group"] == len(java_groups):
                            java_groups.append([])
                        java_groups[t["group"]].append((t["path"], t["start"], t["length"]))
                    flat_java = sorted(r for g in java_groups for r in g)
                    flat_ours = sorted(r for g in ours for r in g)
                    if target is None and not single:
                        # consecutive ranges of a file merge when they share a group, which
                        # depends on Java's task order: compare the bytes covered per file
                        flat_java, flat_ours = _coverage(flat_java), _coverage(flat_ours)
                    if flat_java != flat_ours:
                        failures.append((name, sel, flt, target, "ranges", len(flat_java), len(flat_ours)))
                    elif single:
                        grouped += 1
                        if java_groups != ours:
                            failures.append((name, sel, flt, target, "groups", java_groups[:3], ours[:3]))
    assert not failures, f"{len(failures)} of {compared} task plans differ; first: {failures[:3]}"
    # the `splits` table has several split offsets per file; small targets give many groups
    assert grouped > compared / 3, (grouped, compared)
    print(f"compared {compared} task plans with Java ({grouped} also by their groups)")


def _incremental_pairs(md) -> list[tuple]:
    """(from exclusive, to) pairs: every snapshot (and None) against every snapshot (and None)
    of a table, ancestors or not, to compare the errors too."""
    ids = [None] + [s.snapshot_id for s in md.snapshots]
    return [(a, b) for a in ids for b in ids]


def test_incremental_append_scans_equal_java(spark, more_tables, scan_oracle):
    """Incremental append scans between snapshot pairs (including from ``None``, and from an
    expired snapshot that is still the parent of a live one): the same files, with the same
    residuals, as Java's ``IncrementalAppendScan``; errors on the same pairs."""
    icefloe = _icefloe()
    compared = nonempty = errors_both = 0
    failures = []
    for name, md_path in sorted(more_tables.items()):
        if name.startswith("_"):
            continue
        md = icefloe.TableMetadata.from_path(str(md_path))
        if len(md.snapshots) < 2 and name != "incr":
            continue
        pairs = _incremental_pairs(md)
        if name == "incr":
            expired = more_tables["_incr_expired"]
            assert expired not in {s.snapshot_id for s in md.snapshots}
            pairs += [(expired, None), (expired, md.snapshots[0].snapshot_id)]
        for flt in _some_filters(spark, md_path, md)[:2]:
            fj = None if flt is True else flt
            for start, end in pairs:
                java = _java(
                    scan_oracle,
                    md_path,
                    fj,
                    {"incremental": True, "incremental_from": start, "incremental_to": end},
                )
                if not isinstance(java, tuple):
                    java = _canon_java(java)
                try:
                    scan = icefloe.Table.from_metadata(str(md_path)).incremental_append_scan(start, end)
                    scan._filter_json = None if fj is None else json.dumps(fj)
                    ours = _canon_icefloe(scan.plan_arrow())
                except icefloe.errors.IcefloeError as e:
                    ours = ("error", str(e))
                compared += 1
                if isinstance(java, tuple) and isinstance(ours, tuple):
                    errors_both += 1
                    continue
                if java != ours:
                    failures.append((name, start, end, flt, java[:2], ours[:2]))
                elif java:
                    nonempty += 1
    assert not failures, f"{len(failures)} of {compared} incremental plans differ; first: {failures[:3]}"
    assert nonempty > compared / 4, (nonempty, compared)
    print(f"compared {compared} incremental scans ({nonempty} with files, {errors_both} rejected by both)")


def _upper_terms(e):
    if isinstance(e, dict):
        return {k: (v.upper() if k == "term" else _upper_terms(v)) for k, v in e.items()}
    return e


def test_select_and_case_insensitive_equal_java(spark, more_tables, scan_oracle):
    """``select`` does not change the plan (Java's with the same selection, and icefloe's
    without one); filters with upper-cased column names plan as Java's with
    ``caseSensitive(false)``, and fail in both when case-sensitive."""
    icefloe = _icefloe()
    compared = 0
    failures = []
    for name, md_path in sorted(more_tables.items()):
        if name.startswith("_"):
            continue
        md = icefloe.TableMetadata.from_path(str(md_path))
        if not md.snapshots:
            continue
        schema = md.schema()
        names = [f.name for f in schema.fields]
        selections = [names[:1], names[-1:], names[::2]]
        filters = _some_filters(spark, md_path, md)
        for flt in filters:
            fj = None if flt is True else flt
            plain = _canon_icefloe(_icefloe_plan(icefloe, md_path, fj, {}))
            for cols in selections:
                java = _java(scan_oracle, md_path, fj, {"select": cols})
                table = icefloe.Table.from_metadata(str(md_path))
                scan = table.scan(selected_fields=cols)
                scan._filter_json = None if fj is None else json.dumps(fj)
                ours = _canon_icefloe(scan.plan_arrow())
                compared += 1
                if isinstance(java, tuple) or _canon_java(java) != ours or ours != plain:
                    failures.append((name, "select", cols, flt))
            if fj is None:
                continue
            upper = _upper_terms(fj)
            if upper == fj:
                continue
            for cs in (False, True):
                java = _java(scan_oracle, md_path, upper, {"case_sensitive": cs})
                try:
                    ours = _canon_icefloe(_icefloe_plan(icefloe, md_path, upper, {"case_sensitive": cs}))
                except icefloe.errors.IcefloeError as e:
                    ours = ("error", str(e))
                compared += 1
                if cs:
                    if not (isinstance(java, tuple) and isinstance(ours, tuple)):
                        failures.append((name, "case-sensitive should fail", upper, java, ours))
                elif isinstance(java, tuple) or _canon_java(java) != ours:
                    failures.append((name, "case-insensitive", upper, java[:2], ours[:2]))
                elif [t[:7] for t in ours] != [t[:7] for t in plain]:
                    failures.append((name, "case-insensitive differs from lower case", upper))
    assert not failures, f"{len(failures)} of {compared} plans differ; first: {failures[:3]}"
    print(f"compared {compared} plans with select / case-insensitive filters")
