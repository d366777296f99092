//! v4 manifests as Avro container files: the writer's schema (upstream's field ids and
//! names), and a reader that resolves the file's own writer schema by field id, so field
//! order, extra optional fields (`partition`, `content_stats`, future ones) and int/long
//! promotion do not matter.
//!
//! Memory on hostile input is bounded as for v3 manifests: blocks decompress to at most
//! the ceiling of [`crate::limits`], an array block may not claim more items than bytes
//! left, byte strings are slices of the block, and the schema depth is bounded by the
//! schema parser.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::{
    validate_entry, ContentType, DeletionVector, ManifestInfo, Metrics, TrackedFile, Tracking,
    TrackingStatus, V4Layout, V4ManifestKind, V4_MANIFEST_FORMAT_VERSION,
};
use crate::error::{Error, Result};
use crate::manifest::avro::{
    put_bytes, put_int, put_long, AvroSchema, Container, ContainerWriter, Cursor, Record,
};
use crate::manifest::avro_values::{opt_int_bytes_map, opt_int_long_map};
use crate::manifest::list::summaries;
use crate::manifest::reader::plan::partition_value;
use crate::manifest::writer::{
    avro_field, int_map, partition_avro_type, put_bytes_map, put_long_map, put_partition_value,
};
use crate::manifest::Codec;
use crate::manifest::FieldSummary;
use crate::manifest::ManifestProjection;
use crate::spec::Literal;

/// A v4 manifest read from a file: its kind (key-value metadata `content`) and entries in
/// file order (an entry's position is its ordinal, which manifest DVs address).
#[derive(Debug, Clone, PartialEq)]
pub struct V4Manifest {
    pub kind: V4ManifestKind,
    pub entries: Vec<TrackedFile>,
}

/// The writer schema. Optional fields are `["null", T]` unions with a null default, as
/// Iceberg writes them. `partition` (102) and `content_stats` (146) are left out until
/// their spec- and schema-dependent types are modelled (docs/v4.md).
pub(super) const SCHEMA: &str = r#"{"type":"record","name":"tracked_file","fields":[
{"name":"tracking","field-id":147,"type":{"type":"record","name":"r147","fields":[
 {"name":"status","field-id":0,"type":"int"},
 {"name":"snapshot_id","field-id":1,"type":["null","long"],"default":null},
 {"name":"sequence_number","field-id":3,"type":["null","long"],"default":null},
 {"name":"file_sequence_number","field-id":4,"type":["null","long"],"default":null},
 {"name":"dv_snapshot_id","field-id":5,"type":["null","long"],"default":null},
 {"name":"first_row_id","field-id":142,"type":["null","long"],"default":null},
 {"name":"deleted_positions","field-id":6,"type":["null","bytes"],"default":null},
 {"name":"replaced_positions","field-id":7,"type":["null","bytes"],"default":null}]}},
{"name":"content_type","field-id":134,"type":"int"},
{"name":"format_version","field-id":157,"type":"int"},
{"name":"location","field-id":100,"type":"string"},
{"name":"file_format","field-id":101,"type":"string"},
{"name":"record_count","field-id":103,"type":"long"},
{"name":"file_size_in_bytes","field-id":104,"type":"long"},
{"name":"spec_id","field-id":141,"type":["null","int"],"default":null},
{"name":"sort_order_id","field-id":140,"type":["null","int"],"default":null},
{"name":"deletion_vector","field-id":148,"type":["null",{"type":"record","name":"r148","fields":[
 {"name":"location","field-id":155,"type":"string"},
 {"name":"offset","field-id":144,"type":"long"},
 {"name":"size_in_bytes","field-id":145,"type":"long"},
 {"name":"cardinality","field-id":156,"type":"long"},
 {"name":"key_metadata","field-id":149,"type":["null","bytes"],"default":null}]}],"default":null},
{"name":"manifest_info","field-id":150,"type":["null",{"type":"record","name":"r150","fields":[
 {"name":"added_files_count","field-id":504,"type":"int"},
 {"name":"existing_files_count","field-id":505,"type":"int"},
 {"name":"deleted_files_count","field-id":506,"type":"int"},
 {"name":"replaced_files_count","field-id":520,"type":"int"},
 {"name":"added_rows_count","field-id":512,"type":"long"},
 {"name":"existing_rows_count","field-id":513,"type":"long"},
 {"name":"deleted_rows_count","field-id":514,"type":"long"},
 {"name":"replaced_rows_count","field-id":521,"type":"long"},
 {"name":"min_sequence_number","field-id":516,"type":"long"},
 {"name":"dv","field-id":522,"type":["null","bytes"],"default":null},
 {"name":"dv_cardinality","field-id":523,"type":["null","long"],"default":null},
 {"name":"partitions","field-id":507,"type":["null",{"type":"array","element-id":508,"items":{"type":"record","name":"r508","fields":[
  {"name":"contains_null","field-id":509,"type":"boolean"},
  {"name":"contains_nan","field-id":518,"type":["null","boolean"],"default":null},
  {"name":"lower_bound","field-id":510,"type":["null","bytes"],"default":null},
  {"name":"upper_bound","field-id":511,"type":["null","bytes"],"default":null}]}}],"default":null}]}],"default":null},
{"name":"key_metadata","field-id":131,"type":["null","bytes"],"default":null},
{"name":"split_offsets","field-id":132,"type":["null",{"type":"array","items":"long","element-id":133}],"default":null},
{"name":"equality_ids","field-id":135,"type":["null",{"type":"array","items":"int","element-id":136}],"default":null}
]}"#;

/// The writer schema for a table's partitioning: [`SCHEMA`], then `partition` (102, the
/// union of the table's partition fields, each optional; left out when there are none)
/// and the metrics maps with v3's ids (108, 109, 110, 137, 125, 128).
pub(crate) fn schema_for(partitioning: &V4Layout) -> Result<String> {
    let mut extra: Vec<Value> = Vec::new();
    if !partitioning.fields.is_empty() {
        let mut named = HashSet::new();
        let mut pf = Vec::with_capacity(partitioning.fields.len());
        for (id, name, ty) in &partitioning.fields {
            pf.push(avro_field(
                &crate::manifest::writer::avro_name(name),
                *id,
                partition_avro_type(ty, &mut named)?,
                false,
            ));
        }
        extra.push(avro_field(
            "partition",
            102,
            json!({"type": "record", "name": "r102", "fields": pf}),
            false,
        ));
    }
    extra.push(int_map("column_sizes", 108, 117, 118, "long"));
    extra.push(int_map("value_counts", 109, 119, 120, "long"));
    extra.push(int_map("null_value_counts", 110, 121, 122, "long"));
    extra.push(int_map("nan_value_counts", 137, 138, 139, "long"));
    extra.push(int_map("lower_bounds", 125, 126, 127, "bytes"));
    extra.push(int_map("upper_bounds", 128, 129, 130, "bytes"));
    // SCHEMA's text with the fields appended before its closing "]}"
    let body = SCHEMA.strip_suffix("\n]}").ok_or_else(|| {
        Error::unsupported("the v4 manifest schema does not end its field list as expected")
    })?;
    let mut out = String::with_capacity(SCHEMA.len() + 1024);
    out.push_str(body);
    for f in extra {
        out.push_str(",\n");
        out.push_str(&f.to_string());
    }
    out.push_str("\n]}");
    Ok(out)
}

/// Writes a v4 manifest of `kind` with no partition fields (unpartitioned entries); see
/// [`write_v4_manifest_with`].
pub fn write_v4_manifest(
    kind: V4ManifestKind,
    entries: &[TrackedFile],
    codec: Codec,
) -> Result<Vec<u8>> {
    write_v4_manifest_with(kind, entries, codec, &V4Layout::none())
}

/// Writes a v4 manifest of `kind` for a table with `partitioning`. Every entry is checked
/// first ([`validate_entry`], and its partition against its spec), so that a file this
/// writer produces always reads back; the error names `entries[i]`.
pub fn write_v4_manifest_with(
    kind: V4ManifestKind,
    entries: &[TrackedFile],
    codec: Codec,
    partitioning: &V4Layout,
) -> Result<Vec<u8>> {
    for (i, e) in entries.iter().enumerate() {
        validate_entry(kind, e).map_err(|err| err.under(&format!("entries[{i}]")))?;
    }
    let schema = schema_for(partitioning)?;
    let meta = [
        ("format-version", V4_MANIFEST_FORMAT_VERSION.to_string()),
        ("content", kind.as_str().to_string()),
    ];
    let mut w = ContainerWriter::new(&schema, &meta, codec);
    for (i, e) in entries.iter().enumerate() {
        encode(&mut w.block, e, partitioning).map_err(|err| err.under(&format!("entries[{i}]")))?;
        w.end_object()?;
    }
    w.finish()
}

/// The partition values of `e` by field id, checked against its spec.
fn partition_by_id<'e>(
    e: &'e TrackedFile,
    partitioning: &V4Layout,
) -> Result<Vec<(i32, &'e Option<Literal>)>> {
    if e.partition.is_empty() {
        return Ok(Vec::new());
    }
    let ids = e
        .spec_id
        .and_then(|s| partitioning.specs.get(&s))
        .ok_or_else(|| {
            Error::invalid_metadata(
                "partition",
                format!(
                    "the entry has partition values, but its spec {:?} is not a spec of the table",
                    e.spec_id
                ),
            )
        })?;
    if ids.len() != e.partition.len() {
        return Err(Error::invalid_metadata(
            "partition",
            format!(
                "{} values for spec {:?}, which has {} fields",
                e.partition.len(),
                e.spec_id,
                ids.len()
            ),
        ));
    }
    Ok(ids.iter().copied().zip(e.partition.iter()).collect())
}

fn opt_long(out: &mut Vec<u8>, v: Option<i64>) {
    match v {
        None => put_long(out, 0),
        Some(v) => {
            put_long(out, 1);
            put_long(out, v);
        }
    }
}

fn opt_int(out: &mut Vec<u8>, v: Option<i32>) {
    opt_long(out, v.map(i64::from));
}

fn opt_bytes(out: &mut Vec<u8>, v: Option<&[u8]>) {
    match v {
        None => put_long(out, 0),
        Some(b) => {
            put_long(out, 1);
            put_bytes(out, b);
        }
    }
}

fn opt_array<T: Copy>(out: &mut Vec<u8>, v: Option<&[T]>, put: impl Fn(&mut Vec<u8>, T)) {
    match v {
        None => put_long(out, 0),
        Some(items) => {
            put_long(out, 1);
            if !items.is_empty() {
                put_long(out, items.len() as i64);
                for &x in items {
                    put(out, x);
                }
            }
            put_long(out, 0);
        }
    }
}

pub(super) fn encode(out: &mut Vec<u8>, e: &TrackedFile, partitioning: &V4Layout) -> Result<()> {
    let t = &e.tracking;
    put_int(out, t.status.id());
    opt_long(out, t.snapshot_id);
    opt_long(out, t.sequence_number);
    opt_long(out, t.file_sequence_number);
    opt_long(out, t.dv_snapshot_id);
    opt_long(out, t.first_row_id);
    opt_bytes(out, t.deleted_positions.as_deref());
    opt_bytes(out, t.replaced_positions.as_deref());
    put_int(out, e.content_type.id());
    put_int(out, e.format_version);
    put_bytes(out, partitioning.stored_path(&e.location)?.as_bytes());
    put_bytes(out, e.file_format.as_bytes());
    put_long(out, e.record_count);
    put_long(out, e.file_size_in_bytes);
    opt_int(out, e.spec_id);
    opt_int(out, e.sort_order_id);
    match &e.deletion_vector {
        None => put_long(out, 0),
        Some(dv) => {
            put_long(out, 1);
            let stored = partitioning.stored_path(&dv.location);
            put_bytes(
                out,
                stored
                    .map_err(|err| err.under("deletion_vector"))?
                    .as_bytes(),
            );
            put_long(out, dv.offset);
            put_long(out, dv.size_in_bytes);
            put_long(out, dv.cardinality);
            opt_bytes(out, dv.key_metadata.as_deref());
        }
    }
    match &e.manifest_info {
        None => put_long(out, 0),
        Some(m) => {
            put_long(out, 1);
            put_int(out, m.added_files_count);
            put_int(out, m.existing_files_count);
            put_int(out, m.deleted_files_count);
            put_int(out, m.replaced_files_count);
            put_long(out, m.added_rows_count);
            put_long(out, m.existing_rows_count);
            put_long(out, m.deleted_rows_count);
            put_long(out, m.replaced_rows_count);
            put_long(out, m.min_sequence_number);
            opt_bytes(out, m.dv.as_deref());
            opt_long(out, m.dv_cardinality);
            put_summaries(out, m.partitions.as_deref());
        }
    }
    opt_bytes(out, e.key_metadata.as_deref());
    opt_array(out, e.split_offsets.as_deref(), put_long);
    opt_array(out, e.equality_ids.as_deref(), put_int);
    if !partitioning.fields.is_empty() {
        let values = partition_by_id(e, partitioning)?;
        if e.partition.is_empty() {
            // unpartitioned entries and manifests carry no tuple
            put_long(out, 0);
        } else {
            put_long(out, 1);
            for (id, _, ty) in &partitioning.fields {
                match values
                    .iter()
                    .find(|(vid, _)| vid == id)
                    .and_then(|(_, v)| v.as_ref())
                {
                    None => put_long(out, 0),
                    Some(v) => {
                        put_long(out, 1);
                        put_partition_value(out, v, ty)
                            .map_err(|err| err.under(&format!("partition.{id}")))?;
                    }
                }
            }
        }
    }
    let m = &e.metrics;
    put_long_map(out, m.column_sizes.as_deref());
    put_long_map(out, m.value_counts.as_deref());
    put_long_map(out, m.null_value_counts.as_deref());
    put_long_map(out, m.nan_value_counts.as_deref());
    put_bytes_map(out, m.lower_bounds.as_deref());
    put_bytes_map(out, m.upper_bounds.as_deref());
    Ok(())
}

fn put_summaries(out: &mut Vec<u8>, p: Option<&[FieldSummary]>) {
    let Some(p) = p else {
        put_long(out, 0);
        return;
    };
    put_long(out, 1);
    if !p.is_empty() {
        put_long(out, p.len() as i64);
        for s in p {
            out.push(u8::from(s.contains_null));
            match s.contains_nan {
                None => put_long(out, 0),
                Some(b) => {
                    put_long(out, 1);
                    out.push(u8::from(b));
                }
            }
            opt_bytes(out, s.lower_bound.as_deref());
            opt_bytes(out, s.upper_bound.as_deref());
        }
    }
    put_long(out, 0);
}

// ---------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------

/// Reads a v4 manifest. `file` names the file in errors. The key-value metadata must say
/// `format-version` 4 and a known `content`; every entry is checked against the rules of
/// that kind ([`validate_entry`]), so a leaf mixing data and deletes, a manifest in a leaf,
/// an unknown content type or a missing required field is an error naming the file, the
/// entry (`entries[i]`) and the field.
pub fn read_v4_manifest(bytes: &[u8], file: &str) -> Result<V4Manifest> {
    read_v4_manifest_with(bytes, file, &V4Layout::none())
}

/// As [`read_v4_manifest`], decoding partition values with the table's `partitioning`
/// (without it, `partition` is skipped and entries read as unpartitioned).
pub fn read_v4_manifest_with(
    bytes: &[u8],
    file: &str,
    partitioning: &V4Layout,
) -> Result<V4Manifest> {
    let mut entries = Vec::new();
    let kind = visit_v4_manifest_with(bytes, file, partitioning, |_, e| {
        entries.push(e);
        Ok(())
    })?;
    Ok(V4Manifest { kind, entries })
}

/// As [`read_v4_manifest`], handing each checked entry with its ordinal to `visit` as it
/// is decoded, so a caller that keeps less than every entry (a planner pruning a leaf)
/// holds at most one block's bytes and one entry. Returns the manifest's kind.
pub fn visit_v4_manifest(
    bytes: &[u8],
    file: &str,
    visit: impl FnMut(usize, TrackedFile) -> Result<()>,
) -> Result<V4ManifestKind> {
    visit_v4_manifest_with(bytes, file, &V4Layout::none(), visit)
}

/// As [`visit_v4_manifest`], decoding partition values with `partitioning`.
pub fn visit_v4_manifest_with(
    bytes: &[u8],
    file: &str,
    partitioning: &V4Layout,
    visit: impl FnMut(usize, TrackedFile) -> Result<()>,
) -> Result<V4ManifestKind> {
    visit_entries(bytes, partitioning, None, visit).map_err(|e| e.in_file(file))
}

/// As [`visit_v4_manifest_with`], decoding the column metrics `projection` asks for (as
/// v3's manifest reader does): a planner needs the counts and bounds of the filtered
/// columns only, and decoding every column's maps is most of a leaf's decoding.
pub fn visit_v4_manifest_projected(
    bytes: &[u8],
    file: &str,
    partitioning: &V4Layout,
    projection: &ManifestProjection,
    visit: impl FnMut(usize, TrackedFile) -> Result<()>,
) -> Result<V4ManifestKind> {
    visit_entries(bytes, partitioning, Some(projection), visit).map_err(|e| e.in_file(file))
}

/// The entries at `ordinals` of a v4 manifest (every field), by ordinal, and the
/// manifest's kind: only the blocks holding them are decoded, the ones before are
/// skipped by their headers (a v4 entry carries its first row id, nothing is inherited
/// from the entries before it). Ordinals past the last entry are absent.
pub fn v4_entries_at(
    bytes: &[u8],
    file: &str,
    partitioning: &V4Layout,
    ordinals: &[usize],
) -> Result<(V4ManifestKind, Vec<(usize, TrackedFile)>)> {
    entries_at(bytes, partitioning, ordinals).map_err(|e| e.in_file(file))
}

fn entries_at(
    bytes: &[u8],
    partitioning: &V4Layout,
    ordinals: &[usize],
) -> Result<(V4ManifestKind, Vec<(usize, TrackedFile)>)> {
    let (c, kind) = open_v4(bytes)?;
    let record = writer_record(&c)?;
    let mut wanted: Vec<usize> = ordinals.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let mut out = Vec::new();
    let (Some(&first), Some(&last)) = (wanted.first(), wanted.last()) else {
        return Ok((kind, out));
    };
    // the entries before a wanted one in its block are decoded without their metrics
    let minimal = ManifestProjection::minimal();
    c.for_each_block_from(first, |block_first, count, data| {
        let block_end = block_first + count;
        if !wanted.iter().any(|o| (block_first..block_end).contains(o)) {
            return Ok(last >= block_end);
        }
        let mut cur = Cursor::new(data);
        for k in 0..count {
            let i = block_first + k;
            if i > last {
                break;
            }
            let at = |e: Error| e.under(&format!("entries[{i}]"));
            let want = wanted.binary_search(&i).is_ok();
            let projection = if want { None } else { Some(&minimal) };
            let entry = decode_entry(&mut cur, &record, partitioning, projection).map_err(at)?;
            if want {
                validate_entry(kind, &entry).map_err(at)?;
                out.push((i, entry));
            }
        }
        Ok(last >= block_end)
    })?;
    Ok((kind, out))
}

/// Opens a v4 manifest: its container, checked to say `format-version` 4, and its kind
/// (key-value metadata `content`).
pub(super) fn open_v4(bytes: &[u8]) -> Result<(Container<'_>, V4ManifestKind)> {
    let c = Container::open(bytes)?;
    match c.meta_str("format-version")? {
        Some(V4_MANIFEST_FORMAT_VERSION) => {}
        Some(other) => {
            return Err(Error::invalid_metadata(
                "format-version",
                format!("a v4 manifest must say format-version 4, found '{other}'"),
            ))
        }
        None => {
            return Err(Error::invalid_metadata(
                "format-version",
                "a v4 manifest needs format-version in its key-value metadata",
            ))
        }
    }
    let kind = match c.meta_str("content")? {
        Some(name) => V4ManifestKind::from_name(name).ok_or_else(|| {
            Error::invalid_metadata(
                "content",
                format!("unknown manifest content '{name}' (expected root, data or deletes)"),
            )
        })?,
        None => {
            return Err(Error::invalid_metadata(
                "content",
                "a v4 manifest needs content in its key-value metadata",
            ))
        }
    };
    Ok((c, kind))
}

/// The writer schema's top record (a manifest entry).
fn writer_record(c: &Container<'_>) -> Result<Record> {
    c.schema
        .as_record()
        .cloned()
        .ok_or_else(|| Error::invalid_metadata("avro.schema", "the writer schema is not a record"))
}

fn visit_entries(
    bytes: &[u8],
    partitioning: &V4Layout,
    projection: Option<&ManifestProjection>,
    mut visit: impl FnMut(usize, TrackedFile) -> Result<()>,
) -> Result<V4ManifestKind> {
    let (c, kind) = open_v4(bytes)?;
    let record = writer_record(&c)?;
    let mut i = 0usize;
    c.for_each_block(|count, data| {
        let mut cur = Cursor::new(data);
        for _ in 0..count {
            let at = |e: Error| e.under(&format!("entries[{i}]"));
            let entry = decode_entry(&mut cur, &record, partitioning, projection).map_err(at)?;
            validate_entry(kind, &entry).map_err(at)?;
            visit(i, entry)?;
            i += 1;
        }
        block_consumed(&cur, count)
    })?;
    Ok(kind)
}

/// A block must hold exactly its `count` entries: bytes left over mean the entries were
/// decoded with the wrong schema or the block is corrupt.
pub(super) fn block_consumed(cur: &Cursor<'_>, count: usize) -> Result<()> {
    if cur.remaining() != 0 {
        return Err(Error::invalid_metadata(
            "",
            format!(
                "{} bytes left over after the block's {count} entries",
                cur.remaining()
            ),
        ));
    }
    Ok(())
}

/// A record's decoded fields: (field id, value), in the writer schema's order.
type FieldValues = Vec<(Option<i32>, Val)>;

/// The field ids the model reads, at any level (`tracking`, `deletion_vector` and
/// `manifest_info` included). Every other field (`partition`, `content_stats`, fields of
/// later versions) is skipped without decoding, so memory stays proportional to what is
/// kept.
const READ_IDS: &[i32] = &[
    147, 134, 157, 100, 101, 103, 104, 141, 140, 148, 150, 131, 132, 135, // entry
    0, 1, 3, 4, 5, 142, 6, 7, // tracking
    155, 144, 145, 156, 149, // deletion_vector
    504, 505, 506, 520, 512, 513, 514, 521, 516, 522, 523, // manifest_info
];

/// Fields decoded by their own readers (typed partition tuple, v3's metrics maps, v3's
/// partition field summaries).
const PARTITION_ID: i32 = 102;
const LONG_MAP_IDS: &[i32] = &[108, 109, 110, 137];
const COLUMN_SIZES_ID: i32 = 108;
const BYTES_MAP_IDS: &[i32] = &[125, 128];
const SUMMARIES_ID: i32 = 507;

/// A decoded value of the shapes TrackedFile uses; everything else is skipped.
#[derive(Debug)]
enum Val {
    Null,
    Int(i64),
    Bytes(Vec<u8>),
    Record(FieldValues),
    /// A list of ints or longs: 8 bytes per item, as v3 manifests keep them.
    Longs(Vec<i64>),
    Partition(Vec<(i32, Option<Literal>)>),
    LongMap(Vec<(i32, i64)>),
    BytesMap(Vec<(i32, Vec<u8>)>),
    Summaries(Vec<FieldSummary>),
    Skipped,
}

fn decode(cur: &mut Cursor<'_>, schema: &AvroSchema) -> Result<Val> {
    Ok(match schema {
        AvroSchema::Null => Val::Null,
        AvroSchema::Int => Val::Int(i64::from(cur.int()?)),
        AvroSchema::Long => Val::Int(cur.long()?),
        AvroSchema::Bytes | AvroSchema::String => Val::Bytes(cur.bytes()?.to_vec()),
        AvroSchema::Union(branches) => {
            let b = cur.branch(branches)?;
            decode(cur, b)?
        }
        AvroSchema::Record(r) => Val::Record(decode_fields(cur, r, None, None)?),
        AvroSchema::Array(item) if matches!(**item, AvroSchema::Int | AvroSchema::Long) => {
            let int = matches!(**item, AvroSchema::Int);
            let mut out = Vec::new();
            loop {
                let n = cur.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    out.push(if int {
                        i64::from(cur.int()?)
                    } else {
                        cur.long()?
                    });
                }
            }
            Val::Longs(out)
        }
        other => {
            cur.skip(other)?;
            Val::Skipped
        }
    })
}

/// Decodes the fields of `r` the model reads. `partitioning` is given at the top level
/// of an entry, where `partition` is decoded with it (and skipped without one), and so is
/// `projection`, which narrows the column metrics decoded (all without one).
fn decode_fields(
    cur: &mut Cursor<'_>,
    r: &Record,
    partitioning: Option<&V4Layout>,
    projection: Option<&ManifestProjection>,
) -> Result<FieldValues> {
    // v3's projection: without `stats`, no column sizes, and counts of `counts_for` only
    let counts_for = projection
        .filter(|p| !p.stats)
        .map(|p| p.counts_for.as_slice());
    let bounds_for = projection.and_then(|p| p.bounds_for.as_deref());
    let mut out = Vec::with_capacity(r.fields.len());
    for f in &r.fields {
        let at = |e: Error| e.under(&f.name);
        let val = match f.field_id {
            Some(id) if READ_IDS.contains(&id) => decode(cur, &f.schema)?,
            Some(PARTITION_ID) if partitioning.is_some_and(|p| !p.fields.is_empty()) => {
                match partitioning {
                    Some(p) => decode_partition(cur, &f.schema, p).map_err(at)?,
                    None => Val::Null,
                }
            }
            Some(id) if LONG_MAP_IDS.contains(&id) => match counts_for {
                Some(ids) if id == COLUMN_SIZES_ID || ids.is_empty() => {
                    cur.skip(&f.schema)?;
                    continue;
                }
                _ => {
                    let mut map = opt_int_long_map(cur, &f.schema).map_err(at)?;
                    if let (Some(ids), Some(m)) = (counts_for, map.as_mut()) {
                        m.retain(|(k, _)| ids.contains(k));
                    }
                    map.map_or(Val::Null, Val::LongMap)
                }
            },
            Some(id) if BYTES_MAP_IDS.contains(&id) => {
                opt_int_bytes_map(cur, &f.schema, bounds_for)
                    .map_err(at)?
                    .map_or(Val::Null, Val::BytesMap)
            }
            Some(SUMMARIES_ID) => summaries(cur, &f.schema)
                .map_err(at)?
                .map_or(Val::Null, Val::Summaries),
            _ => {
                cur.skip(&f.schema)?;
                continue;
            }
        };
        out.push((f.field_id, val));
    }
    Ok(out)
}

/// The partition tuple (a record of optional fields keyed by partition field id); fields
/// the table does not know are skipped.
fn decode_partition(cur: &mut Cursor<'_>, s: &AvroSchema, partitioning: &V4Layout) -> Result<Val> {
    match s {
        AvroSchema::Null => Ok(Val::Null),
        AvroSchema::Union(b) => {
            let s = cur.branch(b)?;
            decode_partition(cur, s, partitioning)
        }
        AvroSchema::Record(r) => {
            let mut out = Vec::with_capacity(r.fields.len());
            for f in &r.fields {
                match f
                    .field_id
                    .and_then(|id| Some((id, partitioning.field_type(id)?)))
                {
                    Some((id, ty)) => {
                        let v =
                            partition_value(cur, &f.schema, ty).map_err(|e| e.under(&f.name))?;
                        out.push((id, v));
                    }
                    None => cur.skip(&f.schema)?,
                }
            }
            Ok(Val::Partition(out))
        }
        other => Err(Error::invalid_metadata(
            "",
            format!("expected a record, found {other:?}"),
        )),
    }
}

/// The fields of a record by id; a null value counts as absent.
struct Fields<'a> {
    path: &'a str,
    fields: &'a FieldValues,
}

impl<'a> Fields<'a> {
    fn name(&self, name: &str) -> String {
        if self.path.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.path)
        }
    }

    fn get(&self, id: i32) -> Option<&'a Val> {
        self.fields
            .iter()
            .find(|(fid, _)| *fid == Some(id))
            .map(|(_, v)| v)
            .filter(|v| !matches!(v, Val::Null))
    }

    fn missing(&self, id: i32, name: &str) -> Error {
        Error::invalid_metadata(
            self.name(name),
            format!("required field {id} is missing or null"),
        )
    }

    fn wrong(&self, name: &str, expected: &str) -> Error {
        Error::invalid_metadata(self.name(name), format!("expected {expected}"))
    }

    fn opt_long(&self, id: i32, name: &str) -> Result<Option<i64>> {
        match self.get(id) {
            None => Ok(None),
            Some(Val::Int(v)) => Ok(Some(*v)),
            Some(_) => Err(self.wrong(name, "an int or long")),
        }
    }

    fn long(&self, id: i32, name: &str) -> Result<i64> {
        self.opt_long(id, name)?
            .ok_or_else(|| self.missing(id, name))
    }

    fn opt_int(&self, id: i32, name: &str) -> Result<Option<i32>> {
        self.opt_long(id, name)?
            .map(|v| i32::try_from(v).map_err(|_| self.wrong(name, "an int")))
            .transpose()
    }

    fn int(&self, id: i32, name: &str) -> Result<i32> {
        self.opt_int(id, name)?
            .ok_or_else(|| self.missing(id, name))
    }

    fn opt_bytes(&self, id: i32, name: &str) -> Result<Option<Vec<u8>>> {
        match self.get(id) {
            None => Ok(None),
            Some(Val::Bytes(b)) => Ok(Some(b.clone())),
            Some(_) => Err(self.wrong(name, "bytes")),
        }
    }

    fn string(&self, id: i32, name: &str) -> Result<String> {
        let b = self
            .opt_bytes(id, name)?
            .ok_or_else(|| self.missing(id, name))?;
        String::from_utf8(b).map_err(|_| self.wrong(name, "a UTF-8 string"))
    }

    fn record(&self, id: i32, name: &str) -> Result<Option<&'a FieldValues>> {
        match self.get(id) {
            None => Ok(None),
            Some(Val::Record(f)) => Ok(Some(f)),
            Some(_) => Err(self.wrong(name, "a struct")),
        }
    }

    fn longs(&self, id: i32, name: &str) -> Result<Option<Vec<i64>>> {
        match self.get(id) {
            None => Ok(None),
            Some(Val::Longs(items)) => Ok(Some(items.clone())),
            Some(_) => Err(self.wrong(name, "a list of int or long")),
        }
    }
}

fn decode_entry(
    cur: &mut Cursor<'_>,
    record: &Record,
    partitioning: &V4Layout,
    projection: Option<&ManifestProjection>,
) -> Result<TrackedFile> {
    let fields = decode_fields(cur, record, Some(partitioning), projection)?;
    let top = Fields {
        path: "",
        fields: &fields,
    };
    let tracking_fields = top
        .record(147, "tracking")?
        .ok_or_else(|| top.missing(147, "tracking"))?;
    let tr = Fields {
        path: "tracking",
        fields: tracking_fields,
    };
    let status_id = tr.int(0, "status")?;
    let status = TrackingStatus::from_id(status_id).ok_or_else(|| {
        Error::invalid_metadata(
            "tracking.status",
            format!("unknown status {status_id} (expected 0 to 4)"),
        )
    })?;
    let tracking = Tracking {
        status,
        snapshot_id: tr.opt_long(1, "snapshot_id")?,
        sequence_number: tr.opt_long(3, "sequence_number")?,
        file_sequence_number: tr.opt_long(4, "file_sequence_number")?,
        dv_snapshot_id: tr.opt_long(5, "dv_snapshot_id")?,
        first_row_id: tr.opt_long(142, "first_row_id")?,
        deleted_positions: tr.opt_bytes(6, "deleted_positions")?,
        replaced_positions: tr.opt_bytes(7, "replaced_positions")?,
    };
    let content_id = top.int(134, "content_type")?;
    let content_type = ContentType::from_id(content_id).ok_or_else(|| {
        Error::invalid_metadata(
            "content_type",
            format!("unknown content type {content_id} (expected 0, 2, 3 or 4)"),
        )
    })?;
    // (the entry's path before its DV's, as the file orders them)
    let mut location = String::new();
    partitioning.set_path(&mut location, &top.string(100, "location")?)?;
    let deletion_vector = match top.record(148, "deletion_vector")? {
        None => None,
        Some(f) => {
            let d = Fields {
                path: "deletion_vector",
                fields: f,
            };
            let mut location = String::new();
            partitioning
                .set_path(&mut location, &d.string(155, "location")?)
                .map_err(|err| err.under("deletion_vector"))?;
            Some(DeletionVector {
                location,
                offset: d.long(144, "offset")?,
                size_in_bytes: d.long(145, "size_in_bytes")?,
                cardinality: d.long(156, "cardinality")?,
                key_metadata: d.opt_bytes(149, "key_metadata")?,
            })
        }
    };
    let manifest_info = match top.record(150, "manifest_info")? {
        None => None,
        Some(f) => {
            let m = Fields {
                path: "manifest_info",
                fields: f,
            };
            Some(ManifestInfo {
                added_files_count: m.int(504, "added_files_count")?,
                existing_files_count: m.int(505, "existing_files_count")?,
                deleted_files_count: m.int(506, "deleted_files_count")?,
                replaced_files_count: m.int(520, "replaced_files_count")?,
                added_rows_count: m.long(512, "added_rows_count")?,
                existing_rows_count: m.long(513, "existing_rows_count")?,
                deleted_rows_count: m.long(514, "deleted_rows_count")?,
                replaced_rows_count: m.long(521, "replaced_rows_count")?,
                min_sequence_number: m.long(516, "min_sequence_number")?,
                dv: m.opt_bytes(522, "dv")?,
                dv_cardinality: m.opt_long(523, "dv_cardinality")?,
                partitions: match m.get(SUMMARIES_ID) {
                    Some(Val::Summaries(s)) => Some(s.clone()),
                    _ => None,
                },
            })
        }
    };
    let equality_ids = top
        .longs(135, "equality_ids")?
        .map(|ids| {
            ids.into_iter()
                .map(|v| i32::try_from(v).map_err(|_| top.wrong("equality_ids", "int ids")))
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    let spec_id = top.opt_int(141, "spec_id")?;
    let partition = match top.get(PARTITION_ID) {
        Some(Val::Partition(values)) => {
            // the values of the entry's own spec, in its order
            match spec_id.and_then(|s| partitioning.specs.get(&s)) {
                Some(ids) => ids
                    .iter()
                    .map(|id| {
                        values
                            .iter()
                            .find(|(vid, _)| vid == id)
                            .and_then(|(_, v)| v.clone())
                    })
                    .collect(),
                None => {
                    return Err(Error::invalid_metadata(
                        "spec_id",
                        format!(
                            "the entry has a partition tuple, but spec {spec_id:?} is not a spec of the table"
                        ),
                    ))
                }
            }
        }
        _ => Vec::new(),
    };
    let long_map = |id: i32| match top.get(id) {
        Some(Val::LongMap(m)) => Some(m.clone()),
        _ => None,
    };
    let bytes_map = |id: i32| match top.get(id) {
        Some(Val::BytesMap(m)) => Some(m.clone()),
        _ => None,
    };
    let metrics = Metrics {
        column_sizes: long_map(108),
        value_counts: long_map(109),
        null_value_counts: long_map(110),
        nan_value_counts: long_map(137),
        lower_bounds: bytes_map(125),
        upper_bounds: bytes_map(128),
    };
    Ok(TrackedFile {
        tracking,
        content_type,
        format_version: top.int(157, "format_version")?,
        location,
        file_format: top.string(101, "file_format")?,
        record_count: top.long(103, "record_count")?,
        file_size_in_bytes: top.long(104, "file_size_in_bytes")?,
        spec_id,
        sort_order_id: top.opt_int(140, "sort_order_id")?,
        deletion_vector,
        manifest_info,
        key_metadata: top.opt_bytes(131, "key_metadata")?,
        split_offsets: top.longs(132, "split_offsets")?,
        equality_ids,
        partition,
        metrics,
    })
}
