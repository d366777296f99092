"""``table.upsert``: PyIceberg 0.11's API and result, merge-on-read in one commit. Checked
against PyIceberg's own upsert on a twin table (same counts, same rows), and read by Java
(marked ``java``)."""

from __future__ import annotations

import pyarrow as pa
import pytest

import icefloe
from icefloe.errors import InvalidArgumentError, ValidationError

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("cat", pa.string()),
        pa.field("v", pa.float64()),
        pa.field("tags", pa.list_(pa.string())),
    ]
)


def _rows(ids, cat="a", v=1.0) -> pa.Table:
    ids = list(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "cat": [cat] * len(ids),
            "v": [float(v)] * len(ids),
            "tags": [[f"t{i}"] for i in ids],
        },
        schema=SCHEMA,
    )


def _source() -> pa.Table:
    """ids 5..14: 5 and 6 changed (cat, then a nested value), 7..9 as they are, 10..14 new."""
    t = _rows(range(5, 15))
    cats = t.column("cat").to_pylist()
    cats[0] = "changed"
    tags = t.column("tags").to_pylist()
    tags[1] = ["other"]
    return t.set_column(1, "cat", pa.array(cats)).set_column(3, "tags", pa.array(tags, pa.list_(pa.string())))


def _catalog(tmp_path, name="u"):
    cat = icefloe.load_catalog(name, uri=f"sqlite:///{tmp_path}/c.db", warehouse=(tmp_path / "wh").as_uri())
    cat.create_namespace("db")
    return cat


def _table(cat, name, version, spec=None):
    t = cat.create_table(name, SCHEMA, partition_spec=spec, properties={"format-version": str(version)})
    t.append(_rows(range(0, 6)))
    t.append(_rows(range(6, 10)))
    return cat.load_table(name)


def _sorted(t: pa.Table) -> list[dict]:
    return sorted(t.to_pylist(), key=lambda r: r["id"])


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("spec", [None, [("cat", "identity")]])
def test_upsert_updates_changed_rows_and_inserts_new_ones_in_one_commit(tmp_path, version, spec):
    cat = _catalog(tmp_path)
    t = _table(cat, "db.t", version, spec)
    before = len(t.snapshots())
    result = t.upsert(_source(), join_cols=["id"])
    assert (result.rows_updated, result.rows_inserted) == (2, 5)
    t = cat.load_table("db.t")
    assert len(t.snapshots()) == before + 1, "one commit"
    summary = dict(t.current_snapshot().summary)
    assert summary["operation"] == "overwrite"
    expected = {r["id"]: r for r in _rows(range(0, 10)).to_pylist()}
    expected.update({r["id"]: r for r in _source().to_pylist()})
    assert _sorted(t.scan().to_arrow()) == sorted(expected.values(), key=lambda r: r["id"])
    deletes = [d for ds in t.scan().plan_arrow().column("deletes").to_pylist() for d in ds]
    assert deletes, "merge-on-read: the old rows are deleted by position"
    if version == 3:
        assert all(d["file_path"].endswith(".puffin") for d in deletes)
    else:
        assert all(d["file_path"].endswith(".parquet") for d in deletes)
    # the same source again changes nothing and commits nothing
    assert t.upsert(_source(), join_cols=["id"]).rows_updated == 0
    assert t.upsert(_source().slice(0, 5), join_cols=["id"]) == icefloe.table.UpsertResult(0, 0)
    assert len(cat.load_table("db.t").snapshots()) == before + 1


def test_options(tmp_path):
    cat = _catalog(tmp_path)
    t = _table(cat, "db.t", 3)
    # identical rows rewritten on request
    r = t.upsert(_source(), join_cols=["id"], skip_identical_rows=False, when_not_matched_insert_all=False)
    assert (r.rows_updated, r.rows_inserted) == (5, 0)
    t = cat.load_table("db.t")
    assert t.scan().count() == 10
    r = t.upsert(_rows(range(8, 12), cat="z"), join_cols=["id"], when_matched_update_all=False)
    assert (r.rows_updated, r.rows_inserted) == (0, 2)
    t = cat.load_table("db.t")
    got = {row["id"]: row["cat"] for row in t.scan().to_arrow().to_pylist()}
    assert got[8] == "a" and got[10] == "z" and len(got) == 12
    # join columns from the identifier fields; names without case
    with t.update_schema() as u:
        u.set_identifier_fields("id")
    t = cat.load_table("db.t")
    r = t.upsert(_rows([0], cat="ident").rename_columns(["ID", "CAT", "v", "tags"]), case_sensitive=False)
    assert (r.rows_updated, r.rows_inserted) == (1, 0)
    t = cat.load_table("db.t")
    assert [row["cat"] for row in t.scan(row_filter="id = 0").to_arrow().to_pylist()] == ["ident"]
    # a narrower key type widens to the table's
    narrow = _rows([3], cat="narrow")
    narrow = narrow.set_column(0, pa.field("id", pa.int32(), nullable=False), pa.array([3], pa.int32()))
    assert t.upsert(narrow, join_cols=["id"]) == icefloe.table.UpsertResult(1, 0)
    t = cat.load_table("db.t")
    # an empty table: everything is inserted
    e = cat.create_table("db.e", SCHEMA)
    assert e.upsert(_rows(range(3)), join_cols=["id"]) == icefloe.table.UpsertResult(0, 3)
    # a source column left out is null in the rows it writes (PyIceberg's)
    r = cat.load_table("db.e").upsert(_rows([1], cat="q").drop_columns(["tags"]), join_cols=["id"])
    assert (r.rows_updated, r.rows_inserted) == (1, 0)
    row = cat.load_table("db.e").scan(row_filter="id = 1").to_arrow().to_pylist()
    assert row == [{"id": 1, "cat": "q", "v": 1.0, "tags": None}]


def test_errors(tmp_path):
    cat = _catalog(tmp_path)
    t = _table(cat, "db.t", 3)
    dup = pa.concat_tables([_rows([1]), _rows([1], cat="b")])
    with pytest.raises(InvalidArgumentError, match="Duplicate rows found in source"):
        t.upsert(dup, join_cols=["id"])
    with pytest.raises(ValueError, match="no upsert options"):
        t.upsert(
            _rows([1]), join_cols=["id"], when_matched_update_all=False, when_not_matched_insert_all=False
        )
    with pytest.raises(InvalidArgumentError, match="Join columns could not be found"):
        t.upsert(_rows([1]))
    with pytest.raises(InvalidArgumentError, match="'nope' is not in the table"):
        t.upsert(_rows([1]), join_cols=["nope"])
    with pytest.raises(InvalidArgumentError, match="'cat' is not in the source"):
        t.upsert(_rows([1]).drop_columns(["cat"]), join_cols=["id", "cat"])
    with pytest.raises(InvalidArgumentError, match="'CAT' is not in the table"):
        t.upsert(_rows([1]), join_cols=["CAT"])
    bad = _rows([1]).set_column(0, "id", pa.array(["x"]))
    with pytest.raises(InvalidArgumentError, match="'id'"):
        t.upsert(bad, join_cols=["id"])
    # nothing was committed by any of them
    assert len(cat.load_table("db.t").snapshots()) == 2


def test_branches(tmp_path):
    cat = _catalog(tmp_path)
    t = _table(cat, "db.t", 3)
    with t.manage_snapshots() as ms:
        ms.create_branch(t.metadata.current_snapshot_id, "dev")
    t = cat.load_table("db.t")
    r = t.upsert(_rows([1, 20], cat="dev"), join_cols=["id"], branch="dev")
    assert (r.rows_updated, r.rows_inserted) == (1, 1)
    t = cat.load_table("db.t")
    dev = {row["id"]: row["cat"] for row in t.scan(ref="dev").to_arrow().to_pylist()}
    main = {row["id"]: row["cat"] for row in t.scan().to_arrow().to_pylist()}
    assert (dev[1], dev[20], main[1], 20 in main) == ("dev", "dev", "a", False)
    # main moves on; the branch's own DV is merged with the next update on the branch
    cat.load_table("db.t").upsert(_rows([2], cat="main"), join_cols=["id"])
    t = cat.load_table("db.t")
    r = t.upsert(_rows([2, 3, 21], cat="dev2"), join_cols=["id"], branch="dev")
    assert (r.rows_updated, r.rows_inserted) == (2, 1)
    t = cat.load_table("db.t")
    dev = {row["id"]: row["cat"] for row in t.scan(ref="dev").to_arrow().to_pylist()}
    main = {row["id"]: row["cat"] for row in t.scan().to_arrow().to_pylist()}
    assert len(dev) == 12 and (dev[1], dev[2], dev[3], dev[21]) == ("dev", "dev2", "dev2", "dev2")
    assert len(main) == 10 and (main[1], main[2], main[3]) == ("a", "main", "a")
    # one DV per data file on the branch
    per_file = t.scan(ref="dev").plan_arrow().column("deletes").to_pylist()
    assert any(per_file) and all(len(ds) <= 1 for ds in per_file)


def test_duplicate_rows_in_the_table_abort(tmp_path):
    cat = _catalog(tmp_path)
    t = _table(cat, "db.t", 3)
    t.append(_rows([3]))
    with pytest.raises(InvalidArgumentError, match="Target table has duplicate rows"):
        cat.load_table("db.t").upsert(_rows([3], cat="b"), join_cols=["id"])


def test_a_concurrent_update_of_the_same_rows_fails_validation(tmp_path):
    cat = _catalog(tmp_path)
    _table(cat, "db.t", 3)
    stale = cat.load_table("db.t")
    cat.load_table("db.t").upsert(_rows([5], cat="first"), join_cols=["id"])
    with pytest.raises(ValidationError):
        stale.upsert(_rows([5], cat="second"), join_cols=["id"])
    t = cat.load_table("db.t")
    assert [r["cat"] for r in t.scan(row_filter="id = 5").to_arrow().to_pylist()] == ["first"]
    # a concurrent change in a partition the keys cannot be in does not conflict (in the
    # same partition it does, as Java's conflicting-delete-files validation: the new
    # deletion vector could apply to the keys' rows)
    _table(cat, "db.p", 3, [("id", "identity")])
    stale = cat.load_table("db.p")
    cat.load_table("db.p").upsert(_rows([1], cat="x"), join_cols=["id"])
    assert stale.upsert(_rows([7], cat="y"), join_cols=["id"]).rows_updated == 1
    got = {r["id"]: r["cat"] for r in cat.load_table("db.p").scan().to_arrow().to_pylist()}
    assert (got[1], got[7], got[5]) == ("x", "y", "a")
    stale = cat.load_table("db.t")
    cat.load_table("db.t").upsert(_rows([1], cat="x"), join_cols=["id"])
    with pytest.raises(ValidationError, match="conflicting delete files"):
        stale.upsert(_rows([7], cat="y"), join_cols=["id"])


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"when_matched_update_all": False},
        {"when_not_matched_insert_all": False},
        {"join_cols": ["id", "cat"]},
    ],
)
def test_same_result_as_pyiceberg_upsert_on_a_twin_table(tmp_path, options, version=2):
    from pyiceberg.catalog.sql import SqlCatalog

    cat = _catalog(tmp_path)
    ours = _table(cat, "db.ours", version)
    _table(cat, "db.theirs", version)
    py = SqlCatalog("u", uri=f"sqlite:///{tmp_path}/c.db", warehouse=(tmp_path / "wh").as_uri())
    theirs = py.load_table("db.theirs")
    source = _source()
    options = {"join_cols": ["id"], **options}
    want = theirs.upsert(source, **options)
    got = ours.upsert(source, **options)
    assert (got.rows_updated, got.rows_inserted) == (want.rows_updated, want.rows_inserted)
    a = cat.load_table("db.ours").scan().to_arrow()
    b = cat.load_table("db.theirs").scan().to_arrow()
    assert _sorted(a) == _sorted(b)
    # PyIceberg reads ours the same
    assert _sorted(py.load_table("db.ours").scan().to_arrow()) == _sorted(b)
    # and both refuse duplicate source keys with a ValueError
    dup = pa.concat_tables([_rows([1]), _rows([1])])
    with pytest.raises(ValueError, match="Duplicate rows"):
        theirs.upsert(dup, join_cols=["id"])
    with pytest.raises(ValueError, match="Duplicate rows"):
        ours.upsert(dup, join_cols=["id"])


def test_v1_rewrites_the_files_of_updated_rows_as_pyiceberg(tmp_path):
    """v1 has no delete files: the files holding updated rows are rewritten without them,
    in the same one commit."""
    test_same_result_as_pyiceberg_upsert_on_a_twin_table(tmp_path, {}, version=1)
    t = icefloe.load_catalog(
        "u", uri=f"sqlite:///{tmp_path}/c.db", warehouse=(tmp_path / "wh").as_uri()
    ).load_table("db.ours")
    assert t.metadata.format_version == 1
    assert not [d for ds in t.scan().plan_arrow().column("deletes").to_pylist() for d in ds]
    assert dict(t.current_snapshot().summary)["operation"] == "overwrite"
    assert len(t.snapshots()) == 3


@pytest.mark.java
@pytest.mark.parametrize("version", [1, 2, 3])
def test_java_reads_the_upserted_rows(spark, tmp_path, version):
    from test_catalog_oracle import spark_catalog

    # Spark's catalog name is the catalog_name of the catalog's rows: icefloe's uses it too
    name = spark_catalog(spark, f"{tmp_path}/c.db", (tmp_path / "wh").as_uri())
    cat = _catalog(tmp_path, name)
    t = _table(cat, "db.t", version, [("cat", "identity")])
    t.upsert(_source(), join_cols=["id"])
    t = cat.load_table("db.t")
    java = [r.asDict(recursive=True) for r in spark.sql(f"SELECT * FROM {name}.db.t").collect()]
    assert sorted(java, key=lambda r: r["id"]) == _sorted(t.scan().to_arrow())
    assert len(java) == 15
