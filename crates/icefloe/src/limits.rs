//! The bound on decompressed data, so that a small hostile file (a "decompression bomb")
//! cannot make a reader allocate gigabytes or inflate for tens of seconds.
//!
//! Every decompression of file content is bounded: Avro blocks of manifests and manifest
//! lists (deflate, snappy, zstandard), Puffin blobs and footers (LZ4, zstd), gzip metadata
//! JSON (tables and views). Two bounds apply:
//!
//! - **the ceiling**, [`max_decompressed_bytes`]: the most bytes one file may decompress
//!   to (an Avro file's blocks added up; each Puffin blob and the Puffin footer on their
//!   own, as they are read on their own). Configurable, see below.
//! - **what the compressed bytes can hold**, where a decoder would otherwise allocate
//!   before decoding: a snappy block declares its size up front and cannot expand more
//!   than 22 times; deflate cannot expand more than 1032 times. A declared size beyond
//!   that is a lie, refused before anything is allocated.
//!
//! Streaming decoders (gzip, zstd, LZ4) stop as soon as their output passes the bound
//! (see [`read_at_most`]); whole-buffer decoders (libdeflate, snappy) are given a buffer of
//! at most the bound. Either way, memory and time are proportional to the bound, never to
//! what the file claims. Going past a bound is an [`Error::DecompressionLimit`] naming the
//! file and the block or blob.
//!
//! The ceiling is, in this order: what [`set_max_decompressed_bytes`] set in this process,
//! else the environment variable [`MAX_DECOMPRESSED_BYTES_ENV`] (a number of bytes, read
//! each time a file is opened, so it can be changed while the process runs), else
//! [`DEFAULT_MAX_DECOMPRESSED_BYTES`]. Java Iceberg has no such limit (it is bounded only
//! by its 2 GiB array size), so a file Java reads may need a higher ceiling here.

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// The default ceiling, 256 MiB. Writers cut Avro blocks at about 64 KB of uncompressed
/// data (Avro's sync interval, which Iceberg keeps) plus one entry, and a manifest file at
/// 8 MB compressed (`commit.manifest.target-size-bytes`), so a real manifest or manifest
/// list decompresses to tens of MB at most; Puffin blobs are sketches of KB (deletion
/// vectors are never compressed); gzip metadata JSON is the largest real case, and
/// metadata files over 100 MB are already rare and pathological. 256 MiB keeps all of them
/// while a bomb costs at most that much memory and well under a second of inflating.
pub const DEFAULT_MAX_DECOMPRESSED_BYTES: u64 = 256 << 20;

/// The environment variable that sets the ceiling (a positive number of bytes) when
/// [`set_max_decompressed_bytes`] has not.
pub const MAX_DECOMPRESSED_BYTES_ENV: &str = "ICEFLOE_MAX_DECOMPRESSED_BYTES";

/// The ceiling set through the API; 0 while unset.
static SET: AtomicU64 = AtomicU64::new(0);

/// Sets the ceiling for this process (`None`: back to the environment variable or the
/// default). A ceiling of 0 is refused: it would refuse every compressed file.
pub fn set_max_decompressed_bytes(limit: Option<u64>) -> Result<()> {
    match limit {
        Some(0) => Err(Error::invalid_argument(
            "the limit on decompressed bytes must be positive",
        )),
        Some(n) => {
            SET.store(n, Ordering::Relaxed);
            Ok(())
        }
        None => {
            SET.store(0, Ordering::Relaxed);
            Ok(())
        }
    }
}

/// The ceiling in force: the one set through the API, else the environment variable,
/// else the default. An environment variable that is not a positive number is an error
/// rather than silently ignored.
pub fn max_decompressed_bytes() -> Result<u64> {
    match SET.load(Ordering::Relaxed) {
        0 => parse_env(std::env::var_os(MAX_DECOMPRESSED_BYTES_ENV).as_deref()),
        n => Ok(n),
    }
}

fn parse_env(value: Option<&std::ffi::OsStr>) -> Result<u64> {
    let Some(value) = value else {
        return Ok(DEFAULT_MAX_DECOMPRESSED_BYTES);
    };
    value
        .to_str()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "{MAX_DECOMPRESSED_BYTES_ENV} must be a positive number of bytes, found '{}'",
                value.to_string_lossy()
            ))
        })
}

/// The ceiling as a `usize` (a ceiling beyond the address space bounds nothing more).
pub(crate) fn max_decompressed_usize() -> Result<usize> {
    Ok(usize::try_from(max_decompressed_bytes()?).unwrap_or(usize::MAX))
}

/// The sentence that ends every over-the-ceiling message: what the ceiling is and how to
/// raise it.
pub(crate) fn ceiling_note(ceiling: u64) -> String {
    format!(
        "the limit on what one file may decompress to is {ceiling} bytes (raise it with \
         {MAX_DECOMPRESSED_BYTES_ENV} or icefloe::limits::set_max_decompressed_bytes)"
    )
}

/// Reads all of `r`, stopping as soon as it yields more than `limit` bytes: `Ok(None)`
/// then. The buffer never grows past `limit`, and growing it is fallible (an allocation
/// failure is an `OutOfMemory` I/O error, not an abort), so neither a lying header nor a
/// bomb can make this allocate more than `limit`.
pub(crate) fn read_at_most(mut r: impl Read, limit: usize) -> std::io::Result<Option<Vec<u8>>> {
    let mut out = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => return Ok(Some(out)),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let Some(read) = chunk.get(..n) else {
            return Err(std::io::Error::other("a decoder read past its buffer"));
        };
        if n > limit - out.len() {
            return Ok(None);
        }
        if out.capacity() - out.len() < n {
            // double, as `Vec` would, but never past the limit
            let want = out
                .capacity()
                .saturating_mul(2)
                .max(out.len() + n)
                .min(limit);
            out.try_reserve_exact(want - out.len())
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::OutOfMemory, e))?;
        }
        out.extend_from_slice(read);
    }
}

/// Decodes zstd frames (Avro's `zstandard` codec, Puffin's `zstd`) as a stream that stops
/// past `limit` bytes (`None`). A frame that declares a content size above the limit is
/// refused before anything is decoded (a valid frame holds exactly what it declares);
/// otherwise the declared size is not trusted for anything. The decoder's window stays
/// within zstd's own default limit (128 MiB).
pub(crate) fn zstd_at_most(raw: &[u8], limit: usize) -> std::io::Result<Option<Vec<u8>>> {
    if let Ok(Some(declared)) = zstd::zstd_safe::get_frame_content_size(raw) {
        if declared > limit as u64 {
            return Ok(None);
        }
    }
    read_at_most(zstd::stream::read::Decoder::with_buffer(raw)?, limit)
}

#[cfg(test)]
#[path = "limits_tests.rs"]
mod bombs;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn the_environment_variable_is_a_positive_number_of_bytes() {
        assert_eq!(parse_env(None).unwrap(), DEFAULT_MAX_DECOMPRESSED_BYTES);
        assert_eq!(parse_env(Some(OsStr::new("1048576"))).unwrap(), 1 << 20);
        assert_eq!(parse_env(Some(OsStr::new(" 42 "))).unwrap(), 42);
        for bad in ["", "0", "-1", "1e9", "256MiB", "lots"] {
            let e = parse_env(Some(OsStr::new(bad))).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument { .. }), "{bad}: {e}");
            assert!(e.to_string().contains(MAX_DECOMPRESSED_BYTES_ENV), "{e}");
        }
    }

    #[test]
    fn read_at_most_stops_past_the_limit_and_never_grows_past_it() {
        let data: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
        let all = read_at_most(&data[..], data.len()).unwrap().unwrap();
        assert_eq!(all, data);
        assert!(all.capacity() <= data.len());
        assert_eq!(read_at_most(&data[..], data.len() - 1).unwrap(), None);
        assert_eq!(read_at_most(&[][..], 0).unwrap(), Some(Vec::new()));
        assert_eq!(read_at_most(&[1u8][..], 0).unwrap(), None);
        // an endless reader is cut off at the limit
        assert_eq!(read_at_most(std::io::repeat(0), 1 << 20).unwrap(), None);
    }
}
