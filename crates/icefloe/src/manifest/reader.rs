//! Reading manifests: the key-value metadata, then each `manifest_entry` decoded straight
//! from the Avro bytes by a plan compiled from the file's own writer schema (fields are
//! matched by Iceberg field id, or by name where a writer left ids out). Fields that the
//! caller did not ask for are skipped without being materialised (DESIGN principle 4).

use super::avro::{utf8, AvroField, AvroSchema, Container, Cursor, Record, SkipPlan};
use super::{
    DataContentType, DataFile, FileFormat, ManifestContent, ManifestEntry, ManifestFile,
    ManifestMetadata, ManifestStatus, UNASSIGNED_SEQUENCE_NUMBER,
};
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::spec::partition::PartitionSpec;
use crate::spec::{Literal, PrimitiveType, Schema, Type};
use crate::MAX_FORMAT_VERSION;

mod fast;

/// Which optional parts of each data file to decode. The scan fields (path, format,
/// partition, record count, file size, content, sequence numbers, key metadata, equality
/// ids, referenced data file and deletion vector offsets) are always decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestReadOptions {
    /// Decode column sizes, the value/null/NaN counts of every column and split offsets.
    pub stats: bool,
    /// When `stats` is off: decode value/null/NaN counts for these field ids only.
    pub counts_for: Vec<i32>,
    /// When `stats` is off: decode split offsets all the same.
    pub split_offsets: bool,
    /// Decode lower and upper bounds only for these field ids (`None`: all of them).
    pub bounds_for: Option<Vec<i32>>,
}

impl Default for ManifestReadOptions {
    fn default() -> Self {
        ManifestReadOptions::all()
    }
}

impl ManifestReadOptions {
    /// Every field.
    pub fn all() -> Self {
        ManifestReadOptions {
            stats: true,
            counts_for: Vec::new(),
            split_offsets: true,
            bounds_for: None,
        }
    }

    /// Only the scan fields: no sizes, counts, bounds or split offsets.
    pub fn minimal() -> Self {
        ManifestReadOptions {
            stats: false,
            counts_for: Vec::new(),
            split_offsets: false,
            bounds_for: Some(Vec::new()),
        }
    }

    /// What a scan needs: counts and bounds of the filtered columns and split offsets.
    pub fn scan(filtered_ids: Vec<i32>) -> Self {
        ManifestReadOptions {
            stats: false,
            counts_for: filtered_ids.clone(),
            split_offsets: true,
            bounds_for: Some(filtered_ids),
        }
    }
}

/// A manifest read from a file: its metadata and entries as stored (nothing inherited
/// yet; see [`Manifest::inherit`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub metadata: ManifestMetadata,
    pub entries: Vec<ManifestEntry>,
}

impl Manifest {
    /// Applies inheritance from the manifest's row in the manifest list: null snapshot ids
    /// take the manifest's `added_snapshot_id`; null data and file sequence numbers of ADDED
    /// entries take its `sequence_number` (every null one does for v1 manifests, whose
    /// sequence numbers are 0); in data manifests, data files with a null `first_row_id`
    /// take the manifest's `first_row_id` plus the record counts of the preceding data
    /// files that also had none (they stay null when the manifest has no `first_row_id`).
    /// DELETED entries neither get an id nor use one up: the spec's text does not say so,
    /// but the Java reference skips them (and its list writer counts only added and
    /// existing rows), and Java wrote the tables users have.
    pub fn inherit(&mut self, manifest_file: &ManifestFile) {
        let mut inheritance = Inheritance::new(&self.metadata, manifest_file);
        for e in &mut self.entries {
            inheritance.apply(e);
        }
    }

    /// The entries with inheritance applied (see [`Manifest::inherit`]).
    pub fn entries_inherited(&self, manifest_file: &ManifestFile) -> Vec<ManifestEntry> {
        let mut m = self.clone();
        m.inherit(manifest_file);
        m.entries
    }
}

/// The inheritance of [`Manifest::inherit`], applied entry by entry in file order.
struct Inheritance {
    v1: bool,
    seq: i64,
    seq_known: bool,
    data_manifest: bool,
    added_snapshot_id: i64,
    next_row_id: Option<i64>,
}

impl Inheritance {
    fn new(metadata: &ManifestMetadata, manifest_file: &ManifestFile) -> Inheritance {
        let v1 = metadata.format_version == 1;
        let seq = if v1 { 0 } else { manifest_file.sequence_number };
        Inheritance {
            v1,
            seq,
            seq_known: seq != UNASSIGNED_SEQUENCE_NUMBER,
            data_manifest: metadata.content == ManifestContent::Data
                && manifest_file.content == ManifestContent::Data,
            added_snapshot_id: manifest_file.added_snapshot_id,
            next_row_id: manifest_file.first_row_id,
        }
    }

    fn apply(&mut self, e: &mut ManifestEntry) {
        if e.snapshot_id.is_none() {
            e.snapshot_id = Some(self.added_snapshot_id);
        }
        let seq = self.seq;
        let inherit_seq =
            self.seq_known && (self.v1 || seq == 0 || e.status == ManifestStatus::Added);
        if inherit_seq {
            if e.sequence_number.is_none() {
                e.sequence_number = Some(seq);
            }
            if e.file_sequence_number.is_none() {
                e.file_sequence_number = Some(seq);
            }
        }
        let df = &mut e.data_file;
        if self.data_manifest
            && df.content == DataContentType::Data
            && df.first_row_id.is_none()
            && e.status != ManifestStatus::Deleted
        {
            if let Some(next) = self.next_row_id {
                df.first_row_id = Some(next);
                self.next_row_id = Some(next.saturating_add(df.record_count.max(0)));
            }
        }
    }
}

/// Reads a whole manifest file, every field, without inheritance.
pub fn read_manifest(io: &dyn FileIO, location: &str) -> Result<Manifest> {
    read_manifest_with(io, location, &ManifestReadOptions::all())
}

/// Reads the manifest at `location` with a projection, without inheritance.
pub fn read_manifest_with(
    io: &dyn FileIO,
    location: &str,
    options: &ManifestReadOptions,
) -> Result<Manifest> {
    let bytes = io.read(location)?;
    read_manifest_bytes(&bytes, options).map_err(|e| e.in_file(location))
}

/// Reads the manifest that a manifest list row points to, with the given projection, and
/// applies inheritance from that row.
pub fn read_manifest_for(
    io: &dyn FileIO,
    manifest_file: &ManifestFile,
    options: &ManifestReadOptions,
) -> Result<Manifest> {
    let location = manifest_file.manifest_path.as_str();
    let bytes = io.read(location)?;
    let mut m = read_manifest_bytes(&bytes, options).map_err(|e| e.in_file(location))?;
    m.inherit(manifest_file);
    Ok(m)
}

/// Reads a manifest from its bytes. Errors carry the field but no file name.
pub fn read_manifest_bytes(bytes: &[u8], options: &ManifestReadOptions) -> Result<Manifest> {
    let mut entries = Vec::new();
    let metadata = read_manifest_each(bytes, options, None, |e| {
        entries.push(e);
        Ok(())
    })?;
    Ok(Manifest { metadata, entries })
}

/// Reads a manifest from its bytes one entry at a time: `f` gets each entry as soon as it
/// is decoded (with inheritance from `manifest_file` applied when given), so a scan keeps
/// only the entries it wants and never holds the whole manifest. Returns the manifest's
/// metadata. Errors carry the field but no file name.
pub fn read_manifest_each(
    bytes: &[u8],
    options: &ManifestReadOptions,
    manifest_file: Option<&ManifestFile>,
    mut f: impl FnMut(ManifestEntry) -> Result<()>,
) -> Result<ManifestMetadata> {
    read_manifest_visit(bytes, options, manifest_file, |e| {
        f(std::mem::replace(e, blank_entry()))
    })
}

/// As [`read_manifest_each`], but every entry is decoded into the same slot, which `f`
/// borrows: a caller that keeps few entries (a filtered scan) tests each one in place and
/// takes only those it keeps (e.g. with `std::mem::replace`), so that the entries it
/// drops cost no allocation (the slot's strings and lists are refilled, not rebuilt).
/// Whatever `f` leaves in the slot is overwritten or reset before the next entry.
pub fn read_manifest_visit(
    bytes: &[u8],
    options: &ManifestReadOptions,
    manifest_file: Option<&ManifestFile>,
    f: impl FnMut(&mut ManifestEntry) -> Result<()>,
) -> Result<ManifestMetadata> {
    visit_entries(bytes, options, manifest_file, true, f).map(|(metadata, _)| metadata)
}

/// [`read_manifest_visit`] without the entry decoder's fast path: every entry is decoded
/// by the plan that gives the errors. Only for tests, which check that the fast path
/// decodes what this decodes and gives up wherever this fails.
#[doc(hidden)]
pub fn read_manifest_visit_without_fast_path(
    bytes: &[u8],
    options: &ManifestReadOptions,
    manifest_file: Option<&ManifestFile>,
    f: impl FnMut(&mut ManifestEntry) -> Result<()>,
) -> Result<ManifestMetadata> {
    visit_entries(bytes, options, manifest_file, false, f).map(|(metadata, _)| metadata)
}

/// [`read_manifest_visit`], with or without the fast path (`fast::FastPlan`); also gives
/// how many entries the fast path decoded.
pub(crate) fn visit_entries(
    bytes: &[u8],
    options: &ManifestReadOptions,
    manifest_file: Option<&ManifestFile>,
    use_fast: bool,
    mut f: impl FnMut(&mut ManifestEntry) -> Result<()>,
) -> Result<(ManifestMetadata, usize)> {
    let container = Container::open(bytes)?;
    let metadata = read_metadata(&container)?;
    let partition_type = partition_primitive_types(&metadata)?;
    let top = match &container.schema {
        AvroSchema::Record(r) => r,
        _ => return Err(not_a_manifest("the Avro schema is not a record")),
    };
    let plan = EntryPlan::compile(top, &partition_type, options)?;
    let fast = use_fast.then(|| fast::FastPlan::new(&plan)).flatten();
    let n = partition_type.len();
    let mut inheritance = manifest_file.map(|mf| Inheritance::new(&metadata, mf));
    let mut i = 0usize;
    let mut decoded_fast = 0usize;
    let mut e = blank_entry();
    container.for_each_block(|count, block| {
        let mut cur = Cursor::new(block);
        for _ in 0..count {
            plan.reset(&mut e, n);
            // the fast path gives up on anything unusual, errors included: then the entry
            // is decoded again from its start, with the errors
            if fast
                .as_ref()
                .is_some_and(|fast| fast.decode(&mut cur, &mut e))
            {
                decoded_fast += 1;
            } else {
                plan.reset(&mut e, n);
                plan.decode_into(&mut cur, &mut e)
                    .map_err(|err| err.under(&format!("entries[{i}]")))?;
            }
            i += 1;
            if let Some(inh) = inheritance.as_mut() {
                inh.apply(&mut e);
            }
            f(&mut e)?;
        }
        if cur.remaining() != 0 {
            return Err(Error::invalid_metadata(
                "",
                format!(
                    "{} bytes left over after the last entry of a block",
                    cur.remaining()
                ),
            ));
        }
        Ok(())
    })?;
    Ok((metadata, decoded_fast))
}

/// The metadata of a manifest (its schema, partition spec, format version and content)
/// from its bytes, without decoding entries.
pub fn read_manifest_metadata(bytes: &[u8]) -> Result<ManifestMetadata> {
    read_metadata(&Container::open(bytes)?)
}

/// An entry with every optional field null and nothing allocated.
fn blank_entry() -> ManifestEntry {
    ManifestEntry {
        status: ManifestStatus::Existing,
        snapshot_id: None,
        sequence_number: None,
        file_sequence_number: None,
        data_file: DataFile::new(
            DataContentType::Data,
            String::new(),
            FileFormat::Parquet,
            Vec::new(),
            0,
            0,
        ),
    }
}

fn not_a_manifest(message: impl Into<String>) -> Error {
    Error::invalid_metadata("avro.schema", format!("not a manifest: {}", message.into()))
}

fn read_metadata(c: &Container<'_>) -> Result<ManifestMetadata> {
    let format_version = match c.meta_str("format-version")? {
        None => 1,
        Some(s) => parse_num::<i32>(s, "format-version")?,
    };
    if !(1..=MAX_FORMAT_VERSION).contains(&format_version) {
        return Err(Error::UnsupportedFormatVersion {
            at: crate::error::Location {
                file: String::new(),
                field: "format-version".into(),
            },
            version: i64::from(format_version),
            max: MAX_FORMAT_VERSION,
        });
    }
    let schema_text = c
        .meta_str("schema")?
        .ok_or_else(|| Error::invalid_metadata("schema", "missing from the manifest metadata"))?;
    let schema_json = crate::spec::json::parse_text(schema_text)
        .map_err(|e| Error::invalid_metadata("schema", e.to_string()))?;
    let schema = Schema::from_json(&schema_json, "schema")?;
    let schema_id = match c.meta_str("schema-id")? {
        Some(s) => parse_num::<i32>(s, "schema-id")?,
        None => schema.schema_id(),
    };
    let spec_id = match c.meta_str("partition-spec-id")? {
        Some(s) => parse_num::<i32>(s, "partition-spec-id")?,
        None => 0,
    };
    let spec_text = c.meta_str("partition-spec")?.ok_or_else(|| {
        Error::invalid_metadata("partition-spec", "missing from the manifest metadata")
    })?;
    let spec_json = crate::spec::json::parse_text(spec_text)
        .map_err(|e| Error::invalid_metadata("partition-spec", e.to_string()))?;
    let partition_spec = if spec_json.is_object() {
        PartitionSpec::from_json(&spec_json, "partition-spec", format_version)?
    } else {
        PartitionSpec::from_json_fields(&spec_json, "partition-spec", spec_id, format_version)?
    };
    let content = match c.meta_str("content")? {
        None | Some("data") => ManifestContent::Data,
        Some("deletes") => ManifestContent::Deletes,
        Some(other) => {
            return Err(Error::invalid_metadata(
                "content",
                format!("unknown manifest content '{other}' (expected data or deletes)"),
            ))
        }
    };
    Ok(ManifestMetadata {
        schema,
        schema_id,
        partition_spec,
        format_version,
        content,
    })
}

fn parse_num<T: std::str::FromStr>(s: &str, key: &str) -> Result<T> {
    s.trim()
        .parse()
        .map_err(|_| Error::invalid_metadata(key, format!("'{s}' is not a number")))
}

/// The partition field ids and types of the manifest's spec (`None` for a type that is
/// not primitive, which no transform produces).
fn partition_primitive_types(m: &ManifestMetadata) -> Result<Vec<(i32, Option<PrimitiveType>)>> {
    let st = m
        .partition_spec
        .partition_type(&m.schema)
        .map_err(|e| e.under("partition-spec"))?;
    Ok(st
        .fields
        .into_iter()
        .map(|f| {
            let p = match f.field_type {
                Type::Primitive(p) => Some(p),
                _ => None,
            };
            (f.id, p)
        })
        .collect())
}

// ---------------------------------------------------------------------------------------
// Decoding plans
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryTarget {
    Status,
    SnapshotId,
    SequenceNumber,
    FileSequenceNumber,
    DataFile,
    Skip,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileTarget {
    Content,
    FilePath,
    FileFormat,
    Partition,
    RecordCount,
    FileSize,
    ColumnSizes,
    ValueCounts,
    NullValueCounts,
    NanValueCounts,
    LowerBounds,
    UpperBounds,
    KeyMetadata,
    SplitOffsets,
    EqualityIds,
    SortOrderId,
    FirstRowId,
    ReferencedDataFile,
    ContentOffset,
    ContentSize,
    Skip,
}

const FILE_FIELDS: &[(i32, &str, FileTarget)] = &[
    (134, "content", FileTarget::Content),
    (100, "file_path", FileTarget::FilePath),
    (101, "file_format", FileTarget::FileFormat),
    (102, "partition", FileTarget::Partition),
    (103, "record_count", FileTarget::RecordCount),
    (104, "file_size_in_bytes", FileTarget::FileSize),
    (108, "column_sizes", FileTarget::ColumnSizes),
    (109, "value_counts", FileTarget::ValueCounts),
    (110, "null_value_counts", FileTarget::NullValueCounts),
    (137, "nan_value_counts", FileTarget::NanValueCounts),
    (125, "lower_bounds", FileTarget::LowerBounds),
    (128, "upper_bounds", FileTarget::UpperBounds),
    (131, "key_metadata", FileTarget::KeyMetadata),
    (132, "split_offsets", FileTarget::SplitOffsets),
    (135, "equality_ids", FileTarget::EqualityIds),
    (140, "sort_order_id", FileTarget::SortOrderId),
    (142, "first_row_id", FileTarget::FirstRowId),
    (143, "referenced_data_file", FileTarget::ReferencedDataFile),
    (144, "content_offset", FileTarget::ContentOffset),
    (145, "content_size_in_bytes", FileTarget::ContentSize),
];

/// The `data_file` field that `f` is, by field id or, without one, by name; `Skip` for
/// fields this reader does not know.
fn file_target(f: &AvroField) -> FileTarget {
    FILE_FIELDS
        .iter()
        .find(|(id, name, _)| match f.field_id {
            Some(fid) => fid == *id,
            None => f.name == *name,
        })
        .map_or(FileTarget::Skip, |(_, _, t)| *t)
}

fn file_field_name(t: FileTarget) -> &'static str {
    FILE_FIELDS
        .iter()
        .find(|(_, _, ft)| *ft == t)
        .map(|(_, n, _)| *n)
        .unwrap_or("")
}

/// What kind of value a target holds, for choosing the fast decoding path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Int,
    Long,
    Str,
    Bytes,
    IntLongMap,
    IntBytesMap,
    LongList,
    Other,
}

fn file_class(t: FileTarget) -> Class {
    use FileTarget as F;
    match t {
        F::Content | F::SortOrderId => Class::Int,
        F::RecordCount | F::FileSize | F::FirstRowId | F::ContentOffset | F::ContentSize => {
            Class::Long
        }
        F::FilePath | F::FileFormat | F::ReferencedDataFile => Class::Str,
        F::KeyMetadata => Class::Bytes,
        F::ColumnSizes | F::ValueCounts | F::NullValueCounts | F::NanValueCounts => {
            Class::IntLongMap
        }
        F::LowerBounds | F::UpperBounds => Class::IntBytesMap,
        F::SplitOffsets | F::EqualityIds => Class::LongList,
        F::Partition | F::Skip => Class::Other,
    }
}

/// Whether a map stored as an array of `{key, value}` records has exactly an int key
/// then a value of `value` type.
fn is_kv_array(s: &AvroSchema, value: &AvroSchema) -> bool {
    match s {
        AvroSchema::Array(items) => match items.as_ref() {
            AvroSchema::Record(r) => {
                matches!(r.fields.as_slice(), [k, v]
                    if k.name == "key" && v.name == "value"
                        && k.schema == AvroSchema::Int && v.schema == *value)
            }
            _ => false,
        },
        _ => false,
    }
}

/// Whether the fast path of `class` can decode a (non-union) value of schema `s`;
/// anything else goes through the generic functions, which give the same results and
/// errors.
fn suits(class: Class, s: &AvroSchema) -> bool {
    match class {
        Class::Int => *s == AvroSchema::Int,
        Class::Long => matches!(s, AvroSchema::Int | AvroSchema::Long),
        Class::Str | Class::Bytes => matches!(s, AvroSchema::String | AvroSchema::Bytes),
        Class::IntLongMap => is_kv_array(s, &AvroSchema::Long),
        Class::IntBytesMap => is_kv_array(s, &AvroSchema::Bytes),
        Class::LongList => matches!(s, AvroSchema::Array(i)
            if matches!(i.as_ref(), AvroSchema::Int | AvroSchema::Long)),
        Class::Other => false,
    }
}

/// The layout of a field's value resolved once per file: either the value itself or a
/// union of null and the value (the shape of every optional Iceberg field).
#[derive(Debug, Clone, Copy)]
struct Opt {
    /// The branch indexes of null and of the value; `None` when not a union.
    union: Option<(i64, i64)>,
}

impl Opt {
    /// The fast layout of `s` for `class`, if there is one.
    fn compile(s: &AvroSchema, class: Class) -> Option<Opt> {
        match s {
            AvroSchema::Union(b) => {
                let value = |i: usize| {
                    b.get(i)
                        .is_some_and(|v| suits(class, v))
                        .then_some(i as i64)
                };
                match b.as_slice() {
                    [AvroSchema::Null, _] => value(1).map(|v| Opt {
                        union: Some((0, v)),
                    }),
                    [_, AvroSchema::Null] => value(0).map(|v| Opt {
                        union: Some((1, v)),
                    }),
                    _ => None,
                }
            }
            s if suits(class, s) => Some(Opt { union: None }),
            _ => None,
        }
    }

    /// [`Opt::present`] for the fast path: `None` on a branch that does not exist.
    #[inline(always)]
    fn try_present(self, cur: &mut Cursor<'_>) -> Option<bool> {
        match self.union {
            None => Some(true),
            Some((null, value)) => {
                let i = cur.try_long()?;
                if i == value {
                    Some(true)
                } else if i == null {
                    Some(false)
                } else {
                    None
                }
            }
        }
    }

    /// Reads the union branch, if any: whether the value follows. [`Opt::try_present`]
    /// with its errors: the branch index's own, or a branch that does not exist.
    #[inline(always)]
    fn present(self, cur: &mut Cursor<'_>) -> Result<bool> {
        let start = cur.clone();
        if let Some(present) = self.try_present(cur) {
            return Ok(present);
        }
        *cur = start;
        let i = cur.long()?;
        Err(Error::invalid_metadata(
            "",
            format!("union branch {i} does not exist"),
        ))
    }
}

/// One field of a record in the file's schema: where it goes and how to read it.
struct FieldPlan<'s, T> {
    target: T,
    schema: &'s AvroSchema,
    /// The fast layout, when the target's value has one of the shapes Iceberg writers use.
    fast: Option<Opt>,
    /// How to skip the field when it is not wanted.
    skip: SkipPlan,
}

impl<'s, T: Copy> FieldPlan<'s, T> {
    fn new(target: T, schema: &'s AvroSchema, class: Class, skip: bool) -> Self {
        FieldPlan {
            target,
            schema,
            fast: if skip {
                None
            } else {
                Opt::compile(schema, class)
            },
            skip: if skip {
                SkipPlan::new(schema)
            } else {
                SkipPlan::Nothing
            },
        }
    }

    #[inline]
    fn long(&self, cur: &mut Cursor<'_>) -> Result<Option<i64>> {
        match self.fast {
            Some(o) => Ok(if o.present(cur)? {
                Some(cur.long()?)
            } else {
                None
            }),
            None => opt_long(cur, self.schema),
        }
    }

    #[inline]
    fn int(&self, cur: &mut Cursor<'_>) -> Result<Option<i32>> {
        match self.fast {
            Some(o) => Ok(if o.present(cur)? {
                Some(cur.int()?)
            } else {
                None
            }),
            None => opt_int(cur, self.schema),
        }
    }

    #[inline]
    fn str<'a>(&self, cur: &mut Cursor<'a>) -> Result<Option<&'a str>> {
        match self.fast {
            Some(o) => Ok(if o.present(cur)? {
                Some(cur.string()?)
            } else {
                None
            }),
            None => opt_str(cur, self.schema),
        }
    }

    #[inline]
    fn bytes<'a>(&self, cur: &mut Cursor<'a>) -> Result<Option<&'a [u8]>> {
        match self.fast {
            Some(o) => Ok(if o.present(cur)? {
                Some(cur.bytes()?)
            } else {
                None
            }),
            None => opt_bytes(cur, self.schema),
        }
    }

    /// Decodes a map of int to long into `slot`, reusing its list; keeps only the keys in
    /// `only` when given.
    #[inline]
    fn int_long_map_into(
        &self,
        cur: &mut Cursor<'_>,
        slot: &mut Option<Vec<(i32, i64)>>,
        only: Option<&[i32]>,
    ) -> Result<()> {
        let Some(o) = self.fast else {
            let mut v = opt_int_long_map(cur, self.schema)?;
            if let (Some(ids), Some(v)) = (only, v.as_mut()) {
                v.retain(|(id, _)| ids.contains(id));
            }
            *slot = v;
            return Ok(());
        };
        if !o.present(cur)? {
            *slot = None;
            return Ok(());
        }
        let out = slot.get_or_insert_with(Vec::new);
        out.clear();
        loop {
            let n = cur.block_count()?;
            if n == 0 {
                return Ok(());
            }
            match only {
                None => {
                    out.reserve(n);
                    for _ in 0..n {
                        let k = cur.int()?;
                        let v = cur.long()?;
                        out.push((k, v));
                    }
                }
                Some(ids) => {
                    for _ in 0..n {
                        let k = cur.int()?;
                        let v = cur.long()?;
                        if ids.contains(&k) {
                            out.push((k, v));
                        }
                    }
                }
            }
        }
    }

    /// Decodes a map of int to bytes into `slot`, refilling its list and byte buffers in
    /// place; keeps only the keys in `only` when given.
    #[inline]
    fn int_bytes_map_into(
        &self,
        cur: &mut Cursor<'_>,
        slot: &mut Option<BoundsMap>,
        only: Option<&[i32]>,
    ) -> Result<()> {
        let Some(o) = self.fast else {
            *slot = opt_int_bytes_map(cur, self.schema, only)?;
            return Ok(());
        };
        if !o.present(cur)? {
            *slot = None;
            return Ok(());
        }
        let out = slot.get_or_insert_with(Vec::new);
        let mut len = 0usize;
        loop {
            let n = cur.block_count()?;
            if n == 0 {
                break;
            }
            match only {
                None => {
                    for _ in 0..n {
                        let k = cur.int()?;
                        put_bound(out, &mut len, k, cur.bytes()?);
                    }
                }
                // a scan filtering on one column: a compare per key instead of a search
                Some(&[id]) => put_bounds_where(cur, n, out, &mut len, |k| k == id)?,
                Some(ids) => put_bounds_where(cur, n, out, &mut len, |k| ids.contains(&k))?,
            }
        }
        out.truncate(len);
        Ok(())
    }

    /// Decodes a list of longs into `slot`, reusing its list.
    #[inline]
    fn long_list_into(&self, cur: &mut Cursor<'_>, slot: &mut Option<Vec<i64>>) -> Result<()> {
        let Some(o) = self.fast else {
            *slot = opt_long_list(cur, self.schema)?;
            return Ok(());
        };
        if !o.present(cur)? {
            *slot = None;
            return Ok(());
        }
        let out = slot.get_or_insert_with(Vec::new);
        out.clear();
        loop {
            let n = cur.block_count()?;
            if n == 0 {
                return Ok(());
            }
            out.reserve(n);
            for _ in 0..n {
                out.push(cur.long()?);
            }
        }
    }
}

/// Writes bound `len` of a reused bounds list (refilling its buffer) and counts it.
/// Inline where every key is kept: as a closure call it cost about 6 % of an all-fields
/// decode (docs/benchmarks.md).
#[inline(always)]
fn put_bound(out: &mut BoundsMap, len: &mut usize, k: i32, v: &[u8]) {
    match out.get_mut(*len) {
        Some((key, value)) => {
            *key = k;
            value.clear();
            // a copy of a known length is inlined, any other is a call to memcpy: 8 bytes
            // are the bounds of longs, doubles and timestamps
            match v.first_chunk::<8>() {
                Some(w) if v.len() == 8 => value.extend_from_slice(w),
                _ => value.extend_from_slice(v),
            }
        }
        None => out.push((k, v.to_vec())),
    }
    *len += 1;
}

/// Reads `n` bounds and writes those whose key `keep` accepts. Most keys are dropped
/// here, so the write is a call: the loop without the copy inlined measured faster.
#[inline(always)]
fn put_bounds_where(
    cur: &mut Cursor<'_>,
    n: usize,
    out: &mut BoundsMap,
    len: &mut usize,
    keep: impl Fn(i32) -> bool,
) -> Result<()> {
    for _ in 0..n {
        let k = cur.int()?;
        let v = cur.bytes()?;
        if keep(k) {
            put_bound_call(out, len, k, v);
        }
    }
    Ok(())
}

#[inline(never)]
fn put_bound_call(out: &mut BoundsMap, len: &mut usize, k: i32, v: &[u8]) {
    put_bound(out, len, k, v)
}

/// Where a partition field of the file goes: its index in the spec and its type.
type PartitionSlot = Option<(usize, PrimitiveType)>;

/// The decoding program for one file: the plan of every field of `manifest_entry` and
/// of `data_file`, compiled from the file's writer schema once, so that decoding an
/// entry neither matches field ids nor walks schemas.
struct EntryPlan<'s> {
    fields: Vec<FieldPlan<'s, EntryTarget>>,
    file: Vec<FieldPlan<'s, FileTarget>>,
    /// For each field of the Avro partition record: its index in the spec and its type,
    /// or how to skip it.
    partition: Vec<(PartitionSlot, &'s AvroSchema, SkipPlan)>,
    bounds_for: Option<Vec<i32>>,
    /// Counts to keep (`None`: all).
    counts_for: Option<Vec<i32>>,
    /// The file targets that the plan decodes, one bit per `FileTarget`.
    decoded: u32,
    /// Whether decoding an entry writes every slot of the partition tuple (the file's
    /// partition record has every field of the spec), so that `reset` need not clear it.
    partition_filled: bool,
    /// Which entry fields the plan decodes (the others are reset before each entry).
    has_snapshot_id: bool,
    has_sequence_number: bool,
    has_file_sequence_number: bool,
}

impl<'s> EntryPlan<'s> {
    fn compile(
        top: &'s Record,
        partition_type: &[(i32, Option<PrimitiveType>)],
        options: &ManifestReadOptions,
    ) -> Result<EntryPlan<'s>> {
        let mut fields = Vec::with_capacity(top.fields.len());
        let mut data_file = None;
        for f in &top.fields {
            let t = match (f.field_id, f.name.as_str()) {
                (Some(0), _) | (None, "status") => EntryTarget::Status,
                (Some(1), _) | (None, "snapshot_id") => EntryTarget::SnapshotId,
                (Some(3), _) | (None, "sequence_number") => EntryTarget::SequenceNumber,
                (Some(4), _) | (None, "file_sequence_number") => EntryTarget::FileSequenceNumber,
                (Some(2), _) | (None, "data_file") => {
                    data_file = Some(
                        f.schema
                            .as_record()
                            .ok_or_else(|| not_a_manifest("field 'data_file' is not a record"))?,
                    );
                    EntryTarget::DataFile
                }
                _ => EntryTarget::Skip,
            };
            let class = match t {
                EntryTarget::Status => Class::Int,
                EntryTarget::SnapshotId
                | EntryTarget::SequenceNumber
                | EntryTarget::FileSequenceNumber => Class::Long,
                EntryTarget::DataFile | EntryTarget::Skip => Class::Other,
            };
            fields.push(FieldPlan::new(t, &f.schema, class, t == EntryTarget::Skip));
        }
        if !fields.iter().any(|f| f.target == EntryTarget::Status) {
            return Err(not_a_manifest("required field 'status' (id 0) is missing"));
        }
        let data_file = data_file
            .ok_or_else(|| not_a_manifest("required field 'data_file' (id 2) is missing"))?;

        let mut file = Vec::with_capacity(data_file.fields.len());
        let mut partition = Vec::new();
        for f in &data_file.fields {
            let t = match file_target(f) {
                FileTarget::ColumnSizes if !options.stats => FileTarget::Skip,
                FileTarget::ValueCounts
                | FileTarget::NullValueCounts
                | FileTarget::NanValueCounts
                    if !options.stats && options.counts_for.is_empty() =>
                {
                    FileTarget::Skip
                }
                FileTarget::SplitOffsets if !options.stats && !options.split_offsets => {
                    FileTarget::Skip
                }
                FileTarget::LowerBounds | FileTarget::UpperBounds
                    if options.bounds_for.as_ref().is_some_and(Vec::is_empty) =>
                {
                    FileTarget::Skip
                }
                t => t,
            };
            if t == FileTarget::Partition {
                let rec = f
                    .schema
                    .as_record()
                    .ok_or_else(|| not_a_manifest("field 'data_file.partition' is not a record"))?;
                for pf in &rec.fields {
                    let slot = partition_type.iter().enumerate().find_map(|(i, (id, ty))| {
                        let hit = match pf.field_id {
                            Some(fid) => fid == *id,
                            None => false,
                        };
                        match (hit, ty) {
                            (true, Some(ty)) => Some((i, ty.clone())),
                            _ => None,
                        }
                    });
                    let skip = match slot {
                        None => SkipPlan::new(&pf.schema),
                        Some(_) => SkipPlan::Nothing,
                    };
                    partition.push((slot, &pf.schema, skip));
                }
            }
            file.push(FieldPlan::new(
                t,
                &f.schema,
                file_class(t),
                t == FileTarget::Skip,
            ));
        }
        for (req, name) in [
            (FileTarget::FilePath, "file_path (id 100)"),
            (FileTarget::FileFormat, "file_format (id 101)"),
            (FileTarget::RecordCount, "record_count (id 103)"),
            (FileTarget::FileSize, "file_size_in_bytes (id 104)"),
        ] {
            if !file.iter().any(|f| f.target == req) {
                return Err(not_a_manifest(format!(
                    "required field 'data_file.{name}' is missing"
                )));
            }
        }
        let decoded = file.iter().fold(0u32, |m, f| m | (1u32 << f.target as u32));
        let partition_filled = file.iter().any(|f| f.target == FileTarget::Partition)
            && (0..partition_type.len()).all(|i| {
                partition
                    .iter()
                    .any(|(slot, _, _)| matches!(slot, Some((j, _)) if *j == i))
            });
        let has = |t: EntryTarget| fields.iter().any(|f| f.target == t);
        Ok(EntryPlan {
            has_snapshot_id: has(EntryTarget::SnapshotId),
            has_sequence_number: has(EntryTarget::SequenceNumber),
            has_file_sequence_number: has(EntryTarget::FileSequenceNumber),
            fields,
            file,
            partition,
            bounds_for: options.bounds_for.clone(),
            counts_for: (!options.stats).then(|| options.counts_for.clone()),
            decoded,
            partition_filled,
        })
    }

    #[inline]
    fn decodes(&self, t: FileTarget) -> bool {
        self.decoded & (1u32 << t as u32) != 0
    }

    /// Makes the slot `e` ready for the next entry: every field that the plan does not
    /// decode is set to its default, the partition tuple to `n` nulls; the strings and
    /// lists of the fields it decodes are kept to be refilled.
    fn reset(&self, e: &mut ManifestEntry, n: usize) {
        e.status = ManifestStatus::Existing;
        if !self.has_snapshot_id {
            e.snapshot_id = None;
        }
        if !self.has_sequence_number {
            e.sequence_number = None;
        }
        if !self.has_file_sequence_number {
            e.file_sequence_number = None;
        }
        let df = &mut e.data_file;
        df.content = DataContentType::Data;
        df.file_format = FileFormat::Parquet;
        df.record_count = 0;
        df.file_size_in_bytes = 0;
        // a tuple that every entry overwrites whole keeps its slots: clearing and refilling
        // it for each entry is a drop per literal and a call (docs/benchmarks.md)
        if !self.partition_filled || df.partition.len() != n {
            df.partition.clear();
            df.partition.resize(n, None);
        }
        df.sort_order_id = None;
        df.first_row_id = None;
        df.content_offset = None;
        df.content_size_in_bytes = None;
        use FileTarget as F;
        if !self.decodes(F::FilePath) {
            df.file_path.clear();
        }
        if !self.decodes(F::ColumnSizes) {
            df.column_sizes = None;
        }
        if !self.decodes(F::ValueCounts) {
            df.value_counts = None;
        }
        if !self.decodes(F::NullValueCounts) {
            df.null_value_counts = None;
        }
        if !self.decodes(F::NanValueCounts) {
            df.nan_value_counts = None;
        }
        if !self.decodes(F::LowerBounds) {
            df.lower_bounds = None;
        }
        if !self.decodes(F::UpperBounds) {
            df.upper_bounds = None;
        }
        if !self.decodes(F::KeyMetadata) {
            df.key_metadata = None;
        }
        if !self.decodes(F::SplitOffsets) {
            df.split_offsets = None;
        }
        if !self.decodes(F::EqualityIds) {
            df.equality_ids = None;
        }
        if !self.decodes(F::ReferencedDataFile) {
            df.referenced_data_file = None;
        }
    }

    /// Decodes one entry into the slot `e`, which [`EntryPlan::reset`] prepared. The
    /// compiled plan has checked that `status` and `data_file` are there, so every field
    /// of `e` that the file holds is set.
    fn decode_into(&self, cur: &mut Cursor<'_>, e: &mut ManifestEntry) -> Result<()> {
        for f in &self.fields {
            match f.target {
                EntryTarget::Status => {
                    let v = req(f.int(cur), "status")?;
                    e.status = ManifestStatus::from_id(v).ok_or_else(|| {
                        Error::invalid_metadata(
                            "status",
                            format!("unknown status {v} (expected 0, 1 or 2)"),
                        )
                    })?;
                }
                EntryTarget::SnapshotId => {
                    e.snapshot_id = f.long(cur).map_err(|e| e.under("snapshot_id"))?
                }
                EntryTarget::SequenceNumber => {
                    e.sequence_number = f.long(cur).map_err(|e| e.under("sequence_number"))?
                }
                EntryTarget::FileSequenceNumber => {
                    e.file_sequence_number =
                        f.long(cur).map_err(|e| e.under("file_sequence_number"))?
                }
                EntryTarget::DataFile => self
                    .decode_file(cur, f.schema, &mut e.data_file)
                    .map_err(|e| e.under("data_file"))?,
                EntryTarget::Skip => cur.skip_by(&f.skip)?,
            }
        }
        Ok(())
    }

    fn decode_file(
        &self,
        cur: &mut Cursor<'_>,
        schema: &AvroSchema,
        df: &mut DataFile,
    ) -> Result<()> {
        if let AvroSchema::Union(b) = schema {
            if matches!(cur.branch(b)?, AvroSchema::Null) {
                return Err(Error::invalid_metadata("", "required field is null"));
            }
        }
        for f in &self.file {
            self.decode_file_field(cur, f, df)
                .map_err(|e| e.under(file_field_name(f.target)))?;
        }
        Ok(())
    }

    #[inline]
    fn decode_file_field(
        &self,
        cur: &mut Cursor<'_>,
        f: &FieldPlan<'_, FileTarget>,
        df: &mut DataFile,
    ) -> Result<()> {
        match f.target {
            FileTarget::Content => {
                let v = req(f.int(cur), "")?;
                df.content = DataContentType::from_id(v).ok_or_else(|| {
                    Error::invalid_metadata("", format!("unknown content {v} (expected 0, 1 or 2)"))
                })?;
            }
            FileTarget::FilePath => {
                let path = req(f.str(cur), "")?;
                df.file_path.clear();
                df.file_path.push_str(path);
            }
            FileTarget::FileFormat => {
                df.file_format = if f.fast.is_some() {
                    // the upper-case names writers use need no UTF-8 check
                    let b = req(f.bytes(cur), "")?;
                    match FileFormat::from_upper_case(b) {
                        Some(format) => format,
                        None => FileFormat::parse(utf8(b)?),
                    }
                } else {
                    FileFormat::parse(req(f.str(cur), "")?)
                }
            }
            FileTarget::Partition => self.decode_partition(cur, f.schema, &mut df.partition)?,
            FileTarget::RecordCount => df.record_count = req(f.long(cur), "")?,
            FileTarget::FileSize => df.file_size_in_bytes = req(f.long(cur), "")?,
            FileTarget::ColumnSizes => f.int_long_map_into(cur, &mut df.column_sizes, None)?,
            FileTarget::ValueCounts => {
                f.int_long_map_into(cur, &mut df.value_counts, self.counts_for.as_deref())?
            }
            FileTarget::NullValueCounts => {
                f.int_long_map_into(cur, &mut df.null_value_counts, self.counts_for.as_deref())?
            }
            FileTarget::NanValueCounts => {
                f.int_long_map_into(cur, &mut df.nan_value_counts, self.counts_for.as_deref())?
            }
            FileTarget::LowerBounds => {
                f.int_bytes_map_into(cur, &mut df.lower_bounds, self.bounds_for.as_deref())?
            }
            FileTarget::UpperBounds => {
                f.int_bytes_map_into(cur, &mut df.upper_bounds, self.bounds_for.as_deref())?
            }
            FileTarget::KeyMetadata => match f.bytes(cur)? {
                Some(b) => {
                    let v = df.key_metadata.get_or_insert_with(Vec::new);
                    v.clear();
                    v.extend_from_slice(b);
                }
                None => df.key_metadata = None,
            },
            FileTarget::SplitOffsets => f.long_list_into(cur, &mut df.split_offsets)?,
            FileTarget::EqualityIds => {
                let mut ids = None;
                f.long_list_into(cur, &mut ids)?;
                df.equality_ids = ids
                    .map(|v| v.into_iter().map(to_i32).collect::<Result<Vec<_>>>())
                    .transpose()?
            }
            FileTarget::SortOrderId => df.sort_order_id = f.int(cur)?,
            FileTarget::FirstRowId => df.first_row_id = f.long(cur)?,
            FileTarget::ReferencedDataFile => match f.str(cur)? {
                Some(path) => {
                    let v = df.referenced_data_file.get_or_insert_with(String::new);
                    v.clear();
                    v.push_str(path);
                }
                None => df.referenced_data_file = None,
            },
            FileTarget::ContentOffset => df.content_offset = f.long(cur)?,
            FileTarget::ContentSize => df.content_size_in_bytes = f.long(cur)?,
            FileTarget::Skip => cur.skip_by(&f.skip)?,
        }
        Ok(())
    }

    fn decode_partition(
        &self,
        cur: &mut Cursor<'_>,
        schema: &AvroSchema,
        out: &mut [Option<Literal>],
    ) -> Result<()> {
        if let AvroSchema::Union(b) = schema {
            if matches!(cur.branch(b)?, AvroSchema::Null) {
                // `reset` may have left the previous entry's values
                clear_tuple(out);
                return Ok(());
            }
        }
        for (slot, s, skip) in &self.partition {
            match slot {
                Some((i, ty)) => {
                    let v = partition_value(cur, s, ty)?;
                    if let Some(o) = out.get_mut(*i) {
                        *o = v;
                    }
                }
                None => cur.skip_by(skip)?,
            }
        }
        Ok(())
    }
}

/// Sets every value of a partition tuple to null; out of line, as a null tuple is rare
/// and the drop of each literal would weigh on the per-entry loop.
#[cold]
#[inline(never)]
fn clear_tuple(out: &mut [Option<Literal>]) {
    out.iter_mut().for_each(|v| *v = None);
}

fn to_i32(v: i64) -> Result<i32> {
    i32::try_from(v).map_err(|_| out_of_int_range(v))
}

fn out_of_int_range(v: i64) -> Error {
    Error::invalid_metadata("", format!("{v} is out of int range"))
}

fn mismatch(s: &AvroSchema, expected: &str) -> Error {
    Error::invalid_metadata("", format!("expected Avro {expected}, found {s:?}"))
}

/// A required value: an error naming the field when it is null.
#[inline]
pub(crate) fn req<T>(v: Result<Option<T>>, field: &str) -> Result<T> {
    match v {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(Error::invalid_metadata(field, "required field is null")),
        Err(e) => Err(e.under(field)),
    }
}

#[inline]
pub(crate) fn opt_long(cur: &mut Cursor<'_>, s: &AvroSchema) -> Result<Option<i64>> {
    match s {
        AvroSchema::Long | AvroSchema::Int => cur.long().map(Some),
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_long(cur, s)
        }
        _ => Err(mismatch(s, "long")),
    }
}

#[inline]
pub(crate) fn opt_int(cur: &mut Cursor<'_>, s: &AvroSchema) -> Result<Option<i32>> {
    match s {
        AvroSchema::Int => cur.int().map(Some),
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_int(cur, s)
        }
        _ => Err(mismatch(s, "int")),
    }
}

#[inline]
pub(crate) fn opt_bool(cur: &mut Cursor<'_>, s: &AvroSchema) -> Result<Option<bool>> {
    match s {
        AvroSchema::Boolean => cur.boolean().map(Some),
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_bool(cur, s)
        }
        _ => Err(mismatch(s, "boolean")),
    }
}

#[inline]
pub(crate) fn opt_bytes<'a>(cur: &mut Cursor<'a>, s: &AvroSchema) -> Result<Option<&'a [u8]>> {
    match s {
        AvroSchema::Bytes | AvroSchema::String => cur.bytes().map(Some),
        AvroSchema::Fixed(n) => cur.take(*n).map(Some),
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_bytes(cur, s)
        }
        _ => Err(mismatch(s, "bytes")),
    }
}

#[inline]
pub(crate) fn opt_str<'a>(cur: &mut Cursor<'a>, s: &AvroSchema) -> Result<Option<&'a str>> {
    match s {
        AvroSchema::String | AvroSchema::Bytes => cur.string().map(Some),
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_str(cur, s)
        }
        _ => Err(mismatch(s, "string")),
    }
}

/// Column bounds by field id.
type BoundsMap = Vec<(i32, Vec<u8>)>;

/// Calls `f` for each item of an array (the cursor is at the first block count).
#[inline]
pub(crate) fn for_each_item(
    cur: &mut Cursor<'_>,
    mut f: impl FnMut(&mut Cursor<'_>) -> Result<()>,
) -> Result<()> {
    loop {
        let n = cur.block_count()?;
        if n == 0 {
            return Ok(());
        }
        for _ in 0..n {
            f(cur)?;
        }
    }
}

pub(crate) fn opt_long_list(cur: &mut Cursor<'_>, s: &AvroSchema) -> Result<Option<Vec<i64>>> {
    match s {
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_long_list(cur, s)
        }
        AvroSchema::Array(items) => {
            let mut out = Vec::new();
            for_each_item(cur, |c| {
                out.push(req(opt_long(c, items), "element")?);
                Ok(())
            })?;
            Ok(Some(out))
        }
        _ => Err(mismatch(s, "array")),
    }
}

/// The key and value fields of a map stored as an array of records (`logicalType: map`).
fn kv_fields(items: &AvroSchema) -> Result<(&Record, usize, usize)> {
    let rec = match items {
        AvroSchema::Record(r) => r,
        other => return Err(mismatch(other, "record of key and value")),
    };
    let k = rec.fields.iter().position(|f| f.name == "key");
    let v = rec.fields.iter().position(|f| f.name == "value");
    match (k, v) {
        (Some(k), Some(v)) => Ok((rec, k, v)),
        _ => Err(mismatch(items, "record of key and value")),
    }
}

pub(crate) fn opt_int_long_map(
    cur: &mut Cursor<'_>,
    s: &AvroSchema,
) -> Result<Option<Vec<(i32, i64)>>> {
    match s {
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_int_long_map(cur, s)
        }
        AvroSchema::Array(items) => {
            let (rec, ki, vi) = kv_fields(items)?;
            let mut out = Vec::with_capacity(8);
            let fast = ki == 0
                && vi == 1
                && rec.fields.len() == 2
                && rec.fields[0].schema == AvroSchema::Int
                && rec.fields[1].schema == AvroSchema::Long;
            if fast {
                for_each_item(cur, |c| {
                    let k = c.int()?;
                    let v = c.long()?;
                    out.push((k, v));
                    Ok(())
                })?;
            } else {
                for_each_item(cur, |c| {
                    let (mut k, mut v) = (None, None);
                    for (i, f) in rec.fields.iter().enumerate() {
                        if i == ki {
                            k = opt_int(c, &f.schema)?;
                        } else if i == vi {
                            v = opt_long(c, &f.schema)?;
                        } else {
                            c.skip(&f.schema)?;
                        }
                    }
                    match (k, v) {
                        (Some(k), Some(v)) => out.push((k, v)),
                        (None, _) => return Err(Error::invalid_metadata("key", "map key is null")),
                        (Some(_), None) => {}
                    }
                    Ok(())
                })?;
            }
            Ok(Some(out))
        }
        AvroSchema::Map(values) => {
            let mut out = Vec::new();
            for_each_item(cur, |c| {
                let k = string_key(c)?;
                if let Some(v) = opt_long(c, values)? {
                    out.push((k, v));
                }
                Ok(())
            })?;
            Ok(Some(out))
        }
        _ => Err(mismatch(s, "map")),
    }
}

fn string_key(c: &mut Cursor<'_>) -> Result<i32> {
    let k = c.string()?;
    k.parse()
        .map_err(|_| Error::invalid_metadata("key", format!("map key '{k}' is not a field id")))
}

pub(crate) fn opt_int_bytes_map(
    cur: &mut Cursor<'_>,
    s: &AvroSchema,
    only: Option<&[i32]>,
) -> Result<Option<BoundsMap>> {
    let keep = |k: i32| only.map_or(true, |ids| ids.contains(&k));
    match s {
        AvroSchema::Null => Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            opt_int_bytes_map(cur, s, only)
        }
        AvroSchema::Array(items) => {
            let (rec, ki, vi) = kv_fields(items)?;
            let mut out = Vec::with_capacity(8);
            let fast = ki == 0
                && vi == 1
                && rec.fields.len() == 2
                && rec.fields[0].schema == AvroSchema::Int
                && rec.fields[1].schema == AvroSchema::Bytes;
            if fast {
                for_each_item(cur, |c| {
                    let k = c.int()?;
                    let v = c.bytes()?;
                    if keep(k) {
                        out.push((k, v.to_vec()));
                    }
                    Ok(())
                })?;
            } else {
                for_each_item(cur, |c| {
                    let (mut k, mut v) = (None, None);
                    for (i, f) in rec.fields.iter().enumerate() {
                        if i == ki {
                            k = opt_int(c, &f.schema)?;
                        } else if i == vi {
                            v = opt_bytes(c, &f.schema)?;
                        } else {
                            c.skip(&f.schema)?;
                        }
                    }
                    match (k, v) {
                        (Some(k), Some(v)) if keep(k) => out.push((k, v.to_vec())),
                        (None, _) => return Err(Error::invalid_metadata("key", "map key is null")),
                        _ => {}
                    }
                    Ok(())
                })?;
            }
            Ok(Some(out))
        }
        AvroSchema::Map(values) => {
            let mut out = Vec::new();
            for_each_item(cur, |c| {
                let k = string_key(c)?;
                if let Some(v) = opt_bytes(c, values)? {
                    if keep(k) {
                        out.push((k, v.to_vec()));
                    }
                }
                Ok(())
            })?;
            Ok(Some(out))
        }
        _ => Err(mismatch(s, "map")),
    }
}

/// Reads a partition value stored with Avro schema `s` as a value of `ty`.
fn partition_value(
    cur: &mut Cursor<'_>,
    s: &AvroSchema,
    ty: &PrimitiveType,
) -> Result<Option<Literal>> {
    use PrimitiveType as P;
    let bad = |s: &AvroSchema| {
        Error::invalid_metadata(
            "",
            format!("a partition value of type {ty} cannot be Avro {s:?}"),
        )
    };
    Ok(Some(match s {
        AvroSchema::Null => return Ok(None),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            return partition_value(cur, s, ty);
        }
        AvroSchema::Boolean => match ty {
            P::Boolean => Literal::Boolean(cur.boolean()?),
            _ => return Err(bad(s)),
        },
        AvroSchema::Int | AvroSchema::Long => {
            let v = cur.long()?;
            match long_literal(ty, v).ok_or_else(|| bad(s))? {
                Some(literal) => literal,
                None => return Err(out_of_int_range(v)),
            }
        }
        AvroSchema::Float => match ty {
            P::Float => Literal::Float(cur.float()?),
            P::Double => Literal::Double(f64::from(cur.float()?)),
            _ => return Err(bad(s)),
        },
        AvroSchema::Double => match ty {
            P::Double => Literal::Double(cur.double()?),
            _ => return Err(bad(s)),
        },
        AvroSchema::String => match ty {
            P::String => Literal::String(cur.string()?.to_string()),
            _ => return Err(bad(s)),
        },
        AvroSchema::Bytes | AvroSchema::Fixed(_) => {
            let b = match s {
                AvroSchema::Fixed(n) => cur.take(*n)?,
                _ => cur.bytes()?,
            };
            match ty {
                P::Binary => Literal::Binary(b.to_vec()),
                P::Fixed(_) => Literal::Fixed(b.to_vec()),
                P::Uuid => Literal::Uuid(u128::from_be_bytes(b.try_into().map_err(|_| bad(s))?)),
                P::Decimal { .. } => Literal::Decimal(decimal_from_be(b).ok_or_else(|| bad(s))?),
                _ => return Err(bad(s)),
            }
        }
        other => return Err(bad(other)),
    }))
}

/// A partition value of `ty` stored as the Avro int or long `v`: `None` when `ty` is not
/// stored so, `Some(None)` when `v` is out of the type's range. Inlined: the fast path
/// builds the literal in registers.
#[inline(always)]
fn long_literal(ty: &PrimitiveType, v: i64) -> Option<Option<Literal>> {
    use PrimitiveType as P;
    let int = || i32::try_from(v).ok();
    Some(match ty {
        P::Int => int().map(Literal::Int),
        P::Date => int().map(Literal::Date),
        P::Long => Some(Literal::Long(v)),
        P::Time => Some(Literal::Time(v)),
        P::Timestamp => Some(Literal::Timestamp(v)),
        P::Timestamptz => Some(Literal::Timestamptz(v)),
        P::TimestampNs => Some(Literal::TimestampNs(v)),
        P::TimestamptzNs => Some(Literal::TimestamptzNs(v)),
        _ => return None,
    })
}

/// A big-endian two's complement integer of 1 to 16 bytes.
pub(crate) fn decimal_from_be(b: &[u8]) -> Option<i128> {
    if b.is_empty() || b.len() > 16 {
        return None;
    }
    let fill = if b[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut a = [fill; 16];
    a[16 - b.len()..].copy_from_slice(b);
    Some(i128::from_be_bytes(a))
}
