//! The Arrow schema data files are written with: the Iceberg schema in the Arrow types of
//! [`crate::arrow::iceberg_to_arrow_type`], with the field id of every field (nested too)
//! in the `PARQUET:field_id` metadata key, so the Parquet file carries Iceberg field ids and
//! readers select columns by id. List elements are named `element`, map entries
//! `key_value` (the Parquet names, which pyarrow keeps).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema};

use crate::arrow::iceberg_to_arrow_type;
use crate::error::{Error, Result};
use crate::spec::{NestedField, Schema, Type};

/// The Parquet metadata key pyarrow reads and writes field ids under.
pub const PARQUET_FIELD_ID: &str = "PARQUET:field_id";

pub fn schema_to_arrow(schema: &Schema) -> Result<ArrowSchema> {
    let fields = schema
        .fields()
        .iter()
        .map(field_to_arrow)
        .collect::<Result<Vec<_>>>()?;
    Ok(ArrowSchema::new(fields))
}

fn field_to_arrow(f: &NestedField) -> Result<Field> {
    let data_type = type_to_arrow(&f.field_type)?;
    Ok(
        Field::new(&f.name, data_type, !f.required).with_metadata(HashMap::from([(
            PARQUET_FIELD_ID.to_string(),
            f.id.to_string(),
        )])),
    )
}

fn type_to_arrow(t: &Type) -> Result<DataType> {
    Ok(match t {
        Type::Primitive(p) => iceberg_to_arrow_type(p)?,
        Type::Struct(s) => DataType::Struct(Fields::from(
            s.fields
                .iter()
                .map(field_to_arrow)
                .collect::<Result<Vec<_>>>()?,
        )),
        Type::List(l) => DataType::List(Arc::new(field_to_arrow(&l.element_field)?)),
        Type::Map(m) => {
            let entries = Field::new(
                "key_value",
                DataType::Struct(Fields::from(vec![
                    field_to_arrow(&m.key_field)?,
                    field_to_arrow(&m.value_field)?,
                ])),
                false,
            );
            DataType::Map(Arc::new(entries), false)
        }
        Type::Variant => {
            return Err(Error::unsupported(
                "writing variant columns is not supported",
            ))
        }
    })
}
