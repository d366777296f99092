//! The entry decoder's fast path. An [`EntryPlan`] walks the file's two records (the
//! entry, then its `data_file`) field by field and reads through `Result`s. A [`FastPlan`]
//! is for the files whose fields are laid out as the spec lists them, which is how Java,
//! PyIceberg and this crate write manifests: it decodes an entry in one straight pass
//! over that layout, where each field is a flag test (is it in the file, is it wanted)
//! and a read that gives up (`try_*`) instead of failing, on a [`Rest`]: the bytes not
//! read yet, as a slice that shrinks, so that the position stays in a register.
//! Straight code has no dispatch and every branch is predictable: on the bench manifest it
//! runs a fifth fewer instructions than the design before it, a list of steps
//! interpreted through a `match`, and takes 13 % less time (docs/benchmarks.md). The
//! count and bound maps, whose loops hold the most values, are decoded out of line with
//! the rest passed by value, so that it stays in registers there too.
//!
//! It never reports an error: on anything unusual (an error, a null where a value is
//! required, a block count with a byte size, a union branch in a longer encoding than
//! needed) it gives up, leaves the cursor where the entry starts, and the caller decodes
//! the entry again with the `EntryPlan`, which gives the exact error or the rare
//! encoding's value. So the fast path holds no error logic, and on the entries it decodes
//! it must write what the `EntryPlan` writes: the tests compare the two on every manifest
//! they read.
//!
//! Files laid out otherwise (fields in another order, a field this reader does not know,
//! a union with null second) have no `FastPlan`: the `EntryPlan` decodes all their
//! entries. Values without a fast layout inside a usual file (`equality_ids` that are not
//! null, a partition with values other than ints and longs) are decoded by the
//! `EntryPlan`'s own field decoder from the fast path.

use super::plan::{
    file_class, file_target, long_literal, put_bound, put_bound_call, Class, EntryPlan,
    EntryTarget, FileTarget, Opt,
};
use crate::manifest::avro::{AvroField, AvroSchema, Cursor, Rest, SkipPlan};
use crate::manifest::avro_values::BoundsMap;
use crate::manifest::{DataContentType, FileFormat, ManifestEntry, ManifestStatus};
use crate::spec::{Literal, PrimitiveType};

/// How a field of the usual layout is stored in the file.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stored {
    /// Not in the file's schema.
    Absent,
    /// The value itself.
    Value,
    /// `["null", value]`: branch 0 is null, branch 1 the value.
    Nullable,
}

impl Stored {
    /// How `s` stores a value of `class`; `None` for any other layout.
    fn of(s: &AvroSchema, class: Class) -> Option<Stored> {
        match Opt::compile(s, class)?.union {
            None => Some(Stored::Value),
            Some((0, 1)) => Some(Stored::Nullable),
            Some(_) => None,
        }
    }

    /// Reads the union branch, if any: whether a value follows. `None` on a branch that
    /// does not exist, and for an absent field (callers test for that first).
    #[inline(always)]
    fn present(self, c: &mut Rest<'_>) -> Option<bool> {
        match self {
            Stored::Nullable => c.try_branch(),
            Stored::Value => Some(true),
            Stored::Absent => None,
        }
    }
}

/// A field that is decoded only when the options ask for it (statistics and split
/// offsets): how it is stored and whether it is wanted.
#[derive(Clone, Copy)]
pub(crate) struct Wanted {
    pub(crate) stored: Stored,
    pub(crate) decode: bool,
}

const NOT_STORED: Wanted = Wanted {
    stored: Stored::Absent,
    decode: false,
};

/// The partition tuple's decoding.
enum Partition<'p> {
    /// No `partition` field in the file.
    Absent,
    /// A record whose values are all stored as Avro ints or longs (the transforms' results
    /// and most identity columns).
    Longs(Vec<PartitionStep<'p>>),
    /// Any other record, decoded by `EntryPlan::decode_file_field`: the field's index.
    ByPlan(usize),
}

/// One field of a partition record of [`Partition::Longs`].
enum PartitionStep<'p> {
    /// A value: its index in the tuple, its layout and its type.
    Long(usize, Stored, &'p PrimitiveType),
    /// A field not in the manifest's spec.
    Skip(&'p SkipPlan),
}

/// The `data_file` fields, in the spec's order (the partition aside).
struct FileLayout {
    content: Stored,
    file_path: Stored,
    file_format: Stored,
    record_count: Stored,
    file_size: Stored,
    /// v1's `block_size_in_bytes`, which Java still writes in v1 manifests; never read.
    block_size: Stored,
    /// Column sizes, value counts, null value counts, NaN value counts.
    counts: [Wanted; 4],
    /// Lower and upper bounds.
    bounds: [Wanted; 2],
    key_metadata: Stored,
    split_offsets: Wanted,
    /// Its layout and its index among the fields, for the plan's decoder.
    equality_ids: (Stored, usize),
    sort_order_id: Stored,
    first_row_id: Stored,
    referenced_data_file: Stored,
    content_offset: Stored,
    content_size: Stored,
}

/// An [`EntryPlan`] for a file of the usual layout (see the module's notes).
pub(super) struct FastPlan<'p, 's> {
    plan: &'p EntryPlan<'s>,
    snapshot_id: Stored,
    sequence_number: Stored,
    file_sequence_number: Stored,
    /// The union branch of `data_file`, when it is a union of null and the record.
    data_file_branch: Option<i64>,
    partition: Partition<'p>,
    file: FileLayout,
}

/// Whether `f` is v1's `block_size_in_bytes` (id 105).
fn is_block_size(f: &AvroField) -> bool {
    match f.field_id {
        Some(id) => id == 105,
        None => f.name == "block_size_in_bytes",
    }
}

impl<'p, 's> FastPlan<'p, 's> {
    /// The fast form of `plan`; `None` when the file's fields are not those of the spec,
    /// in its order and with its layouts.
    pub(super) fn new(plan: &'p EntryPlan<'s>) -> Option<FastPlan<'p, 's>> {
        let mut fast = FastPlan {
            plan,
            snapshot_id: Stored::Absent,
            sequence_number: Stored::Absent,
            file_sequence_number: Stored::Absent,
            data_file_branch: None,
            partition: Partition::Absent,
            file: FileLayout {
                content: Stored::Absent,
                file_path: Stored::Absent,
                file_format: Stored::Absent,
                record_count: Stored::Absent,
                file_size: Stored::Absent,
                block_size: Stored::Absent,
                counts: [NOT_STORED; 4],
                bounds: [NOT_STORED; 2],
                key_metadata: Stored::Absent,
                split_offsets: NOT_STORED,
                equality_ids: (Stored::Absent, 0),
                sort_order_id: Stored::Absent,
                first_row_id: Stored::Absent,
                referenced_data_file: Stored::Absent,
                content_offset: Stored::Absent,
                content_size: Stored::Absent,
            },
        };
        // the entry: status, snapshot_id, sequence_number, file_sequence_number, data_file
        let mut last = None;
        let mut data_file = None;
        for f in &plan.fields {
            let rank = match f.target {
                EntryTarget::Skip => return None,
                t => t as usize,
            };
            if last.is_some_and(|l| l >= rank) {
                return None;
            }
            last = Some(rank);
            match f.target {
                EntryTarget::Status => {
                    if Stored::of(f.schema, Class::Int)? != Stored::Value {
                        return None;
                    }
                }
                EntryTarget::SnapshotId => fast.snapshot_id = Stored::of(f.schema, Class::Long)?,
                EntryTarget::SequenceNumber => {
                    fast.sequence_number = Stored::of(f.schema, Class::Long)?
                }
                EntryTarget::FileSequenceNumber => {
                    fast.file_sequence_number = Stored::of(f.schema, Class::Long)?
                }
                EntryTarget::DataFile => {
                    fast.data_file_branch = match f.schema {
                        AvroSchema::Record(_) => None,
                        AvroSchema::Union(b) => match b.as_slice() {
                            [AvroSchema::Null, AvroSchema::Record(_)] => Some(1),
                            [AvroSchema::Record(_), AvroSchema::Null] => Some(0),
                            _ => return None,
                        },
                        _ => return None,
                    };
                    data_file = f.schema.as_record();
                }
                EntryTarget::Skip => return None,
            }
        }
        // the data file's fields, in the order of `FileTarget` (the spec's), with v1's
        // block size after the file size
        let mut last = None;
        let l = &mut fast.file;
        for (i, (af, fp)) in data_file?.fields.iter().zip(&plan.file).enumerate() {
            let known = file_target(af);
            let (rank, class) = match known {
                FileTarget::Skip if is_block_size(af) => {
                    (2 * FileTarget::FileSize as usize + 1, Class::Long)
                }
                FileTarget::Skip => return None,
                t => (2 * t as usize, file_class(t)),
            };
            if last.is_some_and(|l| l >= rank) {
                return None;
            }
            last = Some(rank);
            let decode = fp.target != FileTarget::Skip;
            if known == FileTarget::Partition {
                fast.partition = match partition_steps(plan, &af.schema) {
                    Some(steps) => Partition::Longs(steps),
                    None => Partition::ByPlan(i),
                };
                continue;
            }
            let stored = Stored::of(&af.schema, class)?;
            let wanted = Wanted { stored, decode };
            use FileTarget as F;
            match known {
                F::Content => l.content = stored,
                F::FilePath => l.file_path = stored,
                F::FileFormat => l.file_format = stored,
                F::RecordCount => l.record_count = stored,
                F::FileSize => l.file_size = stored,
                F::Skip => l.block_size = stored,
                F::ColumnSizes => l.counts[0] = wanted,
                F::ValueCounts => l.counts[1] = wanted,
                F::NullValueCounts => l.counts[2] = wanted,
                F::NanValueCounts => l.counts[3] = wanted,
                F::LowerBounds => l.bounds[0] = wanted,
                F::UpperBounds => l.bounds[1] = wanted,
                F::KeyMetadata => l.key_metadata = stored,
                F::SplitOffsets => l.split_offsets = wanted,
                F::EqualityIds => l.equality_ids = (stored, i),
                F::SortOrderId => l.sort_order_id = stored,
                F::FirstRowId => l.first_row_id = stored,
                F::ReferencedDataFile => l.referenced_data_file = stored,
                F::ContentOffset => l.content_offset = stored,
                F::ContentSize => l.content_size = stored,
                F::Partition => {}
            }
        }
        Some(fast)
    }

    /// Decodes the entry at the cursor into `e` (which `EntryPlan::reset` prepared) and
    /// moves the cursor past it; `false`, with the cursor unmoved and `e` partly written,
    /// when it gives up.
    pub(super) fn decode(&self, cur: &mut Cursor<'_>, e: &mut ManifestEntry) -> bool {
        let mut c = cur.rest();
        if self.decode_at(&mut c, e).is_some() {
            cur.set_rest(c);
            true
        } else {
            false
        }
    }

    /// Each field as the `EntryPlan` decodes it (`decode_into`, `decode_file_field`);
    /// `None` where that gives an error or null for a required field. Fields that the
    /// plan does not decode are left as `EntryPlan::reset` set them.
    #[inline(always)]
    fn decode_at(&self, c: &mut Rest<'_>, e: &mut ManifestEntry) -> Option<()> {
        e.status = ManifestStatus::from_id(c.try_int()?)?;
        if self.snapshot_id != Stored::Absent {
            e.snapshot_id = opt_long(self.snapshot_id, c)?;
        }
        if self.sequence_number != Stored::Absent {
            e.sequence_number = opt_long(self.sequence_number, c)?;
        }
        if self.file_sequence_number != Stored::Absent {
            e.file_sequence_number = opt_long(self.file_sequence_number, c)?;
        }
        if let Some(branch) = self.data_file_branch {
            if c.try_long()? != branch {
                return None;
            }
        }
        let l = &self.file;
        let df = &mut e.data_file;
        if l.content != Stored::Absent {
            df.content = DataContentType::from_id(required(l.content, c)?.try_int()?)?;
        }
        let path = std::str::from_utf8(required(l.file_path, c)?.try_bytes()?).ok()?;
        df.file_path.clear();
        df.file_path.push_str(path);
        let b = required(l.file_format, c)?.try_bytes()?;
        match b {
            // nothing to drop and write when the slot holds Parquet already (`reset` put
            // it there)
            b"PARQUET" if matches!(df.file_format, FileFormat::Parquet) => {}
            _ => {
                df.file_format = match FileFormat::from_upper_case(b) {
                    Some(format) => format,
                    None => FileFormat::parse(std::str::from_utf8(b).ok()?),
                }
            }
        }
        match &self.partition {
            Partition::Absent => {}
            Partition::Longs(steps) => {
                for step in steps {
                    match *step {
                        PartitionStep::Long(i, stored, ty) => {
                            let slot = df.partition.get_mut(i)?;
                            match stored.present(c)? {
                                true => set_long_literal(slot, ty, c.try_long()?)?,
                                false => *slot = None,
                            }
                        }
                        PartitionStep::Skip(plan) => c.by_cursor(|c| c.skip_by(plan))?,
                    }
                }
            }
            Partition::ByPlan(i) => {
                let f = self.plan.file.get(*i)?;
                c.by_cursor(|c| self.plan.decode_file_field(c, f, df))?;
            }
        }
        df.record_count = required(l.record_count, c)?.try_long()?;
        df.file_size_in_bytes = required(l.file_size, c)?.try_long()?;
        if l.block_size != Stored::Absent {
            required(l.block_size, c)?.try_long()?;
        }
        let only = self.plan.counts_for.as_deref();
        *c = counts(l.counts[0], *c, &mut df.column_sizes, None)?;
        *c = counts(l.counts[1], *c, &mut df.value_counts, only)?;
        *c = counts(l.counts[2], *c, &mut df.null_value_counts, only)?;
        *c = counts(l.counts[3], *c, &mut df.nan_value_counts, only)?;
        let only = self.plan.bounds_for.as_deref();
        *c = bounds(l.bounds[0], *c, &mut df.lower_bounds, only)?;
        *c = bounds(l.bounds[1], *c, &mut df.upper_bounds, only)?;
        if l.key_metadata != Stored::Absent {
            match l.key_metadata.present(c)? {
                true => {
                    let v = df.key_metadata.get_or_insert_with(Vec::new);
                    v.clear();
                    v.extend_from_slice(c.try_bytes()?);
                }
                false => df.key_metadata = None,
            }
        }
        let Wanted { stored, decode } = l.split_offsets;
        if stored != Stored::Absent && !decode {
            skip_long_array(stored, c, 1)?;
        } else if stored != Stored::Absent {
            match stored.present(c)? {
                true => {
                    let out = df.split_offsets.get_or_insert_with(Vec::new);
                    c.try_array_into(out, Rest::try_long)?;
                }
                false => df.split_offsets = None,
            }
        }
        let (stored, i) = l.equality_ids;
        if stored != Stored::Absent {
            let mut after_branch = *c;
            if stored.present(&mut after_branch)? {
                // the plan's decoder reads the union branch itself
                let f = self.plan.file.get(i)?;
                c.by_cursor(|c| self.plan.decode_file_field(c, f, df))?;
            } else {
                df.equality_ids = None;
                *c = after_branch;
            }
        }
        if l.sort_order_id != Stored::Absent {
            df.sort_order_id = match l.sort_order_id.present(c)? {
                true => Some(c.try_int()?),
                false => None,
            };
        }
        if l.first_row_id != Stored::Absent {
            df.first_row_id = opt_long(l.first_row_id, c)?;
        }
        if l.referenced_data_file != Stored::Absent {
            match l.referenced_data_file.present(c)? {
                true => {
                    let path = std::str::from_utf8(c.try_bytes()?).ok()?;
                    let v = df.referenced_data_file.get_or_insert_with(String::new);
                    v.clear();
                    v.push_str(path);
                }
                false => df.referenced_data_file = None,
            }
        }
        if l.content_offset != Stored::Absent {
            df.content_offset = opt_long(l.content_offset, c)?;
        }
        if l.content_size != Stored::Absent {
            df.content_size_in_bytes = opt_long(l.content_size, c)?;
        }
        Some(())
    }
}

/// The cursor after the union branch of a required field; `None` when it is null.
#[inline(always)]
fn required<'c, 'a>(stored: Stored, c: &'c mut Rest<'a>) -> Option<&'c mut Rest<'a>> {
    stored.present(c)?.then_some(c)
}

#[inline(always)]
fn opt_long(stored: Stored, c: &mut Rest<'_>) -> Option<Option<i64>> {
    match stored.present(c)? {
        true => c.try_long().map(Some),
        false => Some(None),
    }
}

/// Writes the literal of `ty` for the Avro int or long `v` into `slot`; in place when the
/// slot holds a literal of that type already (the entry before wrote it), so that no
/// literal is dropped.
#[inline(always)]
fn set_long_literal(slot: &mut Option<Literal>, ty: &PrimitiveType, v: i64) -> Option<()> {
    use PrimitiveType as P;
    match (ty, slot.as_mut()) {
        (P::Date, Some(Literal::Date(x))) | (P::Int, Some(Literal::Int(x))) => {
            *x = i32::try_from(v).ok()?
        }
        (P::Long, Some(Literal::Long(x)))
        | (P::Time, Some(Literal::Time(x)))
        | (P::Timestamp, Some(Literal::Timestamp(x)))
        | (P::Timestamptz, Some(Literal::Timestamptz(x)))
        | (P::TimestampNs, Some(Literal::TimestampNs(x)))
        | (P::TimestamptzNs, Some(Literal::TimestamptzNs(x))) => *x = v,
        _ => *slot = Some(long_literal(ty, v)??),
    }
    Some(())
}

/// The steps of a partition record whose values are all stored as Avro ints or longs;
/// `None` for other partitions, which go through `EntryPlan::decode_file_field`.
fn partition_steps<'p>(
    plan: &'p EntryPlan<'_>,
    schema: &AvroSchema,
) -> Option<Vec<PartitionStep<'p>>> {
    // a union (a writer's nullable tuple) is decoded by the plan
    let AvroSchema::Record(_) = schema else {
        return None;
    };
    plan.partition
        .iter()
        .map(|(slot, s, skip)| match slot {
            Some((i, ty)) => {
                let stored = Stored::of(s, Class::Long)?;
                long_literal(ty, 0)?; // a type stored as an int or long
                Some(PartitionStep::Long(*i, stored, ty))
            }
            None => Some(PartitionStep::Skip(skip)),
        })
        .collect()
}

/// Skips an array stored as `stored` whose items are `items` varints each (a count map,
/// a list of offsets or ids).
#[inline(always)]
fn skip_long_array(stored: Stored, c: &mut Rest<'_>, items: usize) -> Option<()> {
    if stored.present(c)? {
        loop {
            let n = c.try_block_count()?;
            if n == 0 {
                break;
            }
            c.try_skip_longs(n.checked_mul(items)?)?;
        }
    }
    Some(())
}

/// A count map: skipped, or decoded as `FieldPlan::int_long_map_into` does. Out of line,
/// with the rest passed and returned by value (in registers): inside the entry decoder,
/// the compiler kept the rest on the stack through these loops, a store and a load on
/// the chain from one varint to the next (docs/benchmarks.md).
#[inline(never)]
pub(crate) fn counts<'a>(
    field: Wanted,
    mut r: Rest<'a>,
    slot: &mut Option<Vec<(i32, i64)>>,
    only: Option<&[i32]>,
) -> Option<Rest<'a>> {
    counts_at(field, &mut r, slot, only)?;
    Some(r)
}

#[inline(always)]
fn counts_at(
    field: Wanted,
    c: &mut Rest<'_>,
    slot: &mut Option<Vec<(i32, i64)>>,
    only: Option<&[i32]>,
) -> Option<()> {
    if field.stored == Stored::Absent {
        return Some(());
    }
    if !field.decode {
        return skip_long_array(field.stored, c, 2);
    }
    if !field.stored.present(c)? {
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
            let k = c.try_key()?;
            let v = c.try_long()?;
            if only.is_none_or(|ids| ids.contains(&k)) {
                out.push((k, v));
            }
        }
    }
}

/// A bounds map: skipped, or decoded as `FieldPlan::int_bytes_map_into` does. Out of
/// line for the reason [`counts`] is.
#[inline(never)]
pub(crate) fn bounds<'a>(
    field: Wanted,
    mut r: Rest<'a>,
    slot: &mut Option<BoundsMap>,
    only: Option<&[i32]>,
) -> Option<Rest<'a>> {
    bounds_at(field, &mut r, slot, only)?;
    Some(r)
}

#[inline(always)]
fn bounds_at(
    field: Wanted,
    c: &mut Rest<'_>,
    slot: &mut Option<BoundsMap>,
    only: Option<&[i32]>,
) -> Option<()> {
    if field.stored == Stored::Absent {
        return Some(());
    }
    let present = field.stored.present(c)?;
    if !field.decode {
        if present {
            loop {
                let n = c.try_block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    c.try_key_bytes()?;
                }
            }
        }
        return Some(());
    }
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
            let (k, v) = c.try_key_bytes()?;
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

    use super::super::{visit_entries, ManifestProjection};

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
                ManifestProjection::all(),
                ManifestProjection::minimal(),
                ManifestProjection::scan(vec![1]),
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
