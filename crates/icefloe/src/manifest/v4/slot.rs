//! v4 manifest entries decoded into one reused slot, as v3 planning decodes manifests
//! (`manifest::reader`): the file's writer schema is resolved once into a list of steps
//! (each field matched by id to what it fills, with v3's [`FieldPlan`] for its value's
//! layout), and every entry is decoded by those steps straight into the same
//! [`TrackedFile`], whose strings, lists and maps are refilled in place. Fields not
//! wanted (metrics the projection leaves out, `content_stats`, unknown fields) are
//! skipped without being materialised.
//!
//! The decoder in `avro.rs` builds a value tree per entry (a vector per record, every
//! string and map copied, then copied again into the model): on a planner's leaf it
//! cost several times v3's decoder per entry (docs/benchmarks.md). This one gives the
//! same entries (the tests compare them on entries with every field kind) and the same
//! typed errors for bad values, and entries pass the same [`validate_entry`].

use super::avro::{block_consumed, open_v4};
use super::fast::FastPlan;
use super::{
    validate_entry, ContentType, DeletionVector, ManifestInfo, TrackedFile, TrackingStatus,
    V4Layout, V4ManifestKind,
};
use crate::error::{Error, Result};
use crate::manifest::avro::{AvroSchema, Cursor, Record, SkipPlan};
use crate::manifest::avro_values::mismatch;
use crate::manifest::list::summaries;
use crate::manifest::reader::plan::{partition_value, Class, FieldPlan};
use crate::manifest::ManifestProjection;
use crate::spec::Literal;

/// What a field of the file fills. The discriminant is a bit of [`RecordPlan::covered`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum T {
    // tracking (147)
    Status,
    SnapshotId,
    SequenceNumber,
    FileSequenceNumber,
    DvSnapshotId,
    FirstRowId,
    DeletedPositions,
    ReplacedPositions,
    // the entry
    Tracking,
    ContentType,
    FormatVersion,
    Location,
    FileFormat,
    RecordCount,
    FileSize,
    SpecId,
    SortOrderId,
    DeletionVector,
    ManifestInfo,
    KeyMetadata,
    SplitOffsets,
    EqualityIds,
    Partition,
    ColumnSizes,
    ValueCounts,
    NullValueCounts,
    NanValueCounts,
    LowerBounds,
    UpperBounds,
    // deletion_vector (148)
    DvLocation,
    DvOffset,
    DvSize,
    DvCardinality,
    DvKeyMetadata,
    // manifest_info (150)
    AddedFiles,
    ExistingFiles,
    DeletedFiles,
    ReplacedFiles,
    AddedRows,
    ExistingRows,
    DeletedRows,
    ReplacedRows,
    MinSequenceNumber,
    ManifestDv,
    ManifestDvCardinality,
    Partitions,
    Skip,
}

/// The records of an entry whose fields are matched by id.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Entry,
    Tracking,
    Dv,
    Info,
}

/// The target of field `id` of a record at `level`, and the class of its value.
fn target(level: Level, id: i32) -> (T, Class) {
    use Class as C;
    match (level, id) {
        (Level::Tracking, 0) => (T::Status, C::Long),
        (Level::Tracking, 1) => (T::SnapshotId, C::Long),
        (Level::Tracking, 3) => (T::SequenceNumber, C::Long),
        (Level::Tracking, 4) => (T::FileSequenceNumber, C::Long),
        (Level::Tracking, 5) => (T::DvSnapshotId, C::Long),
        (Level::Tracking, 142) => (T::FirstRowId, C::Long),
        (Level::Tracking, 6) => (T::DeletedPositions, C::Bytes),
        (Level::Tracking, 7) => (T::ReplacedPositions, C::Bytes),
        (Level::Entry, 147) => (T::Tracking, C::Other),
        (Level::Entry, 134) => (T::ContentType, C::Long),
        (Level::Entry, 157) => (T::FormatVersion, C::Long),
        (Level::Entry, 100) => (T::Location, C::Str),
        (Level::Entry, 101) => (T::FileFormat, C::Str),
        (Level::Entry, 103) => (T::RecordCount, C::Long),
        (Level::Entry, 104) => (T::FileSize, C::Long),
        (Level::Entry, 141) => (T::SpecId, C::Long),
        (Level::Entry, 140) => (T::SortOrderId, C::Long),
        (Level::Entry, 148) => (T::DeletionVector, C::Other),
        (Level::Entry, 150) => (T::ManifestInfo, C::Other),
        (Level::Entry, 131) => (T::KeyMetadata, C::Bytes),
        (Level::Entry, 132) => (T::SplitOffsets, C::LongList),
        (Level::Entry, 135) => (T::EqualityIds, C::LongList),
        (Level::Entry, 102) => (T::Partition, C::Other),
        (Level::Entry, 108) => (T::ColumnSizes, C::IntLongMap),
        (Level::Entry, 109) => (T::ValueCounts, C::IntLongMap),
        (Level::Entry, 110) => (T::NullValueCounts, C::IntLongMap),
        (Level::Entry, 137) => (T::NanValueCounts, C::IntLongMap),
        (Level::Entry, 125) => (T::LowerBounds, C::IntBytesMap),
        (Level::Entry, 128) => (T::UpperBounds, C::IntBytesMap),
        (Level::Dv, 155) => (T::DvLocation, C::Str),
        (Level::Dv, 144) => (T::DvOffset, C::Long),
        (Level::Dv, 145) => (T::DvSize, C::Long),
        (Level::Dv, 156) => (T::DvCardinality, C::Long),
        (Level::Dv, 149) => (T::DvKeyMetadata, C::Bytes),
        (Level::Info, 504) => (T::AddedFiles, C::Long),
        (Level::Info, 505) => (T::ExistingFiles, C::Long),
        (Level::Info, 506) => (T::DeletedFiles, C::Long),
        (Level::Info, 520) => (T::ReplacedFiles, C::Long),
        (Level::Info, 512) => (T::AddedRows, C::Long),
        (Level::Info, 513) => (T::ExistingRows, C::Long),
        (Level::Info, 514) => (T::DeletedRows, C::Long),
        (Level::Info, 521) => (T::ReplacedRows, C::Long),
        (Level::Info, 516) => (T::MinSequenceNumber, C::Long),
        (Level::Info, 522) => (T::ManifestDv, C::Bytes),
        (Level::Info, 523) => (T::ManifestDvCardinality, C::Long),
        (Level::Info, 507) => (T::Partitions, C::Other),
        _ => (T::Skip, C::Other),
    }
}

/// The required fields of a record at `level`: (target, field id, spec name).
fn required(level: Level) -> &'static [(T, i32, &'static str)] {
    match level {
        Level::Entry => &[
            (T::Tracking, 147, "tracking"),
            (T::ContentType, 134, "content_type"),
            (T::FormatVersion, 157, "format_version"),
            (T::Location, 100, "location"),
            (T::FileFormat, 101, "file_format"),
            (T::RecordCount, 103, "record_count"),
            (T::FileSize, 104, "file_size_in_bytes"),
        ],
        Level::Tracking => &[(T::Status, 0, "status")],
        Level::Dv => &[
            (T::DvLocation, 155, "location"),
            (T::DvOffset, 144, "offset"),
            (T::DvSize, 145, "size_in_bytes"),
            (T::DvCardinality, 156, "cardinality"),
        ],
        Level::Info => &[
            (T::AddedFiles, 504, "added_files_count"),
            (T::ExistingFiles, 505, "existing_files_count"),
            (T::DeletedFiles, 506, "deleted_files_count"),
            (T::ReplacedFiles, 520, "replaced_files_count"),
            (T::AddedRows, 512, "added_rows_count"),
            (T::ExistingRows, 513, "existing_rows_count"),
            (T::DeletedRows, 514, "deleted_rows_count"),
            (T::ReplacedRows, 521, "replaced_rows_count"),
            (T::MinSequenceNumber, 516, "min_sequence_number"),
        ],
    }
}

/// The optional fields of a record at `level`, which an entry must clear when the file
/// does not hold them (or the projection skips them).
fn optional(level: Level) -> &'static [T] {
    match level {
        Level::Entry => &[
            T::SpecId,
            T::SortOrderId,
            T::DeletionVector,
            T::ManifestInfo,
            T::KeyMetadata,
            T::SplitOffsets,
            T::EqualityIds,
            T::ColumnSizes,
            T::ValueCounts,
            T::NullValueCounts,
            T::NanValueCounts,
            T::LowerBounds,
            T::UpperBounds,
        ],
        Level::Tracking => &[
            T::SnapshotId,
            T::SequenceNumber,
            T::FileSequenceNumber,
            T::DvSnapshotId,
            T::FirstRowId,
            T::DeletedPositions,
            T::ReplacedPositions,
        ],
        Level::Dv => &[T::DvKeyMetadata],
        Level::Info => &[T::ManifestDv, T::ManifestDvCardinality, T::Partitions],
    }
}

fn missing(id: i32, name: &str) -> Error {
    Error::invalid_metadata(name, format!("required field {id} is missing or null"))
}

/// One field of a record: what it fills, its layout, and for a nested record its plan.
struct Step<'s> {
    f: FieldPlan<'s, T>,
    /// The field's name in the file, for errors.
    name: &'s str,
    /// The id of a required field, for the error when it is null.
    required: Option<i32>,
    record: Option<RecordPlan<'s>>,
}

/// A record's fields in the file's order.
struct RecordPlan<'s> {
    /// The record itself, which the union branch must be.
    record: &'s Record,
    steps: Vec<Step<'s>>,
    /// The first required field the file's record lacks: (field id, name).
    missing: Option<(i32, &'static str)>,
    /// Optional targets the steps do not fill, cleared for each entry.
    uncovered: Vec<T>,
}

impl<'s> RecordPlan<'s> {
    fn compile(
        record: &'s Record,
        level: Level,
        projection: Option<&ManifestProjection>,
    ) -> Result<RecordPlan<'s>> {
        // v3's projection: without `stats`, no column sizes, and counts of `counts_for`
        // only (none at all when it is empty)
        let counts_for = projection
            .filter(|p| !p.stats)
            .map(|p| p.counts_for.as_slice());
        let mut steps = Vec::with_capacity(record.fields.len());
        let mut covered = 0u64;
        for af in &record.fields {
            let (mut t, class) = af
                .field_id
                .map_or((T::Skip, Class::Other), |id| target(level, id));
            let skipped_count = matches!(
                t,
                T::ColumnSizes | T::ValueCounts | T::NullValueCounts | T::NanValueCounts
            ) && counts_for
                .is_some_and(|ids| t == T::ColumnSizes || ids.is_empty());
            if skipped_count || covered & (1 << t as u64) != 0 {
                // a field the projection leaves out, or a second field with the same id
                // (the first one fills the target)
                t = T::Skip;
            }
            let record_plan = match t {
                T::Tracking | T::DeletionVector | T::ManifestInfo => {
                    let r = record_of(&af.schema).ok_or_else(|| {
                        Error::invalid_metadata(af.name.as_str(), "expected a struct")
                    })?;
                    let sub = match t {
                        T::Tracking => Level::Tracking,
                        T::DeletionVector => Level::Dv,
                        _ => Level::Info,
                    };
                    Some(RecordPlan::compile(r, sub, None).map_err(|e| e.under(&af.name))?)
                }
                _ => None,
            };
            if t != T::Skip {
                covered |= 1 << t as u64;
            }
            let required = required(level)
                .iter()
                .find(|(rt, _, _)| *rt == t)
                .map(|(_, id, _)| *id);
            steps.push(Step {
                f: FieldPlan::new(t, &af.schema, class, t == T::Skip),
                name: &af.name,
                required,
                record: record_plan,
            });
        }
        let missing = required(level)
            .iter()
            .find(|(t, _, _)| covered & (1 << *t as u64) == 0)
            .map(|(_, id, name)| (*id, *name));
        let uncovered = optional(level)
            .iter()
            .copied()
            .filter(|t| covered & (1 << *t as u64) == 0)
            .collect();
        Ok(RecordPlan {
            record,
            steps,
            missing,
            uncovered,
        })
    }

    /// Reads a union branch, if any: whether the record follows.
    fn present(&self, cur: &mut Cursor<'_>, s: &AvroSchema) -> Result<bool> {
        match s {
            AvroSchema::Record(_) => Ok(true),
            AvroSchema::Null => Ok(false),
            AvroSchema::Union(b) => match cur.branch(b)? {
                AvroSchema::Null => Ok(false),
                AvroSchema::Record(r) if std::ptr::eq(r, self.record) => Ok(true),
                other => Err(mismatch(other, "the record")),
            },
            other => Err(mismatch(other, "a record")),
        }
    }
}

/// The record of a field: itself, or the first record of its union.
fn record_of(s: &AvroSchema) -> Option<&Record> {
    match s {
        AvroSchema::Record(r) => Some(r),
        AvroSchema::Union(b) => b.iter().find_map(|s| match s {
            AvroSchema::Record(r) => Some(r),
            _ => None,
        }),
        _ => None,
    }
}

/// The partition tuple's fields, each resolved to its place among the table's partition
/// fields (`V4Layout::fields`).
struct PartitionPlan<'s> {
    record: &'s Record,
    fields: Vec<PartitionField<'s>>,
    /// Each spec's fields as places among the table's partition fields.
    specs: Vec<(i32, Vec<Option<usize>>)>,
}

struct PartitionField<'s> {
    schema: &'s AvroSchema,
    name: &'s str,
    /// The place among the table's partition fields; `None` for a field the table does
    /// not know, which is skipped.
    place: Option<usize>,
    skip: SkipPlan,
}

/// A v4 manifest's entry decoder, compiled from the file's writer schema.
pub(crate) struct SlotPlan<'s> {
    entry: RecordPlan<'s>,
    partitioning: &'s V4Layout,
    partition: Option<PartitionPlan<'s>>,
    counts_for: Option<&'s [i32]>,
    bounds_for: Option<&'s [i32]>,
}

/// Per-entry scratch space kept between entries.
#[derive(Default)]
pub(crate) struct Scratch {
    /// The partition values by place among the table's partition fields.
    partition: Vec<Option<Literal>>,
    has_partition: bool,
    equality_ids: Option<Vec<i64>>,
}

impl<'s> SlotPlan<'s> {
    pub(crate) fn compile(
        record: &'s Record,
        partitioning: &'s V4Layout,
        projection: Option<&'s ManifestProjection>,
    ) -> Result<SlotPlan<'s>> {
        let entry = RecordPlan::compile(record, Level::Entry, projection)?;
        // the tuple is decoded only for a table with partition fields (read as
        // unpartitioned without them)
        let partition = match entry
            .steps
            .iter()
            .find(|s| s.f.target == T::Partition)
            .filter(|_| !partitioning.fields.is_empty())
        {
            None => None,
            Some(s) => {
                let r = record_of(s.f.schema).ok_or_else(|| {
                    Error::invalid_metadata(s.name, "expected a struct").under("partition")
                })?;
                let place = |id: i32| partitioning.fields.iter().position(|(f, _, _)| *f == id);
                Some(PartitionPlan {
                    record: r,
                    fields: r
                        .fields
                        .iter()
                        .map(|f| {
                            let place = f.field_id.and_then(place);
                            PartitionField {
                                schema: &f.schema,
                                name: &f.name,
                                place,
                                skip: match place {
                                    None => SkipPlan::new(&f.schema),
                                    Some(_) => SkipPlan::Nothing,
                                },
                            }
                        })
                        .collect(),
                    specs: partitioning
                        .specs
                        .iter()
                        .map(|(spec, ids)| (*spec, ids.iter().map(|id| place(*id)).collect()))
                        .collect(),
                })
            }
        };
        Ok(SlotPlan {
            entry,
            partitioning,
            partition,
            counts_for: projection
                .filter(|p| !p.stats)
                .map(|p| p.counts_for.as_slice()),
            bounds_for: projection.and_then(|p| p.bounds_for.as_deref()),
        })
    }

    /// Decodes the entry at the cursor into `e`, whatever `e` held before.
    pub(crate) fn decode(
        &self,
        cur: &mut Cursor<'_>,
        e: &mut TrackedFile,
        scratch: &mut Scratch,
    ) -> Result<()> {
        scratch.has_partition = false;
        self.record(cur, &self.entry, e, scratch)?;
        self.finish(e, scratch)
    }

    /// Puts the tuple read into `scratch` (if any) into `e` in the order of the entry's
    /// spec: the end of [`SlotPlan::decode`].
    fn finish(&self, e: &mut TrackedFile, scratch: &mut Scratch) -> Result<()> {
        e.partition.clear();
        if !scratch.has_partition {
            return Ok(());
        }
        let Some(p) = &self.partition else {
            return Ok(());
        };
        // the values of the entry's own spec, in its order
        let spec_id = e.spec_id;
        let Some((_, places)) = spec_id.and_then(|s| p.specs.iter().find(|(id, _)| *id == s))
        else {
            return Err(Error::invalid_metadata(
                "spec_id",
                format!(
                    "the entry has a partition tuple, but spec {spec_id:?} is not a spec of the table"
                ),
            ));
        };
        for place in places {
            let v = place.and_then(|i| scratch.partition.get_mut(i).and_then(Option::take));
            e.partition.push(v);
        }
        Ok(())
    }

    fn record(
        &self,
        cur: &mut Cursor<'_>,
        plan: &RecordPlan<'_>,
        e: &mut TrackedFile,
        scratch: &mut Scratch,
    ) -> Result<()> {
        if let Some((id, name)) = plan.missing {
            return Err(missing(id, name));
        }
        for t in &plan.uncovered {
            clear(*t, e);
        }
        for s in &plan.steps {
            self.field(cur, s, e, scratch)
                .map_err(|err| err.under(s.name))?;
        }
        Ok(())
    }

    #[inline]
    fn field(
        &self,
        cur: &mut Cursor<'_>,
        s: &Step<'_>,
        e: &mut TrackedFile,
        scratch: &mut Scratch,
    ) -> Result<()> {
        let f = &s.f;
        let req_long = |cur: &mut Cursor<'_>| -> Result<i64> {
            f.long(cur)?
                .ok_or_else(|| missing(s.required.unwrap_or(-1), ""))
        };
        let req_int = |cur: &mut Cursor<'_>| -> Result<i32> { to_int(req_long(cur)?) };
        let opt_int =
            |cur: &mut Cursor<'_>| -> Result<Option<i32>> { f.long(cur)?.map(to_int).transpose() };
        let tr = &mut e.tracking;
        match f.target {
            T::Skip => cur.skip_by(&f.skip)?,
            T::Status => {
                let id = req_int(cur)?;
                tr.status = TrackingStatus::from_id(id).ok_or_else(|| {
                    Error::invalid_metadata("", format!("unknown status {id} (expected 0 to 4)"))
                })?;
            }
            T::SnapshotId => tr.snapshot_id = f.long(cur)?,
            T::SequenceNumber => tr.sequence_number = f.long(cur)?,
            T::FileSequenceNumber => tr.file_sequence_number = f.long(cur)?,
            T::DvSnapshotId => tr.dv_snapshot_id = f.long(cur)?,
            T::FirstRowId => tr.first_row_id = f.long(cur)?,
            T::DeletedPositions => set_bytes(&mut tr.deleted_positions, f.bytes(cur)?),
            T::ReplacedPositions => set_bytes(&mut tr.replaced_positions, f.bytes(cur)?),
            T::Tracking => {
                let Some(r) = &s.record else {
                    return Err(Error::invalid_metadata("", "expected a struct"));
                };
                if !r.present(cur, f.schema)? {
                    return Err(missing(147, ""));
                }
                self.record(cur, r, e, scratch)?;
            }
            T::ContentType => {
                let id = req_int(cur)?;
                e.content_type = ContentType::from_id(id).ok_or_else(|| {
                    Error::invalid_metadata(
                        "",
                        format!("unknown content type {id} (expected 0, 2, 3 or 4)"),
                    )
                })?;
            }
            T::FormatVersion => e.format_version = req_int(cur)?,
            T::Location => {
                let v = f.str(cur)?.ok_or_else(|| missing(100, ""))?;
                self.partitioning.set_path(&mut e.location, v)?;
            }
            T::FileFormat => {
                let v = f.str(cur)?.ok_or_else(|| missing(101, ""))?;
                if e.file_format != v {
                    e.file_format.clear();
                    e.file_format.push_str(v);
                }
            }
            T::RecordCount => e.record_count = req_long(cur)?,
            T::FileSize => e.file_size_in_bytes = req_long(cur)?,
            T::SpecId => e.spec_id = opt_int(cur)?,
            T::SortOrderId => e.sort_order_id = opt_int(cur)?,
            T::DeletionVector => {
                let Some(r) = &s.record else {
                    return Err(Error::invalid_metadata("", "expected a struct"));
                };
                if !r.present(cur, f.schema)? {
                    e.deletion_vector = None;
                    return Ok(());
                }
                e.deletion_vector.get_or_insert_with(|| DeletionVector {
                    location: String::new(),
                    offset: 0,
                    size_in_bytes: 0,
                    cardinality: 0,
                    key_metadata: None,
                });
                self.record(cur, r, e, scratch)?;
            }
            T::ManifestInfo => {
                let Some(r) = &s.record else {
                    return Err(Error::invalid_metadata("", "expected a struct"));
                };
                if !r.present(cur, f.schema)? {
                    e.manifest_info = None;
                    return Ok(());
                }
                e.manifest_info.get_or_insert_with(empty_manifest_info);
                self.record(cur, r, e, scratch)?;
            }
            T::KeyMetadata => set_bytes(&mut e.key_metadata, f.bytes(cur)?),
            T::SplitOffsets => f.long_list_into(cur, &mut e.split_offsets)?,
            T::EqualityIds => {
                f.long_list_into(cur, &mut scratch.equality_ids)?;
                match &scratch.equality_ids {
                    None => e.equality_ids = None,
                    Some(ids) => {
                        let out = e.equality_ids.get_or_insert_with(Vec::new);
                        out.clear();
                        for id in ids {
                            out.push(
                                i32::try_from(*id)
                                    .map_err(|_| Error::invalid_metadata("", "expected int ids"))?,
                            );
                        }
                    }
                }
            }
            T::Partition => match &self.partition {
                None => cur.skip(f.schema)?,
                Some(p) => self.partition(cur, p, f.schema, scratch)?,
            },
            T::ColumnSizes => f.int_long_map_into(cur, &mut e.metrics.column_sizes, None)?,
            T::ValueCounts => {
                f.int_long_map_into(cur, &mut e.metrics.value_counts, self.counts_for)?
            }
            T::NullValueCounts => {
                f.int_long_map_into(cur, &mut e.metrics.null_value_counts, self.counts_for)?
            }
            T::NanValueCounts => {
                f.int_long_map_into(cur, &mut e.metrics.nan_value_counts, self.counts_for)?
            }
            T::LowerBounds => {
                f.int_bytes_map_into(cur, &mut e.metrics.lower_bounds, self.bounds_for)?
            }
            T::UpperBounds => {
                f.int_bytes_map_into(cur, &mut e.metrics.upper_bounds, self.bounds_for)?
            }
            T::DvLocation | T::DvOffset | T::DvSize | T::DvCardinality | T::DvKeyMetadata => {
                let Some(dv) = e.deletion_vector.as_mut() else {
                    return Err(Error::invalid_metadata("", "a DV field outside its record"));
                };
                match f.target {
                    T::DvLocation => {
                        let v = f.str(cur)?.ok_or_else(|| missing(155, ""))?;
                        self.partitioning
                            .set_path(&mut dv.location, v)
                            .map_err(|err| err.under("deletion_vector"))?;
                    }
                    T::DvOffset => dv.offset = req_long(cur)?,
                    T::DvSize => dv.size_in_bytes = req_long(cur)?,
                    T::DvCardinality => dv.cardinality = req_long(cur)?,
                    _ => set_bytes(&mut dv.key_metadata, f.bytes(cur)?),
                }
            }
            T::AddedFiles
            | T::ExistingFiles
            | T::DeletedFiles
            | T::ReplacedFiles
            | T::AddedRows
            | T::ExistingRows
            | T::DeletedRows
            | T::ReplacedRows
            | T::MinSequenceNumber
            | T::ManifestDv
            | T::ManifestDvCardinality
            | T::Partitions => {
                let Some(m) = e.manifest_info.as_mut() else {
                    return Err(Error::invalid_metadata(
                        "",
                        "a manifest_info field outside its record",
                    ));
                };
                match f.target {
                    T::AddedFiles => m.added_files_count = req_int(cur)?,
                    T::ExistingFiles => m.existing_files_count = req_int(cur)?,
                    T::DeletedFiles => m.deleted_files_count = req_int(cur)?,
                    T::ReplacedFiles => m.replaced_files_count = req_int(cur)?,
                    T::AddedRows => m.added_rows_count = req_long(cur)?,
                    T::ExistingRows => m.existing_rows_count = req_long(cur)?,
                    T::DeletedRows => m.deleted_rows_count = req_long(cur)?,
                    T::ReplacedRows => m.replaced_rows_count = req_long(cur)?,
                    T::MinSequenceNumber => m.min_sequence_number = req_long(cur)?,
                    T::ManifestDv => set_bytes(&mut m.dv, f.bytes(cur)?),
                    T::ManifestDvCardinality => m.dv_cardinality = f.long(cur)?,
                    _ => m.partitions = summaries(cur, f.schema)?,
                }
            }
        }
        Ok(())
    }

    /// The partition tuple into `scratch` (a record of optional fields keyed by partition
    /// field id; fields the table does not know are skipped).
    fn partition(
        &self,
        cur: &mut Cursor<'_>,
        p: &PartitionPlan<'_>,
        s: &AvroSchema,
        scratch: &mut Scratch,
    ) -> Result<()> {
        let present = match s {
            AvroSchema::Record(_) => true,
            AvroSchema::Null => false,
            AvroSchema::Union(b) => match cur.branch(b)? {
                AvroSchema::Null => false,
                AvroSchema::Record(r) if std::ptr::eq(r, p.record) => true,
                other => return Err(mismatch(other, "the partition record")),
            },
            other => return Err(mismatch(other, "a record")),
        };
        if !present {
            return Ok(());
        }
        scratch.has_partition = true;
        let n = self.partitioning.fields.len();
        scratch.partition.clear();
        scratch.partition.resize(n, None);
        for pf in &p.fields {
            match pf.place {
                Some(i) => {
                    let ty = self
                        .partitioning
                        .fields
                        .get(i)
                        .map(|(_, _, ty)| ty)
                        .ok_or_else(|| Error::invalid_metadata(pf.name, "unknown field"))?;
                    let v = partition_value(cur, pf.schema, ty).map_err(|e| e.under(pf.name))?;
                    if let Some(slot) = scratch.partition.get_mut(i) {
                        *slot = v;
                    }
                }
                None => cur.skip_by(&pf.skip)?,
            }
        }
        Ok(())
    }
}

fn to_int(v: i64) -> Result<i32> {
    i32::try_from(v).map_err(|_| Error::invalid_metadata("", "expected an int"))
}

fn set_bytes(slot: &mut Option<Vec<u8>>, v: Option<&[u8]>) {
    match v {
        Some(b) => {
            let out = slot.get_or_insert_with(Vec::new);
            out.clear();
            out.extend_from_slice(b);
        }
        None => *slot = None,
    }
}

/// Sets an optional target the file does not hold to its default (null).
fn clear(t: T, e: &mut TrackedFile) {
    let tr = &mut e.tracking;
    let m = &mut e.metrics;
    match t {
        T::SnapshotId => tr.snapshot_id = None,
        T::SequenceNumber => tr.sequence_number = None,
        T::FileSequenceNumber => tr.file_sequence_number = None,
        T::DvSnapshotId => tr.dv_snapshot_id = None,
        T::FirstRowId => tr.first_row_id = None,
        T::DeletedPositions => tr.deleted_positions = None,
        T::ReplacedPositions => tr.replaced_positions = None,
        T::SpecId => e.spec_id = None,
        T::SortOrderId => e.sort_order_id = None,
        T::DeletionVector => e.deletion_vector = None,
        T::ManifestInfo => e.manifest_info = None,
        T::KeyMetadata => e.key_metadata = None,
        T::SplitOffsets => e.split_offsets = None,
        T::EqualityIds => e.equality_ids = None,
        T::ColumnSizes => m.column_sizes = None,
        T::ValueCounts => m.value_counts = None,
        T::NullValueCounts => m.null_value_counts = None,
        T::NanValueCounts => m.nan_value_counts = None,
        T::LowerBounds => m.lower_bounds = None,
        T::UpperBounds => m.upper_bounds = None,
        T::DvKeyMetadata => {
            if let Some(dv) = e.deletion_vector.as_mut() {
                dv.key_metadata = None;
            }
        }
        T::ManifestDv | T::ManifestDvCardinality | T::Partitions => {
            if let Some(info) = e.manifest_info.as_mut() {
                match t {
                    T::ManifestDv => info.dv = None,
                    T::ManifestDvCardinality => info.dv_cardinality = None,
                    _ => info.partitions = None,
                }
            }
        }
        // required targets (whose absence is an error) and skipped fields
        _ => {}
    }
}

pub(super) fn empty_manifest_info() -> ManifestInfo {
    ManifestInfo {
        added_files_count: 0,
        existing_files_count: 0,
        deleted_files_count: 0,
        replaced_files_count: 0,
        added_rows_count: 0,
        existing_rows_count: 0,
        deleted_rows_count: 0,
        replaced_rows_count: 0,
        min_sequence_number: 0,
        dv: None,
        dv_cardinality: None,
        partitions: None,
    }
}

/// An entry with nothing allocated, to decode into.
pub(crate) fn blank_entry() -> TrackedFile {
    TrackedFile {
        tracking: super::Tracking::new(TrackingStatus::Existing),
        content_type: ContentType::Data,
        format_version: 4,
        location: String::new(),
        file_format: String::new(),
        record_count: 0,
        file_size_in_bytes: 0,
        spec_id: None,
        sort_order_id: None,
        deletion_vector: None,
        manifest_info: None,
        key_metadata: None,
        split_offsets: None,
        equality_ids: None,
        partition: Vec::new(),
        metrics: super::Metrics::default(),
    }
}

/// Reads a v4 manifest one entry at a time into one slot, which `visit` borrows with the
/// entry's ordinal: each entry is decoded with only the column metrics `projection` asks
/// for (all without one) and checked by [`validate_entry`]. A caller that keeps an entry
/// takes its parts out of the slot (they are refilled for the next one). Errors name the
/// entry (`entries[i]`) and the field; the caller names the file. Returns the kind.
pub fn visit_v4_manifest_slots(
    bytes: &[u8],
    partitioning: &V4Layout,
    projection: Option<&ManifestProjection>,
    visit: impl FnMut(usize, &mut TrackedFile) -> Result<()>,
) -> Result<V4ManifestKind> {
    visit_slots(bytes, partitioning, projection, true, visit).map(|(kind, _)| kind)
}

/// [`visit_v4_manifest_slots`] with the step decoder alone, for every layout: what it
/// was before the fast path, for `benches/v4_leaf_decode.rs`, which compares the two.
#[doc(hidden)]
pub fn visit_v4_manifest_slots_stepwise(
    bytes: &[u8],
    partitioning: &V4Layout,
    projection: Option<&ManifestProjection>,
    visit: impl FnMut(usize, &mut TrackedFile) -> Result<()>,
) -> Result<V4ManifestKind> {
    visit_slots(bytes, partitioning, projection, false, visit).map(|(kind, _)| kind)
}

/// [`visit_v4_manifest_slots`], with the fast path (`fast.rs`) for files of this crate's
/// layout when `fast` is set, else the step decoder alone (for the tests that compare
/// them). Also returns the number of entries the fast path decoded.
pub(super) fn visit_slots(
    bytes: &[u8],
    partitioning: &V4Layout,
    projection: Option<&ManifestProjection>,
    fast: bool,
    mut visit: impl FnMut(usize, &mut TrackedFile) -> Result<()>,
) -> Result<(V4ManifestKind, usize)> {
    let (c, kind) = open_v4(bytes)?;
    let record = c.schema.as_record().ok_or_else(|| {
        Error::invalid_metadata("avro.schema", "the writer schema is not a record")
    })?;
    let plan = SlotPlan::compile(record, partitioning, projection)?;
    let fast = fast
        .then(|| FastPlan::new(record, partitioning, projection))
        .flatten();
    let mut scratch = Scratch::default();
    let mut e = blank_entry();
    let mut i = 0usize;
    let mut fast_entries = 0usize;
    c.for_each_block(|count, data| {
        let mut cur = Cursor::new(data);
        for _ in 0..count {
            let at = |err: Error| err.under(&format!("entries[{i}]"));
            // the step decoder for other layouts, and again for an entry the fast path
            // gives up on (it gives the typed error)
            if fast.as_ref().is_some_and(|f| f.decode(&mut cur, &mut e)) {
                fast_entries += 1;
            } else {
                plan.decode(&mut cur, &mut e, &mut scratch).map_err(at)?;
            }
            validate_entry(kind, &e).map_err(at)?;
            visit(i, &mut e)?;
            i += 1;
        }
        block_consumed(&cur, count)
    })?;
    Ok((kind, fast_entries))
}
