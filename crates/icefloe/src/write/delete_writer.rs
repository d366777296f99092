//! The delete files of a merge-on-read row-level operation, from the row positions an
//! engine found (the Spark connector's `DELETE`/`UPDATE`/`MERGE`, on executors): a
//! deletion vector per data file in v3 (merged with the file's live deletes, one Puffin
//! file per call), a Parquet position delete file per data file in v2 (Java's default
//! `file` granularity). Which deletes apply comes from the write's scan
//! ([`super::scanned_deletes`]) or, without one, from the manifests
//! ([`super::position_deletes::deletes_for`]).

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema as ArrowSchema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use super::location::LocationProvider;
use super::position_deletes::{
    deletes_of, position_delete_file, write_dvs, DataFileDeletes, PositionDeleteFiles,
};
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::DataFile;
use crate::puffin::DeletionVector;
use crate::read::deletes::positions_in_delete_file;
use crate::spec::schema::reserved;
use crate::spec::table_metadata::TableMetadata;

/// Writes the deletes of `positions` (data file path, row positions) of data files live
/// in snapshot `snapshot_id`, named `<file_prefix>-deletes.puffin` (v3) or
/// `<file_prefix>-<n>-deletes.parquet` (v2) in the table's data location. Returns the
/// delete files to add and those the new files replace (a data file's old DV and its
/// file-scoped position delete files, whose positions the new file holds too).
///
/// `scanned`: what the scan of the row-level write planned
/// ([`super::scanned_deletes`]), from which each data file's deletes are taken without
/// reading a manifest (see [`deletes_of`]).
pub fn write_position_deletes(
    io: &Arc<dyn FileIO>,
    md: &TableMetadata,
    snapshot_id: i64,
    positions: &[(String, Vec<i64>)],
    file_prefix: &str,
    scanned: Option<&[u8]>,
) -> Result<PositionDeleteFiles> {
    if md.format_version < 2 {
        return Err(Error::unsupported(format!(
            "{}: format version 1 tables have no delete files (row-level changes need v2 or later)",
            md.location
        )));
    }
    if positions.is_empty() {
        return Ok(PositionDeleteFiles::default());
    }
    let snapshot = md.snapshot_by_id(snapshot_id).ok_or_else(|| {
        Error::invalid_argument(format!(
            "{}: no snapshot {snapshot_id} to delete rows of",
            md.location
        ))
    })?;
    let paths: Vec<String> = positions.iter().map(|(p, _)| p.clone()).collect();
    let targets = deletes_of(io.as_ref(), md, Some(snapshot), &paths, scanned)?;
    let target = |path: &str| -> Result<&DataFileDeletes> {
        targets.get(path).ok_or_else(|| {
            Error::invalid_argument(format!("{path} is not a live data file of the table"))
        })
    };
    let locations = LocationProvider::new(&md.location, &md.properties, None)?;
    if md.format_version >= 3 {
        let mut vectors = Vec::with_capacity(positions.len());
        for (path, pos) in positions {
            let t = target(path)?;
            let mut dv = DeletionVector::from_positions(pos.iter().copied())?;
            // the spec's writer rule: a data file's new DV holds its old position deletes too
            for f in &t.position_files {
                dv.insert_all(positions_in_delete_file(io, &f.file_path, path)?)?;
            }
            vectors.push((t, dv));
        }
        let location = locations.new_data_location("", &format!("{file_prefix}-deletes.puffin"));
        return write_dvs(io.as_ref(), &location, &vectors);
    }
    let mut out = PositionDeleteFiles::default();
    for (n, (path, pos)) in positions.iter().enumerate() {
        let t = target(path)?;
        let mut sorted = pos.clone();
        // as Java's file-granularity writer: the data file's older file-scoped position
        // delete files are folded into the new one and replaced (partition-scoped ones stay)
        for f in t.position_files.iter().filter(|f| file_scoped_to(f, path)) {
            sorted.extend(positions_in_delete_file(io, &f.file_path, path)?);
            out.removed.push((t.spec_id, f.clone()));
        }
        sorted.sort_unstable();
        sorted.dedup();
        let location =
            locations.new_data_location("", &format!("{file_prefix}-{n}-deletes.parquet"));
        let bytes = position_delete_parquet(path, &sorted)?;
        io.write_new(&location, &bytes)?;
        let count = i64::try_from(sorted.len()).unwrap_or(i64::MAX);
        let size = i64::try_from(bytes.len()).unwrap_or(i64::MAX);
        let span = sorted.first().zip(sorted.last()).map(|(a, b)| (*a, *b));
        out.added.push((
            t.spec_id,
            position_delete_file(t, &location, count, size, span),
        ));
    }
    Ok(out)
}

/// Whether a position delete file holds deletes of `data_file` only: its
/// `referenced_data_file`, or (older writers) equal `file_path` bounds (Java's
/// `ContentFileUtil.referencedDataFile`).
fn file_scoped_to(f: &DataFile, data_file: &str) -> bool {
    if let Some(r) = &f.referenced_data_file {
        return r == data_file;
    }
    let bound = |bounds: &Option<Vec<(i32, Vec<u8>)>>| {
        bounds.as_ref().and_then(|b| {
            b.iter()
                .find(|(id, _)| *id == reserved::DELETE_FILE_PATH_ID)
                .map(|(_, v)| v.clone())
        })
    };
    match (bound(&f.lower_bounds), bound(&f.upper_bounds)) {
        (Some(lower), Some(upper)) => lower == upper && lower == data_file.as_bytes(),
        _ => false,
    }
}

/// A position delete file's Parquet bytes: `file_path` and `pos` with their reserved
/// field ids ("Position Delete Files"), zstd as Java's default codec.
pub(crate) fn position_delete_parquet(data_file: &str, positions: &[i64]) -> Result<Vec<u8>> {
    let rows: Vec<(&str, i64)> = positions.iter().map(|p| (data_file, *p)).collect();
    position_delete_rows_parquet(&rows)
}

/// A position delete file's Parquet bytes for `(file_path, pos)` rows, in the given order
/// (sorted by path and position, as the spec asks).
pub(crate) fn position_delete_rows_parquet(rows: &[(&str, i64)]) -> Result<Vec<u8>> {
    let field = |name: &str, ty: DataType, id: i32| {
        Field::new(name, ty, false).with_metadata(
            [("PARQUET:field_id".to_string(), id.to_string())]
                .into_iter()
                .collect(),
        )
    };
    let schema = Arc::new(ArrowSchema::new(vec![
        field("file_path", DataType::Utf8, reserved::DELETE_FILE_PATH_ID),
        field("pos", DataType::Int64, reserved::DELETE_POS_ID),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0))),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1))),
    ];
    let failed =
        |e: String| Error::invalid_argument(format!("cannot encode position deletes: {e}"));
    let batch =
        RecordBatch::try_new(Arc::clone(&schema), columns).map_err(|e| failed(e.to_string()))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let mut bytes = Vec::new();
    let mut writer =
        ArrowWriter::try_new(&mut bytes, schema, Some(props)).map_err(|e| failed(e.to_string()))?;
    writer.write(&batch).map_err(|e| failed(e.to_string()))?;
    writer.close().map_err(|e| failed(e.to_string()))?;
    Ok(bytes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn position_delete_parquet_reads_back_with_field_ids() {
        let bytes = position_delete_parquet("s3://b/data/a.parquet", &[1, 5, 9]).unwrap();
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
            bytes::Bytes::from(bytes),
        )
        .unwrap();
        let ids: Vec<String> = reader
            .schema()
            .fields()
            .iter()
            .map(|f| f.metadata()["PARQUET:field_id"].clone())
            .collect();
        assert_eq!(
            ids,
            vec![
                reserved::DELETE_FILE_PATH_ID.to_string(),
                reserved::DELETE_POS_ID.to_string()
            ]
        );
        let batch = reader.build().unwrap().next().unwrap().unwrap();
        let pos = batch
            .column(1)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        assert_eq!(pos.values().to_vec(), vec![1, 5, 9]);
    }

    #[test]
    fn file_scoped_by_referenced_data_file_or_equal_path_bounds() {
        use crate::manifest::{DataContentType, FileFormat};
        let mut f = DataFile::new(
            DataContentType::PositionDeletes,
            "d.parquet",
            FileFormat::Parquet,
            vec![],
            1,
            1,
        );
        // no reference, no bounds: partition-scoped
        assert!(!file_scoped_to(&f, "a.parquet"));
        let path = |p: &str| Some(vec![(reserved::DELETE_FILE_PATH_ID, p.as_bytes().to_vec())]);
        f.lower_bounds = path("a.parquet");
        f.upper_bounds = path("b.parquet");
        assert!(!file_scoped_to(&f, "a.parquet"));
        f.upper_bounds = path("a.parquet");
        assert!(file_scoped_to(&f, "a.parquet"));
        assert!(!file_scoped_to(&f, "b.parquet"));
        f.referenced_data_file = Some("b.parquet".into());
        assert!(file_scoped_to(&f, "b.parquet"));
        assert!(!file_scoped_to(&f, "a.parquet"));
    }
}
