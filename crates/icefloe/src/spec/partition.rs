//! Partition specs ("Partitioning", "Partition Evolution") and their JSON form
//! (Appendix C, "Partition Specs").

use serde_json::{Map, Value};

use super::json::{index, Obj};
use super::schema::Schema;
use super::transform::Transform;
use super::types::{NestedField, StructType};
use crate::error::{Error, Result};

/// The first partition field id assigned when a v1 spec does not track field ids.
pub const PARTITION_DATA_ID_START: i32 = 1000;

/// The name Java's `PartitionSpec.Builder` (what Spark's `PARTITIONED BY` uses) gives a
/// new table's partition field on `column` without a name: `id`, `id_bucket`, `name_trunc`,
/// `ts_day`, `x_null` for void, a nested column's dots as underscores. Partition
/// *evolution* names differ (`id_bucket_16`, as Java's `UpdatePartitionSpec`).
pub fn default_field_name(column: &str, transform: &Transform) -> String {
    let base = column.replace('.', "_");
    let suffix = match transform {
        Transform::Identity => return base,
        Transform::Bucket(_) => "bucket",
        Transform::Truncate(_) => "trunc",
        Transform::Year => "year",
        Transform::Month => "month",
        Transform::Day => "day",
        Transform::Hour => "hour",
        Transform::Void => "null",
        Transform::Unknown(t) => t.split('[').next().unwrap_or(t),
    };
    format!("{base}_{suffix}")
}

/// One field of a partition spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionField {
    /// Source column ids; one for single-argument transforms, more for multi-argument (v3).
    pub source_ids: Vec<i32>,
    /// The partition field id, used as the field id of the partition tuple.
    pub field_id: i32,
    pub name: String,
    pub transform: Transform,
}

impl PartitionField {
    pub fn new(
        source_id: i32,
        field_id: i32,
        name: impl Into<String>,
        transform: Transform,
    ) -> Self {
        PartitionField {
            source_ids: vec![source_id],
            field_id,
            name: name.into(),
            transform,
        }
    }

    /// The first (for single-argument transforms, the only) source id.
    pub fn source_id(&self) -> i32 {
        self.source_ids.first().copied().unwrap_or_default()
    }

    /// Parses a partition field. `field_id` is used when the object has no `field-id`
    /// (v1 specs); `None` makes `field-id` required.
    pub fn from_json(
        value: &Value,
        path: &str,
        default_field_id: Option<i32>,
    ) -> Result<PartitionField> {
        let o = Obj::new(value, path)?;
        let source_ids = read_source_ids(&o)?;
        let field_id = match (o.opt_i32("field-id")?, default_field_id) {
            (Some(id), _) => id,
            (None, Some(id)) => id,
            (None, None) => o.req_i32("field-id")?,
        };
        let name = o.req_str("name")?.to_string();
        let transform = read_transform(&o)?;
        Ok(PartitionField {
            source_ids,
            field_id,
            name,
            transform,
        })
    }

    /// Writes the field; `source-id` for a single source, `source-ids` for several.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), self.name.clone().into());
        m.insert("transform".into(), self.transform.to_string().into());
        write_source_ids(&mut m, &self.source_ids);
        m.insert("field-id".into(), self.field_id.into());
        Value::Object(m)
    }
}

/// Reads `source-id` or `source-ids` (shared by partition and sort fields).
pub(crate) fn read_source_ids(o: &Obj<'_>) -> Result<Vec<i32>> {
    if let Some(ids) = o.opt_i32_list("source-ids")? {
        if ids.is_empty() {
            return Err(Error::invalid_metadata(
                o.field("source-ids"),
                "must not be empty",
            ));
        }
        if let Some(single) = o.opt_i32("source-id")? {
            if ids.len() != 1 || ids[0] != single {
                return Err(Error::invalid_metadata(
                    o.field("source-id"),
                    format!("source-id {single} does not match source-ids {ids:?}"),
                ));
            }
        }
        return Ok(ids);
    }
    Ok(vec![o.req_i32("source-id")?])
}

pub(crate) fn write_source_ids(m: &mut Map<String, Value>, ids: &[i32]) {
    match ids {
        [single] => {
            m.insert("source-id".into(), (*single).into());
        }
        many => {
            m.insert("source-ids".into(), many.to_vec().into());
        }
    }
}

pub(crate) fn read_transform(o: &Obj<'_>) -> Result<Transform> {
    let s = o.req_str("transform")?;
    s.parse::<Transform>()
        .map_err(|e| Error::invalid_metadata(o.field("transform"), e.to_string()))
}

/// A partition spec: an id and a list of partition fields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartitionSpec {
    pub spec_id: i32,
    pub fields: Vec<PartitionField>,
}

impl PartitionSpec {
    /// The unpartitioned spec with id 0.
    pub fn unpartitioned() -> PartitionSpec {
        PartitionSpec::default()
    }

    pub fn new(spec_id: i32, fields: Vec<PartitionField>) -> PartitionSpec {
        PartitionSpec { spec_id, fields }
    }

    /// True when the spec has no fields or all its fields use the `void` transform.
    pub fn is_unpartitioned(&self) -> bool {
        self.fields.iter().all(|f| f.transform == Transform::Void)
    }

    /// The highest partition field id, or 999 (one less than the first v1 id) when empty.
    pub fn last_assigned_field_id(&self) -> i32 {
        self.fields
            .iter()
            .map(|f| f.field_id)
            .max()
            .unwrap_or(PARTITION_DATA_ID_START - 1)
    }

    pub fn field_by_id(&self, field_id: i32) -> Option<&PartitionField> {
        self.fields.iter().find(|f| f.field_id == field_id)
    }

    /// "Two partition specs are considered equivalent with each other if they have the
    /// same number of fields and for each corresponding field, the fields have the same
    /// source column IDs, transform definition and partition name." Spec and field ids
    /// are not compared.
    pub fn is_equivalent_to(&self, other: &PartitionSpec) -> bool {
        self.fields.len() == other.fields.len()
            && self.fields.iter().zip(&other.fields).all(|(a, b)| {
                a.source_ids == b.source_ids && a.transform == b.transform && a.name == b.name
            })
    }

    /// The type of the partition tuple: one optional field per partition field, with the
    /// partition field id and name and the transform's result type. Unknown transforms
    /// produce `string`. Multi-argument transforms use the first source's type for known
    /// transforms (none are multi-argument yet).
    pub fn partition_type(&self, schema: &Schema) -> Result<StructType> {
        let mut fields = Vec::with_capacity(self.fields.len());
        for (i, f) in self.fields.iter().enumerate() {
            let mut source_type = None;
            for &sid in &f.source_ids {
                let src = schema.field_by_id(sid).ok_or_else(|| {
                    Error::invalid_metadata(
                        index("fields", i),
                        format!(
                            "partition field '{}' (id {}) has source id {sid}, which is not in schema {}",
                            f.name,
                            f.field_id,
                            schema.schema_id()
                        ),
                    )
                })?;
                source_type.get_or_insert(&src.field_type);
            }
            let Some(source_type) = source_type else {
                return Err(Error::invalid_metadata(
                    index("fields", i),
                    format!("partition field '{}' has no source id", f.name),
                ));
            };
            let result = f.transform.result_type(source_type).map_err(|e| {
                Error::invalid_metadata(
                    index("fields", i),
                    format!("partition field '{}': {e}", f.name),
                )
            })?;
            fields.push(NestedField::optional(f.field_id, f.name.clone(), result));
        }
        Ok(StructType::new(fields))
    }

    /// Parses the object form `{"spec-id": .., "fields": [..]}`. In v1 (`format_version`
    /// 1), missing field ids are assigned from 1000 in order, as the reference
    /// implementation did; in v2 and later `field-id` is required.
    pub fn from_json(value: &Value, path: &str, format_version: i32) -> Result<PartitionSpec> {
        let o = Obj::new(value, path)?;
        let spec_id = o.req_i32("spec-id")?;
        let fields = o.req("fields")?;
        let fields = Self::fields_from_json(fields, &o.field("fields"), format_version)?;
        Ok(PartitionSpec { spec_id, fields })
    }

    /// Parses the deprecated field-list form (the v1 `partition-spec` field).
    pub fn from_json_fields(
        value: &Value,
        path: &str,
        spec_id: i32,
        format_version: i32,
    ) -> Result<PartitionSpec> {
        let fields = Self::fields_from_json(value, path, format_version)?;
        Ok(PartitionSpec { spec_id, fields })
    }

    fn fields_from_json(
        value: &Value,
        path: &str,
        format_version: i32,
    ) -> Result<Vec<PartitionField>> {
        let items = value.as_array().ok_or_else(|| {
            Error::invalid_metadata(
                path,
                format!("expected a list, found {}", super::json::kind(value)),
            )
        })?;
        let mut fields = Vec::with_capacity(items.len());
        let mut with_ids = 0usize;
        for (i, item) in items.iter().enumerate() {
            let p = index(path, i);
            let default_id = if format_version == 1 {
                // `i` is bounded by the list length; saturate instead of wrapping.
                Some(PARTITION_DATA_ID_START.saturating_add(i32::try_from(i).unwrap_or(i32::MAX)))
            } else {
                None
            };
            if item.get("field-id").is_some_and(|v| !v.is_null()) {
                with_ids += 1;
            }
            fields.push(PartitionField::from_json(item, &p, default_id)?);
        }
        if with_ids != 0 && with_ids != fields.len() {
            return Err(Error::invalid_metadata(
                path,
                format!(
                    "{} of {} partition fields have no field-id; either all or none must have one",
                    fields.len() - with_ids,
                    fields.len()
                ),
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for (i, f) in fields.iter().enumerate() {
            if !seen.insert(f.field_id) {
                return Err(Error::invalid_metadata(
                    format!("{}.field-id", index(path, i)),
                    format!("partition field id {} is used more than once", f.field_id),
                ));
            }
        }
        Ok(fields)
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("spec-id".into(), self.spec_id.into());
        m.insert("fields".into(), self.fields_to_json());
        Value::Object(m)
    }

    /// The deprecated field-list form.
    pub fn fields_to_json(&self) -> Value {
        Value::Array(self.fields.iter().map(PartitionField::to_json).collect())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::spec::types::{PrimitiveType as P, Type};
    use crate::Error;

    #[test]
    fn default_field_names_as_java_builder() {
        let name = |c: &str, t: &str| default_field_name(c, &t.parse().unwrap());
        assert_eq!(name("id", "identity"), "id");
        assert_eq!(name("id", "bucket[16]"), "id_bucket");
        assert_eq!(name("name", "truncate[4]"), "name_trunc");
        assert_eq!(name("ts", "day"), "ts_day");
        assert_eq!(name("ts", "hour"), "ts_hour");
        assert_eq!(name("x", "void"), "x_null");
        assert_eq!(name("a.b", "month"), "a_b_month");
        assert_eq!(name("a.b", "identity"), "a_b");
    }

    fn schema() -> Schema {
        Schema::new(
            0,
            vec![
                NestedField::required(1, "id", P::Long.into()),
                NestedField::optional(2, "data", P::String.into()),
                NestedField::optional(4, "ts", P::Timestamptz.into()),
            ],
            vec![],
        )
        .unwrap()
    }

    /// The example of Appendix C.
    const SPEC_EXAMPLE: &str = r#"{"spec-id": 0, "fields": [
        {"source-id": 4, "field-id": 1000, "name": "ts_day", "transform": "day"},
        {"source-id": 1, "field-id": 1001, "name": "id_bucket", "transform": "bucket[16]"}]}"#;

    #[test]
    fn spec_example_parses() {
        let v: Value = serde_json::from_str(SPEC_EXAMPLE).unwrap();
        let spec = PartitionSpec::from_json(&v, "spec", 2).unwrap();
        assert_eq!(
            spec,
            PartitionSpec::new(
                0,
                vec![
                    PartitionField::new(4, 1000, "ts_day", Transform::Day),
                    PartitionField::new(1, 1001, "id_bucket", Transform::Bucket(16)),
                ]
            )
        );
        let t = spec.partition_type(&schema()).unwrap();
        assert_eq!(
            t,
            StructType::new(vec![
                NestedField::optional(1000, "ts_day", P::Int.into()),
                NestedField::optional(1001, "id_bucket", P::Int.into()),
            ])
        );
        // round trip, and single-argument fields write only source-id
        let back = PartitionSpec::from_json(&spec.to_json(), "spec", 2).unwrap();
        assert_eq!(back, spec);
        assert!(spec.to_json()["fields"][0].get("source-ids").is_none());
        assert_eq!(spec.to_json()["fields"][0]["source-id"], 4);
    }

    #[test]
    fn v1_field_ids_assigned_from_1000() {
        let v: Value = serde_json::from_str(
            r#"[{"source-id": 2, "name": "data", "transform": "identity"},
                {"source-id": 1, "name": "b", "transform": "bucket[4]"}]"#,
        )
        .unwrap();
        let spec = PartitionSpec::from_json_fields(&v, "partition-spec", 0, 1).unwrap();
        assert_eq!(spec.fields[0].field_id, 1000);
        assert_eq!(spec.fields[1].field_id, 1001);
        assert_eq!(spec.last_assigned_field_id(), 1001);
        assert_eq!(PartitionSpec::unpartitioned().last_assigned_field_id(), 999);
        // v2 requires field ids
        let e = PartitionSpec::from_json_fields(&v, "partition-spec", 0, 2).unwrap_err();
        assert_eq!(e.location().unwrap().field, "partition-spec[0].field-id");
        // mixing present and absent ids is refused
        let v: Value = serde_json::from_str(
            r#"[{"source-id": 2, "field-id": 1000, "name": "data", "transform": "identity"},
                {"source-id": 1, "name": "b", "transform": "bucket[4]"}]"#,
        )
        .unwrap();
        assert!(PartitionSpec::from_json_fields(&v, "p", 0, 1).is_err());
    }

    #[test]
    fn multi_arg_and_unknown_transforms() {
        let v: Value = serde_json::from_str(
            r#"{"spec-id": 3, "fields": [
                {"source-ids": [1, 2], "field-id": 1005, "name": "z", "transform": "zorder"}]}"#,
        )
        .unwrap();
        let spec = PartitionSpec::from_json(&v, "s", 3).unwrap();
        assert_eq!(spec.fields[0].source_ids, vec![1, 2]);
        assert_eq!(
            spec.fields[0].transform,
            Transform::Unknown("zorder".into())
        );
        let out = spec.to_json();
        assert_eq!(out["fields"][0]["source-ids"], serde_json::json!([1, 2]));
        assert!(out["fields"][0].get("source-id").is_none());
        let t = spec.partition_type(&schema()).unwrap();
        assert_eq!(t.fields[0].field_type, Type::from(P::String));
        assert!(!spec.is_unpartitioned());
    }

    #[test]
    fn unpartitioned_and_equivalence() {
        let void = PartitionSpec::new(1, vec![PartitionField::new(1, 1000, "x", Transform::Void)]);
        assert!(void.is_unpartitioned());
        assert!(PartitionSpec::unpartitioned().is_unpartitioned());
        let a = PartitionSpec::new(
            0,
            vec![PartitionField::new(1, 1000, "b", Transform::Bucket(4))],
        );
        let b = PartitionSpec::new(
            7,
            vec![PartitionField::new(1, 1003, "b", Transform::Bucket(4))],
        );
        assert!(a.is_equivalent_to(&b));
        let c = PartitionSpec::new(
            7,
            vec![PartitionField::new(1, 1000, "b2", Transform::Bucket(4))],
        );
        assert!(!a.is_equivalent_to(&c));
        let d = PartitionSpec::new(
            7,
            vec![PartitionField::new(1, 1000, "b", Transform::Bucket(8))],
        );
        assert!(!a.is_equivalent_to(&d));
        let e = PartitionSpec::new(
            7,
            vec![PartitionField::new(2, 1000, "b", Transform::Bucket(4))],
        );
        assert!(!a.is_equivalent_to(&e));
        assert!(!a.is_equivalent_to(&void));
    }

    #[test]
    fn partition_type_errors() {
        let missing = PartitionSpec::new(
            0,
            vec![PartitionField::new(99, 1000, "x", Transform::Identity)],
        );
        let e = missing.partition_type(&schema()).unwrap_err();
        assert!(matches!(e, Error::InvalidMetadata { .. }));
        assert!(e.to_string().contains("source id 99"), "{e}");
        let bad = PartitionSpec::new(0, vec![PartitionField::new(2, 1000, "x", Transform::Day)]);
        assert!(bad.partition_type(&schema()).is_err());
    }

    #[test]
    fn bad_fields_name_their_path() {
        let v: Value = serde_json::from_str(
            r#"{"spec-id": 0, "fields": [{"source-id": "1", "field-id": 1000, "name": "x", "transform": "identity"}]}"#,
        )
        .unwrap();
        let e = PartitionSpec::from_json(&v, "partition-specs[2]", 2).unwrap_err();
        assert_eq!(
            e.location().unwrap().field,
            "partition-specs[2].fields[0].source-id"
        );
        let v: Value = serde_json::from_str(
            r#"{"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "name": "x", "transform": "bucket[0]"}]}"#,
        )
        .unwrap();
        let e = PartitionSpec::from_json(&v, "s", 2).unwrap_err();
        assert_eq!(e.location().unwrap().field, "s.fields[0].transform");
    }
}
