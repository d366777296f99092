//! `UpdatePartitionSpec` and `ReplaceSortOrder`: partition evolution and sort order
//! changes from Python. Transforms are given as their spec strings (`"bucket[16]"`,
//! `"day"`), null orders as `"nulls-first"` / `"nulls-last"`.

use std::sync::Mutex;

use icefloe::spec::partition_update::UpdatePartitionSpec;
use icefloe::spec::sort::NullOrder;
use icefloe::spec::sort_update::ReplaceSortOrder;
use icefloe::spec::Transform;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::error::IntoPyResult;
use crate::metadata::{PyPartitionSpec, PySortOrder};
use crate::schema::PySchema;

fn parse_transform(py: Python<'_>, text: &str) -> PyResult<Transform> {
    text.parse::<Transform>().py(py)
}

fn parse_null_order(py: Python<'_>, text: &str) -> PyResult<NullOrder> {
    NullOrder::parse(text).ok_or_else(|| {
        crate::error::to_py(
            py,
            icefloe::Error::invalid_argument(format!(
                "'{text}' is not a null order (nulls-first or nulls-last)"
            )),
        )
    })
}

fn lock<'a, T>(m: &'a Mutex<T>, what: &str) -> PyResult<std::sync::MutexGuard<'a, T>> {
    m.lock()
        .map_err(|_| PyRuntimeError::new_err(format!("{what} was poisoned by a panic")))
}

#[pyclass(module = "icefloe._native", name = "UpdatePartitionSpec")]
pub struct PyUpdatePartitionSpec {
    inner: Mutex<UpdatePartitionSpec>,
}

impl PyUpdatePartitionSpec {
    fn with<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut UpdatePartitionSpec) -> icefloe::Result<T>,
    ) -> PyResult<T> {
        let mut guard = lock(&self.inner, "UpdatePartitionSpec")?;
        f(&mut guard).py(py)
    }
}

#[pymethods]
impl PyUpdatePartitionSpec {
    #[new]
    #[pyo3(signature = (format_version, schema, spec, specs, last_partition_id, case_sensitive=true))]
    fn new(
        py: Python<'_>,
        format_version: i32,
        schema: &PySchema,
        spec: &PyPartitionSpec,
        specs: Vec<PyRef<'_, PyPartitionSpec>>,
        last_partition_id: i32,
        case_sensitive: bool,
    ) -> PyResult<Self> {
        let specs: Vec<_> = specs.iter().map(|s| s.inner.clone()).collect();
        let mut u = UpdatePartitionSpec::new(
            format_version,
            &schema.inner,
            &spec.inner,
            &specs,
            last_partition_id,
        )
        .py(py)?;
        u.case_sensitive(case_sensitive);
        Ok(PyUpdatePartitionSpec {
            inner: Mutex::new(u),
        })
    }

    fn case_sensitive(&self, py: Python<'_>, case_sensitive: bool) -> PyResult<()> {
        self.with(py, |u| {
            u.case_sensitive(case_sensitive);
            Ok(())
        })
    }

    #[pyo3(signature = (source, transform="identity", name=None))]
    fn add_field(
        &self,
        py: Python<'_>,
        source: &str,
        transform: &str,
        name: Option<&str>,
    ) -> PyResult<()> {
        let t = parse_transform(py, transform)?;
        self.with(py, |u| u.add_field(source, t, name).map(|_| ()))
    }

    fn add_identity(&self, py: Python<'_>, source: &str) -> PyResult<()> {
        self.with(py, |u| u.add_identity(source).map(|_| ()))
    }

    fn remove_field(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.with(py, |u| u.remove_field(name).map(|_| ()))
    }

    fn remove_field_by_term(&self, py: Python<'_>, source: &str, transform: &str) -> PyResult<()> {
        let t = parse_transform(py, transform)?;
        self.with(py, |u| u.remove_field_by_term(source, t).map(|_| ()))
    }

    fn rename_field(&self, py: Python<'_>, name: &str, new_name: &str) -> PyResult<()> {
        self.with(py, |u| u.rename_field(name, new_name).map(|_| ()))
    }

    /// The table's `last-partition-id` after the pending changes.
    #[getter]
    fn last_partition_id(&self, py: Python<'_>) -> PyResult<i32> {
        self.with(py, |u| Ok(u.last_partition_id()))
    }

    /// The next spec's fields (spec id 0: the table metadata assigns the real one).
    fn apply(&self, py: Python<'_>) -> PyResult<PyPartitionSpec> {
        let inner = self.with(py, |u| u.apply())?;
        Ok(PyPartitionSpec { inner })
    }
}

#[pyclass(module = "icefloe._native", name = "ReplaceSortOrder")]
pub struct PyReplaceSortOrder {
    inner: Mutex<ReplaceSortOrder>,
}

impl PyReplaceSortOrder {
    fn with<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut ReplaceSortOrder) -> icefloe::Result<T>,
    ) -> PyResult<T> {
        let mut guard = lock(&self.inner, "ReplaceSortOrder")?;
        f(&mut guard).py(py)
    }
}

#[pymethods]
impl PyReplaceSortOrder {
    #[new]
    #[pyo3(signature = (schema, case_sensitive=true))]
    fn new(schema: &PySchema, case_sensitive: bool) -> Self {
        let mut r = ReplaceSortOrder::new(&schema.inner);
        r.case_sensitive(case_sensitive);
        PyReplaceSortOrder {
            inner: Mutex::new(r),
        }
    }

    fn case_sensitive(&self, py: Python<'_>, case_sensitive: bool) -> PyResult<()> {
        self.with(py, |r| {
            r.case_sensitive(case_sensitive);
            Ok(())
        })
    }

    #[pyo3(signature = (source, transform="identity", null_order="nulls-first"))]
    fn asc(&self, py: Python<'_>, source: &str, transform: &str, null_order: &str) -> PyResult<()> {
        let t = parse_transform(py, transform)?;
        let n = parse_null_order(py, null_order)?;
        self.with(py, |r| r.asc(source, t, n).map(|_| ()))
    }

    #[pyo3(signature = (source, transform="identity", null_order="nulls-last"))]
    fn desc(
        &self,
        py: Python<'_>,
        source: &str,
        transform: &str,
        null_order: &str,
    ) -> PyResult<()> {
        let t = parse_transform(py, transform)?;
        let n = parse_null_order(py, null_order)?;
        self.with(py, |r| r.desc(source, t, n).map(|_| ()))
    }

    /// The new order (id 1, or the unsorted order 0 when no field was added; the table
    /// metadata assigns the real id).
    fn apply(&self, py: Python<'_>) -> PyResult<PySortOrder> {
        let inner = self.with(py, |r| r.apply())?;
        Ok(PySortOrder { inner })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyUpdatePartitionSpec>()?;
    m.add_class::<PyReplaceSortOrder>()
}
