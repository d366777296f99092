"""Planned data files against PyIceberg 0.11's ``table.scan(row_filter=...).plan_files()``
on tables PyIceberg wrote (no Java): the small table of ``test_scan_api`` (real Parquet
data, a copy-on-write delete, a column added later) and 2,000 metadata-only files
partitioned by ``day(ts)`` in 20 manifests. The same filter text goes to both parsers.

icefloe follows Java (``test_scan_oracle`` checks that). Where PyIceberg is known to plan
differently, the relationship is asserted instead of equality (see ``PRUNES_LESS``, and
``_nan_may_match`` for `>` on float columns, where icefloe keeps files that may hold NaN).
"""

from __future__ import annotations

import re

import pytest

import icefloe

pytest.importorskip("pyiceberg")

import pyiceberg_tables  # noqa: E402


def _unique_banana(path: str) -> bool:
    """The files of the many-files table whose category bounds are one value, ``banana``,
    with no nulls (file numbers 7, 57, 107, ...)."""
    return int(path.rsplit("/f", 1)[1].split(".")[0]) % 50 == 7


# Filters on which PyIceberg keeps files that Java (and icefloe) prune, with the files it
# keeps in excess: icefloe's set must be a proper subset of PyIceberg's, the difference
# exactly those files. Java 1.11's InclusiveMetricsEvaluator prunes `!=` and `not in` when a
# file's lower and upper bounds are the same value and it has no nulls (`uniqueValue`);
# PyIceberg 0.11 never prunes these two by metrics. Java prunes `not like 'p%'` (not
# starts-with) when a file has no nulls and both bounds start with the prefix; PyIceberg's
# `_may_contain_null` is true whenever a null count is recorded, even 0, so it never does.
PRUNES_LESS = {
    "category != 'banana'": _unique_banana,
    "category not in ('banana', 'kiwi')": _unique_banana,
    "category not like 'b%'": _unique_banana,
    "category not like 'banana%'": _unique_banana,
}

SMALL_FILTERS = [
    "id = 150",
    "id != 150",
    "id < 10",
    "id <= 10",
    "id > 298",
    "id >= 300",
    "id in (5, 150, 340)",
    "id not in (5, 150)",
    "not (id < 200)",
    "cat = 'a'",
    "cat != 'a'",
    "cat in ('b', 'e')",
    "cat not in ('a', 'b', 'c', 'd')",
    "cat like 'd%'",
    "cat not like 'b%'",
    "cat is null",
    "cat is not null",
    "cat > 'b'",
    "ts < '2024-01-02T00:00:00'",
    "ts >= '2024-01-13T00:00:00'",
    "v > 100.5",
    "v <= 5.0",
    "v is nan",
    "v is not nan",
    "v is null",
    "extra = 3",
    "extra is null",
    "extra is not null",
    "cat = 'b' and id > 150",
    "cat = 'a' or id >= 200",
    "not (cat = 'a' or v > 10.0)",
    "id > 1000",
]

# 2,000 files of 1,000 ids each (file i holds ids i*1000 .. i*1000+999), over the days of
# 1970 in order (file i is on day i*365//2000); category bounds are two of five fruit names
# (only nulls in every 97th file, only 'banana' and no null in files 7, 57, 107, ...);
# value bounds i%50 .. i%50+10, NaN in every 11th file.
MANY_FILTERS = [
    "ts >= '1970-06-01T00:00:00'",
    "ts < '1970-02-01T00:00:00'",
    "ts = '1970-03-05T12:00:00'",
    "ts >= '1970-03-01T00:00:00' and ts < '1970-03-08T00:00:00'",
    "ts > '1971-01-01T00:00:00'",
    "id = 123456",
    "id < 5000",
    "id > 1999000",
    "id in (5, 1000000, 1999999)",
    "id not in (5, 6)",
    "id != 5",
    "not (id < 1000000)",
    "category = 'banana'",
    "category = 'aaa'",
    "category < 'banana'",
    "category >= 'date'",
    "category like 'ch%'",
    "category not like 'a%'",
    "category is null",
    "category is not null",
    "category in ('apple', 'zebra')",
    "category not in ('apple')",
    "value > 55.0",
    "value < 0.5",
    "value is nan",
    "value is not nan",
    "value is null",
    "value = 20.0",
    "ts < '1970-02-01T00:00:00' or id > 1990000",
    "category = 'cherry' and value > 40.0",
    "ts >= '1970-12-01T00:00:00' and category is null",
    "id >= 0",
    "category != 'banana'",
    "category not in ('banana', 'kiwi')",
    "category != 'cherry'",
    "category not like 'b%'",
    "category not like 'banana%'",
    "category not like 'elder%'",
]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    s = pyiceberg_tables.small_table(tmp_path_factory.mktemp("pyi-small"))
    return s.table, s.metadata_path


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    return pyiceberg_tables.many_files_table(tmp_path_factory.mktemp("pyi-many"))


def _nan_may_match(table, text: str) -> int | None:
    """The field id of the float or double column that ``text`` compares with ``>`` or
    ``>=``, where a NaN row matches (NaN is above every number, docs/conformance.md) and
    so icefloe keeps files that may hold NaN, which PyIceberg (as Java) prunes by their
    NaN-free upper bound."""
    m = re.search(r"(\w+) >=? [-\d.]+", text)
    if not m:
        return None
    field = table.schema().find_field(m.group(1))
    return field.id if field is not None and field.field_type in ("float", "double") else None


def _compare(pyi_table, metadata_path: str, filters: list[str]) -> tuple[int, list]:
    table = icefloe.Table.from_metadata(metadata_path)
    total = len(table.scan().plan_arrow())
    every_file = {t.file.file_path: t.file for t in pyi_table.scan().plan_files()}
    pruning = 0
    failures = []
    for text in filters:
        ours = set(table.scan(text).plan_arrow().column("file_path").to_pylist())
        theirs = {t.file.file_path for t in pyi_table.scan(row_filter=text).plan_files()}
        if 0 < len(ours) < total:
            pruning += 1
        nan_column = _nan_may_match(table, text)
        if nan_column is not None and ours != theirs:
            # the extra files are exactly those whose NaN count is not known to be 0
            extra = ours - theirs
            if not theirs < ours or any(
                (every_file[p].nan_value_counts or {}).get(nan_column) == 0 for p in extra
            ):
                failures.append((text, "not the expected superset", len(theirs - ours), sorted(extra)[:2]))
        elif text in PRUNES_LESS:
            extra = theirs - ours
            if not ours < theirs or not all(PRUNES_LESS[text](p) for p in extra):
                failures.append((text, "not the expected subset", len(ours - theirs), sorted(extra)[:2]))
        elif ours != theirs:
            failures.append((text, len(ours), len(theirs), sorted(ours ^ theirs)[:2]))
    return pruning, failures


def test_small_table_equals_pyiceberg(small):
    pyi_table, path = small
    pruning, failures = _compare(pyi_table, path, SMALL_FILTERS)
    assert not failures, failures
    assert len(SMALL_FILTERS) >= 30
    assert pruning >= len(SMALL_FILTERS) // 2, pruning


def test_many_files_equal_pyiceberg(many):
    pyi_table, path = many
    assert len(icefloe.Table.from_metadata(path).scan().plan_arrow()) == 2000
    pruning, failures = _compare(pyi_table, path, MANY_FILTERS)
    assert not failures, failures
    assert len(MANY_FILTERS) >= 30
    assert pruning >= len(MANY_FILTERS) // 2, pruning
