//! Aggregates answered from a plan's file metadata instead of its rows: `COUNT(*)`,
//! `COUNT(col)`, `MIN(col)` and `MAX(col)` without grouping, as Java's Spark connector
//! pushes them down (`SparkScanBuilder.pushAggregation` with the API's `AggregateEvaluator`
//! and its `CountStar`, `CountNonNull`, `MinAggregate` and `MaxAggregate`).
//!
//! Java's rules, all of which must hold, else the rows are read:
//! - no task has delete files (the record counts and bounds still include deleted rows);
//! - the metrics mode of every aggregated column keeps what the aggregate needs (not
//!   `none`; not `counts` for MIN/MAX) and MIN/MAX are not over strings or binary, whose
//!   bounds may be truncated whatever the mode is today;
//! - every file has the metric (a value count and a null count for COUNT; a bound, or only
//!   nulls, and no NaN for MIN/MAX).
//!
//! A row filter is allowed when it selects whole files: every task's residual is `true`
//! and no task's partition has a null (whose residual is not exact, see
//! `read::filter::task_row_filter`). Java pushes an aggregate only when Spark has no filter
//! left to apply after the scan, which for Java means predicates that select whole
//! partitions; the same condition, checked on the plan.

use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::expr::BoundExpression;
use crate::scan::ScanPlan;
use crate::spec::schema::Schema;
use crate::spec::table_metadata::TableMetadata;
use crate::spec::{Literal, PrimitiveType, Type};
use crate::write::metrics_config::{MetricsConfig, MetricsMode};

/// One aggregate over the scan's rows; the column by field id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataAggregate {
    /// `COUNT(*)`: the rows.
    CountStar,
    /// `COUNT(col)`: the rows where the column is not null.
    Count(i32),
    Min(i32),
    Max(i32),
}

impl MetadataAggregate {
    fn field_id(&self) -> Option<i32> {
        match self {
            MetadataAggregate::CountStar => None,
            MetadataAggregate::Count(id)
            | MetadataAggregate::Min(id)
            | MetadataAggregate::Max(id) => Some(*id),
        }
    }
}

/// The value of one aggregate: a count, or a bound (`None` when every value is null or
/// there are no rows).
#[derive(Debug, Clone, PartialEq)]
pub enum AggregateValue {
    Count(i64),
    Value(Option<Literal>),
}

/// Whether MIN/MAX of a column of this type may come from its bounds: Java refuses strings
/// and binary (bounds may be truncated); non-primitive columns have no bounds; the rest are
/// the types whose bound form the connector hands to Spark.
fn bounds_usable(ty: &Type) -> bool {
    use PrimitiveType as P;
    matches!(
        ty,
        Type::Primitive(
            P::Boolean
                | P::Int
                | P::Long
                | P::Float
                | P::Double
                | P::Decimal { .. }
                | P::Date
                | P::Timestamp
                | P::Timestamptz
        )
    )
}

fn lookup<T: Copy>(map: Option<&Vec<(i32, T)>>, id: i32) -> Option<T> {
    map?.iter().find(|(k, _)| *k == id).map(|(_, v)| *v)
}

impl ScanPlan {
    /// Whether the plan's row filter is decided by the files alone: no filter, or every
    /// task's residual `true` and no null in any task's partition.
    pub fn filter_selects_whole_files(&self) -> bool {
        if matches!(self.filter.as_ref(), BoundExpression::True) {
            return true;
        }
        self.tasks.iter().all(|t| {
            matches!(t.residual.as_ref(), BoundExpression::True)
                && t.file.file.partition.iter().all(Option::is_some)
        })
    }

    /// The aggregates' values from the planned files' metadata (see the module's rules),
    /// or `None` when the rows must be read. `table` gives the metrics modes (its current
    /// properties, schema and sort order, as Java's `MetricsConfig.forTable`); the plan must
    /// have been made with the stats of the aggregated columns
    /// (`TableScan::with_stats_for`).
    pub fn aggregates_from_metadata(
        &self,
        aggregates: &[MetadataAggregate],
        table: &TableMetadata,
    ) -> Result<Option<Vec<AggregateValue>>> {
        if !self.filter_selects_whole_files() || self.tasks.iter().any(|t| !t.deletes.is_empty()) {
            return Ok(None);
        }
        let config = MetricsConfig::from_properties(
            &table.properties,
            table.current_schema(),
            table.default_sort_order(),
        );
        for aggregate in aggregates {
            let Some(id) = aggregate.field_id() else {
                continue;
            };
            if !self.metrics_allow(*aggregate, id, &config)? {
                return Ok(None);
            }
        }
        let mut out = Vec::with_capacity(aggregates.len());
        for aggregate in aggregates {
            match self.aggregate(*aggregate)? {
                Some(v) => out.push(v),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    fn metrics_allow(
        &self,
        aggregate: MetadataAggregate,
        id: i32,
        config: &MetricsConfig,
    ) -> Result<bool> {
        let Some(field) = self.schema.field_by_id(id) else {
            return Err(Error::invalid_argument(format!(
                "aggregate over field id {id}, which is not in the scan's schema"
            )));
        };
        let name = self.schema.name_by_id(id).unwrap_or(&field.name);
        let mode = config.column_mode(name);
        let min_max = matches!(
            aggregate,
            MetadataAggregate::Min(_) | MetadataAggregate::Max(_)
        );
        Ok(match mode {
            MetricsMode::None => false,
            MetricsMode::Counts => !min_max,
            MetricsMode::Truncate(_) | MetricsMode::Full => {
                !min_max || bounds_usable(&field.field_type)
            }
        })
    }

    /// One aggregate over every task's file; `None` when a file lacks the metric.
    fn aggregate(&self, aggregate: MetadataAggregate) -> Result<Option<AggregateValue>> {
        let id = match aggregate {
            MetadataAggregate::CountStar => {
                let mut total: i64 = 0;
                for t in &self.tasks {
                    match total.checked_add(t.file.file.record_count) {
                        Some(n) => total = n,
                        None => return Ok(None),
                    }
                }
                return Ok(Some(AggregateValue::Count(total)));
            }
            MetadataAggregate::Count(id) => {
                let mut total: i64 = 0;
                for t in &self.tasks {
                    let f = &t.file.file;
                    let values = lookup(f.value_counts.as_ref(), id);
                    let nulls = lookup(f.null_value_counts.as_ref(), id);
                    let (Some(values), Some(nulls)) = (values, nulls) else {
                        return Ok(None);
                    };
                    match total.checked_add(values - nulls) {
                        Some(n) => total = n,
                        None => return Ok(None),
                    }
                }
                return Ok(Some(AggregateValue::Count(total)));
            }
            MetadataAggregate::Min(id) | MetadataAggregate::Max(id) => id,
        };
        let want_max = matches!(aggregate, MetadataAggregate::Max(_));
        let ty = match self.schema.field_by_id(id).map(|f| &f.field_type) {
            Some(Type::Primitive(p)) => p.clone(),
            _ => return Ok(None),
        };
        let mut best: Option<Literal> = None;
        for t in &self.tasks {
            let f = &t.file.file;
            if lookup(f.nan_value_counts.as_ref(), id).is_some_and(|n| n > 0) {
                return Ok(None);
            }
            let bounds = if want_max {
                f.upper_bounds.as_ref()
            } else {
                f.lower_bounds.as_ref()
            };
            let bound = bounds.and_then(|b| b.iter().find(|(k, _)| *k == id));
            let Some((_, bytes)) = bound else {
                // a file of nulls only has no bound and changes nothing
                let values = lookup(f.value_counts.as_ref(), id);
                let nulls = lookup(f.null_value_counts.as_ref(), id);
                match (values, nulls) {
                    (Some(v), Some(n)) if v > 0 && v == n => continue,
                    _ => return Ok(None),
                }
            };
            let value = Literal::from_bytes(bytes, &ty).map_err(|e| {
                Error::invalid_metadata(
                    if want_max {
                        "upper_bounds"
                    } else {
                        "lower_bounds"
                    },
                    format!("{}: field {id}: {e}", f.file_path),
                )
            })?;
            let better = match &best {
                None => true,
                Some(b) => match value.compare(b) {
                    Some(Ordering::Greater) => want_max,
                    Some(Ordering::Less) => !want_max,
                    Some(Ordering::Equal) => false,
                    None => return Ok(None),
                },
            };
            if better {
                best = Some(value);
            }
        }
        Ok(Some(AggregateValue::Value(best)))
    }
}

/// The read schema of a scan resolved for an aggregate's column name: its field id.
pub fn aggregate_field_id(schema: &Schema, name: &str, case_sensitive: bool) -> Result<i32> {
    schema
        .id_by_name(name, case_sensitive)
        .ok_or_else(|| Error::invalid_argument(format!("no column '{name}' to aggregate")))
}
