//! Bindings of `icefloe::commit`: conversions only.

use std::sync::Arc;

use icefloe::catalog::TableState;
use icefloe::commit::MetadataBuilder;
use icefloe::spec::json::parse_text;
use icefloe::spec::partition::PartitionSpec;
use icefloe::spec::sort::SortOrder;
use icefloe::spec::table_metadata::TableMetadata;
use icefloe::spec::Schema;
use pyo3::prelude::*;

use crate::error::IntoPyResult;

/// The metadata JSON of a new table (`MetadataBuilder::new_table`) from the JSON of a
/// schema, a partition spec and a sort order that refer to the schema's field ids.
#[pyfunction]
#[pyo3(signature = (schema_json, spec_json, sort_order_json, location, properties, format_version = None))]
fn new_table_metadata_json(
    py: Python<'_>,
    schema_json: &str,
    spec_json: &str,
    sort_order_json: &str,
    location: &str,
    properties: Vec<(String, String)>,
    format_version: Option<i32>,
) -> PyResult<String> {
    let built = (|| {
        let schema = Schema::from_json(&parse_text(schema_json)?, "schema")?;
        let v = format_version.unwrap_or(icefloe::MAX_FORMAT_VERSION);
        let spec = PartitionSpec::from_json(&parse_text(spec_json)?, "spec", v)?;
        let order = SortOrder::from_json(&parse_text(sort_order_json)?, "sort-order")?;
        MetadataBuilder::new_table(
            &schema,
            &spec,
            &order,
            location,
            &properties,
            format_version,
        )?
        .build()
    })()
    .py(py)?;
    Ok(built.to_json_string(true))
}

/// The metadata JSON of a create-or-replace of the table whose metadata file
/// `base_location` holds `base_json` (`MetadataBuilder::replace`).
#[pyfunction]
#[pyo3(signature = (base_json, base_location, schema_json, spec_json, sort_order_json, location, properties, format_version = None))]
#[allow(clippy::too_many_arguments)]
fn replace_table_metadata_json(
    py: Python<'_>,
    base_json: &str,
    base_location: &str,
    schema_json: &str,
    spec_json: &str,
    sort_order_json: &str,
    location: &str,
    properties: Vec<(String, String)>,
    format_version: Option<i32>,
) -> PyResult<String> {
    let built = (|| {
        let base = TableMetadata::from_json_str(base_json)?;
        let schema = Schema::from_json(&parse_text(schema_json)?, "schema")?;
        let spec = PartitionSpec::from_json(&parse_text(spec_json)?, "spec", base.format_version)?;
        let order = SortOrder::from_json(&parse_text(sort_order_json)?, "sort-order")?;
        let state = TableState {
            metadata_location: base_location.to_string(),
            metadata: Arc::new(base),
        };
        MetadataBuilder::replace(
            &state,
            &schema,
            &spec,
            &order,
            location,
            &properties,
            format_version,
        )?
        .build()
    })()
    .py(py)?;
    Ok(built.to_json_string(true))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(new_table_metadata_json, m)?)?;
    m.add_function(wrap_pyfunction!(replace_table_metadata_json, m)?)?;
    Ok(())
}
