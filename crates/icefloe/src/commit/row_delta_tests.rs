//! Row deltas (Java's `RowDelta`) against the in-memory test catalog: delete manifests,
//! summaries, DV replacement, dangling and aged-out deletes, and the conflict validations.

use std::collections::HashMap;
use std::sync::Arc;

use super::snapshot::validate::IsolationLevel;
use super::snapshot::{ManifestLayout, SnapshotProducer};
use super::test_catalog::MemoryCatalog;
use super::transaction::Transaction;
use crate::catalog::{Catalog, TableIdent, TableState};
use crate::error::Error;
use crate::expr::{Datum, Expression, Operation as ExprOp};
use crate::io::FileIO;
use crate::manifest::{
    read_manifest, read_manifest_list, DataContentType, DataFile, FileFormat, ManifestContent,
    ManifestSource, ManifestStatus, ReadManifestOptions,
};
use crate::spec::snapshot::{Operation, Snapshot};
use crate::spec::Literal;

fn ident() -> TableIdent {
    TableIdent::parse("db.t").unwrap()
}

fn create(catalog: &Arc<MemoryCatalog>, v: i32) -> TableState {
    super::test_catalog::create_id_cat_table(catalog, &ident(), v)
}

fn data(name: &str, cat: i32, rows: i64) -> DataFile {
    DataFile::new(
        DataContentType::Data,
        format!("mem://data/{name}.parquet"),
        FileFormat::Parquet,
        vec![Some(Literal::Int(cat))],
        rows,
        rows * 10,
    )
}

fn dv(puffin: &str, target: &str, cat: i32, offset: i64, rows: i64) -> DataFile {
    let mut f = DataFile::new(
        DataContentType::PositionDeletes,
        format!("mem://data/{puffin}.puffin"),
        FileFormat::Puffin,
        vec![Some(Literal::Int(cat))],
        rows,
        1000,
    );
    f.referenced_data_file = Some(format!("mem://data/{target}.parquet"));
    f.content_offset = Some(offset);
    f.content_size_in_bytes = Some(40);
    f
}

fn pos_deletes(name: &str, cat: i32, rows: i64) -> DataFile {
    DataFile::new(
        DataContentType::PositionDeletes,
        format!("mem://data/{name}-pos.parquet"),
        FileFormat::Parquet,
        vec![Some(Literal::Int(cat))],
        rows,
        rows * 7,
    )
}

fn eq_deletes(name: &str, cat: i32, rows: i64) -> DataFile {
    let mut f = DataFile::new(
        DataContentType::EqualityDeletes,
        format!("mem://data/{name}-eq.parquet"),
        FileFormat::Parquet,
        vec![Some(Literal::Int(cat))],
        rows,
        rows * 5,
    );
    f.equality_ids = Some(vec![1]);
    f
}

fn commit(catalog: &Arc<MemoryCatalog>, p: SnapshotProducer) -> crate::error::Result<TableState> {
    let mut tx = Transaction::load(catalog.clone(), ident())?;
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

fn summary(s: &Snapshot) -> HashMap<String, String> {
    s.summary
        .as_ref()
        .unwrap()
        .properties
        .iter()
        .cloned()
        .collect()
}

/// (content, path, offset, status, data sequence number) of every entry.
type Row = (
    ManifestContent,
    String,
    Option<i64>,
    ManifestStatus,
    Option<i64>,
);

fn rows(catalog: &Arc<MemoryCatalog>, snap: &Snapshot) -> Vec<Row> {
    let io = catalog.io();
    let mut out = Vec::new();
    for mf in read_manifest_list(io.as_ref(), snap.manifest_list.as_deref().unwrap()).unwrap() {
        let m = read_manifest(
            ManifestSource::file(io.as_ref(), &mf.manifest_path),
            &ReadManifestOptions::default().inherit_from(&mf),
        )
        .unwrap();
        for e in m.entries {
            out.push((
                mf.content,
                e.data_file.file_path,
                e.data_file.content_offset,
                e.status,
                e.sequence_number,
            ));
        }
    }
    out.sort_by(|a, b| (&a.1, a.2, a.3.id()).cmp(&(&b.1, b.2, b.3.id())));
    out
}

fn live_deletes(catalog: &Arc<MemoryCatalog>, snap: &Snapshot) -> Vec<(String, Option<i64>)> {
    rows(catalog, snap)
        .into_iter()
        .filter(|r| r.0 == ManifestContent::Deletes && r.3 != ManifestStatus::Deleted)
        .map(|r| (r.1, r.2))
        .collect()
}

#[test]
fn dvs_are_added_replaced_and_dropped_with_their_data_file() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 3);
    let s1 = append(
        &catalog,
        vec![data("a", 1, 10), data("b", 1, 20), data("c", 2, 5)],
    );
    let base_rows = s1.metadata.next_row_id;

    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("d1", "a", 1, 4, 2));
    p.add_delete_file(None, dv("d1", "b", 1, 44, 3));
    let s2 = commit(&catalog, p).unwrap();
    let snap = s2.metadata.current_snapshot().unwrap().clone();
    assert_eq!(snap.operation(), Some(Operation::Delete));
    let sum = summary(&snap);
    assert_eq!(sum["added-dvs"], "2");
    assert_eq!(sum["added-delete-files"], "2");
    assert_eq!(sum["added-position-deletes"], "5");
    assert_eq!(
        sum["added-files-size"], "80",
        "a DV counts its blob, not the Puffin file"
    );
    assert_eq!(sum["total-delete-files"], "2");
    assert_eq!(sum["total-position-deletes"], "5");
    assert_eq!(sum["changed-partition-count"], "1");
    assert!(!sum.contains_key("added-position-delete-files"));
    // deletes add no rows: row lineage is unaffected
    assert_eq!(s2.metadata.next_row_id, base_rows);
    assert_eq!(snap.added_rows, Some(0));
    let r = rows(&catalog, &snap);
    let d = r.iter().find(|r| r.2 == Some(4)).unwrap();
    assert_eq!(
        (d.0, d.3, d.4),
        (ManifestContent::Deletes, ManifestStatus::Added, Some(2))
    );

    // replacing a's DV: the old one is removed, the new one added. Validated from the
    // snapshot it was planned on: over the whole history (the default, as Java) the old DV
    // counts as a concurrently added one
    let mut p = SnapshotProducer::row_delta();
    p.remove_delete_file("mem://data/d1.puffin", Some(4));
    p.add_delete_file(None, dv("d2", "a", 1, 4, 5));
    let e = commit(&catalog, p).unwrap_err();
    assert!(e.to_string().contains("Found concurrently added DV"), "{e}");
    let mut p = SnapshotProducer::row_delta();
    p.validation_mut().from_snapshot = s2.metadata.current_snapshot_id;
    p.remove_delete_file("mem://data/d1.puffin", Some(4));
    p.add_delete_file(None, dv("d2", "a", 1, 4, 5));
    let s3 = commit(&catalog, p).unwrap();
    let snap = s3.metadata.current_snapshot().unwrap().clone();
    let sum = summary(&snap);
    assert_eq!(
        (sum["added-dvs"].as_str(), sum["removed-dvs"].as_str()),
        ("1", "1")
    );
    assert_eq!(sum["total-position-deletes"], "8");
    assert_eq!(sum["total-delete-files"], "2");
    assert_eq!(
        live_deletes(&catalog, &snap),
        vec![
            ("mem://data/d1.puffin".to_string(), Some(44)),
            ("mem://data/d2.puffin".to_string(), Some(4)),
        ]
    );

    // deleting data file b drops its DV (dangling); a's stays
    let mut p = SnapshotProducer::delete_files();
    p.delete_path("mem://data/b.parquet");
    let s4 = commit(&catalog, p).unwrap();
    let snap = s4.metadata.current_snapshot().unwrap().clone();
    let sum = summary(&snap);
    assert_eq!(sum["removed-dvs"], "1");
    assert_eq!(sum["total-delete-files"], "1");
    assert_eq!(
        live_deletes(&catalog, &snap),
        vec![("mem://data/d2.puffin".to_string(), Some(4))]
    );
}

#[test]
fn format_versions_decide_which_deletes_may_be_added() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 3);
    append(&catalog, vec![data("a", 1, 10)]);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, pos_deletes("a", 1, 1));
    let e = commit(&catalog, p).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");

    let catalog = MemoryCatalog::new();
    create(&catalog, 2);
    append(&catalog, vec![data("a", 1, 10)]);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("d1", "a", 1, 4, 1));
    assert!(commit(&catalog, p).is_err());
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, pos_deletes("a", 1, 1));
    p.add_delete_file(None, eq_deletes("a", 1, 2));
    p.add_file(data("n", 1, 3));
    let s = commit(&catalog, p).unwrap();
    let snap = s.metadata.current_snapshot().unwrap().clone();
    assert_eq!(snap.operation(), Some(Operation::Overwrite));
    let sum = summary(&snap);
    assert_eq!(sum["added-position-delete-files"], "1");
    assert_eq!(sum["added-equality-delete-files"], "1");
    assert_eq!(sum["added-equality-deletes"], "2");
    assert_eq!(sum["added-data-files"], "1");
}

#[test]
fn deletes_older_than_every_data_file_are_dropped() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2);
    append(&catalog, vec![data("a", 1, 10)]);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, pos_deletes("a", 1, 2));
    commit(&catalog, p).unwrap();
    // a is replaced by a newer file; the position deletes (seq 2) stay, since the bound is
    // the live data files of the parent and the last sequence number (2), as Java's
    let mut p = SnapshotProducer::overwrite_files();
    p.delete_path("mem://data/a.parquet");
    p.add_file(data("b", 1, 8));
    let s = commit(&catalog, p).unwrap();
    let snap = s.metadata.current_snapshot().unwrap().clone();
    assert_eq!(summary(&snap)["total-delete-files"], "1");
    // the next merging commit finds them older than every data file (seq 3): removed
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, eq_deletes("b", 1, 1));
    let s = commit(&catalog, p).unwrap();
    let snap = s.metadata.current_snapshot().unwrap().clone();
    let sum = summary(&snap);
    assert_eq!(sum["removed-position-delete-files"], "1");
    assert_eq!(sum["total-delete-files"], "1");
    assert_eq!(
        live_deletes(&catalog, &snap),
        vec![("mem://data/b-eq.parquet".to_string(), None)]
    );
}

fn filter_cat(v: i32) -> Expression {
    Expression::compare(ExprOp::Eq, "cat", Datum::Int(v))
}

#[test]
fn validations_fail_on_conflicting_concurrent_commits() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 3);
    let s1 = append(&catalog, vec![data("a", 1, 10), data("b", 2, 10)]);
    let start = s1.metadata.current_snapshot_id.unwrap();

    // concurrent: a DV for a
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("other", "a", 1, 4, 1));
    commit(&catalog, p).unwrap();

    // another DV for a, planned on `start`: always a conflict
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("mine", "a", 1, 4, 2));
    p.validation_mut().from_snapshot = Some(start);
    let e = commit(&catalog, p).unwrap_err();
    assert!(matches!(e, Error::ValidationFailed { .. }), "{e}");
    assert!(e.to_string().contains("Found concurrently added DV"), "{e}");

    // a DV for b under snapshot isolation, filter cat = 2: the concurrent delete is in cat 1
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("mine", "b", 2, 4, 2));
    p.validation_mut().from_snapshot = Some(start);
    p.validation_mut().conflict_filter = Some(filter_cat(2));
    IsolationLevel::Snapshot.apply(p.validation_mut());
    let ok = commit(&catalog, p).unwrap();
    let after_b = ok.metadata.current_snapshot_id.unwrap();

    // ... without the filter, the concurrent delete files conflict
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("mine2", "b", 2, 4, 2));
    p.validation_mut().from_snapshot = Some(start);
    IsolationLevel::Snapshot.apply(p.validation_mut());
    let e = commit(&catalog, p).unwrap_err();
    assert!(
        e.to_string().contains("Found new conflicting delete files"),
        "{e}"
    );

    // serializable: a concurrent append in the filter's partition conflicts
    append(&catalog, vec![data("c", 2, 1)]);
    let mut p = SnapshotProducer::row_delta();
    p.add_file(data("n", 2, 1));
    p.validation_mut().from_snapshot = Some(after_b);
    p.validation_mut().conflict_filter = Some(filter_cat(2));
    IsolationLevel::Serializable.apply(p.validation_mut());
    let e = commit(&catalog, p).unwrap_err();
    assert!(e.to_string().contains("Found conflicting files"), "{e}");
    // ... one in another partition does not
    let mut p = SnapshotProducer::row_delta();
    p.add_file(data("n", 3, 1));
    p.validation_mut().from_snapshot = Some(after_b);
    p.validation_mut().conflict_filter = Some(filter_cat(3));
    IsolationLevel::Serializable.apply(p.validation_mut());
    commit(&catalog, p).unwrap();

    // referenced data files removed concurrently
    let here = catalog
        .load_table(&ident())
        .unwrap()
        .metadata
        .current_snapshot_id;
    let mut p = SnapshotProducer::delete_files();
    p.delete_path("mem://data/c.parquet");
    commit(&catalog, p).unwrap();
    let mut p = SnapshotProducer::row_delta();
    let mut d = dv("mine3", "c", 2, 4, 1);
    d.content_size_in_bytes = Some(10);
    p.add_delete_file(None, d);
    p.validation_mut().from_snapshot = here;
    p.validation_mut().referenced_data_files = vec!["mem://data/c.parquet".into()];
    // a delete operation is only checked with validate_deleted_files
    let mut q = SnapshotProducer::row_delta();
    q.add_delete_file(None, dv("mine4", "c", 2, 4, 1));
    q.validation_mut().from_snapshot = here;
    q.validation_mut().referenced_data_files = vec!["mem://data/c.parquet".into()];
    q.validation_mut().validate_deleted_files = true;
    let e = commit(&catalog, q).unwrap_err();
    assert!(e.to_string().contains("missing data files"), "{e}");
    // (without it the delete goes through, as Java's)
    commit(&catalog, p).unwrap();

    // a starting snapshot that is not an ancestor
    let mut p = SnapshotProducer::row_delta();
    p.add_file(data("z", 1, 1));
    p.validation_mut().from_snapshot = Some(12345);
    assert!(commit(&catalog, p).is_err());
}

#[test]
fn removing_a_missing_delete_file_fails_only_when_validated() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2);
    append(&catalog, vec![data("a", 1, 10)]);
    let mut p = SnapshotProducer::row_delta();
    p.remove_delete_file("mem://data/none.parquet", None);
    p.validation_mut().validate_deleted_files = true;
    let e = commit(&catalog, p).unwrap_err();
    assert!(
        e.to_string().contains("Missing required files to delete"),
        "{e}"
    );
}

#[test]
fn position_deletes_merge_into_the_live_dv_and_replace_it() {
    use crate::puffin::DeletionVector;
    use crate::spec::schema::reserved;
    use crate::write::position_deletes::{deletes_for, position_delete_file, write_dvs};

    let catalog = MemoryCatalog::new();
    create(&catalog, 3);
    append(&catalog, vec![data("a", 1, 10), data("b", 2, 10)]);
    let io = catalog.io();
    let a = "mem://data/a.parquet".to_string();
    let md = catalog.load_table(&ident()).unwrap().metadata;
    let found = deletes_for(io.as_ref(), &md, None, std::slice::from_ref(&a)).unwrap();
    assert!(found[&a].dv.is_none());
    let first = write_dvs(
        io.as_ref(),
        "mem://data/one.puffin",
        &[(&found[&a], DeletionVector::from_positions([1, 2]).unwrap())],
    )
    .unwrap();
    assert!(first.removed.is_empty());
    let mut p = SnapshotProducer::row_delta();
    for (s, f) in first.added.clone() {
        p.add_delete_file(Some(s), f);
    }
    let md = commit(&catalog, p).unwrap().metadata;

    let found = deletes_for(io.as_ref(), &md, None, std::slice::from_ref(&a)).unwrap();
    assert_eq!(found[&a].dv.as_ref(), Some(&first.added[0].1));
    let second = write_dvs(
        io.as_ref(),
        "mem://data/two.puffin",
        &[(&found[&a], DeletionVector::from_positions([7]).unwrap())],
    )
    .unwrap();
    assert_eq!(second.removed[0].1, first.added[0].1);
    let new = &second.added[0].1;
    assert_eq!(new.record_count, 3);
    assert_eq!(new.referenced_data_file.as_deref(), Some(a.as_str()));
    assert_eq!(dv_positions(io.as_ref(), new), vec![1, 2, 7]);
    // unknown data files are refused
    assert!(deletes_for(io.as_ref(), &md, None, &["mem://data/zz.parquet".into()]).is_err());
    // v2 rows are file-scoped, with Java's full bounds of file_path and pos
    let row = position_delete_file(&found[&a], "mem://data/p.parquet", 3, 99, Some((2, 40)));
    assert_eq!(row.referenced_data_file.as_deref(), Some(a.as_str()));
    assert_eq!(row.partition, vec![Some(Literal::Int(1))]);
    let bounds = |path: &str, pos: i64| {
        Some(vec![
            (reserved::DELETE_FILE_PATH_ID, path.as_bytes().to_vec()),
            (reserved::DELETE_POS_ID, pos.to_le_bytes().to_vec()),
        ])
    };
    assert_eq!(row.lower_bounds, bounds(&a, 2));
    assert_eq!(row.upper_bounds, bounds(&a, 40));
    // an empty file has no bounds
    let empty = position_delete_file(&found[&a], "mem://data/q.parquet", 0, 99, None);
    assert_eq!((empty.lower_bounds, empty.upper_bounds), (None, None));
}

#[test]
fn delete_and_overwrite_by_row_filter() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2);
    append(
        &catalog,
        vec![data("a", 1, 10), data("b", 2, 10), data("c", 2, 5)],
    );
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, eq_deletes("b", 2, 1));
    p.add_delete_file(None, pos_deletes("a", 1, 1));
    commit(&catalog, p).unwrap();

    // cat = 2: b and c go (strict partition match), with the delete files of partition 2
    let mut p = SnapshotProducer::delete_files();
    p.delete_by_row_filter(filter_cat(2));
    let s = commit(&catalog, p).unwrap();
    let snap = s.metadata.current_snapshot().unwrap().clone();
    assert_eq!(snap.operation(), Some(Operation::Delete));
    let sum = summary(&snap);
    assert_eq!(sum["deleted-data-files"], "2");
    assert_eq!(sum["removed-equality-delete-files"], "1");
    assert_eq!(
        live_deletes(&catalog, &snap),
        vec![("mem://data/a-pos.parquet".to_string(), None)]
    );

    // id > 3 may match some rows of a only (no metrics): refused
    let mut p = SnapshotProducer::delete_files();
    p.delete_by_row_filter(Expression::compare(ExprOp::Gt, "id", Datum::Long(3)));
    let e = commit(&catalog, p).unwrap_err();
    assert!(
        e.to_string().contains("some, but not all, rows match"),
        "{e}"
    );

    // overwrite cat = 1 with a new file of cat 1; a file of cat 3 does not match the filter
    let mut p = SnapshotProducer::overwrite_files();
    p.delete_by_row_filter(filter_cat(1));
    p.add_file(data("n", 3, 1));
    p.validate_added_files_match_filter();
    let e = commit(&catalog, p).unwrap_err();
    assert!(e.to_string().contains("do not match filter"), "{e}");
    let mut p = SnapshotProducer::overwrite_files();
    p.delete_by_row_filter(filter_cat(1));
    p.add_file(data("n", 1, 1));
    p.validate_added_files_match_filter();
    let s = commit(&catalog, p).unwrap();
    let snap = s.metadata.current_snapshot().unwrap().clone();
    assert_eq!(snap.operation(), Some(Operation::Overwrite));
    let sum = summary(&snap);
    assert_eq!(sum["deleted-data-files"], "1");
    assert_eq!(sum["added-data-files"], "1");
    assert_eq!(sum["total-delete-files"], "0");
}

#[test]
fn overwrite_by_filter_validates_concurrent_changes() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2);
    let s = append(&catalog, vec![data("a", 1, 10), data("b", 2, 10)]);
    let start = s.metadata.current_snapshot_id;
    append(&catalog, vec![data("c", 1, 1)]);
    let mut p = SnapshotProducer::overwrite_files();
    p.delete_by_row_filter(filter_cat(1));
    p.add_file(data("n", 1, 1));
    p.validation_mut().from_snapshot = start;
    p.validation_mut().no_conflicting_data_files = true;
    let e = commit(&catalog, p).unwrap_err();
    assert!(e.to_string().contains("Found conflicting files"), "{e}");
    // in another partition the concurrent append is no conflict
    let mut p = SnapshotProducer::overwrite_files();
    p.delete_by_row_filter(filter_cat(2));
    p.add_file(data("n", 2, 1));
    p.validation_mut().from_snapshot = start;
    p.validation_mut().no_conflicting_data_files = true;
    p.validation_mut().no_conflicting_delete_files = true;
    commit(&catalog, p).unwrap();
}

#[test]
fn rewrite_files_keeps_the_data_sequence_number_and_validates() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2);
    let s1 = append(&catalog, vec![data("a", 1, 10), data("b", 1, 10)]);
    let start = s1.metadata.current_snapshot_id;
    let seq = s1.metadata.current_snapshot().unwrap().sequence_number;
    // position deletes added since `start` for a replaced file: a conflict
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, pos_deletes("x", 1, 1));
    commit(&catalog, p).unwrap();

    let mut p = SnapshotProducer::rewrite_files();
    p.delete_path("mem://data/a.parquet");
    p.delete_path("mem://data/b.parquet");
    p.add_file(data("ab", 1, 20));
    p.data_sequence_number(seq);
    p.validation_mut().from_snapshot = start;
    let e = commit(&catalog, p).unwrap_err();
    assert!(
        e.to_string()
            .contains("found new delete for replaced data file"),
        "{e}"
    );

    let here = catalog
        .load_table(&ident())
        .unwrap()
        .metadata
        .current_snapshot_id;
    // an equality delete since `here` is no conflict with the kept sequence number: it
    // still applies to the new file (Java's ignoreEqualityDeletes)
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, eq_deletes("y", 1, 1));
    commit(&catalog, p).unwrap();
    let mut p = SnapshotProducer::rewrite_files();
    p.delete_path("mem://data/a.parquet");
    p.delete_path("mem://data/b.parquet");
    p.add_file(data("ab", 1, 20));
    p.data_sequence_number(seq);
    p.validation_mut().from_snapshot = here;
    let s = commit(&catalog, p).unwrap();
    let snap = s.metadata.current_snapshot().unwrap().clone();
    assert_eq!(snap.operation(), Some(Operation::Replace));
    let ab = rows(&catalog, &snap)
        .into_iter()
        .find(|r| r.1.ends_with("ab.parquet"))
        .unwrap();
    assert_eq!((ab.3, ab.4), (ManifestStatus::Added, Some(seq)));
    assert_eq!(summary(&snap)["total-records"], "20");

    // replaced files must be live; something must be replaced
    let mut p = SnapshotProducer::rewrite_files();
    p.delete_path("mem://data/a.parquet");
    p.add_file(data("z", 1, 1));
    assert!(matches!(
        commit(&catalog, p).unwrap_err(),
        Error::ValidationFailed { .. }
    ));
    let mut p = SnapshotProducer::rewrite_files();
    p.add_file(data("z", 1, 1));
    assert!(matches!(
        commit(&catalog, p).unwrap_err(),
        Error::InvalidArgument { .. }
    ));
}

fn by_partition() -> SnapshotProducer {
    let mut p = SnapshotProducer::rewrite_manifests();
    p.manifest_layout(ManifestLayout::ByPartition);
    p
}

#[test]
fn rewrite_manifests_clusters_by_partition() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 3);
    append(&catalog, vec![data("a", 1, 10), data("b", 2, 10)]);
    append(&catalog, vec![data("c", 1, 5)]);
    let before = append(&catalog, vec![data("d", 2, 5)]);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("d1", "a", 1, 4, 1));
    commit(&catalog, p).unwrap();
    let old = rows(&catalog, before.metadata.current_snapshot().unwrap());

    let s = commit(&catalog, by_partition()).unwrap();
    let snap = s.metadata.current_snapshot().unwrap().clone();
    assert_eq!(snap.operation(), Some(Operation::Replace));
    let sum = summary(&snap);
    assert_eq!(sum["manifests-created"], "2");
    assert_eq!(sum["manifests-replaced"], "3");
    assert_eq!(sum["manifests-kept"], "1");
    assert_eq!(sum["entries-processed"], "4");
    assert_eq!(sum["total-data-files"], "4");
    let io = catalog.io();
    let lists = read_manifest_list(io.as_ref(), snap.manifest_list.as_deref().unwrap()).unwrap();
    let data_lists: Vec<_> = lists
        .iter()
        .filter(|m| m.content == ManifestContent::Data)
        .collect();
    assert_eq!(data_lists.len(), 2);
    for mf in data_lists {
        let m = read_manifest(
            ManifestSource::file(io.as_ref(), &mf.manifest_path),
            &ReadManifestOptions::default().inherit_from(mf),
        )
        .unwrap();
        let first = &m.entries[0].data_file.partition;
        assert!(
            m.entries.iter().all(|e| &e.data_file.partition == first),
            "one partition per manifest"
        );
        assert!(m
            .entries
            .iter()
            .all(|e| e.status == ManifestStatus::Existing));
    }
    // same files with the same data sequence numbers
    let now: Vec<_> = rows(&catalog, &snap)
        .into_iter()
        .filter(|r| r.0 == ManifestContent::Data)
        .map(|r| (r.1, r.4))
        .collect();
    let was: Vec<_> = old.into_iter().map(|r| (r.1, r.4)).collect();
    assert_eq!(now, was);
}

/// A real DV in its own Puffin file for `target` deleting `positions`.
fn written_dv(
    catalog: &Arc<MemoryCatalog>,
    puffin: &str,
    target: &str,
    positions: &[i64],
) -> DataFile {
    let dvec = crate::puffin::DeletionVector::from_positions(positions.iter().copied()).unwrap();
    let path = format!("mem://data/{puffin}.puffin");
    let target_path = format!("mem://data/{target}.parquet");
    let r = crate::puffin::write_deletion_vectors(
        catalog.io.as_ref(),
        &path,
        [(target_path.as_str(), &dvec)],
    )
    .unwrap();
    let mut f = dv(
        puffin,
        target,
        1,
        r[0].offset as i64,
        positions.len() as i64,
    );
    f.content_size_in_bytes = Some(r[0].length as i64);
    f.file_size_in_bytes = catalog.io.file_size(&path).unwrap() as i64;
    f
}

#[test]
fn two_new_dvs_for_one_data_file_are_merged_into_one() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 3);
    append(&catalog, vec![data("a", 1, 10), data("b", 1, 10)]);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, written_dv(&catalog, "d1", "a", &[0, 3]));
    p.add_delete_file(None, written_dv(&catalog, "d2", "b", &[1]));
    p.add_delete_file(None, written_dv(&catalog, "d3", "a", &[3, 7]));
    let s = commit(&catalog, p).unwrap();
    let snap = s.metadata.current_snapshot().unwrap().clone();
    let sum = summary(&snap);
    assert_eq!(sum["added-delete-files"], "2");
    assert_eq!(sum["added-dvs"], "2");
    assert_eq!(sum["added-position-deletes"], "4");
    let io = catalog.io.as_ref();
    let mut dvs = Vec::new();
    for mf in read_manifest_list(io, snap.manifest_list.as_ref().unwrap()).unwrap() {
        if mf.content == ManifestContent::Deletes {
            dvs.extend(
                read_manifest(
                    ManifestSource::file(io, &mf.manifest_path),
                    &ReadManifestOptions::default().inherit_from(&mf),
                )
                .unwrap()
                .entries,
            );
        }
    }
    assert_eq!(dvs.len(), 2);
    // b's DV is kept as it is; a's two are one new DV in the merged Puffin file
    assert_eq!(dvs[0].data_file.file_path, "mem://data/d2.puffin");
    let merged = &dvs[1].data_file;
    let expected = format!("/data/merged-dvs-{}-1.puffin", snap.snapshot_id);
    assert!(
        merged.file_path.ends_with(&expected),
        "{}",
        merged.file_path
    );
    assert_eq!(
        merged.referenced_data_file.as_deref(),
        Some("mem://data/a.parquet")
    );
    assert_eq!(merged.record_count, 3);
    assert_eq!(
        merged.file_size_in_bytes as u64,
        io.file_size(&merged.file_path).unwrap()
    );
    assert_eq!(dv_positions(io, merged), vec![0, 3, 7]);

    // DVs of one data file in two partitions cannot be merged, as in Java
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, written_dv(&catalog, "e1", "c", &[2]));
    let mut other = written_dv(&catalog, "e2", "c", &[4]);
    other.partition = vec![Some(Literal::Int(2))];
    p.add_delete_file(None, other);
    let e = commit(&catalog, p).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
}

fn manifest_counts(catalog: &Arc<MemoryCatalog>, snap: &Snapshot) -> Vec<(ManifestContent, i32)> {
    read_manifest_list(catalog.io.as_ref(), snap.manifest_list.as_ref().unwrap())
        .unwrap()
        .iter()
        .map(|m| {
            (
                m.content,
                m.added_files_count.unwrap_or(0) + m.existing_files_count.unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn new_manifests_roll_every_250_entries_past_the_target_size() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2);
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.set_properties(vec![(
        "commit.manifest.target-size-bytes".to_string(),
        "1".to_string(),
    )])
    .unwrap();
    tx.commit().unwrap();
    let files: Vec<DataFile> = (0..600).map(|i| data(&format!("f{i}"), 1, 1)).collect();
    let s = append(&catalog, files);
    let snap = s.metadata.current_snapshot().unwrap().clone();
    let data_m = ManifestContent::Data;
    assert_eq!(
        manifest_counts(&catalog, &snap),
        vec![(data_m, 250), (data_m, 250), (data_m, 100)]
    );
    // rewrite_manifests rolls on every entry once the target is reached (Java's
    // BaseRewriteManifests writer): one file per manifest at a 1-byte target
    let s = commit(&catalog, by_partition()).unwrap();
    let snap = s.metadata.current_snapshot().unwrap().clone();
    let counts = manifest_counts(&catalog, &snap);
    assert_eq!(counts.len(), 600);
    assert!(counts.iter().all(|c| *c == (data_m, 1)));
}

/// The `cat` partition value of each entry of each data manifest, in manifest order.
fn data_manifest_partitions(catalog: &Arc<MemoryCatalog>, snap: &Snapshot) -> Vec<Vec<i32>> {
    let io = catalog.io();
    read_manifest_list(io.as_ref(), snap.manifest_list.as_deref().unwrap())
        .unwrap()
        .iter()
        .filter(|mf| mf.content == ManifestContent::Data)
        .map(|mf| {
            let m = read_manifest(
                ManifestSource::file(io.as_ref(), &mf.manifest_path),
                &ReadManifestOptions::default().inherit_from(mf),
            )
            .unwrap();
            assert!(m
                .entries
                .iter()
                .all(|e| e.status == ManifestStatus::Existing));
            m.entries
                .iter()
                .map(|e| match e.data_file.partition[0] {
                    Some(Literal::Int(v)) => v,
                    ref other => panic!("partition {other:?}"),
                })
                .collect()
        })
        .collect()
}

fn set_property(catalog: &Arc<MemoryCatalog>, key: &str, value: String) {
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.set_properties(vec![(key.to_string(), value)]).unwrap();
    tx.commit().unwrap();
}

#[test]
fn compacting_manifests_sorts_entries_by_partition_into_target_sized_runs() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 3);
    // 12 appends of one file in each of 4 partitions, in rotating order
    for i in 0..12 {
        let files = (0..4)
            .map(|k| data(&format!("f{i}-{k}"), (k + i) % 4, 10))
            .collect();
        append(&catalog, files);
    }
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, dv("d1", "f0-0", 0, 4, 1));
    let before = commit(&catalog, p).unwrap();
    let before_snap = before.metadata.current_snapshot().unwrap().clone();
    let io = catalog.io();
    let list = before_snap.manifest_list.as_deref().unwrap();
    let total: i64 = read_manifest_list(io.as_ref(), list)
        .unwrap()
        .iter()
        .filter(|m| m.content == ManifestContent::Data)
        .map(|m| m.manifest_length)
        .sum();
    // two manifests' worth of bytes: the 48 entries go into 2 runs of 2 partitions
    set_property(
        &catalog,
        "commit.manifest.target-size-bytes",
        (total / 2 + 1).to_string(),
    );
    let md = catalog.load_table(&ident()).unwrap().metadata;
    assert_eq!(
        super::manifests_to_rewrite(io.as_ref(), &md, None, None).unwrap(),
        12,
        "the 12 data manifests; the one small delete manifest is left alone"
    );

    let s = commit(&catalog, SnapshotProducer::rewrite_manifests()).unwrap();
    let snap = s.metadata.current_snapshot().unwrap().clone();
    assert_eq!(snap.operation(), Some(Operation::Replace));
    let sum = summary(&snap);
    assert_eq!(sum["manifests-created"], "2");
    assert_eq!(sum["manifests-replaced"], "12");
    assert_eq!(sum["manifests-kept"], "1");
    assert_eq!(sum["entries-processed"], "0");
    assert_eq!(
        data_manifest_partitions(&catalog, &snap),
        vec![
            [vec![0; 12], vec![1; 12]].concat(),
            [vec![2; 12], vec![3; 12]].concat()
        ]
    );
    let files = |snap: &Snapshot| -> Vec<_> {
        rows(&catalog, snap)
            .into_iter()
            .map(|r| (r.0, r.1, r.2, r.4))
            .collect()
    };
    assert_eq!(files(&snap), files(&before_snap));
    assert_eq!(
        live_deletes(&catalog, &snap),
        live_deletes(&catalog, &before_snap)
    );

    // the two new manifests fit in one: a second compaction merges them, a third has
    // nothing to do
    let md = catalog.load_table(&ident()).unwrap().metadata;
    set_property(
        &catalog,
        "commit.manifest.target-size-bytes",
        total.to_string(),
    );
    let md2 = catalog.load_table(&ident()).unwrap().metadata;
    assert_eq!(
        super::manifests_to_rewrite(io.as_ref(), &md, None, None).unwrap(),
        2
    );
    assert_eq!(
        super::manifests_to_rewrite(io.as_ref(), &md2, None, None).unwrap(),
        2
    );
    let s = commit(&catalog, SnapshotProducer::rewrite_manifests()).unwrap();
    let snap = s.metadata.current_snapshot().unwrap().clone();
    let merged = data_manifest_partitions(&catalog, &snap);
    assert_eq!(merged.len(), 1);
    assert!(merged[0].windows(2).all(|w| w[0] <= w[1]), "sorted");
    assert_eq!(
        super::manifests_to_rewrite(io.as_ref(), &s.metadata, None, None).unwrap(),
        0
    );
}

#[test]
fn compaction_settings_are_checked_and_sort_by_picks_the_key() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2);
    append(&catalog, vec![data("a", 2, 1), data("b", 1, 1)]);
    let s = append(&catalog, vec![data("c", 1, 1)]);
    let io = catalog.io();
    let md = s.metadata;
    let count = |spec: Option<i32>, sort: Option<&[String]>| {
        super::manifests_to_rewrite(io.as_ref(), &md, spec, sort)
    };
    assert_eq!(count(None, None).unwrap(), 2);
    assert_eq!(count(Some(0), Some(&["cat".to_string()])).unwrap(), 2);
    let e = count(Some(7), None).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    let e = count(None, Some(&["nope".to_string()])).unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");

    let mut p = SnapshotProducer::rewrite_manifests();
    p.manifest_layout(ManifestLayout::Compact {
        spec_id: None,
        sort_by: Some(vec!["cat".to_string()]),
    });
    let s = commit(&catalog, p).unwrap();
    let snap = s.metadata.current_snapshot().unwrap().clone();
    assert_eq!(
        data_manifest_partitions(&catalog, &snap),
        vec![vec![1, 1, 2]]
    );
    let mut p = SnapshotProducer::rewrite_manifests();
    p.manifest_layout(ManifestLayout::Compact {
        spec_id: Some(3),
        sort_by: None,
    });
    assert!(commit(&catalog, p).is_err());
}

#[test]
fn deletes_whole_files_when_every_file_is_kept_or_fully_matched() {
    use super::snapshot::deletes_whole_files;
    let catalog = MemoryCatalog::new();
    create(&catalog, 2);
    let state = append(&catalog, vec![data("a", 1, 10), data("b", 2, 10)]);
    let md = &state.metadata;
    let snap = md.current_snapshot().unwrap();
    let io = catalog.io();
    let by_cat = |v| Expression::compare(ExprOp::Eq, "cat", Datum::Int(v));
    // a whole partition: its files go whole, the others stay
    assert!(deletes_whole_files(io.clone(), md.clone(), snap.snapshot_id, &by_cat(1)).unwrap());
    assert!(deletes_whole_files(io.clone(), md.clone(), snap.snapshot_id, &by_cat(7)).unwrap());
    // a row filter without metrics to prove it: rows must be read
    let by_id = Expression::compare(ExprOp::Gt, "id", Datum::Long(3));
    assert!(!deletes_whole_files(io.clone(), md.clone(), snap.snapshot_id, &by_id).unwrap());
    let both = Expression::and(by_cat(2), by_id);
    assert!(!deletes_whole_files(io.clone(), md.clone(), snap.snapshot_id, &both).unwrap());
}

/// A row-level write handed what its scan planned (`write::scanned_deletes`) finds each
/// data file's DV there, as the manifests say it, and merges it without reading a manifest;
/// without it the writer reads them. Bad scanned bytes are typed errors naming the field.
#[test]
fn row_level_writers_take_the_deletes_their_scan_planned() {
    use crate::scan::task_groups::plan_packed;
    use crate::scan::{SplitOptions, TableScan};
    use crate::write::delete_writer::write_position_deletes;
    use crate::write::position_deletes::deletes_for;
    use crate::write::scanned_deletes::scanned_deletes_for;

    for version in [3, 4] {
        let catalog = MemoryCatalog::new();
        create(&catalog, version);
        append(&catalog, vec![data("a", 1, 10), data("b", 2, 10)]);
        let io = catalog.io();
        let (a, b) = (
            "mem://data/a.parquet".to_string(),
            "mem://data/b.parquet".to_string(),
        );
        let md = catalog.load_table(&ident()).unwrap().metadata;
        let sid = md.current_snapshot_id.unwrap();
        let first =
            write_position_deletes(&io, &md, sid, &[(a.clone(), vec![1, 2])], "t1", None).unwrap();
        let mut p = SnapshotProducer::row_delta();
        for (s, f) in first.added.clone() {
            p.add_delete_file(Some(s), f);
        }
        let md = commit(&catalog, p).unwrap().metadata;
        let sid = md.current_snapshot_id.unwrap();

        let scan = TableScan::new(md.clone(), io.clone());
        let packed = plan_packed(&scan, &SplitOptions::from_table(&md).unwrap()).unwrap();
        assert!(
            packed.scanned_deletes(1).unwrap().is_none(),
            "over the limit"
        );
        let scanned = packed.scanned_deletes(100).unwrap().unwrap();
        let paths = [a.clone(), b.clone()];
        let ours = scanned_deletes_for(&md, sid, &scanned, &paths).unwrap();
        let read = deletes_for(io.as_ref(), &md, None, &paths).unwrap();
        for p in &paths {
            let (x, y) = (&ours[p], &read[p]);
            assert_eq!(x.spec_id, y.spec_id, "v{version} {p}");
            assert_eq!(x.data.data_file.partition, y.data.data_file.partition);
            assert_eq!(x.data.data_file.record_count, y.data.data_file.record_count);
            assert_eq!(x.data.sequence_number, y.data.sequence_number);
            assert!(x.position_files.is_empty() && y.position_files.is_empty());
            let key = |f: &DataFile| {
                (
                    f.file_path.clone(),
                    f.content_offset,
                    f.content_size_in_bytes,
                    f.record_count,
                    f.referenced_data_file.clone(),
                    f.partition.clone(),
                )
            };
            assert_eq!(
                x.dv.as_ref().map(key),
                y.dv.as_ref().map(key),
                "v{version} {p}"
            );
        }
        assert!(ours[&a].dv.is_some() && ours[&b].dv.is_none());

        // the table's manifests (lists, roots, leaves) gone: only the scanned deletes serve
        for f in io.list(&md.location).unwrap() {
            if f.ends_with(".avro") {
                io.delete(&f).unwrap();
            }
        }
        let positions = [(a.clone(), vec![7]), (b.clone(), vec![0])];
        assert!(write_position_deletes(&io, &md, sid, &positions, "t2", None).is_err());
        let second =
            write_position_deletes(&io, &md, sid, &positions, "t2", Some(&scanned)).unwrap();
        // a's old DV is replaced (a commit removes a DV by path and offset)
        let at = |files: &[(i32, DataFile)]| -> Vec<(i32, String, Option<i64>)> {
            files
                .iter()
                .map(|(s, f)| (*s, f.file_path.clone(), f.content_offset))
                .collect()
        };
        assert_eq!(at(&second.removed), at(&first.added), "v{version}");
        assert_eq!(
            read[&a].dv.as_ref().map(|f| f.file_size_in_bytes),
            ours[&a].dv.as_ref().map(|f| f.file_size_in_bytes),
            "v{version}"
        );
        let new_a = &second
            .added
            .iter()
            .find(|f| f.1.referenced_data_file.as_ref() == Some(&a))
            .unwrap()
            .1;
        assert_eq!(dv_positions(io.as_ref(), new_a), vec![1, 2, 7], "merged");

        // a path the scan did not plan, another snapshot, damaged bytes
        let err =
            |r: crate::error::Result<_>| r.map(|_: HashMap<_, _>| ()).unwrap_err().to_string();
        let e = err(scanned_deletes_for(
            &md,
            sid,
            &scanned,
            &["mem://data/zz.parquet".into()],
        ));
        assert!(e.contains("did not plan") || e.contains("planned"), "{e}");
        assert!(e.contains("zz.parquet"), "{e}");
        let e = err(scanned_deletes_for(&md, sid + 1, &scanned, &paths));
        assert!(e.contains("icefloe.snapshot_id"), "{e}");
        let e = err(scanned_deletes_for(
            &md,
            sid,
            &scanned[..scanned.len() / 2],
            &paths,
        ));
        assert!(e.contains("scanned deletes"), "{e}");
        let e = err(scanned_deletes_for(&md, sid, b"garbage", &paths));
        assert!(e.contains("scanned deletes"), "{e}");
    }
}

/// Scanned-delete rows without a column the writer needs are refused, naming it.
#[test]
fn scanned_deletes_without_a_column_name_it() {
    use crate::write::scanned_deletes::scanned_deletes_for;
    use arrow_array::{RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    let catalog = MemoryCatalog::new();
    create(&catalog, 3);
    let md = append(&catalog, vec![data("a", 1, 10)]).metadata;
    let sid = md.current_snapshot_id.unwrap();
    let schema = Arc::new(
        Schema::new(vec![Field::new("file_path", DataType::Utf8, false)]).with_metadata(
            HashMap::from([(
                crate::scan::plan_batches::SNAPSHOT_ID_KEY.to_string(),
                sid.to_string(),
            )]),
        ),
    );
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(StringArray::from(vec!["mem://data/a.parquet"]))],
    )
    .unwrap();
    let mut ipc = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut ipc, &schema).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    drop(w);
    let e = scanned_deletes_for(&md, sid, &ipc, &["mem://data/a.parquet".into()]).unwrap_err();
    assert!(e.to_string().contains("file_format is missing"), "{e}");
}

/// v2: a position delete file that names no referenced data file may be scoped to one by
/// its `file_path` bounds, which a plan does not carry, so a data file with one has its
/// deletes read from the manifests; with only file-scoped ones named, the plan serves.
#[test]
fn v2_writers_read_the_manifests_only_for_unreferenced_position_deletes() {
    use crate::scan::task_groups::plan_packed;
    use crate::scan::{SplitOptions, TableScan};
    use crate::write::position_deletes::deletes_of;

    let catalog = MemoryCatalog::new();
    create(&catalog, 2);
    append(&catalog, vec![data("a", 1, 10), data("b", 2, 10)]);
    let mut scoped = pos_deletes("a", 1, 2);
    scoped.referenced_data_file = Some("mem://data/a.parquet".into());
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(Some(0), scoped.clone());
    p.add_delete_file(Some(0), pos_deletes("b", 2, 3));
    let md = commit(&catalog, p).unwrap().metadata;
    let io = catalog.io();
    let scan = TableScan::new(md.clone(), io.clone());
    let packed = plan_packed(&scan, &SplitOptions::from_table(&md).unwrap()).unwrap();
    let scanned = packed.scanned_deletes(100).unwrap().unwrap();
    let (a, b) = (
        vec!["mem://data/a.parquet".to_string()],
        vec!["mem://data/b.parquet".to_string()],
    );
    let from_manifests = deletes_of(io.as_ref(), &md, None, &b, None).unwrap();
    assert_eq!(from_manifests[&b[0]].position_files.len(), 1);

    for f in io.list(&md.location).unwrap() {
        if f.ends_with(".avro") {
            io.delete(&f).unwrap();
        }
    }
    let found = deletes_of(io.as_ref(), &md, None, &a, Some(&scanned)).unwrap();
    let files = &found[&a[0]].position_files;
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].file_path, scoped.file_path);
    assert_eq!(files[0].referenced_data_file, scoped.referenced_data_file);
    // b's partition-wide file names no data file: the manifests are read (here: gone)
    assert!(deletes_of(io.as_ref(), &md, None, &b, Some(&scanned)).is_err());
}

/// A row delta replacing a DV checks that the DV is live in the delete manifests only
/// (Java's delete-file filter): the data manifests unreadable, it commits; removing a data
/// file checks the data manifests, and fails on them.
#[test]
fn replacing_a_dv_validates_against_the_delete_manifests_only() {
    use crate::manifest::{read_manifest_list, ManifestContent};

    let catalog = MemoryCatalog::new();
    create(&catalog, 3);
    append(&catalog, vec![data("a", 1, 10)]);
    append(&catalog, vec![data("b", 2, 10)]);
    let old = dv("one", "a", 1, 4, 2);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(Some(0), old.clone());
    let state = commit(&catalog, p).unwrap();
    let io = catalog.io();
    let list = state
        .metadata
        .current_snapshot()
        .unwrap()
        .manifest_list
        .clone()
        .unwrap();
    for m in read_manifest_list(io.as_ref(), &list).unwrap() {
        if m.content == ManifestContent::Data {
            io.delete(&m.manifest_path).unwrap();
            io.write_new(&m.manifest_path, b"not a manifest").unwrap();
        }
    }
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(Some(0), dv("two", "a", 1, 4, 3));
    p.remove_delete_file(old.file_path.clone(), old.content_offset);
    // validated from the snapshot the writer read, as a row-level write does
    p.validation_mut().from_snapshot = state.metadata.current_snapshot_id;
    p.validation_mut().validate_deleted_files = true;
    commit(&catalog, p).unwrap();

    let mut p = SnapshotProducer::row_delta();
    p.delete_path("mem://data/b.parquet");
    p.validation_mut().validate_deleted_files = true;
    assert!(commit(&catalog, p).is_err());
}

/// The positions DV file `f` (a row of a Puffin file) deletes.
fn dv_positions(io: &dyn FileIO, f: &DataFile) -> Vec<i64> {
    crate::puffin::read_deletion_vector(
        io,
        &f.file_path,
        f.content_offset.unwrap() as u64,
        f.content_size_in_bytes.unwrap() as u64,
    )
    .unwrap()
    .iter()
    .collect()
}
