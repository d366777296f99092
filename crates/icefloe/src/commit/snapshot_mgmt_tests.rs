//! Tests of `manage_snapshots` and `expire` on the in-memory catalog.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use super::expire::ExpireSnapshots;
use super::manage_snapshots::{ManageSnapshots, SnapshotOp, SOURCE_SNAPSHOT_ID_PROP};
use super::properties::RetryPolicy;
use super::snapshot::SnapshotProducer;
use super::test_catalog::MemoryCatalog;
use super::transaction::{create_table, Transaction};
use crate::catalog::{Catalog, TableIdent, TableState};
use crate::error::Error;
use crate::io::FileIO;
use crate::manifest::{
    read_manifest, read_manifest_list, DataContentType, DataFile, FileFormat, ManifestSource,
    ReadManifestOptions,
};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::spec::snapshot::{SnapshotRefType, MAIN_BRANCH};
use crate::spec::sort::SortOrder;
use crate::spec::table_metadata::TableMetadata;
use crate::spec::types::{NestedField, PrimitiveType, Type};

fn ident() -> TableIdent {
    TableIdent::parse("db.t").unwrap()
}

fn retry() -> RetryPolicy {
    RetryPolicy {
        num_retries: 5,
        min_wait: Duration::from_millis(1),
        max_wait: Duration::from_millis(5),
        total_timeout: Duration::from_secs(30),
    }
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

/// A data file's path: `name` in the table's data folder, or `name` itself when it is a
/// location (a file outside the table).
fn path(name: &str) -> String {
    if name.contains("://") {
        name.to_string()
    } else {
        format!("mem://warehouse/db/t/data/{name}.parquet")
    }
}

fn file(name: &str) -> DataFile {
    DataFile::new(
        DataContentType::Data,
        path(name),
        FileFormat::Parquet,
        vec![],
        10,
        100,
    )
}

fn commit(catalog: &Arc<MemoryCatalog>, change: Box<dyn super::PendingChange>) -> TableState {
    try_commit(catalog, change).unwrap()
}

fn try_commit(
    catalog: &Arc<MemoryCatalog>,
    change: Box<dyn super::PendingChange>,
) -> crate::error::Result<TableState> {
    let mut tx = Transaction::load(catalog.clone(), ident())?.with_retry_policy(retry());
    tx.add_change(change);
    tx.commit()
}

/// Appends files to a branch and returns the new snapshot id.
fn append_to(catalog: &Arc<MemoryCatalog>, branch: &str, names: &[&str]) -> i64 {
    let mut p = SnapshotProducer::fast_append().to_branch(branch);
    for n in names {
        p.add_file(file(n));
    }
    let state = commit(catalog, Box::new(p));
    state.metadata.snapshot_by_ref(branch).unwrap().snapshot_id
}

fn delete_files(catalog: &Arc<MemoryCatalog>, names: &[&str]) -> i64 {
    let mut p = SnapshotProducer::delete_files();
    for n in names {
        p.delete_path(path(n));
    }
    commit(catalog, Box::new(p))
        .metadata
        .current_snapshot_id
        .unwrap()
}

fn manage(catalog: &Arc<MemoryCatalog>, ops: Vec<SnapshotOp>) -> crate::error::Result<TableState> {
    let mut m = ManageSnapshots::new();
    for op in ops {
        m.add(op);
    }
    try_commit(catalog, Box::new(m))
}

fn load(catalog: &Arc<MemoryCatalog>) -> Arc<TableMetadata> {
    catalog.load_table(&ident()).unwrap().metadata
}

fn is_validation(e: &Error) -> bool {
    matches!(e, Error::ValidationFailed { .. })
}

#[test]
fn branches_and_tags_with_retention_fields() {
    let catalog = MemoryCatalog::new();
    create(&catalog, &[]);
    let s1 = append_to(&catalog, MAIN_BRANCH, &["a"]);
    let s2 = append_to(&catalog, MAIN_BRANCH, &["b"]);

    let state = manage(
        &catalog,
        vec![
            SnapshotOp::CreateBranch {
                name: "dev".into(),
                snapshot_id: Some(s1),
            },
            SnapshotOp::CreateTag {
                name: "v1".into(),
                snapshot_id: s1,
            },
            SnapshotOp::SetMinSnapshotsToKeep {
                name: "dev".into(),
                value: 3,
            },
            SnapshotOp::SetMaxSnapshotAgeMs {
                name: "dev".into(),
                value: 1000,
            },
            SnapshotOp::SetMaxRefAgeMs {
                name: "v1".into(),
                value: 5000,
            },
        ],
    )
    .unwrap();
    let dev = state.metadata.snapshot_ref("dev").unwrap();
    assert_eq!(
        (
            dev.snapshot_id,
            dev.kind,
            dev.min_snapshots_to_keep,
            dev.max_snapshot_age_ms
        ),
        (s1, SnapshotRefType::Branch, Some(3), Some(1000))
    );
    let v1 = state.metadata.snapshot_ref("v1").unwrap();
    assert_eq!(
        (v1.kind, v1.max_ref_age_ms),
        (SnapshotRefType::Tag, Some(5000))
    );
    // the current snapshot is untouched by ref changes
    assert_eq!(state.metadata.current_snapshot_id, Some(s2));

    // misuse is a ValidationFailed, and nothing is committed
    for ops in [
        vec![SnapshotOp::CreateTag {
            name: "dev".into(),
            snapshot_id: s2,
        }],
        vec![SnapshotOp::RemoveBranch {
            name: MAIN_BRANCH.into(),
        }],
        vec![SnapshotOp::RemoveBranch { name: "v1".into() }],
        vec![SnapshotOp::RemoveTag { name: "dev".into() }],
        vec![SnapshotOp::SetMinSnapshotsToKeep {
            name: "v1".into(),
            value: 1,
        }],
        vec![SnapshotOp::CreateBranch {
            name: "x".into(),
            snapshot_id: Some(12345),
        }],
        vec![SnapshotOp::RenameBranch {
            name: "dev".into(),
            new_name: "v1".into(),
        }],
    ] {
        let err = manage(&catalog, ops.clone()).unwrap_err();
        assert!(is_validation(&err), "{ops:?}: {err:?}");
    }
    assert_eq!(load(&catalog).refs, state.metadata.refs);

    // rename keeps the retention fields; replace keeps them too; fast-forward needs an ancestor
    let state = manage(
        &catalog,
        vec![
            SnapshotOp::RenameBranch {
                name: "dev".into(),
                new_name: "feature".into(),
            },
            SnapshotOp::ReplaceBranchWithRef {
                from: "feature".into(),
                to: MAIN_BRANCH.into(),
                fast_forward: true,
            },
        ],
    )
    .unwrap();
    assert!(state.metadata.snapshot_ref("dev").is_none());
    let feature = state.metadata.snapshot_ref("feature").unwrap();
    assert_eq!(
        (feature.snapshot_id, feature.min_snapshots_to_keep),
        (s2, Some(3))
    );
    let s3 = append_to(&catalog, "feature", &["c"]);
    let err = manage(
        &catalog,
        vec![SnapshotOp::ReplaceBranchWithRef {
            from: "feature".into(),
            to: "v1".into(),
            fast_forward: true,
        }],
    )
    .unwrap_err();
    assert!(is_validation(&err), "{err:?}");
    let state = manage(
        &catalog,
        vec![
            SnapshotOp::ReplaceBranchWithRef {
                from: MAIN_BRANCH.into(),
                to: "feature".into(),
                fast_forward: true,
            },
            SnapshotOp::RemoveTag { name: "v1".into() },
        ],
    )
    .unwrap();
    assert_eq!(state.metadata.current_snapshot_id, Some(s3));
    assert!(state.metadata.snapshot_ref("v1").is_none());
    assert_eq!(state.metadata.snapshot_log.last().unwrap().snapshot_id, s3);
}

#[test]
fn rollback_and_set_current_snapshot() {
    let catalog = MemoryCatalog::new();
    create(&catalog, &[]);
    let s1 = append_to(&catalog, MAIN_BRANCH, &["a"]);
    std::thread::sleep(Duration::from_millis(5));
    let s2 = append_to(&catalog, MAIN_BRANCH, &["b"]);
    std::thread::sleep(Duration::from_millis(5));
    let s3 = append_to(&catalog, MAIN_BRANCH, &["c"]);

    let state = manage(&catalog, vec![SnapshotOp::RollbackTo { snapshot_id: s1 }]).unwrap();
    assert_eq!(state.metadata.current_snapshot_id, Some(s1));
    let log: Vec<i64> = state
        .metadata
        .snapshot_log
        .iter()
        .map(|e| e.snapshot_id)
        .collect();
    assert_eq!(log, vec![s1, s2, s3, s1]);

    // s3 is no longer an ancestor of the current snapshot: only set-current reaches it
    let err = manage(&catalog, vec![SnapshotOp::RollbackTo { snapshot_id: s3 }]).unwrap_err();
    assert!(is_validation(&err), "{err:?}");
    let state = manage(
        &catalog,
        vec![SnapshotOp::SetCurrentSnapshot { snapshot_id: s3 }],
    )
    .unwrap();
    assert_eq!(state.metadata.current_snapshot_id, Some(s3));

    // to a time: the newest ancestor strictly older than it
    let t2 = state.metadata.snapshot_by_id(s2).unwrap().timestamp_ms;
    let state = manage(
        &catalog,
        vec![SnapshotOp::RollbackToTime {
            timestamp_ms: t2 + 1,
        }],
    )
    .unwrap();
    assert_eq!(state.metadata.current_snapshot_id, Some(s2));
    let t1 = state.metadata.snapshot_by_id(s1).unwrap().timestamp_ms;
    let err = manage(
        &catalog,
        vec![SnapshotOp::RollbackToTime { timestamp_ms: t1 }],
    )
    .unwrap_err();
    assert!(is_validation(&err), "{err:?}");
}

#[test]
fn a_ref_moved_by_another_writer_fails_the_retry() {
    let catalog = MemoryCatalog::new();
    create(&catalog, &[]);
    let s1 = append_to(&catalog, MAIN_BRANCH, &["a"]);
    manage(
        &catalog,
        vec![SnapshotOp::CreateBranch {
            name: "dev".into(),
            snapshot_id: Some(s1),
        }],
    )
    .unwrap();
    let s2 = append_to(&catalog, MAIN_BRANCH, &["b"]);

    // a transaction made on the table as it is now ...
    let mut tx = Transaction::load(catalog.clone(), ident())
        .unwrap()
        .with_retry_policy(retry());
    let mut m = ManageSnapshots::new();
    m.add(SnapshotOp::ReplaceBranch {
        name: "dev".into(),
        snapshot_id: s2,
    });
    tx.add_change(Box::new(m));
    // ... while another writer moves the branch
    let s3 = append_to(&catalog, "dev", &["c"]);
    let err = tx.commit().unwrap_err();
    assert!(is_validation(&err), "{err:?}");
    assert_eq!(load(&catalog).snapshot_ref("dev").unwrap().snapshot_id, s3);

    // a change to an unrelated ref is retried and applies
    let mut tx = Transaction::load(catalog.clone(), ident())
        .unwrap()
        .with_retry_policy(retry());
    let mut m = ManageSnapshots::new();
    m.create_tag("t", s1);
    tx.add_change(Box::new(m));
    let s4 = append_to(&catalog, MAIN_BRANCH, &["d"]);
    let state = tx.commit().unwrap();
    assert_eq!(state.metadata.snapshot_ref("t").unwrap().snapshot_id, s1);
    assert_eq!(state.metadata.current_snapshot_id, Some(s4));
}

#[test]
fn cherry_pick_fast_forwards_or_re_appends() {
    let catalog = MemoryCatalog::new();
    create(&catalog, &[]);
    let s1 = append_to(&catalog, MAIN_BRANCH, &["a"]);
    // a staged snapshot (write-audit-publish): on a branch, its parent is main's head
    let staged = append_to(&catalog, "audit", &["b"]);
    let state = manage(
        &catalog,
        vec![SnapshotOp::CherryPick {
            snapshot_id: staged,
        }],
    )
    .unwrap();
    assert_eq!(state.metadata.current_snapshot_id, Some(staged));

    // main moved on: the append is re-applied as a new snapshot
    let staged2 = append_to(&catalog, "audit", &["c"]);
    let s3 = append_to(&catalog, MAIN_BRANCH, &["d"]);
    assert_ne!(s1, s3);
    let state = manage(
        &catalog,
        vec![SnapshotOp::CherryPick {
            snapshot_id: staged2,
        }],
    )
    .unwrap();
    let head = state.metadata.current_snapshot().unwrap().clone();
    assert_ne!(head.snapshot_id, staged2);
    assert_eq!(head.parent_snapshot_id, Some(s3));
    let summary = head.summary.as_ref().unwrap();
    assert_eq!(
        summary.get(SOURCE_SNAPSHOT_ID_PROP),
        Some(staged2.to_string().as_str())
    );
    let io = catalog.io();
    let mut live: Vec<String> = Vec::new();
    for mf in read_manifest_list(io.as_ref(), head.manifest_list.as_deref().unwrap()).unwrap() {
        let m = read_manifest(
            ManifestSource::file(io.as_ref(), &mf.manifest_path),
            &ReadManifestOptions::default().inherit_from(&mf),
        )
        .unwrap();
        live.extend(
            m.entries
                .into_iter()
                .filter(|e| e.is_live())
                .map(|e| e.data_file.file_path),
        );
    }
    live.sort();
    let expected: Vec<String> = ["a", "b", "c", "d"].iter().map(|n| path(n)).collect();
    assert_eq!(live, expected);

    // picking it again would duplicate its rows
    let err = manage(
        &catalog,
        vec![SnapshotOp::CherryPick {
            snapshot_id: staged2,
        }],
    )
    .unwrap_err();
    assert!(is_validation(&err), "{err:?}");
}

/// Every manifest list, manifest and live file the table's snapshots reach.
fn reachable(io: &dyn FileIO, md: &TableMetadata) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for s in &md.snapshots {
        let list = s.manifest_list.clone().unwrap();
        for mf in read_manifest_list(io, &list).unwrap() {
            let m = read_manifest(
                ManifestSource::file(io, &mf.manifest_path),
                &ReadManifestOptions::default().inherit_from(&mf),
            )
            .unwrap();
            out.extend(
                m.entries
                    .into_iter()
                    .filter(|e| e.is_live())
                    .map(|e| e.data_file.file_path),
            );
            out.insert(mf.manifest_path);
        }
        out.insert(list);
    }
    out
}

#[test]
fn expiry_removes_old_snapshots_and_only_unreachable_files() {
    let catalog = MemoryCatalog::new();
    create(&catalog, &[]);
    let s1 = append_to(&catalog, MAIN_BRANCH, &["a"]);
    let s2 = append_to(&catalog, MAIN_BRANCH, &["b"]);
    let s3 = delete_files(&catalog, &["a"]);
    let s4 = append_to(&catalog, MAIN_BRANCH, &["c"]);
    let io = catalog.io();
    let before = load(&catalog);
    let everything = reachable(io.as_ref(), &before);

    let result = ExpireSnapshots::new()
        .expire_older_than(chrono::Utc::now().timestamp_millis() + 1)
        .retain_last(2)
        .unwrap()
        .commit(catalog.clone(), &ident())
        .unwrap();
    let after = load(&catalog);
    let ids: Vec<i64> = after.snapshots.iter().map(|s| s.snapshot_id).collect();
    assert_eq!(ids, vec![s3, s4]);
    let mut removed = vec![s1, s2];
    removed.sort_unstable();
    assert_eq!(result.removed_snapshot_ids, removed);
    // the snapshot log keeps only what follows the last expired snapshot
    assert!(after
        .snapshot_log
        .iter()
        .all(|e| e.snapshot_id == s3 || e.snapshot_id == s4));

    let kept = reachable(io.as_ref(), &after);
    let deleted: BTreeSet<String> = result.deleted_files().into_iter().collect();
    assert!(
        deleted.is_disjoint(&kept),
        "{:?}",
        deleted.intersection(&kept)
    );
    // a was deleted by s3 (its DELETED entry is all that is left): gone with s1's manifest
    assert_eq!(result.deleted_data_files, vec![path("a")]);
    // everything reachable before is either still reachable or deleted
    let union: BTreeSet<String> = kept.union(&deleted).cloned().collect();
    assert_eq!(union, everything);
    for p in &result.deleted_manifest_lists {
        assert!(!io.exists(p).unwrap(), "{p}");
    }
    for p in kept.iter().filter(|p| p.ends_with(".avro")) {
        assert!(io.exists(p).unwrap(), "{p}");
    }
}

/// Data files another table owns (appended from elsewhere) stay when an expiry would
/// delete them, unless asked; the result names them.
#[test]
fn expiry_keeps_files_outside_the_table_location_unless_asked() {
    for delete_outside in [false, true] {
        let catalog = MemoryCatalog::new();
        create(&catalog, &[]);
        let outside = [
            "mem://warehouse/db/other/data/x.parquet",
            "mem://warehouse/db/tt/y.parquet",
        ];
        let io = catalog.io();
        for name in ["a"].iter().chain(&outside) {
            io.write_new(&path(name), b"x").unwrap();
        }
        append_to(&catalog, MAIN_BRANCH, &["a", outside[0], outside[1]]);
        delete_files(&catalog, &["a", outside[0], outside[1]]);
        append_to(&catalog, MAIN_BRANCH, &["b"]);
        let result = ExpireSnapshots::new()
            .expire_older_than(chrono::Utc::now().timestamp_millis() + 1)
            .retain_last(1)
            .unwrap()
            .delete_outside_location(delete_outside)
            .commit(catalog.clone(), &ident())
            .unwrap();
        assert_eq!(result.removed_snapshot_ids.len(), 2);
        assert!(!io.exists(&path("a")).unwrap());
        let mut outside_paths: Vec<String> = outside.iter().map(|p| path(p)).collect();
        outside_paths.sort();
        if delete_outside {
            assert!(result.kept_outside_location.is_empty());
            let mut deleted = result.deleted_data_files.clone();
            deleted.sort();
            let mut expected = outside_paths.clone();
            expected.push(path("a"));
            expected.sort();
            assert_eq!(deleted, expected);
            assert!(outside.iter().all(|p| !io.exists(p).unwrap()));
        } else {
            assert_eq!(result.deleted_data_files, vec![path("a")]);
            assert_eq!(result.kept_outside_location, outside_paths);
            assert!(outside.iter().all(|p| io.exists(p).unwrap()));
        }
    }
}

#[test]
fn expiry_keeps_what_refs_retain() {
    let catalog = MemoryCatalog::new();
    create(&catalog, &[]);
    let s1 = append_to(&catalog, MAIN_BRANCH, &["a"]);
    let s2 = append_to(&catalog, MAIN_BRANCH, &["b"]);
    let s3 = append_to(&catalog, MAIN_BRANCH, &["c"]);
    let s4 = append_to(&catalog, MAIN_BRANCH, &["d"]);
    manage(
        &catalog,
        vec![
            SnapshotOp::CreateTag {
                name: "old".into(),
                snapshot_id: s1,
            },
            SnapshotOp::CreateBranch {
                name: "b".into(),
                snapshot_id: Some(s3),
            },
            SnapshotOp::SetMinSnapshotsToKeep {
                name: "b".into(),
                value: 2,
            },
        ],
    )
    .unwrap();
    let b1 = append_to(&catalog, "b", &["e"]);
    let now = chrono::Utc::now().timestamp_millis() + 1;

    // a ref's snapshot cannot be expired by id
    let err = ExpireSnapshots::new()
        .expire_snapshot_id(s1)
        .commit(catalog.clone(), &ident())
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err:?}");

    let result = ExpireSnapshots::new()
        .expire_older_than(now)
        .commit(catalog.clone(), &ident())
        .unwrap();
    let after = load(&catalog);
    let mut ids: Vec<i64> = after.snapshots.iter().map(|s| s.snapshot_id).collect();
    ids.sort_unstable();
    // main keeps its head, b its head and one ancestor (min 2), the tag its snapshot
    let mut expected = vec![s1, s3, s4, b1];
    expected.sort_unstable();
    assert_eq!(ids, expected);
    assert_eq!(result.removed_snapshot_ids, vec![s2]);
    // b's data reached from s3/b1 and main's from s4: no data file is unreachable
    assert!(result.deleted_data_files.is_empty(), "{result:?}");

    // a tag past its max age goes, then its snapshot with it
    manage(
        &catalog,
        vec![SnapshotOp::SetMaxRefAgeMs {
            name: "old".into(),
            value: 1,
        }],
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(5));
    let result = ExpireSnapshots::new()
        .expire_older_than(now)
        .commit(catalog.clone(), &ident())
        .unwrap();
    assert_eq!(result.removed_refs, vec!["old".to_string()]);
    assert_eq!(result.removed_snapshot_ids, vec![s1]);
    assert!(load(&catalog).snapshot_ref("old").is_none());
    let kept = reachable(catalog.io().as_ref(), &load(&catalog));
    assert!(result.deleted_files().iter().all(|p| !kept.contains(p)));
}

#[test]
fn expiry_respects_gc_enabled_and_clean_expired_files() {
    let catalog = MemoryCatalog::new();
    create(&catalog, &[("gc.enabled", "false")]);
    append_to(&catalog, MAIN_BRANCH, &["a"]);
    let err = ExpireSnapshots::new()
        .commit(catalog.clone(), &ident())
        .unwrap_err();
    assert!(is_validation(&err), "{err:?}");

    let catalog = MemoryCatalog::new();
    create(&catalog, &[]);
    let s1 = append_to(&catalog, MAIN_BRANCH, &["a"]);
    append_to(&catalog, MAIN_BRANCH, &["b"]);
    let list = load(&catalog)
        .snapshot_by_id(s1)
        .unwrap()
        .manifest_list
        .clone()
        .unwrap();
    let result = ExpireSnapshots::new()
        .expire_snapshot_id(s1)
        .clean_expired_files(false)
        .commit(catalog.clone(), &ident())
        .unwrap();
    assert_eq!(result.removed_snapshot_ids, vec![s1]);
    assert!(result.deleted_files().is_empty());
    assert!(catalog.io().exists(&list).unwrap());
    assert!(ExpireSnapshots::new().retain_last(0).is_err());
}

/// An expiry deletes its files concurrently (at most `max_concurrent_deletes` at once), and a
/// delete that fails is reported with its file and error while the others are deleted: the
/// expiry is committed by then, so a failure leaves an orphan, not an error (as Java).
#[test]
fn expiry_deletes_concurrently_and_reports_failed_deletes() {
    use super::test_catalog::Faults;
    use std::sync::atomic::Ordering;
    let catalog = MemoryCatalog::new();
    create(&catalog, &[]);
    let names: Vec<String> = (0..40).map(|i| format!("f{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let io = catalog.io();
    for n in &names {
        io.write_new(&path(n), b"x").unwrap();
    }
    io.write_new(&path("keep"), b"x").unwrap();
    append_to(&catalog, MAIN_BRANCH, &names);
    delete_files(&catalog, &names);
    append_to(&catalog, MAIN_BRANCH, &["keep"]);
    let before = load(&catalog);
    // f1 and f10..f19 cannot be deleted (the data folder named: a manifest's random name may
    // begin with "f1" too)
    catalog.set_faults(Faults {
        fail_delete_containing: Some("/data/f1".into()),
        delete_delay: Some(Duration::from_millis(20)),
        ..Faults::default()
    });
    let e = ExpireSnapshots::new()
        .max_concurrent_deletes(0)
        .unwrap_err();
    assert!(e.to_string().contains("max_concurrent_deletes"), "{e}");
    let result = ExpireSnapshots::new()
        .expire_older_than(chrono::Utc::now().timestamp_millis() + 1)
        .retain_last(1)
        .unwrap()
        .max_concurrent_deletes(8)
        .unwrap()
        .commit(catalog.clone(), &ident())
        .unwrap();
    assert_eq!(result.removed_snapshot_ids.len(), 2);
    let max = catalog.io.max_deletes_in_flight.load(Ordering::SeqCst);
    assert!((2..=8).contains(&max), "max deletes in flight: {max}");

    let failed: BTreeSet<String> = result
        .failed_deletes
        .iter()
        .map(|(p, _)| p.clone())
        .collect();
    let want_failed: BTreeSet<String> = names
        .iter()
        .filter(|n| n.starts_with("f1"))
        .map(|n| path(n))
        .collect();
    assert_eq!(failed, want_failed);
    for (p, e) in &result.failed_deletes {
        assert!(
            e.contains(p) && e.contains("injected delete failure"),
            "{e}"
        );
        assert!(io.exists(p).unwrap(), "{p}");
    }
    let deleted: BTreeSet<String> = result.deleted_data_files.iter().cloned().collect();
    let want_deleted: BTreeSet<String> = names
        .iter()
        .filter(|n| !n.starts_with("f1"))
        .map(|n| path(n))
        .collect();
    assert_eq!(deleted, want_deleted);
    assert!(deleted.iter().all(|p| !io.exists(p).unwrap()));
    // the expired snapshots' manifest lists and manifests went too; the live file stayed
    let expired_lists: BTreeSet<String> = before
        .snapshots
        .iter()
        .filter(|s| result.removed_snapshot_ids.contains(&s.snapshot_id))
        .filter_map(|s| s.manifest_list.clone())
        .collect();
    let lists: BTreeSet<String> = result.deleted_manifest_lists.iter().cloned().collect();
    assert_eq!(lists, expired_lists);
    assert!(!result.deleted_manifests.is_empty());
    assert!(io.exists(&path("keep")).unwrap());
    let kept = reachable(io.as_ref(), &load(&catalog));
    assert!(kept
        .iter()
        .all(|p| !p.ends_with(".avro") || io.exists(p).unwrap()));

    // without a setting, the FileIO's default (4 here: the test FileIO has no fetch
    // concurrency) bounds the deletes
    let catalog = MemoryCatalog::new();
    create(&catalog, &[]);
    append_to(&catalog, MAIN_BRANCH, &names);
    delete_files(&catalog, &names);
    append_to(&catalog, MAIN_BRANCH, &["keep"]);
    catalog.set_faults(Faults {
        delete_delay: Some(Duration::from_millis(10)),
        ..Faults::default()
    });
    let result = ExpireSnapshots::new()
        .expire_older_than(chrono::Utc::now().timestamp_millis() + 1)
        .retain_last(1)
        .unwrap()
        .commit(catalog.clone(), &ident())
        .unwrap();
    assert_eq!(result.deleted_data_files.len(), 40);
    assert!(result.failed_deletes.is_empty());
    let max = catalog.io.max_deletes_in_flight.load(Ordering::SeqCst);
    assert!((2..=4).contains(&max), "max deletes in flight: {max}");
}
