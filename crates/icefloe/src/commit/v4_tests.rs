//! Format v4 commits and planning against the in-memory test catalog: the seed's
//! examples as golden roots (each test states the root entries it expects), bad trees,
//! the v3 → v4 upgrade, and a model-based equivalence of twin v3 and v4 tables.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::snapshot::SnapshotProducer;
use super::test_catalog::MemoryCatalog;
use super::transaction::Transaction;
use crate::catalog::{Catalog, TableIdent, TableState};
use crate::error::Error;
use crate::expr::{Datum, Expression, Operation as ExprOp};
use crate::manifest::v4::tree::{read_snapshot_top, SnapshotTop};
use crate::manifest::v4::{ContentType, TrackedFile, TrackingStatus, V4Layout};
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::scan::TableScan;
use crate::spec::Literal;

use ContentType::{Data, DataManifest};

#[path = "v4_position_tests.rs"]
mod position_tests;
#[path = "v4_stats_tests.rs"]
mod stats_tests;
#[path = "v4_upgrade_tests.rs"]
mod upgrade_tests;
use stats_tests::data_ids;
use TrackingStatus::{Added, Deleted, Existing, Modified};

fn ident() -> TableIdent {
    TableIdent::parse("db.t").unwrap()
}

fn create(catalog: &Arc<MemoryCatalog>, v: i32) -> TableState {
    super::test_catalog::create_id_cat_table(catalog, &ident(), v)
}

fn path(name: &str) -> String {
    format!("mem://warehouse/db/t/data/{name}.parquet")
}

fn data(name: &str, cat: i32, rows: i64) -> DataFile {
    let mut f = DataFile::new(
        DataContentType::Data,
        path(name),
        FileFormat::Parquet,
        vec![Some(Literal::Int(cat))],
        rows,
        rows * 10,
    );
    // stats on `cat`, so that a row filter on it decides whole files
    let b = Literal::Int(cat)
        .to_bytes(&crate::spec::PrimitiveType::Int)
        .unwrap();
    f.lower_bounds = Some(vec![(2, b.clone())]);
    f.upper_bounds = Some(vec![(2, b)]);
    f.value_counts = Some(vec![(2, rows)]);
    f.null_value_counts = Some(vec![(2, 0)]);
    f
}

fn dv(puffin: &str, target: &str, cat: i32, offset: i64, rows: i64) -> DataFile {
    let mut f = DataFile::new(
        DataContentType::PositionDeletes,
        format!("mem://warehouse/db/t/data/{puffin}.puffin"),
        FileFormat::Puffin,
        vec![Some(Literal::Int(cat))],
        rows,
        1000,
    );
    f.referenced_data_file = Some(path(target));
    f.content_offset = Some(offset);
    f.content_size_in_bytes = Some(40);
    f
}

/// Commits `p`, validating (as writers do) from the snapshot it was made on.
fn commit(
    catalog: &Arc<MemoryCatalog>,
    mut p: SnapshotProducer,
) -> crate::error::Result<TableState> {
    let mut tx = Transaction::load(catalog.clone(), ident())?;
    let base = catalog.load_table(&ident())?;
    p.validation_mut().from_snapshot = base.metadata.current_snapshot().map(|s| s.snapshot_id);
    tx.add_change(Box::new(p));
    tx.commit()
}

fn append(catalog: &Arc<MemoryCatalog>, files: Vec<DataFile>) -> TableState {
    let mut p = SnapshotProducer::fast_append();
    for f in files {
        p.add_file(f);
    }
    commit(catalog, p).unwrap()
}

fn delete(catalog: &Arc<MemoryCatalog>, names: &[&str]) -> TableState {
    let mut p = SnapshotProducer::delete_files();
    for n in names {
        p.delete_path(path(n));
    }
    commit(catalog, p).unwrap()
}

fn set_property(catalog: &Arc<MemoryCatalog>, key: &str, value: &str) {
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.set_properties(vec![(key.to_string(), value.to_string())])
        .unwrap();
    tx.commit().unwrap();
}

/// The current snapshot's root entries.
fn root(catalog: &Arc<MemoryCatalog>, t: &TableState) -> Vec<TrackedFile> {
    let md = &t.metadata;
    let snap = md.current_snapshot().unwrap();
    let p = V4Layout::for_table(md).unwrap();
    match read_snapshot_top(catalog.io().as_ref(), &p, snap).unwrap() {
        SnapshotTop::Root(e) => e,
        SnapshotTop::List(_) => panic!("a manifest list, not a root"),
    }
}

/// `(status, content type, name)` of each root entry (data files by name, leaves as
/// `leaf`), the golden form the seed's figures show.
fn shape(entries: &[TrackedFile]) -> Vec<(TrackingStatus, ContentType, String)> {
    entries
        .iter()
        .map(|e| {
            let name = if e.content_type.is_manifest() {
                "leaf".to_string()
            } else {
                e.location
                    .trim_start_matches("mem://warehouse/db/t/data/")
                    .trim_end_matches(".parquet")
                    .to_string()
            };
            (e.tracking.status, e.content_type, name)
        })
        .collect()
}

fn s(status: TrackingStatus, c: ContentType, name: &str) -> (TrackingStatus, ContentType, String) {
    (status, c, name.to_string())
}

/// The manifest DV of a leaf entry, decoded.
fn leaf_dv(e: &TrackedFile) -> Vec<i64> {
    e.manifest_info
        .as_ref()
        .unwrap()
        .decode_dv(e.record_count)
        .unwrap()
        .map(|d| d.iter().collect())
        .unwrap_or_default()
}

fn deleted_positions(e: &TrackedFile) -> Vec<i64> {
    e.tracking
        .deleted_positions
        .as_ref()
        .map(|b| {
            crate::puffin::dv::DeletionVector::deserialize_vector(b)
                .unwrap()
                .iter()
                .collect()
        })
        .unwrap_or_default()
}

/// What a plan reads: each data file with its deletes (path and DV offset), sorted.
type Planned = BTreeSet<(String, BTreeSet<(String, Option<i64>)>)>;

fn planned_with(catalog: &Arc<MemoryCatalog>, t: &TableState, filter: Expression) -> Planned {
    let scan = TableScan::new(t.metadata.clone(), catalog.io()).filter(filter);
    let plan = scan.plan_files().unwrap();
    plan.tasks
        .iter()
        .map(|task| {
            (
                task.file.file.file_path.clone(),
                task.deletes
                    .iter()
                    .map(|d| (d.file.file_path.clone(), d.file.content_offset))
                    .collect(),
            )
        })
        .collect()
}

fn planned(catalog: &Arc<MemoryCatalog>, t: &TableState) -> Planned {
    planned_with(catalog, t, Expression::True)
}

fn names(p: &Planned) -> Vec<String> {
    p.iter()
        .map(|(f, _)| {
            f.trim_start_matches("mem://warehouse/db/t/data/")
                .trim_end_matches(".parquet")
                .to_string()
        })
        .collect()
}

/// A v4 table whose first three files sit in one leaf M1 (D1, D2, D3 at ordinals 0-2).
fn table_with_leaf(catalog: &Arc<MemoryCatalog>) -> TableState {
    create(catalog, 4);
    set_property(catalog, super::snapshot::ROOT_MAX_FILE_ENTRIES, "2");
    let t = append(
        catalog,
        vec![data("d1", 1, 10), data("d2", 1, 10), data("d3", 2, 10)],
    );
    set_property(catalog, super::snapshot::ROOT_MAX_FILE_ENTRIES, "100");
    assert_eq!(
        shape(&root(catalog, &t)),
        vec![s(Added, DataManifest, "leaf")]
    );
    t
}

#[test]
fn append_to_the_root() {
    // seed "Appends To the Root Manifest": a leaf with D1-D3, then D4, then D5 at the root
    let c = MemoryCatalog::new();
    table_with_leaf(&c);
    let t = append(&c, vec![data("d4", 1, 5)]);
    assert_eq!(
        shape(&root(&c, &t)),
        vec![s(Existing, DataManifest, "leaf"), s(Added, Data, "d4")]
    );
    let t = append(&c, vec![data("d5", 2, 5)]);
    assert_eq!(
        shape(&root(&c, &t)),
        vec![
            s(Existing, DataManifest, "leaf"),
            s(Existing, Data, "d4"),
            s(Added, Data, "d5")
        ]
    );
    // exactly one new file per commit: the root (plus the metadata JSON)
    let snap = t.metadata.current_snapshot().unwrap();
    assert!(snap.manifest_list.as_ref().unwrap().contains("/root-"));
    assert_eq!(names(&planned(&c, &t)), ["d1", "d2", "d3", "d4", "d5"]);
    // row lineage: the first row ids follow v3's
    let r = root(&c, &t);
    assert_eq!(r[1].tracking.first_row_id, Some(30));
    assert_eq!(r[2].tracking.first_row_id, Some(35));
    assert_eq!(t.metadata.next_row_id, 40);
}

#[test]
fn append_via_a_new_data_manifest() {
    // seed: root A = [ADDED M1]; root B = [EXISTING M1, ADDED M2 (D4-D6)]
    let c = MemoryCatalog::new();
    table_with_leaf(&c);
    set_property(&c, super::snapshot::ROOT_MAX_FILE_ENTRIES, "2");
    let t = append(
        &c,
        vec![data("d4", 1, 1), data("d5", 1, 1), data("d6", 1, 1)],
    );
    let r = root(&c, &t);
    assert_eq!(
        shape(&r),
        vec![
            s(Existing, DataManifest, "leaf"),
            s(Added, DataManifest, "leaf")
        ]
    );
    let info = r[1].manifest_info.as_ref().unwrap();
    assert_eq!((info.added_files_count, info.added_rows_count), (3, 3));
    // the leaf's partition summary: cat = 1 only, so a filter on cat = 2 skips it
    let p = planned_with(
        &c,
        &t,
        Expression::compare(ExprOp::Eq, "cat", Datum::Int(2)),
    );
    assert_eq!(names(&p), ["d3"]);
    assert_eq!(
        names(&planned(&c, &t)),
        ["d1", "d2", "d3", "d4", "d5", "d6"]
    );
}

#[test]
fn remove_a_file_from_the_root() {
    // seed: root [D1, D2] → [DELETED D1, EXISTING D2]
    let c = MemoryCatalog::new();
    create(&c, 4);
    append(&c, vec![data("d1", 1, 10), data("d2", 1, 10)]);
    let t = delete(&c, &["d1"]);
    assert_eq!(
        shape(&root(&c, &t)),
        vec![s(Deleted, Data, "d1"), s(Existing, Data, "d2")]
    );
    assert_eq!(names(&planned(&c, &t)), ["d2"]);
    // the next commit drops the DELETED entry (history)
    let t = append(&c, vec![data("d3", 1, 1)]);
    assert_eq!(
        shape(&root(&c, &t)),
        vec![s(Existing, Data, "d2"), s(Added, Data, "d3")]
    );
}

#[test]
fn remove_a_file_from_a_leaf_adds_a_manifest_dv() {
    // seed: M1 (D1, D2, D3); removing D2 adds a DV on M1 at ordinal 1, M1 not rewritten
    let c = MemoryCatalog::new();
    let before = table_with_leaf(&c);
    let leaf_before = root(&c, &before)[0].location.clone();
    let t = delete(&c, &["d2"]);
    let r = root(&c, &t);
    assert_eq!(shape(&r), vec![s(Modified, DataManifest, "leaf")]);
    assert_eq!(r[0].location, leaf_before, "the leaf is not rewritten");
    assert_eq!(leaf_dv(&r[0]), [1]);
    assert_eq!(deleted_positions(&r[0]), [1]);
    assert_eq!(names(&planned(&c, &t)), ["d1", "d3"]);
    // a second removal grows the DV; deleted_positions holds this snapshot's only
    let t = delete(&c, &["d1"]);
    let r = root(&c, &t);
    assert_eq!(leaf_dv(&r[0]), [0, 1]);
    assert_eq!(deleted_positions(&r[0]), [0]);
    assert_eq!(names(&planned(&c, &t)), ["d3"]);
    // removing a file that is not live fails as in v3
    let mut p = SnapshotProducer::delete_files();
    p.delete_path(path("d2"));
    assert!(matches!(
        commit(&c, p).unwrap_err(),
        Error::ValidationFailed { .. }
    ));
}

#[test]
fn overwrite_in_the_root_and_in_a_leaf() {
    // seed "Overwrite Files in Root Manifest": [D1] → [DELETED D1, ADDED D2] → [DELETED D2, ADDED D3]
    let c = MemoryCatalog::new();
    create(&c, 4);
    append(&c, vec![data("d1", 1, 10)]);
    let overwrite = |old: &str, new: DataFile| {
        let mut p = SnapshotProducer::overwrite_files();
        p.delete_path(path(old));
        p.add_file(new);
        commit(&c, p).unwrap()
    };
    let t = overwrite("d1", data("d2", 1, 10));
    assert_eq!(
        shape(&root(&c, &t)),
        vec![s(Deleted, Data, "d1"), s(Added, Data, "d2")]
    );
    let t = overwrite("d2", data("d3", 1, 10));
    assert_eq!(
        shape(&root(&c, &t)),
        vec![s(Deleted, Data, "d2"), s(Added, Data, "d3")]
    );

    // seed "Overwrite Files in Leaf Manifest": M1 (D1-D3); D2 → D4: DV on M1, D4 at the root
    let c = MemoryCatalog::new();
    table_with_leaf(&c);
    let mut p = SnapshotProducer::overwrite_files();
    p.delete_path(path("d2"));
    p.add_file(data("d4", 1, 10));
    let t = commit(&c, p).unwrap();
    let r = root(&c, &t);
    assert_eq!(
        shape(&r),
        vec![s(Modified, DataManifest, "leaf"), s(Added, Data, "d4")]
    );
    assert_eq!(leaf_dv(&r[0]), [1]);
    assert_eq!(names(&planned(&c, &t)), ["d1", "d3", "d4"]);
}

#[test]
fn root_only_row_delta() {
    // seed: [D1] → DV1 on D1 and new rows in D2: [MODIFIED D1 (DV1), ADDED D2]
    let c = MemoryCatalog::new();
    create(&c, 4);
    append(&c, vec![data("d1", 1, 10)]);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("dv1", "d1", 1, 4, 3));
    p.add_file(data("d2", 1, 3));
    let t = commit(&c, p).unwrap();
    let r = root(&c, &t);
    assert_eq!(
        shape(&r),
        vec![s(Modified, Data, "d1"), s(Added, Data, "d2")]
    );
    let d = r[0].deletion_vector.as_ref().unwrap();
    assert_eq!(
        (d.location.as_str(), d.offset, d.cardinality),
        ("mem://warehouse/db/t/data/dv1.puffin", 4, 3)
    );
    let p = planned(&c, &t);
    let want: Planned = [
        (
            path("d1"),
            [("mem://warehouse/db/t/data/dv1.puffin".to_string(), Some(4))].into(),
        ),
        (path("d2"), BTreeSet::new()),
    ]
    .into();
    assert_eq!(p, want);
}

#[test]
fn complex_row_delta_with_modified_dvs() {
    // seed: a leaf DM1 holds D1 (with DV1) and D2 (with DV2); the row delta replaces DV1
    // by DV4 (DV1's deletes and new ones) and adds D3. Upstream keeps a DV on its data
    // entry, so DV1's removal is the leaf's manifest DV at D1's ordinal and D1 is
    // restated at the root, MODIFIED, with DV4 (docs/v4.md).
    let c = MemoryCatalog::new();
    create(&c, 4);
    append(&c, vec![data("d1", 1, 10), data("d2", 1, 10)]);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("dvs", "d1", 1, 4, 2));
    p.add_delete_file(None, dv("dvs", "d2", 1, 44, 1));
    commit(&c, p).unwrap();
    // flush D1 and D2 (with their DVs) into a leaf
    set_property(&c, super::snapshot::ROOT_MAX_FILE_ENTRIES, "0");
    let t = append(&c, vec![]);
    set_property(&c, super::snapshot::ROOT_MAX_FILE_ENTRIES, "100");
    assert_eq!(shape(&root(&c, &t)), vec![s(Added, DataManifest, "leaf")]);

    let mut p = SnapshotProducer::row_delta();
    p.remove_delete_file("mem://warehouse/db/t/data/dvs.puffin", Some(4));
    p.add_delete_file(None, dv("dv4", "d1", 1, 4, 5));
    p.add_file(data("d3", 1, 5));
    let t = commit(&c, p).unwrap();
    let r = root(&c, &t);
    assert_eq!(
        shape(&r),
        vec![
            s(Modified, DataManifest, "leaf"),
            s(Modified, Data, "d1"),
            s(Added, Data, "d3")
        ]
    );
    assert_eq!(leaf_dv(&r[0]), [0]);
    assert_eq!(
        r[1].deletion_vector.as_ref().unwrap().location,
        "mem://warehouse/db/t/data/dv4.puffin"
    );
    let want: Planned = [
        (
            path("d1"),
            [("mem://warehouse/db/t/data/dv4.puffin".to_string(), Some(4))].into(),
        ),
        (
            path("d2"),
            [("mem://warehouse/db/t/data/dvs.puffin".to_string(), Some(44))].into(),
        ),
        (path("d3"), BTreeSet::new()),
    ]
    .into();
    assert_eq!(planned(&c, &t), want);
}

#[test]
fn compaction_during_an_append() {
    // seed: M1 (D1-D3) with DV1 {0}, M2 (D4-D6) with DV2 {1}; an append of D7 compacts
    // them into M3 (D2, D3, D4, D6), EXISTING, and adds D7 at the root
    let c = MemoryCatalog::new();
    create(&c, 4);
    set_property(&c, super::snapshot::COMPACT_MIN_DV_LEAVES, "0");
    set_property(&c, super::snapshot::ROOT_MAX_FILE_ENTRIES, "2");
    append(
        &c,
        vec![data("d1", 1, 1), data("d2", 1, 1), data("d3", 1, 1)],
    );
    append(
        &c,
        vec![data("d4", 1, 1), data("d5", 1, 1), data("d6", 1, 1)],
    );
    set_property(&c, super::snapshot::ROOT_MAX_FILE_ENTRIES, "100");
    delete(&c, &["d1"]);
    let t = delete(&c, &["d5"]);
    let r = root(&c, &t);
    assert_eq!(
        shape(&r),
        vec![
            s(Existing, DataManifest, "leaf"),
            s(Modified, DataManifest, "leaf")
        ]
    );
    assert_eq!((leaf_dv(&r[0]), leaf_dv(&r[1])), (vec![0], vec![1]));
    set_property(&c, super::snapshot::COMPACT_MIN_DV_LEAVES, "2");
    let t = append(&c, vec![data("d7", 1, 1)]);
    let r = root(&c, &t);
    assert_eq!(
        shape(&r),
        vec![s(Added, Data, "d7"), s(Existing, DataManifest, "leaf")]
    );
    assert!(leaf_dv(&r[1]).is_empty());
    let info = r[1].manifest_info.as_ref().unwrap();
    assert_eq!((info.existing_files_count, info.added_files_count), (4, 0));
    assert_eq!(names(&planned(&c, &t)), ["d2", "d3", "d4", "d6", "d7"]);
}

#[test]
fn delete_by_row_filter_in_root_and_leaf() {
    let c = MemoryCatalog::new();
    table_with_leaf(&c); // d1, d2 in cat 1; d3 in cat 2
    append(&c, vec![data("d4", 2, 1), data("d5", 1, 1)]);
    let mut p = SnapshotProducer::delete_files();
    p.delete_by_row_filter(Expression::compare(ExprOp::Eq, "cat", Datum::Int(2)));
    let t = commit(&c, p).unwrap();
    assert_eq!(names(&planned(&c, &t)), ["d1", "d2", "d5"]);
    let r = root(&c, &t);
    assert_eq!(
        shape(&r),
        vec![
            s(Modified, DataManifest, "leaf"),
            s(Deleted, Data, "d4"),
            s(Existing, Data, "d5")
        ]
    );
    assert_eq!(leaf_dv(&r[0]), [2]);
}

#[test]
fn upgrade_from_v3_turns_the_manifest_list_into_root_entries() {
    let c = MemoryCatalog::new();
    create(&c, 3);
    append(&c, vec![data("d1", 1, 10), data("d2", 1, 10)]);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("dv1", "d1", 1, 4, 3));
    commit(&c, p).unwrap();
    set_property(&c, "format-version", "4");
    // the first v4 commit: the v3 manifests become leaves, D2's removal a manifest DV
    let t = delete(&c, &["d2"]);
    assert_eq!(t.metadata.format_version, 4);
    let r = root(&c, &t);
    assert_eq!(r.len(), 2);
    assert!(r
        .iter()
        .all(|e| e.content_type.is_manifest() && e.format_version == 3));
    assert_eq!(r[0].tracking.status, Modified);
    assert_eq!(leaf_dv(&r[0]), [1]);
    let want: Planned = [(
        path("d1"),
        [("mem://warehouse/db/t/data/dv1.puffin".to_string(), Some(4))].into(),
    )]
    .into();
    assert_eq!(planned(&c, &t), want);
    // a new DV for d1 (held in a v3 leaf) replaces the v3 DV
    let mut p = SnapshotProducer::row_delta();
    p.remove_delete_file("mem://warehouse/db/t/data/dv1.puffin", Some(4));
    p.add_delete_file(None, dv("dv2", "d1", 1, 4, 4));
    let t = commit(&c, p).unwrap();
    let want: Planned = [(
        path("d1"),
        [("mem://warehouse/db/t/data/dv2.puffin".to_string(), Some(4))].into(),
    )]
    .into();
    assert_eq!(planned(&c, &t), want);
}

#[test]
fn bad_trees_are_typed_errors_naming_the_file() {
    let c = MemoryCatalog::new();
    let t = table_with_leaf(&c);
    let io = c.io();
    let leaf = root(&c, &t)[0].clone();
    let plan_err = |t: &TableState| {
        TableScan::new(t.metadata.clone(), c.io())
            .plan_files()
            .unwrap_err()
    };
    let expiry_err = |t: &TableState| expiry_err_with(io.as_ref(), t);
    // a manifest DV past the leaf's entries
    let t2 = delete(&c, &["d2"]);
    let root_path = t2
        .metadata
        .current_snapshot()
        .unwrap()
        .manifest_list
        .clone()
        .unwrap();
    let mut r = root(&c, &t2);
    r[0].manifest_info.as_mut().unwrap().set_dv([7]).unwrap();
    let bytes = crate::manifest::v4::write_v4_manifest_with(
        crate::manifest::v4::V4ManifestKind::Root,
        &r,
        crate::manifest::Codec::Null,
        &V4Layout::for_table(&t2.metadata).unwrap(),
    )
    .unwrap();
    io.delete(&root_path).unwrap();
    io.write_new(&root_path, &bytes).unwrap();
    for e in [plan_err(&t2), expiry_err(&t2)] {
        assert!(matches!(e, Error::InvalidMetadata { .. }), "{e:?}");
        assert_eq!(e.location().unwrap().file, leaf.location, "{e}");
        assert_eq!(e.location().unwrap().field, "manifest_info.dv", "{e}");
        assert!(e.to_string().contains("out of range"), "{e}");
    }

    // a leaf holding a manifest (depth > 2), and a leaf mixing data and deletes
    let mut bad_leaf = leaf.clone();
    bad_leaf
        .manifest_info
        .as_mut()
        .unwrap()
        .set_dv([0])
        .unwrap();
    for (content, what) in [
        (DataManifest, "content_type"),
        (ContentType::EqualityDeletes, "content_type"),
    ] {
        let mut e = r[0].clone();
        e.content_type = content;
        if content == ContentType::EqualityDeletes {
            e.manifest_info = None;
            e.equality_ids = Some(vec![1]);
            e.partition = vec![Some(Literal::Int(1))];
        }
        let body = crate::manifest::v4::write_unchecked(
            "data",
            &[e],
            &V4Layout::for_table(&t.metadata).unwrap(),
        );
        io.delete(&leaf.location).unwrap();
        io.write_new(&leaf.location, &body).unwrap();
        for e in [plan_err(&t), expiry_err(&t)] {
            assert!(matches!(e, Error::InvalidMetadata { .. }), "{e:?}");
            assert_eq!(e.location().unwrap().file, leaf.location, "{e}");
            assert!(e.location().unwrap().field.ends_with(what), "{e}");
        }
    }

    // a root naming a leaf that is missing
    io.delete(&leaf.location).unwrap();
    for e in [plan_err(&t), expiry_err(&t)] {
        // the FileIO's typed not-found error, naming the leaf
        match &e {
            Error::Io { path, source } => {
                assert_eq!(path, &leaf.location);
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
            }
            _ => panic!("{e:?}"),
        }
    }
}

/// The error an expiry of every snapshot meets while working out the files to delete.
fn expiry_err_with(io: &dyn crate::io::FileIO, t: &TableState) -> Error {
    let mut after = (*t.metadata).clone();
    after.snapshots.clear();
    after.refs.clear();
    after.current_snapshot_id = None;
    super::expire::files_to_delete(io, &t.metadata, &after).unwrap_err()
}

/// A small deterministic generator (xorshift), so that every sequence is reproducible
/// from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A live data file of the model: name, `cat`, and its DV (Puffin name, offset).
type LiveFile = (String, i32, Option<(String, i64)>);

/// A model operation: a random live file removed by path.
fn remove_random_file(rng: &mut Rng, live: &mut Vec<LiveFile>) -> SnapshotProducer {
    let (name, _, _) = live.remove(rng.below(live.len()));
    let mut p = SnapshotProducer::delete_files();
    p.delete_path(path(&name));
    p
}

/// A model operation: a row delta adding a DV (Puffin `s{seed}dv{n}`, `n` counted up)
/// for a random live file, replacing the DV it had.
fn replace_random_dv(
    rng: &mut Rng,
    live: &mut [LiveFile],
    seed: u64,
    n: &mut usize,
) -> SnapshotProducer {
    let i = rng.below(live.len());
    *n += 1;
    let name = format!("s{seed}dv{n}");
    let mut p = SnapshotProducer::row_delta();
    if let Some((old, off)) = live[i].2.take() {
        p.remove_delete_file(puffin(&old), Some(off));
    }
    p.add_delete_file(None, dv(&name, &live[i].0, live[i].1, 4, 2));
    live[i].2 = Some((name, 4));
    p
}

/// Model-based equivalence: the same random operations on twin v3 and v4 tables plan the
/// same files with the same deletes after every commit (icefloe's v3 is the oracle).
#[test]
fn v3_and_v4_twins_plan_the_same_files_after_every_commit() {
    let mut leaves_skipped = 0;
    for seed in 1..=100u64 {
        let v3 = MemoryCatalog::new();
        let v4 = MemoryCatalog::new();
        // a third twin whose commits are given the positions of a plan made just before
        // (as a writer that scanned first): it must end in the same root as the search's
        let v4p = MemoryCatalog::new();
        create(&v3, 3);
        create(&v4, 4);
        create(&v4p, 4);
        // small roots and eager compaction, so that leaves, manifest DVs and compaction
        // all occur within a few commits
        for c in [&v4, &v4p] {
            set_property(c, super::snapshot::ROOT_MAX_FILE_ENTRIES, "3");
            set_property(c, super::snapshot::COMPACT_MIN_DV_LEAVES, "2");
        }
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        // live data files: (name, cat, the DV on it: (puffin, offset))
        let mut live: Vec<LiveFile> = Vec::new();
        let mut n = 0;
        for step in 0..12 {
            let op = rng.below(6);
            let p = match op {
                0 | 1 => {
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
                2 if !live.is_empty() => remove_random_file(&mut rng, &mut live),
                3 if !live.is_empty() => {
                    let (name, cat, _) = live.remove(rng.below(live.len()));
                    n += 1;
                    let new = format!("s{seed}f{n}");
                    let mut p = SnapshotProducer::overwrite_files();
                    p.delete_path(path(&name));
                    p.add_file(ids(&new, cat, 10, n));
                    live.push((new, cat, None));
                    p
                }
                4 if !live.is_empty() => {
                    // a row delta: a DV for a live file (replacing its DV), maybe new rows
                    let mut p = replace_random_dv(&mut rng, &mut live, seed, &mut n);
                    if rng.below(2) == 0 {
                        n += 1;
                        let name = format!("s{seed}f{n}");
                        p.add_file(ids(&name, 0, 3, n));
                        live.push((name, 0, None));
                    }
                    p
                }
                5 if !live.is_empty() => {
                    // delete by a filter on the partition column
                    let cat = rng.below(3) as i32;
                    live.retain(|f| f.1 != cat);
                    let mut p = SnapshotProducer::delete_files();
                    p.delete_by_row_filter(Expression::compare(ExprOp::Eq, "cat", Datum::Int(cat)));
                    p
                }
                _ => {
                    let mut p = SnapshotProducer::fast_append();
                    n += 1;
                    let name = format!("s{seed}f{n}");
                    p.add_file(ids(&name, 2, 1, n));
                    live.push((name, 2, None));
                    p
                }
            };
            let t3 = commit(&v3, clone_producer(&p)).unwrap();
            let pp = position_tests::with_positions(&v4p, clone_producer(&p));
            let t4 = commit(&v4, p).unwrap_or_else(|e| panic!("seed {seed} step {step}: {e}"));
            let t4p = commit(&v4p, pp).unwrap_or_else(|e| panic!("seed {seed} step {step}: {e}"));
            assert_eq!(
                position_tests::normalized(&root(&v4, &t4)),
                position_tests::normalized(&root(&v4p, &t4p)),
                "seed {seed} step {step} op {op}: with positions"
            );
            let filter = Expression::compare(ExprOp::Eq, "cat", Datum::Int(1));
            // filters on `id`, which only the leaves' aggregate bounds can prune by
            let half = (n as i64) * 10 / 2;
            let id_filters = [
                Expression::compare(ExprOp::GtEq, "id", Datum::Long(half)),
                Expression::compare(ExprOp::Lt, "id", Datum::Long(half)),
                Expression::compare(ExprOp::Eq, "id", Datum::Long(half + 3)),
            ];
            for f in [Expression::True, filter]
                .into_iter()
                .chain(id_filters.clone())
            {
                assert_eq!(
                    planned_with(&v3, &t3, f.clone()),
                    planned_with(&v4, &t4, f.clone()),
                    "seed {seed} step {step} op {op} filter {f:?}"
                );
            }
            for f in id_filters {
                let scan = TableScan::new(t4.metadata.clone(), v4.io()).filter(f);
                leaves_skipped += scan.plan_files().unwrap().metrics.skipped_data_manifests;
            }
        }
    }
    // the id filters prune leaves by their aggregate bounds (cat's by partition summaries)
    assert!(leaves_skipped > 0);
}

/// [`ids`] for a model file named `s<seed>f<n>`.
fn named_ids(name: &str, cat: i32, rows: i64) -> DataFile {
    let n = name
        .rsplit('f')
        .next()
        .and_then(|d| d.parse().ok())
        .unwrap_or(0);
    ids(name, cat, rows, n)
}

/// A model file: `data(name, cat, rows)` with the `id` range `[10n, 10n + 9]`, so that
/// files appended later have higher ids and leaves flushed apart prune apart.
fn ids(name: &str, cat: i32, rows: i64, n: usize) -> DataFile {
    let lo = n as i64 * 10;
    data_ids(name, cat, rows, lo, lo + 9)
}

/// Producers are single-use: the twin gets an identical one.
fn clone_producer(p: &SnapshotProducer) -> SnapshotProducer {
    p.clone_unstarted()
}

// ---- snapshot operations on v4: expiry, cherry-pick, incremental scans, branches,
// rewrites, and the twin model extended with them ----

/// Writes a placeholder for each content file, so that an expiry's deletes can be seen.
fn touch(catalog: &Arc<MemoryCatalog>, paths: &[String]) {
    let io = catalog.io();
    for p in paths {
        if !io.exists(p).unwrap() {
            io.write_new(p, b"x").unwrap();
        }
    }
}

fn puffin(name: &str) -> String {
    format!("mem://warehouse/db/t/data/{name}.puffin")
}

/// Commits `p` to `branch`, validating from the branch's head.
fn commit_on(
    catalog: &Arc<MemoryCatalog>,
    p: SnapshotProducer,
    branch: &str,
) -> crate::error::Result<TableState> {
    let mut tx = Transaction::load(catalog.clone(), ident())?;
    let base = catalog.load_table(&ident())?;
    let mut p = p.to_branch(branch);
    p.validation_mut().from_snapshot = base
        .metadata
        .snapshot_ref(branch)
        .map(|r| r.snapshot_id)
        .or(base.metadata.current_snapshot_id);
    tx.add_change(Box::new(p));
    tx.commit()
}

fn expire(catalog: &Arc<MemoryCatalog>, retain: i32) -> super::expire::ExpireResult {
    super::expire::ExpireSnapshots::new()
        .expire_older_than(chrono::Utc::now().timestamp_millis() + 1)
        .retain_last(retain)
        .unwrap()
        // the test's data files lie outside the table's location
        .delete_outside_location(true)
        .commit(catalog.clone(), &ident())
        .unwrap()
}

/// Every file a retained snapshot reaches exists: planning every snapshot reads its root
/// and leaves (a missing one fails), and each planned file and DV is checked.
fn assert_reachable_files_exist(catalog: &Arc<MemoryCatalog>, what: &str) {
    let t = catalog.load_table(&ident()).unwrap();
    let io = catalog.io();
    for s in &t.metadata.snapshots {
        let plan = TableScan::new(t.metadata.clone(), catalog.io())
            .snapshot(crate::scan::SnapshotSelection::SnapshotId(s.snapshot_id))
            .plan_files()
            .unwrap_or_else(|e| panic!("{what}: snapshot {}: {e}", s.snapshot_id));
        for task in &plan.tasks {
            let f = &task.file.file.file_path;
            assert!(io.exists(f).unwrap(), "{what}: {f} was deleted");
            for d in &task.deletes {
                let f = &d.file.file_path;
                assert!(io.exists(f).unwrap(), "{what}: {f} was deleted");
            }
        }
    }
}

#[test]
fn expiry_on_v4_deletes_only_files_no_retained_root_reaches() {
    let c = MemoryCatalog::new();
    table_with_leaf(&c); // s1: leaf L1 = [d1, d2, d3]
    touch(
        &c,
        &[
            path("d1"),
            path("d2"),
            path("d3"),
            puffin("dva"),
            puffin("dvb"),
            path("d4"),
        ],
    );
    let leaf1 = root(&c, &c.load_table(&ident()).unwrap())[0]
        .location
        .clone();
    delete(&c, &["d2"]); // s2: manifest DV {1} on L1
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("dva", "d1", 1, 4, 2));
    commit(&c, p).unwrap(); // s3: d1 restated at the root with dva, DV {0, 1} on L1
    let mut p = SnapshotProducer::row_delta();
    p.remove_delete_file(puffin("dva"), Some(4));
    p.add_delete_file(None, dv("dvb", "d1", 1, 4, 3));
    commit(&c, p).unwrap(); // s4: dvb replaces dva
    let t5 = append(&c, vec![data("d4", 2, 10)]); // s5
    let before = c.load_table(&ident()).unwrap();
    let roots: Vec<String> = before
        .metadata
        .snapshots
        .iter()
        .map(|s| s.manifest_list.clone().unwrap())
        .collect();
    let want_plan = planned(&c, &t5);

    let r = expire(&c, 1);
    assert_eq!(r.removed_snapshot_ids.len(), 4);
    // d2 (removed by s2's manifest DV) and dva (replaced by s4) are reached only by
    // expired snapshots; L1 is still named by s5's root (with its DV)
    assert_eq!(r.deleted_data_files, vec![path("d2")]);
    assert_eq!(r.deleted_delete_files, vec![puffin("dva")]);
    assert!(r.deleted_manifests.is_empty(), "{r:?}");
    let mut want_roots = roots[..4].to_vec();
    want_roots.sort();
    let mut got_roots = r.deleted_manifest_lists.clone();
    got_roots.sort();
    assert_eq!(got_roots, want_roots);
    let io = c.io();
    for f in [
        path("d1"),
        path("d3"),
        path("d4"),
        puffin("dvb"),
        leaf1.clone(),
    ] {
        assert!(io.exists(&f).unwrap(), "{f} is live and was deleted");
    }
    let after = c.load_table(&ident()).unwrap();
    assert_eq!(planned(&c, &after), want_plan);
    assert_reachable_files_exist(&c, "after the first expiry");

    // compaction merges L1 (it has a DV) into a new leaf: once the snapshots naming L1
    // expire, L1 goes, and none of its live files
    set_property(&c, super::snapshot::COMPACT_MIN_DV_LEAVES, "1");
    let t = append(&c, vec![data("d5", 2, 10)]);
    touch(&c, &[path("d5")]);
    assert!(root(&c, &t).iter().all(|e| e.location != leaf1));
    let want_plan = planned(&c, &t);
    let r = expire(&c, 1);
    assert_eq!(r.deleted_manifests, vec![leaf1.clone()]);
    assert!(r.deleted_data_files.is_empty(), "{r:?}");
    assert!(r.deleted_delete_files.is_empty(), "{r:?}");
    assert!(!io.exists(&leaf1).unwrap());
    let after = c.load_table(&ident()).unwrap();
    assert_eq!(planned(&c, &after), want_plan);
    assert_reachable_files_exist(&c, "after compaction and expiry");
}

#[test]
fn cherry_pick_and_incremental_appends_on_v4() {
    use super::manage_snapshots::{ManageSnapshots, SnapshotOp, SOURCE_SNAPSHOT_ID_PROP};
    let c = MemoryCatalog::new();
    create(&c, 4);
    set_property(&c, super::snapshot::ROOT_MAX_FILE_ENTRIES, "2");
    let t1 = append(&c, vec![data("a", 1, 10)]);
    let s1 = t1.metadata.current_snapshot_id.unwrap();
    // staged on a branch, then main moves on
    let mut p = SnapshotProducer::fast_append();
    p.add_file(data("b", 1, 10));
    p.add_file(data("c", 2, 10));
    let staged = commit_on(&c, p, "audit").unwrap();
    let staged_id = staged.metadata.snapshot_ref("audit").unwrap().snapshot_id;
    // this append flushes the root (3 files > 2) into a leaf
    append(&c, vec![data("d", 2, 10), data("e", 0, 10)]);
    let mut m = ManageSnapshots::new();
    m.add(SnapshotOp::CherryPick {
        snapshot_id: staged_id,
    });
    let mut tx = Transaction::load(c.clone(), ident()).unwrap();
    tx.add_change(Box::new(m));
    let t = tx.commit().unwrap();
    let head = t.metadata.current_snapshot().unwrap();
    assert_eq!(
        head.summary.as_ref().unwrap().get(SOURCE_SNAPSHOT_ID_PROP),
        Some(staged_id.to_string().as_str())
    );
    assert_eq!(names(&planned(&c, &t)), vec!["a", "b", "c", "d", "e"]);
    // the picked files are new root entries of the new snapshot
    let added: Vec<String> = shape(&root(&c, &t))
        .into_iter()
        .filter(|(st, _, _)| *st == Added)
        .map(|(_, _, n)| n)
        .collect();
    assert_eq!(added, vec!["b", "c"]);

    // incremental appends: everything since s1, found in roots and in a flushed leaf;
    // a file a later snapshot removes is still planned, as Java plans it
    delete(&c, &["d"]);
    let t = append(&c, vec![data("f", 1, 10)]);
    let inc = |from: Option<i64>, filter: Expression| -> Vec<String> {
        let plan = TableScan::new(t.metadata.clone(), c.io())
            .filter(filter)
            .appends_after(from)
            .plan_files()
            .unwrap();
        let mut n: Vec<String> = plan
            .tasks
            .iter()
            .map(|t| {
                assert!(t.deletes.is_empty());
                t.file.file.file_path.clone()
            })
            .collect();
        n.sort();
        n
    };
    let all = |ns: &[&str]| ns.iter().map(|n| path(n)).collect::<Vec<_>>();
    assert_eq!(
        inc(Some(s1), Expression::True),
        all(&["b", "c", "d", "e", "f"])
    );
    assert_eq!(
        inc(None, Expression::True),
        all(&["a", "b", "c", "d", "e", "f"])
    );
    let cat1 = Expression::compare(ExprOp::Eq, "cat", Datum::Int(1));
    assert_eq!(inc(Some(s1), cat1), all(&["b", "f"]));
}

#[test]
fn rewrite_manifests_on_v4_compacts_the_tree_into_existing_leaves() {
    // on v4, rewriting manifests means compacting the metadata tree: every leaf (its
    // manifest DV applied) and every root file goes into new leaves, EXISTING, and the
    // root holds only them
    let c = MemoryCatalog::new();
    table_with_leaf(&c);
    delete(&c, &["d2"]);
    append(&c, vec![data("d4", 2, 10)]);
    let before = c.load_table(&ident()).unwrap();
    let want = planned(&c, &before);
    let io = c.io();
    let to_rewrite = |t: &TableState| {
        super::snapshot::manifests_to_rewrite(io.as_ref(), &t.metadata, None, None).unwrap()
    };
    // the leaf with its DV and the root file d4
    assert_eq!(to_rewrite(&before), 2);
    let t = commit(&c, SnapshotProducer::rewrite_manifests()).unwrap();
    // compact now: nothing left to rewrite
    assert_eq!(to_rewrite(&t), 0);
    let r = root(&c, &t);
    assert!(!r.is_empty());
    for e in &r {
        assert_eq!(e.tracking.status, Existing, "{e:?}");
        assert_eq!(e.content_type, DataManifest, "{e:?}");
        assert!(leaf_dv(e).is_empty(), "{e:?}");
    }
    assert_eq!(planned(&c, &t), want);
    assert_eq!(
        t.metadata.current_snapshot().unwrap().operation(),
        Some(crate::spec::snapshot::Operation::Replace)
    );
}

/// The twin model with branches, rewrites, rewrites of manifests, cherry-picks, expiry and
/// incremental scans: after every step both twins plan the same files with the same
/// deletes on `main` and on branch `b`, incremental scans agree, an expiry deletes the
/// same data and delete files in both, and every file a retained snapshot reaches exists.
#[test]
fn v3_and_v4_twins_agree_with_rewrites_expiry_and_branches() {
    use super::manage_snapshots::{ManageSnapshots, SnapshotOp};
    for seed in 1..=100u64 {
        let v3 = MemoryCatalog::new();
        let v4 = MemoryCatalog::new();
        create(&v3, 3);
        create(&v4, 4);
        set_property(&v4, super::snapshot::ROOT_MAX_FILE_ENTRIES, "3");
        set_property(&v4, super::snapshot::COMPACT_MIN_DV_LEAVES, "2");
        let mut rng = Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1);
        let mut live: Vec<LiveFile> = Vec::new();
        // branch b's live files, once it exists
        let mut live_b: Option<Vec<LiveFile>> = None;
        // b's last append, not picked yet: (v3 id, v4 id, its files)
        let mut pickable: Option<(i64, i64, Vec<LiveFile>)> = None;
        let mut n = 0;
        let new_file = |n: &mut usize, rng: &mut Rng| -> LiveFile {
            *n += 1;
            (format!("s{seed}f{n}"), rng.below(3) as i32, None)
        };
        for step in 0..14 {
            let op = rng.below(10);
            let both = |f: &dyn Fn(&Arc<MemoryCatalog>)| {
                f(&v3);
                f(&v4);
            };
            let ctx = format!("seed {seed} step {step} op {op}");
            // (producer, branch) to commit on both twins, or None when the step did its own
            let mut job: Option<(SnapshotProducer, &str)> = None;
            match op {
                0 | 1 => {
                    let mut p = SnapshotProducer::fast_append();
                    for _ in 0..=rng.below(3) {
                        let f = new_file(&mut n, &mut rng);
                        p.add_file(named_ids(&f.0, f.1, 10));
                        live.push(f);
                    }
                    job = Some((p, "main"));
                }
                2 if !live.is_empty() => {
                    job = Some((remove_random_file(&mut rng, &mut live), "main"));
                }
                3 if !live.is_empty() => {
                    // a row delta adding or replacing a DV
                    job = Some((replace_random_dv(&mut rng, &mut live, seed, &mut n), "main"));
                }
                4 if live.len() >= 2 => {
                    // rewrite files: two live files without DVs become one
                    let mut picked: Vec<usize> = (0..live.len())
                        .filter(|i| live[*i].2.is_none() && live[*i].1 == live[0].1)
                        .take(2)
                        .collect();
                    if picked.is_empty() {
                        continue;
                    }
                    picked.reverse();
                    let mut p = SnapshotProducer::rewrite_files();
                    let cat = live[picked[0]].1;
                    for i in picked {
                        let (name, _, _) = live.remove(i);
                        p.delete_path(path(&name));
                    }
                    n += 1;
                    let name = format!("s{seed}f{n}");
                    p.add_file(named_ids(&name, cat, 20));
                    live.push((name, cat, None));
                    job = Some((p, "main"));
                }
                5 => job = Some((SnapshotProducer::rewrite_manifests(), "main")),
                6 => {
                    // on branch b (created from main's head when missing): an append or
                    // a delete
                    let b = live_b.get_or_insert_with(|| live.clone());
                    if rng.below(2) == 0 || b.is_empty() {
                        let f = new_file(&mut n, &mut rng);
                        let mut p = SnapshotProducer::fast_append();
                        p.add_file(named_ids(&f.0, f.1, 10));
                        b.push(f.clone());
                        touch(&v3, &[path(&f.0)]);
                        touch(&v4, &[path(&f.0)]);
                        let t3 = commit_on(&v3, clone_producer(&p), "b").unwrap();
                        let t4 = commit_on(&v4, p, "b").unwrap_or_else(|e| panic!("{ctx}: {e}"));
                        let id = |t: &TableState| t.metadata.snapshot_ref("b").unwrap().snapshot_id;
                        pickable = Some((id(&t3), id(&t4), vec![f]));
                    } else {
                        let (name, _, _) = b.remove(rng.below(b.len()));
                        let mut p = SnapshotProducer::delete_files();
                        p.delete_path(path(&name));
                        commit_on(&v3, clone_producer(&p), "b").unwrap();
                        commit_on(&v4, p, "b").unwrap_or_else(|e| panic!("{ctx}: {e}"));
                        pickable = None;
                    }
                }
                7 if pickable.is_some() => {
                    let Some((id3, id4, files)) = pickable.take() else {
                        continue;
                    };
                    let head3 = v3.load_table(&ident()).unwrap().metadata;
                    let fast_forward = head3.snapshot_by_id(id3).unwrap().parent_snapshot_id
                        == head3.current_snapshot_id;
                    for (c, id) in [(&v3, id3), (&v4, id4)] {
                        let mut m = ManageSnapshots::new();
                        m.add(SnapshotOp::CherryPick { snapshot_id: id });
                        let mut tx = Transaction::load(c.clone(), ident()).unwrap();
                        tx.add_change(Box::new(m));
                        tx.commit()
                            .unwrap_or_else(|e| panic!("{ctx}: cherry-pick: {e}"));
                    }
                    if fast_forward {
                        live = live_b.clone().unwrap_or_default();
                    } else {
                        live.extend(files);
                    }
                }
                8 => {
                    let retain = 1 + rng.below(3) as i32;
                    let r3 = expire(&v3, retain);
                    let r4 = expire(&v4, retain);
                    assert_eq!(
                        r3.removed_snapshot_ids.len(),
                        r4.removed_snapshot_ids.len(),
                        "{ctx}"
                    );
                    assert_eq!(r3.deleted_data_files, r4.deleted_data_files, "{ctx}");
                    assert_eq!(r3.deleted_delete_files, r4.deleted_delete_files, "{ctx}");
                    assert_reachable_files_exist(&v4, &ctx);
                    assert_reachable_files_exist(&v3, &ctx);
                    // a branch whose snapshots expired with it is gone in both
                    if v4
                        .load_table(&ident())
                        .unwrap()
                        .metadata
                        .snapshot_ref("b")
                        .is_none()
                    {
                        live_b = None;
                        pickable = None;
                    }
                }
                _ => {
                    let f = new_file(&mut n, &mut rng);
                    let mut p = SnapshotProducer::merge_append();
                    p.add_file(named_ids(&f.0, f.1, 1));
                    live.push(f);
                    job = Some((p, "main"));
                }
            }
            if let Some((p, branch)) = job {
                both(&|c| {
                    let mut paths: Vec<String> = live.iter().map(|f| path(&f.0)).collect();
                    paths.extend(
                        live.iter()
                            .filter_map(|f| f.2.as_ref().map(|d| puffin(&d.0))),
                    );
                    touch(c, &paths);
                });
                commit_on(&v3, clone_producer(&p), branch)
                    .unwrap_or_else(|e| panic!("{ctx}: v3: {e}"));
                commit_on(&v4, p, branch).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            }
            let t3 = v3.load_table(&ident()).unwrap();
            let t4 = v4.load_table(&ident()).unwrap();
            // a filter on `id`, which only the leaves' aggregate bounds prune by (the
            // leaves rewrites and compactions write included)
            let by_id = Expression::compare(
                ExprOp::GtEq,
                "id",
                Datum::Long(i64::try_from(n).unwrap() * 5),
            );
            assert_eq!(
                planned_with(&v3, &t3, by_id.clone()),
                planned_with(&v4, &t4, by_id),
                "{ctx}: id filter"
            );
            let filter = Expression::compare(ExprOp::Eq, "cat", Datum::Int(1));
            for f in [Expression::True, filter] {
                assert_eq!(
                    planned_with(&v3, &t3, f.clone()),
                    planned_with(&v4, &t4, f.clone()),
                    "{ctx}"
                );
                if t3.metadata.snapshot_ref("b").is_some() {
                    let on_b = |c: &Arc<MemoryCatalog>, t: &TableState| -> Planned {
                        let scan = TableScan::new(t.metadata.clone(), c.io())
                            .filter(f.clone())
                            .snapshot(crate::scan::SnapshotSelection::Ref("b".into()));
                        planned_of(scan)
                    };
                    assert_eq!(on_b(&v3, &t3), on_b(&v4, &t4), "{ctx}: branch b");
                }
                // incremental appends from the same ancestor of main in each twin
                let a3 = t3
                    .metadata
                    .current_snapshot_id
                    .map(|id| t3.metadata.ancestors_of(id));
                let a4 = t4
                    .metadata
                    .current_snapshot_id
                    .map(|id| t4.metadata.ancestors_of(id));
                if let (Some(a3), Some(a4)) = (a3, a4) {
                    assert_eq!(a3.len(), a4.len(), "{ctx}");
                    // (the head itself is not a valid start, as in Java)
                    let j = 1 + rng.below(a3.len());
                    let from = |a: &[&crate::spec::snapshot::Snapshot]| {
                        (j < a.len()).then(|| a[j].snapshot_id)
                    };
                    let inc =
                        |c: &Arc<MemoryCatalog>, t: &TableState, from: Option<i64>| -> Planned {
                            planned_of(
                                TableScan::new(t.metadata.clone(), c.io())
                                    .filter(f.clone())
                                    .appends_after(from),
                            )
                        };
                    assert_eq!(
                        inc(&v3, &t3, from(&a3)),
                        inc(&v4, &t4, from(&a4)),
                        "{ctx}: appends after ancestor {j}"
                    );
                }
            }
        }
    }
}

fn planned_of(scan: TableScan) -> Planned {
    scan.plan_files()
        .unwrap()
        .tasks
        .iter()
        .map(|task| {
            (
                task.file.file.file_path.clone(),
                task.deletes
                    .iter()
                    .map(|d| (d.file.file_path.clone(), d.file.content_offset))
                    .collect(),
            )
        })
        .collect()
}

/// v3's validations and conflict retries hold on v4: the same concurrent changes succeed
/// (retried on the new base) or fail with `ValidationFailed` on twin v3 and v4 tables,
/// also when the files involved sit in a leaf.
#[test]
fn validations_and_conflict_retries_match_v3() {
    // (name, the change made on snapshot S, the concurrent change, expected to commit)
    let cases: Vec<(&str, SnapshotProducer, SnapshotProducer, bool)> = vec![
        {
            let mut p = SnapshotProducer::fast_append();
            p.add_file(data("x", 1, 10));
            let mut q = SnapshotProducer::fast_append();
            q.add_file(data("y", 2, 10));
            ("append retried over an append", p, q, true)
        },
        {
            let mut p = SnapshotProducer::row_delta();
            p.add_delete_file(None, dv("dv1", "d1", 1, 4, 2));
            p.validation_mut().referenced_data_files = vec![path("d1")];
            p.validation_mut().validate_deleted_files = true;
            let mut q = SnapshotProducer::delete_files();
            q.delete_path(path("d1"));
            ("a DV for a file deleted concurrently", p, q, false)
        },
        {
            let mut p = SnapshotProducer::row_delta();
            p.add_delete_file(None, dv("dv1", "d1", 1, 4, 2));
            p.validation_mut().no_conflicting_delete_files = true;
            let mut q = SnapshotProducer::row_delta();
            q.add_delete_file(None, dv("dv2", "d1", 1, 8, 1));
            ("a DV racing another DV for the same file", p, q, false)
        },
        {
            let mut p = SnapshotProducer::rewrite_files();
            p.delete_path(path("d2"));
            p.add_file(data("d2b", 1, 10));
            let mut q = SnapshotProducer::row_delta();
            q.add_delete_file(None, dv("dv3", "d2", 1, 4, 2));
            (
                "a rewrite of a file that got a DV concurrently",
                p,
                q,
                false,
            )
        },
        {
            let mut p = SnapshotProducer::rewrite_files();
            p.delete_path(path("d2"));
            p.add_file(data("d2b", 1, 10));
            let mut q = SnapshotProducer::delete_files();
            q.delete_path(path("d3"));
            ("a rewrite retried over an unrelated delete", p, q, true)
        },
        {
            let mut p = SnapshotProducer::overwrite_files();
            p.delete_path(path("d1"));
            p.add_file(data("d1b", 1, 10));
            p.validation_mut().no_conflicting_data_files = true;
            p.validation_mut().conflict_filter =
                Some(Expression::compare(ExprOp::Eq, "cat", Datum::Int(1)));
            let mut q = SnapshotProducer::fast_append();
            q.add_file(data("z", 1, 10));
            ("an overwrite racing an append into its filter", p, q, false)
        },
    ];
    for (name, p, q, ok) in cases {
        let mut outcome = Vec::new();
        for v in [3, 4] {
            let c = MemoryCatalog::new();
            if v == 4 {
                // d1-d3 in a leaf, so that changes go through manifest DVs
                table_with_leaf(&c);
            } else {
                create(&c, 3);
                append(
                    &c,
                    vec![data("d1", 1, 10), data("d2", 1, 10), data("d3", 2, 10)],
                );
            }
            let base = c.load_table(&ident()).unwrap();
            let mut p = clone_producer(&p);
            p.validation_mut().from_snapshot = base.metadata.current_snapshot_id;
            let mut tx = Transaction::load(c.clone(), ident()).unwrap();
            tx.add_change(Box::new(p));
            commit(&c, clone_producer(&q)).unwrap();
            let r = tx.commit();
            match &r {
                Ok(_) => {}
                Err(Error::ValidationFailed { .. }) => {}
                Err(e) => panic!("{name} (v{v}): not a validation failure: {e:?}"),
            }
            assert_eq!(r.is_ok(), ok, "{name} (v{v}): {:?}", r.err());
            let t = c.load_table(&ident()).unwrap();
            outcome.push(planned(&c, &t));
        }
        assert_eq!(outcome[0], outcome[1], "{name}");
    }
}

#[test]
fn flush_and_compaction_split_leaves_past_the_leaf_size() {
    let c = MemoryCatalog::new();
    create(&c, 4);
    set_property(&c, super::snapshot::ROOT_MAX_FILE_ENTRIES, "4");
    set_property(&c, super::snapshot::LEAF_MAX_FILE_ENTRIES, "2");
    // five files of one spec flush into leaves of 2, 2 and 1 entries
    let names = ["d1", "d2", "d3", "d4", "d5"];
    let t = append(&c, names.iter().map(|n| data(n, 1, 10)).collect());
    let r = root(&c, &t);
    assert_eq!(
        shape(&r),
        vec![
            s(Added, DataManifest, "leaf"),
            s(Added, DataManifest, "leaf"),
            s(Added, DataManifest, "leaf")
        ]
    );
    let counts: Vec<i64> = r.iter().map(|e| e.record_count).collect();
    assert_eq!(counts, vec![2, 2, 1]);
    assert_eq!(names_of(&planned(&c, &t)), names);
    // a rewrite of manifests compacts them into leaves of at most 2 again
    delete(&c, &["d2"]);
    let t = commit(&c, SnapshotProducer::rewrite_manifests()).unwrap();
    let counts: Vec<i64> = root(&c, &t).iter().map(|e| e.record_count).collect();
    assert_eq!(counts, vec![2, 2]);
    assert_eq!(names_of(&planned(&c, &t)), ["d1", "d3", "d4", "d5"]);
}

fn names_of(p: &Planned) -> Vec<String> {
    names(p)
}

#[test]
fn a_parquet_leaf_is_a_typed_error_naming_it() {
    // icefloe writes Avro manifests only (docs/v4.md); a leaf in Parquet (upstream Java's
    // default) is refused with an error naming the leaf, not misread
    let c = MemoryCatalog::new();
    let t = table_with_leaf(&c);
    let leaf = root(&c, &t)[0].location.clone();
    let io = c.io();
    io.delete(&leaf).unwrap();
    io.write_new(&leaf, b"PAR1\x15\x04\x15\x10\x15\x14PAR1")
        .unwrap();
    let e = TableScan::new(t.metadata.clone(), c.io())
        .plan_files()
        .unwrap_err();
    assert_eq!(
        e.location().map(|l| l.file.as_str()),
        Some(leaf.as_str()),
        "{e:?}"
    );
}

#[test]
fn a_commit_naming_files_reads_no_data_leaf_after_it_found_them() {
    // leaves M1 (d1-d3) and M2 (d4-d6); M2 made unreadable
    let c = MemoryCatalog::new();
    table_with_leaf(&c);
    set_property(&c, super::snapshot::ROOT_MAX_FILE_ENTRIES, "2");
    let t = append(
        &c,
        vec![data("d4", 1, 1), data("d5", 1, 1), data("d6", 1, 1)],
    );
    set_property(&c, super::snapshot::ROOT_MAX_FILE_ENTRIES, "100");
    let r = root(&c, &t);
    assert_eq!(r.len(), 2);
    c.io().delete(&r[1].location).unwrap();
    // d2 and a DV for d1 are both in M1, read first: M2 is not needed
    delete(&c, &["d2"]);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("dv1", "d1", 1, 4, 3));
    commit(&c, p).unwrap();
    // a file of M2 does need it, and so reports the missing leaf
    let mut p = SnapshotProducer::delete_files();
    p.delete_path(path("d5"));
    let e = commit(&c, p).unwrap_err();
    assert!(e.to_string().contains(&r[1].location), "{e}");
}
