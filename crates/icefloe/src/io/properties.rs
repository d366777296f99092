//! The properties that configure the object-store FileIOs, named as the other Iceberg
//! clients name them (Java's `S3FileIO`/`GCSFileIO`/`ADLSFileIO`, PyIceberg), so that a
//! catalog's `config` (and vended credentials) can be passed through unchanged.
//!
//! | property | meaning | default |
//! |---|---|---|
//! | `s3.endpoint` | S3-compatible endpoint URL | AWS |
//! | `s3.access-key-id`, `s3.secret-access-key`, `s3.session-token` | static credentials | the `AWS_*` environment |
//! | `s3.region`, `client.region` | signing region | `us-east-1` |
//! | `s3.path-style-access` | `bucket` in the path, not the host name | `false` |
//! | `s3.allow-anonymous` | unsigned requests | `false` |
//! | `s3.connect-timeout`, `s3.request-timeout` | seconds (decimals allowed) | `io.*` below |
//! | `s3.sse.type` (`none`, `s3`, `kms`, `custom`), `s3.sse.key` | server-side encryption | none |
//! | `s3.session-token-expires-at-ms` | when vended credentials expire (reported on auth errors) | |
//! | `gcs.oauth2.token` | OAuth2 access token | the Google environment |
//! | `gcs.project-id` | project (informational: objects are addressed by bucket) | |
//! | `gcs.service.host` (`gcs.service.path`) | endpoint URL, e.g. an emulator | Google |
//! | `gcs.no-auth` | unsigned requests | `false` |
//! | `gcs.oauth2.token-expires-at` | ms since epoch | |
//! | `adls.account-name`, `adls.account-key` | shared-key credentials | |
//! | `adls.sas-token.<account host>`, `adls.sas-token` | SAS token | |
//! | `adls.connection-string` | an Azure connection string | |
//! | `adls.connection-string.<account>` | Java's form: the account's endpoint URL | |
//! | `adls.sas-token-expires-at-ms.<account host>` | ms since epoch | |
//! | `io.connect-timeout`, `io.request-timeout` | seconds, every store | 10, 120 |
//! | `io.retry.num-retries` (`s3.retry.num-retries`) | retries after the first attempt | 5 |
//! | `io.retry.min-wait-ms`, `io.retry.max-wait-ms` (`s3.retry.*`) | backoff bounds | 100, 5000 |
//! | `io.multipart.threshold-bytes` | larger writes are multipart uploads | 8 MiB |
//! | `io.multipart.part-size-bytes` (`s3.multipart.part-size-bytes`) | part size | 8 MiB |
//! | `io.manifest.cache-enabled` | cache manifests, manifest lists and metadata JSON by location ([`super::cache`]) | `false` |
//! | `io.manifest.cache.expiration-interval-ms` | drop an entry not read for this long | 60000 |
//! | `io.manifest.cache.max-total-bytes` | the cache's bound | 104857600 |
//! | `io.manifest.cache.max-content-length` | larger files are not cached | 8388608 |
//! | `io.fetch-concurrency` | files a scan planner fetches at once from the store | 16 |
//! | `s3.delete.batch-size` | keys per bulk delete request (S3 `DeleteObjects`, at most 1000; Azure batches hold at most 256) | 250 |

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use crate::error::{Error, Result};

/// A credential: never printed by `Debug`, and there is no `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }
    /// The credential itself, for the client that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Server-side encryption of S3 writes (`s3.sse.type`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum S3Encryption {
    /// `none` or `s3`: what the bucket does by default (SSE-S3 on AWS).
    #[default]
    Default,
    /// `kms` with `s3.sse.key` as the key id.
    Kms(String),
    /// `custom` (SSE-C) with `s3.sse.key` as the base64 key.
    Customer(Secret),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct S3Properties {
    pub endpoint: Option<String>,
    pub access_key_id: Option<Secret>,
    pub secret_access_key: Option<Secret>,
    pub session_token: Option<Secret>,
    pub region: Option<String>,
    pub path_style_access: bool,
    pub allow_anonymous: bool,
    pub connect_timeout: Option<Duration>,
    pub request_timeout: Option<Duration>,
    pub encryption: S3Encryption,
    /// `s3.session-token-expires-at-ms`.
    pub session_token_expires_at_ms: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcsProperties {
    pub oauth2_token: Option<Secret>,
    pub oauth2_token_expires_at_ms: Option<i64>,
    pub project_id: Option<String>,
    pub endpoint: Option<String>,
    pub no_auth: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdlsProperties {
    pub account_name: Option<String>,
    pub account_key: Option<Secret>,
    /// `adls.sas-token.<account host>`, by host (`adls.sas-token` alone is stored under "").
    pub sas_tokens: HashMap<String, Secret>,
    /// `adls.sas-token-expires-at-ms.<account host>`.
    pub sas_token_expires_at_ms: HashMap<String, i64>,
    /// `adls.connection-string`, parsed.
    pub connection_string: Option<ConnectionString>,
    /// `adls.connection-string.<account>`: endpoint URLs by account name.
    pub account_endpoints: HashMap<String, String>,
}

/// The parts of an Azure storage connection string that matter for Blob access.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionString {
    pub account_name: Option<String>,
    pub account_key: Option<Secret>,
    pub sas_token: Option<Secret>,
    pub blob_endpoint: Option<String>,
    /// `DefaultEndpointsProtocol` and `EndpointSuffix`, for an account without `BlobEndpoint`.
    pub protocol: Option<String>,
    pub endpoint_suffix: Option<String>,
}

/// Retries with exponential backoff and jitter (throttling: 429/503/SlowDown; other 5xx;
/// connection errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 disables retries).
    pub num_retries: usize,
    pub min_wait: Duration,
    pub max_wait: Duration,
}

/// Everything an object-store FileIO is configured with, parsed from the string map of a
/// catalog (or a table's vended `config`). Unknown keys are ignored: the map also holds
/// catalog properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileIOProperties {
    pub s3: S3Properties,
    pub gcs: GcsProperties,
    pub adls: AdlsProperties,
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    pub retry: RetryPolicy,
    pub multipart_threshold: u64,
    pub multipart_part_size: u64,
    /// `io.manifest.cache*`.
    pub manifest_cache: super::cache::ManifestCacheConfig,
    /// `io.fetch-concurrency`: how many manifests a planner reads at once from the store.
    pub fetch_concurrency: usize,
    /// `s3.delete.batch-size`: keys per bulk delete request (Java's `S3FileIO` default).
    pub delete_batch_size: usize,
    /// The FileIO properties these were parsed from (keys of [`FILE_IO_PREFIXES`] only, so
    /// no catalog token or OAuth2 secret), in order: what another client of the same store
    /// is configured with (pyarrow on Spark executors). Values are `Secret`s.
    pub source: Vec<(String, Secret)>,
}

/// The key prefixes of FileIO properties (the rest of a catalog's map is not the FileIO's).
pub const FILE_IO_PREFIXES: [&str; 5] = ["s3.", "client.region", "gcs.", "adls.", "io."];

/// Multipart thresholds: below S3's 5 MiB minimum part size uploads fail, so smaller values
/// are refused when parsed.
pub const MIN_PART_SIZE: u64 = 5 * 1024 * 1024;
pub const DEFAULT_MULTIPART_THRESHOLD: u64 = 8 * 1024 * 1024;
/// Manifests fetched at once from an object store (docs/benchmarks.md, "Planning on S3").
pub const DEFAULT_FETCH_CONCURRENCY: usize = 16;
/// Keys per bulk delete request: Java's `s3.delete.batch-size` default (S3 takes at most
/// 1000 keys per `DeleteObjects`).
pub const DEFAULT_DELETE_BATCH_SIZE: usize = 250;
pub const MAX_DELETE_BATCH_SIZE: usize = 1000;

impl Default for FileIOProperties {
    fn default() -> Self {
        FileIOProperties {
            s3: S3Properties::default(),
            gcs: GcsProperties::default(),
            adls: AdlsProperties::default(),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(120),
            retry: RetryPolicy {
                num_retries: 5,
                min_wait: Duration::from_millis(100),
                max_wait: Duration::from_secs(5),
            },
            multipart_threshold: DEFAULT_MULTIPART_THRESHOLD,
            multipart_part_size: DEFAULT_MULTIPART_THRESHOLD,
            manifest_cache: super::cache::ManifestCacheConfig::default(),
            fetch_concurrency: DEFAULT_FETCH_CONCURRENCY,
            delete_batch_size: DEFAULT_DELETE_BATCH_SIZE,
            source: Vec::new(),
        }
    }
}

fn bad(key: &str, value: &str, expected: &str) -> Error {
    Error::invalid_argument(format!(
        "file IO property '{key}' must be {expected}, not '{value}'"
    ))
}

fn parse_bool(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(bad(key, value, "true or false")),
    }
}

fn parse_seconds(key: &str, value: &str) -> Result<Duration> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| bad(key, value, "a positive number of seconds"))
}

fn parse_u64(key: &str, value: &str) -> Result<u64> {
    value
        .trim()
        .parse::<u64>()
        .map_err(|_| bad(key, value, "a non-negative integer"))
}

fn parse_millis_epoch(key: &str, value: &str) -> Result<i64> {
    value
        .trim()
        .parse::<i64>()
        .map_err(|_| bad(key, value, "milliseconds since the epoch"))
}

/// A secret value: its text is never put in an error.
fn secret(value: &str) -> Secret {
    Secret::new(value.trim())
}

/// Parses an Azure connection string (`Key=Value;...`). Values may hold `=` (SAS tokens,
/// base64 keys), so each part splits at its first `=` only.
pub fn parse_connection_string(key: &str, value: &str) -> Result<ConnectionString> {
    let mut cs = ConnectionString::default();
    for part in value.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((k, v)) = part.split_once('=') else {
            // never echo the value: it may hold the account key
            return Err(Error::invalid_argument(format!(
                "file IO property '{key}' is not an Azure connection string (expected \
                 Key=Value pairs separated by ';')"
            )));
        };
        match k.trim() {
            "AccountName" => cs.account_name = Some(v.to_string()),
            "AccountKey" => cs.account_key = Some(secret(v)),
            "SharedAccessSignature" => cs.sas_token = Some(secret(v)),
            "BlobEndpoint" => cs.blob_endpoint = Some(v.trim_end_matches('/').to_string()),
            "DefaultEndpointsProtocol" => cs.protocol = Some(v.to_string()),
            "EndpointSuffix" => cs.endpoint_suffix = Some(v.to_string()),
            _ => {}
        }
    }
    Ok(cs)
}

impl FileIOProperties {
    /// Parses the properties from `(key, value)` pairs; a later pair wins over an earlier
    /// one with the same key. Bad values are errors naming the property (never a secret's
    /// value).
    pub fn from_pairs<'a, I>(pairs: I) -> Result<Self>
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
    {
        let mut p = FileIOProperties::default();
        let mut region_fallback = None;
        for (key, value) in pairs {
            if FILE_IO_PREFIXES
                .iter()
                .any(|prefix| key.starts_with(prefix))
            {
                p.source.retain(|(k, _)| k != key);
                p.source.push((key.to_string(), Secret::new(value)));
            }
            match key {
                "s3.endpoint" => p.s3.endpoint = Some(value.trim().to_string()),
                "s3.access-key-id" => p.s3.access_key_id = Some(secret(value)),
                "s3.secret-access-key" => p.s3.secret_access_key = Some(secret(value)),
                "s3.session-token" => p.s3.session_token = Some(secret(value)),
                "s3.region" => p.s3.region = Some(value.trim().to_string()),
                "client.region" => region_fallback = Some(value.trim().to_string()),
                "s3.path-style-access" => p.s3.path_style_access = parse_bool(key, value)?,
                "s3.allow-anonymous" => p.s3.allow_anonymous = parse_bool(key, value)?,
                "s3.connect-timeout" => p.s3.connect_timeout = Some(parse_seconds(key, value)?),
                "s3.request-timeout" => p.s3.request_timeout = Some(parse_seconds(key, value)?),
                "s3.session-token-expires-at-ms" => {
                    p.s3.session_token_expires_at_ms = Some(parse_millis_epoch(key, value)?)
                }
                "gcs.oauth2.token" => p.gcs.oauth2_token = Some(secret(value)),
                "gcs.oauth2.token-expires-at" => {
                    p.gcs.oauth2_token_expires_at_ms = Some(parse_millis_epoch(key, value)?)
                }
                "gcs.project-id" => p.gcs.project_id = Some(value.trim().to_string()),
                "gcs.service.host" | "gcs.service.path" => {
                    p.gcs.endpoint = Some(value.trim().trim_end_matches('/').to_string())
                }
                "gcs.no-auth" => p.gcs.no_auth = parse_bool(key, value)?,
                "adls.account-name" => p.adls.account_name = Some(value.trim().to_string()),
                "adls.account-key" => p.adls.account_key = Some(secret(value)),
                "adls.sas-token" => {
                    p.adls.sas_tokens.insert(String::new(), secret(value));
                }
                "adls.connection-string" => {
                    p.adls.connection_string = Some(parse_connection_string(key, value)?)
                }
                "io.connect-timeout" => p.connect_timeout = parse_seconds(key, value)?,
                "io.request-timeout" => p.request_timeout = parse_seconds(key, value)?,
                "io.retry.num-retries" | "s3.retry.num-retries" => {
                    p.retry.num_retries = usize::try_from(parse_u64(key, value)?)
                        .map_err(|_| bad(key, value, "a small integer"))?
                }
                "io.retry.min-wait-ms" | "s3.retry.min-wait-ms" => {
                    p.retry.min_wait = Duration::from_millis(parse_u64(key, value)?)
                }
                "io.retry.max-wait-ms" | "s3.retry.max-wait-ms" => {
                    p.retry.max_wait = Duration::from_millis(parse_u64(key, value)?)
                }
                "io.multipart.threshold-bytes" => {
                    p.multipart_threshold = parse_u64(key, value)?;
                    if p.multipart_threshold < MIN_PART_SIZE {
                        return Err(bad(key, value, "at least 5 MiB (5242880)"));
                    }
                }
                "io.multipart.part-size-bytes" | "s3.multipart.part-size-bytes" => {
                    p.multipart_part_size = parse_u64(key, value)?;
                    if p.multipart_part_size < MIN_PART_SIZE {
                        return Err(bad(key, value, "at least 5 MiB (5242880)"));
                    }
                }
                "io.manifest.cache-enabled" => p.manifest_cache.enabled = parse_bool(key, value)?,
                "io.manifest.cache.expiration-interval-ms" => {
                    p.manifest_cache.expiration = Duration::from_millis(parse_u64(key, value)?)
                }
                "io.manifest.cache.max-total-bytes" => {
                    p.manifest_cache.max_total_bytes = parse_u64(key, value)?
                }
                "io.manifest.cache.max-content-length" => {
                    p.manifest_cache.max_content_length = parse_u64(key, value)?
                }
                "io.fetch-concurrency" => {
                    p.fetch_concurrency = usize::try_from(parse_u64(key, value)?)
                        .ok()
                        .filter(|n| (1..=1024).contains(n))
                        .ok_or_else(|| bad(key, value, "an integer from 1 to 1024"))?
                }
                "s3.delete.batch-size" => {
                    p.delete_batch_size = usize::try_from(parse_u64(key, value)?)
                        .ok()
                        .filter(|n| (1..=MAX_DELETE_BATCH_SIZE).contains(n))
                        .ok_or_else(|| bad(key, value, "an integer from 1 to 1000"))?
                }
                "s3.sse.type" => {
                    p.s3.encryption = match value.trim().to_ascii_lowercase().as_str() {
                        "none" | "s3" => S3Encryption::Default,
                        "kms" => S3Encryption::Kms(String::new()),
                        "custom" => S3Encryption::Customer(Secret::new("")),
                        _ => return Err(bad(key, value, "one of none, s3, kms, custom")),
                    }
                }
                _ => {
                    if let Some(host) = key.strip_prefix("adls.sas-token.") {
                        p.adls.sas_tokens.insert(host.to_string(), secret(value));
                    } else if let Some(host) = key.strip_prefix("adls.sas-token-expires-at-ms.") {
                        p.adls
                            .sas_token_expires_at_ms
                            .insert(host.to_string(), parse_millis_epoch(key, value)?);
                    } else if let Some(account) = key.strip_prefix("adls.connection-string.") {
                        p.adls.account_endpoints.insert(
                            account.to_string(),
                            value.trim().trim_end_matches('/').to_string(),
                        );
                    }
                }
            }
        }
        if p.s3.region.is_none() {
            p.s3.region = region_fallback;
        }
        // s3.sse.key may come before or after s3.sse.type: resolve it once all are read.
        Ok(p)
    }

    /// Parses a string map (see [`FileIOProperties::from_pairs`]).
    pub fn from_map(map: &HashMap<String, String>) -> Result<Self> {
        let mut p = Self::from_pairs(map.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
        p.resolve_sse_key(map.get("s3.sse.key").map(String::as_str))?;
        Ok(p)
    }

    /// Parses a list of pairs where a later pair wins (as catalogs pass them).
    pub fn from_list(pairs: &[(String, String)]) -> Result<Self> {
        let mut p = Self::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
        let key = pairs
            .iter()
            .rev()
            .find(|(k, _)| k == "s3.sse.key")
            .map(|(_, v)| v.as_str());
        p.resolve_sse_key(key)?;
        Ok(p)
    }

    fn resolve_sse_key(&mut self, key: Option<&str>) -> Result<()> {
        match (&mut self.s3.encryption, key) {
            (S3Encryption::Kms(id), Some(k)) => *id = k.trim().to_string(),
            (S3Encryption::Customer(s), Some(k)) => *s = secret(k),
            (S3Encryption::Kms(_) | S3Encryption::Customer(_), None) => {
                return Err(Error::invalid_argument(
                    "file IO property 's3.sse.type' kms or custom needs 's3.sse.key'",
                ))
            }
            (S3Encryption::Default, _) => {}
        }
        Ok(())
    }

    /// The FileIO properties these were parsed from ([`FileIOProperties::source`]), with
    /// their values: credentials included, for handing to another client of the store.
    pub fn to_pairs(&self) -> Vec<(String, String)> {
        self.source
            .iter()
            .map(|(k, v)| (k.clone(), v.expose().to_string()))
            .collect()
    }

    /// The connect and request timeouts of S3 requests.
    pub fn s3_timeouts(&self) -> (Duration, Duration) {
        (
            self.s3.connect_timeout.unwrap_or(self.connect_timeout),
            self.s3.request_timeout.unwrap_or(self.request_timeout),
        )
    }

    /// Every credential value, so that error messages can be scrubbed of them.
    pub fn secrets(&self) -> Vec<String> {
        let mut out: Vec<String> = [
            &self.s3.access_key_id,
            &self.s3.secret_access_key,
            &self.s3.session_token,
            &self.gcs.oauth2_token,
            &self.adls.account_key,
        ]
        .into_iter()
        .flatten()
        .map(|s| s.expose().to_string())
        .collect();
        if let S3Encryption::Customer(k) = &self.s3.encryption {
            out.push(k.expose().to_string());
        }
        out.extend(
            self.adls
                .sas_tokens
                .values()
                .map(|s| s.expose().to_string()),
        );
        if let Some(cs) = &self.adls.connection_string {
            out.extend(
                [&cs.account_key, &cs.sas_token]
                    .into_iter()
                    .flatten()
                    .map(|s| s.expose().to_string()),
            );
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<FileIOProperties> {
        let list: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        FileIOProperties::from_list(&list)
    }

    #[test]
    fn parses_iceberg_property_names() {
        let p = parse(&[
            ("s3.endpoint", "http://127.0.0.1:9000"),
            ("s3.access-key-id", "AKID"),
            ("s3.secret-access-key", "SECRET"),
            ("client.region", "eu-west-1"),
            ("s3.path-style-access", "TRUE"),
            ("s3.connect-timeout", "2.5"),
            ("io.retry.num-retries", "2"),
            ("adls.sas-token.acct.dfs.core.windows.net", "sv=1&sig=abc"),
            (
                "adls.connection-string",
                "AccountName=a;AccountKey=k==;BlobEndpoint=http://h/a/",
            ),
            ("gcs.service.path", "http://127.0.0.1:4443/"),
            ("warehouse", "s3://b/w"),
        ])
        .unwrap();
        assert_eq!(p.s3.region.as_deref(), Some("eu-west-1"));
        assert!(p.s3.path_style_access);
        assert_eq!(p.s3_timeouts().0, Duration::from_millis(2500));
        assert_eq!(p.s3_timeouts().1, Duration::from_secs(120));
        assert_eq!(p.retry.num_retries, 2);
        let cs = p.adls.connection_string.as_ref().unwrap();
        assert_eq!(cs.account_key.as_ref().unwrap().expose(), "k==");
        assert_eq!(cs.blob_endpoint.as_deref(), Some("http://h/a"));
        assert_eq!(p.gcs.endpoint.as_deref(), Some("http://127.0.0.1:4443"));
        assert!(p.adls.sas_tokens.contains_key("acct.dfs.core.windows.net"));
        // s3.region wins over client.region, in either order
        let p = parse(&[("s3.region", "a"), ("client.region", "b")]).unwrap();
        assert_eq!(p.s3.region.as_deref(), Some("a"));
    }

    #[test]
    fn delete_batch_size_is_java_s_and_bounded_by_s3() {
        assert_eq!(parse(&[]).unwrap().delete_batch_size, 250);
        let p = parse(&[("s3.delete.batch-size", "1000")]).unwrap();
        assert_eq!(p.delete_batch_size, 1000);
        for v in ["0", "1001", "x"] {
            let e = parse(&[("s3.delete.batch-size", v)]).unwrap_err();
            assert!(e.to_string().contains("s3.delete.batch-size"), "{e}");
        }
    }

    #[test]
    fn manifest_cache_and_fetch_concurrency() {
        let p = parse(&[]).unwrap();
        assert!(!p.manifest_cache.enabled);
        assert_eq!(p.manifest_cache.max_total_bytes, 100 * 1024 * 1024);
        assert_eq!(p.fetch_concurrency, DEFAULT_FETCH_CONCURRENCY);
        let p = parse(&[
            ("io.manifest.cache-enabled", "true"),
            ("io.manifest.cache.expiration-interval-ms", "1000"),
            ("io.manifest.cache.max-total-bytes", "1234"),
            ("io.manifest.cache.max-content-length", "12"),
            ("io.fetch-concurrency", "64"),
        ])
        .unwrap();
        assert!(p.manifest_cache.enabled);
        assert_eq!(p.manifest_cache.expiration, Duration::from_secs(1));
        assert_eq!(
            (
                p.manifest_cache.max_total_bytes,
                p.manifest_cache.max_content_length
            ),
            (1234, 12)
        );
        assert_eq!(p.fetch_concurrency, 64);
        for v in ["0", "2000", "many"] {
            let e = parse(&[("io.fetch-concurrency", v)]).unwrap_err();
            assert!(e.to_string().contains("io.fetch-concurrency"), "{e}");
        }
    }

    #[test]
    fn source_keeps_file_io_properties_only_last_wins() {
        let p = parse(&[
            ("s3.endpoint", "http://a"),
            ("token", "catalog-bearer-token"),
            ("credential", "id:secret"),
            ("client.region", "eu-west-1"),
            ("s3.endpoint", "http://b"),
            ("adls.account-key", "k"),
        ])
        .unwrap();
        assert_eq!(
            p.to_pairs(),
            vec![
                ("client.region".to_string(), "eu-west-1".to_string()),
                ("s3.endpoint".to_string(), "http://b".to_string()),
                ("adls.account-key".to_string(), "k".to_string()),
            ]
        );
        // the round trip parses to the same settings
        assert_eq!(FileIOProperties::from_list(&p.to_pairs()).unwrap(), p);
    }

    #[test]
    fn bad_values_name_the_property_but_not_secrets() {
        for (k, v) in [
            ("s3.path-style-access", "yes"),
            ("s3.connect-timeout", "soon"),
            ("s3.request-timeout", "-1"),
            ("io.multipart.threshold-bytes", "1024"),
            ("s3.sse.type", "rot13"),
            ("adls.sas-token-expires-at-ms.h", "tomorrow"),
        ] {
            let e = parse(&[(k, v)]).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
            assert!(e.to_string().contains(k), "{e}");
        }
        let e = parse(&[("adls.connection-string", "hunter2secret")]).unwrap_err();
        assert!(!e.to_string().contains("hunter2secret"), "{e}");
        assert!(parse(&[("s3.sse.type", "kms")]).is_err());
    }

    #[test]
    fn debug_output_has_no_credentials() {
        let p = parse(&[
            ("s3.access-key-id", "AKIAEXAMPLEKEY"),
            ("s3.secret-access-key", "verysecretkey123"),
            ("s3.session-token", "sessiontoken456"),
            ("gcs.oauth2.token", "ya29.oauthtoken"),
            ("adls.account-key", "accountkey789=="),
            (
                "adls.sas-token.a.dfs.core.windows.net",
                "sv=2024&sig=sassig000",
            ),
            (
                "adls.connection-string",
                "AccountName=a;AccountKey=cskey111==",
            ),
            ("s3.sse.type", "custom"),
            ("s3.sse.key", "ssecustomerkey222"),
        ])
        .unwrap();
        let debug = format!("{p:?} {p:#?}");
        for s in p.secrets() {
            assert!(!debug.contains(&s), "{s} leaked in {debug}");
        }
        assert_eq!(p.secrets().len(), 8);
    }
}
