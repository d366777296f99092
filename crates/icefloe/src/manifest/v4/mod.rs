//! Format v4 manifests (the single-file-commits proposal, `docs/v4.md`): one content-entry
//! schema, [`TrackedFile`], for root and leaf manifests, with upstream's merged field ids
//! and names. This module holds the model and its rules ([`validate_entry`]); `avro.rs`
//! writes and reads it; `tree.rs` reads a snapshot's tree for planning and commits;
//! `stats.rs` aggregates a leaf's column metrics for its root entry.

mod avro;
mod fast;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod fast_tests;
pub mod leaf_block;
mod slot;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod slot_tests;
pub mod stats;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
pub mod tree;

pub use avro::{
    read_v4_manifest, read_v4_manifest_with, v4_entries_at, visit_v4_manifest,
    visit_v4_manifest_projected, visit_v4_manifest_with, write_v4_manifest, write_v4_manifest_with,
    V4Manifest,
};
pub use slot::{visit_v4_manifest_slots, visit_v4_manifest_slots_stepwise};

use std::borrow::Cow;
use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::manifest::FieldSummary;
use crate::spec::location::{gets_qualified, set_resolved, stored_location};
use crate::spec::table_metadata::TableMetadata;
use crate::spec::{Literal, PrimitiveType, Type};

/// What a table's v4 manifests are encoded against.
/// - Its partition fields of every spec, by partition field id: the Avro type of a v4
///   manifest's `partition` (102) is their union (Java's `Partitioning.partitionType`),
///   each field optional, since one root holds files of several specs. An entry's values
///   are those of its own spec's fields, in the spec's order.
/// - Its location: entries store the paths of files under it relative to it, and are
///   read back absolute ([`crate::spec::location`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct V4Layout {
    /// (partition field id, name, type), in the order specs first name them.
    pub fields: Vec<(i32, String, PrimitiveType)>,
    /// The field ids of each spec, in the spec's order.
    pub specs: HashMap<i32, Vec<i32>>,
    /// The table location relative paths are under; `None` stores and reads every path
    /// as it is (what tests of the bare format use).
    pub location: Option<String>,
}

impl V4Layout {
    /// No partition fields, no location: entries are unpartitioned and paths kept as they
    /// are (what tests of the bare format use).
    pub fn none() -> V4Layout {
        V4Layout::default()
    }

    /// The partitioning of `md`'s specs, typed with the current schema (or, for a spec
    /// whose source column was dropped since, the newest schema that still has it), and
    /// `md`'s location.
    pub fn for_table(md: &TableMetadata) -> Result<V4Layout> {
        let mut out = V4Layout {
            location: Some(md.location.clone()),
            ..V4Layout::default()
        };
        for spec in &md.partition_specs {
            let ty = md
                .current_schema()
                .and_then(|s| spec.partition_type(s).ok())
                .or_else(|| {
                    md.schemas
                        .iter()
                        .rev()
                        .find_map(|s| spec.partition_type(s).ok())
                })
                .ok_or_else(|| {
                    Error::invalid_metadata(
                        "partition-specs",
                        format!(
                            "partition spec {} has a source column no schema has",
                            spec.spec_id
                        ),
                    )
                })?;
            let mut ids = Vec::with_capacity(ty.fields.len());
            for f in &ty.fields {
                ids.push(f.id);
                if out.fields.iter().any(|(id, _, _)| *id == f.id) {
                    continue;
                }
                let Type::Primitive(p) = &f.field_type else {
                    return Err(Error::invalid_metadata(
                        "partition-specs",
                        format!("partition field {} is not of a primitive type", f.id),
                    ));
                };
                out.fields.push((f.id, f.name.clone(), p.clone()));
            }
            out.specs.insert(spec.spec_id, ids);
        }
        Ok(out)
    }

    /// Sets a decoder's `slot` to the path an entry stores, made absolute.
    pub(crate) fn set_path(&self, slot: &mut String, stored: &str) -> Result<()> {
        set_resolved(slot, self.location.as_deref(), stored)
    }

    /// How an entry stores the absolute `path` ([`stored_location`]).
    pub(crate) fn stored_path<'p>(&self, path: &'p str) -> Result<Cow<'p, str>> {
        match &self.location {
            Some(table) => stored_location(table, path),
            None => Ok(Cow::Borrowed(path)),
        }
    }

    /// Whether an entry of `path` reads back under another name than it is written with
    /// (a scheme-less local path outside the location, stored `file://`-qualified).
    pub(crate) fn renames(&self, path: &str) -> bool {
        self.location
            .as_deref()
            .is_some_and(|table| gets_qualified(table, path))
    }

    pub(crate) fn field_type(&self, id: i32) -> Option<&PrimitiveType> {
        self.fields
            .iter()
            .find(|(fid, _, _)| *fid == id)
            .map(|(_, _, t)| t)
    }
}

/// Column metrics of a file (or, on a manifest entry, aggregated over its live files),
/// kept as v3's `data_file` maps with v3's field ids until upstream's typed
/// `content_stats` (146) is settled; see `docs/v4.md`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metrics {
    /// 108
    pub column_sizes: Option<Vec<(i32, i64)>>,
    /// 109
    pub value_counts: Option<Vec<(i32, i64)>>,
    /// 110
    pub null_value_counts: Option<Vec<(i32, i64)>>,
    /// 137
    pub nan_value_counts: Option<Vec<(i32, i64)>>,
    /// 125: Appendix D bytes.
    pub lower_bounds: Option<Vec<(i32, Vec<u8>)>>,
    /// 128
    pub upper_bounds: Option<Vec<(i32, Vec<u8>)>>,
}

impl Metrics {
    pub fn is_empty(&self) -> bool {
        *self == Metrics::default()
    }
}

/// `format-version` of a v4 manifest's key-value metadata.
pub const V4_MANIFEST_FORMAT_VERSION: &str = "4";

/// What a v4 manifest holds, from its key-value metadata `content`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum V4ManifestKind {
    /// The one manifest a snapshot points to: files, their DVs, and leaf manifests.
    Root,
    /// A leaf holding only data files (content type 0).
    DataLeaf,
    /// A leaf holding only delete files (content type 2; DVs sit on data entries).
    DeleteLeaf,
}

impl V4ManifestKind {
    /// The `content` value in the key-value metadata (the v3 names, plus `root`).
    pub fn as_str(self) -> &'static str {
        match self {
            V4ManifestKind::Root => "root",
            V4ManifestKind::DataLeaf => "data",
            V4ManifestKind::DeleteLeaf => "deletes",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "root" => Some(V4ManifestKind::Root),
            "data" => Some(V4ManifestKind::DataLeaf),
            "deletes" => Some(V4ManifestKind::DeleteLeaf),
            _ => None,
        }
    }

    /// Whether an entry of `content` may appear in a manifest of this kind (upstream's
    /// spec draft, PR #16025: manifests only in the root; no position delete files).
    pub fn allows(self, content: ContentType) -> bool {
        match self {
            V4ManifestKind::Root => true,
            V4ManifestKind::DataLeaf => content == ContentType::Data,
            V4ManifestKind::DeleteLeaf => content == ContentType::EqualityDeletes,
        }
    }
}

/// `content_type` (134). Upstream's `FileContent` ids; 1 (position deletes) is not used
/// in v4: a data file's DV sits on its own entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContentType {
    Data,
    EqualityDeletes,
    DataManifest,
    DeleteManifest,
}

impl ContentType {
    pub fn id(self) -> i32 {
        match self {
            ContentType::Data => 0,
            ContentType::EqualityDeletes => 2,
            ContentType::DataManifest => 3,
            ContentType::DeleteManifest => 4,
        }
    }

    pub fn from_id(id: i32) -> Option<Self> {
        match id {
            0 => Some(ContentType::Data),
            2 => Some(ContentType::EqualityDeletes),
            3 => Some(ContentType::DataManifest),
            4 => Some(ContentType::DeleteManifest),
            _ => None,
        }
    }

    pub fn is_manifest(self) -> bool {
        matches!(
            self,
            ContentType::DataManifest | ContentType::DeleteManifest
        )
    }
}

/// `tracking.status` (0). REPLACED and MODIFIED are upstream's (PR #16689): a DV update
/// writes a MODIFIED entry; a file replaced by one with the same data is REPLACED.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrackingStatus {
    Existing,
    Added,
    Deleted,
    Replaced,
    Modified,
}

impl TrackingStatus {
    pub fn id(self) -> i32 {
        match self {
            TrackingStatus::Existing => 0,
            TrackingStatus::Added => 1,
            TrackingStatus::Deleted => 2,
            TrackingStatus::Replaced => 3,
            TrackingStatus::Modified => 4,
        }
    }

    pub fn from_id(id: i32) -> Option<Self> {
        match id {
            0 => Some(TrackingStatus::Existing),
            1 => Some(TrackingStatus::Added),
            2 => Some(TrackingStatus::Deleted),
            3 => Some(TrackingStatus::Replaced),
            4 => Some(TrackingStatus::Modified),
            _ => None,
        }
    }
}

/// `tracking` (147): the entry's lifecycle, kept apart from the file's description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracking {
    pub status: TrackingStatus,
    /// 1: the snapshot that added (or deleted) the entry; inherited when null.
    pub snapshot_id: Option<i64>,
    /// 3: the data sequence number; inherited when null and ADDED.
    pub sequence_number: Option<i64>,
    /// 4: the file sequence number; inherited when null and ADDED.
    pub file_sequence_number: Option<i64>,
    /// 5: the snapshot that last changed the entry's DV.
    pub dv_snapshot_id: Option<i64>,
    /// 142: v3 row lineage; for a data manifest, the first row id of its ADDED files.
    pub first_row_id: Option<i64>,
    /// 6: the positions this snapshot's change to the manifest DV deleted.
    pub deleted_positions: Option<Vec<u8>>,
    /// 7: the positions this snapshot's change to the manifest DV replaced.
    pub replaced_positions: Option<Vec<u8>>,
}

impl Tracking {
    /// A tracking struct with `status` and nothing else (everything inherited).
    pub fn new(status: TrackingStatus) -> Tracking {
        Tracking {
            status,
            snapshot_id: None,
            sequence_number: None,
            file_sequence_number: None,
            dv_snapshot_id: None,
            first_row_id: None,
            deleted_positions: None,
            replaced_positions: None,
        }
    }
}

/// `deletion_vector` (148): a data file's DV, a blob in a Puffin file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletionVector {
    /// 155
    pub location: String,
    /// 144
    pub offset: i64,
    /// 145
    pub size_in_bytes: i64,
    /// 156: the number of deleted positions.
    pub cardinality: i64,
    /// 149
    pub key_metadata: Option<Vec<u8>>,
}

/// `manifest_info` (150): what a data or delete manifest entry summarises, and the
/// manifest's own DV (inline, see `docs/v4.md` for its encoding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestInfo {
    /// 504
    pub added_files_count: i32,
    /// 505
    pub existing_files_count: i32,
    /// 506
    pub deleted_files_count: i32,
    /// 520
    pub replaced_files_count: i32,
    /// 512
    pub added_rows_count: i64,
    /// 513
    pub existing_rows_count: i64,
    /// 514
    pub deleted_rows_count: i64,
    /// 521
    pub replaced_rows_count: i64,
    /// 516
    pub min_sequence_number: i64,
    /// 522: the manifest DV: positions (entry ordinals) of the leaf that are removed;
    /// cumulative over snapshots.
    pub dv: Option<Vec<u8>>,
    /// 523: how many positions `dv` holds; set exactly when `dv` is.
    pub dv_cardinality: Option<i64>,
    /// 507: summaries of the leaf's partition values (its files share one spec, the
    /// entry's `spec_id`), as v3's manifest lists carry them, for pruning leaves.
    pub partitions: Option<Vec<FieldSummary>>,
}

/// One entry of a v4 manifest: a data file, an equality delete file, or (in the root)
/// a data or delete manifest. Upstream's `TrackedFile` field ids and names.
///
/// `partition` (102) is typed per table ([`V4Layout`]); column metrics are kept in
/// v3's maps ([`Metrics`]) rather than upstream's `content_stats` (146), which the reader
/// skips (see `docs/v4.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct TrackedFile {
    /// 147
    pub tracking: Tracking,
    /// 134
    pub content_type: ContentType,
    /// 157: the format version the file (or the referenced manifest) was written with.
    pub format_version: i32,
    /// 100
    pub location: String,
    /// 101: `parquet`, `avro`, `orc`, `puffin`.
    pub file_format: String,
    /// 103
    pub record_count: i64,
    /// 104
    pub file_size_in_bytes: i64,
    /// 141
    pub spec_id: Option<i32>,
    /// 140
    pub sort_order_id: Option<i32>,
    /// 148: only on data entries.
    pub deletion_vector: Option<DeletionVector>,
    /// 150: exactly on manifest entries.
    pub manifest_info: Option<ManifestInfo>,
    /// 131
    pub key_metadata: Option<Vec<u8>>,
    /// 132 (elements 133)
    pub split_offsets: Option<Vec<i64>>,
    /// 135 (elements 136): required for equality deletes, null otherwise.
    pub equality_ids: Option<Vec<i32>>,
    /// 102: the partition values of spec `spec_id`'s fields, in its order (empty when
    /// unpartitioned, and for manifests).
    pub partition: Vec<Option<Literal>>,
    /// Column metrics (v3's maps, v3's field ids).
    pub metrics: Metrics,
}

fn bad(field: &str, message: impl Into<String>) -> Error {
    Error::invalid_metadata(field, message)
}

/// Checks one entry against the rules of a manifest of `kind`. Errors name the field
/// (relative to the entry; callers add `entries[i]` and the file).
pub fn validate_entry(kind: V4ManifestKind, e: &TrackedFile) -> Result<()> {
    let content = e.content_type;
    if !kind.allows(content) {
        let why = match kind {
            V4ManifestKind::Root => "",
            V4ManifestKind::DataLeaf => " (a data leaf holds only data files)",
            V4ManifestKind::DeleteLeaf => " (a delete leaf holds only equality delete files)",
        };
        return Err(bad(
            "content_type",
            format!(
                "content type {} is not allowed in a {} manifest{why}",
                content.id(),
                kind.as_str()
            ),
        ));
    }
    if e.location.is_empty() {
        return Err(bad("location", "must not be empty"));
    }
    if e.record_count < 0 {
        return Err(bad(
            "record_count",
            format!("must not be negative, found {}", e.record_count),
        ));
    }
    if e.file_size_in_bytes < 0 {
        return Err(bad(
            "file_size_in_bytes",
            format!("must not be negative, found {}", e.file_size_in_bytes),
        ));
    }
    if content.is_manifest() {
        let Some(info) = &e.manifest_info else {
            return Err(bad(
                "manifest_info",
                format!("required for content type {}", content.id()),
            ));
        };
        validate_manifest_info(info)?;
        if let (Some(s), Some(f)) = (e.tracking.sequence_number, e.tracking.file_sequence_number) {
            if s != f {
                return Err(bad(
                    "tracking.sequence_number",
                    format!("a manifest entry's sequence number {s} must equal its file sequence number {f}"),
                ));
            }
        }
    } else if e.manifest_info.is_some() {
        return Err(bad(
            "manifest_info",
            format!("must be null for content type {}", content.id()),
        ));
    }
    if let Some(dv) = &e.deletion_vector {
        if content != ContentType::Data {
            return Err(bad(
                "deletion_vector",
                format!(
                    "only data entries carry a DV, not content type {}",
                    content.id()
                ),
            ));
        }
        for (name, v) in [
            ("offset", dv.offset),
            ("size_in_bytes", dv.size_in_bytes),
            ("cardinality", dv.cardinality),
        ] {
            if v < 0 {
                return Err(bad(
                    &format!("deletion_vector.{name}"),
                    format!("must not be negative, found {v}"),
                ));
            }
        }
        if dv.location.is_empty() {
            return Err(bad("deletion_vector.location", "must not be empty"));
        }
    }
    match (content, &e.equality_ids) {
        (ContentType::EqualityDeletes, None) => {
            return Err(bad("equality_ids", "required for equality delete files"))
        }
        (ContentType::EqualityDeletes, Some(_)) | (_, None) => {}
        (_, Some(_)) => {
            return Err(bad(
                "equality_ids",
                format!("must be null for content type {}", content.id()),
            ))
        }
    }
    if e.sort_order_id.is_some() && content.is_manifest() {
        return Err(bad("sort_order_id", "must be null for a manifest entry"));
    }
    if !e.partition.is_empty() && content.is_manifest() {
        return Err(bad(
            "partition",
            "must be null for a manifest entry (its partition summaries are in manifest_info)",
        ));
    }
    Ok(())
}

fn validate_manifest_info(info: &ManifestInfo) -> Result<()> {
    for (name, v) in [
        ("added_files_count", i64::from(info.added_files_count)),
        ("existing_files_count", i64::from(info.existing_files_count)),
        ("deleted_files_count", i64::from(info.deleted_files_count)),
        ("replaced_files_count", i64::from(info.replaced_files_count)),
        ("added_rows_count", info.added_rows_count),
        ("existing_rows_count", info.existing_rows_count),
        ("deleted_rows_count", info.deleted_rows_count),
        ("replaced_rows_count", info.replaced_rows_count),
    ] {
        if v < 0 {
            return Err(bad(
                &format!("manifest_info.{name}"),
                format!("must not be negative, found {v}"),
            ));
        }
    }
    match (&info.dv, info.dv_cardinality) {
        (Some(_), None) => Err(bad(
            "manifest_info.dv_cardinality",
            "required when the manifest has a DV",
        )),
        (None, Some(_)) => Err(bad(
            "manifest_info.dv_cardinality",
            "must be null when the manifest has no DV",
        )),
        (_, Some(n)) if n < 0 => Err(bad(
            "manifest_info.dv_cardinality",
            format!("must not be negative, found {n}"),
        )),
        _ => Ok(()),
    }
}

impl ManifestInfo {
    /// Sets the manifest DV to `positions` (entry ordinals of the leaf), encoded as
    /// icefloe's chosen bitmap (the portable 64-bit Roaring format of `deletion-vector-v1`
    /// blobs, without framing; see `docs/v4.md`), with its cardinality.
    pub fn set_dv(&mut self, positions: impl IntoIterator<Item = i64>) -> Result<()> {
        let dv = crate::puffin::dv::DeletionVector::from_positions(positions)?;
        self.dv_cardinality = Some(i64::try_from(dv.cardinality()).unwrap_or(i64::MAX));
        self.dv = Some(dv.serialize_vector());
        Ok(())
    }

    /// The manifest DV, decoded; `None` without one. Positions must lie below
    /// `record_count` (the leaf's entry count, from its root entry) and the bitmap must
    /// hold `dv_cardinality` positions. Errors name `manifest_info.dv`.
    pub fn decode_dv(
        &self,
        record_count: i64,
    ) -> Result<Option<crate::puffin::dv::DeletionVector>> {
        let Some(bytes) = &self.dv else {
            return Ok(None);
        };
        let dv = crate::puffin::dv::DeletionVector::deserialize_vector(bytes)
            .map_err(|e| bad("manifest_info.dv", format!("not a valid bitmap: {e}")))?;
        let n = i64::try_from(dv.cardinality()).unwrap_or(i64::MAX);
        if Some(n) != self.dv_cardinality {
            return Err(bad(
                "manifest_info.dv_cardinality",
                format!(
                    "the DV holds {n} positions, but dv_cardinality says {:?}",
                    self.dv_cardinality
                ),
            ));
        }
        if let Some(last) = dv.iter().last() {
            if last >= record_count {
                return Err(bad(
                    "manifest_info.dv",
                    format!(
                        "position {last} is out of range: the manifest has {record_count} entries"
                    ),
                ));
            }
        }
        Ok(Some(dv))
    }
}

/// Writes `entries` as a manifest of `kind` with the rules bypassed, so that readers'
/// checks can be tested.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) fn write_unchecked(
    kind: &str,
    entries: &[TrackedFile],
    partitioning: &V4Layout,
) -> Vec<u8> {
    let meta = [
        ("format-version", "4".to_string()),
        ("content", kind.to_string()),
    ];
    let schema = avro::schema_for(partitioning).unwrap();
    let mut w =
        crate::manifest::avro::ContainerWriter::new(&schema, &meta, crate::manifest::Codec::Null);
    for e in entries {
        avro::encode(&mut w.block, e, partitioning).unwrap();
        w.end_object().unwrap();
    }
    w.finish().unwrap()
}
