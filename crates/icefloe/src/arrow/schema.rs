//! Iceberg schemas and Arrow schemas, both ways, tied by field ids kept in each Arrow
//! field's `PARQUET:field_id` metadata (Parquet files carry Iceberg field ids there, and
//! readers select columns by id).
//!
//! - [`schema_to_arrow`]: the Arrow schema data files are written with: the Iceberg schema
//!   in the Arrow types of [`iceberg_to_arrow_type`], with the field id of every field
//!   (nested too). List elements are named `element`, map entries `key_value` (the Parquet
//!   names, which pyarrow keeps).
//! - [`arrow_to_schema`]: an Iceberg schema from an Arrow schema (a pyarrow schema given to
//!   `create_table`). Fields keep the id in their metadata where there is one; the others
//!   get ids after the highest one present. A new table renumbers every column anyway (as
//!   Java does), so these ids only tie a partition spec or sort order to its columns.
//!   Nullable Arrow fields are optional Iceberg fields.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema};

use super::types::{arrow_type_to_iceberg, iceberg_to_arrow_type};
use crate::error::{Error, Result};
use crate::spec::schema::Schema;
use crate::spec::types::{ListType, MapType, NestedField, PrimitiveType, StructType, Type};

/// The metadata key under which pyarrow and Parquet keep a field's id.
pub const PARQUET_FIELD_ID: &str = "PARQUET:field_id";

/// The Arrow schema of data files written for `schema` (see the module documentation).
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

fn field_id(f: &Field) -> Result<Option<i32>> {
    match f.metadata().get(PARQUET_FIELD_ID) {
        None => Ok(None),
        Some(v) => v.trim().parse::<i32>().map(Some).map_err(|_| {
            Error::invalid_argument(format!(
                "field '{}' has {PARQUET_FIELD_ID}={v}, which is not an integer",
                f.name()
            ))
        }),
    }
}

fn max_id(fields: &[Arc<Field>]) -> Result<i32> {
    let mut max = 0;
    for f in fields {
        if let Some(id) = field_id(f)? {
            max = max.max(id);
        }
        max = max.max(max_id(&children(f.data_type()))?);
    }
    Ok(max)
}

fn children(t: &DataType) -> Vec<Arc<Field>> {
    match t {
        DataType::Struct(fields) => fields.iter().cloned().collect(),
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            vec![f.clone()]
        }
        DataType::Map(entries, _) => children(entries.data_type()),
        _ => Vec::new(),
    }
}

struct Ids {
    next: i32,
}

impl Ids {
    fn id_of(&mut self, f: &Field) -> Result<i32> {
        match field_id(f)? {
            Some(id) => Ok(id),
            None => {
                self.next = self
                    .next
                    .checked_add(1)
                    .ok_or_else(|| Error::invalid_argument("field ids overflow"))?;
                Ok(self.next)
            }
        }
    }
}

/// The Iceberg schema (id 0) of an Arrow schema.
pub fn arrow_to_schema(arrow: &ArrowSchema) -> Result<Schema> {
    let fields: Vec<Arc<Field>> = arrow.fields().iter().cloned().collect();
    let mut ids = Ids {
        next: max_id(&fields)?,
    };
    // a struct's own fields get ids before the fields nested in them, as Java assigns
    let s = struct_of(&fields, &mut ids)?;
    Schema::new(0, s.fields, Vec::new())
}

fn struct_of(fields: &[Arc<Field>], ids: &mut Ids) -> Result<StructType> {
    let own = fields
        .iter()
        .map(|f| ids.id_of(f))
        .collect::<Result<Vec<_>>>()?;
    let mut out = Vec::with_capacity(fields.len());
    for (f, id) in fields.iter().zip(own) {
        let t = type_of(f, ids)?;
        out.push(NestedField::new(id, f.name().clone(), t, !f.is_nullable()));
    }
    Ok(StructType::new(out))
}

fn type_of(f: &Field, ids: &mut Ids) -> Result<Type> {
    Ok(match f.data_type() {
        DataType::Struct(fields) => {
            let fields: Vec<Arc<Field>> = fields.iter().cloned().collect();
            Type::Struct(Arc::new(struct_of(&fields, ids)?))
        }
        DataType::List(e) | DataType::LargeList(e) | DataType::FixedSizeList(e, _) => {
            let id = ids.id_of(e)?;
            let t = type_of(e, ids)?;
            Type::List(Arc::new(ListType::new(id, !e.is_nullable(), t)))
        }
        DataType::Map(entries, _) => {
            let kv = children(entries.data_type());
            let (Some(k), Some(v)) = (kv.first(), kv.get(1)) else {
                return Err(Error::invalid_argument(format!(
                    "map field '{}' has no key and value",
                    f.name()
                )));
            };
            let key_id = ids.id_of(k)?;
            let value_id = ids.id_of(v)?;
            let kt = type_of(k, ids)?;
            let vt = type_of(v, ids)?;
            Type::Map(Arc::new(MapType::new(
                key_id,
                kt,
                value_id,
                !v.is_nullable(),
                vt,
            )))
        }
        DataType::Int8 | DataType::Int16 | DataType::UInt8 | DataType::UInt16 => {
            Type::Primitive(PrimitiveType::Int)
        }
        DataType::UInt32 => Type::Primitive(PrimitiveType::Long),
        DataType::Utf8View => Type::Primitive(PrimitiveType::String),
        DataType::BinaryView => Type::Primitive(PrimitiveType::Binary),
        other => Type::Primitive(arrow_type_to_iceberg(other).map_err(|_| {
            Error::invalid_argument(format!(
                "field '{}' has Arrow type {other}, which has no Iceberg type",
                f.name()
            ))
        })?),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with_id(f: Field, id: i32) -> Field {
        f.with_metadata(HashMap::from([(PARQUET_FIELD_ID.into(), id.to_string())]))
    }

    #[test]
    fn ids_are_kept_or_assigned_after_the_highest() {
        let item = Arc::new(Field::new("element", DataType::Int32, false));
        let arrow = ArrowSchema::new(vec![
            with_id(Field::new("a", DataType::Int64, false), 7),
            Field::new("b", DataType::List(item), true),
            Field::new(
                "s",
                DataType::Struct(vec![Field::new("x", DataType::Utf8, true)].into()),
                true,
            ),
        ]);
        let s = arrow_to_schema(&arrow).unwrap();
        assert_eq!(s.id_by_name("a", true), Some(7));
        assert_eq!(s.id_by_name("b", true), Some(8));
        assert_eq!(s.id_by_name("s", true), Some(9));
        assert_eq!(s.id_by_name("b.element", true), Some(10));
        assert_eq!(s.id_by_name("s.x", true), Some(11));
        let a = s.field_by_id(7).unwrap();
        assert!(a.required);
        assert_eq!(a.field_type, Type::Primitive(PrimitiveType::Long));
        assert!(!s.field_by_id(8).unwrap().required);
        let bad = ArrowSchema::new(vec![Field::new(
            "d",
            DataType::Duration(arrow_schema::TimeUnit::Second),
            true,
        )]);
        assert!(arrow_to_schema(&bad).is_err());
    }
}
