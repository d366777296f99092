//! Splitting a record batch by the partition tuples of its rows ("Partitioning"): the
//! transforms run vectorised on the source columns (`crate::arrow::transform_array`, the
//! same functions as the scalar transforms), rows are grouped by their tuple, and each group
//! gets its partition values and Java's partition path.

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::{make_array, Array, ArrayRef, RecordBatch};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;

use super::human::partition_to_path;
use crate::arrow::{array_value, transform_array};
use crate::error::{Error, Result};
use crate::spec::partition::PartitionSpec;
use crate::spec::{Literal, PrimitiveType, Schema};

/// The rows of a batch grouped by partition, in the order each tuple first occurs.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionGroups {
    /// The partition tuple of each group, typed by the spec's partition type.
    pub partitions: Vec<Vec<Option<Literal>>>,
    /// `PartitionSpec.partitionToPath` of each tuple.
    pub paths: Vec<String>,
    /// Row indices, grouped: group `g` is `rows[offsets[g]..offsets[g + 1]]`, in row order.
    pub rows: Vec<u32>,
    pub offsets: Vec<usize>,
}

impl PartitionGroups {
    pub fn len(&self) -> usize {
        self.partitions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.partitions.is_empty()
    }

    /// The groups as a record batch: a `partition` struct column (one child per partition
    /// field, as in `crate::arrow::manifest::entries_schema`) and a `path` column.
    pub fn to_batch(&self, partition_type: &crate::spec::StructType) -> Result<RecordBatch> {
        use arrow_array::{StringArray, StructArray};
        use arrow_schema::{Field, Fields, Schema as ArrowSchema};
        use std::sync::Arc;
        let mut fields = Vec::new();
        let mut children: Vec<ArrayRef> = Vec::new();
        for (i, f) in partition_type.fields.iter().enumerate() {
            let ty = f.field_type.as_primitive().ok_or_else(|| {
                Error::unsupported(format!("partition field '{}' is not primitive", f.name))
            })?;
            let values: Vec<Option<&Literal>> = self
                .partitions
                .iter()
                .map(|p| p.get(i).and_then(Option::as_ref))
                .collect();
            let array = crate::arrow::literals_to_array(&values, ty)?;
            fields.push(Field::new(&f.name, array.data_type().clone(), true));
            children.push(array);
        }
        let err = |e: arrow_schema::ArrowError| Error::invalid_argument(e.to_string());
        let partition: ArrayRef = if fields.is_empty() {
            Arc::new(StructArray::new_empty_fields(self.len(), None))
        } else {
            Arc::new(StructArray::try_new(Fields::from(fields), children, None).map_err(err)?)
        };
        let paths: ArrayRef = Arc::new(StringArray::from_iter_values(self.paths.iter()));
        let schema = ArrowSchema::new(vec![
            Field::new("partition", partition.data_type().clone(), false),
            Field::new("path", DataType::Utf8, false),
        ]);
        RecordBatch::try_new(Arc::new(schema), vec![partition, paths]).map_err(err)
    }

    pub fn group_rows(&self, g: usize) -> &[u32] {
        match (self.offsets.get(g), self.offsets.get(g + 1)) {
            (Some(s), Some(e)) => self.rows.get(*s..*e).unwrap_or(&[]),
            _ => &[],
        }
    }
}

/// The column of field `id` in `batch`, whose columns are the schema's fields in order
/// (struct children too); nulls of parent structs are applied to the child.
pub fn source_column(batch: &RecordBatch, schema: &Schema, id: i32) -> Result<ArrayRef> {
    let path = schema.struct_path(id).ok_or_else(|| {
        Error::invalid_argument(format!(
            "partition source field {id} is not in the schema or is inside a list or map"
        ))
    })?;
    let name = schema.name_by_id(id).unwrap_or_default().to_string();
    let missing = || Error::invalid_argument(format!("the batch has no column '{name}'"));
    let (first, rest) = path.split_first().ok_or_else(missing)?;
    if batch.num_columns() != schema.fields().len() {
        return Err(Error::invalid_argument(format!(
            "the batch has {} columns, the schema {} fields",
            batch.num_columns(),
            schema.fields().len()
        )));
    }
    let mut array = batch
        .columns()
        .get(*first as usize)
        .cloned()
        .ok_or_else(missing)?;
    let mut nulls: Option<NullBuffer> = None;
    for &pos in rest {
        let s = array.as_struct_opt().ok_or_else(missing)?;
        nulls = NullBuffer::union(nulls.as_ref(), s.nulls());
        array = s.columns().get(pos as usize).cloned().ok_or_else(missing)?;
    }
    if let Some(parent) = nulls {
        let combined = NullBuffer::union(Some(&parent), array.nulls());
        let data = array
            .to_data()
            .into_builder()
            .nulls(combined)
            .build()
            .map_err(|e| Error::invalid_argument(format!("column '{name}': {e}")))?;
        array = make_array(data);
    }
    Ok(array)
}

/// Groups the rows of `batch` (columns in the order of `schema`'s fields, Arrow types of
/// `crate::arrow::iceberg_to_arrow_type`) by their partition tuple under `spec`.
pub fn partition_batch(
    batch: &RecordBatch,
    schema: &Schema,
    spec: &PartitionSpec,
) -> Result<PartitionGroups> {
    let partition_type = spec.partition_type(schema)?;
    let mut types = Vec::with_capacity(spec.fields.len());
    let mut results: Vec<ArrayRef> = Vec::with_capacity(spec.fields.len());
    for (field, pfield) in spec.fields.iter().zip(&partition_type.fields) {
        let [source_id] = field.source_ids.as_slice() else {
            return Err(Error::unsupported(format!(
                "partition field '{}' has several source columns",
                field.name
            )));
        };
        let source = schema
            .field_by_id(*source_id)
            .and_then(|f| f.field_type.as_primitive())
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "partition field '{}': source {source_id} is not a primitive column",
                    field.name
                ))
            })?;
        let column = source_column(batch, schema, *source_id)?;
        let result = transform_array(&field.transform, source, column.as_ref()).map_err(|e| {
            Error::invalid_argument(format!("partition field '{}': {e}", field.name))
        })?;
        let ty = pfield.field_type.as_primitive().cloned().ok_or_else(|| {
            Error::unsupported(format!("partition field '{}' is not primitive", field.name))
        })?;
        types.push(ty);
        results.push(result);
    }

    let n = batch.num_rows();
    let mut group_of_row: Vec<u32> = Vec::with_capacity(n);
    let mut first_rows: Vec<usize> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    if results.is_empty() {
        // unpartitioned: one group of all rows
        if n > 0 {
            first_rows.push(0);
            sizes.push(n);
            group_of_row.resize(n, 0);
        }
    } else {
        let mut index: HashMap<Vec<u8>, u32> = HashMap::new();
        let mut key = Vec::new();
        for row in 0..n {
            key.clear();
            for a in &results {
                append_key(a.as_ref(), row, &mut key)?;
            }
            let g = match index.get(key.as_slice()) {
                Some(g) => *g,
                None => {
                    let g = first_rows.len() as u32;
                    index.insert(key.clone(), g);
                    first_rows.push(row);
                    sizes.push(0);
                    g
                }
            };
            sizes[g as usize] += 1;
            group_of_row.push(g);
        }
    }

    // a counting sort of the rows by group keeps each group in row order
    let mut offsets = Vec::with_capacity(sizes.len() + 1);
    offsets.push(0);
    for s in &sizes {
        offsets.push(offsets.last().copied().unwrap_or(0) + s);
    }
    let mut next = offsets.clone();
    let mut rows = vec![0u32; n];
    for (row, g) in group_of_row.iter().enumerate() {
        let slot = &mut next[*g as usize];
        rows[*slot] = row as u32;
        *slot += 1;
    }

    let mut partitions = Vec::with_capacity(first_rows.len());
    let mut paths = Vec::with_capacity(first_rows.len());
    for &row in &first_rows {
        let values = results
            .iter()
            .zip(&types)
            .map(|(a, t)| array_value(a.as_ref(), row, t))
            .collect::<Result<Vec<_>>>()?;
        paths.push(partition_to_path(spec, &types, &values));
        partitions.push(values);
    }
    Ok(PartitionGroups {
        partitions,
        paths,
        rows,
        offsets,
    })
}

/// Appends a byte key of value `i` of `a` that is equal exactly for equal partition values
/// (floats by bits with NaNs made one, as Java's `Float.equals`; -0.0 and 0.0 differ).
fn append_key(a: &dyn Array, i: usize, key: &mut Vec<u8>) -> Result<()> {
    if a.is_null(i) {
        key.push(0);
        return Ok(());
    }
    key.push(1);
    match a.data_type() {
        DataType::Null => {}
        DataType::Boolean => key.push(u8::from(a.as_boolean().value(i))),
        DataType::Int32 => key.extend(
            a.as_primitive::<arrow_array::types::Int32Type>()
                .value(i)
                .to_le_bytes(),
        ),
        DataType::Date32 => key.extend(
            a.as_primitive::<arrow_array::types::Date32Type>()
                .value(i)
                .to_le_bytes(),
        ),
        DataType::Int64 => key.extend(
            a.as_primitive::<arrow_array::types::Int64Type>()
                .value(i)
                .to_le_bytes(),
        ),
        DataType::Time64(_) => key.extend(
            a.as_primitive::<arrow_array::types::Time64MicrosecondType>()
                .value(i)
                .to_le_bytes(),
        ),
        DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, _) => key.extend(
            a.as_primitive::<arrow_array::types::TimestampMicrosecondType>()
                .value(i)
                .to_le_bytes(),
        ),
        DataType::Timestamp(arrow_schema::TimeUnit::Nanosecond, _) => key.extend(
            a.as_primitive::<arrow_array::types::TimestampNanosecondType>()
                .value(i)
                .to_le_bytes(),
        ),
        DataType::Decimal128(_, _) => key.extend(
            a.as_primitive::<arrow_array::types::Decimal128Type>()
                .value(i)
                .to_le_bytes(),
        ),
        DataType::Float32 => {
            let v = a.as_primitive::<arrow_array::types::Float32Type>().value(i);
            let bits = if v.is_nan() {
                f32::NAN.to_bits()
            } else {
                v.to_bits()
            };
            key.extend(bits.to_le_bytes())
        }
        DataType::Float64 => {
            let v = a.as_primitive::<arrow_array::types::Float64Type>().value(i);
            let bits = if v.is_nan() {
                f64::NAN.to_bits()
            } else {
                v.to_bits()
            };
            key.extend(bits.to_le_bytes())
        }
        DataType::Utf8 => push_bytes(a.as_string::<i32>().value(i).as_bytes(), key),
        DataType::LargeUtf8 => push_bytes(a.as_string::<i64>().value(i).as_bytes(), key),
        DataType::Binary => push_bytes(a.as_binary::<i32>().value(i), key),
        DataType::LargeBinary => push_bytes(a.as_binary::<i64>().value(i), key),
        DataType::FixedSizeBinary(_) => push_bytes(a.as_fixed_size_binary().value(i), key),
        other => {
            return Err(Error::unsupported(format!(
                "partition values of Arrow type {other} are not supported"
            )))
        }
    }
    Ok(())
}

fn push_bytes(b: &[u8], key: &mut Vec<u8>) {
    key.extend((b.len() as u64).to_le_bytes());
    key.extend_from_slice(b);
}

/// The partition type's field types of `spec` over `schema`, for [`partition_to_path`].
pub fn partition_field_types(spec: &PartitionSpec, schema: &Schema) -> Result<Vec<PrimitiveType>> {
    spec.partition_type(schema)?
        .fields
        .iter()
        .map(|f| {
            f.field_type.as_primitive().cloned().ok_or_else(|| {
                Error::unsupported(format!("partition field '{}' is not primitive", f.name))
            })
        })
        .collect()
}
