//! Metadata tables for Python: one pyarrow RecordBatch per table (the tables are
//! `icefloe::inspect`).

use arrow::pyarrow::ToPyArrow;
use std::sync::Arc;

use icefloe::inspect::{Inspect, MetadataTableType};
use icefloe::io::MemoryFileIO;
use icefloe::scan::SnapshotSelection;
use icefloe::Error;
use pyo3::prelude::*;

use crate::error::IntoPyResult;
use crate::fileio::{io_for, PyFileIO};
use crate::metadata::PyTableMetadata;

/// The metadata table `name` (`snapshots`, `files`, ...) of `metadata` as a pyarrow
/// RecordBatch, reading manifests through `io`. `metadata_location` is the current
/// metadata file (for `metadata_log_entries`); at most one of `snapshot_id`,
/// `ref_name` and `as_of_ms` selects a snapshot for the tables that allow time travel.
#[pyfunction]
#[pyo3(signature = (metadata, name, *, io = None, metadata_location = None, snapshot_id = None, ref_name = None, as_of_ms = None))]
#[allow(clippy::too_many_arguments)]
fn inspect_table(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    name: &str,
    io: Option<&PyFileIO>,
    metadata_location: Option<String>,
    snapshot_id: Option<i64>,
    ref_name: Option<String>,
    as_of_ms: Option<i64>,
) -> PyResult<Py<PyAny>> {
    let md = metadata.inner.clone();
    let batch = py
        .detach(|| {
            let table = parse(name)?;
            let selection = match (snapshot_id, ref_name, as_of_ms) {
                (None, None, None) => SnapshotSelection::Current,
                (Some(id), None, None) => SnapshotSelection::SnapshotId(id),
                (None, Some(r), None) => SnapshotSelection::Ref(r),
                (None, None, Some(ts)) => SnapshotSelection::AsOfTimestamp(ts),
                _ => {
                    return Err(Error::invalid_argument(
                        "give at most one of snapshot_id, ref and as_of",
                    ))
                }
            };
            let io = io_for(io, &md.location)?;
            let mut inspect = Inspect::new(md, io).snapshot(selection);
            if let Some(location) = metadata_location {
                inspect = inspect.metadata_location(location);
            }
            inspect.table(table)
        })
        .py(py)?;
    Ok(batch.to_pyarrow(py)?.unbind())
}

/// The Iceberg schema (JSON) of the metadata table `name` of `metadata`.
#[pyfunction]
fn metadata_table_schema_json(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    name: &str,
) -> PyResult<String> {
    let md = metadata.inner.clone();
    py.detach(|| {
        let table = parse(name)?;
        // the schema reads no file
        let io = Arc::new(MemoryFileIO::default());
        Ok(Inspect::new(md, io)
            .iceberg_schema(table)?
            .to_json()
            .to_string())
    })
    .py(py)
}

fn parse(name: &str) -> icefloe::Result<MetadataTableType> {
    MetadataTableType::parse(name)
        .ok_or_else(|| Error::invalid_argument(format!("unknown metadata table '{name}'")))
}

/// The names of the metadata tables.
#[pyfunction]
fn metadata_table_names() -> Vec<&'static str> {
    MetadataTableType::ALL.iter().map(|t| t.name()).collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(inspect_table, m)?)?;
    m.add_function(wrap_pyfunction!(metadata_table_names, m)?)?;
    m.add_function(wrap_pyfunction!(metadata_table_schema_json, m)?)?;
    Ok(())
}
