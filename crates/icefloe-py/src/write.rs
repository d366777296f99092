//! Data-file writing helpers for Python (`icefloe.writer` does the Parquet encoding with
//! pyarrow): the Arrow schema with field ids, partitioning a batch, and a written file's
//! `data_file` row with its metrics (the logic is `icefloe::write`).

use arrow::array::{Array, StructArray, UInt32Array};
use arrow::pyarrow::{FromPyArrow, PyArrowType, ToPyArrow};
use arrow::record_batch::RecordBatch;
use icefloe::arrow::schema_to_arrow;
use icefloe::write::metrics::MetricsCollector;
use icefloe::write::metrics_config::MetricsConfig;
use icefloe::write::partition::partition_batch as partition_rows;
use icefloe::write::{data_file, data_files_to_batch, partition_from_struct, WrittenFile};
use icefloe::Error;
use pyo3::prelude::*;

use crate::error::IntoPyResult;
use crate::metadata::{PyPartitionSpec, PySortOrder};
use crate::schema::PySchema;

/// The Arrow schema data files of `schema` are written with (field ids in the
/// `PARQUET:field_id` metadata of every field).
#[pyfunction]
fn data_file_arrow_schema(
    py: Python<'_>,
    schema: &PySchema,
) -> PyResult<PyArrowType<arrow::datatypes::Schema>> {
    Ok(PyArrowType(schema_to_arrow(&schema.inner).py(py)?))
}

/// Groups the rows of `batch` (in the Arrow schema of `data_file_arrow_schema`) by
/// partition: returns a batch with one row per group (`partition` struct, `path`), the row
/// indices grouped (a uint32 array) and the group offsets into it.
#[pyfunction]
fn partition_batch(
    py: Python<'_>,
    batch: &Bound<'_, PyAny>,
    schema: &PySchema,
    spec: &PyPartitionSpec,
) -> PyResult<(Py<PyAny>, Py<PyAny>, Vec<usize>)> {
    let batch = RecordBatch::from_pyarrow_bound(batch)?;
    let (groups, rows, offsets) = py
        .detach(|| {
            let groups = partition_rows(&batch, &schema.inner, &spec.inner)?;
            let partition_type = spec.inner.partition_type(&schema.inner)?;
            let out = groups.to_batch(&partition_type)?;
            Ok::<_, Error>((out, UInt32Array::from(groups.rows), groups.offsets))
        })
        .py(py)?;
    Ok((
        groups.to_pyarrow(py)?.unbind(),
        rows.to_data().to_pyarrow(py)?.unbind(),
        offsets,
    ))
}

/// The `data_file` row (a one-row batch in the form of `manifest_entries_schema`, status
/// ADDED) of a Parquet file holding `batches`. `column_sizes` are the compressed sizes of
/// the file's columns in order, `partition` a one-row struct array of the partition tuple
/// (None when unpartitioned); metrics follow `properties` (`write.metadata.metrics.*`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (batches, schema, spec, *, properties, sort_order, path, file_size_in_bytes, column_sizes, split_offsets, partition, sort_order_id))]
fn data_file_batch(
    py: Python<'_>,
    batches: Vec<Bound<'_, PyAny>>,
    schema: &PySchema,
    spec: &PyPartitionSpec,
    properties: Vec<(String, String)>,
    sort_order: Option<&PySortOrder>,
    path: String,
    file_size_in_bytes: i64,
    column_sizes: Vec<i64>,
    split_offsets: Vec<i64>,
    partition: Option<&Bound<'_, PyAny>>,
    sort_order_id: Option<i32>,
) -> PyResult<Py<PyAny>> {
    let batches = batches
        .iter()
        .map(RecordBatch::from_pyarrow_bound)
        .collect::<PyResult<Vec<_>>>()?;
    let partition = match partition {
        Some(p) => Some(StructArray::from(
            arrow::array::ArrayData::from_pyarrow_bound(p)?,
        )),
        None => None,
    };
    let row = py
        .detach(|| {
            let schema = &schema.inner;
            let partition_type = spec.inner.partition_type(schema)?;
            let values = match &partition {
                Some(p) => partition_from_struct(p, 0, &partition_type)?,
                None if partition_type.fields.is_empty() => Vec::new(),
                None => {
                    return Err(Error::invalid_argument(
                        "a partitioned spec needs the file's partition",
                    ))
                }
            };
            let config = MetricsConfig::from_properties(
                &properties,
                Some(schema),
                sort_order.map(|o| &o.inner),
            );
            let mut collector = MetricsCollector::new(schema);
            for b in &batches {
                collector.update(schema, b).map_err(|e| e.in_file(&path))?;
            }
            let metrics = collector.finish(schema, &config)?;
            let leaf_ids: Vec<i32> = collector.leaves().iter().map(|l| l.field_id).collect();
            let measured = collector.measured_leaves(schema, &config);
            let written = WrittenFile {
                path: path.clone(),
                file_size_in_bytes,
                partition: values,
                column_sizes,
                split_offsets,
                sort_order_id,
            };
            let file = data_file(written, metrics, &leaf_ids, &measured)?;
            data_files_to_batch(vec![file], &partition_type)
        })
        .py(py)?;
    Ok(row.to_pyarrow(py)?.unbind())
}

/// Where a new data file named `file_name` goes in the partition at `partition_path` (empty
/// when unpartitioned): Java's location providers, including `write.object-storage.enabled`.
#[pyfunction]
#[pyo3(signature = (table_location, properties, partition_path, file_name, data_location=None))]
fn new_data_location(
    py: Python<'_>,
    table_location: &str,
    properties: Vec<(String, String)>,
    partition_path: &str,
    file_name: &str,
    data_location: Option<&str>,
) -> PyResult<String> {
    let provider =
        icefloe::write::location::LocationProvider::new(table_location, &properties, data_location)
            .py(py)?;
    Ok(provider.new_data_location(partition_path, file_name))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(new_data_location, m)?)?;
    m.add_function(wrap_pyfunction!(data_file_arrow_schema, m)?)?;
    m.add_function(wrap_pyfunction!(partition_batch, m)?)?;
    m.add_function(wrap_pyfunction!(data_file_batch, m)?)?;
    Ok(())
}
