//! The native side of `icefloe.deletes`: delete files for rows deleted by position.
//! Conversions only (see `icefloe::write::position_deletes`).

use std::collections::HashMap;
use std::sync::Arc;

use arrow::pyarrow::ToPyArrow;
use arrow::record_batch::RecordBatch;
use icefloe::arrow::manifest::entries_to_batch;
use icefloe::manifest::{DataFile, ManifestEntry};
use icefloe::puffin::DeletionVector;
use icefloe::spec::snapshot::Snapshot;
use icefloe::spec::table_metadata::TableMetadata;
use icefloe::write::position_deletes::{
    deletes_of, position_delete_file, write_dvs, DataFileDeletes,
};
use icefloe::Error;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::IntoPyResult;
use crate::fileio::PyFileIO;
use crate::metadata::PyTableMetadata;
use crate::puffin::PyDeletionVector;

/// The one spec the data files share (rows of one table carry one partition type).
fn one_spec<'a>(
    targets: impl Iterator<Item = &'a DataFileDeletes>,
) -> icefloe::Result<Option<i32>> {
    let mut spec = None;
    for t in targets {
        match spec {
            None => spec = Some(t.spec_id),
            Some(s) if s != t.spec_id => {
                return Err(Error::invalid_argument(
                    "the data files belong to different partition specs: write their deletes separately",
                ))
            }
            _ => {}
        }
    }
    Ok(spec)
}

/// Data-file rows (no entry columns) of `files` in spec `spec_id`.
fn rows(md: &TableMetadata, spec_id: i32, files: Vec<DataFile>) -> icefloe::Result<RecordBatch> {
    let schema = md.current_schema().ok_or_else(|| {
        Error::invalid_metadata("current-schema-id", "the table has no current schema")
    })?;
    let spec = md.spec_by_id(spec_id).ok_or_else(|| {
        Error::invalid_argument(format!("the table has no partition spec {spec_id}"))
    })?;
    let ptype = spec.partition_type(schema)?;
    let entries: Vec<ManifestEntry> = files.into_iter().map(ManifestEntry::added).collect();
    let mut batch = entries_to_batch(&entries, &ptype)?;
    for name in [
        "status",
        "snapshot_id",
        "sequence_number",
        "file_sequence_number",
    ] {
        if let Ok(i) = batch.schema().index_of(name) {
            batch.remove_column(i);
        }
    }
    Ok(batch)
}

/// The snapshot whose live files and deletes a write of delete files starts from: the
/// given one (a branch's head), else the current snapshot.
fn base_snapshot(
    md: &TableMetadata,
    snapshot_id: Option<i64>,
) -> icefloe::Result<Option<&Snapshot>> {
    match snapshot_id {
        None => Ok(None),
        Some(id) => md
            .snapshot_by_id(id)
            .map(Some)
            .ok_or_else(|| Error::invalid_argument(format!("snapshot_id: no snapshot {id}"))),
    }
}

/// For each data file path (read through `io`, the table's FileIO): the position delete files (not DVs) that apply to it in the
/// current snapshot (or `snapshot_id`), whose positions a v3 writer must fold into the new DV.
/// `scanned`: the plan rows of a scan of that snapshot holding the files (Arrow IPC stream
/// bytes), from which their deletes are taken without reading a manifest.
#[pyfunction]
#[pyo3(signature = (io, metadata, paths, snapshot_id = None, scanned = None))]
fn position_delete_files_for(
    py: Python<'_>,
    io: &PyFileIO,
    metadata: &PyTableMetadata,
    paths: Vec<String>,
    snapshot_id: Option<i64>,
    scanned: Option<&[u8]>,
) -> PyResult<HashMap<String, Vec<String>>> {
    let md = Arc::clone(&metadata.inner);
    py.detach(|| {
        let found = deletes_of(
            io.inner.as_ref(),
            &md,
            base_snapshot(&md, snapshot_id)?,
            &paths,
            scanned,
        )?;
        Ok(found
            .into_iter()
            .map(|(p, d)| {
                (
                    p,
                    d.position_files.into_iter().map(|f| f.file_path).collect(),
                )
            })
            .collect())
    })
    .py(py)
}

/// v3: writes the DVs (merged with each data file's live DV in the current snapshot, or in
/// `snapshot_id`) into one Puffin file at `location`; returns (delete files to add, delete
/// files to remove) as data-file rows. `scanned`: as for `position_delete_files_for`.
#[pyfunction]
#[pyo3(signature = (io, metadata, location, vectors, snapshot_id = None, scanned = None))]
fn write_dv_deletes(
    py: Python<'_>,
    io: &PyFileIO,
    metadata: &PyTableMetadata,
    location: &str,
    vectors: &Bound<'_, PyDict>,
    snapshot_id: Option<i64>,
    scanned: Option<&[u8]>,
) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    let mut items: Vec<(String, DeletionVector)> = Vec::with_capacity(vectors.len());
    for (k, v) in vectors.iter() {
        let dv = v.cast::<PyDeletionVector>()?;
        items.push((k.extract::<String>()?, (*dv.get().inner).clone()));
    }
    let md = Arc::clone(&metadata.inner);
    let (added, removed) = py
        .detach(|| {
            let paths: Vec<String> = items.iter().map(|(p, _)| p.clone()).collect();
            let found = deletes_of(
                io.inner.as_ref(),
                &md,
                base_snapshot(&md, snapshot_id)?,
                &paths,
                scanned,
            )?;
            let spec_id = one_spec(found.values())?.unwrap_or(md.default_spec_id);
            let mut targets = Vec::with_capacity(items.len());
            for (p, dv) in items {
                let t = found
                    .get(&p)
                    .ok_or_else(|| Error::invalid_argument(format!("not a live data file: {p}")))?;
                targets.push((t, dv));
            }
            let written = write_dvs(io.inner.as_ref(), location, &targets)?;
            let added = rows(
                &md,
                spec_id,
                written.added.into_iter().map(|x| x.1).collect(),
            )?;
            let removed = rows(
                &md,
                spec_id,
                written.removed.into_iter().map(|x| x.1).collect(),
            )?;
            Ok::<_, Error>((added, removed))
        })
        .py(py)?;
    Ok((
        added.to_pyarrow(py)?.unbind(),
        removed.to_pyarrow(py)?.unbind(),
    ))
}

/// What the caller wrote for one data file: data file, delete file, record count, size,
/// smallest and largest position.
type WrittenPositionDeletes = (String, String, i64, i64, Option<i64>, Option<i64>);

/// v2: the rows of position delete files the caller wrote, one per data file:
/// `(data_file_path, delete_file_path, record_count, file_size_in_bytes, min_pos, max_pos)`
/// (the positions `None` for a file without rows). `scanned`: as for
/// `position_delete_files_for` (a plan of the current snapshot).
#[pyfunction]
#[pyo3(signature = (io, metadata, files, scanned = None))]
fn position_delete_file_rows(
    py: Python<'_>,
    io: &PyFileIO,
    metadata: &PyTableMetadata,
    files: Vec<WrittenPositionDeletes>,
    scanned: Option<&[u8]>,
) -> PyResult<Py<PyAny>> {
    let md = Arc::clone(&metadata.inner);
    let batch = py
        .detach(|| {
            let paths: Vec<String> = files.iter().map(|f| f.0.clone()).collect();
            let found = deletes_of(io.inner.as_ref(), &md, None, &paths, scanned)?;
            let spec_id = one_spec(found.values())?.unwrap_or(md.default_spec_id);
            let mut out = Vec::with_capacity(files.len());
            for (data, path, count, size, min_pos, max_pos) in &files {
                let t = found.get(data).ok_or_else(|| {
                    Error::invalid_argument(format!("not a live data file: {data}"))
                })?;
                let span = min_pos.zip(*max_pos);
                out.push(position_delete_file(t, path, *count, *size, span));
            }
            rows(&md, spec_id, out)
        })
        .py(py)?;
    Ok(batch.to_pyarrow(py)?.unbind())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(position_delete_files_for, m)?)?;
    m.add_function(wrap_pyfunction!(write_dv_deletes, m)?)?;
    m.add_function(wrap_pyfunction!(position_delete_file_rows, m)?)?;
    Ok(())
}
