//! Choosing the FileIO for a location by its scheme. This is the one place (with
//! [`super::LocalFileIO`] itself) that decides a location is local (DESIGN.md, principle 10).

use std::collections::HashMap;
use std::sync::Arc;

use super::properties::FileIOProperties;
use super::{FileIO, LocalFileIO};
use crate::error::{Error, Result};

/// The URI scheme of a location (`s3`, `file`, ...), or `None` for a plain path. A drive
/// letter (`C:\...`) or a colon later in a path is not a scheme.
pub fn scheme_of(location: &str) -> Option<&str> {
    let i = location.find(':')?;
    let scheme = &location[..i];
    let valid = scheme.len() > 1
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

/// The FileIO for `location` (a table or warehouse location), configured by `properties`
/// (the catalog's, merged with a table's vended `config`; see [`FileIOProperties`]).
///
/// - plain paths and `file:` URIs: [`LocalFileIO`];
/// - `s3://`, `s3a://`, `s3n://`: S3; `abfs[s]://`, `wasb[s]://`: Azure Blob / ADLS Gen2;
///   `gs://`: GCS;
/// - anything else: [`Error::Unsupported`] naming the scheme.
pub fn for_location(
    location: &str,
    properties: &HashMap<String, String>,
) -> Result<Arc<dyn FileIO>> {
    for_location_with(location, FileIOProperties::from_map(properties)?)
}

/// [`for_location`] with properties already parsed.
pub fn for_location_with(location: &str, properties: FileIOProperties) -> Result<Arc<dyn FileIO>> {
    let scheme = scheme_of(location).map(str::to_ascii_lowercase);
    let cache = properties.manifest_cache.clone();
    // object stores only: a local read is as fast as a copy out of the cache would be
    let cached = |io: Arc<dyn FileIO>| -> Arc<dyn FileIO> {
        if cache.enabled {
            Arc::new(super::cache::CachingFileIO::new(io, cache.clone()))
        } else {
            io
        }
    };
    match scheme.as_deref() {
        None | Some("file") => Ok(Arc::new(LocalFileIO)),
        Some("s3" | "s3a" | "s3n") => s3(location, properties).map(cached),
        Some("abfs" | "abfss" | "wasb" | "wasbs") => azure(location, properties).map(cached),
        Some("gs") => gcs(location, properties).map(cached),
        Some(other) => Err(Error::unsupported(format!(
            "location {location}: no file IO for the scheme '{other}' (supported: file, s3, \
             s3a, s3n, abfs, abfss, wasb, wasbs, gs)"
        ))),
    }
}

#[cfg(not(all(feature = "s3", feature = "azure", feature = "gcs")))]
fn not_built(location: &str, feature: &str) -> Error {
    Error::unsupported(format!(
        "location {location}: this build of icefloe has no {feature} support (cargo feature \
         '{feature}')"
    ))
}

#[cfg(feature = "s3")]
fn s3(_location: &str, properties: FileIOProperties) -> Result<Arc<dyn FileIO>> {
    use super::object_store_io::{ObjectStoreFileIO, StoreKind};
    Ok(Arc::new(ObjectStoreFileIO::new(StoreKind::S3, properties)?))
}

#[cfg(not(feature = "s3"))]
fn s3(location: &str, _properties: FileIOProperties) -> Result<Arc<dyn FileIO>> {
    Err(not_built(location, "s3"))
}

#[cfg(feature = "azure")]
fn azure(_location: &str, properties: FileIOProperties) -> Result<Arc<dyn FileIO>> {
    use super::object_store_io::{ObjectStoreFileIO, StoreKind};
    Ok(Arc::new(ObjectStoreFileIO::new(
        StoreKind::Azure,
        properties,
    )?))
}

#[cfg(not(feature = "azure"))]
fn azure(location: &str, _properties: FileIOProperties) -> Result<Arc<dyn FileIO>> {
    Err(not_built(location, "azure"))
}

#[cfg(feature = "gcs")]
fn gcs(_location: &str, properties: FileIOProperties) -> Result<Arc<dyn FileIO>> {
    Ok(Arc::new(super::gcs::GcsFileIO::new(properties)?))
}

#[cfg(not(feature = "gcs"))]
fn gcs(location: &str, _properties: FileIOProperties) -> Result<Arc<dyn FileIO>> {
    Err(not_built(location, "gcs"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_file_io_by_scheme() {
        let none = HashMap::new();
        assert_eq!(scheme_of("/a/b:c"), None);
        assert_eq!(scheme_of("C:/x"), None);
        assert_eq!(scheme_of("s3a://b/k"), Some("s3a"));
        for loc in ["/tmp/wh", "relative/wh", "file:///tmp/wh", "file:/tmp/wh"] {
            let io = for_location(loc, &none).unwrap();
            // the local FileIO answers for a missing local file without error
            assert!(!io.exists(&format!("{loc}/no-such-file")).unwrap(), "{loc}");
        }
        for loc in ["hdfs://nn/wh", "oss://b/k", "http://h/x"] {
            let Err(e) = for_location(loc, &none) else {
                panic!("{loc} has a file IO");
            };
            assert!(matches!(e, Error::Unsupported { .. }), "{e}");
            assert!(e.to_string().contains(loc), "{e}");
        }
        let mut bad = HashMap::new();
        bad.insert("s3.path-style-access".to_string(), "maybe".to_string());
        assert!(matches!(
            for_location("s3://b/wh", &bad),
            Err(Error::InvalidArgument { .. })
        ));
        #[cfg(all(feature = "s3", feature = "azure", feature = "gcs"))]
        for loc in [
            "s3://b/wh",
            "s3n://b/wh",
            "abfss://c@a.dfs.core.windows.net/wh",
            "wasbs://c@a.blob.core.windows.net/wh",
            "gs://b/wh",
        ] {
            // building a FileIO sends no request: credentials are only used by calls
            for_location(loc, &none).unwrap();
        }
    }
}
