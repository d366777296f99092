//! Snapshot expiry ("Snapshot Retention Policy"), following Java's `RemoveSnapshots` and
//! `ReachableFileCleanup`.
//!
//! Which snapshots stay: every retained ref's snapshot; for each branch, its ancestors while
//! fewer than `min-snapshots-to-keep` are kept or they are younger than
//! `max-snapshot-age-ms`; snapshots on no branch or tag that are younger than the default
//! age. Refs older than `max-ref-age-ms` (never `main`) are removed first. The new
//! metadata is committed through a [`Transaction`] (retried like any commit); only after
//! the commit succeeded are files deleted, and only files no retained snapshot reaches:
//! manifest lists of removed snapshots, manifests no retained manifest list names, the
//! data and delete files (Puffin deletion vectors included) live in those manifests and in
//! no retained manifest, and statistics files the metadata no longer names — and, unless
//! [`ExpireSnapshots::delete_outside_location`], only those inside the table's location.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::builder::MetadataBuilder;
use super::transaction::{PendingChange, Transaction};
use super::update::TableUpdate;
use crate::catalog::{Catalog, PurgeScope, TableIdent};
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::{
    read_manifest, read_manifest_list, DataContentType, ManifestFile, ManifestProjection,
    ManifestSource, ReadManifestOptions,
};
use crate::spec::snapshot::MAIN_BRANCH;
use crate::spec::table_metadata::TableMetadata;

pub const MAX_SNAPSHOT_AGE_MS: &str = "history.expire.max-snapshot-age-ms";
pub const MAX_SNAPSHOT_AGE_MS_DEFAULT: i64 = 5 * 24 * 60 * 60 * 1000;
pub const MIN_SNAPSHOTS_TO_KEEP: &str = "history.expire.min-snapshots-to-keep";
pub const MIN_SNAPSHOTS_TO_KEEP_DEFAULT: i32 = 1;
pub const MAX_REF_AGE_MS: &str = "history.expire.max-ref-age-ms";
pub const MAX_REF_AGE_MS_DEFAULT: i64 = i64::MAX;
pub const GC_ENABLED: &str = "gc.enabled";

fn prop<T: std::str::FromStr>(md: &TableMetadata, key: &str, default: T) -> Result<T> {
    match md.property(key) {
        None => Ok(default),
        Some(v) => v.trim().parse().map_err(|_| {
            Error::invalid_metadata(
                format!("properties.{key}"),
                format!("'{v}' is not a valid value"),
            )
        }),
    }
}

/// The retention settings of one expiry, resolved against the table's properties.
#[derive(Debug, Clone, Copy)]
struct Retention {
    now: i64,
    expire_older_than: i64,
    min_snapshots: i32,
    max_ref_age_ms: i64,
}

/// Which snapshots and refs expire, and which files go with them.
#[derive(Debug, Clone)]
pub struct ExpireSnapshots {
    now: i64,
    older_than: Option<i64>,
    retain_last: Option<i32>,
    ids: BTreeSet<i64>,
    clean_expired_files: bool,
    clean_expired_metadata: bool,
    scope: PurgeScope,
    max_concurrent_deletes: Option<usize>,
}

/// Deletes in flight when neither [`ExpireSnapshots::max_concurrent_deletes`] nor the
/// FileIO's fetch concurrency (object stores: `io.fetch-concurrency`) says.
const DEFAULT_CONCURRENT_DELETES: usize = 4;

impl Default for ExpireSnapshots {
    fn default() -> Self {
        ExpireSnapshots::new()
    }
}

/// What an expiry removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpireResult {
    pub removed_snapshot_ids: Vec<i64>,
    pub removed_refs: Vec<String>,
    pub deleted_data_files: Vec<String>,
    /// Position and equality delete files, and Puffin files holding deletion vectors.
    pub deleted_delete_files: Vec<String>,
    pub deleted_manifests: Vec<String>,
    pub deleted_manifest_lists: Vec<String>,
    pub deleted_statistics_files: Vec<String>,
    /// Files only expired snapshots reached that lie outside the table's location, left in
    /// place (unless [`ExpireSnapshots::delete_outside_location`]).
    pub kept_outside_location: Vec<String>,
    /// Files that could not be deleted, with the error: left behind as orphans (the expiry
    /// is committed by then), as in Java, where a failed delete is logged, not raised.
    pub failed_deletes: Vec<(String, String)>,
}

impl ExpireResult {
    /// Every deleted file.
    pub fn deleted_files(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .deleted_data_files
            .iter()
            .chain(&self.deleted_delete_files)
            .chain(&self.deleted_manifests)
            .chain(&self.deleted_manifest_lists)
            .chain(&self.deleted_statistics_files)
            .cloned()
            .collect();
        all.sort();
        all
    }
}

impl ExpireSnapshots {
    /// An expiry with the table's retention properties, as of now.
    pub fn new() -> ExpireSnapshots {
        ExpireSnapshots {
            now: chrono::Utc::now().timestamp_millis(),
            older_than: None,
            retain_last: None,
            ids: BTreeSet::new(),
            clean_expired_files: true,
            clean_expired_metadata: false,
            scope: PurgeScope::TableLocation,
            max_concurrent_deletes: None,
        }
    }

    /// Expires snapshots older than the time (ms since the epoch) instead of the table's
    /// `history.expire.max-snapshot-age-ms`.
    pub fn expire_older_than(mut self, timestamp_ms: i64) -> Self {
        self.older_than = Some(timestamp_ms);
        self
    }

    /// Keeps at least `n` ancestors of each branch (overriding
    /// `history.expire.min-snapshots-to-keep`; a branch's own setting wins).
    pub fn retain_last(mut self, n: i32) -> Result<Self> {
        if n < 1 {
            return Err(Error::invalid_argument(format!(
                "number of snapshots to retain must be at least 1, cannot be: {n}"
            )));
        }
        self.retain_last = Some(n);
        Ok(self)
    }

    /// Expires this snapshot as well (it must not be a retained ref's snapshot).
    pub fn expire_snapshot_id(mut self, snapshot_id: i64) -> Self {
        self.ids.insert(snapshot_id);
        self
    }

    /// Whether files reachable only from expired snapshots are deleted (default true).
    pub fn clean_expired_files(mut self, clean: bool) -> Self {
        self.clean_expired_files = clean;
        self
    }

    /// Whether files outside the table's location are deleted too (default false): the
    /// metadata may name files of another table (a registered table, data files appended
    /// from elsewhere), which an expiry must not reach by default. Java deletes them.
    pub fn delete_outside_location(mut self, delete: bool) -> Self {
        self.scope = if delete {
            PurgeScope::Everywhere
        } else {
            PurgeScope::TableLocation
        };
        self
    }

    /// How many delete requests run at once (Java's Spark procedure argument
    /// `max_concurrent_deletes`). On S3 and Azure each request is a bulk delete of up to
    /// `s3.delete.batch-size` files; elsewhere one file. Default: the FileIO's fetch
    /// concurrency (`io.fetch-concurrency`, 16, on object stores), else 4.
    pub fn max_concurrent_deletes(mut self, n: usize) -> Result<Self> {
        if n == 0 {
            return Err(Error::invalid_argument(
                "max_concurrent_deletes should have value > 0, value: 0",
            ));
        }
        self.max_concurrent_deletes = Some(n);
        Ok(self)
    }

    /// Whether partition specs and schemas no retained snapshot uses are removed too
    /// (default false), as Java's `cleanExpiredMetadata`: every spec but the default one
    /// that no manifest of a retained snapshot was written with, and every schema but the
    /// current one that no retained snapshot names.
    pub fn clean_expired_metadata(mut self, clean: bool) -> Self {
        self.clean_expired_metadata = clean;
        self
    }

    fn retention(&self, md: &TableMetadata) -> Result<Retention> {
        let max_age = prop(md, MAX_SNAPSHOT_AGE_MS, MAX_SNAPSHOT_AGE_MS_DEFAULT)?;
        Ok(Retention {
            now: self.now,
            expire_older_than: self
                .older_than
                .unwrap_or_else(|| self.now.saturating_sub(max_age)),
            min_snapshots: match self.retain_last {
                Some(n) => n,
                None => prop(md, MIN_SNAPSHOTS_TO_KEEP, MIN_SNAPSHOTS_TO_KEEP_DEFAULT)?,
            },
            max_ref_age_ms: prop(md, MAX_REF_AGE_MS, MAX_REF_AGE_MS_DEFAULT)?,
        })
    }

    /// The refs that stay and the snapshots that go, in Java's order of checks.
    pub fn plan(&self, md: &TableMetadata) -> Result<(Vec<String>, Vec<i64>)> {
        let r = self.retention(md)?;
        let mut retained_refs = Vec::new();
        let mut removed_refs = Vec::new();
        for (name, reference) in &md.refs {
            if name == MAIN_BRANCH {
                retained_refs.push((name.clone(), reference.clone()));
                continue;
            }
            let max_ref_age = reference.max_ref_age_ms.unwrap_or(r.max_ref_age_ms);
            // a ref to a missing snapshot is invalid and removed
            let keep = md
                .snapshot_by_id(reference.snapshot_id)
                .is_some_and(|s| r.now.saturating_sub(s.timestamp_ms) <= max_ref_age);
            if keep {
                retained_refs.push((name.clone(), reference.clone()));
            } else {
                removed_refs.push(name.clone());
            }
        }

        let mut retain: HashSet<i64> = HashSet::new();
        for (name, reference) in &retained_refs {
            if self.ids.contains(&reference.snapshot_id) {
                return Err(Error::invalid_argument(format!(
                    "cannot expire {}: still referenced by ref {name}",
                    reference.snapshot_id
                )));
            }
            retain.insert(reference.snapshot_id);
        }
        // per branch: ancestors while below the minimum count or younger than the age
        for (_, reference) in retained_refs.iter().filter(|(_, x)| x.is_branch()) {
            let older_than = match reference.max_snapshot_age_ms {
                Some(age) => r.now.saturating_sub(age),
                None => r.expire_older_than,
            };
            let min_keep = reference.min_snapshots_to_keep.unwrap_or(r.min_snapshots);
            let mut kept = 0usize;
            for s in md.ancestors_of(reference.snapshot_id) {
                if (kept as i64) < i64::from(min_keep) || s.timestamp_ms >= older_than {
                    retain.insert(s.snapshot_id);
                    kept += 1;
                } else {
                    break;
                }
            }
        }
        // snapshots on no branch's history and no tag: kept while young
        let mut referenced: HashSet<i64> = HashSet::new();
        for (_, reference) in &retained_refs {
            if reference.is_branch() {
                referenced.extend(
                    md.ancestors_of(reference.snapshot_id)
                        .iter()
                        .map(|s| s.snapshot_id),
                );
            } else {
                referenced.insert(reference.snapshot_id);
            }
        }
        for s in &md.snapshots {
            if !referenced.contains(&s.snapshot_id) && s.timestamp_ms >= r.expire_older_than {
                retain.insert(s.snapshot_id);
            }
        }

        let mut removed: Vec<i64> = md
            .snapshots
            .iter()
            .map(|s| s.snapshot_id)
            .filter(|id| !retain.contains(id) || self.ids.contains(id))
            .collect();
        removed.sort_unstable();
        removed.dedup();
        Ok((removed_refs, removed))
    }

    /// Commits the expiry to the table, then (unless turned off) deletes the files only the
    /// expired snapshots reached.
    pub fn commit(self, catalog: Arc<dyn Catalog>, ident: &TableIdent) -> Result<ExpireResult> {
        let base = catalog.load_table(ident)?;
        check_gc_enabled(&base.metadata)?;
        // refuse up front rather than commit an expiry whose files cannot be worked out
        if self.clean_expired_files {
            if let Some(s) = base
                .metadata
                .snapshots
                .iter()
                .find(|s| s.manifest_list.is_none())
            {
                return Err(Error::unsupported(format!(
                    "snapshot {} embeds its manifests (old v1): cannot tell which files expiry may delete; use clean_expired_files(false)",
                    s.snapshot_id
                )));
            }
        }
        let seen = Arc::new(Mutex::new(None));
        let change = ExpireChange {
            expire: self.clone(),
            seen: seen.clone(),
        };
        let io = catalog.io();
        let mut tx = Transaction::new(catalog, ident.clone(), base);
        tx.add_change(Box::new(change));
        let committed = tx.commit()?;
        let attempt = seen
            .lock()
            .map_err(|_| Error::invalid_argument("expiry state poisoned"))?
            .take();
        let Some(attempt) = attempt else {
            return Ok(ExpireResult::default());
        };
        let mut result = ExpireResult {
            removed_snapshot_ids: attempt.removed_snapshots,
            removed_refs: attempt.removed_refs,
            ..ExpireResult::default()
        };
        if self.clean_expired_files && !result.removed_snapshot_ids.is_empty() {
            let files = files_to_delete(io.as_ref(), &attempt.before, &committed.metadata)?;
            let concurrency = self
                .max_concurrent_deletes
                .unwrap_or(match io.fetch_concurrency() {
                    0 => DEFAULT_CONCURRENT_DELETES,
                    n => n,
                });
            delete_all(
                io.as_ref(),
                &files,
                &committed.metadata.location,
                self.scope,
                concurrency,
                &mut result,
            );
        }
        Ok(result)
    }
}

fn check_gc_enabled(md: &TableMetadata) -> Result<()> {
    if !prop(md, GC_ENABLED, true)? {
        return Err(Error::validation_failed(
            "cannot expire snapshots: GC is disabled (gc.enabled=false; deleting files may corrupt other tables)",
        ));
    }
    Ok(())
}

/// What the last attempt decided, from the base it was applied to.
#[derive(Debug)]
struct Attempt {
    before: Arc<TableMetadata>,
    removed_refs: Vec<String>,
    removed_snapshots: Vec<i64>,
}

/// The expiry as a change of a transaction: planned anew against each attempt's base.
struct ExpireChange {
    expire: ExpireSnapshots,
    seen: Arc<Mutex<Option<Attempt>>>,
}

impl PendingChange for ExpireChange {
    fn apply(&mut self, io: &dyn FileIO, builder: &mut MetadataBuilder) -> Result<()> {
        let before = Arc::new(builder.current().clone());
        check_gc_enabled(&before)?;
        let (removed_refs, removed_snapshots) = self.expire.plan(&before)?;
        for name in &removed_refs {
            builder.apply(TableUpdate::RemoveSnapshotRef {
                ref_name: name.clone(),
            })?;
        }
        if !removed_snapshots.is_empty() {
            builder.apply(TableUpdate::RemoveSnapshots {
                snapshot_ids: removed_snapshots.clone(),
            })?;
        }
        if self.expire.clean_expired_metadata {
            remove_unused_specs_and_schemas(io, builder)?;
        }
        let mut seen = self
            .seen
            .lock()
            .map_err(|_| Error::invalid_argument("expiry state poisoned"))?;
        *seen = Some(Attempt {
            before,
            removed_refs,
            removed_snapshots,
        });
        Ok(())
    }
}

/// Java's `cleanExpiredMetadata`, on the metadata after the expiry: the default spec, the
/// current schema, and what the retained snapshots use (the specs of their manifests,
/// their schema ids) stay; the other specs and schemas go.
fn remove_unused_specs_and_schemas(io: &dyn FileIO, builder: &mut MetadataBuilder) -> Result<()> {
    let md = builder.current();
    let mut specs: BTreeSet<i32> = BTreeSet::from([md.default_spec_id]);
    let mut schemas: BTreeSet<i32> = BTreeSet::from([md.current_schema_id]);
    for snapshot in &md.snapshots {
        if let Some(id) = snapshot.schema_id {
            schemas.insert(id);
        }
        match &snapshot.manifest_list {
            // a v4 snapshot may point to a root: the specs of its live entries (root
            // files and leaves; a leaf holds files of one spec)
            Some(_) if md.format_version >= 4 => {
                use crate::manifest::v4::tree::{is_live, read_snapshot_top, SnapshotTop};
                let partitioning = crate::manifest::v4::V4Layout::for_table(md)?;
                match read_snapshot_top(io, &partitioning, snapshot)? {
                    SnapshotTop::List(list) => {
                        specs.extend(list.iter().map(|m| m.partition_spec_id));
                    }
                    SnapshotTop::Root(root) => specs.extend(
                        root.iter()
                            .filter(|e| is_live(&e.tracking))
                            .map(|e| e.spec_id.unwrap_or(md.default_spec_id)),
                    ),
                }
            }
            Some(list) => {
                for manifest in read_manifest_list(io, list)? {
                    specs.insert(manifest.partition_spec_id);
                }
            }
            // a v1 snapshot with embedded manifests: their specs cannot be told cheaply, so
            // keep every spec rather than remove one it uses
            None => specs.extend(md.partition_specs.iter().map(|s| s.spec_id)),
        }
    }
    let spec_ids: Vec<i32> = md
        .partition_specs
        .iter()
        .map(|s| s.spec_id)
        .filter(|id| !specs.contains(id))
        .collect();
    let schema_ids: Vec<i32> = md
        .schemas
        .iter()
        .map(|s| s.schema_id())
        .filter(|id| !schemas.contains(id))
        .collect();
    if !spec_ids.is_empty() {
        builder.apply(TableUpdate::RemovePartitionSpecs { spec_ids })?;
    }
    if !schema_ids.is_empty() {
        builder.apply(TableUpdate::RemoveSchemas { schema_ids })?;
    }
    Ok(())
}

/// Files to delete, by kind.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FilesToDelete {
    pub data: BTreeSet<String>,
    pub deletes: BTreeSet<String>,
    pub manifests: BTreeSet<String>,
    pub manifest_lists: BTreeSet<String>,
    pub statistics: BTreeSet<String>,
}

fn manifests_of(
    io: &dyn FileIO,
    md: &TableMetadata,
    snapshot_id: i64,
) -> Result<Vec<ManifestFile>> {
    let Some(s) = md.snapshot_by_id(snapshot_id) else {
        return Ok(Vec::new());
    };
    match &s.manifest_list {
        Some(list) => read_manifest_list(io, list),
        None => Err(Error::unsupported(format!(
            "snapshot {snapshot_id} embeds its manifests (old v1): cannot tell which files it reaches"
        ))),
    }
}

/// Threads reading manifests: the FileIO's fetch concurrency, else the cores.
fn read_threads(io: &dyn FileIO) -> usize {
    match io.fetch_concurrency() {
        0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
        n => n,
    }
}

/// The live files of each manifest, as (path, is a delete file), that `wanted` accepts,
/// read on `threads` threads.
fn read_live_files(
    io: &dyn FileIO,
    threads: usize,
    manifests: &[&ManifestFile],
    wanted: impl Fn(&str) -> bool + Sync,
) -> Result<Vec<Vec<(String, bool)>>> {
    crate::parallel::map_indexed(
        threads,
        manifests.len(),
        "a thread reading a manifest for expiry panicked",
        "manifests left unread after an error",
        |i| {
            let Some(m) = manifests.get(i) else {
                return Ok(Vec::new());
            };
            let read = read_manifest(
                ManifestSource::file(io, &m.manifest_path),
                &ReadManifestOptions::default()
                    .projection(&ManifestProjection::minimal())
                    .inherit_from(m),
            )?;
            Ok(read
                .entries
                .iter()
                .filter(|e| e.is_live() && wanted(&e.data_file.file_path))
                .map(|e| {
                    (
                        e.data_file.file_path.clone(),
                        e.data_file.content != DataContentType::Data,
                    )
                })
                .collect())
        },
    )
}

/// Java's reachable-file cleanup: the files reachable from `before`'s snapshots that no
/// snapshot of `after` reaches. On a v4 table, see [`v4_files_to_delete`].
pub fn files_to_delete(
    io: &dyn FileIO,
    before: &TableMetadata,
    after: &TableMetadata,
) -> Result<FilesToDelete> {
    if before.format_version >= 4 {
        return v4_files_to_delete(io, before, after);
    }
    let mut out = FilesToDelete::default();
    let kept: HashSet<i64> = after.snapshots.iter().map(|s| s.snapshot_id).collect();
    let expired: Vec<i64> = before
        .snapshots
        .iter()
        .map(|s| s.snapshot_id)
        .filter(|id| !kept.contains(id))
        .collect();
    for id in &expired {
        if let Some(list) = before
            .snapshot_by_id(*id)
            .and_then(|s| s.manifest_list.clone())
        {
            out.manifest_lists.insert(list);
        }
    }
    let threads = read_threads(io);
    // manifest lists (and then manifests) are read on parallel threads: on an object store
    // each read is mostly waiting
    let read_lists = |md: &TableMetadata, ids: &[i64]| -> Result<Vec<Vec<ManifestFile>>> {
        crate::parallel::map_indexed(
            threads,
            ids.len(),
            "a thread reading a manifest list for expiry panicked",
            "manifest lists left unread after an error",
            |i| match ids.get(i) {
                Some(id) => manifests_of(io, md, *id),
                None => Ok(Vec::new()),
            },
        )
    };
    let mut candidates: HashMap<String, ManifestFile> = HashMap::new();
    for list in read_lists(before, &expired)? {
        for m in list {
            candidates.insert(m.manifest_path.clone(), m);
        }
    }
    let kept: Vec<i64> = kept.into_iter().collect();
    let mut retained_manifests: HashMap<String, ManifestFile> = HashMap::new();
    for list in read_lists(after, &kept)? {
        for m in list {
            candidates.remove(&m.manifest_path);
            retained_manifests.insert(m.manifest_path.clone(), m);
        }
    }
    // a manifest list still named by a retained snapshot stays (never expected, but safe)
    for s in &after.snapshots {
        if let Some(l) = &s.manifest_list {
            out.manifest_lists.remove(l);
        }
    }

    if !candidates.is_empty() {
        // live files of the manifests to delete, minus those live in a retained manifest
        let expired_manifests: Vec<&ManifestFile> = candidates.values().collect();
        let mut files: HashMap<String, bool> = HashMap::new();
        for live in read_live_files(io, threads, &expired_manifests, |_| true)? {
            files.extend(live);
        }
        if !files.is_empty() {
            let retained: Vec<&ManifestFile> = retained_manifests.values().collect();
            // only the paths that would otherwise be deleted come back: memory stays the
            // size of the expired files, not of the whole table
            for still in read_live_files(io, threads, &retained, |p| files.contains_key(p))? {
                for (path, _) in still {
                    files.remove(&path);
                }
            }
        }
        for (path, is_delete) in files {
            if is_delete {
                out.deletes.insert(path);
            } else {
                out.data.insert(path);
            }
        }
        out.manifests.extend(candidates.into_keys());
    }

    out.statistics = statistics_to_delete(before, after);
    Ok(out)
}

/// The files a set of snapshots reaches, by kind: the files snapshots point to (manifest
/// lists, v4 roots), manifests (v3 manifests, v4 leaves), and the live content files.
#[derive(Debug, Default)]
struct Reach {
    tops: HashSet<String>,
    manifests: HashSet<String>,
    data: HashSet<String>,
    /// Delete files, and Puffin files holding the DVs of live data entries.
    deletes: HashSet<String>,
}

/// Content files of one manifest or leaf: (path, is a delete file).
type Files = Arc<Vec<(String, bool)>>;

/// A leaf's cache key: its location and its manifest DV.
type LeafKey = (String, Option<Vec<u8>>);

fn leaf_key(leaf: &crate::manifest::v4::TrackedFile) -> LeafKey {
    (
        leaf.location.clone(),
        leaf.manifest_info.as_ref().and_then(|i| i.dv.clone()),
    )
}

/// The live files of a leaf, manifest DV applied, with the Puffin files of their DVs.
fn read_leaf_files(
    io: &dyn FileIO,
    partitioning: &crate::manifest::v4::V4Layout,
    leaf: &crate::manifest::v4::TrackedFile,
) -> Result<Vec<(String, bool)>> {
    let mut files = Vec::new();
    for item in crate::manifest::v4::tree::read_leaf(io, partitioning, leaf)? {
        let f = &item.entry.data_file;
        files.push((f.file_path.clone(), f.content != DataContentType::Data));
        if let Some(dv) = item
            .tracked
            .as_ref()
            .and_then(|t| t.deletion_vector.as_ref())
        {
            files.push((dv.location.clone(), true));
        }
    }
    Ok(files)
}

/// Leaves read once per (location, manifest DV): snapshots share leaves, mostly with the
/// same DV, and a leaf's live files depend only on its DV.
#[derive(Default)]
struct ReachCache {
    leaves: HashMap<LeafKey, Files>,
    manifests: HashMap<String, Files>,
}

impl ReachCache {
    /// Reads, on `threads` threads, every leaf and manifest the tops name that is not
    /// cached yet, so that [`ReachCache::add`] finds them all cached.
    fn prefetch(
        &mut self,
        io: &dyn FileIO,
        partitioning: &crate::manifest::v4::V4Layout,
        tops: &[crate::manifest::v4::tree::SnapshotTop],
        threads: usize,
    ) -> Result<()> {
        use crate::manifest::v4::tree::{is_live, SnapshotTop};
        let mut leaves: Vec<&crate::manifest::v4::TrackedFile> = Vec::new();
        let mut leaf_keys: HashSet<LeafKey> = HashSet::new();
        let mut manifests: Vec<&ManifestFile> = Vec::new();
        let mut manifest_keys: HashSet<&str> = HashSet::new();
        for top in tops {
            match top {
                SnapshotTop::List(list) => {
                    for m in list {
                        if !self.manifests.contains_key(&m.manifest_path)
                            && manifest_keys.insert(m.manifest_path.as_str())
                        {
                            manifests.push(m);
                        }
                    }
                }
                SnapshotTop::Root(root) => {
                    for e in root
                        .iter()
                        .filter(|e| is_live(&e.tracking) && e.content_type.is_manifest())
                    {
                        let key = leaf_key(e);
                        if !self.leaves.contains_key(&key) && leaf_keys.insert(key) {
                            leaves.push(e);
                        }
                    }
                }
            }
        }
        let read = crate::parallel::map_indexed(
            threads,
            leaves.len(),
            "a thread reading a leaf manifest for expiry panicked",
            "leaf manifests left unread after an error",
            |i| match leaves.get(i) {
                Some(leaf) => read_leaf_files(io, partitioning, leaf),
                None => Ok(Vec::new()),
            },
        )?;
        for (leaf, files) in leaves.iter().zip(read) {
            self.leaves.insert(leaf_key(leaf), Arc::new(files));
        }
        let read = read_live_files(io, threads, &manifests, |_| true)?;
        for (m, files) in manifests.iter().zip(read) {
            self.manifests
                .insert(m.manifest_path.clone(), Arc::new(files));
        }
        Ok(())
    }

    fn leaf(
        &mut self,
        io: &dyn FileIO,
        partitioning: &crate::manifest::v4::V4Layout,
        leaf: &crate::manifest::v4::TrackedFile,
    ) -> Result<Files> {
        let key = leaf_key(leaf);
        if let Some(f) = self.leaves.get(&key) {
            return Ok(f.clone());
        }
        let files = Arc::new(read_leaf_files(io, partitioning, leaf)?);
        self.leaves.insert(key, files.clone());
        Ok(files)
    }

    fn manifest(&mut self, io: &dyn FileIO, m: &ManifestFile) -> Result<Files> {
        if let Some(f) = self.manifests.get(&m.manifest_path) {
            return Ok(f.clone());
        }
        let files: Files = Arc::new(
            read_live_files(io, 1, &[m], |_| true)?
                .into_iter()
                .flatten()
                .collect(),
        );
        self.manifests
            .insert(m.manifest_path.clone(), files.clone());
        Ok(files)
    }

    /// Adds what `snapshot` reaches to `reach`: its root (or manifest list), the leaves
    /// (or manifests) it names, and the files live in it, manifest DVs applied.
    fn add(
        &mut self,
        io: &dyn FileIO,
        partitioning: &crate::manifest::v4::V4Layout,
        snapshot: &crate::spec::snapshot::Snapshot,
        read_top: crate::manifest::v4::tree::SnapshotTop,
        reach: &mut Reach,
    ) -> Result<()> {
        use crate::manifest::v4::tree::{is_live, SnapshotTop};
        let Some(top) = &snapshot.manifest_list else {
            return Err(Error::unsupported(format!(
                "snapshot {} embeds its manifests (old v1): cannot tell which files it reaches",
                snapshot.snapshot_id
            )));
        };
        reach.tops.insert(top.clone());
        let add_files = |reach: &mut Reach, files: &Files| {
            for (path, is_delete) in files.iter() {
                if *is_delete {
                    reach.deletes.insert(path.clone());
                } else {
                    reach.data.insert(path.clone());
                }
            }
        };
        match read_top {
            SnapshotTop::List(list) => {
                for m in list {
                    reach.manifests.insert(m.manifest_path.clone());
                    let files = self.manifest(io, &m)?;
                    add_files(reach, &files);
                }
            }
            SnapshotTop::Root(root) => {
                for e in root.iter().filter(|e| is_live(&e.tracking)) {
                    if e.content_type.is_manifest() {
                        reach.manifests.insert(e.location.clone());
                        let files = self.leaf(io, partitioning, e)?;
                        add_files(reach, &files);
                        continue;
                    }
                    if e.content_type == crate::manifest::v4::ContentType::Data {
                        reach.data.insert(e.location.clone());
                    } else {
                        reach.deletes.insert(e.location.clone());
                    }
                    if let Some(dv) = &e.deletion_vector {
                        reach.deletes.insert(dv.location.clone());
                    }
                }
            }
        }
        Ok(())
    }
}

/// Reachable-file cleanup on a v4 table (its older snapshots may still point to manifest
/// lists): the roots, leaves and content files the expired snapshots reach and no retained
/// snapshot reaches. A file is reached by a snapshot when it is live in it, so a leaf
/// entry a retained root's manifest DV removes does not keep its file; a leaf stays while
/// any retained root names it. Manifest DVs are inline (no files of their own). Roots are
/// reported with the manifest lists, leaves with the manifests.
fn v4_files_to_delete(
    io: &dyn FileIO,
    before: &TableMetadata,
    after: &TableMetadata,
) -> Result<FilesToDelete> {
    // `before`'s specs are a superset of `after`'s (an expiry may remove specs), so its
    // partitioning reads every root of both
    let partitioning = crate::manifest::v4::V4Layout::for_table(before)?;
    let kept: HashSet<i64> = after.snapshots.iter().map(|s| s.snapshot_id).collect();
    // retained snapshots first, then the expired ones
    let snapshots: Vec<&crate::spec::snapshot::Snapshot> = after
        .snapshots
        .iter()
        .chain(
            before
                .snapshots
                .iter()
                .filter(|s| !kept.contains(&s.snapshot_id)),
        )
        .collect();
    // roots (manifest lists), then the leaves (manifests) they name, are read on parallel
    // threads; the reach is then worked out from what was read
    let threads = read_threads(io);
    let tops = crate::parallel::map_indexed(
        threads,
        snapshots.len(),
        "a thread reading a snapshot's root for expiry panicked",
        "roots left unread after an error",
        |i| match snapshots.get(i) {
            Some(s) if s.manifest_list.is_some() => {
                crate::manifest::v4::tree::read_snapshot_top(io, &partitioning, s)
            }
            Some(s) => Err(Error::unsupported(format!(
                "snapshot {} embeds its manifests (old v1): cannot tell which files it reaches",
                s.snapshot_id
            ))),
            None => Ok(crate::manifest::v4::tree::SnapshotTop::List(Vec::new())),
        },
    )?;
    let mut cache = ReachCache::default();
    cache.prefetch(io, &partitioning, &tops, threads)?;
    let mut retained = Reach::default();
    let mut expired = Reach::default();
    for (s, top) in snapshots.into_iter().zip(tops) {
        let reach = if kept.contains(&s.snapshot_id) {
            &mut retained
        } else {
            &mut expired
        };
        cache.add(io, &partitioning, s, top, reach)?;
    }
    let gone = |from: HashSet<String>, still: &[&HashSet<String>]| -> BTreeSet<String> {
        from.into_iter()
            .filter(|p| !still.iter().any(|s| s.contains(p)))
            .collect()
    };
    let content = [&retained.data, &retained.deletes];
    Ok(FilesToDelete {
        data: gone(expired.data, &content),
        deletes: gone(expired.deletes, &content),
        manifests: gone(expired.manifests, &[&retained.manifests]),
        manifest_lists: gone(expired.tops, &[&retained.tops]),
        statistics: statistics_to_delete(before, after),
    })
}

fn statistics_to_delete(before: &TableMetadata, after: &TableMetadata) -> BTreeSet<String> {
    let stats = |md: &TableMetadata| -> BTreeSet<String> {
        md.statistics
            .iter()
            .map(|s| s.statistics_path.clone())
            .chain(
                md.partition_statistics
                    .iter()
                    .map(|s| s.statistics_path.clone()),
            )
            .collect()
    };
    let still = stats(after);
    stats(before)
        .into_iter()
        .filter(|p| !still.contains(p))
        .collect()
}

/// Deletes the files `scope` allows, all kinds in one [`FileIO::delete_many`] with
/// `concurrency` requests in flight (best effort, as Java: a failed delete leaves an orphan
/// and is reported in [`ExpireResult::failed_deletes`], not an error, since the expiry is
/// committed), and records the ones that are gone and the ones kept.
fn delete_all(
    io: &dyn FileIO,
    files: &FilesToDelete,
    location: &str,
    scope: PurgeScope,
    concurrency: usize,
    result: &mut ExpireResult,
) {
    #[derive(Clone, Copy)]
    enum Kind {
        Data,
        Delete,
        Manifest,
        ManifestList,
        Statistics,
    }
    let mut kept = Vec::new();
    let mut paths: Vec<String> = Vec::new();
    let mut kinds: Vec<Kind> = Vec::new();
    for (set, kind) in [
        (&files.data, Kind::Data),
        (&files.deletes, Kind::Delete),
        (&files.manifests, Kind::Manifest),
        (&files.manifest_lists, Kind::ManifestList),
        (&files.statistics, Kind::Statistics),
    ] {
        for p in set {
            if scope.allows(location, p) {
                paths.push(p.clone());
                kinds.push(kind);
            } else {
                kept.push(p.clone());
            }
        }
    }
    let outcomes = io.delete_many(&paths, concurrency);
    for ((path, kind), outcome) in paths.into_iter().zip(kinds).zip(outcomes) {
        if let Err(e) = outcome {
            result.failed_deletes.push((path, e.to_string()));
            continue;
        }
        match kind {
            Kind::Data => result.deleted_data_files.push(path),
            Kind::Delete => result.deleted_delete_files.push(path),
            Kind::Manifest => result.deleted_manifests.push(path),
            Kind::ManifestList => result.deleted_manifest_lists.push(path),
            Kind::Statistics => result.deleted_statistics_files.push(path),
        }
    }
    kept.sort();
    result.kept_outside_location = kept;
}
