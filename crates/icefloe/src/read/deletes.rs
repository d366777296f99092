//! A data file's deleted positions: its deletion vectors (Puffin blobs) and its rows of
//! position delete files, merged into one [`DeletionVector`].

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::Array;
use arrow_schema::DataType;

use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::puffin::dv::{read_entry_deletion_vector, DvEntry};
use crate::puffin::DeletionVector;
use crate::spec::schema::reserved;

use super::context::field_id;
use super::parquet_file::ParquetFile;
use super::task::{DeleteFile, ReadTask, POSITION_DELETES};

/// The deleted positions of the task's file (all of its position deletes merged), or
/// `None` when it has none.
pub fn position_deletes(task: &ReadTask, io: &Arc<dyn FileIO>) -> Result<Option<DeletionVector>> {
    let mut out: Option<DeletionVector> = None;
    for d in task
        .deletes
        .iter()
        .filter(|d| d.content == POSITION_DELETES)
    {
        let one = if d.file_format.eq_ignore_ascii_case("puffin") {
            deletion_vector(d, &task.file_path, io.as_ref())?
        } else {
            let mut dv = DeletionVector::new();
            dv.insert_all(position_delete_file(d, &task.file_path, io)?)
                .map_err(|e| e.in_file(&d.file_path))?;
            dv
        };
        match &mut out {
            Some(dv) => dv.merge(&one),
            None => out = Some(one),
        }
    }
    Ok(out)
}

fn deletion_vector(d: &DeleteFile, data_file: &str, io: &dyn FileIO) -> Result<DeletionVector> {
    if let Some(referenced) = d
        .referenced_data_file
        .as_deref()
        .filter(|r| *r != data_file)
    {
        return Err(Error::invalid_metadata(
            "referenced_data_file",
            format!(
                "deletion vector in {} is for {referenced}, not {data_file}",
                d.file_path
            ),
        )
        .in_file(&d.file_path));
    }
    let (Some(offset), Some(length)) = (
        d.content_offset.and_then(|o| u64::try_from(o).ok()),
        d.content_size_in_bytes.and_then(|l| u64::try_from(l).ok()),
    ) else {
        return Err(Error::invalid_metadata(
            "content_offset",
            "a deletion vector's entry needs content_offset and content_size_in_bytes",
        )
        .in_file(&d.file_path));
    };
    let entry = DvEntry {
        location: &d.file_path,
        offset,
        length,
        record_count: d.record_count,
        referenced_data_file: d.referenced_data_file.as_deref(),
        // a v4 DV's size is UNKNOWN_DV_FILE_SIZE, and its blob is checked on its own, as
        // commits read it: no look-up of its Puffin footer per task (whose
        // `referenced-data-file` names the data file where the table was written)
        file_size: u64::try_from(d.file_size_in_bytes).ok(),
    };
    read_entry_deletion_vector(io, &entry)
}

/// The positions of `data_file` in the Parquet position delete file at `location` (a
/// writer folding old position deletes into a new deletion vector needs them).
pub fn positions_in_delete_file(
    io: &Arc<dyn FileIO>,
    location: &str,
    data_file: &str,
) -> Result<Vec<i64>> {
    let d = DeleteFile {
        content: POSITION_DELETES,
        file_path: location.to_string(),
        file_format: "parquet".to_string(),
        record_count: 0,
        file_size_in_bytes: 0,
        referenced_data_file: None,
        content_offset: None,
        content_size_in_bytes: None,
        equality_ids: Vec::new(),
    };
    position_delete_file(&d, data_file, io)
}

/// The positions in a position delete file that belong to `data_file`.
fn position_delete_file(d: &DeleteFile, data_file: &str, io: &Arc<dyn FileIO>) -> Result<Vec<i64>> {
    let mut out = Vec::new();
    visit_position_delete_file(&d.file_path, &d.file_format, io, |path, pos| {
        if path == data_file {
            out.push(pos);
        }
    })?;
    Ok(out)
}

/// Every `(file_path, pos)` row of the Parquet position delete file at `location` (a
/// rewrite of position delete files reads them all; null positions are skipped).
pub fn rows_of_position_delete_file(
    io: &Arc<dyn FileIO>,
    location: &str,
    mut visit: impl FnMut(&str, i64),
) -> Result<()> {
    visit_position_delete_file(location, "parquet", io, |path, pos| visit(path, pos))
}

/// Calls `visit` with each row's `file_path` and `pos` of a position delete file.
fn visit_position_delete_file(
    location: &str,
    file_format: &str,
    io: &Arc<dyn FileIO>,
    mut visit: impl FnMut(&str, i64),
) -> Result<()> {
    if !file_format.eq_ignore_ascii_case("parquet") {
        return Err(Error::unsupported(format!(
            "cannot read {location}: {file_format} delete files are not supported yet"
        )));
    }
    let file = ParquetFile::open(Arc::clone(io), location, "delete file", None)?;
    let fields = file.schema.fields();
    let by_id = |id: i32| fields.iter().position(|f| field_id(f) == Some(id));
    let by_name = |n: &str| fields.iter().position(|f| f.name() == n);
    let (path_ix, pos_ix) = match (
        by_id(reserved::DELETE_FILE_PATH_ID),
        by_id(reserved::DELETE_POS_ID),
    ) {
        (Some(a), Some(b)) => (a, b),
        _ => match (by_name("file_path"), by_name("pos")) {
            (Some(a), Some(b)) => (a, b),
            _ => {
                return Err(Error::invalid_metadata(
                    "",
                    format!("position delete file {location} has no file_path and pos columns"),
                )
                .in_file(location))
            }
        },
    };
    let mut roots = [path_ix, pos_ix];
    roots.sort_unstable();
    let (path_col, pos_col) = if path_ix < pos_ix { (0, 1) } else { (1, 0) };
    let bad = |e: arrow_schema::ArrowError| {
        Error::invalid_metadata("", format!("cannot read delete file {location}: {e}"))
            .in_file(location)
    };
    for rg in 0..file.row_groups().len() {
        let Some(reader) = file.read_row_group(rg, &roots, 65536, "delete file")? else {
            continue;
        };
        for batch in reader {
            let batch = batch.map_err(bad)?;
            let paths = batch.column(path_col);
            let positions =
                arrow_cast::cast(batch.column(pos_col), &DataType::Int64).map_err(bad)?;
            let positions = positions.as_primitive::<Int64Type>();
            match paths.data_type() {
                DataType::Utf8 => {
                    let s = paths.as_string::<i32>();
                    for i in 0..s.len() {
                        if s.is_valid(i) && positions.is_valid(i) {
                            visit(s.value(i), positions.value(i));
                        }
                    }
                }
                DataType::LargeUtf8 => {
                    let s = paths.as_string::<i64>();
                    for i in 0..s.len() {
                        if s.is_valid(i) && positions.is_valid(i) {
                            visit(s.value(i), positions.value(i));
                        }
                    }
                }
                other => {
                    return Err(Error::invalid_metadata(
                        "file_path",
                        format!(
                            "file_path of position delete file {location} is {other}, not a string"
                        ),
                    )
                    .in_file(location))
                }
            }
        }
    }
    Ok(())
}
