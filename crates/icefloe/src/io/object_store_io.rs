//! S3 and Azure Blob (ADLS Gen2) FileIOs on the `object_store` crate (docs/architecture.md,
//! "Object stores", says why this crate for these two and OpenDAL for GCS).
//!
//! Locations:
//! - S3: `s3://bucket/key`, `s3a://…`, `s3n://…` (the Hadoop spellings, same store);
//! - Azure: `abfs[s]://container@account.dfs.core.windows.net/path` and
//!   `wasb[s]://container@account.blob.core.windows.net/path`. Both go through the Blob API
//!   (ADLS Gen2 accounts serve it too), which has the conditional writes commits need.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use object_store::path::Path;
use object_store::{
    BackoffConfig, ClientOptions, ObjectStore, ObjectStoreExt, PutMode, PutMultipartOptions,
    PutOptions, PutPayload, RetryConfig, UpdateVersion, WriteMultipart,
};

use super::properties::FileIOProperties;
use super::redact::Redactor;
use super::runtime::IoRuntime;
use super::stats::{IoCounters, IoStats};
use super::{FileIO, FileStatus, FileVersion, ListedFile};
use crate::error::{Error, Result};

/// Which store a FileIO talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    S3,
    Azure,
}

/// Where a location points: the store (bucket, or container and account host) and the key.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    /// Identifies the store within this FileIO (`bucket`, or `container@host`).
    store_key: String,
    bucket: String,
    /// Azure only: the account host of the location (`account.dfs.core.windows.net`).
    host: String,
    key: String,
}

fn invalid_location(location: &str, why: &str) -> Error {
    Error::invalid_argument(format!("location {location}: {why}"))
}

/// The part after `scheme://`, for the schemes of `kind`.
fn strip_scheme(kind: StoreKind, location: &str) -> Result<&str> {
    let (scheme, rest) = location
        .split_once("://")
        .ok_or_else(|| invalid_location(location, "not a URI (scheme://...)"))?;
    let ok = match kind {
        StoreKind::S3 => matches!(scheme, "s3" | "s3a" | "s3n"),
        StoreKind::Azure => matches!(scheme, "abfs" | "abfss" | "wasb" | "wasbs"),
    };
    if !ok {
        return Err(invalid_location(
            location,
            &format!("scheme '{scheme}' is not served by the {kind:?} file IO"),
        ));
    }
    Ok(rest)
}

fn parse_target(kind: StoreKind, location: &str) -> Result<Target> {
    let rest = strip_scheme(kind, location)?;
    let (authority, key) = rest.split_once('/').unwrap_or((rest, ""));
    let key = key.trim_matches('/').to_string();
    match kind {
        StoreKind::S3 => {
            if authority.is_empty() {
                return Err(invalid_location(location, "no bucket name"));
            }
            Ok(Target {
                store_key: authority.to_string(),
                bucket: authority.to_string(),
                host: String::new(),
                key,
            })
        }
        StoreKind::Azure => {
            let (container, host) = authority.split_once('@').ok_or_else(|| {
                invalid_location(
                    location,
                    "expected container@account.dfs.core.windows.net after the scheme",
                )
            })?;
            if container.is_empty() || host.is_empty() {
                return Err(invalid_location(location, "no container or account"));
            }
            Ok(Target {
                store_key: authority.to_string(),
                bucket: container.to_string(),
                host: host.to_string(),
                key,
            })
        }
    }
}

/// The object key as an `object_store` path (which refuses empty, `.` and `..` segments).
fn object_path(location: &str, key: &str) -> Result<Path> {
    Path::parse(key).map_err(|e| invalid_location(location, &format!("bad object key: {e}")))
}

/// An S3 or Azure Blob FileIO. It keeps one client per bucket (container) it has seen, and
/// owns the async runtime its calls block on.
pub struct ObjectStoreFileIO {
    kind: StoreKind,
    properties: Arc<FileIOProperties>,
    stores: Mutex<HashMap<String, Arc<dyn ObjectStore>>>,
    redactor: Redactor,
    runtime: IoRuntime,
    counters: IoCounters,
}

impl std::fmt::Debug for ObjectStoreFileIO {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // FileIOProperties' Debug hides credentials; the stores are not printed at all.
        f.debug_struct("ObjectStoreFileIO")
            .field("kind", &self.kind)
            .field("properties", &self.properties)
            .finish_non_exhaustive()
    }
}

impl ObjectStoreFileIO {
    pub fn new(kind: StoreKind, properties: FileIOProperties) -> Result<Self> {
        Ok(ObjectStoreFileIO {
            kind,
            redactor: Redactor::new(properties.secrets()),
            properties: Arc::new(properties),
            stores: Mutex::new(HashMap::new()),
            runtime: IoRuntime::new()?,
            counters: IoCounters::default(),
        })
    }

    pub fn kind(&self) -> StoreKind {
        self.kind
    }

    fn retry_config(&self) -> RetryConfig {
        let r = &self.properties.retry;
        RetryConfig {
            backoff: BackoffConfig {
                init_backoff: r.min_wait,
                max_backoff: r.max_wait.max(r.min_wait),
                base: 2.0,
            },
            max_retries: r.num_retries,
            // bounds the whole call, retries included
            retry_timeout: self.properties.request_timeout.saturating_mul(2),
        }
    }

    fn client_options(
        &self,
        connect: std::time::Duration,
        request: std::time::Duration,
    ) -> ClientOptions {
        ClientOptions::new()
            .with_connect_timeout(connect)
            .with_timeout(request)
    }

    fn build_s3(&self, location: &str, t: &Target) -> Result<Arc<dyn ObjectStore>> {
        use object_store::aws::AmazonS3Builder;
        let p = &self.properties.s3;
        // from_env: without keys in the properties, the AWS_* environment is the default
        // credential chain (as Java's S3FileIO falls back to the SDK's).
        let mut b = AmazonS3Builder::from_env()
            .with_bucket_name(&t.bucket)
            .with_region(p.region.clone().unwrap_or_else(|| "us-east-1".to_string()))
            .with_virtual_hosted_style_request(!p.path_style_access)
            .with_retry(self.retry_config());
        let (connect, request) = self.properties.s3_timeouts();
        let mut options = self.client_options(connect, request);
        if let Some(endpoint) = &p.endpoint {
            options = options.with_allow_http(endpoint.starts_with("http://"));
            b = b.with_endpoint(endpoint);
        }
        b = b.with_client_options(options);
        if let Some(k) = &p.access_key_id {
            b = b.with_access_key_id(k.expose());
        }
        if let Some(k) = &p.secret_access_key {
            b = b.with_secret_access_key(k.expose());
        }
        if let Some(k) = &p.session_token {
            b = b.with_token(k.expose());
        }
        if p.allow_anonymous {
            b = b.with_skip_signature(true);
        }
        match &p.encryption {
            super::properties::S3Encryption::Default => {}
            super::properties::S3Encryption::Kms(id) => b = b.with_sse_kms_encryption(id),
            super::properties::S3Encryption::Customer(k) => b = b.with_ssec_encryption(k.expose()),
        }
        let store = b.build().map_err(|e| self.config_error(location, &e))?;
        Ok(Arc::new(store))
    }

    fn build_azure(&self, location: &str, t: &Target) -> Result<Arc<dyn ObjectStore>> {
        use object_store::azure::MicrosoftAzureBuilder;
        let p = &self.properties.adls;
        let cs = p.connection_string.clone().unwrap_or_default();
        let account = t.host.split('.').next().unwrap_or_default().to_string();
        let mut b = MicrosoftAzureBuilder::new()
            .with_account(&account)
            .with_container_name(&t.bucket)
            .with_retry(self.retry_config());
        let mut options = self.client_options(
            self.properties.connect_timeout,
            self.properties.request_timeout,
        );
        // The endpoint: Java's adls.connection-string.<account>, else the connection string's
        // BlobEndpoint, else the location's own host with its dfs. part turned into blob.
        let endpoint = p
            .account_endpoints
            .get(&account)
            .or_else(|| p.account_endpoints.get(&t.host))
            .cloned()
            .or_else(|| {
                cs.blob_endpoint
                    .clone()
                    .filter(|_| cs.account_name.as_deref().is_none_or(|a| a == account))
            })
            .unwrap_or_else(|| {
                let host = t.host.replacen(".dfs.", ".blob.", 1);
                let scheme = cs.protocol.clone().unwrap_or_else(|| "https".to_string());
                format!("{scheme}://{host}")
            });
        options = options.with_allow_http(endpoint.starts_with("http://"));
        b = b.with_endpoint(endpoint).with_client_options(options);
        // Credentials, most specific first: a SAS token for this host, a shared key, the
        // connection string's, then any SAS token without a host.
        let blob_host = t.host.replacen(".dfs.", ".blob.", 1);
        let dfs_host = t.host.replacen(".blob.", ".dfs.", 1);
        let sas = [
            t.host.as_str(),
            dfs_host.as_str(),
            blob_host.as_str(),
            account.as_str(),
        ]
        .iter()
        .find_map(|h| p.sas_tokens.get(*h));
        let key = p
            .account_key
            .clone()
            .filter(|_| p.account_name.as_deref().is_none_or(|a| a == account))
            .or_else(|| cs.account_key.clone());
        if let Some(sas) = sas {
            b = b.with_config(
                object_store::azure::AzureConfigKey::SasKey,
                sas.expose().trim_start_matches('?'),
            );
        } else if let Some(key) = key {
            b = b.with_access_key(key.expose());
        } else if let Some(sas) = cs.sas_token.as_ref().or_else(|| p.sas_tokens.get("")) {
            b = b.with_config(
                object_store::azure::AzureConfigKey::SasKey,
                sas.expose().trim_start_matches('?'),
            );
        }
        let store = b.build().map_err(|e| self.config_error(location, &e))?;
        Ok(Arc::new(store))
    }

    fn config_error(&self, location: &str, e: &object_store::Error) -> Error {
        Error::invalid_argument(format!(
            "location {location}: cannot configure the {:?} client: {}",
            self.kind,
            self.redactor.scrub(&e.to_string())
        ))
    }

    /// The client for the location's bucket, and the object path.
    fn store(&self, location: &str) -> Result<(Arc<dyn ObjectStore>, Target)> {
        let target = parse_target(self.kind, location)?;
        let mut stores = self
            .stores
            .lock()
            .map_err(|_| Error::unsupported("the object store cache was poisoned"))?;
        if let Some(s) = stores.get(&target.store_key) {
            return Ok((Arc::clone(s), target));
        }
        let store = match self.kind {
            StoreKind::S3 => self.build_s3(location, &target)?,
            StoreKind::Azure => self.build_azure(location, &target)?,
        };
        stores.insert(target.store_key.clone(), Arc::clone(&store));
        Ok((store, target))
    }

    /// When the vended credential of this location expired, if the properties say.
    fn expiry_hint(&self, target: &Target) -> String {
        let at = match self.kind {
            StoreKind::S3 => self.properties.s3.session_token_expires_at_ms,
            StoreKind::Azure => self
                .properties
                .adls
                .sas_token_expires_at_ms
                .get(&target.host)
                .copied(),
        };
        match at {
            Some(ms) if ms <= chrono::Utc::now().timestamp_millis() => format!(
                " (the credentials expired at {} ms since the epoch; reload the table for new ones)",
                ms
            ),
            _ => String::new(),
        }
    }

    /// A typed, scrubbed error naming the location.
    fn error(&self, location: &str, target: &Target, e: object_store::Error) -> Error {
        use object_store::Error as E;
        // the transport's own words (e.g. "operation timed out") are deep in the chain
        let mut message = e.to_string();
        let mut timed_out = false;
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            let text = s.to_string();
            timed_out |= text.contains("timed out")
                || s.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == ErrorKind::TimedOut);
            if !message.contains(&text) {
                message = format!("{message}: {text}");
            }
            source = s.source();
        }
        let message = self.redactor.scrub(&message);
        let io = |kind: ErrorKind, what: &str| {
            Error::io(
                location,
                std::io::Error::new(kind, format!("{what}: {message}")),
            )
        };
        match e {
            E::NotFound { .. } => {
                let what =
                    if message.contains("NoSuchBucket") || message.contains("ContainerNotFound") {
                        "the bucket (container) does not exist"
                    } else {
                        "not found"
                    };
                io(ErrorKind::NotFound, what)
            }
            E::AlreadyExists { .. } => io(ErrorKind::AlreadyExists, "the file already exists"),
            E::Precondition { .. } => Error::PreconditionFailed {
                path: location.to_string(),
                message: format!("the file changed since its version was read: {message}"),
            },
            E::PermissionDenied { .. } | E::Unauthenticated { .. } => io(
                ErrorKind::PermissionDenied,
                &format!("access denied{}", self.expiry_hint(target)),
            ),
            E::NotSupported { .. } | E::NotImplemented { .. } => Error::unsupported(format!(
                "location {location}: not supported by this store: {message}"
            )),
            _ if timed_out => io(ErrorKind::TimedOut, "the request timed out"),
            _ => io(ErrorKind::Other, "object store request failed"),
        }
    }

    /// Runs one async call against the location's store, mapping its error.
    fn call<T, F, Fut>(&self, location: &str, f: F) -> Result<T>
    where
        F: FnOnce(Arc<dyn ObjectStore>, Path) -> Fut,
        Fut: std::future::Future<Output = object_store::Result<T>> + Send + 'static,
        T: Send + 'static,
    {
        let (store, target) = self.store(location)?;
        let path = object_path(location, &target.key)?;
        self.counters.requests(1);
        self.runtime
            .block_on(location, f(store, path))?
            .map_err(|e| self.error(location, &target, e))
    }

    fn put(&self, location: &str, bytes: &[u8], mode: PutMode) -> Result<FileVersion> {
        let create = matches!(mode, PutMode::Create);
        let payload = PutPayload::from(Bytes::copy_from_slice(bytes));
        self.counters.written(bytes.len() as u64);
        let e = match self.call(location, |store, path| async move {
            store
                .put_opts(
                    &path,
                    payload,
                    PutOptions {
                        mode,
                        ..Default::default()
                    },
                )
                .await
        }) {
            Ok(result) => {
                return Ok(FileVersion {
                    e_tag: result.e_tag,
                    version: result.version,
                })
            }
            Err(e) => e,
        };
        // The client sends a PUT again when its answer was lost (a dropped connection, a
        // timeout). If the store had applied the first one, the conditional re-send finds
        // the object there (create-only: AlreadyExists) or changed (If-Match: a failed
        // precondition) by this very write. Then the object holds exactly these bytes, and
        // the write succeeded; anything else is another writer's, and the error stands.
        // Without this, a commit would fail (and delete its files) after writing its
        // manifest or metadata file successfully.
        let refused = match &e {
            Error::Io { source, .. } => create && source.kind() == ErrorKind::AlreadyExists,
            Error::PreconditionFailed { .. } => !create,
            _ => false,
        };
        if refused && self.read(location).is_ok_and(|existing| existing == bytes) {
            if let Ok(FileStatus {
                version: Some(version),
                ..
            }) = self.status(location)
            {
                return Ok(version);
            }
        }
        Err(e)
    }

    /// A multipart upload. Create-only is checked before the upload, not atomically (the
    /// stores' conditional multipart completes are not exposed by the client): large files
    /// are data files with unique names, while the files commits race on are small.
    fn put_multipart(&self, location: &str, bytes: &[u8]) -> Result<()> {
        if self.exists(location)? {
            return Err(Error::io(
                location,
                std::io::Error::new(ErrorKind::AlreadyExists, "the file already exists"),
            ));
        }
        let part = usize::try_from(self.properties.multipart_part_size).unwrap_or(usize::MAX);
        let data = Bytes::copy_from_slice(bytes);
        // `call` counts the create; then each part and the complete
        let parts = bytes.len().div_ceil(part.max(1)) as u64;
        self.counters.requests(parts + 1);
        self.counters.written(bytes.len() as u64);
        self.call(location, move |store, path| async move {
            let upload = store
                .put_multipart_opts(&path, PutMultipartOptions::default())
                .await?;
            let mut writer = WriteMultipart::new_with_chunk_size(upload, part);
            let mut offset = 0;
            while offset < data.len() {
                let end = (offset + part).min(data.len());
                // at most 4 parts in flight: bounded memory, and enough to fill the link
                writer.wait_for_capacity(4).await?;
                writer.put(data.slice(offset..end));
                offset = end;
            }
            match writer.finish().await {
                Ok(r) => Ok(r),
                Err(e) => Err(e),
            }
        })?;
        Ok(())
    }

    fn range(&self, location: &str, range: Range<u64>) -> Result<Bytes> {
        let bytes = self.call(location, move |store, path| async move {
            store.get_range(&path, range).await
        })?;
        self.counters.read(bytes.len() as u64);
        Ok(bytes)
    }
}

impl FileIO for ObjectStoreFileIO {
    fn properties_for(&self, _location: &str) -> Option<Vec<(String, String)>> {
        Some(self.properties.to_pairs())
    }

    fn read(&self, location: &str) -> Result<Vec<u8>> {
        let bytes = self.call(location, |store, path| async move {
            store.get(&path).await?.bytes().await
        })?;
        self.counters.read(bytes.len() as u64);
        Ok(bytes.to_vec())
    }

    fn read_range(&self, location: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        super::read_range_past_end_is_short(
            self,
            location,
            offset,
            len,
            |range| self.range(location, range).map(|bytes| bytes.to_vec()),
            // a range past the end: the store answers 416
            |source| source.to_string().contains("416"),
        )
    }

    fn file_size(&self, location: &str) -> Result<u64> {
        Ok(self.status(location)?.size)
    }

    fn status(&self, location: &str) -> Result<FileStatus> {
        let meta = self.call(
            location,
            |store, path| async move { store.head(&path).await },
        )?;
        Ok(FileStatus {
            size: meta.size,
            version: Some(FileVersion {
                e_tag: meta.e_tag,
                version: meta.version,
            }),
        })
    }

    fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()> {
        if bytes.len() as u64 > self.properties.multipart_threshold {
            return self.put_multipart(location, bytes);
        }
        self.put(location, bytes, PutMode::Create).map(|_| ())
    }

    fn exists(&self, location: &str) -> Result<bool> {
        match self.call(
            location,
            |store, path| async move { store.head(&path).await },
        ) {
            Ok(_) => Ok(true),
            Err(Error::Io { source, .. })
                if source.kind() == ErrorKind::NotFound
                    && !source
                        .to_string()
                        .contains("bucket (container) does not exist") =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// The names of the objects and "sub-directories" directly under `location/`. An empty
    /// listing is `NotFound`, as for a missing local directory: on an object store a
    /// directory exists only through the objects under it.
    fn list(&self, location: &str) -> Result<Vec<String>> {
        let (store, target) = self.store(location)?;
        let prefix = if target.key.is_empty() {
            None
        } else {
            Some(object_path(location, &target.key)?)
        };
        self.counters.requests(1);
        let listed = self
            .runtime
            .block_on(location, async move {
                store.list_with_delimiter(prefix.as_ref()).await
            })?
            .map_err(|e| self.error(location, &target, e))?;
        let mut names: Vec<String> = listed
            .objects
            .iter()
            .filter_map(|o| o.location.filename().map(str::to_string))
            .chain(
                listed
                    .common_prefixes
                    .iter()
                    .filter_map(|p| p.filename().map(str::to_string)),
            )
            .collect();
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
        use futures::TryStreamExt;
        let (store, target) = self.store(location)?;
        let prefix = if target.key.is_empty() {
            None
        } else {
            Some(object_path(location, &target.key)?)
        };
        // `object_store` matches a listing prefix segment by segment, so `t` lists `t/x`
        // and never `tt/x`: the folder rule of `list_files`
        self.counters.requests(1);
        let listed = self
            .runtime
            .block_on(location, async move {
                store
                    .list(prefix.as_ref())
                    .try_collect::<Vec<object_store::ObjectMeta>>()
                    .await
            })?
            .map_err(|e| self.error(location, &target, e))?;
        let base = location.trim_end_matches('/');
        let key_prefix = if target.key.is_empty() {
            String::new()
        } else {
            format!("{}/", target.key)
        };
        let mut out: Vec<ListedFile> = listed
            .into_iter()
            .filter_map(|meta| {
                let key = meta.location.as_ref();
                let below = key.strip_prefix(&key_prefix)?;
                (!below.is_empty()).then(|| ListedFile {
                    location: format!("{base}/{below}"),
                    size: meta.size,
                    last_modified_ms: meta.last_modified.timestamp_millis(),
                })
            })
            .collect();
        out.sort_by(|a, b| a.location.cmp(&b.location));
        Ok(out)
    }

    fn delete(&self, location: &str) -> Result<()> {
        match self.call(
            location,
            |store, path| async move { store.delete(&path).await },
        ) {
            Err(Error::Io { source, .. }) if source.kind() == ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    /// Bulk deletes: the locations are grouped by bucket (container) into batches of
    /// `s3.delete.batch-size` keys (Azure: at most 256, its batch limit), each batch one
    /// request (S3 `DeleteObjects`, an Azure blob batch), `max_concurrent` batches in
    /// flight.
    fn delete_many(&self, locations: &[String], max_concurrent: usize) -> Vec<Result<()>> {
        use futures::{FutureExt, StreamExt};
        let mut results: Vec<Option<Result<()>>> = locations.iter().map(|_| None).collect();
        // per store: the client, and the (index, object path) of its locations
        type Keys = Vec<(usize, String, Path)>;
        let mut groups: HashMap<String, (Arc<dyn ObjectStore>, Target, Keys)> = HashMap::new();
        for (i, location) in locations.iter().enumerate() {
            let parsed = self.store(location).and_then(|(store, target)| {
                let path = object_path(location, &target.key)?;
                Ok((store, target, path))
            });
            match parsed {
                Ok((store, target, path)) => groups
                    .entry(target.store_key.clone())
                    .or_insert_with(|| (store, target, Vec::new()))
                    .2
                    .push((i, location.clone(), path)),
                Err(e) => {
                    if let Some(slot) = results.get_mut(i) {
                        *slot = Some(Err(e));
                    }
                }
            }
        }
        // one batch is one request: object_store splits a stream into requests of at most
        // 1000 (S3) or 256 (Azure) keys, so no batch is larger than that
        let batch_size = match self.kind {
            StoreKind::S3 => self.properties.delete_batch_size.clamp(1, 1000),
            StoreKind::Azure => self.properties.delete_batch_size.clamp(1, 256),
        };
        let mut batches = Vec::new();
        for (store, target, paths) in groups.into_values() {
            for chunk in paths.chunks(batch_size) {
                batches.push((Arc::clone(&store), target.clone(), chunk.to_vec()));
            }
        }
        self.counters.requests(batches.len() as u64);
        let first = locations.first().map_or("", String::as_str);
        // the requests as boxed futures made here: a closure returning them inside the
        // spawned future would not be `Send` for every lifetime
        let requests: Vec<_> = batches
            .into_iter()
            .map(|(store, target, batch)| {
                async move {
                    let keys: Vec<object_store::Result<Path>> =
                        batch.iter().map(|(_, _, p)| Ok(p.clone())).collect();
                    let answers: Vec<object_store::Result<Path>> = store
                        .delete_stream(futures::stream::iter(keys).boxed())
                        .collect()
                        .await;
                    (target, batch, answers)
                }
                .boxed()
            })
            .collect();
        let done = self.runtime.block_on(first, async move {
            futures::stream::iter(requests)
                .buffer_unordered(max_concurrent.max(1))
                .collect::<Vec<_>>()
                .await
        });
        let done = match done {
            Ok(done) => done,
            Err(e) => {
                // the runtime is gone: nothing was deleted
                let text = e.to_string();
                return results
                    .into_iter()
                    .zip(locations)
                    .map(|(r, l)| {
                        r.unwrap_or_else(|| Err(Error::io(l, std::io::Error::other(text.clone()))))
                    })
                    .collect();
            }
        };
        for (target, batch, answers) in done {
            if answers.len() == batch.len() {
                // one answer per key, in the order sent
                for ((i, location, _), answer) in batch.iter().zip(answers) {
                    let r = match answer {
                        Ok(_) => Ok(()),
                        Err(e) => match self.error(location, &target, e) {
                            Error::Io { source, .. } if source.kind() == ErrorKind::NotFound => {
                                Ok(())
                            }
                            other => Err(other),
                        },
                    };
                    if let Some(slot) = results.get_mut(*i) {
                        *slot = Some(r);
                    }
                }
                continue;
            }
            // the request itself failed: every key of the batch is left. Its message names
            // all the batch's keys, so each file gets a shortened copy (bounded memory).
            let first = batch.first().map_or("", |(_, l, _)| l.as_str());
            let (kind, text) = match answers.into_iter().find_map(|a| a.err()) {
                Some(e) => {
                    let e = self.error(first, &target, e);
                    let kind = match &e {
                        Error::Io { source, .. } => source.kind(),
                        _ => ErrorKind::Other,
                    };
                    (kind, shorten(&e.to_string(), 300))
                }
                None => (ErrorKind::Other, "no answer for the batch".to_string()),
            };
            for (i, location, _) in &batch {
                if let Some(slot) = results.get_mut(*i) {
                    *slot = Some(Err(Error::io(
                        location,
                        std::io::Error::new(
                            kind,
                            format!(
                                "the bulk delete request of {} files failed: {text}",
                                batch.len()
                            ),
                        ),
                    )));
                }
            }
        }
        results
            .into_iter()
            .zip(locations)
            .map(|(r, l)| r.unwrap_or_else(|| Err(super::not_deleted(l))))
            .collect()
    }

    fn supports_conditional_replace(&self) -> bool {
        true
    }

    fn stats(&self) -> Option<IoStats> {
        Some(self.counters.snapshot())
    }

    fn reset_stats(&self) {
        self.counters.reset();
    }

    fn fetch_concurrency(&self) -> usize {
        self.properties.fetch_concurrency
    }

    fn replace_if_match(
        &self,
        location: &str,
        bytes: &[u8],
        expected: &FileVersion,
    ) -> Result<FileVersion> {
        if expected.e_tag.is_none() && expected.version.is_none() {
            return Err(Error::invalid_argument(format!(
                "location {location}: a conditional replace needs the ETag or version read \
                 from the file"
            )));
        }
        let mode = PutMode::Update(UpdateVersion {
            e_tag: expected.e_tag.clone(),
            version: expected.version.clone(),
        });
        match self.put(location, bytes, mode) {
            // S3 answers a conditional write on a missing key with 404 (Azure with 412):
            // either way the version the caller read is gone.
            Err(Error::Io { source, .. }) if source.kind() == ErrorKind::NotFound => {
                Err(Error::PreconditionFailed {
                    path: location.to_string(),
                    message: "the file was deleted since its version was read".to_string(),
                })
            }
            other => other,
        }
    }
}

/// `text` cut to at most `max` bytes (at a character boundary), marked when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_s3_and_azure_locations() {
        let t = parse_target(StoreKind::S3, "s3a://bkt/wh/db/t/metadata/v1.json").unwrap();
        assert_eq!(
            (t.bucket.as_str(), t.key.as_str()),
            ("bkt", "wh/db/t/metadata/v1.json")
        );
        let t = parse_target(StoreKind::S3, "s3://bkt").unwrap();
        assert_eq!(t.key, "");
        assert!(parse_target(StoreKind::S3, "s3:///key").is_err());
        assert!(parse_target(StoreKind::S3, "gs://b/k").is_err());
        let t = parse_target(
            StoreKind::Azure,
            "abfss://data@acct.dfs.core.windows.net/wh/t/x.avro",
        )
        .unwrap();
        assert_eq!(t.bucket, "data");
        assert_eq!(t.host, "acct.dfs.core.windows.net");
        assert_eq!(t.key, "wh/t/x.avro");
        let t = parse_target(
            StoreKind::Azure,
            "wasbs://data@acct.blob.core.windows.net/wh",
        )
        .unwrap();
        assert_eq!((t.bucket.as_str(), t.key.as_str()), ("data", "wh"));
        let e = parse_target(StoreKind::Azure, "abfss://acct.dfs.core.windows.net/x").unwrap_err();
        assert!(
            e.to_string()
                .contains("abfss://acct.dfs.core.windows.net/x"),
            "{e}"
        );
    }
}
