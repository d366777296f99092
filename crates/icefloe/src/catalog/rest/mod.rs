//! A client of the Iceberg REST catalog (the REST OpenAPI spec), as a [`Catalog`], so that
//! scans and commits work on a REST catalog as on the embedded ones.
//!
//! - `config`: properties, `GET /v1/config` merging, `prefix`, `namespace-separator`, paths;
//! - `http`: requests, the owned runtime, bounded answers, transport errors;
//! - `auth`: bearer token, OAuth2 client credentials with refresh, `header.*`;
//! - `errors`: the spec's `ErrorModel` and statuses as typed errors;
//! - `namespaces`, `tables`, `views`: the requests;
//! - `commit`: a commit (base and new metadata) as `requirements` and `updates`;
//! - `file_io`: the catalog's FileIO, which uses each table's vended `config` and
//!   `storage-credentials`, and refreshes them before they expire.
//!
//! SigV4 request signing (`rest.sigv4-enabled`, for AWS Glue's and S3 Tables' REST
//! endpoints) is not supported: such a catalog is refused when it opens.
//!
//! The server owns the pointer: a commit is one `POST` that the server applies if its
//! requirements hold (409 `CommitFailed` otherwise, which the commit layer retries on a
//! refreshed base; 500/502/503/504 or a lost answer are `CommitStateUnknown`). The server
//! writes the metadata file, so this catalog writes none.
//!
//! Views are created (`CreateViewRequest`) and replaced (`CommitViewRequest`, see `views`).
//! Several tables commit together through `POST /v1/{prefix}/transactions/commit`
//! ([`Catalog::commit_tables`]). Purging asks the server to purge
//! (`purgeRequested=true`); the server decides what it deletes, so the result counts nothing.

mod auth;
mod commit;
mod config;
mod errors;
mod file_io;
mod http;
mod namespaces;
mod tables;
mod views;

use std::sync::Arc;

use self::config::{get, ConfigResponse, Paths};
use self::errors::Endpoint;
use self::file_io::{Refresher, RestFileIO, LOAD_CREDENTIALS_ENDPOINT};
use self::http::{HttpClient, Method, Request};
use super::{
    Catalog, Namespace, PurgeResult, PurgeScope, TableCommit, TableIdent, TableState, ViewState,
};
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::spec::table_metadata::TableMetadata;
use crate::spec::view_metadata::ViewMetadata;

pub use self::commit::CommitRequest;

/// A catalog served over the Iceberg REST protocol.
pub struct RestCatalog {
    name: String,
    /// Shared with the FileIO, which refreshes vended credentials through it.
    http: Arc<HttpClient>,
    paths: Paths,
    /// `rest.page-size` (Java's name), sent as `pageSize` on list requests.
    page_size: Option<String>,
    io: Arc<RestFileIO>,
}

impl std::fmt::Debug for RestCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestCatalog")
            .field("name", &self.name)
            .field("uri", &self.http.base())
            .field("paths", &self.paths)
            .finish()
    }
}

impl RestCatalog {
    /// Connects to the catalog at the `uri` property: asks `GET /v1/config` (with the
    /// `warehouse` property as `?warehouse=`) and merges its answer with `properties`.
    pub fn open(name: &str, properties: &[(String, String)]) -> Result<RestCatalog> {
        refuse_sigv4(properties)?;
        let first = HttpClient::new(properties)?;
        let mut req = Request::new(
            Method::Get,
            Paths::config().to_string(),
            Endpoint::Config,
            String::new(),
        );
        if let Some(w) = get(properties, "warehouse").filter(|w| !w.is_empty()) {
            req = req.query("warehouse", w);
        }
        let shown = format!("GET /{}", Paths::config());
        let config = ConfigResponse::from_json(&first.send(&req)?.json(&shown)?, &shown)?;
        let merged = config.merge(properties);
        refuse_sigv4(&merged)?;
        // the server may override anything, the uri and credentials included
        let http = Arc::new(HttpClient::new(&merged)?);
        let page_size = match get(&merged, "rest.page-size") {
            Some(v) if v.trim().parse::<u32>().is_ok_and(|n| n > 0) => Some(v.trim().to_string()),
            Some(v) => {
                return Err(Error::invalid_argument(format!(
                    "rest.page-size must be a positive integer, not '{v}'"
                )))
            }
            None => None,
        };
        let paths = Paths::new(&merged);
        let refresher = Refresher {
            http: Arc::clone(&http),
            paths: paths.clone(),
            load_credentials: config
                .endpoints
                .iter()
                .any(|e| e == LOAD_CREDENTIALS_ENDPOINT),
        };
        Ok(RestCatalog {
            name: name.to_string(),
            paths,
            page_size,
            io: Arc::new(RestFileIO::new(merged, Some(refresher))?),
            http,
        })
    }

    /// The keys of the properties the FileIO for `location` uses (the catalog's merged
    /// properties, with the `config` of the table that holds `location` laid over them).
    /// Values are not returned: they may be credentials.
    pub fn file_io_keys(&self, location: &str) -> Vec<String> {
        self.io.config_keys_for(location)
    }
}

/// `rest.sigv4-enabled=true` asks for AWS SigV4-signed catalog requests (Glue's and S3
/// Tables' REST endpoints), which this client does not do: refused rather than sent
/// unsigned (the server would answer 403 to every request).
fn refuse_sigv4(properties: &[(String, String)]) -> Result<()> {
    match get(properties, "rest.sigv4-enabled").map(|v| v.trim().to_ascii_lowercase()) {
        Some(v) if v == "true" => Err(Error::unsupported(
            "rest.sigv4-enabled=true: signing REST catalog requests with AWS SigV4 (AWS Glue, \
             S3 Tables) is not supported; use a catalog that takes a bearer token or OAuth2",
        )),
        Some(v) if v == "false" => Ok(()),
        Some(v) => Err(Error::invalid_argument(format!(
            "rest.sigv4-enabled must be true or false, not '{v}'"
        ))),
        None => Ok(()),
    }
}

impl Catalog for RestCatalog {
    fn name(&self) -> &str {
        &self.name
    }

    fn io(&self) -> Arc<dyn FileIO> {
        Arc::clone(&self.io) as Arc<dyn FileIO>
    }

    /// `<namespace location>/<name>` when the namespace has a `location` property (Java's
    /// catalogs report their default there), else the location the server gives a staged
    /// create (which writes nothing).
    fn default_table_location(&self, ident: &TableIdent) -> Result<String> {
        super::check_location_part(&ident.name, &ident.to_string())?;
        let props = self.rest_namespace_properties(&ident.namespace)?;
        match get(&props, "location").filter(|l| !l.is_empty()) {
            Some(l) => Ok(format!("{}/{}", l.trim_end_matches('/'), ident.name)),
            None => self.rest_staged_location(ident),
        }
    }

    fn create_namespace(
        &self,
        namespace: &[String],
        properties: &[(String, String)],
    ) -> Result<()> {
        self.rest_create_namespace(namespace, properties)
    }

    fn list_namespaces(&self, parent: &[String]) -> Result<Vec<Namespace>> {
        self.rest_list_namespaces(parent)
    }

    fn namespace_exists(&self, namespace: &[String]) -> Result<bool> {
        self.rest_namespace_exists(namespace)
    }

    fn namespace_properties(&self, namespace: &[String]) -> Result<Vec<(String, String)>> {
        self.rest_namespace_properties(namespace)
    }

    fn update_namespace_properties(
        &self,
        namespace: &[String],
        removals: &[String],
        updates: &[(String, String)],
    ) -> Result<()> {
        self.rest_update_namespace_properties(namespace, removals, updates)
    }

    fn drop_namespace(&self, namespace: &[String]) -> Result<()> {
        self.rest_drop_namespace(namespace)
    }

    fn list_tables(&self, namespace: &[String]) -> Result<Vec<TableIdent>> {
        self.rest_list_tables(namespace, false)
    }

    fn table_exists(&self, ident: &TableIdent) -> Result<bool> {
        self.rest_table_exists(ident)
    }

    fn load_table(&self, ident: &TableIdent) -> Result<TableState> {
        self.rest_load_table(ident)
    }

    fn register_table(&self, ident: &TableIdent, metadata_location: &str) -> Result<TableState> {
        self.rest_register_table(ident, metadata_location)
    }

    fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        self.rest_rename(from, to, false)
    }

    fn drop_table(&self, ident: &TableIdent) -> Result<()> {
        self.rest_drop_table(ident, false)
    }

    /// Asks the server to drop the table and purge its files (`purgeRequested=true`).
    /// The server decides which files go (`scope` cannot be passed on), so the result
    /// counts none.
    fn purge_table(&self, ident: &TableIdent, _scope: PurgeScope) -> Result<PurgeResult> {
        self.rest_drop_table(ident, true)?;
        Ok(PurgeResult::default())
    }

    /// A staged create (`stage-create: true`): the server's metadata for the new table,
    /// whose `config` (vended credentials) the FileIO then uses for the table's location,
    /// so that its first data files can be written before it exists.
    fn stage_create(
        &self,
        ident: &TableIdent,
        schema: &crate::spec::schema::Schema,
        spec: &crate::spec::partition::PartitionSpec,
        sort_order: &crate::spec::sort::SortOrder,
        location: Option<&str>,
        properties: &[(String, String)],
    ) -> Result<Option<TableMetadata>> {
        self.rest_stage_create(ident, schema, spec, sort_order, location, properties)
            .map(Some)
    }

    fn commit_table(
        &self,
        ident: &TableIdent,
        base: Option<&TableState>,
        metadata: TableMetadata,
    ) -> Result<TableState> {
        self.rest_commit_table(ident, base, &metadata)
    }

    fn list_views(&self, namespace: &[String]) -> Result<Vec<TableIdent>> {
        self.rest_list_tables(namespace, true)
    }

    fn view_exists(&self, ident: &TableIdent) -> Result<bool> {
        match self.http.send(&self.view_request(Method::Head, ident)?) {
            Ok(_) => Ok(true),
            Err(Error::NoSuchView { .. } | Error::NoSuchNamespace { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn load_view(&self, ident: &TableIdent) -> Result<ViewState> {
        self.rest_load_view(ident)
    }

    fn rename_view(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        self.rest_rename(from, to, true)
    }

    fn drop_view(&self, ident: &TableIdent) -> Result<()> {
        self.http.send(&self.view_request(Method::Delete, ident)?)?;
        Ok(())
    }

    fn commit_view(
        &self,
        ident: &TableIdent,
        base: Option<&ViewState>,
        metadata: ViewMetadata,
    ) -> Result<ViewState> {
        self.rest_commit_view(ident, base, &metadata)
    }

    fn commit_tables(&self, commits: Vec<TableCommit>) -> Result<()> {
        self.rest_commit_transaction(&commits)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::catalog::testing::props;

    #[test]
    fn sigv4_is_refused_before_any_request() {
        // nothing listens on port 1: the refusal comes first
        let e = RestCatalog::open(
            "glue",
            &props(&[
                ("uri", "http://127.0.0.1:1"),
                ("rest.sigv4-enabled", "TRUE"),
                ("rest.signing-region", "us-east-1"),
                ("rest.signing-name", "glue"),
            ]),
        )
        .unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        assert!(e.to_string().contains("SigV4"), "{e}");
        let e = RestCatalog::open(
            "glue",
            &props(&[("uri", "http://127.0.0.1:1"), ("rest.sigv4-enabled", "yes")]),
        )
        .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
        assert!(refuse_sigv4(&props(&[("rest.sigv4-enabled", "false")])).is_ok());
    }
}
