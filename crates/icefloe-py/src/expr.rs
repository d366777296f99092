//! Row-filter expressions for Python: the core `Expression` (unbound) and `BoundExpression`.
//! Values arrive from the Python layer (`icefloe.expressions`) as `(kind, payload)` pairs
//! already reduced to ints, strings and bytes; here they only become `Datum`s.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use icefloe::expr::{BoundExpression, Datum, Expression, Operation};
use icefloe::Error;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::error::IntoPyResult;
use crate::schema::PySchema;

/// An unbound boolean expression over the rows of a table (a row filter).
#[pyclass(frozen, module = "icefloe._native", name = "Expression")]
pub struct PyExpression {
    pub inner: Expression,
}

/// An expression bound to a schema: columns resolved to field ids, values converted to
/// the columns' types, NOT pushed into the predicates.
#[pyclass(frozen, module = "icefloe._native", name = "BoundExpression")]
pub struct PyBoundExpression {
    pub inner: BoundExpression,
}

fn wrap(inner: Expression) -> PyExpression {
    PyExpression { inner }
}

fn python_repr(py: Python<'_>, class: &str, text: &str) -> PyResult<String> {
    Ok(format!(
        "{class}({})",
        PyString::new(py, text).repr()?.to_cow()?
    ))
}

/// A value from the Python layer: `kind` names the datum, `payload` is its plain form
/// (days for a date, microseconds for times and timestamps, decimal text, 16 bytes for a
/// UUID).
fn datum(kind: &str, payload: &Bound<'_, PyAny>) -> PyResult<icefloe::Result<Datum>> {
    Ok(Ok(match kind {
        "boolean" => Datum::Boolean(payload.extract()?),
        "long" => match payload.extract::<i64>() {
            Ok(v) => Datum::Long(v),
            Err(_) => {
                return Ok(Err(Error::invalid_argument(format!(
                    "the integer {payload} is out of the range of a long"
                ))))
            }
        },
        "double" => Datum::Double(payload.extract()?),
        "decimal" => return Ok(Datum::decimal(&payload.extract::<String>()?)),
        "string" => Datum::String(payload.extract()?),
        "date" => Datum::Date(payload.extract()?),
        "time" => Datum::Time(payload.extract()?),
        "timestamp" => Datum::Timestamp(payload.extract()?),
        "timestamp_ns" => Datum::TimestampNs(payload.extract()?),
        "uuid" => {
            let bytes: [u8; 16] = payload.extract()?;
            Datum::Uuid(u128::from_be_bytes(bytes))
        }
        "binary" => Datum::Binary(payload.extract()?),
        other => {
            return Ok(Err(Error::invalid_argument(format!(
                "unknown value kind '{other}'"
            ))))
        }
    }))
}

#[pymethods]
impl PyExpression {
    /// Parses a row filter (`Expression("id > 5")` is `Expression.parse("id > 5")`).
    #[new]
    fn new(py: Python<'_>, text: &str) -> PyResult<PyExpression> {
        Self::parse(py, text)
    }

    /// Parses a row filter such as `id > 5 and category in ('a', 'b')`.
    #[staticmethod]
    fn parse(py: Python<'_>, text: &str) -> PyResult<PyExpression> {
        py.detach(|| Expression::parse(text)).py(py).map(wrap)
    }

    /// Reads the JSON form (REST catalog / Java `ExpressionParser`); with a schema, values
    /// are read by their column's type.
    #[staticmethod]
    #[pyo3(signature = (text, schema = None))]
    fn from_json(py: Python<'_>, text: &str, schema: Option<&PySchema>) -> PyResult<PyExpression> {
        let schema = schema.map(|s| s.inner.clone());
        py.detach(|| {
            let value = icefloe::spec::json::parse_text(text)?;
            Expression::from_json(&value, schema.as_deref())
        })
        .py(py)
        .map(wrap)
    }

    #[staticmethod]
    fn always_true() -> PyExpression {
        wrap(Expression::True)
    }

    #[staticmethod]
    fn always_false() -> PyExpression {
        wrap(Expression::False)
    }

    /// A predicate: `op` is its JSON name (`lt`, `not-in`, `is-null`, ...), `values` are
    /// `(kind, payload)` pairs.
    #[staticmethod]
    fn predicate(
        py: Python<'_>,
        op: &str,
        term: &str,
        values: Vec<(String, Bound<'_, PyAny>)>,
    ) -> PyResult<PyExpression> {
        let op = Operation::from_json_name(op)
            .ok_or_else(|| Error::invalid_argument(format!("unknown operation '{op}'")))
            .py(py)?;
        let values = values
            .iter()
            .map(|(kind, payload)| datum(kind, payload)?.py(py))
            .collect::<PyResult<Vec<Datum>>>()?;
        Ok(wrap(Expression::predicate(op, term, values)))
    }

    fn to_json(&self) -> String {
        self.inner.to_json().to_string()
    }

    /// The column names this expression refers to, in order of first use.
    fn references(&self) -> Vec<String> {
        self.inner
            .references()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// Binds to `schema`: raises `NotFoundError` for an unknown column and
    /// `InvalidArgumentError` for a value that does not fit its column.
    #[pyo3(signature = (schema, case_sensitive = true))]
    fn bind(
        &self,
        py: Python<'_>,
        schema: &PySchema,
        case_sensitive: bool,
    ) -> PyResult<PyBoundExpression> {
        let schema = schema.inner.clone();
        py.detach(|| self.inner.bind(&schema, case_sensitive))
            .py(py)
            .map(|inner| PyBoundExpression { inner })
    }

    /// The same expression with NOT pushed into the predicates.
    fn rewrite_not(&self) -> PyExpression {
        wrap(self.inner.clone().rewrite_not())
    }

    fn __and__(&self, other: &PyExpression) -> PyExpression {
        wrap(Expression::and(self.inner.clone(), other.inner.clone()))
    }

    fn __or__(&self, other: &PyExpression) -> PyExpression {
        wrap(Expression::or(self.inner.clone(), other.inner.clone()))
    }

    fn __invert__(&self) -> PyExpression {
        wrap(Expression::not(self.inner.clone()))
    }

    /// Refuses `and`/`or`/`not`/`if` on expressions, which would silently pick one side.
    fn __bool__(&self) -> PyResult<bool> {
        Err(PyTypeError::new_err(
            "an Expression has no truth value: combine expressions with &, | and ~ \
             (not 'and', 'or', 'not')",
        ))
    }

    fn __eq__(&self, other: &PyExpression) -> bool {
        self.inner == other.inner
    }

    fn __hash__(&self) -> u64 {
        // equal expressions print the same
        let mut h = DefaultHasher::new();
        self.inner.to_string().hash(&mut h);
        h.finish()
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        python_repr(py, "Expression", &self.inner.to_string())
    }
}

#[pymethods]
impl PyBoundExpression {
    /// The JSON form, values in their column's single-value JSON form (as Java writes
    /// bound expressions).
    fn to_json(&self) -> String {
        self.inner.to_json().to_string()
    }

    /// The field ids this expression refers to, sorted.
    fn field_ids(&self) -> Vec<i32> {
        self.inner.field_ids()
    }

    /// The expression unbound again, on the names it was bound with.
    fn unbind(&self) -> PyExpression {
        wrap(self.inner.unbind())
    }

    fn __eq__(&self, other: &PyBoundExpression) -> bool {
        self.inner == other.inner
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        python_repr(py, "BoundExpression", &self.inner.to_string())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyExpression>()?;
    m.add_class::<PyBoundExpression>()?;
    Ok(())
}
