//! Metadata files as metastore catalogs (SQL, and any catalog that keeps a pointer) name,
//! write and clean them up, as Java's `BaseMetastoreTableOperations`, `BaseViewOperations`
//! and `CatalogUtil` do:
//!
//! - the next file is `<metadata dir>/<NNNNN>-<uuid>.metadata.json` (`.gz.metadata.json`
//!   when `write.metadata.compression-codec` is `gzip`), where `NNNNN` is the version
//!   parsed from the base file's name plus one (0 for a new table or view) and the
//!   metadata dir is `write.metadata.path` or `<location>/metadata`;
//! - after a commit, with `write.metadata.delete-after-commit.enabled`, the files that
//!   dropped out of the metadata log between base and new are deleted (the log itself is
//!   built and trimmed to `write.metadata.previous-versions-max` by `commit/`);
//! - a purge deletes the files the metadata reaches (`CatalogUtil.dropTableData`), by
//!   default only those inside the table's location ([`PurgeScope`]).

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::list::read_manifest_list;
use crate::manifest::reader::{
    read_manifest, ManifestProjection, ManifestSource, ReadManifestOptions,
};
use crate::spec::table_metadata::TableMetadata;
use crate::spec::view_metadata::ViewMetadata;

/// Where metadata files go instead of `<location>/metadata`.
pub const WRITE_METADATA_PATH: &str = "write.metadata.path";
/// `none` (default) or `gzip`.
pub const METADATA_COMPRESSION: &str = "write.metadata.compression-codec";
/// Whether a commit deletes the metadata files that dropped out of the metadata log.
pub const METADATA_DELETE_AFTER_COMMIT: &str = "write.metadata.delete-after-commit.enabled";
/// Whether files of the table may be deleted by a purge (other tables may share them).
pub const GC_ENABLED: &str = "gc.enabled";

/// The version in a metastore-style metadata file name (`00012-<uuid>.metadata.json` is
/// 12), or -1 when the name has none, as Java's `parseVersion` (so the next file is 0).
pub fn parse_version(metadata_location: &str) -> i64 {
    let name = metadata_location
        .rsplit('/')
        .next()
        .unwrap_or(metadata_location);
    match name.split_once('-') {
        Some((v, _)) => v.parse::<i32>().map(i64::from).unwrap_or(-1),
        None => -1,
    }
}

/// Java's `PropertyUtil.propertyAsBoolean`: `true` in any case is true, anything else false.
fn as_bool(value: Option<&str>, default: bool) -> bool {
    value.map_or(default, |v| v.eq_ignore_ascii_case("true"))
}

/// Whether the codec named by `write.metadata.compression-codec` compresses.
fn compresses(codec: Option<&str>) -> Result<bool> {
    match codec.map(str::to_ascii_lowercase).as_deref() {
        None | Some("none") => Ok(false),
        Some("gzip") => Ok(true),
        Some(other) => Err(Error::invalid_argument(format!(
            "invalid {METADATA_COMPRESSION} '{other}': expected 'none' or 'gzip'"
        ))),
    }
}

fn metadata_dir(location: &str, metadata_path: Option<&str>) -> String {
    match metadata_path {
        Some(p) => p.trim_end_matches('/').to_string(),
        None => format!("{}/metadata", location.trim_end_matches('/')),
    }
}

fn next_name(base_location: Option<&str>, compress: bool) -> String {
    let version = base_location.map_or(-1, parse_version) + 1;
    let ext = if compress {
        ".gz.metadata.json"
    } else {
        ".metadata.json"
    };
    format!("{version:05}-{}{ext}", uuid::Uuid::new_v4())
}

/// The location of the metadata file that follows `base_location` (`None`: a new table).
pub fn next_table_metadata_location(
    metadata: &TableMetadata,
    base_location: Option<&str>,
) -> Result<String> {
    let compress = compresses(metadata.property(METADATA_COMPRESSION))?;
    Ok(format!(
        "{}/{}",
        metadata_dir(&metadata.location, metadata.property(WRITE_METADATA_PATH)),
        next_name(base_location, compress)
    ))
}

/// Writes `metadata` as the file that follows `base_location` and returns its location.
pub fn write_table_metadata(
    io: &dyn FileIO,
    metadata: &TableMetadata,
    base_location: Option<&str>,
) -> Result<String> {
    let location = next_table_metadata_location(metadata, base_location)?;
    let compress = compresses(metadata.property(METADATA_COMPRESSION))?;
    metadata.write(io, &location, compress)?;
    Ok(location)
}

/// As [`next_table_metadata_location`], for views (same properties and naming, but gzip
/// unless `write.metadata.compression-codec` says otherwise, as Java's views).
pub fn next_view_metadata_location(
    metadata: &ViewMetadata,
    base_location: Option<&str>,
) -> Result<String> {
    let props = &metadata.properties;
    // views default to gzip in Java (`ViewProperties.METADATA_COMPRESSION_DEFAULT`), tables to none
    let codec = props
        .get(METADATA_COMPRESSION)
        .map_or("gzip", String::as_str);
    let compress = compresses(Some(codec))?;
    Ok(format!(
        "{}/{}",
        metadata_dir(
            &metadata.location,
            props.get(WRITE_METADATA_PATH).map(String::as_str)
        ),
        next_name(base_location, compress)
    ))
}

/// Writes view metadata as the file that follows `base_location`; returns its location.
/// (`ViewMetadata::write` compresses by the file name.)
pub fn write_view_metadata(
    io: &dyn FileIO,
    metadata: &ViewMetadata,
    base_location: Option<&str>,
) -> Result<String> {
    let location = next_view_metadata_location(metadata, base_location)?;
    metadata.write(io, &location)?;
    Ok(location)
}

/// After a successful commit from `base` to `new`: when `new` enables
/// `write.metadata.delete-after-commit.enabled`, deletes the metadata files listed in
/// `base`'s metadata log but no longer in `new`'s. Best effort, as in Java: the commit has
/// happened, so a failed delete only leaves an orphan file; the locations that could not be
/// deleted are returned.
pub fn delete_removed_metadata_files(
    io: &dyn FileIO,
    base: &TableMetadata,
    new: &TableMetadata,
) -> Vec<String> {
    if !as_bool(new.property(METADATA_DELETE_AFTER_COMMIT), false) {
        return Vec::new();
    }
    let kept: HashSet<&str> = new
        .metadata_log
        .iter()
        .map(|e| e.metadata_file.as_str())
        .collect();
    let mut failed = Vec::new();
    for entry in &base.metadata_log {
        let file = entry.metadata_file.as_str();
        if !kept.contains(file) && io.delete(file).is_err() {
            failed.push(file.to_string());
        }
    }
    failed
}

/// Which of the files a purge finds it may delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PurgeScope {
    /// Only files inside the table's location (the metadata's `location`, compared folder
    /// by folder: see [`crate::io::is_within`]); the others are kept and reported. The
    /// metadata of a registered table may name any file — another table's data, files
    /// outside the warehouse — and a purge must not reach them by default.
    #[default]
    TableLocation,
    /// Every file the metadata reaches, wherever it is, as Java's
    /// `CatalogUtil.dropTableData` (and snapshot expiry) do.
    Everywhere,
}

impl PurgeScope {
    /// Whether a file at `path` of the table at `location` may be deleted.
    pub fn allows(self, location: &str, path: &str) -> bool {
        match self {
            PurgeScope::Everywhere => true,
            PurgeScope::TableLocation => crate::io::is_within(location, path),
        }
    }
}

/// What a purge did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PurgeResult {
    /// How many files were deleted.
    pub deleted_files: usize,
    /// Files the metadata names outside the table's location, left in place
    /// ([`PurgeScope::TableLocation`]).
    pub kept_outside_location: Vec<String>,
    /// Files that could not be read or deleted (a purge goes on past them).
    pub failed: Vec<String>,
}

/// Deletes the files reachable from a dropped table's metadata that `scope` allows, as
/// Java's `CatalogUtil.dropTableData` with [`PurgeScope::Everywhere`]: the data and delete
/// files of every manifest (only when `gc.enabled` is not false, since other tables may
/// share them), the manifests, manifest lists, previous metadata files, statistics and
/// partition statistics files, and the metadata file itself. Best effort: it goes on past
/// failures and reports them. Manifests outside the table's location are still read, to
/// find the files inside it that they list.
pub fn drop_table_data(
    io: &dyn FileIO,
    metadata: &TableMetadata,
    metadata_location: &str,
    scope: PurgeScope,
) -> PurgeResult {
    let mut result = PurgeResult::default();
    let mut manifests: Vec<String> = Vec::new();
    let mut lists: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for snapshot in &metadata.snapshots {
        if let Some(list) = &snapshot.manifest_list {
            match read_manifest_list(io, list) {
                Ok(files) => manifests.extend(
                    files
                        .into_iter()
                        .map(|m| m.manifest_path)
                        .filter(|p| seen.insert(p.clone())),
                ),
                Err(_) => result.failed.push(list.clone()),
            }
            lists.push(list.clone());
        }
        // v1 snapshots may list their manifests inline instead
        for m in snapshot.manifests.iter().flatten() {
            if seen.insert(m.clone()) {
                manifests.push(m.clone());
            }
        }
    }

    let mut kept = HashSet::new();
    let mut delete = |location: &str, result: &mut PurgeResult| {
        if !scope.allows(&metadata.location, location) {
            if kept.insert(location.to_string()) {
                result.kept_outside_location.push(location.to_string());
            }
        } else if io.delete(location).is_ok() {
            result.deleted_files += 1;
        } else {
            result.failed.push(location.to_string());
        }
    };

    if as_bool(metadata.property(GC_ENABLED), true) {
        let mut deleted = HashSet::new();
        for manifest in &manifests {
            match read_manifest(
                ManifestSource::file(io, manifest),
                &ReadManifestOptions::default().projection(&ManifestProjection::minimal()),
            ) {
                Ok(m) => {
                    for entry in m.entries {
                        let path = entry.data_file.file_path;
                        if deleted.insert(path.clone()) {
                            delete(&path, &mut result);
                        }
                    }
                }
                Err(_) => result.failed.push(manifest.clone()),
            }
        }
    }
    for location in manifests.iter().chain(&lists) {
        delete(location, &mut result);
    }
    for entry in &metadata.metadata_log {
        delete(&entry.metadata_file, &mut result);
    }
    for s in &metadata.statistics {
        delete(&s.statistics_path, &mut result);
    }
    for s in &metadata.partition_statistics {
        delete(&s.statistics_path, &mut result);
    }
    delete(metadata_location, &mut result);
    result
}

/// Deletes a dropped view's current metadata file when `gc.enabled` is not false, as
/// Java's `CatalogUtil.dropViewMetadata`. Best effort.
pub fn drop_view_metadata(io: &dyn FileIO, metadata: &ViewMetadata, metadata_location: &str) {
    if as_bool(
        metadata.properties.get(GC_ENABLED).map(String::as_str),
        true,
    ) {
        let _ = io.delete(metadata_location);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::catalog::testing::table_metadata as table;
    use crate::io::MemoryFileIO;
    use crate::spec::snapshot::MetadataLogEntry;

    #[test]
    fn versions_as_java_parses_them() {
        assert_eq!(
            parse_version("s3://b/t/metadata/00012-abc.metadata.json"),
            12
        );
        assert_eq!(parse_version("00000-x.gz.metadata.json"), 0);
        assert_eq!(parse_version("/t/metadata/v3.metadata.json"), -1);
        assert_eq!(parse_version("/t/metadata/x-y.metadata.json"), -1);
        // the dash is looked for in the file name only
        assert_eq!(parse_version("/a-b/metadata/v3.metadata.json"), -1);
    }

    #[test]
    fn next_locations_follow_the_base_and_the_properties() {
        let md = table("file:///w/t/", &[]);
        let first = next_table_metadata_location(&md, None).unwrap();
        assert!(first.starts_with("file:///w/t/metadata/00000-"), "{first}");
        assert!(first.ends_with(".metadata.json") && !first.contains(".gz."));
        // the uuid part is a fresh uuid
        let stem = first.trim_end_matches(".metadata.json");
        let uuid = stem.rsplit('/').next().unwrap().split_once('-').unwrap().1;
        assert!(uuid::Uuid::parse_str(uuid).is_ok(), "{uuid}");
        let next = next_table_metadata_location(&md, Some(&first)).unwrap();
        assert!(next.starts_with("file:///w/t/metadata/00001-"), "{next}");
        let after_fs = next_table_metadata_location(&md, Some("/w/t/metadata/v7.metadata.json"));
        assert!(after_fs.unwrap().starts_with("file:///w/t/metadata/00000-"));

        let gz = table(
            "/w/t",
            &[(METADATA_COMPRESSION, "GZIP"), (WRITE_METADATA_PATH, "/m/")],
        );
        let loc = next_table_metadata_location(&gz, Some("/m/00041-a.gz.metadata.json")).unwrap();
        assert!(loc.starts_with("/m/00042-") && loc.ends_with(".gz.metadata.json"));
        let bad = table("/w/t", &[(METADATA_COMPRESSION, "zstd")]);
        assert!(matches!(
            next_table_metadata_location(&bad, None),
            Err(Error::InvalidArgument { .. })
        ));
    }

    #[test]
    fn written_files_read_back_compressed_or_not() {
        let io = MemoryFileIO::default();
        for props in [vec![], vec![(METADATA_COMPRESSION, "gzip")]] {
            let md = table("mem://t", &props);
            let loc = write_table_metadata(&io, &md, None).unwrap();
            let bytes = io.read(&loc).unwrap();
            assert_eq!(bytes.starts_with(&[0x1f, 0x8b]), !props.is_empty());
            assert_eq!(TableMetadata::read(&io, &loc).unwrap(), md);
        }
    }

    #[test]
    fn removed_log_entries_are_deleted_only_when_enabled() {
        let io = MemoryFileIO::default();
        for f in ["m/1.json", "m/2.json", "m/3.json"] {
            io.write_new(f, b"{}").unwrap();
        }
        let log = |files: &[&str]| {
            files
                .iter()
                .map(|f| MetadataLogEntry {
                    timestamp_ms: 1,
                    metadata_file: f.to_string(),
                })
                .collect::<Vec<_>>()
        };
        let mut base = table("m", &[]);
        base.metadata_log = log(&["m/1.json", "m/2.json"]);
        let mut new = table("m", &[]);
        new.metadata_log = log(&["m/2.json", "m/3.json"]);
        assert!(delete_removed_metadata_files(&io, &base, &new).is_empty());
        assert!(io.exists("m/1.json").unwrap());
        new.properties = vec![(METADATA_DELETE_AFTER_COMMIT.into(), "true".into())];
        assert!(delete_removed_metadata_files(&io, &base, &new).is_empty());
        assert!(!io.exists("m/1.json").unwrap());
        assert!(io.exists("m/2.json").unwrap() && io.exists("m/3.json").unwrap());
    }
}
