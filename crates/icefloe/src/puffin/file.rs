//! Puffin files: blobs (statistics sketches, deletion vectors) with a JSON footer.
//!
//! ```text
//! file   = Magic | Blob_1 ... Blob_n | Footer
//! Footer = Magic | FooterPayload | FooterPayloadSize (i32 LE) | Flags (4 bytes) | Magic
//! ```
//!
//! `Magic` is `PFA1`. Flag bit 0 of byte 0 says the payload is one LZ4 frame. The payload
//! is the JSON `FileMetadata`: `{"blobs": [...], "properties": {...}}`.
//!
//! The reader fetches only the end of the file (one range read, two if the footer is
//! larger than a guess) and then only the byte ranges of the blobs it is asked for.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::limits::{ceiling_note, max_decompressed_usize, read_at_most, zstd_at_most};
use crate::spec::json::{index, kind, parse_text, Obj};

/// The magic at the start of the file and at both ends of the footer.
pub const MAGIC: [u8; 4] = *b"PFA1";
/// FooterPayloadSize + Flags + Magic.
const TRAILER_BYTES: u64 = 12;
/// Flag: the footer payload is LZ4-compressed (bit 0 of byte 0).
const FLAG_FOOTER_LZ4: u8 = 0x01;
/// How much of the file end the reader fetches first, hoping the footer fits.
const FOOTER_GUESS: u64 = 16 * 1024;
/// File property naming the writer.
pub const PROPERTY_CREATED_BY: &str = "created-by";

fn bad(field: impl Into<String>, message: impl Into<String>) -> Error {
    Error::invalid_metadata(field, message)
}

/// How a blob is compressed (each codec: a single frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressionCodec {
    Lz4,
    Zstd,
}

impl CompressionCodec {
    pub fn as_str(&self) -> &'static str {
        match self {
            CompressionCodec::Lz4 => "lz4",
            CompressionCodec::Zstd => "zstd",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "lz4" => Some(CompressionCodec::Lz4),
            "zstd" => Some(CompressionCodec::Zstd),
            _ => None,
        }
    }

    /// Decompresses a blob, stopping as soon as it passes `limit` bytes (`None`). Sizes a
    /// frame declares are not trusted for anything.
    fn decompress(&self, bytes: &[u8], limit: usize) -> std::io::Result<Option<Vec<u8>>> {
        match self {
            CompressionCodec::Lz4 => read_at_most(lz4_flex::frame::FrameDecoder::new(bytes), limit),
            CompressionCodec::Zstd => zstd_at_most(bytes, limit),
        }
    }

    fn compress(&self, bytes: &[u8]) -> std::io::Result<Vec<u8>> {
        match self {
            CompressionCodec::Lz4 => lz4_compress(bytes),
            CompressionCodec::Zstd => zstd::stream::encode_all(bytes, 3),
        }
    }
}

fn lz4_compress(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let info = lz4_flex::frame::FrameInfo::new().content_size(Some(bytes.len() as u64));
    let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
    enc.write_all(bytes)?;
    enc.finish().map_err(std::io::Error::other)
}

/// One blob as the footer describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobMetadata {
    /// `type`, e.g. `deletion-vector-v1` or `apache-datasketches-theta-v1`.
    pub blob_type: String,
    /// `fields`: the field ids the blob was computed from.
    pub fields: Vec<i32>,
    pub snapshot_id: i64,
    pub sequence_number: i64,
    /// Where the blob's bytes (as stored, possibly compressed) start in the file.
    pub offset: u64,
    /// How many bytes the blob takes in the file.
    pub length: u64,
    pub compression_codec: Option<CompressionCodec>,
    pub properties: Vec<(String, String)>,
}

impl BlobMetadata {
    /// The value of a blob property.
    pub fn property(&self, key: &str) -> Option<&str> {
        property(&self.properties, key)
    }

    fn from_json(v: &Value, path: &str) -> Result<Self> {
        let o = Obj::new(v, path)?;
        let non_negative = |key: &str| -> Result<u64> {
            let n = o.req_i64(key)?;
            u64::try_from(n)
                .map_err(|_| bad(o.field(key), format!("must not be negative, found {n}")))
        };
        let fields = o.req_list("fields", |v, path| {
            v.as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(|| bad(path, format!("expected an int, found {}", kind(v))))
        })?;
        let compression_codec = match o.opt_str("compression-codec")? {
            None => None,
            Some(s) => Some(CompressionCodec::parse(s).ok_or_else(|| {
                Error::unsupported(format!(
                    "{}: unknown compression codec '{s}' (known: lz4, zstd)",
                    o.field("compression-codec")
                ))
            })?),
        };
        Ok(BlobMetadata {
            blob_type: o.req_str("type")?.to_string(),
            fields,
            snapshot_id: o.req_i64("snapshot-id")?,
            sequence_number: o.req_i64("sequence-number")?,
            offset: non_negative("offset")?,
            length: non_negative("length")?,
            compression_codec,
            properties: o.opt_str_map("properties")?.unwrap_or_default(),
        })
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), Value::from(self.blob_type.clone()));
        m.insert("fields".into(), Value::from(self.fields.clone()));
        m.insert("snapshot-id".into(), Value::from(self.snapshot_id));
        m.insert("sequence-number".into(), Value::from(self.sequence_number));
        m.insert("offset".into(), Value::from(self.offset));
        m.insert("length".into(), Value::from(self.length));
        if let Some(codec) = self.compression_codec {
            m.insert("compression-codec".into(), Value::from(codec.as_str()));
        }
        if !self.properties.is_empty() {
            m.insert("properties".into(), str_map(&self.properties));
        }
        Value::Object(m)
    }
}

fn property<'a>(props: &'a [(String, String)], key: &str) -> Option<&'a str> {
    props
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn str_map(props: &[(String, String)]) -> Value {
    Value::Object(
        props
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.clone())))
            .collect(),
    )
}

/// The footer payload.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileMetadata {
    pub blobs: Vec<BlobMetadata>,
    pub properties: Vec<(String, String)>,
}

impl FileMetadata {
    pub fn property(&self, key: &str) -> Option<&str> {
        property(&self.properties, key)
    }

    /// Parses the footer JSON.
    pub fn from_json_bytes(bytes: &[u8]) -> Result<Self> {
        let text = std::str::from_utf8(bytes)
            .map_err(|e| bad("", format!("footer payload is not UTF-8: {e}")))?;
        let v = parse_text(text)?;
        let o = Obj::new(&v, "")?;
        let blobs = o.req_array("blobs")?;
        let blobs = blobs
            .iter()
            .enumerate()
            .map(|(i, b)| BlobMetadata::from_json(b, &index("blobs", i)))
            .collect::<Result<Vec<_>>>()?;
        Ok(FileMetadata {
            blobs,
            properties: o.opt_str_map("properties")?.unwrap_or_default(),
        })
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert(
            "blobs".into(),
            Value::Array(self.blobs.iter().map(BlobMetadata::to_json).collect()),
        );
        if !self.properties.is_empty() {
            m.insert("properties".into(), str_map(&self.properties));
        }
        Value::Object(m)
    }
}

/// Parses a footer from the last `tail.len()` bytes of a file of `file_size` bytes.
/// Returns the metadata and the footer size, or `Err(needed)` in the `Ok` position
/// (`Ok(Err(n))`) when the tail is too short and the last `n` bytes are needed.
fn parse_footer(
    tail: &[u8],
    file_size: u64,
) -> Result<std::result::Result<(FileMetadata, u64), u64>> {
    parse_footer_within(tail, file_size, max_decompressed_usize()?)
}

/// [`parse_footer`], with an LZ4 footer payload decompressing to at most `ceiling` bytes.
pub(crate) fn parse_footer_within(
    tail: &[u8],
    file_size: u64,
    ceiling: usize,
) -> Result<std::result::Result<(FileMetadata, u64), u64>> {
    let min_size = (MAGIC.len() as u64) * 2 + TRAILER_BYTES;
    if file_size < min_size {
        return Err(bad(
            "footer",
            format!("a file of {file_size} bytes is too short to be a Puffin file"),
        ));
    }
    let tail_len = tail.len() as u64;
    let Some((rest, trailer)) = tail.split_last_chunk::<12>() else {
        return Ok(Err(TRAILER_BYTES));
    };
    let _ = rest;
    let payload_size = i32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    let flags = [trailer[4], trailer[5], trailer[6], trailer[7]];
    if trailer[8..12] != MAGIC {
        return Err(bad(
            "footer.magic",
            "the file does not end with the Puffin magic PFA1",
        ));
    }
    let payload_size = u64::try_from(payload_size).map_err(|_| {
        bad(
            "footer.payload-size",
            format!("negative footer payload size {payload_size}"),
        )
    })?;
    // magic + payload + trailer, and the file's leading magic before it
    let footer_size = payload_size + MAGIC.len() as u64 + TRAILER_BYTES;
    if footer_size + MAGIC.len() as u64 > file_size {
        return Err(bad(
            "footer.payload-size",
            format!("footer payload size {payload_size} does not fit a file of {file_size} bytes"),
        ));
    }
    if footer_size > tail_len {
        return Ok(Err(footer_size));
    }
    let footer = &tail[(tail_len - footer_size) as usize..];
    if footer[..4] != MAGIC {
        return Err(bad(
            "footer.magic",
            "the footer does not start with the Puffin magic PFA1",
        ));
    }
    if flags[0] & !FLAG_FOOTER_LZ4 != 0 || flags[1..] != [0, 0, 0] {
        return Err(Error::unsupported(format!(
            "unknown Puffin footer flags {:02x} {:02x} {:02x} {:02x}",
            flags[0], flags[1], flags[2], flags[3]
        )));
    }
    let payload = &footer[4..footer.len() - TRAILER_BYTES as usize];
    let metadata = if flags[0] & FLAG_FOOTER_LZ4 != 0 {
        let text = read_at_most(lz4_flex::frame::FrameDecoder::new(payload), ceiling)
            .map_err(|e| {
                bad(
                    "footer.payload",
                    format!("cannot decompress the LZ4 footer: {e}"),
                )
            })?
            .ok_or_else(|| {
                Error::decompression_limit(
                    "footer.payload",
                    format!(
                        "the LZ4 footer decompresses to more than the limit: {}",
                        ceiling_note(ceiling as u64)
                    ),
                )
            })?;
        FileMetadata::from_json_bytes(&text)?
    } else {
        FileMetadata::from_json_bytes(payload)?
    };
    // every blob lies between the leading magic and the footer
    let footer_start = file_size - footer_size;
    for (i, b) in metadata.blobs.iter().enumerate() {
        let in_range = b.offset >= MAGIC.len() as u64
            && b.offset
                .checked_add(b.length)
                .is_some_and(|end| end <= footer_start);
        if !in_range {
            return Err(bad(
                index("blobs", i),
                format!(
                    "blob bytes [{}, +{}) are outside the file's blob area [4, {footer_start})",
                    b.offset, b.length
                ),
            ));
        }
    }
    Ok(Ok((metadata, footer_size)))
}

/// An open Puffin file: its footer is read, blobs are read on demand.
pub struct PuffinReader<'a> {
    io: &'a dyn FileIO,
    location: String,
    file_size: u64,
    footer_size: u64,
    metadata: FileMetadata,
}

impl std::fmt::Debug for PuffinReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PuffinReader")
            .field("location", &self.location)
            .field("file_size", &self.file_size)
            .field("footer_size", &self.footer_size)
            .field("metadata", &self.metadata)
            .finish()
    }
}

impl<'a> PuffinReader<'a> {
    /// Opens a Puffin file, reading only its footer. `file_size` saves a size look-up
    /// when known (a manifest entry has it).
    pub fn open(io: &'a dyn FileIO, location: &str, file_size: Option<u64>) -> Result<Self> {
        let file_size = match file_size {
            Some(n) => n,
            None => io.file_size(location)?,
        };
        let guess = file_size.min(FOOTER_GUESS);
        let tail = io.read_range(location, file_size - guess, guess)?;
        let parsed = match parse_footer(&tail, file_size).map_err(|e| e.in_file(location))? {
            Ok(parsed) => parsed,
            Err(needed) => {
                let tail = io.read_range(location, file_size - needed, needed)?;
                match parse_footer(&tail, file_size).map_err(|e| e.in_file(location))? {
                    Ok(parsed) => parsed,
                    Err(_) => {
                        return Err(
                            bad("footer", "footer size changed between reads").in_file(location)
                        )
                    }
                }
            }
        };
        let (metadata, footer_size) = parsed;
        Ok(PuffinReader {
            io,
            location: location.to_string(),
            file_size,
            footer_size,
            metadata,
        })
    }

    pub fn metadata(&self) -> &FileMetadata {
        &self.metadata
    }

    pub fn blobs(&self) -> &[BlobMetadata] {
        &self.metadata.blobs
    }

    pub fn location(&self) -> &str {
        &self.location
    }

    pub fn io(&self) -> &'a dyn FileIO {
        self.io
    }

    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// The size of the footer (magic + payload + 12 bytes).
    pub fn footer_size(&self) -> u64 {
        self.footer_size
    }

    /// The bytes of a blob (decompressed), reading only its range of the file. A
    /// compressed blob may decompress to at most the ceiling of [`crate::limits`].
    pub fn read_blob(&self, blob: &BlobMetadata) -> Result<Vec<u8>> {
        let ceiling = match blob.compression_codec {
            None => usize::MAX,
            Some(_) => max_decompressed_usize()?,
        };
        self.read_blob_within(blob, ceiling)
    }

    /// [`PuffinReader::read_blob`] with the ceiling given.
    pub(crate) fn read_blob_within(&self, blob: &BlobMetadata, ceiling: usize) -> Result<Vec<u8>> {
        let bytes = self
            .io
            .read_range(&self.location, blob.offset, blob.length)?;
        let Some(codec) = blob.compression_codec else {
            return Ok(bytes);
        };
        let field = format!("blob@{}", blob.offset);
        match codec.decompress(&bytes, ceiling) {
            Ok(Some(out)) => Ok(out),
            Ok(None) => Err(Error::decompression_limit(
                field,
                format!(
                    "the {} blob of {} bytes decompresses to more than the limit: {}",
                    codec.as_str(),
                    bytes.len(),
                    ceiling_note(ceiling as u64)
                ),
            )),
            Err(e) => Err(bad(
                field,
                format!("cannot decompress {} blob: {e}", codec.as_str()),
            )),
        }
        .map_err(|e| e.in_file(&self.location))
    }
}

/// A blob to add to a [`PuffinWriter`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBlob {
    pub blob_type: String,
    pub fields: Vec<i32>,
    pub snapshot_id: i64,
    pub sequence_number: i64,
    /// Compress the blob's bytes with this codec before writing.
    pub compression: Option<CompressionCodec>,
    pub properties: Vec<(String, String)>,
}

/// What [`PuffinWriter::finish`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenPuffin {
    pub blobs: Vec<BlobMetadata>,
    pub file_size: u64,
    pub footer_size: u64,
}

/// Builds a Puffin file in memory; the footer is written uncompressed.
#[derive(Debug, Clone)]
pub struct PuffinWriter {
    buf: Vec<u8>,
    blobs: Vec<BlobMetadata>,
    properties: Vec<(String, String)>,
}

impl Default for PuffinWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl PuffinWriter {
    /// A writer with `created-by` set to this library.
    pub fn new() -> Self {
        PuffinWriter {
            buf: MAGIC.to_vec(),
            blobs: Vec::new(),
            properties: vec![(
                PROPERTY_CREATED_BY.to_string(),
                format!("icefloe version {}", env!("CARGO_PKG_VERSION")),
            )],
        }
    }

    /// Sets a file property (replacing one of the same key).
    pub fn set_property(&mut self, key: &str, value: &str) {
        match self.properties.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value.to_string(),
            None => self.properties.push((key.to_string(), value.to_string())),
        }
    }

    /// Appends a blob; returns its metadata (with its offset and length in the file).
    pub fn add_blob(&mut self, blob: NewBlob, data: &[u8]) -> Result<BlobMetadata> {
        let compressed;
        let stored = match blob.compression {
            None => data,
            Some(codec) => {
                compressed = codec.compress(data).map_err(|e| {
                    Error::invalid_argument(format!(
                        "cannot compress blob with {}: {e}",
                        codec.as_str()
                    ))
                })?;
                &compressed[..]
            }
        };
        let meta = BlobMetadata {
            blob_type: blob.blob_type,
            fields: blob.fields,
            snapshot_id: blob.snapshot_id,
            sequence_number: blob.sequence_number,
            offset: self.buf.len() as u64,
            length: stored.len() as u64,
            compression_codec: blob.compression,
            properties: blob.properties,
        };
        self.buf.extend_from_slice(stored);
        self.blobs.push(meta.clone());
        Ok(meta)
    }

    /// The file's bytes and what they hold.
    pub fn finish(self) -> Result<(Vec<u8>, WrittenPuffin)> {
        let PuffinWriter {
            mut buf,
            blobs,
            properties,
        } = self;
        let metadata = FileMetadata { blobs, properties };
        let payload = metadata.to_json().to_string();
        let payload_size = i32::try_from(payload.len()).map_err(|_| {
            Error::unsupported(format!(
                "a Puffin footer of {} bytes is too large",
                payload.len()
            ))
        })?;
        let footer_start = buf.len();
        buf.extend_from_slice(&MAGIC);
        buf.extend_from_slice(payload.as_bytes());
        buf.extend_from_slice(&payload_size.to_le_bytes());
        buf.extend_from_slice(&[0, 0, 0, 0]);
        buf.extend_from_slice(&MAGIC);
        let written = WrittenPuffin {
            blobs: metadata.blobs,
            file_size: buf.len() as u64,
            footer_size: (buf.len() - footer_start) as u64,
        };
        Ok((buf, written))
    }

    /// Writes the file as a new file at `location`.
    pub fn write(self, io: &dyn FileIO, location: &str) -> Result<WrittenPuffin> {
        let (bytes, written) = self.finish()?;
        io.write_new(location, &bytes)?;
        Ok(written)
    }
}
