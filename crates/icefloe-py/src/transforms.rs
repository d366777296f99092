//! Partition transforms for Python: vectorized over pyarrow arrays (zero-copy through the
//! Arrow C data interface) and over JSON single values (used by the CLI).

use arrow::array::{make_array, ArrayData};
use arrow::datatypes::DataType;
use arrow::pyarrow::{FromPyArrow, PyArrowType, ToPyArrow};
use icefloe::arrow::{
    arrow_type_to_iceberg, iceberg_to_arrow_type, transform_array, transform_result_arrow_type,
};
use icefloe::spec::{Literal, PrimitiveType, Transform, Type};
use icefloe::Error;
use pyo3::prelude::*;

use crate::error::IntoPyResult;

/// Parses an Iceberg primitive type string (`"long"`, `"decimal(9, 2)"`).
pub fn parse_primitive(s: &str) -> icefloe::Result<PrimitiveType> {
    PrimitiveType::parse(s)
        .ok_or_else(|| Error::invalid_argument(format!("'{s}' is not an Iceberg primitive type")))
}

fn parse_transform(s: &str) -> icefloe::Result<Transform> {
    s.parse::<Transform>()
}

/// The source type: the given string, or derived from the Arrow type.
fn source_of(source_type: Option<&str>, data_type: &DataType) -> icefloe::Result<PrimitiveType> {
    match source_type {
        Some(s) => parse_primitive(s),
        None => arrow_type_to_iceberg(data_type),
    }
}

/// Applies a transform to a pyarrow array; returns a pyarrow array.
#[pyfunction]
#[pyo3(name = "transform_array", signature = (transform, array, source_type = None))]
pub fn transform_array_py(
    py: Python<'_>,
    transform: &str,
    array: &Bound<'_, PyAny>,
    source_type: Option<&str>,
) -> PyResult<Py<PyAny>> {
    let data = ArrayData::from_pyarrow_bound(array)?;
    let input = make_array(data);
    let out = py
        .detach(|| {
            let t = parse_transform(transform)?;
            let source = source_of(source_type, input.data_type())?;
            transform_array(&t, &source, input.as_ref())
        })
        .py(py)?;
    Ok(out.to_data().to_pyarrow(py)?.unbind())
}

/// The Arrow type `transform_array` returns for an input of `arrow_type`.
#[pyfunction]
#[pyo3(name = "transform_result_arrow_type", signature = (transform, arrow_type, source_type = None))]
pub fn transform_result_arrow_type_py(
    py: Python<'_>,
    transform: &str,
    arrow_type: PyArrowType<DataType>,
    source_type: Option<&str>,
) -> PyResult<PyArrowType<DataType>> {
    let t = parse_transform(transform).py(py)?;
    // validate the source type the same way transform_array does
    let source = source_of(source_type, &arrow_type.0).py(py)?;
    t.result_type(&Type::Primitive(source)).py(py)?;
    Ok(PyArrowType(transform_result_arrow_type(&t, &arrow_type.0)))
}

/// The Arrow type for values of an Iceberg primitive type.
#[pyfunction]
pub fn arrow_type(py: Python<'_>, source_type: &str) -> PyResult<PyArrowType<DataType>> {
    let p = parse_primitive(source_type).py(py)?;
    Ok(PyArrowType(iceberg_to_arrow_type(&p).py(py)?))
}

/// The Iceberg type string for an Arrow type.
#[pyfunction]
pub fn iceberg_type_of(py: Python<'_>, arrow_type: PyArrowType<DataType>) -> PyResult<String> {
    Ok(arrow_type_to_iceberg(&arrow_type.0).py(py)?.to_string())
}

/// Applies a transform to values given in their JSON single-value form (Appendix D);
/// returns the results in the same form (`"null"` for null).
#[pyfunction]
pub fn transform_json(
    py: Python<'_>,
    transform: &str,
    source_type: &str,
    values: Vec<String>,
) -> PyResult<Vec<String>> {
    py.detach(|| -> icefloe::Result<Vec<String>> {
        let t = parse_transform(transform)?;
        let source = parse_primitive(source_type)?;
        let source_type = Type::Primitive(source.clone());
        let result_type = t.result_type(&source_type)?;
        values
            .iter()
            .map(|text| {
                let json = icefloe::spec::json::parse_text(text)?;
                let value = Literal::from_json_opt(&json, &source_type)?;
                let out = t.apply(value.as_ref(), &source)?;
                Ok(match out {
                    Some(v) => v.try_to_json(&result_type)?.to_string(),
                    None => "null".to_string(),
                })
            })
            .collect()
    })
    .py(py)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(transform_array_py, m)?)?;
    m.add_function(wrap_pyfunction!(transform_result_arrow_type_py, m)?)?;
    m.add_function(wrap_pyfunction!(arrow_type, m)?)?;
    m.add_function(wrap_pyfunction!(iceberg_type_of, m)?)?;
    m.add_function(wrap_pyfunction!(transform_json, m)?)?;
    Ok(())
}
