//! The decoding plan of a manifest entry, compiled from the file's own writer schema:
//! each field of `manifest_entry` and `data_file` matched to what it fills (by Iceberg
//! field id, or by name where a writer left ids out), and decoded straight from the Avro
//! bytes; fields the caller did not ask for are skipped without being materialised.

use super::super::avro::{utf8, AvroField, AvroSchema, Cursor, Record, SkipPlan};
use super::super::avro_values::*;
use super::super::data_file_field::DataFileField;
use super::super::{DataContentType, DataFile, FileFormat, ManifestEntry, ManifestStatus};
use super::*;
use crate::error::{Error, Result};
use crate::spec::{Literal, PrimitiveType};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EntryTarget {
    Status,
    SnapshotId,
    SequenceNumber,
    FileSequenceNumber,
    DataFile,
    Skip,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileTarget {
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

/// The `data_file` field that `f` is, by field id or, without one, by name; `Skip` for
/// fields this reader does not decode.
pub(super) fn file_target(f: &AvroField) -> FileTarget {
    target_of(DataFileField::find(f.field_id, &f.name))
}

fn target_of(field: Option<DataFileField>) -> FileTarget {
    use DataFileField as D;
    use FileTarget as T;
    match field {
        None | Some(D::BlockSize) => T::Skip,
        Some(D::Content) => T::Content,
        Some(D::FilePath) => T::FilePath,
        Some(D::FileFormat) => T::FileFormat,
        Some(D::Partition) => T::Partition,
        Some(D::RecordCount) => T::RecordCount,
        Some(D::FileSize) => T::FileSize,
        Some(D::ColumnSizes) => T::ColumnSizes,
        Some(D::ValueCounts) => T::ValueCounts,
        Some(D::NullValueCounts) => T::NullValueCounts,
        Some(D::NanValueCounts) => T::NanValueCounts,
        Some(D::LowerBounds) => T::LowerBounds,
        Some(D::UpperBounds) => T::UpperBounds,
        Some(D::KeyMetadata) => T::KeyMetadata,
        Some(D::SplitOffsets) => T::SplitOffsets,
        Some(D::EqualityIds) => T::EqualityIds,
        Some(D::SortOrderId) => T::SortOrderId,
        Some(D::FirstRowId) => T::FirstRowId,
        Some(D::ReferencedDataFile) => T::ReferencedDataFile,
        Some(D::ContentOffset) => T::ContentOffset,
        Some(D::ContentSize) => T::ContentSize,
    }
}

/// The name of the field a target decodes, for errors.
pub(super) fn file_field_name(t: FileTarget) -> &'static str {
    DataFileField::ALL
        .into_iter()
        .find(|d| target_of(Some(*d)) == t)
        .map_or("data_file", DataFileField::name)
}

/// What kind of value a target holds, for choosing the fast decoding path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Int,
    Long,
    Str,
    Bytes,
    IntLongMap,
    IntBytesMap,
    LongList,
    Other,
}

pub(super) fn file_class(t: FileTarget) -> Class {
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
pub(super) fn is_kv_array(s: &AvroSchema, value: &AvroSchema) -> bool {
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
pub(crate) fn suits(class: Class, s: &AvroSchema) -> bool {
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
pub(crate) struct Opt {
    /// The branch indexes of null and of the value; `None` when not a union.
    pub(crate) union: Option<(i64, i64)>,
}

impl Opt {
    /// The fast layout of `s` for `class`, if there is one.
    pub(crate) fn compile(s: &AvroSchema, class: Class) -> Option<Opt> {
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
    pub(crate) fn try_present(self, cur: &mut Cursor<'_>) -> Option<bool> {
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
    pub(crate) fn present(self, cur: &mut Cursor<'_>) -> Result<bool> {
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
pub(crate) struct FieldPlan<'s, T> {
    pub(crate) target: T,
    pub(crate) schema: &'s AvroSchema,
    /// The fast layout, when the target's value has one of the shapes Iceberg writers use.
    pub(crate) fast: Option<Opt>,
    /// How to skip the field when it is not wanted.
    pub(crate) skip: SkipPlan,
}

impl<'s, T: Copy> FieldPlan<'s, T> {
    pub(crate) fn new(target: T, schema: &'s AvroSchema, class: Class, skip: bool) -> Self {
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
    pub(crate) fn long(&self, cur: &mut Cursor<'_>) -> Result<Option<i64>> {
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
    pub(crate) fn int(&self, cur: &mut Cursor<'_>) -> Result<Option<i32>> {
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
    pub(crate) fn str<'a>(&self, cur: &mut Cursor<'a>) -> Result<Option<&'a str>> {
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
    pub(crate) fn bytes<'a>(&self, cur: &mut Cursor<'a>) -> Result<Option<&'a [u8]>> {
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
    pub(crate) fn int_long_map_into(
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
    pub(crate) fn int_bytes_map_into(
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
    pub(crate) fn long_list_into(
        &self,
        cur: &mut Cursor<'_>,
        slot: &mut Option<Vec<i64>>,
    ) -> Result<()> {
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
pub(super) fn put_bound(out: &mut BoundsMap, len: &mut usize, k: i32, v: &[u8]) {
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
pub(super) fn put_bounds_where(
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
pub(super) fn put_bound_call(out: &mut BoundsMap, len: &mut usize, k: i32, v: &[u8]) {
    put_bound(out, len, k, v)
}

/// Where a partition field of the file goes: its index in the spec and its type.
pub(super) type PartitionSlot = Option<(usize, PrimitiveType)>;

/// The decoding program for one file: the plan of every field of `manifest_entry` and
/// of `data_file`, compiled from the file's writer schema once, so that decoding an
/// entry neither matches field ids nor walks schemas.
pub(super) struct EntryPlan<'s> {
    pub(super) fields: Vec<FieldPlan<'s, EntryTarget>>,
    pub(super) file: Vec<FieldPlan<'s, FileTarget>>,
    /// For each field of the Avro partition record: its index in the spec and its type,
    /// or how to skip it.
    pub(super) partition: Vec<(PartitionSlot, &'s AvroSchema, SkipPlan)>,
    pub(super) bounds_for: Option<Vec<i32>>,
    /// Counts to keep (`None`: all).
    pub(super) counts_for: Option<Vec<i32>>,
    /// The file targets that the plan decodes, one bit per `FileTarget`.
    pub(super) decoded: u32,
    /// Whether decoding an entry writes every slot of the partition tuple (the file's
    /// partition record has every field of the spec), so that `reset` need not clear it.
    pub(super) partition_filled: bool,
    /// Which entry fields the plan decodes (the others are reset before each entry).
    pub(super) has_snapshot_id: bool,
    pub(super) has_sequence_number: bool,
    pub(super) has_file_sequence_number: bool,
}

impl<'s> EntryPlan<'s> {
    pub(super) fn compile(
        top: &'s Record,
        partition_type: &[(i32, Option<PrimitiveType>)],
        options: &ManifestProjection,
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
    pub(super) fn decodes(&self, t: FileTarget) -> bool {
        self.decoded & (1u32 << t as u32) != 0
    }

    /// Makes the slot `e` ready for the next entry: every field that the plan does not
    /// decode is set to its default, the partition tuple to `n` nulls; the strings and
    /// lists of the fields it decodes are kept to be refilled.
    pub(super) fn reset(&self, e: &mut ManifestEntry, n: usize) {
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
    pub(super) fn decode_into(&self, cur: &mut Cursor<'_>, e: &mut ManifestEntry) -> Result<()> {
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

    pub(super) fn decode_file(
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
    pub(super) fn decode_file_field(
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

    pub(super) fn decode_partition(
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
pub(super) fn clear_tuple(out: &mut [Option<Literal>]) {
    out.iter_mut().for_each(|v| *v = None);
}

pub(super) fn to_i32(v: i64) -> Result<i32> {
    i32::try_from(v).map_err(|_| out_of_int_range(v))
}

pub(super) fn out_of_int_range(v: i64) -> Error {
    Error::invalid_metadata("", format!("{v} is out of int range"))
}

/// Reads a partition value stored with Avro schema `s` as a value of `ty`.
pub(crate) fn partition_value(
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
pub(crate) fn long_literal(ty: &PrimitiveType, v: i64) -> Option<Option<Literal>> {
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
