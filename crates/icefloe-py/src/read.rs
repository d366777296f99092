//! The executor-side reader for Python (`icefloe.executor.read`): a plan (a pyarrow
//! table of plan rows, or a task group payload) read by `icefloe::read` into pyarrow
//! record batches, one per `next`, the GIL released while files are read and decoded.

use std::sync::{Arc, Mutex};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow::ffi_stream::ArrowArrayStreamReader;
use arrow::pyarrow::{FromPyArrow, PyArrowType, ToPyArrow};
use icefloe::read::{self, PlanReader, ReadOptions};
use icefloe::Error;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error::IntoPyResult;
use crate::fileio::PyFileIO;

/// The batches of a plan's tasks, in the plan's order (an iterator of pyarrow record
/// batches). Dropping it stops the reading threads.
#[pyclass(frozen, module = "icefloe._native", name = "PlanReader")]
pub struct PyPlanReader {
    inner: Mutex<Option<PlanReader>>,
    schema: SchemaRef,
}

#[pymethods]
impl PyPlanReader {
    /// The schema of the batches.
    #[getter]
    fn schema(&self) -> PyArrowType<arrow::datatypes::Schema> {
        PyArrowType(self.schema.as_ref().clone())
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let next = py
            .detach(|| -> icefloe::Result<Option<RecordBatch>> {
                let mut guard = self
                    .inner
                    .lock()
                    .map_err(|_| Error::invalid_argument("the plan reader is poisoned"))?;
                match guard.as_mut() {
                    Some(reader) => {
                        let out = reader.next_batch();
                        if !matches!(out, Ok(Some(_))) {
                            *guard = None;
                        }
                        out
                    }
                    None => Ok(None),
                }
            })
            .py(py)?;
        next.map(|b| b.to_pyarrow(py).map(Bound::unbind))
            .transpose()
    }

    /// Stops reading (the threads end at their next batch).
    fn close(&self) {
        if let Ok(mut guard) = self.inner.lock() {
            *guard = None;
        }
    }
}

fn options(
    metadata_columns: Vec<String>,
    batch_size: usize,
    concurrency: usize,
    residuals_json: Option<&str>,
) -> PyResult<ReadOptions> {
    let residuals = match residuals_json {
        Some(text) => match serde_json::from_str(text) {
            Ok(serde_json::Value::Array(a)) => Some(a),
            _ => {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "residuals_json is not a JSON array",
                ))
            }
        },
        None => None,
    };
    Ok(ReadOptions {
        batch_size,
        metadata_columns,
        concurrency,
        residuals,
    })
}

/// Reads a plan: `plan` is a pyarrow Table (or anything with `__arrow_c_stream__`) of
/// plan rows with the plan's schema metadata, or the bytes of a task group payload.
/// `io` reaches the data and delete files. `residuals_json`: the residuals the rows
/// index, when not in the schema metadata (a streamed plan).
#[pyfunction]
#[pyo3(signature = (plan, *, io, metadata_columns = Vec::new(), batch_size = read::DEFAULT_BATCH_SIZE, concurrency = 0, residuals_json = None))]
fn read_plan(
    py: Python<'_>,
    plan: &Bound<'_, PyAny>,
    io: &PyFileIO,
    metadata_columns: Vec<String>,
    batch_size: usize,
    concurrency: usize,
    residuals_json: Option<&str>,
) -> PyResult<PyPlanReader> {
    let options = options(metadata_columns, batch_size, concurrency, residuals_json)?;
    let io = Arc::clone(&io.inner);
    let reader = if let Ok(bytes) = plan.cast::<PyBytes>() {
        let payload = bytes.as_bytes().to_vec();
        py.detach(|| read::read_task_group(&payload, io, options))
            .py(py)?
    } else {
        let stream = ArrowArrayStreamReader::from_pyarrow_bound(plan)?;
        let schema = arrow::record_batch::RecordBatchReader::schema(&stream);
        let mut batches = stream
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        if batches.is_empty() {
            batches.push(RecordBatch::new_empty(schema));
        }
        py.detach(|| read::read_plan(batches, io, options)).py(py)?
    };
    let schema = arrow::record_batch::RecordBatchReader::schema(&reader);
    Ok(PyPlanReader {
        inner: Mutex::new(Some(reader)),
        schema,
    })
}

/// The schema of the batches `read_plan` yields for a plan of this schema.
#[pyfunction]
#[pyo3(signature = (plan_schema, metadata_columns = Vec::new()))]
fn read_output_schema(
    py: Python<'_>,
    plan_schema: PyArrowType<arrow::datatypes::Schema>,
    metadata_columns: Vec<String>,
) -> PyResult<PyArrowType<arrow::datatypes::Schema>> {
    let options = options(metadata_columns, read::DEFAULT_BATCH_SIZE, 0, None)?;
    let schema = read::output_schema(&Arc::new(plan_schema.0), &options).py(py)?;
    Ok(PyArrowType(schema.as_ref().clone()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPlanReader>()?;
    m.add_function(wrap_pyfunction!(read_plan, m)?)?;
    m.add_function(wrap_pyfunction!(read_output_schema, m)?)?;
    Ok(())
}
