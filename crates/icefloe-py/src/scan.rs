//! Scan planning for Python: the plan comes back as pyarrow record batches (the planning
//! is `icefloe::scan`, the Arrow form `icefloe::scan::plan_batches`).

use std::sync::{Arc, Mutex};

use arrow::pyarrow::ToPyArrow;
use icefloe::expr::Expression;
use icefloe::io::FileIO;
use icefloe::scan::plan_batches::{plan_stream, plan_to_batches, tasks_to_batches, PlanStream};
use icefloe::scan::split::SplitOptions;
use icefloe::scan::task_groups::{plan_packed, task_group_from_payload};
use icefloe::scan::{ScanMetrics, SnapshotSelection, TableScan};
use icefloe::spec::table_metadata::TableMetadata;
use icefloe::Error;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::error::IntoPyResult;
use crate::expr::PyExpression;
use crate::fileio::{io_for, PyFileIO};
use crate::metadata::PyTableMetadata;

/// The pyarrow schema, the list of record batches and the planning counts.
type PlannedScan = (Py<PyAny>, Py<PyAny>, Counts);

/// The planning counts by name.
type Counts = Vec<(String, usize)>;

/// What a scan plans: the row filter, the columns, the snapshot and how planning runs
/// (the settings of `icefloe::scan::TableScan`). Keyword-only. The row filter is `filter`
/// (an `Expression`) or `filter_json` (its JSON form, literals read by the current schema's
/// types), not both; at most one of `snapshot_id`, `ref_name` and `as_of_ms` may be given.
/// With `incremental`, only the files appended after `appends_after` (`None`: from the
/// oldest ancestor) are planned.
#[pyclass(frozen, module = "icefloe._native", name = "ScanOptions")]
#[derive(Clone)]
pub struct PyScanOptions {
    filter_json: Option<String>,
    filter: Option<Expression>,
    selected: Option<Vec<String>>,
    snapshot_id: Option<i64>,
    ref_name: Option<String>,
    as_of_ms: Option<i64>,
    case_sensitive: bool,
    threads: Option<usize>,
    appends_after: Option<i64>,
    incremental: bool,
    batch_rows: usize,
}

#[pymethods]
impl PyScanOptions {
    #[new]
    #[pyo3(signature = (*, filter_json = None, filter = None, selected = None, snapshot_id = None, ref_name = None, as_of_ms = None, case_sensitive = true, threads = None, appends_after = None, incremental = false, batch_rows = 65536))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        filter_json: Option<String>,
        filter: Option<PyRef<'_, PyExpression>>,
        selected: Option<Vec<String>>,
        snapshot_id: Option<i64>,
        ref_name: Option<String>,
        as_of_ms: Option<i64>,
        case_sensitive: bool,
        threads: Option<usize>,
        appends_after: Option<i64>,
        incremental: bool,
        batch_rows: usize,
    ) -> Self {
        PyScanOptions {
            filter_json,
            // the expression itself, not its JSON form: JSON loses the kind of some
            // literals (a decimal is written as a string, which a double column does not
            // take)
            filter: filter.map(|f| f.inner.clone()),
            selected,
            snapshot_id,
            ref_name,
            as_of_ms,
            case_sensitive,
            threads,
            appends_after,
            incremental,
            batch_rows,
        }
    }
}

/// The options of a planning call: `options`, or a `ScanOptions` built from the keyword
/// arguments (`plan_scan(md, snapshot_id=1)`), not both.
fn scan_options(
    py: Python<'_>,
    options: Option<PyRef<'_, PyScanOptions>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyScanOptions> {
    let kwargs = kwargs.filter(|k| !k.is_empty());
    match (options, kwargs) {
        (Some(o), None) => Ok((*o).clone()),
        (Some(_), Some(_)) => Err(crate::error::to_py(
            py,
            Error::invalid_argument(
                "give the scan options as ScanOptions or as keywords, not both",
            ),
        )),
        (None, kw) => py
            .get_type::<PyScanOptions>()
            .call((), kw)?
            .extract::<PyScanOptions>(),
    }
}

/// The FileIO planning reads manifests through: the table's (`io`), else the one for the
/// table location's scheme.
fn scan_io(io: Option<&PyFileIO>, md: &TableMetadata) -> icefloe::Result<Arc<dyn FileIO>> {
    io_for(io, &md.location)
}

/// Plans a scan of `metadata` through `io` (see `ScanOptions`; keyword arguments build
/// one). Returns the pyarrow schema, the record batches and the planning counts.
#[pyfunction]
#[pyo3(signature = (metadata, options = None, *, io = None, **kwargs))]
fn plan_scan(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    options: Option<PyRef<'_, PyScanOptions>>,
    io: Option<&PyFileIO>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PlannedScan> {
    let options = scan_options(py, options, kwargs)?;
    let md = metadata.inner.clone();
    let io = scan_io(io, &md).py(py)?;
    let batch_rows = options.batch_rows;
    let (plan, schema, batches) = py
        .detach(|| plan_to_batches(&options.build(&md, io)?, batch_rows))
        .py(py)?;
    batches_to_py(py, &schema, batches, counts_of(&plan.metrics))
}

/// As `plan_scan`, with files split and bin-packed into groups (`group` column) using the
/// table's `read.split.*` properties unless `target_split_size` is given.
#[pyfunction]
#[pyo3(signature = (metadata, options = None, *, io = None, target_split_size = None, **kwargs))]
fn plan_scan_packed(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    options: Option<PyRef<'_, PyScanOptions>>,
    io: Option<&PyFileIO>,
    target_split_size: Option<i64>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PlannedScan> {
    let options = scan_options(py, options, kwargs)?;
    let md = metadata.inner.clone();
    let io = scan_io(io, &md).py(py)?;
    let batch_rows = options.batch_rows;
    let (packed, batches) = py
        .detach(|| {
            let packed = plan_packed(
                &options.build(&md, io)?,
                &split_options(&md, target_split_size)?,
            )?;
            let batches = packed.to_batches(batch_rows)?;
            Ok::<_, Error>((packed, batches))
        })
        .py(py)?;
    batches_to_py(
        py,
        packed.schema(),
        batches,
        counts_of(&packed.plan.metrics),
    )
}

/// As `plan_scan_packed`, returning each group ready to ship to a reader: the list of
/// `(payload bytes, number of tasks)` (`icefloe::scan::task_groups::PackedPlan::payloads`)
/// and the planning counts.
#[pyfunction]
#[pyo3(signature = (metadata, options = None, *, io = None, target_split_size = None, **kwargs))]
fn plan_scan_payloads(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    options: Option<PyRef<'_, PyScanOptions>>,
    io: Option<&PyFileIO>,
    target_split_size: Option<i64>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<(Py<PyAny>, Counts)> {
    let options = scan_options(py, options, kwargs)?;
    let md = metadata.inner.clone();
    let io = scan_io(io, &md).py(py)?;
    let threads = options.threads;
    let (payloads, counts) = py
        .detach(|| {
            let packed = plan_packed(
                &options.build(&md, io)?,
                &split_options(&md, target_split_size)?,
            )?;
            let threads = threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            Ok::<_, Error>((packed.payloads(threads)?, counts_of(&packed.plan.metrics)))
        })
        .py(py)?;
    let list = PyList::empty(py);
    for (bytes, tasks) in payloads {
        list.append((PyBytes::new(py, &bytes), tasks))?;
    }
    Ok((list.into_any().unbind(), counts))
}

/// What a changelog task's rows are, aligned with the plan rows: `_change_type`,
/// `_change_ordinal`, `_commit_snapshot_id`.
type Changes = (Vec<&'static str>, Vec<i32>, Vec<i64>);

/// Plans the changelog (`icefloe::scan::TableScan::plan_changelog`, Java's incremental
/// changelog scan) of the snapshots after `appends_after` (exclusive) up to the selected
/// one: the plan's schema, batches (one row per whole data file, in `plan_scan`'s form)
/// and counts, and what each row's task is.
#[pyfunction]
#[pyo3(signature = (metadata, options = None, *, io = None, **kwargs))]
fn plan_changelog(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    options: Option<PyRef<'_, PyScanOptions>>,
    io: Option<&PyFileIO>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<(Py<PyAny>, Py<PyAny>, Counts, Changes)> {
    let options = scan_options(py, options, kwargs)?;
    let md = metadata.inner.clone();
    let io = scan_io(io, &md).py(py)?;
    let batch_rows = options.batch_rows;
    let from = options.appends_after;
    let (plan, schema, batches, changes) = py
        .detach(|| {
            let (plan, tasks) = options
                .build(&md, io)?
                .changes_after(from)
                .plan_changelog()?;
            let rows: Vec<_> = tasks.iter().map(|t| (None, &t.task)).collect();
            let (schema, batches) = tasks_to_batches(&plan, &rows, batch_rows)?;
            let changes: Changes = (
                tasks.iter().map(|t| t.operation.as_str()).collect(),
                tasks.iter().map(|t| t.change_ordinal).collect(),
                tasks.iter().map(|t| t.commit_snapshot_id).collect(),
            );
            Ok::<_, Error>((plan, schema, batches, changes))
        })
        .py(py)?;
    let (schema, batches, counts) = batches_to_py(py, &schema, batches, counts_of(&plan.metrics))?;
    Ok((schema, batches, counts, changes))
}

/// The table's split settings, with the target size overridden when given.
fn split_options(
    md: &TableMetadata,
    target_split_size: Option<i64>,
) -> icefloe::Result<SplitOptions> {
    let mut options = SplitOptions::from_table(md)?;
    if let Some(size) = target_split_size {
        options.target_size = size;
    }
    Ok(options)
}

fn batches_to_py(
    py: Python<'_>,
    schema: &Arc<arrow::datatypes::Schema>,
    batches: Vec<arrow::record_batch::RecordBatch>,
    counts: Counts,
) -> PyResult<PlannedScan> {
    let list = PyList::empty(py);
    for b in batches {
        list.append(b.to_pyarrow(py)?)?;
    }
    Ok((
        schema.as_ref().to_pyarrow(py)?.unbind(),
        list.into_any().unbind(),
        counts,
    ))
}

/// The Arrow IPC stream bytes of a task group payload (`plan_scan_payloads`); other bytes
/// are returned unchanged.
#[pyfunction]
fn task_group_ipc<'py>(py: Python<'py>, payload: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let ipc = py
        .detach(|| task_group_from_payload(payload).map(|b| b.into_owned()))
        .py(py)?;
    Ok(PyBytes::new(py, &ipc))
}

impl PyScanOptions {
    fn build(self, md: &Arc<TableMetadata>, io: Arc<dyn FileIO>) -> icefloe::Result<TableScan> {
        let selection = match (self.snapshot_id, self.ref_name, self.as_of_ms) {
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
        let filter = match (self.filter, &self.filter_json) {
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
        let mut scan = TableScan::new(md.clone(), io)
            .filter(filter)
            .case_sensitive(self.case_sensitive)
            .snapshot(selection);
        if let Some(cols) = self.selected {
            scan = scan.select(cols);
        }
        if let Some(n) = self.threads {
            scan = scan.threads(n);
        }
        if self.incremental {
            scan = scan.appends_after(self.appends_after);
        }
        Ok(scan)
    }
}

/// The planning counts by name.
fn counts_of(m: &ScanMetrics) -> Vec<(String, usize)> {
    [
        ("total_data_manifests", m.total_data_manifests),
        ("scanned_data_manifests", m.scanned_data_manifests),
        ("skipped_data_manifests", m.skipped_data_manifests),
        ("total_delete_manifests", m.total_delete_manifests),
        ("scanned_delete_manifests", m.scanned_delete_manifests),
        ("skipped_delete_manifests", m.skipped_delete_manifests),
        ("result_data_files", m.result_data_files),
        ("skipped_data_files", m.skipped_data_files),
        ("result_delete_files", m.result_delete_files),
        ("skipped_delete_files", m.skipped_delete_files),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// A scan being planned, read batch by batch (`icefloe.table.PlanBatches` wraps it).
#[pyclass(frozen, module = "icefloe._native", name = "PlanStream")]
pub struct PyPlanStream {
    /// `None` once closed.
    inner: Mutex<Option<PlanStream>>,
    schema: Arc<arrow::datatypes::Schema>,
}

#[pymethods]
impl PyPlanStream {
    /// The pyarrow schema of every batch.
    #[getter]
    fn schema(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.schema.as_ref().to_pyarrow(py)?.unbind())
    }

    /// The next pyarrow RecordBatch, or `None` at the end (or once closed). Waits for
    /// planning without holding the GIL.
    fn next_batch(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let batch = py
            .detach(|| {
                let mut guard = self
                    .inner
                    .lock()
                    .map_err(|_| Error::unsupported("the plan stream is poisoned"))?;
                match guard.as_mut() {
                    Some(stream) => stream.next_batch(),
                    None => Ok(None),
                }
            })
            .py(py)?;
        match batch {
            Some(b) => Ok(Some(b.to_pyarrow(py)?.unbind())),
            None => Ok(None),
        }
    }

    /// The residual filters (as JSON text of a list) that the batches returned so far
    /// refer to.
    fn residuals_json(&self) -> PyResult<String> {
        let guard = self
            .inner
            .lock()
            .map_err(|_| PyRuntimeError::new_err("the plan stream is poisoned"))?;
        Ok(match guard.as_ref() {
            Some(s) => serde_json::Value::Array(s.residuals().to_vec()).to_string(),
            None => "[]".to_string(),
        })
    }

    /// The planning counts once the last batch has been returned, else `None`.
    fn metrics(&self) -> PyResult<Option<Vec<(String, usize)>>> {
        let guard = self
            .inner
            .lock()
            .map_err(|_| PyRuntimeError::new_err("the plan stream is poisoned"))?;
        Ok(guard.as_ref().and_then(|s| s.metrics()).map(counts_of))
    }

    /// Stops planning (at the next manifest) and drops what is queued.
    fn close(&self) -> PyResult<()> {
        let mut guard = self
            .inner
            .lock()
            .map_err(|_| PyRuntimeError::new_err("the plan stream is poisoned"))?;
        *guard = None;
        Ok(())
    }
}

/// Starts planning a scan through `io` (see `plan_scan`) and returns a `PlanStream` once
/// the plan's schema is known, keeping at most `queue` manifests' batches waiting; errors
/// found before any manifest is read are raised here.
#[pyfunction]
#[pyo3(signature = (metadata, options = None, *, io = None, queue = 4, **kwargs))]
fn plan_scan_stream(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    options: Option<PyRef<'_, PyScanOptions>>,
    io: Option<&PyFileIO>,
    queue: usize,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyPlanStream> {
    let options = scan_options(py, options, kwargs)?;
    let md = metadata.inner.clone();
    let io = scan_io(io, &md).py(py)?;
    let batch_rows = options.batch_rows;
    let stream = py
        .detach(|| plan_stream(options.build(&md, io)?, batch_rows, queue))
        .py(py)?;
    Ok(PyPlanStream {
        schema: stream.schema().clone(),
        inner: Mutex::new(Some(stream)),
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPlanStream>()?;
    m.add_class::<PyScanOptions>()?;
    m.add_function(wrap_pyfunction!(plan_scan_packed, m)?)?;
    m.add_function(wrap_pyfunction!(plan_scan_payloads, m)?)?;
    m.add_function(wrap_pyfunction!(plan_scan_stream, m)?)?;
    m.add_function(wrap_pyfunction!(plan_scan, m)?)?;
    m.add_function(wrap_pyfunction!(plan_changelog, m)?)?;
    m.add_function(wrap_pyfunction!(task_group_ipc, m)?)?;
    Ok(())
}
