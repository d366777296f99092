//! A file's arrays turned into arrays of the read schema's types, by field id: nested
//! fields matched by id at every level, promotions by cast, fields the file lacks as their
//! `initial-default` or null.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    make_array, new_null_array, Array, ArrayRef, ListArray, MapArray, StructArray, UInt32Array,
};
use arrow_buffer::OffsetBuffer;
use arrow_cast::{cast_with_options, CastOptions};
use arrow_schema::{DataType, Field, Fields};

use crate::arrow::literals_to_array;
use crate::error::{Error, Result};
use crate::spec::Type;

use super::context::{field_id, PlanContext};

pub struct Conformer<'a> {
    pub ctx: &'a PlanContext,
    /// The data (or delete) file the arrays come from, for errors.
    pub file: &'a str,
}

/// `n` copies of the one value of `one` (a one-element array).
pub fn repeat(one: &dyn Array, n: usize) -> Result<ArrayRef> {
    let zeros = UInt32Array::from(vec![0u32; n]);
    arrow_select::take::take(one, &zeros, None)
        .map_err(|e| Error::invalid_argument(format!("cannot repeat a constant: {e}")))
}

impl Conformer<'_> {
    /// The column of a field the file lacks: its `initial-default` (v3), or null; a
    /// required field without a default is an error, as in Java's readers ("Missing
    /// required field"): nulls would break the column's contract, and a required column
    /// without an initial-default was in the file when it was written, so the file is
    /// not what the table says.
    pub fn missing(&self, target: &Field, n: usize) -> Result<ArrayRef> {
        let id = field_id(target);
        let field = id.and_then(|id| self.ctx.field(id));
        if let (Some(f), Some(id)) = (field, id) {
            if let Some(default) = &f.initial_default {
                let Type::Primitive(p) = &f.field_type else {
                    return Err(Error::unsupported(format!(
                        "initial-default of the nested field {id} ('{}') is not supported",
                        target.name()
                    )));
                };
                let one = literals_to_array(&[Some(default)], p)
                    .and_then(|a| self.cast(&a, target))
                    .map_err(|e| {
                        Error::invalid_metadata(
                            target.name(),
                            format!(
                                "initial-default of field {id} does not fit {}: {e}",
                                target.data_type()
                            ),
                        )
                    })?;
                return repeat(one.as_ref(), n);
            }
            if f.required {
                return Err(Error::invalid_metadata(
                    target.name(),
                    format!(
                        "data file {} has no column for the required field '{}' (id {id}), \
                         which has no initial-default",
                        self.file,
                        target.name()
                    ),
                )
                .in_file(self.file));
            }
        }
        Ok(new_null_array(target.data_type(), n))
    }

    /// `array` (the file's column `source`, ids in its metadata) as `target`.
    pub fn conform(&self, array: &ArrayRef, source: &Field, target: &Field) -> Result<ArrayRef> {
        match target.data_type() {
            DataType::Struct(target_children) => {
                let (DataType::Struct(source_children), Some(s)) =
                    (source.data_type(), array.as_struct_opt())
                else {
                    return Err(self.mismatch(source, target));
                };
                let mut columns = Vec::with_capacity(target_children.len());
                for child in target_children {
                    let id = field_id(child);
                    let found = source_children
                        .iter()
                        .position(|c| id.is_some() && field_id(c) == id);
                    columns.push(match found {
                        Some(i) => self.conform(s.column(i), &source_children[i], child)?,
                        None => self.missing(child, s.len())?,
                    });
                }
                let out =
                    StructArray::try_new(target_children.clone(), columns, s.nulls().cloned())
                        .map_err(|e| self.invalid(target, e))?;
                Ok(Arc::new(out))
            }
            DataType::List(target_element) => {
                let (values, offsets, nulls, source_element) =
                    match (source.data_type(), array.data_type()) {
                        (DataType::List(se), DataType::List(_)) => {
                            let l = array.as_list::<i32>();
                            (
                                l.values().clone(),
                                l.offsets().clone(),
                                l.nulls().cloned(),
                                se,
                            )
                        }
                        (DataType::LargeList(se), DataType::LargeList(_)) => {
                            let l = array.as_list::<i64>();
                            let offsets = l
                                .offsets()
                                .iter()
                                .map(|&o| i32::try_from(o))
                                .collect::<std::result::Result<Vec<i32>, _>>()
                                .map_err(|_| self.mismatch(source, target))?;
                            // offsets from a valid large list are monotonic
                            let offsets = OffsetBuffer::new(offsets.into());
                            (l.values().clone(), offsets, l.nulls().cloned(), se)
                        }
                        _ => return Err(self.mismatch(source, target)),
                    };
                let values = self.conform(&values, source_element, target_element)?;
                let out = ListArray::try_new(target_element.clone(), offsets, values, nulls)
                    .map_err(|e| self.invalid(target, e))?;
                Ok(Arc::new(out))
            }
            DataType::Map(target_entries, sorted) => {
                let (DataType::Map(source_entries, _), Some(m)) =
                    (source.data_type(), array.as_map_opt())
                else {
                    return Err(self.mismatch(source, target));
                };
                let (DataType::Struct(tkv), DataType::Struct(skv)) =
                    (target_entries.data_type(), source_entries.data_type())
                else {
                    return Err(self.mismatch(source, target));
                };
                if tkv.len() != 2 || skv.len() != 2 {
                    return Err(self.mismatch(source, target));
                }
                let keys = self.conform(m.keys(), &skv[0], &tkv[0])?;
                let values = self.conform(m.values(), &skv[1], &tkv[1])?;
                let entries = StructArray::try_new(tkv.clone(), vec![keys, values], None)
                    .map_err(|e| self.invalid(target, e))?;
                let out = MapArray::try_new(
                    target_entries.clone(),
                    m.offsets().clone(),
                    entries,
                    m.nulls().cloned(),
                    *sorted,
                )
                .map_err(|e| self.invalid(target, e))?;
                Ok(Arc::new(out))
            }
            _ => self
                .cast(array, target)
                .map_err(|_| self.mismatch(source, target)),
        }
    }

    /// A primitive array as `target`'s type: as it is when equal; a timestamp only
    /// relabelled when just its zone's name differs (`+00:00` and `UTC`, or none where
    /// the file did not mark it adjusted to UTC: the values are the same instants);
    /// otherwise cast, failing rather than turning values that do not fit into nulls.
    fn cast(&self, array: &ArrayRef, target: &Field) -> Result<ArrayRef> {
        let tt = target.data_type();
        let st = array.data_type();
        if st == tt {
            return Ok(Arc::clone(array));
        }
        if let (DataType::Timestamp(su, _), DataType::Timestamp(tu, _)) = (st, tt) {
            if su == tu {
                let data = array
                    .to_data()
                    .into_builder()
                    .data_type(tt.clone())
                    .build()
                    .map_err(|e| Error::invalid_argument(e.to_string()))?;
                return Ok(make_array(data));
            }
        }
        let options = CastOptions {
            safe: false,
            ..CastOptions::default()
        };
        cast_with_options(array, tt, &options).map_err(|e| Error::invalid_argument(e.to_string()))
    }

    fn mismatch(&self, source: &Field, target: &Field) -> Error {
        Error::invalid_metadata(
            target.name(),
            format!(
                "column '{}' (field id {}) of {} has type {}, which cannot be read as {}",
                source.name(),
                field_id(target).map_or_else(|| "?".to_string(), |i| i.to_string()),
                self.file,
                source.data_type(),
                target.data_type()
            ),
        )
        .in_file(self.file)
    }

    fn invalid(&self, target: &Field, e: arrow_schema::ArrowError) -> Error {
        Error::invalid_metadata(
            target.name(),
            format!(
                "column '{}' of {} is not valid: {e}",
                target.name(),
                self.file
            ),
        )
        .in_file(self.file)
    }
}

/// The top-level fields of a struct type (empty for other types).
pub fn struct_fields(t: &DataType) -> Fields {
    match t {
        DataType::Struct(f) => f.clone(),
        _ => Fields::empty(),
    }
}
