//! Conflict validation of row-level changes ("Commit Conflict Resolution and Retry"), as
//! Java's `MergingSnapshotProducer` validations that `BaseRowDelta` uses: each attempt
//! checks the snapshots committed since the change's starting snapshot (the validation
//! history) for files that conflict with it.
//!
//! The history is the branch's ancestry from the attempt's parent back to the starting
//! snapshot (exclusive), or the whole ancestry when no starting snapshot was given (Java's
//! behaviour). Only manifests a history snapshot added, and entries it wrote, are read.

use std::collections::{HashMap, HashSet};

use super::{current_schema, manifest_spec};
use crate::error::{Error, Result};
use crate::expr::{
    evaluate_tuple, inclusive_projection, BoundExpression, Expression, InclusiveMetricsEvaluator,
};
use crate::io::FileIO;
use crate::manifest::v4::tree::{self as v4_tree, read_snapshot_top, SnapshotTop};
use crate::manifest::v4::V4Layout;
use crate::manifest::{
    read_manifest, read_manifest_list, DataContentType, DataFile, FileFormat, ManifestContent,
    ManifestEntry, ManifestSource, ManifestStatus, ReadManifestOptions,
};
use crate::spec::snapshot::{Operation, Snapshot};
use crate::spec::table_metadata::TableMetadata;

/// What a row delta validates on every attempt (Java's `RowDelta` validation options).
#[derive(Debug, Clone, Default)]
pub struct RowDeltaValidation {
    /// `validateFromSnapshot`: the snapshot the change was planned on.
    pub from_snapshot: Option<i64>,
    /// `conflictDetectionFilter`: only conflicts that may hold matching rows count.
    pub conflict_filter: Option<Expression>,
    /// `validateDataFilesExist`: data files the new deletes refer to.
    pub referenced_data_files: Vec<String>,
    /// `validateDeletedFiles`: the files removed must still be live, and a concurrent
    /// delete of a referenced data file counts as a conflict too.
    pub validate_deleted_files: bool,
    /// `validateNoConflictingDataFiles` (serializable isolation).
    pub no_conflicting_data_files: bool,
    /// `validateNoConflictingDeleteFiles` (snapshot and serializable isolation).
    pub no_conflicting_delete_files: bool,
}

/// The Spark isolation levels, as Spark's row-level writes map them onto validations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationLevel {
    Serializable,
    Snapshot,
}

impl IsolationLevel {
    pub fn parse(name: &str) -> Result<IsolationLevel> {
        match name.to_ascii_lowercase().as_str() {
            "serializable" => Ok(IsolationLevel::Serializable),
            "snapshot" => Ok(IsolationLevel::Snapshot),
            other => Err(Error::invalid_argument(format!(
                "unknown isolation level '{other}' (serializable or snapshot)"
            ))),
        }
    }

    /// Sets the validations the level asks for.
    pub fn apply(self, v: &mut RowDeltaValidation) {
        v.no_conflicting_delete_files = true;
        if self == IsolationLevel::Serializable {
            v.no_conflicting_data_files = true;
        }
    }
}

/// Whether a delete file is a deletion vector (a Puffin blob).
pub fn is_dv(f: &DataFile) -> bool {
    f.content == DataContentType::PositionDeletes && f.file_format == FileFormat::Puffin
}

/// A conflict detection filter bound per partition spec.
pub(super) struct ConflictFilter {
    text: String,
    rows: Option<InclusiveMetricsEvaluator>,
    bound: Option<BoundExpression>,
    partitions: HashMap<i32, BoundExpression>,
}

impl ConflictFilter {
    pub(super) fn new(md: &TableMetadata, filter: Option<&Expression>) -> Result<ConflictFilter> {
        let Some(filter) = filter else {
            return Ok(ConflictFilter {
                text: "true".to_string(),
                rows: None,
                bound: None,
                partitions: HashMap::new(),
            });
        };
        let schema = current_schema(md)?;
        let bound = filter.bind(schema, true)?;
        Ok(ConflictFilter {
            text: filter.to_string(),
            rows: Some(InclusiveMetricsEvaluator::new(bound.clone())),
            bound: Some(bound),
            partitions: HashMap::new(),
        })
    }

    /// Whether `file` (of spec `spec_id`) may hold rows matching the filter.
    pub(super) fn matches(
        &mut self,
        md: &TableMetadata,
        spec_id: i32,
        file: &DataFile,
    ) -> Result<bool> {
        let (Some(bound), Some(rows)) = (&self.bound, &self.rows) else {
            return Ok(true);
        };
        if let std::collections::hash_map::Entry::Vacant(slot) = self.partitions.entry(spec_id) {
            let spec = manifest_spec(md, spec_id)?;
            let schema = current_schema(md)?;
            let ptype = spec.partition_type(schema)?;
            let projected = inclusive_projection(bound, spec)?.bind_struct(&ptype, true)?;
            slot.insert(projected);
        }
        let Some(p) = self.partitions.get(&spec_id) else {
            return Ok(true);
        };
        if !evaluate_tuple(p, &file.partition)? {
            return Ok(false);
        }
        // delete files carry no metrics of the data columns worth pruning on, but equality
        // deletes do: both go through the inclusive evaluator, as Java's delete index does
        rows.eval(file)
    }

    pub(super) fn text(&self) -> &str {
        &self.text
    }
}

/// The snapshots committed since `from` on the way to `parent` (newest first).
pub(super) fn history<'a>(
    md: &'a TableMetadata,
    parent: &'a Snapshot,
    from: Option<i64>,
) -> Result<Vec<&'a Snapshot>> {
    let mut out = Vec::new();
    let mut cur = Some(parent);
    while let Some(s) = cur {
        if Some(s.snapshot_id) == from {
            return Ok(out);
        }
        out.push(s);
        cur = s.parent_snapshot_id.and_then(|p| md.snapshot_by_id(p));
    }
    match from {
        None => Ok(out),
        Some(id) => Err(Error::invalid_argument(format!(
            "Snapshot {id} is not an ancestor of {}",
            parent.snapshot_id
        ))),
    }
}

/// The entries of `status` that the history's snapshots of `operations` wrote into the
/// manifests of `content` they added, with their spec ids.
pub(super) fn history_entries(
    io: &dyn FileIO,
    md: &TableMetadata,
    snapshots: &[&Snapshot],
    operations: &[Operation],
    content: ManifestContent,
    status: ManifestStatus,
) -> Result<Vec<(i32, ManifestEntry)>> {
    let ids: HashSet<i64> = snapshots.iter().map(|s| s.snapshot_id).collect();
    let mut out = Vec::new();
    for s in snapshots {
        let op = s.summary.as_ref().map(|x| x.operation);
        if !op.is_some_and(|o| operations.contains(&o)) {
            continue;
        }
        let Some(list) = &s.manifest_list else {
            continue;
        };
        if md.format_version >= 4 {
            // a v4 root (or, before the upgrade's first commit, a manifest list)
            let partitioning = V4Layout::for_table(md)?;
            if let SnapshotTop::Root(_) = read_snapshot_top(io, &partitioning, s)? {
                // added files need no leaf read for the entries manifest DVs removed
                let changes = if status == ManifestStatus::Added {
                    v4_tree::snapshot_additions(io, &partitioning, s)?
                } else {
                    v4_tree::snapshot_changes(io, &partitioning, s)?
                };
                for (c, spec_id, e) in changes {
                    if c == content
                        && e.status == status
                        && e.snapshot_id.is_some_and(|id| ids.contains(&id))
                    {
                        out.push((spec_id, e));
                    }
                }
                continue;
            }
        }
        for mf in read_manifest_list(io, list)? {
            if mf.content != content || mf.added_snapshot_id != s.snapshot_id {
                continue;
            }
            let m = read_manifest(
                ManifestSource::file(io, &mf.manifest_path),
                &ReadManifestOptions::default().inherit_from(&mf),
            )?;
            for e in m.entries {
                if e.status == status && e.snapshot_id.is_some_and(|id| ids.contains(&id)) {
                    out.push((mf.partition_spec_id, e));
                }
            }
        }
    }
    Ok(out)
}

/// Java's `validateAddedDataFiles`: no data file that may hold rows matching `filter` was
/// appended or overwritten in by the history's snapshots.
fn no_new_data_files(
    io: &dyn FileIO,
    md: &TableMetadata,
    snapshots: &[&Snapshot],
    filter: &mut ConflictFilter,
) -> Result<()> {
    let mut conflicts = Vec::new();
    for (spec_id, e) in history_entries(
        io,
        md,
        snapshots,
        &[Operation::Append, Operation::Overwrite],
        ManifestContent::Data,
        ManifestStatus::Added,
    )? {
        if filter.matches(md, spec_id, &e.data_file)? {
            conflicts.push(e.data_file.file_path);
        }
    }
    if !conflicts.is_empty() {
        return Err(Error::validation_failed(format!(
            "Found conflicting files that can contain records matching {}: {}",
            filter.text(),
            short_list(conflicts)
        )));
    }
    Ok(())
}

/// Everything an attempt validates, given what the change does.
pub(super) struct Change<'a> {
    pub removed_data_files: &'a [String],
    pub removed_delete_files: &'a [(String, Option<i64>)],
    pub added_deletes: &'a [(i32, DataFile)],
    /// The live files of the attempt's base, for `validate_deleted_files`.
    pub live_paths: &'a dyn Fn() -> Result<HashSet<(String, Option<i64>)>>,
}

fn short_list(paths: impl IntoIterator<Item = String>) -> String {
    let mut v: Vec<String> = paths.into_iter().collect();
    v.sort_unstable();
    v.dedup();
    v.join(", ")
}

/// Java's "Missing required files to delete" when `missing` names any file.
pub(super) fn no_missing_files_to_delete(missing: impl IntoIterator<Item = String>) -> Result<()> {
    let missing: Vec<String> = missing.into_iter().collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::validation_failed(format!(
        "Missing required files to delete: {}",
        short_list(missing)
    )))
}

/// Java's "Missing required files to delete" unless every data file of `data` (by path)
/// and delete file of `deletes` (by path and DV offset; by path alone without one) is in
/// `live`.
pub(super) fn all_live(
    live: &HashSet<(String, Option<i64>)>,
    data: &[String],
    deletes: &[(String, Option<i64>)],
) -> Result<()> {
    let missing_data = data
        .iter()
        .filter(|p| !live.contains(&((*p).clone(), None)));
    let missing_deletes = deletes
        .iter()
        .filter(|(p, offset)| match offset {
            Some(_) => !live.contains(&(p.clone(), *offset)),
            None => !live.iter().any(|(lp, _)| lp == p),
        })
        .map(|(p, _)| p);
    no_missing_files_to_delete(missing_data.chain(missing_deletes).cloned())
}

/// Java's `BaseRowDelta.validate` on an attempt whose parent is `parent`.
pub(super) fn validate_row_delta(
    io: &dyn FileIO,
    md: &TableMetadata,
    parent: Option<&Snapshot>,
    v: &RowDeltaValidation,
    change: &Change<'_>,
) -> Result<()> {
    let Some(parent) = parent else {
        return Ok(());
    };
    let snapshots = history(md, parent, v.from_snapshot)?;
    let mut filter = ConflictFilter::new(md, v.conflict_filter.as_ref())?;

    if !v.referenced_data_files.is_empty() {
        let ops: &[Operation] = if v.validate_deleted_files {
            &[Operation::Overwrite, Operation::Replace, Operation::Delete]
        } else {
            &[Operation::Overwrite, Operation::Replace]
        };
        let wanted: HashSet<&str> = v.referenced_data_files.iter().map(String::as_str).collect();
        let mut missing = Vec::new();
        for (spec_id, e) in history_entries(
            io,
            md,
            &snapshots,
            ops,
            ManifestContent::Data,
            ManifestStatus::Deleted,
        )? {
            if wanted.contains(e.data_file.file_path.as_str())
                && filter.matches(md, spec_id, &e.data_file)?
            {
                missing.push(e.data_file.file_path);
            }
        }
        if !missing.is_empty() {
            return Err(Error::validation_failed(format!(
                "Cannot commit, missing data files: {}",
                short_list(missing)
            )));
        }
    }

    // (the live files are read only when something is removed: reading them is reading
    // every manifest; on v4 the commit checks this where it searches the tree for those
    // files anyway, `SnapshotProducer::apply_v4`)
    let removes = !change.removed_data_files.is_empty() || !change.removed_delete_files.is_empty();
    if v.validate_deleted_files && removes && md.format_version < crate::V4 {
        let live = (change.live_paths)()?;
        all_live(
            &live,
            change.removed_data_files,
            change.removed_delete_files,
        )?;
    }

    if v.no_conflicting_data_files {
        no_new_data_files(io, md, &snapshots, &mut filter)?;
    }

    let new_deletes = || {
        history_entries(
            io,
            md,
            &snapshots,
            &[Operation::Overwrite, Operation::Delete],
            ManifestContent::Deletes,
            ManifestStatus::Added,
        )
    };
    let mut added_since: Option<Vec<(i32, ManifestEntry)>> = None;

    if v.no_conflicting_delete_files {
        let deletes = added_since.get_or_insert(new_deletes()?);
        if !change.removed_data_files.is_empty() {
            let removed: HashSet<&str> = change
                .removed_data_files
                .iter()
                .map(String::as_str)
                .collect();
            let live_data = removed_data_entries(io, md, parent, &removed)?;
            for (spec_id, e) in deletes.iter() {
                if !filter.matches(md, *spec_id, &e.data_file)? {
                    continue;
                }
                for (data_spec, data) in &live_data {
                    if applies_to(*spec_id, e, *data_spec, data) {
                        return Err(Error::validation_failed(format!(
                            "Cannot commit, found new delete for replaced data file: {}",
                            data.data_file.file_path
                        )));
                    }
                }
            }
        }
        let mut conflicts = Vec::new();
        for (spec_id, e) in deletes.iter() {
            if filter.matches(md, *spec_id, &e.data_file)? {
                conflicts.push(e.data_file.file_path.clone());
            }
        }
        if !conflicts.is_empty() {
            return Err(Error::validation_failed(format!(
                "Found new conflicting delete files that can apply to records matching {}: {}",
                filter.text(),
                short_list(conflicts)
            )));
        }
    }

    // removed data files must not be the target of position deletes added with them
    for (_, d) in change.added_deletes {
        if d.content == DataContentType::PositionDeletes {
            if let Some(target) = &d.referenced_data_file {
                if change.removed_data_files.contains(target) {
                    return Err(Error::validation_failed(format!(
                        "Cannot delete data files [{target}] that are referenced by new delete files"
                    )));
                }
            }
        }
    }

    // a data file has at most one DV: one added concurrently for a file this change adds a
    // DV for is a conflict, whatever the options (Java's validateAddedDVs)
    let new_dv_targets: HashSet<&str> = change
        .added_deletes
        .iter()
        .filter(|(_, d)| is_dv(d))
        .filter_map(|(_, d)| d.referenced_data_file.as_deref())
        .collect();
    if md.format_version >= 3 && !new_dv_targets.is_empty() {
        let deletes = match added_since.take() {
            Some(d) => d,
            None => new_deletes()?,
        };
        for (spec_id, e) in &deletes {
            if !is_dv(&e.data_file) || !filter.matches(md, *spec_id, &e.data_file)? {
                continue;
            }
            if let Some(target) = e.data_file.referenced_data_file.as_deref() {
                if new_dv_targets.contains(target) {
                    return Err(Error::validation_failed(format!(
                        "Found concurrently added DV for {target}: {}",
                        e.data_file.file_path
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The base's live entries of the data files at `paths` (with their spec ids).
fn removed_data_entries(
    io: &dyn FileIO,
    md: &TableMetadata,
    parent: &Snapshot,
    paths: &HashSet<&str>,
) -> Result<Vec<(i32, ManifestEntry)>> {
    let mut out = Vec::new();
    let Some(list) = &parent.manifest_list else {
        return Ok(out);
    };
    if md.format_version >= 4 {
        let partitioning = V4Layout::for_table(md)?;
        for (c, spec_id, e) in v4_tree::live_entries(io, &partitioning, parent)? {
            if c == ManifestContent::Data && paths.contains(e.data_file.file_path.as_str()) {
                out.push((spec_id, e));
            }
        }
        return Ok(out);
    }
    for mf in read_manifest_list(io, list)? {
        if mf.content != ManifestContent::Data {
            continue;
        }
        let m = read_manifest(
            ManifestSource::file(io, &mf.manifest_path),
            &ReadManifestOptions::default().inherit_from(&mf),
        )?;
        for e in m.entries {
            if e.is_live() && paths.contains(e.data_file.file_path.as_str()) {
                out.push((mf.partition_spec_id, e));
            }
        }
    }
    Ok(out)
}

/// Whether delete entry `d` applies to data entry `data` (the spec's scan rules: position
/// deletes and DVs at the same or a later data sequence number, targeted or in the same
/// partition; equality deletes at a later one, in the same partition or unpartitioned).
fn applies_to(d_spec: i32, d: &ManifestEntry, data_spec: i32, data: &ManifestEntry) -> bool {
    let dseq = d.sequence_number.unwrap_or(0);
    let fseq = data.sequence_number.unwrap_or(0);
    let f = &d.data_file;
    match f.content {
        DataContentType::Data => false,
        DataContentType::PositionDeletes => {
            if dseq < fseq {
                return false;
            }
            match &f.referenced_data_file {
                Some(t) => *t == data.data_file.file_path,
                None => d_spec == data_spec && f.partition == data.data_file.partition,
            }
        }
        DataContentType::EqualityDeletes => {
            dseq > fseq
                && (f.partition.is_empty()
                    || (d_spec == data_spec && f.partition == data.data_file.partition))
        }
    }
}

/// What an overwrite validates (Java's `OverwriteFiles` options; `validation`'s
/// `no_conflicting_*` are `validateNoConflictingData` / `validateNoConflictingDeletes`).
pub(super) struct Overwrite<'a> {
    pub row_filter: Option<&'a Expression>,
    pub deleted_paths: &'a [String],
    pub added: &'a [(i32, DataFile)],
    pub validate_added_files_match: bool,
    /// A rewrite keeping the data sequence number: equality deletes still apply to the
    /// new files, so new ones are no conflict (Java's `ignoreEqualityDeletes`).
    pub ignore_equality_deletes: bool,
}

/// Java's `BaseOverwriteFiles.validate`.
pub(super) fn validate_overwrite(
    io: &dyn FileIO,
    md: &TableMetadata,
    parent: Option<&Snapshot>,
    v: &RowDeltaValidation,
    o: &Overwrite<'_>,
) -> Result<()> {
    if o.validate_added_files_match {
        let filter = o.row_filter.cloned().unwrap_or(Expression::False);
        let mut rf = super::row_filter::RowFilter::new(md, &filter)?;
        for (spec_id, f) in o.added {
            if !rf.all_rows_match(md, *spec_id, f)? {
                return Err(Error::validation_failed(format!(
                    "Cannot append file with rows that do not match filter: {}: {}",
                    rf.text(),
                    f.file_path
                )));
            }
        }
    }
    let Some(parent) = parent else {
        return Ok(());
    };
    let snapshots = history(md, parent, v.from_snapshot)?;
    if v.no_conflicting_data_files {
        let data_filter = match (&v.conflict_filter, o.row_filter) {
            (Some(f), _) => Some(f),
            (None, Some(r)) if o.deleted_paths.is_empty() => Some(r),
            _ => None,
        };
        let mut filter = ConflictFilter::new(md, data_filter)?;
        no_new_data_files(io, md, &snapshots, &mut filter)?;
    }
    if v.no_conflicting_delete_files {
        if let Some(row_filter) = o.row_filter {
            let f = v.conflict_filter.as_ref().unwrap_or(row_filter);
            let mut filter = ConflictFilter::new(md, Some(f))?;
            let mut conflicts = Vec::new();
            for (spec_id, e) in history_entries(
                io,
                md,
                &snapshots,
                &[Operation::Overwrite, Operation::Delete],
                ManifestContent::Deletes,
                ManifestStatus::Added,
            )? {
                if filter.matches(md, spec_id, &e.data_file)? {
                    conflicts.push(e.data_file.file_path);
                }
            }
            if !conflicts.is_empty() {
                return Err(Error::validation_failed(format!(
                    "Found new conflicting delete files that can apply to records matching {}: {}",
                    filter.text(),
                    short_list(conflicts)
                )));
            }
            for (spec_id, e) in history_entries(
                io,
                md,
                &snapshots,
                &[Operation::Overwrite, Operation::Replace, Operation::Delete],
                ManifestContent::Data,
                ManifestStatus::Deleted,
            )? {
                if filter.matches(md, spec_id, &e.data_file)? {
                    conflicts.push(e.data_file.file_path);
                }
            }
            if !conflicts.is_empty() {
                return Err(Error::validation_failed(format!(
                    "Found conflicting deleted files that can contain records matching {}: {}",
                    filter.text(),
                    short_list(conflicts)
                )));
            }
        }
        if !o.deleted_paths.is_empty() {
            let mut filter = ConflictFilter::new(md, v.conflict_filter.as_ref())?;
            let removed: HashSet<&str> = o.deleted_paths.iter().map(String::as_str).collect();
            let live_data = removed_data_entries(io, md, parent, &removed)?;
            for (spec_id, e) in history_entries(
                io,
                md,
                &snapshots,
                &[Operation::Overwrite, Operation::Delete],
                ManifestContent::Deletes,
                ManifestStatus::Added,
            )? {
                if !filter.matches(md, spec_id, &e.data_file)?
                    || (o.ignore_equality_deletes
                        && e.data_file.content == DataContentType::EqualityDeletes)
                {
                    continue;
                }
                for (data_spec, data) in &live_data {
                    if applies_to(spec_id, &e, *data_spec, data) {
                        return Err(Error::validation_failed(format!(
                            "Cannot commit, found new delete for replaced data file: {}",
                            data.data_file.file_path
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}
