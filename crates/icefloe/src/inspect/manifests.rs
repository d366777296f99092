//! `manifests` (the manifests of one snapshot) and `all_manifests` (of every snapshot,
//! with the snapshot that lists them), as Java's `ManifestsTable` and `AllManifestsTable`.

use std::collections::HashMap;

use super::value::Value;
use crate::error::Result;
use crate::manifest::{FieldSummary, ManifestContent, ManifestFile};
use crate::spec::partition::PartitionSpec;
use crate::spec::types::{ListType, NestedField, PrimitiveType as P, StructType, Type};
use crate::spec::{Literal, Schema};
use crate::write::human::human_string;

/// The two schemas differ in which fields are required: `all_manifests` reads old
/// manifest lists whose counts may be missing.
pub(crate) fn manifests_schema(all: bool) -> Result<Schema> {
    let req = |id, name: &str, t: P, required_in_manifests: bool| {
        if required_in_manifests && !all {
            NestedField::required(id, name, t.into())
        } else {
            NestedField::optional(id, name, t.into())
        }
    };
    let summary = StructType::new(vec![
        NestedField::required(10, "contains_null", P::Boolean.into()),
        NestedField::new(11, "contains_nan", P::Boolean.into(), all),
        NestedField::optional(12, "lower_bound", P::String.into()),
        NestedField::optional(13, "upper_bound", P::String.into()),
    ]);
    let summaries: Type = ListType::new(9, true, summary.into()).into();
    let mut fields = vec![
        NestedField::required(14, "content", P::Int.into()),
        NestedField::required(1, "path", P::String.into()),
        NestedField::required(2, "length", P::Long.into()),
        req(3, "partition_spec_id", P::Int, true),
        req(4, "added_snapshot_id", P::Long, true),
        req(5, "added_data_files_count", P::Int, true),
        req(6, "existing_data_files_count", P::Int, true),
        req(7, "deleted_data_files_count", P::Int, true),
        NestedField::required(15, "added_delete_files_count", P::Int.into()),
        NestedField::required(16, "existing_delete_files_count", P::Int.into()),
        NestedField::required(17, "deleted_delete_files_count", P::Int.into()),
        NestedField::new(8, "partition_summaries", summaries, !all),
    ];
    if all {
        fields.push(NestedField::required(
            18,
            "reference_snapshot_id",
            P::Long.into(),
        ));
        fields.push(NestedField::optional(19, "key_metadata", P::Binary.into()));
    }
    Schema::new(0, fields, Vec::new())
}

/// What the partition summaries of a spec need: each field's transform and result type.
pub(crate) struct SpecTypes {
    specs: HashMap<i32, (PartitionSpec, StructType)>,
}

impl SpecTypes {
    pub(crate) fn new(specs: HashMap<i32, (PartitionSpec, StructType)>) -> SpecTypes {
        SpecTypes { specs }
    }

    /// A summary's bounds as the transform's human strings (`"null"` when absent, as
    /// Java's `toHumanString` of null).
    fn summaries(&self, spec_id: i32, summaries: &[FieldSummary]) -> Result<Value> {
        let spec = self.specs.get(&spec_id);
        let mut out = Vec::with_capacity(summaries.len());
        for (i, s) in summaries.iter().enumerate() {
            let field = spec.and_then(|(spec, t)| Some((spec.fields.get(i)?, t.fields.get(i)?)));
            let human = |bound: &Option<Vec<u8>>| -> Result<Value> {
                let Some((pf, tf)) = field else {
                    return Ok(Value::Null);
                };
                let Some(ty) = tf.field_type.as_primitive() else {
                    return Ok(Value::Null);
                };
                let value = match bound {
                    Some(b) => Some(Literal::from_bytes(b, ty)?),
                    None => None,
                };
                Ok(Value::string(human_string(
                    &pf.transform,
                    ty,
                    value.as_ref(),
                )))
            };
            out.push(Value::Struct(vec![
                Value::boolean(s.contains_null),
                s.contains_nan.map_or(Value::Null, Value::boolean),
                human(&s.lower_bound)?,
                human(&s.upper_bound)?,
            ]));
        }
        Ok(Value::List(out))
    }
}

/// One manifest as a row; `reference_snapshot_id` only for `all_manifests`. Data counts
/// are zero for delete manifests and delete counts zero for data manifests.
pub(crate) fn manifest_row(
    m: &ManifestFile,
    specs: &SpecTypes,
    reference_snapshot_id: Option<i64>,
) -> Result<Vec<Value>> {
    let data = m.content == ManifestContent::Data;
    let count = |v: Option<i32>, want_data: bool| {
        if data == want_data {
            Value::opt_int(v)
        } else {
            Value::int(0)
        }
    };
    let mut row = vec![
        Value::int(m.content.id()),
        Value::string(m.manifest_path.as_str()),
        Value::long(m.manifest_length),
        Value::int(m.partition_spec_id),
        Value::long(m.added_snapshot_id),
        count(m.added_files_count, true),
        count(m.existing_files_count, true),
        count(m.deleted_files_count, true),
        count(m.added_files_count, false),
        count(m.existing_files_count, false),
        count(m.deleted_files_count, false),
        match &m.partitions {
            Some(p) => specs.summaries(m.partition_spec_id, p)?,
            None => Value::Null,
        },
    ];
    if let Some(id) = reference_snapshot_id {
        row.push(Value::long(id));
        row.push(Value::opt_binary(m.key_metadata.as_deref()));
    }
    Ok(row)
}
