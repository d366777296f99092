//! The spec's data model, one file per concept. Names follow `table-spec.md`.

pub mod encryption;
pub mod json;
pub mod literal;
pub mod location;
pub mod name_mapping;
pub mod partition;
pub mod partition_update;
pub mod schema;
pub mod schema_update;
pub mod snapshot;
pub mod sort;
pub mod sort_update;
pub mod statistics;
pub mod table_metadata;
pub mod transform;
pub mod types;
pub mod view_metadata;

pub use literal::Literal;
pub use schema::Schema;
pub use transform::Transform;
pub use types::{ListType, MapType, NestedField, PrimitiveType, StructType, Type};
