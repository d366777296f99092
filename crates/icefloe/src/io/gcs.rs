//! The GCS FileIO (`gs://bucket/key`) on OpenDAL's GCS service (docs/architecture.md,
//! "Object stores": the `object_store` crate's GCS client cannot upload to the GCS emulator
//! the tests run, OpenDAL's can).
//!
//! Create-only writes send `ifGenerationMatch=0`; conditional replaces send
//! `ifGenerationMatch=<generation>` (GCS versions objects by generation, which `status`
//! reports as [`FileVersion::version`]).

use std::collections::HashMap;
use std::io::ErrorKind;
use std::sync::{Arc, Mutex};

use opendal::layers::{RetryLayer, TimeoutLayer};
use opendal::services::Gcs;
use opendal::Operator;
use opendal::{HttpTransporter, OperationContext};
use opendal_http_transport_reqwest::ReqwestTransport;

use super::properties::FileIOProperties;
use super::redact::Redactor;
use super::runtime::IoRuntime;
use super::{FileIO, FileStatus, FileVersion, ListedFile};
use crate::error::{Error, Result};

fn invalid_location(location: &str, why: &str) -> Error {
    Error::invalid_argument(format!("location {location}: {why}"))
}

/// `(bucket, key)` of a `gs://bucket/key` location.
fn parse(location: &str) -> Result<(String, String)> {
    let rest = location
        .strip_prefix("gs://")
        .ok_or_else(|| invalid_location(location, "not a gs:// location"))?;
    let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(invalid_location(location, "no bucket name"));
    }
    Ok((bucket.to_string(), key.trim_start_matches('/').to_string()))
}

/// A GCS FileIO: one OpenDAL operator per bucket, on the runtime this FileIO owns.
pub struct GcsFileIO {
    properties: Arc<FileIOProperties>,
    operators: Mutex<HashMap<String, Operator>>,
    redactor: Redactor,
    runtime: IoRuntime,
    counters: super::stats::IoCounters,
}

impl std::fmt::Debug for GcsFileIO {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GcsFileIO")
            .field("properties", &self.properties)
            .finish_non_exhaustive()
    }
}

impl GcsFileIO {
    pub fn new(properties: FileIOProperties) -> Result<Self> {
        Ok(GcsFileIO {
            redactor: Redactor::new(properties.secrets()),
            properties: Arc::new(properties),
            operators: Mutex::new(HashMap::new()),
            runtime: IoRuntime::new()?,
            counters: super::stats::IoCounters::default(),
        })
    }

    fn operator(&self, location: &str) -> Result<(Operator, String)> {
        let (bucket, key) = parse(location)?;
        let mut ops = self
            .operators
            .lock()
            .map_err(|_| Error::unsupported("the GCS operator cache was poisoned"))?;
        if let Some(op) = ops.get(&bucket) {
            return Ok((op.clone(), key));
        }
        let p = &self.properties;
        let http = reqwest::Client::builder()
            .connect_timeout(p.connect_timeout)
            .timeout(p.request_timeout)
            .build()
            .map_err(|e| {
                Error::invalid_argument(format!(
                    "location {location}: cannot build the GCS HTTP client: {e}"
                ))
            })?;
        let mut b = Gcs::default().bucket(&bucket).root("/");
        if let Some(endpoint) = &p.gcs.endpoint {
            b = b.endpoint(endpoint);
        }
        if let Some(token) = &p.gcs.oauth2_token {
            b = b.token(token.expose().to_string());
        }
        if p.gcs.no_auth {
            b = b.skip_signature();
        }
        if p.gcs.no_auth || p.gcs.oauth2_token.is_some() {
            // credentials are given: never probe the VM metadata server or the environment
            b = b.disable_vm_metadata().disable_config_load();
        }
        let retry = RetryLayer::new()
            .with_max_times(p.retry.num_retries)
            .with_min_delay(p.retry.min_wait)
            .with_max_delay(p.retry.max_wait.max(p.retry.min_wait))
            .with_factor(2.0)
            .with_jitter();
        let transport = HttpTransporter::new(ReqwestTransport::new(http));
        let op = Operator::new(b)
            .map_err(|e| self.config_error(location, &e))?
            .with_context(OperationContext::new().with_http_transport(transport))
            .layer(TimeoutLayer::new().with_timeout(p.request_timeout))
            .layer(retry);
        ops.insert(bucket, op.clone());
        Ok((op, key))
    }

    fn config_error(&self, location: &str, e: &opendal::Error) -> Error {
        Error::invalid_argument(format!(
            "location {location}: cannot configure the GCS client: {}",
            self.redactor.scrub(&e.to_string())
        ))
    }

    fn expiry_hint(&self) -> String {
        match self.properties.gcs.oauth2_token_expires_at_ms {
            Some(ms) if ms <= chrono::Utc::now().timestamp_millis() => format!(
                " (the OAuth2 token expired at {ms} ms since the epoch; reload the table for a new one)"
            ),
            _ => String::new(),
        }
    }

    fn error(&self, location: &str, e: opendal::Error) -> Error {
        use opendal::ErrorKind as K;
        let message = self.redactor.scrub(&e.to_string());
        let io = |kind: ErrorKind, what: &str| {
            Error::io(
                location,
                std::io::Error::new(kind, format!("{what}: {message}")),
            )
        };
        match e.kind() {
            K::NotFound => {
                if message.contains("bucket") && message.contains("does not exist")
                    || message.contains("NoSuchBucket")
                {
                    io(ErrorKind::NotFound, "the bucket does not exist")
                } else {
                    io(ErrorKind::NotFound, "not found")
                }
            }
            // create-only writes fail with a generation mismatch when the object exists
            K::AlreadyExists | K::ConditionNotMatch => {
                io(ErrorKind::AlreadyExists, "the file already exists")
            }
            K::PermissionDenied => io(
                ErrorKind::PermissionDenied,
                &format!("access denied{}", self.expiry_hint()),
            ),
            K::Unsupported => Error::unsupported(format!(
                "location {location}: not supported by GCS: {message}"
            )),
            K::RangeNotSatisfied => io(ErrorKind::UnexpectedEof, "range out of bounds"),
            _ if message.contains("timeout") || message.contains("timed out") => {
                io(ErrorKind::TimedOut, "the request timed out")
            }
            _ => io(ErrorKind::Other, "GCS request failed"),
        }
    }

    fn call<T, F, Fut>(&self, location: &str, f: F) -> Result<T>
    where
        F: FnOnce(Operator, String) -> Fut,
        Fut: std::future::Future<Output = opendal::Result<T>> + Send + 'static,
        T: Send + 'static,
    {
        let (op, key) = self.operator(location)?;
        self.counters.requests(1);
        self.runtime
            .block_on(location, f(op, key))?
            .map_err(|e| self.error(location, e))
    }
}

impl FileIO for GcsFileIO {
    fn properties_for(&self, _location: &str) -> Option<Vec<(String, String)>> {
        Some(self.properties.to_pairs())
    }

    fn read(&self, location: &str) -> Result<Vec<u8>> {
        let buf = self.call(location, |op, key| async move { op.read(&key).await })?;
        self.counters.read(buf.len() as u64);
        Ok(buf.to_vec())
    }

    fn read_range(&self, location: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        super::read_range_past_end_is_short(
            self,
            location,
            offset,
            len,
            |range| {
                self.call(location, move |op, key| async move {
                    op.read_with(&key).range(range).await
                })
                .map(|buf| {
                    self.counters.read(buf.len() as u64);
                    buf.to_vec()
                })
            },
            // `map_error` turns opendal's RangeNotSatisfied into UnexpectedEof
            |source| source.kind() == ErrorKind::UnexpectedEof,
        )
    }

    fn file_size(&self, location: &str) -> Result<u64> {
        Ok(self.status(location)?.size)
    }

    fn status(&self, location: &str) -> Result<FileStatus> {
        let meta = self.call(location, |op, key| async move { op.stat(&key).await })?;
        Ok(FileStatus {
            size: meta.content_length(),
            version: Some(FileVersion {
                e_tag: meta.etag().map(str::to_string),
                version: meta.version().map(str::to_string),
            }),
        })
    }

    /// One create-only upload (`ifGenerationMatch=0`) whatever the size: GCS takes objects
    /// up to 5 TiB in one request, and OpenDAL's chunked GCS upload (the XML multipart API)
    /// neither carries the precondition nor works against the GCS emulator. The content
    /// type is set so that OpenDAL sends a JSON-API multipart upload (metadata + media),
    /// whose precondition every GCS implementation checks.
    fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()> {
        let data = bytes.to_vec();
        self.counters.written(bytes.len() as u64);
        self.call(location, move |op, key| async move {
            op.write_with(&key, data)
                .if_not_exists(true)
                .content_type("application/octet-stream")
                .await
        })
        .map(|_| ())
    }

    fn exists(&self, location: &str) -> Result<bool> {
        match self.call(location, |op, key| async move { op.stat(&key).await }) {
            Ok(_) => Ok(true),
            Err(Error::Io { source, .. })
                if source.kind() == ErrorKind::NotFound
                    && !source.to_string().contains("bucket does not exist") =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Names directly under `location/` (objects and "sub-directories"); an empty listing is
    /// `NotFound`, as for a missing local directory.
    fn list(&self, location: &str) -> Result<Vec<String>> {
        let entries = self.call(location, |op, key| async move {
            let dir = if key.is_empty() {
                String::new()
            } else {
                format!("{}/", key.trim_end_matches('/'))
            };
            let entries = op.list(&dir).await?;
            Ok(entries
                .into_iter()
                // OpenDAL lists the directory itself too
                .filter(|e| e.path() != dir)
                .map(|e| e.name().trim_end_matches('/').to_string())
                .collect::<Vec<_>>())
        })?;
        let mut names: Vec<String> = entries.into_iter().filter(|n| !n.is_empty()).collect();
        if names.is_empty() {
            return Err(Error::io(
                location,
                std::io::Error::new(ErrorKind::NotFound, "no objects under this prefix"),
            ));
        }
        names.sort();
        names.dedup();
        Ok(names)
    }

    fn list_files(&self, location: &str) -> Result<Vec<ListedFile>> {
        let folder = {
            let (_, key) = parse(location)?;
            let key = key.trim_end_matches('/');
            if key.is_empty() {
                String::new()
            } else {
                format!("{key}/")
            }
        };
        let dir = folder.clone();
        // a recursive listing is one prefix listing without a delimiter; its entries carry
        // the size and the `updated` time, so no HEAD per file is needed
        let entries = self.call(location, |op, _| async move {
            let entries = op.list_with(&dir).recursive(true).await?;
            Ok(entries
                .into_iter()
                .filter(|e| e.metadata().is_file() && !e.path().ends_with('/'))
                .map(|e| {
                    let meta = e.metadata();
                    (
                        e.path().to_string(),
                        meta.content_length(),
                        meta.last_modified()
                            .map(|t| t.into_inner().as_millisecond()),
                    )
                })
                .collect::<Vec<_>>())
        })?;
        let base = location.trim_end_matches('/');
        let mut out = Vec::with_capacity(entries.len());
        for (path, size, modified) in entries {
            let Some(below) = path.strip_prefix(&folder).filter(|b| !b.is_empty()) else {
                continue;
            };
            // a file without a modification time cannot be shown old enough to delete:
            // report it as written now, which every cleanup cutoff keeps
            let last_modified_ms = modified.unwrap_or_else(|| {
                i64::try_from(
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_millis()),
                )
                .unwrap_or(i64::MAX)
            });
            out.push(ListedFile {
                location: format!("{base}/{below}"),
                size,
                last_modified_ms,
            });
        }
        out.sort_by(|a, b| a.location.cmp(&b.location));
        Ok(out)
    }

    fn delete(&self, location: &str) -> Result<()> {
        // OpenDAL already treats a missing object as deleted
        self.call(location, |op, key| async move { op.delete(&key).await })
    }

    /// Concurrent single deletes, `max_concurrent` in flight on this FileIO's runtime (no
    /// thread per delete). GCS's batch endpoint is not used: OpenDAL's GCS service sends
    /// deletes one by one, and the emulator the tests run has no batch endpoint to test it.
    fn delete_many(&self, locations: &[String], max_concurrent: usize) -> Vec<Result<()>> {
        use futures::{FutureExt, StreamExt};
        let mut results: Vec<Option<Result<()>>> = locations.iter().map(|_| None).collect();
        let mut work = Vec::with_capacity(locations.len());
        for (i, location) in locations.iter().enumerate() {
            match self.operator(location) {
                Ok((op, key)) => work.push((i, op, key)),
                Err(e) => {
                    if let Some(slot) = results.get_mut(i) {
                        *slot = Some(Err(e));
                    }
                }
            }
        }
        self.counters.requests(work.len() as u64);
        let first = locations.first().map_or("", String::as_str);
        let requests: Vec<_> = work
            .into_iter()
            .map(|(i, op, key)| async move { (i, op.delete(&key).await) }.boxed())
            .collect();
        let done = self.runtime.block_on(first, async move {
            futures::stream::iter(requests)
                .buffer_unordered(max_concurrent.max(1))
                .collect::<Vec<_>>()
                .await
        });
        match done {
            Ok(done) => {
                for (i, r) in done {
                    if let (Some(slot), Some(location)) = (results.get_mut(i), locations.get(i)) {
                        // OpenDAL already treats a missing object as deleted
                        *slot = Some(r.map_err(|e| self.error(location, e)));
                    }
                }
            }
            Err(e) => {
                let text = e.to_string();
                for (slot, location) in results.iter_mut().zip(locations) {
                    if slot.is_none() {
                        *slot = Some(Err(Error::io(
                            location,
                            std::io::Error::other(text.clone()),
                        )));
                    }
                }
            }
        }
        results
            .into_iter()
            .zip(locations)
            .map(|(r, l)| r.unwrap_or_else(|| Err(super::not_deleted(l))))
            .collect()
    }

    fn stats(&self) -> Option<super::IoStats> {
        Some(self.counters.snapshot())
    }

    fn reset_stats(&self) {
        self.counters.reset();
    }

    fn fetch_concurrency(&self) -> usize {
        self.properties.fetch_concurrency
    }

    fn supports_conditional_replace(&self) -> bool {
        true
    }

    /// GCS matches generations, not ETags: the version is the generation `status` read.
    fn replace_if_match(
        &self,
        location: &str,
        bytes: &[u8],
        expected: &FileVersion,
    ) -> Result<FileVersion> {
        let Some(generation) = expected.version.clone() else {
            return Err(Error::invalid_argument(format!(
                "location {location}: a conditional replace on GCS needs the generation read \
                 by status()"
            )));
        };
        let data = bytes.to_vec();
        let (op, key) = self.operator(location)?;
        self.counters.requests(1);
        self.counters.written(bytes.len() as u64);
        let written = self
            .runtime
            .block_on(location, async move {
                op.write_with(&key, data)
                    .if_version_match(&generation)
                    .content_type("application/octet-stream")
                    .await
            })?
            .map_err(|e| match e.kind() {
                // 412, or 404 once the file is deleted: the version read is gone
                opendal::ErrorKind::ConditionNotMatch | opendal::ErrorKind::NotFound => {
                    Error::PreconditionFailed {
                        path: location.to_string(),
                        message: format!(
                            "the file changed since its version was read: {}",
                            self.redactor.scrub(&e.to_string())
                        ),
                    }
                }
                _ => self.error(location, e),
            })?;
        Ok(FileVersion {
            e_tag: written.etag().map(str::to_string),
            version: written.version().map(str::to_string),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_gs_locations() {
        assert_eq!(
            parse("gs://b/wh/t/v1.json").unwrap(),
            ("b".to_string(), "wh/t/v1.json".to_string())
        );
        assert!(parse("gs:///x").is_err());
        assert!(parse("s3://b/x").is_err());
    }
}
