//! The REST catalog client against Apache Iceberg's own REST server (the 1.10.1 runnable
//! jar), started by `scripts/servers.sh start` (scripts/test.sh does it) twice: with its
//! warehouse on local disk, and on moto's S3 vending its S3 credentials in loadTable's
//! `config`. Their URIs are in the env file:
//!
//! ```text
//! scripts/servers.sh start && source target/servers/servers.env
//! cargo test -p icefloe --test rest_catalog
//! ```
//!
//! Without the URIs the tests skip with a message, except under CI (`CI=true`), where they
//! fail. The 1.10.1 server issues OAuth2 tokens but checks none, so what is sent (bearer
//! token, `header.*`) is tested on the request builder (catalog/rest/http.rs unit tests).
#![cfg(all(feature = "rest", feature = "s3"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use icefloe::catalog::load::load_catalog;
use icefloe::catalog::rest::RestCatalog;
use icefloe::catalog::{Catalog, TableIdent, TableState};
use icefloe::commit::properties::RetryPolicy;
use icefloe::commit::{create_table, Transaction};
use icefloe::manifest::{DataContentType, DataFile, FileFormat};
use icefloe::scan::TableScan;
use icefloe::spec::partition::PartitionSpec;
use icefloe::spec::schema::Schema;
use icefloe::spec::sort::SortOrder;
use icefloe::Error;

fn env(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => Some(v),
        _ => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{var} is not set: run scripts/servers.sh start (scripts/test.sh does)");
            }
            eprintln!(
                "skipped: {var} is not set (scripts/servers.sh start, then source \
                 target/servers/servers.env)"
            );
            None
        }
    }
}

fn props(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A name no other run (or test) has used.
fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}_{}_{nanos}", std::process::id())
}

/// The catalog on the local-disk server.
fn local() -> Option<Arc<dyn Catalog>> {
    let uri = env("ICEFLOE_TEST_REST_URI")?;
    Some(load_catalog("rest", &props(&[("type", "rest"), ("uri", &uri)])).unwrap())
}

fn schema() -> Schema {
    Schema::from_json(
        &serde_json::json!({
            "type": "struct", "schema-id": 0,
            "fields": [
                {"id": 1, "name": "id", "required": true, "type": "long"},
                {"id": 2, "name": "data", "required": false, "type": "string"}
            ]
        }),
        "",
    )
    .unwrap()
}

fn new_table(catalog: &Arc<dyn Catalog>, ident: &TableIdent) -> TableState {
    create_table(
        Arc::clone(catalog),
        ident,
        &schema(),
        &PartitionSpec::unpartitioned(),
        &SortOrder::unsorted(),
        None,
        &[("owner".to_string(), "icefloe-tests".to_string())],
        None,
    )
    .unwrap()
}

fn data_file(location: &str, name: &str, rows: i64) -> DataFile {
    DataFile::new(
        DataContentType::Data,
        format!("{location}/data/{name}.parquet"),
        FileFormat::Parquet,
        Vec::new(),
        rows,
        100 * rows,
    )
}

fn no_retries() -> RetryPolicy {
    RetryPolicy {
        num_retries: 0,
        ..RetryPolicy::default()
    }
}

#[test]
fn namespaces_are_created_listed_updated_and_dropped() {
    let Some(cat) = local() else { return };
    let ns = vec![unique("ns")];
    assert!(!cat.namespace_exists(&ns).unwrap());
    cat.create_namespace(&ns, &props(&[("a", "1"), ("b", "2")]))
        .unwrap();
    assert!(cat.namespace_exists(&ns).unwrap());
    let e = cat.create_namespace(&ns, &[]).unwrap_err();
    assert!(matches!(e, Error::AlreadyExists { .. }), "{e}");
    assert!(cat.list_namespaces(&[]).unwrap().contains(&ns));

    let p = cat.namespace_properties(&ns).unwrap();
    assert!(p.contains(&("a".into(), "1".into())), "{p:?}");
    assert!(p.iter().any(|(k, _)| k == "location"), "{p:?}");
    cat.update_namespace_properties(&ns, &["a".to_string()], &props(&[("c", "3")]))
        .unwrap();
    let p = cat.namespace_properties(&ns).unwrap();
    assert!(!p.iter().any(|(k, _)| k == "a"), "{p:?}");
    assert!(p.contains(&("c".into(), "3".into())), "{p:?}");

    // a nested namespace, listed under its parent (the `parent` query parameter)
    let child = vec![ns[0].clone(), "child level".to_string()];
    cat.create_namespace(&child, &[]).unwrap();
    assert_eq!(cat.list_namespaces(&ns).unwrap(), vec![child.clone()]);
    assert!(cat.namespace_exists(&child).unwrap());
    cat.drop_namespace(&child).unwrap();

    // a namespace holding a table cannot be dropped
    let t = TableIdent::new(ns.clone(), "t");
    new_table(&cat, &t);
    let e = cat.drop_namespace(&ns).unwrap_err();
    assert!(matches!(e, Error::NamespaceNotEmpty { .. }), "{e}");
    cat.drop_table(&t).unwrap();

    cat.drop_namespace(&ns).unwrap();
    assert!(!cat.namespace_exists(&ns).unwrap());
    for e in [
        cat.drop_namespace(&ns).unwrap_err(),
        cat.namespace_properties(&ns).unwrap_err(),
        cat.list_tables(&ns).unwrap_err(),
    ] {
        assert!(matches!(e, Error::NoSuchNamespace { .. }), "{e}");
        assert!(e.to_string().contains(&ns[0]), "{e}");
    }
}

#[test]
fn tables_are_created_loaded_listed_renamed_registered_and_dropped() {
    let Some(cat) = local() else { return };
    let ns = vec![unique("tables")];
    cat.create_namespace(&ns, &[]).unwrap();
    let t = TableIdent::new(ns.clone(), "events");
    let created = new_table(&cat, &t);
    assert!(
        created.metadata_location.contains("/events/metadata/"),
        "{}",
        created.metadata_location
    );
    assert_eq!(created.metadata.property("owner"), Some("icefloe-tests"));
    // the default location is the namespace's, as the server's own catalog places tables
    assert!(
        created
            .metadata
            .location
            .ends_with(&format!("/{}/events", ns[0])),
        "{}",
        created.metadata.location
    );
    let e = create_table(
        Arc::clone(&cat),
        &t,
        &schema(),
        &PartitionSpec::unpartitioned(),
        &SortOrder::unsorted(),
        None,
        &[],
        None,
    )
    .unwrap_err();
    assert!(matches!(e, Error::AlreadyExists { .. }), "{e}");

    let loaded = cat.load_table(&t).unwrap();
    assert_eq!(loaded.metadata_location, created.metadata_location);
    assert_eq!(loaded.metadata.table_uuid, created.metadata.table_uuid);
    assert_eq!(loaded.metadata.current_schema().unwrap(), &schema());
    assert!(cat.table_exists(&t).unwrap());
    assert_eq!(cat.list_tables(&ns).unwrap(), vec![t.clone()]);

    let moved = TableIdent::new(ns.clone(), "events_renamed");
    cat.rename_table(&t, &moved).unwrap();
    assert!(!cat.table_exists(&t).unwrap());
    assert_eq!(
        cat.load_table(&moved).unwrap().metadata.table_uuid,
        created.metadata.table_uuid
    );

    // dropped (files kept), then registered again from its metadata file
    cat.drop_table(&moved).unwrap();
    assert!(cat.list_tables(&ns).unwrap().is_empty());
    let registered = cat.register_table(&t, &loaded.metadata_location).unwrap();
    assert_eq!(registered.metadata.table_uuid, created.metadata.table_uuid);
    let e = cat
        .register_table(&t, &loaded.metadata_location)
        .unwrap_err();
    assert!(matches!(e, Error::AlreadyExists { .. }), "{e}");

    cat.purge_table(&t, Default::default()).unwrap();
    assert!(!cat.table_exists(&t).unwrap());
    cat.drop_namespace(&ns).unwrap();
}

#[test]
fn a_missing_table_is_no_such_table_naming_the_request() {
    let Some(cat) = local() else { return };
    let ns = vec![unique("missing")];
    cat.create_namespace(&ns, &[]).unwrap();
    let t = TableIdent::new(ns.clone(), "nope");
    let e = cat.load_table(&t).unwrap_err();
    match &e {
        Error::NoSuchTable { table } => {
            assert!(table.contains(&t.to_string()), "{e}");
            assert!(
                table.contains(&format!("GET /v1/namespaces/{}/tables/nope", ns[0])),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(!cat.table_exists(&t).unwrap());
    assert!(matches!(cat.drop_table(&t), Err(Error::NoSuchTable { .. })));
    assert!(matches!(
        cat.rename_table(&t, &TableIdent::new(ns.clone(), "other")),
        Err(Error::NoSuchTable { .. })
    ));
    // views: none here
    assert!(cat.list_views(&ns).unwrap().is_empty());
    assert!(!cat.view_exists(&t).unwrap());
    let e = cat.load_view(&t).unwrap_err();
    assert!(matches!(e, Error::NoSuchView { .. }), "{e}");
    assert!(matches!(cat.drop_view(&t), Err(Error::NoSuchView { .. })));
    // a table in a namespace that does not exist
    let e = cat
        .load_table(&TableIdent::new(vec![unique("no_ns")], "t"))
        .unwrap_err();
    assert!(
        matches!(e, Error::NoSuchTable { .. } | Error::NoSuchNamespace { .. }),
        "{e}"
    );
    cat.drop_namespace(&ns).unwrap();
}

#[test]
fn an_append_commits_through_the_server_and_a_reload_scans_it() {
    let Some(cat) = local() else { return };
    let ns = vec![unique("append")];
    cat.create_namespace(&ns, &[]).unwrap();
    let t = TableIdent::new(ns.clone(), "t");
    let created = new_table(&cat, &t);
    let location = created.metadata.location.clone();

    let mut tx = Transaction::load(Arc::clone(&cat), t.clone()).unwrap();
    tx.append_files(vec![data_file(&location, "a", 10)]);
    let committed = tx.commit().unwrap();
    let snapshot = committed.metadata.current_snapshot().unwrap().clone();
    assert_ne!(committed.metadata_location, created.metadata_location);

    // a fresh client sees the snapshot, and plans a scan of it through the catalog's FileIO
    let other = local().unwrap();
    let reloaded = other.load_table(&t).unwrap();
    assert_eq!(reloaded.metadata_location, committed.metadata_location);
    let current = reloaded.metadata.current_snapshot().unwrap();
    assert_eq!(current.snapshot_id, snapshot.snapshot_id);
    assert_eq!(
        current.summary.as_ref().unwrap().get("added-records"),
        Some("10")
    );
    assert_eq!(reloaded.metadata.metadata_log.len(), 1);
    let plan = TableScan::new(Arc::clone(&reloaded.metadata), other.io())
        .plan_files()
        .unwrap();
    assert_eq!(plan.tasks.len(), 1);
    assert_eq!(
        plan.tasks[0].file.file.file_path,
        format!("{location}/data/a.parquet")
    );

    // a property change and a second append in one transaction
    let mut tx = Transaction::load(Arc::clone(&cat), t.clone()).unwrap();
    tx.set_properties(props(&[("k", "v")])).unwrap();
    tx.remove_properties(vec!["owner".to_string()]);
    tx.append_files(vec![data_file(&location, "b", 5)]);
    let second = tx.commit().unwrap();
    let reloaded = other.load_table(&t).unwrap();
    assert_eq!(reloaded.metadata_location, second.metadata_location);
    assert_eq!(reloaded.metadata.property("k"), Some("v"));
    assert_eq!(reloaded.metadata.property("owner"), None);
    assert_eq!(reloaded.metadata.snapshots.len(), 2);
    let plan = TableScan::new(Arc::clone(&reloaded.metadata), other.io())
        .plan_files()
        .unwrap();
    assert_eq!(plan.tasks.len(), 2);

    cat.purge_table(&t, Default::default()).unwrap();
    cat.drop_namespace(&ns).unwrap();
}

#[test]
fn a_concurrent_commit_is_a_conflict_then_retried_on_a_fresh_base() {
    let Some(cat) = local() else { return };
    let ns = vec![unique("conflict")];
    cat.create_namespace(&ns, &[]).unwrap();
    let t = TableIdent::new(ns.clone(), "t");
    let base = new_table(&cat, &t);
    let location = base.metadata.location.clone();

    // two writers start from the same base; the first wins
    let mut first = Transaction::new(Arc::clone(&cat), t.clone(), base.clone());
    first.append_files(vec![data_file(&location, "first", 1)]);
    let won = first.commit().unwrap();

    // without retries the second gets the server's 409 as CommitFailed
    let mut second =
        Transaction::new(Arc::clone(&cat), t.clone(), base.clone()).with_retry_policy(no_retries());
    second.append_files(vec![data_file(&location, "second", 2)]);
    let e = second.commit().unwrap_err();
    assert!(matches!(e, Error::CommitFailed { .. }), "{e}");
    assert!(e.to_string().contains("POST /v1/namespaces/"), "{e}");
    assert_eq!(
        cat.load_table(&t).unwrap().metadata_location,
        won.metadata_location
    );

    // with retries it is re-applied on the refreshed base
    let mut third = Transaction::new(Arc::clone(&cat), t.clone(), base);
    third.append_files(vec![data_file(&location, "third", 3)]);
    let state = third.commit().unwrap();
    let current = state.metadata.current_snapshot().unwrap();
    assert_eq!(
        current.parent_snapshot_id,
        won.metadata.current_snapshot().map(|s| s.snapshot_id)
    );
    let plan = TableScan::new(Arc::clone(&state.metadata), cat.io())
        .plan_files()
        .unwrap();
    assert_eq!(plan.tasks.len(), 2);

    cat.purge_table(&t, Default::default()).unwrap();
    cat.drop_namespace(&ns).unwrap();
}

#[test]
fn oauth2_client_credentials_fetch_a_token_and_refusals_are_typed() {
    let Some(uri) = env("ICEFLOE_TEST_REST_URI") else {
        return;
    };
    let secret = "very-secret-client-secret";
    let credential = format!("icefloe-client:{secret}");
    // the server's token endpoint (the spec's default `/v1/oauth/tokens`)
    let cat = RestCatalog::open(
        "rest",
        &props(&[
            ("uri", &uri),
            ("credential", &credential),
            ("scope", "catalog"),
        ]),
    )
    .unwrap();
    let ns = vec![unique("oauth")];
    cat.create_namespace(&ns, &[]).unwrap();
    assert!(cat.namespace_exists(&ns).unwrap());
    cat.drop_namespace(&ns).unwrap();
    assert!(!format!("{cat:?}").contains(secret));

    // a token endpoint that refuses: a typed error without the secret
    let e = RestCatalog::open(
        "rest",
        &props(&[
            ("uri", &uri),
            ("credential", &credential),
            (
                "oauth2-server-uri",
                &format!("{uri}/v1/no-such-token-endpoint"),
            ),
        ]),
    )
    .unwrap_err();
    assert!(matches!(e, Error::NotAuthorized { .. }), "{e}");
    let shown = format!("{e} {e:?}");
    assert!(shown.contains("/v1/no-such-token-endpoint"), "{shown}");
    assert!(!shown.contains(secret), "{shown}");
}

#[test]
fn something_that_is_not_a_rest_catalog_is_a_typed_error() {
    let Some(s3) = env("ICEFLOE_TEST_S3_ENDPOINT") else {
        return;
    };
    // moto answers /v1/config with something that is not a catalog's config
    let e = RestCatalog::open("rest", &props(&[("uri", &s3), ("token", "tok-0123456789")]))
        .unwrap_err();
    let shown = format!("{e} {e:?}");
    assert!(shown.contains("/v1/config"), "{shown}");
    assert!(!shown.contains("tok-0123456789"), "{shown}");
    // an answer over the size limit is refused, not buffered
    let uri = env("ICEFLOE_TEST_REST_URI").unwrap();
    let ns = vec![unique("big")];
    let normal = RestCatalog::open("rest", &props(&[("uri", &uri)])).unwrap();
    normal
        .create_namespace(&ns, &props(&[("long", &"x".repeat(10_000))]))
        .unwrap();
    // (the config answer, about 1 KB, still fits)
    let small = RestCatalog::open(
        "rest",
        &props(&[("uri", &uri), ("rest.max-response-bytes", "5000")]),
    )
    .unwrap();
    let e = small.namespace_properties(&ns).unwrap_err();
    assert!(matches!(e, Error::ServiceFailure { .. }), "{e}");
    assert!(e.to_string().contains("larger than 5000 bytes"), "{e}");
    small.drop_namespace(&ns).unwrap();
    // nothing listening
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let e = RestCatalog::open(
        "rest",
        &props(&[("uri", &format!("http://127.0.0.1:{port}"))]),
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::ConnectionRefused),
        "{e}"
    );
}

/// What a proxy does besides forwarding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// A commit (`POST` to `.../tables/<name>`, `.../views/<name>` or
    /// `.../transactions/commit`) reaches the server, but its answer is replaced by a 502.
    LoseCommitAnswers,
    /// The first request that is not a token request is answered 401 without reaching
    /// the server (an expired or revoked token).
    RejectFirstRequest,
    /// The first loadTable answer's `config` says its S3 credentials expired a second ago;
    /// later ones say they expire in an hour.
    VendExpiring,
    /// The first loadTable answer's credentials expired a second ago; later loadTable
    /// requests are answered 503.
    VendExpiredThenFail,
}

/// Whether an HTTP request line is a loadTable (`GET .../tables/<name>`).
fn is_load_table(request_line: &str) -> bool {
    request_line.starts_with("GET ") && request_line.contains("/tables/")
}

/// The loadTable requests among the recorded heads.
fn load_tables(heads: &Mutex<Vec<String>>) -> Vec<String> {
    heads
        .lock()
        .unwrap()
        .iter()
        .filter(|h| is_load_table(h.lines().next().unwrap_or("")))
        .cloned()
        .collect()
}

/// The body of an HTTP answer (`Transfer-Encoding: chunked` decoded).
fn answer_body(head: &str, rest: &[u8]) -> Vec<u8> {
    if !head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return rest.to_vec();
    }
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(eol) = rest[at..].windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&rest[at..at + eol]).into_owned();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        at += eol + 2;
        if size == 0 {
            break;
        }
        out.extend_from_slice(&rest[at..at + size]);
        at += size + 2;
    }
    out
}

/// A JSON answer with `config."s3.session-token-expires-at-ms"` set to `expires_at_ms`.
fn with_expiry(answer: &[u8], expires_at_ms: i64) -> Vec<u8> {
    let end = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&answer[..end - 4]).into_owned();
    let mut body: serde_json::Value =
        serde_json::from_slice(&answer_body(&head, &answer[end..])).unwrap();
    body["config"]["s3.session-token-expires-at-ms"] = serde_json::json!(expires_at_ms.to_string());
    let body = body.to_string();
    let status = head.lines().next().unwrap();
    format!(
        "{status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A proxy on 127.0.0.1 in front of `upstream` that keeps the head of every request (to
/// see which credentials signed it), with `fault`. It stops by itself after 60 s.
fn recording_proxy(upstream: SocketAddr, fault: Fault) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&heads);
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            let Ok((client, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            let seen = Arc::clone(&seen);
            std::thread::spawn(move || forward(client, upstream, &seen, fault));
        }
    });
    (format!("http://{addr}"), heads)
}

/// The head of an HTTP message (up to the blank line) with its `Connection` header
/// replaced by `Connection: close`, and the bytes after it.
fn close_after(message: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let end = message.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&message[..end - 4]);
    let mut out: Vec<&str> = head
        .split("\r\n")
        .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
        .collect();
    out.push("Connection: close");
    let head = format!("{}\r\n\r\n", out.join("\r\n"));
    Some((head.into_bytes(), message[end..].to_vec()))
}

/// Forwards one request per connection (both sides are told `Connection: close`, so that
/// every request opens a connection and is recorded).
fn forward(mut client: TcpStream, upstream: SocketAddr, seen: &Mutex<Vec<String>>, fault: Fault) {
    client.set_nonblocking(false).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match client.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(k) => buf.extend_from_slice(&chunk[..k]),
        }
    }
    let Some((head, mut body)) = close_after(&buf) else {
        return;
    };
    let head_text = String::from_utf8_lossy(&head).into_owned();
    let length: usize = head_text
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while body.len() < length {
        match client.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(k) => body.extend_from_slice(&chunk[..k]),
        }
    }
    let (first_catalog_request, load_tables_so_far) = {
        let mut seen = seen.lock().unwrap();
        seen.push(head_text.clone());
        (
            !head_text.contains("/oauth/tokens")
                && seen.iter().filter(|h| !h.contains("/oauth/tokens")).count() == 1,
            seen.iter()
                .filter(|h| is_load_table(h.lines().next().unwrap_or("")))
                .count(),
        )
    };
    let load_table = is_load_table(head_text.lines().next().unwrap_or(""));
    if fault == Fault::VendExpiredThenFail && load_table && load_tables_so_far > 1 {
        let body = r#"{"error":{"message":"unavailable","type":"ServiceUnavailableException","code":503}}"#;
        let _ = write!(
            client,
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        return;
    }
    if fault == Fault::RejectFirstRequest && first_catalog_request {
        let body =
            r#"{"error":{"message":"token expired","type":"NotAuthorizedException","code":401}}"#;
        let _ = write!(
            client,
            "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        return;
    }
    let Ok(mut up) = TcpStream::connect(upstream) else {
        return;
    };
    if up
        .write_all(&head)
        .and_then(|_| up.write_all(&body))
        .is_err()
    {
        return;
    }
    let mut answer = Vec::new();
    let _ = up.read_to_end(&mut answer);
    let request_line = head_text.lines().next().unwrap_or("");
    let is_commit = request_line.starts_with("POST ")
        && ((request_line.contains("/tables/") && !request_line.contains("/tables/rename"))
            || (request_line.contains("/views/") && !request_line.contains("/views/rename"))
            || request_line.contains("/transactions/commit"));
    if fault == Fault::LoseCommitAnswers && is_commit {
        let body =
            r#"{"error":{"message":"bad gateway","type":"ServiceFailureException","code":502}}"#;
        answer = format!(
            "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes();
    }
    if matches!(fault, Fault::VendExpiring | Fault::VendExpiredThenFail)
        && load_table
        && answer.starts_with(b"HTTP/1.1 200")
    {
        let expires_at = if load_tables_so_far == 1 {
            now_ms() - 1000
        } else {
            now_ms() + 3_600_000
        };
        answer = with_expiry(&answer, expires_at);
    }
    if let Some((head, rest)) = close_after(&answer) {
        let _ = client
            .write_all(&head)
            .and_then(|_| client.write_all(&rest));
    }
    let _ = client.shutdown(std::net::Shutdown::Both);
}

#[test]
fn vended_credentials_from_load_table_reach_the_file_io() {
    let (Some(uri), Some(s3), Some(key_id)) = (
        env("ICEFLOE_TEST_REST_S3_URI"),
        env("ICEFLOE_TEST_S3_ENDPOINT"),
        env("ICEFLOE_TEST_REST_S3_VENDED_KEY_ID"),
    ) else {
        return;
    };
    let upstream: SocketAddr = s3.trim_start_matches("http://").parse().unwrap();
    let (proxy, heads) = recording_proxy(upstream, Fault::None);
    // the client knows the endpoint but has no S3 credentials of its own: the server does
    // not send `s3.endpoint`, and it vends the keys
    let cat: Arc<dyn Catalog> = Arc::new(
        RestCatalog::open(
            "rest-s3",
            &props(&[
                ("uri", &uri),
                ("s3.endpoint", &proxy),
                ("s3.path-style-access", "true"),
                ("s3.region", "us-east-1"),
                ("header.X-Iceberg-Access-Delegation", "vended-credentials"),
            ]),
        )
        .unwrap(),
    );
    let ns = vec![unique("vended")];
    cat.create_namespace(&ns, &[]).unwrap();
    let t = TableIdent::new(ns.clone(), "t");
    let created = new_table(&cat, &t);
    let location = created.metadata.location.clone();
    assert!(location.starts_with("s3://"), "{location}");

    let loaded = cat.load_table(&t).unwrap();
    let rest = RestCatalog::open(
        "rest-s3",
        &props(&[
            ("uri", &uri),
            ("s3.endpoint", &proxy),
            ("s3.path-style-access", "true"),
        ]),
    )
    .unwrap();
    rest.load_table(&t).unwrap();
    let keys = rest.file_io_keys(&loaded.metadata_location);
    assert!(keys.contains(&"s3.access-key-id".to_string()), "{keys:?}");
    assert!(
        keys.contains(&"s3.secret-access-key".to_string()),
        "{keys:?}"
    );

    // the metadata file the server wrote is read through the catalog's FileIO, signed with
    // the vended key
    let bytes = cat.io().read(&loaded.metadata_location).unwrap();
    assert!(!bytes.is_empty());
    {
        let heads = heads.lock().unwrap();
        let signed: Vec<&String> = heads.iter().filter(|h| h.contains("Credential=")).collect();
        assert!(
            !signed.is_empty(),
            "no signed request went through the proxy"
        );
        assert!(
            signed
                .iter()
                .all(|h| h.contains(&format!("Credential={key_id}/"))),
            "a request was not signed with the vended key"
        );
    }

    // an append writes its manifests to S3 with the vended credentials, and scans plan
    let mut tx = Transaction::load(Arc::clone(&cat), t.clone()).unwrap();
    tx.append_files(vec![data_file(&location, "a", 7)]);
    let committed = tx.commit().unwrap();
    let plan = TableScan::new(Arc::clone(&committed.metadata), cat.io())
        .plan_files()
        .unwrap();
    assert_eq!(plan.tasks.len(), 1);
    let heads = heads.lock().unwrap();
    assert!(heads
        .iter()
        .any(|h| h.starts_with("PUT ") && h.contains(&format!("Credential={key_id}/"))));

    cat.drop_table(&t).unwrap();
    cat.drop_namespace(&ns).unwrap();
}

/// The request heads a proxy recorded.
type Heads = Arc<Mutex<Vec<String>>>;

/// The catalog on the S3-backed server through a proxy with `fault`, the S3 endpoint
/// given by the client (the server does not send it); also the proxy's recorded heads.
fn s3_catalog_behind_proxy(
    fault: Fault,
    extra: &[(&str, &str)],
) -> Option<(Arc<dyn Catalog>, Heads)> {
    let (uri, s3) = (
        env("ICEFLOE_TEST_REST_S3_URI")?,
        env("ICEFLOE_TEST_S3_ENDPOINT")?,
    );
    let upstream: SocketAddr = uri.trim_start_matches("http://").parse().unwrap();
    let (proxy, heads) = recording_proxy(upstream, fault);
    let mut p = props(&[
        ("uri", &proxy),
        ("s3.endpoint", &s3),
        ("s3.path-style-access", "true"),
        ("s3.region", "us-east-1"),
    ]);
    p.extend(props(extra));
    let cat: Arc<dyn Catalog> = Arc::new(RestCatalog::open("rest-s3", &p).unwrap());
    Some((cat, heads))
}

fn delegation_header(head: &str) -> Option<String> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("x-iceberg-access-delegation")
            .then(|| v.trim().to_string())
    })
}

#[test]
fn load_table_asks_for_vended_credentials_unless_told_not_to() {
    let Some((cat, heads)) = s3_catalog_behind_proxy(Fault::None, &[]) else {
        return;
    };
    let ns = vec![unique("delegation")];
    cat.create_namespace(&ns, &[]).unwrap();
    let t = TableIdent::new(ns.clone(), "t");
    new_table(&cat, &t);
    let loaded = cat.load_table(&t).unwrap();
    let loads = load_tables(&heads);
    assert_eq!(loads.len(), 1, "{loads:?}");
    assert_eq!(
        delegation_header(&loads[0]).as_deref(),
        Some("vended-credentials")
    );
    // the staged create (createTable, `POST .../tables`) asks too, as its data is written
    // before the table exists; the commits (`POST .../tables/{table}`) are not data-access
    // requests
    let posts: Vec<String> = heads
        .lock()
        .unwrap()
        .iter()
        .filter(|h| h.starts_with("POST "))
        .cloned()
        .collect();
    let is_create = |h: &String| {
        h.split_whitespace()
            .nth(1)
            .is_some_and(|path| path.split('?').next().unwrap_or("").ends_with("/tables"))
    };
    assert!(posts.iter().any(is_create), "{posts:?}");
    for h in &posts {
        let expected = is_create(h).then_some("vended-credentials");
        assert_eq!(delegation_header(h).as_deref(), expected, "{h}");
    }
    // the credentials are read back through the vended config
    assert!(!cat.io().read(&loaded.metadata_location).unwrap().is_empty());

    // turned off with an empty header property: nothing is asked for; the reference
    // server (include-credentials) vends its keys all the same, which the spec allows
    let (off, off_heads) =
        s3_catalog_behind_proxy(Fault::None, &[("header.X-Iceberg-Access-Delegation", "")])
            .unwrap();
    off.load_table(&t).unwrap();
    let loads = load_tables(&off_heads);
    assert_eq!(loads.len(), 1, "{loads:?}");
    assert_eq!(delegation_header(&loads[0]), None, "{}", loads[0]);
    // and replaced by another value, on every request
    let (other, other_heads) = s3_catalog_behind_proxy(
        Fault::None,
        &[("header.X-Iceberg-Access-Delegation", "remote-signing")],
    )
    .unwrap();
    other.table_exists(&t).unwrap();
    other.load_table(&t).unwrap();
    for h in other_heads.lock().unwrap().iter() {
        assert_eq!(
            delegation_header(h).as_deref(),
            Some("remote-signing"),
            "{h}"
        );
    }
    cat.drop_table(&t).unwrap();
    cat.drop_namespace(&ns).unwrap();
}

#[test]
fn expired_vended_credentials_are_refreshed_once_before_the_request() {
    let Some((cat, heads)) = s3_catalog_behind_proxy(Fault::VendExpiring, &[]) else {
        return;
    };
    let ns = vec![unique("refresh")];
    cat.create_namespace(&ns, &[]).unwrap();
    let t = TableIdent::new(ns.clone(), "t");
    new_table(&cat, &t);
    let loaded = cat.load_table(&t).unwrap();
    assert_eq!(load_tables(&heads).len(), 1);
    // the credential expired a second ago: one refresh (a loadTable: the 1.10.1 server has
    // no loadCredentials endpoint) before the read, which works
    let bytes = cat.io().read(&loaded.metadata_location).unwrap();
    assert!(!bytes.is_empty());
    assert_eq!(load_tables(&heads).len(), 2);
    // the new one lasts an hour: no more refreshes
    cat.io().read(&loaded.metadata_location).unwrap();
    let props = cat.io().properties_for(&loaded.metadata.location).unwrap();
    let expiry: i64 = props
        .iter()
        .find(|(k, _)| k == "s3.session-token-expires-at-ms")
        .unwrap()
        .1
        .parse()
        .unwrap();
    assert!(expiry > now_ms() + 3_000_000, "{expiry}");
    assert_eq!(load_tables(&heads).len(), 2);
    // executors are handed the fresh credentials, never the catalog's own
    assert!(props
        .iter()
        .all(|(k, _)| !k.starts_with("header.") && k != "token"));
    cat.drop_table(&t).unwrap();
    cat.drop_namespace(&ns).unwrap();
}

#[test]
fn a_failed_refresh_is_a_typed_error_naming_the_table() {
    // one refresh attempt: a throttled GET would otherwise be sent again (with Java's waits)
    let no_retries = [("rest.client.max-retries", "0")];
    let Some((cat, heads)) = s3_catalog_behind_proxy(Fault::VendExpiredThenFail, &no_retries)
    else {
        return;
    };
    let ns = vec![unique("refresh_fails")];
    cat.create_namespace(&ns, &[]).unwrap();
    let t = TableIdent::new(ns.clone(), "t");
    new_table(&cat, &t);
    let loaded = cat.load_table(&t).unwrap();
    let e = cat.io().read(&loaded.metadata_location).unwrap_err();
    assert!(matches!(e, Error::NotAuthorized { .. }), "{e:?}");
    let shown = format!("{e} {e:?}");
    assert!(shown.contains(&t.to_string()), "{shown}");
    assert!(shown.contains("503"), "{shown}");
    assert!(!shown.contains("icefloe-vended-secret"), "{shown}");
    assert_eq!(load_tables(&heads).len(), 2);
    cat.drop_table(&t).unwrap();
    cat.drop_namespace(&ns).unwrap();
}

#[test]
fn a_lost_commit_answer_is_state_unknown_and_keeps_the_files() {
    let Some(uri) = env("ICEFLOE_TEST_REST_URI") else {
        return;
    };
    let upstream: SocketAddr = uri.trim_start_matches("http://").parse().unwrap();
    let (proxy, _) = recording_proxy(upstream, Fault::LoseCommitAnswers);
    let cat = local().unwrap();
    let ns = vec![unique("unknown")];
    cat.create_namespace(&ns, &[]).unwrap();
    let t = TableIdent::new(ns.clone(), "t");
    let created = new_table(&cat, &t);
    let location = created.metadata.location.clone();
    let data = format!("{location}/data/a.parquet");
    cat.io().write_new(&data, b"not really parquet").unwrap();

    // the same server behind a proxy that loses the answers to commits
    let lossy: Arc<dyn Catalog> =
        Arc::new(RestCatalog::open("rest", &props(&[("uri", &proxy)])).unwrap());
    let mut tx = Transaction::load(Arc::clone(&lossy), t.clone()).unwrap();
    tx.append_files(vec![data_file(&location, "a", 10)]);
    tx.own_files([data.clone()]);
    let e = tx.commit().unwrap_err();
    assert!(matches!(e, Error::CommitStateUnknown { .. }), "{e}");
    assert!(e.to_string().contains("502"), "{e}");
    assert!(
        e.to_string().contains(&data),
        "the error names the kept files: {e}"
    );
    // nothing was deleted: the commit did reach the server, and its files are the table's
    assert!(cat.io().exists(&data).unwrap());
    let state = cat.load_table(&t).unwrap();
    let snapshot = state
        .metadata
        .current_snapshot()
        .expect("the commit was applied");
    assert!(cat
        .io()
        .exists(snapshot.manifest_list.as_deref().unwrap())
        .unwrap());
    let plan = TableScan::new(Arc::clone(&state.metadata), cat.io())
        .plan_files()
        .unwrap();
    assert_eq!(plan.tasks.len(), 1);

    cat.purge_table(&t, Default::default()).unwrap();
    cat.drop_namespace(&ns).unwrap();
}

#[test]
fn lists_follow_every_page() {
    let Some(uri) = env("ICEFLOE_TEST_REST_URI") else {
        return;
    };
    let upstream: SocketAddr = uri.trim_start_matches("http://").parse().unwrap();
    let (proxy, heads) = recording_proxy(upstream, Fault::None);
    let cat: Arc<dyn Catalog> = Arc::new(
        RestCatalog::open("rest", &props(&[("uri", &proxy), ("rest.page-size", "2")])).unwrap(),
    );
    let ns = vec![unique("pages")];
    cat.create_namespace(&ns, &[]).unwrap();
    let mut idents: Vec<TableIdent> = (0..5)
        .map(|i| TableIdent::new(ns.clone(), format!("t{i}")))
        .collect();
    for t in &idents {
        new_table(&cat, t);
    }
    let children: Vec<Vec<String>> = (0..3)
        .map(|i| vec![ns[0].clone(), format!("c{i}")])
        .collect();
    for c in &children {
        cat.create_namespace(c, &[]).unwrap();
    }
    heads.lock().unwrap().clear();
    idents.sort();
    assert_eq!(cat.list_tables(&ns).unwrap(), idents);
    let mut listed = cat.list_namespaces(&ns).unwrap();
    listed.sort();
    assert_eq!(listed, children);
    let heads = heads.lock().unwrap();
    let pages = |part: &str| {
        heads
            .iter()
            .filter(|h| h.starts_with("GET ") && h.contains(part))
            .count()
    };
    assert!(pages("/tables?") >= 3, "{heads:?}");
    assert!(heads.iter().any(|h| h.contains("pageToken=")), "{heads:?}");
    assert!(pages("/namespaces?") >= 2, "{heads:?}");
    drop(heads);
    for t in &idents {
        cat.drop_table(t).unwrap();
    }
    for c in &children {
        cat.drop_namespace(c).unwrap();
    }
    cat.drop_namespace(&ns).unwrap();
}

#[test]
fn a_401_fetches_a_new_oauth2_token_once() {
    let Some(uri) = env("ICEFLOE_TEST_REST_URI") else {
        return;
    };
    let upstream: SocketAddr = uri.trim_start_matches("http://").parse().unwrap();
    let (proxy, heads) = recording_proxy(upstream, Fault::RejectFirstRequest);
    let cat = RestCatalog::open(
        "rest",
        &props(&[
            ("uri", &proxy),
            ("credential", "client-401:its-secret-value"),
        ]),
    )
    .unwrap();
    let heads = heads.lock().unwrap();
    let tokens = heads
        .iter()
        .filter(|h| h.contains("/v1/oauth/tokens"))
        .count();
    assert_eq!(tokens, 2, "a token, a 401, a new token: {heads:?}");
    let configs: Vec<&String> = heads.iter().filter(|h| h.contains("/v1/config")).collect();
    assert_eq!(configs.len(), 2, "{heads:?}");
    assert!(configs
        .iter()
        .all(|h| h.contains("Bearer client-credentials-token:sub=client-401")));
    drop(heads);
    assert!(cat.list_namespaces(&[]).is_ok());
}

#[test]
fn schema_spec_order_upgrade_tags_and_expiry_commit_through_the_server() {
    use icefloe::commit::{ExpireSnapshots, ManageSnapshots};
    use icefloe::spec::partition_update::UpdatePartitionSpec;
    use icefloe::spec::schema_update::UpdateSchema;
    use icefloe::spec::types::{PrimitiveType, Type};

    let Some(cat) = local() else { return };
    let ns = vec![unique("evolve")];
    cat.create_namespace(&ns, &[]).unwrap();
    let t = TableIdent::new(ns.clone(), "t");
    let created = create_table(
        Arc::clone(&cat),
        &t,
        &schema(),
        &PartitionSpec::unpartitioned(),
        &SortOrder::unsorted(),
        None,
        &[],
        Some(2),
    )
    .unwrap();
    let location = created.metadata.location.clone();
    let mut snapshots = Vec::new();
    for name in ["a", "b", "c"] {
        let mut tx = Transaction::load(Arc::clone(&cat), t.clone()).unwrap();
        tx.append_files(vec![data_file(&location, name, 1)]);
        snapshots.push(tx.commit().unwrap().metadata.current_snapshot_id.unwrap());
    }

    // a new column, an identity partition on `data` and a sort order, in one commit
    let base = cat.load_table(&t).unwrap();
    let md = Arc::clone(&base.metadata);
    let mut tx = Transaction::new(Arc::clone(&cat), t.clone(), base);
    let mut update = UpdateSchema::new(md.current_schema().unwrap(), md.last_column_id);
    update
        .add_column(
            None,
            "extra",
            Type::Primitive(PrimitiveType::String),
            None,
            None,
        )
        .unwrap();
    tx.update_schema(&update).unwrap();
    let mut spec = UpdatePartitionSpec::new(
        md.format_version,
        md.current_schema().unwrap(),
        md.default_spec().unwrap(),
        &md.partition_specs,
        md.last_partition_id,
    )
    .unwrap();
    spec.add_identity("data").unwrap();
    tx.update_spec(
        spec.apply().unwrap(),
        md.default_spec_id,
        md.last_partition_id,
    );
    let order = SortOrder::from_json(
        &serde_json::json!({"order-id": 1, "fields": [
            {"transform": "identity", "source-id": 1, "direction": "asc", "null-order": "nulls-first"}
        ]}),
        "",
    )
    .unwrap();
    tx.replace_sort_order(order, md.default_sort_order_id);
    tx.commit().unwrap();

    let evolved = local().unwrap().load_table(&t).unwrap().metadata;
    let current = evolved.current_schema().unwrap();
    assert_eq!(evolved.current_schema_id, 1);
    assert!(
        current.to_json().to_string().contains("\"extra\""),
        "{}",
        current.to_json()
    );
    assert_eq!(evolved.last_column_id, 3);
    assert_eq!(evolved.default_spec().unwrap().fields.len(), 1);
    assert_eq!(evolved.last_partition_id, 1000);
    assert_eq!(evolved.default_sort_order_id, 1);
    assert_eq!(evolved.default_sort_order().unwrap().fields.len(), 1);

    // a format upgrade and a property, then a tag, then an expiry
    let mut tx = Transaction::load(Arc::clone(&cat), t.clone()).unwrap();
    tx.set_properties(props(&[("format-version", "3"), ("p", "q")]))
        .unwrap();
    tx.commit().unwrap();
    let mut tx = Transaction::load(Arc::clone(&cat), t.clone()).unwrap();
    let mut ms = ManageSnapshots::new();
    ms.create_tag("second", snapshots[1]);
    tx.add_change(Box::new(ms));
    tx.commit().unwrap();
    ExpireSnapshots::new()
        .expire_snapshot_id(snapshots[0])
        .clean_expired_files(false)
        .commit(Arc::clone(&cat), &t)
        .unwrap();

    let last = local().unwrap().load_table(&t).unwrap().metadata;
    assert_eq!(last.format_version, 3);
    assert_eq!(last.property("p"), Some("q"));
    assert_eq!(
        last.snapshot_ref("second").unwrap().snapshot_id,
        snapshots[1]
    );
    let ids: Vec<i64> = last.snapshots.iter().map(|s| s.snapshot_id).collect();
    assert_eq!(ids, snapshots[1..].to_vec());
    assert_eq!(last.current_snapshot_id, Some(snapshots[2]));

    cat.drop_table(&t).unwrap();
    cat.drop_namespace(&ns).unwrap();
}

#[test]
fn create_or_replace_keeps_the_history_on_the_server() {
    use icefloe::commit::{create_or_replace_table, NewTable};

    let Some(cat) = local() else { return };
    let ns = vec![unique("replace")];
    cat.create_namespace(&ns, &[]).unwrap();
    let t = TableIdent::new(ns.clone(), "t");
    // creating through create-or-replace, with its first append in the same commit
    let first = create_or_replace_table(Arc::clone(&cat), &t, NewTable::new(schema())).unwrap();
    assert!(first.metadata.current_snapshot_id.is_none());
    let mut tx = Transaction::load(Arc::clone(&cat), t.clone()).unwrap();
    tx.append_files(vec![data_file(&first.metadata.location, "a", 1)]);
    let appended = tx.commit().unwrap();
    let old_snapshot = appended.metadata.current_snapshot_id.unwrap();

    let other = Schema::from_json(
        &serde_json::json!({"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "k", "required": false, "type": "int"}
        ]}),
        "",
    )
    .unwrap();
    let replaced = create_or_replace_table(Arc::clone(&cat), &t, NewTable::new(other)).unwrap();
    let reloaded = local().unwrap().load_table(&t).unwrap();
    assert_eq!(reloaded.metadata_location, replaced.metadata_location);
    assert_eq!(reloaded.metadata.table_uuid, first.metadata.table_uuid);
    assert!(reloaded.metadata.current_snapshot_id.is_none());
    assert!(reloaded.metadata.snapshot_by_id(old_snapshot).is_some());
    assert!(reloaded
        .metadata
        .current_schema()
        .unwrap()
        .to_json()
        .to_string()
        .contains("\"k\""));
    cat.drop_table(&t).unwrap();
    cat.drop_namespace(&ns).unwrap();
}

fn view_def(sql: &str, extra_column: bool) -> icefloe::commit::view::ViewDefinition {
    let mut schema = schema();
    if !extra_column {
        schema = Schema::from_json(
            &serde_json::json!({
                "type": "struct", "schema-id": 0,
                "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]
            }),
            "",
        )
        .unwrap();
    }
    icefloe::commit::view::ViewDefinition {
        schema,
        queries: vec![("spark".to_string(), sql.to_string())],
        default_namespace: vec!["db".to_string()],
        default_catalog: None,
        summary: icefloe::commit::view::engine_summary(),
        properties: [("owner".to_string(), "icefloe".to_string())].into(),
        location: None,
    }
}

#[test]
fn views_are_created_replaced_listed_renamed_and_dropped() {
    use icefloe::commit::view::{create_or_replace_view, create_view, replace_view};
    let Some(cat) = local() else { return };
    let ns = vec![unique("views")];
    cat.create_namespace(&ns, &[]).unwrap();
    let v = TableIdent::new(ns.clone(), "v");

    let created = create_view(cat.as_ref(), &v, &view_def("SELECT id FROM t", false)).unwrap();
    assert_eq!(created.metadata.current_version_id, 1);
    let version = created.metadata.current_version().unwrap();
    assert_eq!(
        version.sql_for("spark").map(|r| r.sql.as_str()),
        Some("SELECT id FROM t")
    );
    assert_eq!(
        created.metadata.properties.get("owner").map(String::as_str),
        Some("icefloe")
    );
    assert!(cat.view_exists(&v).unwrap());
    assert_eq!(cat.list_views(&ns).unwrap(), vec![v.clone()]);
    let loaded = cat.load_view(&v).unwrap();
    assert_eq!(loaded.metadata_location, created.metadata_location);

    // a second create of the name is AlreadyExists, as is a view over a table's name
    let e = create_view(cat.as_ref(), &v, &view_def("SELECT 1", false)).unwrap_err();
    assert!(matches!(e, Error::AlreadyExists { .. }), "{e}");
    let t = TableIdent::new(ns.clone(), "t");
    new_table(&cat, &t);
    let e = create_view(cat.as_ref(), &t, &view_def("SELECT 1", false)).unwrap_err();
    assert!(matches!(e, Error::AlreadyExists { .. }), "{e}");
    // the server refuses it too when asked directly (no client-side check)
    let md = icefloe::commit::view::new_view_metadata(
        &view_def("SELECT 1", false),
        &format!("{}-v2", created.metadata.location),
        1,
    )
    .unwrap();
    let e = cat.commit_view(&v, None, md).unwrap_err();
    assert!(matches!(e, Error::AlreadyExists { .. }), "{e}");

    // a replacement with a new schema: version 2, schema 1, the server's log
    let replaced =
        replace_view(cat.as_ref(), &v, &view_def("SELECT id, data FROM t", true)).unwrap();
    assert_eq!(replaced.metadata.current_version_id, 2);
    assert_eq!(replaced.metadata.versions.len(), 2);
    assert_eq!(replaced.metadata.schemas.len(), 2);
    let current = replaced.metadata.current_version().unwrap();
    assert_eq!(current.schema_id, Some(1));
    assert_eq!(
        current.sql_for("spark").map(|r| r.sql.as_str()),
        Some("SELECT id, data FROM t")
    );
    assert_eq!(replaced.metadata.view_uuid, created.metadata.view_uuid);
    assert_eq!(
        replaced
            .metadata
            .version_log
            .iter()
            .map(|e| e.version_id)
            .collect::<Vec<_>>(),
        vec![1, 2]
    );
    // an earlier version again: re-activated, nothing added (version 1 is not one: the
    // server made it with its own summary, as Java's server does for any client)
    let third = replace_view(cat.as_ref(), &v, &view_def("SELECT 3", false)).unwrap();
    assert_eq!(third.metadata.current_version_id, 3);
    let back = create_or_replace_view(cat.as_ref(), &v, &view_def("SELECT id, data FROM t", true))
        .unwrap();
    assert_eq!(back.metadata.current_version_id, 2);
    assert_eq!(back.metadata.versions.len(), 3);
    assert_eq!(
        back.metadata
            .version_log
            .iter()
            .map(|e| e.version_id)
            .collect::<Vec<_>>(),
        vec![1, 2, 3, 2]
    );

    // a writer that replaces from a stale base loses: CommitFailed
    let stale = loaded;
    let md = icefloe::commit::view::replace_view_metadata(
        &stale.metadata,
        &view_def("SELECT 3", false),
        1,
    )
    .unwrap();
    let mut md = md;
    md.view_uuid = stale.metadata.view_uuid.clone();
    // the uuid requirement holds; a dropped and re-created view does not have it
    cat.drop_view(&v).unwrap();
    create_view(cat.as_ref(), &v, &view_def("SELECT id FROM t", false)).unwrap();
    let e = cat.commit_view(&v, Some(&stale), md).unwrap_err();
    assert!(matches!(e, Error::CommitFailed { .. }), "{e}");

    // replacing a missing view
    let missing = TableIdent::new(ns.clone(), "missing");
    let e = replace_view(cat.as_ref(), &missing, &view_def("SELECT 1", false)).unwrap_err();
    assert!(matches!(e, Error::NoSuchView { .. }), "{e}");

    let renamed = TableIdent::new(ns.clone(), "renamed");
    cat.rename_view(&v, &renamed).unwrap();
    assert!(!cat.view_exists(&v).unwrap());
    assert_eq!(cat.list_views(&ns).unwrap(), vec![renamed.clone()]);
    cat.drop_view(&renamed).unwrap();
    assert!(cat.list_views(&ns).unwrap().is_empty());
    cat.purge_table(&t, Default::default()).unwrap();
    cat.drop_namespace(&ns).unwrap();
}

#[test]
fn a_multi_table_commit_moves_both_tables_or_neither() {
    use icefloe::commit::commit_transactions;
    let Some(cat) = local() else { return };
    let ns = vec![unique("multi")];
    cat.create_namespace(&ns, &[]).unwrap();
    let a = TableIdent::new(ns.clone(), "a");
    let b = TableIdent::new(ns.clone(), "b");
    let base_a = new_table(&cat, &a);
    let base_b = new_table(&cat, &b);

    let mut tx_a = Transaction::new(Arc::clone(&cat), a.clone(), base_a.clone());
    tx_a.append_files(vec![data_file(&base_a.metadata.location, "a1", 3)]);
    let mut tx_b = Transaction::new(Arc::clone(&cat), b.clone(), base_b.clone());
    tx_b.append_files(vec![data_file(&base_b.metadata.location, "b1", 4)]);
    tx_b.set_properties(props(&[("moved", "yes")])).unwrap();
    let states = commit_transactions(vec![tx_a, tx_b]).unwrap();
    assert_eq!(states.len(), 2);
    let now_a = cat.load_table(&a).unwrap();
    let now_b = cat.load_table(&b).unwrap();
    assert_eq!(states[0].metadata_location, now_a.metadata_location);
    assert_eq!(states[1].metadata_location, now_b.metadata_location);
    assert_eq!(now_a.metadata.snapshots.len(), 1);
    assert_eq!(now_b.metadata.snapshots.len(), 1);
    assert_eq!(now_b.metadata.property("moved"), Some("yes"));

    // a stale base on one table fails the whole commit: neither table moves
    let mut tx_a = Transaction::new(Arc::clone(&cat), a.clone(), now_a.clone());
    tx_a.append_files(vec![data_file(&base_a.metadata.location, "a2", 1)]);
    let mut tx_b = Transaction::new(Arc::clone(&cat), b.clone(), base_b.clone());
    tx_b.append_files(vec![data_file(&base_b.metadata.location, "b2", 1)]);
    let e = commit_transactions(vec![tx_a, tx_b]).unwrap_err();
    assert!(matches!(e, Error::CommitFailed { .. }), "{e}");
    assert!(e.to_string().contains("transactions/commit"), "{e}");
    assert!(e.to_string().contains("not retried"), "{e}");
    assert_eq!(
        cat.load_table(&a).unwrap().metadata_location,
        now_a.metadata_location
    );
    assert_eq!(
        cat.load_table(&b).unwrap().metadata_location,
        now_b.metadata_location
    );

    // a transaction without changes is not sent; an empty list commits nothing
    let idle = Transaction::new(Arc::clone(&cat), a.clone(), now_a.clone());
    let states = commit_transactions(vec![idle]).unwrap();
    assert_eq!(states[0].metadata_location, now_a.metadata_location);
    assert!(commit_transactions(Vec::new()).unwrap().is_empty());

    // a table named twice is refused before anything is sent
    let one = Transaction::new(Arc::clone(&cat), a.clone(), now_a.clone());
    let mut two = Transaction::new(Arc::clone(&cat), a.clone(), now_a.clone());
    two.set_properties(props(&[("x", "1")])).unwrap();
    let mut one = one;
    one.set_properties(props(&[("y", "1")])).unwrap();
    let e = commit_transactions(vec![one, two]).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");

    cat.purge_table(&a, Default::default()).unwrap();
    cat.purge_table(&b, Default::default()).unwrap();
    cat.drop_namespace(&ns).unwrap();
}

#[test]
fn a_staged_create_writes_first_and_creates_the_table_at_commit() {
    use icefloe::commit::NewTable;
    let Some(cat) = local() else { return };
    let ns = vec![unique("staged")];
    cat.create_namespace(&ns, &[]).unwrap();
    let t = TableIdent::new(ns.clone(), "ctas");

    let mut table = NewTable::new(schema());
    table.properties = props(&[("owner", "ctas")]);
    let mut tx = Transaction::create(Arc::clone(&cat), t.clone(), table.clone());
    // the server's staged metadata: its location and the `created-at` it adds; nothing
    // exists yet
    let staged = tx.new_table_metadata().unwrap();
    assert!(!cat.table_exists(&t).unwrap());
    assert!(staged.property("created-at").is_some(), "{staged:?}");
    assert_eq!(staged.property("owner"), Some("ctas"));
    assert_eq!(staged.format_version, 3);
    assert!(staged.location.ends_with("/ctas"), "{}", staged.location);
    tx.append_files(vec![data_file(&staged.location, "first", 7)]);
    let created = tx.commit().unwrap();
    assert_eq!(created.metadata.location, staged.location);
    let loaded = cat.load_table(&t).unwrap();
    assert_eq!(loaded.metadata_location, created.metadata_location);
    assert_eq!(loaded.metadata.snapshots.len(), 1);
    assert_eq!(loaded.metadata.property("owner"), Some("ctas"));
    assert!(loaded.metadata.property("created-at").is_some());
    assert_eq!(
        loaded.metadata.current_schema().unwrap().as_struct(),
        staged.current_schema().unwrap().as_struct()
    );

    // someone else creates the table between the stage and the commit: assert-create
    // fails (409, CommitFailed without retries; AlreadyExists after the refresh with them)
    let other = TableIdent::new(ns.clone(), "raced");
    let mut slow = Transaction::create(Arc::clone(&cat), other.clone(), table.clone())
        .with_retry_policy(no_retries());
    let md = slow.new_table_metadata().unwrap();
    slow.append_files(vec![data_file(&md.location, "lost", 1)]);
    let mut retried = Transaction::create(Arc::clone(&cat), other.clone(), table.clone());
    retried.new_table_metadata().unwrap();
    let winner = new_table(&cat, &other);
    let e = slow.commit().unwrap_err();
    assert!(matches!(e, Error::CommitFailed { .. }), "{e}");
    let e = retried.commit().unwrap_err();
    assert!(matches!(e, Error::AlreadyExists { .. }), "{e}");
    assert_eq!(
        cat.load_table(&other).unwrap().metadata_location,
        winner.metadata_location
    );

    // a transaction on an existing table creates nothing
    let mut existing = Transaction::load(Arc::clone(&cat), t.clone()).unwrap();
    let e = existing.new_table_metadata().unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");

    cat.purge_table(&t, Default::default()).unwrap();
    cat.purge_table(&other, Default::default()).unwrap();
    cat.drop_namespace(&ns).unwrap();
}

#[test]
fn lost_answers_to_multi_table_and_view_commits_are_state_unknown() {
    use icefloe::commit::commit_transactions;
    use icefloe::commit::view::{create_view, replace_view};
    let Some(uri) = env("ICEFLOE_TEST_REST_URI") else {
        return;
    };
    let upstream: SocketAddr = uri.trim_start_matches("http://").parse().unwrap();
    let (proxy, _) = recording_proxy(upstream, Fault::LoseCommitAnswers);
    let cat = local().unwrap();
    let ns = vec![unique("unknown_multi")];
    cat.create_namespace(&ns, &[]).unwrap();
    let a = TableIdent::new(ns.clone(), "a");
    let b = TableIdent::new(ns.clone(), "b");
    let base_a = new_table(&cat, &a);
    let base_b = new_table(&cat, &b);
    let data = format!("{}/data/a.parquet", base_a.metadata.location);
    cat.io().write_new(&data, b"not really parquet").unwrap();

    let lossy: Arc<dyn Catalog> =
        Arc::new(RestCatalog::open("rest", &props(&[("uri", &proxy)])).unwrap());
    let mut tx_a = Transaction::new(Arc::clone(&lossy), a.clone(), base_a.clone());
    tx_a.append_files(vec![data_file(&base_a.metadata.location, "a", 10)]);
    tx_a.own_files([data.clone()]);
    let mut tx_b = Transaction::new(Arc::clone(&lossy), b.clone(), base_b.clone());
    tx_b.set_properties(props(&[("k", "v")])).unwrap();
    let e = commit_transactions(vec![tx_a, tx_b]).unwrap_err();
    assert!(matches!(e, Error::CommitStateUnknown { .. }), "{e}");
    assert!(e.to_string().contains("502"), "{e}");
    assert!(e.to_string().contains(&data), "{e}");
    // kept, and indeed both tables were committed
    assert!(cat.io().exists(&data).unwrap());
    assert!(cat
        .load_table(&a)
        .unwrap()
        .metadata
        .current_snapshot()
        .is_some());
    assert_eq!(
        cat.load_table(&b).unwrap().metadata.property("k"),
        Some("v")
    );

    // a view replacement whose answer is lost
    let v = TableIdent::new(ns.clone(), "v");
    create_view(lossy.as_ref(), &v, &view_def("SELECT 1", false)).unwrap();
    let e = replace_view(lossy.as_ref(), &v, &view_def("SELECT 2", false)).unwrap_err();
    assert!(matches!(e, Error::CommitStateUnknown { .. }), "{e}");
    assert_eq!(cat.load_view(&v).unwrap().metadata.current_version_id, 2);

    cat.drop_view(&v).unwrap();
    cat.purge_table(&a, Default::default()).unwrap();
    cat.purge_table(&b, Default::default()).unwrap();
    cat.drop_namespace(&ns).unwrap();
}
