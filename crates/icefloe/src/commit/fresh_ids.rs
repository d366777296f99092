//! Fresh field ids for a schema given by a user, and the partition spec and sort order
//! rebuilt on them, in the order Java's `TypeUtil.assignFreshIds` assigns them: a
//! struct's own fields first, then, field by field, the ids inside each one (list element;
//! map key then value). Tables created by icefloe and by Java from the same schema get the
//! same ids.

use crate::error::{Error, Result};
use crate::spec::partition::{PartitionField, PartitionSpec, PARTITION_DATA_ID_START};
use crate::spec::schema::Schema;
use crate::spec::sort::{SortField, SortOrder};
use crate::spec::types::StructType;

/// Gives each field of `schema` an id: the id of the field of the same full name in `base`
/// when there is one (replacing a table keeps its column ids), otherwise the next of
/// `last_column_id`, which is advanced. The result has id `schema_id`.
pub fn assign_fresh_ids(
    schema: &Schema,
    base: Option<&Schema>,
    last_column_id: &mut i32,
    schema_id: i32,
) -> Result<Schema> {
    let mut next = |old_id: i32| -> Result<i32> {
        if let (Some(base), Some(name)) = (base, schema.name_by_id(old_id)) {
            if let Some(id) = base.id_by_name(name, true) {
                return Ok(id);
            }
        }
        *last_column_id = last_column_id
            .checked_add(1)
            .ok_or_else(|| Error::invalid_argument("field ids overflow"))?;
        Ok(*last_column_id)
    };
    let fields = StructType::with_fresh_ids(schema.as_struct(), &mut next)?;
    let fresh = Schema::new(schema_id, fields.fields, Vec::new())?;
    // identifier fields are matched by name
    let mut identifier_ids = Vec::with_capacity(schema.identifier_field_ids().len());
    for id in schema.identifier_field_ids() {
        let name = schema.name_by_id(*id).ok_or_else(|| {
            Error::invalid_argument(format!("identifier field id {id} is not in the schema"))
        })?;
        let new_id = fresh.id_by_name(name, true).ok_or_else(|| {
            Error::invalid_argument(format!("identifier field '{name}' is not in the schema"))
        })?;
        identifier_ids.push(new_id);
    }
    Schema::new(schema_id, fresh.fields().to_vec(), identifier_ids)
}

/// The id in `to` of the column that has id `id` in `from` (matched by full name).
fn source_in(from: &Schema, to: &Schema, id: i32, what: &str) -> Result<i32> {
    let name = from.name_by_id(id).ok_or_else(|| {
        Error::invalid_argument(format!(
            "{what} has source id {id}, which is not in the schema"
        ))
    })?;
    to.id_by_name(name, true).ok_or_else(|| {
        Error::invalid_argument(format!(
            "{what} has source '{name}', which is not in the schema"
        ))
    })
}

/// `spec` (whose source ids refer to `from`) rebuilt on `to`, with id `spec_id`. With
/// `renumber`, partition field ids are assigned from 1000 in order, as Java's
/// `PartitionSpec.Builder` does for a new table; otherwise the given ids are kept.
pub fn rebind_spec(
    spec: &PartitionSpec,
    from: &Schema,
    to: &Schema,
    spec_id: i32,
    renumber: bool,
) -> Result<PartitionSpec> {
    let mut fields = Vec::with_capacity(spec.fields.len());
    for (i, f) in spec.fields.iter().enumerate() {
        let what = format!("partition field '{}'", f.name);
        let source_ids = f
            .source_ids
            .iter()
            .map(|id| source_in(from, to, *id, &what))
            .collect::<Result<Vec<_>>>()?;
        let field_id = if renumber {
            PARTITION_DATA_ID_START + i as i32
        } else {
            f.field_id
        };
        fields.push(PartitionField {
            source_ids,
            field_id,
            ..f.clone()
        });
    }
    Ok(PartitionSpec::new(spec_id, fields))
}

/// `order` (whose source ids refer to `from`) rebuilt on `to`, with id `order_id` when
/// sorted (the unsorted order keeps id 0).
pub fn rebind_sort_order(
    order: &SortOrder,
    from: &Schema,
    to: &Schema,
    order_id: i32,
) -> Result<SortOrder> {
    if order.is_unsorted() {
        return Ok(SortOrder::unsorted());
    }
    let mut fields = Vec::with_capacity(order.fields.len());
    for f in &order.fields {
        let source_ids = f
            .source_ids
            .iter()
            .map(|id| source_in(from, to, *id, "sort field"))
            .collect::<Result<Vec<_>>>()?;
        fields.push(SortField {
            source_ids,
            ..f.clone()
        });
    }
    SortOrder::new(order_id, fields)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::spec::types::{ListType, MapType, NestedField, PrimitiveType, Type};
    use std::sync::Arc;

    fn p(t: PrimitiveType) -> Type {
        Type::Primitive(t)
    }

    #[test]
    fn ids_are_assigned_level_by_level_as_java_does() {
        // struct { a: long, b: list<struct{x,y}>, c: map<string, int>, d: struct{e} }
        let elem = StructType::new(vec![
            NestedField::optional(50, "x", p(PrimitiveType::Int)),
            NestedField::optional(51, "y", p(PrimitiveType::Int)),
        ]);
        let schema = Schema::new(
            7,
            vec![
                NestedField::required(10, "a", p(PrimitiveType::Long)),
                NestedField::optional(
                    11,
                    "b",
                    Type::List(Arc::new(ListType::new(
                        40,
                        false,
                        Type::Struct(Arc::new(elem)),
                    ))),
                ),
                NestedField::optional(
                    12,
                    "c",
                    Type::Map(Arc::new(MapType::new(
                        41,
                        p(PrimitiveType::String),
                        42,
                        true,
                        p(PrimitiveType::Int),
                    ))),
                ),
                NestedField::optional(
                    13,
                    "d",
                    Type::Struct(Arc::new(StructType::new(vec![NestedField::optional(
                        60,
                        "e",
                        p(PrimitiveType::String),
                    )]))),
                ),
            ],
            vec![10],
        )
        .unwrap();
        let mut last = 0;
        let fresh = assign_fresh_ids(&schema, None, &mut last, 0).unwrap();
        let ids: Vec<(String, i32)> = [
            "a",
            "b",
            "c",
            "d",
            "b.element",
            "b.element.x",
            "b.element.y",
            "c.key",
            "c.value",
            "d.e",
        ]
        .iter()
        .map(|n| (n.to_string(), fresh.id_by_name(n, true).unwrap()))
        .collect();
        let expect: Vec<(String, i32)> = [
            ("a", 1),
            ("b", 2),
            ("c", 3),
            ("d", 4),
            ("b.element", 5),
            ("b.element.x", 6),
            ("b.element.y", 7),
            ("c.key", 8),
            ("c.value", 9),
            ("d.e", 10),
        ]
        .iter()
        .map(|(n, i)| (n.to_string(), *i))
        .collect();
        assert_eq!(ids, expect);
        assert_eq!(last, 10);
        assert_eq!(fresh.identifier_field_ids(), &[1]);
        assert_eq!(fresh.schema_id(), 0);

        // against a base: known names keep their ids, new ones continue from last
        let base = fresh.clone();
        let more = Schema::new(
            0,
            vec![
                NestedField::optional(1, "z", p(PrimitiveType::Int)),
                NestedField::required(2, "a", p(PrimitiveType::Long)),
            ],
            vec![],
        )
        .unwrap();
        let mut last = 10;
        let replaced = assign_fresh_ids(&more, Some(&base), &mut last, 1).unwrap();
        assert_eq!(replaced.id_by_name("a", true), Some(1));
        assert_eq!(replaced.id_by_name("z", true), Some(11));
        assert_eq!(last, 11);
    }
}
