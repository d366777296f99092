//! Metadata tables for Python: a pyarrow schema and record batches per table (the
//! tables are `icefloe::inspect`).

use arrow::pyarrow::ToPyArrow;
use std::sync::Arc;

use icefloe::inspect::{Inspect, MetadataTableType};
use icefloe::io::MemoryFileIO;
use icefloe::scan::SnapshotSelection;
use icefloe::Error;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::error::IntoPyResult;
use crate::expr::PyExpression;
use crate::fileio::{io_for, PyFileIO};
use crate::metadata::PyTableMetadata;

/// The metadata table `name` (`snapshots`, `files`, ...) of `metadata` as a pyarrow
/// schema and a list of RecordBatches (one per manifest for the files and entries
/// tables: joining them would copy every column once more), reading manifests through `io`. `metadata_location` is the current
/// metadata file (for `metadata_log_entries`); at most one of `snapshot_id`,
/// `ref_name` and `as_of_ms` selects a snapshot for the tables that allow time travel.
/// `filter` keeps the rows it matches (on the metadata table's columns); `selected` names
/// the columns to keep.
#[pyfunction]
#[pyo3(signature = (metadata, name, *, io = None, metadata_location = None, snapshot_id = None, ref_name = None, as_of_ms = None, filter = None, selected = None, case_sensitive = true))]
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
    filter: Option<PyRef<'_, PyExpression>>,
    selected: Option<Vec<String>>,
    case_sensitive: bool,
) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    let md = metadata.inner.clone();
    let filter = filter.map(|f| f.inner.clone());
    let (schema, batches) = py
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
            let mut inspect = Inspect::new(md, io)
                .snapshot(selection)
                .case_sensitive(case_sensitive);
            if let Some(location) = metadata_location {
                inspect = inspect.metadata_location(location);
            }
            if let Some(f) = filter {
                inspect = inspect.filter(f);
            }
            if let Some(columns) = selected {
                inspect = inspect.select(columns);
            }
            inspect.batches(table)
        })
        .py(py)?;
    let list = PyList::empty(py);
    for b in batches {
        list.append(b.to_pyarrow(py)?)?;
    }
    Ok((
        schema.as_ref().to_pyarrow(py)?.unbind(),
        list.into_any().unbind(),
    ))
}

/// The Iceberg schema (JSON) of the metadata table `name` of `metadata` (of the `selected`
/// columns only, when given).
#[pyfunction]
#[pyo3(signature = (metadata, name, selected = None, case_sensitive = true))]
fn metadata_table_schema_json(
    py: Python<'_>,
    metadata: &PyTableMetadata,
    name: &str,
    selected: Option<Vec<String>>,
    case_sensitive: bool,
) -> PyResult<String> {
    let md = metadata.inner.clone();
    py.detach(|| {
        let table = parse(name)?;
        // the schema reads no file
        let io = Arc::new(MemoryFileIO::default());
        let mut inspect = Inspect::new(md, io).case_sensitive(case_sensitive);
        if let Some(columns) = selected {
            inspect = inspect.select(columns);
        }
        Ok(inspect.iceberg_schema(table)?.to_json().to_string())
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
