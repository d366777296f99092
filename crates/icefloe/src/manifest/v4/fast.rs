//! The slot decoder's fast path, for the layout this crate writes (`avro::schema_for`):
//! what `manifest::reader::fast` is to v3's step decoder. The step decoder (`slot.rs`)
//! interprets a list of steps, one `match` per field with every read returning a
//! `Result`; on the leaves this crate writes, that cost about 1.8 times v3's fast path
//! per entry (docs/benchmarks.md). A [`FastPlan`] exists only when the file's writer
//! schema is exactly this crate's (the fixed fields as [`SCHEMA`] lists them, then the
//! partition tuple if any, then the six metric maps), and decodes an entry in one
//! straight pass over that layout with reads that give up (`try_*` on a [`Rest`], a
//! slice kept in registers) instead of failing.
//!
//! It never reports an error: on anything unusual (an error, a value out of range, a
//! block count with a byte size, a union branch in a longer encoding) it gives up with
//! the cursor where the entry starts, and the caller decodes the entry again with the
//! step decoder, which gives the typed error (or the rare encoding's value). So this path
//! holds no error logic, and on the entries it decodes it must write what the step
//! decoder writes, including the metrics the projection leaves out (null): the tests
//! compare the two (`fast_tests.rs`). Files of any other layout have no `FastPlan`.
//!
//! [`SCHEMA`]: super::avro::SCHEMA

use std::sync::OnceLock;

use super::avro::schema_for;
use super::V4Layout;
use super::{ContentType, DeletionVector, ManifestInfo, TrackedFile, TrackingStatus};
use crate::manifest::avro::{AvroSchema, Cursor, Record, Rest, SkipPlan};
use crate::manifest::list::summaries;
use crate::manifest::reader::fast::{bounds, counts, Stored, Wanted};
use crate::manifest::reader::plan::{long_literal, partition_value};
use crate::manifest::ManifestProjection;
use crate::spec::location::set_resolved;
use crate::spec::{Literal, PrimitiveType};

/// This crate's entry schema without a partition tuple, parsed once.
fn own_schema() -> Option<&'static Record> {
    static OWN: OnceLock<Option<Record>> = OnceLock::new();
    OWN.get_or_init(|| {
        let text = schema_for(&V4Layout::none()).ok()?;
        AvroSchema::parse(&text).ok()?.as_record().cloned()
    })
    .as_ref()
}

/// The ids of the entry's fields in the order `decode_at` reads them, the partition
/// tuple (102) aside: [`FastPlan::new`] checks that this crate's schema still lists them
/// so (the nested records' order is checked by the tests, which compare this path with
/// the step decoder on every record).
const ORDER: [i32; 20] = [
    147, 134, 157, 100, 101, 103, 104, 141, 140, 148, 150, 131, 132, 135, 108, 109, 110, 137, 125,
    128,
];

/// The metric maps at the end of the entry.
const MAPS: usize = 6;

/// The index of `manifest_info` (150) in [`ORDER`], whose last field is the partition
/// summaries.
const MANIFEST_INFO: usize = 10;

/// A spec of the table: its id, its number of fields, and the index in its tuple of
/// each field of the file's tuple (`None` for a field not in the spec).
type SpecPlaces = (i32, usize, Vec<Option<usize>>);

/// The partition tuple of the file.
enum Partition<'s> {
    /// No `partition` field in the file.
    Absent,
    /// A table without partition fields: the tuple is skipped (as the step decoder does).
    Skip(SkipPlan),
    /// The tuple's fields in the file's order, and for each spec of the table its id,
    /// its number of fields and the place in its tuple of each of the file's fields.
    Fields(Vec<PartitionField<'s>>, Vec<SpecPlaces>),
}

/// One field of the tuple (each is `["null", value]` in this crate's layout).
enum PartitionField<'s> {
    /// A value stored as an Avro int or long (dates, the transforms' results): its type.
    Long(&'s PrimitiveType),
    /// Any other value, read by the step decoder's reader.
    ByReader(&'s AvroSchema, &'s PrimitiveType),
    /// A field the table does not know.
    Skip(SkipPlan),
}

/// How a file of this crate's layout is decoded under a projection.
pub(super) struct FastPlan<'s> {
    partition: Partition<'s>,
    /// Column sizes and the other three count maps: decoded or left null (the
    /// projection's choice, as `RecordPlan::compile` makes it).
    column_sizes: bool,
    counts: bool,
    counts_for: Option<&'s [i32]>,
    bounds_for: Option<&'s [i32]>,
    /// The schema of `manifest_info.partitions`, for the summaries' reader.
    summaries: &'s AvroSchema,
    /// The table location relative paths resolve against (`V4Layout::location`).
    location: Option<&'s str>,
}

impl<'s> FastPlan<'s> {
    /// The fast path for a file whose writer schema is `record`; `None` unless that is
    /// exactly this crate's layout.
    pub(super) fn new(
        record: &'s Record,
        partitioning: &'s V4Layout,
        projection: Option<&'s ManifestProjection>,
    ) -> Option<FastPlan<'s>> {
        let own = own_schema()?;
        if !own.fields.iter().map(|f| f.field_id).eq(ORDER.map(Some)) {
            return None;
        }
        let fixed = own.fields.len().checked_sub(MAPS)?;
        if record.name != own.name || record.fields.get(..fixed)? != own.fields.get(..fixed)? {
            return None;
        }
        let mut rest = record.fields.get(fixed..)?;
        let mut partition = Partition::Absent;
        if let Some(f) = rest.first().filter(|f| f.field_id == Some(102)) {
            if f.name != "partition" {
                return None;
            }
            partition = partition_plan(&f.schema, partitioning)?;
            rest = rest.get(1..)?;
        }
        if rest != own.fields.get(fixed..)? {
            return None;
        }
        let summaries = match &record.fields.get(MANIFEST_INFO)?.schema {
            AvroSchema::Union(b) => match b.as_slice() {
                [AvroSchema::Null, AvroSchema::Record(r)] => &r.fields.last()?.schema,
                _ => return None,
            },
            _ => return None,
        };
        // the step decoder's projection: without `stats`, no column sizes, and the
        // counts of `counts_for` only (none when it is empty)
        let counts_for = projection
            .filter(|p| !p.stats)
            .map(|p| p.counts_for.as_slice());
        Some(FastPlan {
            partition,
            column_sizes: counts_for.is_none(),
            counts: counts_for.is_none_or(|ids| !ids.is_empty()),
            counts_for,
            bounds_for: projection.and_then(|p| p.bounds_for.as_deref()),
            summaries,
            location: partitioning.location.as_deref(),
        })
    }

    /// Decodes the entry at the cursor into `e` as `SlotPlan::decode` does and moves the
    /// cursor past it; `false`, with the cursor unmoved and `e` partly written, when it
    /// gives up.
    pub(super) fn decode(&self, cur: &mut Cursor<'_>, e: &mut TrackedFile) -> bool {
        let mut c = cur.rest();
        if self.decode_at(&mut c, e).is_some() {
            cur.set_rest(c);
            true
        } else {
            false
        }
    }

    #[inline(always)]
    fn decode_at(&self, c: &mut Rest<'_>, e: &mut TrackedFile) -> Option<()> {
        let t = &mut e.tracking;
        t.status = TrackingStatus::from_id(c.try_int()?)?;
        t.snapshot_id = opt_long(c)?;
        t.sequence_number = opt_long(c)?;
        t.file_sequence_number = opt_long(c)?;
        t.dv_snapshot_id = opt_long(c)?;
        t.first_row_id = opt_long(c)?;
        opt_bytes(c, &mut t.deleted_positions)?;
        opt_bytes(c, &mut t.replaced_positions)?;
        e.content_type = ContentType::from_id(c.try_int()?)?;
        e.format_version = c.try_int()?;
        path(c, &mut e.location, self.location)?;
        // the slot holds the entry before's format, most often the same bytes (then
        // valid UTF-8 already)
        let format = c.try_bytes()?;
        if e.file_format.as_bytes() != format {
            let format = std::str::from_utf8(format).ok()?;
            e.file_format.clear();
            e.file_format.push_str(format);
        }
        e.record_count = c.try_long()?;
        e.file_size_in_bytes = c.try_long()?;
        e.spec_id = opt_int(c)?;
        e.sort_order_id = opt_int(c)?;
        if c.try_branch()? {
            let dv = e.deletion_vector.get_or_insert_with(|| DeletionVector {
                location: String::new(),
                offset: 0,
                size_in_bytes: 0,
                cardinality: 0,
                key_metadata: None,
            });
            path(c, &mut dv.location, self.location)?;
            dv.offset = c.try_long()?;
            dv.size_in_bytes = c.try_long()?;
            dv.cardinality = c.try_long()?;
            opt_bytes(c, &mut dv.key_metadata)?;
        } else {
            e.deletion_vector = None;
        }
        if c.try_branch()? {
            let m = e
                .manifest_info
                .get_or_insert_with(super::slot::empty_manifest_info);
            self.manifest_info(c, m)?;
        } else {
            e.manifest_info = None;
        }
        opt_bytes(c, &mut e.key_metadata)?;
        if c.try_branch()? {
            let out = e.split_offsets.get_or_insert_with(Vec::new);
            c.try_array_into(out, Rest::try_long)?;
        } else {
            e.split_offsets = None;
        }
        if c.try_branch()? {
            let out = e.equality_ids.get_or_insert_with(Vec::new);
            c.try_array_into(out, Rest::try_int)?;
        } else {
            e.equality_ids = None;
        }
        e.partition.clear();
        match &self.partition {
            Partition::Absent => {}
            Partition::Skip(plan) => c.by_cursor(|c| c.skip_by(plan))?,
            Partition::Fields(fields, specs) => {
                if c.try_branch()? {
                    // a tuple without a spec of the table is the step decoder's error
                    let spec = e.spec_id?;
                    let (_, len, at) = specs.iter().find(|(id, _, _)| *id == spec)?;
                    e.partition.resize(*len, None);
                    partition(c, fields, at, &mut e.partition)?;
                }
            }
        }
        // the count maps the projection leaves out are skipped and left null
        let m = &mut e.metrics;
        let wanted = |decode| Wanted {
            stored: Stored::Nullable,
            decode,
        };
        let only = self.counts_for;
        *c = counts(wanted(self.column_sizes), *c, &mut m.column_sizes, None)?;
        *c = counts(wanted(self.counts), *c, &mut m.value_counts, only)?;
        *c = counts(wanted(self.counts), *c, &mut m.null_value_counts, only)?;
        *c = counts(wanted(self.counts), *c, &mut m.nan_value_counts, only)?;
        if !self.column_sizes {
            m.column_sizes = None;
        }
        if !self.counts {
            m.value_counts = None;
            m.null_value_counts = None;
            m.nan_value_counts = None;
        }
        let only = self.bounds_for;
        *c = bounds(wanted(true), *c, &mut m.lower_bounds, only)?;
        *c = bounds(wanted(true), *c, &mut m.upper_bounds, only)?;
        Some(())
    }

    /// The fields of `manifest_info` (root entries only, so out of line).
    #[inline(never)]
    fn manifest_info(&self, c: &mut Rest<'_>, m: &mut ManifestInfo) -> Option<()> {
        m.added_files_count = c.try_int()?;
        m.existing_files_count = c.try_int()?;
        m.deleted_files_count = c.try_int()?;
        m.replaced_files_count = c.try_int()?;
        m.added_rows_count = c.try_long()?;
        m.existing_rows_count = c.try_long()?;
        m.deleted_rows_count = c.try_long()?;
        m.replaced_rows_count = c.try_long()?;
        m.min_sequence_number = c.try_long()?;
        opt_bytes(c, &mut m.dv)?;
        m.dv_cardinality = opt_long(c)?;
        let s = self.summaries;
        c.by_cursor(|c| {
            m.partitions = summaries(c, s)?;
            Ok(())
        })
    }
}

/// The tuple's values, each put at its place in the entry's spec (`at`, by field of the
/// file's tuple) as `SlotPlan::partition` and `SlotPlan::finish` put them.
#[inline(always)]
fn partition(
    c: &mut Rest<'_>,
    fields: &[PartitionField<'_>],
    at: &[Option<usize>],
    out: &mut [Option<Literal>],
) -> Option<()> {
    for (f, at) in fields.iter().zip(at) {
        let v = match *f {
            PartitionField::Long(ty) => match c.try_branch()? {
                // an out-of-range value (`Some(None)`) is the step decoder's error
                true => Some(long_literal(ty, c.try_long()?)??),
                false => None,
            },
            PartitionField::ByReader(s, ty) => {
                let mut v = None;
                c.by_cursor(|c| {
                    v = partition_value(c, s, ty)?;
                    Ok(())
                })?;
                v
            }
            PartitionField::Skip(ref plan) => {
                c.by_cursor(|c| c.skip_by(plan))?;
                continue;
            }
        };
        if let Some(i) = at {
            *out.get_mut(*i)? = v;
        }
    }
    Some(())
}

/// The fast plan of the tuple `s` (`["null", record]` of `["null", value]` fields);
/// `None` for any other layout.
fn partition_plan<'s>(s: &'s AvroSchema, partitioning: &'s V4Layout) -> Option<Partition<'s>> {
    let AvroSchema::Union(b) = s else {
        return None;
    };
    let [AvroSchema::Null, AvroSchema::Record(r)] = b.as_slice() else {
        return None;
    };
    if partitioning.fields.is_empty() {
        return Some(Partition::Skip(SkipPlan::new(s)));
    }
    let mut fields = Vec::with_capacity(r.fields.len());
    // each file field's place among the table's partition fields
    let mut places: Vec<Option<usize>> = Vec::with_capacity(r.fields.len());
    for f in &r.fields {
        let AvroSchema::Union(b) = &f.schema else {
            return None;
        };
        let [AvroSchema::Null, value] = b.as_slice() else {
            return None;
        };
        let place = f.field_id.and_then(|id| {
            partitioning
                .fields
                .iter()
                .position(|(pid, _, _)| *pid == id)
        });
        if place.is_some() && places.contains(&place) {
            // a field twice: the step decoder keeps the last
            return None;
        }
        places.push(place);
        fields.push(match place {
            None => PartitionField::Skip(SkipPlan::new(&f.schema)),
            Some(i) => {
                let (_, _, ty) = partitioning.fields.get(i)?;
                let long = matches!(value, AvroSchema::Int | AvroSchema::Long);
                if long && long_literal(ty, 0).is_some() {
                    PartitionField::Long(ty)
                } else {
                    PartitionField::ByReader(&f.schema, ty)
                }
            }
        });
    }
    let mut specs = Vec::with_capacity(partitioning.specs.len());
    for (spec, ids) in &partitioning.specs {
        let in_spec: Vec<Option<usize>> = ids
            .iter()
            .map(|id| partitioning.fields.iter().position(|(f, _, _)| f == id))
            .collect();
        let mut at = Vec::with_capacity(places.len());
        for place in &places {
            let mut found = in_spec
                .iter()
                .enumerate()
                .filter(|(_, p)| p.is_some() && *p == place)
                .map(|(i, _)| i);
            let first = found.next();
            if found.next().is_some() {
                // a spec naming a field twice: the step decoder fills the first only
                return None;
            }
            at.push(first);
        }
        specs.push((*spec, ids.len(), at));
    }
    Some(Partition::Fields(fields, specs))
}

#[inline(always)]
fn opt_long(c: &mut Rest<'_>) -> Option<Option<i64>> {
    match c.try_branch()? {
        true => c.try_long().map(Some),
        false => Some(None),
    }
}

#[inline(always)]
fn opt_int(c: &mut Rest<'_>) -> Option<Option<i32>> {
    match c.try_branch()? {
        true => c.try_int().map(Some),
        false => Some(None),
    }
}

#[inline(always)]
fn opt_bytes(c: &mut Rest<'_>, slot: &mut Option<Vec<u8>>) -> Option<()> {
    if c.try_branch()? {
        let v = slot.get_or_insert_with(Vec::new);
        v.clear();
        v.extend_from_slice(c.try_bytes()?);
    } else {
        *slot = None;
    }
    Some(())
}

#[inline(always)]
fn path(c: &mut Rest<'_>, slot: &mut String, table_location: Option<&str>) -> Option<()> {
    let stored = std::str::from_utf8(c.try_bytes()?).ok()?;
    // a relative path in a table without a location gives up here: the step decoder
    // gives the typed error
    set_resolved(slot, table_location, stored).ok()
}
