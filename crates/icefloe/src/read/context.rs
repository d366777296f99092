//! What is the same for every task of a plan: the schemas, specs, residuals and name
//! mapping the plan's schema metadata carries, and the output schema.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef, Fields, Schema as ArrowSchema, SchemaRef};
use serde_json::Value;

use crate::arrow::{schema_to_arrow, PARQUET_FIELD_ID};
use crate::error::{Error, Result};
use crate::scan::plan_batches::{
    FILTER_KEY, FORMAT_VERSION_KEY, NAME_MAPPING_KEY, PROJECTED_SCHEMA_KEY, RESIDUALS_KEY,
    SCHEMA_KEY, SPECS_KEY,
};
use crate::spec::name_mapping::NameMapping;
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::spec::transform::Transform;
use crate::spec::NestedField;

use super::options::{ReadOptions, METADATA_COLUMNS};

#[derive(Debug)]
pub struct PlanContext {
    pub table_schema: Schema,
    pub projected_schema: Schema,
    /// The projected schema in Arrow (the output's leading columns).
    pub projected_arrow: SchemaRef,
    /// Every top-level field of the table schema in Arrow, by id.
    pub table_arrow: HashMap<i32, FieldRef>,
    pub specs: HashMap<i32, PartitionSpec>,
    /// The residual filters (bound expressions in JSON) the plan's rows index.
    pub residuals: Vec<Value>,
    /// The scan's whole row filter (bound JSON).
    pub filter: Value,
    pub name_mapping: Option<NameMapping>,
    /// The requested metadata columns: name and reserved id.
    pub metadata_columns: Vec<(&'static str, i32)>,
    pub out_schema: SchemaRef,
    /// The plan's unified partition struct.
    pub partition_fields: Fields,
    /// Partition field id -> child index of the plan's partition struct.
    pub partition_slot: HashMap<i32, usize>,
    /// `_partition` as Spark reads it from Java: day fields are dates (the plan keeps
    /// them as day numbers).
    pub meta_partition_type: DataType,
}

fn text<'a>(md: &'a HashMap<String, String>, key: &str) -> Result<&'a str> {
    md.get(key).map(String::as_str).ok_or_else(|| {
        Error::invalid_argument(format!(
            "the tasks' schema has no plan metadata ('{key}'): not a scan plan"
        ))
    })
}

fn json(text: &str, key: &str) -> Result<Value> {
    serde_json::from_str(text)
        .map_err(|e| Error::invalid_argument(format!("the plan's '{key}' is not JSON: {e}")))
}

pub(crate) fn field_id(f: &Field) -> Option<i32> {
    f.metadata().get(PARQUET_FIELD_ID)?.parse().ok()
}

impl PlanContext {
    pub fn new(plan_schema: &SchemaRef, options: &ReadOptions) -> Result<PlanContext> {
        let md = plan_schema.metadata();
        let table_schema =
            Schema::from_json(&json(text(md, SCHEMA_KEY)?, SCHEMA_KEY)?, SCHEMA_KEY)?;
        let projected_schema = Schema::from_json(
            &json(text(md, PROJECTED_SCHEMA_KEY)?, PROJECTED_SCHEMA_KEY)?,
            PROJECTED_SCHEMA_KEY,
        )?;
        let format_version = md
            .get(FORMAT_VERSION_KEY)
            .and_then(|v| v.parse::<i32>().ok())
            .unwrap_or(2);
        let specs_json = json(text(md, SPECS_KEY)?, SPECS_KEY)?;
        let mut specs = HashMap::new();
        for (i, s) in specs_json.as_array().into_iter().flatten().enumerate() {
            let spec = PartitionSpec::from_json(s, &format!("{SPECS_KEY}[{i}]"), format_version)?;
            specs.insert(spec.spec_id, spec);
        }
        let residuals = match &options.residuals {
            Some(r) => r.clone(),
            None => match md.get(RESIDUALS_KEY) {
                Some(t) => match json(t, RESIDUALS_KEY)? {
                    Value::Array(a) => a,
                    _ => {
                        return Err(Error::invalid_argument(
                            "the plan's residuals are not a JSON array",
                        ))
                    }
                },
                None => Vec::new(),
            },
        };
        let filter = match md.get(FILTER_KEY) {
            Some(t) => json(t, FILTER_KEY)?,
            None => Value::Bool(true),
        };
        let name_mapping = match md.get(NAME_MAPPING_KEY) {
            Some(t) => Some(NameMapping::from_json_str(t)?),
            None => None,
        };
        let table_arrow = schema_to_arrow(&table_schema)?
            .fields()
            .iter()
            .filter_map(|f| field_id(f).map(|id| (id, Arc::clone(f))))
            .collect();
        let projected_arrow = Arc::new(schema_to_arrow(&projected_schema)?);

        let partition_fields = match plan_schema.field_with_name("partition") {
            Ok(f) => match f.data_type() {
                DataType::Struct(fields) => fields.clone(),
                other => {
                    return Err(Error::invalid_argument(format!(
                        "the plan's partition column is {other}, not a struct"
                    )))
                }
            },
            Err(_) => return Err(Error::invalid_argument("the plan has no partition column")),
        };
        let partition_slot = partition_fields
            .iter()
            .enumerate()
            .filter_map(|(i, f)| field_id(f).map(|id| (id, i)))
            .collect();
        let day_ids: Vec<i32> = specs
            .values()
            .flat_map(|s| s.fields.iter())
            .filter(|f| f.transform == Transform::Day)
            .map(|f| f.field_id)
            .collect();
        let meta_partition_type = DataType::Struct(
            partition_fields
                .iter()
                .map(|f| {
                    let is_day = field_id(f).is_some_and(|id| day_ids.contains(&id));
                    if is_day && f.data_type() == &DataType::Int32 {
                        Arc::new(f.as_ref().clone().with_data_type(DataType::Date32))
                    } else {
                        Arc::clone(f)
                    }
                })
                .collect(),
        );

        let mut metadata_columns = Vec::new();
        let mut out_fields: Vec<FieldRef> = projected_arrow.fields().iter().cloned().collect();
        for name in &options.metadata_columns {
            let Some(&(known, id)) = METADATA_COLUMNS.iter().find(|(n, _)| n == name) else {
                let known: Vec<&str> = METADATA_COLUMNS.iter().map(|(n, _)| *n).collect();
                return Err(Error::invalid_argument(format!(
                    "unknown metadata column '{name}' (known: {})",
                    known.join(", ")
                )));
            };
            let data_type = match known {
                "_file" => DataType::Utf8,
                "_pos" | "_row_id" | "_last_updated_sequence_number" => DataType::Int64,
                "_deleted" => DataType::Boolean,
                "_spec_id" => DataType::Int32,
                _ => meta_partition_type.clone(),
            };
            out_fields.push(Arc::new(Field::new(known, data_type, true).with_metadata(
                HashMap::from([(PARQUET_FIELD_ID.to_string(), id.to_string())]),
            )));
            metadata_columns.push((known, id));
        }
        Ok(PlanContext {
            table_schema,
            projected_schema,
            projected_arrow,
            table_arrow,
            specs,
            residuals,
            filter,
            name_mapping,
            metadata_columns,
            out_schema: Arc::new(ArrowSchema::new(out_fields)),
            partition_fields,
            partition_slot,
            meta_partition_type,
        })
    }

    /// The schema field with this id (nested too): the projected schema's, else the
    /// table's.
    pub fn field(&self, id: i32) -> Option<&NestedField> {
        self.projected_schema
            .field_by_id(id)
            .or_else(|| self.table_schema.field_by_id(id))
    }

    pub fn wants(&self, name: &str) -> bool {
        self.metadata_columns.iter().any(|(n, _)| *n == name)
    }
}
