//! The key-value metadata of a manifest or manifest list file, as written in its Avro
//! header (`schema`, `partition-spec`, `format-version`, ...), without the Avro-internal
//! `avro.*` keys. Useful to inspect a file exactly as a writer left it: for example Java
//! 1.11 does not write `schema-id` although the spec lists it for v2 manifests.

use super::avro::Container;
use crate::error::{Error, Result};
use crate::io::FileIO;

/// The user key-value metadata of the Avro file at `location`, in file order.
pub fn read_key_value_metadata(io: &dyn FileIO, location: &str) -> Result<Vec<(String, String)>> {
    let bytes = io.read(location)?;
    key_value_metadata(&bytes).map_err(|e| e.in_file(location))
}

/// Like [`read_key_value_metadata`], from the file's bytes.
pub fn key_value_metadata(bytes: &[u8]) -> Result<Vec<(String, String)>> {
    let container = Container::open(bytes)?;
    container
        .metadata
        .iter()
        .filter(|(k, _)| !k.starts_with("avro."))
        .map(|(k, v)| {
            String::from_utf8(v.clone())
                .map(|s| (k.clone(), s))
                .map_err(|_| Error::invalid_metadata(k.as_str(), "metadata value is not UTF-8"))
        })
        .collect()
}
