"""``table.delete`` and ``table.upsert`` write each touched data file's deletion vector from
the deletes their scan planned for it (``icefloe::write::scanned_deletes``), reading no
manifest to find them: the manifests of the other partitions (v3) or the leaves the filter
rules out (v4) are made unreadable after the appends, and the row-level changes of one
partition still commit, with the DVs of later changes merged with the earlier ones."""

from __future__ import annotations

import pyarrow as pa
import pytest

import icefloe


def _data(k: int, ids=None) -> pa.Table:
    ids = list(range(100 * k, 100 * k + 100) if ids is None else ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "v": pa.array([f"v{i}" for i in ids]),
            "p": pa.array([k] * len(ids), pa.int32()),
        }
    )


def _table(tmp_path, version: int):
    """Four appends, batch k in partition p = k; returns the table and the manifests (v3)
    or leaves (v4) holding batches 0..2."""
    cat = icefloe.load_catalog("sd", uri=f"sqlite:///{tmp_path}/c.db", warehouse=(tmp_path / "wh").as_uri())
    cat.create_namespace("db")
    props = {"format-version": str(version)}
    spec = None
    if version == 4:
        props["commit.v4.root.max-file-entries"] = "0"
    else:
        spec = [("p", "identity")]
    t = cat.create_table("db.t", _data(0).schema, partition_spec=spec, properties=props)
    held: list[str] = []
    for k in range(4):
        t.append(_data(k))
        t = cat.load_table("db.t")
        if version == 4:
            held.append(t.scan(row_filter=f"p = {k}").plan_arrow().column("v4_leaf")[0].as_py())
        else:
            (new,) = set(t.inspect.manifests().column("path").to_pylist()) - set(held)
            held.append(new)
    return cat, held[:3]


def _ids(t) -> list[int]:
    return sorted(t.scan(row_filter="p = 3", selected_fields=["id"]).to_arrow().column("id").to_pylist())


@pytest.mark.parametrize("version", [3, 4])
def test_row_deletes_read_no_manifest_their_scan_pruned(tmp_path, version):
    cat, pruned = _table(tmp_path, version)
    t = cat.load_table("db.t")
    saved = {p: t.io.read(p) for p in pruned}
    for p in pruned:
        t.io.delete(p)
        t.io.write_new(p, b"not a manifest" * 100)

    r = t.delete("p = 3 and id = 305")
    assert (r.deleted_rows, r.delete_files_added) == (1, 1)
    if version == 4:
        # a v4 commit replacing a DV checks that it is live by walking every leaf (the
        # writers do not): the rest runs on the restored tree
        for p, data in saved.items():
            t.io.delete(p)
            t.io.write_new(p, data)
    t = cat.load_table("db.t")
    r = t.delete("p = 3 and id in (306, 350)")
    assert r.deleted_rows == 2
    summary = cat.load_table("db.t").current_snapshot().summary
    assert (summary["added-dvs"], summary["removed-dvs"]) == ("1", "1")
    # the upsert deletes the old rows of the matched ids by position too
    t = cat.load_table("db.t")
    source = _data(3, ids=[310, 311]).set_column(1, "v", pa.array(["new", "new"]))
    res = t.upsert(source, join_cols=["id", "p"])
    assert res.rows_updated == 2
    t = cat.load_table("db.t")
    assert _ids(t) == [i for i in range(300, 400) if i not in (305, 306, 350)]
    rows = t.scan(row_filter="p = 3 and id in (310, 311, 312)").to_arrow().sort_by("id")
    assert rows.column("v").to_pylist() == ["new", "new", "v312"]
    if version == 3:
        with pytest.raises(Exception, match="(?i)avro|manifest"):
            t.scan().to_arrow()
