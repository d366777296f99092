//! Bindings of `icefloe::maintenance`: conversions only; the work runs with the GIL released.

use std::collections::HashMap;

use icefloe::maintenance::rewrite_data_files::RewriteJobOrder;
use icefloe::maintenance::{
    plan_rewrite_data_files as plan_rewrite, DeleteOrphanFiles, PrefixMismatchMode,
    RewriteDataFilesOptions, RewriteStrategy,
};
use icefloe::scan::{SnapshotSelection, TableScan};
use icefloe::Error;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::expr::PyExpression;

use crate::error::IntoPyResult;
use crate::fileio::{io_for, PyFileIO};
use crate::metadata::PyTableMetadata;

/// Finds the files under the table's location (or `location`) that its metadata does not
/// reach and that are older than `older_than_ms` (default: three days ago), and deletes them
/// unless `dry_run`. Returns the orphans and the `(location, error)` of failed deletes.
#[pyfunction]
#[pyo3(signature = (io, metadata, metadata_location = None, *, older_than_ms = None, location = None, dry_run = false, prefix_mismatch_mode = "error", equal_schemes = None, equal_authorities = None, max_concurrent_deletes = None))]
#[allow(clippy::too_many_arguments)]
fn remove_orphan_files(
    py: Python<'_>,
    io: &PyFileIO,
    metadata: PyRef<'_, PyTableMetadata>,
    metadata_location: Option<String>,
    older_than_ms: Option<i64>,
    location: Option<String>,
    dry_run: bool,
    prefix_mismatch_mode: &str,
    equal_schemes: Option<HashMap<String, String>>,
    equal_authorities: Option<HashMap<String, String>>,
    max_concurrent_deletes: Option<usize>,
) -> PyResult<OrphansOut> {
    let mut action = DeleteOrphanFiles::new()
        .dry_run(dry_run)
        .prefix_mismatch_mode(PrefixMismatchMode::parse(prefix_mismatch_mode).py(py)?);
    if let Some(t) = older_than_ms {
        action = action.older_than(t);
    }
    if let Some(l) = location {
        action = action.location(l);
    }
    if let Some(m) = &equal_schemes {
        action = action.equal_schemes(m);
    }
    if let Some(m) = &equal_authorities {
        action = action.equal_authorities(m);
    }
    if let Some(n) = max_concurrent_deletes {
        action = action.delete_threads(n).py(py)?;
    }
    let md = std::sync::Arc::clone(&metadata.inner);
    let io = std::sync::Arc::clone(&io.inner);
    let result = py
        .detach(|| action.execute(io.as_ref(), &md, metadata_location.as_deref()))
        .py(py)?;
    Ok((result.orphan_file_locations, result.failed_deletes))
}

/// `(file_path, content_offset, content, record_count)` of a dangling delete file.
type DanglingOut = (String, Option<i64>, i32, i64);

/// The orphans, and the `(location, error)` of each delete that failed.
type OrphansOut = (Vec<String>, Vec<(String, String)>);

/// Plans `rewrite_data_files` (`icefloe::maintenance::rewrite_data_files`): the groups of
/// data files to rewrite with `strategy` (`binpack` or `sort`) and Java's `options`, over
/// the files of `filter` in the branch `ref_name` (default: the current snapshot). Returns a
/// dict: `starting_snapshot_id`, `total_group_count`, the parsed action options, and
/// `groups` (each with its files, DVs to drop, sizes and the IPC bytes of its read units).
#[pyfunction]
#[pyo3(signature = (io, metadata, *, strategy = "binpack", options = None, filter = None, case_sensitive = true, ref_name = None))]
#[allow(clippy::too_many_arguments)]
fn plan_rewrite_data_files<'py>(
    py: Python<'py>,
    io: Option<&PyFileIO>,
    metadata: PyRef<'_, PyTableMetadata>,
    strategy: &str,
    options: Option<HashMap<String, String>>,
    filter: Option<PyRef<'_, PyExpression>>,
    case_sensitive: bool,
    ref_name: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let md = std::sync::Arc::clone(&metadata.inner);
    let io = io_for(io, &md.location).py(py)?;
    let filter = filter.map(|f| f.inner.clone());
    let options = options.unwrap_or_default();
    let planned = py
        .detach(|| {
            let strategy = match strategy.to_ascii_lowercase().as_str() {
                "binpack" | "bin-pack" => RewriteStrategy::BinPack,
                "sort" => RewriteStrategy::Sort,
                other => {
                    return Err(Error::invalid_argument(format!(
                        "unknown rewrite strategy '{other}' (expected binpack or sort)"
                    )))
                }
            };
            let parsed = RewriteDataFilesOptions::parse(&md, strategy, &options)?;
            let mut scan = TableScan::new(md.clone(), io).case_sensitive(case_sensitive);
            if let Some(f) = filter {
                scan = scan.filter(f);
            }
            if let Some(r) = ref_name {
                scan = scan.snapshot(SnapshotSelection::Ref(r));
            }
            let plan = plan_rewrite(&md, &scan, &parsed)?;
            let mut groups = Vec::with_capacity(plan.groups.len());
            for g in &plan.groups {
                let units = g
                    .read_units(&md, strategy)?
                    .iter()
                    .map(|u| plan.unit_payload(u))
                    .collect::<icefloe::Result<Vec<_>>>()?;
                groups.push((g, units));
            }
            let groups: Vec<_> = groups
                .into_iter()
                .map(|(g, units)| {
                    let files: Vec<(String, i64, i64)> = g
                        .rewritten_files()
                        .map(|f| {
                            (
                                f.file.file_path.clone(),
                                f.file.record_count,
                                f.file.file_size_in_bytes,
                            )
                        })
                        .collect();
                    let dvs: Vec<(String, Option<i64>)> = g
                        .dangling_dvs()
                        .iter()
                        .map(|d| (d.file.file_path.clone(), d.file.content_offset))
                        .collect();
                    let deletes: usize = g.tasks.iter().map(|t| t.deletes.len()).sum();
                    (
                        g.global_index,
                        g.partition_index,
                        g.input_size(),
                        g.expected_output_files,
                        g.max_output_file_size,
                        g.input_split_size,
                        g.output_spec_id,
                        files,
                        dvs,
                        deletes,
                        units,
                    )
                })
                .collect();
            Ok((
                parsed,
                plan.starting_snapshot_id,
                plan.total_group_count,
                groups,
            ))
        })
        .py(py)?;
    let (parsed, starting, total, groups) = planned;
    let out = PyDict::new(py);
    out.set_item("starting_snapshot_id", starting)?;
    out.set_item("total_group_count", total)?;
    out.set_item("partial_progress_enabled", parsed.partial_progress_enabled)?;
    out.set_item("max_commits", parsed.max_commits)?;
    out.set_item("max_failed_commits", parsed.max_failed_commits)?;
    out.set_item(
        "max_concurrent_file_group_rewrites",
        parsed.max_concurrent_group_rewrites,
    )?;
    out.set_item(
        "use_starting_sequence_number",
        parsed.use_starting_sequence_number,
    )?;
    out.set_item("remove_dangling_deletes", parsed.remove_dangling_deletes)?;
    out.set_item("output_spec_id", parsed.output_spec_id)?;
    out.set_item("target_file_size", parsed.target_file_size)?;
    out.set_item(
        "job_order",
        match parsed.job_order {
            RewriteJobOrder::None => "none",
            RewriteJobOrder::BytesAsc => "bytes-asc",
            RewriteJobOrder::BytesDesc => "bytes-desc",
            RewriteJobOrder::FilesAsc => "files-asc",
            RewriteJobOrder::FilesDesc => "files-desc",
        },
    )?;
    let list = PyList::empty(py);
    for (gi, pi, size, expected, max_out, split, spec, files, dvs, deletes, units) in groups {
        let g = PyDict::new(py);
        g.set_item("global_index", gi)?;
        g.set_item("partition_index", pi)?;
        g.set_item("input_size", size)?;
        g.set_item("expected_output_files", expected)?;
        g.set_item("max_output_file_size", max_out)?;
        g.set_item("input_split_size", split)?;
        g.set_item("output_spec_id", spec)?;
        g.set_item("rewritten_files", files)?;
        g.set_item("dangling_dvs", dvs)?;
        g.set_item("delete_file_count", deletes)?;
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

/// The dangling delete files of the snapshot (`icefloe::maintenance::dangling_deletes`,
/// Java's `RemoveDanglingDeletesSparkAction`): `(file_path, content_offset, content,
/// record_count)` of each.
#[pyfunction]
#[pyo3(signature = (io, metadata, snapshot_id = None))]
fn find_dangling_deletes(
    py: Python<'_>,
    io: Option<&PyFileIO>,
    metadata: PyRef<'_, PyTableMetadata>,
    snapshot_id: Option<i64>,
) -> PyResult<Vec<DanglingOut>> {
    let md = std::sync::Arc::clone(&metadata.inner);
    let io = io_for(io, &md.location).py(py)?;
    let found = py
        .detach(|| icefloe::maintenance::find_dangling_deletes(io.as_ref(), &md, snapshot_id))
        .py(py)?;
    Ok(found
        .into_iter()
        .map(|d| {
            (
                d.file.file_path,
                d.file.content_offset,
                d.file.content.id(),
                d.file.record_count,
            )
        })
        .collect())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(find_dangling_deletes, m)?)?;
    m.add_function(wrap_pyfunction!(remove_orphan_files, m)?)?;
    m.add_function(wrap_pyfunction!(plan_rewrite_data_files, m)?)?;
    Ok(())
}
