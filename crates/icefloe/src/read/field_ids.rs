//! Field ids for the columns of a data file written without them (a file imported from
//! Hive, or written by a client that knew nothing of Iceberg): from the table's name
//! mapping, or, without one, by position (depth first, a parent before its children), as
//! Java's fallback ids.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef, Fields, Schema as ArrowSchema};

use crate::arrow::PARQUET_FIELD_ID;
use crate::spec::name_mapping::NameMapping;

use super::context::field_id;

/// `schema` as it is when any top-level field has an id; else with ids assigned.
pub fn with_field_ids(schema: &ArrowSchema, mapping: Option<&NameMapping>) -> ArrowSchema {
    if schema.fields().iter().any(|f| field_id(f).is_some()) {
        return schema.clone();
    }
    let mut counter = 0;
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .map(|f| visit(f, &mut vec![f.name().clone()], mapping, &mut counter))
        .collect();
    ArrowSchema::new_with_metadata(fields, schema.metadata().clone())
}

fn visit(
    f: &Field,
    path: &mut Vec<String>,
    mapping: Option<&NameMapping>,
    counter: &mut i32,
) -> FieldRef {
    let id = match mapping {
        Some(m) => {
            let names: Vec<&str> = path.iter().map(String::as_str).collect();
            m.find(&names)
        }
        None => {
            *counter += 1;
            Some(*counter)
        }
    };
    let mut child = |c: &Field, name: &str, counter: &mut i32| {
        path.push(name.to_string());
        let out = visit(c, path, mapping, counter);
        path.pop();
        out
    };
    let data_type = match f.data_type() {
        DataType::Struct(children) => DataType::Struct(
            children
                .iter()
                .map(|c| child(c, c.name(), counter))
                .collect::<Fields>(),
        ),
        DataType::List(element) => DataType::List(child(element, "element", counter)),
        DataType::LargeList(element) => DataType::LargeList(child(element, "element", counter)),
        DataType::Map(entries, sorted) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                let key = child(&kv[0], "key", counter);
                let value = child(&kv[1], "value", counter);
                DataType::Map(
                    Arc::new(Field::new(
                        entries.name(),
                        DataType::Struct(Fields::from(vec![key, value])),
                        entries.is_nullable(),
                    )),
                    *sorted,
                )
            }
            _ => f.data_type().clone(),
        },
        other => other.clone(),
    };
    let out = Field::new(f.name(), data_type, f.is_nullable());
    Arc::new(match id {
        Some(id) => out.with_metadata(HashMap::from([(
            PARQUET_FIELD_ID.to_string(),
            id.to_string(),
        )])),
        None => out,
    })
}
