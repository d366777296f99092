//! Deleting files by a row filter, as Java's `ManifestFilterManager` with a delete
//! expression: a file is removed when all its rows must match (strict projection on its
//! partition, or the strict metrics evaluator); a data file some but not all of whose rows
//! may match is an error (its rows would have to be deleted by position); such a delete
//! file is kept.

use std::collections::HashMap;

use super::{current_schema, manifest_spec};
use crate::error::{Error, Result};
use crate::expr::{
    evaluate_tuple, inclusive_projection, strict_projection, BoundExpression, Expression,
    InclusiveMetricsEvaluator, ManifestEvaluator, StrictMetricsEvaluator,
};
use crate::manifest::DataFile;
use crate::spec::table_metadata::TableMetadata;

struct SpecFilters {
    inclusive: BoundExpression,
    strict: BoundExpression,
    /// `inclusive` on a manifest's (or v4 leaf's) partition field summaries.
    manifests: ManifestEvaluator,
}

/// A row filter bound to a table, with its projections per partition spec.
pub(super) struct RowFilter {
    text: String,
    bound: BoundExpression,
    inclusive_metrics: InclusiveMetricsEvaluator,
    strict_metrics: StrictMetricsEvaluator,
    specs: HashMap<i32, SpecFilters>,
}

/// What a row filter decides for one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Decision {
    /// No row can match: the file stays.
    Keep,
    /// Every row matches: the file is removed.
    Remove,
    /// Some rows may match, some may not.
    Partial,
}

impl RowFilter {
    pub(super) fn new(md: &TableMetadata, filter: &Expression) -> Result<RowFilter> {
        let schema = current_schema(md)?;
        let bound = filter.bind(schema, true)?;
        Ok(RowFilter {
            text: filter.to_string(),
            inclusive_metrics: InclusiveMetricsEvaluator::new(bound.clone()),
            strict_metrics: StrictMetricsEvaluator::new(bound.clone()),
            bound,
            specs: HashMap::new(),
        })
    }

    pub(super) fn text(&self) -> &str {
        &self.text
    }

    fn spec(&mut self, md: &TableMetadata, spec_id: i32) -> Result<&SpecFilters> {
        if !self.specs.contains_key(&spec_id) {
            let spec = manifest_spec(md, spec_id)?;
            let schema = current_schema(md)?;
            let ptype = spec.partition_type(schema)?;
            let inclusive = inclusive_projection(&self.bound, spec)?.bind_struct(&ptype, true)?;
            let filters = SpecFilters {
                manifests: ManifestEvaluator::new(inclusive.clone()),
                inclusive,
                strict: strict_projection(&self.bound, spec)?.bind_struct(&ptype, true)?,
            };
            self.specs.insert(spec_id, filters);
        }
        self.specs.get(&spec_id).ok_or_else(|| {
            Error::invalid_argument(format!("no filters for partition spec {spec_id}"))
        })
    }

    /// Java's `rowsMightMatch` / `rowsMustMatch` for `file` of spec `spec_id`.
    pub(super) fn decide(
        &mut self,
        md: &TableMetadata,
        spec_id: i32,
        file: &DataFile,
    ) -> Result<Decision> {
        let (might_partition, must_partition) = {
            let s = self.spec(md, spec_id)?;
            (
                evaluate_tuple(&s.inclusive, &file.partition)?,
                evaluate_tuple(&s.strict, &file.partition)?,
            )
        };
        if !(might_partition && self.inclusive_metrics.eval(file)?) {
            return Ok(Decision::Keep);
        }
        if must_partition || self.strict_metrics.eval(file)? {
            Ok(Decision::Remove)
        } else {
            Ok(Decision::Partial)
        }
    }

    /// Whether a v4 leaf may hold a file with a matching row: the planner's leaf test
    /// (its partition summaries, then the aggregate metrics on its root entry).
    pub(super) fn leaf_may_match(
        &mut self,
        md: &TableMetadata,
        leaf: &crate::manifest::v4::TrackedFile,
    ) -> Result<bool> {
        // a clone (a small expression tree), as `spec` borrows the whole filter
        let manifests = self.spec(md, leaf.spec_id.unwrap_or(0))?.manifests.clone();
        crate::manifest::v4::tree::leaf_may_match(&manifests, Some(&self.inclusive_metrics), leaf)
    }

    /// Java's `validateAddedFilesMatchOverwriteFilter` test for an added file: its rows
    /// all match.
    pub(super) fn all_rows_match(
        &mut self,
        md: &TableMetadata,
        spec_id: i32,
        file: &DataFile,
    ) -> Result<bool> {
        let (inclusive, strict) = {
            let s = self.spec(md, spec_id)?;
            (
                evaluate_tuple(&s.inclusive, &file.partition)?,
                evaluate_tuple(&s.strict, &file.partition)?,
            )
        };
        Ok(inclusive && (strict || self.strict_metrics.eval(file)?))
    }
}

/// Whether deleting the rows of `snapshot` that match `filter` only removes whole data
/// files: every live data file either cannot hold a matching row or must hold nothing but
/// matching rows, by its partition (strict projection) or its column metrics (Java's
/// `SparkTable.canDeleteUsingMetadata`, which lets Spark's `DELETE FROM` skip the rows).
pub fn deletes_whole_files(
    io: std::sync::Arc<dyn crate::io::FileIO>,
    md: std::sync::Arc<TableMetadata>,
    snapshot_id: i64,
    filter: &Expression,
) -> Result<bool> {
    use crate::scan::{SnapshotSelection, TableScan};
    let mut rows = RowFilter::new(&md, filter)?;
    // Java plans the scan with the filter (manifests, v4 leaves and files pruned by their
    // summaries and metrics) and tests only the files it keeps: a file that cannot hold
    // a matching row stays whatever the rest decide
    let plan = TableScan::new(std::sync::Arc::clone(&md), io)
        .snapshot(SnapshotSelection::SnapshotId(snapshot_id))
        .case_sensitive(true)
        .filter(filter.clone())
        .with_stats_for(rows.bound.field_ids())
        .plan_files()?;
    for task in &plan.tasks {
        if rows.decide(&md, task.file.spec_id, &task.file.file)? == Decision::Partial {
            return Ok(false);
        }
    }
    Ok(true)
}
