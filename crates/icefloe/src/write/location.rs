//! Where new data files go: Java's `LocationProviders` (1.11). The default provider puts a
//! file under `<data location>/<partition path>/`; with `write.object-storage.enabled` the
//! `ObjectStoreLocationProvider` puts it under directories derived from a Murmur3 hash of
//! its name (spreading files over object-store key prefixes), e.g.
//! `<data location>/0101/1100/1010/10110011/<partition path>/<name>`.

use crate::error::{Error, Result};
use crate::spec::transform::murmur3_32;

pub const WRITE_DATA_PATH: &str = "write.data.path";
pub const OBJECT_STORAGE_PATH: &str = "write.object-storage.path";
pub const LEGACY_DATA_PATH: &str = "write.folder-storage.path";
pub const OBJECT_STORAGE_ENABLED: &str = "write.object-storage.enabled";
pub const OBJECT_STORAGE_PARTITIONED_PATHS: &str = "write.object-storage.partitioned-paths";

/// The data location and naming scheme of one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationProvider {
    storage: String,
    object_storage: Option<ObjectStore>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct ObjectStore {
    /// The table's last two path segments, when the data location is outside the table.
    context: Option<String>,
    partitioned_paths: bool,
}

fn prop<'a>(props: &'a [(String, String)], key: &str) -> Option<&'a str> {
    props
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn strip_slash(s: &str) -> String {
    s.trim_end_matches('/').to_string()
}

impl LocationProvider {
    /// The provider of a table at `table_location` with `properties`; `data_location`
    /// (when given) replaces the configured data location. As Java 1.11, the deprecated
    /// `write.object-storage.path` and `write.folder-storage.path` are refused when they
    /// would be used (no `write.data.path`).
    pub fn new(
        table_location: &str,
        properties: &[(String, String)],
        data_location: Option<&str>,
    ) -> Result<LocationProvider> {
        let table_location = strip_slash(table_location);
        let object_store = prop(properties, OBJECT_STORAGE_ENABLED)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let configured = prop(properties, WRITE_DATA_PATH);
        if configured.is_none() && data_location.is_none() {
            let legacy: &[&str] = if object_store {
                &[OBJECT_STORAGE_PATH, LEGACY_DATA_PATH]
            } else {
                &[LEGACY_DATA_PATH]
            };
            if let Some(key) = legacy.iter().find(|k| prop(properties, k).is_some()) {
                return Err(Error::invalid_argument(format!(
                    "Property '{key}' has been deprecated and will be removed in 2.0.0, use '{WRITE_DATA_PATH}' instead."
                )));
            }
        }
        let storage = strip_slash(
            &data_location
                .or(configured)
                .map(str::to_string)
                .unwrap_or_else(|| format!("{table_location}/data")),
        );
        let object_storage = object_store.then(|| ObjectStore {
            context: (!storage.starts_with(&table_location)).then(|| path_context(&table_location)),
            partitioned_paths: prop(properties, OBJECT_STORAGE_PARTITIONED_PATHS)
                .is_none_or(|v| !v.eq_ignore_ascii_case("false")),
        });
        Ok(LocationProvider {
            storage,
            object_storage,
        })
    }

    /// The data location: new files go under it (below the hash directories with
    /// `write.object-storage.enabled`), so every file a write made is found by listing it.
    pub fn data_location(&self) -> &str {
        &self.storage
    }

    /// The location of a new data file named `file_name` in the partition at
    /// `partition_path` (empty for an unpartitioned spec).
    pub fn new_data_location(&self, partition_path: &str, file_name: &str) -> String {
        let Some(os) = &self.object_storage else {
            return match partition_path {
                "" => format!("{}/{file_name}", self.storage),
                p => format!("{}/{p}/{file_name}", self.storage),
            };
        };
        let name = match partition_path {
            p if os.partitioned_paths && !p.is_empty() => format!("{p}/{file_name}"),
            _ => file_name.to_string(),
        };
        let hash = hash_dirs(&name);
        match (&os.context, os.partitioned_paths) {
            (Some(c), _) => format!("{}/{hash}/{c}/{name}", self.storage),
            (None, true) => format!("{}/{hash}/{name}", self.storage),
            (None, false) => format!("{}/{hash}-{name}", self.storage),
        }
    }
}

/// Java's `ObjectStoreLocationProvider.computeHash`: the low 20 bits of the Murmur3 hash
/// of the UTF-8 name, in binary, as three directories of 4 digits and one of 8.
fn hash_dirs(name: &str) -> String {
    let bits = format!("{:032b}", murmur3_32(name.as_bytes()) as u32 | 0x8000_0000);
    let low = &bits[bits.len() - 20..];
    format!(
        "{}/{}/{}/{}",
        &low[0..4],
        &low[4..8],
        &low[8..12],
        &low[12..]
    )
}

/// Hadoop's `Path(location)`: the parent's name and the name, `parent/name` (or the name
/// alone at the root).
fn path_context(table_location: &str) -> String {
    let path = table_location
        .split_once("://")
        .map_or(table_location, |(_, rest)| rest);
    let mut parts = path.rsplit('/').filter(|s| !s.is_empty());
    match (parts.next(), parts.next()) {
        (Some(name), Some(parent)) => format!("{parent}/{name}"),
        (Some(name), None) => name.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn props(kv: &[(&str, &str)]) -> Vec<(String, String)> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn data_location_is_the_root_of_new_files() {
        let p = LocationProvider::new("s3://b/t/", &props(&[]), None).unwrap();
        assert_eq!(p.data_location(), "s3://b/t/data");
        let p = LocationProvider::new("s3://b/t", &props(&[(WRITE_DATA_PATH, "s3://o/d/")]), None)
            .unwrap();
        assert_eq!(p.data_location(), "s3://o/d");
        let p = LocationProvider::new(
            "s3://b/t",
            &props(&[
                (WRITE_DATA_PATH, "s3://o/d"),
                (OBJECT_STORAGE_ENABLED, "true"),
            ]),
            Some("s3://x/y/"),
        )
        .unwrap();
        assert_eq!(p.data_location(), "s3://x/y");
        assert!(p.new_data_location("", "f").starts_with("s3://x/y/"));
    }

    #[test]
    fn default_locations() {
        let p = LocationProvider::new("s3://b/wh/db/t/", &[], None).unwrap();
        assert_eq!(
            p.new_data_location("", "f.parquet"),
            "s3://b/wh/db/t/data/f.parquet"
        );
        assert_eq!(
            p.new_data_location("c=1", "f.parquet"),
            "s3://b/wh/db/t/data/c=1/f.parquet"
        );
        let p = LocationProvider::new("s3://b/t", &props(&[(WRITE_DATA_PATH, "s3://o/d/")]), None)
            .unwrap();
        assert_eq!(p.new_data_location("", "f.parquet"), "s3://o/d/f.parquet");
    }

    #[test]
    fn object_store_locations_hash_the_name() {
        let on = [(OBJECT_STORAGE_ENABLED, "true")];
        let p = LocationProvider::new("s3://b/wh/db/t", &props(&on), None).unwrap();
        let loc = p.new_data_location("c=1", "f.parquet");
        let hash = hash_dirs("c=1/f.parquet");
        assert_eq!(loc, format!("s3://b/wh/db/t/data/{hash}/c=1/f.parquet"));
        let dirs: Vec<&str> = hash.split('/').collect();
        assert_eq!(
            dirs.iter().map(|d| d.len()).collect::<Vec<_>>(),
            vec![4, 4, 4, 8]
        );
        // outside the table: the table's last two segments follow the hash
        let p = LocationProvider::new(
            "s3://b/wh/db/t",
            &props(&[on[0], (WRITE_DATA_PATH, "s3://o/x")]),
            None,
        )
        .unwrap();
        assert_eq!(
            p.new_data_location("", "f.parquet"),
            format!("s3://o/x/{}/db/t/f.parquet", hash_dirs("f.parquet"))
        );
        let p = LocationProvider::new(
            "s3://b/wh/db/t",
            &props(&[on[0], (OBJECT_STORAGE_PARTITIONED_PATHS, "false")]),
            None,
        )
        .unwrap();
        assert_eq!(
            p.new_data_location("c=1", "f.parquet"),
            format!("s3://b/wh/db/t/data/{}-f.parquet", hash_dirs("f.parquet"))
        );
        // deprecated locations are refused, as Java 1.11 refuses them
        for key in [OBJECT_STORAGE_PATH, LEGACY_DATA_PATH] {
            let e = LocationProvider::new("s3://b/t", &props(&[on[0], (key, "s3://o/x")]), None);
            assert!(matches!(e, Err(Error::InvalidArgument { .. })));
        }
    }
}
