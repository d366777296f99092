//! A commit as the REST spec sends it: `requirements` and `updates` for
//! `POST /v1/{prefix}/namespaces/{ns}/tables/{table}`.
//!
//! The `Catalog` trait hands a catalog the base and the whole new metadata (`commit/`
//! builds it), so the updates are the difference between the two, and the requirements
//! are derived from the updates as Java's `UpdateRequirements` derives them (the table's
//! uuid always; each changed ref at its base snapshot; the current schema, default spec and
//! sort order, last assigned ids where those change). A new table is `assert-create` and
//! the whole metadata as updates, which Java's server applies to an empty table.
//!
//! Translated: format upgrades, uuid (on create), schemas (add, set current, remove),
//! partition specs (add, set default, remove), sort orders (add, set default), location,
//! properties (set, remove), snapshots (add, remove), refs (set, remove), statistics and
//! partition statistics (set, remove). Fields the server derives from those are not sent
//! (last column and partition ids, sequence numbers, next row id, logs, timestamps).
//! Anything else that differs (a downgrade, a changed uuid, a schema, spec or snapshot
//! rewritten under its id, a removed sort order, encryption keys, a current snapshot that
//! disagrees with `main`) is an `Unsupported` error: a change is never dropped silently.

use std::collections::{BTreeSet, HashSet};

use serde_json::Value;

use super::config::ident_json;
use crate::catalog::TableIdent;
use crate::commit::update::LAST_ADDED;
use crate::commit::{TableRequirement, TableUpdate};
use crate::error::{Error, Result};
use crate::spec::snapshot::SnapshotRef;
use crate::spec::table_metadata::TableMetadata;

/// The body of a commit request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommitRequest {
    pub requirements: Vec<TableRequirement>,
    pub updates: Vec<TableUpdate>,
}

impl CommitRequest {
    /// The spec's `CommitTableRequest`.
    pub fn to_json(&self, ident: &TableIdent) -> Value {
        serde_json::json!({
            "identifier": ident_json(ident),
            "requirements": self.requirements.iter().map(TableRequirement::to_json).collect::<Vec<_>>(),
            "updates": self.updates.iter().map(TableUpdate::to_json).collect::<Vec<_>>(),
        })
    }

    /// The commit that creates a table with `new` as its first metadata.
    pub fn for_create(ident: &TableIdent, new: &TableMetadata) -> Result<CommitRequest> {
        let updates = diff(ident, None, new)?;
        Ok(CommitRequest {
            requirements: vec![TableRequirement::AssertCreate],
            updates,
        })
    }

    /// The commit that turns `base` (the table as loaded) into `new`.
    pub fn for_update(
        ident: &TableIdent,
        base: &TableMetadata,
        new: &TableMetadata,
    ) -> Result<CommitRequest> {
        let updates = diff(ident, Some(base), new)?;
        let requirements = requirements(base, &updates);
        Ok(CommitRequest {
            requirements,
            updates,
        })
    }
}

fn unsupported(ident: &TableIdent, what: &str) -> Error {
    Error::unsupported(format!(
        "table {ident}: the REST catalog client cannot send this change: {what}"
    ))
}

/// The id to send in `set-current-schema` (and the like): `-1` when it names the object
/// added last in this commit, as Java sends it (the server may number added objects
/// itself), else the id.
fn id_or_last_added(id: i32, added: &[i32]) -> i32 {
    if added.last() == Some(&id) {
        LAST_ADDED
    } else {
        id
    }
}

/// The updates that turn `base` (`None`: an empty table) into `new`.
fn diff(
    ident: &TableIdent,
    base: Option<&TableMetadata>,
    new: &TableMetadata,
) -> Result<Vec<TableUpdate>> {
    let mut out = Vec::new();

    // uuid: assigned once, at creation
    match base {
        None => {
            if let Some(uuid) = &new.table_uuid {
                out.push(TableUpdate::AssignUuid { uuid: uuid.clone() });
            }
        }
        Some(b) => {
            let same = match (&b.table_uuid, &new.table_uuid) {
                (Some(a), Some(n)) => a.eq_ignore_ascii_case(n),
                (None, _) => true,
                (Some(_), None) => false,
            };
            if !same {
                return Err(unsupported(ident, "the table uuid changed"));
            }
            if b.table_uuid.is_none() {
                if let Some(uuid) = &new.table_uuid {
                    out.push(TableUpdate::AssignUuid { uuid: uuid.clone() });
                }
            }
        }
    }

    // format version
    match base {
        None => out.push(TableUpdate::UpgradeFormatVersion {
            format_version: new.format_version,
        }),
        Some(b) if new.format_version > b.format_version => {
            out.push(TableUpdate::UpgradeFormatVersion {
                format_version: new.format_version,
            })
        }
        Some(b) if new.format_version < b.format_version => {
            return Err(unsupported(
                ident,
                &format!(
                    "format version {} to {} is a downgrade",
                    b.format_version, new.format_version
                ),
            ))
        }
        Some(_) => {}
    }

    // schemas
    let mut added_schemas = Vec::new();
    for s in &new.schemas {
        match base.and_then(|b| b.schema_by_id(s.schema_id())) {
            Some(old) if old == s => {}
            Some(_) => {
                return Err(unsupported(
                    ident,
                    &format!("schema {} was rewritten under the same id", s.schema_id()),
                ))
            }
            None => {
                added_schemas.push(s.schema_id());
                out.push(TableUpdate::AddSchema {
                    schema: s.clone(),
                    last_column_id: Some(new.last_column_id),
                });
            }
        }
    }
    if base.is_none_or(|b| b.current_schema_id != new.current_schema_id) {
        out.push(TableUpdate::SetCurrentSchema {
            schema_id: id_or_last_added(new.current_schema_id, &added_schemas),
        });
    }
    if let Some(b) = base {
        if added_schemas.is_empty() && new.last_column_id != b.last_column_id {
            return Err(unsupported(
                ident,
                "last-column-id changed without a new schema",
            ));
        }
        let removed: Vec<i32> = b
            .schemas
            .iter()
            .map(|s| s.schema_id())
            .filter(|id| new.schema_by_id(*id).is_none())
            .collect();
        if !removed.is_empty() {
            out.push(TableUpdate::RemoveSchemas {
                schema_ids: removed,
            });
        }
    }

    // partition specs
    let mut added_specs = Vec::new();
    for s in &new.partition_specs {
        match base.and_then(|b| b.spec_by_id(s.spec_id)) {
            Some(old) if old == s => {}
            Some(_) => {
                return Err(unsupported(
                    ident,
                    &format!(
                        "partition spec {} was rewritten under the same id",
                        s.spec_id
                    ),
                ))
            }
            None => {
                added_specs.push(s.spec_id);
                out.push(TableUpdate::AddSpec { spec: s.clone() });
            }
        }
    }
    if base.is_none_or(|b| b.default_spec_id != new.default_spec_id) {
        out.push(TableUpdate::SetDefaultSpec {
            spec_id: id_or_last_added(new.default_spec_id, &added_specs),
        });
    }
    if let Some(b) = base {
        if added_specs.is_empty() && new.last_partition_id != b.last_partition_id {
            return Err(unsupported(
                ident,
                "last-partition-id changed without a new partition spec",
            ));
        }
        let removed: Vec<i32> = b
            .partition_specs
            .iter()
            .map(|s| s.spec_id)
            .filter(|id| new.spec_by_id(*id).is_none())
            .collect();
        if !removed.is_empty() {
            out.push(TableUpdate::RemovePartitionSpecs { spec_ids: removed });
        }
    }

    // sort orders
    let mut added_orders = Vec::new();
    for o in &new.sort_orders {
        match base.and_then(|b| b.sort_order_by_id(o.order_id)) {
            Some(old) if old == o => {}
            Some(_) => {
                return Err(unsupported(
                    ident,
                    &format!("sort order {} was rewritten under the same id", o.order_id),
                ))
            }
            None => {
                added_orders.push(o.order_id);
                out.push(TableUpdate::AddSortOrder {
                    sort_order: o.clone(),
                });
            }
        }
    }
    if base.is_none_or(|b| b.default_sort_order_id != new.default_sort_order_id) {
        out.push(TableUpdate::SetDefaultSortOrder {
            sort_order_id: id_or_last_added(new.default_sort_order_id, &added_orders),
        });
    }
    if let Some(b) = base {
        if let Some(o) = b
            .sort_orders
            .iter()
            .find(|o| new.sort_order_by_id(o.order_id).is_none())
        {
            return Err(unsupported(
                ident,
                &format!(
                    "sort order {} was removed (the spec has no update for it)",
                    o.order_id
                ),
            ));
        }
    }

    // location
    if base.is_none_or(|b| b.location != new.location) {
        out.push(TableUpdate::SetLocation {
            location: new.location.clone(),
        });
    }

    // properties
    let base_props: &[(String, String)] = base.map_or(&[], |b| &b.properties);
    let set: Vec<(String, String)> = new
        .properties
        .iter()
        .filter(|(k, v)| {
            base_props
                .iter()
                .rev()
                .find(|(bk, _)| bk == k)
                .map(|(_, bv)| bv)
                != Some(v)
        })
        .cloned()
        .collect();
    if !set.is_empty() {
        out.push(TableUpdate::SetProperties { updates: set });
    }
    let removed: BTreeSet<String> = base_props
        .iter()
        .filter(|(k, _)| !new.properties.iter().any(|(nk, _)| nk == k))
        .map(|(k, _)| k.clone())
        .collect();
    if !removed.is_empty() {
        out.push(TableUpdate::RemoveProperties {
            removals: removed.into_iter().collect(),
        });
    }

    // snapshots, in the order the new metadata lists them (parents before children)
    for s in &new.snapshots {
        match base.and_then(|b| b.snapshot_by_id(s.snapshot_id)) {
            Some(old) if old == s => {}
            Some(_) => {
                return Err(unsupported(
                    ident,
                    &format!("snapshot {} was rewritten under the same id", s.snapshot_id),
                ))
            }
            None => out.push(TableUpdate::AddSnapshot {
                snapshot: s.clone(),
            }),
        }
    }

    // refs: removals first, so that a ref can be dropped and re-made in one commit
    let base_refs: &[(String, SnapshotRef)] = base.map_or(&[], |b| &b.refs);
    for (name, _) in base_refs {
        if new.snapshot_ref(name).is_none() {
            out.push(TableUpdate::RemoveSnapshotRef {
                ref_name: name.clone(),
            });
        }
    }
    for (name, r) in &new.refs {
        if base.and_then(|b| b.snapshot_ref(name)) != Some(r) {
            out.push(TableUpdate::SetSnapshotRef {
                ref_name: name.clone(),
                reference: r.clone(),
            });
        }
    }
    // the current snapshot is `main`'s: anything else cannot be said in updates
    let main = new.snapshot_ref("main").map(|r| r.snapshot_id);
    if new.current_snapshot_id != main {
        return Err(unsupported(
            ident,
            "the current snapshot is not the one 'main' points at",
        ));
    }

    if let Some(b) = base {
        let kept: HashSet<i64> = new.snapshots.iter().map(|s| s.snapshot_id).collect();
        let removed: Vec<i64> = b
            .snapshots
            .iter()
            .map(|s| s.snapshot_id)
            .filter(|id| !kept.contains(id))
            .collect();
        if !removed.is_empty() {
            out.push(TableUpdate::RemoveSnapshots {
                snapshot_ids: removed,
            });
        }
    }

    // statistics, by snapshot
    for st in &new.statistics {
        let old = base.and_then(|b| {
            b.statistics
                .iter()
                .find(|o| o.snapshot_id == st.snapshot_id)
        });
        if old != Some(st) {
            out.push(TableUpdate::SetStatistics {
                statistics: st.clone(),
            });
        }
    }
    for st in base.map_or(&[][..], |b| &b.statistics) {
        if !new
            .statistics
            .iter()
            .any(|n| n.snapshot_id == st.snapshot_id)
        {
            out.push(TableUpdate::RemoveStatistics {
                snapshot_id: st.snapshot_id,
            });
        }
    }
    for st in &new.partition_statistics {
        let old = base.and_then(|b| {
            b.partition_statistics
                .iter()
                .find(|o| o.snapshot_id == st.snapshot_id)
        });
        if old != Some(st) {
            out.push(TableUpdate::SetPartitionStatistics {
                partition_statistics: st.clone(),
            });
        }
    }
    for st in base.map_or(&[][..], |b| &b.partition_statistics) {
        if !new
            .partition_statistics
            .iter()
            .any(|n| n.snapshot_id == st.snapshot_id)
        {
            out.push(TableUpdate::RemovePartitionStatistics {
                snapshot_id: st.snapshot_id,
            });
        }
    }

    if base.map_or(!new.encryption_keys.is_empty(), |b| {
        b.encryption_keys != new.encryption_keys
    }) {
        return Err(unsupported(ident, "encryption keys changed"));
    }
    Ok(out)
}

/// The requirements of `updates` against `base`, as Java's `UpdateRequirements.forUpdateTable`
/// (each one once: repeated updates need the same requirement of the same base).
fn requirements(base: &TableMetadata, updates: &[TableUpdate]) -> Vec<TableRequirement> {
    let mut out = Vec::new();
    let mut push = |r: TableRequirement| {
        if !out.contains(&r) {
            out.push(r);
        }
    };
    if let Some(uuid) = &base.table_uuid {
        push(TableRequirement::AssertTableUuid { uuid: uuid.clone() });
    }
    let current_schema = || TableRequirement::AssertCurrentSchemaId {
        current_schema_id: base.current_schema_id,
    };
    let default_spec = || TableRequirement::AssertDefaultSpecId {
        default_spec_id: base.default_spec_id,
    };
    // old schemas and specs may only go if no branch moved meanwhile (it could write them)
    let branches = || {
        base.refs
            .iter()
            .filter(|(name, r)| r.kind.as_str() == "branch" && name != "main")
            .map(|(name, r)| TableRequirement::AssertRefSnapshotId {
                ref_name: name.clone(),
                snapshot_id: Some(r.snapshot_id),
            })
            .collect::<Vec<_>>()
    };
    for u in updates {
        match u {
            TableUpdate::SetSnapshotRef { ref_name, .. } => {
                push(TableRequirement::AssertRefSnapshotId {
                    ref_name: ref_name.clone(),
                    snapshot_id: base.snapshot_ref(ref_name).map(|r| r.snapshot_id),
                })
            }
            TableUpdate::AddSchema { .. } => push(TableRequirement::AssertLastAssignedFieldId {
                last_assigned_field_id: base.last_column_id,
            }),
            TableUpdate::SetCurrentSchema { .. } => push(current_schema()),
            TableUpdate::AddSpec { .. } => push(TableRequirement::AssertLastAssignedPartitionId {
                last_assigned_partition_id: base.last_partition_id,
            }),
            TableUpdate::SetDefaultSpec { .. } => push(default_spec()),
            TableUpdate::SetDefaultSortOrder { .. } => {
                push(TableRequirement::AssertDefaultSortOrderId {
                    default_sort_order_id: base.default_sort_order_id,
                })
            }
            TableUpdate::RemovePartitionSpecs { .. } => {
                push(default_spec());
                branches().into_iter().for_each(&mut push);
            }
            TableUpdate::RemoveSchemas { .. } => {
                push(current_schema());
                branches().into_iter().for_each(&mut push);
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
#[path = "commit_tests.rs"]
mod tests;
