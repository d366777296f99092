//! The Parquet data-file writer: Arrow record batches in, Parquet data files of a table out,
//! with their `data_file` entries (partition tuple, metrics, column sizes, split offsets).
//!
//! This is the executor side of a write, free of any binding (JNI, PyO3): it needs only the
//! table's metadata and a FileIO. Rows are matched to the table schema by position (Spark
//! hands its rows in the table's column order) and converted to the table's Arrow types where
//! the input's differ only in representation (a timestamp's zone name, narrower integers,
//! uuids as strings, fixed as binary). They are grouped by partition tuple
//! ([`super::partition::partition_batch`]); each partition has its own open file, which rolls
//! at `write.target-file-size-bytes`. Files are encoded by arrow-rs's Parquet `ArrowWriter`
//! with Java's default write properties (`write.parquet.*`: zstd, 128 MB row groups, 1 MB
//! pages, 2 MB dictionary pages), named and placed as Java's `OutputFileFactory` and location
//! providers do, and measured by [`super::metrics::MetricsCollector`] as Java's Parquet
//! writer measures them.
//!
//! A file's bytes are buffered in memory until it is closed and then written with
//! `FileIO::write_new` (FileIO has no streaming writes): memory grows with the target file
//! size times the number of partitions open at once.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, FixedSizeBinaryArray, RecordBatch, UInt32Array};
use arrow_schema::{DataType, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::{WriterProperties, WriterVersion};

use super::location::LocationProvider;
use super::metrics::MetricsCollector;
use super::metrics_config::MetricsConfig;
use super::partition::partition_batch;
use super::{data_file, WrittenFile};
use crate::arrow::schema_to_arrow;
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::DataFile;
use crate::spec::partition::PartitionSpec;
use crate::spec::sort::SortOrder;
use crate::spec::table_metadata::TableMetadata;
use crate::spec::{Literal, Schema, StructType};

pub const TARGET_FILE_SIZE: &str = "write.target-file-size-bytes";
pub const TARGET_FILE_SIZE_DEFAULT: i64 = 512 * 1024 * 1024;
pub const ROW_GROUP_SIZE: &str = "write.parquet.row-group-size-bytes";
pub const ROW_GROUP_SIZE_DEFAULT: i64 = 128 * 1024 * 1024;
pub const PAGE_SIZE: &str = "write.parquet.page-size-bytes";
pub const PAGE_SIZE_DEFAULT: i64 = 1024 * 1024;
pub const PAGE_ROW_LIMIT: &str = "write.parquet.page-row-limit";
pub const PAGE_ROW_LIMIT_DEFAULT: i64 = 20_000;
pub const DICT_SIZE: &str = "write.parquet.dict-size-bytes";
pub const DICT_SIZE_DEFAULT: i64 = 2 * 1024 * 1024;
pub const COMPRESSION: &str = "write.parquet.compression-codec";
pub const COMPRESSION_DEFAULT: &str = "zstd";
pub const COMPRESSION_LEVEL: &str = "write.parquet.compression-level";
/// The schema metadata key of an IPC payload of data files holding their spec id.
pub const SPEC_ID_KEY: &str = "icefloe.spec-id";

/// How a writer names and places its files, and what it writes against.
#[derive(Debug, Clone, Default)]
pub struct DataWriterOptions {
    /// Spark's partition id and task id, and the write's operation id (a UUID), in Java's
    /// file names `<partition id %05d>-<task id>-<operation id>-<n %05d>.parquet`.
    pub partition_id: i32,
    pub task_id: i64,
    pub operation_id: String,
    /// Properties overriding the table's for this write (e.g. `write.target-file-size-bytes`).
    pub properties: Vec<(String, String)>,
    /// Where files go instead of `write.data.path` / `<location>/data`.
    pub data_location: Option<String>,
    /// The partition spec to write for (default: the table's default spec).
    pub spec_id: Option<i32>,
    /// The sort order id recorded in the files (Java records the table's when the rows
    /// were sorted by it; `None` leaves it unset).
    pub sort_order_id: Option<i32>,
    /// v3 row lineage: the rows carry two more columns after the table's, `_row_id` and
    /// `_last_updated_sequence_number` (optional longs), written into the files under their
    /// reserved field ids, as Java's row-level writers do. A row whose `_row_id` is set
    /// keeps that id (an updated row); a null inherits one from the file's first row id,
    /// and a null `_last_updated_sequence_number` the file's sequence number, when read.
    pub row_lineage: bool,
}

/// The table schema with the row-lineage columns after its fields (see
/// [`DataWriterOptions::row_lineage`]).
fn with_row_lineage(schema: &Schema) -> Result<Schema> {
    use crate::spec::schema::reserved;
    use crate::spec::types::{NestedField, PrimitiveType, Type};
    let mut fields = schema.fields().to_vec();
    fields.push(NestedField::optional(
        reserved::ROW_ID_ID,
        "_row_id",
        Type::Primitive(PrimitiveType::Long),
    ));
    fields.push(NestedField::optional(
        reserved::LAST_UPDATED_SEQUENCE_NUMBER_ID,
        "_last_updated_sequence_number",
        Type::Primitive(PrimitiveType::Long),
    ));
    Schema::new(
        schema.schema_id(),
        fields,
        schema.identifier_field_ids().to_vec(),
    )
}

/// Java's Parquet settings from the table properties.
#[derive(Debug, Clone)]
struct ParquetSettings {
    target_file_size: i64,
    row_group_size: i64,
    properties: WriterProperties,
}

fn prop<'a>(props: &'a [(String, String)], key: &str) -> Option<&'a str> {
    // later entries override earlier ones (the write's options come after the table's)
    props
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn positive(props: &[(String, String)], key: &str, default: i64) -> Result<i64> {
    match prop(props, key) {
        None => Ok(default),
        Some(v) => match v.trim().parse::<i64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(Error::invalid_argument(format!(
                "{key} must be a positive integer, got '{v}'"
            ))),
        },
    }
}

fn compression(props: &[(String, String)]) -> Result<Compression> {
    let codec = prop(props, COMPRESSION)
        .unwrap_or(COMPRESSION_DEFAULT)
        .to_ascii_lowercase();
    let level = match prop(props, COMPRESSION_LEVEL) {
        None | Some("") => None,
        Some(v) => Some(v.trim().parse::<i32>().map_err(|_| {
            Error::invalid_argument(format!("{COMPRESSION_LEVEL} must be an integer, got '{v}'"))
        })?),
    };
    let bad_level = |e: parquet::errors::ParquetError| {
        Error::invalid_argument(format!("{COMPRESSION_LEVEL}: {e}"))
    };
    Ok(match codec.as_str() {
        // parquet-java's zstd codec defaults to level 3
        "zstd" => Compression::ZSTD(ZstdLevel::try_new(level.unwrap_or(3)).map_err(bad_level)?),
        "gzip" => Compression::GZIP(match level {
            Some(l) => GzipLevel::try_new(u32::try_from(l).unwrap_or(u32::MAX)).map_err(bad_level)?,
            None => GzipLevel::default(),
        }),
        "snappy" => Compression::SNAPPY,
        "lz4" => Compression::LZ4_RAW,
        "brotli" => Compression::BROTLI(Default::default()),
        "uncompressed" | "none" => Compression::UNCOMPRESSED,
        other => {
            return Err(Error::unsupported(format!(
                "{COMPRESSION} '{other}' is not supported (zstd, gzip, snappy, lz4, brotli, uncompressed)"
            )))
        }
    })
}

impl ParquetSettings {
    fn from_properties(props: &[(String, String)]) -> Result<ParquetSettings> {
        let usize_of = |n: i64| usize::try_from(n).unwrap_or(usize::MAX);
        let builder = WriterProperties::builder()
            // Java writes Parquet v1 data pages (parquet-java's default writer version)
            .set_writer_version(WriterVersion::PARQUET_1_0)
            .set_compression(compression(props)?)
            .set_data_page_size_limit(usize_of(positive(props, PAGE_SIZE, PAGE_SIZE_DEFAULT)?))
            .set_data_page_row_count_limit(usize_of(positive(
                props,
                PAGE_ROW_LIMIT,
                PAGE_ROW_LIMIT_DEFAULT,
            )?))
            .set_dictionary_page_size_limit(usize_of(positive(
                props,
                DICT_SIZE,
                DICT_SIZE_DEFAULT,
            )?))
            // rows per row group are bounded by bytes (flushed by the writer below)
            .set_max_row_group_size(usize::MAX)
            .set_created_by(format!("icefloe version {}", env!("CARGO_PKG_VERSION")));
        Ok(ParquetSettings {
            target_file_size: positive(props, TARGET_FILE_SIZE, TARGET_FILE_SIZE_DEFAULT)?,
            row_group_size: positive(props, ROW_GROUP_SIZE, ROW_GROUP_SIZE_DEFAULT)?,
            properties: builder.build(),
        })
    }
}

/// One file being written: its encoder over an in-memory buffer and its metrics so far.
struct OpenFile {
    path: String,
    writer: ArrowWriter<Vec<u8>>,
    metrics: MetricsCollector,
    rows: usize,
}

/// The files of one partition tuple.
struct PartitionFiles {
    path: String,
    partition: Vec<Option<Literal>>,
    open: Option<OpenFile>,
}

/// Writes the data files of one task (see the module documentation). [`Self::finish`]
/// closes the open files and returns the `data_file`s of every file written;
/// [`Self::abort`] deletes every file it wrote.
pub struct DataFileWriter {
    io: Arc<dyn FileIO>,
    schema: Schema,
    spec: PartitionSpec,
    partition_type: StructType,
    arrow_schema: SchemaRef,
    locations: LocationProvider,
    settings: ParquetSettings,
    metrics_config: MetricsConfig,
    sort_order_id: Option<i32>,
    prefix: String,
    file_count: u32,
    partitions: Vec<PartitionFiles>,
    by_path: HashMap<String, usize>,
    done: Vec<DataFile>,
    /// Every file this writer put into storage (for abort).
    written: Vec<String>,
}

impl std::fmt::Debug for DataFileWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataFileWriter")
            .field("prefix", &self.prefix)
            .field("files", &self.written.len())
            .finish()
    }
}

impl DataFileWriter {
    /// A writer of data files for `metadata`'s current schema and default partition spec
    /// (or `options.spec_id`), through `io`.
    pub fn new(
        metadata: &TableMetadata,
        io: Arc<dyn FileIO>,
        options: DataWriterOptions,
    ) -> Result<DataFileWriter> {
        let schema = metadata
            .current_schema()
            .ok_or_else(|| Error::invalid_argument("the table metadata has no current schema"))?
            .clone();
        let spec = match options.spec_id {
            Some(id) => metadata.spec_by_id(id).ok_or_else(|| {
                Error::invalid_argument(format!("the table has no partition spec {id}"))
            })?,
            None => metadata.default_spec().ok_or_else(|| {
                Error::invalid_argument("the table metadata has no default partition spec")
            })?,
        }
        .clone();
        let mut properties = metadata.properties.clone();
        properties.extend(options.properties.iter().cloned());
        let sort_order: Option<&SortOrder> = metadata.default_sort_order();
        Self::with_parts(
            io,
            &metadata.location,
            schema,
            spec,
            sort_order,
            properties,
            options,
        )
    }

    /// A writer from the parts of a table (schema, spec, sort order and properties).
    pub fn with_parts(
        io: Arc<dyn FileIO>,
        table_location: &str,
        schema: Schema,
        spec: PartitionSpec,
        sort_order: Option<&SortOrder>,
        properties: Vec<(String, String)>,
        options: DataWriterOptions,
    ) -> Result<DataFileWriter> {
        let partition_type = spec.partition_type(&schema)?;
        let schema = if options.row_lineage {
            with_row_lineage(&schema)?
        } else {
            schema
        };
        let arrow_schema = Arc::new(schema_to_arrow(&schema)?);
        let locations = LocationProvider::new(
            table_location,
            &properties,
            options.data_location.as_deref(),
        )?;
        let settings = ParquetSettings::from_properties(&properties)?;
        let metrics_config = MetricsConfig::from_properties(&properties, Some(&schema), sort_order);
        let operation_id = if options.operation_id.is_empty() {
            uuid::Uuid::new_v4().to_string()
        } else {
            options.operation_id.clone()
        };
        Ok(DataFileWriter {
            io,
            schema,
            spec,
            partition_type,
            arrow_schema,
            locations,
            settings,
            metrics_config,
            sort_order_id: options.sort_order_id,
            prefix: format!(
                "{:05}-{}-{}",
                options.partition_id, options.task_id, operation_id
            ),
            file_count: 0,
            partitions: Vec::new(),
            by_path: HashMap::new(),
            done: Vec::new(),
            written: Vec::new(),
        })
    }

    /// The Arrow schema files are written with (field ids in `PARQUET:field_id`).
    pub fn arrow_schema(&self) -> SchemaRef {
        Arc::clone(&self.arrow_schema)
    }

    pub fn spec_id(&self) -> i32 {
        self.spec.spec_id
    }

    pub fn partition_type(&self) -> &StructType {
        &self.partition_type
    }

    /// Every file put into storage so far.
    pub fn written_files(&self) -> &[String] {
        &self.written
    }

    /// Writes the rows of `batch`, whose columns are the table schema's top-level fields in
    /// order (names are not compared: Spark's may differ in case).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let batch = conform_batch(batch, &self.arrow_schema, &self.schema)?;
        let groups = partition_batch(&batch, &self.schema, &self.spec)?;
        let whole = groups.len() == 1;
        for g in 0..groups.len() {
            let path = groups.paths.get(g).cloned().unwrap_or_default();
            let rows = if whole {
                batch.clone()
            } else {
                let indices = UInt32Array::from(groups.group_rows(g).to_vec());
                arrow_select::take::take_record_batch(&batch, &indices)
                    .map_err(|e| Error::invalid_argument(format!("grouping rows: {e}")))?
            };
            let index = match self.by_path.get(&path) {
                Some(i) => *i,
                None => {
                    let partition = groups.partitions.get(g).cloned().unwrap_or_default();
                    self.partitions.push(PartitionFiles {
                        path: path.clone(),
                        partition,
                        open: None,
                    });
                    self.by_path.insert(path, self.partitions.len() - 1);
                    self.partitions.len() - 1
                }
            };
            self.write_partition(index, &rows)?;
        }
        Ok(())
    }

    fn write_partition(&mut self, index: usize, rows: &RecordBatch) -> Result<()> {
        let needs_file = self.partitions.get(index).is_some_and(|p| p.open.is_none());
        if needs_file {
            let file = self.open_file(index)?;
            if let Some(p) = self.partitions.get_mut(index) {
                p.open = Some(file);
            }
        }
        let row_group_size = self.settings.row_group_size;
        let target = self.settings.target_file_size;
        let schema = &self.schema;
        let Some(file) = self.partitions.get_mut(index).and_then(|p| p.open.as_mut()) else {
            return Err(Error::invalid_argument("no open file for a partition"));
        };
        file.writer
            .write(rows)
            .map_err(|e| Error::invalid_argument(format!("encoding {}: {e}", file.path)))?;
        file.metrics
            .update(schema, rows)
            .map_err(|e| e.in_file(&file.path))?;
        file.rows += rows.num_rows();
        // Java flushes a row group once its buffered size reaches the row-group size
        if file.writer.in_progress_size() as i64 >= row_group_size {
            file.writer
                .flush()
                .map_err(|e| Error::invalid_argument(format!("encoding {}: {e}", file.path)))?;
        }
        // and rolls to a new file once the file's length (written plus buffered) reaches
        // the target size
        let length = file.writer.bytes_written() + file.writer.in_progress_size();
        if length as i64 >= target {
            self.close_file(index)?;
        }
        Ok(())
    }

    fn open_file(&mut self, index: usize) -> Result<OpenFile> {
        self.file_count += 1;
        let name = format!("{}-{:05}.parquet", self.prefix, self.file_count);
        let partition_path = self
            .partitions
            .get(index)
            .map(|p| p.path.as_str())
            .unwrap_or("");
        let path = self.locations.new_data_location(partition_path, &name);
        let writer = ArrowWriter::try_new(
            Vec::new(),
            Arc::clone(&self.arrow_schema),
            Some(self.settings.properties.clone()),
        )
        .map_err(|e| Error::invalid_argument(format!("{path}: {e}")))?;
        Ok(OpenFile {
            metrics: MetricsCollector::new(&self.schema),
            path,
            writer,
            rows: 0,
        })
    }

    fn close_file(&mut self, index: usize) -> Result<()> {
        let Some(p) = self.partitions.get_mut(index) else {
            return Ok(());
        };
        let Some(mut file) = p.open.take() else {
            return Ok(());
        };
        let partition = p.partition.clone();
        let path = file.path.clone();
        let metadata = file
            .writer
            .finish()
            .map_err(|e| Error::invalid_argument(format!("encoding {path}: {e}")))?;
        let mut writer = file.writer;
        let bytes = std::mem::take(writer.inner_mut());
        drop(writer);
        let leaves = file.metrics.leaves().len();
        let mut column_sizes = vec![0i64; leaves];
        let mut split_offsets = Vec::new();
        for rg in metadata.row_groups() {
            for (i, c) in rg.columns().iter().enumerate() {
                if let Some(size) = column_sizes.get_mut(i) {
                    *size += c.compressed_size();
                }
            }
            if let Some(first) = rg.columns().first() {
                let start = match first.dictionary_page_offset() {
                    Some(d) if d > 0 && d < first.data_page_offset() => d,
                    _ => first.data_page_offset(),
                };
                split_offsets.push(start);
            }
        }
        self.io.write_new(&path, &bytes)?;
        self.written.push(path.clone());
        let metrics = file.metrics.finish(&self.schema, &self.metrics_config)?;
        let leaf_ids: Vec<i32> = file.metrics.leaves().iter().map(|l| l.field_id).collect();
        let measured = file
            .metrics
            .measured_leaves(&self.schema, &self.metrics_config);
        let written = WrittenFile {
            path,
            file_size_in_bytes: bytes.len() as i64,
            partition,
            column_sizes,
            split_offsets,
            sort_order_id: self.sort_order_id,
        };
        self.done
            .push(data_file(written, metrics, &leaf_ids, &measured)?);
        Ok(())
    }

    /// Closes the open files and returns the `data_file` of every file written, in the
    /// order they were closed. The writer can take more rows afterwards (into new files).
    pub fn finish(&mut self) -> Result<Vec<DataFile>> {
        for i in 0..self.partitions.len() {
            self.close_file(i)?;
        }
        self.partitions.clear();
        self.by_path.clear();
        Ok(std::mem::take(&mut self.done))
    }

    /// Gives the write up: drops the open files (never stored) and deletes every file
    /// this writer stored. Returns the files it could not delete (logged by the caller).
    pub fn abort(&mut self) -> Vec<String> {
        self.partitions.clear();
        self.by_path.clear();
        self.done.clear();
        let mut kept = Vec::new();
        for path in self.written.drain(..) {
            if self.io.delete(&path).is_err() {
                kept.push(path);
            }
        }
        kept
    }
}

/// `batch` as a batch of the writer's Arrow schema: columns matched by position, converted
/// where the representation differs (see the module documentation).
pub fn conform_batch(
    batch: &RecordBatch,
    target: &SchemaRef,
    schema: &Schema,
) -> Result<RecordBatch> {
    if batch.num_columns() != target.fields().len() {
        return Err(Error::invalid_argument(format!(
            "the rows have {} columns, the table schema {} ({})",
            batch.num_columns(),
            target.fields().len(),
            schema
                .fields()
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (column, field) in batch.columns().iter().zip(target.fields()) {
        let converted = conform_array(column, field.data_type())
            .map_err(|e| Error::invalid_argument(format!("column '{}': {e}", field.name())))?;
        if !field.is_nullable() && converted.null_count() > 0 {
            return Err(Error::invalid_argument(format!(
                "column '{}' is required but has nulls",
                field.name()
            )));
        }
        columns.push(converted);
    }
    RecordBatch::try_new(Arc::clone(target), columns)
        .map_err(|e| Error::invalid_argument(format!("the rows do not fit the table schema: {e}")))
}

fn conform_array(array: &ArrayRef, target: &DataType) -> std::result::Result<ArrayRef, String> {
    if array.data_type() == target {
        return Ok(Arc::clone(array));
    }
    if let (
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View,
        DataType::FixedSizeBinary(16),
    ) = (array.data_type(), target)
    {
        return uuids_from_strings(array);
    }
    arrow_cast::cast::cast_with_options(
        array,
        target,
        &arrow_cast::cast::CastOptions {
            safe: false,
            ..Default::default()
        },
    )
    .map_err(|e| format!("cannot write {} as {target}: {e}", array.data_type()))
}

/// Spark has no uuid type: uuid columns come as strings.
fn uuids_from_strings(array: &ArrayRef) -> std::result::Result<ArrayRef, String> {
    let strings = arrow_cast::cast::cast(array, &DataType::Utf8).map_err(|e| e.to_string())?;
    let strings = strings.as_string::<i32>();
    let mut values: Vec<Option<[u8; 16]>> = Vec::with_capacity(strings.len());
    for s in strings.iter() {
        values.push(match s {
            None => None,
            Some(s) => Some(
                *uuid::Uuid::parse_str(s)
                    .map_err(|_| format!("'{s}' is not a uuid"))?
                    .as_bytes(),
            ),
        });
    }
    let out = FixedSizeBinaryArray::try_from_sparse_iter_with_size(values.into_iter(), 16)
        .map_err(|e| e.to_string())?;
    Ok(Arc::new(out))
}

/// Data files as Arrow IPC stream bytes (rows of `crate::arrow::manifest::entries_schema`,
/// the spec id under [`SPEC_ID_KEY`]): what an executor sends the driver.
pub fn data_files_to_ipc(
    files: Vec<DataFile>,
    partition_type: &StructType,
    spec_id: i32,
) -> Result<Vec<u8>> {
    let batch = super::data_files_to_batch(files, partition_type)?;
    let schema = batch.schema().as_ref().clone().with_metadata(
        [(SPEC_ID_KEY.to_string(), spec_id.to_string())]
            .into_iter()
            .collect(),
    );
    let err = |e: arrow_schema::ArrowError| Error::invalid_argument(format!("data files IPC: {e}"));
    let batch = batch.with_schema(Arc::new(schema)).map_err(err)?;
    let mut out = Vec::new();
    {
        let mut w =
            arrow_ipc::writer::StreamWriter::try_new(&mut out, &batch.schema()).map_err(err)?;
        w.write(&batch).map_err(err)?;
        w.finish().map_err(err)?;
    }
    Ok(out)
}

/// The spec id and the data files of a payload of [`data_files_to_ipc`]; the partition
/// type comes from the table's spec of that id.
pub fn data_files_from_ipc(
    bytes: &[u8],
    partition_type_of: impl Fn(i32) -> Result<StructType>,
) -> Result<(i32, Vec<DataFile>)> {
    let err = |e: arrow_schema::ArrowError| Error::invalid_argument(format!("data files IPC: {e}"));
    let reader =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None).map_err(err)?;
    let schema = reader.schema();
    let spec_id = schema
        .metadata()
        .get(SPEC_ID_KEY)
        .and_then(|v| v.parse::<i32>().ok())
        .ok_or_else(|| Error::invalid_argument(format!("data files IPC: no {SPEC_ID_KEY}")))?;
    let partition_type = partition_type_of(spec_id)?;
    let mut files = Vec::new();
    for batch in reader {
        let batch = batch.map_err(err)?;
        for entry in crate::arrow::manifest::batch_to_entries(&batch, &partition_type)? {
            files.push(entry.data_file);
        }
    }
    Ok((spec_id, files))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;
    use crate::io::MemoryFileIO;
    use crate::spec::partition::PartitionField;
    use crate::spec::{NestedField, PrimitiveType as P};
    use arrow_array::{Float64Array, Int64Array, StringArray, TimestampMicrosecondArray};
    use arrow_schema::{Field, Schema as ArrowSchema, TimeUnit};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    fn schema() -> Schema {
        Schema::new(
            0,
            vec![
                NestedField::required(1, "id", P::Long.into()),
                NestedField::optional(2, "cat", P::String.into()),
                NestedField::optional(3, "amount", P::Double.into()),
                NestedField::optional(4, "ts", P::Timestamptz.into()),
            ],
            vec![],
        )
        .unwrap()
    }

    /// Rows as Spark's ArrowWriter hands them: its own names, the session's zone name.
    fn spark_batch(ids: std::ops::Range<i64>) -> RecordBatch {
        let n = ids.end - ids.start;
        let fields = vec![
            Field::new("ID", DataType::Int64, false),
            Field::new("cat", DataType::Utf8, true),
            Field::new("amount", DataType::Float64, true),
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some("Etc/UTC".into())),
                true,
            ),
        ];
        let cats: Vec<Option<String>> = ids
            .clone()
            .map(|i| (i % 5 != 4).then(|| format!("c{}", i % 3)))
            .collect();
        let amounts: Vec<Option<f64>> = ids
            .clone()
            .map(|i| {
                if i % 7 == 0 {
                    Some(f64::NAN)
                } else {
                    Some(i as f64 / 2.0)
                }
            })
            .collect();
        RecordBatch::try_new(
            Arc::new(ArrowSchema::new(fields)),
            vec![
                Arc::new(Int64Array::from_iter_values(ids.clone())),
                Arc::new(StringArray::from(cats)),
                Arc::new(Float64Array::from(amounts)),
                Arc::new(
                    TimestampMicrosecondArray::from_iter_values(
                        ids.clone().map(|i| i * 3_600_000_000 * 7),
                    )
                    .with_timezone("Etc/UTC"),
                ),
            ],
        )
        .inspect(|b| assert_eq!(b.num_rows() as i64, n))
        .unwrap()
    }

    fn writer(
        io: Arc<MemoryFileIO>,
        spec: PartitionSpec,
        props: &[(&str, &str)],
    ) -> DataFileWriter {
        DataFileWriter::with_parts(
            io,
            "mem://t",
            schema(),
            spec,
            None,
            props
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            DataWriterOptions {
                partition_id: 3,
                task_id: 17,
                operation_id: "op".into(),
                ..Default::default()
            },
        )
        .unwrap()
    }

    fn read_back(
        io: &MemoryFileIO,
        path: &str,
    ) -> (Vec<RecordBatch>, parquet::schema::types::SchemaDescPtr) {
        let bytes = bytes::Bytes::from(io.read(path).unwrap());
        let builder = ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
        let descr = builder.parquet_schema().clone();
        let descr = Arc::new(descr);
        let batches = builder
            .build()
            .unwrap()
            .collect::<std::result::Result<Vec<_>, _>>()
            .unwrap();
        (batches, descr)
    }

    #[test]
    fn round_trip_with_field_ids_and_java_names() {
        let io = Arc::new(MemoryFileIO::default());
        let mut w = writer(Arc::clone(&io), PartitionSpec::unpartitioned(), &[]);
        w.write(&spark_batch(0..100)).unwrap();
        w.write(&spark_batch(100..150)).unwrap();
        let files = w.finish().unwrap();
        assert_eq!(files.len(), 1);
        let f = &files[0];
        assert_eq!(f.file_path, "mem://t/data/00003-17-op-00001.parquet");
        assert_eq!(f.record_count, 150);
        assert_eq!(
            f.file_size_in_bytes as usize,
            io.read(&f.file_path).unwrap().len()
        );
        let (batches, descr) = read_back(&io, &f.file_path);
        let ids: Vec<i32> = descr
            .columns()
            .iter()
            .map(|c| c.self_type().get_basic_info().id())
            .collect();
        assert_eq!(ids, vec![1, 2, 3, 4]);
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        assert_eq!(rows, 150);
        let got = arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap();
        let ids = got
            .column(0)
            .as_primitive::<arrow_array::types::Int64Type>();
        assert_eq!(ids.values().to_vec(), (0..150).collect::<Vec<i64>>());
        // zstd, as Java's default
        let meta = parquet::file::reader::FileReader::metadata(
            &parquet::file::serialized_reader::SerializedFileReader::new(bytes::Bytes::from(
                io.read(&f.file_path).unwrap(),
            ))
            .unwrap(),
        )
        .row_group(0)
        .column(0)
        .compression();
        assert!(matches!(meta, Compression::ZSTD(_)), "{meta:?}");
    }

    #[test]
    fn row_lineage_columns_are_written_under_their_reserved_ids() {
        let io = Arc::new(MemoryFileIO::default());
        let mut w = DataFileWriter::with_parts(
            Arc::clone(&io) as Arc<dyn FileIO>,
            "mem://t",
            schema(),
            PartitionSpec::unpartitioned(),
            None,
            Vec::new(),
            DataWriterOptions {
                row_lineage: true,
                ..Default::default()
            },
        )
        .unwrap();
        let rows = spark_batch(0..4);
        let mut fields: Vec<Field> = rows
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.push(Field::new("_row_id", DataType::Int64, true));
        fields.push(Field::new(
            "_last_updated_sequence_number",
            DataType::Int64,
            true,
        ));
        let mut columns = rows.columns().to_vec();
        columns.push(Arc::new(Int64Array::from(vec![
            Some(7),
            None,
            Some(9),
            None,
        ])));
        columns.push(Arc::new(Int64Array::from(vec![None::<i64>; 4])));
        let batch = RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns).unwrap();
        w.write(&batch).unwrap();
        let files = w.finish().unwrap();
        let (batches, descr) = read_back(&io, &files[0].file_path);
        let ids: Vec<i32> = descr
            .columns()
            .iter()
            .map(|c| c.self_type().get_basic_info().id())
            .collect();
        assert_eq!(ids, vec![1, 2, 3, 4, 2147483540, 2147483539]);
        let row_ids = batches[0]
            .column(4)
            .as_primitive::<arrow_array::types::Int64Type>();
        assert_eq!(
            row_ids.iter().collect::<Vec<_>>(),
            vec![Some(7), None, Some(9), None]
        );
        // without the option, the rows must have the table's columns only
        let mut plain = writer(Arc::clone(&io), PartitionSpec::unpartitioned(), &[]);
        assert!(plain.write(&batch).is_err());
    }

    #[test]
    fn metrics_equal_the_metrics_of_the_same_rows() {
        let io = Arc::new(MemoryFileIO::default());
        let mut w = writer(Arc::clone(&io), PartitionSpec::unpartitioned(), &[]);
        let b = spark_batch(0..64);
        w.write(&b).unwrap();
        let f = w.finish().unwrap().remove(0);
        let s = schema();
        let target = Arc::new(schema_to_arrow(&s).unwrap());
        let conformed = conform_batch(&b, &target, &s).unwrap();
        let mut c = MetricsCollector::new(&s);
        c.update(&s, &conformed).unwrap();
        let m = c
            .finish(&s, &MetricsConfig::from_properties(&[], Some(&s), None))
            .unwrap();
        assert_eq!(f.value_counts.as_ref().unwrap(), &m.value_counts);
        assert_eq!(f.null_value_counts.as_ref().unwrap(), &m.null_value_counts);
        assert_eq!(f.nan_value_counts.as_ref().unwrap(), &m.nan_value_counts);
        assert_eq!(f.lower_bounds.as_ref().unwrap(), &m.lower_bounds);
        assert_eq!(f.upper_bounds.as_ref().unwrap(), &m.upper_bounds);
        assert_eq!(get(&m.null_value_counts, 2), 12);
        assert_eq!(get(&m.nan_value_counts, 3), 10);
        // a column size for every column, and the first row group's offset after the magic
        let sizes = f.column_sizes.as_ref().unwrap();
        assert_eq!(
            sizes.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
            vec![1, 2, 3, 4]
        );
        assert!(sizes.iter().all(|(_, s)| *s > 0));
        assert_eq!(f.split_offsets.as_deref(), Some(&[4i64][..]));
    }

    fn get(v: &[(i32, i64)], id: i32) -> i64 {
        v.iter().find(|(k, _)| *k == id).map(|(_, x)| *x).unwrap()
    }

    #[test]
    fn partitions_rows_and_names_partition_paths() {
        let io = Arc::new(MemoryFileIO::default());
        let spec = PartitionSpec::new(
            0,
            vec![
                PartitionField::new(2, 1000, "cat", "identity".parse().unwrap()),
                PartitionField::new(4, 1001, "ts_day", "day".parse().unwrap()),
            ],
        );
        let mut w = writer(Arc::clone(&io), spec, &[]);
        w.write(&spark_batch(0..10)).unwrap();
        w.write(&spark_batch(10..20)).unwrap();
        let files = w.finish().unwrap();
        let total: i64 = files.iter().map(|f| f.record_count).sum();
        assert_eq!(total, 20);
        // a file per tuple, also when a tuple comes back in a later batch
        let mut paths: Vec<&str> = files.iter().map(|f| f.file_path.as_str()).collect();
        paths.sort();
        paths.dedup();
        assert_eq!(paths.len(), files.len());
        let first = files
            .iter()
            .find(|f| {
                f.file_path
                    .starts_with("mem://t/data/cat=c0/ts_day=1970-01-01/")
            })
            .unwrap();
        assert_eq!(
            first.partition,
            vec![Some(Literal::String("c0".into())), Some(Literal::Int(0))]
        );
        let nulls = files
            .iter()
            .find(|f| f.file_path.contains("/cat=null/"))
            .unwrap();
        assert_eq!(nulls.partition[0], None);
        for f in &files {
            let (batches, _) = read_back(&io, &f.file_path);
            let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
            assert_eq!(rows as i64, f.record_count);
        }
    }

    #[test]
    fn rolls_at_the_target_file_size() {
        let io = Arc::new(MemoryFileIO::default());
        let mut w = writer(
            Arc::clone(&io),
            PartitionSpec::unpartitioned(),
            &[(TARGET_FILE_SIZE, "2000"), (COMPRESSION, "uncompressed")],
        );
        for i in 0..10 {
            w.write(&spark_batch(i * 200..(i + 1) * 200)).unwrap();
        }
        let files = w.finish().unwrap();
        assert!(files.len() >= 5, "{} files", files.len());
        let total: i64 = files.iter().map(|f| f.record_count).sum();
        assert_eq!(total, 2000);
        let names: Vec<&str> = files.iter().map(|f| f.file_path.as_str()).collect();
        assert_eq!(names[1], "mem://t/data/00003-17-op-00002.parquet");
    }

    #[test]
    fn abort_deletes_every_file_written() {
        let io = Arc::new(MemoryFileIO::default());
        let mut w = writer(
            Arc::clone(&io),
            PartitionSpec::unpartitioned(),
            &[(TARGET_FILE_SIZE, "1000")],
        );
        w.write(&spark_batch(0..500)).unwrap();
        w.write(&spark_batch(500..1000)).unwrap();
        let written = w.written_files().to_vec();
        assert!(!written.is_empty());
        assert!(w.abort().is_empty());
        for p in written {
            assert!(!io.exists(&p).unwrap());
        }
    }

    #[test]
    fn refuses_rows_that_do_not_fit() {
        let io = Arc::new(MemoryFileIO::default());
        let mut w = writer(Arc::clone(&io), PartitionSpec::unpartitioned(), &[]);
        let b = spark_batch(0..3);
        let short = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![b.schema().field(0).clone()])),
            vec![Arc::clone(b.column(0))],
        )
        .unwrap();
        let err = w.write(&short).unwrap_err().to_string();
        assert!(
            err.contains("1 columns") && err.contains("id, cat"),
            "{err}"
        );
        let err = DataFileWriter::with_parts(
            io,
            "mem://t",
            schema(),
            PartitionSpec::unpartitioned(),
            None,
            vec![(COMPRESSION.to_string(), "lzo".to_string())],
            DataWriterOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    }

    #[test]
    fn data_files_cross_as_ipc() {
        let io = Arc::new(MemoryFileIO::default());
        let spec = PartitionSpec::new(
            0,
            vec![PartitionField::new(
                2,
                1000,
                "cat",
                "identity".parse().unwrap(),
            )],
        );
        let mut w = writer(Arc::clone(&io), spec, &[]);
        w.write(&spark_batch(0..10)).unwrap();
        let files = w.finish().unwrap();
        let pt = w.partition_type().clone();
        let bytes = data_files_to_ipc(files.clone(), &pt, 0).unwrap();
        let (spec_id, back) = data_files_from_ipc(&bytes, |_| Ok(pt.clone())).unwrap();
        assert_eq!(spec_id, 0);
        assert_eq!(back, files);
    }
}
