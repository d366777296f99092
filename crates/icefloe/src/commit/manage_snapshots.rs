//! Snapshot management ("Branching and Tagging", "Snapshot References"): branches and tags
//! with their retention fields, setting or rolling back the current snapshot, and
//! cherry-picking a snapshot onto `main`, following Java's `SnapshotManager`,
//! `UpdateSnapshotReferencesOperation`, `SetSnapshotOperation` and `CherryPickOperation`.
//!
//! [`ManageSnapshots`] is one [`PendingChange`] of a transaction. On its first attempt it
//! records, for every ref it touches, where that ref pointed in the table as committed
//! (`assert-ref-snapshot-id`). A retry after another writer won re-checks those
//! requirements against the new base: when a touched ref moved meanwhile the change fails
//! with `ValidationFailed` rather than silently overwriting the other writer's change.

use std::collections::BTreeSet;

use super::builder::MetadataBuilder;
use super::snapshot::SnapshotProducer;
use super::transaction::PendingChange;
use super::update::{check_requirements, TableRequirement, TableUpdate};
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::{
    read_manifest, read_manifest_list, DataFile, ManifestContent, ManifestSource, ManifestStatus,
    ReadManifestOptions,
};
use crate::spec::snapshot::{Operation, SnapshotRef, MAIN_BRANCH};
use crate::spec::table_metadata::TableMetadata;

/// Summary property: the snapshot a cherry-picked snapshot was made from.
pub const SOURCE_SNAPSHOT_ID_PROP: &str = "source-snapshot-id";
/// Summary property: the `wap.id` a cherry-pick published.
pub const PUBLISHED_WAP_ID_PROP: &str = "published-wap-id";
/// Summary property of a staged write-audit-publish snapshot.
pub const STAGED_WAP_ID_PROP: &str = "wap.id";

/// One snapshot-management operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotOp {
    /// `None`: at the current snapshot.
    CreateBranch {
        name: String,
        snapshot_id: Option<i64>,
    },
    CreateTag {
        name: String,
        snapshot_id: i64,
    },
    RemoveBranch {
        name: String,
    },
    RemoveTag {
        name: String,
    },
    RenameBranch {
        name: String,
        new_name: String,
    },
    /// Points an existing branch at a snapshot, keeping its retention fields.
    ReplaceBranch {
        name: String,
        snapshot_id: i64,
    },
    /// Points branch `from` where ref `to` points (creating `from` if missing); with
    /// `fast_forward`, `from` must be an ancestor of `to`.
    ReplaceBranchWithRef {
        from: String,
        to: String,
        fast_forward: bool,
    },
    ReplaceTag {
        name: String,
        snapshot_id: i64,
    },
    SetMinSnapshotsToKeep {
        name: String,
        value: i32,
    },
    SetMaxSnapshotAgeMs {
        name: String,
        value: i64,
    },
    SetMaxRefAgeMs {
        name: String,
        value: i64,
    },
    /// Makes any known snapshot current.
    SetCurrentSnapshot {
        snapshot_id: i64,
    },
    /// Makes an ancestor of the current snapshot current.
    RollbackTo {
        snapshot_id: i64,
    },
    /// Makes current the latest ancestor of the current snapshot older than the time.
    RollbackToTime {
        timestamp_ms: i64,
    },
    CherryPick {
        snapshot_id: i64,
    },
}

impl SnapshotOp {
    /// The refs whose state the operation depends on or changes.
    fn touched_refs(&self) -> Vec<&str> {
        match self {
            SnapshotOp::CreateBranch { name, .. }
            | SnapshotOp::CreateTag { name, .. }
            | SnapshotOp::RemoveBranch { name }
            | SnapshotOp::RemoveTag { name }
            | SnapshotOp::ReplaceBranch { name, .. }
            | SnapshotOp::ReplaceTag { name, .. }
            | SnapshotOp::SetMinSnapshotsToKeep { name, .. }
            | SnapshotOp::SetMaxSnapshotAgeMs { name, .. }
            | SnapshotOp::SetMaxRefAgeMs { name, .. } => vec![name],
            SnapshotOp::RenameBranch { name, new_name } => vec![name, new_name],
            SnapshotOp::ReplaceBranchWithRef { from, to, .. } => vec![from, to],
            SnapshotOp::SetCurrentSnapshot { .. }
            | SnapshotOp::RollbackTo { .. }
            | SnapshotOp::RollbackToTime { .. } => vec![MAIN_BRANCH],
            // a cherry-pick is a new snapshot on main, re-applied on a retry like an append
            SnapshotOp::CherryPick { .. } => Vec::new(),
        }
    }
}

fn invalid(message: String) -> Error {
    Error::validation_failed(message)
}

/// The ancestors of the current snapshot, newest first.
fn current_ancestors(md: &TableMetadata) -> Vec<i64> {
    match md.current_snapshot_id {
        Some(id) => md.ancestors_of(id).iter().map(|s| s.snapshot_id).collect(),
        None => Vec::new(),
    }
}

fn is_current_ancestor(md: &TableMetadata, snapshot_id: i64) -> bool {
    current_ancestors(md).contains(&snapshot_id)
}

/// Java's `findLatestAncestorOlderThan`: the newest ancestor strictly older than the time.
pub fn latest_ancestor_older_than(md: &TableMetadata, timestamp_ms: i64) -> Option<i64> {
    let mut best: Option<(i64, i64)> = None;
    for id in current_ancestors(md) {
        let Some(s) = md.snapshot_by_id(id) else {
            continue;
        };
        if s.timestamp_ms < timestamp_ms && best.is_none_or(|(_, ts)| s.timestamp_ms > ts) {
            best = Some((id, s.timestamp_ms));
        }
    }
    best.map(|(id, _)| id)
}

fn existing_ref(md: &TableMetadata, name: &str, what: &str) -> Result<SnapshotRef> {
    md.snapshot_ref(name)
        .cloned()
        .ok_or_else(|| invalid(format!("{what} does not exist: {name}")))
}

fn require_snapshot(md: &TableMetadata, snapshot_id: i64, action: &str) -> Result<()> {
    if md.snapshot_by_id(snapshot_id).is_none() {
        return Err(invalid(format!(
            "cannot {action}: unknown snapshot id {snapshot_id}"
        )));
    }
    Ok(())
}

fn set_ref(builder: &mut MetadataBuilder, name: &str, reference: SnapshotRef) -> Result<()> {
    builder
        .apply(TableUpdate::SetSnapshotRef {
            ref_name: name.to_string(),
            reference,
        })
        .map(|_| ())
}

fn remove_ref(builder: &mut MetadataBuilder, name: &str) -> Result<()> {
    builder
        .apply(TableUpdate::RemoveSnapshotRef {
            ref_name: name.to_string(),
        })
        .map(|_| ())
}

/// Applies one ref operation (not a cherry-pick) on top of `builder`.
fn apply_ref_op(op: &SnapshotOp, builder: &mut MetadataBuilder) -> Result<()> {
    let md = builder.current().clone();
    match op {
        SnapshotOp::CreateBranch { name, snapshot_id } => {
            if md.snapshot_ref(name).is_some() {
                return Err(invalid(format!("ref {name} already exists")));
            }
            let id = match snapshot_id {
                Some(id) => *id,
                None => md.current_snapshot_id.ok_or_else(|| {
                    invalid(format!(
                        "cannot create branch {name}: the table has no current snapshot"
                    ))
                })?,
            };
            require_snapshot(&md, id, &format!("create branch {name}"))?;
            set_ref(builder, name, SnapshotRef::branch(id))
        }
        SnapshotOp::CreateTag { name, snapshot_id } => {
            if md.snapshot_ref(name).is_some() {
                return Err(invalid(format!("ref {name} already exists")));
            }
            require_snapshot(&md, *snapshot_id, &format!("create tag {name}"))?;
            set_ref(builder, name, SnapshotRef::tag(*snapshot_id))
        }
        SnapshotOp::RemoveBranch { name } => {
            if name == MAIN_BRANCH {
                return Err(invalid("cannot remove the main branch".into()));
            }
            let r = existing_ref(&md, name, "branch")?;
            if !r.is_branch() {
                return Err(invalid(format!("ref {name} is a tag, not a branch")));
            }
            remove_ref(builder, name)
        }
        SnapshotOp::RemoveTag { name } => {
            let r = existing_ref(&md, name, "tag")?;
            if r.is_branch() {
                return Err(invalid(format!("ref {name} is a branch, not a tag")));
            }
            remove_ref(builder, name)
        }
        SnapshotOp::RenameBranch { name, new_name } => {
            if name == MAIN_BRANCH {
                return Err(invalid("cannot rename the main branch".into()));
            }
            let r = existing_ref(&md, name, "branch")?;
            if !r.is_branch() {
                return Err(invalid(format!("ref {name} is a tag, not a branch")));
            }
            if md.snapshot_ref(new_name).is_some() {
                return Err(invalid(format!("ref {new_name} already exists")));
            }
            set_ref(builder, new_name, r)?;
            remove_ref(builder, name)
        }
        SnapshotOp::ReplaceBranch { name, snapshot_id } => {
            let r = existing_ref(&md, name, "branch")?;
            if !r.is_branch() {
                return Err(invalid(format!("ref {name} is a tag, not a branch")));
            }
            require_snapshot(&md, *snapshot_id, &format!("replace branch {name}"))?;
            set_ref(
                builder,
                name,
                SnapshotRef {
                    snapshot_id: *snapshot_id,
                    ..r
                },
            )
        }
        SnapshotOp::ReplaceBranchWithRef {
            from,
            to,
            fast_forward,
        } => {
            let target = existing_ref(&md, to, "ref")?;
            let Some(branch) = md.snapshot_ref(from).cloned() else {
                return set_ref(builder, from, SnapshotRef::branch(target.snapshot_id));
            };
            if !branch.is_branch() {
                return Err(invalid(format!("ref {from} is a tag, not a branch")));
            }
            if branch.snapshot_id == target.snapshot_id {
                return Ok(());
            }
            if *fast_forward {
                let is_ancestor = md
                    .ancestors_of(target.snapshot_id)
                    .iter()
                    .any(|s| s.snapshot_id == branch.snapshot_id);
                if !is_ancestor {
                    return Err(invalid(format!(
                        "cannot fast-forward: {from} is not an ancestor of {to}"
                    )));
                }
            }
            set_ref(
                builder,
                from,
                SnapshotRef {
                    snapshot_id: target.snapshot_id,
                    ..branch
                },
            )
        }
        SnapshotOp::ReplaceTag { name, snapshot_id } => {
            let r = existing_ref(&md, name, "tag")?;
            if r.is_branch() {
                return Err(invalid(format!("ref {name} is a branch, not a tag")));
            }
            require_snapshot(&md, *snapshot_id, &format!("replace tag {name}"))?;
            set_ref(
                builder,
                name,
                SnapshotRef {
                    snapshot_id: *snapshot_id,
                    ..r
                },
            )
        }
        SnapshotOp::SetMinSnapshotsToKeep { name, value } => {
            let r = existing_ref(&md, name, "branch")?;
            if !r.is_branch() {
                return Err(invalid(format!(
                    "tags do not support min-snapshots-to-keep: {name} is a tag"
                )));
            }
            set_ref(
                builder,
                name,
                SnapshotRef {
                    min_snapshots_to_keep: Some(*value),
                    ..r
                },
            )
        }
        SnapshotOp::SetMaxSnapshotAgeMs { name, value } => {
            let r = existing_ref(&md, name, "branch")?;
            if !r.is_branch() {
                return Err(invalid(format!(
                    "tags do not support max-snapshot-age-ms: {name} is a tag"
                )));
            }
            set_ref(
                builder,
                name,
                SnapshotRef {
                    max_snapshot_age_ms: Some(*value),
                    ..r
                },
            )
        }
        SnapshotOp::SetMaxRefAgeMs { name, value } => {
            let r = existing_ref(&md, name, "ref")?;
            set_ref(
                builder,
                name,
                SnapshotRef {
                    max_ref_age_ms: Some(*value),
                    ..r
                },
            )
        }
        SnapshotOp::SetCurrentSnapshot { snapshot_id } => {
            require_snapshot(&md, *snapshot_id, "set the current snapshot")?;
            builder.set_branch_snapshot(*snapshot_id, MAIN_BRANCH)
        }
        SnapshotOp::RollbackTo { snapshot_id } => {
            require_snapshot(&md, *snapshot_id, "roll back")?;
            if !is_current_ancestor(&md, *snapshot_id) {
                return Err(invalid(format!(
                    "cannot roll back to snapshot {snapshot_id}: not an ancestor of the current table state"
                )));
            }
            builder.set_branch_snapshot(*snapshot_id, MAIN_BRANCH)
        }
        SnapshotOp::RollbackToTime { timestamp_ms } => {
            let id = latest_ancestor_older_than(&md, *timestamp_ms).ok_or_else(|| {
                invalid(format!(
                    "cannot roll back: no valid snapshot older than {timestamp_ms}"
                ))
            })?;
            builder.set_branch_snapshot(id, MAIN_BRANCH)
        }
        SnapshotOp::CherryPick { .. } => Err(Error::invalid_argument(
            "a cherry-pick is not a ref operation",
        )),
    }
}

/// A cherry-pick of one snapshot onto `main` (Java's `CherryPickOperation`): when the
/// snapshot's parent is the current snapshot, `main` is fast-forwarded to it; an append is
/// re-applied as a new snapshot with `source-snapshot-id` (and `published-wap-id` when the
/// snapshot was staged with a `wap.id`).
#[derive(Debug)]
struct CherryPick {
    snapshot_id: i64,
    /// The append re-applying the picked snapshot's files, made on the first attempt that
    /// is not a fast-forward.
    producer: Option<SnapshotProducer>,
}

/// The data files the snapshot added (ADDED entries of the manifests it wrote).
fn added_data_files(
    io: &dyn FileIO,
    md: &TableMetadata,
    snapshot_id: i64,
) -> Result<Vec<DataFile>> {
    let snapshot = md.snapshot_by_id(snapshot_id).ok_or_else(|| {
        invalid(format!(
            "cannot cherry-pick unknown snapshot id {snapshot_id}"
        ))
    })?;
    let list = snapshot.manifest_list.as_deref().ok_or_else(|| {
        Error::unsupported(format!(
            "snapshot {snapshot_id} embeds its manifests (old v1): cannot cherry-pick it"
        ))
    })?;
    if md.format_version >= 4 {
        // a v4 snapshot points to a root (an upgraded table's older ones to a list)
        use crate::manifest::v4::{tree, V4Layout};
        let partitioning = V4Layout::for_table(md)?;
        let bytes = io.read(list)?;
        if tree::is_v4_manifest(&bytes).map_err(|e| e.in_file(list))? {
            return Ok(tree::snapshot_changes(io, &partitioning, snapshot)?
                .into_iter()
                .filter(|(_, _, e)| {
                    e.status == ManifestStatus::Added
                        && e.data_file.content == crate::manifest::DataContentType::Data
                })
                .map(|(_, _, e)| e.data_file)
                .collect());
        }
    }
    let mut out = Vec::new();
    for mf in read_manifest_list(io, list)? {
        if mf.content != ManifestContent::Data || mf.added_snapshot_id != snapshot_id {
            continue;
        }
        let m = read_manifest(
            ManifestSource::file(io, &mf.manifest_path),
            &ReadManifestOptions::default().inherit_from(&mf),
        )?;
        for e in m.entries {
            let sid = e.snapshot_id.unwrap_or(mf.added_snapshot_id);
            if e.status == ManifestStatus::Added && sid == snapshot_id {
                out.push(e.data_file);
            }
        }
    }
    Ok(out)
}

/// The `wap.id` a snapshot was staged with, if any; fails if it was already published on
/// the current branch (Java's `WapUtil.validateWapPublish`).
fn validate_wap_publish(md: &TableMetadata, snapshot_id: i64) -> Result<Option<String>> {
    let wap_id = md
        .snapshot_by_id(snapshot_id)
        .and_then(|s| s.summary.as_ref())
        .and_then(|s| s.get(STAGED_WAP_ID_PROP))
        .filter(|w| !w.is_empty())
        .map(str::to_string);
    if let Some(w) = &wap_id {
        let published = current_ancestors(md).iter().any(|id| {
            md.snapshot_by_id(*id)
                .and_then(|s| s.summary.as_ref())
                .and_then(|s| s.get(PUBLISHED_WAP_ID_PROP))
                == Some(w.as_str())
        });
        if published {
            return Err(invalid(format!(
                "duplicate request to cherry-pick wap id that was published already: {w}"
            )));
        }
    }
    Ok(wap_id)
}

impl CherryPick {
    fn is_fast_forward(&self, md: &TableMetadata) -> bool {
        let parent = md
            .snapshot_by_id(self.snapshot_id)
            .and_then(|s| s.parent_snapshot_id);
        parent == md.current_snapshot_id
    }

    fn apply(&mut self, io: &dyn FileIO, builder: &mut MetadataBuilder) -> Result<()> {
        let md = builder.current().clone();
        let picked = md
            .snapshot_by_id(self.snapshot_id)
            .cloned()
            .ok_or_else(|| {
                invalid(format!(
                    "cannot cherry-pick unknown snapshot id {}",
                    self.snapshot_id
                ))
            })?;
        if self.is_fast_forward(&md) {
            return builder.set_branch_snapshot(self.snapshot_id, MAIN_BRANCH);
        }
        if picked.operation() != Some(Operation::Append) {
            return Err(invalid(format!(
                "cannot cherry-pick snapshot {}: not an append or a fast-forward",
                self.snapshot_id
            )));
        }
        // Java's validateNonAncestor: picking what main already has would duplicate rows
        let already_picked = current_ancestors(&md).iter().any(|id| {
            *id == self.snapshot_id
                || md
                    .snapshot_by_id(*id)
                    .and_then(|s| s.summary.as_ref())
                    .and_then(|s| s.get(SOURCE_SNAPSHOT_ID_PROP))
                    == Some(self.snapshot_id.to_string().as_str())
        });
        if already_picked {
            return Err(invalid(format!(
                "cannot cherry-pick snapshot {}: it is already an ancestor of the current state",
                self.snapshot_id
            )));
        }
        let wap_id = validate_wap_publish(&md, self.snapshot_id)?;
        if self.producer.is_none() {
            let mut p = SnapshotProducer::fast_append();
            for f in added_data_files(io, &md, self.snapshot_id)? {
                p.add_file(f);
            }
            p.set_summary(SOURCE_SNAPSHOT_ID_PROP, self.snapshot_id.to_string());
            if let Some(w) = &wap_id {
                p.set_summary(PUBLISHED_WAP_ID_PROP, w.clone());
            }
            self.producer = Some(p);
        }
        match &mut self.producer {
            Some(p) => p.apply(io, builder),
            None => Ok(()),
        }
    }
}

/// Branch, tag and current-snapshot changes committed together; see the module docs.
#[derive(Debug, Default)]
pub struct ManageSnapshots {
    ops: Vec<SnapshotOp>,
    cherry_picks: Vec<CherryPick>,
    /// Where the touched refs pointed in the first attempt's base.
    requirements: Option<Vec<TableRequirement>>,
}

impl ManageSnapshots {
    pub fn new() -> ManageSnapshots {
        ManageSnapshots::default()
    }

    /// Adds an operation; operations apply in order.
    pub fn add(&mut self, op: SnapshotOp) -> &mut Self {
        if let SnapshotOp::CherryPick { snapshot_id } = &op {
            self.cherry_picks.push(CherryPick {
                snapshot_id: *snapshot_id,
                producer: None,
            });
        }
        self.ops.push(op);
        self
    }

    pub fn ops(&self) -> &[SnapshotOp] {
        &self.ops
    }

    /// The requirements recorded by the first attempt (`None` before it).
    pub fn requirements(&self) -> Option<&[TableRequirement]> {
        self.requirements.as_deref()
    }

    pub fn create_branch(&mut self, name: &str, snapshot_id: Option<i64>) -> &mut Self {
        self.add(SnapshotOp::CreateBranch {
            name: name.into(),
            snapshot_id,
        })
    }

    pub fn create_tag(&mut self, name: &str, snapshot_id: i64) -> &mut Self {
        self.add(SnapshotOp::CreateTag {
            name: name.into(),
            snapshot_id,
        })
    }

    pub fn remove_branch(&mut self, name: &str) -> &mut Self {
        self.add(SnapshotOp::RemoveBranch { name: name.into() })
    }

    pub fn remove_tag(&mut self, name: &str) -> &mut Self {
        self.add(SnapshotOp::RemoveTag { name: name.into() })
    }

    pub fn rollback_to(&mut self, snapshot_id: i64) -> &mut Self {
        self.add(SnapshotOp::RollbackTo { snapshot_id })
    }

    pub fn set_current_snapshot(&mut self, snapshot_id: i64) -> &mut Self {
        self.add(SnapshotOp::SetCurrentSnapshot { snapshot_id })
    }

    pub fn cherry_pick(&mut self, snapshot_id: i64) -> &mut Self {
        self.add(SnapshotOp::CherryPick { snapshot_id })
    }

    fn record_requirements(&self, base: Option<&TableMetadata>) -> Vec<TableRequirement> {
        let names: BTreeSet<&str> = self.ops.iter().flat_map(|o| o.touched_refs()).collect();
        names
            .into_iter()
            .map(|name| TableRequirement::AssertRefSnapshotId {
                ref_name: name.to_string(),
                snapshot_id: base
                    .and_then(|b| b.snapshot_ref(name))
                    .map(|r| r.snapshot_id),
            })
            .collect()
    }
}

impl PendingChange for ManageSnapshots {
    fn apply(&mut self, io: &dyn FileIO, builder: &mut MetadataBuilder) -> Result<()> {
        let base = builder.base().map(|b| b.as_ref());
        match &self.requirements {
            None => self.requirements = Some(self.record_requirements(base)),
            Some(reqs) => check_requirements(reqs, base).map_err(|e| match e {
                // another writer moved a ref this change was made for
                Error::CommitFailed { message } => Error::validation_failed(message),
                other => other,
            })?,
        }
        let mut picks = self.cherry_picks.iter_mut();
        for op in &self.ops {
            match op {
                SnapshotOp::CherryPick { .. } => match picks.next() {
                    Some(p) => p.apply(io, builder)?,
                    None => return Err(Error::invalid_argument("cherry-pick without state")),
                },
                other => apply_ref_op(other, builder)?,
            }
        }
        Ok(())
    }

    fn clean_up(&mut self, io: &dyn FileIO, committed: bool) {
        for p in &mut self.cherry_picks {
            if let Some(producer) = &mut p.producer {
                producer.clean_up(io, committed);
            }
        }
    }
}
