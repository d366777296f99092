//! Batches in the Arrow types Spark's `ArrowColumnVector` reads (the JVM connector hands
//! the reader's batches to Spark through the C Data Interface).
//!
//! Spark has no uuid or fixed type, and `ArrowColumnVector` reads no fixed-size binary:
//! Java Iceberg's Spark integration reads a uuid as a string and fixed as binary
//! (`TypeToSparkType`), and so does icefloe (python/icefloe/spark/types.py does the same for
//! the Python data source). Every other type the reader yields is one Spark reads as it is;
//! columns without uuid or fixed values anywhere inside are passed through untouched.

use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::{
    Array, ArrayRef, BinaryArray, FixedSizeBinaryArray, ListArray, MapArray, RecordBatch,
    RecordBatchOptions, StructArray,
};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema as ArrowSchema};

use crate::error::{Error, Result};
use crate::spec::{PrimitiveType, Schema, Type};

/// Whether a column of this type needs converting for Spark.
fn needs(ty: &Type) -> bool {
    match ty {
        Type::Primitive(PrimitiveType::Uuid) | Type::Primitive(PrimitiveType::Fixed(_)) => true,
        Type::Primitive(_) | Type::Variant => false,
        Type::Struct(s) => s.fields.iter().any(|f| needs(&f.field_type)),
        Type::List(l) => needs(&l.element_field.field_type),
        Type::Map(m) => needs(&m.key_field.field_type) || needs(&m.value_field.field_type),
    }
}

fn arrow_err(column: &str, e: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!("column '{column}': converting for Spark: {e}"))
}

fn with_type(field: &FieldRef, data_type: DataType) -> FieldRef {
    Arc::new(
        Field::new(field.name(), data_type, field.is_nullable())
            .with_metadata(field.metadata().clone()),
    )
}

fn fixed<'a>(array: &'a ArrayRef, column: &str) -> Result<&'a FixedSizeBinaryArray> {
    array
        .as_any()
        .downcast_ref::<FixedSizeBinaryArray>()
        .ok_or_else(|| {
            arrow_err(
                column,
                format!("expected fixed-size binary, found {}", array.data_type()),
            )
        })
}

/// The uuid in its canonical text form (8-4-4-4-12 lowercase hex digits).
fn uuid_text(bytes: &[u8], out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.clear();
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
}

/// One column converted; `field` is its Arrow field, `ty` its Iceberg type.
fn convert(array: &ArrayRef, field: &FieldRef, ty: &Type) -> Result<(ArrayRef, FieldRef)> {
    if !needs(ty) {
        return Ok((Arc::clone(array), Arc::clone(field)));
    }
    let column = field.name();
    match ty {
        Type::Primitive(PrimitiveType::Uuid) => {
            let a = fixed(array, column)?;
            let mut builder = StringBuilder::with_capacity(a.len(), a.len() * 36);
            let mut text = String::with_capacity(36);
            for i in 0..a.len() {
                if a.is_null(i) {
                    builder.append_null();
                } else {
                    uuid_text(a.value(i), &mut text);
                    builder.append_value(&text);
                }
            }
            Ok((Arc::new(builder.finish()), with_type(field, DataType::Utf8)))
        }
        Type::Primitive(PrimitiveType::Fixed(_)) => {
            let a = fixed(array, column)?;
            let width = usize::try_from(a.value_length()).map_err(|e| arrow_err(column, e))?;
            let offsets = (0..=a.len())
                .map(|i| i32::try_from(i * width).map_err(|e| arrow_err(column, e)))
                .collect::<Result<Vec<i32>>>()?;
            let mut values = Vec::with_capacity(a.len() * width);
            for i in 0..a.len() {
                // a null slot holds `width` bytes too, so offsets stay i * width
                values.extend_from_slice(a.value(i));
            }
            let bytes = arrow_buffer::Buffer::from_vec(values);
            let binary = BinaryArray::try_new(
                OffsetBuffer::new(ScalarBuffer::from(offsets)),
                bytes,
                a.nulls().cloned(),
            )
            .map_err(|e| arrow_err(column, e))?;
            Ok((Arc::new(binary), with_type(field, DataType::Binary)))
        }
        Type::Struct(s) => {
            let a = array
                .as_any()
                .downcast_ref::<StructArray>()
                .ok_or_else(|| arrow_err(column, "expected a struct"))?;
            let DataType::Struct(fields) = field.data_type() else {
                return Err(arrow_err(column, "expected a struct field"));
            };
            let (children, child_fields) = convert_children(a.columns(), fields, &s.fields)?;
            let out = StructArray::try_new(child_fields.clone(), children, a.nulls().cloned())
                .map_err(|e| arrow_err(column, e))?;
            Ok((
                Arc::new(out),
                with_type(field, DataType::Struct(child_fields)),
            ))
        }
        Type::List(l) => {
            let a = array
                .as_any()
                .downcast_ref::<ListArray>()
                .ok_or_else(|| arrow_err(column, "expected a list"))?;
            let DataType::List(element) = field.data_type() else {
                return Err(arrow_err(column, "expected a list field"));
            };
            let (values, element) = convert(a.values(), element, &l.element_field.field_type)?;
            let out = ListArray::try_new(
                Arc::clone(&element),
                a.offsets().clone(),
                values,
                a.nulls().cloned(),
            )
            .map_err(|e| arrow_err(column, e))?;
            Ok((Arc::new(out), with_type(field, DataType::List(element))))
        }
        Type::Map(m) => {
            let a = array
                .as_any()
                .downcast_ref::<MapArray>()
                .ok_or_else(|| arrow_err(column, "expected a map"))?;
            let DataType::Map(entries_field, sorted) = field.data_type() else {
                return Err(arrow_err(column, "expected a map field"));
            };
            let DataType::Struct(entry_fields) = entries_field.data_type() else {
                return Err(arrow_err(column, "expected map entries"));
            };
            let entries = a.entries();
            let (children, child_fields) = convert_children(
                entries.columns(),
                entry_fields,
                &[m.key_field.clone(), m.value_field.clone()],
            )?;
            let entries =
                StructArray::try_new(child_fields.clone(), children, entries.nulls().cloned())
                    .map_err(|e| arrow_err(column, e))?;
            let entries_field = with_type(entries_field, DataType::Struct(child_fields));
            let out = MapArray::try_new(
                Arc::clone(&entries_field),
                a.offsets().clone(),
                entries,
                a.nulls().cloned(),
                *sorted,
            )
            .map_err(|e| arrow_err(column, e))?;
            Ok((
                Arc::new(out),
                with_type(field, DataType::Map(entries_field, *sorted)),
            ))
        }
        Type::Primitive(_) | Type::Variant => Ok((Arc::clone(array), Arc::clone(field))),
    }
}

fn convert_children(
    arrays: &[ArrayRef],
    fields: &Fields,
    iceberg: &[crate::spec::NestedField],
) -> Result<(Vec<ArrayRef>, Fields)> {
    if arrays.len() != iceberg.len() || fields.len() != iceberg.len() {
        return Err(Error::invalid_argument(format!(
            "converting for Spark: {} Arrow columns for {} Iceberg fields",
            arrays.len(),
            iceberg.len()
        )));
    }
    let mut out = Vec::with_capacity(arrays.len());
    let mut out_fields = Vec::with_capacity(arrays.len());
    for ((array, field), f) in arrays.iter().zip(fields.iter()).zip(iceberg) {
        let (a, fd) = convert(array, field, &f.field_type)?;
        out.push(a);
        out_fields.push(fd);
    }
    Ok((out, Fields::from(out_fields)))
}

/// A reader's batch (the columns of `schema`, in its order, then any metadata columns, which
/// are kept as they are) in the Arrow types Spark reads.
pub fn to_spark_batch(batch: &RecordBatch, schema: &Schema) -> Result<RecordBatch> {
    if !schema.fields().iter().any(|f| needs(&f.field_type)) {
        return Ok(batch.clone());
    }
    let arrow_schema = batch.schema();
    let mut columns = Vec::with_capacity(batch.num_columns());
    let mut fields = Vec::with_capacity(batch.num_columns());
    for (i, (array, field)) in batch
        .columns()
        .iter()
        .zip(arrow_schema.fields())
        .enumerate()
    {
        let (a, f) = match schema.fields().get(i) {
            Some(iceberg) => convert(array, field, &iceberg.field_type)?,
            None => (Arc::clone(array), Arc::clone(field)),
        };
        columns.push(a);
        fields.push(f);
    }
    let out_schema = Arc::new(ArrowSchema::new_with_metadata(
        fields,
        arrow_schema.metadata().clone(),
    ));
    RecordBatch::try_new_with_options(
        out_schema,
        columns,
        &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
    .map_err(|e| Error::invalid_argument(format!("converting a batch for Spark: {e}")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::spec::types::{ListType, NestedField, StructType};
    use arrow_array::{Int32Array, StringArray};

    #[test]
    fn uuid_and_fixed_become_string_and_binary_also_nested() {
        let schema = Schema::new(
            0,
            vec![
                NestedField::optional(1, "id", Type::Primitive(PrimitiveType::Int)),
                NestedField::optional(2, "u", Type::Primitive(PrimitiveType::Uuid)),
                NestedField::optional(
                    3,
                    "s",
                    Type::Struct(Arc::new(StructType::new(vec![NestedField::optional(
                        4,
                        "f",
                        Type::Primitive(PrimitiveType::Fixed(2)),
                    )]))),
                ),
                NestedField::optional(
                    5,
                    "l",
                    Type::List(Arc::new(ListType::new(
                        6,
                        false,
                        Type::Primitive(PrimitiveType::Fixed(1)),
                    ))),
                ),
            ],
            vec![],
        )
        .unwrap();
        let arrow = crate::arrow::schema::schema_to_arrow(&schema).unwrap();
        let uuid = FixedSizeBinaryArray::try_from_sparse_iter_with_size(
            vec![Some((0u8..16).collect::<Vec<_>>()), None].into_iter(),
            16,
        )
        .unwrap();
        let inner = FixedSizeBinaryArray::try_from_sparse_iter_with_size(
            vec![Some(vec![1u8, 2]), Some(vec![3u8, 4])].into_iter(),
            2,
        )
        .unwrap();
        let DataType::Struct(s_fields) = arrow.field(2).data_type().clone() else {
            panic!()
        };
        let s = StructArray::try_new(s_fields, vec![Arc::new(inner) as ArrayRef], None).unwrap();
        let DataType::List(element) = arrow.field(3).data_type().clone() else {
            panic!()
        };
        let values = FixedSizeBinaryArray::try_from_sparse_iter_with_size(
            vec![Some(vec![9u8]), Some(vec![8u8]), Some(vec![7u8])].into_iter(),
            1,
        )
        .unwrap();
        let l = ListArray::try_new(
            element,
            OffsetBuffer::new(ScalarBuffer::from(vec![0, 1, 3])),
            Arc::new(values),
            None,
        )
        .unwrap();
        let batch = RecordBatch::try_new(
            Arc::new(arrow),
            vec![
                Arc::new(Int32Array::from(vec![1, 2])),
                Arc::new(uuid),
                Arc::new(s),
                Arc::new(l),
            ],
        )
        .unwrap();
        let out = to_spark_batch(&batch, &schema).unwrap();
        let u = out
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(u.value(0), "00010203-0405-0607-0809-0a0b0c0d0e0f");
        assert!(u.is_null(1));
        let s = out
            .column(2)
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();
        let f = s.column(0).as_any().downcast_ref::<BinaryArray>().unwrap();
        assert_eq!(f.value(1), &[3u8, 4]);
        let l = out.column(3).as_any().downcast_ref::<ListArray>().unwrap();
        let v = l.values().as_any().downcast_ref::<BinaryArray>().unwrap();
        assert_eq!((v.value(0), v.value(2)), (&[9u8][..], &[7u8][..]));
        assert_eq!(out.column(0).as_ref(), batch.column(0).as_ref());
        // field ids stay on the converted fields
        assert_eq!(
            out.schema().field(1).metadata(),
            batch.schema().field(1).metadata()
        );
    }
}
