//! Decompression bombs: small files whose compressed parts decompress, or say they
//! decompress, to gigabytes. Each must be refused with a typed error naming the file and
//! the block or blob, without allocating what it claims and without inflating for long,
//! at the default ceiling. The bombs are built here, in a few KB or MB each.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::{Duration, Instant};

use crate::error::{Error, Location};
use crate::io::{FileIO, MemoryFileIO};
use crate::limits::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::manifest::avro::{put_bytes, put_long, Container};
use crate::manifest::{
    read_manifest, read_manifest_list, write_manifest_list, Codec, ManifestContent, ManifestSource,
    ManifestWriter, ReadManifestOptions,
};
use crate::puffin::file::MAGIC as MAGIC_BYTES;
use crate::puffin::{BlobMetadata, CompressionCodec, FileMetadata, PuffinReader};
use crate::spec::json::metadata_file_text_within;
use crate::spec::partition::PartitionSpec;
use crate::spec::table_metadata::TableMetadata;
use crate::spec::{NestedField, PrimitiveType, Schema, Type};

const MIB: usize = 1 << 20;
/// Generous: the bombs take well under a second in release builds; this is a debug build
/// on a shared machine, and without the limit they take tens of seconds or never finish.
const FAST: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------
// Bomb builders
// ---------------------------------------------------------------------------------------

/// A raw deflate stream of `mib` MiB of zeros in about 1 KB per MiB: one MiB compressed
/// and flushed to a byte boundary (a non-final block), repeated, then an empty final
/// block. Every copy refers back only to zeros, so the repeats are as valid as the first.
fn deflate_zeros(mib: usize) -> Vec<u8> {
    let mut c = flate2::Compress::new(flate2::Compression::best(), false);
    let mut chunk = Vec::with_capacity(64 << 10);
    c.compress_vec(&vec![0u8; MIB], &mut chunk, flate2::FlushCompress::Sync)
        .unwrap();
    assert_eq!(c.total_in(), MIB as u64);
    let mut out = Vec::with_capacity(chunk.len() * mib + 2);
    for _ in 0..mib {
        out.extend_from_slice(&chunk);
    }
    out.extend_from_slice(&[0x03, 0x00]); // an empty final fixed-Huffman block
    out
}

/// A gzip member around [`deflate_zeros`], its trailer claiming 100 bytes.
fn gzip_zeros(mib: usize) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend_from_slice(&deflate_zeros(mib));
    out.extend_from_slice(&0u32.to_le_bytes()); // CRC-32 (never reached)
    out.extend_from_slice(&100u32.to_le_bytes()); // ISIZE: a lie
    out
}

/// An Avro snappy block (raw snappy, then a CRC-32) that declares `declared` bytes and
/// holds one literal of `len` bytes.
fn snappy_declaring(declared: u32, len: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut n = declared;
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out.push(61 << 2); // a literal with a 2-byte length
    out.extend_from_slice(&(len as u16 - 1).to_le_bytes());
    out.extend_from_slice(&vec![b'x'; len]);
    out.extend_from_slice(&[0, 0, 0, 0]);
    out
}

/// A zstd frame of `blocks` RLE blocks of 128 KiB of zeros each (4 bytes per block), with
/// `declared` as its content size when given.
fn zstd_rle(blocks: usize, declared: Option<u64>) -> Vec<u8> {
    let mut out = vec![0x28, 0xb5, 0x2f, 0xfd];
    match declared {
        // an 8-byte content size; a window of 128 KiB
        Some(n) => {
            out.extend_from_slice(&[0xc0, 0x38]);
            out.extend_from_slice(&n.to_le_bytes());
        }
        None => out.extend_from_slice(&[0x00, 0x38]),
    }
    for i in 0..blocks {
        let last = u32::from(i + 1 == blocks);
        let header = (128u32 << 10 << 3) | (1 << 1) | last; // RLE, 128 KiB
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.push(0);
    }
    out
}

/// An LZ4 frame of `blocks` independent blocks of 4 MiB of zeros each (about 16 KB each):
/// one block compressed, repeated.
fn lz4_zeros(blocks: usize) -> Vec<u8> {
    use std::io::Write;
    let info = lz4_flex::frame::FrameInfo::new()
        .block_size(lz4_flex::frame::BlockSize::Max4MB)
        .block_mode(lz4_flex::frame::BlockMode::Independent);
    let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
    enc.write_all(&vec![0u8; 4 * MIB]).unwrap();
    let one = enc.finish().unwrap();
    // header (magic, flags, block descriptor, checksum), one block, the end mark
    let (header, rest) = one.split_at(7);
    let block = &rest[..rest.len() - 4];
    let mut out = header.to_vec();
    for _ in 0..blocks {
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&[0, 0, 0, 0]);
    out
}

/// The header of an empty manifest list written with `codec`.
fn list_header(codec: Codec) -> Vec<u8> {
    let io = MemoryFileIO::default();
    write_manifest_list(&io, "h.avro", 2, 1, None, 1, None, &[], codec).unwrap();
    io.read("h.avro").unwrap()
}

/// The header of an empty data manifest written with `codec`.
fn manifest_header(codec: Codec) -> Vec<u8> {
    let schema = Schema::new(
        0,
        vec![NestedField::optional(
            1,
            "x",
            Type::Primitive(PrimitiveType::Long),
        )],
        vec![],
    )
    .unwrap();
    let spec = PartitionSpec::new(0, vec![]);
    let w = ManifestWriter::new(2, ManifestContent::Data, &schema, &spec, 1, codec).unwrap();
    w.finish_to_bytes("h.avro").unwrap().0
}

/// `header` (a whole file without blocks) followed by blocks of `count` objects each.
fn with_blocks(header: &[u8], blocks: &[(i64, &[u8])]) -> Vec<u8> {
    let sync = header[header.len() - 16..].to_vec();
    let mut out = header.to_vec();
    for (count, raw) in blocks {
        put_long(&mut out, *count);
        put_bytes(&mut out, raw);
        out.extend_from_slice(&sync);
    }
    out
}

/// A Puffin file of one blob of `stored` bytes with `codec`.
fn puffin_with(stored: &[u8], codec: CompressionCodec) -> Vec<u8> {
    let mut out = MAGIC_BYTES.to_vec();
    out.extend_from_slice(stored);
    let metadata = FileMetadata {
        blobs: vec![BlobMetadata {
            blob_type: "apache-datasketches-theta-v1".into(),
            fields: vec![1],
            snapshot_id: 1,
            sequence_number: 1,
            offset: 4,
            length: stored.len() as u64,
            compression_codec: Some(codec),
            properties: vec![],
        }],
        properties: vec![],
    };
    let payload = metadata.to_json().to_string();
    out.extend_from_slice(&MAGIC_BYTES);
    out.extend_from_slice(payload.as_bytes());
    out.extend_from_slice(&(payload.len() as i32).to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&MAGIC_BYTES);
    out
}

/// The location of a decompression-limit error; any other error fails the test.
fn limit_at(e: &Error) -> &Location {
    match e {
        Error::DecompressionLimit { at, .. } => at,
        other => panic!("expected a decompression limit error, got {other:?}"),
    }
}

fn store(io: &MemoryFileIO, location: &str, bytes: &[u8]) {
    io.write_new(location, bytes).unwrap();
}

// ---------------------------------------------------------------------------------------
// Avro: manifest lists and manifests
// ---------------------------------------------------------------------------------------

#[test]
fn snappy_block_declaring_4_gib_is_refused_before_allocating() {
    let block = snappy_declaring(u32::MAX, 1500);
    for (header, is_list) in [
        (list_header(Codec::Snappy), true),
        (manifest_header(Codec::Snappy), false),
    ] {
        let bytes = with_blocks(&header, &[(1, &block)]);
        let io = MemoryFileIO::default();
        let loc = "s3://b/t/metadata/snap-1.avro";
        store(&io, loc, &bytes);
        let e = if is_list {
            read_manifest_list(&io, loc).unwrap_err()
        } else {
            read_manifest(
                ManifestSource::file(&io, loc),
                &ReadManifestOptions::default(),
            )
            .unwrap_err()
        };
        let at = limit_at(&e);
        assert_eq!((at.file.as_str(), at.field.as_str()), (loc, "block 0"));
        assert!(e.to_string().contains("4294967295"), "{e}");
    }
    // a real snappy block that says what it holds is read as before
    assert!(read_list_bytes(&with_blocks(&list_header(Codec::Snappy), &[])).is_ok());
}

fn read_list_bytes(bytes: &[u8]) -> crate::Result<Vec<crate::manifest::ManifestFile>> {
    crate::manifest::read_manifest_list_bytes(bytes)
}

#[test]
fn deflate_block_of_3_gib_stops_at_the_default_limit() {
    let block = deflate_zeros(3 * 1024);
    assert!(block.len() < 4 * MIB, "{} bytes", block.len());
    let io = MemoryFileIO::default();
    let loc = "s3://b/t/metadata/m0.avro";
    store(
        &io,
        loc,
        &with_blocks(&manifest_header(Codec::Deflate), &[(1, &block)]),
    );
    let start = Instant::now();
    let e = read_manifest(
        ManifestSource::file(&io, loc),
        &ReadManifestOptions::default(),
    )
    .unwrap_err();
    assert!(start.elapsed() < FAST, "{:?}", start.elapsed());
    let at = limit_at(&e);
    assert_eq!((at.file.as_str(), at.field.as_str()), (loc, "block 0"));
    assert!(
        e.to_string()
            .contains(&DEFAULT_MAX_DECOMPRESSED_BYTES.to_string()),
        "{e}"
    );
    assert!(
        e.to_string().contains("ICEFLOE_MAX_DECOMPRESSED_BYTES"),
        "{e}"
    );
}

#[test]
fn zstd_block_declaring_a_huge_content_size_is_refused_before_decoding() {
    let block = zstd_rle(1, Some(1 << 40));
    let io = MemoryFileIO::default();
    let loc = "s3://b/t/metadata/snap-2.avro";
    store(
        &io,
        loc,
        &with_blocks(&list_header(Codec::Zstd), &[(1, &block)]),
    );
    let start = Instant::now();
    let e = read_manifest_list(&io, loc).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(1));
    let at = limit_at(&e);
    assert_eq!((at.file.as_str(), at.field.as_str()), (loc, "block 0"));
}

/// Each codec's blocks are bounded at the ceiling exactly, and the blocks of one file
/// together: a file whose blocks add up to the ceiling is read, one byte less is refused
/// at the block that passes it.
#[test]
fn avro_blocks_are_bounded_together_at_the_ceiling() {
    let mut snappy = vec![0u8; MIB];
    apache_avro::Codec::Snappy.compress(&mut snappy).unwrap();
    let deflate = deflate_zeros(1);
    let zstd = zstd_rle(8, None); // 1 MiB
    for (codec, block) in [
        (Codec::Deflate, &deflate),
        (Codec::Snappy, &snappy),
        (Codec::Zstd, &zstd),
    ] {
        let bytes = with_blocks(&list_header(codec), &[(1, block), (1, block)]);
        let c = Container::open(&bytes).unwrap();
        let mut seen = 0;
        c.for_each_block_within(2 * MIB, |_, b| {
            seen += b.len();
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, 2 * MIB, "{codec:?}");
        let e = c
            .for_each_block_within(2 * MIB - 1, |_, _| Ok(()))
            .unwrap_err();
        assert_eq!(limit_at(&e).field, "block 1", "{codec:?}");
        let e = c.for_each_block_within(MIB - 1, |_, _| Ok(())).unwrap_err();
        assert_eq!(limit_at(&e).field, "block 0", "{codec:?}");
    }
    // uncompressed blocks are the file's own bytes: no ceiling applies
    let bytes = with_blocks(&list_header(Codec::Null), &[(1, &[0u8; 100][..])]);
    let c = Container::open(&bytes).unwrap();
    c.for_each_block(|_, b| {
        assert_eq!(b.len(), 100);
        Ok(())
    })
    .unwrap();
}

/// A snappy block cannot hold more than 22 times its size: a length beyond that is a lie
/// even under the ceiling.
#[test]
fn snappy_lengths_beyond_what_the_block_can_hold_are_lies() {
    let block = snappy_declaring(100_000, 1000); // 1,007 bytes of stream
    let bytes = with_blocks(&list_header(Codec::Snappy), &[(1, &block)]);
    let c = Container::open(&bytes).unwrap();
    let e = c
        .for_each_block_within(usize::MAX, |_, _| Ok(()))
        .unwrap_err();
    assert!(e.to_string().contains("more than it can hold"), "{e}");
    // 22 times is within what it could hold: the decoder is reached, and finds the lie
    let block = snappy_declaring(20_000, 1000);
    let bytes = with_blocks(&list_header(Codec::Snappy), &[(1, &block)]);
    let c = Container::open(&bytes).unwrap();
    let e = c
        .for_each_block_within(usize::MAX, |_, _| Ok(()))
        .unwrap_err();
    assert!(matches!(e, Error::InvalidMetadata { .. }), "{e:?}");
}

// ---------------------------------------------------------------------------------------
// Puffin
// ---------------------------------------------------------------------------------------

#[test]
fn puffin_zstd_blob_with_a_lying_content_size_is_refused() {
    let io = MemoryFileIO::default();
    let loc = "s3://b/t/data/stats.puffin";
    // says 1 TiB, holds 128 KiB
    store(
        &io,
        loc,
        &puffin_with(&zstd_rle(1, Some(1 << 40)), CompressionCodec::Zstd),
    );
    let reader = PuffinReader::open(&io, loc, None).unwrap();
    let e = reader.read_blob(&reader.blobs()[0]).unwrap_err();
    let at = limit_at(&e);
    assert_eq!((at.file.as_str(), at.field.as_str()), (loc, "blob@4"));
}

#[test]
fn puffin_zstd_blob_of_4_gib_stops_at_the_default_limit() {
    let io = MemoryFileIO::default();
    let loc = "s3://b/t/data/stats.puffin";
    let stored = zstd_rle(32 * 1024, None); // 4 GiB in 128 KB
    store(&io, loc, &puffin_with(&stored, CompressionCodec::Zstd));
    let reader = PuffinReader::open(&io, loc, None).unwrap();
    let start = Instant::now();
    let e = reader.read_blob(&reader.blobs()[0]).unwrap_err();
    assert!(start.elapsed() < FAST, "{:?}", start.elapsed());
    let at = limit_at(&e);
    assert_eq!((at.file.as_str(), at.field.as_str()), (loc, "blob@4"));
}

#[test]
fn puffin_lz4_blobs_and_footers_are_bounded_at_the_ceiling() {
    let io = MemoryFileIO::default();
    let loc = "s3://b/t/data/stats.puffin";
    let stored = lz4_zeros(4); // 16 MiB
    store(&io, loc, &puffin_with(&stored, CompressionCodec::Lz4));
    let reader = PuffinReader::open(&io, loc, None).unwrap();
    let blob = &reader.blobs()[0];
    assert_eq!(
        reader.read_blob_within(blob, 16 * MIB).unwrap().len(),
        16 * MIB
    );
    let e = reader.read_blob_within(blob, 16 * MIB - 1).unwrap_err();
    assert_eq!(limit_at(&e).field, "blob@4");
    assert_eq!(limit_at(&e).file, loc);

    // an LZ4 footer payload: 16 MiB of zeros is not JSON, but is refused before parsing
    let mut file = MAGIC_BYTES.to_vec();
    file.extend_from_slice(&MAGIC_BYTES);
    file.extend_from_slice(&stored);
    file.extend_from_slice(&(stored.len() as i32).to_le_bytes());
    file.extend_from_slice(&[1, 0, 0, 0]); // the footer is LZ4-compressed
    file.extend_from_slice(&MAGIC_BYTES);
    let size = file.len() as u64;
    let e = crate::puffin::file::parse_footer_within(&file, size, MIB).unwrap_err();
    assert_eq!(limit_at(&e).field, "footer.payload");
    // with room for it, it is decompressed and found not to be JSON
    let e = crate::puffin::file::parse_footer_within(&file, size, 16 * MIB).unwrap_err();
    assert!(matches!(e, Error::InvalidJson { .. }), "{e:?}");
}

// ---------------------------------------------------------------------------------------
// Gzip metadata JSON
// ---------------------------------------------------------------------------------------

#[test]
fn gzip_metadata_of_3_gib_stops_at_the_default_limit() {
    let gz = gzip_zeros(3 * 1024);
    let io = MemoryFileIO::default();
    let loc = "s3://b/t/metadata/00001-x.gz.metadata.json";
    store(&io, loc, &gz);
    let start = Instant::now();
    let e = TableMetadata::read(&io, loc).unwrap_err();
    assert!(start.elapsed() < FAST, "{:?}", start.elapsed());
    assert_eq!(limit_at(&e).file, loc);
}

#[test]
fn gzip_metadata_is_bounded_at_the_ceiling() {
    let gz = gzip_zeros(2);
    let e = metadata_file_text_within(&gz, 2 * MIB - 1).unwrap_err();
    limit_at(&e);
    // the text is read whole at the ceiling (then its CRC is found wrong)
    let e = metadata_file_text_within(&gz, 2 * MIB).unwrap_err();
    assert!(matches!(e, Error::InvalidJson { .. }), "{e:?}");
    let good = crate::spec::json::metadata_file_bytes("{}".into(), true).unwrap();
    assert_eq!(metadata_file_text_within(&good, 2).unwrap(), "{}");
    assert!(metadata_file_text_within(&good, 1).is_err());
}
