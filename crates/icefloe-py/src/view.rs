//! Python views of view metadata and name mappings.

use std::sync::Arc;

use icefloe::catalog::filesystem::resolve_metadata_location;
use icefloe::spec::name_mapping::NameMapping;
use icefloe::spec::view_metadata::{ViewMetadata, ViewVersion};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::IntoPyResult;
use crate::fileio::{io_for, PyFileIO};
use crate::schema::PySchema;

#[pyclass(frozen, module = "icefloe._native", name = "ViewVersion")]
pub struct PyViewVersion {
    inner: ViewVersion,
}

#[pymethods]
impl PyViewVersion {
    #[getter]
    fn version_id(&self) -> i32 {
        self.inner.version_id
    }

    #[getter]
    fn timestamp_ms(&self) -> i64 {
        self.inner.timestamp_ms
    }

    #[getter]
    fn schema_id(&self) -> Option<i32> {
        self.inner.schema_id()
    }

    #[getter]
    fn summary(&self) -> std::collections::BTreeMap<String, String> {
        self.inner.summary.clone()
    }

    #[getter]
    fn default_catalog(&self) -> Option<&str> {
        self.inner.default_catalog()
    }

    #[getter]
    fn default_namespace(&self) -> Option<Vec<String>> {
        self.inner.default_namespace().map(<[String]>::to_vec)
    }

    /// SQL text by dialect, in the order the representations are stored.
    #[getter]
    fn sql<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for r in self.inner.sql_representations() {
            d.set_item(&r.dialect, &r.sql)?;
        }
        Ok(d)
    }

    /// The SQL for a dialect (matched without regard to case), or None.
    fn sql_for(&self, dialect: &str) -> Option<String> {
        self.inner.sql_for(dialect).map(|r| r.sql.clone())
    }

    fn __repr__(&self) -> String {
        let dialects: Vec<&str> = self
            .inner
            .sql_representations()
            .map(|r| r.dialect.as_str())
            .collect();
        format!(
            "ViewVersion(version_id={}, schema_id={}, dialects={:?})",
            self.inner.version_id,
            self.inner
                .schema_id()
                .map_or("None".into(), |s| s.to_string()),
            dialects
        )
    }
}

/// View metadata (view spec, format version 1).
#[pyclass(frozen, module = "icefloe._native", name = "ViewMetadata")]
pub struct PyViewMetadata {
    pub inner: Arc<ViewMetadata>,
}

#[pymethods]
impl PyViewMetadata {
    /// Reads a view metadata file (plain or gzip), or the current one of a view directory,
    /// through `io` (default: the FileIO for the path's scheme).
    #[staticmethod]
    #[pyo3(signature = (path, *, io = None))]
    fn from_path(py: Python<'_>, path: &str, io: Option<&PyFileIO>) -> PyResult<PyViewMetadata> {
        let md = py
            .detach(|| {
                let io = io_for(io, path)?;
                let location = resolve_metadata_location(io.as_ref(), path)?;
                ViewMetadata::read(io.as_ref(), &location)
            })
            .py(py)?;
        Ok(PyViewMetadata {
            inner: Arc::new(md),
        })
    }

    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str) -> PyResult<PyViewMetadata> {
        let md = ViewMetadata::from_json_str(text).py(py)?;
        Ok(PyViewMetadata {
            inner: Arc::new(md),
        })
    }

    fn to_json(&self) -> String {
        self.inner.to_json_string()
    }

    #[getter]
    fn view_uuid(&self) -> Option<&str> {
        self.inner.view_uuid.as_deref()
    }

    #[getter]
    fn format_version(&self) -> i32 {
        self.inner.format_version
    }

    #[getter]
    fn location(&self) -> &str {
        &self.inner.location
    }

    #[getter]
    fn current_version_id(&self) -> i32 {
        self.inner.current_version_id
    }

    #[getter]
    fn properties(&self) -> std::collections::BTreeMap<String, String> {
        self.inner.properties.clone()
    }

    #[getter]
    fn versions(&self) -> Vec<PyViewVersion> {
        self.inner
            .versions
            .iter()
            .map(|v| PyViewVersion { inner: v.clone() })
            .collect()
    }

    #[getter]
    fn schemas(&self) -> Vec<PySchema> {
        self.inner
            .schemas
            .iter()
            .map(|s| PySchema {
                inner: Arc::new(s.clone()),
            })
            .collect()
    }

    /// `(timestamp_ms, version_id)` pairs of the version log.
    #[getter]
    fn version_log(&self) -> Vec<(i64, i32)> {
        self.inner
            .version_log
            .iter()
            .map(|e| (e.timestamp_ms, e.version_id))
            .collect()
    }

    fn current_version(&self) -> Option<PyViewVersion> {
        self.inner
            .current_version()
            .map(|v| PyViewVersion { inner: v.clone() })
    }

    /// The schema of the current version.
    fn schema(&self) -> Option<PySchema> {
        self.inner.current_schema().map(|s| PySchema {
            inner: Arc::new(s.clone()),
        })
    }

    /// The current version's SQL for a dialect, or None.
    fn sql_for(&self, dialect: &str) -> Option<String> {
        self.inner.sql_for(dialect).map(str::to_string)
    }

    fn __repr__(&self) -> String {
        format!(
            "ViewMetadata(location={:?}, current_version_id={}, {} versions)",
            self.inner.location,
            self.inner.current_version_id,
            self.inner.versions.len()
        )
    }
}

/// A name mapping (`schema.name-mapping.default`): field ids for files without them.
#[pyclass(frozen, module = "icefloe._native", name = "NameMapping")]
pub struct PyNameMapping {
    inner: NameMapping,
}

#[pymethods]
impl PyNameMapping {
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str) -> PyResult<PyNameMapping> {
        Ok(PyNameMapping {
            inner: NameMapping::from_json_str(text).py(py)?,
        })
    }

    /// The default mapping of a schema: each field mapped by its current name.
    #[staticmethod]
    fn from_schema(schema: &PySchema) -> PyNameMapping {
        PyNameMapping {
            inner: NameMapping::from_schema(&schema.inner),
        }
    }

    /// The field id mapped to a path of names (`["location", "lat"]`), or None.
    fn find(&self, names: Vec<String>) -> Option<i32> {
        let path: Vec<&str> = names.iter().map(String::as_str).collect();
        self.inner.find(&path)
    }

    fn to_json(&self) -> String {
        self.inner.to_json_string()
    }

    fn __repr__(&self) -> String {
        format!("NameMapping({})", self.inner.to_json_string())
    }
}
