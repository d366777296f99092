//! Dangling delete files: live delete files that can no longer apply to any live data file,
//! found as Java's `RemoveDanglingDeletesSparkAction` (`SparkActions.removeDanglingDeleteFiles`,
//! and the `remove-dangling-deletes` option of `rewrite_data_files`) finds them:
//!
//! - per spec and partition, the smallest data sequence number of its live data files;
//! - a delete file of a partition without live data files dangles; a position delete file
//!   (or DV) whose sequence number is below that minimum dangles (it can only apply to older
//!   data files); an equality delete file at or below it dangles (it applies only to data
//!   files with a smaller sequence number);
//! - a DV whose referenced data file is not live dangles.
//!
//! A table with one spec that is unpartitioned has none (Java: every commit already drops
//! delete files older than all data files there). The caller commits their removal
//! (a `replace` snapshot, Java's `RewriteFiles.deleteFile`).

use std::collections::{HashMap, HashSet};

use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::{
    read_manifest, read_manifest_list, DataContentType, DataFile, FileFormat, ManifestEntry,
    ManifestFile, ManifestProjection, ManifestSource, ReadManifestOptions,
};
use crate::scan::partition_key::PartitionKey;
use crate::spec::table_metadata::TableMetadata;

/// A live delete file that applies to no live data file.
#[derive(Debug, Clone, PartialEq)]
pub struct DanglingDelete {
    pub spec_id: i32,
    /// Its data sequence number.
    pub sequence_number: i64,
    pub file: DataFile,
}

/// The manifests of a manifest list, each with its entries decoded with the minimal
/// projection (paths, partitions, sequence numbers), read on parallel threads: what the
/// delete-maintenance planners look at.
pub(crate) fn read_manifests_minimal(
    io: &dyn FileIO,
    list: &str,
) -> Result<Vec<(ManifestFile, Vec<ManifestEntry>)>> {
    let manifests: Vec<ManifestFile> = read_manifest_list(io, list)?;
    let projection = ManifestProjection::minimal();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let entries = crate::parallel::map_indexed(
        threads,
        manifests.len(),
        "a thread reading manifests panicked",
        "reading manifests stopped",
        |i| {
            let m = &manifests[i];
            let options = ReadManifestOptions::default()
                .projection(&projection)
                .inherit_from(m);
            let manifest = read_manifest(ManifestSource::file(io, &m.manifest_path), &options)?;
            Ok(manifest.entries)
        },
    )?;
    Ok(manifests.into_iter().zip(entries).collect())
}

/// The dangling delete files of the snapshot `snapshot_id` (default: the current one), in
/// manifest order.
pub fn find_dangling_deletes(
    io: &dyn FileIO,
    metadata: &TableMetadata,
    snapshot_id: Option<i64>,
) -> Result<Vec<DanglingDelete>> {
    let snapshot = match snapshot_id {
        Some(id) => Some(metadata.snapshot_by_id(id).ok_or_else(|| {
            Error::invalid_argument(format!("table has no snapshot with id {id}"))
        })?),
        None => metadata.current_snapshot(),
    };
    let Some(snapshot) = snapshot else {
        return Ok(Vec::new());
    };
    let unpartitioned = metadata.partition_specs.len() == 1
        && metadata.default_spec().is_some_and(|s| s.fields.is_empty());
    if unpartitioned {
        return Ok(Vec::new());
    }
    let Some(list) = snapshot.manifest_list.as_deref() else {
        return Ok(Vec::new());
    };
    let read = read_manifests_minimal(io, list)?;

    let mut min_data_sequence: HashMap<PartitionKey, i64> = HashMap::new();
    let mut live_data: HashSet<String> = HashSet::new();
    let mut deletes: Vec<DanglingDelete> = Vec::new();
    for (
        ManifestFile {
            partition_spec_id: spec_id,
            ..
        },
        entries,
    ) in read
    {
        for e in entries.into_iter().filter(|e| e.is_live()) {
            let seq = e.sequence_number.ok_or_else(|| {
                Error::invalid_metadata(
                    "sequence_number",
                    format!(
                        "the live entry of {} has no data sequence number",
                        e.data_file.file_path
                    ),
                )
            })?;
            if e.data_file.content == DataContentType::Data {
                let key = PartitionKey::new(spec_id, e.data_file.partition.clone())?;
                let min = min_data_sequence.entry(key).or_insert(seq);
                *min = (*min).min(seq);
                live_data.insert(e.data_file.file_path);
            } else {
                deletes.push(DanglingDelete {
                    spec_id,
                    sequence_number: seq,
                    file: e.data_file,
                });
            }
        }
    }
    Ok(deletes
        .into_iter()
        .filter(|d| {
            let min = min_data_sequence
                .get(PartitionKey::lookup(d.spec_id, &d.file.partition).as_dyn())
                .copied();
            let by_partition = match (min, d.file.content) {
                (None, _) => true,
                (Some(min), DataContentType::PositionDeletes) => d.sequence_number < min,
                (Some(min), DataContentType::EqualityDeletes) => d.sequence_number <= min,
                (Some(_), DataContentType::Data) => false,
            };
            let dangling_dv = d.file.file_format == FileFormat::Puffin
                && d.file
                    .referenced_data_file
                    .as_ref()
                    .is_some_and(|r| !live_data.contains(r));
            by_partition || dangling_dv
        })
        .collect())
}
