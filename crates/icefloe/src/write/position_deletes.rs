//! Deleting rows of data files by position ("Position Delete Files", "Deletion Vectors"):
//! the delete files a row delta adds, and the ones it replaces.
//!
//! v3: one DV per data file. A new DV holds the new positions merged with the data file's
//! live DV and with its rows deleted by position delete files (the spec's writer rule);
//! the old DV and the position delete files scoped to that one data file are replaced.
//! v2: a position delete file per data file (file-scoped, Java's default `file`
//! granularity); its Parquet is written by the caller, this module makes its row.
//!
//! What applies to a data file is what a row-level scan planned for it, when the writer is
//! handed that ([`super::scanned_deletes`]: the Spark connector's executors), else it is
//! read from a snapshot's manifests ([`deletes_for`]: the live DV that references it, and
//! position delete files of its spec and partition whose data sequence number is not
//! older than the data file's, scoped to it or to the whole partition).

use std::collections::{HashMap, HashSet};

use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::v4::tree::live_entries;
use crate::manifest::v4::V4Layout;
use crate::manifest::{DataContentType, DataFile, FileFormat, ManifestContent, ManifestEntry};
use crate::puffin::dv::deletion_vector_blob;
use crate::puffin::{read_entry_deletion_vector, DeletionVector, DvEntry, PuffinWriter};
use crate::spec::schema::reserved;
use crate::spec::snapshot::Snapshot;
use crate::spec::table_metadata::TableMetadata;

/// A live data file and the deletes that apply to it.
#[derive(Debug, Clone)]
pub struct DataFileDeletes {
    pub spec_id: i32,
    pub data: ManifestEntry,
    /// Its deletion vector (v3).
    pub dv: Option<DataFile>,
    /// Position delete files (not DVs) that may hold positions of it.
    pub position_files: Vec<DataFile>,
}

fn is_dv(f: &DataFile) -> bool {
    f.content == DataContentType::PositionDeletes && f.file_format == FileFormat::Puffin
}

/// The data files at `paths` in `snapshot` (the table's current one when `None`) with
/// the deletes that apply to each. A path that is not a live data file is an error.
pub fn deletes_for(
    io: &dyn FileIO,
    md: &TableMetadata,
    snapshot: Option<&Snapshot>,
    paths: &[String],
) -> Result<HashMap<String, DataFileDeletes>> {
    let snapshot = match snapshot.or_else(|| md.current_snapshot()) {
        Some(s) => s,
        None => {
            return Err(Error::invalid_argument(format!(
                "the table has no snapshot, so no data file {}",
                paths.first().map_or("", String::as_str)
            )))
        }
    };
    let wanted: HashSet<&str> = paths.iter().map(String::as_str).collect();
    let mut out: HashMap<String, DataFileDeletes> = HashMap::new();
    let mut deletes: Vec<(i32, ManifestEntry)> = Vec::new();
    // a manifest list, or a v4 root and its leaves, in v3's shape (the partition type
    // only serves to decode v4 manifests)
    let partitioning = if md.format_version >= 4 {
        V4Layout::for_table(md)?
    } else {
        V4Layout::none()
    };
    for (content, spec_id, e) in live_entries(io, &partitioning, snapshot)? {
        match content {
            ManifestContent::Data => {
                if wanted.contains(e.data_file.file_path.as_str()) {
                    out.insert(
                        e.data_file.file_path.clone(),
                        DataFileDeletes {
                            spec_id,
                            data: e,
                            dv: None,
                            position_files: Vec::new(),
                        },
                    );
                }
            }
            ManifestContent::Deletes => {
                if e.data_file.content == DataContentType::PositionDeletes {
                    deletes.push((spec_id, e));
                }
            }
        }
    }
    if let Some(missing) = missing_paths(&wanted, &out) {
        return Err(Error::invalid_argument(format!(
            "not live data files of snapshot {}: {missing}",
            snapshot.snapshot_id,
        )));
    }
    for (spec_id, d) in deletes {
        let f = &d.data_file;
        let dseq = d.sequence_number.unwrap_or(0);
        let targets: Vec<String> = match &f.referenced_data_file {
            Some(t) => out.contains_key(t).then(|| t.clone()).into_iter().collect(),
            None => out
                .iter()
                .filter(|(_, x)| x.spec_id == spec_id && x.data.data_file.partition == f.partition)
                .map(|(p, _)| p.clone())
                .collect(),
        };
        for t in targets {
            let Some(x) = out.get_mut(&t) else { continue };
            if dseq < x.data.sequence_number.unwrap_or(0) {
                continue;
            }
            attach_delete(x, f.clone())?;
        }
    }
    Ok(out)
}

/// The data files at `paths` in `snapshot` (the table's current one when `None`) with the
/// deletes that apply to each: from `scanned`, what the scan of the row-level write planned
/// ([`super::scanned_deletes`]), so that no manifest is read; without it, or in v2 for a
/// data file with a position delete file that names no referenced data file (it may be
/// scoped to that file by its `file_path` bounds, which a plan does not carry), from the
/// snapshot's manifests ([`deletes_for`]).
pub fn deletes_of(
    io: &dyn FileIO,
    md: &TableMetadata,
    snapshot: Option<&Snapshot>,
    paths: &[String],
    scanned: Option<&[u8]>,
) -> Result<HashMap<String, DataFileDeletes>> {
    let snapshot = snapshot.or_else(|| md.current_snapshot());
    if let (Some(scanned), Some(s)) = (scanned, snapshot) {
        let found = super::scanned_deletes::scanned_deletes_for(md, s.snapshot_id, scanned, paths)?;
        let bounds_needed = md.format_version < 3
            && found
                .values()
                .flat_map(|t| &t.position_files)
                .any(|f| f.referenced_data_file.is_none());
        if !bounds_needed {
            return Ok(found);
        }
    }
    deletes_for(io, md, snapshot, paths)
}

/// The paths of `wanted` that `found` has no entry for, sorted and joined by `, `; `None`
/// when it has them all.
pub(crate) fn missing_paths<V>(
    wanted: &HashSet<&str>,
    found: &HashMap<String, V>,
) -> Option<String> {
    let mut missing: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|p| !found.contains_key(*p))
        .collect();
    missing.sort_unstable();
    (!missing.is_empty()).then(|| missing.join(", "))
}

/// Adds position delete file `f`, which applies to `target`'s data file: as its DV, or as
/// one of its position delete files. A second DV is an error.
pub(crate) fn attach_delete(target: &mut DataFileDeletes, f: DataFile) -> Result<()> {
    if !is_dv(&f) {
        target.position_files.push(f);
        return Ok(());
    }
    if let Some(other) = &target.dv {
        return Err(Error::invalid_metadata(
            "referenced_data_file",
            format!(
                "two deletion vectors for data file {}: {} and {}",
                target.data.data_file.file_path, other.file_path, f.file_path
            ),
        ));
    }
    target.dv = Some(f);
    Ok(())
}

/// What a position delete writes: delete files to add and to remove, with spec ids.
#[derive(Debug, Clone, Default)]
pub struct PositionDeleteFiles {
    pub added: Vec<(i32, DataFile)>,
    pub removed: Vec<(i32, DataFile)>,
}

/// v3: writes one Puffin file at `location` with a DV per data file: the given vector
/// (new positions, plus the positions of it that its position delete files hold, which
/// the caller reads) merged with its existing DV. Replaces the old DV and the position
/// delete files scoped to that data file alone.
pub fn write_dvs(
    io: &dyn FileIO,
    location: &str,
    targets: &[(&DataFileDeletes, DeletionVector)],
) -> Result<PositionDeleteFiles> {
    let mut writer = PuffinWriter::new();
    let mut pending = Vec::new();
    let mut out = PositionDeleteFiles::default();
    for (t, dv) in targets {
        let path = &t.data.data_file.file_path;
        let mut dv = dv.clone();
        if let Some(old) = &t.dv {
            // checked against its entry: a DV that is not what its entry says must not be
            // folded into the new one
            let existing = read_entry_deletion_vector(io, &DvEntry::of(old)?)?;
            dv.merge(&existing);
            out.removed.push((t.spec_id, old.clone()));
        }
        for f in &t.position_files {
            if f.referenced_data_file.as_deref() == Some(path.as_str()) {
                out.removed.push((t.spec_id, f.clone()));
            }
        }
        let (blob, bytes) = deletion_vector_blob(path, &dv)?;
        let meta = writer.add_blob(blob, &bytes)?;
        pending.push((t, meta.offset, meta.length, dv.cardinality()));
    }
    let written = writer.write(io, location)?;
    let size = i64::try_from(written.file_size).unwrap_or(i64::MAX);
    for (t, offset, length, cardinality) in pending {
        let mut f = DataFile::new(
            DataContentType::PositionDeletes,
            location,
            FileFormat::Puffin,
            t.data.data_file.partition.clone(),
            i64::try_from(cardinality).unwrap_or(i64::MAX),
            size,
        );
        f.referenced_data_file = Some(t.data.data_file.file_path.clone());
        f.content_offset = i64::try_from(offset).ok();
        f.content_size_in_bytes = i64::try_from(length).ok();
        out.added.push((t.spec_id, f));
    }
    Ok(out)
}

/// v2: the row of a position delete file the caller wrote at `path` with `record_count`
/// deletes of data file `target` only, the smallest and largest of them `positions`
/// (`None` for a file without rows).
pub fn position_delete_file(
    target: &DataFileDeletes,
    path: &str,
    record_count: i64,
    file_size_in_bytes: i64,
    positions: Option<(i64, i64)>,
) -> DataFile {
    let mut f = DataFile::new(
        DataContentType::PositionDeletes,
        path,
        FileFormat::Parquet,
        target.data.data_file.partition.clone(),
        record_count,
        file_size_in_bytes,
    );
    let data_file = target.data.data_file.file_path.as_str();
    if let Some(positions) = positions {
        set_position_delete_bounds(&mut f, (data_file, data_file), positions);
    }
    f.referenced_data_file = Some(data_file.to_string());
    f
}

/// The bounds Java keeps for a Parquet position delete file (`MetricsConfig.forPositionDelete`
/// keeps `file_path` and `pos` in full, untruncated): the smallest and largest `paths` and
/// `positions` of its rows. Equal `file_path` bounds scope the file to one data file for
/// readers that do not know `referenced_data_file` (Java's `ContentFileUtil`), and
/// PyIceberg matches position delete files to data files by these bounds.
pub(crate) fn set_position_delete_bounds(
    f: &mut DataFile,
    paths: (&str, &str),
    positions: (i64, i64),
) {
    let bound = |path: &str, pos: i64| {
        Some(vec![
            (reserved::DELETE_FILE_PATH_ID, path.as_bytes().to_vec()),
            (reserved::DELETE_POS_ID, pos.to_le_bytes().to_vec()),
        ])
    };
    f.lower_bounds = bound(paths.0, positions.0);
    f.upper_bounds = bound(paths.1, positions.1);
}
