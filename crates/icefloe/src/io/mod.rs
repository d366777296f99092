//! How the core reads and writes bytes. The library never touches the file system
//! directly: it goes through a [`FileIO`], chosen for a location by [`for_location`]
//! (local paths, and the object stores S3, Azure Blob/ADLS and GCS).

use std::io::{Read, Seek, SeekFrom};

use crate::error::{Error, Result};

pub mod cache;
#[cfg(feature = "gcs")]
pub mod gcs;
#[cfg(any(feature = "s3", feature = "azure"))]
pub mod object_store_io;
pub mod properties;
pub mod redact;
mod resolve;
#[cfg(any(feature = "s3", feature = "azure", feature = "gcs", feature = "rest"))]
pub(crate) mod runtime;
mod stats;

pub use cache::{CachingFileIO, ManifestCacheConfig};
pub use properties::FileIOProperties;
pub use resolve::{for_location, for_location_with, scheme_of};
pub use stats::IoStats;

/// A version of a stored file, as the store reports it: the ETag (and the version id where
/// the store keeps versions). Opaque: only compared by the store in [`FileIO::replace_if_match`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileVersion {
    pub e_tag: Option<String>,
    pub version: Option<String>,
}

/// What [`FileIO::status`] reports of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStatus {
    pub size: u64,
    /// `None` where the FileIO has no versions (then `replace_if_match` is unsupported).
    pub version: Option<FileVersion>,
}

/// A file found by [`FileIO::list_files`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedFile {
    /// The file's location: the listed folder's location as given, `/`, and the file's
    /// path below it.
    pub location: String,
    pub size: u64,
    /// When the file was last written, in milliseconds since the epoch (the store's
    /// last-modified time; a local file's modification time).
    pub last_modified_ms: i64,
}

/// Reads and writes whole files by location.
pub trait FileIO: Send + Sync {
    /// Reads the whole file.
    fn read(&self, location: &str) -> Result<Vec<u8>>;
    /// Writes a new file; fails if it exists (Iceberg files are never overwritten).
    fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()>;
    fn exists(&self, location: &str) -> Result<bool>;
    /// Lists the names of the entries of a directory-like location.
    fn list(&self, location: &str) -> Result<Vec<String>>;
    /// Deletes a file. Deleting a file that does not exist succeeds, so cleanups can be
    /// repeated after a partial failure.
    fn delete(&self, location: &str) -> Result<()>;

    /// Deletes many files with at most `max_concurrent` requests in flight (at least one),
    /// and returns one result per location, in the order given (Java's
    /// `SupportsBulkOperations.deleteFiles`, but each failure is reported with its file, so a
    /// caller can name the files left behind). As for [`FileIO::delete`], a file that does
    /// not exist counts as deleted. The default runs [`FileIO::delete`] on `max_concurrent`
    /// threads; object stores override it with the store's bulk request where it has one.
    fn delete_many(&self, locations: &[String], max_concurrent: usize) -> Vec<Result<()>> {
        crate::parallel::map_all(max_concurrent, locations, |l| self.delete(l))
            .into_iter()
            .zip(locations)
            .map(|(r, l)| r.unwrap_or_else(|| Err(not_deleted(l))))
            .collect()
    }

    /// Every file inside the folder `location`, at any depth, with its size and
    /// modification time (Java's `SupportsPrefixOperations.listPrefix`). Inside is folder by
    /// folder, as [`is_within`]: listing `s3://b/t` never returns `s3://b/tt/x`. A folder
    /// that does not exist lists as empty. Folders themselves (and an object store's empty
    /// folder markers) are not files. The default refuses: every FileIO of the crate
    /// implements it.
    fn list_files(&self, location: &str) -> Result<Vec<ListedFile>> {
        Err(Error::unsupported(format!(
            "location {location}: this file IO cannot list files recursively"
        )))
    }

    /// Reads `len` bytes starting at `offset`; fails if the file is shorter than
    /// `offset + len`. The default reads the whole file: implementations should override it.
    fn read_range(&self, location: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        let all = self.read(location)?;
        slice_range(&all, offset, len)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| short_read(location, offset, len, all.len() as u64))
    }

    /// The size of the file in bytes. The default reads the whole file.
    fn file_size(&self, location: &str) -> Result<u64> {
        Ok(self.read(location)?.len() as u64)
    }

    /// The size and version of a file (one HEAD on an object store).
    fn status(&self, location: &str) -> Result<FileStatus> {
        Ok(FileStatus {
            size: self.file_size(location)?,
            version: None,
        })
    }

    /// The FileIO properties this FileIO reaches `location` with (a REST catalog's
    /// merged with the table's vended `config`), credentials included, so that another
    /// client of the same store (pyarrow on a Spark executor) can be configured alike.
    /// `None` where no properties apply (local files, memory).
    fn properties_for(&self, location: &str) -> Option<Vec<(String, String)>> {
        let _ = location;
        None
    }

    /// Whether [`FileIO::replace_if_match`] is atomic here. A catalog that commits by
    /// swapping a file (a file-system catalog on an object store) must refuse to commit
    /// where it is not.
    fn supports_conditional_replace(&self) -> bool {
        false
    }

    /// Replaces the file only if it is still at version `expected` (HTTP `If-Match`), and
    /// returns its new version. Fails with [`Error::PreconditionFailed`] when another writer
    /// replaced (or deleted) it since, and with [`Error::Unsupported`] where the FileIO
    /// cannot do this atomically (the default).
    fn replace_if_match(
        &self,
        location: &str,
        bytes: &[u8],
        expected: &FileVersion,
    ) -> Result<FileVersion> {
        let _ = (bytes, expected);
        Err(Error::unsupported(format!(
            "location {location}: this file IO cannot replace a file conditionally"
        )))
    }

    /// The requests and bytes this FileIO has sent and received (object stores), or
    /// `None` where nothing is counted (local files, memory).
    fn stats(&self) -> Option<IoStats> {
        None
    }

    /// Sets the counters of [`FileIO::stats`] back to zero.
    fn reset_stats(&self) {}

    /// How many files a planner should fetch at once through this FileIO: 0 for "as many
    /// as it has threads" (local files: a read is CPU work, as decoding is). An object
    /// store's read is mostly waiting, so more fetches than cores keep the cores busy.
    fn fetch_concurrency(&self) -> usize {
        0
    }
}

/// The result of a delete [`FileIO::delete_many`] did not get to (its worker stopped).
pub(crate) fn not_deleted(location: &str) -> Error {
    Error::io(
        location,
        std::io::Error::other("not deleted: the delete worker stopped before this file"),
    )
}

/// `bytes[offset..offset + len]`, or `None` when out of bounds.
fn slice_range(bytes: &[u8], offset: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    bytes.get(start..end)
}

fn short_read(location: &str, offset: u64, len: u64, size: u64) -> Error {
    Error::io(
        location,
        std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("cannot read {len} bytes at offset {offset}: the file has {size} bytes"),
        ),
    )
}

/// `read_range` for an object store, which answers a range past the end with an error
/// (`past_end` recognises it) rather than with fewer bytes: that error, and an answer
/// shorter than asked, become the short read the local FileIO reports, naming the file's
/// size. A zero-length read only checks the offset against the size.
#[cfg(any(feature = "gcs", feature = "s3", feature = "azure"))]
pub(crate) fn read_range_past_end_is_short(
    io: &(impl FileIO + ?Sized),
    location: &str,
    offset: u64,
    len: u64,
    fetch: impl FnOnce(std::ops::Range<u64>) -> Result<Vec<u8>>,
    past_end: impl FnOnce(&std::io::Error) -> bool,
) -> Result<Vec<u8>> {
    let end = offset
        .checked_add(len)
        .ok_or_else(|| short_read(location, offset, len, 0))?;
    if len == 0 {
        let size = io.file_size(location)?;
        return if offset <= size {
            Ok(Vec::new())
        } else {
            Err(short_read(location, offset, len, size))
        };
    }
    let bytes = fetch(offset..end).map_err(|e| match e {
        Error::Io { ref source, .. } if past_end(source) => match io.file_size(location) {
            Ok(size) => short_read(location, offset, len, size),
            Err(_) => e,
        },
        other => other,
    })?;
    if bytes.len() as u64 != len {
        return Err(short_read(
            location,
            offset,
            len,
            offset + bytes.len() as u64,
        ));
    }
    Ok(bytes)
}

/// The local file system. Accepts plain paths and `file:` URIs.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalFileIO;

/// Strips a `file:` scheme (`file:///a/b`, `file:/a/b`) to a local path.
pub fn local_path(location: &str) -> &str {
    if let Some(rest) = location.strip_prefix("file://") {
        rest
    } else if let Some(rest) = location.strip_prefix("file:") {
        rest
    } else {
        location
    }
}

/// A location as the root it is relative to (`s3://bucket`; `/` for an absolute local path
/// or `file:` URI, which are the same place; empty for a relative path) and its folder names, with empty and `.` names
/// dropped and each `..` taking the previous name away (never above the root), as a file
/// system would resolve them.
fn location_parts(location: &str) -> (&str, Vec<&str>) {
    let local = local_path(location);
    let (root, path) = match local.find("://") {
        Some(i) => {
            let after = i + 3;
            let end = local[after..].find('/').map_or(local.len(), |j| after + j);
            (&local[..end], &local[end..])
        }
        None if local.starts_with('/') => ("/", local),
        None => ("", local),
    };
    let mut parts: Vec<&str> = Vec::new();
    for name in path.split('/') {
        match name {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    (root, parts)
}

/// Whether `file` lies strictly inside the folder `location`, compared folder name by
/// folder name after resolving `.` and `..` (so `/a/b` does not contain `/a/bc`, nor
/// `/a/b/../c/x`). `file:` URIs and plain paths compare as the same place. Used to keep
/// deletions (purge, snapshot expiry) inside a table's location.
pub fn is_within(location: &str, file: &str) -> bool {
    let (root, folder) = location_parts(location);
    let (file_root, names) = location_parts(file);
    root == file_root && names.len() > folder.len() && names.starts_with(&folder)
}

/// Whether two locations name the same folder or file, compared as [`is_within`] compares
/// (`file:` URIs and plain paths alike, `.` and `..` resolved, trailing `/` ignored).
pub fn same_location(a: &str, b: &str) -> bool {
    location_parts(a) == location_parts(b)
}

/// The local path of `location`, or an error when it names another scheme (`s3://`,
/// `s3n://`, `hdfs:`...): without this check such a location would be taken as a
/// relative path and written under the working directory.
fn checked_local_path(location: &str) -> Result<&str> {
    let path = local_path(location);
    let scheme_end = path.find(':').filter(|&i| {
        let scheme = &path[..i];
        scheme.len() > 1
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    match scheme_end {
        Some(i) => Err(Error::Unsupported {
            message: format!(
                "location {location}: scheme '{}' is not supported by the local file IO \
                 (plain paths and file: URIs only)",
                &path[..i]
            ),
        }),
        None => Ok(path),
    }
}

impl FileIO for LocalFileIO {
    fn read(&self, location: &str) -> Result<Vec<u8>> {
        let path = checked_local_path(location)?;
        let mut f = std::fs::File::open(path).map_err(|e| Error::io(location, e))?;
        let mut buf = Vec::new();
        f.read_to_end(&mut buf)
            .map_err(|e| Error::io(location, e))?;
        Ok(buf)
    }

    fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        let path = checked_local_path(location)?;
        if let Some(parent) = std::path::Path::new(path).parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(location, e))?;
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| Error::io(location, e))?;
        f.write_all(bytes).map_err(|e| Error::io(location, e))?;
        f.sync_all().map_err(|e| Error::io(location, e))
    }

    fn exists(&self, location: &str) -> Result<bool> {
        Ok(std::path::Path::new(checked_local_path(location)?).exists())
    }

    fn read_range(&self, location: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        let mut f = std::fs::File::open(checked_local_path(location)?)
            .map_err(|e| Error::io(location, e))?;
        let size = f.metadata().map_err(|e| Error::io(location, e))?.len();
        match offset.checked_add(len) {
            Some(end) if end <= size => {}
            _ => return Err(short_read(location, offset, len, size)),
        }
        let n = usize::try_from(len).map_err(|_| short_read(location, offset, len, size))?;
        f.seek(SeekFrom::Start(offset))
            .map_err(|e| Error::io(location, e))?;
        let mut buf = vec![0u8; n];
        f.read_exact(&mut buf).map_err(|e| Error::io(location, e))?;
        Ok(buf)
    }

    fn file_size(&self, location: &str) -> Result<u64> {
        std::fs::metadata(checked_local_path(location)?)
            .map(|m| m.len())
            .map_err(|e| Error::io(location, e))
    }

    fn delete(&self, location: &str) -> Result<()> {
        match std::fs::remove_file(checked_local_path(location)?) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(location, e)),
            _ => Ok(()),
        }
    }

    fn list(&self, location: &str) -> Result<Vec<String>> {
        let rd =
            std::fs::read_dir(checked_local_path(location)?).map_err(|e| Error::io(location, e))?;
        let mut names = Vec::new();
        for entry in rd {
            let entry = entry.map_err(|e| Error::io(location, e))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }

    fn list_files(&self, location: &str) -> Result<Vec<ListedFile>> {
        let root = checked_local_path(location)?;
        let base = location.trim_end_matches('/');
        let mut out = Vec::new();
        // (folder on disk, its path below `root`)
        let mut folders = vec![(std::path::PathBuf::from(root), String::new())];
        while let Some((folder, relative)) = folders.pop() {
            let entries = match std::fs::read_dir(&folder) {
                Ok(rd) => rd,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(folder.to_string_lossy().as_ref(), e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| Error::io(folder.to_string_lossy().as_ref(), e))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let below = if relative.is_empty() {
                    name
                } else {
                    format!("{relative}/{name}")
                };
                let path = entry.path();
                // symbolic links are not followed: a link out of the table's folder must
                // not make another folder's files look like this table's
                let kind = entry
                    .file_type()
                    .map_err(|e| Error::io(path.to_string_lossy().as_ref(), e))?;
                if kind.is_dir() {
                    folders.push((path, below));
                } else if kind.is_file() {
                    let meta = entry
                        .metadata()
                        .map_err(|e| Error::io(path.to_string_lossy().as_ref(), e))?;
                    let modified = meta
                        .modified()
                        .map_err(|e| Error::io(path.to_string_lossy().as_ref(), e))?;
                    out.push(ListedFile {
                        location: format!("{base}/{below}"),
                        size: meta.len(),
                        last_modified_ms: system_time_ms(modified),
                    });
                }
            }
        }
        out.sort_by(|a, b| a.location.cmp(&b.location));
        Ok(out)
    }
}

/// Milliseconds since the epoch (negative before it).
fn system_time_ms(t: std::time::SystemTime) -> i64 {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
    }
}

/// Files kept in memory, by location: for tests, and for building metadata before it is
/// written elsewhere. Writes fail for a location that exists, as Iceberg files are never
/// overwritten; `list` returns the locations under a prefix. Each write gives the file a
/// new version, so [`FileIO::replace_if_match`] works as on an object store.
#[derive(Debug, Default)]
pub struct MemoryFileIO {
    files: std::sync::Mutex<std::collections::HashMap<String, MemoryFile>>,
    /// The last version given out; versions are never reused, even after a delete.
    last_version: std::sync::atomic::AtomicU64,
}

#[derive(Debug)]
struct MemoryFile {
    bytes: Vec<u8>,
    version: u64,
    last_modified_ms: i64,
}

fn now_ms() -> i64 {
    system_time_ms(std::time::SystemTime::now())
}

type MemoryFiles = std::collections::HashMap<String, MemoryFile>;

impl MemoryFileIO {
    fn files(&self) -> Result<std::sync::MutexGuard<'_, MemoryFiles>> {
        self.files
            .lock()
            .map_err(|_| Error::unsupported("the in-memory file store was poisoned"))
    }

    /// Sets a file's modification time, as if it had been written at `ms` (tests of
    /// what is old enough to clean up).
    pub fn set_last_modified_ms(&self, location: &str, ms: i64) -> Result<()> {
        match self.files()?.get_mut(location) {
            Some(f) => {
                f.last_modified_ms = ms;
                Ok(())
            }
            None => Err(Error::io(
                location,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            )),
        }
    }

    fn next_version(&self) -> u64 {
        self.last_version
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1
    }
}

fn memory_version(version: u64) -> FileVersion {
    FileVersion {
        e_tag: Some(format!("\"{version}\"")),
        version: None,
    }
}

impl FileIO for MemoryFileIO {
    fn read(&self, location: &str) -> Result<Vec<u8>> {
        self.files()?
            .get(location)
            .map(|f| f.bytes.clone())
            .ok_or_else(|| {
                Error::io(
                    location,
                    std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
                )
            })
    }

    fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()> {
        let mut files = self.files()?;
        if files.contains_key(location) {
            return Err(Error::io(
                location,
                std::io::Error::new(std::io::ErrorKind::AlreadyExists, "file exists"),
            ));
        }
        let version = self.next_version();
        files.insert(
            location.to_string(),
            MemoryFile {
                bytes: bytes.to_vec(),
                version,
                last_modified_ms: now_ms(),
            },
        );
        Ok(())
    }

    fn exists(&self, location: &str) -> Result<bool> {
        Ok(self.files()?.contains_key(location))
    }

    fn delete(&self, location: &str) -> Result<()> {
        self.files()?.remove(location);
        Ok(())
    }

    fn list(&self, location: &str) -> Result<Vec<String>> {
        let mut out: Vec<String> = self
            .files()?
            .keys()
            .filter(|k| k.starts_with(location))
            .cloned()
            .collect();
        out.sort();
        Ok(out)
    }

    fn list_files(&self, location: &str) -> Result<Vec<ListedFile>> {
        let folder = format!("{}/", location.trim_end_matches('/'));
        let mut out: Vec<ListedFile> = self
            .files()?
            .iter()
            .filter(|(k, _)| k.starts_with(&folder))
            .map(|(k, f)| ListedFile {
                location: k.clone(),
                size: f.bytes.len() as u64,
                last_modified_ms: f.last_modified_ms,
            })
            .collect();
        out.sort_by(|a, b| a.location.cmp(&b.location));
        Ok(out)
    }

    fn status(&self, location: &str) -> Result<FileStatus> {
        let files = self.files()?;
        let f = files.get(location).ok_or_else(|| {
            Error::io(
                location,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            )
        })?;
        Ok(FileStatus {
            size: f.bytes.len() as u64,
            version: Some(memory_version(f.version)),
        })
    }

    fn supports_conditional_replace(&self) -> bool {
        true
    }

    fn replace_if_match(
        &self,
        location: &str,
        bytes: &[u8],
        expected: &FileVersion,
    ) -> Result<FileVersion> {
        let mut files = self.files()?;
        let current = files.get(location).map(|f| memory_version(f.version));
        if current.as_ref() != Some(expected) {
            return Err(Error::PreconditionFailed {
                path: location.to_string(),
                message: match current {
                    Some(_) => "the file was replaced since its version was read".to_string(),
                    None => "the file does not exist".to_string(),
                },
            });
        }
        let version = self.next_version();
        files.insert(
            location.to_string(),
            MemoryFile {
                bytes: bytes.to_vec(),
                version,
                last_modified_ms: now_ms(),
            },
        );
        Ok(memory_version(version))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    #[test]
    fn list_files_is_recursive_and_stays_in_the_folder() {
        use super::{FileIO, LocalFileIO, MemoryFileIO};
        let dir = std::env::temp_dir().join(format!("icefloe-io-list-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let root = dir.to_str().unwrap().to_string();
        let mem = MemoryFileIO::default();
        for name in ["t/a", "t/x/b", "t/x/y/c", "tt/d", "t2"] {
            LocalFileIO
                .write_new(&format!("{root}/{name}"), b"12345")
                .unwrap();
            mem.write_new(&format!("mem://w/{name}"), b"12345").unwrap();
        }
        let names = |io: &dyn FileIO, at: &str| -> Vec<String> {
            let files = io.list_files(at).unwrap();
            assert!(files.iter().all(|f| f.size == 5 && f.last_modified_ms > 0));
            files.into_iter().map(|f| f.location).collect()
        };
        for (io, base) in [
            (&LocalFileIO as &dyn FileIO, root.clone()),
            (&mem as &dyn FileIO, "mem://w".to_string()),
        ] {
            let want: Vec<String> = ["t/a", "t/x/b", "t/x/y/c"]
                .iter()
                .map(|n| format!("{base}/{n}"))
                .collect();
            assert_eq!(names(io, &format!("{base}/t")), want);
            assert_eq!(names(io, &format!("{base}/t/")), want);
            assert!(names(io, &format!("{base}/missing")).is_empty());
        }
        // file: URIs list in the form given
        assert_eq!(
            names(&LocalFileIO, &format!("file://{root}/t/x/y")),
            vec![format!("file://{root}/t/x/y/c")]
        );
        mem.set_last_modified_ms("mem://w/t/a", 7).unwrap();
        assert_eq!(mem.list_files("mem://w/t").unwrap()[0].last_modified_ms, 7);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn is_within_compares_folder_names() {
        use super::is_within;
        assert!(is_within("/w/t", "/w/t/data/a.parquet"));
        assert!(is_within("/w/t/", "file:///w/t/data/a.parquet"));
        assert!(is_within("file:/w/t", "/w/t/metadata/v1.metadata.json"));
        assert!(is_within("s3://b/w/t", "s3://b/w/t/x"));
        assert!(is_within("/w/./t", "/w/t//x"));
        // a proper prefix of names, not of characters
        assert!(!is_within("/w/t", "/w/tt/x"));
        assert!(!is_within("/w/t", "/w/t"));
        assert!(!is_within("/w/t", "/w/t/"));
        // `..` is resolved before comparing
        assert!(!is_within("/w/t", "/w/t/data/../../u/x"));
        assert!(!is_within("/w/t", "/w/t/../../../x"));
        assert!(is_within("/w/t/../u", "/w/u/x"));
        // another root is another place
        assert!(!is_within("s3://b/w/t", "s3://c/w/t/x"));
        assert!(!is_within("s3://b/w/t", "/w/t/x"));
        assert!(!is_within("/b/w/t", "s3://b/w/t/x"));
        assert!(!is_within("w/t", "/w/t/x"));
    }

    use super::*;

    #[test]
    fn memory_file_io_never_overwrites_and_lists_by_prefix() {
        let io = MemoryFileIO::default();
        io.write_new("t/metadata/v1.json", b"{}").unwrap();
        io.write_new("t/data/a.parquet", b"x").unwrap();
        assert!(io.write_new("t/data/a.parquet", b"y").is_err());
        assert_eq!(io.read("t/data/a.parquet").unwrap(), b"x");
        assert!(matches!(io.read("nope"), Err(Error::Io { .. })));
        assert_eq!(
            io.list("t/data/").unwrap(),
            vec!["t/data/a.parquet".to_string()]
        );
        assert!(io.exists("t/metadata/v1.json").unwrap());
        assert_eq!(io.read_range("t/metadata/v1.json", 1, 1).unwrap(), b"}");
        io.delete("t/data/a.parquet").unwrap();
        io.delete("t/data/a.parquet").unwrap();
        assert!(!io.exists("t/data/a.parquet").unwrap());
    }

    #[test]
    fn conditional_replace_fails_on_a_stale_version() {
        let io = MemoryFileIO::default();
        io.write_new("t/hint", b"1").unwrap();
        let v1 = io.status("t/hint").unwrap().version.unwrap();
        let v2 = io.replace_if_match("t/hint", b"2", &v1).unwrap();
        assert_ne!(v1, v2);
        assert_eq!(io.read("t/hint").unwrap(), b"2");
        // a writer still holding v1 loses
        let e = io.replace_if_match("t/hint", b"3", &v1).unwrap_err();
        assert!(matches!(e, Error::PreconditionFailed { .. }), "{e}");
        assert!(e.to_string().contains("t/hint"), "{e}");
        assert_eq!(io.read("t/hint").unwrap(), b"2");
        // deleted and re-created: the old version does not match the new file
        io.delete("t/hint").unwrap();
        assert!(io.replace_if_match("t/hint", b"4", &v2).is_err());
        io.write_new("t/hint", b"5").unwrap();
        assert!(io.replace_if_match("t/hint", b"6", &v2).is_err());
        // the local file system refuses rather than replacing non-atomically
        assert!(!LocalFileIO.supports_conditional_replace());
        let e = LocalFileIO
            .replace_if_match("/tmp/x", b"1", &v2)
            .unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    }

    #[test]
    fn local_file_io_refuses_other_schemes() {
        for loc in [
            "s3n://bucket/t/metadata/v1.json",
            "hdfs:/t/v1.json",
            "file:s3://b/x",
        ] {
            let err = LocalFileIO.write_new(loc, b"x").unwrap_err();
            assert!(matches!(err, Error::Unsupported { .. }), "{loc}: {err}");
            assert!(err.to_string().contains(loc), "{err}");
            assert!(LocalFileIO.exists(loc).is_err());
            assert!(LocalFileIO.read(loc).is_err());
        }
        assert!(!std::path::Path::new("s3n:").exists());
        // Colons later in a path are not schemes.
        let dir = std::env::temp_dir().join(format!("icefloe-io-colon-{}", std::process::id()));
        let loc = format!("{}/a:b/c.json", dir.display());
        LocalFileIO.write_new(&loc, b"x").unwrap();
        assert_eq!(LocalFileIO.read(&format!("file://{loc}")).unwrap(), b"x");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn write_new_refuses_to_overwrite() {
        let dir = std::env::temp_dir().join(format!("icefloe-io-{}", std::process::id()));
        let p = dir.join("a/b.json");
        let loc = format!("file://{}", p.display());
        LocalFileIO.write_new(&loc, b"x").unwrap();
        assert_eq!(LocalFileIO.read(&loc).unwrap(), b"x");
        assert!(LocalFileIO.write_new(&loc, b"y").is_err());
        assert!(LocalFileIO.exists(p.to_str().unwrap()).unwrap());
        assert_eq!(
            LocalFileIO.list(dir.join("a").to_str().unwrap()).unwrap(),
            vec!["b.json"]
        );
        // range reads: exact, and out-of-range fails without panicking
        LocalFileIO
            .write_new(dir.join("r.bin").to_str().unwrap(), b"0123456789")
            .unwrap();
        let r = dir.join("r.bin");
        let r = r.to_str().unwrap();
        assert_eq!(LocalFileIO.read_range(r, 3, 4).unwrap(), b"3456");
        assert_eq!(LocalFileIO.read_range(r, 10, 0).unwrap(), b"");
        assert!(LocalFileIO.read_range(r, 8, 3).is_err());
        assert!(LocalFileIO.read_range(r, u64::MAX, 2).is_err());
        assert_eq!(LocalFileIO.file_size(r).unwrap(), 10);
        LocalFileIO.delete(r).unwrap();
        assert!(!LocalFileIO.exists(r).unwrap());
        LocalFileIO.delete(r).unwrap();
        let e = LocalFileIO.read("/no/such/file").unwrap_err();
        assert!(e.to_string().contains("/no/such/file"));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
