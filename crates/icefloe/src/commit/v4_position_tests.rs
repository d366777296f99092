//! Row deltas and deletes given the tree positions their writer's plan found
//! (`ScanFile::tree_position`, `SnapshotProducer::data_file_position`): the commit reads
//! the one named leaf entry instead of searching the leaves, ends in the same table state
//! as the search, and falls back to the search when a position is stale.
//! A child of `v4_tests`, whose helpers it uses.

use std::collections::HashMap;

use super::*;
use crate::commit::test_catalog::Faults;
use crate::manifest::v4::leaf_block::{
    block_of, entries_in_prefix, fetch_prefix, leaf_blocks, read_leaf_entries_in_block,
};
use crate::manifest::v4::tree::{read_leaf, read_leaf_entries, LeafBlock, TreePosition};

/// The positions a plan of the table's current snapshot gives its data files.
pub(super) fn plan_positions(
    catalog: &Arc<MemoryCatalog>,
    t: &TableState,
) -> HashMap<String, TreePosition> {
    let plan = TableScan::new(t.metadata.clone(), catalog.io())
        .plan_files()
        .unwrap();
    plan.tasks
        .iter()
        .filter_map(|task| {
            let f = &task.file;
            f.tree_position
                .clone()
                .map(|p| (f.file.file_path.clone(), p))
        })
        .collect()
}

/// `p` given the positions of every data file of the catalog's current snapshot, as a
/// writer that scanned the table first would (positions of files it does not change are
/// ignored by the commit).
pub(super) fn with_positions(
    catalog: &Arc<MemoryCatalog>,
    mut p: SnapshotProducer,
) -> SnapshotProducer {
    let t = catalog.load_table(&ident()).unwrap();
    for (path, pos) in plan_positions(catalog, &t) {
        p.data_file_position(path, pos);
    }
    p
}

/// A root's entries in a form twin tables share: snapshot ids (random per table) only as
/// present or not, leaves without their (unique) locations and sizes.
pub(super) fn normalized(entries: &[TrackedFile]) -> Vec<String> {
    entries
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.tracking.snapshot_id = e.tracking.snapshot_id.map(|_| 0);
            e.tracking.dv_snapshot_id = e.tracking.dv_snapshot_id.map(|_| 0);
            if e.content_type.is_manifest() {
                e.location = "leaf".to_string();
                e.file_size_in_bytes = 0;
            }
            format!("{e:?}")
        })
        .collect()
}

/// A one-DV row delta for file `name` (`dv1`) as a merge-on-read writer commits it: given
/// the file's plan position, and validated as the Python and Spark writers validate a
/// merge-on-read delete (nothing is removed, so the live files need not be read).
fn positioned_dv_delta(name: &str, positions: &HashMap<String, TreePosition>) -> SnapshotProducer {
    let target = path(name);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("dv1", name, 0, 4, 2));
    p.data_file_position(target.clone(), positions[&target].clone());
    let v = p.validation_mut();
    v.referenced_data_files = vec![target];
    v.validate_deleted_files = true;
    v.no_conflicting_delete_files = true;
    p
}

fn leaf_reads(reads: &[String], leaves: &[String]) -> Vec<String> {
    reads
        .iter()
        .filter(|r| leaves.contains(r))
        .cloned()
        .collect()
}

/// Twin v4 tables of `leaves` leaves, each of `per_leaf` files (names `l<i>f<j>`, enough
/// files per leaf for several Avro blocks when `per_leaf` is a few hundred).
fn twins(per_leaf: usize, leaves: usize) -> [Arc<MemoryCatalog>; 2] {
    let make = || {
        let c = MemoryCatalog::new();
        create(&c, 4);
        for l in 0..leaves {
            set_property(&c, super::super::snapshot::ROOT_MAX_FILE_ENTRIES, "0");
            let files = (0..per_leaf)
                .map(|j| {
                    let n = l * per_leaf + j;
                    ids(&format!("l{l}f{j}"), (n % 3) as i32, 10, n)
                })
                .collect();
            append(&c, files);
        }
        set_property(&c, super::super::snapshot::ROOT_MAX_FILE_ENTRIES, "100");
        c
    };
    [make(), make()]
}

/// How many Avro blocks the file at `location` has.
fn blocks(c: &Arc<MemoryCatalog>, location: &str) -> usize {
    let bytes = c.io().read(location).unwrap();
    let container = crate::manifest::avro::Container::open(&bytes).unwrap();
    let mut n = 0;
    container
        .for_each_block(|_, _| {
            n += 1;
            Ok(())
        })
        .unwrap();
    n
}

fn leaf_locations(c: &Arc<MemoryCatalog>) -> Vec<String> {
    let t = c.load_table(&ident()).unwrap();
    root(c, &t)
        .into_iter()
        .filter(|e| e.content_type.is_manifest())
        .map(|e| e.location)
        .collect()
}

#[test]
fn a_leaf_entry_read_by_its_ordinal_is_the_entry_read_whole() {
    // v4 leaves of 2000 entries with stats span several 64 KB Avro blocks
    let [c, _] = twins(2000, 2);
    let t = c.load_table(&ident()).unwrap();
    let p = V4Layout::for_table(&t.metadata).unwrap();
    let io = c.io();
    for leaf in root(&c, &t) {
        let n = blocks(&c, &leaf.location);
        assert!(n > 2, "{n} blocks");
        let whole = read_leaf(io.as_ref(), &p, &leaf).unwrap();
        let ordinals: Vec<usize> = vec![0, 1, 777, 1500, 1998, 1999, 2000, 5000];
        let some = read_leaf_entries(io.as_ref(), &p, &leaf, &ordinals).unwrap();
        let got: Vec<String> = some.iter().map(|i| format!("{i:?}")).collect();
        let want: Vec<String> = whole
            .iter()
            .filter(|i| ordinals.contains(&i.ordinal))
            .map(|i| format!("{i:?}"))
            .collect();
        assert_eq!(got.len(), 6, "ordinals past the end have no entry");
        assert_eq!(got, want);
    }
}

#[test]
fn an_upgraded_tables_v3_leaf_entry_by_ordinal_keeps_its_inherited_row_id() {
    // a v3 manifest of 2000 files (several blocks), whose entries inherit first row ids
    let c = MemoryCatalog::new();
    create(&c, 3);
    let files: Vec<DataFile> = (0..2000).map(|n| ids(&format!("f{n}"), 1, 7, n)).collect();
    append(&c, files);
    set_property(&c, "format-version", "4");
    let t = append(&c, vec![data("new", 1, 1)]);
    let p = V4Layout::for_table(&t.metadata).unwrap();
    let io = c.io();
    let leaf = root(&c, &t)
        .into_iter()
        .find(|e| e.content_type.is_manifest())
        .unwrap();
    assert_eq!(leaf.format_version, 3);
    let n = blocks(&c, &leaf.location);
    assert!(n > 2, "{n} blocks");
    let whole = read_leaf(io.as_ref(), &p, &leaf).unwrap();
    let some = read_leaf_entries(io.as_ref(), &p, &leaf, &[0, 1333, 1999]).unwrap();
    assert_eq!(some.len(), 3);
    for item in &some {
        let w = whole.iter().find(|w| w.ordinal == item.ordinal).unwrap();
        assert_eq!(item.entry, w.entry);
        assert_eq!(
            item.entry.data_file.first_row_id,
            Some(7 * item.ordinal as i64)
        );
    }
}

#[test]
fn a_row_delta_given_its_plans_position_reads_only_that_leaf_and_ends_as_the_search() {
    let [a, b] = twins(200, 4);
    let t = a.load_table(&ident()).unwrap();
    let positions = plan_positions(&a, &t);
    // a file of the last leaf (the search reads the leaves in root order)
    let target = path("l3f123");
    let Some(TreePosition::Leaf {
        manifest,
        ordinal,
        block,
    }) = positions.get(&target).cloned()
    else {
        panic!("no leaf position for {target}: {positions:?}");
    };
    assert_eq!(ordinal, 123);
    assert!(block.is_some(), "the plan gives the entry's block");
    let leaves = leaf_locations(&a);
    assert_eq!(leaves.len(), 4);
    assert_eq!(*manifest, *leaves[3]);

    let make = || {
        let mut p = SnapshotProducer::row_delta();
        p.add_delete_file(None, dv("dv1", "l3f123", 0, 4, 2));
        p
    };
    let p = positioned_dv_delta("l3f123", &positions);
    a.io.take_reads();
    let ta = commit(&a, p).unwrap();
    let read = leaf_reads(&a.io.take_reads(), &leaves);
    assert_eq!(read, [leaves[3].clone()], "leaves read with the position");

    b.io.take_reads();
    let tb = commit(&b, make()).unwrap();
    let read_b = leaf_reads(&b.io.take_reads(), &leaf_locations(&b));
    assert!(
        read_b.len() >= 4,
        "the search reads every leaf up to the file's: {read_b:?}"
    );

    assert_eq!(normalized(&root(&a, &ta)), normalized(&root(&b, &tb)));
    assert_eq!(planned(&a, &ta), planned(&b, &tb));
    let r = root(&a, &ta);
    assert_eq!(leaf_dv(&r[3]), [123]);
    assert_eq!(shape(&r).last(), Some(&s(Modified, Data, "l3f123")));

    // a delete by path given the position: the same, one leaf read
    let target = path("l1f7");
    let mut p = SnapshotProducer::delete_files();
    p.delete_path(target.clone());
    p.data_file_position(target.clone(), positions[&target].clone());
    a.io.take_reads();
    let ta = commit(&a, p).unwrap();
    let read = leaf_reads(&a.io.take_reads(), &leaves);
    assert_eq!(read, [leaves[1].clone()]);
    let tb = delete(&b, &["l1f7"]);
    assert_eq!(normalized(&root(&a, &ta)), normalized(&root(&b, &tb)));
    assert_eq!(planned(&a, &ta), planned(&b, &tb));

    // validated over the whole history (no starting snapshot): the check for DVs added
    // concurrently reads the history's roots, not the leaves their deletes changed
    let target = path("l2f5");
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("dv2", "l2f5", 0, 4, 2));
    p.data_file_position(target.clone(), positions[&target].clone());
    a.io.take_reads();
    let mut tx = Transaction::load(a.clone(), ident()).unwrap();
    tx.add_change(Box::new(p));
    tx.commit().unwrap();
    let read = leaf_reads(&a.io.take_reads(), &leaves);
    assert_eq!(read, [leaves[2].clone()]);
}

#[test]
fn a_row_delta_on_an_upgraded_table_given_positions_ends_as_the_search() {
    // v3 manifests as leaves: the restated entry keeps its inherited first row id
    let make = || {
        let c = MemoryCatalog::new();
        create(&c, 3);
        for m in 0..3 {
            let files: Vec<DataFile> = (0..300)
                .map(|n| ids(&format!("m{m}f{n}"), 1, 5, m * 300 + n))
                .collect();
            append(&c, files);
        }
        set_property(&c, "format-version", "4");
        append(&c, vec![data("new", 1, 1)]);
        c
    };
    let (a, b) = (make(), make());
    let t = a.load_table(&ident()).unwrap();
    let positions = plan_positions(&a, &t);
    let leaves = leaf_locations(&a);
    let target = path("m1f250");
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("dv1", "m1f250", 1, 4, 2));
    let q = p.clone_unstarted();
    p.data_file_position(target.clone(), positions[&target].clone());
    a.io.take_reads();
    let ta = commit(&a, p).unwrap();
    assert_eq!(leaf_reads(&a.io.take_reads(), &leaves).len(), 1);
    let tb = commit(&b, q).unwrap();
    let (ra, rb) = (root(&a, &ta), root(&b, &tb));
    assert_eq!(normalized(&ra), normalized(&rb));
    let restated = ra.iter().find(|e| e.location == target).unwrap();
    assert_eq!(restated.tracking.status, Modified);
    assert!(restated.tracking.first_row_id.is_some());
    assert_eq!(planned(&a, &ta), planned(&b, &tb));
}

/// A row delta replacing a DV (`table.delete` on a file that already has one: the old
/// DV removed, validated live, the merged one added).
fn replacing_dv(name: &str, old: &str, new: &str) -> SnapshotProducer {
    let mut p = SnapshotProducer::row_delta();
    p.remove_delete_file(format!("mem://warehouse/db/t/data/{old}.puffin"), Some(4));
    p.add_delete_file(None, dv(new, name, 0, 4, 3));
    let v = p.validation_mut();
    v.referenced_data_files = vec![path(name)];
    v.validate_deleted_files = true;
    p
}

#[test]
fn a_row_delta_replacing_a_dv_stops_reading_leaves_once_the_dv_is_found() {
    let [a, b] = twins(200, 4);
    let t = a.load_table(&ident()).unwrap();
    let positions = plan_positions(&a, &t);
    for c in [&a, &b] {
        commit(c, positioned_dv_delta("l3f123", &positions)).unwrap();
    }
    let leaves = leaf_locations(&a);

    // the DV'd file is restated in the root: found there, no leaf is read, on either twin
    // (the DV to remove is found on the entry, so nothing is left to search for)
    for c in [&a, &b] {
        c.io.take_reads();
        commit(c, replacing_dv("l3f123", "dv1", "dv2")).unwrap();
        let read = leaf_reads(&c.io.take_reads(), &leaf_locations(c));
        assert_eq!(read, Vec::<String>::new(), "leaves read");
    }

    // flushed into a leaf of its own (a root of no files): given its position, only that
    // leaf is read; searched, every leaf up to it (it is the last)
    for c in [&a, &b] {
        set_property(c, super::super::snapshot::ROOT_MAX_FILE_ENTRIES, "0");
        append(c, vec![data("flush", 1, 10)]);
        set_property(c, super::super::snapshot::ROOT_MAX_FILE_ENTRIES, "100");
    }
    let t = a.load_table(&ident()).unwrap();
    let positions = plan_positions(&a, &t);
    let Some(TreePosition::Leaf { manifest, .. }) = positions.get(&path("l3f123")).cloned() else {
        panic!("l3f123 is not in a leaf: {positions:?}");
    };
    assert!(!leaves.contains(&manifest.to_string()), "a new leaf");
    let mut p = replacing_dv("l3f123", "dv2", "dv3");
    p.data_file_position(path("l3f123"), positions[&path("l3f123")].clone());
    a.io.take_reads();
    let ta = commit(&a, p).unwrap();
    assert_eq!(
        leaf_reads(&a.io.take_reads(), &leaf_locations(&a)),
        [manifest.to_string()]
    );
    let tb = commit(&b, replacing_dv("l3f123", "dv2", "dv3")).unwrap();
    assert_eq!(normalized(&root(&a, &ta)), normalized(&root(&b, &tb)));
    assert_eq!(planned(&a, &ta), planned(&b, &tb));
    let want: BTreeSet<(String, Option<i64>)> =
        [("mem://warehouse/db/t/data/dv3.puffin".to_string(), Some(4))].into();
    let dvs_of = |p: &Planned| {
        p.iter()
            .find(|(f, _)| *f == path("l3f123"))
            .map(|(_, d)| d.clone())
    };
    assert_eq!(dvs_of(&planned(&a, &ta)), Some(want));

    // a DV that is no longer live (replaced above): Java's "Missing required files to
    // delete", after a search of the whole tree, positioned or not
    for c in [&a, &b] {
        let e = commit(c, replacing_dv("l3f123", "dv2", "dv4")).unwrap_err();
        assert!(matches!(e, Error::ValidationFailed { .. }), "{e:?}");
        assert!(
            e.to_string()
                .contains("Missing required files to delete: mem://warehouse/db/t/data/dv2.puffin"),
            "{e}"
        );
    }
}

#[test]
fn a_rewrite_or_row_delta_naming_a_removed_files_dv_finds_it_and_misses_a_missing_one() {
    let [a, b] = twins(20, 2);
    let positions = plan_positions(&a, &a.load_table(&ident()).unwrap());
    for c in [&a, &b] {
        // l0f4 gets a DV and is flushed into a new leaf with it (a root of no files);
        // then l1f3 gets one, restated in the root
        let mut p = SnapshotProducer::row_delta();
        p.add_delete_file(None, dv("dv5", "l0f4", 0, 4, 1));
        commit(c, p).unwrap();
        set_property(c, super::super::snapshot::ROOT_MAX_FILE_ENTRIES, "0");
        append(c, vec![data("flush", 1, 10)]);
        set_property(c, super::super::snapshot::ROOT_MAX_FILE_ENTRIES, "100");
        commit(c, positioned_dv_delta("l1f3", &positions)).unwrap();
    }
    let r = root(&a, &a.load_table(&ident()).unwrap());
    assert_eq!(shape(&r).last(), Some(&s(Modified, Data, "l1f3")));
    assert!(
        !r.iter().any(|e| e.location == path("l0f4")),
        "l0f4 is in a leaf"
    );
    let (root_held, leaf_held) = (path("l1f3"), path("l0f4"));

    // a rewrite of l1f3 (root) that names its DV: both found, nothing missing
    let mut p = SnapshotProducer::rewrite_files();
    p.delete_path(root_held.clone());
    p.remove_delete_file("mem://warehouse/db/t/data/dv1.puffin", Some(4));
    p.add_file(data("l1f3-new", 0, 8));
    let t = commit(&a, p).unwrap();
    let planned_a = planned(&a, &t);
    assert!(
        !planned_a.iter().any(|(f, _)| *f == root_held),
        "{planned_a:?}"
    );
    // a validated row delta removing l0f4 and its DV: the same
    let mut p = SnapshotProducer::row_delta();
    p.delete_path(leaf_held.clone());
    p.remove_delete_file("mem://warehouse/db/t/data/dv5.puffin", Some(4));
    p.validation_mut().validate_deleted_files = true;
    let t = commit(&a, p).unwrap();
    assert!(!planned(&a, &t).iter().any(|(f, _)| *f == leaf_held));

    // a DV that is not there (an offset no DV has): Java's message, on both kinds
    let mut p = SnapshotProducer::rewrite_files();
    p.delete_path(path("l1f5"));
    p.remove_delete_file("mem://warehouse/db/t/data/dv1.puffin", Some(99));
    p.add_file(data("l1f5-new", 0, 8));
    let e = commit(&b, p).unwrap_err();
    assert!(matches!(e, Error::ValidationFailed { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "validation failed: Missing required files to delete: mem://warehouse/db/t/data/dv1.puffin"
    );
    let mut p = SnapshotProducer::row_delta();
    p.delete_path(path("nowhere"));
    p.validation_mut().validate_deleted_files = true;
    let e = commit(&b, p).unwrap_err();
    assert!(
        e.to_string().contains(
            "Missing required files to delete: mem://warehouse/db/t/data/nowhere.parquet"
        ),
        "{e}"
    );
    // a rewrite naming a data file that is not there: the same message (it was lower-case)
    let mut p = SnapshotProducer::rewrite_files();
    p.delete_path(path("nowhere"));
    p.add_file(data("x", 0, 1));
    let e = commit(&b, p).unwrap_err();
    assert!(
        e.to_string().contains(
            "Missing required files to delete: mem://warehouse/db/t/data/nowhere.parquet"
        ),
        "{e}"
    );
}

#[test]
fn a_stale_position_falls_back_to_the_search_or_fails_as_it_would() {
    let [a, b] = twins(5, 3);
    let t = a.load_table(&ident()).unwrap();
    let positions = plan_positions(&a, &t);
    let dv_for = |name: &str, puffin: &str| {
        let mut p = SnapshotProducer::row_delta();
        p.add_delete_file(None, dv(puffin, name, 0, 4, 2));
        p
    };

    // 1. the wrong file at the position: another file's ordinal is not taken
    let mut p = dv_for("l2f1", "dv1");
    p.data_file_position(path("l2f1"), positions[&path("l2f3")].clone());
    let mut tx = Transaction::load(a.clone(), ident()).unwrap();
    tx.add_change(Box::new(p));
    let ta = tx.commit().unwrap();
    let tb = commit(&b, dv_for("l2f1", "dv1")).unwrap();
    assert_eq!(normalized(&root(&a, &ta)), normalized(&root(&b, &tb)));
    assert_eq!(planned(&a, &ta), planned(&b, &tb));

    // 2. the position already deleted: a concurrent delete removed the file, so the DV's
    //    file is not live, the same ValidationFailed as without a position
    let mut p = dv_for("l0f2", "dv2");
    p.data_file_position(path("l0f2"), positions[&path("l0f2")].clone());
    delete(&a, &["l0f2"]);
    delete(&b, &["l0f2"]);
    let e = commit(&a, p).unwrap_err();
    assert!(matches!(e, Error::ValidationFailed { .. }), "{e:?}");
    assert!(e.to_string().contains("not live"), "{e}");
    let e = commit(&b, dv_for("l0f2", "dv2")).unwrap_err();
    assert!(matches!(e, Error::ValidationFailed { .. }), "{e:?}");

    // 3. the leaf replaced by a compaction committed between the plan and the commit
    //    (the row delta's first attempt loses the race and retries on the new base)
    let t = a.load_table(&ident()).unwrap();
    let positions = plan_positions(&a, &t);
    let mut p = dv_for("l1f4", "dv3");
    p.data_file_position(path("l1f4"), positions[&path("l1f4")].clone());
    let mut tx = Transaction::load(a.clone(), ident()).unwrap();
    tx.add_change(Box::new(p));
    commit(&a, SnapshotProducer::rewrite_manifests()).unwrap();
    assert!(!leaf_locations(&a).iter().any(|l| {
        matches!(&positions[&path("l1f4")], TreePosition::Leaf { manifest, .. } if **manifest == **l)
    }));
    let ta = tx.commit().unwrap();
    commit(&b, SnapshotProducer::rewrite_manifests()).unwrap();
    let tb = commit(&b, dv_for("l1f4", "dv3")).unwrap();
    assert_eq!(normalized(&root(&a, &ta)), normalized(&root(&b, &tb)));
    assert_eq!(planned(&a, &ta), planned(&b, &tb));
    let want_dv = ("mem://warehouse/db/t/data/dv3.puffin".to_string(), Some(4));
    assert!(planned(&a, &ta)
        .iter()
        .any(|(f, d)| *f == path("l1f4") && d.contains(&want_dv)));

    // 4. a position past the leaf's entries, or in a leaf the root never had
    let mut p = dv_for("l2f2", "dv4");
    p.data_file_position(
        path("l2f2"),
        TreePosition::Leaf {
            manifest: Arc::from("mem://nowhere/leaf.avro"),
            ordinal: 2,
            block: Some(LeafBlock {
                offset: 10,
                length: 100,
            }),
        },
    );
    let ta = commit(&a, p).unwrap();
    let tb = commit(&b, dv_for("l2f2", "dv4")).unwrap();
    assert_eq!(planned(&a, &ta), planned(&b, &tb));
}

#[test]
fn positions_are_taken_only_when_valid() {
    let [a, _] = twins(5, 2);
    let t = a.load_table(&ident()).unwrap();
    let positions = plan_positions(&a, &t);
    // applied to the current state (not committed), as an attempt of a transaction
    let apply = |mut p: SnapshotProducer| -> usize {
        use super::super::transaction::PendingChange;
        let state = a.load_table(&ident()).unwrap();
        let mut b = super::super::builder::MetadataBuilder::from_state(&state);
        p.apply(a.io().as_ref(), &mut b).unwrap();
        p.clean_up(a.io().as_ref(), false);
        p.positions_taken()
    };
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("dv1", "l1f3", 0, 4, 2));
    p.data_file_position(path("l1f3"), positions[&path("l1f3")].clone());
    assert_eq!(apply(p), 1);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("dv1", "l1f3", 0, 4, 2));
    p.data_file_position(path("l1f3"), positions[&path("l1f2")].clone());
    assert_eq!(apply(p), 0, "another file's position");
}

/// The block a plan gives for the file at `name`.
fn block_for(positions: &HashMap<String, TreePosition>, name: &str) -> LeafBlock {
    match &positions[&path(name)] {
        TreePosition::Leaf { block: Some(b), .. } => *b,
        other => panic!("no block for {name}: {other:?}"),
    }
}

#[test]
fn a_leaf_entry_read_by_its_block_is_the_entry_read_whole_from_a_prefix() {
    // v4 leaves of 2000 entries (several blocks), and an upgraded table's v3 manifest of
    // 2000 entries whose entries inherit first row ids
    let [c, _] = twins(2000, 2);
    let v3 = MemoryCatalog::new();
    create(&v3, 3);
    append(
        &v3,
        (0..2000).map(|n| ids(&format!("f{n}"), 1, 7, n)).collect(),
    );
    set_property(&v3, "format-version", "4");
    append(&v3, vec![data("new", 1, 1)]);
    for cat in [&c, &v3] {
        let t = cat.load_table(&ident()).unwrap();
        let p = V4Layout::for_table(&t.metadata).unwrap();
        let io = cat.io();
        for leaf in root(cat, &t)
            .into_iter()
            .filter(|e| e.content_type.is_manifest())
        {
            let bytes = io.read(&leaf.location).unwrap();
            let blocks = leaf_blocks(&bytes).unwrap();
            assert!(blocks.len() > 2, "{} blocks", blocks.len());
            let whole = read_leaf(io.as_ref(), &p, &leaf).unwrap();
            for ordinal in [0usize, 1, 777, 1500, 1999] {
                let block = block_of(&blocks, ordinal as i64).unwrap();
                let prefix = fetch_prefix(io.as_ref(), &leaf.location, block).unwrap();
                assert_eq!(prefix.len() as u64, block.offset + block.length);
                if ordinal < 1500 {
                    assert!(prefix.len() < bytes.len(), "a prefix, not the whole leaf");
                }
                let got = entries_in_prefix(&prefix, &p, &leaf, &[ordinal], block)
                    .unwrap()
                    .expect("the block checks out");
                let want: Vec<_> = whole.iter().filter(|i| i.ordinal == ordinal).collect();
                assert_eq!(format!("{got:?}"), format!("{want:?}"));
                if leaf.format_version < 4 {
                    assert_eq!(
                        got[0].entry.data_file.first_row_id,
                        Some(7 * ordinal as i64)
                    );
                }
            }
            // an ordinal in the block after the span's: not in the prefix, so not taken
            let block = block_of(&blocks, 0).unwrap();
            assert!(
                read_leaf_entries_in_block(io.as_ref(), &p, &leaf, &[1999], block)
                    .unwrap()
                    .is_none()
            );
        }
    }
}

#[test]
fn a_wrong_or_corrupt_block_is_not_taken_and_the_whole_read_names_the_leaf() {
    let [c, _] = twins(2000, 1);
    let t = c.load_table(&ident()).unwrap();
    let p = V4Layout::for_table(&t.metadata).unwrap();
    let io = c.io();
    let leaf = root(&c, &t)
        .into_iter()
        .find(|e| e.content_type.is_manifest())
        .unwrap();
    let bytes = io.read(&leaf.location).unwrap();
    let blocks = leaf_blocks(&bytes).unwrap();
    let right = block_of(&blocks, 1500).unwrap();
    let size = bytes.len() as u64;
    let wrong = [
        // shifted into the block, cut short, running into the next block
        LeafBlock {
            offset: right.offset + 1,
            ..right
        },
        LeafBlock {
            length: right.length - 1,
            ..right
        },
        LeafBlock {
            length: right.length + 1,
            ..right
        },
        // past the end of the leaf, overflowing, empty, inside the header
        LeafBlock {
            offset: size,
            length: 100,
        },
        LeafBlock {
            offset: u64::MAX,
            length: 2,
        },
        LeafBlock {
            offset: 0,
            length: 0,
        },
        LeafBlock {
            offset: 4,
            length: 10,
        },
    ];
    for block in wrong {
        let got = read_leaf_entries_in_block(io.as_ref(), &p, &leaf, &[1500], block).unwrap();
        assert!(got.is_none(), "{block:?} was taken: {got:?}");
    }
    // a corrupt block (its sync marker changed): not taken from the prefix, and reading
    // the leaf whole is the typed error naming it
    let mut bad = bytes.clone();
    let sync_at = (right.offset + right.length - 1) as usize;
    bad[sync_at] ^= 0xff;
    let got = entries_in_prefix(
        &bad[..(right.offset + right.length) as usize],
        &p,
        &leaf,
        &[1500],
        right,
    )
    .unwrap();
    assert!(got.is_none());
    let corrupt_leaf = "mem://metadata/corrupt-leaf.avro";
    io.write_new(corrupt_leaf, &bad).unwrap();
    let mut moved = leaf.clone();
    moved.location = corrupt_leaf.to_string();
    assert!(
        read_leaf_entries_in_block(io.as_ref(), &p, &moved, &[1500], right)
            .unwrap()
            .is_none()
    );
    let e = read_leaf_entries(io.as_ref(), &p, &moved, &[1500]).unwrap_err();
    assert!(e.to_string().contains(corrupt_leaf), "{e}");
    assert!(e.to_string().contains("sync marker"), "{e}");
}

#[test]
fn a_commit_given_a_wrong_block_reads_the_leaf_whole_and_ends_as_the_search() {
    let [a, b] = twins(300, 2);
    let t = a.load_table(&ident()).unwrap();
    let positions = plan_positions(&a, &t);
    let leaves = leaf_locations(&a);
    let make = |name: &str, puffin: &str| {
        let mut p = SnapshotProducer::row_delta();
        p.add_delete_file(None, dv(puffin, name, 0, 4, 2));
        p
    };
    // the plan's block: the leaf is read once (up to the block's end)
    let mut p = make("l1f250", "dv1");
    p.data_file_position(path("l1f250"), positions[&path("l1f250")].clone());
    a.io.take_reads();
    let ta = commit(&a, p).unwrap();
    assert_eq!(leaf_reads(&a.io.take_reads(), &leaves), [leaves[1].clone()]);
    let tb = commit(&b, make("l1f250", "dv1")).unwrap();
    assert_eq!(normalized(&root(&a, &ta)), normalized(&root(&b, &tb)));

    // a block span off by one: the ranged read does not check out, the leaf is read whole
    // (twice in the log), and the commit ends as the search's
    let right = block_for(&positions, "l0f100");
    let TreePosition::Leaf {
        manifest, ordinal, ..
    } = positions[&path("l0f100")].clone()
    else {
        unreachable!()
    };
    let mut p = make("l0f100", "dv2");
    p.data_file_position(
        path("l0f100"),
        TreePosition::Leaf {
            manifest,
            ordinal,
            block: Some(LeafBlock {
                offset: right.offset + 1,
                ..right
            }),
        },
    );
    a.io.take_reads();
    let ta = commit(&a, p).unwrap();
    assert_eq!(
        leaf_reads(&a.io.take_reads(), &leaves),
        [leaves[0].clone(), leaves[0].clone()]
    );
    let tb = commit(&b, make("l0f100", "dv2")).unwrap();
    assert_eq!(normalized(&root(&a, &ta)), normalized(&root(&b, &tb)));
    assert_eq!(planned(&a, &ta), planned(&b, &tb));
}

/// A row delta given its plan's position reads the leaf's prefix while it reads the
/// parent's root (on an object store each is a round trip), and still reads each once and
/// ends as the search does; a commit naming no removal or DV reads no leaf ahead.
#[test]
fn the_positions_leaf_prefix_is_read_while_the_root_is() {
    use std::sync::atomic::Ordering;
    let [a, b] = twins(200, 4);
    let t = a.load_table(&ident()).unwrap();
    let positions = plan_positions(&a, &t);
    let leaves = leaf_locations(&a);
    let target = path("l2f150");
    let make = || {
        let mut p = SnapshotProducer::row_delta();
        p.add_delete_file(None, dv("dv1", "l2f150", 0, 4, 2));
        p
    };
    let p = positioned_dv_delta("l2f150", &positions);
    a.set_faults(Faults {
        read_delay: Some(std::time::Duration::from_millis(150)),
        ..Faults::default()
    });
    a.io.take_reads();
    a.io.max_reads_in_flight.store(0, Ordering::SeqCst);
    let ta = commit(&a, p).unwrap();
    assert_eq!(
        a.io.max_reads_in_flight.load(Ordering::SeqCst),
        2,
        "the root and the leaf prefix are read at once"
    );
    let reads = a.io.take_reads();
    assert_eq!(leaf_reads(&reads, &leaves), [leaves[2].clone()]);
    let roots = reads.iter().filter(|r| r.contains("/root-")).count();
    assert_eq!(roots, 1, "the parent's root, once: {reads:?}");
    let tb = commit(&b, make()).unwrap();
    assert_eq!(normalized(&root(&a, &ta)), normalized(&root(&b, &tb)));
    assert_eq!(planned(&a, &ta), planned(&b, &tb));

    // an append given positions (nothing to find in a leaf): no leaf is read
    let mut p = SnapshotProducer::fast_append();
    p.add_file(ids("new", 0, 10, 9_000));
    p.data_file_position(target.clone(), positions[&target].clone());
    a.io.take_reads();
    a.io.max_reads_in_flight.store(0, Ordering::SeqCst);
    commit(&a, p).unwrap();
    assert_eq!(
        leaf_reads(&a.io.take_reads(), &leaves),
        Vec::<String>::new()
    );
    assert_eq!(a.io.max_reads_in_flight.load(Ordering::SeqCst), 1);
}

/// A packed plan (the connector's) gives the positions a materialised plan gives its
/// files: every data file of the leaves, with its leaf, ordinal and block; none on v3.
#[test]
fn a_packed_plan_gives_the_plans_tree_positions() {
    let [c, _] = twins(300, 3);
    let t = c.load_table(&ident()).unwrap();
    let want = plan_positions(&c, &t);
    assert_eq!(want.len(), 900);
    assert!(want
        .values()
        .all(|p| matches!(p, TreePosition::Leaf { block: Some(_), .. })));
    let scan = TableScan::new(t.metadata.clone(), c.io());
    let packed =
        crate::scan::task_groups::plan_packed(&scan, &crate::scan::SplitOptions::default())
            .unwrap();
    let got: HashMap<String, TreePosition> = packed.tree_positions().unwrap().into_iter().collect();
    assert_eq!(got, want);
    let v3 = MemoryCatalog::new();
    create(&v3, 3);
    append(
        &v3,
        (0..5).map(|n| ids(&format!("f{n}"), 1, 7, n)).collect(),
    );
    let t3 = v3.load_table(&ident()).unwrap();
    let scan3 = TableScan::new(t3.metadata.clone(), v3.io());
    let packed3 =
        crate::scan::task_groups::plan_packed(&scan3, &crate::scan::SplitOptions::default())
            .unwrap();
    assert!(packed3.tree_positions().unwrap().is_empty());
}

/// A delete by row filter alone reads only the data leaves whose aggregates do not rule
/// the filter out: with every other leaf unreadable it still commits, where a removal by
/// path without a position, which searches the leaves in root order, fails on them.
#[test]
fn a_delete_by_row_filter_reads_only_the_leaves_it_may_touch() {
    let [c, _] = twins(10, 3);
    let t = c.load_table(&ident()).unwrap();
    let positions = plan_positions(&c, &t);
    let leaves: Vec<String> = root(&c, &t)
        .into_iter()
        .filter(|e| e.content_type == ContentType::DataManifest)
        .map(|e| e.location.clone())
        .collect();
    assert_eq!(leaves.len(), 3);
    // the leaf searched last holds the files deleted; the others become unreadable
    let target = leaves.last().unwrap().clone();
    let leaf_of = |name: &str| match &positions[&path(name)] {
        TreePosition::Leaf { manifest, .. } => manifest.to_string(),
        TreePosition::Root => panic!("{name} in the root"),
    };
    let l = (0..3)
        .find(|l| leaf_of(&format!("l{l}f0")) == target)
        .unwrap();
    let io = c.io();
    for leaf in leaves.iter().filter(|x| **x != target) {
        io.delete(leaf).unwrap();
        io.write_new(leaf, b"not a manifest").unwrap();
    }
    // leaf l holds files n = 10 l .. 10 l + 9, ids 10 n .. 10 n + 9
    let lo = (l as i64) * 100;
    let mut p = SnapshotProducer::delete_files();
    p.delete_by_row_filter(Expression::and(
        Expression::compare(ExprOp::GtEq, "id", Datum::Long(lo)),
        Expression::compare(ExprOp::Lt, "id", Datum::Long(lo + 100)),
    ));
    let after = commit(&c, p).unwrap();
    let summary = after
        .metadata
        .current_snapshot()
        .unwrap()
        .summary
        .clone()
        .unwrap();
    assert_eq!(summary.get("deleted-data-files"), Some("10"));

    // the same removal by path, searching: meets an unreadable leaf
    let mut p = SnapshotProducer::delete_files();
    p.delete_path(path(&format!("l{}f0", (l + 1) % 3)));
    let err = commit(&c, p).unwrap_err().to_string();
    assert!(err.contains("Avro"), "{err}");
}

/// On an upgraded table, whose leaves are v3 manifests without aggregate metrics, a delete
/// by a row filter on the partition column skips the leaves their partition summaries rule
/// out, as planning does (they are made unreadable; the delete still succeeds).
#[test]
fn a_delete_by_row_filter_skips_v3_leaves_by_their_partition_summaries() {
    let c = MemoryCatalog::new();
    create(&c, 3);
    for cat in 0..3 {
        append(
            &c,
            vec![
                data(&format!("c{cat}a"), cat, 5),
                data(&format!("c{cat}b"), cat, 5),
            ],
        );
    }
    set_property(&c, "format-version", "4");
    // the first v4 commit turns the list's three manifests into leaves
    append(&c, vec![data("root", 7, 5)]);
    let t = c.load_table(&ident()).unwrap();
    let leaves: Vec<TrackedFile> = root(&c, &t)
        .into_iter()
        .filter(|e| e.content_type == ContentType::DataManifest)
        .collect();
    assert_eq!(leaves.len(), 3);
    assert!(
        leaves
            .iter()
            .all(|l| l.format_version == 3 && l.metrics.is_empty()),
        "v3 leaves carry no aggregates"
    );
    let io = c.io();
    let mut kept = None;
    for leaf in &leaves {
        let holds_cat_1 = read_leaf(
            io.as_ref(),
            &V4Layout::for_table(&t.metadata).unwrap(),
            leaf,
        )
        .unwrap()
        .iter()
        .any(|item| item.entry.data_file.file_path == path("c1a"));
        if holds_cat_1 {
            kept = Some(leaf.location.clone());
        } else {
            io.delete(&leaf.location).unwrap();
            io.write_new(&leaf.location, b"not a manifest").unwrap();
        }
    }
    assert!(kept.is_some());
    let mut p = SnapshotProducer::delete_files();
    p.delete_by_row_filter(Expression::compare(ExprOp::Eq, "cat", Datum::Int(1)));
    let after = commit(&c, p).unwrap();
    let summary = after
        .metadata
        .current_snapshot()
        .unwrap()
        .summary
        .clone()
        .unwrap();
    assert_eq!(summary.get("deleted-data-files"), Some("2"));
    assert_eq!(summary.get("deleted-records"), Some("10"));
    assert_eq!(summary.get("total-data-files"), Some("5"));
}
