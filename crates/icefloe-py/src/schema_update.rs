//! `UpdateSchema`: schema evolution from Python. Types are given as type strings (`"long"`,
//! `"decimal(9, 2)"`) or type JSON (nested types); defaults as their JSON single-value form.

use std::sync::Mutex;

use icefloe::spec::schema_update::UpdateSchema;
use icefloe::spec::{Literal, PrimitiveType, Type};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::error::IntoPyResult;
use crate::schema::PySchema;

#[pyclass(module = "icefloe._native", name = "UpdateSchema")]
pub struct PyUpdateSchema {
    inner: Mutex<UpdateSchema>,
}

fn parse_type(py: Python<'_>, text: &str) -> PyResult<Type> {
    let value = if text.trim_start().starts_with('{') {
        icefloe::spec::json::parse_text(text).py(py)?
    } else {
        serde_json::Value::String(text.to_string())
    };
    Type::from_json(&value, "type").py(py)
}

fn parse_primitive(py: Python<'_>, text: &str) -> PyResult<PrimitiveType> {
    match parse_type(py, text)? {
        Type::Primitive(p) => Ok(p),
        other => Err(crate::error::to_py(
            py,
            icefloe::Error::invalid_argument(format!(
                "a column's type can only change to a primitive type, not {other}"
            )),
        )),
    }
}

fn parse_default(py: Python<'_>, json: Option<&str>, t: &Type) -> PyResult<Option<Literal>> {
    match json {
        None => Ok(None),
        Some(text) => {
            let value = icefloe::spec::json::parse_text(text).py(py)?;
            Literal::from_json_opt(&value, t).py(py)
        }
    }
}

impl PyUpdateSchema {
    fn with<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut UpdateSchema) -> icefloe::Result<T>,
    ) -> PyResult<T> {
        let mut guard = self
            .inner
            .lock()
            .map_err(|_| PyRuntimeError::new_err("UpdateSchema was poisoned by a panic"))?;
        f(&mut guard).py(py)
    }

    /// A copy of the pending changes (for a transaction to commit).
    pub(crate) fn pending(&self, py: Python<'_>) -> PyResult<UpdateSchema> {
        self.with(py, |u| Ok(u.clone()))
    }

    /// The current type of a column (after pending changes), to convert a default for it.
    fn column_type(&self, py: Python<'_>, name: &str) -> PyResult<Option<Type>> {
        self.with(py, |u| {
            Ok(u.pending_field(name).map(|f| f.field_type.clone()))
        })
    }
}

#[pymethods]
impl PyUpdateSchema {
    #[new]
    #[pyo3(signature = (schema, last_column_id, *, case_sensitive=true, allow_incompatible_changes=false))]
    fn new(
        schema: &PySchema,
        last_column_id: i32,
        case_sensitive: bool,
        allow_incompatible_changes: bool,
    ) -> Self {
        let mut u = UpdateSchema::new(&schema.inner, last_column_id);
        u.case_sensitive(case_sensitive);
        if allow_incompatible_changes {
            u.allow_incompatible_changes();
        }
        PyUpdateSchema {
            inner: Mutex::new(u),
        }
    }

    #[pyo3(signature = (parent, name, field_type, *, doc=None, required=false, default_json=None))]
    #[allow(clippy::too_many_arguments)]
    fn add_column(
        &self,
        py: Python<'_>,
        parent: Option<&str>,
        name: &str,
        field_type: &str,
        doc: Option<&str>,
        required: bool,
        default_json: Option<&str>,
    ) -> PyResult<()> {
        let t = parse_type(py, field_type)?;
        let default = parse_default(py, default_json, &t)?;
        self.with(py, |u| {
            if required {
                u.add_required_column(parent, name, t, doc, default)?;
            } else {
                u.add_column(parent, name, t, doc, default)?;
            }
            Ok(())
        })
    }

    fn delete_column(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.with(py, |u| u.delete_column(name).map(|_| ()))
    }

    fn rename_column(&self, py: Python<'_>, name: &str, new_name: &str) -> PyResult<()> {
        self.with(py, |u| u.rename_column(name, new_name).map(|_| ()))
    }

    fn update_column(&self, py: Python<'_>, name: &str, new_type: &str) -> PyResult<()> {
        let p = parse_primitive(py, new_type)?;
        self.with(py, |u| u.update_column(name, p).map(|_| ()))
    }

    fn require_column(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.with(py, |u| u.require_column(name).map(|_| ()))
    }

    fn make_column_optional(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.with(py, |u| u.make_column_optional(name).map(|_| ()))
    }

    #[pyo3(signature = (name, doc=None))]
    fn update_column_doc(&self, py: Python<'_>, name: &str, doc: Option<&str>) -> PyResult<()> {
        self.with(py, |u| u.update_column_doc(name, doc).map(|_| ()))
    }

    #[pyo3(signature = (name, default_json=None))]
    fn update_column_default(
        &self,
        py: Python<'_>,
        name: &str,
        default_json: Option<&str>,
    ) -> PyResult<()> {
        let default = match self.column_type(py, name)? {
            Some(t) => parse_default(py, default_json, &t)?,
            None => None, // the update reports the missing column
        };
        self.with(py, |u| u.update_column_default(name, default).map(|_| ()))
    }

    fn move_first(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.with(py, |u| u.move_first(name).map(|_| ()))
    }

    fn move_before(&self, py: Python<'_>, name: &str, before: &str) -> PyResult<()> {
        self.with(py, |u| u.move_before(name, before).map(|_| ()))
    }

    fn move_after(&self, py: Python<'_>, name: &str, after: &str) -> PyResult<()> {
        self.with(py, |u| u.move_after(name, after).map(|_| ()))
    }

    fn set_identifier_fields(&self, py: Python<'_>, names: Vec<String>) -> PyResult<()> {
        self.with(py, |u| {
            u.set_identifier_fields(&names);
            Ok(())
        })
    }

    fn union_by_name(&self, py: Python<'_>, schema: &PySchema) -> PyResult<()> {
        self.with(py, |u| u.union_by_name(&schema.inner).map(|_| ()))
    }

    /// The table's `last-column-id` after the pending changes.
    #[getter]
    fn last_column_id(&self, py: Python<'_>) -> PyResult<i32> {
        self.with(py, |u| Ok(u.last_column_id()))
    }

    /// The schema with every pending change applied.
    fn apply(&self, py: Python<'_>) -> PyResult<PySchema> {
        let schema = self.with(py, |u| u.apply())?;
        Ok(PySchema {
            inner: std::sync::Arc::new(schema),
        })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyUpdateSchema>()
}
