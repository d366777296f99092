//! Decompression bombs, shared by the targets: [`setup`] lowers icefloe's ceiling on
//! decompressed bytes for the fuzzing process, so that an input that gets past a bound costs
//! at most that (and a regression that drops a bound shows as libFuzzer's `-rss_limit_mb`
//! or a timeout), then checks once that a few deterministic bombs, each claiming far more
//! than the ceiling, are refused with `Error::DecompressionLimit`. Mutations seldom make a
//! bomb by chance; these make sure every run starts from the bounded behaviour.

// each target uses some of these
#![allow(dead_code)]

use std::sync::Once;

use icefloe::io::{FileIO, MemoryFileIO};
use icefloe::manifest::{write_manifest_list, Codec};
use icefloe::Error;

/// The ceiling while fuzzing: well under libFuzzer's default RSS limit of 2 GB.
pub const FUZZ_CEILING: u64 = 16 << 20;

static SETUP: Once = Once::new();

/// Lowers the ceiling and checks the bombs of `check` (once per process).
pub fn setup(check: fn()) {
    SETUP.call_once(|| {
        icefloe::limits::set_max_decompressed_bytes(Some(FUZZ_CEILING))
            .expect("a positive ceiling");
        check();
    });
}

pub fn assert_refused<T: std::fmt::Debug>(what: &str, r: icefloe::Result<T>) {
    match r {
        Err(Error::DecompressionLimit { .. }) => {}
        other => panic!("{what}: expected a decompression limit error, got {other:?}"),
    }
}

/// Raw deflate of `mib` MiB of zeros in about 1 KB per MiB: one MiB compressed and flushed
/// to a byte boundary (a non-final block), repeated (each copy refers back only to zeros),
/// then an empty final block.
pub fn deflate_zeros(mib: usize) -> Vec<u8> {
    let mut c = flate2::Compress::new(flate2::Compression::best(), false);
    let mut chunk = Vec::with_capacity(64 << 10);
    c.compress_vec(&vec![0u8; 1 << 20], &mut chunk, flate2::FlushCompress::Sync)
        .expect("zlib compresses");
    let mut out = Vec::with_capacity(chunk.len() * mib + 2);
    for _ in 0..mib {
        out.extend_from_slice(&chunk);
    }
    out.extend_from_slice(&[0x03, 0x00]); // an empty final fixed-Huffman block
    out
}

/// A zstd frame of `blocks` RLE blocks of 128 KiB of zeros (4 bytes each), with
/// `declared` as its content size when given.
pub fn zstd_rle(blocks: usize, declared: Option<u64>) -> Vec<u8> {
    let mut out = vec![0x28, 0xb5, 0x2f, 0xfd];
    match declared {
        Some(n) => {
            out.extend_from_slice(&[0xc0, 0x38]);
            out.extend_from_slice(&n.to_le_bytes());
        }
        None => out.extend_from_slice(&[0x00, 0x38]),
    }
    for i in 0..blocks {
        let header = (128u32 << 10 << 3) | (1 << 1) | u32::from(i + 1 == blocks);
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.push(0);
    }
    out
}

/// An Avro snappy block that declares 4 GiB and holds a short literal.
pub fn snappy_declaring_4_gib() -> Vec<u8> {
    let mut out = vec![0xff, 0xff, 0xff, 0xff, 0x0f]; // 2^32 - 1
    out.push(15 << 2); // a literal of 16 bytes
    out.extend_from_slice(&[b'x'; 16]);
    out.extend_from_slice(&[0, 0, 0, 0]);
    out
}

/// An empty manifest list written with `codec`, and one block of one object appended.
pub fn manifest_list_with_block(codec: Codec, block: &[u8]) -> Vec<u8> {
    let io = MemoryFileIO::default();
    write_manifest_list(&io, "h.avro", 2, 1, None, 1, None, &[], codec).expect("a header");
    let mut out = io.read("h.avro").expect("the header");
    let sync = out[out.len() - 16..].to_vec();
    out.push(2); // one object (zigzag)
    let mut n = (block.len() as u64) << 1; // zigzag length
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out.extend_from_slice(block);
    out.extend_from_slice(&sync);
    out
}
