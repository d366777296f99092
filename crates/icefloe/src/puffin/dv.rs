//! Deletion vectors (table spec v3, "Deletion Vectors"): the set of deleted row positions
//! of one data file, stored as a `deletion-vector-v1` blob in a Puffin file.
//!
//! Blob layout (big-endian framing around a little-endian bitmap):
//!
//! ```text
//! length (u32 BE, = 4 + vector length) | magic D1 D3 39 64 | vector | CRC-32 of magic + vector (u32 BE)
//! ```
//!
//! The vector is the Roaring "portable 64-bit" format: the number of 32-bit bitmaps
//! (u64 LE), then for each bitmap in ascending key order its key (the high 32 bits of
//! the positions it holds, u32 LE) and the standard portable serialization of a 32-bit
//! Roaring bitmap holding the low 32 bits.
//!
//! Positions are `long`s in Iceberg: non-negative, so keys never have their top bit set.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashSet};

use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder};
use roaring::RoaringBitmap;

use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::manifest::DataFile;
use crate::puffin::file::{BlobMetadata, NewBlob, PuffinReader, PuffinWriter};

/// The Puffin blob type of a deletion vector.
pub const DELETION_VECTOR_V1: &str = "deletion-vector-v1";
/// The magic between the length and the vector.
pub const DV_MAGIC: [u8; 4] = [0xD1, 0xD3, 0x39, 0x64];
/// Blob property: the location of the data file the vector applies to.
pub const PROPERTY_REFERENCED_DATA_FILE: &str = "referenced-data-file";
/// Blob property: the number of deleted positions.
pub const PROPERTY_CARDINALITY: &str = "cardinality";

/// Length prefix + magic + CRC.
const FRAMING_BYTES: usize = 12;

fn corrupt(field: &str, message: impl Into<String>) -> Error {
    Error::invalid_metadata(format!("deletion-vector.{field}"), message)
}

fn negative(pos: i64) -> Error {
    Error::invalid_argument(format!(
        "row position {pos} is negative: deletion vector positions are 0 to 2^63 - 1"
    ))
}

/// The deleted row positions of one data file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeletionVector {
    /// High 32 bits of a position → bitmap of the low 32 bits. No empty bitmaps, keys
    /// at most `i32::MAX` (positions are non-negative).
    bitmaps: BTreeMap<u32, RoaringBitmap>,
}

#[inline]
fn split(pos: u64) -> (u32, u32) {
    ((pos >> 32) as u32, pos as u32)
}

#[inline]
fn join(key: u32, low: u32) -> u64 {
    (u64::from(key) << 32) | u64::from(low)
}

impl DeletionVector {
    /// An empty vector.
    pub fn new() -> Self {
        Self::default()
    }

    /// A vector holding `positions` (any order, duplicates allowed); fails on a negative one.
    pub fn from_positions(positions: impl IntoIterator<Item = i64>) -> Result<Self> {
        let mut dv = Self::new();
        dv.insert_all(positions)?;
        Ok(dv)
    }

    /// Adds one position; returns whether it was new. Fails on a negative position.
    pub fn insert(&mut self, pos: i64) -> Result<bool> {
        let pos = u64::try_from(pos).map_err(|_| negative(pos))?;
        let (key, low) = split(pos);
        Ok(self.bitmaps.entry(key).or_default().insert(low))
    }

    /// Adds many positions (any order). Nothing is added if one is negative. The low
    /// halves are gathered per key, sorted and added as one sorted run per bitmap, which
    /// is several times faster than inserting one by one.
    pub fn insert_all(&mut self, positions: impl IntoIterator<Item = i64>) -> Result<()> {
        let mut by_key: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        let mut current: Option<(u32, &mut Vec<u32>)> = None;
        for pos in positions {
            let pos = u64::try_from(pos).map_err(|_| negative(pos))?;
            let (key, low) = split(pos);
            match &mut current {
                Some((k, lows)) if *k == key => lows.push(low),
                _ => {
                    let lows = by_key.entry(key).or_default();
                    lows.push(low);
                    current = Some((key, lows));
                }
            }
        }
        for (key, mut lows) in by_key {
            lows.sort_unstable();
            lows.dedup();
            let added = RoaringBitmap::from_sorted_iter(lows.iter().copied())
                .unwrap_or_else(|_| lows.iter().copied().collect());
            match self.bitmaps.entry(key) {
                Entry::Occupied(mut e) => *e.get_mut() |= added,
                Entry::Vacant(e) => {
                    e.insert(added);
                }
            }
        }
        Ok(())
    }

    /// Whether row `pos` is deleted (never for a negative position).
    pub fn contains(&self, pos: i64) -> bool {
        let Ok(pos) = u64::try_from(pos) else {
            return false;
        };
        let (key, low) = split(pos);
        self.bitmaps.get(&key).is_some_and(|b| b.contains(low))
    }

    /// The number of deleted positions.
    pub fn cardinality(&self) -> u64 {
        self.bitmaps.values().map(RoaringBitmap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.bitmaps.values().all(RoaringBitmap::is_empty)
    }

    /// The deleted positions, ascending.
    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        self.bitmaps
            .iter()
            // keys are at most i32::MAX, so every joined position fits an i64
            .flat_map(|(&key, bitmap)| bitmap.iter().map(move |low| join(key, low) as i64))
    }

    /// The deleted positions within rows `[start, start + len)`, ascending, as offsets
    /// from `start` (what a reader of one batch of rows needs).
    fn deleted_offsets(&self, start: u64, len: u64) -> impl Iterator<Item = u64> + '_ {
        let end = start.saturating_add(len); // exclusive
        let (first_key, first_low) = split(start);
        let last = end.checked_sub(1);
        let ranges = match last {
            Some(last) if len > 0 => {
                let (last_key, _) = split(last);
                Some(self.bitmaps.range(first_key..=last_key))
            }
            _ => None,
        };
        ranges
            .into_iter()
            .flatten()
            .flat_map(move |(&key, bitmap)| {
                let lo = if key == first_key { first_low } else { 0 };
                let hi = match last {
                    Some(last) if split(last).0 == key => split(last).1,
                    _ => u32::MAX,
                };
                bitmap.range(lo..=hi).map(move |low| join(key, low) - start)
            })
    }

    /// Which of the rows `[start, start + len)` are kept: `mask[i]` is true when row
    /// `start + i` is not deleted.
    pub fn keep_mask(&self, start: u64, len: usize) -> Vec<bool> {
        let mut mask = vec![true; len];
        for offset in self.deleted_offsets(start, len as u64) {
            if let Some(m) = usize::try_from(offset).ok().and_then(|i| mask.get_mut(i)) {
                *m = false;
            }
        }
        mask
    }

    /// [`DeletionVector::keep_mask`] as a bit-packed Arrow boolean buffer (the values of
    /// an Arrow `BooleanArray` used as a filter).
    pub fn keep_mask_buffer(&self, start: u64, len: usize) -> BooleanBuffer {
        let mut builder = BooleanBufferBuilder::new(len);
        builder.append_n(len, true);
        for offset in self.deleted_offsets(start, len as u64) {
            if let Ok(i) = usize::try_from(offset) {
                if i < len {
                    builder.set_bit(i, false);
                }
            }
        }
        builder.finish()
    }

    /// Adds all positions of `other` (a writer merging an older DV into a new one).
    pub fn merge(&mut self, other: &DeletionVector) {
        for (&key, bitmap) in &other.bitmaps {
            match self.bitmaps.entry(key) {
                Entry::Occupied(mut e) => *e.get_mut() |= bitmap,
                Entry::Vacant(e) => {
                    e.insert(bitmap.clone());
                }
            }
        }
    }

    /// Adds the positions of a position delete file for this vector's data file.
    pub fn merge_position_deletes(
        &mut self,
        positions: impl IntoIterator<Item = i64>,
    ) -> Result<()> {
        self.insert_all(positions)
    }

    /// The vector alone, in the portable 64-bit Roaring format (no length, magic or CRC).
    /// Bitmaps are run-length optimized first, as other writers do.
    pub fn serialize_vector(&self) -> Vec<u8> {
        let bitmaps: Vec<(u32, RoaringBitmap)> = self
            .bitmaps
            .iter()
            .filter(|(_, b)| !b.is_empty())
            .map(|(&key, b)| {
                let mut b = b.clone();
                b.optimize();
                (key, b)
            })
            .collect();
        let size = 8 + bitmaps
            .iter()
            .map(|(_, b)| 4 + b.serialized_size())
            .sum::<usize>();
        let mut out = Vec::with_capacity(size);
        out.extend_from_slice(&(bitmaps.len() as u64).to_le_bytes());
        for (key, bitmap) in &bitmaps {
            out.extend_from_slice(&key.to_le_bytes());
            // writing to a Vec cannot fail; ignore the impossible error rather than panic
            let _ = bitmap.serialize_into(&mut out);
        }
        out
    }

    /// Reads a vector in the portable 64-bit Roaring format; the whole input must be used.
    pub fn deserialize_vector(bytes: &[u8]) -> Result<Self> {
        let (count, mut rest) = match bytes.split_first_chunk::<8>() {
            Some((count, rest)) => (u64::from_le_bytes(*count), rest),
            None => {
                return Err(corrupt(
                    "vector",
                    format!("{} bytes is too short for the bitmap count", bytes.len()),
                ))
            }
        };
        let mut bitmaps = BTreeMap::new();
        let mut last_key: Option<u32> = None;
        // `count` is not trusted for allocation: every bitmap uses at least 12 bytes,
        // so the loop ends at the end of the input whatever the count says.
        for i in 0..count {
            let Some((key, after_key)) = rest.split_first_chunk::<4>() else {
                return Err(corrupt(
                    "vector",
                    format!("truncated: bitmap {i} of {count} has no key"),
                ));
            };
            let key = u32::from_le_bytes(*key);
            if key > i32::MAX as u32 {
                return Err(corrupt(
                    "vector",
                    format!("bitmap key {key} has the top bit set: positions would be negative"),
                ));
            }
            if last_key.is_some_and(|last| key <= last) {
                return Err(corrupt(
                    "vector",
                    format!("bitmap keys are not ascending: {key} after {last_key:?}"),
                ));
            }
            last_key = Some(key);
            let mut reader = after_key;
            let bitmap = RoaringBitmap::deserialize_from(&mut reader).map_err(|e| {
                corrupt("vector", format!("bitmap {i} (key {key}) is invalid: {e}"))
            })?;
            rest = reader;
            if !bitmap.is_empty() {
                bitmaps.insert(key, bitmap);
            }
        }
        if !rest.is_empty() {
            return Err(corrupt(
                "vector",
                format!("{} bytes left after {count} bitmaps", rest.len()),
            ));
        }
        Ok(DeletionVector { bitmaps })
    }

    /// The full `deletion-vector-v1` blob: length, magic, vector, CRC.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let vector = self.serialize_vector();
        let framed_len = u32::try_from(DV_MAGIC.len() + vector.len()).map_err(|_| {
            Error::unsupported(format!(
                "a deletion vector of {} bytes does not fit a deletion-vector-v1 blob",
                vector.len()
            ))
        })?;
        let mut out = Vec::with_capacity(vector.len() + FRAMING_BYTES);
        out.extend_from_slice(&framed_len.to_be_bytes());
        out.extend_from_slice(&DV_MAGIC);
        out.extend_from_slice(&vector);
        let crc = crc32fast::hash(&out[4..]);
        out.extend_from_slice(&crc.to_be_bytes());
        Ok(out)
    }

    /// Reads a `deletion-vector-v1` blob, checking its length, magic and CRC.
    pub fn deserialize(blob: &[u8]) -> Result<Self> {
        if blob.len() < FRAMING_BYTES {
            return Err(corrupt(
                "length",
                format!(
                    "a blob of {} bytes is shorter than the {FRAMING_BYTES} bytes of framing",
                    blob.len()
                ),
            ));
        }
        let (len_bytes, rest) = blob.split_at(4);
        let (body, crc_bytes) = rest.split_at(rest.len() - 4);
        let declared = u32::from_be_bytes([len_bytes[0], len_bytes[1], len_bytes[2], len_bytes[3]]);
        if u64::from(declared) != body.len() as u64 {
            return Err(corrupt(
                "length",
                format!(
                    "the blob says its magic and vector take {declared} bytes, but they take {}",
                    body.len()
                ),
            ));
        }
        let (magic, vector) = body.split_at(4);
        if magic != DV_MAGIC {
            return Err(corrupt(
                "magic",
                format!("expected magic D1 D3 39 64, found {}", hex(magic)),
            ));
        }
        let stored = u32::from_be_bytes([crc_bytes[0], crc_bytes[1], crc_bytes[2], crc_bytes[3]]);
        let actual = crc32fast::hash(body);
        if stored != actual {
            return Err(corrupt(
                "crc",
                format!("CRC-32 mismatch: stored {stored:08x}, computed {actual:08x}"),
            ));
        }
        Self::deserialize_vector(vector)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Adds the positions of a position delete file to a DV (v3 writers must fold old
/// position deletes into the new DV of a data file).
pub fn merge_position_deletes(
    dv: &mut DeletionVector,
    positions: impl IntoIterator<Item = i64>,
) -> Result<()> {
    dv.merge_position_deletes(positions)
}

/// Where a written DV is: what its manifest entry carries (`file_path` is the Puffin
/// file; `content_offset` = `offset`, `content_size_in_bytes` = `length`,
/// `record_count` = `cardinality`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DvBlobRef {
    pub referenced_data_file: String,
    pub offset: u64,
    pub length: u64,
    pub cardinality: u64,
}

/// The Puffin blob of a DV, with the metadata the spec requires.
pub fn deletion_vector_blob(
    referenced_data_file: &str,
    dv: &DeletionVector,
) -> Result<(NewBlob, Vec<u8>)> {
    let bytes = dv.serialize()?;
    let blob = NewBlob {
        blob_type: DELETION_VECTOR_V1.to_string(),
        fields: Vec::new(),
        snapshot_id: -1,
        sequence_number: -1,
        compression: None,
        properties: vec![
            (
                PROPERTY_REFERENCED_DATA_FILE.to_string(),
                referenced_data_file.to_string(),
            ),
            (
                PROPERTY_CARDINALITY.to_string(),
                dv.cardinality().to_string(),
            ),
        ],
    };
    Ok((blob, bytes))
}

/// Writes one new Puffin file holding a DV for each data file (at most one per data file).
pub fn write_deletion_vectors<'a, S: AsRef<str>>(
    io: &dyn FileIO,
    location: &str,
    dvs: impl IntoIterator<Item = (S, &'a DeletionVector)>,
) -> Result<Vec<DvBlobRef>> {
    let mut writer = PuffinWriter::new();
    let mut refs = Vec::new();
    let mut seen = HashSet::new();
    for (data_file, dv) in dvs {
        let data_file = data_file.as_ref();
        if !seen.insert(data_file.to_string()) {
            return Err(Error::invalid_argument(format!(
                "two deletion vectors for data file '{data_file}': merge them into one"
            )));
        }
        let (blob, bytes) = deletion_vector_blob(data_file, dv)?;
        let meta = writer.add_blob(blob, &bytes)?;
        refs.push(DvBlobRef {
            referenced_data_file: data_file.to_string(),
            offset: meta.offset,
            length: meta.length,
            cardinality: dv.cardinality(),
        });
    }
    writer.write(io, location)?;
    Ok(refs)
}

/// Reads one DV blob by the byte range its manifest entry gives, without reading the
/// Puffin footer.
pub fn read_deletion_vector(
    io: &dyn FileIO,
    location: &str,
    offset: u64,
    length: u64,
) -> Result<DeletionVector> {
    let bytes = io.read_range(location, offset, length)?;
    DeletionVector::deserialize(&bytes).map_err(|e| e.in_file(location))
}

/// Reads a DV blob found in a Puffin footer, checking its type, that it is not
/// compressed, and that its `cardinality` property matches its content.
pub fn read_deletion_vector_blob(
    reader: &PuffinReader<'_>,
    blob: &BlobMetadata,
) -> Result<DeletionVector> {
    read_deletion_vector_blob_checked(reader, blob, None)
}

/// [`read_deletion_vector_blob`] for a vector already read (`read`), or read here.
fn read_deletion_vector_blob_checked(
    reader: &PuffinReader<'_>,
    blob: &BlobMetadata,
    read: Option<DeletionVector>,
) -> Result<DeletionVector> {
    let location = reader.location();
    if blob.blob_type != DELETION_VECTOR_V1 {
        return Err(Error::invalid_argument(format!(
            "blob at offset {} of {location} is a '{}', not a {DELETION_VECTOR_V1}",
            blob.offset, blob.blob_type
        )));
    }
    if let Some(codec) = blob.compression_codec {
        return Err(corrupt(
            "compression-codec",
            format!(
                "deletion vectors are never compressed, found '{}'",
                codec.as_str()
            ),
        )
        .in_file(location));
    }
    let dv = match read {
        Some(dv) => dv,
        None => read_deletion_vector(reader.io(), location, blob.offset, blob.length)?,
    };
    if let Some(card) = blob.property(PROPERTY_CARDINALITY) {
        if card.parse::<u64>().ok() != Some(dv.cardinality()) {
            return Err(corrupt(
                "cardinality",
                format!(
                    "the blob property says {card} positions, the vector holds {}",
                    dv.cardinality()
                ),
            )
            .in_file(location));
        }
    }
    Ok(dv)
}

/// The `file_size_in_bytes` of a DV whose Puffin file's size is not recorded: a v4 entry's
/// `deletion_vector` has no such field (no Puffin file is empty, so 0 is never a size).
pub const UNKNOWN_DV_FILE_SIZE: i64 = 0;

/// What the manifest entry of a DV says of it: where its blob is, how many positions it
/// holds (`record_count`), and which data file it is for.
#[derive(Debug, Clone, Copy)]
pub struct DvEntry<'a> {
    pub location: &'a str,
    pub offset: u64,
    pub length: u64,
    pub record_count: i64,
    pub referenced_data_file: Option<&'a str>,
    /// The Puffin file's size (`file_size_in_bytes`), which saves a look-up.
    pub file_size: Option<u64>,
}

impl<'a> DvEntry<'a> {
    /// The DV entry of a delete file: a Puffin file with a blob offset and size.
    pub fn of(f: &'a DataFile) -> Result<Self> {
        let (Some(offset), Some(length)) = (f.content_offset, f.content_size_in_bytes) else {
            return Err(Error::invalid_metadata(
                "content_offset",
                "a deletion vector's entry needs content_offset and content_size_in_bytes",
            )
            .in_file(&f.file_path));
        };
        let (Ok(offset), Ok(length)) = (u64::try_from(offset), u64::try_from(length)) else {
            return Err(Error::invalid_metadata(
                "content_offset",
                format!("negative blob offset {offset} or size {length}"),
            )
            .in_file(&f.file_path));
        };
        Ok(DvEntry {
            location: &f.file_path,
            offset,
            length,
            record_count: f.record_count,
            referenced_data_file: f.referenced_data_file.as_deref(),
            file_size: u64::try_from(f.file_size_in_bytes).ok(),
        })
    }
}

/// Reads the DV of a manifest entry and checks it against the entry, so that a DV that
/// does not say what its entry says is refused rather than applied:
/// - the vector's cardinality is the entry's `record_count` (Java's "Invalid
///   cardinality");
/// - unless the Puffin file's size is [`UNKNOWN_DV_FILE_SIZE`] (v4), the Puffin footer
///   describes a `deletion-vector-v1` blob at the entry's offset, of its
///   length, uncompressed, whose `referenced-data-file` is the entry's and whose
///   `cardinality` property (when present) is the vector's.
pub fn read_entry_deletion_vector(io: &dyn FileIO, e: &DvEntry<'_>) -> Result<DeletionVector> {
    let location = e.location;
    let dv = read_deletion_vector(io, location, e.offset, e.length)?;
    if i64::try_from(dv.cardinality()).ok() != Some(e.record_count) {
        return Err(Error::invalid_metadata(
            "record_count",
            format!(
                "invalid cardinality: the deletion vector at offset {} holds {} positions, \
                 its manifest entry's record_count is {}",
                e.offset,
                dv.cardinality(),
                e.record_count
            ),
        )
        .in_file(location));
    }
    if e.file_size == u64::try_from(UNKNOWN_DV_FILE_SIZE).ok() {
        // v4: the file's size is not recorded, and reading its footer would cost a look-up
        // per DV; the blob's own length, magic, CRC and cardinality were checked above
        return Ok(dv);
    }
    let reader = PuffinReader::open(io, location, e.file_size)?;
    let Some(blob) = reader.blobs().iter().find(|b| b.offset == e.offset) else {
        return Err(corrupt(
            "offset",
            format!(
                "the footer describes no blob at offset {}, where the manifest entry puts a \
                 deletion vector",
                e.offset
            ),
        )
        .in_file(location));
    };
    if blob.length != e.length {
        return Err(corrupt(
            "length",
            format!(
                "the blob at offset {} is {} bytes long, its manifest entry says {}",
                e.offset, blob.length, e.length
            ),
        )
        .in_file(location));
    }
    let from_footer = read_deletion_vector_blob_checked(&reader, blob, Some(dv))?;
    let referenced = blob.property(PROPERTY_REFERENCED_DATA_FILE);
    if referenced != e.referenced_data_file {
        return Err(corrupt(
            PROPERTY_REFERENCED_DATA_FILE,
            format!(
                "the blob at offset {} is for {}, its manifest entry for {}",
                e.offset,
                referenced.unwrap_or("no data file"),
                e.referenced_data_file.unwrap_or("no data file")
            ),
        )
        .in_file(location));
    }
    Ok(from_footer)
}
