"""Format v4: a plan tells where each data file sits in the metadata tree (``v4_leaf`` and
``v4_ordinal``), and ``table.delete`` passes it back to its row delta, so that the commit
reads those leaf entries instead of searching every leaf. The rows left must be those of
the same delete on a v3 twin."""

from __future__ import annotations

import pyarrow as pa
import pytest

import icefloe


def _catalog(tmp_path):
    cat = icefloe.load_catalog(
        "t", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=(tmp_path / "wh").as_uri()
    )
    cat.create_namespace("db")
    return cat


def _data(lo: int, n: int) -> pa.Table:
    return pa.table(
        {"id": pa.array(range(lo, lo + n), pa.int64()), "v": pa.array([str(i) for i in range(lo, lo + n)])}
    )


def _table(cat, name: str, version: int):
    # every append flushed into a leaf of its own on v4 (the root keeps no file)
    props = {"format-version": str(version)}
    if version == 4:
        props["commit.v4.root.max-file-entries"] = "0"
    t = cat.create_table(name, _data(0, 1).schema, properties=props)
    for k in range(4):
        t.append(_data(100 * k, 100))
    return cat.load_table(name)


def test_a_v4_plan_gives_leaf_positions_and_delete_uses_them(tmp_path):
    cat = _catalog(tmp_path)
    v4 = _table(cat, "db.v4", 4)
    v3 = _table(cat, "db.v3", 3)

    plan = v4.scan().plan_arrow()
    assert plan.column("v4_leaf").null_count == 0
    leaves = set(plan.column("v4_leaf").to_pylist())
    assert len(leaves) == 4
    assert set(plan.column("v4_ordinal").to_pylist()) == {0}
    # each file's entry is the first of its leaf: its Avro block starts right after the
    # leaf's header, and the plan gives the block with the position
    assert plan.column("v4_block_offset").null_count == 0
    assert all(o > 0 for o in plan.column("v4_block_offset").to_pylist())
    assert all(n > 16 for n in plan.column("v4_block_length").to_pylist())
    # a v3 plan has the columns, null
    p3 = v3.scan().plan_arrow()
    assert p3.column("v4_leaf").null_count == p3.num_rows
    assert p3.column("v4_block_offset").null_count == p3.num_rows

    for where in ("id >= 250 and id < 260", "id < 5 or id = 399", "id >= 100 and id < 200"):
        r4 = v4.delete(where)
        r3 = v3.delete(where)
        assert (r4.deleted_rows, r4.data_files_removed) == (r3.deleted_rows, r3.data_files_removed)
        v4, v3 = cat.load_table("db.v4"), cat.load_table("db.v3")
        ids4 = sorted(v4.scan(selected_fields=["id"]).to_arrow().column("id").to_pylist())
        ids3 = sorted(v3.scan(selected_fields=["id"]).to_arrow().column("id").to_pylist())
        assert ids4 == ids3
    assert len(ids4) == 400 - 10 - 6 - 100


def test_row_delta_takes_the_positions_of_the_plan_it_is_given(tmp_path):
    """``row_delta(plan=...)``: the commit reads only the leaf the plan found the removed
    file in (the other leaves are made unreadable; searching would meet them first), and
    a v3 plan, whose position columns are null, gives none."""
    cat = _catalog(tmp_path)
    v4 = _table(cat, "db.v4", 4)
    rows = v4.scan().plan_arrow().to_pylist()
    # the writer's own scan: the last append's file, in the leaf a search reaches last
    plan = v4.scan(row_filter="id >= 300").plan_arrow()
    assert plan.num_rows == 1
    target = plan.to_pylist()[0]
    for r in rows:
        if r["v4_leaf"] != target["v4_leaf"]:
            path = r["v4_leaf"].removeprefix("file://")
            with open(path, "wb") as f:
                f.write(b"not a manifest")
    with v4.transaction() as tx:
        tx.row_delta(remove_data_files=[target["file_path"]], plan=plan)
    # without the plan the same removal searches the leaves and meets a broken one
    other = next(r for r in rows if r["v4_leaf"] != target["v4_leaf"])
    with pytest.raises(icefloe.errors.IcefloeError, match="Avro"):
        with cat.load_table("db.v4").transaction() as tx:
            tx.row_delta(remove_data_files=[other["file_path"]])
    v3 = _table(cat, "db.v3", 3)
    p3 = v3.scan().plan_arrow()
    first = p3.column("file_path")[0].as_py()
    with v3.transaction() as tx:
        tx.row_delta(remove_data_files=[first], plan=p3)
    assert first not in cat.load_table("db.v3").scan().plan_arrow().column("file_path").to_pylist()


def test_row_delta_with_a_stale_position_still_commits(tmp_path):
    cat = _catalog(tmp_path)
    v4 = _table(cat, "db.v4", 4)
    plan = v4.scan().plan_arrow()
    # a position naming another file's leaf: the commit finds the file by searching
    rows = plan.to_pylist()
    wrong = {rows[0]["file_path"]: (rows[1]["v4_leaf"], 0)}
    with v4.transaction() as tx:
        tx.row_delta(remove_data_files=[rows[0]["file_path"]], data_file_positions=wrong)
    left = cat.load_table("db.v4").scan().plan_arrow().column("file_path").to_pylist()
    assert rows[0]["file_path"] not in left and len(left) == 3


def test_row_delta_with_a_wrong_block_reads_the_leaf_whole(tmp_path):
    cat = _catalog(tmp_path)
    _table(cat, "db.v4", 4)
    # the right leaf and ordinal with a block span that is not the entry's block, and one
    # past the leaf's end: the commit reads the leaf whole and removes the file
    for shift in (1, 1 << 40):
        r = cat.load_table("db.v4").scan().plan_arrow().to_pylist()[0]
        position = (r["v4_leaf"], r["v4_ordinal"], r["v4_block_offset"] + shift, r["v4_block_length"])
        with cat.load_table("db.v4").transaction() as tx:
            tx.row_delta(remove_data_files=[r["file_path"]], data_file_positions={r["file_path"]: position})
        left = cat.load_table("db.v4").scan().plan_arrow().column("file_path").to_pylist()
        assert r["file_path"] not in left
    assert len(cat.load_table("db.v4").scan().plan_arrow()) == 2


def test_row_delta_refuses_a_position_of_another_shape(tmp_path):
    cat = _catalog(tmp_path)
    v4 = _table(cat, "db.v4", 4)
    r = v4.scan().plan_arrow().to_pylist()[0]
    with pytest.raises(icefloe.errors.InvalidArgumentError, match="got 3 values"):
        with v4.transaction() as tx:
            tx.row_delta(
                remove_data_files=[r["file_path"]],
                data_file_positions={r["file_path"]: (r["v4_leaf"], r["v4_ordinal"], r["v4_block_offset"])},
            )
    # nothing was committed
    assert len(cat.load_table("db.v4").scan().plan_arrow()) == 4
