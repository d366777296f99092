//! Python views of schemas and fields. Each wraps the core value; getters convert on demand.

use std::sync::Arc;

use icefloe::spec::{NestedField, Schema, Type};
use pyo3::prelude::*;

use crate::error::IntoPyResult;
use crate::json_to_py;

/// A field of a schema (or a list element, map key or map value).
#[pyclass(frozen, module = "icefloe._native", name = "NestedField")]
pub struct PyNestedField {
    pub inner: NestedField,
}

#[pymethods]
impl PyNestedField {
    #[getter]
    fn id(&self) -> i32 {
        self.inner.id
    }

    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }

    #[getter]
    fn required(&self) -> bool {
        self.inner.required
    }

    /// The type as its spec string (`"long"`, `"decimal(9, 2)"`, `"struct<...>"`).
    #[getter]
    fn field_type(&self) -> String {
        self.inner.field_type.to_string()
    }

    /// The type as Appendix C JSON (a string for primitives, an object for nested types).
    fn type_json(&self) -> String {
        self.inner.field_type.to_json().to_string()
    }

    #[getter]
    fn doc(&self) -> Option<&str> {
        self.inner.doc.as_deref()
    }

    /// The `initial-default` in its JSON single-value form, decoded to Python (or None).
    #[getter]
    fn initial_default(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match &self.inner.initial_default {
            Some(v) => json_to_py(py, &v.to_json(&self.inner.field_type)),
            None => Ok(py.None()),
        }
    }

    /// The `write-default` in its JSON single-value form, decoded to Python (or None).
    #[getter]
    fn write_default(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match &self.inner.write_default {
            Some(v) => json_to_py(py, &v.to_json(&self.inner.field_type)),
            None => Ok(py.None()),
        }
    }

    /// Child fields: struct fields, a list's element, a map's key and value; else empty.
    #[getter]
    fn fields(&self) -> Vec<PyNestedField> {
        children(&self.inner.field_type)
    }

    fn to_json(&self) -> String {
        self.inner.to_json().to_string()
    }

    fn __repr__(&self) -> String {
        let req = if self.inner.required {
            "required"
        } else {
            "optional"
        };
        format!(
            "NestedField(id={}, name={:?}, {req}, type={})",
            self.inner.id, self.inner.name, self.inner.field_type
        )
    }
}

fn children(t: &Type) -> Vec<PyNestedField> {
    let fields: Vec<NestedField> = match t {
        Type::Struct(s) => s.fields.clone(),
        Type::List(l) => vec![l.element_field.clone()],
        Type::Map(m) => vec![m.key_field.clone(), m.value_field.clone()],
        Type::Primitive(_) | Type::Variant => Vec::new(),
    };
    fields
        .into_iter()
        .map(|inner| PyNestedField { inner })
        .collect()
}

/// A table schema.
#[pyclass(frozen, module = "icefloe._native", name = "Schema")]
pub struct PySchema {
    pub inner: Arc<Schema>,
}

#[pymethods]
impl PySchema {
    /// Parses a schema from its Appendix C JSON.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str) -> PyResult<PySchema> {
        let value = icefloe::spec::json::parse_text(text).py(py)?;
        let schema = Schema::from_json(&value, "").py(py)?;
        Ok(PySchema {
            inner: Arc::new(schema),
        })
    }

    #[getter]
    fn schema_id(&self) -> i32 {
        self.inner.schema_id()
    }

    #[getter]
    fn identifier_field_ids(&self) -> Vec<i32> {
        self.inner.identifier_field_ids().to_vec()
    }

    #[getter]
    fn fields(&self) -> Vec<PyNestedField> {
        self.inner
            .fields()
            .iter()
            .map(|f| PyNestedField { inner: f.clone() })
            .collect()
    }

    #[getter]
    fn highest_field_id(&self) -> i32 {
        self.inner.highest_field_id()
    }

    /// The field with this full dotted name (`location.lat`), or None.
    #[pyo3(signature = (name, case_sensitive = true))]
    fn find_field(&self, name: &str, case_sensitive: bool) -> Option<PyNestedField> {
        self.inner
            .field_by_name(name, case_sensitive)
            .map(|f| PyNestedField { inner: f.clone() })
    }

    /// The field with this id at any depth, or None.
    fn field_by_id(&self, id: i32) -> Option<PyNestedField> {
        self.inner
            .field_by_id(id)
            .map(|f| PyNestedField { inner: f.clone() })
    }

    /// The full dotted name of the field with this id, or None.
    fn name_by_id(&self, id: i32) -> Option<String> {
        self.inner.name_by_id(id).map(str::to_string)
    }

    /// Every field as `(id, full dotted name)`, sorted by id.
    fn column_names(&self) -> Vec<(i32, String)> {
        self.inner
            .field_names()
            .into_iter()
            .map(|(id, n)| (id, n.to_string()))
            .collect()
    }

    fn to_json(&self) -> String {
        self.inner.to_json().to_string()
    }

    fn __eq__(&self, other: &PySchema) -> bool {
        *self.inner == *other.inner
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "Schema(schema_id={}, {} fields)\n{}",
            self.inner.schema_id(),
            self.inner.fields().len(),
            self.inner
        )
    }
}
