//! The files and entries tables built column by column: each decoded manifest entry is
//! appended straight to per-column buffers (as planning's `arrow::manifest::EntriesBuilder`
//! does), instead of a value tree per row. A million files made about 150 small
//! allocations each as value trees, which made `files` 4-5x slower than planning.
//!
//! What the profile of a million files showed after that (docs/benchmarks.md): the table
//! holds 4x the bytes of the plan, so fresh pages (the kernel zeroing them) and copies
//! cost most. Hence nullable fixed-width columns as values and a bitmap ([`OptColumn`],
//! not `Vec<Option<_>>`), typed bounds and partition values decoded straight into typed
//! buffers ([`TypedColumn`], no `Literal` per value), each file's counts and bounds walked
//! once by field id ([`MetricIndex`]), the fixed-width columns sized from the manifest
//! list's file counts, and one batch per manifest, not joined into one (planning does not
//! join its batches either).

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::types::{Float32Type, Float64Type, Int32Type, Int64Type};
use arrow_array::{
    make_array, Array, ArrayRef, Int32Array, Int64Array, ListArray, MapArray, RecordBatch,
    RecordBatchOptions, StructArray,
};
use arrow_array::{ArrowPrimitiveType, PrimitiveArray};
use arrow_buffer::{BooleanBufferBuilder, NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, FieldRef, Fields, Schema as ArrowSchema};

use super::files::{MetricColumn, RowContext};
use crate::arrow::literals_to_array;
use crate::error::{Error, Result};
use crate::manifest::{DataFile, ManifestEntry};
use crate::spec::types::{PrimitiveType, StructType, Type};
use crate::spec::Literal;

fn arrow_err(e: arrow_schema::ArrowError) -> Error {
    Error::invalid_argument(format!("cannot build a metadata table column: {e}"))
}

fn too_long() -> Error {
    Error::invalid_argument("a metadata table column has more than 2^31 nested values")
}

fn offset(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| too_long())
}

fn nulls(valid: &[bool]) -> Option<NullBuffer> {
    if valid.iter().all(|v| *v) {
        None
    } else {
        Some(NullBuffer::from(valid.to_vec()))
    }
}

/// A `map<int, long>` or `map<int, binary>` column.
#[derive(Default)]
struct MapColumn<V> {
    offsets: Vec<i32>,
    keys: Vec<i32>,
    values: V,
    valid: Vec<bool>,
}

impl<V> MapColumn<V> {
    fn new(values: V) -> Self {
        MapColumn {
            offsets: vec![0],
            keys: Vec::new(),
            values,
            valid: Vec::new(),
        }
    }

    fn finish(&mut self, data_type: &DataType, values: ArrayRef) -> Result<ArrayRef> {
        let DataType::Map(entries, sorted) = data_type else {
            return Err(Error::invalid_argument(format!("{data_type} is not a map")));
        };
        let DataType::Struct(kv) = entries.data_type() else {
            return Err(Error::invalid_argument("a map without key and value"));
        };
        let keys: ArrayRef = Arc::new(Int32Array::from(std::mem::take(&mut self.keys)));
        let entries_array =
            StructArray::try_new(kv.clone(), vec![keys, values], None).map_err(arrow_err)?;
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        Ok(Arc::new(
            MapArray::try_new(
                entries.clone(),
                OffsetBuffer::new(offsets.into()),
                entries_array,
                nulls(&std::mem::take(&mut self.valid)),
                *sorted,
            )
            .map_err(arrow_err)?,
        ))
    }
}

impl MapColumn<Vec<i64>> {
    fn append(&mut self, v: &Option<Vec<(i32, i64)>>) -> Result<()> {
        if let Some(pairs) = v {
            for (k, x) in pairs {
                self.keys.push(*k);
                self.values.push(*x);
            }
        }
        self.valid.push(v.is_some());
        self.offsets.push(offset(self.keys.len())?);
        Ok(())
    }

    fn finish_counts(&mut self, data_type: &DataType) -> Result<ArrayRef> {
        let values: ArrayRef = Arc::new(Int64Array::from(std::mem::take(&mut self.values)));
        self.finish(data_type, values)
    }
}

impl MapColumn<BinaryBuilder> {
    fn append(&mut self, v: &Option<Vec<(i32, Vec<u8>)>>) -> Result<()> {
        if let Some(pairs) = v {
            for (k, x) in pairs {
                self.keys.push(*k);
                self.values.append_value(x);
            }
        }
        self.valid.push(v.is_some());
        self.offsets.push(offset(self.keys.len())?);
        Ok(())
    }

    fn finish_bounds(&mut self, data_type: &DataType) -> Result<ArrayRef> {
        let values: ArrayRef = Arc::new(self.values.finish());
        self.finish(data_type, values)
    }
}

/// A `list<long>` or `list<int>` column.
struct ListColumn<T> {
    offsets: Vec<i32>,
    values: Vec<T>,
    valid: Vec<bool>,
}

impl<T: Copy> ListColumn<T> {
    fn new() -> Self {
        ListColumn {
            offsets: vec![0],
            values: Vec::new(),
            valid: Vec::new(),
        }
    }

    fn append(&mut self, v: &Option<Vec<T>>) -> Result<()> {
        if let Some(items) = v {
            self.values.extend_from_slice(items);
        }
        self.valid.push(v.is_some());
        self.offsets.push(offset(self.values.len())?);
        Ok(())
    }

    fn finish(&mut self, data_type: &DataType, values: ArrayRef) -> Result<ArrayRef> {
        let DataType::List(item) = data_type else {
            return Err(Error::invalid_argument(format!(
                "{data_type} is not a list"
            )));
        };
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        Ok(Arc::new(
            ListArray::try_new(
                item.clone(),
                OffsetBuffer::new(offsets.into()),
                values,
                nulls(&std::mem::take(&mut self.valid)),
            )
            .map_err(arrow_err)?,
        ))
    }
}

/// A nullable fixed-width column: values and a validity bitmap, 8 bytes and a bit a row
/// for a long (a `Vec<Option<i64>>` takes 16 and is copied once more into an array; at a
/// million files the difference is hundreds of MB of fresh pages).
struct OptColumn<T: ArrowPrimitiveType> {
    values: Vec<T::Native>,
    valid: BooleanBufferBuilder,
}

impl<T: ArrowPrimitiveType> OptColumn<T> {
    fn new() -> Self {
        OptColumn {
            values: Vec::new(),
            valid: BooleanBufferBuilder::new(0),
        }
    }

    fn reserve(&mut self, rows: usize) {
        self.values.reserve(rows);
        self.valid.reserve(rows);
    }

    fn push(&mut self, v: Option<T::Native>) {
        self.values.push(v.unwrap_or_default());
        self.valid.append(v.is_some());
    }

    /// Sets the last row's value if it is null (the first of several wins).
    fn fill_last(&mut self, v: T::Native) {
        let Some(i) = self.values.len().checked_sub(1) else {
            return;
        };
        if !self.valid.get_bit(i) {
            if let Some(last) = self.values.last_mut() {
                *last = v;
            }
            self.valid.set_bit(i, true);
        }
    }

    fn finish(&mut self) -> PrimitiveArray<T> {
        let values = std::mem::take(&mut self.values);
        let nulls = NullBuffer::new(self.valid.finish());
        PrimitiveArray::new(values.into(), (nulls.null_count() > 0).then_some(nulls))
    }
}

/// A column of Iceberg values (a typed bound of `readable_metrics`, a field of the
/// partition struct) appended as they are read: fixed-width values into a plain buffer
/// and strings straight into the string buffer, so that a million files make no
/// `Literal` (32 bytes, and a `String` for a string) per value.
enum TypedColumn {
    /// int and date
    I32(OptColumn<Int32Type>),
    /// long, time and the timestamps
    I64(OptColumn<Int64Type>),
    F32(OptColumn<Float32Type>),
    F64(OptColumn<Float64Type>),
    String(StringBuilder),
    /// the other types (boolean, decimal, uuid, fixed, binary, ...), through `Literal`
    Other(Vec<Option<Literal>>),
}

impl TypedColumn {
    fn new(ty: Option<&PrimitiveType>) -> TypedColumn {
        use PrimitiveType as P;
        match ty {
            Some(P::Int | P::Date) => TypedColumn::I32(OptColumn::new()),
            Some(
                P::Long
                | P::Time
                | P::Timestamp
                | P::Timestamptz
                | P::TimestampNs
                | P::TimestamptzNs,
            ) => TypedColumn::I64(OptColumn::new()),
            Some(P::Float) => TypedColumn::F32(OptColumn::new()),
            Some(P::Double) => TypedColumn::F64(OptColumn::new()),
            Some(P::String) => TypedColumn::String(StringBuilder::new()),
            _ => TypedColumn::Other(Vec::new()),
        }
    }

    fn reserve(&mut self, rows: usize) {
        match self {
            TypedColumn::I32(c) => c.reserve(rows),
            TypedColumn::I64(c) => c.reserve(rows),
            TypedColumn::F32(c) => c.reserve(rows),
            TypedColumn::F64(c) => c.reserve(rows),
            TypedColumn::String(_) => {}
            TypedColumn::Other(v) => v.reserve(rows),
        }
    }

    fn append_null(&mut self) {
        match self {
            TypedColumn::I32(c) => c.push(None),
            TypedColumn::I64(c) => c.push(None),
            TypedColumn::F32(c) => c.push(None),
            TypedColumn::F64(c) => c.push(None),
            TypedColumn::String(b) => b.append_null(),
            TypedColumn::Other(v) => v.push(None),
        }
    }

    /// Appends the bound `bytes` of column `c` (Iceberg's single-value serialization, with
    /// `Literal::from_bytes`'s promotions and errors).
    fn append_bound(&mut self, bytes: &[u8], c: &MetricColumn) -> Result<()> {
        let bad = |e: Error| Error::invalid_argument(format!("bound of column {}: {e}", c.id));
        if let TypedColumn::String(b) = self {
            let s = std::str::from_utf8(bytes).map_err(|e| {
                bad(Error::invalid_argument(format!(
                    "string bound is not valid UTF-8: {e}"
                )))
            })?;
            b.append_value(s);
            return Ok(());
        }
        let v = Literal::from_bytes(bytes, &c.ty).map_err(bad)?;
        self.append(Some(v), &c.ty).map_err(bad)
    }

    /// Appends a value of type `ty` (an error, as `literals_to_array` gives, when it is of
    /// another type).
    fn append(&mut self, v: Option<Literal>, ty: &dyn std::fmt::Display) -> Result<()> {
        let Some(v) = v else {
            self.append_null();
            return Ok(());
        };
        match (self, v) {
            (TypedColumn::I32(out), Literal::Int(x) | Literal::Date(x)) => out.push(Some(x)),
            (
                TypedColumn::I64(out),
                Literal::Long(x)
                | Literal::Time(x)
                | Literal::Timestamp(x)
                | Literal::Timestamptz(x)
                | Literal::TimestampNs(x)
                | Literal::TimestamptzNs(x),
            ) => out.push(Some(x)),
            (TypedColumn::F32(out), Literal::Float(x)) => out.push(Some(x)),
            (TypedColumn::F64(out), Literal::Double(x)) => out.push(Some(x)),
            (TypedColumn::String(out), Literal::String(x)) => out.append_value(x),
            (TypedColumn::Other(out), v) => out.push(Some(v)),
            (_, v) => {
                return Err(Error::invalid_argument(format!(
                    "value {v} is not of type {ty}"
                )))
            }
        }
        Ok(())
    }

    /// The column as an array of `data_type` (the Arrow type of Iceberg's `ty`, which for
    /// the fixed-width kinds has the layout of the plain array built here).
    fn finish(&mut self, data_type: &DataType, ty: &PrimitiveType) -> Result<ArrayRef> {
        let plain: ArrayRef = match self {
            TypedColumn::I32(c) => Arc::new(c.finish()),
            TypedColumn::I64(c) => Arc::new(c.finish()),
            TypedColumn::F32(c) => Arc::new(c.finish()),
            TypedColumn::F64(c) => Arc::new(c.finish()),
            TypedColumn::String(b) => return Ok(Arc::new(b.finish())),
            TypedColumn::Other(v) => return literal_array(&std::mem::take(v), ty),
        };
        if plain.data_type() == data_type {
            return Ok(plain);
        }
        let data = plain
            .into_data()
            .into_builder()
            .data_type(data_type.clone())
            .build()
            .map_err(arrow_err)?;
        Ok(make_array(data))
    }
}

/// One column's struct in `readable_metrics`.
struct MetricColumnValues {
    column_size: OptColumn<Int64Type>,
    value_count: OptColumn<Int64Type>,
    null_value_count: OptColumn<Int64Type>,
    nan_value_count: OptColumn<Int64Type>,
    lower_bound: TypedColumn,
    upper_bound: TypedColumn,
}

impl MetricColumnValues {
    fn new(c: &MetricColumn) -> MetricColumnValues {
        MetricColumnValues {
            column_size: OptColumn::new(),
            value_count: OptColumn::new(),
            null_value_count: OptColumn::new(),
            nan_value_count: OptColumn::new(),
            lower_bound: TypedColumn::new(Some(&c.ty)),
            upper_bound: TypedColumn::new(Some(&c.ty)),
        }
    }
}

/// The position in `readable_metrics` of each column, by field id: a table indexed by id
/// for the usual small ids, a binary search otherwise. A file's counts and bounds are
/// walked once each, instead of once per column.
enum MetricIndex {
    Dense(Vec<Option<usize>>),
    Sorted(Vec<(i32, usize)>),
}

/// The highest field id indexed by a table (the ids of most tables are far below).
const DENSE_IDS: i32 = 1 << 16;

impl MetricIndex {
    fn new(columns: &[MetricColumn]) -> MetricIndex {
        let max = columns.iter().map(|c| c.id).max().unwrap_or(0);
        if columns.iter().all(|c| c.id >= 0) && max < DENSE_IDS {
            let mut dense = vec![None; usize::try_from(max).unwrap_or(0) + 1];
            for (i, c) in columns.iter().enumerate() {
                if let Some(slot) = usize::try_from(c.id).ok().and_then(|id| dense.get_mut(id)) {
                    *slot = Some(i);
                }
            }
            MetricIndex::Dense(dense)
        } else {
            let mut sorted: Vec<(i32, usize)> =
                columns.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
            sorted.sort_unstable();
            MetricIndex::Sorted(sorted)
        }
    }

    fn get(&self, id: i32) -> Option<usize> {
        match self {
            MetricIndex::Dense(d) => usize::try_from(id)
                .ok()
                .and_then(|i| d.get(i).copied().flatten()),
            MetricIndex::Sorted(s) => s
                .binary_search_by_key(&id, |(k, _)| *k)
                .ok()
                .and_then(|i| s.get(i).map(|(_, v)| *v)),
        }
    }
}

fn literal_array(values: &[Option<Literal>], ty: &PrimitiveType) -> Result<ArrayRef> {
    let refs: Vec<Option<&Literal>> = values.iter().map(Option::as_ref).collect();
    literals_to_array(&refs, ty)
}

fn struct_array(fields: &Fields, columns: Vec<ArrayRef>, len: usize) -> Result<ArrayRef> {
    if fields.is_empty() {
        return Ok(Arc::new(StructArray::new_empty_fields(len, None)));
    }
    Ok(Arc::new(
        StructArray::try_new(fields.clone(), columns, None).map_err(arrow_err)?,
    ))
}

fn struct_fields(f: &FieldRef) -> Result<&Fields> {
    match f.data_type() {
        DataType::Struct(fields) => Ok(fields),
        other => Err(Error::invalid_argument(format!(
            "{} is {other}, not a struct",
            f.name()
        ))),
    }
}

/// The columns of a files or entries table for the files appended so far.
pub(crate) struct FilesBuilder<'a> {
    ctx: RowContext<'a>,
    partition_type: &'a StructType,
    entries: bool,
    len: usize,
    status: Vec<i32>,
    snapshot_id: OptColumn<Int64Type>,
    sequence_number: OptColumn<Int64Type>,
    file_sequence_number: OptColumn<Int64Type>,
    content: Vec<i32>,
    file_path: StringBuilder,
    file_format: StringBuilder,
    /// One column per unified partition field.
    partition: Vec<TypedColumn>,
    record_count: Vec<i64>,
    file_size_in_bytes: Vec<i64>,
    column_sizes: MapColumn<Vec<i64>>,
    value_counts: MapColumn<Vec<i64>>,
    null_value_counts: MapColumn<Vec<i64>>,
    nan_value_counts: MapColumn<Vec<i64>>,
    lower_bounds: MapColumn<BinaryBuilder>,
    upper_bounds: MapColumn<BinaryBuilder>,
    key_metadata: BinaryBuilder,
    split_offsets: ListColumn<i64>,
    equality_ids: ListColumn<i32>,
    sort_order_id: OptColumn<Int32Type>,
    first_row_id: OptColumn<Int64Type>,
    referenced_data_file: StringBuilder,
    content_offset: OptColumn<Int64Type>,
    content_size_in_bytes: OptColumn<Int64Type>,
    metrics: Vec<MetricColumnValues>,
    metric_index: MetricIndex,
    /// Which metric columns the current file's bounds gave a value (first one wins).
    bound_seen: Vec<bool>,
}

impl<'a> FilesBuilder<'a> {
    /// `partition_type`: the unified partition struct (empty when the table has no
    /// partition column); `entries`: the entries table's columns around the file's.
    pub(crate) fn new(ctx: RowContext<'a>, partition_type: &'a StructType, entries: bool) -> Self {
        let metrics = ctx.metrics.iter().map(MetricColumnValues::new).collect();
        let metric_index = MetricIndex::new(ctx.metrics);
        let bound_seen = vec![false; ctx.metrics.len()];
        FilesBuilder {
            partition: partition_type
                .fields
                .iter()
                .map(|f| match &f.field_type {
                    Type::Primitive(p) => TypedColumn::new(Some(p)),
                    _ => TypedColumn::new(None),
                })
                .collect(),
            ctx,
            partition_type,
            entries,
            len: 0,
            status: Vec::new(),
            snapshot_id: OptColumn::new(),
            sequence_number: OptColumn::new(),
            file_sequence_number: OptColumn::new(),
            content: Vec::new(),
            file_path: StringBuilder::new(),
            file_format: StringBuilder::new(),
            record_count: Vec::new(),
            file_size_in_bytes: Vec::new(),
            column_sizes: MapColumn::new(Vec::new()),
            value_counts: MapColumn::new(Vec::new()),
            null_value_counts: MapColumn::new(Vec::new()),
            nan_value_counts: MapColumn::new(Vec::new()),
            lower_bounds: MapColumn::new(BinaryBuilder::new()),
            upper_bounds: MapColumn::new(BinaryBuilder::new()),
            key_metadata: BinaryBuilder::new(),
            split_offsets: ListColumn::new(),
            equality_ids: ListColumn::new(),
            sort_order_id: OptColumn::new(),
            first_row_id: OptColumn::new(),
            referenced_data_file: StringBuilder::new(),
            content_offset: OptColumn::new(),
            content_size_in_bytes: OptColumn::new(),
            metrics,
            metric_index,
            bound_seen,
        }
    }

    /// Room for `rows` files in the fixed-width columns (the manifest's file counts: the
    /// columns then grow without copying themselves over as they double).
    pub(crate) fn reserve(&mut self, rows: usize) {
        if self.entries {
            self.status.reserve(rows);
            self.snapshot_id.reserve(rows);
            self.sequence_number.reserve(rows);
            self.file_sequence_number.reserve(rows);
        }
        self.content.reserve(rows);
        for p in &mut self.partition {
            p.reserve(rows);
        }
        self.record_count.reserve(rows);
        self.file_size_in_bytes.reserve(rows);
        for c in [
            &mut self.column_sizes,
            &mut self.value_counts,
            &mut self.null_value_counts,
            &mut self.nan_value_counts,
        ] {
            c.offsets.reserve(rows);
            c.valid.reserve(rows);
        }
        for c in [&mut self.lower_bounds, &mut self.upper_bounds] {
            c.offsets.reserve(rows);
            c.valid.reserve(rows);
        }
        self.sort_order_id.reserve(rows);
        self.first_row_id.reserve(rows);
        self.content_offset.reserve(rows);
        self.content_size_in_bytes.reserve(rows);
        for m in &mut self.metrics {
            m.column_size.reserve(rows);
            m.value_count.reserve(rows);
            m.null_value_count.reserve(rows);
            m.nan_value_count.reserve(rows);
        }
    }

    pub(crate) fn append_entry(&mut self, e: &ManifestEntry) -> Result<()> {
        self.status.push(e.status.id());
        self.snapshot_id.push(e.snapshot_id);
        self.sequence_number.push(e.sequence_number);
        self.file_sequence_number.push(e.file_sequence_number);
        self.append_file(&e.data_file)
    }

    pub(crate) fn append_file(&mut self, f: &DataFile) -> Result<()> {
        self.len += 1;
        self.content.push(f.content.id());
        self.file_path.append_value(&f.file_path);
        self.file_format.append_value(f.file_format.as_str());
        if self.ctx.partitioned {
            for ((i, column), field) in self
                .partition
                .iter_mut()
                .enumerate()
                .zip(&self.partition_type.fields)
            {
                column.append(self.ctx.partition.value(i, &f.partition), &field.field_type)?;
            }
        }
        self.record_count.push(f.record_count);
        self.file_size_in_bytes.push(f.file_size_in_bytes);
        self.column_sizes.append(&f.column_sizes)?;
        self.value_counts.append(&f.value_counts)?;
        self.null_value_counts.append(&f.null_value_counts)?;
        self.nan_value_counts.append(&f.nan_value_counts)?;
        self.lower_bounds.append(&f.lower_bounds)?;
        self.upper_bounds.append(&f.upper_bounds)?;
        self.key_metadata.append_option(f.key_metadata.as_deref());
        self.split_offsets.append(&f.split_offsets)?;
        self.equality_ids.append(&f.equality_ids)?;
        self.sort_order_id.push(f.sort_order_id);
        self.first_row_id.push(f.first_row_id);
        self.referenced_data_file
            .append_option(f.referenced_data_file.as_deref());
        self.content_offset.push(f.content_offset);
        self.content_size_in_bytes.push(f.content_size_in_bytes);
        for m in &mut self.metrics {
            m.column_size.push(None);
            m.value_count.push(None);
            m.null_value_count.push(None);
            m.nan_value_count.push(None);
        }
        self.fill_counts(&f.column_sizes, |m| &mut m.column_size);
        self.fill_counts(&f.value_counts, |m| &mut m.value_count);
        self.fill_counts(&f.null_value_counts, |m| &mut m.null_value_count);
        self.fill_counts(&f.nan_value_counts, |m| &mut m.nan_value_count);
        self.append_bounds(&f.lower_bounds, |m| &mut m.lower_bound)?;
        self.append_bounds(&f.upper_bounds, |m| &mut m.upper_bound)
    }

    /// Sets the current file's value of each metric column the counts name (the first
    /// pair of an id wins, as a lookup by id finds it).
    fn fill_counts(
        &mut self,
        counts: &Option<Vec<(i32, i64)>>,
        column: fn(&mut MetricColumnValues) -> &mut OptColumn<Int64Type>,
    ) {
        for (k, v) in counts.iter().flatten() {
            let Some(m) = self
                .metric_index
                .get(*k)
                .and_then(|i| self.metrics.get_mut(i))
            else {
                continue;
            };
            column(m).fill_last(*v);
        }
    }

    /// Appends the current file's typed bound to each metric column (the first pair of an
    /// id wins; a null where the file has none).
    fn append_bounds(
        &mut self,
        bounds: &Option<Vec<(i32, Vec<u8>)>>,
        column: fn(&mut MetricColumnValues) -> &mut TypedColumn,
    ) -> Result<()> {
        self.bound_seen.fill(false);
        for (k, bytes) in bounds.iter().flatten() {
            let Some(i) = self.metric_index.get(*k) else {
                continue;
            };
            let (Some(seen), Some(c), Some(m)) = (
                self.bound_seen.get_mut(i),
                self.ctx.metrics.get(i),
                self.metrics.get_mut(i),
            ) else {
                continue;
            };
            if !*seen {
                *seen = true;
                column(m).append_bound(bytes, c)?;
            }
        }
        for (m, seen) in self.metrics.iter_mut().zip(&self.bound_seen) {
            if !*seen {
                column(m).append_null();
            }
        }
        Ok(())
    }

    /// The `DataFile.getType` columns, by the names of `fields`.
    fn file_columns(&mut self, fields: &Fields) -> Result<Vec<ArrayRef>> {
        let n = self.len;
        let mut out: Vec<ArrayRef> = Vec::with_capacity(fields.len());
        for f in fields {
            let t = f.data_type();
            let a: ArrayRef = match f.name().as_str() {
                "content" => Arc::new(Int32Array::from(std::mem::take(&mut self.content))),
                "file_path" => Arc::new(self.file_path.finish()),
                "file_format" => Arc::new(self.file_format.finish()),
                "spec_id" => Arc::new(Int32Array::from(vec![self.ctx.spec_id; n])),
                "partition" => {
                    let children = struct_fields(f)?;
                    let mut columns = Vec::with_capacity(children.len());
                    for ((values, pf), child) in self
                        .partition
                        .iter_mut()
                        .zip(&self.partition_type.fields)
                        .zip(children.iter())
                    {
                        let Type::Primitive(p) = &pf.field_type else {
                            return Err(Error::unsupported(format!(
                                "partition field {} is not primitive",
                                pf.name
                            )));
                        };
                        columns.push(values.finish(child.data_type(), p)?);
                    }
                    struct_array(children, columns, n)?
                }
                "record_count" => {
                    Arc::new(Int64Array::from(std::mem::take(&mut self.record_count)))
                }
                "file_size_in_bytes" => Arc::new(Int64Array::from(std::mem::take(
                    &mut self.file_size_in_bytes,
                ))),
                "column_sizes" => self.column_sizes.finish_counts(t)?,
                "value_counts" => self.value_counts.finish_counts(t)?,
                "null_value_counts" => self.null_value_counts.finish_counts(t)?,
                "nan_value_counts" => self.nan_value_counts.finish_counts(t)?,
                "lower_bounds" => self.lower_bounds.finish_bounds(t)?,
                "upper_bounds" => self.upper_bounds.finish_bounds(t)?,
                "key_metadata" => Arc::new(self.key_metadata.finish()),
                "split_offsets" => {
                    let values = Arc::new(Int64Array::from(std::mem::take(
                        &mut self.split_offsets.values,
                    )));
                    self.split_offsets.finish(t, values)?
                }
                "equality_ids" => {
                    let values = Arc::new(Int32Array::from(std::mem::take(
                        &mut self.equality_ids.values,
                    )));
                    self.equality_ids.finish(t, values)?
                }
                "sort_order_id" => Arc::new(self.sort_order_id.finish()),
                "first_row_id" => Arc::new(self.first_row_id.finish()),
                "referenced_data_file" => Arc::new(self.referenced_data_file.finish()),
                "content_offset" => Arc::new(self.content_offset.finish()),
                "content_size_in_bytes" => Arc::new(self.content_size_in_bytes.finish()),
                other => {
                    return Err(Error::invalid_argument(format!(
                        "no files table column {other}"
                    )))
                }
            };
            out.push(a);
        }
        Ok(out)
    }

    fn readable_metrics(&mut self, fields: &Fields) -> Result<ArrayRef> {
        let n = self.len;
        let mut columns = Vec::with_capacity(fields.len());
        for ((field, c), m) in fields
            .iter()
            .zip(self.ctx.metrics)
            .zip(self.metrics.iter_mut())
        {
            let children = struct_fields(field)?;
            let bound_type = |i: usize| {
                children
                    .get(i)
                    .map(|f| f.data_type().clone())
                    .ok_or_else(|| {
                        Error::invalid_argument(format!("{} has no bound field", field.name()))
                    })
            };
            let values = vec![
                Arc::new(m.column_size.finish()) as ArrayRef,
                Arc::new(m.value_count.finish()),
                Arc::new(m.null_value_count.finish()),
                Arc::new(m.nan_value_count.finish()),
                m.lower_bound.finish(&bound_type(4)?, &c.ty)?,
                m.upper_bound.finish(&bound_type(5)?, &c.ty)?,
            ];
            columns.push(struct_array(children, values, n)?);
        }
        struct_array(fields, columns, n)
    }

    /// The batch of `schema` (the table's Arrow schema) for the files appended.
    pub(crate) fn finish(mut self, schema: &Arc<ArrowSchema>) -> Result<RecordBatch> {
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
        if self.entries {
            for f in schema.fields() {
                let a: ArrayRef = match f.name().as_str() {
                    "status" => Arc::new(Int32Array::from(std::mem::take(&mut self.status))),
                    "snapshot_id" => Arc::new(self.snapshot_id.finish()),
                    "sequence_number" => Arc::new(self.sequence_number.finish()),
                    "file_sequence_number" => Arc::new(self.file_sequence_number.finish()),
                    "data_file" => {
                        let children = struct_fields(f)?;
                        let file = self.file_columns(children)?;
                        struct_array(children, file, self.len)?
                    }
                    "readable_metrics" => self.readable_metrics(struct_fields(f)?)?,
                    other => {
                        return Err(Error::invalid_argument(format!(
                            "no entries table column {other}"
                        )))
                    }
                };
                columns.push(a);
            }
        } else {
            let (file_fields, metrics): (Vec<FieldRef>, Vec<FieldRef>) = schema
                .fields()
                .iter()
                .cloned()
                .partition(|f| f.name() != "readable_metrics");
            columns = self.file_columns(&Fields::from(file_fields))?;
            if let Some(m) = metrics.first() {
                columns.push(self.readable_metrics(struct_fields(m)?)?);
            }
        }
        RecordBatch::try_new_with_options(
            schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(self.len)),
        )
        .map_err(arrow_err)
    }
}
