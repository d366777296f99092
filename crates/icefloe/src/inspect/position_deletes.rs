//! The `position_deletes` table (Java's `PositionDeletesTable`): one row per deleted
//! position of every live position delete file and deletion vector of the snapshot, with
//! the delete file's partition, spec and location.
//!
//! Rows of a Parquet position delete file are its `file_path` and `pos` (and its `row`
//! when the file stores the deleted row), as Java's `PositionDeletesRowReader` reads them;
//! a DV gives one row per position of its vector, `file_path` being its
//! `referenced_data_file`, `row` null, and (v3 tables) its blob's `content_offset` and
//! `content_size_in_bytes` (Spark's `DVIterator`). Equality delete files have no rows here.

use std::collections::HashSet;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    new_null_array, Array, ArrayRef, Int32Array, Int64Array, RecordBatch, RecordBatchOptions,
    StringArray, StructArray,
};
use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema};

use super::files::PartitionProjection;
use super::value::{value_array, Value};
use crate::arrow::schema::PARQUET_FIELD_ID;
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::puffin::dv::{read_entry_deletion_vector, DvEntry};
use crate::read::conform::repeat;
use crate::read::parquet_file::ParquetFile;
use crate::spec::schema::reserved;
use crate::spec::table_metadata::TableMetadata;
use crate::spec::types::{NestedField, PrimitiveType as P, StructType, Type};
use crate::spec::Schema;

/// Java's `MetadataColumns.PARTITION_COLUMN_ID`, `SPEC_ID_COLUMN_ID`, `FILE_PATH_COLUMN_ID`,
/// `CONTENT_OFFSET_COLUMN_ID` and `CONTENT_SIZE_IN_BYTES_COLUMN_ID`.
const PARTITION_ID: i32 = i32::MAX - 5;
const SPEC_ID_ID: i32 = i32::MAX - 4;
const DELETE_FILE_PATH_ID: i32 = i32::MAX - 1;
const CONTENT_OFFSET_ID: i32 = i32::MAX - 6;
const CONTENT_SIZE_IN_BYTES_ID: i32 = i32::MAX - 7;

/// Every field id of a type, nested ones too.
fn collect_ids(t: &Type, out: &mut HashSet<i32>) {
    match t {
        Type::Struct(s) => {
            for f in &s.fields {
                out.insert(f.id);
                collect_ids(&f.field_type, out);
            }
        }
        Type::List(l) => {
            out.insert(l.element_field.id);
            collect_ids(&l.element_field.field_type, out);
        }
        Type::Map(m) => {
            out.insert(m.key_field.id);
            out.insert(m.value_field.id);
            collect_ids(&m.key_field.field_type, out);
            collect_ids(&m.value_field.field_type, out);
        }
        _ => {}
    }
}

/// Java's `PositionDeletesTable.calculateSchema`: the partition struct's field ids are
/// reassigned to the lowest ids no column and no schema of the table uses (they would
/// clash with the `row` struct's ids otherwise); no `partition` column when the table is
/// unpartitioned; `content_offset` and `content_size_in_bytes` from format v3.
pub(crate) fn position_deletes_schema(
    md: &TableMetadata,
    current: &Schema,
    partition: &StructType,
) -> Result<Schema> {
    let row_type: Type = current.as_struct().clone().into();
    let mut used = HashSet::new();
    for s in &md.schemas {
        collect_ids(&s.as_struct().clone().into(), &mut used);
    }
    collect_ids(&row_type, &mut used);
    used.extend([
        reserved::DELETE_FILE_PATH_ID,
        reserved::DELETE_POS_ID,
        reserved::DELETE_ROW_ID,
        PARTITION_ID,
        SPEC_ID_ID,
        DELETE_FILE_PATH_ID,
    ]);
    let mut next = 0;
    let mut partition_fields = Vec::with_capacity(partition.fields.len());
    for f in &partition.fields {
        next += 1;
        while used.contains(&next) {
            next += 1;
        }
        let mut f = f.clone();
        f.id = next;
        partition_fields.push(f);
    }
    let mut fields = vec![
        NestedField::required(reserved::DELETE_FILE_PATH_ID, "file_path", P::String.into()),
        NestedField::required(reserved::DELETE_POS_ID, "pos", P::Long.into()),
        NestedField::optional(reserved::DELETE_ROW_ID, "row", row_type),
    ];
    if !partition_fields.is_empty() {
        fields.push(NestedField::required(
            PARTITION_ID,
            "partition",
            StructType::new(partition_fields).into(),
        ));
    }
    fields.push(NestedField::required(SPEC_ID_ID, "spec_id", P::Int.into()));
    fields.push(NestedField::required(
        DELETE_FILE_PATH_ID,
        "delete_file_path",
        P::String.into(),
    ));
    if md.format_version >= 3 {
        fields.push(NestedField::optional(
            CONTENT_OFFSET_ID,
            "content_offset",
            P::Long.into(),
        ));
        fields.push(NestedField::optional(
            CONTENT_SIZE_IN_BYTES_ID,
            "content_size_in_bytes",
            P::Long.into(),
        ));
    }
    Schema::new(0, fields, Vec::new())
}

fn arrow_err(location: &str) -> impl Fn(arrow_schema::ArrowError) -> Error + '_ {
    move |e| {
        Error::invalid_metadata(
            "",
            format!("cannot read position delete file {location}: {e}"),
        )
        .in_file(location)
    }
}

fn field_id(f: &Field) -> Option<i32> {
    f.metadata().get(PARQUET_FIELD_ID)?.parse().ok()
}

/// The deleted rows of a file (its `row` column) as the table's current row type: fields
/// matched by id at every struct level, other types cast, fields the file lacks null.
fn conform_row(array: &ArrayRef, target: &DataType, location: &str) -> Result<ArrayRef> {
    match (array.data_type(), target) {
        (DataType::Struct(source_fields), DataType::Struct(target_fields)) => {
            let s = array.as_struct();
            let mut columns = Vec::with_capacity(target_fields.len());
            for t in target_fields {
                let found = source_fields
                    .iter()
                    .position(|f| field_id(f).is_some() && field_id(f) == field_id(t));
                columns.push(match found {
                    Some(i) => conform_row(s.column(i), t.data_type(), location)?,
                    None => new_null_array(t.data_type(), s.len()),
                });
            }
            // the deleted row's fields are as nullable as the file says: a required table
            // column missing from an old delete file is null here, not an error
            let fields: Fields = target_fields
                .iter()
                .map(|f| Arc::new(f.as_ref().clone().with_nullable(true)))
                .collect();
            let out = StructArray::try_new(fields, columns, s.nulls().cloned())
                .map_err(arrow_err(location))?;
            let loose = DataType::Struct(out.fields().clone());
            if &loose == target {
                Ok(Arc::new(out))
            } else {
                arrow_cast::cast(&out, target).map_err(arrow_err(location))
            }
        }
        (source, target) if source == target => Ok(array.clone()),
        _ => arrow_cast::cast(array, target).map_err(arrow_err(location)),
    }
}

/// What every row of one delete file shares.
pub(crate) struct FileConstants<'a> {
    pub(crate) schema: &'a Arc<ArrowSchema>,
    pub(crate) table_schema: &'a Schema,
    pub(crate) partition: &'a PartitionProjection,
    pub(crate) partitioned: bool,
    pub(crate) spec_id: i32,
}

/// The rows of one live position delete file or DV.
pub(crate) fn delete_file_rows(
    io: &Arc<dyn FileIO>,
    f: &DataFile,
    c: &FileConstants<'_>,
) -> Result<Option<RecordBatch>> {
    if f.content != DataContentType::PositionDeletes {
        return Ok(None);
    }
    let location = f.file_path.as_str();
    let mut parts: Vec<(ArrayRef, ArrayRef, Option<ArrayRef>)> = Vec::new();
    let is_dv = f.file_format == FileFormat::Puffin;
    if is_dv {
        let dv = read_entry_deletion_vector(io.as_ref(), &DvEntry::of(f)?)?;
        let positions: Int64Array = dv.iter().collect();
        let n = positions.len();
        let data_file = f.referenced_data_file.as_deref().ok_or_else(|| {
            Error::invalid_metadata(
                "referenced_data_file",
                "a deletion vector's entry names no referenced_data_file",
            )
            .in_file(location)
        })?;
        let paths: ArrayRef = Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
            data_file, n,
        )));
        parts.push((paths, Arc::new(positions), None));
    } else if f.file_format == FileFormat::Parquet {
        let file = ParquetFile::open(Arc::clone(io), location, "delete file", None)?;
        let fields = file.schema.fields();
        let find = |id: i32, name: &str| {
            fields
                .iter()
                .position(|x| field_id(x) == Some(id))
                .or_else(|| fields.iter().position(|x| x.name() == name))
        };
        let (Some(path_ix), Some(pos_ix)) = (
            find(reserved::DELETE_FILE_PATH_ID, "file_path"),
            find(reserved::DELETE_POS_ID, "pos"),
        ) else {
            return Err(Error::invalid_metadata(
                "",
                format!("position delete file {location} has no file_path and pos columns"),
            )
            .in_file(location));
        };
        let row_ix = find(reserved::DELETE_ROW_ID, "row")
            .filter(|&i| matches!(fields[i].data_type(), DataType::Struct(_)));
        let mut roots: Vec<usize> = [Some(path_ix), Some(pos_ix), row_ix]
            .into_iter()
            .flatten()
            .collect();
        roots.sort_unstable();
        // the batches hold the projected columns in the file's order
        let at = |ix: usize| roots.iter().position(|&r| r == ix).unwrap_or(0);
        let bad = arrow_err(location);
        for rg in 0..file.row_groups().len() {
            let Some(reader) = file.read_row_group(rg, &roots, 65536, "delete file")? else {
                continue;
            };
            for batch in reader {
                let batch = batch.map_err(&bad)?;
                let paths =
                    arrow_cast::cast(batch.column(at(path_ix)), &DataType::Utf8).map_err(&bad)?;
                let positions =
                    arrow_cast::cast(batch.column(at(pos_ix)), &DataType::Int64).map_err(&bad)?;
                let row = row_ix.map(|i| batch.column(at(i)).clone());
                parts.push((paths, positions, row));
            }
        }
    } else {
        return Err(Error::unsupported(format!(
            "cannot read {location}: {} position delete files are not supported yet",
            f.file_format.as_str()
        )));
    }
    let n: usize = parts.iter().map(|p| p.0.len()).sum();
    let schema = c.schema;
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    let concat = |arrays: Vec<&dyn Array>, t: &DataType| -> Result<ArrayRef> {
        if arrays.is_empty() {
            return Ok(arrow_array::new_empty_array(t));
        }
        arrow_select::concat::concat(&arrays).map_err(arrow_err(location))
    };
    for field in schema.fields() {
        let column: ArrayRef = match field_id(field) {
            Some(reserved::DELETE_FILE_PATH_ID) => concat(
                parts.iter().map(|p| p.0.as_ref()).collect(),
                field.data_type(),
            )?,
            Some(reserved::DELETE_POS_ID) => concat(
                parts.iter().map(|p| p.1.as_ref()).collect(),
                field.data_type(),
            )?,
            Some(reserved::DELETE_ROW_ID) => {
                let mut rows = Vec::with_capacity(parts.len());
                for p in &parts {
                    rows.push(match &p.2 {
                        Some(r) => conform_row(r, field.data_type(), location)?,
                        None => new_null_array(field.data_type(), p.0.len()),
                    });
                }
                concat(rows.iter().map(|r| r.as_ref()).collect(), field.data_type())?
            }
            Some(PARTITION_ID) if c.partitioned => {
                let values: Vec<Value> = c
                    .partition
                    .project(&f.partition)
                    .into_iter()
                    .map(Value::opt_lit)
                    .collect();
                let Some(partition_type) = c
                    .table_schema
                    .field_by_id(PARTITION_ID)
                    .map(|p| &p.field_type)
                else {
                    return Err(Error::invalid_argument("no partition column"));
                };
                let one =
                    value_array(&[&Value::Struct(values)], partition_type, field.data_type())?;
                repeat(one.as_ref(), n)?
            }
            Some(SPEC_ID_ID) => Arc::new(Int32Array::from(vec![c.spec_id; n])),
            Some(DELETE_FILE_PATH_ID) => Arc::new(StringArray::from_iter_values(
                std::iter::repeat_n(location, n),
            )),
            Some(CONTENT_OFFSET_ID) if is_dv => {
                Arc::new(Int64Array::from(vec![f.content_offset; n]))
            }
            Some(CONTENT_SIZE_IN_BYTES_ID) if is_dv => {
                Arc::new(Int64Array::from(vec![f.content_size_in_bytes; n]))
            }
            _ => new_null_array(field.data_type(), n),
        };
        columns.push(column);
    }
    RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(n)),
    )
    .map(Some)
    .map_err(arrow_err(location))
}
