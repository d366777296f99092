//! Column metrics of a data file computed from the Arrow arrays written into it, as Java's
//! Parquet writer records them (`ParquetUtil.footerMetrics` plus its float/double field
//! metrics; checked against Java in tests/test_writer_oracle.py):
//!
//! - value and null counts per leaf column, one slot per row; a null struct makes its
//!   children null, except for float and double columns, which Java counts with its own
//!   field metrics: only rows where every ancestor struct is present;
//! - NaN counts for float and double columns; NaN never enters a bound, and `-0.0 < 0.0`
//!   (Java's `Float.compare`);
//! - bounds (Appendix D), strings and binary cut per the column's [`MetricsMode`] (see
//!   [`super::truncate`]);
//! - nothing but the column size for fields inside lists and maps (Java keeps no counts or
//!   bounds for them).

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time64MicrosecondType, TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::{Array, RecordBatch};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, TimeUnit};

use super::metrics_config::{MetricsConfig, MetricsMode};
use super::truncate::{
    truncate_binary_max, truncate_binary_min, truncate_string_max, truncate_string_min,
};
use crate::arrow::arrow_type_matches;
use crate::error::{Error, Result};
use crate::spec::literal::decimal_min_bytes;
use crate::spec::{NestedField, PrimitiveType, Schema, StructType, Type};

/// The metrics of one data file, ready for its manifest entry (maps by field id, in the
/// file's column order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileMetrics {
    pub record_count: i64,
    pub value_counts: Vec<(i32, i64)>,
    pub null_value_counts: Vec<(i32, i64)>,
    pub nan_value_counts: Vec<(i32, i64)>,
    pub lower_bounds: Vec<(i32, Vec<u8>)>,
    pub upper_bounds: Vec<(i32, Vec<u8>)>,
}

/// A leaf (primitive) column of the schema, in Parquet column order.
#[derive(Debug, Clone)]
pub struct Leaf {
    pub field_id: i32,
    pub ty: PrimitiveType,
    /// Inside a list or a map: no metrics but the column size.
    pub repeated: bool,
}

/// The primitive leaves of `schema`, depth first: the order of a Parquet file's columns.
pub fn leaves(schema: &Schema) -> Vec<Leaf> {
    fn visit(field: &NestedField, repeated: bool, out: &mut Vec<Leaf>) {
        match &field.field_type {
            Type::Primitive(p) => out.push(Leaf {
                field_id: field.id,
                ty: p.clone(),
                repeated,
            }),
            Type::Struct(s) => s.fields.iter().for_each(|f| visit(f, repeated, out)),
            Type::List(l) => visit(&l.element_field, true, out),
            Type::Map(m) => {
                visit(&m.key_field, true, out);
                visit(&m.value_field, true, out);
            }
            Type::Variant => {}
        }
    }
    let mut out = Vec::new();
    schema
        .fields()
        .iter()
        .for_each(|f| visit(f, false, &mut out));
    out
}

/// Min and max of the values seen so far, by kind of value.
#[derive(Debug, Clone, PartialEq)]
enum MinMax {
    Empty,
    Bool(bool, bool),
    I32(i32, i32),
    I64(i64, i64),
    I128(i128, i128),
    F32(f32, f32),
    F64(f64, f64),
    Bytes(Vec<u8>, Vec<u8>),
}

#[derive(Debug, Clone)]
struct Acc {
    values: i64,
    nulls: i64,
    nans: i64,
    min_max: MinMax,
}

/// Accumulates the metrics of the record batches written into one file.
pub struct MetricsCollector {
    leaves: Vec<Leaf>,
    accs: Vec<Acc>,
    record_count: i64,
}

impl MetricsCollector {
    pub fn new(schema: &Schema) -> MetricsCollector {
        let leaves = leaves(schema);
        let accs = leaves
            .iter()
            .map(|_| Acc {
                values: 0,
                nulls: 0,
                nans: 0,
                min_max: MinMax::Empty,
            })
            .collect();
        MetricsCollector {
            leaves,
            accs,
            record_count: 0,
        }
    }

    /// Adds a batch whose columns are the schema's top-level fields, in order, with
    /// nested fields in schema order too and the Arrow types of
    /// [`crate::arrow::iceberg_to_arrow_type`].
    pub fn update(&mut self, schema: &Schema, batch: &RecordBatch) -> Result<()> {
        let fields = schema.fields();
        if batch.num_columns() != fields.len() {
            return Err(Error::invalid_argument(format!(
                "the batch has {} columns, the schema {} fields",
                batch.num_columns(),
                fields.len()
            )));
        }
        let mut leaf = 0;
        for (field, column) in fields.iter().zip(batch.columns()) {
            self.visit(field, &field.name, column.as_ref(), None, &mut leaf)?;
        }
        self.record_count += batch.num_rows() as i64;
        Ok(())
    }

    fn visit(
        &mut self,
        field: &NestedField,
        name: &str,
        array: &dyn Array,
        ancestors: Option<&NullBuffer>,
        leaf: &mut usize,
    ) -> Result<()> {
        let mismatch = || {
            Error::invalid_argument(format!(
                "column '{name}' (field id {}) of type {} cannot be an Arrow {}",
                field.id,
                field.field_type,
                array.data_type()
            ))
        };
        match &field.field_type {
            Type::Primitive(p) => {
                if !arrow_type_matches(p, array.data_type()) {
                    return Err(mismatch());
                }
                let i = *leaf;
                *leaf += 1;
                let acc = self
                    .accs
                    .get_mut(i)
                    .ok_or_else(|| Error::invalid_argument("the schema changed"))?;
                update_leaf(acc, array, ancestors).map_err(|e| match e {
                    Error::InvalidArgument { message, .. } => {
                        Error::invalid_argument(format!("column '{name}': {message}"))
                    }
                    other => other,
                })
            }
            Type::Struct(s) => {
                let a = array.as_struct_opt().ok_or_else(mismatch)?;
                check_width(s, a.num_columns(), name)?;
                let nulls = NullBuffer::union(ancestors, a.nulls());
                for (f, c) in s.fields.iter().zip(a.columns()) {
                    let child = format!("{name}.{}", f.name);
                    self.visit(f, &child, c.as_ref(), nulls.as_ref(), leaf)?;
                }
                Ok(())
            }
            // no metrics inside lists and maps: only check the types and count the leaves
            Type::List(_) | Type::Map(_) => check_nested(field, name, array, leaf),
            Type::Variant => Err(Error::unsupported(format!(
                "column '{name}': writing variant columns is not supported"
            ))),
        }
    }

    /// The metrics of everything added, with the modes of `config` (by the full column
    /// names of `schema`).
    pub fn finish(&self, schema: &Schema, config: &MetricsConfig) -> Result<FileMetrics> {
        let mut m = FileMetrics {
            record_count: self.record_count,
            ..FileMetrics::default()
        };
        for (leaf, acc) in self.leaves.iter().zip(&self.accs) {
            let mode = config.mode_for(schema, leaf.field_id);
            if mode == MetricsMode::None {
                continue;
            }
            if leaf.repeated {
                continue;
            }
            let id = leaf.field_id;
            m.value_counts.push((id, acc.values));
            m.null_value_counts.push((id, acc.nulls));
            if matches!(leaf.ty, PrimitiveType::Float | PrimitiveType::Double) {
                m.nan_value_counts.push((id, acc.nans));
            }
            if !mode.has_bounds() {
                continue;
            }
            let (lower, upper) = bounds(&acc.min_max, &leaf.ty, mode)?;
            if let Some(b) = lower {
                m.lower_bounds.push((id, b));
            }
            if let Some(b) = upper {
                m.upper_bounds.push((id, b));
            }
        }
        Ok(m)
    }

    /// The field ids of the leaf columns whose mode keeps any metrics (column sizes are
    /// recorded for these only, as in Java).
    pub fn measured_leaves(&self, schema: &Schema, config: &MetricsConfig) -> Vec<i32> {
        self.leaves
            .iter()
            .filter(|l| config.mode_for(schema, l.field_id) != MetricsMode::None)
            .map(|l| l.field_id)
            .collect()
    }

    pub fn leaves(&self) -> &[Leaf] {
        &self.leaves
    }
}

fn check_width(s: &StructType, n: usize, name: &str) -> Result<()> {
    if s.fields.len() != n {
        return Err(Error::invalid_argument(format!(
            "column '{name}' has {n} fields, the schema {}",
            s.fields.len()
        )));
    }
    Ok(())
}

/// Calls `f` for each row of `array` that holds a value (not null, nor under a null
/// ancestor); returns the number of rows and of nulls among them.
fn for_each_valid(
    array: &dyn Array,
    ancestors: Option<&NullBuffer>,
    mut f: impl FnMut(usize),
) -> (i64, i64) {
    let n = array.len();
    let nulls = NullBuffer::union(ancestors, array.logical_nulls().as_ref());
    match &nulls {
        None => (0..n).for_each(&mut f),
        Some(nb) => (0..n).filter(|i| nb.is_valid(*i)).for_each(&mut f),
    }
    (n as i64, nulls.map_or(0, |nb| nb.null_count() as i64))
}

/// Checks the Arrow types of a list or map column against its Iceberg type and moves the
/// leaf counter past its leaves.
fn check_nested(
    field: &NestedField,
    name: &str,
    array: &dyn Array,
    leaf: &mut usize,
) -> Result<()> {
    let mismatch = || {
        Error::invalid_argument(format!(
            "column '{name}' (field id {}) of type {} cannot be an Arrow {}",
            field.id,
            field.field_type,
            array.data_type()
        ))
    };
    match &field.field_type {
        Type::Primitive(p) => {
            if !arrow_type_matches(p, array.data_type()) {
                return Err(mismatch());
            }
            *leaf += 1;
            Ok(())
        }
        Type::Struct(s) => {
            let a = array.as_struct_opt().ok_or_else(mismatch)?;
            check_width(s, a.num_columns(), name)?;
            for (f, c) in s.fields.iter().zip(a.columns()) {
                check_nested(f, &format!("{name}.{}", f.name), c.as_ref(), leaf)?;
            }
            Ok(())
        }
        Type::List(l) => {
            let a = array.as_list_opt::<i32>().ok_or_else(mismatch)?;
            let e = &l.element_field;
            check_nested(e, &format!("{name}.element"), a.values().as_ref(), leaf)
        }
        Type::Map(m) => {
            let a = array.as_map_opt().ok_or_else(mismatch)?;
            check_nested(
                &m.key_field,
                &format!("{name}.key"),
                a.keys().as_ref(),
                leaf,
            )?;
            check_nested(
                &m.value_field,
                &format!("{name}.value"),
                a.values().as_ref(),
                leaf,
            )
        }
        Type::Variant => Err(Error::unsupported(format!(
            "column '{name}': writing variant columns is not supported"
        ))),
    }
}

/// Slots, nulls, skipped (NaN) values, and min and max of one array.
type Summary<V> = (i64, i64, i64, Option<(V, V)>);

fn primitive_min_max<T: ArrowPrimitiveType>(
    array: &dyn Array,
    ancestors: Option<&NullBuffer>,
    skip: impl Fn(T::Native) -> bool,
    less: impl Fn(T::Native, T::Native) -> bool,
) -> Result<Summary<T::Native>> {
    let a = array
        .as_primitive_opt::<T>()
        .ok_or_else(|| Error::invalid_argument(format!("unexpected {}", array.data_type())))?;
    let values = a.values();
    let mut skipped = 0;
    let mut mm: Option<(T::Native, T::Native)> = None;
    let (n, nulls) = for_each_valid(array, ancestors, |i| {
        let v = values[i];
        if skip(v) {
            skipped += 1;
            return;
        }
        mm = Some(match mm {
            None => (v, v),
            Some((lo, hi)) => (
                if less(v, lo) { v } else { lo },
                if less(hi, v) { v } else { hi },
            ),
        });
    });
    Ok((n, nulls, skipped, mm))
}

type ByteRange<'a> = (&'a [u8], &'a [u8]);

fn bytes_min_max<'a>(
    array: &dyn Array,
    ancestors: Option<&NullBuffer>,
    value: impl Fn(usize) -> &'a [u8],
) -> (i64, i64, Option<ByteRange<'a>>) {
    let mut mm: Option<(&[u8], &[u8])> = None;
    let (n, nulls) = for_each_valid(array, ancestors, |i| {
        let v = value(i);
        mm = Some(match mm {
            None => (v, v),
            Some((lo, hi)) => (lo.min(v), hi.max(v)),
        });
    });
    (n, nulls, mm)
}

fn update_leaf(acc: &mut Acc, array: &dyn Array, ancestors: Option<&NullBuffer>) -> Result<()> {
    let (n, nulls, nans, new) = match array.data_type() {
        DataType::Boolean => {
            let a = array.as_boolean();
            let mut mm: Option<(bool, bool)> = None;
            let (n, nulls) = for_each_valid(array, ancestors, |i| {
                let v = a.value(i);
                mm = Some(mm.map_or((v, v), |(lo, hi)| (lo & v, hi | v)));
            });
            (n, nulls, 0, mm.map(|(a, b)| MinMax::Bool(a, b)))
        }
        DataType::Int32 => {
            let (n, nu, _, mm) =
                primitive_min_max::<Int32Type>(array, ancestors, |_| false, |a, b| a < b)?;
            (n, nu, 0, mm.map(|(a, b)| MinMax::I32(a, b)))
        }
        DataType::Date32 => {
            let (n, nu, _, mm) =
                primitive_min_max::<Date32Type>(array, ancestors, |_| false, |a, b| a < b)?;
            (n, nu, 0, mm.map(|(a, b)| MinMax::I32(a, b)))
        }
        DataType::Int64 => {
            let (n, nu, _, mm) =
                primitive_min_max::<Int64Type>(array, ancestors, |_| false, |a, b| a < b)?;
            (n, nu, 0, mm.map(|(a, b)| MinMax::I64(a, b)))
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            let (n, nu, _, mm) = primitive_min_max::<Time64MicrosecondType>(
                array,
                ancestors,
                |_| false,
                |a, b| a < b,
            )?;
            (n, nu, 0, mm.map(|(a, b)| MinMax::I64(a, b)))
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            let (n, nu, _, mm) = primitive_min_max::<TimestampMicrosecondType>(
                array,
                ancestors,
                |_| false,
                |a, b| a < b,
            )?;
            (n, nu, 0, mm.map(|(a, b)| MinMax::I64(a, b)))
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            let (n, nu, _, mm) = primitive_min_max::<TimestampNanosecondType>(
                array,
                ancestors,
                |_| false,
                |a, b| a < b,
            )?;
            (n, nu, 0, mm.map(|(a, b)| MinMax::I64(a, b)))
        }
        DataType::Decimal128(_, _) => {
            let (n, nu, _, mm) =
                primitive_min_max::<Decimal128Type>(array, ancestors, |_| false, |a, b| a < b)?;
            (n, nu, 0, mm.map(|(a, b)| MinMax::I128(a, b)))
        }
        // total_cmp orders -0.0 before 0.0, as Float.compare; NaN is skipped
        DataType::Float32 => {
            let (n, nu, nans, mm) = primitive_min_max::<Float32Type>(
                array,
                ancestors,
                |v: f32| v.is_nan(),
                |a: f32, b: f32| a.total_cmp(&b).is_lt(),
            )?;
            (n, nu, nans, mm.map(|(a, b)| MinMax::F32(a, b)))
        }
        DataType::Float64 => {
            let (n, nu, nans, mm) = primitive_min_max::<Float64Type>(
                array,
                ancestors,
                |v: f64| v.is_nan(),
                |a: f64, b: f64| a.total_cmp(&b).is_lt(),
            )?;
            (n, nu, nans, mm.map(|(a, b)| MinMax::F64(a, b)))
        }
        DataType::Utf8 => {
            let a = array.as_string::<i32>();
            let (n, nu, mm) = bytes_min_max(array, ancestors, |i| a.value(i).as_bytes());
            (
                n,
                nu,
                0,
                mm.map(|(l, h)| MinMax::Bytes(l.to_vec(), h.to_vec())),
            )
        }
        DataType::Binary => {
            let a = array.as_binary::<i32>();
            let (n, nu, mm) = bytes_min_max(array, ancestors, |i| a.value(i));
            (
                n,
                nu,
                0,
                mm.map(|(l, h)| MinMax::Bytes(l.to_vec(), h.to_vec())),
            )
        }
        DataType::FixedSizeBinary(_) => {
            let a = array.as_fixed_size_binary();
            let (n, nu, mm) = bytes_min_max(array, ancestors, |i| a.value(i));
            (
                n,
                nu,
                0,
                mm.map(|(l, h)| MinMax::Bytes(l.to_vec(), h.to_vec())),
            )
        }
        other => {
            return Err(Error::invalid_argument(format!(
                "Arrow type {other} is not supported for metrics"
            )))
        }
    };
    // Java's writer counts float and double columns with its own field metrics, which see
    // a value only where every ancestor struct is present (the footer counts every row)
    let (n, nulls) = match array.data_type() {
        DataType::Float32 | DataType::Float64 => {
            let hidden = ancestors.map_or(0, |a| a.null_count() as i64);
            (n - hidden, nulls - hidden)
        }
        _ => (n, nulls),
    };
    acc.values += n;
    acc.nulls += nulls;
    acc.nans += nans;
    if let Some(new) = new {
        acc.min_max = merge(std::mem::replace(&mut acc.min_max, MinMax::Empty), new);
    }
    Ok(())
}

fn merge(old: MinMax, new: MinMax) -> MinMax {
    use MinMax as M;
    match (old, new) {
        (M::Empty, n) => n,
        (M::Bool(a, b), M::Bool(c, d)) => M::Bool(a & c, b | d),
        (M::I32(a, b), M::I32(c, d)) => M::I32(a.min(c), b.max(d)),
        (M::I64(a, b), M::I64(c, d)) => M::I64(a.min(c), b.max(d)),
        (M::I128(a, b), M::I128(c, d)) => M::I128(a.min(c), b.max(d)),
        (M::F32(a, b), M::F32(c, d)) => M::F32(
            if c.total_cmp(&a).is_lt() { c } else { a },
            if b.total_cmp(&d).is_lt() { d } else { b },
        ),
        (M::F64(a, b), M::F64(c, d)) => M::F64(
            if c.total_cmp(&a).is_lt() { c } else { a },
            if b.total_cmp(&d).is_lt() { d } else { b },
        ),
        (M::Bytes(a, b), M::Bytes(c, d)) => M::Bytes(a.min(c), b.max(d)),
        // a leaf always sees one kind of array
        (old, _) => old,
    }
}

type BoundPair = (Option<Vec<u8>>, Option<Vec<u8>>);

/// The Appendix D lower and upper bounds for a column of type `ty` in `mode`.
fn bounds(mm: &MinMax, ty: &PrimitiveType, mode: MetricsMode) -> Result<BoundPair> {
    use MinMax as M;
    let both = |l: Vec<u8>, u: Vec<u8>| Ok((Some(l), Some(u)));
    match mm {
        M::Empty => Ok((None, None)),
        M::Bool(l, u) => both(vec![u8::from(*l)], vec![u8::from(*u)]),
        M::I32(l, u) => both(l.to_le_bytes().to_vec(), u.to_le_bytes().to_vec()),
        M::I64(l, u) => both(l.to_le_bytes().to_vec(), u.to_le_bytes().to_vec()),
        M::I128(l, u) => both(
            decimal_min_bytes(*l).to_vec(),
            decimal_min_bytes(*u).to_vec(),
        ),
        M::F32(l, u) => both(l.to_le_bytes().to_vec(), u.to_le_bytes().to_vec()),
        M::F64(l, u) => both(l.to_le_bytes().to_vec(), u.to_le_bytes().to_vec()),
        M::Bytes(l, u) => {
            let MetricsMode::Truncate(len) = mode else {
                return both(l.clone(), u.clone());
            };
            match ty {
                PrimitiveType::String => {
                    let text = |b: &[u8]| {
                        std::str::from_utf8(b)
                            .map(str::to_string)
                            .map_err(|_| Error::invalid_argument("a string is not valid UTF-8"))
                    };
                    let (l, u) = (text(l)?, text(u)?);
                    Ok((
                        Some(truncate_string_min(&l, len).as_bytes().to_vec()),
                        truncate_string_max(&u, len).map(String::into_bytes),
                    ))
                }
                PrimitiveType::Binary | PrimitiveType::Fixed(_) => Ok((
                    Some(truncate_binary_min(l, len).to_vec()),
                    truncate_binary_max(u, len),
                )),
                // uuids (and anything else) are not truncated
                _ => both(l.clone(), u.clone()),
            }
        }
    }
}
