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
    InclusiveMetricsEvaluator, StrictMetricsEvaluator,
};
use crate::manifest::DataFile;
use crate::spec::table_metadata::TableMetadata;

struct SpecFilters {
    inclusive: BoundExpression,
    strict: BoundExpression,
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
            let filters = SpecFilters {
                inclusive: inclusive_projection(&self.bound, spec)?.bind_struct(&ptype, true)?,
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
    io: &dyn crate::io::FileIO,
    md: &TableMetadata,
    snapshot: &crate::spec::snapshot::Snapshot,
    filter: &Expression,
) -> Result<bool> {
    use crate::manifest::v4::tree::live_entries;
    use crate::manifest::v4::V4Partitioning;
    use crate::manifest::ManifestContent;
    let partitioning = if md.format_version >= 4 {
        V4Partitioning::for_table(md)?
    } else {
        V4Partitioning::none()
    };
    let mut rows = RowFilter::new(md, filter)?;
    for (content, spec_id, e) in live_entries(io, &partitioning, snapshot)? {
        if content == ManifestContent::Data
            && rows.decide(md, spec_id, &e.data_file)? == Decision::Partial
        {
            return Ok(false);
        }
    }
    Ok(true)
}
