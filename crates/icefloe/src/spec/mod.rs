//! The spec's data model, one file per concept. Names follow `table-spec.md`.

pub mod json;
pub mod literal;
pub mod schema;
pub mod transform;
pub mod types;

pub use literal::Literal;
pub use schema::Schema;
pub use transform::Transform;
pub use types::{ListType, MapType, NestedField, PrimitiveType, StructType, Type};
