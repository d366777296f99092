//! A Parquet file read through a [`FileIO`]: the footer fetched once, then for each row
//! group the byte ranges of the projected column chunks (neighbouring ones fetched in one
//! request), decoded by arrow-rs's push decoder. Works alike on local disk and on the
//! object stores, since only `file_size` and `read_range` are used.

use std::ops::Range;
use std::sync::Arc;

use arrow_schema::{Schema as ArrowSchema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader, RowFilter, RowSelection,
};
use parquet::arrow::push_decoder::ParquetPushDecoderBuilder;
use parquet::arrow::ProjectionMask;
use parquet::errors::ParquetError;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataPushDecoder};
use parquet::DecodeResult;

use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::spec::name_mapping::NameMapping;

use super::field_ids::with_field_ids;

/// How much of a file's end is fetched first: the footer of most files fits, so that one
/// request reads it.
const FOOTER_GUESS: u64 = 64 * 1024;
/// Column chunks closer than this are fetched in one request (object stores charge per
/// request; reading a small gap costs less than another round trip).
const COALESCE_GAP: u64 = 1024 * 1024;

/// Where a row group is in its file, for splits and positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowGroupSpan {
    /// The first byte of its first column chunk (its dictionary page, if any).
    pub start: u64,
    /// The byte at the middle of its column chunks: a split reads the row groups whose
    /// midpoint is in its range, as Parquet's range filter.
    pub mid: u64,
    /// The file-global position of its first row.
    pub first_row: u64,
    pub num_rows: u64,
}

pub struct ParquetFile {
    pub location: String,
    io: Arc<dyn FileIO>,
    size: u64,
    metadata: ArrowReaderMetadata,
    /// The file's Arrow schema with field ids (assigned when the file has none).
    pub schema: SchemaRef,
}

pub(crate) fn invalid(what: &str, location: &str, e: impl std::fmt::Display) -> Error {
    Error::invalid_metadata(
        "",
        format!("{what} {location} is not a valid Parquet file: {e}"),
    )
    .in_file(location)
}

impl ParquetFile {
    /// Reads the footer of `location` (`what`: "data file", "delete file", for errors).
    pub fn open(
        io: Arc<dyn FileIO>,
        location: &str,
        what: &str,
        mapping: Option<&NameMapping>,
    ) -> Result<ParquetFile> {
        let size = io.file_size(location)?;
        let bad = |e: ParquetError| invalid(what, location, e);
        let mut decoder = ParquetMetaDataPushDecoder::try_new(size)
            .map_err(bad)?
            .with_page_index_policy(PageIndexPolicy::Skip);
        let tail = size.min(FOOTER_GUESS);
        let bytes = io.read_range(location, size - tail, tail)?;
        decoder
            .push_range(size - tail..size, Bytes::from(bytes))
            .map_err(bad)?;
        let metadata = loop {
            match decoder.try_decode().map_err(bad)? {
                DecodeResult::Data(m) => break m,
                DecodeResult::NeedsData(ranges) => {
                    let data = fetch(io.as_ref(), location, size, &ranges)?;
                    decoder.push_ranges(ranges, data).map_err(bad)?;
                }
                DecodeResult::Finished => return Err(invalid(what, location, "no footer")),
            }
        };
        let metadata = ArrowReaderMetadata::try_new(Arc::new(metadata), ArrowReaderOptions::new())
            .map_err(bad)?;
        let schema: &ArrowSchema = metadata.schema();
        let schema = Arc::new(with_field_ids(schema, mapping));
        Ok(ParquetFile {
            location: location.to_string(),
            io,
            size,
            metadata,
            schema,
        })
    }

    /// The projection of the top-level columns `roots` (indexes of the file's schema).
    pub fn projection(&self, roots: &[usize]) -> ProjectionMask {
        ProjectionMask::roots(self.metadata.parquet_schema(), roots.iter().copied())
    }

    /// The row groups with their byte spans and first positions.
    pub fn row_groups(&self) -> Vec<RowGroupSpan> {
        let mut first_row = 0u64;
        self.metadata
            .metadata()
            .row_groups()
            .iter()
            .map(|rg| {
                let mut start = 0;
                if let Some(first) = rg.columns().first() {
                    start = first.data_page_offset();
                    if let Some(dict) = first.dictionary_page_offset().filter(|&d| d > 0) {
                        start = start.min(dict);
                    }
                }
                let start = u64::try_from(start).unwrap_or(0);
                let size: i64 = rg.columns().iter().map(|c| c.compressed_size()).sum();
                let num_rows = u64::try_from(rg.num_rows()).unwrap_or(0);
                let span = RowGroupSpan {
                    start,
                    mid: start + u64::try_from(size).unwrap_or(0) / 2,
                    first_row,
                    num_rows,
                };
                first_row += num_rows;
                span
            })
            .collect()
    }

    /// The indexes of the row groups a task of this byte range reads.
    pub fn row_groups_in(&self, start: i64, length: i64, file_size: i64) -> Vec<usize> {
        let end = start.saturating_add(length);
        let whole = start == 0 && end >= file_size;
        self.row_groups()
            .iter()
            .enumerate()
            .filter(|(_, g)| {
                let mid = i64::try_from(g.mid).unwrap_or(i64::MAX);
                whole || (start <= mid && mid < end)
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// A reader of one row group's batches of the top-level columns `roots` (indexes of
    /// the file's schema; the batches hold them in the file's order), its column chunks
    /// fetched now.
    pub fn read_row_group(
        &self,
        row_group: usize,
        roots: &[usize],
        batch_size: usize,
        what: &str,
    ) -> Result<Option<ParquetRecordBatchReader>> {
        self.read_row_group_filtered(row_group, roots, batch_size, what, None, None)
    }

    /// [`Self::read_row_group`] of the rows `selection` selects (row-group relative) and
    /// `filter` keeps: the filter's columns are decoded first, and the other columns of
    /// the rows it drops are skipped where arrow-rs can skip them (late materialisation).
    pub fn read_row_group_filtered(
        &self,
        row_group: usize,
        roots: &[usize],
        batch_size: usize,
        what: &str,
        selection: Option<RowSelection>,
        filter: Option<RowFilter>,
    ) -> Result<Option<ParquetRecordBatchReader>> {
        let bad = |e: ParquetError| {
            Error::invalid_metadata("", format!("cannot read {what} {}: {e}", self.location))
                .in_file(&self.location)
        };
        let mask = self.projection(roots);
        let mut builder = ParquetPushDecoderBuilder::new_with_metadata(self.metadata.clone())
            .with_row_groups(vec![row_group])
            .with_projection(mask)
            .with_batch_size(batch_size.max(1));
        if let Some(selection) = selection {
            builder = builder.with_row_selection(selection);
        }
        if let Some(filter) = filter {
            builder = builder.with_row_filter(filter);
        }
        let mut decoder = builder.build().map_err(bad)?;
        loop {
            match decoder.try_next_reader().map_err(bad)? {
                DecodeResult::NeedsData(ranges) => {
                    let data = fetch(self.io.as_ref(), &self.location, self.size, &ranges)?;
                    decoder.push_ranges(ranges, data).map_err(bad)?;
                }
                DecodeResult::Data(reader) => return Ok(Some(reader)),
                DecodeResult::Finished => return Ok(None),
            }
        }
    }
}

/// The bytes of `ranges`, neighbouring ranges fetched in one request and handed out as
/// slices of it (no copy).
/// A range past the end of the file is the file's fault (its footer points there), so an
/// invalid file rather than a short read.
fn fetch(io: &dyn FileIO, location: &str, size: u64, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
    if let Some(r) = ranges.iter().find(|r| r.end > size || r.start > r.end) {
        return Err(invalid(
            "file",
            location,
            format!("its metadata points at bytes {r:?}, past its end ({size} bytes)"),
        ));
    }
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| ranges[i].start);
    let mut out: Vec<Bytes> = vec![Bytes::new(); ranges.len()];
    let mut i = 0;
    while i < order.len() {
        let first = &ranges[order[i]];
        let (start, mut end) = (first.start, first.end);
        let mut j = i + 1;
        while j < order.len() && ranges[order[j]].start <= end.saturating_add(COALESCE_GAP) {
            end = end.max(ranges[order[j]].end);
            j += 1;
        }
        let bytes = Bytes::from(io.read_range(location, start, end - start)?);
        for &k in &order[i..j] {
            let r = &ranges[k];
            let (from, to) = (
                usize::try_from(r.start - start).unwrap_or(usize::MAX),
                usize::try_from(r.end - start).unwrap_or(usize::MAX),
            );
            out[k] = bytes
                .get(from..to)
                .map(|_| bytes.slice(from..to))
                .ok_or_else(|| {
                    invalid(
                        "file",
                        location,
                        format!("a range {r:?} lies outside what was read"),
                    )
                })?;
        }
        i = j;
    }
    Ok(out)
}
