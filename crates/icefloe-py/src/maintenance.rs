//! Bindings of `icefloe::maintenance`: conversions only; the work runs with the GIL released.

use std::collections::HashMap;

use icefloe::maintenance::{DeleteOrphanFiles, PrefixMismatchMode};
use pyo3::prelude::*;

use crate::error::IntoPyResult;
use crate::fileio::PyFileIO;
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

/// The orphans, and the `(location, error)` of each delete that failed.
type OrphansOut = (Vec<String>, Vec<(String, String)>);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(remove_orphan_files, m)?)?;
    Ok(())
}
