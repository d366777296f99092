//! Writing manifests with the Avro schema Java writes for each format version: the same
//! field ids, names, nullability (`["null", T]` unions with a null default), record names
//! (`manifest_entry`, `r2` for `data_file`, `r102` for the partition tuple,
//! `k117_v118`-style records for int-keyed maps stored as arrays with
//! `logicalType: map`), and the same key-value metadata.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::avro::{put_bool, put_bytes, put_int, put_long, ContainerWriter};
use super::{
    Codec, DataContentType, DataFile, FieldSummary, ManifestContent, ManifestEntry, ManifestFile,
    ManifestStatus, UNASSIGNED_SEQUENCE_NUMBER,
};
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::spec::partition::PartitionSpec;
use crate::spec::{Literal, PrimitiveType, Schema, Type};
use crate::MAX_FORMAT_VERSION;

/// Java writes this block size into the deprecated v1 field `block_size_in_bytes`.
const V1_BLOCK_SIZE: i64 = 64 * 1024 * 1024;

use super::data_file_field::DataFileField as W;

const V1_FILE: &[W] = &[
    W::FilePath,
    W::FileFormat,
    W::Partition,
    W::RecordCount,
    W::FileSize,
    W::BlockSize,
    W::ColumnSizes,
    W::ValueCounts,
    W::NullValueCounts,
    W::NanValueCounts,
    W::LowerBounds,
    W::UpperBounds,
    W::KeyMetadata,
    W::SplitOffsets,
    W::SortOrderId,
];

const V2_FILE: &[W] = &[
    W::Content,
    W::FilePath,
    W::FileFormat,
    W::Partition,
    W::RecordCount,
    W::FileSize,
    W::ColumnSizes,
    W::ValueCounts,
    W::NullValueCounts,
    W::NanValueCounts,
    W::LowerBounds,
    W::UpperBounds,
    W::KeyMetadata,
    W::SplitOffsets,
    W::EqualityIds,
    W::SortOrderId,
    W::ReferencedDataFile,
];

const V3_FILE: &[W] = &[
    W::Content,
    W::FilePath,
    W::FileFormat,
    W::Partition,
    W::RecordCount,
    W::FileSize,
    W::ColumnSizes,
    W::ValueCounts,
    W::NullValueCounts,
    W::NanValueCounts,
    W::LowerBounds,
    W::UpperBounds,
    W::KeyMetadata,
    W::SplitOffsets,
    W::EqualityIds,
    W::SortOrderId,
    W::FirstRowId,
    W::ReferencedDataFile,
    W::ContentOffset,
    W::ContentSize,
];

fn file_fields(format_version: i32) -> &'static [W] {
    match format_version {
        1 => V1_FILE,
        2 => V2_FILE,
        _ => V3_FILE,
    }
}

/// An Avro field as Java writes it: required, or a `["null", T]` union defaulting to null.
pub(crate) fn avro_field(name: &str, id: i32, ty: Value, required: bool) -> Value {
    if required {
        json!({"name": name, "type": ty, "field-id": id})
    } else {
        json!({"name": name, "type": ["null", ty], "default": null, "field-id": id})
    }
}

/// An int-keyed map as Java writes it: an array of key/value records.
pub(crate) fn int_map(name: &str, id: i32, key_id: i32, value_id: i32, value: &str) -> Value {
    avro_field(
        name,
        id,
        json!({
            "type": "array",
            "items": {
                "type": "record",
                "name": format!("k{key_id}_v{value_id}"),
                "fields": [
                    {"name": "key", "type": "int", "field-id": key_id},
                    {"name": "value", "type": value, "field-id": value_id}
                ]
            },
            "logicalType": "map"
        }),
        false,
    )
}

pub(crate) fn avro_list(element_id: i32, items: Value) -> Value {
    json!({"type": "array", "items": items, "element-id": element_id})
}

fn file_field_schema(w: W, partition: &Value) -> Value {
    let (name, id) = (w.name(), w.id());
    match w {
        W::Content | W::FileFormat | W::FilePath => {
            let ty = if w == W::Content { "int" } else { "string" };
            avro_field(name, id, json!(ty), true)
        }
        W::Partition => avro_field(name, id, partition.clone(), true),
        W::RecordCount | W::FileSize | W::BlockSize => avro_field(name, id, json!("long"), true),
        // the key and value ids of the maps and the element ids of the lists
        W::ColumnSizes => int_map(name, id, 117, 118, "long"),
        W::ValueCounts => int_map(name, id, 119, 120, "long"),
        W::NullValueCounts => int_map(name, id, 121, 122, "long"),
        W::NanValueCounts => int_map(name, id, 138, 139, "long"),
        W::LowerBounds => int_map(name, id, 126, 127, "bytes"),
        W::UpperBounds => int_map(name, id, 129, 130, "bytes"),
        W::SplitOffsets => avro_field(name, id, avro_list(133, json!("long")), false),
        W::EqualityIds => avro_field(name, id, avro_list(136, json!("int")), false),
        W::KeyMetadata => avro_field(name, id, json!("bytes"), false),
        W::SortOrderId => avro_field(name, id, json!("int"), false),
        W::ReferencedDataFile => avro_field(name, id, json!("string"), false),
        W::FirstRowId | W::ContentOffset | W::ContentSize => {
            avro_field(name, id, json!("long"), false)
        }
    }
}

/// Java's `AvroSchemaUtil.makeCompatibleName`: a valid Avro name, with each invalid
/// character replaced by `_x` and its hex code (a leading digit by `_` and the digit).
pub(crate) fn avro_name(name: &str) -> String {
    let valid = |c: char, first: bool| {
        c == '_' || c.is_ascii_alphabetic() || (!first && c.is_ascii_digit())
    };
    if name.chars().enumerate().all(|(i, c)| valid(c, i == 0)) && !name.is_empty() {
        return name.to_string();
    }
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if valid(c, i == 0) {
            out.push(c);
        } else if i == 0 && c.is_ascii_digit() {
            out.push('_');
            out.push(c);
        } else {
            out.push_str(&format!("_x{:X}", u32::from(c)));
        }
    }
    out
}

/// The number of bytes Java uses for a fixed-length decimal of this precision.
pub(crate) fn decimal_required_bytes(precision: u32) -> usize {
    for n in 1..=16usize {
        // the largest precision that fits n bytes: digits of 2^(8n-1) - 1, minus one
        let max = if n == 16 {
            i128::MAX
        } else {
            (1i128 << (8 * n - 1)) - 1
        };
        let mut digits = 0u32;
        let mut m = max;
        while m > 0 {
            m /= 10;
            digits += 1;
        }
        if precision < digits {
            return n;
        }
    }
    16
}

pub(crate) fn partition_avro_type(
    ty: &PrimitiveType,
    named: &mut HashSet<String>,
) -> Result<Value> {
    use PrimitiveType as P;
    let mut fixed = |name: String, v: Value| -> Value {
        if named.insert(name.clone()) {
            v
        } else {
            Value::String(name)
        }
    };
    Ok(match ty {
        P::Boolean => json!("boolean"),
        P::Int => json!("int"),
        P::Long => json!("long"),
        P::Float => json!("float"),
        P::Double => json!("double"),
        P::Date => json!({"type": "int", "logicalType": "date"}),
        P::Time => json!({"type": "long", "logicalType": "time-micros"}),
        P::Timestamp => {
            json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": false})
        }
        P::Timestamptz => {
            json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": true})
        }
        P::TimestampNs => {
            json!({"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": false})
        }
        P::TimestamptzNs => {
            json!({"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": true})
        }
        P::String => json!("string"),
        P::Binary => json!("bytes"),
        P::Uuid => fixed(
            "uuid_fixed".into(),
            json!({"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"}),
        ),
        P::Fixed(n) => fixed(
            format!("fixed_{n}"),
            json!({"type": "fixed", "name": format!("fixed_{n}"), "size": n}),
        ),
        P::Decimal { precision, scale } => {
            let name = format!("decimal_{precision}_{scale}");
            fixed(
                name.clone(),
                json!({"type": "fixed", "name": name,
                    "size": decimal_required_bytes(*precision),
                    "logicalType": "decimal", "precision": precision, "scale": scale}),
            )
        }
        P::Unknown | P::Geometry { .. } | P::Geography { .. } => {
            return Err(Error::unsupported(format!(
                "a partition field of type {ty} cannot be written to a manifest"
            )))
        }
    })
}

pub(crate) fn put_partition_value(
    out: &mut Vec<u8>,
    v: &Literal,
    ty: &PrimitiveType,
) -> Result<()> {
    use PrimitiveType as P;
    match (ty, v) {
        (P::Boolean, Literal::Boolean(b)) => put_bool(out, *b),
        (P::Int, Literal::Int(v)) | (P::Date, Literal::Date(v)) => put_int(out, *v),
        (P::Long, Literal::Long(v))
        | (P::Time, Literal::Time(v))
        | (P::Timestamp, Literal::Timestamp(v))
        | (P::Timestamptz, Literal::Timestamptz(v))
        | (P::TimestampNs, Literal::TimestampNs(v))
        | (P::TimestamptzNs, Literal::TimestamptzNs(v)) => put_long(out, *v),
        (P::Float, Literal::Float(f)) => out.extend_from_slice(&f.to_le_bytes()),
        (P::Double, Literal::Double(f)) => out.extend_from_slice(&f.to_le_bytes()),
        (P::String, Literal::String(s)) => put_bytes(out, s.as_bytes()),
        (P::Binary, Literal::Binary(b)) => put_bytes(out, b),
        (P::Fixed(n), Literal::Fixed(b)) if b.len() as u64 == *n => out.extend_from_slice(b),
        (P::Uuid, Literal::Uuid(u)) => out.extend_from_slice(&u.to_be_bytes()),
        (P::Decimal { precision, .. }, Literal::Decimal(d)) => {
            let size = decimal_required_bytes(*precision);
            let all = d.to_be_bytes();
            let bytes = &all[16 - size..];
            if super::avro_values::decimal_from_be(bytes) != Some(*d) {
                return Err(Error::invalid_argument(format!(
                    "decimal partition value {d} does not fit {ty}"
                )));
            }
            out.extend_from_slice(bytes);
        }
        _ => {
            return Err(Error::invalid_argument(format!(
                "partition value {v} is not a {ty} value"
            )))
        }
    }
    Ok(())
}

#[inline]
fn put_opt_long(out: &mut Vec<u8>, v: Option<i64>) {
    match v {
        None => put_long(out, 0),
        Some(v) => {
            put_long(out, 1);
            put_long(out, v);
        }
    }
}

fn put_opt_int(out: &mut Vec<u8>, v: Option<i32>) {
    put_opt_long(out, v.map(i64::from));
}

fn put_opt_bytes(out: &mut Vec<u8>, v: Option<&[u8]>) {
    match v {
        None => put_long(out, 0),
        Some(b) => {
            put_long(out, 1);
            put_bytes(out, b);
        }
    }
}

pub(crate) fn put_long_map(out: &mut Vec<u8>, m: Option<&[(i32, i64)]>) {
    match m {
        None => put_long(out, 0),
        Some(m) => {
            put_long(out, 1);
            if !m.is_empty() {
                put_long(out, m.len() as i64);
                for (k, v) in m {
                    put_int(out, *k);
                    put_long(out, *v);
                }
            }
            put_long(out, 0);
        }
    }
}

pub(crate) fn put_bytes_map(out: &mut Vec<u8>, m: Option<&[(i32, Vec<u8>)]>) {
    match m {
        None => put_long(out, 0),
        Some(m) => {
            put_long(out, 1);
            if !m.is_empty() {
                put_long(out, m.len() as i64);
                for (k, v) in m {
                    put_int(out, *k);
                    put_bytes(out, v);
                }
            }
            put_long(out, 0);
        }
    }
}

fn put_long_list(out: &mut Vec<u8>, l: Option<&[i64]>) {
    match l {
        None => put_long(out, 0),
        Some(l) => {
            put_long(out, 1);
            if !l.is_empty() {
                put_long(out, l.len() as i64);
                for v in l {
                    put_long(out, *v);
                }
            }
            put_long(out, 0);
        }
    }
}

/// Running summary of one partition field.
#[derive(Debug, Clone, Default)]
struct PartitionStats {
    contains_null: bool,
    contains_nan: bool,
    lower: Option<Literal>,
    upper: Option<Literal>,
}

impl PartitionStats {
    fn update(&mut self, v: Option<&Literal>) {
        let Some(v) = v else {
            self.contains_null = true;
            return;
        };
        let nan = match v {
            Literal::Float(f) => f.is_nan(),
            Literal::Double(f) => f.is_nan(),
            _ => false,
        };
        if nan {
            self.contains_nan = true;
            return;
        }
        let less = |bound: &Option<Literal>, ord| match bound {
            None => true,
            Some(b) => v.compare(b) == Some(ord),
        };
        if less(&self.lower, std::cmp::Ordering::Less) {
            self.lower = Some(v.clone());
        }
        if less(&self.upper, std::cmp::Ordering::Greater) {
            self.upper = Some(v.clone());
        }
    }

    fn summary(&self, ty: &PrimitiveType) -> Result<FieldSummary> {
        Ok(FieldSummary {
            contains_null: self.contains_null,
            contains_nan: Some(self.contains_nan),
            lower_bound: self.lower.as_ref().map(|l| l.to_bytes(ty)).transpose()?,
            upper_bound: self.upper.as_ref().map(|u| u.to_bytes(ty)).transpose()?,
        })
    }
}

/// Writes one manifest. Entries are encoded as they are added; [`ManifestWriter::finish`]
/// writes the file and returns its row for the manifest list, with counts and partition
/// field summaries computed while writing and sequence numbers left unassigned
/// ([`UNASSIGNED_SEQUENCE_NUMBER`]) unless every live entry had one.
pub struct ManifestWriter {
    format_version: i32,
    content: ManifestContent,
    snapshot_id: i64,
    spec_id: i32,
    partition_types: Vec<PrimitiveType>,
    stats: Vec<PartitionStats>,
    container: ContainerWriter,
    fields: &'static [W],
    added: (i32, i64),
    existing: (i32, i64),
    deleted: (i32, i64),
    min_sequence_number: Option<i64>,
}

impl ManifestWriter {
    /// A writer for a manifest of `format_version` (1 to 3) tracking `content`, for files
    /// partitioned by `spec` over `schema`, written by snapshot `snapshot_id`.
    pub fn new(
        format_version: i32,
        content: ManifestContent,
        schema: &Schema,
        spec: &PartitionSpec,
        snapshot_id: i64,
        codec: Codec,
    ) -> Result<ManifestWriter> {
        if !(1..=MAX_FORMAT_VERSION).contains(&format_version) {
            return Err(Error::invalid_argument(format!(
                "cannot write a manifest of format version {format_version}"
            )));
        }
        if format_version == 1 && content == ManifestContent::Deletes {
            return Err(Error::invalid_argument(
                "format version 1 has no delete manifests",
            ));
        }
        let ptype = spec.partition_type(schema)?;
        let mut named = HashSet::new();
        let mut pfields = Vec::with_capacity(ptype.fields.len());
        let mut partition_types = Vec::with_capacity(ptype.fields.len());
        for f in &ptype.fields {
            let Type::Primitive(p) = &f.field_type else {
                return Err(Error::unsupported(format!(
                    "partition field '{}' does not have a primitive type",
                    f.name
                )));
            };
            pfields.push(avro_field(
                &avro_name(&f.name),
                f.id,
                partition_avro_type(p, &mut named)?,
                false,
            ));
            partition_types.push(p.clone());
        }
        let partition = json!({"type": "record", "name": "r102", "fields": pfields});
        let fields = file_fields(format_version);
        let file_schema: Vec<Value> = fields
            .iter()
            .map(|w| file_field_schema(*w, &partition))
            .collect();
        let data_file = json!({"type": "record", "name": "r2", "fields": file_schema});
        let mut entry_fields = vec![
            avro_field("status", 0, json!("int"), true),
            avro_field("snapshot_id", 1, json!("long"), false),
        ];
        if format_version >= 2 {
            entry_fields.push(avro_field("sequence_number", 3, json!("long"), false));
            entry_fields.push(avro_field("file_sequence_number", 4, json!("long"), false));
        }
        entry_fields.push(avro_field("data_file", 2, data_file, true));
        let avro_schema =
            json!({"type": "record", "name": "manifest_entry", "fields": entry_fields});

        let mut meta: Vec<(&str, String)> = vec![
            ("schema", schema.to_json().to_string()),
            ("schema-id", schema.schema_id().to_string()),
            ("partition-spec", spec.fields_to_json().to_string()),
            ("partition-spec-id", spec.spec_id.to_string()),
            ("format-version", format_version.to_string()),
        ];
        if format_version >= 2 {
            meta.push(("content", content.as_str().to_string()));
        }
        let container = ContainerWriter::new(&avro_schema.to_string(), &meta, codec);
        Ok(ManifestWriter {
            format_version,
            content,
            snapshot_id,
            spec_id: spec.spec_id,
            stats: vec![PartitionStats::default(); partition_types.len()],
            partition_types,
            container,
            fields,
            added: (0, 0),
            existing: (0, 0),
            deleted: (0, 0),
            min_sequence_number: None,
        })
    }

    /// Adds a new file: status ADDED, this writer's snapshot id, sequence numbers
    /// inherited at commit.
    /// The manifest's length so far as Java's `ManifestWriter.length()` reports it: the
    /// header and finished Avro blocks, which is what rolling writers compare with
    /// `commit.manifest.target-size-bytes`.
    pub fn length(&self) -> u64 {
        self.container.written_len()
    }

    pub fn add(&mut self, data_file: DataFile) -> Result<()> {
        self.add_entry(ManifestEntry {
            status: ManifestStatus::Added,
            snapshot_id: Some(self.snapshot_id),
            sequence_number: None,
            file_sequence_number: None,
            data_file,
        })
    }

    /// Keeps a file of an earlier snapshot: status EXISTING with its original snapshot id
    /// and sequence numbers.
    pub fn existing(
        &mut self,
        data_file: DataFile,
        snapshot_id: i64,
        sequence_number: i64,
        file_sequence_number: Option<i64>,
    ) -> Result<()> {
        self.add_entry(ManifestEntry {
            status: ManifestStatus::Existing,
            snapshot_id: Some(snapshot_id),
            sequence_number: Some(sequence_number),
            file_sequence_number,
            data_file,
        })
    }

    /// Marks a file deleted by this writer's snapshot, keeping its sequence numbers.
    pub fn delete(
        &mut self,
        data_file: DataFile,
        sequence_number: i64,
        file_sequence_number: Option<i64>,
    ) -> Result<()> {
        self.add_entry(ManifestEntry {
            status: ManifestStatus::Deleted,
            snapshot_id: Some(self.snapshot_id),
            sequence_number: Some(sequence_number),
            file_sequence_number,
            data_file,
        })
    }

    /// Writes an entry as given (fields the format version has no column for are dropped).
    pub fn add_entry(&mut self, entry: ManifestEntry) -> Result<()> {
        let df = &entry.data_file;
        if df.partition.len() != self.partition_types.len() {
            return Err(Error::invalid_argument(format!(
                "data file {} has {} partition values, the spec has {} fields",
                df.file_path,
                df.partition.len(),
                self.partition_types.len()
            )));
        }
        let is_delete_file = df.content != DataContentType::Data;
        if is_delete_file != (self.content == ManifestContent::Deletes) {
            return Err(Error::invalid_argument(format!(
                "cannot write a {:?} file to a {} manifest",
                df.content,
                self.content.as_str()
            )));
        }
        if entry.status != ManifestStatus::Added
            && self.format_version >= 2
            && entry.sequence_number.is_none()
        {
            return Err(Error::invalid_argument(format!(
                "an {:?} entry must have a data sequence number ({})",
                entry.status, df.file_path
            )));
        }
        // Encode into the current block; on error, roll the block back.
        let mark = self.container.block.len();
        if let Err(e) = self.encode(&entry) {
            self.container.block.truncate(mark);
            return Err(e);
        }
        self.container.end_object()?;

        for (i, v) in df.partition.iter().enumerate() {
            if let Some(s) = self.stats.get_mut(i) {
                s.update(v.as_ref());
            }
        }
        let counter = match entry.status {
            ManifestStatus::Added => &mut self.added,
            ManifestStatus::Existing => &mut self.existing,
            ManifestStatus::Deleted => &mut self.deleted,
        };
        counter.0 = counter.0.saturating_add(1);
        counter.1 = counter.1.saturating_add(df.record_count);
        if entry.status != ManifestStatus::Deleted {
            if let Some(seq) = entry.sequence_number {
                self.min_sequence_number =
                    Some(self.min_sequence_number.map_or(seq, |m| m.min(seq)));
            }
        }
        Ok(())
    }

    fn encode(&mut self, e: &ManifestEntry) -> Result<()> {
        let out = &mut self.container.block;
        put_int(out, e.status.id());
        if self.format_version == 1 {
            // required in v1 (written as a union, as Java does)
            put_opt_long(out, Some(e.snapshot_id.unwrap_or(self.snapshot_id)));
        } else {
            put_opt_long(out, e.snapshot_id);
            put_opt_long(out, e.sequence_number);
            put_opt_long(out, e.file_sequence_number);
        }
        let df = &e.data_file;
        for w in self.fields {
            match w {
                W::Content => put_int(out, df.content.id()),
                W::FilePath => put_bytes(out, df.file_path.as_bytes()),
                W::FileFormat => put_bytes(out, df.file_format.as_str().as_bytes()),
                W::Partition => {
                    for (v, ty) in df.partition.iter().zip(&self.partition_types) {
                        match v {
                            None => put_long(out, 0),
                            Some(v) => {
                                put_long(out, 1);
                                put_partition_value(out, v, ty)?;
                            }
                        }
                    }
                }
                W::RecordCount => put_long(out, df.record_count),
                W::FileSize => put_long(out, df.file_size_in_bytes),
                W::BlockSize => put_long(out, V1_BLOCK_SIZE),
                W::ColumnSizes => put_long_map(out, df.column_sizes.as_deref()),
                W::ValueCounts => put_long_map(out, df.value_counts.as_deref()),
                W::NullValueCounts => put_long_map(out, df.null_value_counts.as_deref()),
                W::NanValueCounts => put_long_map(out, df.nan_value_counts.as_deref()),
                W::LowerBounds => put_bytes_map(out, df.lower_bounds.as_deref()),
                W::UpperBounds => put_bytes_map(out, df.upper_bounds.as_deref()),
                W::KeyMetadata => put_opt_bytes(out, df.key_metadata.as_deref()),
                W::SplitOffsets => put_long_list(out, df.split_offsets.as_deref()),
                W::EqualityIds => {
                    let ids: Option<Vec<i64>> = df
                        .equality_ids
                        .as_ref()
                        .map(|v| v.iter().map(|i| i64::from(*i)).collect());
                    put_long_list(out, ids.as_deref());
                }
                W::SortOrderId => put_opt_int(out, df.sort_order_id),
                W::FirstRowId => put_opt_long(out, df.first_row_id),
                W::ReferencedDataFile => {
                    put_opt_bytes(out, df.referenced_data_file.as_deref().map(str::as_bytes))
                }
                W::ContentOffset => put_opt_long(out, df.content_offset),
                W::ContentSize => put_opt_long(out, df.content_size_in_bytes),
            }
        }
        Ok(())
    }

    /// The file's bytes and its manifest list row (with `location` as its path).
    pub fn finish_to_bytes(self, location: &str) -> Result<(Vec<u8>, ManifestFile)> {
        let partitions = self
            .stats
            .iter()
            .zip(&self.partition_types)
            .map(|(s, ty)| s.summary(ty))
            .collect::<Result<Vec<_>>>()?;
        let bytes = self.container.finish()?;
        let mf = ManifestFile {
            manifest_path: location.to_string(),
            manifest_length: bytes.len() as i64,
            partition_spec_id: self.spec_id,
            content: self.content,
            sequence_number: UNASSIGNED_SEQUENCE_NUMBER,
            min_sequence_number: self
                .min_sequence_number
                .unwrap_or(UNASSIGNED_SEQUENCE_NUMBER),
            added_snapshot_id: self.snapshot_id,
            added_files_count: Some(self.added.0),
            existing_files_count: Some(self.existing.0),
            deleted_files_count: Some(self.deleted.0),
            added_rows_count: Some(self.added.1),
            existing_rows_count: Some(self.existing.1),
            deleted_rows_count: Some(self.deleted.1),
            partitions: Some(partitions),
            key_metadata: None,
            first_row_id: None,
        };
        Ok((bytes, mf))
    }

    /// Writes the manifest to `location` (which must not exist) and returns its row for
    /// the manifest list.
    pub fn finish(self, io: &dyn FileIO, location: &str) -> Result<ManifestFile> {
        let (bytes, mf) = self.finish_to_bytes(location)?;
        io.write_new(location, &bytes)?;
        Ok(mf)
    }
}
