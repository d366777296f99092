//! Snapshot production for format v4 (the single-file-commits proposal, `docs/v4.md`):
//! every commit writes exactly one new root manifest (plus data, Puffin and, past the
//! flush threshold, new leaf manifests) and the metadata JSON.
//!
//! - The parent's root entries are carried over, EXISTING (DELETED and REPLACED entries
//!   are history and dropped; an upgraded table's first v4 commit turns its manifest
//!   list's rows into root entries pointing to the v3 manifests).
//! - New data and equality delete files go into the root, ADDED.
//! - A removed file held in the root becomes a DELETED root entry; one held in a leaf
//!   gets a manifest DV on the leaf's root entry (MODIFIED, with this snapshot's
//!   `deleted_positions`). A leaf is never rewritten to express a change in table data.
//! - A new DV goes onto its data file's entry: in the root the entry is MODIFIED; a file
//!   held in a leaf is removed from it by the leaf's manifest DV and restated in the root,
//!   MODIFIED, with the DV.
//! - Past `commit.v4.root.max-file-entries` file entries, the root's live files are
//!   flushed into new leaves (one per content and spec), so that a root stays about one
//!   storage round trip. A rewrite of manifests compacts every leaf and root file into
//!   new leaves with manifest DVs applied, all EXISTING.
//! - Once `commit.v4.compact.min-dv-leaves` leaves carry manifest DVs, they are compacted
//!   into new EXISTING leaves, and an upgraded table's v3 manifests with them, up to
//!   `commit.v4.compact.max-v3-manifests` per compaction.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use super::properties::property_or;
use super::summary::SummaryBuilder;
use super::{check_new_deletes, current_schema, dv_merge, SnapshotKind, SnapshotProducer};
use super::{row_filter, validate};
use crate::commit::builder::MetadataBuilder;
use crate::commit::update::TableUpdate;
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::v4::leaf_block;
use crate::manifest::v4::tree::{
    self, dv_data_file, dv_of, from_data_file, from_manifest_file, read_leaf, read_snapshot_top,
    LeafBlock, LeafItem, SnapshotTop, TreePosition,
};
use crate::manifest::v4::{
    write_v4_manifest_with, ContentType, ManifestInfo, TrackedFile, Tracking, TrackingStatus,
    V4Layout, V4ManifestKind,
};
use crate::manifest::{Codec, DataContentType, DataFile, FieldSummary, FileFormat};
use crate::spec::snapshot::Snapshot;
use crate::spec::table_metadata::TableMetadata;
use crate::spec::Literal;

/// Root-level file entries (data and equality deletes) past which the root's files are
/// flushed into new leaves. A root entry with stats takes a few hundred bytes, so the
/// default keeps a root below about 1 MiB: one request on an object store.
pub const ROOT_MAX_FILE_ENTRIES: &str = "commit.v4.root.max-file-entries";
pub const ROOT_MAX_FILE_ENTRIES_DEFAULT: u64 = 2000;
/// File entries per leaf a flush or compaction writes at most: a larger group becomes
/// several leaves, so that planning reads them in parallel and prunes them by their
/// partition summaries. 10,000 entries with stats are a few MB, about v3's default
/// manifest target size (`commit.manifest.target-size-bytes`, 8 MB).
pub const LEAF_MAX_FILE_ENTRIES: &str = "commit.v4.leaf.max-file-entries";
pub const LEAF_MAX_FILE_ENTRIES_DEFAULT: usize = 10_000;
/// How many leaves must carry a manifest DV before a commit compacts them (their live
/// entries into one new EXISTING leaf per content and spec, DVs applied); 0 disables it.
pub const COMPACT_MIN_DV_LEAVES: &str = "commit.v4.compact.min-dv-leaves";
pub const COMPACT_MIN_DV_LEAVES_DEFAULT: u64 = 16;
/// How many of an upgraded table's v3 manifests (root entries of `format_version` < 4,
/// EXISTING, without a manifest DV) a compaction converts into v4 leaves besides the
/// leaves it takes for their manifest DVs; 0 disables it. Only a compaction that runs
/// anyway converts them (a commit compacting 16 leaves for their DVs at most triples its
/// work with the default), so that small commits never pay for the upgrade's manifests.
pub const COMPACT_MAX_V3_MANIFESTS: &str = "commit.v4.compact.max-v3-manifests";
pub const COMPACT_MAX_V3_MANIFESTS_DEFAULT: usize = 32;

/// The `commit.v4.*` properties, which must be non-negative integers where set.
const V4_COMMIT_PROPERTIES: [&str; 4] = [
    ROOT_MAX_FILE_ENTRIES,
    LEAF_MAX_FILE_ENTRIES,
    COMPACT_MIN_DV_LEAVES,
    COMPACT_MAX_V3_MANIFESTS,
];

/// Refuses a `commit.v4.*` property that is not a non-negative integer, when a table is
/// created with it or it is set (`ValidationFailed` naming the property and the value). A
/// commit reading one set by another writer still falls back to the default
/// ([`property_or`]), so that a bad value never makes a table uncommittable.
pub fn validate_v4_properties(properties: &[(String, String)]) -> Result<()> {
    for (k, v) in properties {
        if V4_COMMIT_PROPERTIES.contains(&k.as_str()) && v.trim().parse::<u64>().is_err() {
            return Err(Error::validation_failed(format!(
                "table property {k} must have a non-negative integer value, found {v}"
            )));
        }
    }
    Ok(())
}

/// A root entry under construction, with the changes this commit makes to a leaf.
struct RootEntry {
    e: TrackedFile,
    /// Ordinals of the leaf this commit removes (its manifest DV grows by them).
    removed: Vec<i64>,
}

impl SnapshotProducer {
    /// The v4 counterpart of the manifest-list part of [`SnapshotProducer::apply`]
    /// (validation has run): builds and writes the root, adds the snapshot.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn apply_v4(
        &mut self,
        io: &dyn FileIO,
        builder: &mut MetadataBuilder,
        md: &TableMetadata,
        parent: Option<&Snapshot>,
        previous_for_totals: Option<&Snapshot>,
        snapshot_id: i64,
        dir: &str,
        codec: Codec,
    ) -> Result<()> {
        let partitioning = V4Layout::for_table(md)?;
        self.positions_taken = 0;
        for (_, f) in &self.added {
            if f.content != DataContentType::Data {
                return Err(Error::invalid_argument(format!(
                    "{} is a delete file; add it as a delete file",
                    f.file_path
                )));
            }
        }
        // v4 keeps v3's rule: position deletes only as DVs
        check_new_deletes(3, &self.added_deletes)?;
        current_schema(md)?;
        if self.new_deletes.is_none() {
            let merged = dv_merge::merge_new_dvs(io, md, snapshot_id, 1, &self.added_deletes)?;
            if let Some(p) = &merged.written {
                self.written.push(p.clone());
            }
            self.merged_dvs_file = merged.written;
            self.new_deletes = Some(merged.files);
        }
        let new_deletes = self.new_deletes.clone().unwrap_or_default();
        let sequence_number = md.last_sequence_number + 1;
        let spec_of = |s: Option<i32>| s.unwrap_or(md.default_spec_id);

        // the leaf prefixes the writer's positions name are read while the parent's root
        // is: both are known before either is read, and on an object store each is a
        // round trip (only when the commit removes files or adds DVs, which is what the
        // positions serve)
        let spans = if self.deleted_paths.is_empty() && self.added_deletes.is_empty() {
            Vec::new()
        } else {
            leaf_block::prefix_spans(self.positions.values())
        };
        let (top, prefetched) = std::thread::scope(|s| {
            let ahead =
                (!spans.is_empty()).then(|| s.spawn(|| leaf_block::fetch_prefixes(io, &spans)));
            let top = parent
                .map(|p| read_snapshot_top(io, &partitioning, p))
                .transpose();
            // a reader thread that panicked leaves its leaves to be read in place
            let prefetched = ahead.and_then(|h| h.join().ok()).unwrap_or_default();
            (top, prefetched)
        });

        // the parent's root entries, carried over
        let mut root: Vec<RootEntry> = Vec::new();
        if let Some(top) = top? {
            let entries = match top {
                SnapshotTop::Root(entries) => entries,
                // the upgrade: the manifest list's rows become root entries
                SnapshotTop::List(list) => list.iter().map(from_manifest_file).collect(),
            };
            for mut e in entries {
                if !tree::is_live(&e.tracking) {
                    continue;
                }
                e.tracking.status = TrackingStatus::Existing;
                e.tracking.deleted_positions = None;
                e.tracking.replaced_positions = None;
                root.push(RootEntry {
                    e,
                    removed: Vec::new(),
                });
            }
        }

        let mut summary = SummaryBuilder::for_table(md);
        let wanted: HashSet<String> = self.deleted_paths.iter().cloned().collect();
        let mut found: HashSet<String> = HashSet::new();
        let mut row_filter = match &self.delete_filter {
            Some(f) => Some(row_filter::RowFilter::new(md, f)?),
            None => None,
        };
        let removed_deletes = self.removed_deletes.clone();
        let is_removed_delete = |path: &str, offset: Option<i64>| {
            removed_deletes
                .iter()
                .any(|(p, off)| p == path && (off.is_none() || *off == offset))
        };
        // the live delete files (by path and DV offset) this commit removes, as found
        let mut removed_found: HashSet<(String, Option<i64>)> = HashSet::new();
        // whether every delete file to remove is found: then no leaf is read for them (one
        // named by path alone may have more entries, so its search reads every leaf)
        let all_removed_found = |found: &HashSet<(String, Option<i64>)>| {
            removed_deletes
                .iter()
                .all(|(p, off)| off.is_some() && found.contains(&(p.clone(), *off)))
        };
        // new DVs by the data file they target
        let mut new_dvs: HashMap<String, (i32, DataFile)> = HashMap::new();
        let mut new_eq_deletes = Vec::new();
        for (s, f) in &new_deletes {
            match (&f.content, &f.referenced_data_file) {
                (DataContentType::PositionDeletes, Some(target)) => {
                    new_dvs.insert(target.clone(), (spec_of(*s), f.clone()));
                }
                _ => new_eq_deletes.push((spec_of(*s), f.clone())),
            }
        }
        let mut restated: Vec<TrackedFile> = Vec::new();
        let mut placed_dvs: HashSet<String> = HashSet::new();

        // removals and DV changes among the root's own files
        for r in &mut root {
            let e = &mut r.e;
            if e.content_type.is_manifest() {
                continue;
            }
            let spec_id = e.spec_id.unwrap_or(0);
            let file = tree::to_data_file(e);
            let remove = match e.content_type {
                ContentType::Data => {
                    wanted.contains(&e.location) || decide(&mut row_filter, md, spec_id, &file)?
                }
                _ => {
                    let named = is_removed_delete(&e.location, None);
                    if named {
                        mark_found(&mut removed_found, &e.location, None);
                    }
                    named
                        || (self.kind != SnapshotKind::FastAppend
                            && decide_deletes(&mut row_filter, md, spec_id, &file)?)
                }
            };
            if remove {
                summary.removed_file(spec_id, &file);
                if let Some(dv) = &e.deletion_vector {
                    summary.removed_file(spec_id, &dv_data_file(e, dv));
                    // a removal may name the DV of a file it removes too
                    if is_removed_delete(&dv.location, Some(dv.offset)) {
                        mark_found(&mut removed_found, &dv.location, Some(dv.offset));
                    }
                }
                found.insert(e.location.clone());
                e.tracking.status = TrackingStatus::Deleted;
                e.tracking.snapshot_id = Some(snapshot_id);
                continue;
            }
            let old_dv_removed = e
                .deletion_vector
                .as_ref()
                .is_some_and(|dv| is_removed_delete(&dv.location, Some(dv.offset)));
            if let (true, Some(dv)) = (old_dv_removed, &e.deletion_vector) {
                mark_found(&mut removed_found, &dv.location, Some(dv.offset));
            }
            let new_dv = new_dvs.get(&e.location).cloned();
            if old_dv_removed || new_dv.is_some() {
                if let Some(dv) = e.deletion_vector.take() {
                    summary.removed_file(spec_id, &dv_data_file(e, &dv));
                }
                if let Some((_, f)) = new_dv {
                    e.deletion_vector = Some(dv_of(&f)?);
                    placed_dvs.insert(e.location.clone());
                }
                e.tracking.status = TrackingStatus::Modified;
                e.tracking.dv_snapshot_id = Some(snapshot_id);
            }
        }

        // removals and DV changes of files held in leaves: the leaf's manifest DV grows
        let added_now: HashSet<&str> = self
            .added
            .iter()
            .map(|(_, f)| f.file_path.as_str())
            .collect();
        let leaf_work = !wanted.is_empty()
            || row_filter.is_some()
            || !removed_deletes.is_empty()
            || new_dvs
                .keys()
                .any(|k| !placed_dvs.contains(k) && !added_now.contains(k.as_str()));
        let mut dangling: HashSet<String> = found.clone();
        if leaf_work {
            // a v4 delete leaf holds only equality deletes, which only a row filter or a
            // removal by path takes: without those it is not read
            // (a DV, removed by its offset, is never in one: DVs sit on data entries)
            let equality_only = |e: &TrackedFile| {
                e.content_type == ContentType::DeleteManifest
                    && e.format_version >= 4
                    && row_filter.is_none()
                    && removed_deletes.iter().all(|(_, off)| off.is_some())
            };
            let mut order: Vec<usize> = (0..root.len())
                .filter(|i| root[*i].e.content_type.is_manifest() && !equality_only(&root[*i].e))
                .collect();
            // data leaves first, so that the DVs of data files removed there are known
            // when delete leaves (of upgraded v3 tables) are read
            order.sort_by_key(|i| root[*i].e.content_type == ContentType::DeleteManifest);
            // a delete by row filter alone (nothing named by path, no DV to place): a data
            // leaf whose aggregates rule the filter out holds no file it removes, so it is
            // not read, as Java's manifest filter skips such manifests
            let by_filter_alone = wanted.is_empty()
                && removed_deletes.is_empty()
                && new_dvs
                    .keys()
                    .all(|k| placed_dvs.contains(k) || added_now.contains(k.as_str()));
            if let (Some(rf), true) = (&mut row_filter, by_filter_alone) {
                let mut kept = Vec::with_capacity(order.len());
                for i in order {
                    let e = &root[i].e;
                    if e.content_type != ContentType::DataManifest || rf.leaf_may_match(md, e)? {
                        kept.push(i);
                    }
                }
                order = kept;
            }

            // the positions the writer's plan gave: the one entry each names is read and
            // taken when the base still has it there (the leaf in the root, the ordinal not
            // removed by its manifest DV, the same file, live); a stale position (the leaf
            // compacted away, the file removed or restated by a concurrent commit) leaves
            // its file to the search below, as if no position had been given
            let mut given: Vec<(usize, Vec<LeafItem>)> = Vec::new();
            let mut taken: HashSet<(usize, usize)> = HashSet::new();
            let mut by_leaf: BTreeMap<usize, Vec<Named<'_>>> = BTreeMap::new();
            for (path, pos) in &self.positions {
                let TreePosition::Leaf {
                    manifest,
                    ordinal,
                    block,
                } = pos
                else {
                    continue;
                };
                let needed = (wanted.contains(path) && !found.contains(path))
                    || (new_dvs.contains_key(path)
                        && !placed_dvs.contains(path)
                        && !added_now.contains(path.as_str()));
                let Ok(ordinal) = usize::try_from(*ordinal) else {
                    continue;
                };
                let leaf = root.iter().position(|r| {
                    r.e.content_type == ContentType::DataManifest && *r.e.location == **manifest
                });
                if let (true, Some(i)) = (needed, leaf) {
                    by_leaf
                        .entry(i)
                        .or_default()
                        .push((ordinal, path.as_str(), *block));
                }
            }
            for (i, named) in by_leaf {
                let ahead = prefetched.get(root[i].e.location.as_str());
                let items = read_named_entries(io, &partitioning, &root[i].e, &named, ahead)?;
                let items: Vec<LeafItem> = items
                    .into_iter()
                    .filter(|item| {
                        let f = &item.entry.data_file;
                        f.content == DataContentType::Data
                            && named
                                .iter()
                                .any(|(o, p, _)| *o == item.ordinal && *p == f.file_path)
                    })
                    .collect();
                for item in &items {
                    taken.insert((i, item.ordinal));
                }
                if !items.is_empty() {
                    given.push((i, items));
                }
            }
            self.positions_taken = taken.len();
            // leaves are decoded a few at a time on parallel threads (decoding is the
            // cost) and processed in order, one at a time, as before
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            // (a leaf read ahead but then not needed does not fail the commit: its result
            // is only looked at when it is processed)
            let mut prefetched: VecDeque<Result<Vec<LeafItem>>> = VecDeque::new();
            let n_given = given.len();
            let mut given = given.into_iter();
            for step in 0..n_given + order.len() {
                let (i, items) = if step < n_given {
                    match given.next() {
                        Some(g) => g,
                        None => break,
                    }
                } else {
                    let pos = step - n_given;
                    let i = order[pos];
                    let leaf = root[i].e.clone();
                    let is_data_leaf = leaf.content_type == ContentType::DataManifest;
                    // with no filter and no delete file to remove, data leaves matter only
                    // for the files this commit names: once all are found, no other data
                    // leaf holds them (a file is live once), so the rest are not read
                    if is_data_leaf
                        && row_filter.is_none()
                        && all_removed_found(&removed_found)
                        && wanted.iter().all(|p| found.contains(p))
                        && new_dvs
                            .keys()
                            .all(|k| placed_dvs.contains(k) || added_now.contains(k.as_str()))
                    {
                        prefetched.pop_front();
                        continue;
                    }
                    if prefetched.is_empty() {
                        let chunk: Vec<TrackedFile> = order[pos..]
                            .iter()
                            .map(|&j| &root[j].e)
                            .take_while(|e| e.content_type == leaf.content_type)
                            .take(threads)
                            .cloned()
                            .collect();
                        prefetched = crate::parallel::map_indexed(
                            threads,
                            chunk.len(),
                            "a thread reading leaf manifests panicked",
                            "leaf manifests left unread after an error",
                            |j| Ok(read_leaf(io, &partitioning, &chunk[j])),
                        )?
                        .into();
                    }
                    let items = prefetched.pop_front().ok_or_else(|| {
                        Error::unsupported("leaf manifests left unread after an error")
                    })??;
                    // the entries taken by their positions are not taken twice
                    let items: Vec<LeafItem> = if taken.is_empty() {
                        items
                    } else {
                        items
                            .into_iter()
                            .filter(|item| !taken.contains(&(i, item.ordinal)))
                            .collect()
                    };
                    (i, items)
                };
                let is_data_leaf = root[i].e.content_type == ContentType::DataManifest;
                let leaf_spec = root[i].e.spec_id.unwrap_or(0);
                for item in items {
                    let LeafItem {
                        ordinal,
                        entry,
                        tracked,
                    } = item;
                    let f = &entry.data_file;
                    let spec_id = tracked
                        .as_ref()
                        .and_then(|t| t.spec_id)
                        .unwrap_or(leaf_spec);
                    let remove = match f.content {
                        DataContentType::Data if is_data_leaf => {
                            wanted.contains(&f.file_path)
                                || decide(&mut row_filter, md, spec_id, f)?
                        }
                        DataContentType::Data => false,
                        _ => {
                            let named = is_removed_delete(&f.file_path, f.content_offset);
                            if named {
                                mark_found(&mut removed_found, &f.file_path, f.content_offset);
                            }
                            named
                                || f.referenced_data_file.as_ref().is_some_and(|t| {
                                    dangling.contains(t) || new_dvs.contains_key(t)
                                })
                                || (self.kind != SnapshotKind::FastAppend
                                    && decide_deletes(&mut row_filter, md, spec_id, f)?)
                        }
                    };
                    let old_dv_removed = tracked
                        .as_ref()
                        .and_then(|t| t.deletion_vector.as_ref())
                        .filter(|dv| is_removed_delete(&dv.location, Some(dv.offset)));
                    if let (true, Some(dv)) = (f.content == DataContentType::Data, old_dv_removed) {
                        mark_found(&mut removed_found, &dv.location, Some(dv.offset));
                    }
                    let dv_change = f.content == DataContentType::Data
                        && !remove
                        && (new_dvs.contains_key(&f.file_path) || old_dv_removed.is_some());
                    if remove {
                        summary.removed_file(spec_id, f);
                        if let Some(t) = &tracked {
                            if let Some(dv) = &t.deletion_vector {
                                summary.removed_file(spec_id, &dv_data_file(t, dv));
                            }
                        }
                        if f.content == DataContentType::Data {
                            found.insert(f.file_path.clone());
                            dangling.insert(f.file_path.clone());
                        }
                        root[i].removed.push(ordinal as i64);
                    } else if dv_change {
                        // restated in the root, MODIFIED, with its new DV (or none)
                        let mut t = match tracked {
                            Some(t) => t,
                            None => {
                                let mut tr = Tracking::new(TrackingStatus::Existing);
                                tr.snapshot_id = entry.snapshot_id;
                                tr.sequence_number = entry.sequence_number;
                                tr.file_sequence_number = entry.file_sequence_number;
                                from_data_file(f, spec_id, tr)?
                            }
                        };
                        if let Some(dv) = t.deletion_vector.take() {
                            summary.removed_file(spec_id, &dv_data_file(&t, &dv));
                        }
                        if let Some((_, nf)) = new_dvs.get(&t.location) {
                            t.deletion_vector = Some(dv_of(nf)?);
                            placed_dvs.insert(t.location.clone());
                        }
                        t.tracking.status = TrackingStatus::Modified;
                        t.tracking.dv_snapshot_id = Some(snapshot_id);
                        t.tracking.deleted_positions = None;
                        t.tracking.replaced_positions = None;
                        restated.push(t);
                        root[i].removed.push(ordinal as i64);
                    }
                }
            }
        }
        // a row delta asked to validate that what it removes is live (Java's
        // `validateDeletedFiles`) is checked here, where the tree was searched for it,
        // rather than by a walk of the whole tree before (`validate::validate_row_delta`);
        // a search stops early only once everything is found, so a miss is a miss
        // (so does a rewrite of files, Java's `BaseRewriteFiles.validate`; other
        // operations fail on a data file they name and do not find)
        let (check_data, check_deletes) = match self.kind {
            SnapshotKind::RowDelta => {
                let asked = self.validation.validate_deleted_files;
                (asked, asked)
            }
            SnapshotKind::Rewrite => (true, true),
            _ => (true, false),
        };
        let missing_data = wanted
            .iter()
            .filter(|p| check_data && !found.contains(*p))
            .cloned();
        let missing_deletes = removed_deletes
            .iter()
            .filter(|(p, off)| check_deletes && !removed_found.contains(&(p.clone(), *off)))
            .map(|(p, _)| p.clone());
        validate::no_missing_files_to_delete(missing_data.chain(missing_deletes))?;

        // manifest DVs of the leaves this commit removed entries from
        for r in &mut root {
            if r.removed.is_empty() {
                continue;
            }
            let e = &mut r.e;
            let info = e.manifest_info.as_mut().ok_or_else(|| {
                Error::invalid_metadata("manifest_info", "required for a manifest entry")
                    .in_file(&e.location)
            })?;
            let mut all: Vec<i64> = match info.decode_dv(e.record_count)? {
                Some(dv) => dv.iter().collect(),
                None => Vec::new(),
            };
            all.extend(r.removed.iter().copied());
            info.set_dv(all)?;
            let mine =
                crate::puffin::dv::DeletionVector::from_positions(r.removed.iter().copied())?;
            e.tracking.deleted_positions = Some(mine.serialize_vector());
            e.tracking.status = TrackingStatus::Modified;
            e.tracking.dv_snapshot_id = Some(snapshot_id);
        }

        // new DVs whose data file is not live
        let added_paths: HashSet<&str> = self
            .added
            .iter()
            .map(|(_, f)| f.file_path.as_str())
            .collect();
        let mut orphans: Vec<&String> = new_dvs
            .keys()
            .filter(|k| !placed_dvs.contains(*k) && !added_paths.contains(k.as_str()))
            .collect();
        if !orphans.is_empty() {
            orphans.sort_unstable();
            return Err(Error::validation_failed(format!(
                "cannot add a DV for data files that are not live: {}",
                orphans
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        for (spec_id, f) in new_dvs.values() {
            summary.added_file(*spec_id, f);
        }

        // the new files, ADDED
        let mut entries: Vec<TrackedFile> = root.into_iter().map(|r| r.e).collect();
        entries.extend(restated);
        let mut next_row_id = md.next_row_id;
        let mut added_rows = 0i64;
        let data_seq = self.data_sequence_number.unwrap_or(sequence_number);
        for (s, f) in &self.added {
            let spec_id = spec_of(*s);
            summary.added_file(spec_id, f);
            let mut t = Tracking::new(TrackingStatus::Added);
            t.snapshot_id = Some(snapshot_id);
            t.sequence_number = Some(data_seq);
            t.file_sequence_number = Some(sequence_number);
            t.first_row_id = Some(next_row_id);
            next_row_id += f.record_count;
            added_rows += f.record_count;
            let mut e = from_data_file(f, spec_id, t)?;
            if let Some((_, dv)) = new_dvs.get(&f.file_path) {
                // a DV for a file this commit adds
                e.deletion_vector = Some(dv_of(dv)?);
                e.tracking.dv_snapshot_id = Some(snapshot_id);
            }
            entries.push(e);
        }
        for (spec_id, f) in &new_eq_deletes {
            summary.added_file(*spec_id, f);
            let mut t = Tracking::new(TrackingStatus::Added);
            t.snapshot_id = Some(snapshot_id);
            t.sequence_number = Some(sequence_number);
            t.file_sequence_number = Some(sequence_number);
            entries.push(from_data_file(f, *spec_id, t)?);
        }

        // compaction and flushing
        let mut created = 0usize;
        let compact_all = self.kind == SnapshotKind::RewriteManifests;
        let min_dv_leaves: u64 =
            property_or(md, COMPACT_MIN_DV_LEAVES, COMPACT_MIN_DV_LEAVES_DEFAULT);
        let dv_leaves = entries
            .iter()
            .filter(|e| {
                e.content_type.is_manifest()
                    && e.tracking.status == TrackingStatus::Existing
                    && e.manifest_info.as_ref().is_some_and(|i| i.dv.is_some())
            })
            .count() as u64;
        if compact_all || (min_dv_leaves > 0 && dv_leaves >= min_dv_leaves) {
            let max_v3 = if compact_all {
                0
            } else {
                property_or(
                    md,
                    COMPACT_MAX_V3_MANIFESTS,
                    COMPACT_MAX_V3_MANIFESTS_DEFAULT,
                )
            };
            entries = self.compact_v4(
                io,
                md,
                &partitioning,
                entries,
                Compaction {
                    all: compact_all,
                    max_v3,
                },
                snapshot_id,
                sequence_number,
                dir,
                codec,
                &mut created,
            )?;
        }
        let max_files: u64 = property_or(md, ROOT_MAX_FILE_ENTRIES, ROOT_MAX_FILE_ENTRIES_DEFAULT);
        let root_files = entries
            .iter()
            .filter(|e| !e.content_type.is_manifest() && tree::is_live(&e.tracking))
            .count() as u64;
        if root_files > max_files {
            let (files, rest): (Vec<TrackedFile>, Vec<TrackedFile>) = entries
                .into_iter()
                .partition(|e| !e.content_type.is_manifest() && tree::is_live(&e.tracking));
            entries = rest;
            let leaves = self.write_leaves(
                io,
                md,
                &partitioning,
                files,
                TrackingStatus::Added,
                snapshot_id,
                sequence_number,
                dir,
                codec,
            )?;
            created += leaves.len();
            entries.extend(leaves);
        }

        let kept = entries
            .iter()
            .filter(|e| e.content_type.is_manifest() && e.tracking.snapshot_id != Some(snapshot_id))
            .count();
        summary.set("manifests-created", created);
        summary.set("manifests-kept", kept);
        for (k, v) in &self.summary_properties {
            summary.set(k, v);
        }

        self.attempt += 1;
        let root_path = format!(
            "{dir}/root-{snapshot_id}-{}-{}.avro",
            self.attempt, self.commit_uuid
        );
        let bytes = write_v4_manifest_with(V4ManifestKind::Root, &entries, codec, &partitioning)
            .map_err(|e| e.in_file(&root_path))?;
        self.written.push(root_path.clone());
        io.write_new(&root_path, &bytes)?;

        let snapshot = Snapshot {
            snapshot_id,
            parent_snapshot_id: parent.map(|p| p.snapshot_id),
            sequence_number,
            timestamp_ms: chrono::Utc::now().timestamp_millis(),
            manifest_list: Some(root_path.clone()),
            manifests: None,
            summary: Some(summary.build(self.operation(), previous_for_totals)),
            schema_id: Some(md.current_schema_id),
            first_row_id: Some(md.next_row_id),
            added_rows: Some(added_rows),
            key_id: None,
        };
        builder.apply(TableUpdate::AddSnapshot {
            snapshot: snapshot.clone(),
        })?;
        builder.set_branch_snapshot(snapshot_id, &self.branch)?;
        self.used = entries
            .iter()
            .filter(|e| e.content_type.is_manifest())
            .map(|e| e.location.clone())
            .chain(std::iter::once(root_path))
            .chain(self.merged_dvs_file.clone())
            .collect();
        self.committed_snapshot = Some(snapshot);
        Ok(())
    }

    /// Writes `files` into new leaves, one per content and spec, each entry keeping its
    /// status, and returns the leaves' root entries (`status`).
    #[allow(clippy::too_many_arguments)]
    fn write_leaves(
        &mut self,
        io: &dyn FileIO,
        md: &TableMetadata,
        partitioning: &V4Layout,
        files: Vec<TrackedFile>,
        status: TrackingStatus,
        snapshot_id: i64,
        sequence_number: i64,
        dir: &str,
        codec: Codec,
    ) -> Result<Vec<TrackedFile>> {
        let mut groups: BTreeMap<(bool, i32), Vec<TrackedFile>> = BTreeMap::new();
        for f in files {
            let deletes = f.content_type == ContentType::EqualityDeletes;
            groups
                .entry((deletes, f.spec_id.unwrap_or(0)))
                .or_default()
                .push(f);
        }
        let max_entries: usize =
            property_or(md, LEAF_MAX_FILE_ENTRIES, LEAF_MAX_FILE_ENTRIES_DEFAULT).max(1);
        let mut chunks: Vec<((bool, i32), Vec<TrackedFile>)> = Vec::new();
        for (key, files) in groups {
            // taken from the front in one pass (splitting the rest off again and again
            // copied a large compaction's entries once per leaf: quadratic)
            let mut files = files.into_iter();
            loop {
                let chunk: Vec<TrackedFile> = files.by_ref().take(max_entries).collect();
                if chunk.is_empty() {
                    break;
                }
                chunks.push((key, chunk));
            }
        }
        let mut out = Vec::new();
        for ((deletes, spec_id), files) in chunks {
            let kind = if deletes {
                V4ManifestKind::DeleteLeaf
            } else {
                V4ManifestKind::DataLeaf
            };
            let path = self.next_manifest_path(dir);
            let bytes = write_v4_manifest_with(kind, &files, codec, partitioning)
                .map_err(|e| e.in_file(&path))?;
            self.written.push(path.clone());
            io.write_new(&path, &bytes)?;
            let mut info = ManifestInfo {
                added_files_count: 0,
                existing_files_count: 0,
                deleted_files_count: 0,
                replaced_files_count: 0,
                added_rows_count: 0,
                existing_rows_count: 0,
                deleted_rows_count: 0,
                replaced_rows_count: 0,
                min_sequence_number: i64::MAX,
                dv: None,
                dv_cardinality: None,
                partitions: None,
            };
            for f in &files {
                let n = f.record_count;
                match f.tracking.status {
                    TrackingStatus::Added => {
                        info.added_files_count += 1;
                        info.added_rows_count += n;
                    }
                    TrackingStatus::Deleted => {
                        info.deleted_files_count += 1;
                        info.deleted_rows_count += n;
                    }
                    TrackingStatus::Replaced => {
                        info.replaced_files_count += 1;
                        info.replaced_rows_count += n;
                    }
                    TrackingStatus::Existing | TrackingStatus::Modified => {
                        info.existing_files_count += 1;
                        info.existing_rows_count += n;
                    }
                }
                if let Some(s) = f.tracking.sequence_number {
                    info.min_sequence_number = info.min_sequence_number.min(s);
                }
            }
            if info.min_sequence_number == i64::MAX {
                info.min_sequence_number = sequence_number;
            }
            info.partitions = partition_summaries(md, spec_id, &files)?;
            // per-column bounds and counts over the leaf's files, for pruning the leaf
            // by the filter's columns as v3 prunes files
            let metrics = crate::manifest::v4::stats::aggregate_metrics(md, &files);
            let mut t = Tracking::new(status);
            t.snapshot_id = Some(snapshot_id);
            t.sequence_number = Some(sequence_number);
            t.file_sequence_number = Some(sequence_number);
            out.push(TrackedFile {
                tracking: t,
                content_type: if deletes {
                    ContentType::DeleteManifest
                } else {
                    ContentType::DataManifest
                },
                format_version: 4,
                location: path,
                file_format: "avro".to_string(),
                record_count: files.len() as i64,
                file_size_in_bytes: bytes.len() as i64,
                spec_id: Some(spec_id),
                sort_order_id: None,
                deletion_vector: None,
                manifest_info: Some(info),
                key_metadata: None,
                split_offsets: None,
                equality_ids: None,
                partition: Vec::new(),
                metrics,
            });
        }
        Ok(out)
    }

    /// Compaction (the seed's "Manifest Compaction"): existing leaves carrying a manifest
    /// DV (every leaf, and the root's existing files too, when `all`) are merged into new
    /// leaves with their DVs applied, every entry EXISTING and each new leaf EXISTING. No
    /// entry this commit adds or changes goes into them.
    ///
    /// An upgraded table's v3 manifests (as PyIceberg or Java wrote them, without the
    /// aggregate metrics planning prunes v4 leaves by) are converted along: besides the
    /// leaves taken for their DVs, the first `max_v3` EXISTING v3 manifests of the root
    /// without a manifest DV, data manifests before delete manifests, join the compaction
    /// (the seed's upgrade path lets older manifests stay; this moves them into the new
    /// structure a bounded number at a time, only when a compaction runs anyway).
    ///
    /// An upgraded table's v3 delete manifest holds its DVs as position delete files,
    /// which v4 has no entry for: compacting it attaches each DV to its data file's entry
    /// (`deletion_vector`), as v4 models DVs. The data file must then be an entry this
    /// compaction writes anyway, or an EXISTING root entry without a DV; one held in
    /// another EXISTING leaf brings that leaf into the compaction, so that no data entry
    /// is restated (a restatement would read as a DV change of this snapshot). A v3
    /// delete manifest that cannot be compacted so — a position delete file that is not
    /// a DV, a DV whose data file is not found live in such a place — stays as it is.
    #[allow(clippy::too_many_arguments)]
    fn compact_v4(
        &mut self,
        io: &dyn FileIO,
        md: &TableMetadata,
        partitioning: &V4Layout,
        entries: Vec<TrackedFile>,
        how: Compaction,
        snapshot_id: i64,
        sequence_number: i64,
        dir: &str,
        codec: Codec,
        created: &mut usize,
    ) -> Result<Vec<TrackedFile>> {
        let Compaction { all, max_v3 } = how;
        let has_dv = |e: &TrackedFile| e.manifest_info.as_ref().is_some_and(|i| i.dv.is_some());
        // the v3 manifests converted by the bound (the DV rule takes those with a DV)
        let mut by_bound: Vec<usize> = (0..entries.len())
            .filter(|&i| {
                let e = &entries[i];
                !all && e.content_type.is_manifest()
                    && e.format_version < 4
                    && e.tracking.status == TrackingStatus::Existing
                    && !has_dv(e)
            })
            .collect();
        // data manifests first: the DVs of a v3 delete manifest then find their files
        // among the entries this compaction moves
        by_bound.sort_by_key(|&i| entries[i].content_type == ContentType::DeleteManifest);
        by_bound.truncate(max_v3);
        let by_bound: HashSet<usize> = by_bound.into_iter().collect();
        let mut names = V3Names::of(&entries);
        let mut keep = Vec::new();
        let mut moved = Vec::new();
        let mut v3_delete_leaves: Vec<V3DeleteLeaf> = Vec::new();
        for (i, e) in entries.into_iter().enumerate() {
            let existing = e.tracking.status == TrackingStatus::Existing;
            let take = existing
                && if e.content_type.is_manifest() {
                    all || has_dv(&e) || by_bound.contains(&i)
                } else {
                    all
                };
            if !take {
                keep.push(e);
                continue;
            }
            if !e.content_type.is_manifest() {
                moved.push(e);
                continue;
            }
            if e.content_type == ContentType::DeleteManifest && e.format_version < 4 {
                match read_v3_delete_leaf(io, partitioning, &e)? {
                    Some((eq, dvs)) => v3_delete_leaves.push(V3DeleteLeaf {
                        leaf: e,
                        eq,
                        dvs,
                        by_bound: by_bound.contains(&i),
                    }),
                    None => keep.push(e),
                }
                continue;
            }
            let items = leaf_entries(io, partitioning, &e)?;
            if names.keeps(io, partitioning, &e, &items)? {
                keep.push(e);
                continue;
            }
            moved.extend(items);
        }
        if !v3_delete_leaves.is_empty() {
            // what is left of the bound: how many more leaves the delete manifests the
            // bound took may read looking for their DVs' files
            let search = max_v3.saturating_sub(by_bound.len());
            self.attach_v3_dvs(
                io,
                partitioning,
                &mut keep,
                &mut moved,
                v3_delete_leaves,
                search,
                &mut names,
            )?;
        }
        if moved.is_empty() {
            return Ok(keep);
        }
        let leaves = self.write_leaves(
            io,
            md,
            partitioning,
            moved,
            TrackingStatus::Existing,
            snapshot_id,
            sequence_number,
            dir,
            codec,
        )?;
        *created += leaves.len();
        keep.extend(leaves);
        Ok(keep)
    }

    /// Attaches the DVs of the v3 delete leaves taken by a compaction to their data
    /// files' entries (see [`SnapshotProducer::compact_v4`]); a leaf whose DVs cannot all
    /// be attached goes back to `keep`, with nothing of it attached or moved. The data
    /// files not among the entries moved or the root's own are looked for in the other
    /// EXISTING data leaves, which then join the compaction: for a leaf taken for its
    /// manifest DV (or by a rewrite of manifests) in all of them, for one taken by the
    /// bound on v3 manifests in at most `search` more leaves.
    #[allow(clippy::too_many_arguments)]
    fn attach_v3_dvs(
        &self,
        io: &dyn FileIO,
        partitioning: &V4Layout,
        keep: &mut Vec<TrackedFile>,
        moved: &mut Vec<TrackedFile>,
        delete_leaves: Vec<V3DeleteLeaf>,
        search: usize,
        names: &mut V3Names,
    ) -> Result<()> {
        let placed = |moved: &[TrackedFile], keep: &[TrackedFile], path: &str| {
            moved.iter().any(|m| m.location == path)
                || keep
                    .iter()
                    .any(|k| k.location == path && !k.content_type.is_manifest())
        };
        for bounded in [false, true] {
            let wanted: HashSet<String> = delete_leaves
                .iter()
                .filter(|d| d.by_bound == bounded)
                .flat_map(|d| d.dvs.keys())
                .filter(|p| !placed(moved, keep, p))
                .cloned()
                .collect();
            let limit = if bounded { search } else { usize::MAX };
            pull_leaves_holding(io, partitioning, keep, moved, wanted, limit, names)?;
        }
        let moved_at: HashMap<String, usize> = moved
            .iter()
            .enumerate()
            .filter(|(_, m)| m.content_type == ContentType::Data)
            .map(|(i, m)| (m.location.clone(), i))
            .collect();
        let root_at: HashMap<String, usize> = keep
            .iter()
            .enumerate()
            .filter(|(_, k)| {
                k.content_type == ContentType::Data && k.tracking.status == TrackingStatus::Existing
            })
            .map(|(i, k)| (k.location.clone(), i))
            .collect();
        for V3DeleteLeaf { leaf, eq, dvs, .. } in delete_leaves {
            // every DV must land on an entry without one, or the leaf stays whole
            let attachable = dvs.keys().all(|p| {
                moved_at
                    .get(p)
                    .map(|i| &moved[*i])
                    .or_else(|| root_at.get(p).map(|i| &keep[*i]))
                    .is_some_and(|t| t.deletion_vector.is_none())
            });
            if !attachable {
                keep.push(leaf);
                continue;
            }
            for (path, (dv, dv_snapshot_id)) in dvs {
                let target = match moved_at.get(&path) {
                    Some(i) => &mut moved[*i],
                    None => match root_at.get(&path) {
                        Some(i) => &mut keep[*i],
                        None => continue,
                    },
                };
                target.deletion_vector = Some(dv);
                // the DV's own snapshot: attaching it changes no data
                target.tracking.dv_snapshot_id = dv_snapshot_id;
            }
            moved.extend(eq);
        }
        Ok(())
    }
}

/// The DVs of a v3 delete manifest, by the data file they delete from: the DV as a v4
/// `deletion_vector`, and the snapshot that added it.
type V3Dvs = HashMap<String, (crate::manifest::v4::DeletionVector, Option<i64>)>;

/// What a compaction takes besides the leaves carrying a manifest DV: with `all` (a
/// rewrite of manifests) every leaf and existing root file; otherwise up to `max_v3` v3
/// manifests without a DV ([`COMPACT_MAX_V3_MANIFESTS`]).
#[derive(Debug, Clone, Copy)]
struct Compaction {
    all: bool,
    max_v3: usize,
}

/// A v3 delete manifest a compaction took: its root entry, its equality delete files (as
/// EXISTING v4 entries), its DVs by data file, and whether the bound on v3 manifests took
/// it (rather than its manifest DV or a rewrite of manifests).
struct V3DeleteLeaf {
    leaf: TrackedFile,
    eq: Vec<TrackedFile>,
    dvs: V3Dvs,
    by_bound: bool,
}

/// Moves into the compaction (`moved`, their entries EXISTING) the EXISTING data leaves of
/// `keep` that hold a file of `wanted`, reading them in root order until every file is
/// found or `limit` leaves were read.
fn pull_leaves_holding(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    keep: &mut Vec<TrackedFile>,
    moved: &mut Vec<TrackedFile>,
    mut wanted: HashSet<String>,
    limit: usize,
    names: &mut V3Names,
) -> Result<()> {
    let mut read = 0usize;
    let mut i = 0;
    while i < keep.len() && !wanted.is_empty() && read < limit {
        let k = &keep[i];
        let candidate = k.content_type == ContentType::DataManifest
            && k.tracking.status == TrackingStatus::Existing;
        if !candidate {
            i += 1;
            continue;
        }
        read += 1;
        let items = leaf_entries(io, partitioning, k)?;
        if names.keeps(io, partitioning, k, &items)? {
            i += 1;
            continue;
        }
        if items.iter().any(|t| wanted.contains(&t.location)) {
            for t in &items {
                wanted.remove(&t.location);
            }
            moved.extend(items);
            keep.remove(i);
        } else {
            i += 1;
        }
    }
    Ok(())
}

/// Notes a delete file this commit removes as found, by its DV offset and by its path
/// alone (a removal naming the path alone takes every entry of it).
fn mark_found(found: &mut HashSet<(String, Option<i64>)>, path: &str, offset: Option<i64>) {
    found.insert((path.to_string(), offset));
    found.insert((path.to_string(), None));
}

/// Which of an upgraded table's v3 manifests a compaction keeps as v3 leaves, so that
/// their data files keep their names: a scheme-less local path outside the table location
/// is stored `file://`-qualified in a v4 leaf (`docs/v4.md`, relative paths), while the
/// rows of a v2 position delete file (not a DV) name it without the scheme and would no
/// longer match it. Only while the table has such a delete file: otherwise the renaming
/// changes nothing a read depends on, and the manifest is converted as any other.
struct V3Names {
    /// The root's v3 delete manifests, where v2 position delete files live.
    delete_manifests: Vec<TrackedFile>,
    /// Whether they hold a live v2 position delete file; read at the first manifest
    /// that would rename a file.
    v2_position_deletes: Option<bool>,
}

impl V3Names {
    fn of(root: &[TrackedFile]) -> V3Names {
        V3Names {
            delete_manifests: root
                .iter()
                .filter(|e| e.content_type == ContentType::DeleteManifest && e.format_version < 4)
                .filter(|e| tree::is_live(&e.tracking))
                .cloned()
                .collect(),
            v2_position_deletes: None,
        }
    }

    /// Whether the v3 manifest `leaf`, whose live entries are `items`, stays a v3 leaf.
    fn keeps(
        &mut self,
        io: &dyn FileIO,
        partitioning: &V4Layout,
        leaf: &TrackedFile,
        items: &[TrackedFile],
    ) -> Result<bool> {
        let renames = leaf.format_version < 4
            && items
                .iter()
                .any(|t| t.content_type == ContentType::Data && partitioning.renames(&t.location));
        if !renames {
            return Ok(false);
        }
        if let Some(known) = self.v2_position_deletes {
            return Ok(known);
        }
        let mut found = false;
        for m in &self.delete_manifests {
            found = read_leaf(io, partitioning, m)?.iter().any(|item| {
                let f = &item.entry.data_file;
                f.content == DataContentType::PositionDeletes && f.file_format != FileFormat::Puffin
            });
            if found {
                break;
            }
        }
        self.v2_position_deletes = Some(found);
        Ok(found)
    }
}

/// A leaf entry a writer's plan named: its ordinal, the data file's path, and the span of
/// its Avro block when the plan gave it.
type Named<'a> = (usize, &'a str, Option<LeafBlock>);

/// The live entries a writer's plan named in leaf `leaf` (ordinal, path, block). Those
/// whose block the plan gave are read by one ranged read of the leaf up to that block's
/// end (`leaf_block`), or taken from `ahead`, the prefix read while the root was (`None`
/// if that read failed), when it reaches as far; the rest, and any whose span does not
/// check out, from the leaf read whole.
fn read_named_entries(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    leaf: &TrackedFile,
    named: &[Named<'_>],
    ahead: Option<&(LeafBlock, Option<Vec<u8>>)>,
) -> Result<Vec<LeafItem>> {
    let mut out = Vec::new();
    let mut whole: Vec<usize> = named
        .iter()
        .filter(|(_, _, b)| b.is_none())
        .map(|(o, _, _)| *o)
        .collect();
    // the block ending last covers every block before it: one read for all
    let last = named
        .iter()
        .filter_map(|(_, _, b)| *b)
        .max_by_key(|b| b.offset.saturating_add(b.length));
    if let Some(block) = last {
        let ranged: Vec<usize> = named
            .iter()
            .filter(|(_, _, b)| b.is_some())
            .map(|(o, _, _)| *o)
            .collect();
        let end = |b: &LeafBlock| b.offset.saturating_add(b.length);
        let items = match ahead {
            Some((span, prefix)) if end(span) >= end(&block) => {
                let found = match prefix {
                    Some(prefix) => {
                        leaf_block::entries_in_prefix(prefix, partitioning, leaf, &ranged, *span)?
                    }
                    None => None,
                };
                match found {
                    Some(items) => Some(items),
                    // the very span was not read or did not check out: again would not either
                    None if *span == block => None,
                    // a wider span (another position's) that did not: this one's own read
                    None => leaf_block::read_leaf_entries_in_block(
                        io,
                        partitioning,
                        leaf,
                        &ranged,
                        block,
                    )?,
                }
            }
            _ => leaf_block::read_leaf_entries_in_block(io, partitioning, leaf, &ranged, block)?,
        };
        match items {
            Some(items) => out.extend(items),
            None => whole.extend(ranged),
        }
    }
    if !whole.is_empty() {
        out.extend(tree::read_leaf_entries(io, partitioning, leaf, &whole)?);
    }
    Ok(out)
}

/// The live entries of an existing leaf (its manifest DV applied) as EXISTING v4 entries,
/// for a compaction. A v3 data manifest's files are converted; a v3 delete manifest's
/// must go through [`read_v3_delete_leaf`].
fn leaf_entries(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    e: &TrackedFile,
) -> Result<Vec<TrackedFile>> {
    let leaf_spec = e.spec_id.unwrap_or(0);
    let mut out = Vec::new();
    for item in read_leaf(io, partitioning, e)? {
        let mut t = match item.tracked {
            Some(t) => t,
            None => {
                let mut tr = Tracking::new(TrackingStatus::Existing);
                tr.snapshot_id = item.entry.snapshot_id;
                tr.sequence_number = item.entry.sequence_number;
                tr.file_sequence_number = item.entry.file_sequence_number;
                from_data_file(&item.entry.data_file, leaf_spec, tr)
                    .map_err(|err| err.in_file(&e.location))?
            }
        };
        t.tracking.status = TrackingStatus::Existing;
        t.tracking.deleted_positions = None;
        t.tracking.replaced_positions = None;
        out.push(t);
    }
    Ok(out)
}

/// A v3 delete manifest's live entries (its manifest DV applied), split into equality
/// delete files (as EXISTING v4 entries) and DVs by their data file; `None` when it
/// holds a position delete file that is not a DV (a v2 file of a table upgraded from
/// v2), which v4 cannot hold, or two DVs for one data file.
fn read_v3_delete_leaf(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    e: &TrackedFile,
) -> Result<Option<(Vec<TrackedFile>, V3Dvs)>> {
    let leaf_spec = e.spec_id.unwrap_or(0);
    let mut eq = Vec::new();
    let mut dvs = V3Dvs::new();
    for item in read_leaf(io, partitioning, e)? {
        let f = &item.entry.data_file;
        match (&f.content, &f.referenced_data_file) {
            (DataContentType::PositionDeletes, Some(target)) if f.content_offset.is_some() => {
                let dv = dv_of(f).map_err(|err| err.in_file(&e.location))?;
                if dvs
                    .insert(target.clone(), (dv, item.entry.snapshot_id))
                    .is_some()
                {
                    return Ok(None);
                }
            }
            (DataContentType::PositionDeletes, _) => return Ok(None),
            _ => {
                let mut tr = Tracking::new(TrackingStatus::Existing);
                tr.snapshot_id = item.entry.snapshot_id;
                tr.sequence_number = item.entry.sequence_number;
                tr.file_sequence_number = item.entry.file_sequence_number;
                eq.push(from_data_file(f, leaf_spec, tr).map_err(|err| err.in_file(&e.location))?);
            }
        }
    }
    Ok(Some((eq, dvs)))
}

/// A row filter's decision for a data file: remove it (every row matches), keep it, or
/// fail (some rows match), as v3's `filter_manifests`.
fn decide(
    rf: &mut Option<row_filter::RowFilter>,
    md: &TableMetadata,
    spec_id: i32,
    f: &DataFile,
) -> Result<bool> {
    let Some(rf) = rf.as_mut() else {
        return Ok(false);
    };
    match rf.decide(md, spec_id, f)? {
        row_filter::Decision::Keep => Ok(false),
        row_filter::Decision::Remove => Ok(true),
        row_filter::Decision::Partial => Err(Error::validation_failed(format!(
            "Cannot delete file where some, but not all, rows match filter {}: {}",
            rf.text(),
            f.file_path
        ))),
    }
}

/// For delete files: removed when every row matches; partial ones stay.
fn decide_deletes(
    rf: &mut Option<row_filter::RowFilter>,
    md: &TableMetadata,
    spec_id: i32,
    f: &DataFile,
) -> Result<bool> {
    let Some(rf) = rf.as_mut() else {
        return Ok(false);
    };
    Ok(rf.decide(md, spec_id, f)? == row_filter::Decision::Remove)
}

/// The partition field summaries of a leaf's files (one spec), for pruning leaves as v3
/// prunes manifests.
fn partition_summaries(
    md: &TableMetadata,
    spec_id: i32,
    files: &[TrackedFile],
) -> Result<Option<Vec<FieldSummary>>> {
    let Some(spec) = md.spec_by_id(spec_id) else {
        return Ok(None);
    };
    let Some(schema) = md.current_schema() else {
        return Ok(None);
    };
    let Ok(ty) = spec.partition_type(schema) else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(ty.fields.len());
    for (i, field) in ty.fields.iter().enumerate() {
        let crate::spec::Type::Primitive(p) = &field.field_type else {
            return Ok(None);
        };
        let mut s = FieldSummary {
            contains_nan: Some(false),
            ..Default::default()
        };
        let mut lower: Option<&Literal> = None;
        let mut upper: Option<&Literal> = None;
        for f in files {
            match f.partition.get(i).and_then(Option::as_ref) {
                None => s.contains_null = true,
                Some(v) if is_nan(v) => s.contains_nan = Some(true),
                Some(v) => {
                    if lower.is_none_or(|l| v.compare(l) == Some(std::cmp::Ordering::Less)) {
                        lower = Some(v);
                    }
                    if upper.is_none_or(|u| v.compare(u) == Some(std::cmp::Ordering::Greater)) {
                        upper = Some(v);
                    }
                }
            }
        }
        s.lower_bound = lower.map(|l| l.to_bytes(p)).transpose()?;
        s.upper_bound = upper.map(|u| u.to_bytes(p)).transpose()?;
        out.push(s);
    }
    Ok(Some(out))
}

fn is_nan(v: &Literal) -> bool {
    match v {
        Literal::Float(f) => f.is_nan(),
        Literal::Double(f) => f.is_nan(),
        _ => false,
    }
}
