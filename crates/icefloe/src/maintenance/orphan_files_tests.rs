//! Tests of orphan-file removal on the in-memory catalog.

use std::collections::HashMap;
use std::sync::Arc;

use super::{DeleteOrphanFiles, FileUri, PrefixMismatchMode};
use crate::catalog::{TableIdent, TableState};
use crate::commit::snapshot::SnapshotProducer;
use crate::commit::test_catalog::MemoryCatalog;
use crate::commit::transaction::{create_table, Transaction};
use crate::error::Error;
use crate::io::FileIO;
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::spec::sort::SortOrder;
use crate::spec::statistics::StatisticsFile;
use crate::spec::types::{NestedField, PrimitiveType, Type};

const T: &str = "mem://warehouse/db/t";

fn ident() -> TableIdent {
    TableIdent::parse("db.t").unwrap()
}

fn create(catalog: &Arc<MemoryCatalog>, props: &[(&str, &str)]) -> TableState {
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
    let props: Vec<(String, String)> = props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    create_table(
        catalog.clone(),
        &ident(),
        &schema,
        &PartitionSpec::unpartitioned(),
        &SortOrder::unsorted(),
        None,
        &props,
        Some(2),
    )
    .unwrap()
}

/// Writes a data file into the table's data folder and commits it in an append.
fn append(catalog: &Arc<MemoryCatalog>, name: &str) -> TableState {
    let path = format!("{T}/data/{name}");
    catalog.io.write_new(&path, b"rows").unwrap();
    let mut p = SnapshotProducer::fast_append();
    p.add_file(DataFile::new(
        DataContentType::Data,
        path,
        FileFormat::Parquet,
        vec![],
        1,
        4,
    ));
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.add_change(Box::new(p));
    tx.commit().unwrap()
}

fn put(catalog: &Arc<MemoryCatalog>, location: &str) {
    catalog.io.write_new(location, b"x").unwrap();
}

fn later() -> i64 {
    chrono::Utc::now().timestamp_millis() + 60_000
}

#[test]
fn finds_and_deletes_only_unreachable_old_files_of_this_table() {
    let catalog = MemoryCatalog::new();
    create(&catalog, &[]);
    append(&catalog, "a.parquet");
    let mut state = append(&catalog, "b.parquet");
    // a statistics file the metadata names
    put(&catalog, &format!("{T}/metadata/stats.puffin"));
    let current = state.metadata.current_snapshot_id.unwrap();
    Arc::make_mut(&mut state.metadata)
        .statistics
        .push(StatisticsFile {
            snapshot_id: current,
            statistics_path: format!("{T}/metadata/stats.puffin"),
            file_size_in_bytes: 1,
            file_footer_size_in_bytes: 1,
            key_metadata: None,
            blob_metadata: vec![],
        });
    let orphan = format!("{T}/data/orphan.parquet");
    let old_metadata_orphan = format!("{T}/metadata/00009-lost.metadata.json");
    for f in [
        orphan.as_str(),
        old_metadata_orphan.as_str(),
        // hidden: never listed as candidates (Java's hidden path filter)
        &format!("{T}/data/_SUCCESS"),
        &format!("{T}/data/.a.parquet.crc"),
        &format!("{T}/_temporary/0/x.parquet"),
        // a table nested inside this one's location, and its data
        &format!("{T}/nested/metadata/00000-n.metadata.json"),
        &format!("{T}/nested/data/n.parquet"),
        // a table whose location shares the prefix `.../t`
        "mem://warehouse/db/tt/data/z.parquet",
        "mem://warehouse/db/tt/metadata/00000-z.metadata.json",
    ] {
        put(&catalog, f);
    }
    let io: &dyn FileIO = catalog.io.as_ref();

    let dry = DeleteOrphanFiles::new()
        .older_than(later())
        .dry_run(true)
        .execute(io, &state.metadata, Some(&state.metadata_location))
        .unwrap();
    assert_eq!(
        dry.orphan_file_locations,
        vec![orphan.clone(), old_metadata_orphan.clone()]
    );
    assert!(io.exists(&orphan).unwrap(), "a dry run deletes nothing");

    let done = DeleteOrphanFiles::new()
        .older_than(later())
        .execute(io, &state.metadata, Some(&state.metadata_location))
        .unwrap();
    assert_eq!(done.orphan_file_locations, dry.orphan_file_locations);
    assert!(done.failed_deletes.is_empty());
    assert!(!io.exists(&orphan).unwrap());
    assert!(!io.exists(&old_metadata_orphan).unwrap());
    // everything reachable, and everything of the other tables, is still there
    let left: Vec<String> = io
        .list_files("mem://warehouse/db")
        .unwrap()
        .into_iter()
        .map(|f| f.location)
        .collect();
    for kept in [
        format!("{T}/data/a.parquet"),
        format!("{T}/data/b.parquet"),
        format!("{T}/metadata/stats.puffin"),
        format!("{T}/nested/data/n.parquet"),
        "mem://warehouse/db/tt/data/z.parquet".to_string(),
    ] {
        assert!(left.contains(&kept), "{kept} was deleted");
    }
    let lists = state
        .metadata
        .snapshots
        .iter()
        .filter_map(|s| s.manifest_list.clone());
    for l in lists {
        assert!(left.contains(&l), "manifest list {l} was deleted");
    }
}

#[test]
fn files_newer_than_the_cutoff_are_kept() {
    let catalog = MemoryCatalog::new();
    let state = create(&catalog, &[]);
    let old = format!("{T}/data/old.parquet");
    let new = format!("{T}/data/new.parquet");
    put(&catalog, &old);
    put(&catalog, &new);
    let now = chrono::Utc::now().timestamp_millis();
    catalog
        .io
        .inner
        .set_last_modified_ms(&old, now - 10_000)
        .unwrap();
    let found = DeleteOrphanFiles::new()
        .older_than(now - 5_000)
        .dry_run(true)
        .execute(catalog.io.as_ref(), &state.metadata, None)
        .unwrap();
    assert_eq!(found.orphan_file_locations, vec![old]);
    // the default cutoff is three days ago: nothing this young goes
    let found = DeleteOrphanFiles::new()
        .execute(catalog.io.as_ref(), &state.metadata, None)
        .unwrap();
    assert!(found.orphan_file_locations.is_empty());
    assert!(catalog.io.exists(&new).unwrap());
}

#[test]
fn the_metadata_log_and_every_snapshot_are_valid() {
    let catalog = MemoryCatalog::new();
    create(&catalog, &[]);
    let first = append(&catalog, "a.parquet");
    // a later snapshot removes a.parquet: an older snapshot still reaches it
    let mut p = SnapshotProducer::delete_files();
    p.delete_path(format!("{T}/data/a.parquet"));
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.add_change(Box::new(p));
    let state = tx.commit().unwrap();
    assert!(!state.metadata.metadata_log.is_empty());
    // the catalog wrote every metadata file, and the log names the earlier ones
    assert!(catalog.io.exists(&first.metadata_location).unwrap());
    assert!(state
        .metadata
        .metadata_log
        .iter()
        .any(|e| e.metadata_file == first.metadata_location));
    let found = DeleteOrphanFiles::new()
        .older_than(later())
        .dry_run(true)
        .execute(
            catalog.io.as_ref(),
            &state.metadata,
            Some(&state.metadata_location),
        )
        .unwrap();
    assert!(
        found.orphan_file_locations.is_empty(),
        "{:?}",
        found.orphan_file_locations
    );
}

#[test]
fn snapshots_of_branches_and_tags_are_valid() {
    use crate::commit::manage_snapshots::{ManageSnapshots, SnapshotOp};
    let catalog = MemoryCatalog::new();
    create(&catalog, &[]);
    let tagged = append(&catalog, "tagged.parquet");
    let tag_id = tagged.metadata.current_snapshot_id.unwrap();
    // the tag keeps the first snapshot; main then drops its file; a branch adds another
    let mut ops = ManageSnapshots::new();
    ops.add(SnapshotOp::CreateTag {
        name: "t1".to_string(),
        snapshot_id: tag_id,
    });
    ops.add(SnapshotOp::CreateBranch {
        name: "dev".to_string(),
        snapshot_id: Some(tag_id),
    });
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.add_change(Box::new(ops));
    tx.commit().unwrap();
    let mut p = SnapshotProducer::delete_files();
    p.delete_path(format!("{T}/data/tagged.parquet"));
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.add_change(Box::new(p));
    tx.commit().unwrap();
    let path = format!("{T}/data/dev.parquet");
    catalog.io.write_new(&path, b"rows").unwrap();
    let mut p = SnapshotProducer::fast_append().to_branch("dev");
    p.add_file(DataFile::new(
        DataContentType::Data,
        path,
        FileFormat::Parquet,
        vec![],
        1,
        4,
    ));
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.add_change(Box::new(p));
    let state = tx.commit().unwrap();
    let main_files: Vec<String> = state
        .metadata
        .snapshots
        .iter()
        .filter_map(|s| s.manifest_list.clone())
        .collect();
    assert!(main_files.len() >= 3);
    let found = DeleteOrphanFiles::new()
        .older_than(later())
        .dry_run(true)
        .execute(
            catalog.io.as_ref(),
            &state.metadata,
            Some(&state.metadata_location),
        )
        .unwrap();
    assert!(
        found.orphan_file_locations.is_empty(),
        "{:?}",
        found.orphan_file_locations
    );
}

#[test]
fn gc_disabled_refuses() {
    let catalog = MemoryCatalog::new();
    let state = create(&catalog, &[("gc.enabled", "false")]);
    let err = DeleteOrphanFiles::new()
        .execute(catalog.io.as_ref(), &state.metadata, None)
        .unwrap_err();
    assert!(matches!(err, Error::ValidationFailed { .. }), "{err}");
    assert!(err.to_string().contains("gc.enabled"), "{err}");
}

#[test]
fn uris_split_as_hadoop_paths() {
    let u = FileUri::parse("s3a://bucket/t//data/a.parquet");
    assert_eq!(u.scheme.as_deref(), Some("s3a"));
    assert_eq!(u.authority.as_deref(), Some("bucket"));
    assert_eq!(u.path, "/t/data/a.parquet");
    let u = FileUri::parse("file:///tmp/t/a");
    assert_eq!(
        (u.scheme.as_deref(), u.authority, u.path.as_str()),
        (Some("file"), None, "/tmp/t/a")
    );
    let u = FileUri::parse("file:/tmp/t/a");
    assert_eq!(
        (u.scheme.as_deref(), u.authority, u.path.as_str()),
        (Some("file"), None, "/tmp/t/a")
    );
    let u = FileUri::parse("/tmp/t/a");
    assert_eq!(
        (u.scheme, u.authority, u.path.as_str()),
        (None, None, "/tmp/t/a")
    );
}

#[test]
fn prefix_mismatches_follow_the_mode() {
    let listed = vec![
        "s3://b1/t/data/a.parquet".to_string(),
        "s3://b2/t/data/b.parquet".to_string(),
        "s3://b1/t/data/c.parquet".to_string(),
    ];
    let valid = [
        // s3a is s3 by default
        "s3a://b1/t/data/a.parquet",
        // the same path in another bucket
        "s3://b3/t/data/b.parquet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let c = "s3://b1/t/data/c.parquet".to_string();

    let err = DeleteOrphanFiles::new()
        .find_orphans(&listed, &valid)
        .unwrap_err();
    assert!(matches!(err, Error::ValidationFailed { .. }), "{err}");
    assert!(
        err.to_string().contains("(valid 'b3', listed 'b2')"),
        "{err}"
    );

    let ignore = DeleteOrphanFiles::new()
        .prefix_mismatch_mode(PrefixMismatchMode::Ignore)
        .find_orphans(&listed, &valid)
        .unwrap();
    assert_eq!(ignore, vec![c.clone()]);

    let delete = DeleteOrphanFiles::new()
        .prefix_mismatch_mode(PrefixMismatchMode::Delete)
        .find_orphans(&listed, &valid)
        .unwrap();
    assert_eq!(
        delete,
        vec![c.clone(), "s3://b2/t/data/b.parquet".to_string()]
    );

    let equal = DeleteOrphanFiles::new()
        .equal_authorities(&HashMap::from([("b2,b3".to_string(), "b".to_string())]))
        .find_orphans(&listed, &valid)
        .unwrap();
    assert_eq!(equal, vec![c.clone()]);

    // without the default map s3a and s3 would conflict
    let schemes = DeleteOrphanFiles::new()
        .equal_schemes(&HashMap::from([("s3a".to_string(), "s3a".to_string())]))
        .equal_authorities(&HashMap::from([("b2,b3".to_string(), "b".to_string())]))
        .find_orphans(&listed, &valid)
        .unwrap_err();
    assert!(
        schemes.to_string().contains("(valid 's3a', listed 's3')"),
        "{schemes}"
    );

    assert_eq!(
        PrefixMismatchMode::parse("delete").unwrap(),
        PrefixMismatchMode::Delete
    );
    assert!(PrefixMismatchMode::parse("none").is_err());
}
