//! Transactions and snapshot producers against the in-memory test catalog: appends,
//! merges, deletes, branches, retries, concurrent writers and injected faults.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use super::properties::RetryPolicy;
use super::snapshot::SnapshotProducer;
use super::test_catalog::{FaultKind, Faults, MemoryCatalog};
use super::transaction::{create_or_replace_table, create_table, NewTable, Transaction};
use crate::catalog::{Catalog, TableIdent, TableState};
use crate::error::Error;
use crate::io::FileIO;
use crate::manifest::{
    read_manifest, read_manifest_list, DataContentType, DataFile, FileFormat, ManifestSource,
    ManifestStatus, ReadManifestOptions,
};
use crate::spec::literal::Literal;
use crate::spec::partition::{PartitionField, PartitionSpec};
use crate::spec::schema::Schema;
use crate::spec::snapshot::{Operation, Snapshot};
use crate::spec::sort::SortOrder;
use crate::spec::transform::Transform;
use crate::spec::types::{NestedField, PrimitiveType, Type};

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::optional(2, "cat", Type::Primitive(PrimitiveType::Int)),
        ],
        vec![],
    )
    .unwrap()
}

fn ident() -> TableIdent {
    TableIdent::parse("db.t").unwrap()
}

fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        num_retries: 1000,
        min_wait: Duration::from_millis(1),
        max_wait: Duration::from_millis(10),
        total_timeout: Duration::from_secs(120),
    }
}

fn create(catalog: &Arc<MemoryCatalog>, v: i32, props: &[(&str, &str)]) -> TableState {
    let props: Vec<(String, String)> = props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    create_table(
        catalog.clone(),
        &ident(),
        &schema(),
        &PartitionSpec::unpartitioned(),
        &SortOrder::unsorted(),
        None,
        &props,
        Some(v),
    )
    .unwrap()
}

fn file(name: &str, rows: i64) -> DataFile {
    DataFile::new(
        DataContentType::Data,
        format!("mem://data/{name}.parquet"),
        FileFormat::Parquet,
        vec![],
        rows,
        rows * 10,
    )
}

fn append(catalog: &Arc<MemoryCatalog>, files: Vec<DataFile>) -> TableState {
    let mut tx = Transaction::load(catalog.clone(), ident())
        .unwrap()
        .with_retry_policy(fast_retry());
    tx.append_files(files);
    tx.commit().unwrap()
}

/// (path, status, data sequence number, snapshot id, first row id) of every entry the
/// snapshot's manifests hold, inheritance applied.
type Row = (
    String,
    ManifestStatus,
    Option<i64>,
    Option<i64>,
    Option<i64>,
);

fn entries(io: &dyn FileIO, snap: &Snapshot) -> Vec<Row> {
    let mut out = Vec::new();
    for mf in read_manifest_list(io, snap.manifest_list.as_deref().unwrap()).unwrap() {
        let m = read_manifest(
            ManifestSource::file(io, &mf.manifest_path),
            &ReadManifestOptions::default().inherit_from(&mf),
        )
        .unwrap();
        for e in m.entries {
            out.push((
                e.data_file.file_path.clone(),
                e.status,
                e.sequence_number,
                e.snapshot_id,
                e.data_file.first_row_id,
            ));
        }
    }
    out
}

fn live_paths(io: &dyn FileIO, snap: &Snapshot) -> Vec<String> {
    let mut v: Vec<String> = entries(io, snap)
        .into_iter()
        .filter(|r| r.1 != ManifestStatus::Deleted)
        .map(|r| r.0)
        .collect();
    v.sort();
    v
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

#[test]
fn fast_append_writes_manifests_lists_summaries_and_row_ids() {
    let catalog = MemoryCatalog::new();
    let created = create(&catalog, 3, &[]);
    assert_eq!(created.metadata.current_snapshot_id, None);
    let io = catalog.io();

    let s1 = append(&catalog, vec![file("a", 3), file("b", 4)]);
    let md = &s1.metadata;
    let snap = md.current_snapshot().unwrap().clone();
    assert_eq!(snap.sequence_number, 1);
    assert_eq!(snap.parent_snapshot_id, None);
    assert_eq!(snap.first_row_id, Some(0));
    assert_eq!(snap.added_rows, Some(7));
    assert_eq!(md.next_row_id, 7);
    assert_eq!(md.metadata_log.len(), 1);
    assert_eq!(md.metadata_log[0].metadata_file, created.metadata_location);
    let list = snap.manifest_list.clone().unwrap();
    let prefix = format!("{}/metadata/snap-{}-1-", md.location, snap.snapshot_id);
    assert!(
        list.starts_with(&prefix) && list.ends_with(".avro"),
        "{list}"
    );
    let sum = summary(&snap);
    assert_eq!(snap.operation(), Some(Operation::Append));
    for (k, v) in [
        ("added-data-files", "2"),
        ("added-records", "7"),
        ("added-files-size", "70"),
        ("changed-partition-count", "1"),
        ("total-records", "7"),
        ("total-files-size", "70"),
        ("total-data-files", "2"),
        ("total-delete-files", "0"),
        ("total-position-deletes", "0"),
        ("total-equality-deletes", "0"),
        ("manifests-created", "1"),
        ("manifests-kept", "0"),
        ("manifests-replaced", "0"),
    ] {
        assert_eq!(sum.get(k).map(String::as_str), Some(v), "{k}");
    }
    assert!(!sum.contains_key("deleted-data-files"));
    let rows = entries(io.as_ref(), &snap);
    assert_eq!(rows.len(), 2);
    // first row ids: inherited from the manifest's first_row_id in file order
    assert_eq!(rows[0].4, Some(0));
    assert_eq!(rows[1].4, Some(3));
    assert!(rows
        .iter()
        .all(|r| r.2 == Some(1) && r.3 == Some(snap.snapshot_id) && r.1 == ManifestStatus::Added));
    let mlist = read_manifest_list(io.as_ref(), &list).unwrap();
    assert!(mlist[0]
        .manifest_path
        .starts_with(&format!("{}/metadata/", md.location)));
    assert!(mlist[0].manifest_path.ends_with("-m0.avro"));

    // a second append carries the first manifest over unchanged
    let s2 = append(&catalog, vec![file("c", 5)]);
    let snap2 = s2.metadata.current_snapshot().unwrap().clone();
    assert_eq!(snap2.parent_snapshot_id, Some(snap.snapshot_id));
    assert_eq!(snap2.sequence_number, 2);
    assert_eq!(snap2.first_row_id, Some(7));
    assert_eq!(s2.metadata.next_row_id, 12);
    let mlist2 = read_manifest_list(io.as_ref(), snap2.manifest_list.as_deref().unwrap()).unwrap();
    assert_eq!(mlist2.len(), 2);
    assert_eq!(mlist2[1], mlist[0]);
    let sum2 = summary(&snap2);
    assert_eq!(sum2["total-records"], "12");
    assert_eq!(sum2["total-data-files"], "3");
    assert_eq!(sum2["manifests-kept"], "1");
    assert_eq!(
        live_paths(io.as_ref(), &snap2),
        vec![
            "mem://data/a.parquet",
            "mem://data/b.parquet",
            "mem://data/c.parquet"
        ]
    );
    // the snapshot log has both, the metadata log both earlier files
    assert_eq!(s2.metadata.snapshot_log.len(), 2);
    assert_eq!(s2.metadata.metadata_log.len(), 2);
}

#[test]
fn v1_and_v2_appends() {
    for v in [1, 2] {
        let catalog = MemoryCatalog::new();
        create(&catalog, v, &[]);
        append(&catalog, vec![file("a", 1)]);
        let s = append(&catalog, vec![file("b", 2)]);
        let snap = s.metadata.current_snapshot().unwrap();
        assert_eq!(snap.sequence_number, if v == 1 { 0 } else { 2 });
        assert_eq!(s.metadata.last_sequence_number, if v == 1 { 0 } else { 2 });
        assert_eq!(snap.first_row_id, None);
        assert_eq!(live_paths(catalog.io().as_ref(), snap).len(), 2);
        assert_eq!(summary(snap)["total-records"], "3");
    }
}

#[test]
fn properties_set_where_manifests_go_and_how_they_are_compressed() {
    let catalog = MemoryCatalog::new();
    create(
        &catalog,
        2,
        &[
            ("write.metadata.path", "mem://elsewhere/meta"),
            ("write.avro.compression-codec", "uncompressed"),
        ],
    );
    let s = append(&catalog, vec![file("a", 1)]);
    let snap = s.metadata.current_snapshot().unwrap();
    let list = snap.manifest_list.as_deref().unwrap();
    assert!(list.starts_with("mem://elsewhere/meta/snap-"), "{list}");
    let bytes = catalog.io().read(list).unwrap();
    let container = crate::manifest::avro::Container::open(&bytes).unwrap();
    let codec = container
        .metadata
        .iter()
        .find(|(k, _)| k == "avro.codec")
        .map(|(_, v)| String::from_utf8_lossy(v).to_string());
    assert_eq!(codec.as_deref(), Some("null"));
}

/// The `format-version` property upgrades the table and is not stored, as Java's
/// `UpdateProperties` does; other reserved properties are not stored either.
#[test]
fn the_format_version_property_upgrades_the_table() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 1, &[]);
    append(&catalog, vec![file("a", 1)]);
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.set_properties(vec![
        ("format-version".into(), "2".into()),
        ("owner".into(), "etl".into()),
        ("uuid".into(), "not-the-uuid".into()),
    ])
    .unwrap();
    let s = tx.commit().unwrap();
    let md = &s.metadata;
    assert_eq!(md.format_version, 2);
    assert_eq!(md.property("owner"), Some("etl"));
    assert_eq!(md.property("format-version"), None);
    assert_eq!(md.property("uuid"), None);
    assert_ne!(md.table_uuid.as_deref(), Some("not-the-uuid"));
    // the next append is a v2 snapshot (sequence numbers), the old one stays as it was
    let s = append(&catalog, vec![file("b", 1)]);
    assert_eq!(s.metadata.last_sequence_number, 1);
    // the same version again changes nothing; a lower one fails and leaves the table as is
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.set_properties(vec![("format-version".into(), "2".into())])
        .unwrap();
    assert_eq!(tx.commit().unwrap().metadata.format_version, 2);
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.set_properties(vec![("format-version".into(), "1".into())])
        .unwrap();
    let e = tx.commit().unwrap_err();
    assert!(e.to_string().contains("cannot downgrade"), "{e}");
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    let e = tx
        .set_properties(vec![("format-version".into(), "three".into())])
        .err()
        .unwrap();
    assert!(e.to_string().contains("not an integer"), "{e}");
    let md = catalog.load_table(&ident()).unwrap().metadata;
    assert_eq!(md.format_version, 2);
    assert_eq!(md.snapshots.len(), 2);
}

#[test]
fn a_transaction_is_one_commit() {
    let catalog = MemoryCatalog::new();
    let created = create(&catalog, 2, &[]);
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.set_properties(vec![("a".into(), "1".into())]).unwrap();
    tx.append_files(vec![file("a", 1)]);
    tx.append_files(vec![file("b", 1)]);
    tx.remove_properties(vec!["a".into()]);
    tx.set_properties(vec![("b".into(), "2".into())]).unwrap();
    let s = tx.commit().unwrap();
    let md = &s.metadata;
    assert_eq!(md.metadata_log.len(), 1);
    assert_eq!(md.metadata_log[0].metadata_file, created.metadata_location);
    assert_eq!(md.property("a"), None);
    assert_eq!(md.property("b"), Some("2"));
    assert_eq!(md.snapshots.len(), 2);
    // the first snapshot was never current: not in the snapshot log
    assert_eq!(md.snapshot_log.len(), 1);
    assert_eq!(md.last_sequence_number, 2);
    assert_eq!(
        live_paths(catalog.io().as_ref(), md.current_snapshot().unwrap()).len(),
        2
    );
    // a transaction without changes commits nothing
    let same = Transaction::load(catalog.clone(), ident())
        .unwrap()
        .commit()
        .unwrap();
    assert_eq!(same.metadata_location, s.metadata_location);
}

#[test]
fn commits_to_a_branch_leave_main_alone() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2, &[]);
    let main = append(&catalog, vec![file("a", 1)]);
    let main_id = main.metadata.current_snapshot_id.unwrap();
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    let mut p = SnapshotProducer::fast_append().to_branch("dev");
    p.add_file(file("b", 2));
    tx.add_change(Box::new(p));
    let s = tx.commit().unwrap();
    let md = &s.metadata;
    assert_eq!(md.current_snapshot_id, Some(main_id));
    let dev = md.snapshot_by_ref("dev").unwrap();
    assert!(md.snapshot_ref("dev").unwrap().is_branch());
    // a new branch starts from the current snapshot...
    assert_eq!(dev.parent_snapshot_id, Some(main_id));
    assert_eq!(live_paths(catalog.io().as_ref(), dev).len(), 2);
    // ...but, as in Java, its totals start from zero
    assert_eq!(summary(dev)["total-records"], "2");
    assert_eq!(md.snapshot_log.len(), 1);
    // and a second commit to it continues from its head
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    let mut p = SnapshotProducer::fast_append().to_branch("dev");
    p.add_file(file("c", 4));
    tx.add_change(Box::new(p));
    let s = tx.commit().unwrap();
    let dev2 = s.metadata.snapshot_by_ref("dev").unwrap();
    assert_eq!(dev2.parent_snapshot_id, Some(dev.snapshot_id));
    assert_eq!(summary(dev2)["total-records"], "6");
}

#[test]
fn a_table_whose_refs_lack_main_commits_as_java_does() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2, &[]);
    let base = append(&catalog, vec![file("a", 1)]);
    let first = base.metadata.current_snapshot_id.unwrap();
    // a metadata file whose `refs` has no `main` but whose current-snapshot-id is set
    let mut md = (*base.metadata).clone();
    md.refs.retain(|(n, _)| n != "main");
    catalog.commit_table(&ident(), Some(&base), md).unwrap();
    // read back as written: Java adds `main` only when there is no `refs` at all
    let reread = catalog.load_table(&ident()).unwrap();
    assert!(reread.metadata.snapshot_ref("main").is_none());
    assert_eq!(
        reread.metadata.current_snapshot().map(|s| s.snapshot_id),
        Some(first)
    );

    let s = append(&catalog, vec![file("b", 2)]);
    let md = &s.metadata;
    let head = md.current_snapshot().unwrap();
    // Java's SnapshotProducer: the parent is the current snapshot (latestSnapshot of main)...
    assert_eq!(head.parent_snapshot_id, Some(first));
    assert_eq!(live_paths(catalog.io().as_ref(), head).len(), 2);
    // ...its totals start from 0, as there was no `main` ref to read them from...
    assert_eq!(summary(head)["total-records"], "2");
    // ...and the commit sets `main`
    assert_eq!(
        md.snapshot_ref("main").map(|r| r.snapshot_id),
        Some(head.snapshot_id)
    );
}

#[test]
fn merge_append_merges_once_enough_manifests() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2, &[("commit.manifest.min-count-to-merge", "3")]);
    let merge = |name: &str| {
        let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
        let mut p = SnapshotProducer::merge_append();
        p.add_file(file(name, 1));
        tx.add_change(Box::new(p));
        tx.commit().unwrap()
    };
    merge("a");
    let s = merge("b");
    let io = catalog.io();
    let snap = s.metadata.current_snapshot().unwrap();
    // two manifests in the bin with the new one: fewer than 3, not merged
    assert_eq!(
        read_manifest_list(io.as_ref(), snap.manifest_list.as_deref().unwrap())
            .unwrap()
            .len(),
        2
    );
    let s = merge("c");
    let snap = s.metadata.current_snapshot().unwrap().clone();
    let list = read_manifest_list(io.as_ref(), snap.manifest_list.as_deref().unwrap()).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].added_files_count, Some(1));
    assert_eq!(list[0].existing_files_count, Some(2));
    let sum = summary(&snap);
    assert_eq!(sum["manifests-created"], "1");
    assert_eq!(sum["manifests-replaced"], "2");
    assert_eq!(sum["manifests-kept"], "0");
    let rows = entries(io.as_ref(), &snap);
    let by_path: HashMap<&str, &Row> = rows.iter().map(|r| (r.0.as_str(), r)).collect();
    let c = by_path["mem://data/c.parquet"];
    assert_eq!((c.1, c.2), (ManifestStatus::Added, Some(3)));
    let a = by_path["mem://data/a.parquet"];
    // existing files keep their own sequence numbers and snapshot ids
    assert_eq!((a.1, a.2), (ManifestStatus::Existing, Some(1)));
    assert_ne!(a.3, Some(snap.snapshot_id));
    // merging disabled: no merge
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    tx.set_properties(vec![(
        "commit.manifest-merge.enabled".into(),
        "false".into(),
    )])
    .unwrap();
    tx.commit().unwrap();
    let s = merge("d");
    let list = read_manifest_list(
        io.as_ref(),
        s.metadata
            .current_snapshot()
            .unwrap()
            .manifest_list
            .as_deref()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(list.len(), 2);
}

#[test]
fn delete_and_overwrite_by_files() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2, &[]);
    append(&catalog, vec![file("a", 1), file("b", 2)]);
    append(&catalog, vec![file("c", 4)]);
    let io = catalog.io();

    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    let mut p = SnapshotProducer::delete_files();
    p.delete_path("mem://data/b.parquet");
    tx.add_change(Box::new(p));
    let s = tx.commit().unwrap();
    let snap = s.metadata.current_snapshot().unwrap().clone();
    assert_eq!(snap.operation(), Some(Operation::Delete));
    let sum = summary(&snap);
    assert_eq!(sum["deleted-data-files"], "1");
    assert_eq!(sum["deleted-records"], "2");
    assert_eq!(sum["removed-files-size"], "20");
    assert_eq!(sum["total-records"], "5");
    assert_eq!(sum["total-data-files"], "2");
    assert_eq!(sum["manifests-replaced"], "1");
    let rows = entries(io.as_ref(), &snap);
    let b = rows.iter().find(|r| r.0.ends_with("b.parquet")).unwrap();
    assert_eq!(b.1, ManifestStatus::Deleted);
    assert_eq!(b.3, Some(snap.snapshot_id));
    assert_eq!(
        b.2,
        Some(1),
        "a deleted entry keeps its data sequence number"
    );
    assert_eq!(
        live_paths(io.as_ref(), &snap),
        vec!["mem://data/a.parquet", "mem://data/c.parquet"]
    );

    // a file that is not live cannot be removed: ValidationFailed, nothing committed
    let before = catalog.load_table(&ident()).unwrap();
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    let mut p = SnapshotProducer::overwrite_files();
    p.delete_path("mem://data/b.parquet");
    p.add_file(file("d", 8));
    tx.add_change(Box::new(p));
    let e = tx.commit().unwrap_err();
    assert!(matches!(e, Error::ValidationFailed { .. }), "{e}");
    assert_eq!(
        catalog.load_table(&ident()).unwrap().metadata_location,
        before.metadata_location
    );

    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    let mut p = SnapshotProducer::overwrite_files();
    p.delete_path("mem://data/c.parquet");
    p.add_file(file("d", 8));
    tx.add_change(Box::new(p));
    let s = tx.commit().unwrap();
    let snap = s.metadata.current_snapshot().unwrap().clone();
    assert_eq!(snap.operation(), Some(Operation::Overwrite));
    assert_eq!(summary(&snap)["total-records"], "9");
    assert_eq!(
        live_paths(io.as_ref(), &snap),
        vec!["mem://data/a.parquet", "mem://data/d.parquet"]
    );
}

#[test]
fn a_stale_base_is_retried_reusing_the_new_manifest() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 3, &[]);
    let stale = catalog.load_table(&ident()).unwrap();
    // another writer commits first
    append(&catalog, vec![file("other", 10)]);

    let mut p = SnapshotProducer::fast_append();
    p.add_file(file("mine", 1));
    struct Spy(SnapshotProducer, Arc<std::sync::Mutex<Vec<String>>>);
    impl super::transaction::PendingChange for Spy {
        fn apply(
            &mut self,
            io: &dyn FileIO,
            b: &mut super::builder::MetadataBuilder,
        ) -> crate::Result<()> {
            let r = self.0.apply(io, b);
            *self.1.lock().unwrap() = self.0.written_files().to_vec();
            r
        }
        fn clean_up(&mut self, io: &dyn FileIO, committed: bool) {
            self.0.clean_up(io, committed)
        }
    }
    let written = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut tx = Transaction::new(catalog.clone(), ident(), stale).with_retry_policy(fast_retry());
    tx.add_change(Box::new(Spy(p, written.clone())));
    let s = tx.commit().unwrap();
    let written = written.lock().unwrap().clone();
    // one manifest, two lists (attempt 1 and 2)
    let manifests: Vec<&String> = written.iter().filter(|p| p.ends_with("-m0.avro")).collect();
    let lists: Vec<&String> = written.iter().filter(|p| p.contains("/snap-")).collect();
    assert_eq!((written.len(), manifests.len(), lists.len()), (3, 1, 2));
    assert!(lists[0].contains("-1-") && lists[1].contains("-2-"));
    let io = catalog.io();
    // the first attempt's list is not referenced: deleted; the rest is there
    assert!(!io.exists(lists[0]).unwrap());
    assert!(io.exists(lists[1]).unwrap());
    assert!(io.exists(manifests[0]).unwrap());
    let snap = s.metadata.current_snapshot().unwrap();
    assert_eq!(snap.sequence_number, 2);
    assert_eq!(snap.first_row_id, Some(10));
    assert_eq!(s.metadata.next_row_id, 11);
    assert_eq!(live_paths(io.as_ref(), snap).len(), 2);
}

#[test]
fn concurrent_appends_lose_nothing() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 3, &[]);
    let threads = 6;
    let per_thread = 5;
    std::thread::scope(|scope| {
        for t in 0..threads {
            let catalog = catalog.clone();
            scope.spawn(move || {
                for i in 0..per_thread {
                    append(
                        &catalog,
                        vec![file(&format!("t{t}-{i}"), (t * 10 + i + 1) as i64)],
                    );
                }
            });
        }
    });
    let s = catalog.load_table(&ident()).unwrap();
    let md = &s.metadata;
    let n = threads * per_thread;
    assert_eq!(md.snapshots.len(), n);
    let mut paths = live_paths(catalog.io().as_ref(), md.current_snapshot().unwrap());
    let before = paths.len();
    paths.dedup();
    assert_eq!((before, paths.len()), (n, n), "no file lost or duplicated");
    // sequence numbers 1..n, each once, along one line of parents
    let mut seqs: Vec<i64> = md.snapshots.iter().map(|s| s.sequence_number).collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=n as i64).collect::<Vec<_>>());
    assert_eq!(md.ancestors_of(md.current_snapshot_id.unwrap()).len(), n);
    // row ids: disjoint ranges covering [0, total)
    let total: i64 = (0..threads)
        .flat_map(|t| (0..per_thread).map(move |i| (t * 10 + i + 1) as i64))
        .sum();
    assert_eq!(md.next_row_id, total);
    let mut ranges: Vec<(i64, i64)> = md
        .snapshots
        .iter()
        .map(|s| (s.first_row_id.unwrap(), s.added_rows.unwrap()))
        .collect();
    ranges.sort_unstable();
    let mut next = 0;
    for (first, added) in ranges {
        assert_eq!(first, next);
        next += added;
    }
    assert_eq!(
        summary(md.current_snapshot().unwrap())["total-records"],
        total.to_string()
    );
}

/// Files under the table's metadata directory other than metadata JSON files.
fn avro_files(catalog: &MemoryCatalog, location: &str) -> HashSet<String> {
    catalog
        .io()
        .list(&format!("{location}/metadata/"))
        .unwrap()
        .into_iter()
        .filter(|p| p.ends_with(".avro"))
        .collect()
}

#[test]
fn a_failure_at_any_step_leaves_the_table_at_its_previous_state() {
    let cases: Vec<(&str, Faults, bool)> = vec![
        (
            "after writing manifests",
            Faults {
                fail_write_containing: Some("/snap-".into()),
                ..Faults::default()
            },
            false,
        ),
        (
            "after writing the metadata file",
            Faults {
                fail_after_metadata_write: Some(FaultKind::CommitFailed),
                ..Faults::default()
            },
            false,
        ),
        (
            "at the swap",
            Faults {
                fail_swap: Some(FaultKind::CommitFailed),
                ..Faults::default()
            },
            false,
        ),
        (
            "at the swap, outcome unknown",
            Faults {
                fail_swap: Some(FaultKind::StateUnknown),
                ..Faults::default()
            },
            true,
        ),
    ];
    for (name, faults, unknown) in cases {
        let catalog = MemoryCatalog::new();
        create(&catalog, 3, &[]);
        let before = append(&catalog, vec![file("a", 1)]);
        let files_before = avro_files(&catalog, &before.metadata.location);
        catalog.set_faults(faults);
        let mut tx = Transaction::load(catalog.clone(), ident())
            .unwrap()
            .with_retry_policy(RetryPolicy {
                num_retries: 2,
                ..fast_retry()
            });
        tx.append_files(vec![file("b", 1)]);
        let e = tx.commit().unwrap_err();
        catalog.set_faults(Faults::default());
        assert_eq!(
            matches!(e, Error::CommitStateUnknown { .. }),
            unknown,
            "{name}: {e}"
        );
        let now = catalog.load_table(&ident()).unwrap();
        assert_eq!(now.metadata_location, before.metadata_location, "{name}");
        let snap = now.metadata.current_snapshot().unwrap();
        assert_eq!(
            live_paths(catalog.io().as_ref(), snap),
            vec!["mem://data/a.parquet"],
            "{name}"
        );
        let files_after = avro_files(&catalog, &before.metadata.location);
        if unknown {
            // the commit may have happened: its files must still be there
            assert!(files_after.len() > files_before.len(), "{name}");
        } else {
            assert_eq!(files_after, files_before, "{name}: files left behind");
        }
        // and the table takes the next commit normally
        let s = append(&catalog, vec![file("c", 1)]);
        assert_eq!(
            live_paths(
                catalog.io().as_ref(),
                s.metadata.current_snapshot().unwrap()
            )
            .len(),
            2,
            "{name}"
        );
    }
}

/// Writes `name`'s bytes, as a writer would before handing the file to a transaction.
fn written(catalog: &MemoryCatalog, name: &str) -> DataFile {
    let f = file(name, 1);
    catalog.io().write_new(&f.file_path, b"PAR1").unwrap();
    f
}

/// Something that happens to the table between a transaction's start and its commit.
type Fault = Box<dyn Fn(&Arc<MemoryCatalog>)>;

#[test]
fn files_handed_to_a_failed_commit_are_deleted_unless_its_outcome_is_unknown() {
    let faulty = |faults: Faults| -> Fault {
        Box::new(move |c: &Arc<MemoryCatalog>| c.set_faults(faults.clone()))
    };
    let cases: Vec<(&str, Fault, bool)> = vec![
        (
            "manifest list write fails",
            faulty(Faults {
                fail_write_containing: Some("/snap-".into()),
                ..Faults::default()
            }),
            false,
        ),
        (
            "another writer keeps winning",
            faulty(Faults {
                fail_swap: Some(FaultKind::CommitFailed),
                ..Faults::default()
            }),
            false,
        ),
        (
            "the catalog refuses after the metadata file is written",
            faulty(Faults {
                fail_after_metadata_write: Some(FaultKind::CommitFailed),
                ..Faults::default()
            }),
            false,
        ),
        (
            // the overwrite removes a file another writer removed meanwhile
            "validation fails",
            Box::new(|c: &Arc<MemoryCatalog>| {
                let mut tx = Transaction::load(c.clone(), ident()).unwrap();
                let mut p = SnapshotProducer::delete_files();
                p.delete_path("mem://data/a.parquet");
                tx.add_change(Box::new(p));
                tx.commit().unwrap();
            }),
            false,
        ),
        (
            "outcome unknown",
            faulty(Faults {
                fail_swap: Some(FaultKind::StateUnknown),
                ..Faults::default()
            }),
            true,
        ),
    ];
    for (name, fault, unknown) in cases {
        let catalog = MemoryCatalog::new();
        create(&catalog, 2, &[]);
        append(&catalog, vec![written(&catalog, "a")]);
        // prepared against the table before the fault (the validation case needs that)
        let mut tx = Transaction::load(catalog.clone(), ident())
            .unwrap()
            .with_retry_policy(RetryPolicy {
                num_retries: 2,
                ..fast_retry()
            });
        let new = [written(&catalog, "b"), written(&catalog, "c")];
        let imported = written(&catalog, "imported");
        let mut p = SnapshotProducer::overwrite_files();
        p.delete_path("mem://data/a.parquet");
        for f in new.iter().chain([&imported]) {
            p.add_file(f.clone());
        }
        tx.add_change(Box::new(p));
        tx.own_files(new.iter().map(|f| f.file_path.clone()));
        fault(&catalog);
        let e = tx.commit().unwrap_err();
        catalog.set_faults(Faults::default());
        let io = catalog.io();
        let exists = |f: &DataFile| io.exists(&f.file_path).unwrap();
        // a file the caller did not hand over is never the transaction's to delete
        assert!(exists(&imported), "{name}");
        if unknown {
            assert!(new.iter().all(exists), "{name}: kept");
            let Error::CommitStateUnknown { message } = &e else {
                panic!("{name}: {e:?}");
            };
            assert!(message.contains("injected fault"), "{message}");
            assert!(message.contains("2 data and delete files"), "{message}");
            assert!(message.contains("are kept"), "{message}");
            for f in &new {
                assert!(message.contains(&f.file_path), "{message}");
            }
        } else {
            assert!(!new.iter().any(exists), "{name}: {e} left the files behind");
        }
    }
}

#[test]
fn an_aborted_transaction_deletes_the_files_handed_to_it() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2, &[]);
    let before = catalog.load_table(&ident()).unwrap();
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    let f = written(&catalog, "b");
    tx.append_files(vec![f.clone()]);
    tx.own_files([f.file_path.clone()]);
    tx.abort();
    assert!(!catalog.io().exists(&f.file_path).unwrap());
    let now = catalog.load_table(&ident()).unwrap();
    assert_eq!(now.metadata_location, before.metadata_location);
}

#[test]
fn create_fails_when_the_table_exists_and_create_or_replace_keeps_history() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 2, &[]);
    let first = append(&catalog, vec![file("a", 1)]);
    let e = create_table(
        catalog.clone(),
        &ident(),
        &schema(),
        &PartitionSpec::unpartitioned(),
        &SortOrder::unsorted(),
        None,
        &[],
        None,
    )
    .unwrap_err();
    assert!(matches!(e, Error::AlreadyExists { .. }), "{e}");

    let mut table = NewTable::new(schema());
    table.spec = PartitionSpec::new(
        0,
        vec![PartitionField::new(2, 1000, "cat", Transform::Identity)],
    );
    let replaced = create_or_replace_table(catalog.clone(), &ident(), table.clone()).unwrap();
    let md = &replaced.metadata;
    assert_eq!(md.current_snapshot_id, None);
    assert_eq!(md.snapshots.len(), 1);
    assert_eq!(md.partition_specs.len(), 2);
    assert_eq!(md.default_spec_id, 1);
    assert_eq!(md.format_version, 2);
    assert_eq!(
        md.metadata_log.last().unwrap().metadata_file,
        first.metadata_location
    );

    // appending to the new spec, then the created table elsewhere: new, v3 by default
    let mut tx = Transaction::load(catalog.clone(), ident()).unwrap();
    let mut f = file("p", 3);
    f.partition = vec![Some(Literal::Int(7))];
    tx.append_files(vec![f]);
    let s = tx.commit().unwrap();
    let snap = s.metadata.current_snapshot().unwrap();
    assert_eq!(snap.parent_snapshot_id, None);
    assert_eq!(
        live_paths(catalog.io().as_ref(), snap),
        vec!["mem://data/p.parquet"]
    );

    let other = TableIdent::parse("db.other").unwrap();
    let created = create_or_replace_table(catalog.clone(), &other, table).unwrap();
    assert_eq!(created.metadata.format_version, 3);
    assert_eq!(created.metadata.location, "mem://warehouse/db/other");
}

#[test]
fn a_replacement_starts_from_its_metadata_and_keeps_the_version_over_a_default() {
    let catalog = MemoryCatalog::new();
    create(&catalog, 3, &[]);
    append(&catalog, vec![file("a", 1)]);
    let mut table = NewTable::new(schema());
    table.spec = PartitionSpec::new(
        0,
        vec![PartitionField::new(2, 1000, "cat", Transform::Identity)],
    );
    // an engine's default for created tables (Spark's v2) must not downgrade a replaced v3
    // table: Java's buildReplacement keeps the version unless the properties name one
    let mut tx = Transaction::create_or_replace(catalog.clone(), ident(), table.clone())
        .unwrap()
        .default_format_version(2);
    assert!(tx.replaces());
    let start = tx.start_metadata().unwrap();
    assert_eq!(start.format_version, 3);
    assert_eq!(start.current_snapshot_id, None);
    assert_eq!(start.snapshots.len(), 1);
    // the data files of a replace-as-select are written against the start's spec and schema
    let mut f = file("p", 3);
    f.partition = vec![Some(Literal::Int(7))];
    tx.append_files(vec![f]);
    let committed = tx.commit().unwrap().metadata;
    assert_eq!(committed.format_version, 3);
    assert_eq!(committed.default_spec_id, start.default_spec_id);
    assert_eq!(committed.current_schema_id, start.current_schema_id);
    assert_eq!(committed.snapshots.len(), 2);

    // a created table takes the default when neither the table nor its properties name one
    let other = TableIdent::parse("db.other").unwrap();
    let mut tx = Transaction::create_or_replace(catalog.clone(), other.clone(), table.clone())
        .unwrap()
        .default_format_version(2);
    assert!(!tx.replaces());
    assert_eq!(tx.start_metadata().unwrap().format_version, 2);
    assert_eq!(tx.commit().unwrap().metadata.format_version, 2);
    let mut named = table;
    named.properties = vec![("format-version".into(), "3".into())];
    let third = TableIdent::parse("db.third").unwrap();
    let tx = Transaction::create(catalog.clone(), third, named).default_format_version(2);
    assert_eq!(tx.commit().unwrap().metadata.format_version, 3);
    // start_metadata is for creates and replacements only
    let mut existing = Transaction::load(catalog.clone(), other).unwrap();
    assert!(existing.start_metadata().is_err());
}

#[test]
fn threads_on_one_sqlite_catalog_lose_nothing() {
    use crate::catalog::sql::SqlCatalog;
    use crate::io::LocalFileIO;

    let dir = crate::catalog::testing::scratch_dir("commit-sqlite");
    let uri = format!("sqlite:///{}", dir.join("catalog.db").display());
    let warehouse = format!("file://{}", dir.join("wh").display());
    let open = || -> Arc<dyn Catalog> {
        Arc::new(SqlCatalog::open("c", &uri, &warehouse, Arc::new(LocalFileIO)).unwrap())
    };
    let catalog = open();
    catalog.create_namespace(&["db".to_string()], &[]).unwrap();
    create_table(
        catalog.clone(),
        &ident(),
        &schema(),
        &PartitionSpec::unpartitioned(),
        &SortOrder::unsorted(),
        None,
        &[],
        None,
    )
    .unwrap();
    let (threads, per_thread) = (4, 4);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let catalog = open(); // each writer has its own connection
            scope.spawn(move || {
                for i in 0..per_thread {
                    let mut tx = Transaction::load(catalog.clone(), ident())
                        .unwrap()
                        .with_retry_policy(fast_retry());
                    tx.append_files(vec![file(&format!("t{t}-{i}"), 1)]);
                    tx.commit().unwrap();
                }
            });
        }
    });
    let s = catalog.load_table(&ident()).unwrap();
    let n = threads * per_thread;
    let paths = live_paths(
        catalog.io().as_ref(),
        s.metadata.current_snapshot().unwrap(),
    );
    let unique: HashSet<&String> = paths.iter().collect();
    assert_eq!((paths.len(), unique.len()), (n, n));
    assert_eq!(s.metadata.snapshots.len(), n);
    assert_eq!(s.metadata.next_row_id, n as i64);
    std::fs::remove_dir_all(dir).unwrap();
}
