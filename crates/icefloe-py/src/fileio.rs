//! The FileIO a table or catalog reads and writes through, for Python. Every binding that
//! touches files takes one, so a table on an object store is never read from local disk
//! by accident; which FileIO a location gets is decided in one place,
//! `icefloe::io::for_location`.

use std::collections::HashMap;
use std::sync::Arc;

use icefloe::io::{for_location, FileIO, MemoryFileIO};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error::IntoPyResult;

/// A FileIO: local files, an object store, or (for tests) memory.
#[pyclass(frozen, module = "icefloe._native", name = "FileIO")]
#[derive(Clone)]
pub struct PyFileIO {
    pub(crate) inner: Arc<dyn FileIO>,
}

impl PyFileIO {
    pub(crate) fn new(inner: Arc<dyn FileIO>) -> Self {
        PyFileIO { inner }
    }
}

/// The FileIO a binding given a bare path uses: `io` when given, else the one
/// `for_location` picks for the path's scheme (no properties).
pub(crate) fn io_for(io: Option<&PyFileIO>, location: &str) -> icefloe::Result<Arc<dyn FileIO>> {
    match io {
        Some(io) => Ok(Arc::clone(&io.inner)),
        None => for_location(location, &HashMap::new()),
    }
}

#[pymethods]
impl PyFileIO {
    /// The FileIO for `location` (a table or warehouse location), configured by
    /// `properties` (FileIO properties such as `s3.region`; a catalog's merged with a
    /// table's vended config).
    #[new]
    #[pyo3(signature = (location, properties = None))]
    fn py_new(
        py: Python<'_>,
        location: &str,
        properties: Option<HashMap<String, String>>,
    ) -> PyResult<Self> {
        let properties = properties.unwrap_or_default();
        for_location(location, &properties).py(py).map(Self::new)
    }

    /// An empty in-memory FileIO (for tests: nothing reaches a disk).
    #[staticmethod]
    fn in_memory() -> Self {
        Self::new(Arc::new(MemoryFileIO::default()))
    }

    /// Reads the whole file.
    fn read<'py>(&self, py: Python<'py>, location: &str) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.detach(|| self.inner.read(location)).py(py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Writes a new file; fails if it exists.
    fn write_new(&self, py: Python<'_>, location: &str, data: &[u8]) -> PyResult<()> {
        py.detach(|| self.inner.write_new(location, data)).py(py)
    }

    fn exists(&self, py: Python<'_>, location: &str) -> PyResult<bool> {
        py.detach(|| self.inner.exists(location)).py(py)
    }

    /// Every file inside the folder `location`, at any depth, as `(location, size,
    /// last_modified_ms)` tuples sorted by location (a missing folder lists as empty).
    fn list_files(&self, py: Python<'_>, location: &str) -> PyResult<Vec<(String, u64, i64)>> {
        let files = py.detach(|| self.inner.list_files(location)).py(py)?;
        Ok(files
            .into_iter()
            .map(|f| (f.location, f.size, f.last_modified_ms))
            .collect())
    }

    /// Deletes a file (a missing file counts as deleted).
    fn delete(&self, py: Python<'_>, location: &str) -> PyResult<()> {
        py.detach(|| self.inner.delete(location)).py(py)
    }

    /// The FileIO properties this FileIO reaches `location` with (for a REST catalog's
    /// table: the catalog's with the table's vended credentials over them), credentials
    /// included, as a dict to hand to the executors (`io_properties=`); `None` for local
    /// files and memory. Never print it.
    fn properties_for(&self, location: &str) -> Option<HashMap<String, String>> {
        self.inner
            .properties_for(location)
            .map(|pairs| pairs.into_iter().collect())
    }

    /// What this FileIO has sent and received since it was made or last reset: a dict of
    /// `requests`, `bytes_read`, `bytes_written` and `cache_hits` (reads answered by the
    /// manifest cache), or `None` where nothing is counted (local files, memory).
    fn stats(&self) -> Option<HashMap<&'static str, u64>> {
        self.inner.stats().map(|s| {
            HashMap::from([
                ("requests", s.requests),
                ("bytes_read", s.bytes_read),
                ("bytes_written", s.bytes_written),
                ("cache_hits", s.cache_hits),
            ])
        })
    }

    /// Sets the counters of `stats()` back to zero.
    fn reset_stats(&self) {
        self.inner.reset_stats();
    }

    /// Whether both are the same FileIO (not merely of the same kind).
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyFileIO>()
            .map(|o| std::ptr::addr_eq(Arc::as_ptr(&o.get().inner), Arc::as_ptr(&self.inner)))
            .unwrap_or(false)
    }

    fn __hash__(&self) -> u64 {
        Arc::as_ptr(&self.inner).cast::<()>() as usize as u64
    }

    fn __repr__(&self) -> String {
        "FileIO()".to_string()
    }
}
