//! Bindings of `icefloe::maintenance::rewrite_position_deletes`
//! (`rewrite_position_delete_files`): conversions only; the work runs with the GIL released.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::pyarrow::ToPyArrow;
use icefloe::maintenance::rewrite_position_deletes::delete_file_rows;
use icefloe::maintenance::{
    plan_rewrite_position_deletes, rewrite_position_delete_unit as rewrite_unit,
    PositionDeleteUnit, RewritePositionDeletesOptions,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::error::IntoPyResult;
use crate::expr::PyExpression;
use crate::fileio::{io_for, PyFileIO};
use crate::metadata::PyTableMetadata;

/// One planned group: indexes, spec, sizes, sequence number, the delete files it replaces
/// (`(file_path, content_offset)`) and the IPC bytes of its units.
type GroupOut = (
    usize,
    usize,
    i32,
    i64,
    i64,
    i64,
    Vec<(String, Option<i64>)>,
    Vec<Vec<u8>>,
);

/// Plans `rewrite_position_delete_files` on the current snapshot with Java's `options`,
/// over the delete files whose partitions may match `filter`. Returns a dict:
/// `starting_snapshot_id`, `total_group_count`, the action options, and `groups` (each with
/// the delete files it replaces, the sequence number its new files keep and its units).
#[pyfunction]
#[pyo3(signature = (io, metadata, *, options = None, filter = None, case_sensitive = true))]
fn plan_rewrite_position_delete_files<'py>(
    py: Python<'py>,
    io: Option<&PyFileIO>,
    metadata: PyRef<'_, PyTableMetadata>,
    options: Option<HashMap<String, String>>,
    filter: Option<PyRef<'_, PyExpression>>,
    case_sensitive: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let md = Arc::clone(&metadata.inner);
    let io = io_for(io, &md.location).py(py)?;
    let filter = filter.map(|f| f.inner.clone());
    let options = options.unwrap_or_default();
    let (parsed, starting, total, groups) = py
        .detach(|| {
            let parsed = RewritePositionDeletesOptions::parse(&md, &options)?;
            let plan = plan_rewrite_position_deletes(
                io.as_ref(),
                &md,
                filter.as_ref(),
                case_sensitive,
                &parsed,
            )?;
            let mut groups: Vec<GroupOut> = Vec::with_capacity(plan.groups.len());
            for g in &plan.groups {
                let units = g
                    .read_units(&md)?
                    .iter()
                    .map(|u| PositionDeleteUnit::of(g, u).to_ipc(&md))
                    .collect::<icefloe::Result<Vec<_>>>()?;
                let files = g
                    .tasks
                    .iter()
                    .map(|t| (t.file.file_path.clone(), t.file.content_offset))
                    .collect();
                groups.push((
                    g.global_index,
                    g.partition_index,
                    g.spec_id,
                    g.input_size(),
                    g.max_rewritten_data_sequence_number,
                    g.expected_output_files,
                    files,
                    units,
                ));
            }
            Ok::<_, icefloe::Error>((
                parsed,
                plan.starting_snapshot_id,
                plan.total_group_count,
                groups,
            ))
        })
        .py(py)?;
    let out = PyDict::new(py);
    out.set_item("starting_snapshot_id", starting)?;
    out.set_item("total_group_count", total)?;
    out.set_item("partial_progress_enabled", parsed.partial_progress_enabled)?;
    out.set_item("max_commits", parsed.max_commits)?;
    out.set_item(
        "max_concurrent_file_group_rewrites",
        parsed.max_concurrent_group_rewrites,
    )?;
    let list = PyList::empty(py);
    for (gi, pi, spec, size, seq, expected, files, units) in groups {
        let g = PyDict::new(py);
        g.set_item("global_index", gi)?;
        g.set_item("partition_index", pi)?;
        g.set_item("spec_id", spec)?;
        g.set_item("input_size", size)?;
        g.set_item("max_rewritten_data_sequence_number", seq)?;
        g.set_item("expected_output_files", expected)?;
        g.set_item("rewritten_delete_files", files)?;
        let u = PyList::empty(py);
        for bytes in units {
            u.append(PyBytes::new(py, &bytes))?;
        }
        g.set_item("units", u)?;
        list.append(g)?;
    }
    out.set_item("groups", list)?;
    Ok(out)
}

/// Runs one unit of a planned group (its IPC bytes): reads its deletes, drops those of data
/// files no longer live, writes the new delete files (names start with `file_prefix`) and
/// returns their data-file rows (a pyarrow RecordBatch).
#[pyfunction]
fn rewrite_position_delete_unit(
    py: Python<'_>,
    io: &PyFileIO,
    metadata: PyRef<'_, PyTableMetadata>,
    unit: &[u8],
    file_prefix: &str,
) -> PyResult<Py<PyAny>> {
    let md = Arc::clone(&metadata.inner);
    let io = Arc::clone(&io.inner);
    let batch = py
        .detach(|| {
            let unit = PositionDeleteUnit::from_ipc(&md, unit)?;
            let files = rewrite_unit(&io, &md, &unit, file_prefix)?;
            let mut batch = delete_file_rows(&md, unit.spec_id, &files)?;
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
            Ok::<_, icefloe::Error>(batch)
        })
        .py(py)?;
    Ok(batch.to_pyarrow(py)?.unbind())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(plan_rewrite_position_delete_files, m)?)?;
    m.add_function(wrap_pyfunction!(rewrite_position_delete_unit, m)?)?;
    Ok(())
}
