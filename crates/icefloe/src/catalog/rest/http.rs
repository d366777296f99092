//! The HTTP side of the REST catalog: requests built as plain values (so that what is sent,
//! headers included, can be checked without a server), sent with reqwest on the small
//! tokio runtime the client owns (the `Catalog` trait is synchronous), answers read up to
//! a size limit, and failures turned into typed errors by `errors`.
//!
//! Properties:
//! - `header.<Name>`: sent as the HTTP header `<Name>` on every catalog request;
//! - `X-Iceberg-Access-Delegation: vended-credentials` is sent on the requests the spec gives
//!   the `data-access` parameter (load, register, create) unless `header.X-Iceberg-Access-Delegation`
//!   says otherwise, as PyIceberg does (Java sends it only when configured): a value replaces
//!   it (and goes on every request, as any `header.*`), an empty value sends none;
//! - `rest.client.connection-timeout-ms` (default 10 000) and
//!   `rest.client.socket-timeout-ms` (the whole request, default 120 000), Java's names;
//! - `rest.max-response-bytes`: the largest answer read (default 256 MiB; table metadata
//!   with a long history is large, anything past this is refused, not buffered);
//! - `rest.client.max-retries` (default 5, Java's name): how many times a `GET` or `HEAD`
//!   answered 429, 502, 503 or 504 is sent again, after the server's `Retry-After` (in
//!   seconds) or else Java's backoff (1 s, doubling up to 64 s, plus up to a tenth). Java
//!   also re-sends a commit's `POST` on those answers; icefloe does not: a 502 or 504 may come
//!   after the server applied it, and the re-sent commit would then fail its requirements
//!   (409), making a commit that succeeded look failed and its files deletable. A commit's
//!   5xx stays `CommitStateUnknown`.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::auth::{parse_token_response, Auth};
use super::config::{encode, get};
use super::errors::{from_failure, protocol_error, Endpoint, Failure};
use crate::error::{Error, Result};
use crate::io::properties::Secret;
use crate::io::redact::Redactor;
use crate::io::runtime::IoRuntime;

pub(super) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
pub(super) const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
pub(super) const DEFAULT_MAX_RESPONSE_BYTES: usize = 256 * 1024 * 1024;
pub(super) const DEFAULT_MAX_RETRIES: u32 = 5;
/// The longest wait between attempts (Java's 64 s), also for a server's `Retry-After`.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(64);
/// Error bodies are read up to this much (only their start is shown).
const MAX_ERROR_BODY: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    Get,
    Head,
    Post,
    Delete,
}

impl Method {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Delete => "DELETE",
        }
    }

    fn reqwest(self) -> reqwest::Method {
        match self {
            Method::Get => reqwest::Method::GET,
            Method::Head => reqwest::Method::HEAD,
            Method::Post => reqwest::Method::POST,
            Method::Delete => reqwest::Method::DELETE,
        }
    }
}

/// One catalog request: a path relative to the catalog's base URI.
#[derive(Debug, Clone)]
pub(super) struct Request {
    pub method: Method,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub body: Option<Value>,
    pub endpoint: Endpoint,
    /// The table, view or namespace it is about (for `NoSuch*` errors).
    pub subject: String,
    /// Asks for delegated access (`X-Iceberg-Access-Delegation`): the spec's `data-access`.
    pub access_delegation: bool,
}

impl Request {
    pub(super) fn new(
        method: Method,
        path: String,
        endpoint: Endpoint,
        subject: String,
    ) -> Request {
        Request {
            method,
            path,
            query: Vec::new(),
            body: None,
            endpoint,
            subject,
            access_delegation: false,
        }
    }

    /// Marks a request that asks for vended credentials (loadTable, createTable,
    /// registerTable).
    pub(super) fn delegating(mut self) -> Request {
        self.access_delegation = true;
        self
    }

    pub(super) fn query(mut self, key: &str, value: impl Into<String>) -> Request {
        self.query.push((key.to_string(), value.into()));
        self
    }

    pub(super) fn json(mut self, body: Value) -> Request {
        self.body = Some(body);
        self
    }
}

/// A request ready to send: the full URL, every header, the body bytes.
#[derive(Debug, Clone)]
pub(super) struct Prepared {
    pub method: Method,
    pub url: String,
    /// `METHOD /path` for messages (no query, no host, no credentials).
    pub shown: String,
    /// Header values may be credentials: never print them.
    pub headers: Vec<(String, Secret)>,
    pub body: Option<Vec<u8>>,
}

/// A successful answer.
#[derive(Debug)]
pub(super) struct Response {
    pub body: Vec<u8>,
}

impl Response {
    /// The body as JSON; `shown` names the request in errors.
    pub(super) fn json(&self, shown: &str) -> Result<Value> {
        serde_json::from_slice(&self.body)
            .map_err(|e| protocol_error(shown, &format!("the body is not JSON ({e})")))
    }
}

/// Property keys whose values are credentials (scrubbed from every message).
fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "secret",
        "token",
        "credential",
        "password",
        "key",
        "sas",
        "signature",
    ]
    .iter()
    .any(|w| k.contains(w))
        || k.starts_with("header.authorization")
}

fn parse_millis(properties: &[(String, String)], key: &str, default: Duration) -> Result<Duration> {
    match get(properties, key) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "{key} must be a positive number of milliseconds, not '{v}'"
                ))
            }),
    }
}

/// The base URI as given (`uri`), without a trailing `/`; must be http(s).
pub(super) fn base_uri(properties: &[(String, String)]) -> Result<String> {
    let uri = get(properties, "uri")
        .ok_or_else(|| Error::invalid_argument("a REST catalog needs a 'uri' property"))?
        .trim()
        .trim_end_matches('/');
    if !(uri.starts_with("http://") || uri.starts_with("https://")) {
        return Err(Error::invalid_argument(format!(
            "REST catalog uri '{uri}' is not an http(s) URL"
        )));
    }
    Ok(uri.to_string())
}

/// The access delegation header, and what it asks for unless the properties say otherwise.
pub(super) const ACCESS_DELEGATION_HEADER: &str = "X-Iceberg-Access-Delegation";
pub(super) const DEFAULT_ACCESS_DELEGATION: &str = "vended-credentials";

/// Sends catalog requests.
pub(super) struct HttpClient {
    base: String,
    client: reqwest::Client,
    runtime: IoRuntime,
    /// `header.*`, checked to be valid header names and values.
    headers: Vec<(String, Secret)>,
    /// No `header.X-Iceberg-Access-Delegation` was given: delegating requests send the
    /// default.
    default_delegation: bool,
    auth: Auth,
    /// Property values that are credentials (the auth's own are added when scrubbing).
    secrets: Vec<String>,
    max_response_bytes: usize,
    /// Re-sends of a throttled `GET` or `HEAD` (`rest.client.max-retries`).
    max_retries: u32,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("base", &self.base)
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl HttpClient {
    /// A client for the catalog at `uri`, configured by `properties` (see the module docs
    /// and `auth`).
    pub(super) fn new(properties: &[(String, String)]) -> Result<HttpClient> {
        let base = base_uri(properties)?;
        let mut headers = Vec::new();
        for (k, v) in properties {
            let Some(name) = k.strip_prefix("header.") else {
                continue;
            };
            reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                Error::invalid_argument(format!(
                    "property '{k}': '{name}' is not an HTTP header name"
                ))
            })?;
            // the value is not shown: it may be a credential
            reqwest::header::HeaderValue::from_str(v).map_err(|_| {
                Error::invalid_argument(format!("property '{k}' is not a valid HTTP header value"))
            })?;
            headers.retain(|(n, _): &(String, Secret)| !n.eq_ignore_ascii_case(name));
            headers.push((name.to_string(), Secret::new(v.as_str())));
        }
        let default_delegation = !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(ACCESS_DELEGATION_HEADER));
        // an empty value turns the header off
        headers.retain(|(n, v)| {
            !(n.eq_ignore_ascii_case(ACCESS_DELEGATION_HEADER) && v.expose().trim().is_empty())
        });
        let secrets = properties
            .iter()
            .filter(|(k, v)| is_secret_key(k) && v.len() >= 4)
            .map(|(_, v)| v.clone())
            .collect();
        let connect = parse_millis(
            properties,
            "rest.client.connection-timeout-ms",
            DEFAULT_CONNECT_TIMEOUT,
        )?;
        let request = parse_millis(
            properties,
            "rest.client.socket-timeout-ms",
            DEFAULT_REQUEST_TIMEOUT,
        )?;
        let max_response_bytes = match get(properties, "rest.max-response-bytes") {
            None => DEFAULT_MAX_RESPONSE_BYTES,
            Some(v) => v
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "rest.max-response-bytes must be a positive number of bytes, not '{v}'"
                    ))
                })?,
        };
        let max_retries = match get(properties, "rest.client.max-retries") {
            None => DEFAULT_MAX_RETRIES,
            Some(v) => v.trim().parse::<u32>().map_err(|_| {
                Error::invalid_argument(format!(
                    "rest.client.max-retries must be a number of retries (0 or more), not '{v}'"
                ))
            })?,
        };
        let client = reqwest::Client::builder()
            .connect_timeout(connect)
            .timeout(request)
            .user_agent(concat!("icefloe/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::ServiceFailure {
                message: format!("cannot build the HTTP client for {base}: {e}"),
            })?;
        let auth = Auth::from_properties(properties, &base)?;
        Ok(HttpClient {
            base,
            client,
            runtime: IoRuntime::new()?,
            headers,
            default_delegation,
            auth,
            secrets,
            max_response_bytes,
            max_retries,
        })
    }

    pub(super) fn base(&self) -> &str {
        &self.base
    }

    /// Scrubs every known credential (the properties', the auth's, the current token).
    pub(super) fn redactor(&self) -> Redactor {
        let mut secrets = self.secrets.clone();
        secrets.extend(self.auth.secrets());
        secrets.extend(self.headers.iter().map(|(_, v)| v.expose().to_string()));
        Redactor::new(secrets)
    }

    /// The request as it would be sent with `bearer` as the token.
    pub(super) fn prepare(&self, req: &Request, bearer: Option<&Secret>) -> Prepared {
        let mut url = format!("{}/{}", self.base, req.path);
        if !req.query.is_empty() {
            let q: Vec<String> = req
                .query
                .iter()
                .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
                .collect();
            url.push('?');
            url.push_str(&q.join("&"));
        }
        let mut headers: Vec<(String, Secret)> = Vec::new();
        if req.body.is_some() {
            headers.push(("Content-Type".into(), Secret::new("application/json")));
        }
        headers.push((
            "X-Client-Version".into(),
            Secret::new(concat!("icefloe ", env!("CARGO_PKG_VERSION"))),
        ));
        if req.access_delegation && self.default_delegation {
            headers.push((
                ACCESS_DELEGATION_HEADER.into(),
                Secret::new(DEFAULT_ACCESS_DELEGATION),
            ));
        }
        headers.extend(self.headers.iter().cloned());
        if let Some(token) = bearer {
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case("authorization"));
            headers.push((
                "Authorization".into(),
                Secret::new(format!("Bearer {}", token.expose())),
            ));
        }
        Prepared {
            method: req.method,
            url,
            shown: format!("{} /{}", req.method.as_str(), req.path),
            headers,
            body: req.body.as_ref().map(|b| b.to_string().into_bytes()),
        }
    }

    /// The token to send now: the static one, or an OAuth2 token (fetched when missing or
    /// due for a refresh).
    fn bearer(&self) -> Result<Option<Secret>> {
        match &self.auth {
            Auth::None => Ok(None),
            Auth::Token(t) => Ok(Some(t.clone())),
            Auth::OAuth2(o) => {
                if let Some(t) = o.fresh(Instant::now()) {
                    return Ok(Some(t));
                }
                let fetched_at = Instant::now();
                let shown = format!("POST {}", strip_query(&o.server_uri));
                let prepared = Prepared {
                    method: Method::Post,
                    url: o.server_uri.clone(),
                    shown: shown.clone(),
                    headers: vec![(
                        "Content-Type".into(),
                        Secret::new("application/x-www-form-urlencoded"),
                    )],
                    body: Some(o.form().into_bytes()),
                };
                let Answer { status, body, .. } = self.execute(&prepared, Endpoint::Token)?;
                if !(200..300).contains(&status) {
                    return Err(from_failure(
                        &Failure {
                            endpoint: Endpoint::Token,
                            shown: &shown,
                            status,
                            body: &body,
                            subject: "",
                        },
                        &self.redactor(),
                    ));
                }
                let token = parse_token_response(&body, &shown, fetched_at)?;
                let secret = token.token.clone();
                o.store(token);
                Ok(Some(secret))
            }
        }
    }

    /// Sends the request; a 2xx answer is returned, anything else is a typed error. With
    /// OAuth2, a 401 fetches a new token and sends the request once more. A throttled or
    /// unavailable `GET`/`HEAD` is sent again (module docs).
    pub(super) fn send(&self, req: &Request) -> Result<Response> {
        let mut retries = 0;
        loop {
            let (prepared, answer) = self.send_once(req)?;
            let Answer {
                status,
                body,
                retry_after,
            } = answer;
            if (200..300).contains(&status) {
                return Ok(Response { body });
            }
            if retries < self.max_retries && is_retried(req.method, status) {
                retries += 1;
                std::thread::sleep(retry_wait(retries, retry_after));
                continue;
            }
            return Err(self.failure(req, &prepared, status, &body, retries));
        }
    }

    /// One attempt (two with OAuth2 after a 401).
    fn send_once(&self, req: &Request) -> Result<(Prepared, Answer)> {
        let prepared = self.prepare(req, self.bearer()?.as_ref());
        let answer = self.execute(&prepared, req.endpoint)?;
        if answer.status == 401 {
            if let Auth::OAuth2(o) = &self.auth {
                o.invalidate();
                let prepared = self.prepare(req, self.bearer()?.as_ref());
                let answer = self.execute(&prepared, req.endpoint)?;
                return Ok((prepared, answer));
            }
        }
        Ok((prepared, answer))
    }

    fn failure(
        &self,
        req: &Request,
        prepared: &Prepared,
        status: u16,
        body: &[u8],
        retries: u32,
    ) -> Error {
        let error = self.typed_failure(req, prepared, status, body);
        if retries == 0 {
            return error;
        }
        // say that the client waited, so a user does not just try again at once
        let note = format!(" (after {retries} retries)");
        match error {
            Error::ServiceFailure { message } => Error::ServiceFailure {
                message: message + &note,
            },
            other => other,
        }
    }

    fn typed_failure(&self, req: &Request, prepared: &Prepared, status: u16, body: &[u8]) -> Error {
        from_failure(
            &Failure {
                endpoint: req.endpoint,
                shown: &prepared.shown,
                status,
                body,
                subject: &req.subject,
            },
            &self.redactor(),
        )
    }

    /// Sends a prepared request and reads the answer (bounded). Transport failures are
    /// typed here: on a commit, anything but a refused connection leaves the outcome
    /// unknown (the server may have applied it).
    fn execute(&self, p: &Prepared, endpoint: Endpoint) -> Result<Answer> {
        let mut builder = self.client.request(p.method.reqwest(), p.url.as_str());
        for (name, value) in &p.headers {
            builder = builder.header(name.as_str(), value.expose());
        }
        if let Some(body) = &p.body {
            builder = builder.body(body.clone());
        }
        let limit = self.max_response_bytes;
        let outcome = self.runtime.block_on(&p.shown, async move {
            let mut resp = builder.send().await.map_err(Transport::Http)?;
            let status = resp.status().as_u16();
            let retry_after = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let cap = if (200..300).contains(&status) {
                limit
            } else {
                MAX_ERROR_BODY
            };
            let mut body = Vec::new();
            while let Some(chunk) = resp.chunk().await.map_err(Transport::Http)? {
                if body.len() + chunk.len() > cap {
                    if (200..300).contains(&status) {
                        return Err(Transport::TooLarge(cap));
                    }
                    // an error body is only shown in part: keep its start
                    body.extend_from_slice(&chunk[..cap - body.len()]);
                    break;
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Answer {
                status,
                body,
                retry_after,
            })
        })?;
        outcome.map_err(|t| self.transport_error(&p.shown, endpoint, t))
    }

    fn transport_error(&self, shown: &str, endpoint: Endpoint, t: Transport) -> Error {
        let redactor = self.redactor();
        match t {
            Transport::TooLarge(cap) => Error::ServiceFailure {
                message: format!(
                    "{shown}: the answer is larger than {cap} bytes (rest.max-response-bytes)"
                ),
            },
            Transport::Http(e) => {
                let connect = e.is_connect();
                let timeout = e.is_timeout();
                let message = redactor.scrub(&format!(
                    "{} {}: {}",
                    shown,
                    if timeout { "timed out" } else { "failed" },
                    error_chain(&e.without_url())
                ));
                if endpoint.is_commit() && !connect {
                    return Error::CommitStateUnknown { message };
                }
                let kind = if timeout {
                    std::io::ErrorKind::TimedOut
                } else if connect {
                    std::io::ErrorKind::ConnectionRefused
                } else {
                    std::io::ErrorKind::Other
                };
                Error::io(
                    format!("{} ({shown})", self.base),
                    std::io::Error::new(kind, message),
                )
            }
        }
    }
}

/// A server's answer, whatever its status.
struct Answer {
    status: u16,
    body: Vec<u8>,
    /// `Retry-After` in seconds, if the server sent one (its date form is not read).
    retry_after: Option<Duration>,
}

/// Whether an answer is one to send the request again for: throttled or unavailable, on a
/// request that can be repeated without effect (module docs say why not commits).
fn is_retried(method: Method, status: u16) -> bool {
    matches!(method, Method::Get | Method::Head) && matches!(status, 429 | 502 | 503 | 504)
}

/// The wait before retry number `retry` (1 for the first): the server's `Retry-After`
/// when it gave a positive one, else Java's 1 s doubling (at most 64 s) plus up to a tenth,
/// so that clients throttled together do not come back together.
fn retry_wait(retry: u32, retry_after: Option<Duration>) -> Duration {
    if let Some(wait) = retry_after.filter(|d| !d.is_zero()) {
        return wait.min(MAX_RETRY_WAIT);
    }
    let base_ms = 1000u64 << retry.saturating_sub(1).min(6);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    Duration::from_millis(base_ms + u64::from(nanos) % (base_ms / 10))
}

enum Transport {
    Http(reqwest::Error),
    TooLarge(usize),
}

/// An error and its sources, one line (reqwest's own message is often just "error sending
/// request").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

fn strip_query(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::catalog::testing::props;

    fn header<'a>(p: &'a Prepared, name: &str) -> Option<&'a str> {
        p.headers
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.expose())
    }

    #[test]
    fn requests_carry_the_token_and_header_properties() {
        let client = HttpClient::new(&props(&[
            ("uri", "http://127.0.0.1:1/api/"),
            ("token", "tok-123456"),
            ("header.X-Iceberg-Access-Delegation", "vended-credentials"),
            ("header.X-Custom", "a"),
            ("header.x-custom", "b"),
        ]))
        .unwrap();
        let req = Request::new(
            Method::Get,
            "v1/namespaces/db".into(),
            Endpoint::Namespace,
            "db".into(),
        )
        .query("pageToken", "a b&c");
        let p = client.prepare(&req, client.bearer().unwrap().as_ref());
        assert_eq!(
            p.url,
            "http://127.0.0.1:1/api/v1/namespaces/db?pageToken=a%20b%26c"
        );
        assert_eq!(p.shown, "GET /v1/namespaces/db");
        assert_eq!(header(&p, "authorization"), Some("Bearer tok-123456"));
        assert_eq!(
            header(&p, "X-Iceberg-Access-Delegation"),
            Some("vended-credentials")
        );
        // a later header property of the same name (any case) wins
        assert_eq!(header(&p, "x-custom"), Some("b"));
        assert_eq!(
            p.headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case("x-custom"))
                .count(),
            1
        );
        assert!(p.body.is_none() && header(&p, "content-type").is_none());
        // the Debug forms show no credential
        let shown = format!("{p:?} {client:?}");
        assert!(!shown.contains("tok-123456"), "{shown}");
        assert!(client.redactor().scrub("x tok-123456 y").contains("***"));
        // JSON bodies are typed
        let p = client.prepare(&req.clone().json(serde_json::json!({"a": 1})), None);
        assert_eq!(header(&p, "content-type"), Some("application/json"));
        assert_eq!(p.body.as_deref(), Some(&br#"{"a":1}"#[..]));
        assert!(header(&p, "authorization").is_none());
    }

    #[test]
    fn only_throttled_reads_are_retried_after_java_s_waits() {
        for status in [429, 502, 503, 504] {
            assert!(is_retried(Method::Get, status));
            assert!(is_retried(Method::Head, status));
            // a commit (or any POST/DELETE) may have been applied: never re-sent
            assert!(!is_retried(Method::Post, status));
            assert!(!is_retried(Method::Delete, status));
        }
        for status in [200, 400, 401, 404, 409, 500] {
            assert!(!is_retried(Method::Get, status));
        }
        for (retry, low) in [(1, 1000), (2, 2000), (3, 4000), (7, 64_000), (40, 64_000)] {
            let wait = retry_wait(retry, None).as_millis();
            assert!(wait >= low && wait < low + low / 10, "{retry}: {wait}");
        }
        let server = Some(Duration::from_secs(3));
        assert_eq!(retry_wait(1, server), Duration::from_secs(3));
        assert_eq!(
            retry_wait(1, Some(Duration::from_secs(3600))),
            MAX_RETRY_WAIT
        );
        assert!(retry_wait(1, Some(Duration::ZERO)) >= Duration::from_secs(1));
    }

    #[test]
    fn access_delegation_is_asked_for_by_default_and_can_be_changed_or_turned_off() {
        let load = Request::new(
            Method::Get,
            "v1/namespaces/db/tables/t".into(),
            Endpoint::Table,
            "db.t".into(),
        );
        let delegating = load.clone().delegating();
        let client = HttpClient::new(&props(&[("uri", "http://127.0.0.1:1")])).unwrap();
        let p = client.prepare(&delegating, None);
        assert_eq!(
            header(&p, "X-Iceberg-Access-Delegation"),
            Some("vended-credentials")
        );
        // only the spec's data-access requests ask
        assert_eq!(
            header(&client.prepare(&load, None), "X-Iceberg-Access-Delegation"),
            None
        );
        // a header property replaces the default, on every request (any case)
        let client = HttpClient::new(&props(&[
            ("uri", "http://127.0.0.1:1"),
            ("header.x-iceberg-access-delegation", "remote-signing"),
        ]))
        .unwrap();
        for req in [&load, &delegating] {
            let p = client.prepare(req, None);
            let sent: Vec<&str> = p
                .headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case("X-Iceberg-Access-Delegation"))
                .map(|(_, v)| v.expose())
                .collect();
            assert_eq!(sent, vec!["remote-signing"]);
        }
        // an empty value sends none
        let client = HttpClient::new(&props(&[
            ("uri", "http://127.0.0.1:1"),
            ("header.X-Iceberg-Access-Delegation", ""),
        ]))
        .unwrap();
        let p = client.prepare(&delegating, None);
        assert!(!p
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("X-Iceberg-Access-Delegation")));
    }

    #[test]
    fn bad_properties_are_refused_without_showing_values() {
        for bad in [
            props(&[("uri", "ftp://h")]),
            props(&[]),
            props(&[("uri", "http://h"), ("header.Bad Name", "x")]),
            props(&[
                ("uri", "http://h"),
                ("header.Authorization", "Bearer s3cret\n"),
            ]),
            props(&[
                ("uri", "http://h"),
                ("rest.client.socket-timeout-ms", "soon"),
            ]),
            props(&[("uri", "http://h"), ("rest.max-response-bytes", "0")]),
            props(&[("uri", "http://h"), ("rest.client.max-retries", "-1")]),
        ] {
            let e = HttpClient::new(&bad).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
            assert!(!e.to_string().contains("s3cret"), "{e}");
        }
    }

    #[test]
    fn a_refused_connection_is_a_typed_io_error_and_unknown_only_for_commits() {
        // a port that nothing listens on
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let client = HttpClient::new(&props(&[
            ("uri", &format!("http://127.0.0.1:{port}")),
            ("token", "tok-abcdefgh"),
        ]))
        .unwrap();
        let req = Request::new(
            Method::Get,
            "v1/config".into(),
            Endpoint::Config,
            String::new(),
        );
        let e = client.send(&req).unwrap_err();
        match &e {
            Error::Io { path, source } => {
                assert!(path.contains(&format!("127.0.0.1:{port}")), "{e}");
                assert_eq!(source.kind(), std::io::ErrorKind::ConnectionRefused, "{e}");
            }
            other => panic!("{other:?}"),
        }
        assert!(!format!("{e} {e:?}").contains("tok-abcdefgh"));
        // the commit was never sent: it failed, its outcome is known
        let commit = Request::new(Method::Post, "v1/x".into(), Endpoint::Commit, "db.t".into());
        assert!(matches!(client.send(&commit), Err(Error::Io { .. })));
    }
}
