//! The settings pyarrow's file systems need to reach a location, derived from Iceberg
//! FileIO properties by the same parser (and defaults) as the Rust FileIOs
//! (`icefloe::io::properties`). Python's `executor/files.py` only maps these onto
//! `pyarrow.fs` constructors: no Iceberg property name is read in Python, so the Rust
//! reader of manifests and pyarrow's reader of data files cannot disagree about a table's
//! store.

use std::collections::HashMap;

use icefloe::io::{local_path, scheme_of, FileIOProperties};
use icefloe::Error;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::IntoPyResult;

/// Where a location is for pyarrow: the kind of file system, its constructor's keyword
/// arguments (credentials included), and the path inside it.
#[derive(Debug, PartialEq)]
struct Settings {
    kind: &'static str,
    /// `(name, value)`; values are strings, booleans or floats.
    options: Vec<(&'static str, Value)>,
    path: String,
}

#[derive(Debug, PartialEq)]
enum Value {
    Str(String),
    Bool(bool),
    Float(f64),
    Int(i64),
}

fn bad_location(location: &str, why: &str) -> Error {
    Error::invalid_argument(format!("location {location}: {why}"))
}

/// `scheme://authority/rest` as `(authority, rest)`.
fn authority_and_key(location: &str) -> Result<(&str, &str), Error> {
    let (_, rest) = location
        .split_once("://")
        .ok_or_else(|| bad_location(location, "not a URI (scheme://...)"))?;
    let (authority, key) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.is_empty() {
        return Err(bad_location(location, "no bucket or container"));
    }
    Ok((authority, key.trim_start_matches('/')))
}

/// An endpoint URL as pyarrow takes it: `(scheme, host[:port][/path])`.
fn split_endpoint(endpoint: &str) -> (String, String) {
    match endpoint.split_once("://") {
        Some((scheme, rest)) => (
            scheme.to_ascii_lowercase(),
            rest.trim_end_matches('/').to_string(),
        ),
        None => (
            "https".to_string(),
            endpoint.trim_end_matches('/').to_string(),
        ),
    }
}

fn settings(location: &str, p: &FileIOProperties) -> Result<Settings, Error> {
    let scheme = scheme_of(location).map(str::to_ascii_lowercase);
    match scheme.as_deref() {
        None | Some("file") => Ok(Settings {
            kind: "local",
            options: Vec::new(),
            path: local_path(location).to_string(),
        }),
        Some("s3" | "s3a" | "s3n") => s3(location, p),
        Some("abfs" | "abfss" | "wasb" | "wasbs") => azure(location, p),
        Some("gs") => gcs(location, p),
        Some(other) => Err(Error::unsupported(format!(
            "location {location}: no file system for the scheme '{other}' (supported: file, \
             s3, s3a, s3n, abfs, abfss, wasb, wasbs, gs)"
        ))),
    }
}

fn s3(location: &str, p: &FileIOProperties) -> Result<Settings, Error> {
    let (bucket, key) = authority_and_key(location)?;
    let s = &p.s3;
    // the Rust FileIO's default region, so both sign for the same one
    let region = s.region.clone().unwrap_or_else(|| "us-east-1".to_string());
    let mut options = vec![("region", Value::Str(region.clone()))];
    // pyarrow addresses buckets by path when given an endpoint and by host name otherwise;
    // Iceberg's s3.path-style-access says which, whatever the endpoint
    let endpoint = match (&s.endpoint, s.path_style_access) {
        (Some(e), _) => Some(e.clone()),
        (None, true) => Some(format!("https://s3.{region}.amazonaws.com")),
        (None, false) => None,
    };
    if let Some(endpoint) = endpoint {
        let (scheme, host) = split_endpoint(&endpoint);
        options.push(("scheme", Value::Str(scheme)));
        options.push(("endpoint_override", Value::Str(host)));
    }
    options.push((
        "force_virtual_addressing",
        Value::Bool(!s.path_style_access),
    ));
    if let Some(k) = &s.access_key_id {
        options.push(("access_key", Value::Str(k.expose().to_string())));
    }
    if let Some(k) = &s.secret_access_key {
        options.push(("secret_key", Value::Str(k.expose().to_string())));
    }
    if let Some(k) = &s.session_token {
        options.push(("session_token", Value::Str(k.expose().to_string())));
    }
    if s.allow_anonymous {
        options.push(("anonymous", Value::Bool(true)));
    }
    let (connect, request) = p.s3_timeouts();
    options.push(("connect_timeout", Value::Float(connect.as_secs_f64())));
    options.push(("request_timeout", Value::Float(request.as_secs_f64())));
    // pyarrow's S3 client retries throttling and 5xx answers itself (the AWS SDK's standard
    // strategy, 3 attempts unless told): as many as the Rust FileIO makes, so that the
    // executors survive the throttling the planner survives. Its waits are the SDK's own.
    options.push((
        "retry_max_attempts",
        Value::Int(i64::try_from(p.retry.num_retries.saturating_add(1)).unwrap_or(i64::MAX)),
    ));
    if !matches!(s.encryption, icefloe::io::properties::S3Encryption::Default) {
        // pyarrow's S3FileSystem has no SSE-KMS or SSE-C settings: refuse rather than write
        // data files unencrypted
        return Err(Error::unsupported(format!(
            "location {location}: s3.sse.type kms and custom are not supported for data \
             files written through pyarrow"
        )));
    }
    Ok(Settings {
        kind: "s3",
        options,
        path: format!("{bucket}/{key}"),
    })
}

fn azure(location: &str, p: &FileIOProperties) -> Result<Settings, Error> {
    let (authority, key) = authority_and_key(location)?;
    let (container, host) = authority.split_once('@').ok_or_else(|| {
        bad_location(
            location,
            "expected container@account.dfs.core.windows.net after the scheme",
        )
    })?;
    let a = &p.adls;
    let cs = a.connection_string.clone().unwrap_or_default();
    let account = host.split('.').next().unwrap_or_default().to_string();
    // the endpoint and the credentials chosen as the Rust Azure FileIO chooses them
    let endpoint = a
        .account_endpoints
        .get(&account)
        .or_else(|| a.account_endpoints.get(host))
        .cloned()
        .or_else(|| {
            cs.blob_endpoint
                .clone()
                .filter(|_| cs.account_name.as_deref().is_none_or(|n| n == account))
        });
    let mut options = vec![("account_name", Value::Str(account.clone()))];
    if let Some(endpoint) = endpoint {
        let (scheme, rest) = split_endpoint(&endpoint);
        // an emulator's endpoint names the account in its path (http://127.0.0.1:10000/acct);
        // pyarrow takes the host and adds the account itself
        let authority = rest.split('/').next().unwrap_or_default().to_string();
        options.push(("blob_storage_scheme", Value::Str(scheme.clone())));
        options.push(("blob_storage_authority", Value::Str(authority.clone())));
        options.push(("dfs_storage_scheme", Value::Str(scheme)));
        options.push(("dfs_storage_authority", Value::Str(authority)));
    } else if let Some(protocol) = &cs.protocol {
        options.push(("blob_storage_scheme", Value::Str(protocol.clone())));
    }
    let blob_host = host.replacen(".dfs.", ".blob.", 1);
    let dfs_host = host.replacen(".blob.", ".dfs.", 1);
    let sas = [
        host,
        dfs_host.as_str(),
        blob_host.as_str(),
        account.as_str(),
    ]
    .iter()
    .find_map(|h| a.sas_tokens.get(*h));
    let shared_key = a
        .account_key
        .clone()
        .filter(|_| a.account_name.as_deref().is_none_or(|n| n == account))
        .or_else(|| cs.account_key.clone());
    let sas_option = |s: &icefloe::io::properties::Secret| {
        (
            "sas_token",
            Value::Str(s.expose().trim_start_matches('?').to_string()),
        )
    };
    if let Some(sas) = sas {
        options.push(sas_option(sas));
    } else if let Some(k) = shared_key {
        options.push(("account_key", Value::Str(k.expose().to_string())));
    } else if let Some(sas) = cs.sas_token.as_ref().or_else(|| a.sas_tokens.get("")) {
        options.push(sas_option(sas));
    }
    Ok(Settings {
        kind: "azure",
        options,
        path: format!("{container}/{key}"),
    })
}

fn gcs(location: &str, p: &FileIOProperties) -> Result<Settings, Error> {
    let (bucket, key) = authority_and_key(location)?;
    let g = &p.gcs;
    let mut options = Vec::new();
    if let Some(endpoint) = &g.endpoint {
        let (scheme, host) = split_endpoint(endpoint);
        options.push(("scheme", Value::Str(scheme)));
        options.push(("endpoint_override", Value::Str(host)));
    }
    if let Some(project) = &g.project_id {
        options.push(("project_id", Value::Str(project.clone())));
    }
    if g.no_auth {
        options.push(("anonymous", Value::Bool(true)));
    } else if let Some(token) = &g.oauth2_token {
        options.push(("access_token", Value::Str(token.expose().to_string())));
        // pyarrow needs an expiry with a token; without one, it is taken as valid for an hour
        let expires = g.oauth2_token_expires_at_ms.map_or_else(
            || {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0.0, |d| d.as_secs_f64())
                    + 3600.0
            },
            |ms| ms as f64 / 1000.0,
        );
        options.push(("credential_token_expiration", Value::Float(expires)));
    }
    options.push((
        "retry_time_limit",
        Value::Float(p.request_timeout.as_secs_f64()),
    ));
    Ok(Settings {
        kind: "gcs",
        options,
        path: format!("{bucket}/{key}"),
    })
}

/// `(kind, options, path)`: what pyarrow needs to reach `location` with these Iceberg
/// FileIO properties (`s3.*`, `client.region`, `adls.*`, `gcs.*`, `io.*`, parsed as the
/// Rust FileIOs parse them, defaults included). `kind` is `local`, `s3`, `azure` or `gcs`;
/// `options` are the keyword arguments of `pyarrow.fs.S3FileSystem`, `AzureFileSystem` or
/// `GcsFileSystem` (credentials included: never print them); `path` is the location as
/// that file system names it. Bad property values are `InvalidArgumentError`s naming the
/// property, never its value.
#[pyfunction]
#[pyo3(signature = (location, properties = None))]
fn pyarrow_file_system<'py>(
    py: Python<'py>,
    location: &str,
    properties: Option<HashMap<String, String>>,
) -> PyResult<(&'static str, Bound<'py, PyDict>, String)> {
    let properties = properties.unwrap_or_default();
    let s = FileIOProperties::from_map(&properties)
        .and_then(|p| settings(location, &p))
        .py(py)?;
    let options = PyDict::new(py);
    for (name, value) in s.options {
        match value {
            Value::Str(v) => options.set_item(name, v)?,
            Value::Bool(v) => options.set_item(name, v)?,
            Value::Float(v) => options.set_item(name, v)?,
            Value::Int(v) => options.set_item(name, v)?,
        }
    }
    Ok((s.kind, options, s.path))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pyarrow_file_system, m)?)?;
    Ok(())
}
