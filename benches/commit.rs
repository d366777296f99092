//! Commit latency: a fast append of one data file to the 1,000,000-file table
//! (`.cache/bench/pyi1m`, 100 manifests, built by `benches/plan_compare.py`).
//!
//! Each commit is a `Transaction` on a catalog that keeps the pointer in memory and
//! writes through `LocalFileIO`: load nothing, write one manifest, one manifest list (of
//! 101+ manifests) and one metadata JSON file, swap. New files go to a temporary directory
//! (`write.metadata.path`), so the cached table is not changed. Run:
//!
//! ```sh
//! cargo bench -p icefloe --bench commit
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use icefloe::catalog::sql::SqlCatalog;
use icefloe::catalog::{
    Catalog, Namespace, PurgeResult, PurgeScope, TableIdent, TableState, ViewState,
};
use icefloe::commit::Transaction;
use icefloe::io::{FileIO, LocalFileIO};
use icefloe::manifest::{DataContentType, DataFile, FileFormat};
use icefloe::spec::literal::Literal;
use icefloe::spec::table_metadata::TableMetadata;
use icefloe::spec::view_metadata::ViewMetadata;
use icefloe::{Error, Result};

/// One table, its pointer in memory, files on the local disk.
struct PointerCatalog {
    dir: String,
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
        Arc::new(LocalFileIO)
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
        metadata.write(&LocalFileIO, &location, false)?;
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
    let mut md = TableMetadata::read(&LocalFileIO, latest.to_str().unwrap()).unwrap();
    let out = std::env::temp_dir().join(format!("icefloe-commit-bench-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let out_dir = out.to_str().unwrap().to_string();
    // new manifests and lists go to the temporary directory, not into the cached table
    md.properties
        .push(("write.metadata.path".into(), out_dir.clone()));
    let spec_fields = md.default_spec().unwrap().fields.len();
    let catalog = Arc::new(PointerCatalog {
        dir: out_dir.clone(),
        state: Mutex::new(Some(TableState {
            metadata_location: latest.to_string_lossy().into_owned(),
            metadata: Arc::new(md),
        })),
        version: Mutex::new(0),
    });
    let ident = TableIdent::parse("db.t1000000").unwrap();
    let n = 30;
    let times = appends(catalog, &ident, n, spec_fields);
    let written = std::fs::read_dir(&out).unwrap().count();
    report("in-memory pointer", &times, Some(written / n));
    std::fs::remove_dir_all(&out).unwrap();

    // The same through the embedded SQLite catalog: a copy of the table's catalog file
    // (PyIceberg's), each commit loading the table from it and swapping its
    // metadata_location in a transaction. One first commit points write.metadata.path at
    // the temporary directory.
    let db = root.join("../../../catalog.db");
    std::fs::create_dir_all(&out).unwrap();
    let db_copy = out.join("catalog.db");
    std::fs::copy(&db, &db_copy).unwrap();
    let sql = Arc::new(
        SqlCatalog::open(
            "bench",
            db_copy.to_str().unwrap(),
            &format!("file://{out_dir}"),
            Arc::new(LocalFileIO),
        )
        .unwrap(),
    );
    let mut tx = Transaction::load(sql.clone(), ident.clone()).unwrap();
    tx.set_properties(vec![("write.metadata.path".into(), out_dir.clone())])
        .unwrap();
    tx.commit().unwrap();
    let times = appends(sql, &ident, n, spec_fields);
    report("SQLite catalog", &times, None);
    std::fs::remove_dir_all(&out).unwrap();
}

/// `n` transactions, each a fast append of one file; the time of each.
fn appends(
    catalog: Arc<dyn Catalog>,
    ident: &TableIdent,
    n: usize,
    spec_fields: usize,
) -> Vec<std::time::Duration> {
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let f = DataFile::new(
            DataContentType::Data,
            format!("file:///bench/data/new-{i}.parquet"),
            FileFormat::Parquet,
            vec![Some(Literal::Int(1)); spec_fields],
            100,
            4096,
        );
        let start = Instant::now();
        let mut tx = Transaction::load(catalog.clone(), ident.clone()).unwrap();
        tx.append_files(vec![f]);
        tx.commit().unwrap();
        times.push(start.elapsed());
    }
    times.sort();
    times
}

fn report(catalog: &str, times: &[std::time::Duration], files_per_commit: Option<usize>) {
    let n = times.len();
    println!(
        "fast append of 1 file to the 1,000,000-file table, {catalog}: median {:.1} ms, min {:.1} ms, max {:.1} ms over {n} commits{}",
        times[n / 2].as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        times[n - 1].as_secs_f64() * 1e3,
        files_per_commit.map_or(String::new(), |f| format!("; {f} files written per commit"))
    );
}
