//! The FileIO a REST catalog hands out: one object for the whole catalog (as the `Catalog`
//! trait's `io()` asks), which sends each location to the right store with the right
//! credentials.
//!
//! - A location inside a table whose `loadTable` answer carried a `config` (vended
//!   credentials, an endpoint) goes to a FileIO built from the catalog's properties with
//!   that `config` laid over them (the table's keys win, as in Java's
//!   `RESTSessionCatalog.tableFileIO`). The table's entry is replaced each time it is
//!   loaded, so a refreshed credential replaces the old one.
//! - Any other location goes to the FileIO of its scheme, built once from the catalog's
//!   properties.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use super::config::merge;
use crate::error::{Error, Result};
use crate::io::{
    for_location_with, is_within, scheme_of, FileIO, FileIOProperties, FileStatus, FileVersion,
};

struct TableEntry {
    /// The table's location, without a trailing `/`.
    location: String,
    /// The `config` it was built from (compared to skip rebuilding an unchanged one).
    config: Vec<(String, String)>,
    io: Arc<dyn FileIO>,
}

/// See the module docs.
pub(super) struct RestFileIO {
    /// The catalog's merged properties (they may hold credentials: never printed).
    properties: Vec<(String, String)>,
    by_scheme: Mutex<HashMap<String, Arc<dyn FileIO>>>,
    tables: Mutex<Vec<TableEntry>>,
}

impl std::fmt::Debug for RestFileIO {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tables: Vec<String> = self
            .lock_tables()
            .iter()
            .map(|t| t.location.clone())
            .collect();
        f.debug_struct("RestFileIO")
            .field("tables_with_config", &tables)
            .finish()
    }
}

impl RestFileIO {
    pub(super) fn new(properties: Vec<(String, String)>) -> Result<RestFileIO> {
        // refuse bad FileIO properties now rather than at the first read
        FileIOProperties::from_list(&properties)?;
        Ok(RestFileIO {
            properties,
            by_scheme: Mutex::new(HashMap::new()),
            tables: Mutex::new(Vec::new()),
        })
    }

    fn lock_tables(&self) -> MutexGuard<'_, Vec<TableEntry>> {
        // entries are replaced whole: a panic elsewhere cannot leave one half-written
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Remembers the `config` a table was loaded with; later calls for locations inside
    /// `location` use it. An empty config forgets the table's entry.
    pub(super) fn set_table_config(
        &self,
        location: &str,
        config: &[(String, String)],
    ) -> Result<()> {
        let location = location.trim_end_matches('/').to_string();
        let mut tables = self.lock_tables();
        if let Some(t) = tables.iter().find(|t| t.location == location) {
            if t.config == config {
                return Ok(());
            }
        }
        tables.retain(|t| t.location != location);
        if config.is_empty() {
            return Ok(());
        }
        let props = FileIOProperties::from_list(&merge(&self.properties, config))?;
        let io = for_location_with(&location, props)?;
        tables.push(TableEntry {
            location,
            config: config.to_vec(),
            io,
        });
        Ok(())
    }

    /// The keys of the configuration the FileIO for `location` is built with (values are
    /// not returned: they may be credentials).
    pub(super) fn config_keys_for(&self, location: &str) -> Vec<String> {
        let tables = self.lock_tables();
        let config = tables
            .iter()
            .filter(|t| {
                t.location == location.trim_end_matches('/') || is_within(&t.location, location)
            })
            .max_by_key(|t| t.location.len())
            .map_or(&[][..], |t| t.config.as_slice());
        let mut keys: Vec<String> = merge(&self.properties, config)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        keys.sort();
        keys
    }

    /// The FileIO for `location`.
    fn route(&self, location: &str) -> Result<Arc<dyn FileIO>> {
        {
            let tables = self.lock_tables();
            if let Some(t) = tables
                .iter()
                .filter(|t| is_within(&t.location, location))
                .max_by_key(|t| t.location.len())
            {
                return Ok(Arc::clone(&t.io));
            }
        }
        let scheme = scheme_of(location)
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        let mut by_scheme = self
            .by_scheme
            .lock()
            .map_err(|_| Error::unsupported("the REST catalog's FileIO cache was poisoned"))?;
        if let Some(io) = by_scheme.get(&scheme) {
            return Ok(Arc::clone(io));
        }
        let io = for_location_with(location, FileIOProperties::from_list(&self.properties)?)?;
        by_scheme.insert(scheme, Arc::clone(&io));
        Ok(io)
    }
}

impl FileIO for RestFileIO {
    fn read(&self, location: &str) -> Result<Vec<u8>> {
        self.route(location)?.read(location)
    }

    fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()> {
        self.route(location)?.write_new(location, bytes)
    }

    fn exists(&self, location: &str) -> Result<bool> {
        self.route(location)?.exists(location)
    }

    fn list(&self, location: &str) -> Result<Vec<String>> {
        self.route(location)?.list(location)
    }

    fn delete(&self, location: &str) -> Result<()> {
        self.route(location)?.delete(location)
    }

    fn read_range(&self, location: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.route(location)?.read_range(location, offset, len)
    }

    fn file_size(&self, location: &str) -> Result<u64> {
        self.route(location)?.file_size(location)
    }

    fn status(&self, location: &str) -> Result<FileStatus> {
        self.route(location)?.status(location)
    }

    fn properties_for(&self, location: &str) -> Option<Vec<(String, String)>> {
        // the same routing as reads and writes (the table's vended config over the
        // catalog's), the table's own location included: executors are handed the
        // properties of the table, for every file under it
        let inside = format!("{}/_", location.trim_end_matches('/'));
        self.route(&inside).ok()?.properties_for(location)
    }

    fn supports_conditional_replace(&self) -> bool {
        // per location in truth; a catalog that swaps files is not this one
        false
    }

    fn replace_if_match(
        &self,
        location: &str,
        bytes: &[u8],
        expected: &FileVersion,
    ) -> Result<FileVersion> {
        self.route(location)?
            .replace_if_match(location, bytes, expected)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn table_config_applies_inside_the_table_only() {
        let io =
            RestFileIO::new(vec![("s3.endpoint".into(), "http://127.0.0.1:1".into())]).unwrap();
        io.set_table_config(
            "s3://b/wh/db/t/",
            &[("s3.access-key-id".into(), "vended".into())],
        )
        .unwrap();
        let keys = io.config_keys_for("s3://b/wh/db/t/metadata/v1.json");
        assert_eq!(keys, vec!["s3.access-key-id", "s3.endpoint"]);
        let props = io.properties_for("s3://b/wh/db/t/data/f.parquet").unwrap();
        assert!(props.contains(&("s3.access-key-id".into(), "vended".into())));
        assert!(props.contains(&("s3.endpoint".into(), "http://127.0.0.1:1".into())));
        assert_eq!(io.properties_for("s3://b/wh/db/t").unwrap(), props);
        let other = io.properties_for("s3://b/wh/db/t2/f.parquet").unwrap();
        assert_eq!(
            other,
            vec![("s3.endpoint".into(), "http://127.0.0.1:1".into())]
        );
        assert_eq!(io.config_keys_for("s3://b/wh/db/t2/x"), vec!["s3.endpoint"]);
        assert!(!format!("{io:?}").contains("vended"));
        // local locations work through the scheme's FileIO
        let dir = std::env::temp_dir().join(format!("icefloe-restio-{}", std::process::id()));
        let loc = format!("file://{}/a.txt", dir.display());
        io.write_new(&loc, b"x").unwrap();
        assert_eq!(io.read(&loc).unwrap(), b"x");
        io.delete(&loc).unwrap();
        std::fs::remove_dir_all(dir).unwrap();
        // a bad vended value is refused, naming the property
        let e = io
            .set_table_config(
                "s3://b/wh/db/u",
                &[("s3.path-style-access".into(), "maybe".into())],
            )
            .unwrap_err();
        assert!(e.to_string().contains("s3.path-style-access"), "{e}");
        // an empty config forgets the table
        io.set_table_config("s3://b/wh/db/t", &[]).unwrap();
        assert_eq!(io.config_keys_for("s3://b/wh/db/t/x"), vec!["s3.endpoint"]);
    }
}
