//! Puffin files and deletion vector blobs from arbitrary bytes: footer parsing, blob reads
//! and DV deserialisation may fail, never panic.
#![no_main]

use icefloe::io::FileIO;
use icefloe::puffin::{read_deletion_vector_blob, DeletionVector, FileMetadata, PuffinReader};
use icefloe::{Error, Result};
use libfuzzer_sys::fuzz_target;

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

fuzz_target!(|data: &[u8]| {
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
