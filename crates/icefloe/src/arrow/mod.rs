//! Arrow conversions: Iceberg types, schemas and values as Arrow types, schemas and arrays
//! (and back), partition transforms on whole arrays, and manifests as record batches.
//!
//! - [`types`]: primitive types both ways;
//! - [`schema`]: schemas with their field ids (`PARQUET:field_id`) both ways;
//! - [`values`]: literals to arrays and back;
//! - [`transform`]: vectorized partition transforms;
//! - [`manifest`]: manifests and manifest lists as record batches;
//! - [`spark`]: batches in the Arrow types Spark's `ArrowColumnVector` reads (uuid as
//!   strings, fixed as binary), for the JVM connector.
//!
//! The plan's record batches, the wire format from driver to executors, are the scan's:
//! [`crate::scan::plan_batches`] and [`crate::scan::task_groups`].

pub mod manifest;
pub mod schema;
pub mod spark;
pub mod transform;
pub mod types;
pub mod values;

pub use schema::{arrow_to_schema, schema_to_arrow, PARQUET_FIELD_ID};
pub use transform::{transform_array, transform_result_arrow_type};
pub(crate) use types::arrow_type_matches;
pub use types::{arrow_type_to_iceberg, iceberg_to_arrow_type};
pub use values::{array_value, literals_to_array};

use arrow_array::Array;

use crate::error::{Error, Result};

/// `array` as the concrete array type `T`.
pub(crate) fn downcast<T: 'static>(array: &dyn Array) -> Result<&T> {
    array.as_any().downcast_ref::<T>().ok_or_else(|| {
        Error::invalid_argument(format!(
            "unexpected Arrow array for type {}",
            array.data_type()
        ))
    })
}

pub(crate) fn unsupported_arrow(array: &dyn Array, what: &str) -> Error {
    Error::invalid_argument(format!(
        "cannot apply {what} to an Arrow array of type {}",
        array.data_type()
    ))
}

#[cfg(test)]
mod tests;
