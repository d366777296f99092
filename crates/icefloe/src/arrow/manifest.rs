//! Manifests and manifest lists as Arrow record batches (one row per entry or per
//! manifest file), and back. Column names are the spec's field names; the partition tuple
//! is a struct column with one child per partition field (named by the field, typed by its
//! result type), so a plan of many files never becomes many Python objects.

use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Int32Builder, Int64Builder, ListBuilder, MapBuilder,
    MapFieldNames, StringBuilder, StructBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{
    new_null_array, Array, ArrayRef, BinaryArray, BooleanArray, Int32Array, Int64Array, ListArray,
    MapArray, RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema};

use super::{array_value, iceberg_to_arrow_type, literals_to_array};
use crate::error::{Error, Result};
use crate::manifest::{
    read_manifest_metadata, visit_manifest, DataContentType, DataFile, FieldSummary, FileFormat,
    ManifestContent, ManifestEntry, ManifestFile, ManifestMetadata, ManifestProjection,
    ManifestSource, ManifestStatus, ReadManifestOptions, UNASSIGNED_SEQUENCE_NUMBER,
};
use crate::spec::{Literal, PrimitiveType, StructType, Type};

fn map_type(value: DataType) -> DataType {
    let entries = Field::new(
        "entries",
        DataType::Struct(Fields::from(vec![
            Field::new("key", DataType::Int32, false),
            Field::new("value", value, true),
        ])),
        false,
    );
    DataType::Map(Arc::new(entries), false)
}

fn list_type(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, true)))
}

fn map_names() -> MapFieldNames {
    MapFieldNames {
        entry: "entries".into(),
        key: "key".into(),
        value: "value".into(),
    }
}

/// The Arrow fields of a partition struct for a partition type.
fn partition_fields(partition_type: &StructType) -> Result<Fields> {
    partition_type
        .fields
        .iter()
        .map(|f| {
            let p = primitive(&f.field_type)?;
            Ok(Field::new(&f.name, iceberg_to_arrow_type(p)?, true))
        })
        .collect::<Result<Vec<_>>>()
        .map(Fields::from)
}

fn primitive(t: &Type) -> Result<&PrimitiveType> {
    t.as_primitive().ok_or_else(|| {
        Error::unsupported(format!("a partition field of type {t} is not primitive"))
    })
}

/// The Arrow schema of [`entries_to_batch`] for a manifest with this partition type.
pub fn entries_schema(partition_type: &StructType) -> Result<ArrowSchema> {
    let counts = || map_type(DataType::Int64);
    let bounds = || map_type(DataType::Binary);
    Ok(ArrowSchema::new(vec![
        Field::new("status", DataType::Int32, false),
        Field::new("snapshot_id", DataType::Int64, true),
        Field::new("sequence_number", DataType::Int64, true),
        Field::new("file_sequence_number", DataType::Int64, true),
        Field::new("content", DataType::Int32, false),
        Field::new("file_path", DataType::Utf8, false),
        Field::new("file_format", DataType::Utf8, false),
        Field::new(
            "partition",
            DataType::Struct(partition_fields(partition_type)?),
            false,
        ),
        Field::new("record_count", DataType::Int64, false),
        Field::new("file_size_in_bytes", DataType::Int64, false),
        Field::new("column_sizes", counts(), true),
        Field::new("value_counts", counts(), true),
        Field::new("null_value_counts", counts(), true),
        Field::new("nan_value_counts", counts(), true),
        Field::new("lower_bounds", bounds(), true),
        Field::new("upper_bounds", bounds(), true),
        Field::new("key_metadata", DataType::Binary, true),
        Field::new("split_offsets", list_type(DataType::Int64), true),
        Field::new("equality_ids", list_type(DataType::Int32), true),
        Field::new("sort_order_id", DataType::Int32, true),
        Field::new("first_row_id", DataType::Int64, true),
        Field::new("referenced_data_file", DataType::Utf8, true),
        Field::new("content_offset", DataType::Int64, true),
        Field::new("content_size_in_bytes", DataType::Int64, true),
    ]))
}

fn append_counts(
    b: &mut MapBuilder<Int32Builder, Int64Builder>,
    v: &Option<Vec<(i32, i64)>>,
) -> Result<()> {
    if let Some(pairs) = v {
        for (k, n) in pairs {
            b.keys().append_value(*k);
            b.values().append_value(*n);
        }
    }
    b.append(v.is_some()).map_err(arrow_err)
}

fn append_bounds(
    b: &mut MapBuilder<Int32Builder, BinaryBuilder>,
    v: &Option<Vec<(i32, Vec<u8>)>>,
) -> Result<()> {
    if let Some(pairs) = v {
        for (k, bytes) in pairs {
            b.keys().append_value(*k);
            b.values().append_value(bytes);
        }
    }
    b.append(v.is_some()).map_err(arrow_err)
}

fn arrow_err(e: arrow_schema::ArrowError) -> Error {
    Error::invalid_argument(format!("cannot build an Arrow array: {e}"))
}

/// Manifest entries as one record batch (see [`entries_schema`]).
pub fn entries_to_batch(
    entries: &[ManifestEntry],
    partition_type: &StructType,
) -> Result<RecordBatch> {
    let mut b = EntriesBuilder::new(partition_type)?;
    for e in entries {
        b.append(e)?;
    }
    b.finish()
}

/// A manifest's entries as one record batch straight from its bytes: each entry is
/// decoded into one reused slot and appended to the columns, so no entry is ever
/// materialised. Inheritance from `manifest_file` is applied when given. Returns the
/// manifest's metadata and the batch (see [`entries_schema`], with the partition type of
/// the manifest's own spec). Errors carry the field but no file name.
pub fn manifest_bytes_to_batch(
    bytes: &[u8],
    options: &ManifestProjection,
    manifest_file: Option<&ManifestFile>,
) -> Result<(ManifestMetadata, RecordBatch)> {
    let metadata = read_manifest_metadata(bytes)?;
    let partition_type = metadata.partition_spec.partition_type(&metadata.schema)?;
    // not pre-sized from the block headers: measured no faster (fresh pages for the whole
    // capacity at once)
    let mut b = EntriesBuilder::new(&partition_type)?;
    let mut read = ReadManifestOptions::default().projection(options);
    if let Some(mf) = manifest_file {
        read = read.inherit_from(mf);
    }
    visit_manifest(ManifestSource::Bytes(bytes), &read, |e| b.append(e))?;
    Ok((metadata, b.finish()?))
}

type CountsBuilder = MapBuilder<Int32Builder, Int64Builder>;
type BoundsBuilder = MapBuilder<Int32Builder, BinaryBuilder>;

/// The columns of [`entries_schema`], filled one entry at a time.
pub struct EntriesBuilder {
    schema: Arc<ArrowSchema>,
    partition_types: Vec<PrimitiveType>,
    partition_fields: Fields,
    status: Int32Builder,
    snapshot_id: Int64Builder,
    sequence_number: Int64Builder,
    file_sequence_number: Int64Builder,
    content: Int32Builder,
    file_path: StringBuilder,
    file_format: StringBuilder,
    /// Partition values by field, turned into typed arrays at the end.
    partition: Vec<Vec<Option<Literal>>>,
    record_count: Int64Builder,
    file_size_in_bytes: Int64Builder,
    counts: [CountsBuilder; 4],
    bounds: [BoundsBuilder; 2],
    key_metadata: BinaryBuilder,
    split_offsets: ListBuilder<Int64Builder>,
    equality_ids: ListBuilder<Int32Builder>,
    sort_order_id: Int32Builder,
    first_row_id: Int64Builder,
    referenced_data_file: StringBuilder,
    content_offset: Int64Builder,
    content_size_in_bytes: Int64Builder,
}

impl EntriesBuilder {
    pub fn new(partition_type: &StructType) -> Result<EntriesBuilder> {
        let partition_types = partition_type
            .fields
            .iter()
            .map(|f| primitive(&f.field_type).cloned())
            .collect::<Result<Vec<_>>>()?;
        let counts =
            || MapBuilder::new(Some(map_names()), Int32Builder::new(), Int64Builder::new());
        let bounds =
            || MapBuilder::new(Some(map_names()), Int32Builder::new(), BinaryBuilder::new());
        Ok(EntriesBuilder {
            schema: Arc::new(entries_schema(partition_type)?),
            partition: vec![Vec::new(); partition_types.len()],
            partition_types,
            partition_fields: partition_fields(partition_type)?,
            status: Int32Builder::new(),
            snapshot_id: Int64Builder::new(),
            sequence_number: Int64Builder::new(),
            file_sequence_number: Int64Builder::new(),
            content: Int32Builder::new(),
            file_path: StringBuilder::new(),
            file_format: StringBuilder::new(),
            record_count: Int64Builder::new(),
            file_size_in_bytes: Int64Builder::new(),
            counts: [counts(), counts(), counts(), counts()],
            bounds: [bounds(), bounds()],
            key_metadata: BinaryBuilder::new(),
            split_offsets: ListBuilder::new(Int64Builder::new()),
            equality_ids: ListBuilder::new(Int32Builder::new()),
            sort_order_id: Int32Builder::new(),
            first_row_id: Int64Builder::new(),
            referenced_data_file: StringBuilder::new(),
            content_offset: Int64Builder::new(),
            content_size_in_bytes: Int64Builder::new(),
        })
    }

    /// Adds one entry as a row.
    pub fn append(&mut self, e: &ManifestEntry) -> Result<()> {
        let f = &e.data_file;
        self.status.append_value(e.status.id());
        self.snapshot_id.append_option(e.snapshot_id);
        self.sequence_number.append_option(e.sequence_number);
        self.file_sequence_number
            .append_option(e.file_sequence_number);
        self.content.append_value(f.content.id());
        self.file_path.append_value(&f.file_path);
        self.file_format.append_value(f.file_format.as_str());
        for (i, values) in self.partition.iter_mut().enumerate() {
            values.push(f.partition.get(i).cloned().flatten());
        }
        self.record_count.append_value(f.record_count);
        self.file_size_in_bytes.append_value(f.file_size_in_bytes);
        let [sizes, values, nulls, nans] = &mut self.counts;
        append_counts(sizes, &f.column_sizes)?;
        append_counts(values, &f.value_counts)?;
        append_counts(nulls, &f.null_value_counts)?;
        append_counts(nans, &f.nan_value_counts)?;
        let [lower, upper] = &mut self.bounds;
        append_bounds(lower, &f.lower_bounds)?;
        append_bounds(upper, &f.upper_bounds)?;
        self.key_metadata.append_option(f.key_metadata.as_deref());
        match &f.split_offsets {
            Some(v) => self.split_offsets.append_value(v.iter().map(|x| Some(*x))),
            None => self.split_offsets.append_null(),
        }
        match &f.equality_ids {
            Some(v) => self.equality_ids.append_value(v.iter().map(|x| Some(*x))),
            None => self.equality_ids.append_null(),
        }
        self.sort_order_id.append_option(f.sort_order_id);
        self.first_row_id.append_option(f.first_row_id);
        self.referenced_data_file
            .append_option(f.referenced_data_file.as_deref());
        self.content_offset.append_option(f.content_offset);
        self.content_size_in_bytes
            .append_option(f.content_size_in_bytes);
        Ok(())
    }

    /// The rows added so far as one record batch.
    pub fn finish(mut self) -> Result<RecordBatch> {
        let n = arrow_array::builder::ArrayBuilder::len(&self.status);
        let mut children: Vec<ArrayRef> = Vec::with_capacity(self.partition.len());
        for (values, ty) in self.partition.iter().zip(&self.partition_types) {
            let refs: Vec<Option<&Literal>> = values.iter().map(Option::as_ref).collect();
            children.push(literals_to_array(&refs, ty)?);
        }
        let partition: ArrayRef = if self.partition_fields.is_empty() {
            Arc::new(StructArray::new_empty_fields(n, None))
        } else {
            Arc::new(
                StructArray::try_new(self.partition_fields.clone(), children, None)
                    .map_err(arrow_err)?,
            )
        };
        let [sizes, values, nulls, nans] = &mut self.counts;
        let [lower, upper] = &mut self.bounds;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.status.finish()),
            Arc::new(self.snapshot_id.finish()),
            Arc::new(self.sequence_number.finish()),
            Arc::new(self.file_sequence_number.finish()),
            Arc::new(self.content.finish()),
            Arc::new(self.file_path.finish()),
            Arc::new(self.file_format.finish()),
            partition,
            Arc::new(self.record_count.finish()),
            Arc::new(self.file_size_in_bytes.finish()),
            Arc::new(sizes.finish()),
            Arc::new(values.finish()),
            Arc::new(nulls.finish()),
            Arc::new(nans.finish()),
            Arc::new(lower.finish()),
            Arc::new(upper.finish()),
            Arc::new(self.key_metadata.finish()),
            Arc::new(self.split_offsets.finish()),
            Arc::new(self.equality_ids.finish()),
            Arc::new(self.sort_order_id.finish()),
            Arc::new(self.first_row_id.finish()),
            Arc::new(self.referenced_data_file.finish()),
            Arc::new(self.content_offset.finish()),
            Arc::new(self.content_size_in_bytes.finish()),
        ];
        RecordBatch::try_new(self.schema, columns).map_err(arrow_err)
    }
}

/// The lower and upper bounds of the columns `field_ids` decoded to typed values: two struct
/// columns with one child per column (named by its full name in `schema`, typed as the
/// column), null where a file has no bound. The binary forms are read with the spec's rules
/// for promoted types (a 4-byte bound of a `long` column is an int, ...).
pub fn decoded_bounds(
    entries: &[ManifestEntry],
    schema: &crate::spec::Schema,
    field_ids: &[i32],
) -> Result<(ArrayRef, ArrayRef)> {
    let mut fields = Vec::with_capacity(field_ids.len());
    let (mut lower, mut upper): (Vec<ArrayRef>, Vec<ArrayRef>) = (Vec::new(), Vec::new());
    for &id in field_ids {
        let field = schema.field_by_id(id).ok_or_else(|| {
            Error::invalid_argument(format!("the manifest's schema has no field {id}"))
        })?;
        let ty = field.field_type.as_primitive().ok_or_else(|| {
            Error::invalid_argument(format!(
                "field {id} ({}) is not primitive and has no bounds",
                field.name
            ))
        })?;
        let name = schema.name_by_id(id).unwrap_or(&field.name);
        let decode = |bounds: &Option<Bounds>| -> Result<Option<crate::spec::Literal>> {
            match bounds
                .as_ref()
                .and_then(|b| b.iter().find(|(k, _)| *k == id))
            {
                None => Ok(None),
                Some((_, bytes)) => crate::spec::Literal::from_bytes(bytes, ty)
                    .map(Some)
                    .map_err(|e| Error::invalid_argument(format!("bound of {name}: {e}"))),
            }
        };
        for (target, pick) in [(&mut lower, true), (&mut upper, false)] {
            let values = entries
                .iter()
                .map(|e| {
                    decode(if pick {
                        &e.data_file.lower_bounds
                    } else {
                        &e.data_file.upper_bounds
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let refs: Vec<Option<&crate::spec::Literal>> =
                values.iter().map(Option::as_ref).collect();
            target.push(literals_to_array(&refs, ty)?);
        }
        fields.push(Field::new(name, iceberg_to_arrow_type(ty)?, true));
    }
    let make = |children: Vec<ArrayRef>| -> Result<ArrayRef> {
        if fields.is_empty() {
            return Ok(Arc::new(StructArray::new_empty_fields(entries.len(), None)));
        }
        Ok(Arc::new(
            StructArray::try_new(Fields::from(fields.clone()), children, None)
                .map_err(arrow_err)?,
        ))
    };
    Ok((make(lower)?, make(upper)?))
}

/// `batch` (the entries of a manifest, from [`entries_to_batch`]) with two more struct
/// columns, `lower_bound_values` and `upper_bound_values`: the typed bounds of `columns`,
/// each a full name in `schema` (the manifest's own) or a field id (see [`decoded_bounds`]).
pub fn with_decoded_bounds(
    batch: RecordBatch,
    entries: &[ManifestEntry],
    schema: &crate::spec::Schema,
    columns: &[String],
) -> Result<RecordBatch> {
    let ids = columns
        .iter()
        .map(|c| {
            c.parse::<i32>()
                .ok()
                .or_else(|| schema.id_by_name(c, true))
                .ok_or_else(|| {
                    Error::not_found(format!("no column '{c}' in the manifest's schema"))
                })
        })
        .collect::<Result<Vec<_>>>()?;
    let (lower, upper) = decoded_bounds(entries, schema, &ids)?;
    let mut fields: Vec<Field> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    let mut arrays = batch.columns().to_vec();
    for (name, array) in [("lower_bound_values", lower), ("upper_bound_values", upper)] {
        fields.push(Field::new(name, array.data_type().clone(), false));
        arrays.push(array);
    }
    RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), arrays).map_err(arrow_err)
}

// ---------------------------------------------------------------------------------------
// Reading batches back (for writers fed from Python)

fn column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a ArrayRef> {
    batch
        .column_by_name(name)
        .ok_or_else(|| Error::invalid_argument(format!("the entries have no column '{name}'")))
}

fn typed<'a, T: 'static>(batch: &'a RecordBatch, name: &str) -> Result<&'a T> {
    column(batch, name)?
        .as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "column '{name}' has type {}, which is not the expected one",
                batch
                    .column_by_name(name)
                    .map_or(DataType::Null, |c| c.data_type().clone())
            ))
        })
}

/// An optional column: absent means all null. Nested field names are not compared
/// (pyarrow and arrow-rs name list items and map entries differently).
fn optional(batch: &RecordBatch, name: &str, ty: &DataType) -> Result<ArrayRef> {
    match batch.column_by_name(name) {
        Some(c) if c.data_type().equals_datatype(ty) => Ok(c.clone()),
        Some(c) => Err(Error::invalid_argument(format!(
            "column '{name}' has type {}, expected {ty}",
            c.data_type()
        ))),
        None => Ok(new_null_array(ty, batch.num_rows())),
    }
}

fn opt_i64(a: &Int64Array, i: usize) -> Option<i64> {
    a.is_valid(i).then(|| a.value(i))
}

fn opt_i32(a: &Int32Array, i: usize) -> Option<i32> {
    a.is_valid(i).then(|| a.value(i))
}

fn read_counts(a: &MapArray, i: usize) -> Result<Option<Vec<(i32, i64)>>> {
    if a.is_null(i) {
        return Ok(None);
    }
    let entry = a.value(i);
    let keys = entry.column(0).as_primitive_opt::<Int32Type>();
    let values = entry.column(1).as_primitive_opt::<Int64Type>();
    let (Some(keys), Some(values)) = (keys, values) else {
        return Err(Error::invalid_argument(
            "a count map must be map<int32, int64>",
        ));
    };
    Ok(Some(
        (0..keys.len())
            .map(|j| (keys.value(j), values.value(j)))
            .collect(),
    ))
}

/// Bounds by field id, as in [`DataFile`].
type Bounds = Vec<(i32, Vec<u8>)>;

fn read_bounds(a: &MapArray, i: usize) -> Result<Option<Bounds>> {
    if a.is_null(i) {
        return Ok(None);
    }
    let entry = a.value(i);
    let keys = entry.column(0).as_primitive_opt::<Int32Type>();
    let values = entry.column(1).as_binary_opt::<i32>();
    let (Some(keys), Some(values)) = (keys, values) else {
        return Err(Error::invalid_argument(
            "a bounds map must be map<int32, binary>",
        ));
    };
    Ok(Some(
        (0..keys.len())
            .map(|j| (keys.value(j), values.value(j).to_vec()))
            .collect(),
    ))
}

fn read_list<T: arrow_array::ArrowPrimitiveType>(
    a: &ListArray,
    i: usize,
) -> Result<Option<Vec<T::Native>>> {
    if a.is_null(i) {
        return Ok(None);
    }
    let v = a.value(i);
    let prim = v
        .as_primitive_opt::<T>()
        .ok_or_else(|| Error::invalid_argument(format!("a list column holds {}", v.data_type())))?;
    Ok(Some(prim.values().iter().copied().collect()))
}

/// Manifest entries from a record batch with the columns of [`entries_schema`]. Optional
/// columns may be missing (all null).
pub fn batch_to_entries(
    batch: &RecordBatch,
    partition_type: &StructType,
) -> Result<Vec<ManifestEntry>> {
    let n = batch.num_rows();
    let status = typed::<Int32Array>(batch, "status")?;
    let content = typed::<Int32Array>(batch, "content")?;
    let path = typed::<StringArray>(batch, "file_path")?;
    let format = typed::<StringArray>(batch, "file_format")?;
    let partition = typed::<StructArray>(batch, "partition")?;
    let record_count = typed::<Int64Array>(batch, "record_count")?;
    let size = typed::<Int64Array>(batch, "file_size_in_bytes")?;
    let i64_col = |name| optional(batch, name, &DataType::Int64);
    let i32_col = |name| optional(batch, name, &DataType::Int32);
    let (snapshot_id, seq, file_seq) = (
        i64_col("snapshot_id")?,
        i64_col("sequence_number")?,
        i64_col("file_sequence_number")?,
    );
    let (first_row_id, offset, length) = (
        i64_col("first_row_id")?,
        i64_col("content_offset")?,
        i64_col("content_size_in_bytes")?,
    );
    let sort_order = i32_col("sort_order_id")?;
    let counts: Vec<ArrayRef> = [
        "column_sizes",
        "value_counts",
        "null_value_counts",
        "nan_value_counts",
    ]
    .iter()
    .map(|c| optional(batch, c, &map_type(DataType::Int64)))
    .collect::<Result<_>>()?;
    let bounds: Vec<ArrayRef> = ["lower_bounds", "upper_bounds"]
        .iter()
        .map(|c| optional(batch, c, &map_type(DataType::Binary)))
        .collect::<Result<_>>()?;
    let key_metadata = optional(batch, "key_metadata", &DataType::Binary)?;
    let referenced = optional(batch, "referenced_data_file", &DataType::Utf8)?;
    let splits = optional(batch, "split_offsets", &list_type(DataType::Int64))?;
    let eq_ids = optional(batch, "equality_ids", &list_type(DataType::Int32))?;

    let as_i64 = |a: &ArrayRef| a.as_primitive::<Int64Type>().clone();
    let (snapshot_id, seq, file_seq, first_row_id, offset, length) = (
        as_i64(&snapshot_id),
        as_i64(&seq),
        as_i64(&file_seq),
        as_i64(&first_row_id),
        as_i64(&offset),
        as_i64(&length),
    );
    let sort_order = sort_order.as_primitive::<Int32Type>().clone();
    let counts: Vec<&MapArray> = counts.iter().map(|a| a.as_map()).collect();
    let bounds: Vec<&MapArray> = bounds.iter().map(|a| a.as_map()).collect();
    let key_metadata = key_metadata.as_binary::<i32>();
    let referenced = referenced.as_string::<i32>();
    let splits = splits.as_list::<i32>();
    let eq_ids = eq_ids.as_list::<i32>();

    let ptypes: Vec<&PrimitiveType> = partition_type
        .fields
        .iter()
        .map(|f| primitive(&f.field_type))
        .collect::<Result<_>>()?;
    if partition.num_columns() != ptypes.len() {
        return Err(Error::invalid_argument(format!(
            "the partition column has {} fields, the partition spec {}",
            partition.num_columns(),
            ptypes.len()
        )));
    }

    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let status = ManifestStatus::from_id(status.value(i)).ok_or_else(|| {
            Error::invalid_argument(format!("row {i}: unknown status {}", status.value(i)))
        })?;
        let content = DataContentType::from_id(content.value(i)).ok_or_else(|| {
            Error::invalid_argument(format!("row {i}: unknown content {}", content.value(i)))
        })?;
        let partition_values = ptypes
            .iter()
            .enumerate()
            .map(|(j, t)| array_value(partition.column(j).as_ref(), i, t))
            .collect::<Result<Vec<_>>>()?;
        let mut file = DataFile::new(
            content,
            path.value(i),
            FileFormat::parse(format.value(i)),
            partition_values,
            record_count.value(i),
            size.value(i),
        );
        file.column_sizes = read_counts(counts[0], i)?;
        file.value_counts = read_counts(counts[1], i)?;
        file.null_value_counts = read_counts(counts[2], i)?;
        file.nan_value_counts = read_counts(counts[3], i)?;
        file.lower_bounds = read_bounds(bounds[0], i)?;
        file.upper_bounds = read_bounds(bounds[1], i)?;
        file.key_metadata = key_metadata
            .is_valid(i)
            .then(|| key_metadata.value(i).to_vec());
        file.split_offsets = read_list::<Int64Type>(splits, i)?;
        file.equality_ids = read_list::<Int32Type>(eq_ids, i)?;
        file.sort_order_id = opt_i32(&sort_order, i);
        file.first_row_id = opt_i64(&first_row_id, i);
        file.referenced_data_file = referenced
            .is_valid(i)
            .then(|| referenced.value(i).to_string());
        file.content_offset = opt_i64(&offset, i);
        file.content_size_in_bytes = opt_i64(&length, i);
        out.push(ManifestEntry {
            status,
            snapshot_id: opt_i64(&snapshot_id, i),
            sequence_number: opt_i64(&seq, i),
            file_sequence_number: opt_i64(&file_seq, i),
            data_file: file,
        });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Manifest lists

fn summary_fields() -> Fields {
    Fields::from(vec![
        Field::new("contains_null", DataType::Boolean, false),
        Field::new("contains_nan", DataType::Boolean, true),
        Field::new("lower_bound", DataType::Binary, true),
        Field::new("upper_bound", DataType::Binary, true),
    ])
}

/// The Arrow schema of [`manifest_files_to_batch`].
pub fn manifest_files_schema() -> ArrowSchema {
    ArrowSchema::new(vec![
        Field::new("manifest_path", DataType::Utf8, false),
        Field::new("manifest_length", DataType::Int64, false),
        Field::new("partition_spec_id", DataType::Int32, false),
        Field::new("content", DataType::Int32, false),
        // null while unassigned (a manifest written but not yet listed)
        Field::new("sequence_number", DataType::Int64, true),
        Field::new("min_sequence_number", DataType::Int64, true),
        Field::new("added_snapshot_id", DataType::Int64, false),
        Field::new("added_files_count", DataType::Int32, true),
        Field::new("existing_files_count", DataType::Int32, true),
        Field::new("deleted_files_count", DataType::Int32, true),
        Field::new("added_rows_count", DataType::Int64, true),
        Field::new("existing_rows_count", DataType::Int64, true),
        Field::new("deleted_rows_count", DataType::Int64, true),
        Field::new(
            "partitions",
            list_type(DataType::Struct(summary_fields())),
            true,
        ),
        Field::new("key_metadata", DataType::Binary, true),
        Field::new("first_row_id", DataType::Int64, true),
    ])
}

/// Manifest list rows as one record batch.
pub fn manifest_files_to_batch(files: &[ManifestFile]) -> Result<RecordBatch> {
    let mut partitions = ListBuilder::new(StructBuilder::from_fields(summary_fields(), 0));
    for f in files {
        match &f.partitions {
            None => partitions.append_null(),
            Some(summaries) => {
                let sb = partitions.values();
                for s in summaries {
                    append_summary(sb, s)?;
                }
                partitions.append(true);
            }
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(
            files
                .iter()
                .map(|f| Some(f.manifest_path.as_str()))
                .collect::<StringArray>(),
        ),
        Arc::new(
            files
                .iter()
                .map(|f| f.manifest_length)
                .collect::<Int64Array>(),
        ),
        Arc::new(
            files
                .iter()
                .map(|f| f.partition_spec_id)
                .collect::<Int32Array>(),
        ),
        Arc::new(files.iter().map(|f| f.content.id()).collect::<Int32Array>()),
        Arc::new(
            files
                .iter()
                .map(|f| assigned(f.sequence_number))
                .collect::<Int64Array>(),
        ),
        Arc::new(
            files
                .iter()
                .map(|f| assigned(f.min_sequence_number))
                .collect::<Int64Array>(),
        ),
        Arc::new(
            files
                .iter()
                .map(|f| f.added_snapshot_id)
                .collect::<Int64Array>(),
        ),
        Arc::new(
            files
                .iter()
                .map(|f| f.added_files_count)
                .collect::<Int32Array>(),
        ),
        Arc::new(
            files
                .iter()
                .map(|f| f.existing_files_count)
                .collect::<Int32Array>(),
        ),
        Arc::new(
            files
                .iter()
                .map(|f| f.deleted_files_count)
                .collect::<Int32Array>(),
        ),
        Arc::new(
            files
                .iter()
                .map(|f| f.added_rows_count)
                .collect::<Int64Array>(),
        ),
        Arc::new(
            files
                .iter()
                .map(|f| f.existing_rows_count)
                .collect::<Int64Array>(),
        ),
        Arc::new(
            files
                .iter()
                .map(|f| f.deleted_rows_count)
                .collect::<Int64Array>(),
        ),
        Arc::new(partitions.finish()),
        Arc::new(
            files
                .iter()
                .map(|f| f.key_metadata.as_deref())
                .collect::<BinaryArray>(),
        ),
        Arc::new(files.iter().map(|f| f.first_row_id).collect::<Int64Array>()),
    ];
    RecordBatch::try_new(Arc::new(manifest_files_schema()), columns).map_err(arrow_err)
}

fn append_summary(sb: &mut StructBuilder, s: &FieldSummary) -> Result<()> {
    let missing = || Error::invalid_argument("field summary builder has an unexpected shape");
    sb.field_builder::<BooleanBuilder>(0)
        .ok_or_else(missing)?
        .append_value(s.contains_null);
    sb.field_builder::<BooleanBuilder>(1)
        .ok_or_else(missing)?
        .append_option(s.contains_nan);
    sb.field_builder::<BinaryBuilder>(2)
        .ok_or_else(missing)?
        .append_option(s.lower_bound.as_deref());
    sb.field_builder::<BinaryBuilder>(3)
        .ok_or_else(missing)?
        .append_option(s.upper_bound.as_deref());
    sb.append(true);
    Ok(())
}

/// Manifest list rows from a record batch with the columns of [`manifest_files_schema`].
pub fn batch_to_manifest_files(batch: &RecordBatch) -> Result<Vec<ManifestFile>> {
    let path = typed::<StringArray>(batch, "manifest_path")?;
    let length = typed::<Int64Array>(batch, "manifest_length")?;
    let spec_id = typed::<Int32Array>(batch, "partition_spec_id")?;
    let content = typed::<Int32Array>(batch, "content")?;
    let seq = typed::<Int64Array>(batch, "sequence_number")?;
    let min_seq = typed::<Int64Array>(batch, "min_sequence_number")?;
    let unassigned_if_null =
        |a: &Int64Array, i: usize| opt_i64(a, i).unwrap_or(UNASSIGNED_SEQUENCE_NUMBER);
    let snapshot = typed::<Int64Array>(batch, "added_snapshot_id")?;
    let i32_col = |name| optional(batch, name, &DataType::Int32);
    let i64_col = |name| optional(batch, name, &DataType::Int64);
    let (af, ef, df) = (
        i32_col("added_files_count")?,
        i32_col("existing_files_count")?,
        i32_col("deleted_files_count")?,
    );
    let (ar, er, dr) = (
        i64_col("added_rows_count")?,
        i64_col("existing_rows_count")?,
        i64_col("deleted_rows_count")?,
    );
    let first_row_id = i64_col("first_row_id")?;
    let key_metadata = optional(batch, "key_metadata", &DataType::Binary)?;
    let partitions = optional(
        batch,
        "partitions",
        &list_type(DataType::Struct(summary_fields())),
    )?;
    let partitions = partitions.as_list::<i32>();
    let key_metadata = key_metadata.as_binary::<i32>();
    let p32 = |a: &ArrayRef| a.as_primitive::<Int32Type>().clone();
    let p64 = |a: &ArrayRef| a.as_primitive::<Int64Type>().clone();
    let (af, ef, df, ar, er, dr, first_row_id) = (
        p32(&af),
        p32(&ef),
        p32(&df),
        p64(&ar),
        p64(&er),
        p64(&dr),
        p64(&first_row_id),
    );

    let mut out = Vec::with_capacity(batch.num_rows());
    for i in 0..batch.num_rows() {
        let content = ManifestContent::from_id(content.value(i)).ok_or_else(|| {
            Error::invalid_argument(format!(
                "row {i}: unknown manifest content {}",
                content.value(i)
            ))
        })?;
        let summaries = if partitions.is_null(i) {
            None
        } else {
            let v = partitions.value(i);
            let s = v.as_struct();
            let contains_null = s.column(0).as_boolean();
            let contains_nan = s.column(1).as_boolean();
            let lower = s.column(2).as_binary::<i32>();
            let upper = s.column(3).as_binary::<i32>();
            Some(
                (0..s.len())
                    .map(|j| FieldSummary {
                        contains_null: contains_null.value(j),
                        contains_nan: opt_bool(contains_nan, j),
                        lower_bound: lower.is_valid(j).then(|| lower.value(j).to_vec()),
                        upper_bound: upper.is_valid(j).then(|| upper.value(j).to_vec()),
                    })
                    .collect(),
            )
        };
        out.push(ManifestFile {
            manifest_path: path.value(i).to_string(),
            manifest_length: length.value(i),
            partition_spec_id: spec_id.value(i),
            content,
            sequence_number: unassigned_if_null(seq, i),
            min_sequence_number: unassigned_if_null(min_seq, i),
            added_snapshot_id: snapshot.value(i),
            added_files_count: opt_i32(&af, i),
            existing_files_count: opt_i32(&ef, i),
            deleted_files_count: opt_i32(&df, i),
            added_rows_count: opt_i64(&ar, i),
            existing_rows_count: opt_i64(&er, i),
            deleted_rows_count: opt_i64(&dr, i),
            partitions: summaries,
            key_metadata: key_metadata
                .is_valid(i)
                .then(|| key_metadata.value(i).to_vec()),
            first_row_id: opt_i64(&first_row_id, i),
        });
    }
    Ok(out)
}

/// A sequence number, or `None` while unassigned.
fn assigned(seq: i64) -> Option<i64> {
    (seq != UNASSIGNED_SEQUENCE_NUMBER).then_some(seq)
}

fn opt_bool(a: &BooleanArray, i: usize) -> Option<bool> {
    a.is_valid(i).then(|| a.value(i))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::spec::{Literal, NestedField};

    fn partition_type() -> StructType {
        StructType::new(vec![
            NestedField::optional(1000, "ts_day", PrimitiveType::Int.into()),
            NestedField::optional(1001, "category", PrimitiveType::String.into()),
            NestedField::optional(1002, "flag", PrimitiveType::Boolean.into()),
        ])
    }

    fn full_entry() -> ManifestEntry {
        let mut f = DataFile::new(
            DataContentType::PositionDeletes,
            "s3://b/t/data/x.puffin",
            FileFormat::Puffin,
            vec![
                Some(Literal::Int(-1)),
                Some(Literal::String("冰".into())),
                None,
            ],
            12,
            3456,
        );
        f.column_sizes = Some(vec![(1, 10), (2, 20)]);
        f.value_counts = Some(vec![(1, 12)]);
        f.null_value_counts = Some(vec![]);
        f.nan_value_counts = None;
        f.lower_bounds = Some(vec![(1, vec![1, 0, 0, 0]), (2, vec![])]);
        f.upper_bounds = Some(vec![(1, vec![9, 0, 0, 0])]);
        f.key_metadata = Some(vec![0xde, 0xad]);
        f.split_offsets = Some(vec![4, 1000]);
        f.equality_ids = Some(vec![1, 2]);
        f.sort_order_id = Some(3);
        f.first_row_id = Some(100);
        f.referenced_data_file = Some("s3://b/t/data/a.parquet".into());
        f.content_offset = Some(4);
        f.content_size_in_bytes = Some(40);
        ManifestEntry {
            status: ManifestStatus::Existing,
            snapshot_id: Some(7),
            sequence_number: Some(2),
            file_sequence_number: Some(3),
            data_file: f,
        }
    }

    #[test]
    fn entries_round_trip_through_arrow() {
        let pt = partition_type();
        let sparse = ManifestEntry::added(DataFile::new(
            DataContentType::Data,
            "f.parquet",
            FileFormat::Parquet,
            vec![None, None, Some(Literal::Boolean(true))],
            1,
            2,
        ));
        let entries = vec![full_entry(), sparse];
        let batch = entries_to_batch(&entries, &pt).unwrap();
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(batch.schema().as_ref(), &entries_schema(&pt).unwrap());
        assert_eq!(batch_to_entries(&batch, &pt).unwrap(), entries);
    }

    #[test]
    fn unpartitioned_and_missing_optional_columns() {
        let pt = StructType::default();
        let mut e = full_entry();
        e.data_file.partition.clear();
        let batch = entries_to_batch(std::slice::from_ref(&e), &pt).unwrap();
        assert_eq!(batch_to_entries(&batch, &pt).unwrap(), vec![e.clone()]);
        // only the required columns: every optional field reads as null
        let keep = [
            "status",
            "content",
            "file_path",
            "file_format",
            "partition",
            "record_count",
            "file_size_in_bytes",
        ];
        let idx: Vec<usize> = keep
            .iter()
            .map(|c| batch.schema().index_of(c).unwrap())
            .collect();
        let slim = batch.project(&idx).unwrap();
        let back = batch_to_entries(&slim, &pt).unwrap();
        assert_eq!(back[0].data_file.file_path, e.data_file.file_path);
        assert_eq!(back[0].snapshot_id, None);
        assert_eq!(back[0].data_file.lower_bounds, None);
        // a wrongly typed column is an error, not a guess
        let mut cols = slim.columns().to_vec();
        cols[5] = Arc::new(Int32Array::from(vec![1]));
        let fields: Vec<Field> = slim
            .schema()
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if i == 5 {
                    Field::new("record_count", DataType::Int32, false)
                } else {
                    f.as_ref().clone()
                }
            })
            .collect();
        let bad = RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), cols).unwrap();
        assert!(matches!(
            batch_to_entries(&bad, &pt),
            Err(Error::InvalidArgument { .. })
        ));
    }

    #[test]
    fn bounds_decode_to_typed_values() {
        use crate::spec::{NestedField, Schema};
        let schema = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long.into()),
                NestedField::optional(2, "name", PrimitiveType::String.into()),
            ],
            vec![],
        )
        .unwrap();
        let mut a = full_entry();
        // a 4-byte bound of a long column was written when the column was an int
        a.data_file.lower_bounds =
            Some(vec![(1, 7i32.to_le_bytes().to_vec()), (2, b"ab".to_vec())]);
        a.data_file.upper_bounds = Some(vec![(1, 9i64.to_le_bytes().to_vec())]);
        let mut b = full_entry();
        b.data_file.lower_bounds = None;
        b.data_file.upper_bounds = None;
        let (lower, upper) = decoded_bounds(&[a, b], &schema, &[1, 2]).unwrap();
        let lower = lower.as_struct();
        assert_eq!(lower.column_names(), vec!["id", "name"]);
        assert_eq!(lower.column(0).as_primitive::<Int64Type>().value(0), 7);
        assert!(lower.column(0).is_null(1));
        assert_eq!(lower.column(1).as_string::<i32>().value(0), "ab");
        let upper = upper.as_struct();
        assert_eq!(upper.column(0).as_primitive::<Int64Type>().value(0), 9);
        assert!(upper.column(1).is_null(0));
        assert!(decoded_bounds(&[], &schema, &[3]).is_err());

        // names resolve in the manifest's schema, numbers are field ids
        let entries = vec![full_entry()];
        let batch = entries_to_batch(&entries, &partition_type()).unwrap();
        let width = batch.num_columns();
        let names = ["name".to_string(), "1".to_string()];
        let out = with_decoded_bounds(batch.clone(), &entries, &schema, &names).unwrap();
        assert_eq!(out.num_columns(), width + 2);
        let lower = out
            .column_by_name("lower_bound_values")
            .unwrap()
            .as_struct();
        assert_eq!(lower.column_names(), vec!["name", "id"]);
        let missing = with_decoded_bounds(batch, &entries, &schema, &["nope".to_string()]);
        assert!(matches!(missing, Err(Error::NotFound { .. })));
    }

    #[test]
    fn manifest_files_round_trip_through_arrow() {
        let files = vec![
            ManifestFile {
                manifest_path: "m1.avro".into(),
                manifest_length: 100,
                partition_spec_id: 1,
                content: ManifestContent::Deletes,
                sequence_number: 5,
                min_sequence_number: 4,
                added_snapshot_id: 9,
                added_files_count: Some(1),
                existing_files_count: Some(2),
                deleted_files_count: Some(0),
                added_rows_count: Some(10),
                existing_rows_count: Some(20),
                deleted_rows_count: Some(0),
                partitions: Some(vec![
                    FieldSummary {
                        contains_null: true,
                        contains_nan: Some(false),
                        lower_bound: Some(vec![1]),
                        upper_bound: None,
                    },
                    FieldSummary::default(),
                ]),
                key_metadata: Some(vec![7]),
                first_row_id: Some(50),
            },
            ManifestFile {
                manifest_path: "m2.avro".into(),
                manifest_length: 1,
                partition_spec_id: 0,
                content: ManifestContent::Data,
                sequence_number: UNASSIGNED_SEQUENCE_NUMBER,
                min_sequence_number: UNASSIGNED_SEQUENCE_NUMBER,
                added_snapshot_id: 1,
                added_files_count: None,
                existing_files_count: None,
                deleted_files_count: None,
                added_rows_count: None,
                existing_rows_count: None,
                deleted_rows_count: None,
                partitions: None,
                key_metadata: None,
                first_row_id: None,
            },
        ];
        let batch = manifest_files_to_batch(&files).unwrap();
        // unassigned sequence numbers show as null
        let seq = batch
            .column_by_name("sequence_number")
            .unwrap()
            .as_primitive::<Int64Type>();
        assert!(seq.is_null(1) && seq.value(0) == 5);
        assert_eq!(batch_to_manifest_files(&batch).unwrap(), files);
    }
}
