//! Reading manifests: the key-value metadata, then each `manifest_entry` decoded straight
//! from the Avro bytes by a plan compiled from the file's own writer schema (fields are
//! matched by Iceberg field id, or by name where a writer left ids out). Fields that the
//! caller did not ask for are skipped without being materialised (DESIGN principle 4).

use super::avro::{AvroSchema, Container, Cursor};
use super::{
    DataContentType, DataFile, FileFormat, ManifestContent, ManifestEntry, ManifestFile,
    ManifestMetadata, ManifestStatus, UNASSIGNED_SEQUENCE_NUMBER,
};
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::spec::partition::PartitionSpec;
use crate::spec::{PrimitiveType, Schema, Type};
use crate::MAX_FORMAT_VERSION;

pub(crate) mod fast;
pub(crate) mod plan;

use plan::*;

/// Which optional parts of each data file to decode. The scan fields (path, format,
/// partition, record count, file size, content, sequence numbers, key metadata, equality
/// ids, referenced data file and deletion vector offsets) are always decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestProjection {
    /// Decode column sizes, the value/null/NaN counts of every column and split offsets.
    pub stats: bool,
    /// When `stats` is off: decode value/null/NaN counts for these field ids only.
    pub counts_for: Vec<i32>,
    /// When `stats` is off: decode split offsets all the same.
    pub split_offsets: bool,
    /// Decode lower and upper bounds only for these field ids (`None`: all of them).
    pub bounds_for: Option<Vec<i32>>,
}

impl Default for ManifestProjection {
    fn default() -> Self {
        ManifestProjection::all()
    }
}

impl ManifestProjection {
    /// Every field.
    pub const fn all() -> Self {
        ManifestProjection {
            stats: true,
            counts_for: Vec::new(),
            split_offsets: true,
            bounds_for: None,
        }
    }

    /// Only the scan fields: no sizes, counts, bounds or split offsets.
    pub fn minimal() -> Self {
        ManifestProjection {
            stats: false,
            counts_for: Vec::new(),
            split_offsets: false,
            bounds_for: Some(Vec::new()),
        }
    }

    /// What a scan needs: counts and bounds of the filtered columns and split offsets.
    pub fn scan(filtered_ids: Vec<i32>) -> Self {
        ManifestProjection {
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

/// Where [`read_manifest`] and [`visit_manifest`] find a manifest.
#[derive(Clone, Copy)]
pub enum ManifestSource<'a> {
    /// The file at `location`, read through `io`; errors name the file.
    File {
        io: &'a dyn FileIO,
        location: &'a str,
    },
    /// The bytes of a manifest already read; errors carry the field but no file name.
    Bytes(&'a [u8]),
}

impl<'a> ManifestSource<'a> {
    /// The file at `location`, read through `io`.
    pub fn file(io: &'a dyn FileIO, location: &'a str) -> Self {
        ManifestSource::File { io, location }
    }
}

/// Every field: what [`ReadManifestOptions::default`] decodes.
static ALL_FIELDS: ManifestProjection = ManifestProjection::all();

/// How [`read_manifest`] and [`visit_manifest`] read a manifest. The default decodes
/// every field, applies no inheritance and takes the fast path.
#[derive(Debug, Clone, Copy)]
pub struct ReadManifestOptions<'a> {
    /// Which optional parts of each data file to decode.
    pub projection: &'a ManifestProjection,
    /// The manifest's row in the manifest list: when given, its snapshot id, sequence
    /// numbers and first row id are inherited by the entries (see [`Manifest::inherit`]).
    pub inherit_from: Option<&'a ManifestFile>,
    /// Decode entries with the fast path, which gives up on anything unusual (errors
    /// included) and leaves those entries to the plan that gives the errors. Off only in
    /// tests, which check that the fast path decodes what the plan decodes.
    pub fast_path: bool,
}

impl Default for ReadManifestOptions<'_> {
    fn default() -> Self {
        ReadManifestOptions {
            projection: &ALL_FIELDS,
            inherit_from: None,
            fast_path: true,
        }
    }
}

impl<'a> ReadManifestOptions<'a> {
    /// Decodes only what `projection` asks for.
    pub fn projection(self, projection: &'a ManifestProjection) -> Self {
        ReadManifestOptions { projection, ..self }
    }

    /// Applies inheritance from the manifest's row in the manifest list.
    pub fn inherit_from(self, manifest_file: &'a ManifestFile) -> Self {
        ReadManifestOptions {
            inherit_from: Some(manifest_file),
            ..self
        }
    }

    /// Takes the fast path or not (see [`ReadManifestOptions::fast_path`]).
    pub fn fast_path(self, fast_path: bool) -> Self {
        ReadManifestOptions { fast_path, ..self }
    }
}

/// Reads a whole manifest: its metadata and every entry, decoded as `options` say.
pub fn read_manifest(
    source: ManifestSource<'_>,
    options: &ReadManifestOptions<'_>,
) -> Result<Manifest> {
    let mut entries = Vec::new();
    let metadata = visit_manifest(source, options, |e| {
        entries.push(std::mem::replace(e, blank_entry()));
        Ok(())
    })?;
    Ok(Manifest { metadata, entries })
}

/// Reads a manifest one entry at a time, for callers that must not hold the whole
/// manifest: every entry is decoded into the same slot, which `f` borrows. A caller that
/// keeps few entries (a filtered scan) tests each one in place and takes only those it
/// keeps (e.g. with `std::mem::replace`), so that the entries it drops cost no allocation
/// (the slot's strings and lists are refilled, not rebuilt). Whatever `f` leaves in the
/// slot is overwritten or reset before the next entry. Returns the manifest's metadata.
pub fn visit_manifest(
    source: ManifestSource<'_>,
    options: &ReadManifestOptions<'_>,
    f: impl FnMut(&mut ManifestEntry) -> Result<()>,
) -> Result<ManifestMetadata> {
    match source {
        ManifestSource::Bytes(bytes) => visit_entries(
            bytes,
            options.projection,
            options.inherit_from,
            options.fast_path,
            f,
        )
        .map(|(metadata, _)| metadata),
        ManifestSource::File { io, location } => {
            let bytes = io.read(location)?;
            visit_entries(
                &bytes,
                options.projection,
                options.inherit_from,
                options.fast_path,
                f,
            )
            .map(|(metadata, _)| metadata)
            .map_err(|e| e.in_file(location))
        }
    }
}

/// [`visit_manifest`] from bytes, with or without the fast path (`fast::FastPlan`); also gives
/// how many entries the fast path decoded.
pub(crate) fn visit_entries(
    bytes: &[u8],
    options: &ManifestProjection,
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

/// The entries at `ordinals` of a manifest (with every field; inheritance from
/// `manifest_file` applied), by ordinal: only the blocks holding them are decoded, the
/// ones before are skipped by their headers. Ordinals past the last entry are absent.
/// A v4 commit reads the one entry a writer's plan names this way (`manifest::v4::tree`).
///
/// When the entries inherit first row ids (a v3 data manifest whose list row has one),
/// an entry's id is the sum of the rows before it, so the entries before are decoded
/// too, with the minimal projection.
pub(crate) fn manifest_entries_at(
    bytes: &[u8],
    manifest_file: Option<&ManifestFile>,
    ordinals: &[usize],
) -> Result<Vec<(usize, ManifestEntry)>> {
    let mut wanted: Vec<usize> = ordinals.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let mut out = Vec::new();
    let (Some(&first), Some(&last)) = (wanted.first(), wanted.last()) else {
        return Ok(out);
    };
    let container = Container::open(bytes)?;
    let metadata = read_metadata(&container)?;
    let partition_type = partition_primitive_types(&metadata)?;
    let top = match &container.schema {
        AvroSchema::Record(r) => r,
        _ => return Err(not_a_manifest("the Avro schema is not a record")),
    };
    let plan = EntryPlan::compile(top, &partition_type, &ALL_FIELDS)?;
    let minimal = ManifestProjection::minimal();
    let prefix_plan = EntryPlan::compile(top, &partition_type, &minimal)?;
    let n = partition_type.len();
    let mut inheritance = manifest_file.map(|mf| Inheritance::new(&metadata, mf));
    let row_ids = inheritance
        .as_ref()
        .is_some_and(|inh| inh.data_manifest && inh.next_row_id.is_some());
    let start = if row_ids { 0 } else { first };
    let mut e = blank_entry();
    container.for_each_block_from(start, |block_first, count, block| {
        let block_end = block_first + count;
        if !row_ids && !wanted.iter().any(|o| (block_first..block_end).contains(o)) {
            return Ok(last >= block_end);
        }
        let mut cur = Cursor::new(block);
        for k in 0..count {
            let i = block_first + k;
            if i > last {
                break;
            }
            let want = wanted.binary_search(&i).is_ok();
            let p = if want { &plan } else { &prefix_plan };
            p.reset(&mut e, n);
            p.decode_into(&mut cur, &mut e)
                .map_err(|err| err.under(&format!("entries[{i}]")))?;
            if let Some(inh) = inheritance.as_mut() {
                inh.apply(&mut e);
            }
            if want {
                out.push((i, e.clone()));
            }
        }
        Ok(last >= block_end)
    })?;
    Ok(out)
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
