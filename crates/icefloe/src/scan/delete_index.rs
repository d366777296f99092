//! The delete file index: which of a snapshot's delete files apply to each data file
//! ("Scan Planning" scope rules), as Java's `DeleteFileIndex` decides it.
//!
//! The live delete files are indexed once; [`DeleteFileIndex::for_data_file`] is then at
//! most two hash lookups (the data file's partition and its path) plus binary searches
//! over sequence-number-sorted arrays (about 0.5 µs per data file in a release build with
//! a thousand partitions, 100,000 DVs and a dozen deletes returned per file):
//!
//! - **Deletion vectors** (position deletes in Puffin) by `referenced_data_file`; at most
//!   one per data file. A DV applies when the data file's data sequence number is at most
//!   the DV's, and then no position delete file applies to that data file.
//! - **Position delete files** that target one data file, by that file's path: the path is
//!   `referenced_data_file`, or else the `file_path` column (id 2147483546) when its lower
//!   and upper bounds are the same bytes. Other position delete files by partition (spec id
//!   and values). Both apply when data seq <= delete seq (same-commit deletes apply).
//! - **Equality delete files** of an unpartitioned spec are global; the others by
//!   partition. They apply when data seq < delete seq, unless the column stats of the data
//!   and delete files show that no deleted row can match (Java's pruning by value ranges
//!   and null counts of the equality columns, typed by the fields of all the table's
//!   schemas and compared with Java's comparators).
//!
//! As in Java, lookups by path do not compare partitions (paths are unique in a snapshot),
//! delete files with a data sequence number of 0 or less are ignored (v1 metadata has
//! only 0, and Java indexes deletes "after sequence number 0"), and position delete files
//! that are not tied to one path are not pruned by their `file_path` bounds.

use std::collections::HashMap;
use std::sync::Arc;

use super::partition_key::{check_values, PartitionKey};
use super::task::ScanFile;
use crate::error::{Error, Result};
use crate::expr::java_compare;
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::reserved::DELETE_FILE_PATH_ID;
use crate::spec::types::NestedField;
use crate::spec::{Literal, PrimitiveType, Schema, Type};

/// The delete files of one snapshot, indexed for [`DeleteFileIndex::for_data_file`].
#[derive(Debug, Default)]
pub struct DeleteFileIndex {
    /// Equality deletes of unpartitioned specs.
    global_eq: EqualityGroup,
    /// Equality and position deletes by partition.
    by_partition: HashMap<PartitionKey, PartitionDeletes>,
    /// Deletion vectors and targeted position deletes by the path of their data file.
    by_path: HashMap<String, PathDeletes>,
    has_equality_deletes: bool,
    has_position_deletes: bool,
    /// Number of partition fields by spec id, to check the partitions of data files.
    spec_arity: HashMap<i32, usize>,
}

// Planning shares one index across threads.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<DeleteFileIndex>();
};

impl DeleteFileIndex {
    /// Indexes the live delete files of a snapshot (sequence numbers already inherited).
    ///
    /// `specs` holds the table's partition specs by id; `schemas` all schemas of the
    /// table: an equality column is typed, and known to be required or not, by the field
    /// of the schema with the highest id that has it (as Java, which indexes the fields of
    /// every schema, so that columns dropped since still prune by their bounds).
    ///
    /// Fails, naming the delete file, for: a data file in the list; a spec id not in
    /// `specs`; a deletion vector without `referenced_data_file` or two for one data file;
    /// an equality delete file without `equality_ids` or in Puffin; a partition tuple that
    /// does not fit its spec.
    pub fn new(
        deletes: Vec<Arc<ScanFile>>,
        specs: &HashMap<i32, Arc<PartitionSpec>>,
        schemas: &[Schema],
    ) -> Result<DeleteFileIndex> {
        let fields = FieldLookup::new(schemas);
        // groups are filled unsorted, then sorted once
        let mut global_eq = EqualityGroup::default();
        let mut by_partition: HashMap<PartitionKey, PartitionDeletes> = HashMap::new();
        let mut by_path: HashMap<String, PathDeletes> = HashMap::new();
        let (mut has_equality_deletes, mut has_position_deletes) = (false, false);

        for delete in deletes {
            if delete.data_sequence_number <= 0 {
                continue;
            }
            let file = &delete.file;
            let path = file.file_path.as_str();
            let spec = specs.get(&delete.spec_id).ok_or_else(|| {
                Error::invalid_metadata(
                    "partition_spec_id",
                    format!(
                        "delete file has partition spec id {}, which is not a spec of the table",
                        delete.spec_id
                    ),
                )
                .in_file(path)
            })?;
            match file.content {
                DataContentType::Data => {
                    return Err(Error::invalid_metadata(
                        "content",
                        "a data file is not a delete file",
                    )
                    .in_file(path));
                }
                DataContentType::PositionDeletes if file.file_format == FileFormat::Puffin => {
                    let Some(target) = file.referenced_data_file.clone() else {
                        return Err(Error::invalid_metadata(
                            "referenced_data_file",
                            "a deletion vector must name the data file it applies to",
                        )
                        .in_file(path));
                    };
                    let slot = &mut by_path.entry(target.clone()).or_default().dv;
                    if let Some(other) = slot {
                        return Err(Error::invalid_metadata(
                            "referenced_data_file",
                            format!(
                                "more than one deletion vector for data file {target}: {} and {}",
                                dv_description(&other.file),
                                dv_description(file)
                            ),
                        )
                        .in_file(path));
                    }
                    *slot = Some(delete);
                    has_position_deletes = true;
                }
                DataContentType::PositionDeletes => {
                    match referenced_path(file) {
                        Some(target) => by_path.entry(target).or_default().pos.files.push(delete),
                        None => {
                            let key = partition_key(&delete, spec)?;
                            by_partition.entry(key).or_default().pos.files.push(delete);
                        }
                    }
                    has_position_deletes = true;
                }
                DataContentType::EqualityDeletes => {
                    if file.file_format == FileFormat::Puffin {
                        return Err(Error::invalid_metadata(
                            "file_format",
                            "equality deletes cannot be stored in Puffin",
                        )
                        .in_file(path));
                    }
                    let key = if spec.is_unpartitioned() {
                        None
                    } else {
                        Some(partition_key(&delete, spec)?)
                    };
                    let indexed = EqualityDelete::new(delete, &fields)?;
                    match key {
                        None => global_eq.files.push(indexed),
                        Some(key) => by_partition.entry(key).or_default().eq.files.push(indexed),
                    }
                    has_equality_deletes = true;
                }
            }
        }

        global_eq.sort();
        for deletes in by_partition.values_mut() {
            deletes.eq.sort();
            deletes.pos.sort();
        }
        for deletes in by_path.values_mut() {
            deletes.pos.sort();
        }
        Ok(DeleteFileIndex {
            global_eq,
            by_partition,
            by_path,
            has_equality_deletes,
            has_position_deletes,
            spec_arity: specs
                .iter()
                .map(|(id, spec)| (*id, spec.fields.len()))
                .collect(),
        })
    }

    /// True when no delete file applies to any data file.
    pub fn is_empty(&self) -> bool {
        !self.has_equality_deletes() && !self.has_position_deletes()
    }

    /// Whether any equality delete file was indexed.
    pub fn has_equality_deletes(&self) -> bool {
        self.has_equality_deletes
    }

    /// Whether any position delete file or deletion vector was indexed.
    pub fn has_position_deletes(&self) -> bool {
        self.has_position_deletes
    }

    /// The equality field ids of the indexed equality delete files, each once: the
    /// columns whose stats of data files can prune them.
    pub fn equality_field_ids(&self) -> Vec<i32> {
        let mut ids: Vec<i32> = self
            .global_eq
            .files
            .iter()
            .chain(self.by_partition.values().flat_map(|d| &d.eq.files))
            .flat_map(|d| d.file.file.equality_ids.iter().flatten().copied())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Every indexed delete file, each once, in no particular order.
    pub fn referenced_delete_files(&self) -> Vec<Arc<ScanFile>> {
        let eq = self
            .global_eq
            .files
            .iter()
            .chain(self.by_partition.values().flat_map(|d| &d.eq.files))
            .map(|d| Arc::clone(&d.file));
        let pos = self
            .by_partition
            .values()
            .flat_map(|d| &d.pos.files)
            .chain(
                self.by_path
                    .values()
                    .flat_map(|d| d.dv.iter().chain(&d.pos.files)),
            )
            .cloned();
        eq.chain(pos).collect()
    }

    /// The delete files to apply to the data file `data` (a live data file of the same
    /// snapshot, with its inherited data sequence number).
    ///
    /// Order: global equality deletes, then the equality deletes of the file's partition,
    /// then either its deletion vector, or the position delete files of its partition
    /// followed by those that target its path. Within each group files are in ascending
    /// data sequence number, ties broken by file path and then by content offset.
    ///
    /// Fails when the data file's spec id or partition tuple does not fit the table's
    /// specs (only checked when partition-scoped deletes exist, as in Java), or when its
    /// deletion vector is older than it (Java's validation: a DV must have a data sequence
    /// number at least that of the data file).
    pub fn for_data_file(&self, data: &ScanFile) -> Result<Vec<Arc<ScanFile>>> {
        let mut out = Vec::new();
        if self.is_empty() {
            return Ok(out);
        }
        let file = &data.file;
        let seq = data.data_sequence_number;

        let partition = if self.by_partition.is_empty() {
            None
        } else {
            check_data_partition(data, &self.spec_arity)?;
            self.by_partition
                .get(PartitionKey::lookup(data.spec_id, &file.partition).as_dyn())
        };
        let path = self.by_path.get(file.file_path.as_str());

        let stats = DataStats::new(file);
        self.global_eq.collect(seq, &stats, &mut out)?;
        if let Some(partition) = partition {
            partition.eq.collect(seq, &stats, &mut out)?;
        }

        if let Some(dv) = path.and_then(|p| p.dv.as_ref()) {
            if dv.data_sequence_number < seq {
                return Err(Error::invalid_metadata(
                    "sequence_number",
                    format!(
                        "deletion vector {} has data sequence number {}, below the data sequence number {seq} of its data file {}",
                        dv_description(&dv.file),
                        dv.data_sequence_number,
                        file.file_path
                    ),
                )
                .in_file(&dv.file.file_path));
            }
            out.push(Arc::clone(dv));
            return Ok(out);
        }

        if let Some(partition) = partition {
            out.extend_from_slice(partition.pos.matching(seq));
        }
        if let Some(path) = path {
            out.extend_from_slice(path.pos.matching(seq));
        }
        Ok(out)
    }
}

fn check_data_partition(data: &ScanFile, spec_arity: &HashMap<i32, usize>) -> Result<()> {
    let at = |field: &str, message: String| {
        Error::invalid_metadata(field, message).in_file(&data.file.file_path)
    };
    let Some(&arity) = spec_arity.get(&data.spec_id) else {
        return Err(at(
            "partition_spec_id",
            format!(
                "data file has partition spec id {}, which is not a spec of the table",
                data.spec_id
            ),
        ));
    };
    if data.file.partition.len() != arity {
        return Err(at(
            "partition",
            format!(
                "partition tuple has {} values but spec {} has {arity} fields",
                data.file.partition.len(),
                data.spec_id
            ),
        ));
    }
    check_values(&data.file.partition).map_err(|e| e.in_file(&data.file.file_path))
}

fn partition_key(delete: &ScanFile, spec: &PartitionSpec) -> Result<PartitionKey> {
    let values = &delete.file.partition;
    if values.len() != spec.fields.len() {
        return Err(Error::invalid_metadata(
            "partition",
            format!(
                "partition tuple has {} values but spec {} has {} fields",
                values.len(),
                spec.spec_id,
                spec.fields.len()
            ),
        )
        .in_file(&delete.file.file_path));
    }
    PartitionKey::new(delete.spec_id, values.clone()).map_err(|e| e.in_file(&delete.file.file_path))
}

/// The one data file a position delete file targets, if known: `referenced_data_file`,
/// or the `file_path` column when its lower and upper bounds hold the same bytes (as
/// Java's `ContentFileUtil.referencedDataFile`). Bounds that are not UTF-8 name no file.
fn referenced_path(file: &DataFile) -> Option<String> {
    if let Some(path) = &file.referenced_data_file {
        return Some(path.clone());
    }
    let lower = path_bound(file.lower_bounds.as_deref())?;
    let upper = path_bound(file.upper_bounds.as_deref())?;
    if lower != upper {
        return None;
    }
    String::from_utf8(lower.to_vec()).ok()
}

fn path_bound(bounds: Option<&[(i32, Vec<u8>)]>) -> Option<&[u8]> {
    bounds?
        .iter()
        .find(|(id, _)| *id == DELETE_FILE_PATH_ID)
        .map(|(_, b)| b.as_slice())
}

fn dv_description(file: &DataFile) -> String {
    format!(
        "{} (offset {}, length {})",
        file.file_path,
        opt(file.content_offset),
        opt(file.content_size_in_bytes)
    )
}

fn opt(v: Option<i64>) -> String {
    v.map_or_else(|| "unknown".to_string(), |v| v.to_string())
}

/// Orders delete files by data sequence number, then path, then content offset, so that
/// results do not depend on the order manifests were read in.
fn sort_key(f: &ScanFile) -> (i64, &str, Option<i64>) {
    (
        f.data_sequence_number,
        f.file.file_path.as_str(),
        f.file.content_offset,
    )
}

/// The deletes of one partition.
#[derive(Debug, Default)]
struct PartitionDeletes {
    eq: EqualityGroup,
    pos: PositionGroup,
}

/// The deletes that target one data file.
#[derive(Debug, Default)]
struct PathDeletes {
    dv: Option<Arc<ScanFile>>,
    pos: PositionGroup,
}

/// Position delete files sorted by data sequence number.
#[derive(Debug, Default)]
struct PositionGroup {
    seqs: Vec<i64>,
    files: Vec<Arc<ScanFile>>,
}

impl PositionGroup {
    /// Sorts the files pushed so far and indexes their sequence numbers.
    fn sort(&mut self) {
        self.files.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
        self.seqs = self.files.iter().map(|f| f.data_sequence_number).collect();
    }

    /// The files with data sequence number >= `seq`.
    fn matching(&self, seq: i64) -> &[Arc<ScanFile>] {
        let start = self.seqs.partition_point(|&s| s < seq);
        self.files.get(start..).unwrap_or_default()
    }
}

/// Equality deletes sorted by data sequence number.
#[derive(Debug, Default)]
struct EqualityGroup {
    seqs: Vec<i64>,
    files: Vec<EqualityDelete>,
}

impl EqualityGroup {
    /// Sorts the files pushed so far and indexes their sequence numbers.
    fn sort(&mut self) {
        self.files
            .sort_by(|a, b| sort_key(&a.file).cmp(&sort_key(&b.file)));
        self.seqs = self
            .files
            .iter()
            .map(|f| f.file.data_sequence_number)
            .collect();
    }

    /// Appends the files with data sequence number > `seq` whose stats may match rows of
    /// the data file.
    fn collect(&self, seq: i64, data: &DataStats<'_>, out: &mut Vec<Arc<ScanFile>>) -> Result<()> {
        let start = self.seqs.partition_point(|&s| s <= seq);
        for delete in self.files.get(start..).unwrap_or_default() {
            if delete.may_match(data)? {
                out.push(Arc::clone(&delete.file));
            }
        }
        Ok(())
    }
}

/// The fields equality columns are resolved with: those of every schema of the table, an
/// id taking the field of the schema with the highest id that has it (Java's
/// `Schema.indexFields` over the table's schemas, not only the scan's).
struct FieldLookup<'a> {
    /// Highest schema id first; schemas with the same id keep their order (the first one
    /// wins, as in Java's sorted set).
    schemas: Vec<&'a Schema>,
}

impl<'a> FieldLookup<'a> {
    fn new(schemas: &'a [Schema]) -> FieldLookup<'a> {
        let mut schemas: Vec<&Schema> = schemas.iter().collect();
        schemas.sort_by_key(|s| std::cmp::Reverse(s.schema_id()));
        FieldLookup { schemas }
    }

    fn field(&self, id: i32) -> Option<&'a NestedField> {
        self.schemas.iter().find_map(|s| s.field_by_id(id))
    }
}

fn count_of(counts: Option<&[(i32, i64)]>, id: i32) -> Option<i64> {
    counts?.iter().find(|(k, _)| *k == id).map(|(_, c)| *c)
}

fn bound_of(bounds: Option<&[(i32, Vec<u8>)]>, id: i32) -> Option<&[u8]> {
    bounds?
        .iter()
        .find(|(k, _)| *k == id)
        .map(|(_, b)| b.as_slice())
}

/// A bound read as a value of the column's type; `None` for types whose values Java does
/// not read (`unknown`).
fn read_bound(bytes: &[u8], ty: &PrimitiveType) -> Result<Option<Literal>> {
    if *ty == PrimitiveType::Unknown {
        return Ok(None);
    }
    Literal::from_bytes(bytes, ty).map(Some)
}

/// May hold nulls: not required, and a null count that is unknown or positive.
fn contains_null(null_count: Option<i64>, required: bool) -> bool {
    !required && null_count.is_none_or(|n| n > 0)
}

/// Known to hold only nulls: not required, and null count == value count.
fn all_null(null_count: Option<i64>, value_count: Option<i64>, required: bool) -> bool {
    !required && matches!((null_count, value_count), (Some(n), Some(v)) if n == v)
}

/// Known to hold no nulls: required, or a null count of zero.
fn all_non_null(null_count: Option<i64>, required: bool) -> bool {
    required || null_count.is_some_and(|n| n <= 0)
}

/// One primitive equality column of a delete file, with the delete file's stats for it.
#[derive(Debug)]
struct EqualityColumn {
    id: i32,
    required: bool,
    ty: PrimitiveType,
    null_count: Option<i64>,
    value_count: Option<i64>,
    lower: Option<Literal>,
    upper: Option<Literal>,
}

/// An equality delete file with what pruning needs, computed once.
#[derive(Debug)]
struct EqualityDelete {
    file: Arc<ScanFile>,
    /// An equality field id that no schema of the table has: Java fails on such a delete
    /// file as soon as a data file could be affected by it.
    unknown_id: Option<i32>,
    /// The primitive equality columns (Java keeps no stats for nested types).
    columns: Vec<EqualityColumn>,
    /// Both bound maps are present (Java's `hasLowerAndUpperBounds`).
    has_bounds: bool,
    /// Why a lower (upper) bound of an equality column cannot be read: Java reads them
    /// all on first use, and fails then.
    lower_error: Option<String>,
    upper_error: Option<String>,
}

impl EqualityDelete {
    fn new(file: Arc<ScanFile>, fields: &FieldLookup<'_>) -> Result<EqualityDelete> {
        let Some(ids) = &file.file.equality_ids else {
            return Err(Error::invalid_metadata(
                "equality_ids",
                "an equality delete file must list its equality columns",
            )
            .in_file(&file.file.file_path));
        };
        let f = &file.file;
        let mut unknown_id = None;
        let mut columns = Vec::with_capacity(ids.len());
        let (mut lower_error, mut upper_error) = (None, None);
        for &id in ids {
            let Some(field) = fields.field(id) else {
                unknown_id = unknown_id.or(Some(id));
                continue;
            };
            let Type::Primitive(ty) = &field.field_type else {
                continue;
            };
            let read =
                |bounds: Option<&[(i32, Vec<u8>)]>, error: &mut Option<String>| match bound_of(
                    bounds, id,
                )
                .map(|b| read_bound(b, ty))
                {
                    None => None,
                    Some(Ok(v)) => v,
                    Some(Err(e)) => {
                        if error.is_none() {
                            *error = Some(format!("cannot read the bound of column {id}: {e}"));
                        }
                        None
                    }
                };
            let lower = read(f.lower_bounds.as_deref(), &mut lower_error);
            let upper = read(f.upper_bounds.as_deref(), &mut upper_error);
            columns.push(EqualityColumn {
                id,
                required: field.required,
                ty: ty.clone(),
                null_count: count_of(f.null_value_counts.as_deref(), id),
                value_count: count_of(f.value_counts.as_deref(), id),
                lower,
                upper,
            });
        }
        Ok(EqualityDelete {
            has_bounds: f.lower_bounds.is_some() && f.upper_bounds.is_some(),
            file,
            unknown_id,
            columns,
            lower_error,
            upper_error,
        })
    }

    fn error(&self, field: &str, message: String) -> Error {
        Error::invalid_metadata(field, message).in_file(&self.file.file.file_path)
    }

    /// False when the stats prove that no row of the data file equals a deleted row
    /// (Java's `canContainEqDeletesForFile`, which also decides when bounds are read and
    /// so which malformed metadata fails).
    fn may_match(&self, data: &DataStats<'_>) -> Result<bool> {
        if let Some(id) = self.unknown_id {
            return Err(self.error(
                "equality_ids",
                format!("equality field id {id} is not a field of any schema of the table"),
            ));
        }
        let check_ranges = data.has_bounds() && self.has_bounds;
        for column in &self.columns {
            let required = column.required;
            let (data_nulls, data_values) = data.counts(column.id);
            if contains_null(data_nulls, required) && contains_null(column.null_count, required) {
                // nulls are deleted and the data may hold some
                continue;
            }
            if all_null(data_nulls, data_values, required)
                && all_non_null(column.null_count, required)
            {
                return Ok(false);
            }
            if all_null(column.null_count, column.value_count, required)
                && all_non_null(data_nulls, required)
            {
                return Ok(false);
            }
            if !check_ranges {
                continue;
            }
            if let Some(e) = &self.lower_error {
                return Err(self.error("lower_bounds", e.clone()));
            }
            if let Some(e) = &self.upper_error {
                return Err(self.error("upper_bounds", e.clone()));
            }
            let (data_lower, data_upper) = data.bounds(column.id);
            let (Some(data_lower), Some(data_upper), Some(del_lower), Some(del_upper)) =
                (data_lower, data_upper, &column.lower, &column.upper)
            else {
                continue;
            };
            // Java's comparators (`Comparators.forType`): signed UUID halves, NaN above
            // every number
            let Some(data_lower) = data.read(data_lower, column, "lower_bounds")? else {
                continue;
            };
            if java_compare(&data_lower, del_upper)?.is_gt() {
                return Ok(false);
            }
            let Some(data_upper) = data.read(data_upper, column, "upper_bounds")? else {
                continue;
            };
            if java_compare(del_lower, &data_upper)?.is_gt() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The metrics of the data file being looked up.
struct DataStats<'a> {
    file: &'a DataFile,
}

impl<'a> DataStats<'a> {
    fn new(file: &'a DataFile) -> DataStats<'a> {
        DataStats { file }
    }

    fn has_bounds(&self) -> bool {
        self.file.lower_bounds.is_some() && self.file.upper_bounds.is_some()
    }

    /// The null and value counts of a column.
    fn counts(&self, id: i32) -> (Option<i64>, Option<i64>) {
        (
            count_of(self.file.null_value_counts.as_deref(), id),
            count_of(self.file.value_counts.as_deref(), id),
        )
    }

    fn bounds(&self, id: i32) -> (Option<&'a [u8]>, Option<&'a [u8]>) {
        (
            bound_of(self.file.lower_bounds.as_deref(), id),
            bound_of(self.file.upper_bounds.as_deref(), id),
        )
    }

    fn read(&self, bytes: &[u8], column: &EqualityColumn, which: &str) -> Result<Option<Literal>> {
        read_bound(bytes, &column.ty).map_err(|e| {
            Error::invalid_metadata(
                which,
                format!("cannot read the bound of column {}: {e}", column.id),
            )
            .in_file(&self.file.file_path)
        })
    }
}
