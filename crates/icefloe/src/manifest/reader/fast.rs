//! The entry decoder's fast path. An [`EntryPlan`] walks the file's two records (the
//! entry, then its `data_file`) and reads through `Result`s; a [`FastPlan`] is the same
//! plan flattened into one list of steps, each for one field shape that Iceberg writers
//! use, read with the [`Cursor`] reads that give up (`try_*`) instead of failing.
//!
//! It never reports an error: on anything unusual (an error, a null where a value is
//! required, a block count with a byte size) it gives up, leaves the cursor
//! where the entry starts, and the caller decodes the entry again with the `EntryPlan`,
//! which gives the exact error or the rare encoding's value. So the fast path holds no
//! error logic, and on the entries it decodes it must write what the `EntryPlan` writes:
//! the tests compare the two on every manifest they read.
//!
//! Fields without a fast layout (`equality_ids` that are not null, a partition with values
//! other than ints and longs, a field of an unusual shape) are decoded by the
//! `EntryPlan`'s own field decoder from the fast path.

use super::{
    long_literal, put_bound, put_bound_call, BoundsMap, Class, EntryPlan, EntryTarget, FileTarget,
    Opt,
};
use crate::manifest::avro::{AvroSchema, Cursor, SkipPlan};
use crate::manifest::{DataContentType, FileFormat, ManifestEntry, ManifestStatus};
use crate::spec::PrimitiveType;

/// Which count map of `data_file` a step fills.
#[derive(Clone, Copy)]
enum CountMap {
    ColumnSizes,
    ValueCounts,
    NullValueCounts,
    NanValueCounts,
}

/// One field of an entry, in the order of the file's schema; `Opt` is the field's union
/// layout. A variant per field, not per kind of field, so that decoding a field is one
/// dispatch.
enum Step<'p> {
    Status(Opt),
    SnapshotId(Opt),
    SequenceNumber(Opt),
    FileSequenceNumber(Opt),
    /// The union branch of `data_file`, when it is a union of null and the record.
    DataFileBranch(i64),
    Content(Opt),
    FilePath(Opt),
    FileFormat(Opt),
    /// A partition value stored as an Avro int or long: its index in the tuple and type.
    PartitionLong(usize, Opt, &'p PrimitiveType),
    RecordCount(Opt),
    FileSize(Opt),
    Counts(CountMap, Opt),
    /// Lower (`false`) or upper (`true`) bounds.
    Bounds(bool, Opt),
    KeyMetadata(Opt),
    SplitOffsets(Opt),
    /// `equality_ids`, decoded by `EntryPlan::decode_file_field` when not null: its
    /// index among the fields and its layout.
    EqualityIds(usize, Opt),
    SortOrderId(Opt),
    FirstRowId(Opt),
    ReferencedDataFile(Opt),
    ContentOffset(Opt),
    ContentSize(Opt),
    /// A field of `data_file` decoded by `EntryPlan::decode_file_field`: its index.
    FileField(usize),
    /// Fields not wanted: this many varints in a row.
    SkipLongs(usize),
    SkipBytes,
    /// `count` optional arrays in a row whose items are `items` varints each (unwanted
    /// count maps and lists): one step for all of them.
    SkipLongArrays {
        null: i64,
        items: usize,
        count: usize,
    },
    /// Any other field not wanted, skipped by the plan's reader.
    Skip(&'p SkipPlan),
}

/// Adds the step that skips a field by `plan`, merged into the step before where both
/// skip varints or optional arrays of the same shape.
fn push_skip<'p>(steps: &mut Vec<Step<'p>>, plan: &'p SkipPlan) {
    match (plan, steps.last_mut()) {
        (SkipPlan::Nothing, _) => {}
        (SkipPlan::Longs(n), Some(Step::SkipLongs(m))) => *m += n,
        (SkipPlan::Longs(n), _) => steps.push(Step::SkipLongs(*n)),
        (SkipPlan::Bytes, _) => steps.push(Step::SkipBytes),
        (
            SkipPlan::OptLongArray { null, items },
            Some(Step::SkipLongArrays {
                null: n,
                items: i,
                count,
            }),
        ) if null == n && items == i => *count += 1,
        (&SkipPlan::OptLongArray { null, items }, _) => steps.push(Step::SkipLongArrays {
            null,
            items,
            count: 1,
        }),
        (plan, _) => steps.push(Step::Skip(plan)),
    }
}

/// An [`EntryPlan`] as one list of steps (see the module's notes).
pub(super) struct FastPlan<'p, 's> {
    plan: &'p EntryPlan<'s>,
    steps: Vec<Step<'p>>,
}

impl<'p, 's> FastPlan<'p, 's> {
    /// The fast form of `plan`; `None` when the file's `data_file` is neither a record nor
    /// a union of null and a record, or an entry field has an unusual shape.
    pub(super) fn new(plan: &'p EntryPlan<'s>) -> Option<FastPlan<'p, 's>> {
        let mut steps = Vec::with_capacity(plan.fields.len() + plan.file.len());
        for f in &plan.fields {
            steps.push(match (f.target, f.fast) {
                (EntryTarget::Skip, _) => {
                    push_skip(&mut steps, &f.skip);
                    continue;
                }
                (EntryTarget::DataFile, _) => {
                    match f.schema {
                        AvroSchema::Record(_) => {}
                        AvroSchema::Union(b) => match b.as_slice() {
                            [AvroSchema::Null, AvroSchema::Record(_)] => {
                                steps.push(Step::DataFileBranch(1))
                            }
                            [AvroSchema::Record(_), AvroSchema::Null] => {
                                steps.push(Step::DataFileBranch(0))
                            }
                            _ => return None,
                        },
                        _ => return None,
                    }
                    for (i, f) in plan.file.iter().enumerate() {
                        match f.target {
                            FileTarget::Skip => push_skip(&mut steps, &f.skip),
                            FileTarget::Partition => match partition_steps(plan, f.schema) {
                                Some(p) => steps.extend(p),
                                None => steps.push(Step::FileField(i)),
                            },
                            t => steps.push(match f.fast {
                                Some(o) => file_step(t, i, o),
                                None => Step::FileField(i),
                            }),
                        }
                    }
                    continue;
                }
                (EntryTarget::Status, Some(o)) => Step::Status(o),
                (EntryTarget::SnapshotId, Some(o)) => Step::SnapshotId(o),
                (EntryTarget::SequenceNumber, Some(o)) => Step::SequenceNumber(o),
                (EntryTarget::FileSequenceNumber, Some(o)) => Step::FileSequenceNumber(o),
                // an unusual shape: the plan decodes every entry
                (_, None) => return None,
            });
        }
        Some(FastPlan { plan, steps })
    }

    /// Decodes the entry at the cursor into `e` (which `EntryPlan::reset` prepared) and
    /// moves the cursor past it; `false`, with the cursor unmoved and `e` partly written,
    /// when it gives up.
    pub(super) fn decode(&self, cur: &mut Cursor<'_>, e: &mut ManifestEntry) -> bool {
        let mut c = cur.clone();
        if self.decode_at(&mut c, e).is_some() {
            *cur = c;
            true
        } else {
            false
        }
    }

    /// Each step as the `EntryPlan` decodes its field (`decode_into`, `decode_file_field`);
    /// `None` where that gives an error or null for a required field.
    #[inline(always)]
    fn decode_at(&self, c: &mut Cursor<'_>, e: &mut ManifestEntry) -> Option<()> {
        let df = &mut e.data_file;
        for step in &self.steps {
            match *step {
                Step::Status(o) => {
                    let v = required(o, c)?.try_int()?;
                    e.status = ManifestStatus::from_id(v)?;
                }
                Step::SnapshotId(o) => e.snapshot_id = opt_long(o, c)?,
                Step::SequenceNumber(o) => e.sequence_number = opt_long(o, c)?,
                Step::FileSequenceNumber(o) => e.file_sequence_number = opt_long(o, c)?,
                Step::DataFileBranch(value) => {
                    if c.try_long()? != value {
                        return None;
                    }
                }
                Step::Content(o) => {
                    df.content = DataContentType::from_id(required(o, c)?.try_int()?)?;
                }
                Step::FilePath(o) => {
                    let path = std::str::from_utf8(required(o, c)?.try_bytes()?).ok()?;
                    df.file_path.clear();
                    df.file_path.push_str(path);
                }
                Step::FileFormat(o) => {
                    let b = required(o, c)?.try_bytes()?;
                    df.file_format = match FileFormat::from_upper_case(b) {
                        Some(format) => format,
                        None => FileFormat::parse(std::str::from_utf8(b).ok()?),
                    }
                }
                Step::PartitionLong(i, o, ty) => {
                    let v = match o.try_present(c)? {
                        true => Some(long_literal(ty, c.try_long()?)?.ok()?),
                        false => None,
                    };
                    *df.partition.get_mut(i)? = v;
                }
                Step::RecordCount(o) => df.record_count = required(o, c)?.try_long()?,
                Step::FileSize(o) => df.file_size_in_bytes = required(o, c)?.try_long()?,
                Step::Counts(which, o) => {
                    let (slot, only) = match which {
                        CountMap::ColumnSizes => (&mut df.column_sizes, None),
                        CountMap::ValueCounts => (&mut df.value_counts, self.counts_for()),
                        CountMap::NullValueCounts => (&mut df.null_value_counts, self.counts_for()),
                        CountMap::NanValueCounts => (&mut df.nan_value_counts, self.counts_for()),
                    };
                    let present = o.try_present(c)?;
                    int_long_map(c, present, slot, only)?
                }
                Step::Bounds(upper, o) => {
                    let slot = match upper {
                        false => &mut df.lower_bounds,
                        true => &mut df.upper_bounds,
                    };
                    let present = o.try_present(c)?;
                    bounds(c, present, slot, self.bounds_for())?
                }
                Step::KeyMetadata(o) => match o.try_present(c)? {
                    true => {
                        let v = df.key_metadata.get_or_insert_with(Vec::new);
                        v.clear();
                        v.extend_from_slice(c.try_bytes()?);
                    }
                    false => df.key_metadata = None,
                },
                Step::SplitOffsets(o) => match o.try_present(c)? {
                    true => {
                        let out = df.split_offsets.get_or_insert_with(Vec::new);
                        out.clear();
                        loop {
                            let n = c.try_block_count()?;
                            if n == 0 {
                                break;
                            }
                            for _ in 0..n {
                                out.push(c.try_long()?);
                            }
                        }
                    }
                    false => df.split_offsets = None,
                },
                Step::EqualityIds(i, o) => {
                    let mut after_branch = c.clone();
                    if o.try_present(&mut after_branch)? {
                        // the plan's decoder reads the union branch itself
                        let f = self.plan.file.get(i)?;
                        by_plan(c, |c| self.plan.decode_file_field(c, f, df))?;
                    } else {
                        df.equality_ids = None;
                        *c = after_branch;
                    }
                }
                Step::SortOrderId(o) => df.sort_order_id = opt_int(o, c)?,
                Step::FirstRowId(o) => df.first_row_id = opt_long(o, c)?,
                Step::ReferencedDataFile(o) => match o.try_present(c)? {
                    true => {
                        let path = std::str::from_utf8(c.try_bytes()?).ok()?;
                        let v = df.referenced_data_file.get_or_insert_with(String::new);
                        v.clear();
                        v.push_str(path);
                    }
                    false => df.referenced_data_file = None,
                },
                Step::ContentOffset(o) => df.content_offset = opt_long(o, c)?,
                Step::ContentSize(o) => df.content_size_in_bytes = opt_long(o, c)?,
                Step::FileField(i) => {
                    let f = self.plan.file.get(i)?;
                    by_plan(c, |c| self.plan.decode_file_field(c, f, df))?;
                }
                Step::SkipLongs(n) => c.try_skip_longs(n)?,
                Step::SkipBytes => {
                    c.try_bytes()?;
                }
                Step::SkipLongArrays { null, items, count } => {
                    for _ in 0..count {
                        let i = c.try_long()?;
                        if i == 1 - null {
                            loop {
                                let n = c.try_block_count()?;
                                if n == 0 {
                                    break;
                                }
                                c.try_skip_longs(n.checked_mul(items)?)?;
                            }
                        } else if i != null {
                            return None;
                        }
                    }
                }
                Step::Skip(plan) => by_plan(c, |c| c.skip_by(plan))?,
            }
        }
        Some(())
    }

    fn counts_for(&self) -> Option<&[i32]> {
        self.plan.counts_for.as_deref()
    }

    fn bounds_for(&self) -> Option<&[i32]> {
        self.plan.bounds_for.as_deref()
    }
}

/// The step of a `data_file` field (not the partition) that has a fast layout.
fn file_step<'p>(t: FileTarget, i: usize, o: Opt) -> Step<'p> {
    use FileTarget as F;
    match t {
        F::Content => Step::Content(o),
        F::FilePath => Step::FilePath(o),
        F::FileFormat => Step::FileFormat(o),
        F::RecordCount => Step::RecordCount(o),
        F::FileSize => Step::FileSize(o),
        F::ColumnSizes => Step::Counts(CountMap::ColumnSizes, o),
        F::ValueCounts => Step::Counts(CountMap::ValueCounts, o),
        F::NullValueCounts => Step::Counts(CountMap::NullValueCounts, o),
        F::NanValueCounts => Step::Counts(CountMap::NanValueCounts, o),
        F::LowerBounds => Step::Bounds(false, o),
        F::UpperBounds => Step::Bounds(true, o),
        F::KeyMetadata => Step::KeyMetadata(o),
        F::SplitOffsets => Step::SplitOffsets(o),
        F::EqualityIds => Step::EqualityIds(i, o),
        F::SortOrderId => Step::SortOrderId(o),
        F::FirstRowId => Step::FirstRowId(o),
        F::ReferencedDataFile => Step::ReferencedDataFile(o),
        F::ContentOffset => Step::ContentOffset(o),
        F::ContentSize => Step::ContentSize(o),
        F::Partition | F::Skip => Step::FileField(i),
    }
}

/// Reads a field with the plan's `Result` reader; `None` on its error. The reader gets a
/// copy of the cursor, taken back on success, so that the fast path's cursor is never
/// lent out of line and can stay in registers.
#[inline(always)]
fn by_plan<'a>(
    c: &mut Cursor<'a>,
    read: impl FnOnce(&mut Cursor<'a>) -> crate::error::Result<()>,
) -> Option<()> {
    let mut copy = c.clone();
    read(&mut copy).ok()?;
    *c = copy;
    Some(())
}

/// The cursor after the union branch of a required field; `None` when it is null.
#[inline(always)]
fn required<'c, 'a>(o: Opt, c: &'c mut Cursor<'a>) -> Option<&'c mut Cursor<'a>> {
    o.try_present(c)?.then_some(c)
}

#[inline(always)]
fn opt_long(o: Opt, c: &mut Cursor<'_>) -> Option<Option<i64>> {
    match o.try_present(c)? {
        true => c.try_long().map(Some),
        false => Some(None),
    }
}

#[inline(always)]
fn opt_int(o: Opt, c: &mut Cursor<'_>) -> Option<Option<i32>> {
    match o.try_present(c)? {
        true => c.try_int().map(Some),
        false => Some(None),
    }
}

/// The steps of a partition record whose values are all stored as Avro ints or longs (the
/// transforms' results and most identity columns); `None` for other partitions, which go
/// through `EntryPlan::decode_file_field`.
fn partition_steps<'p>(plan: &'p EntryPlan<'_>, schema: &AvroSchema) -> Option<Vec<Step<'p>>> {
    // a union (a writer's nullable tuple) is decoded by the plan
    let AvroSchema::Record(_) = schema else {
        return None;
    };
    plan.partition
        .iter()
        .map(|(slot, s, skip)| match slot {
            Some((i, ty)) => {
                let o = Opt::compile(s, Class::Long)?;
                long_literal(ty, 0)?.ok()?; // a type stored as an int or long
                Some(Step::PartitionLong(*i, o, ty))
            }
            None => Some(match skip {
                SkipPlan::Longs(n) => Step::SkipLongs(*n),
                SkipPlan::Bytes => Step::SkipBytes,
                plan => Step::Skip(plan),
            }),
        })
        .collect()
}

/// As `FieldPlan::int_long_map_into`.
#[inline(always)]
fn int_long_map(
    c: &mut Cursor<'_>,
    present: bool,
    slot: &mut Option<Vec<(i32, i64)>>,
    only: Option<&[i32]>,
) -> Option<()> {
    if !present {
        *slot = None;
        return Some(());
    }
    let out = slot.get_or_insert_with(Vec::new);
    out.clear();
    loop {
        let n = c.try_block_count()?;
        if n == 0 {
            return Some(());
        }
        for _ in 0..n {
            let k = c.try_int()?;
            let v = c.try_long()?;
            if only.map_or(true, |ids| ids.contains(&k)) {
                out.push((k, v));
            }
        }
    }
}

/// As `FieldPlan::int_bytes_map_into`.
#[inline(always)]
fn bounds(
    c: &mut Cursor<'_>,
    present: bool,
    slot: &mut Option<BoundsMap>,
    only: Option<&[i32]>,
) -> Option<()> {
    if !present {
        *slot = None;
        return Some(());
    }
    let out = slot.get_or_insert_with(Vec::new);
    let mut len = 0usize;
    loop {
        let n = c.try_block_count()?;
        if n == 0 {
            break;
        }
        for _ in 0..n {
            let k = c.try_int()?;
            let v = c.try_bytes()?;
            match only {
                None => put_bound(out, &mut len, k, v),
                Some(&[id]) if k == id => put_bound_call(out, &mut len, k, v),
                Some(ids) if ids.len() > 1 && ids.contains(&k) => {
                    put_bound_call(out, &mut len, k, v)
                }
                Some(_) => {}
            }
        }
    }
    out.truncate(len);
    Some(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::super::{visit_entries, ManifestReadOptions};

    /// Every manifest of the committed corpus (written by Java, Spark and PyIceberg) is
    /// decoded by the fast path alone, whatever the options: the plan's decoder is only
    /// for errors and unusual files.
    #[test]
    fn the_fast_path_decodes_every_entry_of_the_corpus_manifests() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/manifest");
        let mut manifests = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            if !name.ends_with(".avro") || name.contains("-list") {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            for options in [
                ManifestReadOptions::all(),
                ManifestReadOptions::minimal(),
                ManifestReadOptions::scan(vec![1]),
            ] {
                let mut n = 0;
                let (_, fast) = visit_entries(&bytes, &options, None, true, |_| {
                    n += 1;
                    Ok(())
                })
                .unwrap();
                assert!(n > 0, "{name}");
                assert_eq!(fast, n, "{name} {options:?}");
            }
            manifests += 1;
        }
        assert!(manifests >= 10, "found {manifests} manifests");
    }
}
