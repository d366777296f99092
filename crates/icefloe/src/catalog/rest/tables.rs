//! Table requests: list (every page), exists (HEAD), load, register, rename, drop and
//! purge, and commits (creates included) with the requirements and updates of `commit`.
//!
//! A `LoadTableResult` (the answer of load, register and commit) gives the metadata
//! location, the metadata itself, a `config` for the table's FileIO (vended credentials)
//! and `storage-credentials`, which the FileIO chooses per location (`file_io`).
//!
//! Load, register and the staged create (the requests the spec gives the `data-access`
//! parameter) ask for vended credentials with `X-Iceberg-Access-Delegation` (`http`).

use std::sync::Arc;

use serde_json::Value;

use super::commit::CommitRequest;
use super::config::{ident_from_json, ident_json};
use super::errors::{protocol_error, Endpoint};
use super::http::{Method, Request};
use super::namespaces::{next_page_token, string_map_from_json, MAX_PAGES};
use super::RestCatalog;
use crate::catalog::{TableCommit, TableIdent, TableState};
use crate::error::{Error, Result};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::spec::sort::SortOrder;
use crate::spec::table_metadata::TableMetadata;

/// A `StorageCredential`: a `config` for the locations that start with `prefix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StorageCredential {
    pub prefix: String,
    /// Credentials: never printed (the `Debug` of the FileIO that holds them shows none).
    pub config: Vec<(String, String)>,
}

/// The `storage-credentials` of an answer (`LoadTableResult`, `LoadCredentialsResponse`).
pub(super) fn storage_credentials_from_json(
    body: &Value,
    shown: &str,
) -> Result<Vec<StorageCredential>> {
    let creds = match body.get("storage-credentials") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(protocol_error(
                shown,
                "'storage-credentials' is not an array",
            ))
        }
    };
    let mut out = Vec::with_capacity(creds.len());
    for (i, c) in creds.iter().enumerate() {
        let prefix = c.get("prefix").and_then(Value::as_str).ok_or_else(|| {
            protocol_error(shown, &format!("storage-credentials[{i}] has no 'prefix'"))
        })?;
        let field = format!("storage-credentials[{i}].config");
        out.push(StorageCredential {
            prefix: prefix.to_string(),
            config: string_map_from_json(c.get("config"), &field, shown)?,
        });
    }
    Ok(out)
}

/// A parsed `LoadTableResult`.
#[derive(Debug, Clone)]
pub(super) struct LoadTableResult {
    pub metadata_location: Option<String>,
    pub metadata: TableMetadata,
    /// `config`: FileIO properties for the table (vended credentials, an endpoint).
    pub config: Vec<(String, String)>,
    /// Chosen per location by the FileIO (the longest matching prefix).
    pub storage_credentials: Vec<StorageCredential>,
}

impl LoadTableResult {
    pub(super) fn from_json(body: &Value, shown: &str) -> Result<LoadTableResult> {
        let metadata = body
            .get("metadata")
            .ok_or_else(|| protocol_error(shown, "no 'metadata'"))?;
        let metadata = TableMetadata::from_json_value(metadata).map_err(|e| e.in_file(shown))?;
        let metadata_location = body
            .get("metadata-location")
            .and_then(Value::as_str)
            .map(str::to_string);
        Ok(LoadTableResult {
            metadata_location,
            metadata,
            config: string_map_from_json(body.get("config"), "config", shown)?,
            storage_credentials: storage_credentials_from_json(body, shown)?,
        })
    }
}

impl RestCatalog {
    fn table_request(&self, method: Method, ident: &TableIdent) -> Result<Request> {
        Ok(Request::new(
            method,
            self.paths.table(ident)?,
            Endpoint::Table,
            ident.to_string(),
        ))
    }

    /// Turns a `LoadTableResult` into the table's state, and hands its `config` and
    /// `storage-credentials` to the catalog's FileIO for the table's location.
    fn accept(
        &self,
        result: LoadTableResult,
        ident: &TableIdent,
        shown: &str,
    ) -> Result<TableState> {
        let location = result
            .metadata_location
            .ok_or_else(|| protocol_error(shown, "no 'metadata-location'"))?;
        self.io.set_table_config(
            &result.metadata.location,
            ident,
            &result.config,
            &result.storage_credentials,
        )?;
        Ok(TableState {
            metadata_location: location,
            metadata: Arc::new(result.metadata),
        })
    }

    fn send_for_table(&self, req: &Request, ident: &TableIdent) -> Result<TableState> {
        let shown = format!("{} /{}", req.method.as_str(), req.path);
        let body = self.http.send(req)?.json(&shown)?;
        self.accept(LoadTableResult::from_json(&body, &shown)?, ident, &shown)
    }

    pub(super) fn rest_list_tables(
        &self,
        namespace: &[String],
        views: bool,
    ) -> Result<Vec<TableIdent>> {
        let path = if views {
            self.paths.views(namespace)?
        } else {
            self.paths.tables(namespace)?
        };
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut req = Request::new(
                Method::Get,
                path.clone(),
                Endpoint::Namespace,
                namespace.join("."),
            );
            if let Some(t) = &token {
                req = req.query("pageToken", t.clone());
            }
            if let Some(size) = &self.page_size {
                req = req.query("pageSize", size.clone());
            }
            let shown = format!("GET /{path}");
            let body = self.http.send(&req)?.json(&shown)?;
            let list = body
                .get("identifiers")
                .and_then(Value::as_array)
                .ok_or_else(|| protocol_error(&shown, "no 'identifiers' array"))?;
            for (i, id) in list.iter().enumerate() {
                out.push(ident_from_json(id, &format!("identifiers[{i}]"), &shown)?);
            }
            token = next_page_token(&body);
            if token.is_none() {
                out.sort();
                return Ok(out);
            }
        }
        Err(Error::ServiceFailure {
            message: format!("GET /{path}: more than {MAX_PAGES} pages"),
        })
    }

    pub(super) fn rest_table_exists(&self, ident: &TableIdent) -> Result<bool> {
        match self.http.send(&self.table_request(Method::Head, ident)?) {
            Ok(_) => Ok(true),
            Err(Error::NoSuchTable { .. } | Error::NoSuchNamespace { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub(super) fn rest_load_table(&self, ident: &TableIdent) -> Result<TableState> {
        self.send_for_table(&self.table_request(Method::Get, ident)?.delegating(), ident)
    }

    pub(super) fn rest_register_table(
        &self,
        ident: &TableIdent,
        metadata_location: &str,
    ) -> Result<TableState> {
        let req = Request::new(
            Method::Post,
            self.paths.register(&ident.namespace)?,
            Endpoint::CreateTable,
            ident.to_string(),
        )
        .json(serde_json::json!({
            "name": ident.name,
            "metadata-location": metadata_location,
        }))
        .delegating();
        self.send_for_table(&req, ident)
    }

    pub(super) fn rest_rename(
        &self,
        from: &TableIdent,
        to: &TableIdent,
        views: bool,
    ) -> Result<()> {
        // the paths check both identifiers can be sent
        self.paths.table(from)?;
        self.paths.table(to)?;
        let (path, endpoint) = if views {
            (self.paths.rename_view(), Endpoint::View)
        } else {
            (self.paths.rename_table(), Endpoint::Table)
        };
        let req =
            Request::new(Method::Post, path, endpoint, from.to_string()).json(serde_json::json!({
                "source": ident_json(from),
                "destination": ident_json(to),
            }));
        self.http.send(&req)?;
        Ok(())
    }

    pub(super) fn rest_drop_table(&self, ident: &TableIdent, purge: bool) -> Result<()> {
        let mut req = self.table_request(Method::Delete, ident)?;
        if purge {
            req = req.query("purgeRequested", "true");
        }
        self.http.send(&req)?;
        Ok(())
    }

    /// Commits `metadata` as the table's next metadata: a create (`assert-create`) without
    /// a base, else the updates from `base` with their requirements.
    pub(super) fn rest_commit_table(
        &self,
        ident: &TableIdent,
        base: Option<&TableState>,
        metadata: &TableMetadata,
    ) -> Result<TableState> {
        let commit = match base {
            None => CommitRequest::for_create(ident, metadata)?,
            Some(b) => CommitRequest::for_update(ident, &b.metadata, metadata)?,
        };
        let mut req = self
            .table_request(Method::Post, ident)?
            .json(commit.to_json(ident));
        req.endpoint = Endpoint::Commit;
        let shown = format!("POST /{}", req.path);
        let resp = self.http.send(&req)?;
        // the server accepted the commit: an answer that cannot be read leaves its outcome
        // unknown to the caller, who must then keep the files it wrote
        resp.json(&shown)
            .and_then(|b| LoadTableResult::from_json(&b, &shown))
            .and_then(|r| self.accept(r, ident, &shown))
            .map_err(|e| Error::CommitStateUnknown {
                message: format!(
                    "{shown}: the server accepted the commit but its answer cannot be used: {e}"
                ),
            })
    }

    /// `POST /v1/{prefix}/transactions/commit`: every table's requirements and updates in
    /// one `CommitTransactionRequest`, which the server applies to all tables or none. The
    /// answer (204) has no metadata: callers load the tables again.
    pub(super) fn rest_commit_transaction(&self, commits: &[TableCommit]) -> Result<()> {
        if commits.is_empty() {
            return Ok(());
        }
        let mut changes = Vec::with_capacity(commits.len());
        for (i, c) in commits.iter().enumerate() {
            if commits[..i].iter().any(|o| o.ident == c.ident) {
                return Err(Error::invalid_argument(format!(
                    "table {} appears twice in one multi-table commit",
                    c.ident
                )));
            }
            // the identifier is checked as a path would be: the server reads it as one
            self.paths.table(&c.ident)?;
            let commit = match &c.base {
                None => CommitRequest::for_create(&c.ident, &c.metadata)?,
                Some(b) => CommitRequest::for_update(&c.ident, &b.metadata, &c.metadata)?,
            };
            changes.push(commit.to_json(&c.ident));
        }
        let names: Vec<String> = commits.iter().map(|c| c.ident.to_string()).collect();
        let req = Request::new(
            Method::Post,
            self.paths.commit_transaction(),
            Endpoint::Transaction,
            names.join(", "),
        )
        .json(serde_json::json!({ "table-changes": changes }));
        self.http.send(&req)?;
        Ok(())
    }

    /// `POST .../tables` with `stage-create: true`: the metadata the server would give the
    /// table (nothing is created); its `config` is handed to the FileIO for the table's
    /// location.
    pub(super) fn rest_stage_create(
        &self,
        ident: &TableIdent,
        schema: &Schema,
        spec: &PartitionSpec,
        sort_order: &SortOrder,
        location: Option<&str>,
        properties: &[(String, String)],
    ) -> Result<TableMetadata> {
        let mut body = serde_json::json!({
            "name": ident.name,
            "schema": schema.to_json(),
            "partition-spec": spec.to_json(),
            "write-order": sort_order.to_json(),
            "stage-create": true,
            "properties": properties
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect::<serde_json::Map<_, _>>(),
        });
        if let Some(l) = location {
            body["location"] = Value::from(l);
        }
        let req = Request::new(
            Method::Post,
            self.paths.tables(&ident.namespace)?,
            Endpoint::CreateTable,
            ident.to_string(),
        )
        .json(body)
        // the staged table's data is written before it exists: with vended credentials
        .delegating();
        let shown = format!("POST /{} (stage-create)", req.path);
        let body = self.http.send(&req)?.json(&shown)?;
        let result = LoadTableResult::from_json(&body, &shown)?;
        self.io.set_table_config(
            &result.metadata.location,
            ident,
            &result.config,
            &result.storage_credentials,
        )?;
        Ok(result.metadata)
    }

    /// Where the server would place a new table: asks with a staged create (nothing is
    /// written) of an empty schema.
    pub(super) fn rest_staged_location(&self, ident: &TableIdent) -> Result<String> {
        let req = Request::new(
            Method::Post,
            self.paths.tables(&ident.namespace)?,
            Endpoint::CreateTable,
            ident.to_string(),
        )
        .json(serde_json::json!({
            "name": ident.name,
            "schema": {"type": "struct", "schema-id": 0, "fields": []},
            "stage-create": true,
        }))
        .delegating();
        let shown = format!("POST /{}", req.path);
        let body = self.http.send(&req)?.json(&shown)?;
        Ok(LoadTableResult::from_json(&body, &shown)?.metadata.location)
    }
}
