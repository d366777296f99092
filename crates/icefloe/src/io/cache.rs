//! A bounded in-process cache of immutable metadata files, by location, in front of an
//! object-store FileIO (Java's `ContentCache` of manifests, with its property names).
//!
//! Only files that Iceberg never rewrites in place are cached: Avro files (manifests and
//! manifest lists, whose names carry a UUID or a snapshot id and an attempt number) and
//! `<n>-<uuid>.metadata.json`. Not cached: `version-hint.text` (rewritten on every commit
//! of a file-system catalog), the Hadoop layout's `v<n>.metadata.json` (a commit that
//! failed and deleted its file leaves that name to the next writer), and everything else.
//! Writes and deletes through this FileIO drop the location from the cache first, so a
//! failed-then-retried write at one location is never answered with the old bytes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::stats::{IoCounters, IoStats};
use super::{FileIO, FileStatus, FileVersion};
use crate::error::{Error, Result};

/// `io.manifest.cache.*` (Java's `CatalogProperties.IO_MANIFEST_CACHE_*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestCacheConfig {
    /// `io.manifest.cache-enabled`.
    pub enabled: bool,
    /// `io.manifest.cache.expiration-interval-ms`: an entry not read for this long is
    /// dropped (Java: expire after access).
    pub expiration: Duration,
    /// `io.manifest.cache.max-total-bytes`.
    pub max_total_bytes: u64,
    /// `io.manifest.cache.max-content-length`: larger files are not cached.
    pub max_content_length: u64,
}

impl Default for ManifestCacheConfig {
    fn default() -> Self {
        // Java's defaults (60 s, 100 MiB, 8 MiB), off as in Java: with these bounds a table
        // whose manifests exceed 100 MiB gets no hit at all (a plan reads every manifest
        // once, in order, so each evicts the next plan's), and each FileIO holds its own
        // cache; docs/benchmarks.md, "Planning on S3"
        ManifestCacheConfig {
            enabled: false,
            expiration: Duration::from_millis(60_000),
            max_total_bytes: 100 * 1024 * 1024,
            max_content_length: 8 * 1024 * 1024,
        }
    }
}

/// Whether a file at `location` is never rewritten in place (see the module docs).
pub fn is_immutable_metadata(location: &str) -> bool {
    let name = location.rsplit('/').next().unwrap_or(location);
    if name.ends_with(".avro") {
        return true;
    }
    let Some(stem) = name.strip_suffix(".metadata.json") else {
        return false;
    };
    // `v12.metadata.json` is the Hadoop layout's, reused after a failed commit
    let hadoop = stem
        .strip_prefix('v')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    !hadoop
}

struct Entry {
    bytes: Arc<Vec<u8>>,
    last_access: Instant,
}

#[derive(Default)]
struct State {
    entries: HashMap<String, Entry>,
    total: u64,
}

/// A FileIO that answers reads of immutable metadata files from memory after the first.
pub struct CachingFileIO {
    inner: Arc<dyn FileIO>,
    config: ManifestCacheConfig,
    state: Mutex<State>,
    counters: IoCounters,
}

impl std::fmt::Debug for CachingFileIO {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachingFileIO")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl CachingFileIO {
    pub fn new(inner: Arc<dyn FileIO>, config: ManifestCacheConfig) -> Self {
        CachingFileIO {
            inner,
            config,
            state: Mutex::new(State::default()),
            counters: IoCounters::default(),
        }
    }

    fn state(&self) -> Result<std::sync::MutexGuard<'_, State>> {
        self.state
            .lock()
            .map_err(|_| Error::unsupported("the manifest cache was poisoned"))
    }

    fn get(&self, location: &str) -> Result<Option<Arc<Vec<u8>>>> {
        let mut state = self.state()?;
        let now = Instant::now();
        let Some(e) = state.entries.get_mut(location) else {
            return Ok(None);
        };
        if now.duration_since(e.last_access) > self.config.expiration {
            if let Some(e) = state.entries.remove(location) {
                state.total -= e.bytes.len() as u64;
            }
            return Ok(None);
        }
        e.last_access = now;
        let bytes = Arc::clone(&e.bytes);
        drop(state);
        self.counters.cache_hit();
        Ok(Some(bytes))
    }

    fn put(&self, location: &str, bytes: Arc<Vec<u8>>) -> Result<()> {
        let len = bytes.len() as u64;
        if len > self.config.max_content_length || len > self.config.max_total_bytes {
            return Ok(());
        }
        let mut state = self.state()?;
        if let Some(old) = state.entries.remove(location) {
            state.total -= old.bytes.len() as u64;
        }
        // least recently read first; a plan reads each manifest once, so a table larger
        // than the cache keeps its most recently read manifests
        while state.total + len > self.config.max_total_bytes {
            let Some(oldest) = state
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_access)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(e) = state.entries.remove(&oldest) {
                state.total -= e.bytes.len() as u64;
            }
        }
        state.total += len;
        state.entries.insert(
            location.to_string(),
            Entry {
                bytes,
                last_access: Instant::now(),
            },
        );
        Ok(())
    }

    fn invalidate(&self, location: &str) -> Result<()> {
        let mut state = self.state()?;
        if let Some(e) = state.entries.remove(location) {
            state.total -= e.bytes.len() as u64;
        }
        Ok(())
    }

    /// Bytes held now (for tests of the bound).
    pub fn cached_bytes(&self) -> u64 {
        self.state().map_or(0, |s| s.total)
    }
}

impl FileIO for CachingFileIO {
    fn read(&self, location: &str) -> Result<Vec<u8>> {
        if !is_immutable_metadata(location) {
            return self.inner.read(location);
        }
        if let Some(bytes) = self.get(location)? {
            return Ok(bytes.as_ref().clone());
        }
        let bytes = self.inner.read(location)?;
        self.put(location, Arc::new(bytes.clone()))?;
        Ok(bytes)
    }

    fn read_range(&self, location: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        if is_immutable_metadata(location) {
            if let Some(bytes) = self.get(location)? {
                return super::slice_range(&bytes, offset, len)
                    .map(<[u8]>::to_vec)
                    .ok_or_else(|| super::short_read(location, offset, len, bytes.len() as u64));
            }
        }
        self.inner.read_range(location, offset, len)
    }

    fn file_size(&self, location: &str) -> Result<u64> {
        if is_immutable_metadata(location) {
            if let Some(bytes) = self.get(location)? {
                return Ok(bytes.len() as u64);
            }
        }
        self.inner.file_size(location)
    }

    fn status(&self, location: &str) -> Result<FileStatus> {
        self.inner.status(location)
    }

    fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()> {
        self.invalidate(location)?;
        self.inner.write_new(location, bytes)
    }

    fn exists(&self, location: &str) -> Result<bool> {
        self.inner.exists(location)
    }

    fn list(&self, location: &str) -> Result<Vec<String>> {
        self.inner.list(location)
    }

    fn list_files(&self, location: &str) -> Result<Vec<super::ListedFile>> {
        self.inner.list_files(location)
    }

    fn delete(&self, location: &str) -> Result<()> {
        self.invalidate(location)?;
        self.inner.delete(location)
    }

    fn delete_many(&self, locations: &[String], max_concurrent: usize) -> Vec<Result<()>> {
        // a location the cache cannot forget is not deleted (it could be read back)
        let mut out: Vec<Option<Result<()>>> = Vec::with_capacity(locations.len());
        let mut forgotten = Vec::with_capacity(locations.len());
        for l in locations {
            match self.invalidate(l) {
                Ok(()) => {
                    out.push(None);
                    forgotten.push(l.clone());
                }
                Err(e) => out.push(Some(Err(e))),
            }
        }
        let mut deleted = self
            .inner
            .delete_many(&forgotten, max_concurrent)
            .into_iter();
        out.into_iter()
            .zip(locations)
            .map(|(r, l)| {
                r.or_else(|| deleted.next())
                    .unwrap_or_else(|| Err(super::not_deleted(l)))
            })
            .collect()
    }

    fn properties_for(&self, location: &str) -> Option<Vec<(String, String)>> {
        self.inner.properties_for(location)
    }

    fn supports_conditional_replace(&self) -> bool {
        self.inner.supports_conditional_replace()
    }

    fn replace_if_match(
        &self,
        location: &str,
        bytes: &[u8],
        expected: &FileVersion,
    ) -> Result<FileVersion> {
        self.invalidate(location)?;
        self.inner.replace_if_match(location, bytes, expected)
    }

    fn stats(&self) -> Option<IoStats> {
        let own = self.counters.snapshot();
        let mut s = self.inner.stats().unwrap_or_default();
        s.cache_hits += own.cache_hits;
        Some(s)
    }

    fn reset_stats(&self) {
        self.counters.reset();
        self.inner.reset_stats();
    }

    fn fetch_concurrency(&self) -> usize {
        self.inner.fetch_concurrency()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::io::MemoryFileIO;

    /// A memory FileIO that counts its reads, as an object store would count GETs.
    #[derive(Default)]
    struct Counting {
        inner: MemoryFileIO,
        counters: IoCounters,
    }

    impl FileIO for Counting {
        fn read(&self, location: &str) -> Result<Vec<u8>> {
            self.counters.requests(1);
            let b = self.inner.read(location)?;
            self.counters.read(b.len() as u64);
            Ok(b)
        }
        fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()> {
            self.counters.requests(1);
            self.inner.write_new(location, bytes)
        }
        fn exists(&self, location: &str) -> Result<bool> {
            self.inner.exists(location)
        }
        fn list(&self, location: &str) -> Result<Vec<String>> {
            self.inner.list(location)
        }
        fn delete(&self, location: &str) -> Result<()> {
            self.counters.requests(1);
            self.inner.delete(location)
        }
        fn stats(&self) -> Option<IoStats> {
            Some(self.counters.snapshot())
        }
        fn reset_stats(&self) {
            self.counters.reset();
        }
    }

    fn cached(config: ManifestCacheConfig) -> CachingFileIO {
        CachingFileIO::new(Arc::new(Counting::default()), config)
    }

    /// `delete_many` forgets the cached files it deletes: a later read finds them gone.
    #[test]
    fn delete_many_forgets_what_it_deletes() {
        let io = cached(ManifestCacheConfig {
            enabled: true,
            ..ManifestCacheConfig::default()
        });
        let files: Vec<String> = (0..3)
            .map(|i| format!("s3://b/t/metadata/m{i}.avro"))
            .collect();
        for f in &files {
            io.write_new(f, b"avro").unwrap();
            assert_eq!(io.read(f).unwrap(), b"avro");
        }
        assert!(io.cached_bytes() > 0);
        let results = io.delete_many(&files, 2);
        assert!(results.iter().all(|r| r.is_ok()), "{results:?}");
        assert_eq!(io.cached_bytes(), 0);
        for f in &files {
            assert!(io.read(f).is_err(), "{f}");
        }
    }

    #[test]
    fn which_files_are_cached() {
        for yes in [
            "s3://b/t/metadata/snap-1-1-abc.avro",
            "s3://b/t/metadata/abc-m0.avro",
            "s3://b/t/metadata/00003-0d9f1c2e-aaaa.metadata.json",
        ] {
            assert!(is_immutable_metadata(yes), "{yes}");
        }
        for no in [
            "s3://b/t/metadata/version-hint.text",
            "s3://b/t/metadata/v3.metadata.json",
            "s3://b/t/data/x.parquet",
            "s3://b/t/metadata/x.stats",
        ] {
            assert!(!is_immutable_metadata(no), "{no}");
        }
    }

    #[test]
    fn second_read_is_a_hit_and_sends_no_request() {
        let io = cached(ManifestCacheConfig::default());
        let loc = "s3://b/t/metadata/m0.avro";
        io.write_new(loc, b"manifest").unwrap();
        io.reset_stats();
        assert_eq!(io.read(loc).unwrap(), b"manifest");
        assert_eq!(io.read(loc).unwrap(), b"manifest");
        assert_eq!(io.read_range(loc, 2, 3).unwrap(), b"nif");
        assert_eq!(io.file_size(loc).unwrap(), 8);
        let s = io.stats().unwrap();
        assert_eq!((s.requests, s.bytes_read, s.cache_hits), (1, 8, 3));
        // a range past the end of a cached file is the same short read as uncached
        assert!(io.read_range(loc, 6, 3).is_err());
    }

    #[test]
    fn version_hint_is_never_cached() {
        let io = cached(ManifestCacheConfig::default());
        let loc = "s3://b/t/metadata/version-hint.text";
        io.write_new(loc, b"1").unwrap();
        assert_eq!(io.read(loc).unwrap(), b"1");
        // another writer replaces it (a file-system catalog's commit)
        io.inner.delete(loc).unwrap();
        io.inner.write_new(loc, b"2").unwrap();
        assert_eq!(io.read(loc).unwrap(), b"2");
        assert_eq!(io.stats().unwrap().cache_hits, 0);
    }

    #[test]
    fn a_rewrite_at_the_same_location_is_not_served_stale() {
        let io = cached(ManifestCacheConfig::default());
        let loc = "s3://b/t/metadata/m0.avro";
        io.write_new(loc, b"first attempt").unwrap();
        assert_eq!(io.read(loc).unwrap(), b"first attempt");
        // the write is retried after a failure: its file deleted, then written again
        io.delete(loc).unwrap();
        io.write_new(loc, b"second").unwrap();
        assert_eq!(io.read(loc).unwrap(), b"second");
    }

    #[test]
    fn bounded_by_total_bytes_and_content_length() {
        let io = cached(ManifestCacheConfig {
            max_total_bytes: 25,
            max_content_length: 12,
            ..ManifestCacheConfig::default()
        });
        for i in 0..4 {
            io.write_new(&format!("s3://b/m{i}.avro"), &[i as u8; 10])
                .unwrap();
        }
        io.write_new("s3://b/big.avro", &[9; 13]).unwrap();
        for i in 0..4 {
            io.read(&format!("s3://b/m{i}.avro")).unwrap();
        }
        io.read("s3://b/big.avro").unwrap();
        // two 10-byte files fit in 25; the 13-byte one is over the content length
        assert_eq!(io.cached_bytes(), 20);
        io.reset_stats();
        // the two most recently read are kept
        io.read("s3://b/m3.avro").unwrap();
        io.read("s3://b/m2.avro").unwrap();
        io.read("s3://b/big.avro").unwrap();
        io.read("s3://b/m0.avro").unwrap();
        let s = io.stats().unwrap();
        assert_eq!((s.cache_hits, s.requests), (2, 2));
    }

    #[test]
    fn entries_expire_after_the_interval_without_reads() {
        let io = cached(ManifestCacheConfig {
            expiration: Duration::from_millis(20),
            ..ManifestCacheConfig::default()
        });
        let loc = "s3://b/m.avro";
        io.write_new(loc, b"x").unwrap();
        io.read(loc).unwrap();
        std::thread::sleep(Duration::from_millis(40));
        io.reset_stats();
        io.read(loc).unwrap();
        assert_eq!(io.stats().unwrap().cache_hits, 0);
        assert_eq!(io.stats().unwrap().requests, 1);
    }
}
