//! Table metadata ("Table Metadata", Appendix C "Table Metadata and Snapshots",
//! Appendix E defaults for older versions, Appendix F notes) and its JSON files.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::encryption::EncryptedKey;
use super::json::{join, kind, metadata_file_bytes, metadata_file_text, parse_text, Obj};
use super::location::{resolve_location_in_place, stored_location};
use super::partition::{PartitionSpec, PARTITION_DATA_ID_START};
use super::schema::Schema;
use super::snapshot::{MetadataLogEntry, Snapshot, SnapshotLogEntry, SnapshotRef, MAIN_BRANCH};
use super::sort::SortOrder;
use super::statistics::{str_map, PartitionStatisticsFile, StatisticsFile};
use crate::error::{Error, Location, Result};
use crate::io::FileIO;
use crate::{MAX_TABLE_METADATA_FORMAT_VERSION, V4};

/// The metadata of a table: everything in a `*.metadata.json` file.
///
/// Parsing applies the defaults of Appendix E for v1 files, so a value always has the
/// lists (`schemas`, `partition_specs`, `sort_orders`) and ids of a v2 table.
#[derive(Debug, Clone, PartialEq)]
pub struct TableMetadata {
    pub format_version: i32,
    /// Optional in v1, required from v2.
    pub table_uuid: Option<String>,
    /// Required before v4. A v4 file may omit it: then this is empty, and a relative
    /// path in the table's metadata is an error ([`crate::spec::location`]).
    pub location: String,
    /// 0 for v1 tables.
    pub last_sequence_number: i64,
    pub last_updated_ms: i64,
    pub last_column_id: i32,
    pub schemas: Vec<Schema>,
    pub current_schema_id: i32,
    pub partition_specs: Vec<PartitionSpec>,
    pub default_spec_id: i32,
    pub last_partition_id: i32,
    /// Table properties, in file order.
    pub properties: Vec<(String, String)>,
    /// `None` when the table has no current snapshot (`-1` or `null` in the file).
    pub current_snapshot_id: Option<i64>,
    pub snapshots: Vec<Snapshot>,
    pub snapshot_log: Vec<SnapshotLogEntry>,
    pub metadata_log: Vec<MetadataLogEntry>,
    pub sort_orders: Vec<SortOrder>,
    pub default_sort_order_id: i32,
    /// Branches and tags by name, in file order. Has `main` when there is a current
    /// snapshot, except in a file whose `refs` lacks it (Java keeps such `refs` as they are;
    /// [`TableMetadata::current_snapshot`] then still follows `current-snapshot-id`).
    pub refs: Vec<(String, SnapshotRef)>,
    pub statistics: Vec<StatisticsFile>,
    pub partition_statistics: Vec<PartitionStatisticsFile>,
    /// v3 row lineage; 0 for older versions.
    pub next_row_id: i64,
    /// v3 encryption keys.
    pub encryption_keys: Vec<EncryptedKey>,
}

pub use super::json::is_gzip_file_name;

fn missing(field: &str, version: i32) -> Error {
    Error::invalid_metadata(
        field,
        format!("required field is missing (required in format version {version})"),
    )
}

impl TableMetadata {
    /// Parses metadata JSON text.
    pub fn from_json_str(text: &str) -> Result<TableMetadata> {
        let value = parse_text(text)?;
        Self::from_json_value(&value)
    }

    /// Parses a metadata JSON value. `format-version` is checked before anything else.
    pub fn from_json_value(value: &Value) -> Result<TableMetadata> {
        let o = Obj::new(value, "")?;
        let format_version = read_format_version(&o)?;
        let v = format_version;
        // Java asks whether these fields are present (`has`), not whether they are null,
        // and then refuses a null as not a list or object
        for key in [
            "schemas",
            "partition-specs",
            "sort-orders",
            "properties",
            "snapshots",
            "refs",
            "statistics",
            "partition-statistics",
            "encryption-keys",
        ] {
            if o.map.get(key) == Some(&Value::Null) {
                return Err(Error::invalid_metadata(
                    key,
                    "expected a value, found null (a null is not an absent field)",
                ));
            }
        }

        let table_uuid = o.opt_str("table-uuid")?.map(str::to_string);
        if v >= 2 && table_uuid.is_none() {
            return Err(missing("table-uuid", v));
        }
        // v4 makes `location` optional (upstream's MIN_FORMAT_VERSION_OPTIONAL_LOCATION):
        // an absent one is kept as the empty string, never written back
        let location = if v >= V4 {
            o.opt_str("location")?.unwrap_or_default().to_string()
        } else {
            o.req_str("location")?.to_string()
        };
        let last_sequence_number = if v >= 2 {
            let n = o
                .opt_i64("last-sequence-number")?
                .ok_or_else(|| missing("last-sequence-number", v))?;
            if n < 0 {
                return Err(Error::invalid_metadata(
                    "last-sequence-number",
                    format!("must not be negative, found {n}"),
                ));
            }
            n
        } else {
            // Appendix E: defaults to 0 when reading v1 metadata (and is not written in v1).
            0
        };
        let last_updated_ms = o.req_i64("last-updated-ms")?;
        let last_column_id = o.req_i32("last-column-id")?;

        // Schemas: the list wins over the deprecated single schema, as in Java.
        let (schemas, current_schema_id) = match o.opt_list("schemas", Schema::from_json)? {
            Some(schemas) => {
                let id = o
                    .opt_i32("current-schema-id")?
                    .ok_or_else(|| missing("current-schema-id", v))?;
                (schemas, id)
            }
            None if v == 1 => {
                let Some(s) = o.opt("schema") else {
                    return Err(Error::invalid_metadata(
                        "schema",
                        "required field is missing (v1 metadata needs 'schema' or 'schemas')",
                    ));
                };
                let schema = Schema::from_json(s, "schema")?;
                let id = schema.schema_id();
                (vec![schema], id)
            }
            None => return Err(missing("schemas", v)),
        };
        let mut seen = HashSet::new();
        for (i, s) in schemas.iter().enumerate() {
            if !seen.insert(s.schema_id()) {
                return Err(Error::invalid_metadata(
                    format!("schemas[{i}].schema-id"),
                    format!(
                        "schema id {} is used by more than one schema",
                        s.schema_id()
                    ),
                ));
            }
        }
        if !seen.contains(&current_schema_id) {
            return Err(Error::invalid_metadata(
                "current-schema-id",
                format!("no schema with id {current_schema_id} in 'schemas'"),
            ));
        }

        // Partition specs: the list wins over the deprecated field list.
        let (partition_specs, default_spec_id) = match o.opt_list("partition-specs", |val, p| {
            PartitionSpec::from_json(val, p, v)
        })? {
            Some(specs) => {
                let id = o
                    .opt_i32("default-spec-id")?
                    .ok_or_else(|| missing("default-spec-id", v))?;
                (specs, id)
            }
            None if v == 1 => {
                let Some(fields) = o.opt("partition-spec") else {
                    return Err(Error::invalid_metadata(
                            "partition-spec",
                            "required field is missing (v1 metadata needs 'partition-spec' or 'partition-specs')",
                        ));
                };
                (
                    vec![PartitionSpec::from_json_fields(
                        fields,
                        "partition-spec",
                        0,
                        v,
                    )?],
                    0,
                )
            }
            None => return Err(missing("partition-specs", v)),
        };
        let mut seen = HashSet::new();
        for (i, s) in partition_specs.iter().enumerate() {
            if !seen.insert(s.spec_id) {
                return Err(Error::invalid_metadata(
                    format!("partition-specs[{i}].spec-id"),
                    format!(
                        "spec id {} is used by more than one partition spec",
                        s.spec_id
                    ),
                ));
            }
        }
        if !seen.contains(&default_spec_id) {
            return Err(Error::invalid_metadata(
                "default-spec-id",
                format!("no partition spec with id {default_spec_id} in 'partition-specs'"),
            ));
        }
        let last_partition_id = match o.opt_i32("last-partition-id")? {
            Some(id) => id,
            None if v == 1 => partition_specs
                .iter()
                .map(PartitionSpec::last_assigned_field_id)
                .max()
                .unwrap_or(PARTITION_DATA_ID_START - 1),
            None => return Err(missing("last-partition-id", v)),
        };

        let (sort_orders, default_sort_order_id) =
            match o.opt_list("sort-orders", SortOrder::from_json)? {
                Some(orders) => {
                    let id = o
                        .opt_i32("default-sort-order-id")?
                        .ok_or_else(|| missing("default-sort-order-id", v))?;
                    (orders, id)
                }
                None if v == 1 => (vec![SortOrder::unsorted()], 0),
                None => return Err(missing("sort-orders", v)),
            };
        let mut seen = HashSet::new();
        for (i, s) in sort_orders.iter().enumerate() {
            if !seen.insert(s.order_id) {
                return Err(Error::invalid_metadata(
                    format!("sort-orders[{i}].order-id"),
                    format!(
                        "order id {} is used by more than one sort order",
                        s.order_id
                    ),
                ));
            }
        }
        if !seen.contains(&default_sort_order_id) {
            return Err(Error::invalid_metadata(
                "default-sort-order-id",
                format!("no sort order with id {default_sort_order_id} in 'sort-orders'"),
            ));
        }

        let properties = o.opt_str_map("properties")?.unwrap_or_default();
        // Appendix F: -1 means "no current snapshot", like null or absent.
        let written_current_snapshot_id = o.opt_i64("current-snapshot-id")?.filter(|id| *id != -1);

        let snapshots = o
            .opt_list("snapshots", Snapshot::from_json)?
            .unwrap_or_default();
        let mut ids = HashSet::new();
        for (i, s) in snapshots.iter().enumerate() {
            if !ids.insert(s.snapshot_id) {
                return Err(Error::invalid_metadata(
                    format!("snapshots[{i}].snapshot-id"),
                    format!(
                        "snapshot id {} is used by more than one snapshot",
                        s.snapshot_id
                    ),
                ));
            }
            if s.sequence_number > last_sequence_number {
                return Err(Error::invalid_metadata(
                    format!("snapshots[{i}].sequence-number"),
                    format!(
                        "sequence number {} is greater than the table's last-sequence-number {}",
                        s.sequence_number, last_sequence_number
                    ),
                ));
            }
        }
        // Java accepts a negative id that names no snapshot as "no current snapshot" (its
        // check is `id < 0 || known`, and the lookup then finds nothing), unless there is no
        // `refs` field: then it makes a `main` branch of the id, which names no snapshot.
        let current_snapshot_id = match written_current_snapshot_id {
            Some(id) if !ids.contains(&id) => {
                if id >= 0 || !o.has("refs") {
                    return Err(Error::invalid_metadata(
                        "current-snapshot-id",
                        format!("no snapshot with id {id} in 'snapshots'"),
                    ));
                }
                None
            }
            other => other,
        };

        // `refs` is kept as written, even without `main`: like Java's `TableMetadataParser`,
        // a `main` branch is made from `current-snapshot-id` only when there is no `refs`
        // field at all (metadata from before branches existed).
        let refs_written = o.has("refs");
        let mut refs = match o.opt("refs") {
            Some(r) => {
                let map = r.as_object().ok_or_else(|| {
                    Error::invalid_metadata(
                        "refs",
                        format!("expected an object, found {}", kind(r)),
                    )
                })?;
                let mut refs = Vec::with_capacity(map.len());
                for (name, rv) in map {
                    let path = join("refs", name);
                    let r = SnapshotRef::from_json(rv, &path)?;
                    if !ids.contains(&r.snapshot_id) {
                        return Err(Error::invalid_metadata(
                            join(&path, "snapshot-id"),
                            format!(
                                "ref '{name}' points to snapshot {}, which is not in 'snapshots'",
                                r.snapshot_id
                            ),
                        ));
                    }
                    refs.push((name.clone(), r));
                }
                refs
            }
            None => Vec::new(),
        };
        let main = refs
            .iter()
            .find(|(n, _)| n == MAIN_BRANCH)
            .map(|(_, r)| r.snapshot_id);
        match (current_snapshot_id, main) {
            (Some(cur), Some(main)) if main != cur => {
                return Err(Error::invalid_metadata(
                    "refs.main.snapshot-id",
                    format!("the main branch points to {main}, but current-snapshot-id is {cur}"),
                ))
            }
            (Some(cur), None) if !refs_written => {
                refs.push((MAIN_BRANCH.to_string(), SnapshotRef::branch(cur)))
            }
            (None, Some(main)) => {
                return Err(Error::invalid_metadata(
                    "refs.main",
                    format!(
                        "the main branch points to {main}, but there is no current-snapshot-id"
                    ),
                ))
            }
            _ => {}
        }
        if let Some((name, r)) = refs
            .iter()
            .find(|(n, r)| n == MAIN_BRANCH && !r.is_branch())
        {
            return Err(Error::invalid_metadata(
                format!("refs.{name}.type"),
                format!(
                    "'{MAIN_BRANCH}' must be a branch, found a {}",
                    r.kind.as_str()
                ),
            ));
        }

        let statistics = o
            .opt_list("statistics", StatisticsFile::from_json)?
            .unwrap_or_default();
        let partition_statistics = o
            .opt_list("partition-statistics", PartitionStatisticsFile::from_json)?
            .unwrap_or_default();
        let snapshot_log = o
            .opt_list("snapshot-log", SnapshotLogEntry::from_json)?
            .unwrap_or_default();
        let metadata_log = o
            .opt_list("metadata-log", MetadataLogEntry::from_json)?
            .unwrap_or_default();

        let next_row_id = if v >= 3 {
            let n = o
                .opt_i64("next-row-id")?
                .ok_or_else(|| missing("next-row-id", v))?;
            if n < 0 {
                return Err(Error::invalid_metadata(
                    "next-row-id",
                    format!("must not be negative, found {n}"),
                ));
            }
            n
        } else {
            0
        };
        let encryption_keys = o
            .opt_list("encryption-keys", EncryptedKey::from_json)?
            .unwrap_or_default();

        let mut md = TableMetadata {
            format_version,
            table_uuid,
            location,
            last_sequence_number,
            last_updated_ms,
            last_column_id,
            schemas,
            current_schema_id,
            partition_specs,
            default_spec_id,
            last_partition_id,
            properties,
            current_snapshot_id,
            snapshots,
            snapshot_log,
            metadata_log,
            sort_orders,
            default_sort_order_id,
            refs,
            statistics,
            partition_statistics,
            next_row_id,
            encryption_keys,
        };
        if v >= V4 {
            md.resolve_locations()?;
        }
        Ok(md)
    }

    /// Makes the paths of a v4 file absolute (snapshot roots, statistics files, earlier
    /// metadata files): a value holds absolute paths whatever its version, and
    /// [`TableMetadata::to_json_value`] stores them relative again.
    fn resolve_locations(&mut self) -> Result<()> {
        let loc = self.location.as_str();
        for (i, s) in self.snapshots.iter_mut().enumerate() {
            let at = |e: Error| e.under(&format!("snapshots[{i}]"));
            if let Some(l) = &mut s.manifest_list {
                resolve_location_in_place(loc, l).map_err(at)?;
            }
            for l in s.manifests.iter_mut().flatten() {
                resolve_location_in_place(loc, l).map_err(at)?;
            }
        }
        for (i, f) in self.statistics.iter_mut().enumerate() {
            resolve_location_in_place(loc, &mut f.statistics_path)
                .map_err(|e| e.under(&format!("statistics[{i}]")))?;
        }
        for (i, f) in self.partition_statistics.iter_mut().enumerate() {
            resolve_location_in_place(loc, &mut f.statistics_path)
                .map_err(|e| e.under(&format!("partition-statistics[{i}]")))?;
        }
        for (i, f) in self.metadata_log.iter_mut().enumerate() {
            resolve_location_in_place(loc, &mut f.metadata_file)
                .map_err(|e| e.under(&format!("metadata-log[{i}]")))?;
        }
        Ok(())
    }

    /// Writes the metadata as the reference implementation does for its version, in its
    /// field order: v1 also writes the deprecated `schema` and `partition-spec`;
    /// `last-sequence-number` only from v2; a snapshot's `sequence-number` only when above
    /// 0; `next-row-id` only in v3; no current snapshot is `-1` before v3 and `null` from
    /// v3; a missing (v1) `table-uuid` is `null`.
    /// Refuses to `action` (plan, commit, ...) a table whose format version icefloe reads
    /// as metadata only (v4, see `docs/v4.md`), so that such a table is never handled as if
    /// it were v3. The error names `metadata_file` when known, else the table's location.
    pub fn check_supported(&self, action: &str, metadata_file: Option<&str>) -> Result<()> {
        if self.format_version <= MAX_TABLE_METADATA_FORMAT_VERSION {
            return Ok(());
        }
        let table = match metadata_file {
            Some(f) if !f.is_empty() => f.to_string(),
            _ if !self.location.is_empty() => format!("the table at {}", self.location),
            _ => "a table without location".to_string(),
        };
        Err(Error::unsupported(format!(
            "{table}: cannot {action} a format-version {} table: icefloe reads and writes v{} \
             table metadata, but cannot yet read or write its root manifests (supported for \
             planning and commits: 1 to {})",
            self.format_version,
            self.format_version,
            crate::MAX_FORMAT_VERSION
        )))
    }

    pub fn to_json_value(&self) -> Value {
        let v = self.format_version;
        let mut m = Map::new();
        m.insert("format-version".into(), v.into());
        // Java writes the field even for a v1 table without a uuid, as `null`
        let uuid = self.table_uuid.clone().map_or(Value::Null, Value::String);
        m.insert("table-uuid".into(), uuid);
        if v < V4 || !self.location.is_empty() {
            m.insert("location".into(), self.location.clone().into());
        }
        if v >= 2 {
            m.insert(
                "last-sequence-number".into(),
                self.last_sequence_number.into(),
            );
        }
        m.insert("last-updated-ms".into(), self.last_updated_ms.into());
        m.insert("last-column-id".into(), self.last_column_id.into());
        if v == 1 {
            if let Some(s) = self.current_schema() {
                m.insert("schema".into(), s.to_json());
            }
        }
        m.insert("current-schema-id".into(), self.current_schema_id.into());
        m.insert(
            "schemas".into(),
            Value::Array(self.schemas.iter().map(Schema::to_json).collect()),
        );
        if v == 1 {
            if let Some(s) = self.default_spec() {
                m.insert("partition-spec".into(), s.fields_to_json());
            }
        }
        m.insert("default-spec-id".into(), self.default_spec_id.into());
        m.insert(
            "partition-specs".into(),
            Value::Array(
                self.partition_specs
                    .iter()
                    .map(PartitionSpec::to_json)
                    .collect(),
            ),
        );
        m.insert("last-partition-id".into(), self.last_partition_id.into());
        m.insert(
            "default-sort-order-id".into(),
            self.default_sort_order_id.into(),
        );
        m.insert(
            "sort-orders".into(),
            Value::Array(self.sort_orders.iter().map(SortOrder::to_json).collect()),
        );
        m.insert("properties".into(), str_map(&self.properties));
        let current = match self.current_snapshot_id {
            Some(id) => id.into(),
            None if v >= 3 => Value::Null,
            None => (-1i64).into(),
        };
        m.insert("current-snapshot-id".into(), current);
        if v >= 3 {
            m.insert("next-row-id".into(), self.next_row_id.into());
        }
        if !self.encryption_keys.is_empty() {
            m.insert(
                "encryption-keys".into(),
                Value::Array(
                    self.encryption_keys
                        .iter()
                        .map(EncryptedKey::to_json)
                        .collect(),
                ),
            );
        }
        m.insert(
            "refs".into(),
            Value::Object(
                self.refs
                    .iter()
                    .map(|(n, r)| (n.clone(), r.to_json()))
                    .collect(),
            ),
        );
        m.insert(
            "snapshots".into(),
            Value::Array(self.snapshots.iter().map(Snapshot::to_json).collect()),
        );
        m.insert(
            "statistics".into(),
            Value::Array(
                self.statistics
                    .iter()
                    .map(StatisticsFile::to_json)
                    .collect(),
            ),
        );
        m.insert(
            "partition-statistics".into(),
            Value::Array(
                self.partition_statistics
                    .iter()
                    .map(PartitionStatisticsFile::to_json)
                    .collect(),
            ),
        );
        m.insert(
            "snapshot-log".into(),
            Value::Array(
                self.snapshot_log
                    .iter()
                    .map(SnapshotLogEntry::to_json)
                    .collect(),
            ),
        );
        m.insert(
            "metadata-log".into(),
            Value::Array(
                self.metadata_log
                    .iter()
                    .map(MetadataLogEntry::to_json)
                    .collect(),
            ),
        );
        if v >= V4 {
            store_locations(&mut m, &self.location);
        }
        Value::Object(m)
    }

    /// The metadata as JSON text, pretty-printed (two-space indent) or compact.
    pub fn to_json_string(&self, pretty: bool) -> String {
        let v = self.to_json_value();
        // serde_json's own writers: `Display` (`{v:#}`) gives the same text through
        // `core::fmt`, a call per token, which was a tenth of a small commit's CPU
        let text = if pretty {
            serde_json::to_string_pretty(&v)
        } else {
            serde_json::to_string(&v)
        };
        // a `Value` has string keys only, so serialising it cannot fail
        text.unwrap_or_else(|_| v.to_string())
    }

    /// Reads a metadata file. Gzip is detected by its magic bytes, so both
    /// `*.gz.metadata.json` and `*.metadata.json.gz` (and mislabelled files) are read.
    /// Every input error names `location` as its file.
    pub fn read(io: &dyn FileIO, location: &str) -> Result<TableMetadata> {
        let bytes = io.read(location)?;
        Self::from_bytes(&bytes).map_err(|e| e.in_file(location))
    }

    /// Parses the bytes of a metadata file, plain or gzip-compressed.
    pub fn from_bytes(bytes: &[u8]) -> Result<TableMetadata> {
        Self::from_json_str(&metadata_file_text(bytes)?)
    }

    /// Writes the metadata (pretty-printed, like the reference implementation) to a new
    /// file, gzip-compressed when `compress` is set. The name must agree with `compress`
    /// (`*.gz.metadata.json` or `*.metadata.json.gz` for compressed files) so that readers
    /// that go by the name can read it.
    pub fn write(&self, io: &dyn FileIO, location: &str, compress: bool) -> Result<()> {
        if compress != is_gzip_file_name(location) {
            return Err(Error::invalid_argument(format!(
                "metadata file name '{location}' does not match compress={compress}: compressed \
                 metadata files must end with '.gz.metadata.json', others must not"
            )));
        }
        let bytes = metadata_file_bytes(self.to_json_string(true), compress)
            .map_err(|e| Error::io(location, e))?;
        io.write_new(location, &bytes)
    }

    pub fn current_schema(&self) -> Option<&Schema> {
        self.schema_by_id(self.current_schema_id)
    }

    pub fn schema_by_id(&self, schema_id: i32) -> Option<&Schema> {
        self.schemas.iter().find(|s| s.schema_id() == schema_id)
    }

    pub fn default_spec(&self) -> Option<&PartitionSpec> {
        self.spec_by_id(self.default_spec_id)
    }

    pub fn spec_by_id(&self, spec_id: i32) -> Option<&PartitionSpec> {
        self.partition_specs.iter().find(|s| s.spec_id == spec_id)
    }

    pub fn default_sort_order(&self) -> Option<&SortOrder> {
        self.sort_order_by_id(self.default_sort_order_id)
    }

    pub fn sort_order_by_id(&self, order_id: i32) -> Option<&SortOrder> {
        self.sort_orders.iter().find(|s| s.order_id == order_id)
    }

    pub fn current_snapshot(&self) -> Option<&Snapshot> {
        self.current_snapshot_id
            .and_then(|id| self.snapshot_by_id(id))
    }

    pub fn snapshot_by_id(&self, snapshot_id: i64) -> Option<&Snapshot> {
        self.snapshots.iter().find(|s| s.snapshot_id == snapshot_id)
    }

    pub fn snapshot_ref(&self, name: &str) -> Option<&SnapshotRef> {
        self.refs.iter().find(|(n, _)| n == name).map(|(_, r)| r)
    }

    /// The snapshot a branch or tag points to.
    pub fn snapshot_by_ref(&self, name: &str) -> Option<&Snapshot> {
        self.snapshot_ref(name)
            .and_then(|r| self.snapshot_by_id(r.snapshot_id))
    }

    /// The snapshot that was current at `timestamp_ms`, from the `snapshot-log`
    /// (Appendix F): the last log entry at or before the timestamp.
    pub fn snapshot_as_of(&self, timestamp_ms: i64) -> Result<&Snapshot> {
        let entry = self
            .snapshot_log
            .iter()
            .rfind(|e| e.timestamp_ms <= timestamp_ms)
            .ok_or_else(|| {
                Error::not_found(if self.snapshot_log.is_empty() {
                    format!("cannot find a snapshot as of {timestamp_ms}: the table has no snapshot-log")
                } else {
                    format!("cannot find a snapshot as of {timestamp_ms}: the snapshot-log starts later")
                })
            })?;
        self.snapshot_by_id(entry.snapshot_id).ok_or_else(|| {
            Error::not_found(format!(
                "snapshot {} (current as of {timestamp_ms}) has expired",
                entry.snapshot_id
            ))
        })
    }

    /// The snapshot and its ancestors, newest first, following `parent-snapshot-id`
    /// until a parent is missing (expired) or absent. Empty if the id is unknown.
    pub fn ancestors_of(&self, snapshot_id: i64) -> Vec<&Snapshot> {
        let by_id: std::collections::HashMap<i64, &Snapshot> =
            self.snapshots.iter().map(|s| (s.snapshot_id, s)).collect();
        let mut out = Vec::new();
        let mut next = by_id.get(&snapshot_id).copied();
        while let Some(s) = next {
            // a cycle of parent ids would otherwise loop forever
            if out.len() >= self.snapshots.len() {
                break;
            }
            out.push(s);
            next = s.parent_snapshot_id.and_then(|p| by_id.get(&p).copied());
        }
        out
    }

    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

fn read_format_version(o: &Obj<'_>) -> Result<i32> {
    let raw = o.req("format-version")?;
    let n = raw.as_i64().ok_or_else(|| {
        Error::invalid_metadata(
            "format-version",
            format!("expected an integer, found {}", kind(raw)),
        )
    })?;
    if !(1..=i64::from(MAX_TABLE_METADATA_FORMAT_VERSION)).contains(&n) {
        return Err(Error::UnsupportedFormatVersion {
            at: Location {
                file: String::new(),
                field: "format-version".into(),
            },
            version: n,
            max: MAX_TABLE_METADATA_FORMAT_VERSION,
        });
    }
    i32::try_from(n).map_err(|_| Error::invalid_metadata("format-version", "out of range"))
}

/// The paths of a v4 metadata JSON `m` as the file stores them
/// ([`stored_location`]: relative under `location`). A path with no v4 form (scheme-less,
/// relative, not under the location: only a caller-given statistics path can be one) is
/// written as it is, and so reads back relative to the location, as a v4 reader takes it.
fn store_locations(m: &mut Map<String, Value>, location: &str) {
    let store = |v: &mut Value| {
        if let Value::String(path) = v {
            if let Ok(stored) = stored_location(location, path) {
                *path = stored.into_owned();
            }
        }
    };
    let fields = [
        ("snapshots", "manifest-list"),
        ("statistics", "statistics-path"),
        ("partition-statistics", "statistics-path"),
        ("metadata-log", "metadata-file"),
    ];
    for (list, field) in fields {
        let Some(Value::Array(items)) = m.get_mut(list) else {
            continue;
        };
        for item in items {
            if let Some(v) = item.get_mut(field) {
                store(v);
            }
            // v1's embedded manifest locations (no v4 writer makes them; kept consistent)
            if let Some(Value::Array(paths)) = item.get_mut("manifests") {
                paths.iter_mut().for_each(store);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn minimal_v2() -> Value {
        json!({
            "format-version": 2,
            "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location": "s3://b/t",
            "last-sequence-number": 0,
            "last-updated-ms": 1,
            "last-column-id": 1,
            "current-schema-id": 0,
            "schemas": [{"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "x", "required": true, "type": "long"}]}],
            "default-spec-id": 0,
            "partition-specs": [{"spec-id": 0, "fields": []}],
            "last-partition-id": 999,
            "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}]
        })
    }

    #[test]
    fn minimal_v2_parses_and_round_trips() {
        let m = TableMetadata::from_json_value(&minimal_v2()).unwrap();
        assert_eq!(m.current_snapshot_id, None);
        assert!(m.refs.is_empty());
        let out = m.to_json_value();
        assert_eq!(out["current-snapshot-id"], -1);
        assert_eq!(TableMetadata::from_json_value(&out).unwrap(), m);
    }

    #[test]
    fn format_version_checked_first() {
        for (v, unsupported) in [
            (json!(5), true),
            (json!(0), true),
            (json!(-1), true),
            (json!("x"), false),
        ] {
            // nothing else present: the version must be refused before other fields are read
            let e = TableMetadata::from_json_value(&json!({ "format-version": v })).unwrap_err();
            assert_eq!(
                matches!(e, Error::UnsupportedFormatVersion { .. }),
                unsupported,
                "{e:?}"
            );
            assert_eq!(e.location().unwrap().field, "format-version");
        }
    }

    fn minimal_v4() -> Value {
        let mut v = minimal_v2();
        v["format-version"] = json!(4);
        v["next-row-id"] = json!(0);
        v.as_object_mut().unwrap().remove("location");
        v
    }

    #[test]
    fn v4_parses_without_location_and_writes_it_back_only_when_set() {
        let m = TableMetadata::from_json_value(&minimal_v4()).unwrap();
        assert_eq!(m.format_version, 4);
        assert_eq!(m.location, "");
        let out = m.to_json_value();
        assert!(out.get("location").is_none(), "{out}");
        assert_eq!(out["format-version"], 4);
        assert_eq!(TableMetadata::from_json_value(&out).unwrap(), m);

        let mut with = minimal_v4();
        with["location"] = json!("s3://b/t/");
        let m = TableMetadata::from_json_value(&with).unwrap();
        assert_eq!(m.to_json_value()["location"], "s3://b/t/");
        // v3 still requires it
        let mut v3 = minimal_v4();
        v3["format-version"] = json!(3);
        let e = TableMetadata::from_json_value(&v3).unwrap_err();
        assert_eq!(e.location().unwrap().field, "location");
    }

    /// v4 metadata paths are relative to the location when read (and absolute in the
    /// value), and stored relative again when written; before v4 they are kept as they are.
    #[test]
    fn v4_metadata_paths_resolve_against_the_location_and_are_stored_relative() {
        let with_paths = |version: i32, location: Option<&str>| {
            let mut v = minimal_v4();
            v["format-version"] = json!(version);
            if let Some(l) = location {
                v["location"] = json!(l);
            }
            v["current-snapshot-id"] = json!(1);
            v["last-sequence-number"] = json!(1);
            v["snapshots"] = json!([{"snapshot-id": 1, "sequence-number": 1,
                "timestamp-ms": 2, "manifest-list": "metadata/snap-1.avro",
                "summary": {"operation": "append"}, "first-row-id": 0, "added-rows": 0}]);
            v["statistics"] = json!([{"snapshot-id": 1, "statistics-path": "gs://o/s.puffin",
                "file-size-in-bytes": 1, "file-footer-size-in-bytes": 1, "blob-metadata": []}]);
            v["partition-statistics"] = json!([{"snapshot-id": 1,
                "statistics-path": "metadata/p.parquet", "file-size-in-bytes": 1}]);
            v["metadata-log"] = json!([{"timestamp-ms": 1,
                "metadata-file": "metadata/v1.metadata.json"}]);
            v
        };
        let m = TableMetadata::from_json_value(&with_paths(4, Some("s3://b/t"))).unwrap();
        assert_eq!(
            m.snapshots[0].manifest_list.as_deref(),
            Some("s3://b/t/metadata/snap-1.avro")
        );
        assert_eq!(m.statistics[0].statistics_path, "gs://o/s.puffin");
        assert_eq!(
            m.partition_statistics[0].statistics_path,
            "s3://b/t/metadata/p.parquet"
        );
        assert_eq!(
            m.metadata_log[0].metadata_file,
            "s3://b/t/metadata/v1.metadata.json"
        );
        let out = m.to_json_value();
        assert_eq!(out["snapshots"][0]["manifest-list"], "metadata/snap-1.avro");
        assert_eq!(out["statistics"][0]["statistics-path"], "gs://o/s.puffin");
        assert_eq!(
            out["metadata-log"][0]["metadata-file"],
            "metadata/v1.metadata.json"
        );
        // moved: the same file at another location names the files there
        let mut moved = out.clone();
        moved["location"] = json!("file:/copy/t");
        let m2 = TableMetadata::from_json_value(&moved).unwrap();
        assert_eq!(
            m2.snapshots[0].manifest_list.as_deref(),
            Some("file:/copy/t/metadata/snap-1.avro")
        );
        assert_eq!(m2.to_json_value(), moved);

        // a relative path without a location: the error names the entry and `location`
        let e = TableMetadata::from_json_value(&with_paths(4, None)).unwrap_err();
        let at = e.location().unwrap();
        assert_eq!(at.field, "snapshots[0].location", "{e}");
        assert!(e.to_string().contains("metadata/snap-1.avro"), "{e}");

        // before v4 a path is fully qualified, and kept as it is both ways
        let v3 = TableMetadata::from_json_value(&with_paths(3, Some("s3://b/t"))).unwrap();
        assert_eq!(
            v3.snapshots[0].manifest_list.as_deref(),
            Some("metadata/snap-1.avro")
        );
        assert_eq!(
            v3.to_json_value()["snapshots"][0]["manifest-list"],
            "metadata/snap-1.avro"
        );
    }

    #[test]
    fn v4_tables_are_planned_and_committed() {
        // v4 was refused while only its metadata was read; planning and commits of root
        // manifests are built now (commit::v4_tests covers them with snapshots)
        use crate::catalog::{TableIdent, TableState};
        use crate::commit::builder::MetadataBuilder;
        use crate::commit::update::TableUpdate;
        use std::sync::Arc;

        let file = "s3://b/t/metadata/00003-abc.metadata.json";
        let md = Arc::new(TableMetadata::from_json_value(&minimal_v4()).unwrap());
        md.check_supported("plan", None).unwrap();
        let io = Arc::new(crate::io::MemoryFileIO::default());
        let scan = crate::scan::TableScan::new(md.clone(), io).metadata_location(file);
        assert!(scan.plan_files().unwrap().tasks.is_empty());

        let mut b = MetadataBuilder::from_metadata(md.clone(), Some(file.to_string()));
        b.apply(TableUpdate::SetProperties {
            updates: vec![("k".into(), "v".into())],
        })
        .unwrap();
        assert_eq!(b.build().unwrap().format_version, 4);

        let catalog = crate::commit::test_catalog::MemoryCatalog::new();
        let state = TableState {
            metadata_location: file.to_string(),
            metadata: md.clone(),
        };
        let mut tx = crate::commit::transaction::Transaction::new(
            catalog,
            TableIdent::parse("db.t").unwrap(),
            state,
        );
        tx.set_properties(vec![("k".into(), "v".into())]).unwrap();
        // the in-memory catalog does not hold this table: the commit reaches the catalog
        assert!(!matches!(
            tx.commit().unwrap_err(),
            Error::Unsupported { .. }
        ));
    }

    #[test]
    fn gzip_names() {
        assert!(is_gzip_file_name("a/00001-x.gz.metadata.json"));
        assert!(is_gzip_file_name("a/00001-x.metadata.json.gz"));
        assert!(!is_gzip_file_name("a/00001-x.metadata.json"));
    }
}
