//! Finding the current metadata file of a table directory.
//!
//! Hadoop-style tables ("File System Tables") name metadata `v<V>.metadata.json` and may
//! keep the current version in `metadata/version-hint.text`; metastore-style tables name
//! them `<V>-<uuid>.metadata.json`. Either may be gzip-compressed (`.gz.metadata.json`,
//! or Java's alternative `.metadata.json.gz`). Given a table directory we take the hint
//! when it names an existing file, else the highest version present.

use crate::error::{Error, Result};
use crate::io::FileIO;

/// The metadata version encoded in a metadata file name, if it follows either scheme.
pub fn metadata_version(file_name: &str) -> Option<u64> {
    let stem = file_name
        .strip_suffix(".gz.metadata.json")
        .or_else(|| file_name.strip_suffix(".metadata.json.gz"))
        .or_else(|| file_name.strip_suffix(".metadata.json"))?;
    if let Some(v) = stem.strip_prefix('v') {
        if let Ok(n) = v.parse::<u64>() {
            return Some(n);
        }
    }
    let (v, uuid) = stem.split_once('-')?;
    if uuid.is_empty() {
        return None;
    }
    v.parse::<u64>().ok()
}

fn join(dir: &str, name: &str) -> String {
    format!("{}/{}", dir.trim_end_matches('/'), name)
}

/// The location of the current metadata file of the table at `table_location`
/// (the table's base directory; its `metadata/` folder is searched).
pub fn latest_metadata_location(io: &dyn FileIO, table_location: &str) -> Result<String> {
    let metadata_dir = join(table_location, "metadata");
    let names = io.list(&metadata_dir).map_err(|e| match e {
        Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            Error::not_found(format!(
                "no table at {table_location}: it has no metadata folder ({metadata_dir})"
            ))
        }
        other => other,
    })?;

    let hint = join(&metadata_dir, "version-hint.text");
    if names.iter().any(|n| n == "version-hint.text") {
        let text = io.read(&hint)?;
        let text = String::from_utf8_lossy(&text);
        if let Ok(v) = text.trim().parse::<u64>() {
            // the hint may lag behind or point at a compressed file
            let hinted = names
                .iter()
                .filter(|n| metadata_version(n) == Some(v) && n.starts_with('v'))
                .max();
            let newer = names
                .iter()
                .filter(|n| metadata_version(n).is_some_and(|m| m > v))
                .count();
            if let (Some(name), 0) = (hinted, newer) {
                return Ok(join(&metadata_dir, name));
            }
        }
    }

    names
        .iter()
        .filter_map(|n| metadata_version(n).map(|v| (v, n)))
        .max()
        .map(|(_, n)| join(&metadata_dir, n))
        .ok_or_else(|| {
            Error::not_found(format!(
                "no metadata file (v<N>.metadata.json or <N>-<uuid>.metadata.json) in {metadata_dir}"
            ))
        })
}

/// The metadata file meant by `path`: `path` itself when it names a JSON file (plain or
/// gzip), else the current metadata file of the table (or view) directory at `path`.
pub fn resolve_metadata_location(io: &dyn FileIO, path: &str) -> Result<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name.ends_with(".json") || name.ends_with(".json.gz") {
        Ok(path.to_string())
    } else {
        latest_metadata_location(io, path)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::io::LocalFileIO;

    #[test]
    fn versions_from_names() {
        assert_eq!(metadata_version("v12.metadata.json"), Some(12));
        assert_eq!(metadata_version("v3.gz.metadata.json"), Some(3));
        assert_eq!(
            metadata_version("00007-1b2c3d4e-aaaa.metadata.json"),
            Some(7)
        );
        assert_eq!(metadata_version("00007-1b2c.metadata.json.gz"), Some(7));
        assert_eq!(metadata_version("snap-1-1-abc.avro"), None);
        assert_eq!(metadata_version("version-hint.text"), None);
        assert_eq!(metadata_version("x-y.metadata.json"), None);
    }

    #[test]
    fn picks_hint_or_highest() {
        let dir = std::env::temp_dir().join(format!("icefloe-fs-{}", std::process::id()));
        let md = dir.join("metadata");
        std::fs::create_dir_all(&md).unwrap();
        let loc = dir.to_str().unwrap();
        assert!(matches!(
            latest_metadata_location(&LocalFileIO, loc),
            Err(Error::NotFound { .. })
        ));
        for n in ["v1.metadata.json", "v2.metadata.json", "v10.metadata.json"] {
            std::fs::write(md.join(n), "{}").unwrap();
        }
        // highest by number, not by string order
        assert!(latest_metadata_location(&LocalFileIO, loc)
            .unwrap()
            .ends_with("/v10.metadata.json"));
        std::fs::write(md.join("version-hint.text"), "2\n").unwrap();
        // a hint older than files present is not trusted
        assert!(latest_metadata_location(&LocalFileIO, loc)
            .unwrap()
            .ends_with("/v10.metadata.json"));
        std::fs::remove_file(md.join("v10.metadata.json")).unwrap();
        assert!(latest_metadata_location(&LocalFileIO, loc)
            .unwrap()
            .ends_with("/v2.metadata.json"));
        assert!(resolve_metadata_location(&LocalFileIO, loc)
            .unwrap()
            .ends_with("/v2.metadata.json"));
        assert_eq!(
            resolve_metadata_location(&LocalFileIO, "/x/v9.metadata.json").unwrap(),
            "/x/v9.metadata.json"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
