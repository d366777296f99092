//! The tables of the table metadata alone: `snapshots`, `history`, `metadata_log_entries`
//! and `refs` (Java's `SnapshotsTable`, `HistoryTable`, `MetadataLogEntriesTable`,
//! `RefsTable`). They always show the table as it is: Java ignores time travel for them.

use std::collections::HashSet;

use super::value::Value;
use crate::error::{Error, Result};
use crate::spec::table_metadata::TableMetadata;
use crate::spec::types::{MapType, NestedField, PrimitiveType as P};
use crate::spec::Schema;

fn schema(fields: Vec<NestedField>) -> Result<Schema> {
    Schema::new(0, fields, Vec::new())
}

pub(crate) fn snapshots_schema() -> Result<Schema> {
    schema(vec![
        NestedField::required(1, "committed_at", P::Timestamptz.into()),
        NestedField::required(2, "snapshot_id", P::Long.into()),
        NestedField::optional(3, "parent_id", P::Long.into()),
        NestedField::optional(4, "operation", P::String.into()),
        NestedField::optional(5, "manifest_list", P::String.into()),
        NestedField::optional(
            6,
            "summary",
            MapType::new(7, P::String.into(), 8, true, P::String.into()).into(),
        ),
    ])
}

/// One row per snapshot, in the metadata's order. The summary map holds every entry but
/// `operation`, which has its own column (Java's `Snapshot.summary()`).
pub(crate) fn snapshots_rows(md: &TableMetadata) -> Vec<Vec<Value>> {
    md.snapshots
        .iter()
        .map(|s| {
            let summary = s.summary.as_ref().map_or_else(Vec::new, |sum| {
                sum.properties
                    .iter()
                    .map(|(k, v)| (Value::string(k.as_str()), Value::string(v.as_str())))
                    .collect()
            });
            vec![
                Value::timestamptz_ms(s.timestamp_ms),
                Value::long(s.snapshot_id),
                Value::opt_long(s.parent_snapshot_id),
                Value::opt_string(s.operation().map(|o| o.as_str())),
                Value::opt_string(s.manifest_list.as_deref()),
                Value::Map(summary),
            ]
        })
        .collect()
}

pub(crate) fn history_schema() -> Result<Schema> {
    schema(vec![
        NestedField::required(1, "made_current_at", P::Timestamptz.into()),
        NestedField::required(2, "snapshot_id", P::Long.into()),
        NestedField::optional(3, "parent_id", P::Long.into()),
        NestedField::required(4, "is_current_ancestor", P::Boolean.into()),
    ])
}

/// One row per snapshot-log entry; `parent_id` is null for an expired snapshot.
pub(crate) fn history_rows(md: &TableMetadata) -> Vec<Vec<Value>> {
    let ancestors: HashSet<i64> = md
        .current_snapshot_id
        .map(|id| md.ancestors_of(id).iter().map(|s| s.snapshot_id).collect())
        .unwrap_or_default();
    md.snapshot_log
        .iter()
        .map(|e| {
            vec![
                Value::timestamptz_ms(e.timestamp_ms),
                Value::long(e.snapshot_id),
                Value::opt_long(
                    md.snapshot_by_id(e.snapshot_id)
                        .and_then(|s| s.parent_snapshot_id),
                ),
                Value::boolean(ancestors.contains(&e.snapshot_id)),
            ]
        })
        .collect()
}

pub(crate) fn metadata_log_entries_schema() -> Result<Schema> {
    schema(vec![
        NestedField::required(1, "timestamp", P::Timestamptz.into()),
        NestedField::required(2, "file", P::String.into()),
        NestedField::optional(3, "latest_snapshot_id", P::Long.into()),
        NestedField::optional(4, "latest_schema_id", P::Int.into()),
        NestedField::optional(5, "latest_sequence_number", P::Long.into()),
    ])
}

/// The previous metadata files and the current one (at the table's last-updated time),
/// each with the snapshot that was current at its time by the snapshot log (Java's
/// `SnapshotUtil.snapshotIdAsOfTime`); the schema id and sequence number are those of that
/// snapshot when it still exists.
pub(crate) fn metadata_log_entries_rows(
    md: &TableMetadata,
    metadata_location: Option<&str>,
) -> Result<Vec<Vec<Value>>> {
    let current = metadata_location.ok_or_else(|| {
        Error::invalid_argument(
            "metadata_log_entries needs the location of the current metadata file",
        )
    })?;
    let entries = md
        .metadata_log
        .iter()
        .map(|e| (e.timestamp_ms, e.metadata_file.as_str()))
        .chain(std::iter::once((md.last_updated_ms, current)));
    Ok(entries
        .map(|(ts, file)| {
            // the last log entry at or before the time (not necessarily a snapshot that
            // still exists)
            let latest = md
                .snapshot_log
                .iter()
                .rev()
                .find(|e| e.timestamp_ms <= ts)
                .map(|e| e.snapshot_id);
            let snapshot = latest.and_then(|id| md.snapshot_by_id(id));
            vec![
                Value::timestamptz_ms(ts),
                Value::string(file),
                Value::opt_long(latest),
                Value::opt_int(snapshot.and_then(|s| s.schema_id)),
                Value::opt_long(snapshot.map(|s| s.sequence_number)),
            ]
        })
        .collect())
}

pub(crate) fn refs_schema() -> Result<Schema> {
    schema(vec![
        NestedField::required(1, "name", P::String.into()),
        NestedField::required(2, "type", P::String.into()),
        NestedField::required(3, "snapshot_id", P::Long.into()),
        NestedField::optional(4, "max_reference_age_in_ms", P::Long.into()),
        NestedField::optional(5, "min_snapshots_to_keep", P::Int.into()),
        NestedField::optional(6, "max_snapshot_age_in_ms", P::Long.into()),
    ])
}

/// One row per branch or tag; `type` is `BRANCH` or `TAG` (Java's enum names).
pub(crate) fn refs_rows(md: &TableMetadata) -> Vec<Vec<Value>> {
    md.refs
        .iter()
        .map(|(name, r)| {
            vec![
                Value::string(name.as_str()),
                Value::string(if r.is_branch() { "BRANCH" } else { "TAG" }),
                Value::long(r.snapshot_id),
                Value::opt_long(r.max_ref_age_ms),
                Value::opt_int(r.min_snapshots_to_keep),
                Value::opt_long(r.max_snapshot_age_ms),
            ]
        })
        .collect()
}
