//! Column metrics of a data file computed from the Arrow arrays written into it, as Java's
//! Parquet writer records them (`ParquetUtil.footerMetrics` plus its float/double field
//! metrics):
//!
//! - value and null counts per leaf column count Parquet's leaf slots: one per row for
//!   columns outside lists and maps; for list elements and map keys/values one per element,
//!   plus one for every null or empty list (map) and for every null ancestor, which counts
//!   as a null (this is what the Parquet footer holds and Java copies);
//! - NaN counts for float and double columns outside lists and maps; NaN never enters a
//!   bound, and `-0.0 < 0.0` (Java's `Float.compare`);
//! - bounds (Appendix D) only for columns outside lists and maps, strings and binary cut per
//!   the column's [`MetricsMode`] (see [`super::truncate`]).

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
    /// Inside a list or a map: counts only, no bounds or NaN counts.
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

/// Which slots of an array feed a leaf: every row (with the nulls of struct ancestors), or
/// a list of slots where `None` is a null or empty list / map or a null ancestor.
enum Sel {
    Rows(Option<NullBuffer>),
    Entries(Vec<Option<usize>>),
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
            self.visit(
                field,
                &field.name,
                column.as_ref(),
                &Sel::Rows(None),
                &mut leaf,
            )?;
        }
        self.record_count += batch.num_rows() as i64;
        Ok(())
    }

    fn visit(
        &mut self,
        field: &NestedField,
        name: &str,
        array: &dyn Array,
        sel: &Sel,
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
                update_leaf(acc, array, sel).map_err(|e| match e {
                    Error::InvalidArgument { message, .. } => {
                        Error::invalid_argument(format!("column '{name}': {message}"))
                    }
                    other => other,
                })
            }
            Type::Struct(s) => {
                let a = array.as_struct_opt().ok_or_else(mismatch)?;
                check_width(s, a.num_columns(), name)?;
                let child_sel = match sel {
                    Sel::Rows(nulls) => Sel::Rows(NullBuffer::union(nulls.as_ref(), a.nulls())),
                    Sel::Entries(v) => {
                        Sel::Entries(v.iter().map(|e| e.filter(|j| a.is_valid(*j))).collect())
                    }
                };
                for (f, c) in s.fields.iter().zip(a.columns()) {
                    let child = format!("{name}.{}", f.name);
                    self.visit(f, &child, c.as_ref(), &child_sel, leaf)?;
                }
                Ok(())
            }
            Type::List(l) => {
                let a = array.as_list_opt::<i32>().ok_or_else(mismatch)?;
                let entries = expand(sel, a.len(), |i| a.is_valid(i), a.value_offsets());
                let child = format!("{name}.element");
                self.visit(
                    &l.element_field,
                    &child,
                    a.values().as_ref(),
                    &Sel::Entries(entries),
                    leaf,
                )
            }
            Type::Map(m) => {
                let a = array.as_map_opt().ok_or_else(mismatch)?;
                let entries = expand(sel, a.len(), |i| a.is_valid(i), a.value_offsets());
                let sel = Sel::Entries(entries);
                let (k, v) = (a.keys(), a.values());
                self.visit(&m.key_field, &format!("{name}.key"), k.as_ref(), &sel, leaf)?;
                self.visit(
                    &m.value_field,
                    &format!("{name}.value"),
                    v.as_ref(),
                    &sel,
                    leaf,
                )
            }
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
            let id = leaf.field_id;
            m.value_counts.push((id, acc.values));
            m.null_value_counts.push((id, acc.nulls));
            let is_float = matches!(leaf.ty, PrimitiveType::Float | PrimitiveType::Double);
            if is_float && !leaf.repeated {
                m.nan_value_counts.push((id, acc.nans));
            }
            if !mode.has_bounds() || leaf.repeated {
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

/// The child slots of a list or map column: its elements for each valid, non-empty slot of
/// `sel`, and one `None` for every null slot or empty list.
fn expand(
    sel: &Sel,
    len: usize,
    is_valid: impl Fn(usize) -> bool,
    offsets: &[i32],
) -> Vec<Option<usize>> {
    let mut out = Vec::new();
    let push = |i: Option<usize>, out: &mut Vec<Option<usize>>| {
        let Some(i) = i.filter(|i| is_valid(*i)) else {
            out.push(None);
            return;
        };
        let (start, end) = match (offsets.get(i), offsets.get(i + 1)) {
            (Some(s), Some(e)) => (*s as usize, *e as usize),
            _ => (0, 0),
        };
        if start == end {
            out.push(None);
        } else {
            out.extend((start..end).map(Some));
        }
    };
    match sel {
        Sel::Rows(nulls) => {
            for i in 0..len {
                let valid = nulls.as_ref().map_or(true, |n| n.is_valid(i));
                push(valid.then_some(i), &mut out);
            }
        }
        Sel::Entries(v) => {
            for e in v {
                push(*e, &mut out);
            }
        }
    }
    out
}

/// Calls `f` for each slot of `sel` that holds a value of `array`; returns the number of
/// slots and of nulls among them.
fn for_each_valid(array: &dyn Array, sel: &Sel, mut f: impl FnMut(usize)) -> (i64, i64) {
    match sel {
        Sel::Rows(ancestors) => {
            let n = array.len();
            let nulls = NullBuffer::union(ancestors.as_ref(), array.logical_nulls().as_ref());
            match &nulls {
                None => (0..n).for_each(&mut f),
                Some(nb) => (0..n).filter(|i| nb.is_valid(*i)).for_each(&mut f),
            }
            (n as i64, nulls.map_or(0, |nb| nb.null_count() as i64))
        }
        Sel::Entries(v) => {
            let mut nulls = 0;
            for e in v {
                match e {
                    Some(j) if array.is_valid(*j) => f(*j),
                    _ => nulls += 1,
                }
            }
            (v.len() as i64, nulls)
        }
    }
}

/// Min and max of a primitive array's selected values with `less` as the order; values for
/// which `skip` holds (NaN) are counted and left out.
/// Slots, nulls, skipped (NaN) values, and min and max of one array.
type Summary<V> = (i64, i64, i64, Option<(V, V)>);

fn primitive_min_max<T: ArrowPrimitiveType>(
    array: &dyn Array,
    sel: &Sel,
    skip: impl Fn(T::Native) -> bool,
    less: impl Fn(T::Native, T::Native) -> bool,
) -> Result<Summary<T::Native>> {
    let a = array
        .as_primitive_opt::<T>()
        .ok_or_else(|| Error::invalid_argument(format!("unexpected {}", array.data_type())))?;
    let values = a.values();
    let mut skipped = 0;
    let mut mm: Option<(T::Native, T::Native)> = None;
    let (n, nulls) = for_each_valid(array, sel, |i| {
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
    sel: &Sel,
    value: impl Fn(usize) -> &'a [u8],
) -> (i64, i64, Option<ByteRange<'a>>) {
    let mut mm: Option<(&[u8], &[u8])> = None;
    let (n, nulls) = for_each_valid(array, sel, |i| {
        let v = value(i);
        mm = Some(match mm {
            None => (v, v),
            Some((lo, hi)) => (lo.min(v), hi.max(v)),
        });
    });
    (n, nulls, mm)
}

fn update_leaf(acc: &mut Acc, array: &dyn Array, sel: &Sel) -> Result<()> {
    let (n, nulls, nans, new) = match array.data_type() {
        DataType::Boolean => {
            let a = array.as_boolean();
            let mut mm: Option<(bool, bool)> = None;
            let (n, nulls) = for_each_valid(array, sel, |i| {
                let v = a.value(i);
                mm = Some(mm.map_or((v, v), |(lo, hi)| (lo & v, hi | v)));
            });
            (n, nulls, 0, mm.map(|(a, b)| MinMax::Bool(a, b)))
        }
        DataType::Int32 => {
            let (n, nu, _, mm) =
                primitive_min_max::<Int32Type>(array, sel, |_| false, |a, b| a < b)?;
            (n, nu, 0, mm.map(|(a, b)| MinMax::I32(a, b)))
        }
        DataType::Date32 => {
            let (n, nu, _, mm) =
                primitive_min_max::<Date32Type>(array, sel, |_| false, |a, b| a < b)?;
            (n, nu, 0, mm.map(|(a, b)| MinMax::I32(a, b)))
        }
        DataType::Int64 => {
            let (n, nu, _, mm) =
                primitive_min_max::<Int64Type>(array, sel, |_| false, |a, b| a < b)?;
            (n, nu, 0, mm.map(|(a, b)| MinMax::I64(a, b)))
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            let (n, nu, _, mm) =
                primitive_min_max::<Time64MicrosecondType>(array, sel, |_| false, |a, b| a < b)?;
            (n, nu, 0, mm.map(|(a, b)| MinMax::I64(a, b)))
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            let (n, nu, _, mm) =
                primitive_min_max::<TimestampMicrosecondType>(array, sel, |_| false, |a, b| a < b)?;
            (n, nu, 0, mm.map(|(a, b)| MinMax::I64(a, b)))
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            let (n, nu, _, mm) =
                primitive_min_max::<TimestampNanosecondType>(array, sel, |_| false, |a, b| a < b)?;
            (n, nu, 0, mm.map(|(a, b)| MinMax::I64(a, b)))
        }
        DataType::Decimal128(_, _) => {
            let (n, nu, _, mm) =
                primitive_min_max::<Decimal128Type>(array, sel, |_| false, |a, b| a < b)?;
            (n, nu, 0, mm.map(|(a, b)| MinMax::I128(a, b)))
        }
        // total_cmp orders -0.0 before 0.0, as Float.compare; NaN is skipped
        DataType::Float32 => {
            let (n, nu, nans, mm) = primitive_min_max::<Float32Type>(
                array,
                sel,
                |v: f32| v.is_nan(),
                |a: f32, b: f32| a.total_cmp(&b).is_lt(),
            )?;
            (n, nu, nans, mm.map(|(a, b)| MinMax::F32(a, b)))
        }
        DataType::Float64 => {
            let (n, nu, nans, mm) = primitive_min_max::<Float64Type>(
                array,
                sel,
                |v: f64| v.is_nan(),
                |a: f64, b: f64| a.total_cmp(&b).is_lt(),
            )?;
            (n, nu, nans, mm.map(|(a, b)| MinMax::F64(a, b)))
        }
        DataType::Utf8 => {
            let a = array.as_string::<i32>();
            let (n, nu, mm) = bytes_min_max(array, sel, |i| a.value(i).as_bytes());
            (
                n,
                nu,
                0,
                mm.map(|(l, h)| MinMax::Bytes(l.to_vec(), h.to_vec())),
            )
        }
        DataType::Binary => {
            let a = array.as_binary::<i32>();
            let (n, nu, mm) = bytes_min_max(array, sel, |i| a.value(i));
            (
                n,
                nu,
                0,
                mm.map(|(l, h)| MinMax::Bytes(l.to_vec(), h.to_vec())),
            )
        }
        DataType::FixedSizeBinary(_) => {
            let a = array.as_fixed_size_binary();
            let (n, nu, mm) = bytes_min_max(array, sel, |i| a.value(i));
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
