//! Format v3 against format v4 (the single-file-commits proposal, `docs/v4.md`) on the
//! 1,000,000-file table (`.cache/bench/pyi1m`: 100 manifests of 10,000 files, day(ts)
//! partitioning, metrics for 4 columns; built by `benches/plan_compare.py`), side by side
//! in one run.
//!
//! The table (format v2, PyIceberg's) is upgraded twice by a property change: to v3 (the
//! v3 twin) and from there to v4 (the v4 twin, whose first commit turns the manifest list's
//! 100 rows into the root's leaf entries, pointing to the same manifests). Both twins
//! write their new files under `BENCH_DIR` (`write.metadata.path`; default
//! `/work/bench-data/v4bench`), so the cached table is not changed. Measured, alternating
//! v3 and v4 commits:
//!
//! - files and bytes written (metadata JSON included; Puffin files not written: metadata
//!   only), files and bytes read, and commit latency of a one-file fast append, a
//!   one-file delete (a file of a different original manifest each time) and a one-DV row
//!   delta; the v4 delete and row delta are given the file's tree position from a point
//!   lookup planned just before (not measured), as a row-level write that scanned first;
//!   and, as the floor under every commit of both formats, a commit writing the metadata
//!   JSON alone (a table property set); and a row delta replacing the DV the one-DV row
//!   delta added (as `table.delete` does: the old DV removed, validated still live);
//!   each row delta (both twins) validates from the snapshot it was planned on, as a real
//!   writer does (Spark's row-level writes call `RowDelta.validateFromSnapshot` with their
//!   scan's snapshot, icefloe's `table.delete`/`upsert` pass theirs), not over the whole
//!   history;
//! - the metadata bytes a reader holding the previous snapshot's files must read to see
//!   the new one: the new metadata JSON plus the snapshot's manifest list or root and every
//!   manifest or leaf it names that the previous snapshot did not;
//! - planning (no filter, `id` point lookup, 5-day `ts` range; best of 3) after 1,000
//!   one-file fast appends without maintenance.
//!
//! With `ICEFLOE_TEST_S3_ENDPOINT` (`source target/servers/servers.env` after
//! `scripts/servers.sh start`) the twins' new files go to moto's S3
//! (`s3://ICEFLOE_TEST_BUCKET/v4bench/...`) instead; the original 100 manifests stay on
//! the local disk, which favours v3 (its one-file delete reads one of them back).
//!
//! ```sh
//! cargo build --profile quick -p icefloe --bench v4_compare
//! cd crates/icefloe && BENCH_COMMITS=10 BENCH_SMALL_COMMITS=0 ../../target/quick/deps/v4_compare-<hash>
//! ```
//! (`cargo bench` would build every dependency again with the bench profile.)
//!
//! Profiling one kind of commit: `mkfifo ctl ack; BENCH_PERF=2:1:ctl:ack perf record -g
//! -D -1 --control fifo:ctl,ack -- <binary>` samples only the v4 row deltas (op 0 append,
//! 1 delete, 2 row delta, 3 the property set, 4 the row delta replacing a DV; 5, 6, 7 the
//! plans without a filter, of the
//! `id` point lookup, of the `ts` range; twin 0 v3, 1 v4, 2 both). `BENCH_PLAN_ROUNDS` (default 3) sets how
//! many plans of each kind each twin makes (the best is reported). `BENCH_NOCOMPACT=1`
//! sets `commit.v4.compact.min-dv-leaves` to 0 on the v4 twin, so that a profile of its
//! appends holds no compacting commit. `BENCH_IO_DELAY_MS=<ms>` adds that much to every
//! read and write of both twins (set-up included), as an object store's round trip, so
//! that what a commit does one request after another shows.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use icefloe::catalog::{
    Catalog, Namespace, PurgeResult, PurgeScope, TableIdent, TableState, ViewState,
};
use icefloe::commit::{SnapshotProducer, Transaction};
use icefloe::expr::{Datum, Expression, Operation as Op};
use icefloe::io::{FileIO, LocalFileIO};
use icefloe::manifest::v4::tree::{read_snapshot_top, SnapshotTop, TreePosition};
use icefloe::manifest::v4::V4Layout;
use icefloe::manifest::{
    read_manifest, read_manifest_list, DataContentType, DataFile, FileFormat, ManifestSource,
    ReadManifestOptions,
};
use icefloe::scan::TableScan;
use icefloe::spec::literal::Literal;
use icefloe::spec::table_metadata::TableMetadata;
use icefloe::spec::view_metadata::ViewMetadata;
use icefloe::{Error, Result};

/// A FileIO counting what it writes.
struct Counting {
    inner: Arc<dyn FileIO>,
    files: AtomicU64,
    bytes: AtomicU64,
    read_files: AtomicU64,
    read_bytes: AtomicU64,
    /// Added to every read and write (`BENCH_IO_DELAY_MS`): an object store's round trip
    /// on a store whose own latency is near zero.
    delay: Option<Duration>,
}

impl Counting {
    /// Files and bytes written since the last call.
    fn take(&self) -> (u64, u64) {
        (
            self.files.swap(0, Ordering::Relaxed),
            self.bytes.swap(0, Ordering::Relaxed),
        )
    }

    /// Files and bytes read since the last call.
    fn take_reads(&self) -> (u64, u64) {
        (
            self.read_files.swap(0, Ordering::Relaxed),
            self.read_bytes.swap(0, Ordering::Relaxed),
        )
    }

    fn wait(&self) {
        if let Some(d) = self.delay {
            std::thread::sleep(d);
        }
    }

    fn count_read(&self, r: &Result<Vec<u8>>) {
        if let Ok(b) = r {
            self.read_files.fetch_add(1, Ordering::Relaxed);
            self.read_bytes.fetch_add(b.len() as u64, Ordering::Relaxed);
        }
    }
}

impl std::fmt::Debug for Counting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Counting")
    }
}

impl FileIO for Counting {
    fn read(&self, location: &str) -> Result<Vec<u8>> {
        self.wait();
        let r = self.inner.read(location);
        self.count_read(&r);
        r
    }
    fn read_range(&self, location: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.wait();
        let r = self.inner.read_range(location, offset, len);
        self.count_read(&r);
        r
    }
    fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()> {
        self.wait();
        self.files.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.inner.write_new(location, bytes)
    }
    fn exists(&self, location: &str) -> Result<bool> {
        self.inner.exists(location)
    }
    fn list(&self, location: &str) -> Result<Vec<String>> {
        self.inner.list(location)
    }
    fn delete(&self, location: &str) -> Result<()> {
        self.inner.delete(location)
    }
    fn file_size(&self, location: &str) -> Result<u64> {
        self.inner.file_size(location)
    }
}

/// S3 for `s3://` locations (the twins' new files), the local disk for the rest (the
/// original table's manifests).
struct Router {
    s3: Arc<dyn FileIO>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Router")
    }
}

impl Router {
    fn pick(&self, location: &str) -> &dyn FileIO {
        if location.starts_with("s3://") {
            self.s3.as_ref()
        } else {
            &LocalFileIO
        }
    }
}

impl FileIO for Router {
    fn read(&self, location: &str) -> Result<Vec<u8>> {
        self.pick(location).read(location)
    }
    fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()> {
        self.pick(location).write_new(location, bytes)
    }
    fn exists(&self, location: &str) -> Result<bool> {
        self.pick(location).exists(location)
    }
    fn list(&self, location: &str) -> Result<Vec<String>> {
        self.pick(location).list(location)
    }
    fn delete(&self, location: &str) -> Result<()> {
        self.pick(location).delete(location)
    }
    fn file_size(&self, location: &str) -> Result<u64> {
        self.pick(location).file_size(location)
    }
    fn read_range(&self, location: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.pick(location).read_range(location, offset, len)
    }
}

/// One table, its pointer in memory, files through `io`.
struct PointerCatalog {
    dir: String,
    io: Arc<Counting>,
    state: Mutex<Option<TableState>>,
    version: Mutex<u64>,
}

fn no<T>() -> Result<T> {
    Err(Error::unsupported("bench catalog"))
}

impl Catalog for PointerCatalog {
    fn name(&self) -> &str {
        "bench"
    }
    fn io(&self) -> Arc<dyn FileIO> {
        self.io.clone()
    }
    fn default_table_location(&self, _: &TableIdent) -> Result<String> {
        no()
    }
    fn create_namespace(&self, _: &[String], _: &[(String, String)]) -> Result<()> {
        no()
    }
    fn list_namespaces(&self, _: &[String]) -> Result<Vec<Namespace>> {
        no()
    }
    fn namespace_exists(&self, _: &[String]) -> Result<bool> {
        no()
    }
    fn namespace_properties(&self, _: &[String]) -> Result<Vec<(String, String)>> {
        no()
    }
    fn update_namespace_properties(
        &self,
        _: &[String],
        _: &[String],
        _: &[(String, String)],
    ) -> Result<()> {
        no()
    }
    fn drop_namespace(&self, _: &[String]) -> Result<()> {
        no()
    }
    fn list_tables(&self, _: &[String]) -> Result<Vec<TableIdent>> {
        no()
    }
    fn table_exists(&self, _: &TableIdent) -> Result<bool> {
        no()
    }
    fn load_table(&self, _: &TableIdent) -> Result<TableState> {
        self.state
            .lock()
            .unwrap()
            .clone()
            .ok_or_else(|| Error::NoSuchTable { table: "t".into() })
    }
    fn register_table(&self, _: &TableIdent, _: &str) -> Result<TableState> {
        no()
    }
    fn rename_table(&self, _: &TableIdent, _: &TableIdent) -> Result<()> {
        no()
    }
    fn drop_table(&self, _: &TableIdent) -> Result<()> {
        no()
    }
    fn purge_table(&self, _: &TableIdent, _: PurgeScope) -> Result<PurgeResult> {
        no()
    }
    fn commit_table(
        &self,
        _: &TableIdent,
        base: Option<&TableState>,
        metadata: TableMetadata,
    ) -> Result<TableState> {
        let mut v = self.version.lock().unwrap();
        *v += 1;
        let location = format!("{}/{:05}-bench.metadata.json", self.dir, *v);
        metadata.write(self.io.as_ref(), &location, false)?;
        let mut state = self.state.lock().unwrap();
        let current = state.as_ref().map(|s| s.metadata_location.clone());
        if current != base.map(|b| b.metadata_location.clone()) {
            return Err(Error::commit_failed("moved"));
        }
        let new = TableState {
            metadata_location: location,
            metadata: Arc::new(metadata),
        };
        *state = Some(new.clone());
        Ok(new)
    }
    fn list_views(&self, _: &[String]) -> Result<Vec<TableIdent>> {
        no()
    }
    fn view_exists(&self, _: &TableIdent) -> Result<bool> {
        no()
    }
    fn load_view(&self, _: &TableIdent) -> Result<ViewState> {
        no()
    }
    fn rename_view(&self, _: &TableIdent, _: &TableIdent) -> Result<()> {
        no()
    }
    fn drop_view(&self, _: &TableIdent) -> Result<()> {
        no()
    }
    fn commit_view(
        &self,
        _: &TableIdent,
        _: Option<&ViewState>,
        _: ViewMetadata,
    ) -> Result<ViewState> {
        no()
    }
}

fn ident() -> TableIdent {
    TableIdent::parse("db.t1000000").unwrap()
}

fn commit(c: &Arc<PointerCatalog>, p: SnapshotProducer) -> Duration {
    let start = Instant::now();
    let mut tx = Transaction::load(c.clone(), ident()).unwrap();
    tx.add_change(Box::new(p));
    tx.commit().unwrap();
    start.elapsed()
}

fn set_property(c: &Arc<PointerCatalog>, key: &str, value: &str) -> Duration {
    let start = Instant::now();
    let mut tx = Transaction::load(c.clone(), ident()).unwrap();
    tx.set_properties(vec![(key.into(), value.into())]).unwrap();
    tx.commit().unwrap();
    start.elapsed()
}

/// The metadata files (manifest list or root, manifests or leaves) a snapshot reaches.
fn metadata_files(io: &dyn FileIO, md: &TableMetadata) -> HashSet<String> {
    let s = md.current_snapshot().unwrap();
    let mut out = HashSet::from([s.manifest_list.clone().unwrap()]);
    let p = V4Layout::for_table(md).unwrap();
    match read_snapshot_top(io, &p, s).unwrap() {
        SnapshotTop::List(list) => out.extend(list.into_iter().map(|m| m.manifest_path)),
        SnapshotTop::Root(root) => out.extend(
            root.into_iter()
                .filter(|e| e.content_type.is_manifest())
                .map(|e| e.location),
        ),
    }
    out
}

/// Bytes a reader that holds `before`'s metadata files reads to refresh to `after`.
fn refresh_bytes(io: &dyn FileIO, before: &TableState, after: &TableState) -> u64 {
    let old = metadata_files(io, &before.metadata);
    let json = io.file_size(&after.metadata_location).unwrap();
    json + metadata_files(io, &after.metadata)
        .iter()
        .filter(|p| !old.contains(*p))
        .map(|p| io.file_size(p).unwrap())
        .sum::<u64>()
}

#[derive(Default)]
struct Stats {
    times: Vec<Duration>,
    files: Vec<u64>,
    bytes: Vec<u64>,
    read_files: Vec<u64>,
    read_bytes: Vec<u64>,
    refresh: Vec<u64>,
}

fn median<T: Copy + Ord>(v: &[T]) -> T {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../.cache/bench/pyi1m/db/t1000000/metadata");
    let Ok(entries) = std::fs::read_dir(&root) else {
        eprintln!(
            "{} not found: build it with benches/plan_compare.py first",
            root.display()
        );
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".metadata.json"))
        .collect();
    files.sort();
    let latest = files.last().expect("no metadata file");
    let md = TableMetadata::read(&LocalFileIO, latest.to_str().unwrap()).unwrap();
    let n: usize = std::env::var("BENCH_COMMITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let small_commits: usize = std::env::var("BENCH_SMALL_COMMITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let base_dir = std::env::var("BENCH_DIR").unwrap_or_else(|_| "/work/bench-data/v4bench".into());
    let run = format!("{base_dir}/{}", std::process::id());
    let (io, store): (Arc<dyn FileIO>, String) = match std::env::var("ICEFLOE_TEST_S3_ENDPOINT") {
        Ok(endpoint) => {
            let bucket =
                std::env::var("ICEFLOE_TEST_BUCKET").unwrap_or_else(|_| "icefloe-test".into());
            let store = format!("s3://{bucket}/v4bench/{}", std::process::id());
            let props: std::collections::HashMap<String, String> = [
                ("s3.endpoint", endpoint.as_str()),
                ("s3.access-key-id", "testing-key-id"),
                ("s3.secret-access-key", "testing-secret-key"),
                ("s3.region", "us-east-1"),
                ("s3.path-style-access", "true"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            let s3 = icefloe::io::for_location(&store, &props).unwrap();
            (Arc::new(Router { s3 }), store)
        }
        Err(_) => (Arc::new(LocalFileIO), run.clone()),
    };
    println!("new files under {store}; {n} commits of each kind per twin");

    // the original manifests: files to delete and DV, one per manifest
    let list = read_manifest_list(
        &LocalFileIO,
        md.current_snapshot()
            .unwrap()
            .manifest_list
            .as_deref()
            .unwrap(),
    )
    .unwrap();
    let mut targets: Vec<DataFile> = Vec::new();
    for (i, mf) in list.iter().enumerate().take(2 * n) {
        let m = read_manifest(
            ManifestSource::file(&LocalFileIO, &mf.manifest_path),
            &ReadManifestOptions::default().inherit_from(mf),
        )
        .unwrap();
        targets.push(m.entries[i].data_file.clone());
    }
    assert!(targets.len() >= 2 * n, "the table has too few manifests");

    let twin = |v: i32| -> Arc<PointerCatalog> {
        let dir = format!("{store}/v{v}");
        if !dir.starts_with("s3://") {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let mut md = md.clone();
        md.properties
            .push(("write.metadata.path".into(), dir.clone()));
        let c = Arc::new(PointerCatalog {
            dir,
            io: Arc::new(Counting {
                inner: io.clone(),
                files: AtomicU64::new(0),
                bytes: AtomicU64::new(0),
                read_files: AtomicU64::new(0),
                read_bytes: AtomicU64::new(0),
                delay: std::env::var("BENCH_IO_DELAY_MS")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .map(Duration::from_millis),
            }),
            state: Mutex::new(Some(TableState {
                metadata_location: latest.to_string_lossy().into_owned(),
                metadata: Arc::new(md),
            })),
            version: Mutex::new(0),
        });
        set_property(&c, "format-version", "3");
        if v == 4 {
            set_property(&c, "format-version", "4");
            if std::env::var("BENCH_NOCOMPACT").is_ok() {
                set_property(&c, "commit.v4.compact.min-dv-leaves", "0");
            }
        }
        c
    };
    let v3 = twin(3);
    let v4 = twin(4);
    let spec_fields = md.default_spec().unwrap().fields.len();
    let new_file = |i: usize| {
        DataFile::new(
            DataContentType::Data,
            format!("file:///bench/data/new-{i}.parquet"),
            FileFormat::Parquet,
            vec![Some(Literal::Int(1)); spec_fields],
            100,
            4096,
        )
    };
    // the first v4 commit converts the manifest list into a root (not measured)
    let mut p = SnapshotProducer::fast_append();
    p.add_file(new_file(usize::MAX));
    for c in [&v3, &v4] {
        commit(c, clone(&p));
    }

    let id_field = md
        .current_schema()
        .unwrap()
        .field_by_name("id", true)
        .unwrap()
        .id;
    // the last is the floor under every commit of both formats: a commit writing the
    // metadata JSON alone (a table property set), which every snapshot commit also writes
    let ops = [
        "append 1 file",
        "delete 1 file",
        "row delta, 1 DV",
        "metadata JSON only (property set)",
        "row delta replacing that DV",
    ];
    let mut perf = PerfControl::from_env();
    let mut stats: Vec<[Stats; 2]> = ops.iter().map(|_| Default::default()).collect();
    for i in 0..n {
        for (k, _) in ops.iter().enumerate() {
            // the op's producer, given its target's path as the twin's plan names it
            let producer = |target: &str| match k {
                0 => {
                    let mut p = SnapshotProducer::fast_append();
                    p.add_file(new_file(i));
                    p
                }
                1 => {
                    let mut p = SnapshotProducer::delete_files();
                    p.delete_path(target.to_string());
                    p
                }
                2 | 4 => {
                    // op 4: the file op 2 gave a DV deletes one more row; a row-level
                    // writer (icefloe's `table.delete`, Spark's merge-on-read) removes
                    // that DV and adds the merged one, validating that the DV it replaces
                    // is still live
                    let replacing = k == 4;
                    let mut d = DataFile::new(
                        DataContentType::PositionDeletes,
                        format!("file:///bench/data/dv-{i}-{k}.puffin"),
                        FileFormat::Puffin,
                        targets[n + i].partition.clone(),
                        if replacing { 2 } else { 1 },
                        1000,
                    );
                    d.referenced_data_file = Some(target.to_string());
                    d.content_offset = Some(4);
                    d.content_size_in_bytes = Some(40);
                    let mut p = SnapshotProducer::row_delta();
                    if replacing {
                        p.remove_delete_file(
                            format!("file:///bench/data/dv-{i}-2.puffin"),
                            Some(4),
                        );
                        p.validation_mut().validate_deleted_files = true;
                        p.validation_mut().referenced_data_files = vec![target.to_string()];
                    }
                    p.add_delete_file(None, d);
                    p
                }
                _ => SnapshotProducer::fast_append(), // unused: a property set
            };
            for (j, c) in [&v3, &v4].into_iter().enumerate() {
                let before = c.load_table(&ident()).unwrap();
                let target = if k == 1 { &targets[i] } else { &targets[n + i] };
                // a v4 writer passes where its scan found the file (outside the measured
                // commit: the writer planned before writing), and names it as the plan
                // does
                let position = (j == 1 && matches!(k, 1 | 2 | 4))
                    .then(|| plan_position(c, &before, target, id_field));
                let path = position
                    .as_ref()
                    .map_or(target.file_path.as_str(), |(p, _)| p);
                let mut p = producer(path);
                if k == 2 || k == 4 {
                    // a row-level writer validates from the snapshot it planned from (Java's
                    // `RowDelta.validateFromSnapshot(scan snapshot)` in Spark's writes,
                    // icefloe's `table.delete`/`upsert`), not over the whole history
                    p.validation_mut().from_snapshot = before.metadata.current_snapshot_id;
                }
                if let Some((path, pos)) = position {
                    p.data_file_position(path, pos);
                }
                c.io.take();
                c.io.take_reads();
                let profiled = perf.as_mut().filter(|(_, op, twin)| *op == k && *twin == j);
                let run = |p: SnapshotProducer| match k {
                    3 => set_property(c, "bench.property-commit", &i.to_string()),
                    _ => commit(c, p),
                };
                let t = match profiled {
                    Some((ctl, _, _)) => {
                        ctl.send("enable");
                        let t = run(p);
                        ctl.send("disable");
                        t
                    }
                    None => run(p),
                };
                let (files, bytes) = c.io.take();
                let (read_files, read_bytes) = c.io.take_reads();
                let after = c.load_table(&ident()).unwrap();
                let s = &mut stats[k][j];
                s.times.push(t);
                s.files.push(files);
                s.bytes.push(bytes);
                s.read_files.push(read_files);
                s.read_bytes.push(read_bytes);
                s.refresh
                    .push(refresh_bytes(c.io.as_ref(), &before, &after));
            }
        }
    }
    println!();
    println!("| commit | format | files written | bytes written | files read | bytes read | median latency | min | max | metadata bytes to refresh |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (k, op) in ops.iter().enumerate() {
        for (j, v) in ["v3", "v4"].iter().enumerate() {
            let s = &stats[k][j];
            println!(
                "| {op} | {v} | {} | {} | {} | {} | {:.1} ms | {:.1} ms | {:.1} ms | {} |",
                median(&s.files),
                median(&s.bytes),
                median(&s.read_files),
                median(&s.read_bytes),
                median(&s.times).as_secs_f64() * 1e3,
                s.times.iter().min().unwrap().as_secs_f64() * 1e3,
                s.times.iter().max().unwrap().as_secs_f64() * 1e3,
                median(&s.refresh),
            );
        }
    }

    if small_commits == 0 {
        return;
    }
    // planning after many small commits, without maintenance
    let start = Instant::now();
    for i in 0..small_commits {
        let mut p = SnapshotProducer::fast_append();
        p.add_file(new_file(1_000_000 + i));
        for c in [&v3, &v4] {
            commit(c, clone(&p));
        }
    }
    println!();
    println!(
        "{small_commits} one-file fast appends on each twin in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    let filters = [
        ("none", Expression::True),
        (
            "id",
            Expression::compare(Op::Eq, "id", Datum::Long(4_000_500)),
        ),
        (
            "day",
            Expression::and(
                Expression::compare(Op::GtEq, "ts", Datum::String("1970-01-05T00:00:00".into())),
                Expression::compare(Op::Lt, "ts", Datum::String("1970-01-10T00:00:00".into())),
            ),
        ),
    ];
    // what v4 planning reads: the root's own files, and leaves by their format (v3
    // manifests of the upgrade, decoded as v3 planning does, or leaves v4 wrote)
    let t = v4.load_table(&ident()).unwrap();
    let p = V4Layout::for_table(&t.metadata).unwrap();
    if let SnapshotTop::Root(root) =
        read_snapshot_top(v4.io.as_ref(), &p, t.metadata.current_snapshot().unwrap()).unwrap()
    {
        let (mut files, mut v3_leaves, mut v4_leaves, mut v4_entries) = (0, 0, 0, 0);
        for e in root.iter().filter(|e| e.content_type.is_manifest()) {
            if e.format_version < 4 {
                v3_leaves += 1;
            } else {
                v4_leaves += 1;
                v4_entries += e.record_count;
            }
        }
        files += root
            .iter()
            .filter(|e| !e.content_type.is_manifest())
            .count();
        println!(
            "v4 root: {files} files, {v3_leaves} v3 manifests, {v4_leaves} v4 leaves \
             ({v4_entries} entries)"
        );
    }
    println!();
    println!("| plan after {small_commits} small commits | v3 | v4 | files planned |");
    println!("|---|---|---|---|");
    // `BENCH_PLAN_ROUNDS` plans of each kind per twin (best taken; more for a profile)
    let rounds: usize = std::env::var("BENCH_PLAN_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    for (k, (name, f)) in filters.iter().enumerate() {
        let mut best = [Duration::MAX; 2];
        let mut counts = [0usize; 2];
        for _ in 0..rounds {
            for (j, c) in [&v3, &v4].into_iter().enumerate() {
                let t = c.load_table(&ident()).unwrap();
                let profiled = perf
                    .as_mut()
                    .filter(|(_, op, twin)| *op == ops.len() + k && (*twin == j || *twin == 2));
                let start = Instant::now();
                let plan = match profiled {
                    Some((ctl, _, _)) => {
                        ctl.send("enable");
                        let plan = TableScan::new(t.metadata.clone(), c.io())
                            .filter(f.clone())
                            .plan_files();
                        ctl.send("disable");
                        plan
                    }
                    None => TableScan::new(t.metadata.clone(), c.io())
                        .filter(f.clone())
                        .plan_files(),
                }
                .unwrap();
                best[j] = best[j].min(start.elapsed());
                counts[j] = plan.tasks.len();
            }
        }
        assert_eq!(
            counts[0], counts[1],
            "{name}: v3 and v4 plan different files"
        );
        println!(
            "| {name} | {:.2} s | {:.2} s | {} |",
            best[0].as_secs_f64(),
            best[1].as_secs_f64(),
            counts[0]
        );
    }
    if !store.starts_with("s3://") {
        std::fs::remove_dir_all(&run).ok();
    }
}

/// The tree position of `target` in `state`'s current snapshot, from a plan of the
/// rows with `target`'s lowest `id` (a point lookup, as a row-level write scans for the
/// rows it changes).
fn plan_position(
    c: &Arc<PointerCatalog>,
    state: &TableState,
    target: &DataFile,
    id_field: i32,
) -> (String, TreePosition) {
    let lower = target
        .lower_bounds
        .as_ref()
        .and_then(|b| b.iter().find(|(id, _)| *id == id_field))
        .map(|(_, v)| i64::from_le_bytes(v[..8].try_into().unwrap()))
        .expect("the target has an id lower bound");
    let plan = TableScan::new(state.metadata.clone(), c.io())
        .filter(Expression::compare(Op::Eq, "id", Datum::Long(lower)))
        .plan_files()
        .unwrap();
    let task = plan
        .tasks
        .iter()
        // the cached table's files have scheme-less local paths outside its location:
        // one a v4 commit restated (a DV added) is named `file://`-qualified from then on
        .find(|t| {
            let p = &t.file.file.file_path;
            *p == target.file_path || p.strip_prefix("file://") == Some(&target.file_path)
        })
        .expect("the plan has the target");
    let pos = task
        .file
        .tree_position
        .clone()
        .expect("a v4 plan gives positions");
    (task.file.file.file_path.clone(), pos)
}

/// `perf record -D -1 --control fifo:CTL,ACK` enabled around one kind of commit only:
/// `BENCH_PERF=<op>:<twin>:CTL:ACK` (op 0 append, 1 delete, 2 row delta, 3 property
/// set, 4 row delta replacing a DV, 5-7 the plans
/// after the small commits: no filter, `id` point lookup, `ts` range; twin 0 v3, 1 v4, 2
/// both), so that a profile holds the measured commits or plans and not the set-up.
struct PerfControl {
    ctl: std::fs::File,
    ack: std::io::BufReader<std::fs::File>,
}

impl PerfControl {
    fn from_env() -> Option<(PerfControl, usize, usize)> {
        let v = std::env::var("BENCH_PERF").ok()?;
        let parts: Vec<&str> = v.splitn(4, ':').collect();
        let [op, twin, ctl, ack] = parts[..] else {
            panic!("BENCH_PERF=<op>:<twin>:<ctl fifo>:<ack fifo>");
        };
        let ctl = std::fs::OpenOptions::new().write(true).open(ctl).unwrap();
        let ack = std::io::BufReader::new(std::fs::File::open(ack).unwrap());
        Some((
            PerfControl { ctl, ack },
            op.parse().unwrap(),
            twin.parse().unwrap(),
        ))
    }

    fn send(&mut self, command: &str) {
        use std::io::{BufRead, Write};
        writeln!(self.ctl, "{command}").unwrap();
        self.ctl.flush().unwrap();
        let mut line = String::new();
        self.ack.read_line(&mut line).unwrap();
    }
}

fn clone(p: &SnapshotProducer) -> SnapshotProducer {
    p.clone_unstarted()
}
