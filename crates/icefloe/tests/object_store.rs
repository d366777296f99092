//! The object-store FileIOs against real servers on 127.0.0.1: moto (S3), Azurite (Azure
//! Blob) and fake-gcs-server (GCS), started by `scripts/servers.sh start` (scripts/test.sh
//! does it), which writes their endpoints to an env file:
//!
//! ```text
//! scripts/servers.sh start && source target/servers/servers.env
//! cargo test -p icefloe --test object_store
//! ```
//!
//! Without the endpoints the tests skip with a message, except under CI (`CI=true`), where
//! they fail.
#![cfg(all(feature = "s3", feature = "azure", feature = "gcs"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use icefloe::io::{for_location, FileIO};
use icefloe::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    S3,
    Azure,
    Gcs,
}

/// One store under test: a fresh prefix (so runs never see each other's files) and the
/// properties that reach its server.
struct Store {
    kind: Kind,
    root: String,
    props: HashMap<String, String>,
}

impl Store {
    fn io(&self) -> Arc<dyn FileIO> {
        for_location(&self.root, &self.props).unwrap()
    }
    fn io_with(&self, extra: &[(&str, &str)]) -> Arc<dyn FileIO> {
        let mut props = self.props.clone();
        for (k, v) in extra {
            props.insert(k.to_string(), v.to_string());
        }
        for_location(&self.root, &props).unwrap()
    }
    fn at(&self, name: &str) -> String {
        format!("{}/{name}", self.root)
    }
}

fn endpoint(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => Some(v),
        _ => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{var} is not set: under CI the object-store servers must run (scripts/servers.sh start)");
            }
            eprintln!("SKIPPED: {var} is not set (run scripts/servers.sh start, then source target/servers/servers.env)");
            None
        }
    }
}

fn bucket() -> String {
    std::env::var("ICEFLOE_TEST_BUCKET").unwrap_or_else(|_| "icefloe-test".to_string())
}

fn props(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn unique() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

fn s3_props(endpoint: &str) -> HashMap<String, String> {
    props(&[
        ("s3.endpoint", endpoint),
        ("s3.access-key-id", "testing-key-id"),
        ("s3.secret-access-key", "testing-secret-key"),
        ("s3.region", "us-east-1"),
        ("s3.path-style-access", "true"),
    ])
}

fn s3() -> Option<Store> {
    let ep = endpoint("ICEFLOE_TEST_S3_ENDPOINT")?;
    Some(Store {
        kind: Kind::S3,
        root: format!("s3://{}/{}", bucket(), unique()),
        props: s3_props(&ep),
    })
}

const AZ_ACCOUNT: &str = "devstoreaccount1";

fn azure() -> Option<Store> {
    let ep = endpoint("ICEFLOE_TEST_AZURE_ENDPOINT")?;
    let key = std::env::var("ICEFLOE_TEST_AZURE_KEY").unwrap_or_default();
    Some(Store {
        kind: Kind::Azure,
        root: format!(
            "abfss://{}@{AZ_ACCOUNT}.dfs.core.windows.net/{}",
            bucket(),
            unique()
        ),
        props: props(&[
            (&format!("adls.connection-string.{AZ_ACCOUNT}"), &ep),
            ("adls.account-name", AZ_ACCOUNT),
            ("adls.account-key", &key),
        ]),
    })
}

fn gcs() -> Option<Store> {
    let ep = endpoint("ICEFLOE_TEST_GCS_ENDPOINT")?;
    Some(Store {
        kind: Kind::Gcs,
        root: format!("gs://{}/{}", bucket(), unique()),
        props: props(&[("gcs.service.host", &ep), ("gcs.no-auth", "true")]),
    })
}

/// fake-gcs-server ignores `ifGenerationMatch` on resumable uploads, which OpenDAL uses for
/// every conditional GCS write (real GCS checks it): the conditional-write assertions are
/// not made against it.
fn checks_preconditions(s: &Store) -> bool {
    if s.kind == Kind::Gcs {
        eprintln!("NOT CHECKED on fake-gcs-server: GCS preconditions (the emulator ignores them on resumable uploads)");
        return false;
    }
    true
}

fn all() -> Vec<Store> {
    [s3(), azure(), gcs()].into_iter().flatten().collect()
}

fn io_kind(e: &Error) -> Option<ErrorKind> {
    match e {
        Error::Io { source, .. } => Some(source.kind()),
        _ => None,
    }
}

#[test]
fn reads_writes_lists_and_deletes() {
    for s in all() {
        let io = s.io();
        let loc = s.at("metadata/v1.metadata.json");
        let data: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        io.write_new(&loc, &data).unwrap();
        io.write_new(&s.at("metadata/snap-1.avro"), b"avro")
            .unwrap();
        io.write_new(&s.at("data/a=1/f.parquet"), b"parquet")
            .unwrap();
        assert_eq!(io.read(&loc).unwrap(), data, "{:?}", s.kind);
        assert_eq!(io.read_range(&loc, 1000, 300).unwrap(), &data[1000..1300]);
        assert_eq!(io.read_range(&loc, 9_990, 10).unwrap(), &data[9_990..]);
        assert_eq!(io.read_range(&loc, 10_000, 0).unwrap(), b"");
        let e = io.read_range(&loc, 9_995, 10).unwrap_err();
        assert!(e.to_string().contains(&loc), "{:?}: {e}", s.kind);
        assert_eq!(io.file_size(&loc).unwrap(), 10_000);
        assert!(io.exists(&loc).unwrap());
        assert!(!io.exists(&s.at("metadata/v2.metadata.json")).unwrap());
        // names directly under the folder, files and sub-folders, as the local FileIO lists
        assert_eq!(
            io.list(&s.at("metadata")).unwrap(),
            vec!["snap-1.avro", "v1.metadata.json"],
            "{:?}",
            s.kind
        );
        assert_eq!(
            io.list(&s.root).unwrap(),
            vec!["data", "metadata"],
            "{:?}",
            s.kind
        );
        assert_eq!(
            io.list(&s.at("data/")).unwrap(),
            vec!["a=1"],
            "{:?}",
            s.kind
        );
        let e = io.list(&s.at("nothing-here")).unwrap_err();
        assert_eq!(io_kind(&e), Some(ErrorKind::NotFound), "{e}");
        // deleting twice, or a file that never existed, succeeds
        io.delete(&loc).unwrap();
        io.delete(&loc).unwrap();
        io.delete(&s.at("never-written")).unwrap();
        assert!(!io.exists(&loc).unwrap());
        let e = io.read(&loc).unwrap_err();
        assert_eq!(io_kind(&e), Some(ErrorKind::NotFound), "{:?}: {e}", s.kind);
        assert!(e.to_string().contains(&loc), "{e}");
    }
}

#[test]
fn lists_files_recursively_with_sizes_and_times_inside_the_folder_only() {
    for s in all() {
        let io = s.io();
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        for (name, bytes) in [
            ("t/data/a=1/f.parquet", &b"parquet"[..]),
            ("t/metadata/v1.metadata.json", b"{}"),
            ("t/x", b"x"),
            // shares the prefix `t` but is another folder
            ("tt/data/g.parquet", b"other"),
        ] {
            io.write_new(&s.at(name), bytes).unwrap();
        }
        let files = io.list_files(&s.at("t")).unwrap();
        let got: Vec<(String, u64)> = files.iter().map(|f| (f.location.clone(), f.size)).collect();
        assert_eq!(
            got,
            vec![
                (s.at("t/data/a=1/f.parquet"), 7),
                (s.at("t/metadata/v1.metadata.json"), 2),
                (s.at("t/x"), 1),
            ],
            "{:?}",
            s.kind
        );
        // stores keep whole seconds at worst
        for f in &files {
            assert!(
                f.last_modified_ms >= before - 2_000 && f.last_modified_ms < before + 120_000,
                "{:?}: {} at {} (before {before})",
                s.kind,
                f.location,
                f.last_modified_ms
            );
        }
        assert_eq!(io.list_files(&s.at("t/")).unwrap(), files, "{:?}", s.kind);
        assert!(
            io.list_files(&s.at("missing")).unwrap().is_empty(),
            "{:?}",
            s.kind
        );
    }
}

#[test]
fn write_new_is_create_only() {
    for s in all() {
        let io = s.io();
        let loc = s.at("metadata/v1.metadata.json");
        io.write_new(&loc, b"first").unwrap();
        if !checks_preconditions(&s) {
            continue;
        }
        let Err(e) = io.write_new(&loc, b"second") else {
            panic!("{:?}: the second write_new succeeded", s.kind)
        };
        assert_eq!(
            io_kind(&e),
            Some(ErrorKind::AlreadyExists),
            "{:?}: {e}",
            s.kind
        );
        assert!(e.to_string().contains(&loc), "{e}");
        assert_eq!(io.read(&loc).unwrap(), b"first");
    }
}

#[test]
fn conditional_replace_refuses_a_stale_version() {
    for s in all() {
        let io = s.io();
        let loc = s.at("metadata/version-hint.text");
        io.write_new(&loc, b"1").unwrap();
        let v1 = io.status(&loc).unwrap().version.unwrap();
        assert!(io.supports_conditional_replace());
        if !checks_preconditions(&s) {
            continue;
        }
        let v2 = io.replace_if_match(&loc, b"2", &v1).unwrap();
        assert_ne!(v1, v2, "{:?}", s.kind);
        assert_eq!(io.read(&loc).unwrap(), b"2");
        // a second writer that read v1 loses, and the file keeps the winner's bytes
        let e = io.replace_if_match(&loc, b"3", &v1).unwrap_err();
        assert!(
            matches!(e, Error::PreconditionFailed { .. }),
            "{:?}: {e}",
            s.kind
        );
        assert!(e.to_string().contains(&loc), "{e}");
        assert_eq!(io.read(&loc).unwrap(), b"2");
        // the version returned by a replace is usable for the next one
        io.replace_if_match(&loc, b"4", &v2).unwrap();
        // a deleted file cannot be replaced conditionally
        io.delete(&loc).unwrap();
        let e = io.replace_if_match(&loc, b"5", &v2).unwrap_err();
        assert!(
            matches!(e, Error::PreconditionFailed { .. }),
            "{:?}: {e}",
            s.kind
        );
    }
}

#[test]
fn large_files_go_up_in_parts() {
    let size = 13 * 1024 * 1024 + 17;
    let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    for s in all() {
        let io = s.io_with(&[
            ("io.multipart.threshold-bytes", "5242880"),
            ("io.multipart.part-size-bytes", "5242880"),
        ]);
        let loc = s.at("data/big.parquet");
        let t = Instant::now();
        io.write_new(&loc, &data).unwrap();
        eprintln!(
            "{:?}: multipart write of {size} bytes in {:?}",
            s.kind,
            t.elapsed()
        );
        assert_eq!(io.file_size(&loc).unwrap(), size as u64);
        assert!(io.read(&loc).unwrap() == data, "{:?}", s.kind);
        // across the first part boundary
        let b = 5 * 1024 * 1024 - 10;
        assert_eq!(io.read_range(&loc, b as u64, 20).unwrap(), &data[b..b + 20]);
        if checks_preconditions(&s) {
            let e = io.write_new(&loc, &data).unwrap_err();
            assert_eq!(io_kind(&e), Some(ErrorKind::AlreadyExists), "{e}");
        }
    }
}

#[test]
fn a_missing_bucket_is_a_typed_error() {
    for s in all() {
        let root = s.root.replacen(&bucket(), "no-such-bucket-icefloe", 1);
        let io = for_location(&root, &s.props).unwrap();
        let loc = format!("{root}/metadata/v1.metadata.json");
        let e = io.read(&loc).unwrap_err();
        assert_eq!(io_kind(&e), Some(ErrorKind::NotFound), "{:?}: {e}", s.kind);
        assert!(e.to_string().contains(&loc), "{e}");
        let Err(e) = io.write_new(&loc, b"x") else {
            panic!("{:?}: wrote into a missing bucket", s.kind)
        };
        assert!(matches!(e, Error::Io { .. }), "{:?}: {e}", s.kind);
        assert!(e.to_string().contains(&loc), "{e}");
        // exists() answers false here: a HEAD's bare 404 cannot tell a missing bucket from
        // a missing key (reads and writes above do)
    }
}

/// Azurite checks signatures (moto and fake-gcs-server accept any credentials).
#[test]
fn wrong_credentials_are_denied_without_showing_them() {
    let Some(s) = azure() else { return };
    // valid base64, so that the request is made (and refused)
    let wrong_key = "aHVudGVyMmh1bnRlcjJodW50ZXIyaHVudGVyMmh1bnRlcjI=";
    let wrong_sas = "sv=2021-08-06&ss=b&srt=sco&sp=rwdlac&se=2099-01-01T00:00:00Z&sig=Zm9vYmFyc2VjcmV0c2lnbmF0dXJl%2B";
    for extra in [
        vec![("adls.account-key", wrong_key)],
        vec![(
            "adls.sas-token.devstoreaccount1.dfs.core.windows.net",
            wrong_sas,
        )],
    ] {
        let io = s.io_with(&extra);
        let loc = s.at("metadata/v1.metadata.json");
        for e in [
            io.write_new(&loc, b"x").unwrap_err(),
            io.read(&loc).unwrap_err(),
        ] {
            assert_eq!(io_kind(&e), Some(ErrorKind::PermissionDenied), "{e}");
            let shown = format!("{e} {e:?}");
            assert!(shown.contains(&loc), "{shown}");
            assert!(!shown.contains(wrong_key), "{shown}");
            assert!(!shown.contains("Zm9vYmFyc2VjcmV0"), "{shown}");
        }
        // nor does the FileIO's Debug
        let mut props = s.props.clone();
        props.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let direct = icefloe::io::object_store_io::ObjectStoreFileIO::new(
            icefloe::io::object_store_io::StoreKind::Azure,
            icefloe::io::FileIOProperties::from_map(&props).unwrap(),
        )
        .unwrap();
        let shown = format!("{direct:?} {direct:#?}");
        assert!(
            !shown.contains(wrong_key) && !shown.contains("Zm9vYmFy"),
            "{shown}"
        );
    }
}

/// A proxy on 127.0.0.1 in front of `upstream`: the first `fail` requests get a 503
/// SlowDown, or with `hang` every request gets no answer; the rest are forwarded. It stops
/// by itself after 30 s.
fn proxy(upstream: SocketAddr, fail: usize, hang: bool) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let failed = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&failed);
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let Ok((client, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            let counter = Arc::clone(&counter);
            std::thread::spawn(move || serve(client, upstream, fail, hang, &counter));
        }
    });
    (format!("http://{addr}"), failed)
}

fn serve(mut client: TcpStream, upstream: SocketAddr, fail: usize, hang: bool, n: &AtomicUsize) {
    client.set_nonblocking(false).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // the request head, and as much of the body as came with it
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match client.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(k) => buf.extend_from_slice(&chunk[..k]),
        }
    }
    if hang {
        std::thread::sleep(Duration::from_secs(5));
        return;
    }
    if n.fetch_add(1, Ordering::SeqCst) < fail {
        let body = "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";
        let _ = write!(
            client,
            "HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        return;
    }
    n.fetch_sub(1, Ordering::SeqCst);
    let Ok(mut up) = TcpStream::connect(upstream) else {
        return;
    };
    if up.write_all(&buf).is_err() {
        return;
    }
    let (mut c2, mut u2) = (client.try_clone().unwrap(), up.try_clone().unwrap());
    let t = std::thread::spawn(move || {
        let _ = std::io::copy(&mut c2, &mut u2);
        let _ = u2.shutdown(std::net::Shutdown::Write);
    });
    let _ = std::io::copy(&mut up, &mut client);
    let _ = client.shutdown(std::net::Shutdown::Both);
    let _ = t.join();
}

fn upstream_addr(endpoint: &str) -> SocketAddr {
    endpoint
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .unwrap()
}

#[test]
fn throttling_is_retried_with_backoff() {
    let Some(s) = s3() else { return };
    let ep = s.props["s3.endpoint"].clone();
    let loc = s.at("metadata/v1.metadata.json");
    s.io().write_new(&loc, b"hello").unwrap();

    let (proxied, failed) = proxy(upstream_addr(&ep), 2, false);
    let io = s.io_with(&[("s3.endpoint", &proxied), ("io.retry.min-wait-ms", "50")]);
    let t = Instant::now();
    assert_eq!(io.read(&loc).unwrap(), b"hello");
    assert_eq!(failed.load(Ordering::SeqCst), 2);
    // two backoffs of at least 50 ms... (decorrelated jitter starts at the minimum)
    assert!(
        t.elapsed() >= Duration::from_millis(50),
        "{:?}",
        t.elapsed()
    );

    // with fewer retries than failures the call fails, typed and naming the location
    let (proxied, _) = proxy(upstream_addr(&ep), 3, false);
    let io = s.io_with(&[
        ("s3.endpoint", &proxied),
        ("io.retry.num-retries", "1"),
        ("io.retry.min-wait-ms", "10"),
    ]);
    let e = io.read(&loc).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
    assert!(
        e.to_string().contains(&loc) && e.to_string().contains("503"),
        "{e}"
    );
}

#[test]
fn a_silent_server_times_out() {
    let Some(s) = s3() else { return };
    let (proxied, _) = proxy(upstream_addr(&s.props["s3.endpoint"]), 0, true);
    let io = s.io_with(&[
        ("s3.endpoint", &proxied),
        ("s3.request-timeout", "0.5"),
        ("io.retry.num-retries", "0"),
    ]);
    let loc = s.at("metadata/v1.metadata.json");
    let t = Instant::now();
    let e = io.read(&loc).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    assert_eq!(io_kind(&e), Some(ErrorKind::TimedOut), "{e}");
    assert!(e.to_string().contains(&loc), "{e}");
}

/// Not a benchmark: a rough number for the docs (`--nocapture` prints it).
#[test]
fn range_read_latency() {
    for s in all() {
        let io = s.io();
        let loc = s.at("data/f.parquet");
        io.write_new(&loc, &vec![7u8; 1 << 20]).unwrap();
        io.read_range(&loc, 0, 8).unwrap();
        let mut times: Vec<Duration> = (0..30)
            .map(|i| {
                let t = Instant::now();
                io.read_range(&loc, i * 4096, 4096).unwrap();
                t.elapsed()
            })
            .collect();
        times.sort();
        eprintln!(
            "{:?}: 4 KiB range read, median {:?}, max {:?}",
            s.kind, times[15], times[29]
        );
    }
}

#[test]
fn counts_requests_and_bytes_and_caches_immutable_metadata() {
    for s in all() {
        let io = s.io_with(&[("io.manifest.cache-enabled", "true")]);
        let manifest = s.at("metadata/abc-m0.avro");
        let hint = s.at("metadata/version-hint.text");
        let data: Vec<u8> = (0..=255u8).cycle().take(1_000).collect();
        io.reset_stats();
        io.write_new(&manifest, &data).unwrap();
        io.write_new(&hint, b"1").unwrap();
        let st = io.stats().unwrap();
        assert_eq!((st.requests, st.bytes_written), (2, 1_001), "{:?}", s.kind);
        io.reset_stats();
        // a manifest is fetched once (one GET), then answered from the cache
        assert_eq!(io.read(&manifest).unwrap(), data);
        assert_eq!(io.read(&manifest).unwrap(), data);
        assert_eq!(io.read_range(&manifest, 10, 5).unwrap(), &data[10..15]);
        // the version hint is read from the store every time
        assert_eq!(io.read(&hint).unwrap(), b"1");
        assert_eq!(io.read(&hint).unwrap(), b"1");
        let st = io.stats().unwrap();
        assert_eq!(
            (st.requests, st.bytes_read, st.cache_hits),
            (3, 1_002, 2),
            "{:?}",
            s.kind
        );
        // without the cache (the default) every read is a request
        let uncached = s.io();
        uncached.read(&manifest).unwrap();
        uncached.read_range(&manifest, 0, 100).unwrap();
        let st = uncached.stats().unwrap();
        assert_eq!(
            (st.requests, st.bytes_read, st.cache_hits),
            (2, 1_100, 0),
            "{:?}",
            s.kind
        );
        // a file deleted and written again through the FileIO is not served stale
        io.delete(&manifest).unwrap();
        io.write_new(&manifest, b"again").unwrap();
        assert_eq!(io.read(&manifest).unwrap(), b"again", "{:?}", s.kind);
    }
}

/// `delete_many` deletes every file given, missing ones included, in bulk requests on S3
/// and Azure (`s3.delete.batch-size` keys each) and one request per file on GCS, and leaves
/// the files not named.
#[test]
fn delete_many_deletes_in_bulk() {
    for s in all() {
        let io = s.io_with(&[("s3.delete.batch-size", "100")]);
        let n = if s.kind == Kind::S3 { 260 } else { 40 };
        let mut locations: Vec<String> = (0..n).map(|i| s.at(&format!("data/f{i}"))).collect();
        for l in &locations {
            io.write_new(l, b"x").unwrap();
        }
        let keep = s.at("data/keep");
        io.write_new(&keep, b"x").unwrap();
        locations.push(s.at("data/never-written"));
        io.reset_stats();
        let results = io.delete_many(&locations, 3);
        let requests = io.stats().unwrap().requests;
        assert_eq!(results.len(), locations.len());
        for (l, r) in locations.iter().zip(&results) {
            assert!(r.is_ok(), "{:?} {l}: {r:?}", s.kind);
        }
        let left: Vec<String> = io
            .list_files(&s.at("data"))
            .unwrap()
            .into_iter()
            .map(|f| f.location)
            .collect();
        assert_eq!(left, vec![keep.clone()], "{:?}", s.kind);
        let want = match s.kind {
            Kind::S3 | Kind::Azure => (locations.len() as u64).div_ceil(100),
            Kind::Gcs => locations.len() as u64,
        };
        assert_eq!(requests, want, "{:?}", s.kind);
        // nothing to delete is no request
        io.reset_stats();
        assert!(io.delete_many(&[], 3).is_empty());
        assert_eq!(io.stats().unwrap().requests, 0);
    }
}

/// A bulk delete the store refuses fails for each of its files, each error naming its
/// file (shortened, not the whole batch's key list) and never the credential.
#[test]
fn a_refused_bulk_delete_reports_each_file_without_credentials() {
    let Some(s) = azure() else { return };
    let good = s.io();
    let locations: Vec<String> = (0..5).map(|i| s.at(&format!("data/f{i}"))).collect();
    for l in &locations {
        good.write_new(l, b"x").unwrap();
    }
    let wrong_key = "aHVudGVyMmh1bnRlcjJodW50ZXIyaHVudGVyMmh1bnRlcjI=";
    let io = s.io_with(&[
        ("adls.account-key", wrong_key),
        ("io.retry.num-retries", "0"),
    ]);
    let results = io.delete_many(&locations, 2);
    for (l, r) in locations.iter().zip(results) {
        let e = r.unwrap_err();
        let shown = format!("{e} {e:?}");
        assert!(shown.contains(l.as_str()), "{shown}");
        assert!(!shown.contains(wrong_key), "{shown}");
        assert!(shown.len() < 2000, "{shown}");
        assert!(good.exists(l).unwrap());
    }
}

/// Snapshot expiry on S3: a table whose expired snapshots reach many files deletes exactly
/// those (with their manifests and manifest lists), keeps every file the retained snapshot
/// reaches, and sends the deletes as bulk requests.
#[test]
fn expiry_on_s3_deletes_exactly_the_expired_files_in_bulk() {
    use icefloe::catalog::sql::SqlCatalog;
    use icefloe::catalog::{Catalog, TableIdent};
    use icefloe::commit::{create_table, ExpireSnapshots, SnapshotProducer, Transaction};
    use icefloe::manifest::{DataContentType, DataFile, FileFormat};
    use icefloe::spec::partition::PartitionSpec;
    use icefloe::spec::schema::Schema;
    use icefloe::spec::sort::SortOrder;
    use icefloe::spec::types::{NestedField, PrimitiveType, Type};

    let Some(s) = s3() else { return };
    let io = s.io();
    let db = std::env::temp_dir().join(format!("icefloe-expire-{}.db", unique()));
    let catalog: Arc<dyn Catalog> = Arc::new(
        SqlCatalog::open(
            "c",
            &format!("sqlite:///{}", db.display()),
            &s.root,
            Arc::clone(&io),
        )
        .unwrap(),
    );
    catalog.create_namespace(&["db".to_string()], &[]).unwrap();
    let ident = TableIdent::new(vec!["db".into()], "t");
    let schema = Schema::new(
        0,
        vec![NestedField::required(
            1,
            "id",
            Type::Primitive(PrimitiveType::Long),
        )],
        vec![],
    )
    .unwrap();
    let created = create_table(
        Arc::clone(&catalog),
        &ident,
        &schema,
        &PartitionSpec::unpartitioned(),
        &SortOrder::unsorted(),
        None,
        &[],
        Some(2),
    )
    .unwrap();
    let location = created.metadata.location.clone();
    let file = |name: &str| {
        DataFile::new(
            DataContentType::Data,
            format!("{location}/data/{name}.parquet"),
            FileFormat::Parquet,
            Vec::new(),
            1,
            1,
        )
    };
    let commit = |change: Box<dyn icefloe::commit::PendingChange>| {
        let mut tx = Transaction::load(Arc::clone(&catalog), ident.clone()).unwrap();
        tx.add_change(change);
        tx.commit().unwrap()
    };
    // 600 files appended in two snapshots, then all deleted; 5 live files after that
    let expired: Vec<String> = (0..600).map(|i| format!("old{i}")).collect();
    for half in expired.chunks(300) {
        let mut p = SnapshotProducer::fast_append();
        for n in half {
            io.write_new(&file(n).file_path, b"x").unwrap();
            p.add_file(file(n));
        }
        commit(Box::new(p));
    }
    let mut p = SnapshotProducer::delete_files();
    for n in &expired {
        p.delete_path(file(n).file_path);
    }
    commit(Box::new(p));
    let live: Vec<String> = (0..5).map(|i| format!("live{i}")).collect();
    let mut p = SnapshotProducer::fast_append();
    for n in &live {
        io.write_new(&file(n).file_path, b"x").unwrap();
        p.add_file(file(n));
    }
    let before = commit(Box::new(p)).metadata;
    let all_before: Vec<String> = io
        .list_files(&location)
        .unwrap()
        .into_iter()
        .map(|f| f.location)
        .collect();

    io.reset_stats();
    let result = ExpireSnapshots::new()
        .expire_older_than(chrono::Utc::now().timestamp_millis() + 1)
        .retain_last(1)
        .unwrap()
        .commit(Arc::clone(&catalog), &ident)
        .unwrap();
    let requests = io.stats().unwrap().requests;
    assert!(
        result.failed_deletes.is_empty(),
        "{:?}",
        result.failed_deletes
    );
    assert_eq!(result.removed_snapshot_ids.len(), 3);
    let mut want: Vec<String> = expired.iter().map(|n| file(n).file_path).collect();
    want.sort();
    let mut deleted = result.deleted_data_files.clone();
    deleted.sort();
    assert_eq!(deleted, want);
    let expired_lists: Vec<String> = before
        .snapshots
        .iter()
        .filter(|s| result.removed_snapshot_ids.contains(&s.snapshot_id))
        .filter_map(|s| s.manifest_list.clone())
        .collect();
    let mut lists = result.deleted_manifest_lists.clone();
    lists.sort();
    let mut expired_lists = expired_lists;
    expired_lists.sort();
    assert_eq!(lists, expired_lists);

    // what is left is what was there less what the expiry reports deleted: the retained
    // snapshot's files, manifests and manifest list, and the metadata files
    let gone: std::collections::BTreeSet<String> = result.deleted_files().into_iter().collect();
    let want_left: Vec<String> = all_before
        .iter()
        .filter(|f| !gone.contains(*f))
        .cloned()
        .collect();
    let mut left: Vec<String> = io
        .list_files(&location)
        .unwrap()
        .into_iter()
        .map(|f| f.location)
        .collect();
    // the expiry's own metadata file
    left.retain(|f| all_before.contains(f));
    assert_eq!(left, want_left);
    for n in &live {
        assert!(io.exists(&file(n).file_path).unwrap(), "{n}");
    }
    let after = catalog.load_table(&ident).unwrap().metadata;
    let plan = icefloe::scan::TableScan::new(after, Arc::clone(&io))
        .plan_files()
        .unwrap();
    assert_eq!(plan.tasks.len(), live.len());
    // 600+ deletes in a handful of bulk requests: the expiry's reads, its commit and
    // ceil(files / 250) deletes, far fewer than one request per file
    let files = result.deleted_files().len() as u64;
    assert!(files > 600, "{files}");
    assert!(requests < 40, "{requests} requests for {files} deletes");
    let _ = std::fs::remove_file(&db);
}
