//! The tables of files and entries: `files`, `data_files`, `delete_files`, `entries` and
//! their `all_` forms (Java's `BaseFilesTable`, `BaseEntriesTable` and subclasses), with
//! the unified partition struct (`Partitioning.partitionType`) and `readable_metrics`
//! (`MetricsUtil.readableMetricsSchema`).

use std::collections::BTreeMap;

#[cfg(test)]
use super::value::Value;
#[cfg(test)]
use crate::error::Error;
use crate::error::Result;
#[cfg(test)]
use crate::manifest::{DataFile, ManifestEntry};
use crate::spec::partition::PartitionSpec;
use crate::spec::table_metadata::TableMetadata;
use crate::spec::transform::Transform;
use crate::spec::types::{ListType, MapType, NestedField, PrimitiveType as P, StructType, Type};
use crate::spec::{Literal, Schema};

/// The partition type of a spec bound to `schema`, or, when a source column was dropped
/// since, to the newest schema that still has it.
pub(crate) fn spec_partition_type(
    md: &TableMetadata,
    schema: &Schema,
    spec: &PartitionSpec,
) -> Result<StructType> {
    match spec.partition_type(schema) {
        Ok(t) => Ok(t),
        Err(first) => md
            .schemas
            .iter()
            .rev()
            .find_map(|s| spec.partition_type(s).ok())
            .ok_or(first),
    }
}

/// Java's `Partitioning.partitionType(table)`: every partition field of every spec whose
/// source column is in the current schema, by field id; a field takes its name from the
/// newest spec that has it and its type from the newest spec where it is not void (v1
/// tables drop fields by making them void). All fields optional.
pub(crate) fn unified_partition_type(md: &TableMetadata, schema: &Schema) -> Result<StructType> {
    let mut specs: Vec<&PartitionSpec> = md.partition_specs.iter().collect();
    specs.sort_by_key(|s| std::cmp::Reverse(s.spec_id));
    // field id -> (is void, name, type)
    let mut fields: BTreeMap<i32, (bool, String, Type)> = BTreeMap::new();
    for spec in specs {
        let active: Vec<bool> = spec
            .fields
            .iter()
            .map(|f| {
                f.source_ids
                    .iter()
                    .all(|id| schema.field_by_id(*id).is_some())
            })
            .collect();
        if !active.iter().any(|a| *a) {
            continue;
        }
        let ptype = spec_partition_type(md, schema, spec)?;
        for ((pf, tf), active) in spec.fields.iter().zip(&ptype.fields).zip(active) {
            if !active {
                continue;
            }
            let void = pf.transform == Transform::Void;
            let ty = java_result_type(&pf.transform, &tf.field_type);
            match fields.get_mut(&pf.field_id) {
                None => {
                    fields.insert(pf.field_id, (void, tf.name.clone(), ty));
                }
                Some(existing) => {
                    if existing.0 && !void {
                        existing.0 = false;
                        existing.2 = ty;
                    }
                }
            }
        }
    }
    Ok(StructType::new(
        fields
            .into_iter()
            .map(|(id, (_, name, ty))| NestedField::optional(id, name, ty))
            .collect(),
    ))
}

/// The result type of a transform as Java 1.11 declares it: the spec's `int` except for
/// `day`, whose result Java types as `date` (the same days from 1970), so that metadata
/// tables show day partitions as dates.
fn java_result_type(transform: &Transform, spec_type: &Type) -> Type {
    if *transform == Transform::Day {
        P::Date.into()
    } else {
        spec_type.clone()
    }
}

fn counts(id: i32, name: &str, key: i32, value: i32) -> NestedField {
    NestedField::optional(
        id,
        name,
        MapType::new(key, P::Int.into(), value, true, P::Long.into()).into(),
    )
}

fn bounds(id: i32, name: &str, key: i32, value: i32) -> NestedField {
    NestedField::optional(
        id,
        name,
        MapType::new(key, P::Int.into(), value, true, P::Binary.into()).into(),
    )
}

/// Java's `DataFile.getType(partitionType)`, without `partition` when the table is
/// unpartitioned (as Java drops it).
pub(crate) fn data_file_fields(partition: &StructType) -> Vec<NestedField> {
    let mut fields = vec![
        NestedField::optional(134, "content", P::Int.into()),
        NestedField::required(100, "file_path", P::String.into()),
        NestedField::required(101, "file_format", P::String.into()),
        NestedField::optional(141, "spec_id", P::Int.into()),
    ];
    if !partition.fields.is_empty() {
        fields.push(NestedField::required(
            102,
            "partition",
            partition.clone().into(),
        ));
    }
    fields.extend([
        NestedField::required(103, "record_count", P::Long.into()),
        NestedField::required(104, "file_size_in_bytes", P::Long.into()),
        counts(108, "column_sizes", 117, 118),
        counts(109, "value_counts", 119, 120),
        counts(110, "null_value_counts", 121, 122),
        counts(137, "nan_value_counts", 138, 139),
        bounds(125, "lower_bounds", 126, 127),
        bounds(128, "upper_bounds", 129, 130),
        NestedField::optional(131, "key_metadata", P::Binary.into()),
        NestedField::optional(
            132,
            "split_offsets",
            ListType::new(133, true, P::Long.into()).into(),
        ),
        NestedField::optional(
            135,
            "equality_ids",
            ListType::new(136, true, P::Int.into()).into(),
        ),
        NestedField::optional(140, "sort_order_id", P::Int.into()),
        NestedField::optional(142, "first_row_id", P::Long.into()),
        NestedField::optional(143, "referenced_data_file", P::String.into()),
        NestedField::optional(144, "content_offset", P::Long.into()),
        NestedField::optional(145, "content_size_in_bytes", P::Long.into()),
    ]);
    fields
}

/// One primitive column of the table schema with metrics in `readable_metrics`.
pub(crate) struct MetricColumn {
    pub(crate) id: i32,
    pub(crate) ty: P,
}

/// `readable_metrics` (Java's `MetricsUtil.readableMetricsSchema`): a struct per primitive
/// column of the table's current schema, named by its full name and sorted by name, of
/// sizes, counts and typed bounds. Ids continue after the highest id of `fields`, in the
/// order of the table's column ids (Java takes them in the iteration order of its
/// id-to-name hash map, which is id order for the ids of a table's columns).
pub(crate) fn readable_metrics(
    schema: &Schema,
    fields: &[NestedField],
) -> Result<(NestedField, Vec<MetricColumn>)> {
    let mut next = Schema::new(0, fields.to_vec(), Vec::new())?.highest_field_id();
    let mut id = || {
        next += 1;
        next
    };
    let mut columns: Vec<(String, NestedField, MetricColumn)> = Vec::new();
    for (field_id, name) in schema.field_names() {
        let Some(field) = schema.field_by_id(field_id) else {
            continue;
        };
        let Type::Primitive(ty) = &field.field_type else {
            continue;
        };
        let struct_id = id();
        let t: Type = ty.clone().into();
        let children = vec![
            NestedField::optional(id(), "column_size", P::Long.into()),
            NestedField::optional(id(), "value_count", P::Long.into()),
            NestedField::optional(id(), "null_value_count", P::Long.into()),
            NestedField::optional(id(), "nan_value_count", P::Long.into()),
            NestedField::optional(id(), "lower_bound", t.clone()),
            NestedField::optional(id(), "upper_bound", t),
        ];
        columns.push((
            name.to_string(),
            NestedField::optional(struct_id, name, StructType::new(children).into()),
            MetricColumn {
                id: field_id,
                ty: ty.clone(),
            },
        ));
    }
    columns.sort_by(|a, b| a.0.cmp(&b.0));
    let (struct_fields, metric_columns): (Vec<NestedField>, Vec<MetricColumn>) =
        columns.into_iter().map(|(_, f, c)| (f, c)).unzip();
    Ok((
        NestedField::optional(
            id(),
            "readable_metrics",
            StructType::new(struct_fields).into(),
        ),
        metric_columns,
    ))
}

#[cfg(test)]
fn count_of(counts: &Option<Vec<(i32, i64)>>, id: i32) -> Value {
    Value::opt_long(
        counts
            .as_ref()
            .and_then(|c| c.iter().find(|(k, _)| *k == id).map(|(_, v)| *v)),
    )
}

#[cfg(test)]
fn bound_of(bounds: &Option<Vec<(i32, Vec<u8>)>>, c: &MetricColumn) -> Result<Value> {
    match bounds
        .as_ref()
        .and_then(|b| b.iter().find(|(k, _)| *k == c.id))
    {
        None => Ok(Value::Null),
        Some((_, bytes)) => Ok(Value::Lit(Literal::from_bytes(bytes, &c.ty).map_err(
            |e| Error::invalid_argument(format!("bound of column {}: {e}", c.id)),
        )?)),
    }
}

#[cfg(test)]
/// The `readable_metrics` value of a file.
pub(crate) fn readable_metrics_value(f: &DataFile, columns: &[MetricColumn]) -> Result<Value> {
    let mut out = Vec::with_capacity(columns.len());
    for c in columns {
        out.push(Value::Struct(vec![
            count_of(&f.column_sizes, c.id),
            count_of(&f.value_counts, c.id),
            count_of(&f.null_value_counts, c.id),
            count_of(&f.nan_value_counts, c.id),
            bound_of(&f.lower_bounds, c)?,
            bound_of(&f.upper_bounds, c)?,
        ]));
    }
    Ok(Value::Struct(out))
}

/// Where each field of a spec's partition tuple goes in the unified partition struct,
/// and the unified field's type (values written before a type promotion are promoted).
pub(crate) struct PartitionProjection {
    /// For each unified field, the position in the spec's tuple, if the spec has it.
    positions: Vec<Option<usize>>,
    types: Vec<Type>,
}

impl PartitionProjection {
    pub(crate) fn new(unified: &StructType, spec: Option<&PartitionSpec>) -> PartitionProjection {
        PartitionProjection {
            positions: unified
                .fields
                .iter()
                .map(|u| spec.and_then(|s| s.fields.iter().position(|f| f.field_id == u.id)))
                .collect(),
            types: unified
                .fields
                .iter()
                .map(|f| f.field_type.clone())
                .collect(),
        }
    }

    /// How many unified fields the spec has (Java's `StructProjection.projectedFields`).
    pub(crate) fn projected_fields(&self) -> usize {
        self.positions.iter().filter(|p| p.is_some()).count()
    }

    /// The tuple in the unified struct's fields.
    pub(crate) fn project(&self, tuple: &[Option<Literal>]) -> Vec<Option<Literal>> {
        (0..self.positions.len())
            .map(|field| self.value(field, tuple))
            .collect()
    }

    /// The value of the unified struct's field `field` in the tuple.
    pub(crate) fn value(&self, field: usize, tuple: &[Option<Literal>]) -> Option<Literal> {
        let i = self.positions.get(field).copied().flatten()?;
        let v = tuple.get(i).cloned().flatten()?;
        Some(match (v, self.types.get(field)) {
            (Literal::Int(i), Some(Type::Primitive(P::Long))) => Literal::Long(i64::from(i)),
            (Literal::Float(x), Some(Type::Primitive(P::Double))) => Literal::Double(f64::from(x)),
            (Literal::Int(d), Some(Type::Primitive(P::Date))) => Literal::Date(d),
            (v, _) => v,
        })
    }
}

#[cfg(test)]
fn counts_value(v: &Option<Vec<(i32, i64)>>) -> Value {
    v.as_ref().map_or(Value::Null, |pairs| {
        Value::Map(
            pairs
                .iter()
                .map(|(k, n)| (Value::int(*k), Value::long(*n)))
                .collect(),
        )
    })
}

#[cfg(test)]
fn bounds_value(v: &Option<Vec<(i32, Vec<u8>)>>) -> Value {
    v.as_ref().map_or(Value::Null, |pairs| {
        Value::Map(
            pairs
                .iter()
                .map(|(k, b)| (Value::int(*k), Value::Lit(Literal::Binary(b.clone()))))
                .collect(),
        )
    })
}

/// What a row of the files or entries tables needs besides the entry.
pub(crate) struct RowContext<'a> {
    pub(crate) spec_id: i32,
    pub(crate) partition: &'a PartitionProjection,
    /// Whether the table has a partition column.
    pub(crate) partitioned: bool,
    pub(crate) metrics: &'a [MetricColumn],
}

#[cfg(test)]
/// The fields of `DataFile.getType` for one file.
pub(crate) fn data_file_values(f: &DataFile, ctx: &RowContext<'_>) -> Vec<Value> {
    let mut row = Vec::with_capacity(21);
    row.push(Value::int(f.content.id()));
    row.push(Value::string(f.file_path.as_str()));
    row.push(Value::string(f.file_format.as_str()));
    row.push(Value::int(ctx.spec_id));
    if ctx.partitioned {
        row.push(Value::Struct(
            ctx.partition
                .project(&f.partition)
                .into_iter()
                .map(Value::opt_lit)
                .collect(),
        ));
    }
    row.push(Value::long(f.record_count));
    row.push(Value::long(f.file_size_in_bytes));
    row.push(counts_value(&f.column_sizes));
    row.push(counts_value(&f.value_counts));
    row.push(counts_value(&f.null_value_counts));
    row.push(counts_value(&f.nan_value_counts));
    row.push(bounds_value(&f.lower_bounds));
    row.push(bounds_value(&f.upper_bounds));
    row.push(Value::opt_binary(f.key_metadata.as_deref()));
    row.push(f.split_offsets.as_ref().map_or(Value::Null, |v| {
        Value::List(v.iter().map(|x| Value::long(*x)).collect())
    }));
    row.push(f.equality_ids.as_ref().map_or(Value::Null, |v| {
        Value::List(v.iter().map(|x| Value::int(*x)).collect())
    }));
    row.push(Value::opt_int(f.sort_order_id));
    row.push(Value::opt_long(f.first_row_id));
    row.push(Value::opt_string(f.referenced_data_file.as_deref()));
    row.push(Value::opt_long(f.content_offset));
    row.push(Value::opt_long(f.content_size_in_bytes));
    row
}

#[cfg(test)]
/// A row of a files table.
pub(crate) fn file_row(f: &DataFile, ctx: &RowContext<'_>) -> Result<Vec<Value>> {
    let mut row = data_file_values(f, ctx);
    row.push(readable_metrics_value(f, ctx.metrics)?);
    Ok(row)
}

/// The entry fields before `data_file` (Java's `ManifestEntry` schema).
pub(crate) fn entry_fields(file: Vec<NestedField>) -> Vec<NestedField> {
    vec![
        NestedField::required(0, "status", P::Int.into()),
        NestedField::optional(1, "snapshot_id", P::Long.into()),
        NestedField::optional(3, "sequence_number", P::Long.into()),
        NestedField::optional(4, "file_sequence_number", P::Long.into()),
        NestedField::required(2, "data_file", StructType::new(file).into()),
    ]
}

#[cfg(test)]
/// A row of an entries table.
pub(crate) fn entry_row(e: &ManifestEntry, ctx: &RowContext<'_>) -> Result<Vec<Value>> {
    Ok(vec![
        Value::int(e.status.id()),
        Value::opt_long(e.snapshot_id),
        Value::opt_long(e.sequence_number),
        Value::opt_long(e.file_sequence_number),
        Value::Struct(data_file_values(&e.data_file, ctx)),
        readable_metrics_value(&e.data_file, ctx.metrics)?,
    ])
}
