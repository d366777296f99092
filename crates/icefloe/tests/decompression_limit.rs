//! The ceiling on decompressed bytes is configurable: through the API, else the environment
//! variable, else the default (`icefloe::limits`). The ceiling is global to the process, so
//! this is its own test binary with one test, which changes it in steps.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::io::Write;

use icefloe::limits::{
    max_decompressed_bytes, set_max_decompressed_bytes, DEFAULT_MAX_DECOMPRESSED_BYTES,
    MAX_DECOMPRESSED_BYTES_ENV,
};
use icefloe::spec::table_metadata::TableMetadata;
use icefloe::Error;

/// 2 MiB of spaces, gzipped: what a metadata file decompresses to before it is parsed.
fn gzip_spaces() -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&vec![b' '; 2 << 20]).unwrap();
    e.finish().unwrap()
}

#[test]
fn the_ceiling_comes_from_the_api_then_the_environment_then_the_default() {
    let gz = gzip_spaces();
    let refused = |e: Error| match e {
        Error::DecompressionLimit { .. } => e.to_string(),
        other => panic!("expected a decompression limit error, got {other:?}"),
    };
    // under the default, the text is read and found not to be a metadata object
    std::env::remove_var(MAX_DECOMPRESSED_BYTES_ENV);
    assert_eq!(
        max_decompressed_bytes().unwrap(),
        DEFAULT_MAX_DECOMPRESSED_BYTES
    );
    let e = TableMetadata::from_bytes(&gz).unwrap_err();
    assert!(matches!(e, Error::InvalidJson { .. }), "{e:?}");

    // the environment variable, read again each time
    std::env::set_var(MAX_DECOMPRESSED_BYTES_ENV, "1048576");
    assert_eq!(max_decompressed_bytes().unwrap(), 1 << 20);
    let message = refused(TableMetadata::from_bytes(&gz).unwrap_err());
    assert!(message.contains("1048576"), "{message}");
    std::env::set_var(MAX_DECOMPRESSED_BYTES_ENV, "a lot");
    let e = TableMetadata::from_bytes(&gz).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument { message } if message.contains(MAX_DECOMPRESSED_BYTES_ENV)),
        "{e:?}"
    );

    // the API wins over the environment
    std::env::set_var(MAX_DECOMPRESSED_BYTES_ENV, "1048576");
    set_max_decompressed_bytes(Some(4 << 20)).unwrap();
    assert_eq!(max_decompressed_bytes().unwrap(), 4 << 20);
    let e = TableMetadata::from_bytes(&gz).unwrap_err();
    assert!(matches!(e, Error::InvalidJson { .. }), "{e:?}");
    set_max_decompressed_bytes(Some(1 << 20)).unwrap();
    refused(TableMetadata::from_bytes(&gz).unwrap_err());
    assert!(matches!(
        set_max_decompressed_bytes(Some(0)),
        Err(Error::InvalidArgument { .. })
    ));
    assert_eq!(max_decompressed_bytes().unwrap(), 1 << 20);

    // unset: the environment again, then the default
    set_max_decompressed_bytes(None).unwrap();
    std::env::set_var(MAX_DECOMPRESSED_BYTES_ENV, "2097151");
    refused(TableMetadata::from_bytes(&gz).unwrap_err());
    std::env::remove_var(MAX_DECOMPRESSED_BYTES_ENV);
    assert_eq!(
        max_decompressed_bytes().unwrap(),
        DEFAULT_MAX_DECOMPRESSED_BYTES
    );
}
