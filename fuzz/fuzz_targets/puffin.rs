//! Puffin files and deletion vector blobs from arbitrary bytes: footer parsing, blob reads
//! and DV deserialisation may fail, never panic. Decompressed blobs and footers are bounded
//! at a low ceiling (see bombs.rs).
#![no_main]

use icefloe::io::FileIO;
use icefloe::puffin::{
    read_deletion_vector_blob, BlobMetadata, CompressionCodec, DeletionVector, FileMetadata,
    PuffinReader,
};
use icefloe::{Error, Result};
use libfuzzer_sys::fuzz_target;

mod bombs;

/// One file in memory.
struct OneFile(Vec<u8>);

impl FileIO for OneFile {
    fn read(&self, _location: &str) -> Result<Vec<u8>> {
        Ok(self.0.clone())
    }

    fn write_new(&self, location: &str, _bytes: &[u8]) -> Result<()> {
        Err(Error::invalid_argument(format!("read-only: {location}")))
    }

    fn exists(&self, _location: &str) -> Result<bool> {
        Ok(true)
    }

    fn list(&self, _location: &str) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    fn delete(&self, location: &str) -> Result<()> {
        Err(Error::invalid_argument(format!("read-only: {location}")))
    }
}

/// A Puffin file of one zstd blob of `stored` bytes.
fn puffin_with_zstd_blob(stored: &[u8]) -> Vec<u8> {
    let mut out = b"PFA1".to_vec();
    out.extend_from_slice(stored);
    let metadata = FileMetadata {
        blobs: vec![BlobMetadata {
            blob_type: "apache-datasketches-theta-v1".into(),
            fields: vec![1],
            snapshot_id: 1,
            sequence_number: 1,
            offset: 4,
            length: stored.len() as u64,
            compression_codec: Some(CompressionCodec::Zstd),
            properties: vec![],
        }],
        properties: vec![],
    };
    let payload = metadata.to_json().to_string();
    out.extend_from_slice(b"PFA1");
    out.extend_from_slice(payload.as_bytes());
    out.extend_from_slice(&(payload.len() as i32).to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(b"PFA1");
    out
}

/// zstd blobs claiming far more than the ceiling (by their content size, or by RLE runs):
/// refused.
fn check_bombs() {
    let ceiling_mib = (bombs::FUZZ_CEILING >> 20) as usize;
    for (what, stored) in [
        ("zstd blob declaring 1 TiB", bombs::zstd_rle(1, Some(1 << 40))),
        ("zstd blob of 4 x ceiling", bombs::zstd_rle(32 * ceiling_mib, None)),
    ] {
        let io = OneFile(puffin_with_zstd_blob(&stored));
        let reader = PuffinReader::open(&io, "mem://bomb.puffin", None).expect("a valid footer");
        bombs::assert_refused(what, reader.read_blob(&reader.blobs()[0]));
    }
}

fuzz_target!(|data: &[u8]| {
    bombs::setup(check_bombs);
    // a DV blob on its own (framing, magic, CRC, then the portable roaring bitmaps), and the
    // bitmaps without framing, which the CRC would otherwise shield
    let _ = DeletionVector::deserialize(data);
    let _ = DeletionVector::deserialize_vector(data);
    // the footer's JSON payload on its own
    let _ = FileMetadata::from_json_bytes(data);
    // a whole Puffin file: footer, then every blob it describes
    let io = OneFile(data.to_vec());
    if let Ok(reader) = PuffinReader::open(&io, "mem://fuzz.puffin", None) {
        for blob in reader.blobs() {
            let _ = reader.read_blob(blob);
            let _ = read_deletion_vector_blob(&reader, blob);
        }
    }
});
