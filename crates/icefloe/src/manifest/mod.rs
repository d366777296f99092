//! Manifests and manifest lists ("Manifests", "Manifest Lists" in the spec): the model,
//! an Avro reader that decodes only what the caller asks for, writers that produce the
//! exact Avro schemas Java writes for each format version, and the inheritance rules for
//! snapshot ids, sequence numbers and first row ids.

pub(crate) mod avro;
mod avro_values;
mod data_file_field;
mod inflate;
pub mod key_value;
pub mod list;
pub mod reader;
pub mod v4;
pub mod writer;

#[cfg(test)]
mod tests;

pub use key_value::{key_value_metadata, read_key_value_metadata};
pub use list::{
    read_manifest_list, read_manifest_list_bytes, write_manifest_list, ManifestListWriter,
    WrittenManifestList,
};
pub use reader::{
    read_manifest, read_manifest_metadata, visit_manifest, Manifest, ManifestProjection,
    ManifestSource, ReadManifestOptions,
};
pub use writer::ManifestWriter;

use crate::error::{Error, Result};
use crate::spec::partition::PartitionSpec;
use crate::spec::{Literal, Schema};

/// A sequence number not yet known: a manifest written before its commit. The manifest
/// list writer replaces it with the snapshot's sequence number.
pub const UNASSIGNED_SEQUENCE_NUMBER: i64 = -1;

/// What a manifest tracks: data files or delete files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ManifestContent {
    Data,
    Deletes,
}

impl ManifestContent {
    pub fn id(self) -> i32 {
        match self {
            ManifestContent::Data => 0,
            ManifestContent::Deletes => 1,
        }
    }

    pub fn from_id(id: i32) -> Option<Self> {
        match id {
            0 => Some(ManifestContent::Data),
            1 => Some(ManifestContent::Deletes),
            _ => None,
        }
    }

    /// The name in the manifest's key-value metadata: `data` or `deletes`.
    pub fn as_str(self) -> &'static str {
        match self {
            ManifestContent::Data => "data",
            ManifestContent::Deletes => "deletes",
        }
    }
}

/// The status of a manifest entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ManifestStatus {
    Existing,
    Added,
    Deleted,
}

impl ManifestStatus {
    pub fn id(self) -> i32 {
        match self {
            ManifestStatus::Existing => 0,
            ManifestStatus::Added => 1,
            ManifestStatus::Deleted => 2,
        }
    }

    pub fn from_id(id: i32) -> Option<Self> {
        match id {
            0 => Some(ManifestStatus::Existing),
            1 => Some(ManifestStatus::Added),
            2 => Some(ManifestStatus::Deleted),
            _ => None,
        }
    }
}

/// The content of a data or delete file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataContentType {
    Data,
    PositionDeletes,
    EqualityDeletes,
}

impl DataContentType {
    pub fn id(self) -> i32 {
        match self {
            DataContentType::Data => 0,
            DataContentType::PositionDeletes => 1,
            DataContentType::EqualityDeletes => 2,
        }
    }

    pub fn from_id(id: i32) -> Option<Self> {
        match id {
            0 => Some(DataContentType::Data),
            1 => Some(DataContentType::PositionDeletes),
            2 => Some(DataContentType::EqualityDeletes),
            _ => None,
        }
    }
}

/// A file format name. Names are matched case-insensitively and written upper-case, as
/// Java does; an unknown name is kept as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FileFormat {
    Avro,
    Orc,
    Parquet,
    Puffin,
    Unknown(String),
}

impl FileFormat {
    pub fn parse(s: &str) -> FileFormat {
        if let Some(f) = FileFormat::from_upper_case(s.as_bytes()) {
            return f;
        }
        // v4 entries spell it in lower case (a compare each, where the case-blind compare
        // is a call: v4 planning parses every entry's format)
        match s {
            "parquet" => return FileFormat::Parquet,
            "avro" => return FileFormat::Avro,
            _ => {}
        }
        if s.eq_ignore_ascii_case("parquet") {
            FileFormat::Parquet
        } else if s.eq_ignore_ascii_case("avro") {
            FileFormat::Avro
        } else if s.eq_ignore_ascii_case("orc") {
            FileFormat::Orc
        } else if s.eq_ignore_ascii_case("puffin") {
            FileFormat::Puffin
        } else {
            FileFormat::Unknown(s.to_string())
        }
    }

    /// The format of an upper-case name as writers spell it, before the case-insensitive
    /// matches of [`FileFormat::parse`]; from bytes, so that a manifest reader need not
    /// check them as UTF-8 first.
    pub fn from_upper_case(b: &[u8]) -> Option<FileFormat> {
        match b {
            b"PARQUET" => Some(FileFormat::Parquet),
            b"AVRO" => Some(FileFormat::Avro),
            b"ORC" => Some(FileFormat::Orc),
            b"PUFFIN" => Some(FileFormat::Puffin),
            _ => None,
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            FileFormat::Avro => "AVRO",
            FileFormat::Orc => "ORC",
            FileFormat::Parquet => "PARQUET",
            FileFormat::Puffin => "PUFFIN",
            FileFormat::Unknown(s) => s,
        }
    }
}

/// The table property that names the Avro codec of manifests and manifest lists.
pub const AVRO_COMPRESSION_PROPERTY: &str = "write.avro.compression-codec";

/// The Avro block compression of a manifest or manifest list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Codec {
    Null,
    /// Java's default (`write.avro.compression-codec=gzip`).
    #[default]
    Deflate,
    Snappy,
    Zstd,
}

impl Codec {
    /// Parses a codec name as in the table property `write.avro.compression-codec`:
    /// `uncompressed`/`null`/`none`, `gzip`/`deflate`, `snappy`, `zstd`/`zstandard`.
    pub fn parse(s: &str) -> Result<Codec> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "null" | "none" | "uncompressed" => Codec::Null,
            "gzip" | "deflate" => Codec::Deflate,
            "snappy" => Codec::Snappy,
            "zstd" | "zstandard" => Codec::Zstd,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "unknown Avro compression codec '{s}' (expected uncompressed, gzip, snappy or zstd)"
                )))
            }
        })
    }

    /// The codec a table's writers use for manifests and manifest lists: the table property
    /// `write.avro.compression-codec`, gzip (deflate) when unset, as in Java.
    pub fn for_table(metadata: &crate::spec::table_metadata::TableMetadata) -> Result<Codec> {
        match metadata.property(AVRO_COMPRESSION_PROPERTY) {
            Some(name) => Codec::parse(name).map_err(|e| {
                Error::invalid_metadata(
                    format!("properties.{AVRO_COMPRESSION_PROPERTY}"),
                    e.to_string(),
                )
            }),
            None => Ok(Codec::Deflate),
        }
    }

    /// The name in the Avro header (`avro.codec`).
    pub fn avro_name(self) -> &'static str {
        match self {
            Codec::Null => "null",
            Codec::Deflate => "deflate",
            Codec::Snappy => "snappy",
            Codec::Zstd => "zstandard",
        }
    }
}

/// A data or delete file as stored in a manifest (`data_file`).
#[derive(Debug, Clone, PartialEq)]
pub struct DataFile {
    pub content: DataContentType,
    pub file_path: String,
    pub file_format: FileFormat,
    /// The partition tuple, one value per field of the manifest's partition spec, typed by
    /// the spec's partition type.
    pub partition: Vec<Option<Literal>>,
    pub record_count: i64,
    pub file_size_in_bytes: i64,
    pub column_sizes: Option<Vec<(i32, i64)>>,
    pub value_counts: Option<Vec<(i32, i64)>>,
    pub null_value_counts: Option<Vec<(i32, i64)>>,
    pub nan_value_counts: Option<Vec<(i32, i64)>>,
    /// Raw Appendix D bytes by field id; decode with [`Literal::from_bytes`].
    pub lower_bounds: Option<Vec<(i32, Vec<u8>)>>,
    pub upper_bounds: Option<Vec<(i32, Vec<u8>)>>,
    pub key_metadata: Option<Vec<u8>>,
    pub split_offsets: Option<Vec<i64>>,
    pub equality_ids: Option<Vec<i32>>,
    pub sort_order_id: Option<i32>,
    pub first_row_id: Option<i64>,
    pub referenced_data_file: Option<String>,
    pub content_offset: Option<i64>,
    pub content_size_in_bytes: Option<i64>,
}

impl DataFile {
    /// A data file with the required fields set and every optional field null.
    pub fn new(
        content: DataContentType,
        file_path: impl Into<String>,
        file_format: FileFormat,
        partition: Vec<Option<Literal>>,
        record_count: i64,
        file_size_in_bytes: i64,
    ) -> DataFile {
        DataFile {
            content,
            file_path: file_path.into(),
            file_format,
            partition,
            record_count,
            file_size_in_bytes,
            column_sizes: None,
            value_counts: None,
            null_value_counts: None,
            nan_value_counts: None,
            lower_bounds: None,
            upper_bounds: None,
            key_metadata: None,
            split_offsets: None,
            equality_ids: None,
            sort_order_id: None,
            first_row_id: None,
            referenced_data_file: None,
            content_offset: None,
            content_size_in_bytes: None,
        }
    }

    /// The lower bound of a column, decoded for its type.
    pub fn lower_bound(
        &self,
        field_id: i32,
        ty: &crate::spec::PrimitiveType,
    ) -> Result<Option<Literal>> {
        bound(self.lower_bounds.as_deref(), field_id, ty)
    }

    /// The upper bound of a column, decoded for its type.
    pub fn upper_bound(
        &self,
        field_id: i32,
        ty: &crate::spec::PrimitiveType,
    ) -> Result<Option<Literal>> {
        bound(self.upper_bounds.as_deref(), field_id, ty)
    }
}

fn bound(
    bounds: Option<&[(i32, Vec<u8>)]>,
    field_id: i32,
    ty: &crate::spec::PrimitiveType,
) -> Result<Option<Literal>> {
    match bounds.and_then(|b| b.iter().find(|(id, _)| *id == field_id)) {
        None => Ok(None),
        Some((_, bytes)) => Literal::from_bytes(bytes, ty).map(Some),
    }
}

/// One row of a manifest (`manifest_entry`).
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestEntry {
    pub status: ManifestStatus,
    /// Inherited from the manifest list when null.
    pub snapshot_id: Option<i64>,
    /// The data sequence number; inherited when null and the status is ADDED.
    pub sequence_number: Option<i64>,
    /// Inherited when null and the status is ADDED.
    pub file_sequence_number: Option<i64>,
    pub data_file: DataFile,
}

impl ManifestEntry {
    /// A new ADDED entry whose snapshot id and sequence numbers are inherited at commit.
    pub fn added(data_file: DataFile) -> ManifestEntry {
        ManifestEntry {
            status: ManifestStatus::Added,
            snapshot_id: None,
            sequence_number: None,
            file_sequence_number: None,
            data_file,
        }
    }

    pub fn is_live(&self) -> bool {
        self.status != ManifestStatus::Deleted
    }
}

/// The key-value metadata of a manifest file.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestMetadata {
    /// The table schema when the manifest was written.
    pub schema: Schema,
    pub schema_id: i32,
    pub partition_spec: PartitionSpec,
    pub format_version: i32,
    pub content: ManifestContent,
}

/// A summary of one partition field over a manifest (`field_summary`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSummary {
    pub contains_null: bool,
    pub contains_nan: Option<bool>,
    pub lower_bound: Option<Vec<u8>>,
    pub upper_bound: Option<Vec<u8>>,
}

/// One row of a manifest list (`manifest_file`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestFile {
    pub manifest_path: String,
    pub manifest_length: i64,
    pub partition_spec_id: i32,
    pub content: ManifestContent,
    /// [`UNASSIGNED_SEQUENCE_NUMBER`] until the manifest list is written.
    pub sequence_number: i64,
    pub min_sequence_number: i64,
    pub added_snapshot_id: i64,
    pub added_files_count: Option<i32>,
    pub existing_files_count: Option<i32>,
    pub deleted_files_count: Option<i32>,
    pub added_rows_count: Option<i64>,
    pub existing_rows_count: Option<i64>,
    pub deleted_rows_count: Option<i64>,
    pub partitions: Option<Vec<FieldSummary>>,
    pub key_metadata: Option<Vec<u8>>,
    pub first_row_id: Option<i64>,
}

impl ManifestFile {
    /// Whether the manifest may contain ADDED entries (unknown counts count as yes).
    pub fn has_added_files(&self) -> bool {
        self.added_files_count.is_none_or(|n| n > 0)
    }

    pub fn has_existing_files(&self) -> bool {
        self.existing_files_count.is_none_or(|n| n > 0)
    }

    pub fn has_deleted_files(&self) -> bool {
        self.deleted_files_count.is_none_or(|n| n > 0)
    }
}
