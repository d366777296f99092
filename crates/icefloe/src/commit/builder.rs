//! Builds the next table metadata from a base and a list of [`TableUpdate`]s, with the
//! rules of Java's `TableMetadata.Builder` ("Table Metadata", "Sequence Numbers",
//! "Row Lineage", "Snapshot References"): schemas, specs and orders reuse the id of an
//! equal existing one; `-1` selects the one added last; adding a snapshot advances
//! `last-sequence-number` and (v3) `next-row-id`; moving `main` appends to the
//! `snapshot-log`; the base file goes into the `metadata-log`, trimmed to
//! `write.metadata.previous-versions-max`.
//!
//! Errors: an update that can never apply (unknown id, downgrade, bad snapshot) is
//! `InvalidArgument` or `ValidationFailed`; one that conflicts with a newer base (a
//! sequence number or first row id behind the table's) is `CommitFailed`, so the caller
//! retries on a fresh base.

use std::collections::HashSet;
use std::sync::Arc;

use super::fresh_ids::{assign_fresh_ids, rebind_sort_order, rebind_spec};
use super::properties;
use super::update::{TableUpdate, LAST_ADDED};
use crate::catalog::TableState;
use crate::error::{Error, Result};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::spec::snapshot::{
    MetadataLogEntry, Snapshot, SnapshotLogEntry, SnapshotRef, MAIN_BRANCH,
};
use crate::spec::sort::SortOrder;
use crate::spec::table_metadata::TableMetadata;

/// The format version of tables created without one (v3, as the issue asks; Java 1.11
/// still defaults to 2).
pub const DEFAULT_FORMAT_VERSION: i32 = 3;

/// Properties that describe the table and are never stored as table properties (Java's
/// `TableProperties.RESERVED_PROPERTIES`).
pub const RESERVED_PROPERTIES: &[&str] = &[
    "format-version",
    "uuid",
    "snapshot-count",
    "current-snapshot-id",
    "current-snapshot-summary",
    "current-snapshot-timestamp-ms",
    "current-schema",
    "default-partition-spec",
    "default-sort-order",
];

/// The sort order id a new table's first sorted order gets (0 is the unsorted order).
const INITIAL_SORT_ORDER_ID: i32 = 1;

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Accumulates changes on top of a base table metadata (or none, for a new table).
#[derive(Debug, Clone)]
pub struct MetadataBuilder {
    base: Option<Arc<TableMetadata>>,
    /// The base's metadata file, added to the metadata log on build.
    previous_file: Option<String>,
    md: TableMetadata,
    changes: Vec<TableUpdate>,
    last_added_schema_id: Option<i32>,
    last_added_spec_id: Option<i32>,
    last_added_order_id: Option<i32>,
    last_updated_ms: Option<i64>,
}

/// The properties a new table stores: Java's default for new tables
/// (`write.parquet.compression-codec=zstd`) and the user's, without reserved ones.
fn persisted_properties(properties: &[(String, String)]) -> Vec<(String, String)> {
    let mut out = vec![(
        "write.parquet.compression-codec".to_string(),
        "zstd".to_string(),
    )];
    for (k, v) in properties {
        if RESERVED_PROPERTIES.contains(&k.as_str()) {
            continue;
        }
        match out.iter_mut().find(|(ok, _)| ok == k) {
            Some(e) => e.1 = v.clone(),
            None => out.push((k.clone(), v.clone())),
        }
    }
    out
}

/// The format version asked for by the `format-version` property, if any.
pub(crate) fn format_version_property(properties: &[(String, String)]) -> Result<Option<i32>> {
    properties
        .iter()
        .find(|(k, _)| k == "format-version")
        .map(|(_, v)| {
            v.parse::<i32>().map_err(|_| {
                Error::invalid_argument(format!(
                    "table property format-version={v} is not an integer"
                ))
            })
        })
        .transpose()
}

impl MetadataBuilder {
    /// Changes on top of the table's current metadata.
    pub fn from_state(state: &TableState) -> MetadataBuilder {
        Self::from_metadata(
            state.metadata.clone(),
            Some(state.metadata_location.clone()),
        )
    }

    /// Changes on top of `base`, which was read from `location` (if known).
    pub fn from_metadata(base: Arc<TableMetadata>, location: Option<String>) -> MetadataBuilder {
        MetadataBuilder {
            md: (*base).clone(),
            base: Some(base),
            previous_file: location,
            changes: Vec::new(),
            last_added_schema_id: None,
            last_added_spec_id: None,
            last_added_order_id: None,
            last_updated_ms: None,
        }
    }

    fn empty(format_version: i32) -> Result<MetadataBuilder> {
        check_format_version(format_version)?;
        Ok(MetadataBuilder {
            base: None,
            previous_file: None,
            md: TableMetadata {
                format_version,
                table_uuid: Some(uuid::Uuid::new_v4().to_string()),
                location: String::new(),
                last_sequence_number: 0,
                last_updated_ms: 0,
                last_column_id: 0,
                schemas: Vec::new(),
                current_schema_id: 0,
                partition_specs: Vec::new(),
                default_spec_id: 0,
                last_partition_id: 0,
                properties: Vec::new(),
                current_snapshot_id: None,
                snapshots: Vec::new(),
                snapshot_log: Vec::new(),
                metadata_log: Vec::new(),
                sort_orders: Vec::new(),
                default_sort_order_id: 0,
                refs: Vec::new(),
                statistics: Vec::new(),
                partition_statistics: Vec::new(),
                next_row_id: 0,
                encryption_keys: Vec::new(),
            },
            changes: Vec::new(),
            last_added_schema_id: None,
            last_added_spec_id: None,
            last_added_order_id: None,
            last_updated_ms: None,
        })
    }

    /// The metadata of a new table, as Java's `TableMetadata.newTableMetadata`: fresh
    /// column ids from 1 (in Java's order), partition field ids from 1000, the first sorted
    /// order as id 1, reserved properties dropped. The format version is `format_version`,
    /// else the `format-version` property, else [`DEFAULT_FORMAT_VERSION`]. `spec` and
    /// `sort_order` refer to the columns of `schema` by its ids.
    pub fn new_table(
        schema: &Schema,
        spec: &PartitionSpec,
        sort_order: &SortOrder,
        location: &str,
        properties: &[(String, String)],
        format_version: Option<i32>,
    ) -> Result<MetadataBuilder> {
        let format_version = match format_version {
            Some(v) => v,
            None => format_version_property(properties)?.unwrap_or(DEFAULT_FORMAT_VERSION),
        };
        let mut last_column_id = 0;
        let fresh = assign_fresh_ids(schema, None, &mut last_column_id, 0)?;
        let fresh_spec = rebind_spec(spec, schema, &fresh, 0, true)?;
        let order_id = if sort_order.is_unsorted() {
            0
        } else {
            INITIAL_SORT_ORDER_ID
        };
        let fresh_order = rebind_sort_order(sort_order, schema, &fresh, order_id)?;
        let persisted = persisted_properties(properties);
        properties::validate_commit_properties(&persisted)?;
        super::snapshot::validate_v4_properties(&persisted)?;

        let mut b = Self::empty(format_version)?;
        let schema_id = b.add_schema_internal(fresh, last_column_id)?;
        b.set_current_schema(schema_id)?;
        let spec_id = b.add_spec_internal(fresh_spec)?;
        b.set_default_spec(spec_id)?;
        let order_id = b.add_sort_order_internal(fresh_order)?;
        b.set_default_sort_order(order_id)?;
        b.set_location(location.to_string());
        b.set_properties(persisted)?;
        Ok(b)
    }

    /// Replaces the table's schema, spec, sort order, location and properties, keeping its
    /// history (Java's `buildReplacement`, used by create-or-replace): columns of the same
    /// name keep their ids, partition fields of the same source and transform keep theirs
    /// (v2+; v1 carries old fields forward as `void`), `main` is removed so the table has
    /// no current snapshot until the replacement commits one.
    pub fn replace(
        state: &TableState,
        schema: &Schema,
        spec: &PartitionSpec,
        sort_order: &SortOrder,
        location: &str,
        properties: &[(String, String)],
        format_version: Option<i32>,
    ) -> Result<MetadataBuilder> {
        let base = &state.metadata;
        base.check_supported("replace", Some(&state.metadata_location))?;
        let current = base.current_schema().ok_or_else(|| {
            Error::invalid_metadata("current-schema-id", "the table has no current schema")
        })?;
        let mut last_column_id = base.last_column_id;
        let fresh = assign_fresh_ids(schema, Some(current), &mut last_column_id, 0)?;
        let spec = rebind_spec(spec, schema, &fresh, 0, false)?;
        let fresh_spec = reassign_partition_ids(base, &spec)?;
        let fresh_order = rebind_sort_order(
            sort_order,
            schema,
            &fresh,
            if sort_order.is_unsorted() {
                0
            } else {
                INITIAL_SORT_ORDER_ID
            },
        )?;
        let format_version = match format_version {
            Some(v) => v,
            None => format_version_property(properties)?.unwrap_or(base.format_version),
        };
        let mut b = Self::from_state(state);
        b.upgrade_format_version(format_version)?;
        b.remove_ref(MAIN_BRANCH);
        let schema_id = b.add_schema_internal(fresh, last_column_id)?;
        b.set_current_schema(schema_id)?;
        let spec_id = b.add_spec_internal(fresh_spec)?;
        b.set_default_spec(spec_id)?;
        let order_id = b.add_sort_order_internal(fresh_order)?;
        b.set_default_sort_order(order_id)?;
        b.set_location(location.to_string());
        b.set_properties(persisted_properties(properties))?;
        Ok(b)
    }

    /// The metadata with the changes so far (logs are finished by [`Self::build`]).
    pub fn current(&self) -> &TableMetadata {
        &self.md
    }

    pub fn base(&self) -> Option<&Arc<TableMetadata>> {
        self.base.as_ref()
    }

    /// The changes applied so far, as the REST spec's updates.
    pub fn changes(&self) -> &[TableUpdate] {
        &self.changes
    }

    pub fn has_changes(&self) -> bool {
        !self.changes.is_empty()
    }

    /// Applies one update.
    pub fn apply(&mut self, update: TableUpdate) -> Result<&mut Self> {
        match update {
            TableUpdate::AssignUuid { uuid } => {
                if self.md.table_uuid.as_deref() != Some(uuid.as_str()) {
                    if self.base.is_some() {
                        return Err(Error::invalid_argument(
                            "cannot assign a new uuid to an existing table",
                        ));
                    }
                    self.md.table_uuid = Some(uuid.clone());
                    self.changes.push(TableUpdate::AssignUuid { uuid });
                }
            }
            TableUpdate::UpgradeFormatVersion { format_version } => {
                self.upgrade_format_version(format_version)?
            }
            TableUpdate::AddSchema {
                schema,
                last_column_id,
            } => {
                let last = self
                    .md
                    .last_column_id
                    .max(schema.highest_field_id())
                    .max(last_column_id.unwrap_or(0));
                self.add_schema_internal(schema, last)?;
            }
            TableUpdate::SetCurrentSchema { schema_id } => self.set_current_schema(schema_id)?,
            TableUpdate::AddSpec { spec } => {
                self.add_spec_internal(spec)?;
            }
            TableUpdate::SetDefaultSpec { spec_id } => self.set_default_spec(spec_id)?,
            TableUpdate::AddSortOrder { sort_order } => {
                self.add_sort_order_internal(sort_order)?;
            }
            TableUpdate::SetDefaultSortOrder { sort_order_id } => {
                self.set_default_sort_order(sort_order_id)?
            }
            TableUpdate::AddSnapshot { snapshot } => self.add_snapshot(snapshot)?,
            TableUpdate::SetSnapshotRef {
                ref_name,
                reference,
            } => self.set_ref(&ref_name, reference)?,
            TableUpdate::RemoveSnapshots { snapshot_ids } => self.remove_snapshots(&snapshot_ids),
            TableUpdate::RemoveSnapshotRef { ref_name } => self.remove_ref(&ref_name),
            TableUpdate::SetLocation { location } => self.set_location(location),
            TableUpdate::SetProperties { updates } => self.set_properties(updates)?,
            TableUpdate::RemoveProperties { removals } => self.remove_properties(removals),
            TableUpdate::SetStatistics { statistics } => {
                let id = statistics.snapshot_id;
                self.md.statistics.retain(|s| s.snapshot_id != id);
                self.md.statistics.push(statistics.clone());
                self.changes.push(TableUpdate::SetStatistics { statistics });
            }
            TableUpdate::RemoveStatistics { snapshot_id } => self.remove_statistics(snapshot_id),
            TableUpdate::SetPartitionStatistics {
                partition_statistics,
            } => {
                let id = partition_statistics.snapshot_id;
                self.md.partition_statistics.retain(|s| s.snapshot_id != id);
                self.md
                    .partition_statistics
                    .push(partition_statistics.clone());
                self.changes.push(TableUpdate::SetPartitionStatistics {
                    partition_statistics,
                });
            }
            TableUpdate::RemovePartitionStatistics { snapshot_id } => {
                self.remove_partition_statistics(snapshot_id)
            }
            TableUpdate::RemovePartitionSpecs { spec_ids } => {
                if spec_ids.contains(&self.md.default_spec_id) {
                    return Err(Error::invalid_argument(
                        "cannot remove the default partition spec",
                    ));
                }
                if !spec_ids.is_empty() {
                    self.md
                        .partition_specs
                        .retain(|s| !spec_ids.contains(&s.spec_id));
                    self.changes
                        .push(TableUpdate::RemovePartitionSpecs { spec_ids });
                }
            }
            TableUpdate::RemoveSchemas { schema_ids } => {
                if schema_ids.contains(&self.md.current_schema_id) {
                    return Err(Error::invalid_argument("cannot remove the current schema"));
                }
                if !schema_ids.is_empty() {
                    self.md
                        .schemas
                        .retain(|s| !schema_ids.contains(&s.schema_id()));
                    self.changes.push(TableUpdate::RemoveSchemas { schema_ids });
                }
            }
        }
        Ok(self)
    }

    /// Applies updates in order.
    pub fn apply_all(&mut self, updates: impl IntoIterator<Item = TableUpdate>) -> Result<()> {
        for u in updates {
            self.apply(u)?;
        }
        Ok(())
    }

    fn upgrade_format_version(&mut self, v: i32) -> Result<()> {
        check_format_version(v)?;
        if v < self.md.format_version {
            return Err(Error::invalid_argument(format!(
                "cannot downgrade a v{} table to v{v}",
                self.md.format_version
            )));
        }
        if v == self.md.format_version {
            return Ok(());
        }
        // every schema must be valid in the new version too (it only gets more permissive)
        self.md.format_version = v;
        self.changes
            .push(TableUpdate::UpgradeFormatVersion { format_version: v });
        Ok(())
    }

    fn add_schema_internal(&mut self, schema: Schema, new_last_column_id: i32) -> Result<i32> {
        if new_last_column_id < self.md.last_column_id {
            return Err(Error::invalid_argument(format!(
                "invalid last column id {new_last_column_id}: less than the table's {}",
                self.md.last_column_id
            )));
        }
        check_schema_for_version(&schema, self.md.format_version)?;
        let mut new_id = self.md.current_schema_id;
        let mut found = None;
        for s in &self.md.schemas {
            if s.same_schema(&schema) {
                found = Some(s.schema_id());
                break;
            } else if s.schema_id() >= new_id {
                new_id = s.schema_id() + 1;
            }
        }
        if let Some(id) = found {
            if new_last_column_id == self.md.last_column_id {
                let added_here = self.changes.iter().any(
                    |c| matches!(c, TableUpdate::AddSchema { schema, .. } if schema.schema_id() == id),
                );
                self.last_added_schema_id = added_here.then_some(id);
                return Ok(id);
            }
            new_id = id;
        }
        self.md.last_column_id = new_last_column_id;
        let schema = if schema.schema_id() != new_id {
            schema.with_schema_id(new_id)
        } else {
            schema
        };
        if found.is_none() {
            self.md.schemas.push(schema.clone());
        }
        self.changes.push(TableUpdate::AddSchema {
            schema,
            last_column_id: Some(new_last_column_id),
        });
        self.last_added_schema_id = Some(new_id);
        Ok(new_id)
    }

    fn set_current_schema(&mut self, schema_id: i32) -> Result<()> {
        let id = if schema_id == LAST_ADDED {
            self.last_added_schema_id.ok_or_else(|| {
                Error::validation_failed("cannot set the last added schema: no schema was added")
            })?
        } else {
            schema_id
        };
        if self.md.current_schema_id == id && !self.md.schemas.is_empty() {
            return Ok(());
        }
        if self.md.schema_by_id(id).is_none() {
            return Err(Error::invalid_argument(format!(
                "cannot set the current schema to unknown schema {id}"
            )));
        }
        self.md.current_schema_id = id;
        let recorded = if self.last_added_schema_id == Some(id) {
            LAST_ADDED
        } else {
            id
        };
        self.changes.push(TableUpdate::SetCurrentSchema {
            schema_id: recorded,
        });
        Ok(())
    }

    fn add_spec_internal(&mut self, spec: PartitionSpec) -> Result<i32> {
        let mut new_id = 0;
        for s in &self.md.partition_specs {
            if s.is_equivalent_to(&spec) {
                let id = s.spec_id;
                let added_here = self
                    .changes
                    .iter()
                    .any(|c| matches!(c, TableUpdate::AddSpec { spec } if spec.spec_id == id));
                self.last_added_spec_id = added_here.then_some(id);
                return Ok(id);
            } else if new_id <= s.spec_id {
                new_id = s.spec_id + 1;
            }
        }
        let schema = self.md.current_schema().ok_or_else(|| {
            Error::validation_failed("cannot add a partition spec before a schema")
        })?;
        check_spec_compatibility(&spec, schema)?;
        if self.md.format_version == 1 {
            let sequential = spec.fields.iter().enumerate().all(|(i, f)| {
                f.field_id == crate::spec::partition::PARTITION_DATA_ID_START + i as i32
            });
            if !sequential {
                return Err(Error::validation_failed(
                    "spec does not use sequential ids that are required in v1",
                ));
            }
        }
        let spec = PartitionSpec::new(new_id, spec.fields);
        self.md.last_partition_id = self.md.last_partition_id.max(spec.last_assigned_field_id());
        self.md.partition_specs.push(spec.clone());
        self.changes.push(TableUpdate::AddSpec { spec });
        self.last_added_spec_id = Some(new_id);
        Ok(new_id)
    }

    fn set_default_spec(&mut self, spec_id: i32) -> Result<()> {
        let id = if spec_id == LAST_ADDED {
            self.last_added_spec_id.ok_or_else(|| {
                Error::validation_failed("cannot set the last added spec: no spec was added")
            })?
        } else {
            spec_id
        };
        if self.md.spec_by_id(id).is_none() {
            return Err(Error::invalid_argument(format!(
                "cannot set the default spec to unknown spec {id}"
            )));
        }
        if self.md.default_spec_id == id {
            return Ok(());
        }
        self.md.default_spec_id = id;
        let recorded = if self.last_added_spec_id == Some(id) {
            LAST_ADDED
        } else {
            id
        };
        self.changes
            .push(TableUpdate::SetDefaultSpec { spec_id: recorded });
        Ok(())
    }

    fn add_sort_order_internal(&mut self, order: SortOrder) -> Result<i32> {
        let mut new_id = if order.is_unsorted() {
            0
        } else {
            INITIAL_SORT_ORDER_ID
        };
        for o in &self.md.sort_orders {
            if o.fields == order.fields {
                let id = o.order_id;
                let added_here = self.changes.iter().any(
                    |c| matches!(c, TableUpdate::AddSortOrder { sort_order } if sort_order.order_id == id),
                );
                self.last_added_order_id = added_here.then_some(id);
                return Ok(id);
            } else if !order.is_unsorted() && new_id <= o.order_id {
                new_id = o.order_id + 1;
            }
        }
        let schema = self
            .md
            .current_schema()
            .ok_or_else(|| Error::validation_failed("cannot add a sort order before a schema"))?;
        for f in &order.fields {
            for id in &f.source_ids {
                if schema.field_by_id(*id).is_none() {
                    return Err(Error::validation_failed(format!(
                        "invalid sort order: source id {id} is not in the current schema"
                    )));
                }
            }
        }
        let order = SortOrder::new(new_id, order.fields)?;
        self.md.sort_orders.push(order.clone());
        self.changes
            .push(TableUpdate::AddSortOrder { sort_order: order });
        self.last_added_order_id = Some(new_id);
        Ok(new_id)
    }

    fn set_default_sort_order(&mut self, order_id: i32) -> Result<()> {
        let id = if order_id == LAST_ADDED {
            self.last_added_order_id.ok_or_else(|| {
                Error::validation_failed(
                    "cannot set the last added sort order: no sort order was added",
                )
            })?
        } else {
            order_id
        };
        if self.md.sort_order_by_id(id).is_none() {
            return Err(Error::invalid_argument(format!(
                "cannot set the default sort order to unknown order {id}"
            )));
        }
        if self.md.default_sort_order_id == id {
            return Ok(());
        }
        self.md.default_sort_order_id = id;
        let recorded = if self.last_added_order_id == Some(id) {
            LAST_ADDED
        } else {
            id
        };
        self.changes.push(TableUpdate::SetDefaultSortOrder {
            sort_order_id: recorded,
        });
        Ok(())
    }

    fn add_snapshot(&mut self, snapshot: Snapshot) -> Result<()> {
        if self.md.schemas.is_empty()
            || self.md.partition_specs.is_empty()
            || self.md.sort_orders.is_empty()
        {
            return Err(Error::validation_failed(
                "cannot add a snapshot before a schema, partition spec and sort order",
            ));
        }
        if self.md.snapshot_by_id(snapshot.snapshot_id).is_some() {
            return Err(Error::validation_failed(format!(
                "snapshot {} already exists",
                snapshot.snapshot_id
            )));
        }
        if self.md.format_version >= 2
            && snapshot.sequence_number <= self.md.last_sequence_number
            && snapshot.parent_snapshot_id.is_some()
        {
            return Err(Error::commit_failed(format!(
                "cannot add snapshot {} with sequence number {}: not newer than the table's last sequence number {}",
                snapshot.snapshot_id, snapshot.sequence_number, self.md.last_sequence_number
            )));
        }
        if self.md.format_version >= 3 {
            let first = snapshot.first_row_id.ok_or_else(|| {
                Error::validation_failed(format!(
                    "cannot add snapshot {} to a v3 table: first-row-id is null",
                    snapshot.snapshot_id
                ))
            })?;
            if first < self.md.next_row_id {
                return Err(Error::commit_failed(format!(
                    "cannot add snapshot {}: first-row-id {first} is behind the table's next-row-id {}",
                    snapshot.snapshot_id, self.md.next_row_id
                )));
            }
            let added = snapshot.added_rows.ok_or_else(|| {
                Error::validation_failed(format!(
                    "cannot add snapshot {} to a v3 table: added-rows is null",
                    snapshot.snapshot_id
                ))
            })?;
            self.md.next_row_id = self
                .md
                .next_row_id
                .checked_add(added)
                .ok_or_else(|| Error::validation_failed("next-row-id overflows"))?;
        }
        self.md.last_sequence_number = snapshot.sequence_number;
        self.md.snapshots.push(snapshot.clone());
        self.changes.push(TableUpdate::AddSnapshot { snapshot });
        Ok(())
    }

    fn is_added_snapshot(&self, id: i64) -> bool {
        self.changes.iter().any(
            |c| matches!(c, TableUpdate::AddSnapshot { snapshot } if snapshot.snapshot_id == id),
        )
    }

    /// Points `branch` at a snapshot, keeping the branch's retention settings.
    pub fn set_branch_snapshot(&mut self, snapshot_id: i64, branch: &str) -> Result<()> {
        let existing = self.md.snapshot_ref(branch).cloned();
        if let Some(r) = &existing {
            if !r.is_branch() {
                return Err(Error::validation_failed(format!(
                    "cannot update branch {branch}: it is a tag"
                )));
            }
            if r.snapshot_id == snapshot_id {
                return Ok(());
            }
        }
        let reference = match existing {
            Some(r) => SnapshotRef { snapshot_id, ..r },
            None => SnapshotRef::branch(snapshot_id),
        };
        self.set_ref(branch, reference)
    }

    fn set_ref(&mut self, name: &str, reference: SnapshotRef) -> Result<()> {
        if self.md.snapshot_ref(name) == Some(&reference) {
            return Ok(());
        }
        let Some(snapshot) = self.md.snapshot_by_id(reference.snapshot_id) else {
            return Err(Error::validation_failed(format!(
                "cannot set {name} to unknown snapshot {}",
                reference.snapshot_id
            )));
        };
        if name == MAIN_BRANCH {
            if !reference.is_branch() {
                return Err(Error::validation_failed("main must be a branch"));
            }
            let snapshot_ts = snapshot.timestamp_ms;
            self.md.current_snapshot_id = Some(reference.snapshot_id);
            let updated = *self.last_updated_ms.get_or_insert_with(now_ms);
            // a rollback to an existing snapshot is logged at the time of the change
            let ts = if self.is_added_snapshot(reference.snapshot_id) {
                snapshot_ts
            } else {
                updated
            };
            self.md.snapshot_log.push(SnapshotLogEntry {
                timestamp_ms: ts,
                snapshot_id: reference.snapshot_id,
            });
        }
        match self.md.refs.iter_mut().find(|(n, _)| n == name) {
            Some(e) => e.1 = reference.clone(),
            None => self.md.refs.push((name.to_string(), reference.clone())),
        }
        self.changes.push(TableUpdate::SetSnapshotRef {
            ref_name: name.to_string(),
            reference,
        });
        Ok(())
    }

    fn remove_ref(&mut self, name: &str) {
        if name == MAIN_BRANCH {
            self.md.current_snapshot_id = None;
        }
        let before = self.md.refs.len();
        self.md.refs.retain(|(n, _)| n != name);
        if self.md.refs.len() != before {
            self.changes.push(TableUpdate::RemoveSnapshotRef {
                ref_name: name.to_string(),
            });
        }
    }

    fn remove_statistics(&mut self, snapshot_id: i64) {
        let before = self.md.statistics.len();
        self.md.statistics.retain(|s| s.snapshot_id != snapshot_id);
        if before != self.md.statistics.len() {
            self.changes
                .push(TableUpdate::RemoveStatistics { snapshot_id });
        }
    }

    fn remove_partition_statistics(&mut self, snapshot_id: i64) {
        let before = self.md.partition_statistics.len();
        self.md
            .partition_statistics
            .retain(|s| s.snapshot_id != snapshot_id);
        if before != self.md.partition_statistics.len() {
            self.changes
                .push(TableUpdate::RemovePartitionStatistics { snapshot_id });
        }
    }

    fn remove_snapshots(&mut self, ids: &[i64]) {
        let remove: HashSet<i64> = ids.iter().copied().collect();
        let mut kept = Vec::with_capacity(self.md.snapshots.len());
        for s in std::mem::take(&mut self.md.snapshots) {
            if remove.contains(&s.snapshot_id) {
                self.changes.push(TableUpdate::RemoveSnapshots {
                    snapshot_ids: vec![s.snapshot_id],
                });
                self.remove_statistics(s.snapshot_id);
                self.remove_partition_statistics(s.snapshot_id);
            } else {
                kept.push(s);
            }
        }
        self.md.snapshots = kept;
        let dangling: Vec<String> = self
            .md
            .refs
            .iter()
            .filter(|(_, r)| self.md.snapshot_by_id(r.snapshot_id).is_none())
            .map(|(n, _)| n.clone())
            .collect();
        for name in dangling {
            self.remove_ref(&name);
        }
    }

    fn set_properties(&mut self, updates: Vec<(String, String)>) -> Result<()> {
        if updates.is_empty() {
            return Ok(());
        }
        super::snapshot::validate_v4_properties(&updates)?;
        for (k, v) in &updates {
            match self.md.properties.iter_mut().find(|(ok, _)| ok == k) {
                Some(e) => e.1 = v.clone(),
                None => self.md.properties.push((k.clone(), v.clone())),
            }
        }
        self.changes.push(TableUpdate::SetProperties { updates });
        Ok(())
    }

    fn remove_properties(&mut self, removals: Vec<String>) {
        if removals.is_empty() {
            return;
        }
        self.md.properties.retain(|(k, _)| !removals.contains(k));
        self.changes
            .push(TableUpdate::RemoveProperties { removals });
    }

    fn set_location(&mut self, location: String) {
        if self.md.location == location {
            return;
        }
        self.md.location = location.clone();
        self.changes.push(TableUpdate::SetLocation { location });
    }

    /// The next metadata. Without changes, the base is returned as it is.
    pub fn build(self) -> Result<TableMetadata> {
        if self.changes.is_empty() {
            if let Some(base) = self.base {
                return Ok((*base).clone());
            }
        }
        // a v4 base (read as metadata only) must not get v3 changes applied
        if let Some(base) = &self.base {
            base.check_supported("commit to", self.previous_file.as_deref())?;
        }
        let mut md = self.md;
        md.last_updated_ms = self.last_updated_ms.unwrap_or_else(now_ms);

        let schema = md.current_schema().ok_or_else(|| {
            Error::validation_failed(format!(
                "the current schema {} does not exist",
                md.current_schema_id
            ))
        })?;
        let spec = md.default_spec().ok_or_else(|| {
            Error::validation_failed(format!(
                "the default partition spec {} does not exist",
                md.default_spec_id
            ))
        })?;
        check_spec_compatibility(spec, schema)?;
        let order = md.default_sort_order().ok_or_else(|| {
            Error::validation_failed(format!(
                "the default sort order {} does not exist",
                md.default_sort_order_id
            ))
        })?;
        for f in &order.fields {
            if f.source_ids
                .iter()
                .any(|id| schema.field_by_id(*id).is_none())
            {
                return Err(Error::validation_failed(
                    "the default sort order refers to a column that is not in the current schema",
                ));
            }
        }

        if let (Some(base), Some(previous)) = (&self.base, &self.previous_file) {
            let max = md
                .property(properties::METADATA_PREVIOUS_VERSIONS_MAX)
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(properties::METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT)
                .max(1);
            let mut log = base.metadata_log.clone();
            if log.len() >= max {
                log.drain(..log.len() + 1 - max);
            }
            log.push(MetadataLogEntry {
                timestamp_ms: base.last_updated_ms,
                metadata_file: previous.clone(),
            });
            md.metadata_log = log;
        }

        md.snapshot_log = updated_snapshot_log(&md, &self.changes)?;
        Ok(md)
    }
}

/// The snapshot log without intermediate snapshots (added and made current by this set
/// of changes, then replaced as current by a later one) and, when snapshots were removed,
/// without the history before the last entry of a removed snapshot (a gap would make
/// time travel answer wrongly).
fn updated_snapshot_log(
    md: &TableMetadata,
    changes: &[TableUpdate],
) -> Result<Vec<SnapshotLogEntry>> {
    let current = md.current_snapshot_id;
    let mut added = HashSet::new();
    let mut intermediate = HashSet::new();
    for c in changes {
        match c {
            TableUpdate::AddSnapshot { snapshot } => {
                added.insert(snapshot.snapshot_id);
            }
            TableUpdate::SetSnapshotRef {
                ref_name,
                reference,
            } if ref_name == MAIN_BRANCH
                && added.contains(&reference.snapshot_id)
                && Some(reference.snapshot_id) != current =>
            {
                intermediate.insert(reference.snapshot_id);
            }
            _ => {}
        }
    }
    let removed = changes
        .iter()
        .any(|c| matches!(c, TableUpdate::RemoveSnapshots { .. }));
    if intermediate.is_empty() && !removed {
        return Ok(md.snapshot_log.clone());
    }
    let mut log = Vec::new();
    for e in &md.snapshot_log {
        if md.snapshot_by_id(e.snapshot_id).is_some() {
            if !intermediate.contains(&e.snapshot_id) {
                log.push(*e);
            }
        } else if removed {
            log.clear();
        }
    }
    if let Some(cur) = current {
        if log.last().map(|e| e.snapshot_id) != Some(cur) {
            return Err(Error::validation_failed(
                "invalid snapshot log: the latest entry is not the current snapshot",
            ));
        }
    }
    Ok(log)
}

/// Java's `PartitionSpec.checkCompatibility`: each field whose source column exists must
/// be able to transform it. A source column that no longer exists is allowed: specs are
/// kept when columns are dropped (and v1 replacements carry old fields forward as `void`).
fn check_spec_compatibility(spec: &PartitionSpec, schema: &Schema) -> Result<()> {
    use crate::spec::transform::Transform;
    for f in &spec.fields {
        for id in &f.source_ids {
            if let Some(src) = schema.field_by_id(*id) {
                if !f.transform.can_transform(&src.field_type)
                    && !matches!(f.transform, Transform::Unknown(_))
                {
                    return Err(Error::validation_failed(format!(
                        "invalid partition spec: {} cannot transform {} column '{}'",
                        f.transform, src.field_type, src.name
                    )));
                }
            }
        }
    }
    Ok(())
}

fn check_format_version(v: i32) -> Result<()> {
    // 4: the single-file-commits proposal (docs/v4.md), created only when asked for
    if !(1..=crate::MAX_TABLE_METADATA_FORMAT_VERSION).contains(&v) {
        return Err(Error::unsupported(format!(
            "unsupported format version {v} (icefloe writes 1 to {})",
            crate::MAX_TABLE_METADATA_FORMAT_VERSION
        )));
    }
    Ok(())
}

/// Types and defaults a format version cannot store (Java's `Schema.checkCompatibility`).
fn check_schema_for_version(schema: &Schema, format_version: i32) -> Result<()> {
    for (id, name) in schema.field_names() {
        let Some(field) = schema.field_by_id(id) else {
            continue;
        };
        let min = i32::from(field.field_type.min_format_version());
        if field.field_type.is_primitive() && min > format_version {
            return Err(Error::validation_failed(format!(
                "invalid schema for v{format_version}: column '{name}' has type {}, which needs v{min}",
                field.field_type
            )));
        }
        if format_version < 3 && (field.initial_default.is_some()) {
            return Err(Error::validation_failed(format!(
                "invalid schema for v{format_version}: column '{name}' has an initial default, which needs v3"
            )));
        }
    }
    Ok(())
}

/// Java's `reassignPartitionIds` for a replacement spec: in v2+, a field with the same
/// source and transform as any field of an existing spec takes that field's id (the
/// highest, if several), others get new ids after `last-partition-id`; in v1 the current
/// spec's fields are carried forward (fields no longer wanted become `void`, renamed
/// `<name>_<id>` if the name is taken) and new fields are appended.
fn reassign_partition_ids(base: &TableMetadata, spec: &PartitionSpec) -> Result<PartitionSpec> {
    use crate::spec::partition::PartitionField;
    use crate::spec::transform::Transform;
    let mut next_id = base.last_partition_id;
    let mut next = || -> Result<i32> {
        next_id = next_id
            .checked_add(1)
            .ok_or_else(|| Error::invalid_argument("partition field ids overflow"))?;
        Ok(next_id)
    };
    let key = |f: &PartitionField| (f.source_ids.clone(), f.transform.to_string());
    let mut fields = Vec::new();
    if base.format_version > 1 {
        let mut known: Vec<((Vec<i32>, String), i32)> = Vec::new();
        for s in &base.partition_specs {
            for f in &s.fields {
                let k = key(f);
                match known.iter_mut().find(|(kk, _)| *kk == k) {
                    Some(e) => e.1 = e.1.max(f.field_id),
                    None => known.push((k, f.field_id)),
                }
            }
        }
        for f in &spec.fields {
            let k = key(f);
            let id = match known.iter().find(|(kk, _)| *kk == k) {
                Some((_, id)) => *id,
                None => {
                    let id = next()?;
                    known.push((k, id));
                    id
                }
            };
            fields.push(PartitionField {
                field_id: id,
                ..f.clone()
            });
        }
    } else {
        let mut new_fields: Vec<PartitionField> = spec.fields.clone();
        let new_names: Vec<String> = new_fields.iter().map(|f| f.name.clone()).collect();
        let current = base.default_spec().cloned().unwrap_or_default();
        for f in &current.fields {
            if let Some(pos) = new_fields.iter().position(|n| key(n) == key(f)) {
                let n = new_fields.remove(pos);
                fields.push(PartitionField {
                    field_id: f.field_id,
                    ..n
                });
            } else {
                let name = if new_names.contains(&f.name) {
                    format!("{}_{}", f.name, f.field_id)
                } else {
                    f.name.clone()
                };
                fields.push(PartitionField {
                    source_ids: f.source_ids.clone(),
                    field_id: f.field_id,
                    name,
                    transform: Transform::Void,
                });
            }
        }
        for n in new_fields {
            fields.push(PartitionField {
                field_id: next()?,
                ..n
            });
        }
    }
    Ok(PartitionSpec::new(0, fields))
}
