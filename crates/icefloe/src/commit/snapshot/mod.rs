//! Snapshot producers ("Snapshots", "Manifest Lists", "Sequence Numbers", "Row Lineage"):
//! a change that writes manifests and a manifest list and adds a snapshot to a branch.
//!
//! - fast append: one new manifest per partition spec with the added files; the parent's
//!   manifests are carried over unchanged;
//! - merge append: the same, then manifests are bin-packed per spec and merged (Java's
//!   `MergeAppend` and `ManifestMergeManager`, `commit.manifest.*`);
//! - delete by path and overwrite by files: manifests holding a removed file are rewritten
//!   with it marked DELETED; every removed file must still be live in the base (retrying
//!   after another writer removed it fails with `ValidationFailed`).
//!
//! A producer is applied to each attempt's fresh base (see [`super::transaction`]): the
//! snapshot id and the manifests of new files are made once and reused; the manifest list
//! (`snap-<id>-<attempt>-<uuid>.avro`) and rewritten manifests are made per attempt. Files
//! an attempt wrote that the committed snapshot does not use are deleted after the commit.

mod dv_merge;
mod merge;
mod rewrite_manifests;
mod rolling;
mod row_filter;
pub mod summary;
mod v4;
pub mod validate;

use std::collections::{HashMap, HashSet};

use super::builder::MetadataBuilder;
use super::properties::{self, metadata_dir, property_or};
use super::transaction::PendingChange;
use super::update::TableUpdate;
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::{
    read_manifest, read_manifest_list, Codec, DataContentType, DataFile, ManifestContent,
    ManifestEntry, ManifestFile, ManifestListWriter, ManifestSource, ManifestStatus,
    ManifestWriter, ReadManifestOptions,
};
use crate::spec::snapshot::{Operation, Snapshot, MAIN_BRANCH};
use crate::spec::table_metadata::TableMetadata;
pub use rewrite_manifests::{manifests_to_rewrite, ManifestLayout};
use rolling::{Roll, WriteContext, ROLL_ROWS_DIVISOR};
pub use row_filter::deletes_whole_files;
use summary::SummaryBuilder;
pub use v4::{
    validate_v4_properties, COMPACT_MAX_V3_MANIFESTS, COMPACT_MAX_V3_MANIFESTS_DEFAULT,
    COMPACT_MIN_DV_LEAVES, COMPACT_MIN_DV_LEAVES_DEFAULT, LEAF_MAX_FILE_ENTRIES,
    LEAF_MAX_FILE_ENTRIES_DEFAULT, ROOT_MAX_FILE_ENTRIES, ROOT_MAX_FILE_ENTRIES_DEFAULT,
};

/// A new snapshot id as Java makes one: the two halves of a random UUID xor-ed, made
/// non-negative.
pub fn new_snapshot_id() -> i64 {
    let (hi, lo) = uuid::Uuid::new_v4().as_u64_pair();
    ((hi ^ lo) & (i64::MAX as u64)) as i64
}

/// What a snapshot producer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotKind {
    FastAppend,
    MergeAppend,
    /// Removes data files by path.
    Delete,
    /// Adds and removes data files.
    Overwrite,
    /// Adds data and delete files, removes delete (and data) files (Java's `RowDelta`).
    RowDelta,
    /// Replaces live files by others holding the same rows (Java's `RewriteFiles`).
    Rewrite,
    /// Rewrites manifests with a [`ManifestLayout`]; files do not change.
    RewriteManifests,
}

/// A snapshot change of a transaction; see the module documentation.
#[derive(Debug)]
pub struct SnapshotProducer {
    kind: SnapshotKind,
    branch: String,
    /// Files to add, with their partition spec id (`None`: the table's default spec).
    added: Vec<(Option<i32>, DataFile)>,
    deleted_paths: Vec<String>,
    /// Delete files to add, with their partition spec id.
    added_deletes: Vec<(Option<i32>, DataFile)>,
    /// Delete files to remove: path and, for a DV, its blob's offset.
    removed_deletes: Vec<(String, Option<i64>)>,
    validation: validate::RowDeltaValidation,
    /// Files whose rows all match are removed (Java's `deleteFromRowFilter` /
    /// `overwriteByRowFilter`).
    delete_filter: Option<crate::expr::Expression>,
    /// Java's `validateAddedFilesMatchOverwriteFilter`.
    validate_added_files_match: bool,
    /// The data sequence number new data files of a rewrite keep (Java's
    /// `RewriteFiles.dataSequenceNumber`).
    data_sequence_number: Option<i64>,
    /// The data sequence numbers new delete files of a rewrite keep, by path and DV offset
    /// (Java's `RewriteFiles.addFile(DeleteFile, long)`: a rewrite of delete files keeps
    /// the largest sequence number of the files it replaces).
    delete_sequence_numbers: HashMap<(String, Option<i64>), i64>,
    /// How a rewrite of manifests regroups entries.
    layout: ManifestLayout,
    /// Where the writer's scan planned data files this change removes or adds a DV for
    /// (v4 tables; see [`SnapshotProducer::data_file_position`]).
    positions: HashMap<String, crate::manifest::v4::tree::TreePosition>,
    /// How many of `positions` the last attempt found still valid and took.
    positions_taken: usize,
    summary_properties: Vec<(String, String)>,
    commit_uuid: String,
    snapshot_id: Option<i64>,
    attempt: u32,
    manifest_count: u32,
    /// The manifests of `added`, written on the first attempt and reused.
    new_manifests: Option<Vec<ManifestFile>>,
    /// Merged manifests by the paths of the manifests they merge, reused across attempts.
    merged: HashMap<Vec<String>, ManifestFile>,
    /// The new delete files with the DVs of one data file merged (made with the new
    /// manifests, once), and the Puffin file of the merged DVs.
    new_deletes: Option<Vec<(Option<i32>, DataFile)>>,
    merged_dvs_file: Option<String>,
    written: Vec<String>,
    used: HashSet<String>,
    committed_snapshot: Option<Snapshot>,
}

impl SnapshotProducer {
    pub fn new(kind: SnapshotKind) -> SnapshotProducer {
        SnapshotProducer {
            kind,
            branch: MAIN_BRANCH.to_string(),
            added: Vec::new(),
            deleted_paths: Vec::new(),
            added_deletes: Vec::new(),
            removed_deletes: Vec::new(),
            validation: validate::RowDeltaValidation::default(),
            delete_filter: None,
            validate_added_files_match: false,
            data_sequence_number: None,
            delete_sequence_numbers: HashMap::new(),
            layout: ManifestLayout::default(),
            positions: HashMap::new(),
            positions_taken: 0,
            summary_properties: Vec::new(),
            commit_uuid: uuid::Uuid::new_v4().to_string(),
            snapshot_id: None,
            attempt: 0,
            manifest_count: 0,
            new_manifests: None,
            merged: HashMap::new(),
            new_deletes: None,
            merged_dvs_file: None,
            written: Vec::new(),
            used: HashSet::new(),
            committed_snapshot: None,
        }
    }

    /// A producer with the same changes that has not been applied yet (tests and the v3/v4
    /// benchmark apply one change to twin tables).
    pub fn clone_unstarted(&self) -> SnapshotProducer {
        SnapshotProducer {
            branch: self.branch.clone(),
            added: self.added.clone(),
            deleted_paths: self.deleted_paths.clone(),
            added_deletes: self.added_deletes.clone(),
            removed_deletes: self.removed_deletes.clone(),
            validation: self.validation.clone(),
            delete_filter: self.delete_filter.clone(),
            validate_added_files_match: self.validate_added_files_match,
            data_sequence_number: self.data_sequence_number,
            delete_sequence_numbers: self.delete_sequence_numbers.clone(),
            layout: self.layout.clone(),
            positions: self.positions.clone(),
            summary_properties: self.summary_properties.clone(),
            ..SnapshotProducer::new(self.kind)
        }
    }

    pub fn fast_append() -> SnapshotProducer {
        Self::new(SnapshotKind::FastAppend)
    }

    pub fn merge_append() -> SnapshotProducer {
        Self::new(SnapshotKind::MergeAppend)
    }

    pub fn delete_files() -> SnapshotProducer {
        Self::new(SnapshotKind::Delete)
    }

    pub fn overwrite_files() -> SnapshotProducer {
        Self::new(SnapshotKind::Overwrite)
    }

    /// A rewrite (Java's `RewriteFiles`): the removed data files (by path) and delete files
    /// are replaced by the added ones, in a `replace` snapshot. Every removed file must be
    /// live, and no delete file added since the starting snapshot
    /// (`validation_mut().from_snapshot`) may apply to a removed data file.
    pub fn rewrite_files() -> SnapshotProducer {
        Self::new(SnapshotKind::Rewrite)
    }

    /// A rewrite of manifests (a `replace` snapshot) with the default layout: the
    /// compaction of Java's Spark action `rewrite_manifests` ([`ManifestLayout`]; see
    /// [`SnapshotProducer::manifest_layout`]). Entries are kept as EXISTING with their
    /// snapshot ids and sequence numbers.
    pub fn rewrite_manifests() -> SnapshotProducer {
        Self::new(SnapshotKind::RewriteManifests)
    }

    /// How a rewrite of manifests regroups the entries.
    pub fn manifest_layout(&mut self, layout: ManifestLayout) -> &mut Self {
        self.layout = layout;
        self
    }

    /// The data sequence number the new data files of a rewrite keep (usually the
    /// starting snapshot's), so that deletes newer than the rewritten rows still apply.
    pub fn data_sequence_number(&mut self, seq: i64) -> &mut Self {
        self.data_sequence_number = Some(seq);
        self
    }

    /// A row delta (Java's `RowDelta`): data files and delete files added, delete files
    /// (and data files) removed, validated per [`Self::validation_mut`].
    pub fn row_delta() -> SnapshotProducer {
        Self::new(SnapshotKind::RowDelta)
    }

    /// Adds a delete file (position deletes, a DV, or equality deletes) written for spec
    /// `spec_id` (`None`: the default spec).
    pub fn add_delete_file(&mut self, spec_id: Option<i32>, file: DataFile) -> &mut Self {
        self.added_deletes.push((spec_id, file));
        self
    }

    /// Adds a delete file with the data sequence number it keeps (a rewrite of delete
    /// files: the largest of the files it replaces, so that it applies to the same data
    /// files). Not for DVs that the commit would merge with another new DV of the same file.
    pub fn add_delete_file_with_sequence_number(
        &mut self,
        spec_id: Option<i32>,
        file: DataFile,
        sequence_number: i64,
    ) -> &mut Self {
        self.delete_sequence_numbers.insert(
            (file.file_path.clone(), file.content_offset),
            sequence_number,
        );
        self.added_deletes.push((spec_id, file));
        self
    }

    /// Removes a live delete file; a DV is named by its Puffin file and blob offset
    /// (`content_offset`), since DVs of several data files share one Puffin file.
    pub fn remove_delete_file(
        &mut self,
        path: impl Into<String>,
        content_offset: Option<i64>,
    ) -> &mut Self {
        self.removed_deletes.push((path.into(), content_offset));
        self
    }

    /// Removes the files all of whose rows match `filter` (a delete or an overwrite); a
    /// data file only some of whose rows may match fails the commit, as Java's.
    pub fn delete_by_row_filter(&mut self, filter: crate::expr::Expression) -> &mut Self {
        self.delete_filter = Some(filter);
        self
    }

    /// An overwrite checks that every added file's rows match its row filter.
    pub fn validate_added_files_match_filter(&mut self) -> &mut Self {
        self.validate_added_files_match = true;
        self
    }

    /// The validations a row delta (or an overwrite) runs on every attempt.
    pub fn validation_mut(&mut self) -> &mut validate::RowDeltaValidation {
        &mut self.validation
    }

    /// Commits to `branch` instead of `main` (created from the current snapshot if new).
    pub fn to_branch(mut self, branch: impl Into<String>) -> Self {
        self.branch = branch.into();
        self
    }

    /// Adds a data file in the table's default partition spec.
    pub fn add_file(&mut self, file: DataFile) -> &mut Self {
        self.added.push((None, file));
        self
    }

    /// Adds a data file written for partition spec `spec_id`.
    pub fn add_file_with_spec(&mut self, spec_id: i32, file: DataFile) -> &mut Self {
        self.added.push((Some(spec_id), file));
        self
    }

    /// Where the scan this change was planned from found data file `path` in a v4 table's
    /// metadata tree (`ScanFile::tree_position`). When this change removes the file or
    /// adds a DV for it, a v4 commit then reads that one leaf entry instead of searching
    /// the leaves for it: with it, the commit's cost no longer grows with the table.
    ///
    /// The position is checked, never trusted: the leaf must still be in the base's root,
    /// the ordinal not removed by its manifest DV, and the entry there must be `path`,
    /// live. A stale position (a concurrent commit compacted the leaf, removed or
    /// restated the file) falls back to the search, so the outcome is the same as without
    /// it. Ignored by v3 tables and for files in the root (which the commit reads anyway).
    pub fn data_file_position(
        &mut self,
        path: impl Into<String>,
        position: crate::manifest::v4::tree::TreePosition,
    ) -> &mut Self {
        self.positions.insert(path.into(), position);
        self
    }

    /// How many of the positions given with [`SnapshotProducer::data_file_position`] the
    /// last attempt found valid and took (the others were stale, or named files the
    /// commit found in the root).
    pub fn positions_taken(&self) -> usize {
        self.positions_taken
    }

    /// Removes the data file at `path`, which must be live in the table.
    pub fn delete_path(&mut self, path: impl Into<String>) -> &mut Self {
        self.deleted_paths.push(path.into());
        self
    }

    /// Sets a summary property (e.g. `spark.app.id`), as Java's `SnapshotUpdate.set`.
    pub fn set_summary(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.summary_properties.push((key.into(), value.into()));
        self
    }

    /// The snapshot the last successful attempt added.
    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.committed_snapshot.as_ref()
    }

    /// Every file written so far (manifests, manifest lists).
    pub fn written_files(&self) -> &[String] {
        &self.written
    }

    fn operation(&self) -> Operation {
        match self.kind {
            SnapshotKind::FastAppend | SnapshotKind::MergeAppend => Operation::Append,
            SnapshotKind::Delete => Operation::Delete,
            SnapshotKind::Overwrite => match (
                self.added.is_empty(),
                self.deleted_paths.is_empty() && self.delete_filter.is_none(),
            ) {
                (false, true) => Operation::Append,
                (true, false) => Operation::Delete,
                _ => Operation::Overwrite,
            },
            SnapshotKind::Rewrite | SnapshotKind::RewriteManifests => Operation::Replace,
            // Java's BaseRowDelta.operation
            SnapshotKind::RowDelta => {
                let adds_data = !self.added.is_empty();
                let adds_deletes = !self.added_deletes.is_empty();
                if adds_data && !adds_deletes && self.deleted_paths.is_empty() {
                    Operation::Append
                } else if adds_deletes && !adds_data {
                    Operation::Delete
                } else {
                    Operation::Overwrite
                }
            }
        }
    }

    fn next_manifest_path(&mut self, dir: &str) -> String {
        let n = self.manifest_count;
        self.manifest_count += 1;
        format!("{dir}/{}-m{n}.avro", self.commit_uuid)
    }

    fn snapshot_id_for(&mut self, md: &TableMetadata) -> i64 {
        loop {
            match self.snapshot_id {
                Some(id) if md.snapshot_by_id(id).is_none() => return id,
                _ => self.snapshot_id = Some(new_snapshot_id()),
            }
        }
    }

    /// Writes the manifests of the added files (one per content and spec: data manifests,
    /// then delete manifests), once per producer.
    fn write_new_manifests(
        &mut self,
        io: &dyn FileIO,
        md: &TableMetadata,
        snapshot_id: i64,
        dir: &str,
        codec: Codec,
    ) -> Result<Vec<ManifestFile>> {
        for (_, f) in &self.added {
            if f.content != DataContentType::Data {
                return Err(Error::invalid_argument(format!(
                    "{} is a delete file; add it as a delete file",
                    f.file_path
                )));
            }
        }
        check_new_deletes(md.format_version, &self.added_deletes)?;
        if let Some(m) = &self.new_manifests {
            return Ok(m.clone());
        }
        // a table without a current schema fails here, before any file is written
        current_schema(md)?;
        let merged = dv_merge::merge_new_dvs(io, md, snapshot_id, 1, &self.added_deletes)?;
        if let Some(p) = &merged.written {
            self.written.push(p.clone());
        }
        self.merged_dvs_file = merged.written;
        // delete manifests by spec id in Java's order (a hash map of small integers)
        let mut deletes = merged.files;
        deletes.sort_by_key(|(s, _)| s.unwrap_or(md.default_spec_id));
        self.new_deletes = Some(deletes);
        // one manifest per content and spec, in the order the specs first appear
        let mut groups: Vec<(ManifestContent, i32, Vec<DataFile>)> = Vec::new();
        let new_deletes = self.new_deletes.as_deref().unwrap_or_default();
        let files = self
            .added
            .iter()
            .map(|f| (ManifestContent::Data, f))
            .chain(new_deletes.iter().map(|f| (ManifestContent::Deletes, f)));
        for (content, (spec_id, f)) in files {
            let id = spec_id.unwrap_or(md.default_spec_id);
            match groups
                .iter_mut()
                .find(|(c, s, _)| *c == content && *s == id)
            {
                Some(g) => g.2.push(f.clone()),
                None => groups.push((content, id, vec![f.clone()])),
            }
        }
        let ctx = WriteContext {
            io,
            md,
            snapshot_id,
            dir,
            codec,
        };
        let roll = Roll {
            max_size: manifest_target_size(md),
            check_every: ROLL_ROWS_DIVISOR,
        };
        let own_sequence_number = self.data_sequence_number;
        let delete_sequence_numbers = self.delete_sequence_numbers.clone();
        let mut out = Vec::new();
        for (content, spec_id, files) in groups {
            let spec = md.spec_by_id(spec_id).ok_or_else(|| {
                Error::invalid_argument(format!("the table has no partition spec {spec_id}"))
            })?;
            let add = |w: &mut ManifestWriter, f: DataFile| {
                let seq = match content {
                    ManifestContent::Data => own_sequence_number,
                    ManifestContent::Deletes => delete_sequence_numbers
                        .get(&(f.file_path.clone(), f.content_offset))
                        .copied(),
                };
                match seq {
                    Some(seq) => w.add_entry(ManifestEntry {
                        status: ManifestStatus::Added,
                        snapshot_id: Some(snapshot_id),
                        sequence_number: Some(seq),
                        file_sequence_number: None,
                        data_file: f,
                    }),
                    None => w.add(f),
                }
            };
            out.extend(self.write_rolling(&ctx, content, spec, roll, files, add)?);
        }
        self.new_manifests = Some(out.clone());
        Ok(out)
    }

    /// The parent's manifests with removed files marked DELETED (rewritten manifests are
    /// new files of this attempt). Returns the manifests and how many were replaced.
    ///
    /// Data manifests lose the removed data files. Delete manifests (not for a fast
    /// append, as Java's `MergingSnapshotProducer`) lose the removed delete files, DVs of
    /// removed data files (dangling), and delete files older than every remaining data
    /// file (Java's `dropDeleteFilesOlderThan`).
    #[allow(clippy::too_many_arguments)]
    fn filter_manifests(
        &mut self,
        io: &dyn FileIO,
        md: &TableMetadata,
        parent_manifests: Vec<ManifestFile>,
        snapshot_id: i64,
        dir: &str,
        codec: Codec,
        summary: &mut SummaryBuilder,
    ) -> Result<(Vec<ManifestFile>, usize)> {
        let deleted_paths = self.deleted_paths.clone();
        let wanted: HashSet<&str> = deleted_paths.iter().map(String::as_str).collect();
        let mut found: HashSet<String> = HashSet::new();
        let mut data_out = Vec::with_capacity(parent_manifests.len());
        let mut delete_manifests = Vec::new();
        let mut replaced = 0;
        let mut row_filter = match &self.delete_filter {
            Some(f) => Some(row_filter::RowFilter::new(md, f)?),
            None => None,
        };
        for mf in parent_manifests {
            if mf.content != ManifestContent::Data {
                delete_manifests.push(mf);
                continue;
            }
            if (wanted.is_empty() && row_filter.is_none())
                || !(mf.has_added_files() || mf.has_existing_files())
            {
                data_out.push(mf);
                continue;
            }
            let m = read_manifest(
                ManifestSource::file(io, &mf.manifest_path),
                &ReadManifestOptions::default().inherit_from(&mf),
            )?;
            let mut hits: HashSet<String> = HashSet::new();
            for e in m.entries.iter().filter(|e| e.is_live()) {
                let path = e.data_file.file_path.as_str();
                if wanted.contains(path) {
                    hits.insert(path.to_string());
                } else if let Some(rf) = row_filter.as_mut() {
                    match rf.decide(md, mf.partition_spec_id, &e.data_file)? {
                        row_filter::Decision::Keep => {}
                        row_filter::Decision::Remove => {
                            hits.insert(path.to_string());
                        }
                        row_filter::Decision::Partial => {
                            return Err(Error::validation_failed(format!(
                                "Cannot delete file where some, but not all, rows match filter {}: {}",
                                rf.text(),
                                path
                            )))
                        }
                    }
                }
            }
            if hits.is_empty() {
                data_out.push(mf);
                continue;
            }
            let rewritten =
                self.rewrite_manifest(io, md, &mf, m, snapshot_id, dir, codec, |e| {
                    hits.contains(e.data_file.file_path.as_str())
                })?;
            for e in &rewritten.1 {
                summary.removed_file(mf.partition_spec_id, &e.data_file);
                found.insert(e.data_file.file_path.clone());
            }
            data_out.push(rewritten.0);
            replaced += 1;
        }
        // a row delta fails on missing files only when asked to (validate_deleted_files)
        if self.kind != SnapshotKind::RowDelta {
            let missing = wanted.iter().filter(|p| !found.contains(**p));
            validate::no_missing_files_to_delete(missing.map(|p| p.to_string()))?;
        }

        if self.kind == SnapshotKind::FastAppend || md.format_version < 2 {
            data_out.extend(delete_manifests);
            return Ok((data_out, replaced));
        }
        let min_data_seq = data_out
            .iter()
            .map(|m| m.min_sequence_number)
            .filter(|s| *s != crate::manifest::UNASSIGNED_SEQUENCE_NUMBER)
            .fold(md.last_sequence_number, i64::min);
        let removed_deletes = self.removed_deletes.clone();
        let is_removed = |f: &DataFile| {
            removed_deletes
                .iter()
                .any(|(p, off)| *p == f.file_path && (off.is_none() || *off == f.content_offset))
        };
        let is_dangling = |f: &DataFile| {
            validate::is_dv(f)
                && f.referenced_data_file
                    .as_deref()
                    .is_some_and(|t| found.contains(t))
        };
        for mf in delete_manifests {
            let may_match = (mf.has_added_files() || mf.has_existing_files())
                && (!removed_deletes.is_empty()
                    || !found.is_empty()
                    || row_filter.is_some()
                    || (mf.min_sequence_number >= 0 && mf.min_sequence_number < min_data_seq));
            if !may_match {
                data_out.push(mf);
                continue;
            }
            let m = read_manifest(
                ManifestSource::file(io, &mf.manifest_path),
                &ReadManifestOptions::default().inherit_from(&mf),
            )?;
            // delete files all of whose rows match the row filter go too; partial ones stay
            let mut matched: HashSet<(String, Option<i64>)> = HashSet::new();
            if let Some(rf) = row_filter.as_mut() {
                for e in m.entries.iter().filter(|e| e.is_live()) {
                    if rf.decide(md, mf.partition_spec_id, &e.data_file)?
                        == row_filter::Decision::Remove
                    {
                        matched.insert((e.data_file.file_path.clone(), e.data_file.content_offset));
                    }
                }
            }
            let drop = |e: &ManifestEntry| {
                let seq = e.sequence_number.unwrap_or(0);
                matched.contains(&(e.data_file.file_path.clone(), e.data_file.content_offset))
                    || is_removed(&e.data_file)
                    || is_dangling(&e.data_file)
                    || (seq > 0 && seq < min_data_seq)
            };
            if !m.entries.iter().any(|e| e.is_live() && drop(e)) {
                data_out.push(mf);
                continue;
            }
            let (rewritten, removed) =
                self.rewrite_manifest(io, md, &mf, m, snapshot_id, dir, codec, drop)?;
            for e in &removed {
                summary.removed_file(mf.partition_spec_id, &e.data_file);
            }
            data_out.push(rewritten);
            replaced += 1;
        }
        Ok((data_out, replaced))
    }

    /// Java's `BaseRewriteFiles.validate`: something is replaced, added files replace
    /// files of their kind, every replaced file is live, no new deletes for replaced data.
    fn validate_rewrite(
        &self,
        io: &dyn FileIO,
        md: &TableMetadata,
        parent: Option<&Snapshot>,
    ) -> Result<()> {
        if self.deleted_paths.is_empty() && self.removed_deletes.is_empty() {
            return Err(Error::invalid_argument("Files to delete cannot be empty"));
        }
        if self.deleted_paths.is_empty() && !self.added.is_empty() {
            return Err(Error::invalid_argument(
                "Data files to add must be empty because there's no data file to be rewritten",
            ));
        }
        if self.removed_deletes.is_empty() && !self.added_deletes.is_empty() {
            return Err(Error::invalid_argument(
                "Delete files to add must be empty because there's no delete file to be rewritten",
            ));
        }
        // on v4 the commit checks this where it searches the tree for the files anyway
        // (`SnapshotProducer::apply_v4`), rather than after a walk of the whole tree
        if md.format_version < crate::V4 {
            let live = live_files(
                io,
                parent,
                !self.deleted_paths.is_empty(),
                !self.removed_deletes.is_empty(),
            )?;
            validate::all_live(&live, &self.deleted_paths, &self.removed_deletes)?;
        }
        if self.deleted_paths.is_empty() {
            return Ok(());
        }
        let v = validate::RowDeltaValidation {
            from_snapshot: self.validation.from_snapshot,
            no_conflicting_delete_files: true,
            ..Default::default()
        };
        validate::validate_overwrite(
            io,
            md,
            parent,
            &v,
            &validate::Overwrite {
                row_filter: None,
                deleted_paths: &self.deleted_paths,
                added: &[],
                validate_added_files_match: false,
                ignore_equality_deletes: self.data_sequence_number.is_some(),
            },
        )
    }

    /// Rewrites manifest `mf` (read as `m`) with the live entries `drop` selects marked
    /// DELETED; earlier deletes are history and left out. Returns the new manifest and the
    /// dropped entries.
    #[allow(clippy::too_many_arguments)]
    fn rewrite_manifest(
        &mut self,
        io: &dyn FileIO,
        md: &TableMetadata,
        mf: &ManifestFile,
        m: crate::manifest::Manifest,
        snapshot_id: i64,
        dir: &str,
        codec: Codec,
        drop: impl Fn(&ManifestEntry) -> bool,
    ) -> Result<(ManifestFile, Vec<ManifestEntry>)> {
        let schema = current_schema(md)?;
        let spec = md.spec_by_id(mf.partition_spec_id).ok_or_else(|| {
            Error::invalid_metadata(
                "partition-specs",
                format!(
                    "manifest {} uses partition spec {}, which the table does not have",
                    mf.manifest_path, mf.partition_spec_id
                ),
            )
        })?;
        let mut w = ManifestWriter::new(
            md.format_version,
            mf.content,
            schema,
            spec,
            snapshot_id,
            codec,
        )?;
        let mut dropped = Vec::new();
        for e in m.entries {
            if e.status == ManifestStatus::Deleted {
                continue;
            }
            let seq = e.sequence_number.unwrap_or(0);
            if drop(&e) {
                dropped.push(e.clone());
                w.delete(e.data_file, seq, e.file_sequence_number)?;
            } else {
                let sid = e.snapshot_id.unwrap_or(mf.added_snapshot_id);
                w.existing(e.data_file, sid, seq, e.file_sequence_number)?;
            }
        }
        let path = self.next_manifest_path(dir);
        self.written.push(path.clone());
        Ok((w.finish(io, &path)?, dropped))
    }
}

/// The live files of `parent`, a v3 (or older) snapshot: data files by path (when
/// `data`), delete files by path and DV offset (when `deletes`). Only the manifests of
/// the asked content are read (a row delta replacing a DV checks its delete manifests,
/// not every data manifest, as Java's delete-file filter does). A v4 commit checks what
/// it removes while it searches its tree for it (`SnapshotProducer::apply_v4`).
fn live_files(
    io: &dyn FileIO,
    parent: Option<&Snapshot>,
    data: bool,
    deletes: bool,
) -> Result<HashSet<(String, Option<i64>)>> {
    let mut out = HashSet::new();
    let Some(list) = parent.and_then(|p| p.manifest_list.as_ref()) else {
        return Ok(out);
    };
    for mf in read_manifest_list(io, list)? {
        let wanted = match mf.content {
            ManifestContent::Data => data,
            ManifestContent::Deletes => deletes,
        };
        if !wanted {
            continue;
        }
        let m = read_manifest(
            ManifestSource::file(io, &mf.manifest_path),
            &ReadManifestOptions::default().inherit_from(&mf),
        )?;
        for e in m.entries.into_iter().filter(ManifestEntry::is_live) {
            let offset = match mf.content {
                ManifestContent::Data => None,
                ManifestContent::Deletes => e.data_file.content_offset,
            };
            out.insert((e.data_file.file_path, offset));
        }
    }
    Ok(out)
}

/// Java's `MergingSnapshotProducer.validateNewDeleteFile`: no deletes in v1, no DVs in v2,
/// only DVs for position deletes in v3 (several new DVs of one data file are merged later,
/// see [`dv_merge`]).
fn check_new_deletes(format_version: i32, deletes: &[(Option<i32>, DataFile)]) -> Result<()> {
    for (_, f) in deletes {
        let dv = validate::is_dv(f);
        match f.content {
            DataContentType::Data => {
                return Err(Error::invalid_argument(format!(
                    "{} is a data file, not a delete file",
                    f.file_path
                )))
            }
            _ if format_version < 2 => {
                return Err(Error::invalid_argument(format!(
                    "{}: deletes are supported in v2 and above",
                    f.file_path
                )))
            }
            DataContentType::PositionDeletes if format_version == 2 && dv => {
                return Err(Error::invalid_argument(format!(
                    "{}: must not use DVs for position deletes in v2",
                    f.file_path
                )))
            }
            DataContentType::PositionDeletes if format_version >= 3 && !dv => {
                return Err(Error::invalid_argument(format!(
                    "{}: must use DVs for position deletes in v{format_version}",
                    f.file_path
                )))
            }
            DataContentType::EqualityDeletes
                if f.equality_ids.as_ref().is_none_or(Vec::is_empty) =>
            {
                return Err(Error::invalid_argument(format!(
                    "{}: an equality delete file needs equality_ids",
                    f.file_path
                )))
            }
            _ => {}
        }
        if dv
            && (f.referenced_data_file.is_none()
                || f.content_offset.is_none()
                || f.content_size_in_bytes.is_none())
        {
            return Err(Error::invalid_argument(format!(
                "{}: a DV needs referenced_data_file, content_offset and content_size_in_bytes",
                f.file_path
            )));
        }
    }
    Ok(())
}

/// `commit.manifest.target-size-bytes`, the size at which new manifests roll.
fn manifest_target_size(md: &TableMetadata) -> u64 {
    property_or(
        md,
        properties::MANIFEST_TARGET_SIZE_BYTES,
        properties::MANIFEST_TARGET_SIZE_BYTES_DEFAULT,
    )
}

/// The table's current schema, or an error naming the field.
pub(super) fn current_schema(md: &TableMetadata) -> Result<&crate::spec::schema::Schema> {
    md.current_schema().ok_or_else(|| {
        Error::invalid_metadata("current-schema-id", "the table has no current schema")
    })
}

/// The partition spec a manifest names, or an error when the table does not have it.
pub(super) fn manifest_spec(
    md: &TableMetadata,
    spec_id: i32,
) -> Result<&crate::spec::partition::PartitionSpec> {
    md.spec_by_id(spec_id).ok_or_else(|| {
        Error::invalid_metadata(
            "partition-specs",
            format!("a manifest uses partition spec {spec_id}, which the table does not have"),
        )
    })
}

impl PendingChange for SnapshotProducer {
    fn apply(&mut self, io: &dyn FileIO, builder: &mut MetadataBuilder) -> Result<()> {
        let md = builder.current().clone();
        let fv = md.format_version;
        let snapshot_id = self.snapshot_id_for(&md);
        let dir = metadata_dir(&md);
        let codec = Codec::for_table(&md)?;
        // Java: a branch that does not exist yet starts from the current snapshot
        let parent = match md.snapshot_ref(&self.branch) {
            Some(r) => md.snapshot_by_id(r.snapshot_id).cloned(),
            None => md.current_snapshot().cloned(),
        };
        // ... but its totals start at 0 (Java reads them from the branch's own head)
        let previous_for_totals = md.snapshot_by_ref(&self.branch).cloned();

        if self.kind == SnapshotKind::RowDelta {
            let added_deletes: Vec<(i32, DataFile)> = self
                .added_deletes
                .iter()
                .map(|(s, f)| (s.unwrap_or(md.default_spec_id), f.clone()))
                .collect();
            let live = || {
                live_files(
                    io,
                    parent.as_ref(),
                    !self.deleted_paths.is_empty(),
                    !self.removed_deletes.is_empty(),
                )
            };
            validate::validate_row_delta(
                io,
                &md,
                parent.as_ref(),
                &self.validation,
                &validate::Change {
                    removed_data_files: &self.deleted_paths,
                    removed_delete_files: &self.removed_deletes,
                    added_deletes: &added_deletes,
                    live_paths: &live,
                },
            )?;
        }

        if self.kind == SnapshotKind::Rewrite {
            self.validate_rewrite(io, &md, parent.as_ref())?;
        }
        if self.kind == SnapshotKind::Overwrite {
            let added: Vec<(i32, DataFile)> = self
                .added
                .iter()
                .map(|(s, f)| (s.unwrap_or(md.default_spec_id), f.clone()))
                .collect();
            validate::validate_overwrite(
                io,
                &md,
                parent.as_ref(),
                &self.validation,
                &validate::Overwrite {
                    row_filter: self.delete_filter.as_ref(),
                    deleted_paths: &self.deleted_paths,
                    added: &added,
                    validate_added_files_match: self.validate_added_files_match,
                    ignore_equality_deletes: false,
                },
            )?;
        }

        if fv >= 4 {
            return self.apply_v4(
                io,
                builder,
                &md,
                parent.as_ref(),
                previous_for_totals.as_ref(),
                snapshot_id,
                &dir,
                codec,
            );
        }
        let mut summary = SummaryBuilder::for_table(&md);
        let new_manifests = self.write_new_manifests(io, &md, snapshot_id, &dir, codec)?;
        let new_deletes = self.new_deletes.as_deref().unwrap_or_default();
        for (spec_id, f) in self.added.iter().chain(new_deletes) {
            summary.added_file(spec_id.unwrap_or(md.default_spec_id), f);
        }
        let parent_manifests = match &parent {
            None => Vec::new(),
            Some(p) => match &p.manifest_list {
                Some(list) => read_manifest_list(io, list)?,
                None => {
                    return Err(Error::unsupported(format!(
                    "snapshot {} embeds its manifests (old v1): icefloe cannot commit on top of it",
                    p.snapshot_id
                )))
                }
            },
        };
        let (filtered, filter_replaced) = if self.kind == SnapshotKind::RewriteManifests {
            let ctx = WriteContext {
                io,
                md: &md,
                snapshot_id,
                dir: &dir,
                codec,
            };
            let r = self.rewrite_manifests_of(&ctx, parent_manifests)?;
            summary.set("entries-processed", r.entries_processed);
            (r.manifests, r.replaced)
        } else {
            self.filter_manifests(
                io,
                &md,
                parent_manifests,
                snapshot_id,
                &dir,
                codec,
                &mut summary,
            )?
        };

        // Java's merging producers drop manifests without live files unless this snapshot
        // wrote them (`MergingSnapshotProducer.apply`): a manifest left with only DELETED
        // entries is kept by the snapshot that deleted them and dropped by the next one
        let merging = !matches!(
            self.kind,
            SnapshotKind::FastAppend | SnapshotKind::RewriteManifests
        );
        let (data, deletes): (Vec<ManifestFile>, Vec<ManifestFile>) = new_manifests
            .into_iter()
            .chain(filtered)
            .filter(|m| {
                !merging
                    || m.has_added_files()
                    || m.has_existing_files()
                    || m.added_snapshot_id == snapshot_id
            })
            .partition(|m| m.content == ManifestContent::Data);
        let mut merge_replaced = 0;
        let manifests = if matches!(
            self.kind,
            SnapshotKind::FastAppend | SnapshotKind::RewriteManifests
        ) {
            let mut all = data;
            all.extend(deletes);
            all
        } else {
            let settings = merge::MergeSettings {
                enabled: property_or(
                    &md,
                    properties::MANIFEST_MERGE_ENABLED,
                    properties::MANIFEST_MERGE_ENABLED_DEFAULT,
                ),
                target_size_bytes: property_or(
                    &md,
                    properties::MANIFEST_TARGET_SIZE_BYTES,
                    properties::MANIFEST_TARGET_SIZE_BYTES_DEFAULT,
                ),
                min_count_to_merge: property_or(
                    &md,
                    properties::MANIFEST_MIN_MERGE_COUNT,
                    properties::MANIFEST_MIN_MERGE_COUNT_DEFAULT,
                ),
            };
            let mut ctx = merge::MergeContext {
                io,
                md: &md,
                snapshot_id,
                codec,
                dir: &dir,
                cache: &mut self.merged,
                written: &mut self.written,
                manifest_count: &mut self.manifest_count,
                commit_uuid: &self.commit_uuid,
                replaced: 0,
                own_sequence_number: self.data_sequence_number,
                own_delete_sequence_numbers: &self.delete_sequence_numbers,
            };
            let mut merged = merge::merge_manifests(&mut ctx, &settings, data)?;
            // Java merges delete manifests the same way, on their own
            merged.extend(merge::merge_manifests(&mut ctx, &settings, deletes)?);
            merge_replaced = ctx.replaced;
            merged
        };

        let created = manifests
            .iter()
            .filter(|m| m.added_snapshot_id == snapshot_id)
            .count();
        summary.set("manifests-created", created);
        summary.set("manifests-kept", manifests.len() - created);
        summary.set("manifests-replaced", filter_replaced + merge_replaced);
        for (k, v) in &self.summary_properties {
            summary.set(k, v);
        }

        self.attempt += 1;
        let list_path = format!(
            "{dir}/snap-{snapshot_id}-{}-{}.avro",
            self.attempt, self.commit_uuid
        );
        let sequence_number = if fv >= 2 {
            md.last_sequence_number + 1
        } else {
            0
        };
        let first_row_id = (fv >= 3).then_some(md.next_row_id);
        let mut writer = ManifestListWriter::new(
            fv,
            snapshot_id,
            parent.as_ref().map(|p| p.snapshot_id),
            sequence_number,
            first_row_id,
            codec,
        )?;
        for m in &manifests {
            writer.add(m)?;
        }
        self.written.push(list_path.clone());
        let list = writer.finish(io, &list_path)?;
        let added_rows = match (first_row_id, list.next_row_id) {
            (Some(first), Some(next)) => Some(next - first),
            _ => None,
        };

        let snapshot = Snapshot {
            snapshot_id,
            parent_snapshot_id: parent.as_ref().map(|p| p.snapshot_id),
            sequence_number,
            timestamp_ms: chrono::Utc::now().timestamp_millis(),
            manifest_list: Some(list_path.clone()),
            manifests: None,
            summary: Some(summary.build(self.operation(), previous_for_totals.as_ref())),
            schema_id: Some(md.current_schema_id),
            first_row_id,
            added_rows,
            key_id: None,
        };
        builder.apply(TableUpdate::AddSnapshot {
            snapshot: snapshot.clone(),
        })?;
        builder.set_branch_snapshot(snapshot_id, &self.branch)?;

        self.used = manifests
            .iter()
            .map(|m| m.manifest_path.clone())
            .chain(std::iter::once(list_path))
            .chain(self.merged_dvs_file.clone())
            .collect();
        self.committed_snapshot = Some(snapshot);
        Ok(())
    }

    fn clean_up(&mut self, io: &dyn FileIO, committed: bool) {
        for path in &self.written {
            if !committed || !self.used.contains(path) {
                // best effort: an orphan file is harmless, a failed cleanup is not an error
                let _ = io.delete(path);
            }
        }
        if !committed {
            self.committed_snapshot = None;
        }
    }
}
