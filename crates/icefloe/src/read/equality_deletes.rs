//! Equality deletes over Arrow batches: the rows of a task's equality delete files kept as
//! sets of keys, and the keep mask of each data batch against them (the vectorised
//! counterpart of the Python reader's `_EqualityDeletes`).
//!
//! A data row is deleted by an equality delete file when its values of the file's equality
//! fields equal those of one of the file's rows, with Java's `StructLikeSet` equality:
//! - null equals null;
//! - NaN equals NaN (any NaN, whatever its bits, as `Float.equals`), and `-0.0` and `0.0`
//!   are different values (also `Float.equals`);
//! - everything else by value, after the delete file's column is converted to the type the
//!   data column is read as (the table schema's: a delete file written before `int` was
//!   promoted to `long` still deletes the `long` rows).
//!
//! Each file (or each group of files with the same equality field ids, which share one
//! set) applies on its own: a row is kept when no set holds its key. Memory is bounded by
//! the delete rows (their row-encoded keys), not by the data: a data batch is encoded, probed
//! and dropped.
//!
//! Equality fields are found in batches by field id, top-level or inside structs (a field
//! of a null struct is null). A data batch without one of the equality columns (a column
//! dropped from the table and absent from the data file) reads it as all null, as the
//! Python reader does.
//!
//! The differences from the Python reader: it compares NaNs by their bits (two NaNs with
//! different payloads or signs are different keys there) and refuses nested equality
//! fields.

use std::collections::HashSet;

use ahash::RandomState;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{make_array, new_null_array, Array, ArrayRef, BooleanArray, RecordBatch};
use arrow_buffer::{BooleanBuffer, NullBuffer};
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::DataType;

use super::filter::{column_by_field_id, holds, FieldColumn};
use crate::arrow::types::iceberg_to_arrow_type;
use crate::error::{Error, Result};
use crate::spec::Schema;

/// The keys of the equality delete files that share one list of equality field ids.
#[derive(Debug)]
pub struct EqualityDeleteSet {
    /// Sorted: `[2, 1]` and `[1, 2]` are the same key.
    field_ids: Vec<i32>,
    types: Vec<DataType>,
    converter: RowConverter,
    /// aHash (randomly seeded): several times faster than SipHash on short keys.
    keys: HashSet<Box<[u8]>, RandomState>,
}

impl EqualityDeleteSet {
    /// An empty set keyed by `keys`: each equality field id with the Arrow type the data
    /// batches hold its column in (the read schema's, after promotion). Errors for an
    /// empty key, a repeated id or a type that cannot be a key.
    pub fn new(mut keys: Vec<(i32, DataType)>) -> Result<EqualityDeleteSet> {
        if keys.is_empty() {
            return Err(Error::invalid_argument(
                "an equality delete key needs at least one field id",
            ));
        }
        keys.sort_by_key(|(id, _)| *id);
        if keys.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(Error::invalid_argument(format!(
                "equality field ids {:?} repeat an id",
                keys.iter().map(|(id, _)| *id).collect::<Vec<_>>()
            )));
        }
        let converter = RowConverter::new(
            keys.iter()
                .map(|(_, t)| SortField::new(t.clone()))
                .collect(),
        )
        .map_err(|e| Error::invalid_argument(format!("cannot key equality deletes: {e}")))?;
        let (field_ids, types) = keys.into_iter().unzip();
        Ok(EqualityDeleteSet {
            field_ids,
            types,
            converter,
            keys: HashSet::with_hasher(RandomState::new()),
        })
    }

    /// An empty set keyed by `field_ids`, typed by `schema` (the table schema the data is
    /// read with). Errors when an id is not a primitive field of the schema (a column
    /// dropped from the table: use [`EqualityDeleteSet::new`] with the file's type).
    pub fn for_schema(field_ids: &[i32], schema: &Schema) -> Result<EqualityDeleteSet> {
        let keys = field_ids
            .iter()
            .map(|&id| {
                let field = schema.field_by_id(id).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "equality field id {id} is not in the table schema"
                    ))
                })?;
                let ty = field.field_type.as_primitive().ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "equality field '{}' (id {id}) is a {}, not a primitive",
                        field.name, field.field_type
                    ))
                })?;
                Ok((id, iceberg_to_arrow_type(ty)?))
            })
            .collect::<Result<Vec<_>>>()?;
        EqualityDeleteSet::new(keys)
    }

    /// The equality field ids, sorted.
    pub fn field_ids(&self) -> &[i32] {
        &self.field_ids
    }

    /// The number of distinct keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The bytes the keys take (their encoded rows, without the hash table's overhead).
    pub fn key_bytes(&self) -> usize {
        self.keys.iter().map(|k| k.len()).sum()
    }

    /// Adds the rows of a batch of the equality delete file `file` (named in errors). Its
    /// columns are found by field id; each is converted to the key's type. Errors when
    /// the batch lacks an equality column or holds one in a type that does not convert.
    pub fn insert_batch(&mut self, batch: &RecordBatch, file: &str) -> Result<()> {
        let mut columns = Vec::with_capacity(self.field_ids.len());
        for (&id, ty) in self.field_ids.iter().zip(&self.types) {
            let col = column_by_field_id(batch, id)?.ok_or_else(|| {
                Error::invalid_argument(format!(
                    "equality delete file {file} has no column with the equality field id {id}"
                ))
                .in_file(file)
            })?;
            columns.push(key_column(&col, ty).map_err(|e| {
                Error::invalid_argument(format!(
                    "equality column '{}' (field id {id}) of delete file {file}: {e}",
                    col.field.name()
                ))
            })?);
        }
        let rows = self.encode(&columns)?;
        self.keys.reserve(rows.num_rows());
        for row in rows.iter() {
            if !self.keys.contains(row.data()) {
                self.keys.insert(row.data().into());
            }
        }
        Ok(())
    }

    /// Which rows of the data batch `batch` the set deletes.
    pub fn deleted(&self, batch: &RecordBatch) -> Result<BooleanBuffer> {
        let n = batch.num_rows();
        if self.keys.is_empty() {
            return Ok(BooleanBuffer::new_unset(n));
        }
        let mut columns = Vec::with_capacity(self.field_ids.len());
        for (&id, ty) in self.field_ids.iter().zip(&self.types) {
            let column = match column_by_field_id(batch, id)? {
                None => new_null_array(ty, n),
                Some(col) => key_column(&col, ty).map_err(|e| {
                    Error::invalid_argument(format!(
                        "equality column '{}' (field id {id}) of the data: {e}",
                        col.field.name()
                    ))
                })?,
            };
            columns.push(column);
        }
        let rows = self.encode(&columns)?;
        // arrow-rs has no semi-join kernel: probe the hash set row by row
        Ok(BooleanBuffer::collect_bool(n, |i| {
            self.keys.contains(rows.row(i).data())
        }))
    }

    /// The keep mask of the data batch `batch` (true: no key of the set matches the row).
    pub fn keep_mask(&self, batch: &RecordBatch) -> Result<BooleanArray> {
        Ok(BooleanArray::new(!&self.deleted(batch)?, None))
    }

    fn encode(&self, columns: &[ArrayRef]) -> Result<Rows> {
        self.converter
            .convert_columns(columns)
            .map_err(|e| Error::invalid_argument(format!("cannot encode equality keys: {e}")))
    }
}

/// The column as a key column of type `ty`: converted (type promotion, dictionaries
/// unpacked), with the nulls of the structs around it, and every NaN the same NaN.
fn key_column(col: &FieldColumn, ty: &DataType) -> Result<ArrayRef> {
    let mut array = col.array.clone();
    if array.data_type() != ty {
        if !promotes(array.data_type(), ty) {
            return Err(Error::invalid_argument(format!(
                "its type {} is not {ty} nor promotes to it",
                array.data_type()
            )));
        }
        // values out of the promoted type's range fail (the spec asks for a runtime
        // failure), never turn null
        let options = arrow_cast::CastOptions {
            safe: false,
            ..Default::default()
        };
        array = arrow_cast::cast_with_options(&array, ty, &options).map_err(|e| {
            Error::invalid_argument(format!(
                "its type {} does not convert to {ty}: {e}",
                array.data_type()
            ))
        })?;
    }
    if let Some(ancestors) = &col.ancestor_nulls {
        let nulls = NullBuffer::union(array.nulls(), Some(ancestors));
        let data = array
            .to_data()
            .into_builder()
            .nulls(nulls)
            .build()
            .map_err(|e| Error::invalid_argument(e.to_string()))?;
        array = make_array(data);
    }
    // the row encoding keeps a float's bits: one NaN for all
    array = match array.data_type() {
        DataType::Float32 => std::sync::Arc::new(
            array
                .as_primitive::<Float32Type>()
                .unary::<_, Float32Type>(|v| if v.is_nan() { f32::NAN } else { v }),
        ),
        DataType::Float64 => std::sync::Arc::new(
            array
                .as_primitive::<Float64Type>()
                .unary::<_, Float64Type>(|v| if v.is_nan() { f64::NAN } else { v }),
        ),
        _ => array,
    };
    Ok(array)
}

/// Whether values of Arrow type `from` convert to `to` as Iceberg promotes types (`int` to
/// `long`, `float` to `double`, `date` to `timestamp(_ns)`, a wider decimal, `unknown` to
/// anything) or are the same values in another layout (large, view or dictionary-encoded
/// strings and binary, another zone label).
fn promotes(from: &DataType, to: &DataType) -> bool {
    use DataType as D;
    match (from, to) {
        (D::Dictionary(_, value), _) => promotes(value, to),
        (D::Null, _) | (D::Int32, D::Int64) | (D::Float32, D::Float64) => true,
        (D::Date32, D::Timestamp(_, None)) => true,
        (D::Decimal128(p1, s1), D::Decimal128(p2, s2)) => s1 == s2 && p1 <= p2,
        _ => holds(to, from),
    }
}

/// The equality deletes of one task: one [`EqualityDeleteSet`] per distinct list of
/// equality field ids.
#[derive(Debug, Default)]
pub struct EqualityDeletes {
    sets: Vec<EqualityDeleteSet>,
}

impl EqualityDeletes {
    pub fn new() -> EqualityDeletes {
        EqualityDeletes::default()
    }

    /// The set for the key `keys` (field ids with the data's Arrow types, see
    /// [`EqualityDeleteSet::new`]), created empty on first use: delete files with the same
    /// equality field ids share one.
    pub fn set_for(&mut self, keys: Vec<(i32, DataType)>) -> Result<&mut EqualityDeleteSet> {
        let mut ids: Vec<i32> = keys.iter().map(|(id, _)| *id).collect();
        ids.sort_unstable();
        let index = match self.sets.iter().position(|s| s.field_ids == ids) {
            Some(i) => i,
            None => {
                self.sets.push(EqualityDeleteSet::new(keys)?);
                self.sets.len() - 1
            }
        };
        self.sets
            .get_mut(index)
            .ok_or_else(|| Error::invalid_argument("equality delete set vanished"))
    }

    /// Adds the rows of one equality delete file (`batches`, named `file` in errors) with
    /// equality field ids `field_ids`, typed by the table `schema` (see
    /// [`EqualityDeleteSet::for_schema`]).
    pub fn insert_file<'b>(
        &mut self,
        field_ids: &[i32],
        schema: &Schema,
        batches: impl IntoIterator<Item = &'b RecordBatch>,
        file: &str,
    ) -> Result<()> {
        let template = EqualityDeleteSet::for_schema(field_ids, schema)?;
        let keys = template
            .field_ids
            .iter()
            .copied()
            .zip(template.types.iter().cloned())
            .collect();
        let set = self.set_for(keys)?;
        for batch in batches {
            set.insert_batch(batch, file)?;
        }
        Ok(())
    }

    /// The sets (one per distinct list of equality field ids).
    pub fn sets(&self) -> &[EqualityDeleteSet] {
        &self.sets
    }

    /// Whether no set holds a key (nothing is deleted).
    pub fn is_empty(&self) -> bool {
        self.sets.iter().all(EqualityDeleteSet::is_empty)
    }

    /// The keep mask of the data batch `batch`: true where no set deletes the row.
    pub fn keep_mask(&self, batch: &RecordBatch) -> Result<BooleanArray> {
        let mut deleted = BooleanBuffer::new_unset(batch.num_rows());
        for set in &self.sets {
            if !set.is_empty() {
                deleted = &deleted | &set.deleted(batch)?;
            }
        }
        Ok(BooleanArray::new(!&deleted, None))
    }
}

#[cfg(test)]
#[path = "equality_deletes_tests.rs"]
mod tests;
