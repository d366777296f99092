//! Tests of `rewrite_position_delete_files` planning and units on the in-memory catalog
//! (the Java comparison is `tests/test_rewrite_position_deletes_oracle.py`).

use std::collections::HashMap;
use std::sync::Arc;

use super::*;
use crate::catalog::{TableIdent, TableState};
use crate::commit::snapshot::SnapshotProducer;
use crate::commit::test_catalog::MemoryCatalog;
use crate::commit::transaction::{create_table, Transaction};
use crate::manifest::{read_manifest, read_manifest_list, ManifestSource, ReadManifestOptions};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::spec::sort::SortOrder;
use crate::spec::types::{NestedField, PrimitiveType, Type};

fn ident() -> TableIdent {
    TableIdent::parse("db.t").unwrap()
}

fn create(catalog: &Arc<MemoryCatalog>, version: i32) -> TableState {
    let schema = Schema::new(
        0,
        vec![NestedField::required(
            1,
            "id",
            Type::Primitive(PrimitiveType::Long),
        )],
        vec![],
    )
    .unwrap();
    create_table(
        catalog.clone(),
        &ident(),
        &schema,
        &PartitionSpec::unpartitioned(),
        &SortOrder::unsorted(),
        None,
        &[],
        Some(version),
    )
    .unwrap()
}

fn commit(catalog: &Arc<MemoryCatalog>, p: SnapshotProducer) -> TableState {
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.add_change(Box::new(p));
    tx.commit().unwrap()
}

fn data_file(catalog: &Arc<MemoryCatalog>, name: &str) -> DataFile {
    let path = format!("mem://warehouse/db/t/data/{name}.parquet");
    catalog.io.write_new(&path, b"rows").unwrap();
    DataFile::new(
        DataContentType::Data,
        path,
        FileFormat::Parquet,
        vec![],
        100,
        1000,
    )
}

/// A v2 position delete file holding `rows`.
fn delete_file(catalog: &Arc<MemoryCatalog>, name: &str, rows: &[(&str, i64)]) -> DataFile {
    let path = format!("mem://warehouse/db/t/data/{name}-deletes.parquet");
    let bytes = crate::write::delete_writer::position_delete_rows_parquet(rows).unwrap();
    catalog.io.write_new(&path, &bytes).unwrap();
    DataFile::new(
        DataContentType::PositionDeletes,
        path,
        FileFormat::Parquet,
        vec![],
        rows.len() as i64,
        bytes.len() as i64,
    )
}

fn opts(md: &TableMetadata, pairs: &[(&str, &str)]) -> Result<RewritePositionDeletesOptions> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RewritePositionDeletesOptions::parse(md, &map)
}

/// Live delete files of the current snapshot with their data sequence numbers.
fn live_deletes(catalog: &Arc<MemoryCatalog>, state: &TableState) -> Vec<(DataFile, i64)> {
    let snap = state.metadata.current_snapshot().unwrap();
    let io = catalog.io.clone();
    let mut out = Vec::new();
    for m in read_manifest_list(io.as_ref(), snap.manifest_list.as_deref().unwrap()).unwrap() {
        if m.content != ManifestContent::Deletes {
            continue;
        }
        let read = read_manifest(
            ManifestSource::file(io.as_ref(), &m.manifest_path),
            &ReadManifestOptions::default().inherit_from(&m),
        )
        .unwrap();
        for e in read.entries.into_iter().filter(|e| e.is_live()) {
            out.push((e.data_file, e.sequence_number.unwrap()));
        }
    }
    out.sort_by(|a, b| a.0.file_path.cmp(&b.0.file_path));
    out
}

#[test]
fn options_are_validated_as_java() {
    let catalog = MemoryCatalog::new();
    let md = create(&catalog, 2).metadata;
    let o = opts(&md, &[]).unwrap();
    assert_eq!(o.target_file_size, 64 * 1024 * 1024);
    assert_eq!(o.min_input_files, 5);
    let e = opts(&md, &[("delete-file-threshold", "1")])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("Cannot use options [delete-file-threshold]"),
        "{e}"
    );
    let e = opts(&md, &[("partial-progress.max-failed-commits", "1")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("Cannot use options"), "{e}");
    let e = opts(&md, &[("target-file-size-bytes", "0")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("must be > 0"), "{e}");
}

#[test]
fn merges_deletes_per_data_file_and_drops_dangling_ones() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2);
    let a = data_file(&catalog, "a");
    let b = data_file(&catalog, "b");
    let gone = data_file(&catalog, "gone");
    let mut p = SnapshotProducer::fast_append();
    p.add_file(a.clone())
        .add_file(b.clone())
        .add_file(gone.clone());
    commit(&catalog, p);
    // three delete files over two commits: a partition-scoped one for a and b, one for a,
    // and one for the file removed below
    let d1 = delete_file(
        &catalog,
        "d1",
        &[(&a.file_path, 3), (&b.file_path, 1), (&b.file_path, 7)],
    );
    let d2 = delete_file(&catalog, "d2", &[(&a.file_path, 0), (&a.file_path, 3)]);
    let d3 = delete_file(&catalog, "d3", &[(&gone.file_path, 5)]);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, d1).add_delete_file(None, d3);
    commit(&catalog, p);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, d2);
    commit(&catalog, p);
    let mut p = SnapshotProducer::delete_files();
    p.delete_path(gone.file_path.clone());
    let state = commit(&catalog, p);
    let md = state.metadata.clone();

    // not enough files for the defaults (5 input files): nothing to do
    let io: Arc<dyn FileIO> = catalog.io.clone();
    let plan =
        plan_rewrite_position_deletes(io.as_ref(), &md, None, true, &opts(&md, &[]).unwrap())
            .unwrap();
    assert!(plan.groups.is_empty());

    let o = opts(&md, &[("min-input-files", "2")]).unwrap();
    let plan = plan_rewrite_position_deletes(io.as_ref(), &md, None, true, &o).unwrap();
    assert_eq!(plan.groups.len(), 1);
    let g = &plan.groups[0];
    assert_eq!(g.tasks.len(), 3);
    assert_eq!(g.max_rewritten_data_sequence_number, 3);
    let units = g.read_units(&md).unwrap();
    assert_eq!(units.len(), 1);
    // through the shipped form, as an executor gets it
    let unit = PositionDeleteUnit::from_ipc(
        &md,
        &PositionDeleteUnit::of(g, &units[0]).to_ipc(&md).unwrap(),
    )
    .unwrap();
    assert_eq!(unit.delete_files.len(), 3);
    let added = rewrite_position_delete_unit(&io, &md, &unit, "rewrite-1").unwrap();
    // one file per live data file (Spark's file granularity), the dangling row gone
    let summary: Vec<(Option<String>, i64)> = added
        .iter()
        .map(|f| (f.referenced_data_file.clone(), f.record_count))
        .collect();
    assert_eq!(
        summary,
        vec![
            (Some(a.file_path.clone()), 2),
            (Some(b.file_path.clone()), 2)
        ]
    );

    let mut p = SnapshotProducer::rewrite_files();
    for t in &g.tasks {
        p.remove_delete_file(t.file.file_path.clone(), None);
    }
    for f in added {
        p.add_delete_file_with_sequence_number(None, f, g.max_rewritten_data_sequence_number);
    }
    p.validation_mut().from_snapshot = plan.starting_snapshot_id;
    let state = commit(&catalog, p);
    let live = live_deletes(&catalog, &state);
    assert_eq!(live.len(), 2);
    // the new files keep the largest sequence number of those they replace
    assert!(live.iter().all(|(_, seq)| *seq == 3), "{live:?}");
    let snap = state.metadata.current_snapshot().unwrap();
    let s = snap.summary.as_ref().unwrap();
    assert_eq!(s.operation, crate::spec::snapshot::Operation::Replace);
    assert_eq!(s.get("removed-position-delete-files"), Some("3"));
    assert_eq!(s.get("added-position-delete-files"), Some("2"));
}

#[test]
fn v3_tables_rewrite_remaining_position_delete_files_into_dvs() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2);
    let a = data_file(&catalog, "a");
    let mut p = SnapshotProducer::fast_append();
    p.add_file(a.clone());
    commit(&catalog, p);
    let d1 = delete_file(&catalog, "d1", &[(&a.file_path, 3), (&a.file_path, 9)]);
    let mut p = SnapshotProducer::row_delta();
    p.add_delete_file(None, d1);
    commit(&catalog, p);
    // the upgrade to v3
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.set_properties(vec![("format-version".into(), "3".into())])
        .unwrap();
    let state = tx.commit().unwrap();
    let md = state.metadata.clone();
    assert_eq!(md.format_version, 3);
    let io: Arc<dyn FileIO> = catalog.io.clone();
    let o = opts(&md, &[("rewrite-all", "true")]).unwrap();
    let plan = plan_rewrite_position_deletes(io.as_ref(), &md, None, true, &o).unwrap();
    assert_eq!(plan.groups.len(), 1);
    let g = &plan.groups[0];
    let units = g.read_units(&md).unwrap();
    let added =
        rewrite_position_delete_unit(&io, &md, &PositionDeleteUnit::of(g, &units[0]), "r").unwrap();
    assert_eq!(added.len(), 1);
    assert_eq!(added[0].file_format, FileFormat::Puffin);
    assert_eq!(added[0].record_count, 2);
    let mut p = SnapshotProducer::rewrite_files();
    p.remove_delete_file(g.tasks[0].file.file_path.clone(), None);
    for f in added {
        p.add_delete_file_with_sequence_number(None, f, g.max_rewritten_data_sequence_number);
    }
    let state = commit(&catalog, p);
    // every position delete is a DV now: nothing more to plan
    let plan = plan_rewrite_position_deletes(io.as_ref(), &state.metadata, None, true, &o).unwrap();
    assert!(plan.groups.is_empty());
}
