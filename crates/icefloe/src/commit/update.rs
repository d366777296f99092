//! The changes a commit makes to table metadata (`TableUpdate`) and the conditions the
//! table must meet for them to apply (`TableRequirement`), with the REST catalog spec's
//! names and JSON form (`{"action": "add-schema", ...}`, `{"type": "assert-create", ...}`).
//!
//! Updates are applied by [`super::builder::MetadataBuilder`]; requirements are checked
//! against the table as it is when the commit is attempted.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::spec::json::{join, Obj};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::spec::snapshot::{Snapshot, SnapshotRef};
use crate::spec::sort::SortOrder;
use crate::spec::statistics::{str_map, PartitionStatisticsFile, StatisticsFile};
use crate::spec::table_metadata::TableMetadata;

/// `-1` in `set-current-schema`, `set-default-spec` and `set-default-sort-order`: the
/// schema, spec or order added last in the same set of changes.
pub const LAST_ADDED: i32 = -1;

/// One change to table metadata (the REST spec's `TableUpdate`).
#[derive(Debug, Clone, PartialEq)]
pub enum TableUpdate {
    AssignUuid {
        uuid: String,
    },
    UpgradeFormatVersion {
        format_version: i32,
    },
    AddSchema {
        schema: Schema,
        /// Deprecated in the REST spec; the builder uses the schema's highest id.
        last_column_id: Option<i32>,
    },
    /// `-1` ([`LAST_ADDED`]) for the schema added last.
    SetCurrentSchema {
        schema_id: i32,
    },
    AddSpec {
        spec: PartitionSpec,
    },
    SetDefaultSpec {
        spec_id: i32,
    },
    AddSortOrder {
        sort_order: SortOrder,
    },
    SetDefaultSortOrder {
        sort_order_id: i32,
    },
    AddSnapshot {
        snapshot: Snapshot,
    },
    SetSnapshotRef {
        ref_name: String,
        reference: SnapshotRef,
    },
    RemoveSnapshots {
        snapshot_ids: Vec<i64>,
    },
    RemoveSnapshotRef {
        ref_name: String,
    },
    SetLocation {
        location: String,
    },
    SetProperties {
        updates: Vec<(String, String)>,
    },
    RemoveProperties {
        removals: Vec<String>,
    },
    SetStatistics {
        statistics: StatisticsFile,
    },
    RemoveStatistics {
        snapshot_id: i64,
    },
    SetPartitionStatistics {
        partition_statistics: PartitionStatisticsFile,
    },
    RemovePartitionStatistics {
        snapshot_id: i64,
    },
    RemovePartitionSpecs {
        spec_ids: Vec<i32>,
    },
    RemoveSchemas {
        schema_ids: Vec<i32>,
    },
}

impl TableUpdate {
    /// The REST spec's `action` name.
    pub fn action(&self) -> &'static str {
        match self {
            TableUpdate::AssignUuid { .. } => "assign-uuid",
            TableUpdate::UpgradeFormatVersion { .. } => "upgrade-format-version",
            TableUpdate::AddSchema { .. } => "add-schema",
            TableUpdate::SetCurrentSchema { .. } => "set-current-schema",
            TableUpdate::AddSpec { .. } => "add-spec",
            TableUpdate::SetDefaultSpec { .. } => "set-default-spec",
            TableUpdate::AddSortOrder { .. } => "add-sort-order",
            TableUpdate::SetDefaultSortOrder { .. } => "set-default-sort-order",
            TableUpdate::AddSnapshot { .. } => "add-snapshot",
            TableUpdate::SetSnapshotRef { .. } => "set-snapshot-ref",
            TableUpdate::RemoveSnapshots { .. } => "remove-snapshots",
            TableUpdate::RemoveSnapshotRef { .. } => "remove-snapshot-ref",
            TableUpdate::SetLocation { .. } => "set-location",
            TableUpdate::SetProperties { .. } => "set-properties",
            TableUpdate::RemoveProperties { .. } => "remove-properties",
            TableUpdate::SetStatistics { .. } => "set-statistics",
            TableUpdate::RemoveStatistics { .. } => "remove-statistics",
            TableUpdate::SetPartitionStatistics { .. } => "set-partition-statistics",
            TableUpdate::RemovePartitionStatistics { .. } => "remove-partition-statistics",
            TableUpdate::RemovePartitionSpecs { .. } => "remove-partition-specs",
            TableUpdate::RemoveSchemas { .. } => "remove-schemas",
        }
    }

    /// The REST JSON form. Snapshots are written with all their v2+ fields.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("action".into(), self.action().into());
        match self {
            TableUpdate::AssignUuid { uuid } => {
                m.insert("uuid".into(), uuid.clone().into());
            }
            TableUpdate::UpgradeFormatVersion { format_version } => {
                m.insert("format-version".into(), (*format_version).into());
            }
            TableUpdate::AddSchema {
                schema,
                last_column_id,
            } => {
                m.insert("schema".into(), schema.to_json());
                if let Some(id) = last_column_id {
                    m.insert("last-column-id".into(), (*id).into());
                }
            }
            TableUpdate::SetCurrentSchema { schema_id } => {
                m.insert("schema-id".into(), (*schema_id).into());
            }
            TableUpdate::AddSpec { spec } => {
                m.insert("spec".into(), spec.to_json());
            }
            TableUpdate::SetDefaultSpec { spec_id } => {
                m.insert("spec-id".into(), (*spec_id).into());
            }
            TableUpdate::AddSortOrder { sort_order } => {
                m.insert("sort-order".into(), sort_order.to_json());
            }
            TableUpdate::SetDefaultSortOrder { sort_order_id } => {
                m.insert("sort-order-id".into(), (*sort_order_id).into());
            }
            TableUpdate::AddSnapshot { snapshot } => {
                m.insert("snapshot".into(), snapshot.to_json());
            }
            TableUpdate::SetSnapshotRef {
                ref_name,
                reference,
            } => {
                m.insert("ref-name".into(), ref_name.clone().into());
                if let Value::Object(r) = reference.to_json() {
                    m.extend(r);
                }
            }
            TableUpdate::RemoveSnapshots { snapshot_ids } => {
                m.insert("snapshot-ids".into(), snapshot_ids.clone().into());
            }
            TableUpdate::RemoveSnapshotRef { ref_name } => {
                m.insert("ref-name".into(), ref_name.clone().into());
            }
            TableUpdate::SetLocation { location } => {
                m.insert("location".into(), location.clone().into());
            }
            TableUpdate::SetProperties { updates } => {
                m.insert("updates".into(), str_map(updates));
            }
            TableUpdate::RemoveProperties { removals } => {
                m.insert("removals".into(), removals.clone().into());
            }
            TableUpdate::SetStatistics { statistics } => {
                m.insert("snapshot-id".into(), statistics.snapshot_id.into());
                m.insert("statistics".into(), statistics.to_json());
            }
            TableUpdate::RemoveStatistics { snapshot_id }
            | TableUpdate::RemovePartitionStatistics { snapshot_id } => {
                m.insert("snapshot-id".into(), (*snapshot_id).into());
            }
            TableUpdate::SetPartitionStatistics {
                partition_statistics,
            } => {
                m.insert(
                    "partition-statistics".into(),
                    partition_statistics.to_json(),
                );
            }
            TableUpdate::RemovePartitionSpecs { spec_ids } => {
                m.insert("spec-ids".into(), spec_ids.clone().into());
            }
            TableUpdate::RemoveSchemas { schema_ids } => {
                m.insert("schema-ids".into(), schema_ids.clone().into());
            }
        }
        Value::Object(m)
    }

    /// Parses the REST JSON form. `format_version` is the table's, for partition specs
    /// (v1 specs may omit field ids). Unknown actions are an `InvalidMetadata` error naming
    /// the `action` field. As Java, `updated`/`removed` are read where `updates`/`removals`
    /// are absent.
    pub fn from_json(value: &Value, path: &str, format_version: i32) -> Result<TableUpdate> {
        let o = Obj::new(value, path)?;
        let action = o.req_str("action")?;
        Ok(match action.to_ascii_lowercase().as_str() {
            "assign-uuid" => TableUpdate::AssignUuid {
                uuid: o.req_str("uuid")?.to_string(),
            },
            "upgrade-format-version" => TableUpdate::UpgradeFormatVersion {
                format_version: o.req_i32("format-version")?,
            },
            "add-schema" => TableUpdate::AddSchema {
                schema: Schema::from_json(o.req("schema")?, &o.field("schema"))?,
                last_column_id: o.opt_i32("last-column-id")?,
            },
            "set-current-schema" => TableUpdate::SetCurrentSchema {
                schema_id: o.req_i32("schema-id")?,
            },
            "add-spec" => {
                // an unbound spec may come without an id: the builder assigns one
                let raw = o.req("spec")?;
                let mut spec_value = raw.clone();
                if let Value::Object(s) = &mut spec_value {
                    s.entry("spec-id").or_insert(Value::from(0));
                }
                TableUpdate::AddSpec {
                    spec: PartitionSpec::from_json(&spec_value, &o.field("spec"), format_version)?,
                }
            }
            "set-default-spec" => TableUpdate::SetDefaultSpec {
                spec_id: o.req_i32("spec-id")?,
            },
            "add-sort-order" => TableUpdate::AddSortOrder {
                sort_order: SortOrder::from_json(o.req("sort-order")?, &o.field("sort-order"))?,
            },
            "set-default-sort-order" => TableUpdate::SetDefaultSortOrder {
                sort_order_id: o.req_i32("sort-order-id")?,
            },
            "add-snapshot" => TableUpdate::AddSnapshot {
                snapshot: Snapshot::from_json(o.req("snapshot")?, &o.field("snapshot"))?,
            },
            "set-snapshot-ref" => TableUpdate::SetSnapshotRef {
                ref_name: o.req_str("ref-name")?.to_string(),
                reference: SnapshotRef::from_json(value, path)?,
            },
            "remove-snapshots" => TableUpdate::RemoveSnapshots {
                snapshot_ids: i64_list(&o, "snapshot-ids")?,
            },
            "remove-snapshot-ref" => TableUpdate::RemoveSnapshotRef {
                ref_name: o.req_str("ref-name")?.to_string(),
            },
            "set-location" => TableUpdate::SetLocation {
                location: o.req_str("location")?.to_string(),
            },
            "set-properties" => TableUpdate::SetProperties {
                updates: match o.opt_str_map("updates")? {
                    Some(u) => u,
                    None => o.opt_str_map("updated")?.ok_or_else(|| {
                        Error::invalid_metadata(o.field("updates"), "required field is missing")
                    })?,
                },
            },
            "remove-properties" => TableUpdate::RemoveProperties {
                removals: match o.opt_str_list("removals")? {
                    Some(r) => r,
                    None => o.opt_str_list("removed")?.ok_or_else(|| {
                        Error::invalid_metadata(o.field("removals"), "required field is missing")
                    })?,
                },
            },
            "set-statistics" => TableUpdate::SetStatistics {
                statistics: StatisticsFile::from_json(
                    o.req("statistics")?,
                    &o.field("statistics"),
                )?,
            },
            "remove-statistics" => TableUpdate::RemoveStatistics {
                snapshot_id: o.req_i64("snapshot-id")?,
            },
            "set-partition-statistics" => TableUpdate::SetPartitionStatistics {
                partition_statistics: PartitionStatisticsFile::from_json(
                    o.req("partition-statistics")?,
                    &o.field("partition-statistics"),
                )?,
            },
            "remove-partition-statistics" => TableUpdate::RemovePartitionStatistics {
                snapshot_id: o.req_i64("snapshot-id")?,
            },
            "remove-partition-specs" => TableUpdate::RemovePartitionSpecs {
                spec_ids: o.opt_i32_list("spec-ids")?.ok_or_else(|| {
                    Error::invalid_metadata(o.field("spec-ids"), "required field is missing")
                })?,
            },
            "remove-schemas" => TableUpdate::RemoveSchemas {
                schema_ids: o.opt_i32_list("schema-ids")?.ok_or_else(|| {
                    Error::invalid_metadata(o.field("schema-ids"), "required field is missing")
                })?,
            },
            other => {
                return Err(Error::invalid_metadata(
                    o.field("action"),
                    format!("unknown table update action '{other}'"),
                ))
            }
        })
    }
}

fn i64_list(o: &Obj<'_>, key: &str) -> Result<Vec<i64>> {
    let arr = o.req_array(key)?;
    arr.iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_i64().ok_or_else(|| {
                Error::invalid_metadata(format!("{}[{i}]", o.field(key)), "expected a long")
            })
        })
        .collect()
}

/// A condition on the table that must hold for a commit to apply (the REST spec's
/// `TableRequirement`). A failed requirement is `CommitFailed`: the table changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableRequirement {
    /// The table must not exist yet.
    AssertCreate,
    AssertTableUuid {
        uuid: String,
    },
    /// The ref must point to `snapshot_id`; `None` means the ref must not exist.
    AssertRefSnapshotId {
        ref_name: String,
        snapshot_id: Option<i64>,
    },
    AssertLastAssignedFieldId {
        last_assigned_field_id: i32,
    },
    AssertCurrentSchemaId {
        current_schema_id: i32,
    },
    AssertLastAssignedPartitionId {
        last_assigned_partition_id: i32,
    },
    AssertDefaultSpecId {
        default_spec_id: i32,
    },
    AssertDefaultSortOrderId {
        default_sort_order_id: i32,
    },
}

impl TableRequirement {
    pub fn kind(&self) -> &'static str {
        match self {
            TableRequirement::AssertCreate => "assert-create",
            TableRequirement::AssertTableUuid { .. } => "assert-table-uuid",
            TableRequirement::AssertRefSnapshotId { .. } => "assert-ref-snapshot-id",
            TableRequirement::AssertLastAssignedFieldId { .. } => "assert-last-assigned-field-id",
            TableRequirement::AssertCurrentSchemaId { .. } => "assert-current-schema-id",
            TableRequirement::AssertLastAssignedPartitionId { .. } => {
                "assert-last-assigned-partition-id"
            }
            TableRequirement::AssertDefaultSpecId { .. } => "assert-default-spec-id",
            TableRequirement::AssertDefaultSortOrderId { .. } => "assert-default-sort-order-id",
        }
    }

    /// Checks the requirement against the table as it is now (`None`: it does not exist).
    pub fn check(&self, base: Option<&TableMetadata>) -> Result<()> {
        let fail = |m: String| Err(Error::commit_failed(format!("requirement failed: {m}")));
        let Some(base) = base else {
            return match self {
                TableRequirement::AssertCreate
                // as Java: these hold trivially for a table that does not exist yet
                | TableRequirement::AssertLastAssignedFieldId { .. }
                | TableRequirement::AssertLastAssignedPartitionId { .. } => Ok(()),
                other => fail(format!("{}: the table does not exist", other.kind())),
            };
        };
        match self {
            TableRequirement::AssertCreate => fail("the table already exists".into()),
            TableRequirement::AssertTableUuid { uuid } => {
                let matches = base
                    .table_uuid
                    .as_deref()
                    .is_some_and(|u| u.eq_ignore_ascii_case(uuid));
                if matches {
                    Ok(())
                } else {
                    fail(format!(
                        "table uuid is {:?}, expected {uuid}",
                        base.table_uuid
                    ))
                }
            }
            TableRequirement::AssertRefSnapshotId {
                ref_name,
                snapshot_id,
            } => match (base.snapshot_ref(ref_name), snapshot_id) {
                (Some(r), None) => fail(format!(
                    "{} {ref_name} was created concurrently (it points to {})",
                    r.kind.as_str(),
                    r.snapshot_id
                )),
                (Some(r), Some(id)) if r.snapshot_id != *id => fail(format!(
                    "{} {ref_name} has changed: expected snapshot {id}, found {}",
                    r.kind.as_str(),
                    r.snapshot_id
                )),
                (None, Some(id)) => fail(format!(
                    "branch or tag {ref_name} is missing, expected snapshot {id}"
                )),
                _ => Ok(()),
            },
            TableRequirement::AssertLastAssignedFieldId {
                last_assigned_field_id: id,
            } => {
                if base.last_column_id == *id {
                    Ok(())
                } else {
                    fail(format!(
                        "last assigned field id changed: expected {id}, found {}",
                        base.last_column_id
                    ))
                }
            }
            TableRequirement::AssertCurrentSchemaId {
                current_schema_id: id,
            } => {
                if base.current_schema_id == *id {
                    Ok(())
                } else {
                    fail(format!(
                        "current schema changed: expected id {id}, found {}",
                        base.current_schema_id
                    ))
                }
            }
            TableRequirement::AssertLastAssignedPartitionId {
                last_assigned_partition_id: id,
            } => {
                if base.last_partition_id == *id {
                    Ok(())
                } else {
                    fail(format!(
                        "last assigned partition id changed: expected {id}, found {}",
                        base.last_partition_id
                    ))
                }
            }
            TableRequirement::AssertDefaultSpecId {
                default_spec_id: id,
            } => {
                if base.default_spec_id == *id {
                    Ok(())
                } else {
                    fail(format!(
                        "default partition spec changed: expected id {id}, found {}",
                        base.default_spec_id
                    ))
                }
            }
            TableRequirement::AssertDefaultSortOrderId {
                default_sort_order_id: id,
            } => {
                if base.default_sort_order_id == *id {
                    Ok(())
                } else {
                    fail(format!(
                        "default sort order changed: expected id {id}, found {}",
                        base.default_sort_order_id
                    ))
                }
            }
        }
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), self.kind().into());
        match self {
            TableRequirement::AssertCreate => {}
            TableRequirement::AssertTableUuid { uuid } => {
                m.insert("uuid".into(), uuid.clone().into());
            }
            TableRequirement::AssertRefSnapshotId {
                ref_name,
                snapshot_id,
            } => {
                m.insert("ref".into(), ref_name.clone().into());
                m.insert(
                    "snapshot-id".into(),
                    snapshot_id.map_or(Value::Null, Value::from),
                );
            }
            TableRequirement::AssertLastAssignedFieldId {
                last_assigned_field_id,
            } => {
                m.insert(
                    "last-assigned-field-id".into(),
                    (*last_assigned_field_id).into(),
                );
            }
            TableRequirement::AssertCurrentSchemaId { current_schema_id } => {
                m.insert("current-schema-id".into(), (*current_schema_id).into());
            }
            TableRequirement::AssertLastAssignedPartitionId {
                last_assigned_partition_id,
            } => {
                m.insert(
                    "last-assigned-partition-id".into(),
                    (*last_assigned_partition_id).into(),
                );
            }
            TableRequirement::AssertDefaultSpecId { default_spec_id } => {
                m.insert("default-spec-id".into(), (*default_spec_id).into());
            }
            TableRequirement::AssertDefaultSortOrderId {
                default_sort_order_id,
            } => {
                m.insert(
                    "default-sort-order-id".into(),
                    (*default_sort_order_id).into(),
                );
            }
        }
        Value::Object(m)
    }

    pub fn from_json(value: &Value, path: &str) -> Result<TableRequirement> {
        let o = Obj::new(value, path)?;
        let t = o.req_str("type")?;
        Ok(match t.to_ascii_lowercase().as_str() {
            "assert-create" => TableRequirement::AssertCreate,
            "assert-table-uuid" => TableRequirement::AssertTableUuid {
                uuid: o.req_str("uuid")?.to_string(),
            },
            "assert-ref-snapshot-id" => TableRequirement::AssertRefSnapshotId {
                ref_name: o.req_str("ref")?.to_string(),
                snapshot_id: o.opt_i64("snapshot-id")?,
            },
            "assert-last-assigned-field-id" => TableRequirement::AssertLastAssignedFieldId {
                last_assigned_field_id: o.req_i32("last-assigned-field-id")?,
            },
            "assert-current-schema-id" => TableRequirement::AssertCurrentSchemaId {
                current_schema_id: o.req_i32("current-schema-id")?,
            },
            "assert-last-assigned-partition-id" => {
                TableRequirement::AssertLastAssignedPartitionId {
                    last_assigned_partition_id: o.req_i32("last-assigned-partition-id")?,
                }
            }
            "assert-default-spec-id" => TableRequirement::AssertDefaultSpecId {
                default_spec_id: o.req_i32("default-spec-id")?,
            },
            "assert-default-sort-order-id" => TableRequirement::AssertDefaultSortOrderId {
                default_sort_order_id: o.req_i32("default-sort-order-id")?,
            },
            other => {
                return Err(Error::invalid_metadata(
                    join(path, "type"),
                    format!("unknown table requirement '{other}'"),
                ))
            }
        })
    }
}

/// Checks every requirement; the first that fails is the error.
pub fn check_requirements(
    requirements: &[TableRequirement],
    base: Option<&TableMetadata>,
) -> Result<()> {
    requirements.iter().try_for_each(|r| r.check(base))
}
