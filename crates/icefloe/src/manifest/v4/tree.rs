//! A v4 snapshot's metadata tree read in v3's terms: the root manifest's entries with
//! inheritance resolved, its leaves (v4 leaves, or v3 manifests carried over by an
//! upgrade) with their manifest DVs applied, and each file as a v3-shaped
//! [`ManifestEntry`] (a data file's DV becomes a DV delete file targeting it), so that
//! planning and commit validation keep one set of rules for v3 and v4.

use std::collections::HashSet;

use super::{
    visit_v4_manifest_slots, ContentType, DeletionVector, ManifestInfo, Metrics, TrackedFile,
    Tracking, TrackingStatus, V4Layout, V4ManifestKind, V4_MANIFEST_FORMAT_VERSION,
};
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::{
    key_value_metadata, read_manifest, read_manifest_list_bytes, DataContentType, DataFile,
    FileFormat, ManifestContent, ManifestEntry, ManifestFile, ManifestProjection, ManifestSource,
    ManifestStatus, ReadManifestOptions,
};
use crate::spec::snapshot::Snapshot;

/// What a snapshot's `manifest-list` field points to.
pub enum SnapshotTop {
    /// A v3 (or older) manifest list.
    List(Vec<ManifestFile>),
    /// A v4 root manifest, its entries with inheritance resolved.
    Root(Vec<TrackedFile>),
}

/// Whether Avro `bytes` are a v4 root manifest (key-value metadata `format-version` 4).
pub fn is_v4_manifest(bytes: &[u8]) -> Result<bool> {
    let kv = key_value_metadata(bytes)?;
    Ok(kv
        .iter()
        .any(|(k, v)| k == "format-version" && v == V4_MANIFEST_FORMAT_VERSION))
}

/// Reads the file a snapshot points to: a manifest list or (v4) a root manifest. A
/// snapshot of an upgraded table may point to either; the file's own metadata tells.
pub fn read_snapshot_top(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    snapshot: &Snapshot,
) -> Result<SnapshotTop> {
    let Some(path) = &snapshot.manifest_list else {
        return Err(Error::unsupported(format!(
            "snapshot {} embeds its manifests (old v1)",
            snapshot.snapshot_id
        )));
    };
    let bytes = io.read(path)?;
    if !is_v4_manifest(&bytes).map_err(|e| e.in_file(path))? {
        return Ok(SnapshotTop::List(
            read_manifest_list_bytes(&bytes).map_err(|e| e.in_file(path))?,
        ));
    }
    // decoded into one slot and cloned out, cheaper than the value tree of
    // `read_v4_manifest_with` (the root is read on every plan and commit)
    let mut entries = Vec::new();
    let kind = visit_v4_manifest_slots(&bytes, partitioning, None, |_, e| {
        entries.push(e.clone());
        Ok(())
    })
    .map_err(|e| e.in_file(path))?;
    if kind != V4ManifestKind::Root {
        return Err(Error::invalid_metadata(
            "content",
            format!(
                "a snapshot must point to a root manifest, found a {} manifest",
                kind.as_str()
            ),
        )
        .in_file(path));
    }
    for e in &mut entries {
        inherit(
            &mut e.tracking,
            snapshot.snapshot_id,
            snapshot.sequence_number,
        );
    }
    Ok(SnapshotTop::Root(entries))
}

/// v4 inheritance: an ADDED entry without snapshot id or sequence numbers takes those of
/// the manifest that holds it (the snapshot for the root, the root entry for a leaf).
fn inherit(t: &mut Tracking, snapshot_id: i64, sequence_number: i64) {
    if t.snapshot_id.is_none() {
        t.snapshot_id = Some(snapshot_id);
    }
    if t.status == TrackingStatus::Added {
        t.sequence_number.get_or_insert(sequence_number);
        t.file_sequence_number.get_or_insert(sequence_number);
    }
}

/// What a leaf's entry inherits from the root entry pointing to the leaf: snapshot id,
/// sequence numbers ([`inherit`]) and spec id.
fn inherit_from_leaf(e: &mut TrackedFile, leaf: &TrackedFile) {
    inherit(
        &mut e.tracking,
        leaf.tracking.snapshot_id.unwrap_or(0),
        leaf.tracking.sequence_number.unwrap_or(0),
    );
    if e.spec_id.is_none() {
        e.spec_id = leaf.spec_id;
    }
}

/// The manifest DV of root entry `leaf`: the ordinals of its leaf's entries removed since
/// the leaf was written (none without one). Errors name the leaf.
pub fn leaf_manifest_dv(leaf: &TrackedFile) -> Result<Option<crate::puffin::dv::DeletionVector>> {
    let info = leaf.manifest_info.as_ref().ok_or_else(|| {
        Error::invalid_metadata("manifest_info", "required for a manifest entry")
            .in_file(&leaf.location)
    })?;
    info.decode_dv(leaf.record_count)
        .map_err(|e| e.in_file(&leaf.location))
}

/// Whether v4 leaf `leaf` may hold a file a filter keeps, tested as planning tests a
/// leaf: by its partition field summaries with `partitions` (the filter's inclusive
/// projection on the leaf's spec, as a v3 manifest is tested), then by the aggregate
/// column metrics on its root entry (`manifest::v4::stats`, which bound every file of the
/// leaf) with `metrics`, the inclusive metrics evaluator files are tested with (`None`:
/// no metrics test, as planning without a filter). A leaf ruled out holds no such file.
/// Leaves without aggregates (written before they existed, or v3 manifests of an
/// upgraded table) are tested by their summaries alone.
pub fn leaf_may_match(
    partitions: &crate::expr::ManifestEvaluator,
    metrics: Option<&crate::expr::InclusiveMetricsEvaluator>,
    leaf: &TrackedFile,
) -> Result<bool> {
    if !partitions.eval(&as_manifest_file(leaf))? {
        return Ok(false);
    }
    let Some(metrics) = metrics.filter(|_| !leaf.metrics.is_empty()) else {
        return Ok(true);
    };
    let mut f = to_data_file(leaf);
    // the entry's record_count counts the leaf's entries, not rows; any positive count
    // keeps the evaluator's empty-file shortcut out, so only the metrics decide
    f.record_count = 1;
    metrics.eval(&f)
}

/// Whether an entry is part of the table (not DELETED or REPLACED).
pub fn is_live(t: &Tracking) -> bool {
    !matches!(t.status, TrackingStatus::Deleted | TrackingStatus::Replaced)
}

/// The v3 status an entry reads as: MODIFIED (a DV change) is EXISTING data.
fn v3_status(status: TrackingStatus) -> ManifestStatus {
    match status {
        TrackingStatus::Added => ManifestStatus::Added,
        TrackingStatus::Existing | TrackingStatus::Modified => ManifestStatus::Existing,
        TrackingStatus::Deleted | TrackingStatus::Replaced => ManifestStatus::Deleted,
    }
}

/// A file entry (data or equality deletes) as a v3 data file.
pub fn to_data_file(e: &TrackedFile) -> DataFile {
    let content = match e.content_type {
        ContentType::EqualityDeletes => DataContentType::EqualityDeletes,
        _ => DataContentType::Data,
    };
    let m = &e.metrics;
    DataFile {
        content,
        file_path: e.location.clone(),
        file_format: FileFormat::parse(&e.file_format),
        partition: e.partition.clone(),
        record_count: e.record_count,
        file_size_in_bytes: e.file_size_in_bytes,
        column_sizes: m.column_sizes.clone(),
        value_counts: m.value_counts.clone(),
        null_value_counts: m.null_value_counts.clone(),
        nan_value_counts: m.nan_value_counts.clone(),
        lower_bounds: m.lower_bounds.clone(),
        upper_bounds: m.upper_bounds.clone(),
        key_metadata: e.key_metadata.clone(),
        split_offsets: e.split_offsets.clone(),
        equality_ids: e.equality_ids.clone(),
        sort_order_id: e.sort_order_id,
        first_row_id: match content {
            DataContentType::Data => e.tracking.first_row_id,
            _ => None,
        },
        referenced_data_file: None,
        content_offset: None,
        content_size_in_bytes: None,
    }
}

/// A data entry's DV as the v3 DV delete file that targets it. A v4 `deletion_vector`
/// does not record the size of its Puffin file, so `file_size_in_bytes` is
/// [`crate::puffin::dv::UNKNOWN_DV_FILE_SIZE`] (no Puffin file is empty); readers then check the blob on its
/// own (`puffin::read_entry_deletion_vector`).
pub fn dv_data_file(e: &TrackedFile, dv: &DeletionVector) -> DataFile {
    let mut f = DataFile::new(
        DataContentType::PositionDeletes,
        dv.location.clone(),
        FileFormat::Puffin,
        e.partition.clone(),
        dv.cardinality,
        crate::puffin::dv::UNKNOWN_DV_FILE_SIZE,
    );
    f.referenced_data_file = Some(e.location.clone());
    f.content_offset = Some(dv.offset);
    f.content_size_in_bytes = Some(dv.size_in_bytes);
    f.key_metadata = dv.key_metadata.clone();
    f
}

/// A v3 DV delete file as the `deletion_vector` of its data entry.
pub fn dv_of(f: &DataFile) -> Result<DeletionVector> {
    match (f.content_offset, f.content_size_in_bytes) {
        (Some(offset), Some(size)) => Ok(DeletionVector {
            location: f.file_path.clone(),
            offset,
            size_in_bytes: size,
            cardinality: f.record_count,
            key_metadata: f.key_metadata.clone(),
        }),
        _ => Err(Error::invalid_argument(format!(
            "{}: a DV needs content_offset and content_size_in_bytes",
            f.file_path
        ))),
    }
}

/// A v3 data or equality delete file as a v4 entry with `tracking`.
pub fn from_data_file(f: &DataFile, spec_id: i32, tracking: Tracking) -> Result<TrackedFile> {
    let content_type = match f.content {
        DataContentType::Data => ContentType::Data,
        DataContentType::EqualityDeletes => ContentType::EqualityDeletes,
        DataContentType::PositionDeletes => {
            return Err(Error::invalid_argument(format!(
            "{}: a v4 table holds no position delete files (a DV sits on its data file's entry)",
            f.file_path
        )))
        }
    };
    let mut tracking = tracking;
    if content_type == ContentType::Data && tracking.first_row_id.is_none() {
        tracking.first_row_id = f.first_row_id;
    }
    Ok(TrackedFile {
        tracking,
        content_type,
        format_version: 4,
        location: f.file_path.clone(),
        file_format: f.file_format.as_str().to_ascii_lowercase(),
        record_count: f.record_count,
        file_size_in_bytes: f.file_size_in_bytes,
        spec_id: Some(spec_id),
        sort_order_id: f.sort_order_id,
        deletion_vector: None,
        manifest_info: None,
        key_metadata: f.key_metadata.clone(),
        split_offsets: f.split_offsets.clone(),
        equality_ids: f.equality_ids.clone(),
        partition: f.partition.clone(),
        metrics: Metrics {
            column_sizes: f.column_sizes.clone(),
            value_counts: f.value_counts.clone(),
            null_value_counts: f.null_value_counts.clone(),
            nan_value_counts: f.nan_value_counts.clone(),
            lower_bounds: f.lower_bounds.clone(),
            upper_bounds: f.upper_bounds.clone(),
        },
    })
}

/// A v3 manifest list row as a root entry (the upgrade: the list's manifests become the
/// root's leaves, EXISTING, with no DV).
pub fn from_manifest_file(m: &ManifestFile) -> TrackedFile {
    let added = m.added_files_count.unwrap_or(0);
    let existing = m.existing_files_count.unwrap_or(0);
    let deleted = m.deleted_files_count.unwrap_or(0);
    let mut tracking = Tracking::new(TrackingStatus::Existing);
    tracking.snapshot_id = Some(m.added_snapshot_id);
    tracking.sequence_number = Some(m.sequence_number);
    tracking.file_sequence_number = Some(m.sequence_number);
    tracking.first_row_id = m.first_row_id;
    TrackedFile {
        tracking,
        content_type: match m.content {
            ManifestContent::Data => ContentType::DataManifest,
            ManifestContent::Deletes => ContentType::DeleteManifest,
        },
        format_version: 3,
        location: m.manifest_path.clone(),
        file_format: "avro".to_string(),
        // a leaf's entry count, which bounds the positions its manifest DV may hold
        record_count: i64::from(added) + i64::from(existing) + i64::from(deleted),
        file_size_in_bytes: m.manifest_length,
        spec_id: Some(m.partition_spec_id),
        sort_order_id: None,
        deletion_vector: None,
        manifest_info: Some(ManifestInfo {
            added_files_count: added,
            existing_files_count: existing,
            deleted_files_count: deleted,
            replaced_files_count: 0,
            added_rows_count: m.added_rows_count.unwrap_or(0),
            existing_rows_count: m.existing_rows_count.unwrap_or(0),
            deleted_rows_count: m.deleted_rows_count.unwrap_or(0),
            replaced_rows_count: 0,
            min_sequence_number: m.min_sequence_number,
            dv: None,
            dv_cardinality: None,
            partitions: m.partitions.clone(),
        }),
        key_metadata: m.key_metadata.clone(),
        split_offsets: None,
        equality_ids: None,
        partition: Vec::new(),
        metrics: Metrics::default(),
    }
}

/// A root's leaf entry as the manifest list row v3 code reads a manifest with (its
/// snapshot id and sequence numbers are what the leaf's entries inherit).
pub fn as_manifest_file(e: &TrackedFile) -> ManifestFile {
    let info = e.manifest_info.as_ref();
    let seq = e.tracking.sequence_number.unwrap_or(0);
    ManifestFile {
        manifest_path: e.location.clone(),
        manifest_length: e.file_size_in_bytes,
        partition_spec_id: e.spec_id.unwrap_or(0),
        content: match e.content_type {
            ContentType::DeleteManifest => ManifestContent::Deletes,
            _ => ManifestContent::Data,
        },
        sequence_number: seq,
        min_sequence_number: info.map_or(seq, |i| i.min_sequence_number),
        added_snapshot_id: e.tracking.snapshot_id.unwrap_or(0),
        added_files_count: info.map(|i| i.added_files_count),
        existing_files_count: info.map(|i| i.existing_files_count),
        deleted_files_count: info.map(|i| i.deleted_files_count),
        added_rows_count: info.map(|i| i.added_rows_count),
        existing_rows_count: info.map(|i| i.existing_rows_count),
        deleted_rows_count: info.map(|i| i.deleted_rows_count),
        partitions: info.and_then(|i| i.partitions.clone()),
        key_metadata: e.key_metadata.clone(),
        first_row_id: e.tracking.first_row_id,
    }
}

/// One entry of a leaf, in v3's shape, with its ordinal (the position a manifest DV
/// addresses) and, for a v4 leaf, the entry itself.
#[derive(Debug, Clone)]
pub struct LeafItem {
    pub ordinal: usize,
    pub entry: ManifestEntry,
    /// The v4 entry (v4 leaves only), whose DV is on it.
    pub tracked: Option<TrackedFile>,
}

/// The live entries of the leaf that root entry `leaf` points to, less those its
/// manifest DV removes. v4 leaves are read as v4 manifests (a leaf holding manifests is
/// an error: depth ≤ 2); leaves written before an upgrade (`format_version` < 4) are v3
/// manifests. Errors name the leaf.
pub fn read_leaf(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    leaf: &TrackedFile,
) -> Result<Vec<LeafItem>> {
    read_leaf_projected(io, partitioning, leaf, None)
}

/// As [`read_leaf`], decoding only the column metrics `projection` asks for (v3's
/// manifest projection; all of them without one), as a planner reads a leaf.
pub fn read_leaf_projected(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    leaf: &TrackedFile,
    projection: Option<&ManifestProjection>,
) -> Result<Vec<LeafItem>> {
    let dv = leaf_manifest_dv(leaf)?;
    let removed = |i: usize| dv.as_ref().is_some_and(|d| d.contains(i as i64));
    if leaf.format_version >= 4 {
        let mut out = Vec::new();
        visit_leaf(io, partitioning, leaf, projection, |i, e| {
            out.push(LeafItem {
                ordinal: i,
                entry: v3_entry(e),
                tracked: Some(e.clone()),
            });
            Ok(())
        })?;
        return Ok(out);
    }
    let bytes = io.read(&leaf.location)?;
    let mut out = Vec::new();
    let mf = as_manifest_file(leaf);
    let mut options = ReadManifestOptions::default().inherit_from(&mf);
    if let Some(p) = projection {
        options = options.projection(p);
    }
    let m = read_manifest(ManifestSource::Bytes(&bytes), &options)
        .map_err(|e| e.in_file(&leaf.location))?;
    for (i, e) in m.entries.into_iter().enumerate() {
        if e.is_live() && !removed(i) {
            out.push(LeafItem {
                ordinal: i,
                entry: e,
                tracked: None,
            });
        }
    }
    Ok(out)
}

/// The live entries of the v4 leaf (`format_version` 4) that root entry `leaf` points
/// to, less those its manifest DV removes, with inheritance from the root entry applied
/// (snapshot id, sequence numbers, spec id), each handed to `visit` with its ordinal in
/// one reused slot ([`super::visit_v4_manifest_slots`]): a planner tests an entry in
/// place and takes out only what it keeps. Only the column metrics `projection` asks for
/// are decoded (all without one). Errors name the leaf.
pub fn visit_leaf(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    leaf: &TrackedFile,
    projection: Option<&ManifestProjection>,
    visit: impl FnMut(usize, &mut TrackedFile) -> Result<()>,
) -> Result<()> {
    if leaf.format_version < 4 {
        return Err(Error::invalid_argument(format!(
            "{}: a leaf of format version {} is a v3 manifest, not a v4 leaf",
            leaf.location, leaf.format_version
        )));
    }
    let bytes = io.read(&leaf.location)?;
    visit_leaf_bytes(&bytes, partitioning, leaf, projection, visit)
}

/// [`visit_leaf`] on the leaf's bytes, read by the caller (a planner that also takes the
/// leaf's block spans from them).
pub fn visit_leaf_bytes(
    bytes: &[u8],
    partitioning: &V4Layout,
    leaf: &TrackedFile,
    projection: Option<&ManifestProjection>,
    mut visit: impl FnMut(usize, &mut TrackedFile) -> Result<()>,
) -> Result<()> {
    if leaf.format_version < 4 {
        return Err(Error::invalid_argument(format!(
            "{}: a leaf of format version {} is a v3 manifest, not a v4 leaf",
            leaf.location, leaf.format_version
        )));
    }
    let dv = leaf_manifest_dv(leaf)?;
    let kind = visit_v4_manifest_slots(bytes, partitioning, projection, |i, e| {
        if !is_live(&e.tracking) || dv.as_ref().is_some_and(|d| d.contains(i as i64)) {
            return Ok(());
        }
        inherit_from_leaf(e, leaf);
        visit(i, e)
    })
    .map_err(|e| e.in_file(&leaf.location))?;
    check_leaf_kind(leaf, kind)
}

/// A leaf must be the kind of manifest its root entry says it is (data or deletes).
fn check_leaf_kind(leaf: &TrackedFile, kind: V4ManifestKind) -> Result<()> {
    let expected = match leaf.content_type {
        ContentType::DeleteManifest => V4ManifestKind::DeleteLeaf,
        _ => V4ManifestKind::DataLeaf,
    };
    if kind != expected {
        return Err(Error::invalid_metadata(
            "content",
            format!(
                "the root lists this manifest as content type {}, but it is a {} manifest",
                leaf.content_type.id(),
                kind.as_str()
            ),
        )
        .in_file(&leaf.location));
    }
    Ok(())
}

/// A v4 file entry in the decoding slot as a v3 manifest entry (its DV left aside), its
/// strings, lists and maps moved out of the slot rather than copied; [`restore_v3_entry`]
/// puts them back for an entry the caller does not keep.
pub fn take_v3_entry(e: &mut TrackedFile) -> ManifestEntry {
    let content = match e.content_type {
        ContentType::EqualityDeletes => DataContentType::EqualityDeletes,
        _ => DataContentType::Data,
    };
    let m = &mut e.metrics;
    let data_file = DataFile {
        content,
        file_path: std::mem::take(&mut e.location),
        file_format: FileFormat::parse(&e.file_format),
        partition: std::mem::take(&mut e.partition),
        record_count: e.record_count,
        file_size_in_bytes: e.file_size_in_bytes,
        column_sizes: m.column_sizes.take(),
        value_counts: m.value_counts.take(),
        null_value_counts: m.null_value_counts.take(),
        nan_value_counts: m.nan_value_counts.take(),
        lower_bounds: m.lower_bounds.take(),
        upper_bounds: m.upper_bounds.take(),
        key_metadata: e.key_metadata.take(),
        split_offsets: e.split_offsets.take(),
        equality_ids: e.equality_ids.take(),
        sort_order_id: e.sort_order_id,
        first_row_id: match content {
            DataContentType::Data => e.tracking.first_row_id,
            _ => None,
        },
        referenced_data_file: None,
        content_offset: None,
        content_size_in_bytes: None,
    };
    ManifestEntry {
        status: v3_status(e.tracking.status),
        snapshot_id: e.tracking.snapshot_id,
        sequence_number: e.tracking.sequence_number,
        file_sequence_number: e.tracking.file_sequence_number,
        data_file,
    }
}

/// Puts the parts [`take_v3_entry`] moved out of the slot back, so that the next entry
/// refills them instead of allocating.
pub fn restore_v3_entry(e: &mut TrackedFile, entry: ManifestEntry) {
    let f = entry.data_file;
    let m = &mut e.metrics;
    e.location = f.file_path;
    e.partition = f.partition;
    m.column_sizes = f.column_sizes;
    m.value_counts = f.value_counts;
    m.null_value_counts = f.null_value_counts;
    m.nan_value_counts = f.nan_value_counts;
    m.lower_bounds = f.lower_bounds;
    m.upper_bounds = f.upper_bounds;
    e.key_metadata = f.key_metadata;
    e.split_offsets = f.split_offsets;
    e.equality_ids = f.equality_ids;
}

/// Where a live file of a v4 snapshot sits in its metadata tree, as planning found it:
/// in the root manifest itself, or at entry `ordinal` (the position a manifest DV
/// addresses) of the leaf at `manifest`. A row-level write passes it back with the files
/// it changes ([`crate::commit::SnapshotProducer::data_file_position`]), so that its commit
/// reads that one entry instead of searching the leaves.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TreePosition {
    Root,
    Leaf {
        /// The leaf's location (shared by every file planned from it).
        manifest: std::sync::Arc<str>,
        ordinal: i64,
        /// The Avro block holding the entry, as the plan found it: with it, the commit
        /// reads the leaf only up to that block's end, by one ranged read, instead of the
        /// whole leaf ([`super::leaf_block`]). `None` when unknown (a position given by
        /// ordinal only).
        block: Option<LeafBlock>,
    },
}

/// Where a leaf entry's Avro block sits in the leaf file, as the plan that decoded it saw
/// it. Checked, never trusted ([`super::leaf_block`]): a span that is not a block of the
/// leaf holding the entry makes the commit read the leaf whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeafBlock {
    /// The block's byte offset in the file (where its object count starts).
    pub offset: u64,
    /// Its length in bytes, through its sync marker.
    pub length: u64,
}

/// The live entries at `ordinals` of the leaf that root entry `leaf` points to, as
/// [`read_leaf`] gives them: an ordinal past the leaf's entries, removed by its manifest
/// DV, or of a DELETED entry has none. Only the blocks holding them are decoded (and, in
/// a v3 manifest whose entries inherit first row ids, the entries before them with the
/// minimal projection). Errors name the leaf.
pub fn read_leaf_entries(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    leaf: &TrackedFile,
    ordinals: &[usize],
) -> Result<Vec<LeafItem>> {
    let wanted = not_removed(leaf, ordinals)?;
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let bytes = io.read(&leaf.location)?;
    Ok(live_items(
        leaf,
        leaf_entries_at(&bytes, partitioning, leaf, &wanted)?,
    ))
}

/// `ordinals` less those the leaf's manifest DV removes.
pub(super) fn not_removed(leaf: &TrackedFile, ordinals: &[usize]) -> Result<Vec<usize>> {
    let dv = leaf_manifest_dv(leaf)?;
    let removed = |i: usize| dv.as_ref().is_some_and(|d| d.contains(i as i64));
    Ok(ordinals.iter().copied().filter(|i| !removed(*i)).collect())
}

/// Entries of a leaf by ordinal, as its format decodes them.
pub(super) enum LeafEntries {
    V4(Vec<(usize, TrackedFile)>),
    V3(Vec<(usize, ManifestEntry)>),
}

impl LeafEntries {
    pub(super) fn len(&self) -> usize {
        match self {
            LeafEntries::V4(v) => v.len(),
            LeafEntries::V3(v) => v.len(),
        }
    }
}

/// A leaf's entries at `ordinals` (live or not) from `bytes`: the leaf file, or its
/// first bytes up to the end of a block. Errors name the leaf.
pub(super) fn leaf_entries_at(
    bytes: &[u8],
    partitioning: &V4Layout,
    leaf: &TrackedFile,
    ordinals: &[usize],
) -> Result<LeafEntries> {
    if leaf.format_version >= 4 {
        let (kind, entries) = super::v4_entries_at(bytes, &leaf.location, partitioning, ordinals)?;
        check_leaf_kind(leaf, kind)?;
        return Ok(LeafEntries::V4(entries));
    }
    let mf = as_manifest_file(leaf);
    let entries = crate::manifest::reader::manifest_entries_at(bytes, Some(&mf), ordinals)
        .map_err(|e| e.in_file(&leaf.location))?;
    Ok(LeafEntries::V3(entries))
}

/// The live ones of a leaf's entries, as [`read_leaf`] gives them.
pub(super) fn live_items(leaf: &TrackedFile, entries: LeafEntries) -> Vec<LeafItem> {
    let mut out = Vec::new();
    match entries {
        LeafEntries::V4(entries) => {
            for (i, mut e) in entries {
                if !is_live(&e.tracking) {
                    continue;
                }
                inherit_from_leaf(&mut e, leaf);
                out.push(LeafItem {
                    ordinal: i,
                    entry: v3_entry(&e),
                    tracked: Some(e),
                });
            }
        }
        LeafEntries::V3(entries) => {
            for (i, e) in entries {
                if e.is_live() {
                    out.push(LeafItem {
                        ordinal: i,
                        entry: e,
                        tracked: None,
                    });
                }
            }
        }
    }
    out
}

/// A v4 file entry as a v3 manifest entry (its DV left aside).
pub fn v3_entry(e: &TrackedFile) -> ManifestEntry {
    ManifestEntry {
        status: v3_status(e.tracking.status),
        snapshot_id: e.tracking.snapshot_id,
        sequence_number: e.tracking.sequence_number,
        file_sequence_number: e.tracking.file_sequence_number,
        data_file: to_data_file(e),
    }
}

/// A data entry's DV as a v3 manifest entry: ADDED by the snapshot that last set it,
/// with the data file's sequence number (a DV always applies to its own file).
pub fn v3_dv_entry(e: &TrackedFile, dv: &DeletionVector) -> ManifestEntry {
    let added_now =
        e.tracking.dv_snapshot_id.is_some() && e.tracking.dv_snapshot_id == e.tracking.snapshot_id;
    ManifestEntry {
        status: if added_now || e.tracking.status == TrackingStatus::Added {
            ManifestStatus::Added
        } else {
            ManifestStatus::Existing
        },
        snapshot_id: e.tracking.dv_snapshot_id.or(e.tracking.snapshot_id),
        sequence_number: e.tracking.sequence_number,
        file_sequence_number: e.tracking.file_sequence_number,
        data_file: dv_data_file(e, dv),
    }
}

/// Every live file of a snapshot in v3's shape: (content, spec id, entry). A v4 data
/// file's DV is a delete entry of its own. Used by commit validation, which reads whole
/// snapshots.
pub fn live_entries(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    snapshot: &Snapshot,
) -> Result<Vec<(ManifestContent, i32, ManifestEntry)>> {
    let mut out = Vec::new();
    match read_snapshot_top(io, partitioning, snapshot)? {
        SnapshotTop::List(list) => {
            for mf in list {
                let m = read_manifest(
                    ManifestSource::file(io, &mf.manifest_path),
                    &ReadManifestOptions::default().inherit_from(&mf),
                )?;
                for e in m.entries.into_iter().filter(ManifestEntry::is_live) {
                    out.push((mf.content, mf.partition_spec_id, e));
                }
            }
        }
        SnapshotTop::Root(root) => {
            for e in root.iter().filter(|e| is_live(&e.tracking)) {
                if e.content_type.is_manifest() {
                    let content = match e.content_type {
                        ContentType::DeleteManifest => ManifestContent::Deletes,
                        _ => ManifestContent::Data,
                    };
                    for item in read_leaf(io, partitioning, e)? {
                        let spec = item
                            .tracked
                            .as_ref()
                            .and_then(|t| t.spec_id)
                            .or(e.spec_id)
                            .unwrap_or(0);
                        push_file(&mut out, content, spec, item.entry, item.tracked.as_ref());
                    }
                } else {
                    push_file(
                        &mut out,
                        ManifestContent::Data,
                        e.spec_id.unwrap_or(0),
                        v3_entry(e),
                        Some(e),
                    );
                }
            }
        }
    }
    Ok(out)
}

fn push_file(
    out: &mut Vec<(ManifestContent, i32, ManifestEntry)>,
    content: ManifestContent,
    spec: i32,
    entry: ManifestEntry,
    tracked: Option<&TrackedFile>,
) {
    let content = match entry.data_file.content {
        DataContentType::Data => ManifestContent::Data,
        _ if tracked.is_some() => ManifestContent::Deletes,
        _ => content,
    };
    out.push((content, spec, entry));
    if let Some(t) = tracked {
        if let Some(dv) = &t.deletion_vector {
            out.push((ManifestContent::Deletes, spec, v3_dv_entry(t, dv)));
        }
    }
}

/// The files snapshot `s` itself added (status ADDED with its id; a DV it set reads as
/// an added delete file) or removed (DELETED, including leaf entries its manifest DV
/// change removed), in v3's shape: what commit validation looks for in the history.
pub fn snapshot_changes(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    s: &Snapshot,
) -> Result<Vec<(ManifestContent, i32, ManifestEntry)>> {
    let SnapshotTop::Root(root) = read_snapshot_top(io, partitioning, s)? else {
        return Err(Error::unsupported("snapshot_changes reads v4 roots only"));
    };
    root_changes(io, partitioning, s, &root)
}

/// [`snapshot_changes`] without the leaf entries the snapshot's manifest DV changes
/// removed: finding those reads each such leaf whole, which a caller that looks only for
/// added files (commit validation's new data files and new deletes) does not need.
pub fn snapshot_additions(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    s: &Snapshot,
) -> Result<Vec<(ManifestContent, i32, ManifestEntry)>> {
    let SnapshotTop::Root(root) = read_snapshot_top(io, partitioning, s)? else {
        return Err(Error::unsupported("snapshot_changes reads v4 roots only"));
    };
    changes(io, partitioning, s, &root, false)
}

/// [`snapshot_changes`] of a root already read (`root`: snapshot `s`'s entries).
pub fn root_changes(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    s: &Snapshot,
    root: &[TrackedFile],
) -> Result<Vec<(ManifestContent, i32, ManifestEntry)>> {
    changes(io, partitioning, s, root, true)
}

fn changes(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    s: &Snapshot,
    root: &[TrackedFile],
    with_leaf_removals: bool,
) -> Result<Vec<(ManifestContent, i32, ManifestEntry)>> {
    let id = s.snapshot_id;
    let mut out = Vec::new();
    for e in root {
        let mine = e.tracking.snapshot_id == Some(id);
        if e.content_type.is_manifest() {
            let content = match e.content_type {
                ContentType::DeleteManifest => ManifestContent::Deletes,
                _ => ManifestContent::Data,
            };
            if mine && e.tracking.status == TrackingStatus::Added {
                for item in read_leaf(io, partitioning, e)? {
                    if item.entry.snapshot_id == Some(id) {
                        let spec = e.spec_id.unwrap_or(0);
                        push_file(&mut out, content, spec, item.entry, item.tracked.as_ref());
                    }
                }
            }
            let deleted: HashSet<i64> = match &e.tracking.deleted_positions {
                Some(b) if with_leaf_removals && e.tracking.dv_snapshot_id == Some(id) => {
                    crate::puffin::dv::DeletionVector::deserialize_vector(b)
                        .map_err(|err| {
                            Error::invalid_metadata(
                                "tracking.deleted_positions",
                                format!("not a valid bitmap: {err}"),
                            )
                            .in_file(&e.location)
                        })?
                        .iter()
                        .collect()
                }
                _ => HashSet::new(),
            };
            if !deleted.is_empty() {
                // the leaf as it was before this snapshot's DV change
                let mut before = e.clone();
                if let Some(info) = before.manifest_info.as_mut() {
                    info.dv = None;
                    info.dv_cardinality = None;
                }
                for mut item in read_leaf(io, partitioning, &before)? {
                    if deleted.contains(&(item.ordinal as i64)) {
                        item.entry.status = ManifestStatus::Deleted;
                        item.entry.snapshot_id = Some(id);
                        out.push((content, e.spec_id.unwrap_or(0), item.entry));
                    }
                }
            }
            continue;
        }
        let spec = e.spec_id.unwrap_or(0);
        match e.tracking.status {
            TrackingStatus::Added if mine => {
                push_file(&mut out, ManifestContent::Data, spec, v3_entry(e), Some(e))
            }
            TrackingStatus::Deleted | TrackingStatus::Replaced if mine => {
                let mut entry = v3_entry(e);
                entry.status = ManifestStatus::Deleted;
                let content = match e.content_type {
                    ContentType::Data => ManifestContent::Data,
                    _ => ManifestContent::Deletes,
                };
                out.push((content, spec, entry));
            }
            _ => {
                if e.tracking.dv_snapshot_id == Some(id) {
                    if let Some(dv) = &e.deletion_vector {
                        let mut d = v3_dv_entry(e, dv);
                        d.status = ManifestStatus::Added;
                        out.push((ManifestContent::Deletes, spec, d));
                    }
                }
            }
        }
    }
    Ok(out)
}
