//! Opening a catalog from properties, with PyIceberg's property names:
//!
//! - `type`: `sql` (default), `filesystem`, or `rest` (an Iceberg REST catalog at `uri`;
//!   see [`super::rest`] for its properties: `warehouse`, `token`, `credential`, `header.*`...);
//! - `uri`: the SQLite database (`sqlite:///relative.db`, `sqlite:////absolute.db`,
//!   `jdbc:sqlite:path` or a path), for `sql`;
//! - `warehouse`: where new tables go (`file:///…` or a local path);
//! - `sqlite.busy-timeout-ms`: how long a writer waits for another's lock (default 30 s).
//!
//! With neither `uri` nor `warehouse`, the embedded default: `catalog.db` and
//! `warehouse/` in the folder `$ICEFLOE_HOME`, or `./icefloe-warehouse` when unset.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::filesystem::FileSystemCatalog;
use super::sql::{SqlCatalog, DEFAULT_BUSY_TIMEOUT};
use super::Catalog;
use crate::error::{Error, Result};
use crate::io::{local_path, FileIO, FileIOProperties};

/// The environment variable naming the folder of the embedded default catalog.
pub const ICEFLOE_HOME: &str = "ICEFLOE_HOME";
/// The folder of the embedded default catalog when `ICEFLOE_HOME` is unset.
pub const DEFAULT_HOME: &str = "icefloe-warehouse";

fn get<'a>(properties: &'a [(String, String)], key: &str) -> Option<&'a str> {
    properties
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|e| Error::io(path.display().to_string(), e))
}

/// A warehouse location as tables will record it: `file:` and other URIs as given, a
/// local path made absolute (a relative location would mean something else to every
/// other process that opens the catalog).
fn warehouse_location(warehouse: &str) -> Result<String> {
    if warehouse.contains(':') {
        return Ok(warehouse.trim_end_matches('/').to_string());
    }
    Ok(absolute(Path::new(warehouse))?
        .display()
        .to_string()
        .trim_end_matches('/')
        .to_string())
}

/// The file IO for a warehouse, chosen by its scheme and configured by the catalog's
/// properties (`s3.*`, `gcs.*`, `adls.*`, `io.*`).
fn io_for(warehouse: &str, properties: &[(String, String)]) -> Result<Arc<dyn FileIO>> {
    crate::io::for_location_with(warehouse, FileIOProperties::from_list(properties)?)
}

#[cfg(feature = "rest")]
fn open_rest(name: &str, properties: &[(String, String)]) -> Result<Arc<dyn Catalog>> {
    Ok(Arc::new(super::rest::RestCatalog::open(name, properties)?))
}

#[cfg(not(feature = "rest"))]
fn open_rest(name: &str, _properties: &[(String, String)]) -> Result<Arc<dyn Catalog>> {
    Err(Error::unsupported(format!(
        "catalog '{name}': this build of icefloe has no REST catalog (cargo feature 'rest')"
    )))
}

/// The folder of the embedded default catalog.
pub fn default_home() -> PathBuf {
    std::env::var_os(ICEFLOE_HOME)
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_HOME), PathBuf::from)
}

/// Opens the catalog `name` described by `properties` (see the module docs).
pub fn load_catalog(name: &str, properties: &[(String, String)]) -> Result<Arc<dyn Catalog>> {
    let kind = get(properties, "type").unwrap_or("sql");
    // a REST catalog's warehouse is whatever its server takes it to be (often a name)
    if kind.eq_ignore_ascii_case("rest") {
        return open_rest(name, properties);
    }
    let (uri, warehouse) = match (get(properties, "uri"), get(properties, "warehouse")) {
        (None, None) => {
            let home = absolute(&default_home())?;
            (
                Some(format!("sqlite:///{}", home.join("catalog.db").display())),
                format!("file://{}", home.join("warehouse").display()),
            )
        }
        (uri, Some(w)) => (uri.map(str::to_string), warehouse_location(w)?),
        (Some(_), None) => {
            return Err(Error::invalid_argument(format!(
                "catalog '{name}' needs a 'warehouse' property (where new tables go)"
            )))
        }
    };
    let io = io_for(&warehouse, properties)?;
    match kind.to_ascii_lowercase().as_str() {
        "sql" => {
            let uri = uri.ok_or_else(|| {
                Error::invalid_argument(format!(
                    "SQL catalog '{name}' needs a 'uri' property (e.g. sqlite:///catalog.db)"
                ))
            })?;
            let timeout = match get(properties, "sqlite.busy-timeout-ms") {
                Some(ms) => Duration::from_millis(ms.parse().map_err(|_| {
                    Error::invalid_argument(format!(
                        "sqlite.busy-timeout-ms must be a number of milliseconds, not '{ms}'"
                    ))
                })?),
                None => DEFAULT_BUSY_TIMEOUT,
            };
            Ok(Arc::new(SqlCatalog::open_with_timeout(
                name, &uri, &warehouse, io, timeout,
            )?))
        }
        "filesystem" | "hadoop" => {
            // The file-system catalog still commits by local renames and hard links; on an
            // object store it will commit with FileIO::replace_if_match (not wired yet).
            if crate::io::scheme_of(&warehouse).is_some_and(|s| s != "file") {
                return Err(Error::unsupported(format!(
                    "catalog '{name}': the filesystem catalog needs a local warehouse for now, \
                     not '{warehouse}'"
                )));
            }
            let root = local_path(&warehouse);
            std::fs::create_dir_all(root).map_err(|e| Error::io(&warehouse, e))?;
            Ok(Arc::new(FileSystemCatalog::new(name, &warehouse, io)))
        }
        other => Err(Error::unsupported(format!(
            "catalog type '{other}' (supported: sql, filesystem, rest)"
        ))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::catalog::testing::props;
    use crate::catalog::testing::scratch_dir;

    #[test]
    fn opens_sql_catalogs_by_properties() {
        let dir = scratch_dir("load");
        let uri = format!("sqlite:///{}", dir.join("c.db").display());
        let wh = format!("file://{}", dir.join("wh").display());
        let cat = load_catalog("x", &props(&[("uri", &uri), ("warehouse", &wh)])).unwrap();
        assert_eq!(cat.name(), "x");
        assert!(dir.join("c.db").is_file());
        let t = crate::catalog::TableIdent::parse("db.t").unwrap();
        assert_eq!(
            cat.default_table_location(&t).unwrap(),
            format!("{wh}/db/t")
        );
        for bad in [
            props(&[("uri", &uri)]),
            props(&[("warehouse", &wh)]),
            props(&[("uri", &uri), ("warehouse", "hdfs://nn/w")]),
            props(&[("type", "filesystem"), ("warehouse", "s3://b/w")]),
            props(&[
                ("uri", &uri),
                ("warehouse", "s3://b/w"),
                ("s3.path-style-access", "maybe"),
            ]),
            props(&[("uri", &uri), ("warehouse", &wh), ("type", "rest")]),
            props(&[
                ("uri", &uri),
                ("warehouse", &wh),
                ("sqlite.busy-timeout-ms", "soon"),
            ]),
        ] {
            assert!(load_catalog("x", &bad).is_err(), "{bad:?}");
        }
        // An S3 warehouse opens (the FileIO connects on first use).
        #[cfg(feature = "s3")]
        {
            let cat = load_catalog("x", &props(&[("uri", &uri), ("warehouse", "s3://b/w")]));
            assert!(cat.is_ok(), "{:?}", cat.err());
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
