//! Spec rules and wire names the Python package takes from Rust instead of restating them:
//! where new files go (Java's location providers), the reserved field ids, single values
//! in their JSON form (Appendix D) as Arrow arrays, the schema metadata keys of the plan
//! and of written data-file rows, the isolation levels, and the default names of a new
//! table's partition fields. Each is defined once, in the `icefloe` crate (or, for the key
//! of the data-file rows, here), so the two languages cannot drift apart.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayData, ArrayRef, ListArray, MapArray, StructArray};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::DataType;
use arrow::error::ArrowError;
use arrow::pyarrow::PyArrowType;
use icefloe::arrow::{literals_to_array, schema_to_arrow, PARQUET_FIELD_ID};
use icefloe::commit::snapshot::validate::IsolationLevel;
use icefloe::scan::plan_batches;
use icefloe::spec::json::parse_text;
use icefloe::spec::partition::{default_field_name, PARTITION_DATA_ID_START};
use icefloe::spec::schema::reserved;
use icefloe::spec::{Literal, NestedField, PrimitiveType, Schema, Transform, Type};
use icefloe::write::location::LocationProvider;
use icefloe::Error;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::error::IntoPyResult;
use crate::metadata::PyTableMetadata;

/// Schema metadata key of the data-file rows a write returns (`write_data_files`): the
/// partition spec id of the rows, which the driver's commit needs.
pub const SPEC_ID_KEY: &str = "icefloe.spec-id";

/// Java's `LocationProvider` of a table (1.11's `LocationProviders`): where new data and
/// delete files go. `overrides` replace table properties for one write (Spark write
/// options); `data_location` replaces the configured data location. The deprecated
/// `write.folder-storage.path` and `write.object-storage.path` are refused here, when the
/// provider is made, as Java refuses them.
#[pyclass(name = "LocationProvider", module = "icefloe._native", frozen)]
pub struct PyLocationProvider {
    inner: LocationProvider,
}

#[pymethods]
impl PyLocationProvider {
    #[new]
    #[pyo3(signature = (metadata, overrides = None, data_location = None))]
    fn new(
        py: Python<'_>,
        metadata: &PyTableMetadata,
        overrides: Option<HashMap<String, String>>,
        data_location: Option<&str>,
    ) -> PyResult<Self> {
        let overrides = overrides.unwrap_or_default();
        let mut properties: Vec<(String, String)> = metadata
            .inner
            .properties
            .iter()
            .filter(|(k, _)| !overrides.contains_key(k))
            .cloned()
            .collect();
        let mut extra: Vec<(String, String)> = overrides.into_iter().collect();
        extra.sort();
        properties.extend(extra);
        let inner =
            LocationProvider::new(&metadata.inner.location, &properties, data_location).py(py)?;
        Ok(PyLocationProvider { inner })
    }

    /// The directory every new file goes under (hash directories and partition paths
    /// below it).
    #[getter]
    fn data_location(&self) -> &str {
        self.inner.data_location()
    }

    /// The location of a new file named `file_name` in the partition at `partition_path`
    /// (empty: unpartitioned, as Java's `newDataLocation(filename)`).
    #[pyo3(signature = (file_name, partition_path = ""))]
    fn new_data_location(&self, file_name: &str, partition_path: &str) -> String {
        self.inner.new_data_location(partition_path, file_name)
    }

    fn __repr__(&self) -> String {
        format!("LocationProvider({})", self.inner.data_location())
    }
}

/// An Arrow array of values of an Iceberg type given in their single-value JSON form
/// (Appendix D; `"null"` for null), e.g. `initial-default`s and the literals of a bound
/// expression. `type_json` is the type's JSON form (`"\"long\""`, a struct object); the
/// array has the Arrow type `data_file_arrow_schema` gives the type (nested field ids in
/// `PARQUET:field_id`).
#[pyfunction]
fn single_values_to_arrow(
    py: Python<'_>,
    type_json: &str,
    values: Vec<String>,
) -> PyResult<PyArrowType<ArrayData>> {
    let array = py
        .detach(|| -> icefloe::Result<ArrayRef> {
            let ty = Type::from_json(&parse_text(type_json)?, "type")?;
            let literals = values
                .iter()
                .map(|text| Literal::from_json_opt(&parse_text(text)?, &ty))
                .collect::<icefloe::Result<Vec<_>>>()?;
            // the Arrow type of a field of this type, as data files are written
            let wrapper = Schema::new(
                0,
                vec![NestedField::optional(i32::MAX, "v", ty.clone())],
                vec![],
            )?;
            let arrow_schema = schema_to_arrow(&wrapper)?;
            let data_type = arrow_schema.field(0).data_type().clone();
            let refs: Vec<Option<&Literal>> = literals.iter().map(Option::as_ref).collect();
            array_of(&refs, &ty, &data_type)
        })
        .py(py)?;
    Ok(PyArrowType(array.to_data()))
}

fn arrow_error(ty: &Type) -> impl Fn(ArrowError) -> Error + '_ {
    move |e| Error::invalid_argument(format!("values do not fit {ty}: {e}"))
}

fn mismatch(ty: &Type, v: &Literal) -> Error {
    Error::invalid_argument(format!("value {v} is not of type {ty}"))
}

fn validity(values: &[Option<&Literal>]) -> Option<NullBuffer> {
    values
        .iter()
        .any(Option::is_none)
        .then(|| NullBuffer::from(values.iter().map(Option::is_some).collect::<Vec<bool>>()))
}

fn offsets(lengths: &[usize]) -> OffsetBuffer<i32> {
    OffsetBuffer::<i32>::from_lengths(lengths.iter().copied())
}

/// The array of `values` of `ty` in `data_type` (what `schema_to_arrow` makes of `ty`).
fn array_of(
    values: &[Option<&Literal>],
    ty: &Type,
    data_type: &DataType,
) -> icefloe::Result<ArrayRef> {
    match (ty, data_type) {
        (Type::Primitive(p), _) => literals_to_array(values, p),
        (Type::Struct(st), DataType::Struct(fields)) => {
            let mut children = Vec::with_capacity(st.fields.len());
            for (f, arrow_field) in st.fields.iter().zip(fields.iter()) {
                let column = values
                    .iter()
                    .map(|v| match v {
                        None => Ok(None),
                        Some(Literal::Struct(fs)) => Ok(fs
                            .iter()
                            .find(|(id, _)| *id == f.id)
                            .and_then(|(_, l)| l.as_ref())),
                        Some(other) => Err(mismatch(ty, other)),
                    })
                    .collect::<icefloe::Result<Vec<_>>>()?;
                children.push(array_of(&column, &f.field_type, arrow_field.data_type())?);
            }
            let array = StructArray::try_new(fields.clone(), children, validity(values))
                .map_err(arrow_error(ty))?;
            Ok(Arc::new(array))
        }
        (Type::List(l), DataType::List(element)) => {
            let mut lengths = Vec::with_capacity(values.len());
            let mut items = Vec::new();
            for v in values {
                match v {
                    None => lengths.push(0),
                    Some(Literal::List(xs)) => {
                        lengths.push(xs.len());
                        items.extend(xs.iter().map(Option::as_ref));
                    }
                    Some(other) => return Err(mismatch(ty, other)),
                }
            }
            let child = array_of(&items, &l.element_field.field_type, element.data_type())?;
            let array =
                ListArray::try_new(element.clone(), offsets(&lengths), child, validity(values))
                    .map_err(arrow_error(ty))?;
            Ok(Arc::new(array))
        }
        (Type::Map(m), DataType::Map(entries, sorted)) => {
            let DataType::Struct(entry_fields) = entries.data_type() else {
                return Err(Error::invalid_argument(format!(
                    "no Arrow map entries for {ty}"
                )));
            };
            let (Some(key_field), Some(value_field)) = (entry_fields.first(), entry_fields.get(1))
            else {
                return Err(Error::invalid_argument(format!(
                    "no Arrow map entries for {ty}"
                )));
            };
            let mut lengths = Vec::with_capacity(values.len());
            let (mut keys, mut items) = (Vec::new(), Vec::new());
            for v in values {
                match v {
                    None => lengths.push(0),
                    Some(Literal::Map(kvs)) => {
                        lengths.push(kvs.len());
                        for (k, x) in kvs {
                            keys.push(Some(k));
                            items.push(x.as_ref());
                        }
                    }
                    Some(other) => return Err(mismatch(ty, other)),
                }
            }
            let key_array = array_of(&keys, &m.key_field.field_type, key_field.data_type())?;
            let value_array = array_of(&items, &m.value_field.field_type, value_field.data_type())?;
            let entry_array =
                StructArray::try_new(entry_fields.clone(), vec![key_array, value_array], None)
                    .map_err(arrow_error(ty))?;
            let array = MapArray::try_new(
                entries.clone(),
                offsets(&lengths),
                entry_array,
                validity(values),
                *sorted,
            )
            .map_err(arrow_error(ty))?;
            Ok(Arc::new(array))
        }
        _ => Err(Error::unsupported(format!(
            "values of type {ty} cannot be made into an Arrow array"
        ))),
    }
}

/// The isolation level `name` as the commit reads it (`"serializable"` or `"snapshot"`,
/// in any case, as Java's `IsolationLevel.fromName`); anything else is an
/// `InvalidArgumentError`.
#[pyfunction]
fn isolation_level(py: Python<'_>, name: &str) -> PyResult<&'static str> {
    Ok(match IsolationLevel::parse(name).py(py)? {
        IsolationLevel::Serializable => "serializable",
        IsolationLevel::Snapshot => "snapshot",
    })
}

/// The name Java's `PartitionSpec.Builder` gives a new table's partition field on
/// `column` with `transform` (`id_bucket`, `ts_day`, ...).
#[pyfunction]
fn default_partition_field_name(py: Python<'_>, column: &str, transform: &str) -> PyResult<String> {
    let t: Transform = transform.parse().py(py)?;
    Ok(default_field_name(column, &t))
}

/// The name and parameters of a primitive type string of Appendix C: `("decimal", [9, 2])`,
/// `("fixed", [16])`, `("long", [])`; `None` for a string that is not a primitive type.
#[pyfunction]
fn primitive_type_parameters(text: &str) -> Option<(String, Vec<u64>)> {
    Some(match PrimitiveType::parse(text)? {
        PrimitiveType::Decimal { precision, scale } => (
            "decimal".to_string(),
            vec![u64::from(precision), u64::from(scale)],
        ),
        PrimitiveType::Fixed(length) => ("fixed".to_string(), vec![length]),
        other => (other.to_string(), Vec::new()),
    })
}

fn add_bytes(m: &Bound<'_, PyModule>, name: &str, value: &str) -> PyResult<()> {
    m.add(name, PyBytes::new(m.py(), value.as_bytes()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLocationProvider>()?;
    m.add_function(wrap_pyfunction!(single_values_to_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(isolation_level, m)?)?;
    m.add_function(wrap_pyfunction!(default_partition_field_name, m)?)?;
    m.add_function(wrap_pyfunction!(primitive_type_parameters, m)?)?;

    let ids = PyDict::new(m.py());
    for (id, name, _) in reserved::COLUMNS {
        ids.set_item(*name, *id)?;
    }
    m.add("RESERVED_FIELD_IDS", ids)?;
    let types = PyDict::new(m.py());
    for (_, name, ty) in reserved::COLUMNS {
        types.set_item(*name, *ty)?;
    }
    m.add("RESERVED_FIELD_TYPES", types)?;
    m.add("PARTITION_DATA_ID_START", PARTITION_DATA_ID_START)?;
    // the plan columns a row-level writer takes a data file's deletes from
    m.add(
        "SCANNED_DELETES_COLUMNS",
        PyTuple::new(m.py(), icefloe::write::scanned_deletes::COLUMNS)?,
    )?;

    add_bytes(m, "PARQUET_FIELD_ID", PARQUET_FIELD_ID)?;
    add_bytes(m, "SNAPSHOT_ID_KEY", plan_batches::SNAPSHOT_ID_KEY)?;
    add_bytes(m, "SCHEMA_KEY", plan_batches::SCHEMA_KEY)?;
    add_bytes(
        m,
        "PROJECTED_SCHEMA_KEY",
        plan_batches::PROJECTED_SCHEMA_KEY,
    )?;
    add_bytes(m, "SPECS_KEY", plan_batches::SPECS_KEY)?;
    add_bytes(m, "RESIDUALS_KEY", plan_batches::RESIDUALS_KEY)?;
    add_bytes(m, "FILTER_KEY", plan_batches::FILTER_KEY)?;
    add_bytes(m, "NAME_MAPPING_KEY", plan_batches::NAME_MAPPING_KEY)?;
    add_bytes(m, "FORMAT_VERSION_KEY", plan_batches::FORMAT_VERSION_KEY)?;
    add_bytes(m, "SPEC_ID_KEY", SPEC_ID_KEY)?;
    Ok(())
}
