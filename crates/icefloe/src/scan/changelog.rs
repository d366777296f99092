//! Changelog planning, as Java 1.11's `BaseIncrementalChangelogScan` (what Spark's
//! `changes` metadata table and `create_changelog_view` read): the snapshots after the
//! start (exclusive) up to the end (inclusive), oldest first, without `replace`
//! snapshots (compaction changes no rows); the data manifests those snapshots added; and
//! their entries that those snapshots added (an `INSERT` of every row of the file) or
//! deleted (a `DELETE` of every row). Each task carries its snapshot's position in that
//! order (`change_ordinal`) and id (`commit_snapshot_id`).
//!
//! Java refuses any snapshot in the range that has delete manifests (live position
//! deletes, DVs or equality deletes, also ones committed earlier): "Delete files are
//! currently not supported in changelog scans". So does this planner, with the same
//! message, rather than give a changelog that misses the deleted rows. Deleted data files
//! are read whole, without deletes, as Java reads them.

use std::collections::HashSet;
use std::sync::Arc;

use super::{promote_partition, PlanContext, ResidualCache, ScanPlan, TableScan};
use crate::error::{Error, Result};
use crate::expr::evaluate_tuple;
use crate::manifest::{
    visit_manifest, ManifestContent, ManifestFile, ManifestProjection, ManifestSource,
    ManifestStatus, ReadManifestOptions,
};
use crate::scan::{FileScanTask, ScanFile};
use crate::spec::snapshot::{Operation as SnapshotOperation, Snapshot};

/// Java's message for a changelog over snapshots with delete files.
pub const DELETES_UNSUPPORTED: &str = "Delete files are currently not supported in changelog scans";

/// What a changelog task's rows are (Java's `ChangelogOperation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangelogOperation {
    /// Every row of a data file the snapshot added.
    Insert,
    /// Every row of a data file the snapshot removed.
    Delete,
}

impl ChangelogOperation {
    /// The `_change_type` value.
    pub fn as_str(&self) -> &'static str {
        match self {
            ChangelogOperation::Insert => "INSERT",
            ChangelogOperation::Delete => "DELETE",
        }
    }
}

/// One task of a changelog: a whole data file and what its rows are.
#[derive(Debug, Clone)]
pub struct ChangelogScanTask {
    pub operation: ChangelogOperation,
    /// The position of the commit among the changelog's snapshots, oldest first, from 0.
    pub change_ordinal: i32,
    pub commit_snapshot_id: i64,
    pub task: FileScanTask,
}

impl TableScan {
    /// Makes this a changelog scan of the snapshots after `from_exclusive` (or from the
    /// first when `None`) up to the selected snapshot; plan it with
    /// [`TableScan::plan_changelog`]. The start must be the parent of the end or of one of
    /// its ancestors, as for incremental append scans.
    pub fn changes_after(self, from_exclusive: Option<i64>) -> TableScan {
        self.appends_after(from_exclusive)
    }

    /// Plans the changelog (see the module documentation). The plan's schema is the
    /// table's current schema.
    pub fn plan_changelog(&self) -> Result<(ScanPlan, Vec<ChangelogScanTask>)> {
        let md = &self.metadata;
        md.check_supported("plan a changelog of", self.metadata_location.as_deref())?;
        if md.format_version >= 4 {
            return Err(Error::unsupported(format!(
                "{}: changelog scans of format-version 4 tables are not built yet",
                self.metadata_location.as_deref().unwrap_or(&md.location)
            )));
        }
        let end = self.resolve_snapshot()?;
        let schema = Arc::new(self.current_schema()?.clone());
        let projected_schema = Arc::new(match &self.selected {
            Some(cols) => schema.select(cols, self.case_sensitive)?,
            None => (*schema).clone(),
        });
        let filter = Arc::new(self.filter.bind(&schema, self.case_sensitive)?);
        let mut plan = ScanPlan::without_tasks(
            md,
            end.map(|s| s.snapshot_id),
            schema.clone(),
            projected_schema,
            filter.clone(),
            &schema,
        )?;
        let specs = plan.specs.clone();
        let Some(end) = end else {
            if self.from_snapshot_exclusive.is_some() {
                return Err(Error::invalid_argument(
                    "end snapshot is not set and the table has no current snapshot",
                ));
            }
            return Ok((plan, Vec::new()));
        };

        // oldest first: the order gives the change ordinals
        let mut snapshots: Vec<&Snapshot> = self
            .ancestors_after(end)?
            .into_iter()
            .filter(|s| s.operation() != Some(SnapshotOperation::Replace))
            .collect();
        snapshots.reverse();
        let ordinals: std::collections::HashMap<i64, i32> = snapshots
            .iter()
            .enumerate()
            .map(|(i, s)| (s.snapshot_id, i32::try_from(i).unwrap_or(i32::MAX)))
            .collect();
        let mut seen = HashSet::new();
        let mut manifests: Vec<ManifestFile> = Vec::new();
        for s in &snapshots {
            let listed = self.manifests_of(s)?;
            if listed.iter().any(|m| m.content == ManifestContent::Deletes) {
                return Err(Error::unsupported(format!(
                    "{DELETES_UNSUPPORTED} (snapshot {} has delete files)",
                    s.snapshot_id
                )));
            }
            for m in listed {
                if ordinals.contains_key(&m.added_snapshot_id)
                    && seen.insert(m.manifest_path.clone())
                {
                    manifests.push(m);
                }
            }
        }
        plan.metrics.total_data_manifests = manifests.len();

        let filter_entries = super::folded(&self.filter) != crate::expr::Expression::True;
        let ctx = PlanContext::new(
            md,
            &schema,
            &filter,
            &specs,
            self.case_sensitive,
            filter_entries,
        )?;
        let mut kept: Vec<&ManifestFile> = Vec::new();
        for m in &manifests {
            if ctx.spec(m.partition_spec_id)?.manifest_evaluator.eval(m)? {
                kept.push(m);
            } else {
                plan.metrics.skipped_data_manifests += 1;
            }
        }
        plan.metrics.scanned_data_manifests = kept.len();
        let mut stats_ids = filter.field_ids();
        stats_ids.sort_unstable();
        stats_ids.dedup();
        let projection = ManifestProjection::scan(stats_ids);
        let parts = self.parallel(kept.len(), |i| {
            let m = kept[i];
            let spec = ctx.spec(m.partition_spec_id)?;
            let bytes = self.io.read(&m.manifest_path)?;
            let mut residuals = ResidualCache::default();
            let mut tasks = Vec::new();
            let mut skipped = 0usize;
            visit_manifest(
                ManifestSource::Bytes(&bytes),
                &ReadManifestOptions::default()
                    .projection(&projection)
                    .inherit_from(m),
                |e| {
                    let operation = match e.status {
                        ManifestStatus::Added => ChangelogOperation::Insert,
                        ManifestStatus::Deleted => ChangelogOperation::Delete,
                        ManifestStatus::Existing => return Ok(()),
                    };
                    // only what the changelog's own snapshots did
                    let Some((snapshot_id, ordinal)) = e
                        .snapshot_id
                        .and_then(|id| ordinals.get(&id).map(|o| (id, *o)))
                    else {
                        return Ok(());
                    };
                    promote_partition(&mut e.data_file.partition, &spec.partition_type);
                    let keep = !ctx.filter_entries
                        || (evaluate_tuple(&spec.partition_filter, &e.data_file.partition)?
                            && ctx.metrics.eval(&e.data_file)?);
                    if !keep {
                        skipped += 1;
                        return Ok(());
                    }
                    let file = Arc::new(ScanFile {
                        tree_position: None,
                        spec_id: m.partition_spec_id,
                        data_sequence_number: e.sequence_number.unwrap_or(0),
                        file_sequence_number: e.file_sequence_number,
                        file: e.data_file.clone(),
                    });
                    let residual = residuals.get(spec, &file)?;
                    tasks.push(ChangelogScanTask {
                        operation,
                        change_ordinal: ordinal,
                        commit_snapshot_id: snapshot_id,
                        task: FileScanTask::whole_file(file, Vec::new(), residual),
                    });
                    Ok(())
                },
            )
            .map_err(|e| e.in_file(&m.manifest_path))?;
            Ok((tasks, skipped))
        })?;
        let mut out = Vec::new();
        for (tasks, skipped) in parts {
            plan.metrics.skipped_data_files += skipped;
            out.extend(tasks);
        }
        plan.metrics.result_data_files = out.len();
        Ok((plan, out))
    }
}
