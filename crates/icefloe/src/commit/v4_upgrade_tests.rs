//! An upgraded v3 table whose delete manifests hold DVs: v4 compaction attaches each DV
//! to its data file's entry (`docs/v4.md`), and plans stay equal to a v3 twin's.
//! A child of `v4_tests`, whose helpers it uses.

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
        p.remove_delete_file(format!("mem://data/{puffin}.puffin"), Some(off));
    }
    p.add_delete_file(None, add);
    p
}

/// The entry of data file `name` in the current tree (root or leaf), as v4 holds it.
fn tracked(c: &Arc<MemoryCatalog>, t: &TableState, name: &str) -> TrackedFile {
    let p = V4Partitioning::for_table(&t.metadata).unwrap();
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
        assert_eq!(dv.location, format!("mem://data/{puffin}.puffin"));
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
            [("mem://data/dv1b.puffin".to_string(), Some(4))].into(),
        ),
        (path("d2"), BTreeSet::new()),
        (
            path("d3"),
            [("mem://data/dv3b.puffin".to_string(), Some(4))].into(),
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
        Some("mem://data/dv2.puffin".to_string())
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

#[test]
fn a_v3_delete_manifest_holding_v2_position_deletes_stays_a_v3_leaf() {
    // a table upgraded v2 -> v3 -> v4 whose delete manifest holds a v2 position delete
    // file: v4 cannot hold it, so compaction leaves that manifest as it is (formerly the
    // whole commit failed with Unsupported)
    let v3 = MemoryCatalog::new();
    let up = MemoryCatalog::new();
    for c in [&v3, &up] {
        create(c, 2);
    }
    let mut p = SnapshotProducer::fast_append();
    p.add_file(data("d1", 1, 10));
    p.add_file(data("d2", 2, 10));
    both(&v3, &up, p, "v2 append");
    let pos = DataFile::new(
        DataContentType::PositionDeletes,
        "mem://data/pos1.parquet".to_string(),
        FileFormat::Parquet,
        vec![Some(Literal::Int(1))],
        3,
        100,
    );
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, pos);
    both(&v3, &up, p, "v2 position deletes");
    for c in [&v3, &up] {
        set_property(c, "format-version", "3");
    }
    set_property(&up, "format-version", "4");
    both(
        &v3,
        &up,
        SnapshotProducer::rewrite_manifests(),
        "rewrite manifests",
    );
    let t = up.load_table(&ident()).unwrap();
    let r = root(&up, &t);
    let kept: Vec<_> = r
        .iter()
        .filter(|e| e.content_type == ContentType::DeleteManifest)
        .map(|e| e.format_version)
        .collect();
    assert_eq!(kept, [3], "{:?}", shape(&r));
    let want: Planned = [
        (
            path("d1"),
            [("mem://data/pos1.parquet".to_string(), None)].into(),
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
