//! The FileIO a REST catalog hands out: one object for the whole catalog (as the `Catalog`
//! trait's `io()` asks), which sends each location to the right store with the right
//! credentials, and refreshes a table's vended credentials before they expire.
//!
//! - A location inside a table whose `loadTable` answer carried a `config` or
//!   `storage-credentials` goes to a FileIO built from the catalog's properties with the
//!   table's `config` laid over them (the table's keys win, as in Java's
//!   `RESTSessionCatalog.tableFileIO`), and over that the `config` of the storage credential
//!   whose `prefix` is the longest one the location starts with (the spec's rule; Java's
//!   `S3FileIO.clientForStoragePath`). The table's entry is replaced each time it is loaded.
//! - Any other location goes to the FileIO of its scheme, built once from the catalog's
//!   properties.
//! - **Refresh.** A table's FileIO whose credential expires (`s3.session-token-expires-at-ms`,
//!   `gcs.oauth2.token-expires-at`, `adls.sas-token-expires-at-ms.<host>`, for the store of
//!   the location) within [`REFRESH_MARGIN`] is replaced before the request: its credentials
//!   are fetched again from the table's `client.refresh-credentials-endpoint` (or
//!   `gcs.oauth2.` / `adls.` ones) when its `config` names one, else from the spec's
//!   `loadCredentials` endpoint when `GET /v1/config` lists it, else by loading the table
//!   again. One refresh runs at a time; a caller that waited for it uses its result. A
//!   refresh that fails is an error naming the table.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::config::{get, merge, Paths};
use super::errors::{protocol_error, Endpoint};
use super::http::{HttpClient, Method, Request};
use super::tables::{storage_credentials_from_json, LoadTableResult, StorageCredential};
use crate::catalog::TableIdent;
use crate::error::{Error, Result};
use crate::io::{
    for_location_with, is_within, scheme_of, FileIO, FileIOProperties, FileStatus, FileVersion,
    IoStats,
};

/// How long before its expiry a vended credential is replaced (Java's
/// `VendedCredentialsProvider` prefetches 5 minutes early too).
pub(super) const REFRESH_MARGIN: Duration = Duration::from_secs(300);

/// The spec's `loadCredentials` endpoint, as `GET /v1/config` lists it.
pub(super) const LOAD_CREDENTIALS_ENDPOINT: &str =
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials";

/// The table `config` keys that name a refresh endpoint (Java's AWS, GCP and Azure
/// properties), relative to the catalog's `uri` or absolute.
const REFRESH_ENDPOINT_KEYS: [&str; 3] = [
    "client.refresh-credentials-endpoint",
    "gcs.oauth2.refresh-credentials-endpoint",
    "adls.refresh-credentials-endpoint",
];

/// How credentials are fetched again: the catalog's own client and paths.
pub(super) struct Refresher {
    pub http: Arc<HttpClient>,
    pub paths: Paths,
    /// The server lists [`LOAD_CREDENTIALS_ENDPOINT`] in its config.
    pub load_credentials: bool,
}

/// The properties of one FileIO (the catalog's, the table's `config`, maybe a storage
/// credential's), and the FileIOs built from them, one per scheme.
struct Scope {
    properties: Vec<(String, String)>,
    parsed: FileIOProperties,
    ios: HashMap<String, Arc<dyn FileIO>>,
}

impl Scope {
    fn new(properties: Vec<(String, String)>) -> Result<Scope> {
        Ok(Scope {
            parsed: FileIOProperties::from_list(&properties)?,
            properties,
            ios: HashMap::new(),
        })
    }

    /// When the credential this scope uses for `location`'s store expires (ms since the
    /// epoch), if it says.
    fn expires_at_ms(&self, location: &str) -> Option<i64> {
        let p = &self.parsed;
        match scheme_lower(location).as_str() {
            "s3" | "s3a" | "s3n" => p.s3.session_token_expires_at_ms,
            "gs" => p.gcs.oauth2_token_expires_at_ms,
            "abfs" | "abfss" | "wasb" | "wasbs" => {
                p.adls.sas_token_expires_at_ms.values().copied().min()
            }
            _ => None,
        }
    }

    fn io(&mut self, location: &str) -> Result<Arc<dyn FileIO>> {
        let scheme = scheme_lower(location);
        if let Some(io) = self.ios.get(&scheme) {
            return Ok(Arc::clone(io));
        }
        let io = for_location_with(location, self.parsed.clone())?;
        self.ios.insert(scheme, Arc::clone(&io));
        Ok(io)
    }
}

fn scheme_lower(location: &str) -> String {
    scheme_of(location)
        .map(str::to_ascii_lowercase)
        .unwrap_or_default()
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

struct TableEntry {
    /// The table's location, without a trailing `/`.
    location: String,
    ident: TableIdent,
    /// The `config` and `storage-credentials` it was built from (compared to skip
    /// rebuilding unchanged ones).
    config: Vec<(String, String)>,
    credentials: Vec<StorageCredential>,
    /// The catalog's properties with `config` over them.
    base: Scope,
    /// Per storage credential: its prefix and scope (`config` and the credential's over
    /// the catalog's).
    scoped: Vec<(String, Scope)>,
}

impl TableEntry {
    /// The scope for `location`: the longest matching credential prefix, else the base.
    fn scope_mut(&mut self, location: &str) -> &mut Scope {
        let best = self
            .scoped
            .iter()
            .enumerate()
            .filter(|(_, (prefix, _))| location.starts_with(prefix.as_str()))
            .max_by_key(|(_, (prefix, _))| prefix.len())
            .map(|(i, _)| i);
        match best {
            Some(i) => &mut self.scoped[i].1,
            None => &mut self.base,
        }
    }
}

/// What routing a location inside a table found.
enum Routed {
    Io(Arc<dyn FileIO>),
    /// The table's credential for the location expires within the margin.
    Expiring {
        ident: TableIdent,
        expires_at_ms: i64,
    },
    /// No table holds the location.
    Outside,
}

/// See the module docs.
pub(super) struct RestFileIO {
    /// The catalog's merged properties (they may hold credentials: never printed).
    properties: Vec<(String, String)>,
    by_scheme: Mutex<HashMap<String, Arc<dyn FileIO>>>,
    tables: Mutex<Vec<TableEntry>>,
    refresher: Option<Refresher>,
    /// Held while a refresh runs, so that concurrent callers make one request.
    refreshing: Mutex<()>,
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
    pub(super) fn new(
        properties: Vec<(String, String)>,
        refresher: Option<Refresher>,
    ) -> Result<RestFileIO> {
        // refuse bad FileIO properties now rather than at the first read
        FileIOProperties::from_list(&properties)?;
        Ok(RestFileIO {
            properties,
            by_scheme: Mutex::new(HashMap::new()),
            tables: Mutex::new(Vec::new()),
            refresher,
            refreshing: Mutex::new(()),
        })
    }

    fn lock_tables(&self) -> MutexGuard<'_, Vec<TableEntry>> {
        // entries are replaced whole: a panic elsewhere cannot leave one half-written
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Remembers the `config` and `storage-credentials` a table was loaded with; later
    /// calls for locations inside `location` use them. Neither forgets the table's entry.
    pub(super) fn set_table_config(
        &self,
        location: &str,
        ident: &TableIdent,
        config: &[(String, String)],
        credentials: &[StorageCredential],
    ) -> Result<()> {
        let location = location.trim_end_matches('/').to_string();
        let mut tables = self.lock_tables();
        if let Some(t) = tables.iter().find(|t| t.location == location) {
            if t.config == config && t.credentials == credentials && &t.ident == ident {
                return Ok(());
            }
        }
        tables.retain(|t| t.location != location);
        if config.is_empty() && credentials.is_empty() {
            return Ok(());
        }
        let base_properties = merge(&self.properties, config);
        let mut scoped = Vec::with_capacity(credentials.len());
        for c in credentials {
            scoped.push((
                c.prefix.clone(),
                Scope::new(merge(&base_properties, &c.config))?,
            ));
        }
        tables.push(TableEntry {
            location,
            ident: ident.clone(),
            config: config.to_vec(),
            credentials: credentials.to_vec(),
            base: Scope::new(base_properties)?,
            scoped,
        });
        Ok(())
    }

    /// The keys of the configuration the FileIO for `location` is built with (values are
    /// not returned: they may be credentials).
    pub(super) fn config_keys_for(&self, location: &str) -> Vec<String> {
        let mut tables = self.lock_tables();
        let entry = tables
            .iter_mut()
            .filter(|t| {
                t.location == location.trim_end_matches('/') || is_within(&t.location, location)
            })
            .max_by_key(|t| t.location.len());
        let mut keys: Vec<String> = match entry {
            Some(t) => t
                .scope_mut(location)
                .properties
                .iter()
                .map(|(k, _)| k.clone())
                .collect(),
            None => self.properties.iter().map(|(k, _)| k.clone()).collect(),
        };
        keys.sort();
        keys.dedup();
        keys
    }

    /// Every FileIO made so far (the tables' and the catalog's by scheme); each table's
    /// FileIO for its own location is made here if it was not yet (that sends no request),
    /// so that the planner sees the fetch concurrency of the table's store before its
    /// first read.
    fn all_ios(&self) -> Vec<Arc<dyn FileIO>> {
        let mut out: Vec<Arc<dyn FileIO>> = Vec::new();
        for t in self.lock_tables().iter_mut() {
            let location = t.location.clone();
            let scopes = std::iter::once(&mut t.base).chain(t.scoped.iter_mut().map(|(_, s)| s));
            for scope in scopes {
                // a location this scope cannot serve is reported when it is used
                let _ = scope.io(&location);
                out.extend(scope.ios.values().cloned());
            }
        }
        if let Ok(by_scheme) = self.by_scheme.lock() {
            out.extend(by_scheme.values().cloned());
        }
        out
    }

    /// The FileIO of the table that holds `location`; with `check_expiry`, `Expiring`
    /// instead when its credential is due for a refresh.
    fn route_table(&self, location: &str, check_expiry: bool) -> Result<Routed> {
        let mut tables = self.lock_tables();
        let Some(t) = tables
            .iter_mut()
            .filter(|t| is_within(&t.location, location))
            .max_by_key(|t| t.location.len())
        else {
            return Ok(Routed::Outside);
        };
        let ident = t.ident.clone();
        let scope = t.scope_mut(location);
        if check_expiry {
            if let Some(expires_at_ms) = scope.expires_at_ms(location) {
                let margin = i64::try_from(REFRESH_MARGIN.as_millis()).unwrap_or(i64::MAX);
                if expires_at_ms.saturating_sub(margin) <= now_ms() {
                    return Ok(Routed::Expiring {
                        ident,
                        expires_at_ms,
                    });
                }
            }
        }
        Ok(Routed::Io(scope.io(location)?))
    }

    /// The FileIO for `location` (refreshing its table's credentials first when due).
    fn route(&self, location: &str) -> Result<Arc<dyn FileIO>> {
        match self.route_table(location, true)? {
            Routed::Io(io) => return Ok(io),
            Routed::Outside => {}
            Routed::Expiring { .. } => {
                let Some(refresher) = &self.refresher else {
                    // nothing to refresh from (a FileIO made without a catalog)
                    if let Routed::Io(io) = self.route_table(location, false)? {
                        return Ok(io);
                    }
                    return self.scheme_io(location);
                };
                let _one_at_a_time = self.refreshing.lock().unwrap_or_else(|p| p.into_inner());
                // a refresh may have finished while this caller waited for the lock
                match self.route_table(location, true)? {
                    Routed::Io(io) => return Ok(io),
                    Routed::Outside => {}
                    Routed::Expiring {
                        ident,
                        expires_at_ms,
                    } => {
                        self.refresh(refresher, location, &ident, expires_at_ms)?;
                        if let Routed::Io(io) = self.route_table(location, false)? {
                            return Ok(io);
                        }
                    }
                }
            }
        }
        self.scheme_io(location)
    }

    fn scheme_io(&self, location: &str) -> Result<Arc<dyn FileIO>> {
        let scheme = scheme_lower(location);
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

    /// Fetches the credentials of `ident` (whose FileIO for `location` expires at
    /// `expires_at_ms`) again and replaces its entry.
    fn refresh(
        &self,
        refresher: &Refresher,
        location: &str,
        ident: &TableIdent,
        expires_at_ms: i64,
    ) -> Result<()> {
        let (table_location, config, endpoint) = {
            let mut tables = self.lock_tables();
            let Some(t) = tables.iter_mut().find(|t| &t.ident == ident) else {
                return Ok(());
            };
            let properties = &t.scope_mut(location).properties;
            let endpoint = REFRESH_ENDPOINT_KEYS
                .iter()
                .find_map(|k| get(properties, k))
                .filter(|e| !e.is_empty())
                .map(str::to_string);
            (t.location.clone(), t.config.clone(), endpoint)
        };
        let fetched = fetch_credentials(refresher, ident, endpoint.as_deref());
        let (config, credentials) = match fetched {
            Ok((Some(config), credentials)) => (config, credentials),
            Ok((None, credentials)) => (config, credentials),
            Err(e @ Error::NoSuchTable { .. }) => return Err(e),
            Err(e) => {
                let when = if expires_at_ms <= now_ms() {
                    "expired"
                } else {
                    "expire"
                };
                return Err(Error::NotAuthorized {
                    message: format!(
                        "table {ident}: its vended credentials {when} at {expires_at_ms} ms \
                         since the epoch and fetching new ones failed: {e}"
                    ),
                });
            }
        };
        self.set_table_config(&table_location, ident, &config, &credentials)
    }
}

/// What a refresh fetched: a new `config` (loadTable only) and the storage credentials.
type Fetched = (Option<Vec<(String, String)>>, Vec<StorageCredential>);

/// Fetches a table's credentials: from `endpoint` (a `*.refresh-credentials-endpoint`),
/// else `loadCredentials` when the server has it, else `loadTable`. The `config` is
/// returned by `loadTable` only (the others answer storage credentials alone).
fn fetch_credentials(r: &Refresher, ident: &TableIdent, endpoint: Option<&str>) -> Result<Fetched> {
    let path = match endpoint {
        Some(e) => Some(relative_endpoint(r.http.base(), e)?),
        None if r.load_credentials => Some(format!("{}/credentials", r.paths.table(ident)?)),
        None => None,
    };
    if let Some(path) = path {
        let req = Request::new(Method::Get, path, Endpoint::Table, ident.to_string());
        let shown = format!("GET /{}", req.path);
        let body = r.http.send(&req)?.json(&shown)?;
        if body.get("storage-credentials").is_none() {
            return Err(protocol_error(&shown, "no 'storage-credentials'"));
        }
        return Ok((None, storage_credentials_from_json(&body, &shown)?));
    }
    let req = Request::new(
        Method::Get,
        r.paths.table(ident)?,
        Endpoint::Table,
        ident.to_string(),
    )
    .delegating();
    let shown = format!("GET /{}", req.path);
    let body = r.http.send(&req)?.json(&shown)?;
    let result = LoadTableResult::from_json(&body, &shown)?;
    Ok((Some(result.config), result.storage_credentials))
}

/// A refresh endpoint as a path relative to the catalog's base URI: relative ones as they
/// are, absolute ones only on the catalog's own server (the catalog's token goes with it).
fn relative_endpoint(base: &str, endpoint: &str) -> Result<String> {
    if endpoint.starts_with("http://") || endpoint.starts_with("https://") {
        return endpoint
            .strip_prefix(base)
            .filter(|rest| rest.starts_with('/'))
            .map(|rest| rest.trim_start_matches('/').to_string())
            .ok_or_else(|| {
                Error::unsupported(format!(
                    "the credentials refresh endpoint {endpoint} is not on the catalog's \
                     server {base}: the catalog's credentials are only sent there"
                ))
            });
    }
    Ok(endpoint.trim_start_matches('/').to_string())
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

    fn list_files(&self, location: &str) -> Result<Vec<crate::io::ListedFile>> {
        self.route(location)?.list_files(location)
    }

    fn delete(&self, location: &str) -> Result<()> {
        self.route(location)?.delete(location)
    }

    /// Each location through the FileIO it routes to, as one `delete_many` per FileIO (so
    /// a table's files still go in bulk requests).
    fn delete_many(&self, locations: &[String], max_concurrent: usize) -> Vec<Result<()>> {
        let mut out: Vec<Option<Result<()>>> = locations.iter().map(|_| None).collect();
        // FileIOs by identity, with the indexes of their locations
        let mut groups: Vec<(Arc<dyn FileIO>, Vec<usize>)> = Vec::new();
        for (i, l) in locations.iter().enumerate() {
            match self.route(l) {
                Ok(io) => match groups.iter_mut().find(|(g, _)| Arc::ptr_eq(g, &io)) {
                    Some((_, idx)) => idx.push(i),
                    None => groups.push((io, vec![i])),
                },
                Err(e) => {
                    if let Some(slot) = out.get_mut(i) {
                        *slot = Some(Err(e));
                    }
                }
            }
        }
        for (io, idx) in groups {
            let group: Vec<String> = idx
                .iter()
                .filter_map(|i| locations.get(*i).cloned())
                .collect();
            for (i, r) in idx.iter().zip(io.delete_many(&group, max_concurrent)) {
                if let Some(slot) = out.get_mut(*i) {
                    *slot = Some(r);
                }
            }
        }
        out.into_iter()
            .zip(locations)
            .map(|(r, l)| r.unwrap_or_else(|| Err(crate::io::not_deleted(l))))
            .collect()
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

    /// The sum over the FileIOs this one routes to.
    fn stats(&self) -> Option<IoStats> {
        let mut sum: Option<IoStats> = None;
        for s in self.all_ios().iter().filter_map(|io| io.stats()) {
            let t = sum.get_or_insert_with(IoStats::default);
            t.requests += s.requests;
            t.bytes_read += s.bytes_read;
            t.bytes_written += s.bytes_written;
            t.cache_hits += s.cache_hits;
        }
        sum
    }

    fn reset_stats(&self) {
        for io in self.all_ios() {
            io.reset_stats();
        }
    }

    /// The largest of the FileIOs this one routes to: a table's manifests are read through
    /// its own (the table's vended config), so a REST table on S3 plans as one on S3.
    fn fetch_concurrency(&self) -> usize {
        self.all_ios()
            .iter()
            .map(|io| io.fetch_concurrency())
            .max()
            .unwrap_or(0)
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

    fn ident() -> TableIdent {
        TableIdent::new(vec!["db".into()], "t")
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn table_config_applies_inside_the_table_only() {
        let io = RestFileIO::new(pairs(&[("s3.endpoint", "http://127.0.0.1:1")]), None).unwrap();
        io.set_table_config(
            "s3://b/wh/db/t/",
            &ident(),
            &pairs(&[("s3.access-key-id", "vended")]),
            &[],
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
        // many deletes go each through the FileIO of its location, one result per file in
        // order; a location no FileIO serves fails alone
        let many: Vec<String> = (0..3)
            .map(|i| format!("file://{}/m{i}.txt", dir.display()))
            .collect();
        for l in &many {
            io.write_new(l, b"x").unwrap();
        }
        let mut asked = many.clone();
        asked.insert(1, "nope://b/x".to_string());
        let results = io.delete_many(&asked, 2);
        assert_eq!(results.len(), 4);
        assert!(results[1].is_err());
        for (l, r) in asked
            .iter()
            .zip(&results)
            .filter(|(l, _)| l.starts_with("file:"))
        {
            assert!(r.is_ok(), "{l}: {r:?}");
            assert!(!io.exists(l).unwrap(), "{l}");
        }
        std::fs::remove_dir_all(dir).unwrap();
        // a bad vended value is refused, naming the property
        let e = io
            .set_table_config(
                "s3://b/wh/db/u",
                &TableIdent::new(vec!["db".into()], "u"),
                &pairs(&[("s3.path-style-access", "maybe")]),
                &[],
            )
            .unwrap_err();
        assert!(e.to_string().contains("s3.path-style-access"), "{e}");
        // the tables' object-store FileIOs are counted and set the planner's fetch
        // concurrency (building them sends no request)
        assert_eq!(
            io.fetch_concurrency(),
            crate::io::properties::DEFAULT_FETCH_CONCURRENCY
        );
        assert_eq!(io.stats(), Some(IoStats::default()));
        // an empty config forgets the table
        io.set_table_config("s3://b/wh/db/t", &ident(), &[], &[])
            .unwrap();
        assert_eq!(io.config_keys_for("s3://b/wh/db/t/x"), vec!["s3.endpoint"]);
    }

    #[test]
    fn storage_credentials_apply_by_longest_prefix_per_location() {
        let io = RestFileIO::new(pairs(&[("s3.endpoint", "http://127.0.0.1:1")]), None).unwrap();
        let creds = vec![
            StorageCredential {
                prefix: "s3".into(),
                config: pairs(&[("s3.access-key-id", "root")]),
            },
            StorageCredential {
                prefix: "s3://b/wh/db/t/data/".into(),
                config: pairs(&[("s3.access-key-id", "data"), ("s3.session-token", "tok")]),
            },
            StorageCredential {
                prefix: "s3://b/wh/db/t/data/deep/".into(),
                config: pairs(&[("s3.access-key-id", "deep")]),
            },
        ];
        io.set_table_config(
            "s3://b/wh/db/t",
            &ident(),
            &pairs(&[("s3.access-key-id", "config"), ("s3.region", "eu-west-1")]),
            &creds,
        )
        .unwrap();
        let key = |loc: &str| {
            let p = io.properties_for(loc).unwrap();
            let k = p.iter().find(|(k, _)| k == "s3.access-key-id").unwrap();
            assert!(
                p.contains(&("s3.region".into(), "eu-west-1".into())),
                "{p:?}"
            );
            k.1.clone()
        };
        assert_eq!(key("s3://b/wh/db/t/metadata/v1.json"), "root");
        assert_eq!(key("s3://b/wh/db/t/data/a.parquet"), "data");
        assert_eq!(key("s3://b/wh/db/t/data/deep/a.parquet"), "deep");
        assert_eq!(
            io.config_keys_for("s3://b/wh/db/t/data/a.parquet"),
            vec![
                "s3.access-key-id",
                "s3.endpoint",
                "s3.region",
                "s3.session-token"
            ]
        );
        // without a matching prefix, the table's config
        let only_data = &creds[1..2];
        io.set_table_config(
            "s3://b/wh/db/t",
            &ident(),
            &pairs(&[("s3.access-key-id", "config"), ("s3.region", "eu-west-1")]),
            only_data,
        )
        .unwrap();
        assert_eq!(key("s3://b/wh/db/t/metadata/v1.json"), "config");
        // credentials alone (no config) keep the entry
        io.set_table_config("s3://b/wh/db/t", &ident(), &[], only_data)
            .unwrap();
        assert_eq!(
            io.config_keys_for("s3://b/wh/db/t/data/x"),
            vec!["s3.access-key-id", "s3.endpoint", "s3.session-token"]
        );
    }

    #[test]
    fn expiry_is_read_for_the_store_of_the_location() {
        let scope = Scope::new(pairs(&[
            ("s3.session-token-expires-at-ms", "1000"),
            ("gcs.oauth2.token-expires-at", "2000"),
            (
                "adls.sas-token-expires-at-ms.a.blob.core.windows.net",
                "3000",
            ),
            (
                "adls.sas-token-expires-at-ms.b.blob.core.windows.net",
                "2500",
            ),
        ]))
        .unwrap();
        assert_eq!(scope.expires_at_ms("s3a://b/k"), Some(1000));
        assert_eq!(scope.expires_at_ms("gs://b/k"), Some(2000));
        assert_eq!(
            scope.expires_at_ms("abfss://c@a.dfs.core.windows.net/k"),
            Some(2500)
        );
        assert_eq!(scope.expires_at_ms("file:///tmp/k"), None);
    }

    #[test]
    fn refresh_endpoints_stay_on_the_catalog_server() {
        let base = "http://127.0.0.1:5/api";
        assert_eq!(
            relative_endpoint(base, "/v1/ns/tables/t/credentials").unwrap(),
            "v1/ns/tables/t/credentials"
        );
        assert_eq!(
            relative_endpoint(base, "http://127.0.0.1:5/api/v1/c").unwrap(),
            "v1/c"
        );
        for elsewhere in [
            "http://127.0.0.1:6/api/v1/c",
            "http://127.0.0.1:5/apix/v1/c",
        ] {
            let e = relative_endpoint(base, elsewhere).unwrap_err();
            assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        }
    }

    #[test]
    fn an_expired_credential_without_a_catalog_is_used_as_it_is() {
        let io = RestFileIO::new(Vec::new(), None).unwrap();
        let dir = std::env::temp_dir().join(format!("icefloe-restio-exp-{}", std::process::id()));
        let table = format!("file://{}", dir.display());
        io.set_table_config(
            &table,
            &ident(),
            &pairs(&[("s3.session-token-expires-at-ms", "1")]),
            &[],
        )
        .unwrap();
        let loc = format!("{table}/a.txt");
        io.write_new(&loc, b"x").unwrap();
        assert_eq!(io.read(&loc).unwrap(), b"x");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
