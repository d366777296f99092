//! An upgraded v3 table whose delete manifests hold DVs: v4 compaction attaches each DV
//! to its data file's entry (`docs/v4.md`), and plans stay equal to a v3 twin's.
//! A child of `v4_tests`, whose helpers it uses.

use std::collections::HashMap;
use std::sync::Arc;

use super::*;

/// Applies `p` to both twins and checks that they plan the same, with and without
/// filters.
fn both(v3: &Arc<MemoryCatalog>, up: &Arc<MemoryCatalog>, p: SnapshotProducer, what: &str) {
    let t3 = commit(v3, clone_producer(&p)).unwrap();
    let t4 = commit(up, p).unwrap_or_else(|e| panic!("{what}: {e}"));
    same_plans(v3, &t3, up, &t4, what);
}

fn same_plans(
    v3: &Arc<MemoryCatalog>,
    t3: &TableState,
    up: &Arc<MemoryCatalog>,
    t4: &TableState,
    what: &str,
) {
    for f in [
        Expression::True,
        Expression::compare(ExprOp::Eq, "cat", Datum::Int(1)),
        Expression::compare(ExprOp::Eq, "cat", Datum::Int(2)),
    ] {
        assert_eq!(
            planned_with(v3, t3, f.clone()),
            planned_with(up, t4, f.clone()),
            "{what}, filter {f:?}"
        );
    }
}

fn row_delta(remove: Option<(&str, i64)>, add: DataFile) -> SnapshotProducer {
    let mut p = SnapshotProducer::row_delta();
    if let Some((puffin, off)) = remove {
        p.remove_delete_file(
            format!("mem://warehouse/db/t/data/{puffin}.puffin"),
            Some(off),
        );
    }
    p.add_delete_file(None, add);
    p
}

/// The entry of data file `name` in the current tree (root or leaf), as v4 holds it.
fn tracked(c: &Arc<MemoryCatalog>, t: &TableState, name: &str) -> TrackedFile {
    let p = V4Layout::for_table(&t.metadata).unwrap();
    for e in root(c, t) {
        if e.location == path(name) {
            return e;
        }
        if e.content_type.is_manifest() && e.format_version >= 4 {
            for item in crate::manifest::v4::tree::read_leaf(c.io().as_ref(), &p, &e).unwrap() {
                if let Some(t) = item.tracked {
                    if t.location == path(name) {
                        return t;
                    }
                }
            }
        }
    }
    panic!("{name} is not in the tree")
}

#[test]
fn compaction_attaches_an_upgraded_tables_v3_dvs_to_their_data_entries() {
    let v3 = MemoryCatalog::new();
    let up = MemoryCatalog::new();
    for c in [&v3, &up] {
        create(c, 3);
    }
    let mut p = SnapshotProducer::fast_append();
    for f in [
        data("d1", 1, 10),
        data("d2", 1, 10),
        data("d3", 2, 10),
        data("d4", 2, 10),
    ] {
        p.add_file(f);
    }
    both(&v3, &up, p, "v3 append 1");
    let mut p = SnapshotProducer::fast_append();
    p.add_file(data("d5", 1, 10));
    p.add_file(data("d6", 2, 10));
    both(&v3, &up, p, "v3 append 2");
    // v3 DVs for d1, d3 and d5, in one v3 delete manifest
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("dv1", "d1", 1, 4, 2));
    p.add_delete_file(None, dv("dv3", "d3", 2, 4, 3));
    p.add_delete_file(None, dv("dv5", "d5", 1, 4, 1));
    both(&v3, &up, p, "v3 row delta");
    let dv_snapshot = up
        .load_table(&ident())
        .unwrap()
        .metadata
        .current_snapshot()
        .unwrap()
        .snapshot_id;

    set_property(&up, "format-version", "4");
    // compact as soon as one leaf has a manifest DV
    set_property(&up, super::super::snapshot::COMPACT_MIN_DV_LEAVES, "1");

    // a v4 row delta replacing d1's DV: the v3 DV is removed by the delete manifest's
    // manifest DV (MODIFIED, so not compacted in this commit), d1 restated at the root
    both(
        &v3,
        &up,
        row_delta(Some(("dv1", 4)), dv("dv1b", "d1", 1, 4, 4)),
        "v4 row delta replacing dv1",
    );
    let t = up.load_table(&ident()).unwrap();
    let r = root(&up, &t);
    let v3_deletes = |r: &[TrackedFile]| {
        r.iter()
            .filter(|e| e.content_type == ContentType::DeleteManifest && e.format_version == 3)
            .count()
    };
    assert_eq!(v3_deletes(&r), 1);

    // the next commit compacts the v3 delete manifest: dv3 and dv5 go onto d3 and d5,
    // whose v3 data manifests join the compaction (no manifest DV of their own)
    let mut p = SnapshotProducer::fast_append();
    p.add_file(data("d7", 2, 10));
    both(&v3, &up, p, "v4 append compacting");
    let t = up.load_table(&ident()).unwrap();
    let r = root(&up, &t);
    assert_eq!(v3_deletes(&r), 0, "{:?}", shape(&r));
    assert!(
        r.iter().all(|e| e.format_version == 4),
        "v3 manifests left: {:?}",
        r.iter()
            .map(|e| (&e.location, e.format_version))
            .collect::<Vec<_>>()
    );
    for (name, puffin, rows) in [("d3", "dv3", 3), ("d5", "dv5", 1)] {
        let e = tracked(&up, &t, name);
        let dv = e
            .deletion_vector
            .as_ref()
            .unwrap_or_else(|| panic!("{name} has no DV"));
        assert_eq!(
            dv.location,
            format!("mem://warehouse/db/t/data/{puffin}.puffin")
        );
        assert_eq!((dv.offset, dv.cardinality), (4, rows));
        assert_eq!(e.tracking.status, Existing);
        // attaching changed no data: the DV keeps the snapshot that added it
        assert_eq!(e.tracking.dv_snapshot_id, Some(dv_snapshot));
    }
    assert!(tracked(&up, &t, "d4").deletion_vector.is_none());

    // v4 changes to the attached DVs and their files
    both(
        &v3,
        &up,
        row_delta(Some(("dv3", 4)), dv("dv3b", "d3", 2, 4, 5)),
        "v4 row delta replacing dv3",
    );
    let mut p = SnapshotProducer::delete_files();
    p.delete_path(path("d5"));
    both(&v3, &up, p, "v4 delete of d5");
    both(
        &v3,
        &up,
        SnapshotProducer::rewrite_manifests(),
        "rewrite manifests",
    );
    let t = up.load_table(&ident()).unwrap();
    let want: Planned = [
        (
            path("d1"),
            [("mem://warehouse/db/t/data/dv1b.puffin".to_string(), Some(4))].into(),
        ),
        (path("d2"), BTreeSet::new()),
        (
            path("d3"),
            [("mem://warehouse/db/t/data/dv3b.puffin".to_string(), Some(4))].into(),
        ),
        (path("d4"), BTreeSet::new()),
        (path("d6"), BTreeSet::new()),
        (path("d7"), BTreeSet::new()),
    ]
    .into();
    assert_eq!(planned(&up, &t), want);
}

#[test]
fn rewrite_manifests_of_an_upgraded_table_with_v3_dvs() {
    // formerly refused (Unsupported): every leaf, the v3 delete manifest included, is
    // compacted, its DVs on their data entries
    let v3 = MemoryCatalog::new();
    let up = MemoryCatalog::new();
    for c in [&v3, &up] {
        create(c, 3);
    }
    let mut p = SnapshotProducer::fast_append();
    p.add_file(data("d1", 1, 10));
    p.add_file(data("d2", 2, 10));
    both(&v3, &up, p, "v3 append");
    both(
        &v3,
        &up,
        row_delta(None, dv("dv2", "d2", 2, 4, 2)),
        "v3 row delta",
    );
    set_property(&up, "format-version", "4");
    both(
        &v3,
        &up,
        SnapshotProducer::rewrite_manifests(),
        "rewrite manifests",
    );
    let t = up.load_table(&ident()).unwrap();
    let r = root(&up, &t);
    assert!(
        r.iter()
            .all(|e| e.format_version == 4 && e.content_type == DataManifest),
        "{:?}",
        shape(&r)
    );
    let d2 = tracked(&up, &t, "d2");
    assert_eq!(
        d2.deletion_vector.map(|d| d.location),
        Some("mem://warehouse/db/t/data/dv2.puffin".to_string())
    );
    // and expiry of the v3 snapshots keeps the Puffin file the entry now names
    let mut p = SnapshotProducer::fast_append();
    p.add_file(data("d3", 1, 1));
    both(&v3, &up, p, "v4 append");
    let files: Vec<String> = ["d1", "d2", "d3"].iter().map(|n| path(n)).collect();
    touch(&up, &files);
    touch(&up, &[puffin("dv2")]);
    expire(&up, 1);
    assert_reachable_files_exist(&up, "after expiry");
    let t3 = v3.load_table(&ident()).unwrap();
    let t4 = up.load_table(&ident()).unwrap();
    same_plans(&v3, &t3, &up, &t4, "after expiry");
}

/// Twin tables, v3 and upgraded, made as v2 tables holding `files` (cat 1 and 2) and,
/// with `position_deletes`, a v2 position delete file for partition 1; the v3 twin then
/// upgraded to v3, the other to v3 and v4; a rewrite of manifests (the first v4 commit,
/// a compaction of everything) applied to both (the plans of the v2 commits checked
/// equal; the caller checks the upgraded twin's, whose paths a v4 leaf may rename).
fn upgraded_twins(
    files: Vec<DataFile>,
    position_deletes: bool,
) -> (Arc<MemoryCatalog>, Arc<MemoryCatalog>) {
    let v3 = MemoryCatalog::new();
    let up = MemoryCatalog::new();
    for c in [&v3, &up] {
        create(c, 2);
    }
    let mut p = SnapshotProducer::fast_append();
    for f in files {
        p.add_file(f);
    }
    both(&v3, &up, p, "v2 append");
    if position_deletes {
        let pos = DataFile::new(
            DataContentType::PositionDeletes,
            "mem://warehouse/db/t/data/pos1.parquet".to_string(),
            FileFormat::Parquet,
            vec![Some(Literal::Int(1))],
            3,
            100,
        );
        let mut p = SnapshotProducer::row_delta();
        p.add_delete_file(None, pos);
        both(&v3, &up, p, "v2 position deletes");
    }
    for c in [&v3, &up] {
        set_property(c, "format-version", "3");
    }
    set_property(&up, "format-version", "4");
    for c in [&v3, &up] {
        commit(c, SnapshotProducer::rewrite_manifests()).unwrap();
    }
    (v3, up)
}

/// Data file `name` of 10 rows at a scheme-less local path outside the table location.
fn local(name: &str, cat: i32) -> DataFile {
    let mut f = data(name, cat, 10);
    f.file_path = format!("/elsewhere/{name}.parquet");
    f
}

/// The format versions of the root's manifests of `content`.
fn manifest_versions(r: &[TrackedFile], content: ContentType) -> Vec<i32> {
    r.iter()
        .filter(|e| e.content_type == content)
        .map(|e| e.format_version)
        .collect()
}

#[test]
fn a_v3_delete_manifest_holding_v2_position_deletes_stays_a_v3_leaf() {
    // a table upgraded v2 -> v3 -> v4 whose delete manifest holds a v2 position delete
    // file: v4 cannot hold it, so compaction leaves that manifest as it is (formerly the
    // whole commit failed with Unsupported)
    let (v3, up) = upgraded_twins(vec![data("d1", 1, 10), data("d2", 2, 10)], true);
    let t = up.load_table(&ident()).unwrap();
    let r = root(&up, &t);
    assert_eq!(
        manifest_versions(&r, ContentType::DeleteManifest),
        [3],
        "{:?}",
        shape(&r)
    );
    let want: Planned = [
        (
            path("d1"),
            [("mem://warehouse/db/t/data/pos1.parquet".to_string(), None)].into(),
        ),
        (path("d2"), BTreeSet::new()),
    ]
    .into();
    assert_eq!(planned(&up, &t), want);
    // and v4 commits after it keep planning as the twin does
    let mut p = SnapshotProducer::fast_append();
    p.add_file(data("d3", 1, 10));
    both(&v3, &up, p, "v4 append");
    let mut p = SnapshotProducer::delete_files();
    p.delete_path(path("d1"));
    both(&v3, &up, p, "v4 delete");
}

#[test]
fn a_v3_manifest_naming_local_files_outside_the_location_stays_a_v3_leaf() {
    // a table upgraded v2 -> v3 -> v4 whose data files are scheme-less local paths
    // outside its location, with a v2 position delete file: a v4 leaf would store those
    // paths `file://`-qualified (they read back so), while the delete file's rows name
    // them without the scheme; so their v3 manifest stays a v3 leaf and they keep their
    // names, in plans and for the rows that delete from them
    // a rewrite of manifests takes every leaf: the data manifest stays v3 all the same
    let (_, up) = upgraded_twins(vec![local("d1", 1), local("d2", 2)], true);
    let t = up.load_table(&ident()).unwrap();
    let r = root(&up, &t);
    // the v2 manifest, a v3 leaf (as the v2 delete manifest in the test above)
    assert_eq!(
        manifest_versions(&r, ContentType::DataManifest),
        [3],
        "{:?}",
        shape(&r)
    );
    let want: Planned = [
        (
            "/elsewhere/d1.parquet".to_string(),
            [("mem://warehouse/db/t/data/pos1.parquet".to_string(), None)].into(),
        ),
        ("/elsewhere/d2.parquet".to_string(), BTreeSet::new()),
    ]
    .into();
    assert_eq!(planned(&up, &t), want);

    // a file added in v4 at such a path is stored qualified, and named so from then on
    let mut p = SnapshotProducer::fast_append();
    p.add_file(local("d3", 1));
    commit(&up, p).unwrap();
    let t = up.load_table(&ident()).unwrap();
    let names: Vec<String> = planned(&up, &t).into_iter().map(|(f, _)| f).collect();
    assert!(
        names.contains(&"file:///elsewhere/d3.parquet".to_string()),
        "{names:?}"
    );
}

#[test]
fn without_v2_position_deletes_such_a_manifest_is_converted() {
    // the same table without the position delete file: nothing reads the files' names
    // but planning, so the manifest becomes a v4 leaf and its files are named as v4
    // stores them (`file://`-qualified), once and for all
    let (_, up) = upgraded_twins(vec![local("d1", 1), local("d2", 2)], false);
    let t = up.load_table(&ident()).unwrap();
    let r = root(&up, &t);
    assert_eq!(
        manifest_versions(&r, ContentType::DataManifest),
        [4],
        "{:?}",
        shape(&r)
    );
    let names: Vec<String> = planned(&up, &t).into_iter().map(|(f, _)| f).collect();
    assert_eq!(
        names,
        [
            "file:///elsewhere/d1.parquet",
            "file:///elsewhere/d2.parquet"
        ]
    );
}

// ---- the bound on v3 manifests a compaction converts (`commit.v4.compact.max-v3-manifests`)

use super::super::snapshot::{
    COMPACT_MAX_V3_MANIFESTS, COMPACT_MIN_DV_LEAVES, LEAF_MAX_FILE_ENTRIES, ROOT_MAX_FILE_ENTRIES,
};
use crate::manifest::v4::tree::read_leaf;

/// The root entries pointing to v3 manifests (the upgrade's, not converted yet).
fn v3_manifests(r: &[TrackedFile]) -> Vec<&TrackedFile> {
    r.iter()
        .filter(|e| e.content_type.is_manifest() && e.format_version < 4)
        .collect()
}

fn v4_leaves(r: &[TrackedFile]) -> Vec<&TrackedFile> {
    r.iter()
        .filter(|e| e.content_type.is_manifest() && e.format_version >= 4)
        .collect()
}

/// Every live data file of the tree with its first row id (a v3 manifest's inherited, a
/// v4 entry's own).
fn first_row_ids(c: &Arc<MemoryCatalog>, t: &TableState) -> BTreeSet<(String, Option<i64>)> {
    let p = V4Layout::for_table(&t.metadata).unwrap();
    let mut out = BTreeSet::new();
    for e in root(c, t) {
        if e.content_type == ContentType::DataManifest {
            for item in read_leaf(c.io().as_ref(), &p, &e).unwrap() {
                let f = &item.entry.data_file;
                let id = item
                    .tracked
                    .as_ref()
                    .map_or(f.first_row_id, |t| t.tracking.first_row_id);
                out.insert((f.file_path.clone(), id));
            }
        } else if e.content_type == Data && e.tracking.status != Deleted {
            out.insert((e.location.clone(), e.tracking.first_row_id));
        }
    }
    out
}

/// The `id` (field 1) bound of a metric map, decoded.
fn id_bound(b: &Option<Vec<(i32, Vec<u8>)>>) -> Option<i64> {
    let (_, v) = b.as_ref()?.iter().find(|(id, _)| *id == 1)?;
    Some(i64::from_le_bytes(v.as_slice().try_into().ok()?))
}

fn remove_property(c: &Arc<MemoryCatalog>, key: &str) {
    let mut tx = Transaction::load(c.clone(), ident()).unwrap();
    tx.remove_properties(vec![key.to_string()]);
    tx.commit().unwrap();
}

fn append_one(v3: &Arc<MemoryCatalog>, up: &Arc<MemoryCatalog>, f: DataFile, what: &str) {
    let mut p = SnapshotProducer::fast_append();
    p.add_file(f);
    both(v3, up, p, what);
}

fn delete_one(v3: &Arc<MemoryCatalog>, up: &Arc<MemoryCatalog>, file_path: &str, what: &str) {
    let mut p = SnapshotProducer::delete_files();
    p.delete_path(file_path.to_string());
    both(v3, up, p, what);
}

#[test]
fn a_compaction_converts_an_upgraded_tables_v3_manifests_up_to_the_bound() {
    let v3 = MemoryCatalog::new();
    let up = MemoryCatalog::new();
    for c in [&v3, &up] {
        create(c, 3);
    }
    // five v3 data manifests of two files each
    for m in 0..5usize {
        let mut p = SnapshotProducer::fast_append();
        for k in 0..2usize {
            let n = 2 * m + k + 1;
            p.add_file(ids(&format!("m{m}k{k}"), k as i32 + 1, 10, n));
        }
        both(&v3, &up, p, "v3 append");
    }
    set_property(&up, "format-version", "4");
    set_property(&up, COMPACT_MIN_DV_LEAVES, "1");
    set_property(&up, COMPACT_MAX_V3_MANIFESTS, "2");
    let io = up.io();

    // no compaction, no conversion: a small commit never pays for the upgrade's manifests
    append_one(&v3, &up, ids("a1", 1, 10, 20), "v4 append");
    let t = up.load_table(&ident()).unwrap();
    assert_eq!(v3_manifests(&root(&up, &t)).len(), 5);
    // a delete from one of them gives it a manifest DV (MODIFIED in this commit, so it is
    // not compacted by it)
    delete_one(&v3, &up, &path("m0k0"), "v4 delete from a v3 manifest");
    let t = up.load_table(&ident()).unwrap();
    assert_eq!(v3_manifests(&root(&up, &t)).len(), 5);
    let row_ids_before = first_row_ids(&up, &t);

    // the next commit compacts that leaf and converts two more v3 manifests, no more
    append_one(&v3, &up, ids("a2", 2, 10, 21), "v4 append compacting");
    let t = up.load_table(&ident()).unwrap();
    let r = root(&up, &t);
    assert_eq!(v3_manifests(&r).len(), 2, "{:?}", shape(&r));
    let leaves = v4_leaves(&r);
    assert_eq!(leaves.len(), 1, "{:?}", shape(&r));
    let leaf = leaves[0];
    assert_eq!(leaf.tracking.status, Existing);
    assert!(leaf_dv(leaf).is_empty());
    let info = leaf.manifest_info.as_ref().unwrap();
    // m0's remaining file and the four of the two converted manifests, all EXISTING
    assert_eq!(
        (
            info.added_files_count,
            info.existing_files_count,
            info.deleted_files_count
        ),
        (0, 5, 0)
    );
    assert_eq!((info.added_rows_count, info.existing_rows_count), (0, 50));
    assert_eq!(leaf.record_count, 5);
    let p = V4Layout::for_table(&t.metadata).unwrap();
    let items = read_leaf(io.as_ref(), &p, leaf).unwrap();
    assert_eq!(items.len(), 5);
    let entries: Vec<&TrackedFile> = items.iter().map(|i| i.tracked.as_ref().unwrap()).collect();
    for e in &entries {
        assert_eq!(e.tracking.status, Existing, "{}", e.location);
        assert!(e.deletion_vector.is_none(), "{}", e.location);
        assert_eq!(e.tracking.dv_snapshot_id, None, "{}", e.location);
    }
    // the leaf's aggregate over its files' `id` bounds and counts
    let lo = entries
        .iter()
        .map(|e| id_bound(&e.metrics.lower_bounds).unwrap());
    let hi = entries
        .iter()
        .map(|e| id_bound(&e.metrics.upper_bounds).unwrap());
    assert_eq!(id_bound(&leaf.metrics.lower_bounds), lo.min());
    assert_eq!(id_bound(&leaf.metrics.upper_bounds), hi.max());
    let value_count = |e: &TrackedFile| {
        e.metrics
            .value_counts
            .as_ref()
            .and_then(|v| v.iter().find(|(id, _)| *id == 1).map(|(_, n)| *n))
    };
    assert_eq!(value_count(leaf), Some(50));
    // this commit's file stays at the root, ADDED; the earlier one EXISTING
    let files: Vec<_> = shape(&r)
        .into_iter()
        .filter(|(_, c, _)| !c.is_manifest())
        .collect();
    assert_eq!(files, vec![s(Existing, Data, "a1"), s(Added, Data, "a2")]);
    // converting keeps every file's first row id
    let mut row_ids_after = first_row_ids(&up, &t);
    assert!(row_ids_after.remove(&(path("a2"), Some(t.metadata.next_row_id - 10))));
    assert_eq!(row_ids_after, row_ids_before);

    // 0 disables the conversion: a compaction takes only the leaf with a DV
    set_property(&up, COMPACT_MAX_V3_MANIFESTS, "0");
    delete_one(&v3, &up, &entries[0].location, "v4 delete from the v4 leaf");
    append_one(
        &v3,
        &up,
        ids("a3", 1, 10, 22),
        "v4 append compacting, bound 0",
    );
    let t = up.load_table(&ident()).unwrap();
    let r = root(&up, &t);
    assert_eq!(v3_manifests(&r).len(), 2, "{:?}", shape(&r));
    let leaf = v4_leaves(&r)[0].clone();
    assert_eq!(leaf.manifest_info.as_ref().unwrap().existing_files_count, 4);

    // the default bound (32) takes the rest
    remove_property(&up, COMPACT_MAX_V3_MANIFESTS);
    let items = read_leaf(io.as_ref(), &p, &leaf).unwrap();
    delete_one(
        &v3,
        &up,
        &items[0].entry.data_file.file_path,
        "v4 delete from the v4 leaf",
    );
    append_one(
        &v3,
        &up,
        ids("a4", 2, 10, 23),
        "v4 append compacting, default bound",
    );
    let t = up.load_table(&ident()).unwrap();
    let r = root(&up, &t);
    assert!(v3_manifests(&r).is_empty(), "{:?}", shape(&r));
    for leaf in v4_leaves(&r) {
        assert_eq!(leaf.tracking.status, Existing);
        assert!(leaf_dv(leaf).is_empty());
    }
    let info_sum: i32 = v4_leaves(&r)
        .iter()
        .map(|l| l.manifest_info.as_ref().unwrap().existing_files_count)
        .sum();
    // the ten v3 files less the three v4 deletes removed; the four appended files stay
    // in the root
    assert_eq!(info_sum, 7);
}

#[test]
fn a_v3_delete_manifest_taken_by_the_bound_stays_whole_until_its_dvs_can_be_attached() {
    let v3 = MemoryCatalog::new();
    let up = MemoryCatalog::new();
    for c in [&v3, &up] {
        create(c, 3);
    }
    let mut p = SnapshotProducer::fast_append();
    p.add_file(data("d0", 1, 10));
    p.add_file(data("d1", 1, 10));
    both(&v3, &up, p, "v3 append 1");
    both(
        &v3,
        &up,
        row_delta(None, dv("dv1", "d1", 1, 4, 2)),
        "v3 row delta",
    );
    let dv_snapshot = up
        .load_table(&ident())
        .unwrap()
        .metadata
        .current_snapshot_id;
    let mut p = SnapshotProducer::fast_append();
    p.add_file(data("d2", 2, 10));
    p.add_file(data("d3", 2, 10));
    both(&v3, &up, p, "v3 append 2");
    set_property(&up, "format-version", "4");
    set_property(&up, COMPACT_MIN_DV_LEAVES, "1");
    set_property(&up, COMPACT_MAX_V3_MANIFESTS, "0");

    // d1's v3 data manifest becomes a v4 leaf (it carries a DV); dv1 stays in its v3
    // delete manifest, which no rule takes yet
    delete_one(&v3, &up, &path("d0"), "v4 delete of d0");
    append_one(
        &v3,
        &up,
        data("e1", 1, 1),
        "v4 append compacting d1's manifest",
    );
    let t = up.load_table(&ident()).unwrap();
    let r = root(&up, &t);
    let deletes = |r: &[TrackedFile]| -> Vec<TrackedFile> {
        v3_manifests(r)
            .into_iter()
            .filter(|e| e.content_type == ContentType::DeleteManifest)
            .cloned()
            .collect()
    };
    let before = deletes(&r);
    assert_eq!(before.len(), 1, "{:?}", shape(&r));
    assert_eq!(v3_manifests(&r).len(), 2);

    // the bound takes the delete manifest, but d1 sits in a v4 leaf this compaction does
    // not take, and with the bound spent no leaf is read to look for it: it stays whole
    set_property(&up, COMPACT_MAX_V3_MANIFESTS, "1");
    delete_one(&v3, &up, &path("d2"), "v4 delete of d2");
    append_one(
        &v3,
        &up,
        data("e2", 2, 1),
        "v4 append, delete manifest stays",
    );
    let t = up.load_table(&ident()).unwrap();
    let r = root(&up, &t);
    assert_eq!(deletes(&r), before, "{:?}", shape(&r));
    assert_eq!(v3_manifests(&r).len(), 1, "{:?}", shape(&r));
    assert!(tracked(&up, &t, "d1").deletion_vector.is_none());

    // with one more manifest to spare, the compaction reads d1's leaf, which joins it,
    // and dv1 goes onto d1's entry
    set_property(&up, COMPACT_MAX_V3_MANIFESTS, "2");
    delete_one(&v3, &up, &path("d3"), "v4 delete of d3");
    append_one(
        &v3,
        &up,
        data("e3", 1, 1),
        "v4 append converting the delete manifest",
    );
    let t = up.load_table(&ident()).unwrap();
    let r = root(&up, &t);
    assert!(v3_manifests(&r).is_empty(), "{:?}", shape(&r));
    let d1 = tracked(&up, &t, "d1");
    assert_eq!(
        d1.deletion_vector.as_ref().map(|d| (&d.location, d.offset)),
        Some((&puffin("dv1"), 4))
    );
    assert_eq!(d1.tracking.status, Existing);
    assert_eq!(d1.tracking.dv_snapshot_id, dv_snapshot);
    let want: Planned = [
        (path("d1"), [(puffin("dv1"), Some(4))].into()),
        (path("e1"), BTreeSet::new()),
        (path("e2"), BTreeSet::new()),
        (path("e3"), BTreeSet::new()),
    ]
    .into();
    assert_eq!(planned(&up, &t), want);
}

#[test]
fn the_v4_commit_properties_must_be_non_negative_integers() {
    let c = MemoryCatalog::new();
    let t = create(&c, 4);
    for key in [
        COMPACT_MAX_V3_MANIFESTS,
        COMPACT_MIN_DV_LEAVES,
        ROOT_MAX_FILE_ENTRIES,
        LEAF_MAX_FILE_ENTRIES,
    ] {
        for bad in ["-1", "x", "1.5", ""] {
            let mut tx = Transaction::load(c.clone(), ident()).unwrap();
            tx.set_properties(vec![(key.to_string(), bad.to_string())])
                .unwrap();
            let err = tx.commit().unwrap_err();
            assert!(
                matches!(&err, Error::ValidationFailed { message } if message.contains(key)),
                "{key}={bad:?}: {err}"
            );
        }
        // read trimmed, so set trimmed
        set_property(&c, key, " 7 ");
    }
    let md = &t.metadata;
    let created = super::super::builder::MetadataBuilder::new_table(
        md.current_schema().unwrap(),
        md.default_spec().unwrap(),
        &crate::spec::sort::SortOrder::unsorted(),
        "mem://t2",
        &[(COMPACT_MAX_V3_MANIFESTS.to_string(), "-3".to_string())],
        Some(4),
    );
    assert!(matches!(created, Err(Error::ValidationFailed { .. })));
}

/// Model-based equivalence across the upgrade: random operations on twin tables, both
/// v3 for the first steps, then one upgraded to v4 with small roots, eager compaction and
/// a small bound on the v3 manifests one compaction converts: both plan the same files
/// with the same deletes after every commit.
#[test]
fn upgraded_twins_plan_the_same_files_as_v3_while_compactions_convert_v3_manifests() {
    let mut converted = 0usize;
    for seed in 1..=60u64 {
        let v3 = MemoryCatalog::new();
        let up = MemoryCatalog::new();
        for c in [&v3, &up] {
            create(c, 3);
        }
        let mut rng = Rng(seed.wrapping_mul(0xA076_1D64_78BD_642F) | 1);
        let mut live: Vec<LiveFile> = Vec::new();
        let mut n = 0usize;
        let upgrade_at = 4 + rng.below(4);
        // each live file's first row id and sequence numbers once the table is v4
        let mut seen: HashMap<String, (Option<i64>, i64, Option<i64>)> = HashMap::new();
        for step in 0..18 {
            if step == upgrade_at {
                set_property(&up, "format-version", "4");
                set_property(&up, ROOT_MAX_FILE_ENTRIES, "3");
                set_property(&up, COMPACT_MIN_DV_LEAVES, &(1 + rng.below(2)).to_string());
                set_property(&up, COMPACT_MAX_V3_MANIFESTS, &rng.below(3).to_string());
            }
            let op = rng.below(5);
            let p = match op {
                2 if !live.is_empty() => remove_random_file(&mut rng, &mut live),
                // a DV for a live file, replacing its DV
                3 if !live.is_empty() => replace_random_dv(&mut rng, &mut live, seed, &mut n),
                4 if live.len() > 3 => {
                    let cat = rng.below(3) as i32;
                    live.retain(|f| f.1 != cat);
                    let mut p = SnapshotProducer::delete_files();
                    p.delete_by_row_filter(Expression::compare(ExprOp::Eq, "cat", Datum::Int(cat)));
                    p
                }
                _ => {
                    let mut p = SnapshotProducer::fast_append();
                    for _ in 0..=rng.below(3) {
                        n += 1;
                        let cat = rng.below(3) as i32;
                        let name = format!("s{seed}f{n}");
                        p.add_file(ids(&name, cat, 10, n));
                        live.push((name, cat, None));
                    }
                    p
                }
            };
            let ctx = format!("seed {seed} step {step} op {op}");
            let before = (step > upgrade_at).then(|| {
                let t = up.load_table(&ident()).unwrap();
                v3_manifests(&root(&up, &t)).len()
            });
            let t3 = commit(&v3, clone_producer(&p)).unwrap();
            let t4 = commit(&up, p).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            if let Some(before) = before {
                converted += before.saturating_sub(v3_manifests(&root(&up, &t4)).len());
            }
            // a file keeps its row ids and sequence numbers, converted or not, and the
            // twins plan the same rows of each file
            let tasks = |c: &Arc<MemoryCatalog>, t: &TableState| {
                TableScan::new(t.metadata.clone(), c.io())
                    .plan_files()
                    .unwrap()
                    .tasks
            };
            let rows = |c: &Arc<MemoryCatalog>, t: &TableState| -> BTreeSet<(String, i64)> {
                tasks(c, t)
                    .iter()
                    .map(|task| {
                        (
                            task.file.file.file_path.clone(),
                            task.file.file.record_count,
                        )
                    })
                    .collect()
            };
            assert_eq!(rows(&v3, &t3), rows(&up, &t4), "{ctx}: rows");
            if step >= upgrade_at {
                for task in tasks(&up, &t4) {
                    let f = &task.file;
                    let now = (
                        f.file.first_row_id,
                        f.data_sequence_number,
                        f.file_sequence_number,
                    );
                    let was = *seen.entry(f.file.file_path.clone()).or_insert(now);
                    assert_eq!(was, now, "{ctx}: {}", f.file.file_path);
                }
            }
            let half = (n as i64) * 10 / 2;
            for f in [
                Expression::True,
                Expression::compare(ExprOp::Eq, "cat", Datum::Int(1)),
                Expression::compare(ExprOp::GtEq, "id", Datum::Long(half)),
                Expression::compare(ExprOp::Eq, "id", Datum::Long(half + 3)),
            ] {
                assert_eq!(
                    planned_with(&v3, &t3, f.clone()),
                    planned_with(&up, &t4, f.clone()),
                    "{ctx}, filter {f:?}"
                );
            }
        }
    }
    // the compactions did convert v3 manifests
    assert!(converted > 0);
}
