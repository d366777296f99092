//! Manifests and manifest lists for Python, as pyarrow record batches (the conversion
//! itself is `icefloe::arrow::manifest`).

use arrow::pyarrow::{FromPyArrow, PyArrowType, ToPyArrow};
use arrow::record_batch::RecordBatch;
use icefloe::arrow::manifest::{
    batch_to_entries, batch_to_manifest_files, entries_schema, entries_to_batch,
    manifest_bytes_to_batch, manifest_files_schema, manifest_files_to_batch, with_decoded_bounds,
};
use icefloe::manifest::{
    read_key_value_metadata, read_manifest, read_manifest_list, write_manifest_list, Codec,
    ManifestContent, ManifestProjection, ManifestSource, ManifestWriter, ReadManifestOptions,
};
use icefloe::Error;
use pyo3::prelude::*;

use crate::error::IntoPyResult;
use crate::fileio::{io_for, PyFileIO};
use crate::metadata::PyPartitionSpec;
use crate::schema::PySchema;

fn to_py(py: Python<'_>, batch: RecordBatch) -> PyResult<Py<PyAny>> {
    Ok(batch.to_pyarrow(py)?.unbind())
}

/// The manifest list at `path` as one record batch, read through `io` (default: the
/// FileIO for the path's scheme).
#[pyfunction]
#[pyo3(signature = (path, *, io = None))]
fn read_manifest_list_batch(
    py: Python<'_>,
    path: &str,
    io: Option<&PyFileIO>,
) -> PyResult<Py<PyAny>> {
    let batch = py
        .detach(|| {
            let io = io_for(io, path)?;
            manifest_files_to_batch(&read_manifest_list(io.as_ref(), path)?)
        })
        .py(py)?;
    to_py(py, batch)
}

/// The entries of the manifest at `path` as one record batch; with `manifest_file` (a
/// one-row batch of a manifest list) inheritance is applied. `stats` and `bounds_for`
/// choose what to decode (see `ManifestProjection`); `decode_bounds` names columns (full
/// names in the manifest's schema, or field ids) whose bounds are added as typed struct
/// columns `lower_bound_values` and `upper_bound_values`. Read through `io` (default: the
/// FileIO for the path's scheme).
#[pyfunction]
#[pyo3(signature = (path, *, manifest_file = None, stats = true, bounds_for = None, decode_bounds = None, io = None))]
fn read_manifest_batch(
    py: Python<'_>,
    path: &str,
    manifest_file: Option<&Bound<'_, PyAny>>,
    stats: bool,
    bounds_for: Option<Vec<i32>>,
    decode_bounds: Option<Vec<String>>,
    io: Option<&PyFileIO>,
) -> PyResult<Py<PyAny>> {
    let row = match manifest_file {
        Some(obj) => {
            let files = batch_to_manifest_files(&RecordBatch::from_pyarrow_bound(obj)?).py(py)?;
            match <[_; 1]>::try_from(files) {
                Ok([mut f]) => {
                    // read the file the caller named, with the row's inheritance values
                    f.manifest_path = path.to_string();
                    Some(f)
                }
                Err(_) => {
                    return Err(crate::error::to_py(
                        py,
                        Error::invalid_argument(
                            "manifest_file must be exactly one manifest list row",
                        ),
                    ))
                }
            }
        }
        None => None,
    };
    let batch = py
        .detach(|| {
            let io = io_for(io, path)?;
            let options = ManifestProjection {
                stats,
                counts_for: Vec::new(),
                split_offsets: stats,
                bounds_for,
            };
            let Some(columns) = decode_bounds else {
                // straight into Arrow, no entry materialised
                let bytes = io.read(path)?;
                return manifest_bytes_to_batch(&bytes, &options, row.as_ref())
                    .map(|(_, batch)| batch)
                    .map_err(|e| e.in_file(path));
            };
            let manifest = match &row {
                Some(f) => read_manifest(
                    ManifestSource::file(io.as_ref(), &f.manifest_path),
                    &ReadManifestOptions::default()
                        .projection(&options)
                        .inherit_from(f),
                )?,
                None => read_manifest(
                    ManifestSource::file(io.as_ref(), path),
                    &ReadManifestOptions::default().projection(&options),
                )?,
            };
            let md = &manifest.metadata;
            let partition_type = md.partition_spec.partition_type(&md.schema)?;
            let batch = entries_to_batch(&manifest.entries, &partition_type)?;
            with_decoded_bounds(batch, &manifest.entries, &md.schema, &columns)
        })
        .py(py)?;
    to_py(py, batch)
}

/// The key-value metadata of a manifest (or manifest list) file, read through `io`
/// (default: the FileIO for the path's scheme).
#[pyfunction]
#[pyo3(signature = (path, *, io = None))]
fn manifest_metadata(
    py: Python<'_>,
    path: &str,
    io: Option<&PyFileIO>,
) -> PyResult<Vec<(String, String)>> {
    py.detach(|| read_key_value_metadata(io_for(io, path)?.as_ref(), path))
        .py(py)
}

/// The Arrow schema of manifest list rows.
#[pyfunction]
fn manifest_list_schema() -> PyArrowType<arrow::datatypes::Schema> {
    PyArrowType(manifest_files_schema())
}

/// The Arrow schema of manifest entries for files partitioned by `spec` over `schema`.
#[pyfunction]
fn manifest_entries_schema(
    py: Python<'_>,
    schema: &PySchema,
    spec: &PyPartitionSpec,
) -> PyResult<PyArrowType<arrow::datatypes::Schema>> {
    let partition_type = spec.inner.partition_type(&schema.inner).py(py)?;
    Ok(PyArrowType(entries_schema(&partition_type).py(py)?))
}

/// Writes a manifest of `entries` (a record batch with the columns `read_manifest` returns);
/// returns its manifest list row as a one-row batch.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (path, entries, schema, spec, *, format_version, content, snapshot_id, compression, io = None))]
fn write_manifest_batch(
    py: Python<'_>,
    path: &str,
    entries: &Bound<'_, PyAny>,
    schema: &PySchema,
    spec: &PyPartitionSpec,
    format_version: i32,
    content: i32,
    snapshot_id: i64,
    compression: &str,
    io: Option<&PyFileIO>,
) -> PyResult<Py<PyAny>> {
    let batch = RecordBatch::from_pyarrow_bound(entries)?;
    let row = py
        .detach(|| {
            let content = ManifestContent::from_id(content).ok_or_else(|| {
                Error::invalid_argument(format!("unknown manifest content {content}"))
            })?;
            let partition_type = spec.inner.partition_type(&schema.inner)?;
            let entries = batch_to_entries(&batch, &partition_type)?;
            let mut writer = ManifestWriter::new(
                format_version,
                content,
                &schema.inner,
                &spec.inner,
                snapshot_id,
                Codec::parse(compression)?,
            )?;
            for e in entries {
                writer.add_entry(e)?;
            }
            let written = writer.finish(io_for(io, path)?.as_ref(), path)?;
            manifest_files_to_batch(&[written])
        })
        .py(py)?;
    to_py(py, row)
}

/// Writes a manifest list of `manifests` (a record batch of manifest list rows); returns
/// the table's next row id for v3 (None before).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (path, manifests, *, format_version, snapshot_id, parent_snapshot_id, sequence_number, first_row_id, compression, io = None))]
fn write_manifest_list_batch(
    py: Python<'_>,
    path: &str,
    manifests: &Bound<'_, PyAny>,
    format_version: i32,
    snapshot_id: i64,
    parent_snapshot_id: Option<i64>,
    sequence_number: i64,
    first_row_id: Option<i64>,
    compression: &str,
    io: Option<&PyFileIO>,
) -> PyResult<Option<i64>> {
    let batch = RecordBatch::from_pyarrow_bound(manifests)?;
    py.detach(|| {
        let files = batch_to_manifest_files(&batch)?;
        let written = write_manifest_list(
            io_for(io, path)?.as_ref(),
            path,
            format_version,
            snapshot_id,
            parent_snapshot_id,
            sequence_number,
            first_row_id,
            &files,
            Codec::parse(compression)?,
        )?;
        Ok(written.next_row_id)
    })
    .py(py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_manifest_list_batch, m)?)?;
    m.add_function(wrap_pyfunction!(read_manifest_batch, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_list_schema, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_entries_schema, m)?)?;
    m.add_function(wrap_pyfunction!(write_manifest_batch, m)?)?;
    m.add_function(wrap_pyfunction!(write_manifest_list_batch, m)?)?;
    Ok(())
}
