//! Bindings of `icefloe::commit::{manage_snapshots, expire}`: conversions only. Both
//! commit with the GIL released.

use std::collections::HashMap;
use std::sync::Arc;

use icefloe::catalog::{Catalog, TableIdent, TableState};
use icefloe::commit::expire::ExpireSnapshots;
use icefloe::commit::{ManageSnapshots, SnapshotOp, Transaction};
use icefloe::spec::json::parse_text;
use icefloe::{Error, Result};
use pyo3::prelude::*;
use serde_json::Value;

use crate::catalog::PyCatalog;
use crate::error::IntoPyResult;
use crate::metadata::PyTableMetadata;

type Ident = (Vec<String>, String);

fn field<'a>(op: &'a Value, kind: &str, key: &str) -> Result<&'a Value> {
    op.get(key)
        .filter(|v| !v.is_null())
        .ok_or_else(|| Error::invalid_argument(format!("{kind}: missing argument {key}")))
}

fn text(op: &Value, kind: &str, key: &str) -> Result<String> {
    field(op, kind, key)?
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| Error::invalid_argument(format!("{kind}: {key} must be a string")))
}

fn long(op: &Value, kind: &str, key: &str) -> Result<i64> {
    field(op, kind, key)?
        .as_i64()
        .ok_or_else(|| Error::invalid_argument(format!("{kind}: {key} must be an integer")))
}

fn int(op: &Value, kind: &str, key: &str) -> Result<i32> {
    i32::try_from(long(op, kind, key)?)
        .map_err(|_| Error::invalid_argument(format!("{kind}: {key} is out of range")))
}

/// One operation as Python sends it: `{"op": ..., "name", "new_name", "to",
/// "snapshot_id", "value", "timestamp_ms", "fast_forward"}`.
fn to_op(op: &Value) -> Result<SnapshotOp> {
    let kind = op
        .get("op")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::invalid_argument("snapshot operation without \"op\""))?;
    let name = || text(op, kind, "name");
    let id = || long(op, kind, "snapshot_id");
    Ok(match kind {
        "create_branch" => SnapshotOp::CreateBranch {
            name: name()?,
            snapshot_id: op.get("snapshot_id").and_then(Value::as_i64),
        },
        "create_tag" => SnapshotOp::CreateTag {
            name: name()?,
            snapshot_id: id()?,
        },
        "remove_branch" => SnapshotOp::RemoveBranch { name: name()? },
        "remove_tag" => SnapshotOp::RemoveTag { name: name()? },
        "rename_branch" => SnapshotOp::RenameBranch {
            name: name()?,
            new_name: text(op, kind, "new_name")?,
        },
        "replace_branch" => SnapshotOp::ReplaceBranch {
            name: name()?,
            snapshot_id: id()?,
        },
        "replace_branch_with_ref" => SnapshotOp::ReplaceBranchWithRef {
            from: name()?,
            to: text(op, kind, "to")?,
            fast_forward: field(op, kind, "fast_forward")?.as_bool().unwrap_or(false),
        },
        "replace_tag" => SnapshotOp::ReplaceTag {
            name: name()?,
            snapshot_id: id()?,
        },
        "set_min_snapshots_to_keep" => SnapshotOp::SetMinSnapshotsToKeep {
            name: name()?,
            value: int(op, kind, "value")?,
        },
        "set_max_snapshot_age_ms" => SnapshotOp::SetMaxSnapshotAgeMs {
            name: name()?,
            value: long(op, kind, "value")?,
        },
        "set_max_ref_age_ms" => SnapshotOp::SetMaxRefAgeMs {
            name: name()?,
            value: long(op, kind, "value")?,
        },
        "set_current_snapshot" => SnapshotOp::SetCurrentSnapshot { snapshot_id: id()? },
        "rollback_to" => SnapshotOp::RollbackTo { snapshot_id: id()? },
        "rollback_to_time" => SnapshotOp::RollbackToTime {
            timestamp_ms: long(op, kind, "timestamp_ms")?,
        },
        "cherry_pick" => SnapshotOp::CherryPick { snapshot_id: id()? },
        other => {
            return Err(Error::invalid_argument(format!(
                "unknown snapshot operation {other}"
            )))
        }
    })
}

/// Commits snapshot-management operations (in order) on top of the table as it was loaded
/// (`base`); returns the new metadata location and metadata.
#[pyfunction]
fn manage_snapshots(
    py: Python<'_>,
    catalog: &PyCatalog,
    table: Ident,
    base: (String, PyRef<'_, PyTableMetadata>),
    ops_json: &str,
) -> PyResult<(String, PyTableMetadata)> {
    let mut change = ManageSnapshots::new();
    let ops = parse_text(ops_json).py(py)?;
    for op in ops.as_array().map(Vec::as_slice).unwrap_or_default() {
        change.add(to_op(op).py(py)?);
    }
    let state = TableState {
        metadata_location: base.0,
        metadata: Arc::clone(&base.1.inner),
    };
    let catalog: Arc<dyn Catalog> = Arc::clone(&catalog.inner);
    let ident = TableIdent::new(table.0, table.1);
    let committed = py
        .detach(|| {
            let mut tx = Transaction::new(catalog, ident, state);
            tx.add_change(Box::new(change));
            tx.commit()
        })
        .py(py)?;
    Ok((
        committed.metadata_location,
        PyTableMetadata {
            inner: committed.metadata,
        },
    ))
}

/// Expires snapshots and deletes the files only they reached; returns what was removed by
/// kind (`removed_snapshot_ids`, `removed_refs`, `data_files`, `delete_files`,
/// `manifests`, `manifest_lists`, `statistics_files`) and the files kept because they lie
/// outside the table's location (`kept_outside_location`; none with
/// `delete_outside_location`), and the deletes that failed (`failed_delete_files` with
/// their errors in `failed_delete_errors`, in the same order). `max_concurrent_deletes`:
/// delete requests in flight (bulk requests on S3 and Azure).
#[pyfunction]
#[pyo3(signature = (catalog, table, *, older_than_ms = None, retain_last = None, snapshot_ids = vec![], clean_expired_files = true, clean_expired_metadata = false, delete_outside_location = false, max_concurrent_deletes = None))]
#[allow(clippy::too_many_arguments)]
fn expire_snapshots(
    py: Python<'_>,
    catalog: &PyCatalog,
    table: Ident,
    older_than_ms: Option<i64>,
    retain_last: Option<i32>,
    snapshot_ids: Vec<i64>,
    clean_expired_files: bool,
    clean_expired_metadata: bool,
    delete_outside_location: bool,
    max_concurrent_deletes: Option<usize>,
) -> PyResult<ExpireOut> {
    let catalog: Arc<dyn Catalog> = Arc::clone(&catalog.inner);
    let ident = TableIdent::new(table.0, table.1);
    let r = py
        .detach(|| {
            let mut e = ExpireSnapshots::new()
                .clean_expired_files(clean_expired_files)
                .clean_expired_metadata(clean_expired_metadata)
                .delete_outside_location(delete_outside_location);
            if let Some(t) = older_than_ms {
                e = e.expire_older_than(t);
            }
            if let Some(n) = retain_last {
                e = e.retain_last(n)?;
            }
            if let Some(n) = max_concurrent_deletes {
                e = e.max_concurrent_deletes(n)?;
            }
            for id in snapshot_ids {
                e = e.expire_snapshot_id(id);
            }
            e.commit(catalog, &ident)
        })
        .py(py)?;
    Ok(HashMap::from([
        (
            "removed_snapshot_ids",
            r.removed_snapshot_ids.iter().map(i64::to_string).collect(),
        ),
        ("removed_refs", r.removed_refs),
        ("data_files", r.deleted_data_files),
        ("delete_files", r.deleted_delete_files),
        ("manifests", r.deleted_manifests),
        ("manifest_lists", r.deleted_manifest_lists),
        ("statistics_files", r.deleted_statistics_files),
        ("kept_outside_location", r.kept_outside_location),
        (
            "failed_delete_files",
            r.failed_deletes.iter().map(|(p, _)| p.clone()).collect(),
        ),
        (
            "failed_delete_errors",
            r.failed_deletes.into_iter().map(|(_, e)| e).collect(),
        ),
    ]))
}

type ExpireOut = HashMap<&'static str, Vec<String>>;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(manage_snapshots, m)?)?;
    m.add_function(wrap_pyfunction!(expire_snapshots, m)?)?;
    Ok(())
}
