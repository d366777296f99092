//! Scan planning for Python: the plan comes back as pyarrow record batches (the planning
//! is `icefloe::scan`, the Arrow form `icefloe::arrow::plan`).

use std::sync::Arc;

use arrow::pyarrow::ToPyArrow;
use icefloe::arrow::plan::{plan_to_batches, tasks_to_batches};
use icefloe::expr::Expression;
use icefloe::io::LocalFileIO;
use icefloe::scan::split::{plan_tasks, SplitOptions};
use icefloe::scan::{SnapshotSelection, TableScan};
use icefloe::Error;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::error::IntoPyResult;
use crate::expr::PyExpression;
use crate::metadata::PyTableMetadata;

/// The pyarrow schema, the list of record batches and the planning counts.
type PlannedScan = (Py<PyAny>, Py<PyAny>, Vec<(String, usize)>);

/// Plans a scan of `metadata`. The row filter is `filter` (an `Expression`) or `filter_json`
/// (its JSON form, literals read by the current schema's types), not both; at most one of
/// `snapshot_id`, `ref_name` and `as_of_ms` may be given.
/// With `packed`, files are split and bin-packed into groups (`group` column) using the
/// table's `read.split.*` properties unless `target_split_size` is given. Returns the
/// pyarrow schema, the record batches and the planning counts.
#[pyfunction]
#[pyo3(signature = (metadata, filter_json = None, filter = None, selected = None, snapshot_id = None, ref_name = None, as_of_ms = None, case_sensitive = true, packed = false, target_split_size = None, batch_rows = 65536, threads = None, appends_after = None, incremental = false))]
#[allow(clippy::too_many_arguments)]
fn plan_scan(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    filter_json: Option<String>,
    filter: Option<PyRef<'_, PyExpression>>,
    selected: Option<Vec<String>>,
    snapshot_id: Option<i64>,
    ref_name: Option<String>,
    as_of_ms: Option<i64>,
    case_sensitive: bool,
    packed: bool,
    target_split_size: Option<i64>,
    batch_rows: usize,
    threads: Option<usize>,
    appends_after: Option<i64>,
    incremental: bool,
) -> PyResult<PlannedScan> {
    let md = metadata.inner.clone();
    // the expression itself, not its JSON form: JSON loses the kind of some literals (a
    // decimal is written as a string, which a double column does not take)
    let filter_expr = filter.map(|f| f.inner.clone());
    let (schema, batches, counts) = py
        .detach(|| {
            let selection = match (snapshot_id, ref_name, as_of_ms) {
                (None, None, None) => SnapshotSelection::Current,
                (Some(id), None, None) => SnapshotSelection::SnapshotId(id),
                (None, Some(name), None) => SnapshotSelection::Ref(name),
                (None, None, Some(ts)) => SnapshotSelection::AsOfTimestamp(ts),
                _ => {
                    return Err(Error::invalid_argument(
                        "give at most one of snapshot_id, ref and as_of",
                    ))
                }
            };
            let schema = md.current_schema();
            let filter = match (filter_expr, &filter_json) {
                (Some(_), Some(_)) => {
                    return Err(Error::invalid_argument(
                        "give the filter as an expression or as JSON, not both",
                    ))
                }
                (Some(expr), None) => expr,
                (None, None) => Expression::True,
                (None, Some(text)) => {
                    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
                        Error::invalid_argument(format!("the filter is not valid JSON: {e}"))
                    })?;
                    Expression::from_json(&value, schema)?
                }
            };
            let mut scan = TableScan::new(md.clone(), Arc::new(LocalFileIO))
                .filter(filter)
                .case_sensitive(case_sensitive)
                .snapshot(selection);
            if let Some(cols) = selected {
                scan = scan.select(cols);
            }
            if let Some(n) = threads {
                scan = scan.threads(n);
            }
            if incremental {
                scan = scan.appends_after(appends_after);
            }
            let (plan, schema, batches) = if packed {
                let plan = scan.plan_files()?;
                let mut options = SplitOptions::from_table(&md)?;
                if let Some(size) = target_split_size {
                    options.target_size = size;
                }
                let groups = plan_tasks(plan.tasks.clone(), &options)?;
                let rows: Vec<_> = groups
                    .iter()
                    .enumerate()
                    .flat_map(|(g, c)| {
                        let g = i32::try_from(g).unwrap_or(i32::MAX);
                        c.tasks.iter().map(move |t| (Some(g), t))
                    })
                    .collect();
                let (schema, batches) = tasks_to_batches(&plan, &rows, batch_rows)?;
                (plan, schema, batches)
            } else {
                plan_to_batches(&scan, batch_rows)?
            };
            let m = &plan.metrics;
            let counts = vec![
                ("total_data_manifests".to_string(), m.total_data_manifests),
                (
                    "scanned_data_manifests".to_string(),
                    m.scanned_data_manifests,
                ),
                (
                    "skipped_data_manifests".to_string(),
                    m.skipped_data_manifests,
                ),
                (
                    "total_delete_manifests".to_string(),
                    m.total_delete_manifests,
                ),
                (
                    "scanned_delete_manifests".to_string(),
                    m.scanned_delete_manifests,
                ),
                (
                    "skipped_delete_manifests".to_string(),
                    m.skipped_delete_manifests,
                ),
                ("result_data_files".to_string(), m.result_data_files),
                ("skipped_data_files".to_string(), m.skipped_data_files),
                ("result_delete_files".to_string(), m.result_delete_files),
                ("skipped_delete_files".to_string(), m.skipped_delete_files),
            ];
            Ok((schema, batches, counts))
        })
        .py(py)?;
    let py_schema = schema.as_ref().to_pyarrow(py)?.unbind();
    let list = PyList::empty(py);
    for b in batches {
        list.append(b.to_pyarrow(py)?)?;
    }
    Ok((py_schema, list.into_any().unbind(), counts))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(plan_scan, m)?)?;
    Ok(())
}
