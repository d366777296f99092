//! Orphan files: files under a table's location that no metadata of the table reaches,
//! found and deleted as Java's `DeleteOrphanFilesSparkAction` (the `remove_orphan_files`
//! procedure) does.
//!
//! - **Valid files** are everything the current metadata reaches: the manifest list of every
//!   snapshot (of every branch and tag, and unreferenced ones), every manifest they name,
//!   the live data and delete files of those manifests (Puffin files of deletion vectors
//!   included), the statistics and partition statistics files, the current metadata file,
//!   the files of its metadata log, and `<location>/metadata/version-hint.text`.
//! - **Listed files** are the files inside the location (the table's, or a folder of it), at
//!   any depth, through the table's [`FileIO`], that were last modified before the cutoff
//!   (by default three days ago, as Java), except hidden ones (a name below the location that
//!   starts with `_` or `.`, unless it is a partition folder of a field so named) — and,
//!   beyond Java, except every file of another table nested inside the location (a folder
//!   holding `metadata/*.metadata.json` or `metadata/version-hint.text` that is not this
//!   table's metadata folder). Listing is folder by folder, so `s3://b/t` never sees
//!   `s3://b/tt`.
//! - **Matching** compares the path part of each location (scheme and authority apart,
//!   Java's `FileURI`): a listed file whose path no valid file has is an orphan. When a
//!   valid file has the path but another scheme or authority (after the `equal_schemes`
//!   and `equal_authorities` maps; `s3a` and `s3n` are `s3` by default), the prefix
//!   mismatch mode decides: `Error` (the default) refuses the whole run and names the
//!   conflicting pairs, `Ignore` keeps the file, `Delete` deletes it.
//! - Nothing is deleted on a dry run; otherwise the orphans are deleted in parallel (bulk
//!   delete requests on S3 and Azure), best effort as Java (a failed delete is reported, not
//!   an error).
//!
//! `gc.enabled=false` refuses the run, as Java (the table may share files with another).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Error, Result};
use crate::io::{FileIO, ListedFile};
use crate::manifest::{
    read_manifest, read_manifest_list, ManifestFile, ManifestProjection, ManifestSource,
    ReadManifestOptions,
};
use crate::spec::table_metadata::TableMetadata;

/// Java's default cutoff: files modified in the last three days are never orphans.
pub const DEFAULT_OLDER_THAN_MS: i64 = 3 * 24 * 60 * 60 * 1000;

const GC_ENABLED: &str = "gc.enabled";
const VERSION_HINT: &str = "version-hint.text";
/// Deletes in flight at once on a FileIO that does not say how many fetches suit it.
const DEFAULT_DELETE_THREADS: usize = 4;

/// What to do with a listed file whose path a valid file has under another scheme or
/// authority (Java's `DeleteOrphanFiles.PrefixMismatchMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrefixMismatchMode {
    /// Refuse the run, naming the conflicting schemes and authorities.
    #[default]
    Error,
    /// Keep the file.
    Ignore,
    /// Take the file for an orphan (only when sure the prefixes differ).
    Delete,
}

impl PrefixMismatchMode {
    /// Java's names, in any case: `ERROR`, `IGNORE`, `DELETE`.
    pub fn parse(name: &str) -> Result<Self> {
        match name.trim().to_ascii_uppercase().as_str() {
            "ERROR" => Ok(PrefixMismatchMode::Error),
            "IGNORE" => Ok(PrefixMismatchMode::Ignore),
            "DELETE" => Ok(PrefixMismatchMode::Delete),
            _ => Err(Error::invalid_argument(format!(
                "prefix_mismatch_mode: '{name}' is not one of ERROR, IGNORE, DELETE"
            ))),
        }
    }
}

/// One orphan-file run's settings.
#[derive(Debug, Clone)]
pub struct DeleteOrphanFiles {
    older_than_ms: i64,
    location: Option<String>,
    mode: PrefixMismatchMode,
    equal_schemes: HashMap<String, String>,
    equal_authorities: HashMap<String, String>,
    dry_run: bool,
    delete_threads: Option<usize>,
}

/// What a run found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrphanFilesResult {
    /// Every orphan found, sorted (deleted unless this was a dry run).
    pub orphan_file_locations: Vec<String>,
    /// Orphans whose delete failed, with the error (they are still in the list above).
    pub failed_deletes: Vec<(String, String)>,
}

impl Default for DeleteOrphanFiles {
    fn default() -> Self {
        DeleteOrphanFiles::new()
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Java's `flattenMap`: a key may list several names, comma-separated, for one value.
fn flatten(map: &HashMap<String, String>, into: &mut HashMap<String, String>) {
    for (keys, value) in map {
        for key in keys.split(',') {
            into.insert(key.trim().to_string(), value.trim().to_string());
        }
    }
}

impl DeleteOrphanFiles {
    /// Files older than three days, under the table's location, `Error` on a prefix
    /// mismatch, `s3a` and `s3n` equal to `s3`.
    pub fn new() -> Self {
        DeleteOrphanFiles {
            older_than_ms: now_ms().saturating_sub(DEFAULT_OLDER_THAN_MS),
            location: None,
            mode: PrefixMismatchMode::Error,
            equal_schemes: HashMap::from([
                ("s3n".to_string(), "s3".to_string()),
                ("s3a".to_string(), "s3".to_string()),
            ]),
            equal_authorities: HashMap::new(),
            dry_run: false,
            delete_threads: None,
        }
    }

    /// Only files last modified before this time (ms since the epoch) can be orphans.
    pub fn older_than(mut self, timestamp_ms: i64) -> Self {
        self.older_than_ms = timestamp_ms;
        self
    }

    /// The folder to look in (default: the table's location).
    pub fn location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }

    pub fn prefix_mismatch_mode(mut self, mode: PrefixMismatchMode) -> Self {
        self.mode = mode;
        self
    }

    /// Schemes that name the same store (`{"s3a,s3n": "s3"}`), added to the default.
    pub fn equal_schemes(mut self, map: &HashMap<String, String>) -> Self {
        flatten(map, &mut self.equal_schemes);
        self
    }

    /// Authorities that name the same store (`{"bucket1,bucket1-alias": "bucket1"}`).
    pub fn equal_authorities(mut self, map: &HashMap<String, String>) -> Self {
        let mut flat = HashMap::new();
        flatten(map, &mut flat);
        self.equal_authorities = flat;
        self
    }

    /// Find the orphans without deleting them.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// How many delete requests run at once (default: the FileIO's fetch concurrency, else
    /// 4); on S3 and Azure each request deletes up to `s3.delete.batch-size` files.
    pub fn delete_threads(mut self, threads: usize) -> Result<Self> {
        if threads == 0 {
            return Err(Error::invalid_argument(
                "max_concurrent_deletes should have value > 0, value: 0",
            ));
        }
        self.delete_threads = Some(threads);
        Ok(self)
    }

    /// Finds the orphans of the table whose current metadata is `md` (read from
    /// `metadata_location`, which is valid too) and, unless a dry run, deletes them.
    pub fn execute(
        &self,
        io: &dyn FileIO,
        md: &TableMetadata,
        metadata_location: Option<&str>,
    ) -> Result<OrphanFilesResult> {
        let gc = md.property(GC_ENABLED).unwrap_or("true");
        if !gc.trim().eq_ignore_ascii_case("true") {
            return Err(Error::validation_failed(
                "cannot delete orphan files: GC is disabled (gc.enabled=false; deleting files may corrupt other tables)",
            ));
        }
        let location = self.location.clone().unwrap_or_else(|| md.location.clone());
        let valid = valid_files(io, md, metadata_location)?;
        let listed = io.list_files(&location)?;
        let candidates = self.candidates(md, &location, listed);
        let orphans = self.find_orphans(&candidates, &valid)?;
        let mut result = OrphanFilesResult {
            orphan_file_locations: orphans,
            failed_deletes: Vec::new(),
        };
        if !self.dry_run {
            let threads = self.delete_threads.unwrap_or(match io.fetch_concurrency() {
                0 => DEFAULT_DELETE_THREADS,
                n => n,
            });
            result.failed_deletes = delete_in_parallel(io, &result.orphan_file_locations, threads);
        }
        Ok(result)
    }

    /// The listed files that may be orphans: old enough, not hidden, not another table's.
    fn candidates(
        &self,
        md: &TableMetadata,
        location: &str,
        listed: Vec<ListedFile>,
    ) -> Vec<String> {
        let hidden_partitions: BTreeSet<String> = md
            .partition_specs
            .iter()
            .flat_map(|s| s.fields.iter())
            .filter(|f| f.name.starts_with('_') || f.name.starts_with('.'))
            .map(|f| format!("{}=", f.name))
            .collect();
        let other_roots = other_table_roots(md, location, &listed);
        let base = format!("{}/", location.trim_end_matches('/'));
        listed
            .into_iter()
            .filter(|f| f.last_modified_ms < self.older_than_ms)
            .filter(|f| {
                let below = f.location.strip_prefix(&base).unwrap_or(&f.location);
                !below.split('/').any(|name| {
                    (name.starts_with('_') || name.starts_with('.'))
                        && !hidden_partitions
                            .iter()
                            .any(|p| name.starts_with(p.as_str()))
                })
            })
            .filter(|f| {
                !other_roots
                    .iter()
                    .any(|r| crate::io::is_within(r, &f.location))
            })
            .map(|f| f.location)
            .collect()
    }

    fn uri(&self, location: &str, listed: bool) -> FileUri {
        let mut u = FileUri::parse(location);
        // a listed local file is a `file:` one: the local FileIO lists in the form the
        // location was given (often a plain path), where Hadoop's listing says `file:`
        if listed && u.scheme.is_none() {
            u.scheme = Some("file".to_string());
        }
        if let Some(s) = &u.scheme {
            if let Some(equal) = self.equal_schemes.get(s) {
                u.scheme = Some(equal.clone());
            }
        }
        if let Some(a) = &u.authority {
            if let Some(equal) = self.equal_authorities.get(a) {
                u.authority = Some(equal.clone());
            }
        }
        u
    }

    fn find_orphans(&self, candidates: &[String], valid: &BTreeSet<String>) -> Result<Vec<String>> {
        let mut by_path: HashMap<String, Vec<FileUri>> = HashMap::new();
        for v in valid {
            let u = self.uri(v, false);
            by_path.entry(u.path.clone()).or_default().push(u);
        }
        let mut orphans = Vec::new();
        let mut conflicts: BTreeSet<(String, String)> = BTreeSet::new();
        for actual in candidates {
            let a = self.uri(actual, true);
            let Some(matches) = by_path.get(&a.path) else {
                orphans.push(actual.clone());
                continue;
            };
            if matches.iter().any(|v| {
                component_match(&v.scheme, &a.scheme) && component_match(&v.authority, &a.authority)
            }) {
                continue;
            }
            match self.mode {
                PrefixMismatchMode::Delete => orphans.push(actual.clone()),
                PrefixMismatchMode::Ignore => {}
                PrefixMismatchMode::Error => {
                    for v in matches {
                        if !component_match(&v.scheme, &a.scheme) {
                            conflicts.insert((
                                v.scheme.clone().unwrap_or_default(),
                                a.scheme.clone().unwrap_or_default(),
                            ));
                        }
                        if !component_match(&v.authority, &a.authority) {
                            conflicts.insert((
                                v.authority.clone().unwrap_or_default(),
                                a.authority.clone().unwrap_or_default(),
                            ));
                        }
                    }
                }
            }
        }
        if !conflicts.is_empty() {
            let pairs: Vec<String> = conflicts
                .iter()
                .map(|(v, a)| format!("(valid '{v}', listed '{a}')"))
                .collect();
            return Err(Error::validation_failed(format!(
                "unable to determine whether certain files are orphan: the metadata references files \
                 that match listed files except for their authority or scheme. Say which are equal \
                 (equal_schemes, equal_authorities), or set prefix_mismatch_mode to IGNORE to keep \
                 them, or to DELETE only if you are certain they differ (deleted files cannot be \
                 recovered). Conflicting authorities/schemes: {}",
                pairs.join(", ")
            )));
        }
        orphans.sort();
        orphans.dedup();
        Ok(orphans)
    }
}

/// Java's `FileURI.uriComponentMatch`: a valid file without the component matches any.
fn component_match(valid: &Option<String>, actual: &Option<String>) -> bool {
    match valid {
        None => true,
        Some(v) if v.is_empty() => true,
        Some(v) => actual.as_deref().is_some_and(|a| a.eq_ignore_ascii_case(v)),
    }
}

/// A location as Hadoop's `Path.toUri()` splits it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileUri {
    scheme: Option<String>,
    authority: Option<String>,
    path: String,
}

fn is_scheme(s: &str) -> bool {
    // one letter is a Windows drive, not a scheme
    s.len() > 1
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

impl FileUri {
    fn parse(location: &str) -> FileUri {
        let (scheme, rest) = match location.split_once(':') {
            Some((s, rest)) if is_scheme(s) => (Some(s.to_string()), rest),
            _ => (None, location),
        };
        let (authority, path) = match rest.strip_prefix("//") {
            Some(after) => {
                let end = after.find('/').unwrap_or(after.len());
                let a = &after[..end];
                ((!a.is_empty()).then(|| a.to_string()), &after[end..])
            }
            None => (None, rest),
        };
        // Hadoop's Path drops repeated and trailing slashes
        let mut normal = String::with_capacity(path.len());
        for part in path.split('/').filter(|p| !p.is_empty()) {
            normal.push('/');
            normal.push_str(part);
        }
        if normal.is_empty() {
            normal.push('/');
        }
        FileUri {
            scheme,
            authority,
            path: normal,
        }
    }
}

/// The parent folder of a location (`None` at the top).
fn parent(location: &str) -> Option<&str> {
    location
        .trim_end_matches('/')
        .rsplit_once('/')
        .map(|(p, _)| p)
}

/// Folders inside `location` that hold another table: a `metadata` folder there holds a
/// table metadata file or version hint, and it is not this table's metadata folder. The
/// table's own location is never one (its `metadata` folder may hold files from before a
/// `write.metadata.path` moved the metadata).
fn other_table_roots(md: &TableMetadata, location: &str, listed: &[ListedFile]) -> Vec<String> {
    let own_metadata = crate::commit::properties::metadata_dir(md);
    let mut roots: BTreeSet<String> = BTreeSet::new();
    for f in listed {
        let name = f.location.rsplit('/').next().unwrap_or_default();
        if !(name.ends_with(".metadata.json") || name == VERSION_HINT) {
            continue;
        }
        let Some(folder) = parent(&f.location) else {
            continue;
        };
        if !folder.ends_with("/metadata") || crate::io::same_location(folder, &own_metadata) {
            continue;
        }
        let Some(root) = parent(folder) else {
            continue;
        };
        if crate::io::is_within(location, root) && !crate::io::same_location(root, &md.location) {
            roots.insert(root.to_string());
        }
    }
    roots.into_iter().collect()
}

/// Runs `f` over `items` on up to `threads` threads, results in order.
fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(&f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut out: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        mine.push((i, f(item)));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            // a worker only panics if `f` does, which library code never does
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

/// Deletes through [`FileIO::delete_many`]: bulk requests on S3 and Azure, `threads`
/// requests at a time.
fn delete_in_parallel(io: &dyn FileIO, files: &[String], threads: usize) -> Vec<(String, String)> {
    io.delete_many(files, threads)
        .into_iter()
        .zip(files)
        .filter_map(|(r, f)| r.err().map(|e| (f.clone(), e.to_string())))
        .collect()
}

/// Every file the table's current metadata reaches (see the module documentation).
pub fn valid_files(
    io: &dyn FileIO,
    md: &TableMetadata,
    metadata_location: Option<&str>,
) -> Result<BTreeSet<String>> {
    let mut valid: BTreeSet<String> = BTreeSet::new();
    if let Some(l) = metadata_location {
        valid.insert(l.to_string());
    }
    valid.extend(md.metadata_log.iter().map(|e| e.metadata_file.clone()));
    valid.insert(format!(
        "{}/metadata/{VERSION_HINT}",
        md.location.trim_end_matches('/')
    ));
    valid.extend(md.statistics.iter().map(|s| s.statistics_path.clone()));
    valid.extend(
        md.partition_statistics
            .iter()
            .map(|s| s.statistics_path.clone()),
    );
    let threads = match io.fetch_concurrency() {
        0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
        n => n,
    };
    // manifest lists, then the manifests they name (each read once)
    let lists: Vec<String> = md
        .snapshots
        .iter()
        .filter_map(|s| s.manifest_list.clone())
        .collect();
    let mut manifests: BTreeMap<String, Option<ManifestFile>> = BTreeMap::new();
    for s in &md.snapshots {
        // old v1 snapshots name their manifests in the metadata
        for m in s.manifests.iter().flatten() {
            manifests.entry(m.clone()).or_insert(None);
        }
    }
    for read in parallel_map(&lists, threads, |l| read_manifest_list(io, l)) {
        for m in read? {
            manifests.insert(m.manifest_path.clone(), Some(m));
        }
    }
    valid.extend(lists);
    let manifests: Vec<(String, Option<ManifestFile>)> = manifests.into_iter().collect();
    let projection = ManifestProjection::minimal();
    let content = parallel_map(&manifests, threads, |(path, file)| -> Result<Vec<String>> {
        let options = ReadManifestOptions::default().projection(&projection);
        let options = match file {
            Some(f) => options.inherit_from(f),
            None => options,
        };
        let read = read_manifest(ManifestSource::file(io, path), &options)?;
        // live entries only, as Java's reader of the valid files: a file a manifest marks
        // deleted is reached only through the manifests of older snapshots, if any remain
        Ok(read
            .entries
            .iter()
            .filter(|e| e.is_live())
            .map(|e| e.data_file.file_path.clone())
            .collect())
    });
    let mut seen: HashSet<String> = HashSet::new();
    for files in content {
        for f in files? {
            if seen.insert(f.clone()) {
                valid.insert(f);
            }
        }
    }
    valid.extend(manifests.into_iter().map(|(p, _)| p));
    Ok(valid)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
#[path = "orphan_files_tests.rs"]
mod tests;
