#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::catalog::testing::{scratch_dir, table_metadata, view_metadata};
use crate::catalog::TableCommit;
use crate::io::LocalFileIO;
use crate::manifest::list::write_manifest_list;
use crate::manifest::writer::ManifestWriter;
use crate::manifest::{Codec, DataContentType, DataFile, FileFormat, ManifestContent};
use crate::spec::snapshot::{MetadataLogEntry, Operation, Snapshot, Summary};
use crate::spec::statistics::PartitionStatisticsFile;

fn ns(levels: &[&str]) -> Namespace {
    levels.iter().map(|s| s.to_string()).collect()
}

fn ident(dotted: &str) -> TableIdent {
    TableIdent::parse(dotted).unwrap()
}

struct Fixture {
    dir: PathBuf,
    uri: String,
    warehouse: String,
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        let dir = scratch_dir(name);
        Fixture {
            uri: format!("jdbc:sqlite:{}", dir.join("catalog.db").display()),
            warehouse: format!("file://{}", dir.join("warehouse").display()),
            dir,
        }
    }

    fn open(&self, name: &str) -> SqlCatalog {
        SqlCatalog::open(name, &self.uri, &self.warehouse, Arc::new(LocalFileIO)).unwrap()
    }

    /// A raw connection, to look at the rows as other implementations would.
    fn raw(&self) -> Connection {
        Connection::open(self.dir.join("catalog.db")).unwrap()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn create_table(cat: &SqlCatalog, name: &str) -> TableState {
    let id = ident(name);
    let location = cat.default_table_location(&id).unwrap();
    cat.commit_table(&id, None, table_metadata(&location, &[]))
        .unwrap()
}

/// The metadata of `state` with one more property, as `commit/` would build it (the
/// previous file appended to the metadata log).
fn with_property(state: &TableState, key: &str, value: &str) -> TableMetadata {
    let mut md = (*state.metadata).clone();
    md.properties.retain(|(k, _)| k != key);
    md.properties.push((key.to_string(), value.to_string()));
    md.metadata_log.push(MetadataLogEntry {
        timestamp_ms: md.last_updated_ms,
        metadata_file: state.metadata_location.clone(),
    });
    md
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn uris_name_sqlite_files() {
    assert_eq!(sqlite_path("sqlite:///rel/c.db").unwrap(), "rel/c.db");
    assert_eq!(sqlite_path("sqlite:////abs/c.db").unwrap(), "/abs/c.db");
    assert_eq!(sqlite_path("jdbc:sqlite:/abs/c.db").unwrap(), "/abs/c.db");
    assert_eq!(
        sqlite_path("jdbc:sqlite:file:/abs/c.db").unwrap(),
        "/abs/c.db"
    );
    assert_eq!(sqlite_path("/abs/c.db").unwrap(), "/abs/c.db");
    assert_eq!(sqlite_path("sqlite:///:memory:").unwrap(), ":memory:");
    assert!(matches!(
        sqlite_path("postgresql://h/db"),
        Err(Error::Unsupported { .. })
    ));
    assert!(sqlite_path("sqlite://").is_err());
}

#[test]
fn creates_the_java_v1_schema() {
    let f = Fixture::new("sql-schema");
    let _cat = f.open("c");
    let raw = f.raw();
    let cols = |t: &str| -> Vec<(String, String, bool, i64)> {
        let mut s = raw.prepare(&format!("PRAGMA table_info({t})")).unwrap();
        s.query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(3)?, r.get(5)?)))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    let c = |n: &str, t: &str, notnull: bool, pk: i64| (n.to_string(), t.to_string(), notnull, pk);
    assert_eq!(
        cols("iceberg_tables"),
        vec![
            c("catalog_name", "VARCHAR(255)", true, 1),
            c("table_namespace", "VARCHAR(255)", true, 2),
            c("table_name", "VARCHAR(255)", true, 3),
            c("metadata_location", "VARCHAR(1000)", false, 0),
            c("previous_metadata_location", "VARCHAR(1000)", false, 0),
            c("iceberg_type", "VARCHAR(5)", false, 0),
        ]
    );
    assert_eq!(
        cols("iceberg_namespace_properties"),
        vec![
            c("catalog_name", "VARCHAR(255)", true, 1),
            c("namespace", "VARCHAR(255)", true, 2),
            c("property_key", "VARCHAR(255)", false, 3),
            c("property_value", "VARCHAR(1000)", false, 0),
        ]
    );
    // opening again changes nothing
    let _again = f.open("c");
    assert_eq!(cols("iceberg_tables").len(), 6);
}

#[test]
fn upgrades_a_catalog_without_iceberg_type_and_reads_its_rows_as_tables() {
    let f = Fixture::new("sql-v0");
    let md_location = {
        let md = table_metadata(&format!("{}/db/t", f.warehouse), &[]);
        let loc = format!("{}/db/t/metadata/00000-x.metadata.json", f.warehouse);
        md.write(&LocalFileIO, &loc, false).unwrap();
        loc
    };
    {
        // as PyIceberg's SqlCatalog (and Java's V0 schema) leave it
        let raw = f.raw();
        raw.execute(CREATE_TABLES_SQL, []).unwrap();
        raw.execute(
            "INSERT INTO iceberg_tables VALUES ('c', 'db', 't', ?1, NULL)",
            [&md_location],
        )
        .unwrap();
    }
    let cat = f.open("c");
    assert_eq!(cat.list_tables(&ns(&["db"])).unwrap(), vec![ident("db.t")]);
    assert!(cat.list_views(&ns(&["db"])).unwrap().is_empty());
    assert_eq!(
        cat.load_table(&ident("db.t")).unwrap().metadata_location,
        md_location
    );
    assert_eq!(cat.list_namespaces(&[]).unwrap(), vec![ns(&["db"])]);
}

#[test]
fn namespaces() {
    let f = Fixture::new("sql-ns");
    let cat = f.open("c");
    assert!(cat.list_namespaces(&[]).unwrap().is_empty());
    assert!(!cat.namespace_exists(&ns(&["a"])).unwrap());
    cat.create_namespace(&ns(&["a"]), &[("owner".into(), "me".into())])
        .unwrap();
    cat.create_namespace(&ns(&["a", "b"]), &[]).unwrap();
    cat.create_namespace(&ns(&["z"]), &[]).unwrap();
    assert!(matches!(
        cat.create_namespace(&ns(&["a"]), &[]),
        Err(Error::AlreadyExists { .. })
    ));
    assert!(matches!(
        cat.create_namespace(&ns(&["q"]), &[("exists".into(), "x".into())]),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        cat.create_namespace(&ns(&["a.b"]), &[]),
        Err(Error::InvalidArgument { .. })
    ));
    assert_eq!(
        cat.list_namespaces(&[]).unwrap(),
        vec![ns(&["a"]), ns(&["z"])]
    );
    assert_eq!(
        cat.list_namespaces(&ns(&["a"])).unwrap(),
        vec![ns(&["a", "b"])]
    );
    assert!(cat.list_namespaces(&ns(&["a", "b"])).unwrap().is_empty());
    assert!(matches!(
        cat.list_namespaces(&ns(&["nope"])),
        Err(Error::NoSuchNamespace { .. })
    ));

    // `exists` is stored but hidden; `location` defaults as in Java
    let stored: Vec<(String, String)> = {
        let raw = f.raw();
        let mut s = raw
            .prepare(
                "SELECT property_key, property_value FROM iceberg_namespace_properties \
                 WHERE namespace = 'a' ORDER BY property_key",
            )
            .unwrap();
        s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    assert_eq!(
        stored,
        vec![
            ("exists".to_string(), "true".to_string()),
            ("owner".to_string(), "me".to_string())
        ]
    );
    let props = cat.namespace_properties(&ns(&["a"])).unwrap();
    assert_eq!(
        props,
        vec![
            ("location".to_string(), format!("{}/a", f.warehouse)),
            ("owner".to_string(), "me".to_string())
        ]
    );
    cat.update_namespace_properties(
        &ns(&["a"]),
        &["owner".to_string()],
        &[
            ("location".into(), "/elsewhere".into()),
            ("k".into(), "v".into()),
        ],
    )
    .unwrap();
    assert_eq!(
        cat.namespace_properties(&ns(&["a"])).unwrap(),
        vec![
            ("k".to_string(), "v".to_string()),
            ("location".to_string(), "/elsewhere".to_string())
        ]
    );
    cat.update_namespace_properties(&ns(&["a"]), &[], &[("k".into(), "w".into())])
        .unwrap();
    assert!(cat
        .namespace_properties(&ns(&["a"]))
        .unwrap()
        .contains(&("k".to_string(), "w".to_string())));
    for bad in [
        cat.update_namespace_properties(&ns(&["a"]), &["exists".into()], &[]),
        cat.update_namespace_properties(&ns(&["a"]), &["k".into()], &[("k".into(), "v".into())]),
    ] {
        assert!(matches!(bad, Err(Error::InvalidArgument { .. })), "{bad:?}");
    }
    assert!(matches!(
        cat.namespace_properties(&ns(&["nope"])),
        Err(Error::NoSuchNamespace { .. })
    ));
    assert!(matches!(
        cat.update_namespace_properties(&ns(&["nope"]), &[], &[]),
        Err(Error::NoSuchNamespace { .. })
    ));

    // a namespace survives the removal of every property it was given
    cat.update_namespace_properties(&ns(&["a"]), &["k".into(), "location".into()], &[])
        .unwrap();
    assert!(cat.namespace_exists(&ns(&["a"])).unwrap());

    // dropping: children and tables keep a namespace
    assert!(matches!(
        cat.drop_namespace(&ns(&["a"])),
        Err(Error::NamespaceNotEmpty { .. })
    ));
    cat.drop_namespace(&ns(&["a", "b"])).unwrap();
    create_table(&cat, "a.t");
    assert!(matches!(
        cat.drop_namespace(&ns(&["a"])),
        Err(Error::NamespaceNotEmpty { .. })
    ));
    cat.drop_table(&ident("a.t")).unwrap();
    cat.drop_namespace(&ns(&["a"])).unwrap();
    assert!(!cat.namespace_exists(&ns(&["a"])).unwrap());
    assert!(matches!(
        cat.drop_namespace(&ns(&["a"])),
        Err(Error::NoSuchNamespace { .. })
    ));
    assert_eq!(cat.list_namespaces(&[]).unwrap(), vec![ns(&["z"])]);
}

#[test]
fn namespace_names_match_exactly() {
    let f = Fixture::new("sql-ns-exact");
    let cat = f.open("c");
    // Java's LIKE would match `a_c` for `a!_c` patterns only; SQLite's LIKE also ignores
    // case: neither may make `AB` or `a%` exist because `ab.x` does
    cat.create_namespace(&ns(&["ab", "x"]), &[]).unwrap();
    assert!(cat.namespace_exists(&ns(&["ab"])).unwrap());
    assert!(!cat.namespace_exists(&ns(&["AB"])).unwrap());
    assert!(!cat.namespace_exists(&ns(&["a%"])).unwrap());
    assert!(!cat.namespace_exists(&ns(&["a"])).unwrap());
    assert_eq!(
        cat.list_namespaces(&ns(&["ab"])).unwrap(),
        vec![ns(&["ab", "x"])]
    );
}

#[test]
fn catalogs_in_one_file_are_separate() {
    let f = Fixture::new("sql-scope");
    let one = f.open("one");
    let two = f.open("two");
    one.create_namespace(&ns(&["db"]), &[]).unwrap();
    create_table(&one, "db.t");
    assert!(two.list_namespaces(&[]).unwrap().is_empty());
    assert!(!two.table_exists(&ident("db.t")).unwrap());
    two.create_namespace(&ns(&["db"]), &[]).unwrap();
    assert!(two.list_tables(&ns(&["db"])).unwrap().is_empty());
    assert_eq!(one.list_tables(&ns(&["db"])).unwrap(), vec![ident("db.t")]);
}

#[test]
fn table_lifecycle() {
    let f = Fixture::new("sql-tables");
    let cat = f.open("c");
    let t = ident("db.t");
    let elsewhere = f.dir.join("elsewhere");
    assert!(matches!(
        cat.commit_table(&t, None, table_metadata(elsewhere.to_str().unwrap(), &[])),
        Err(Error::NoSuchNamespace { .. })
    ));
    // the metadata file written for the failed create was removed
    assert!(elsewhere.join("metadata").is_dir());
    assert!(files_in(&elsewhere.join("metadata")).is_empty());
    cat.create_namespace(&ns(&["db"]), &[]).unwrap();
    assert!(matches!(
        cat.list_tables(&ns(&["nope"])),
        Err(Error::NoSuchNamespace { .. })
    ));

    let location = cat.default_table_location(&t).unwrap();
    assert_eq!(location, format!("{}/db/t", f.warehouse));
    let created = create_table(&cat, "db.t");
    let meta_dir = f.dir.join("warehouse/db/t/metadata");
    let name = created.metadata_location.rsplit('/').next().unwrap();
    assert!(name.starts_with("00000-") && name.ends_with(".metadata.json"));
    assert_eq!(files_in(&meta_dir), vec![name.to_string()]);
    assert!(cat.table_exists(&t).unwrap());
    assert!(!cat.table_exists(&ident("db.u")).unwrap());
    assert_eq!(cat.list_tables(&ns(&["db"])).unwrap(), vec![t.clone()]);
    let loaded = cat.load_table(&t).unwrap();
    assert_eq!(loaded.metadata_location, created.metadata_location);
    assert_eq!(*loaded.metadata, *created.metadata);

    // creating it again fails and leaves no file behind
    assert!(matches!(
        cat.commit_table(&t, None, table_metadata(&location, &[])),
        Err(Error::AlreadyExists { .. })
    ));
    assert_eq!(files_in(&meta_dir).len(), 1);

    // a commit moves the pointer and records the previous one
    let second = cat
        .commit_table(&t, Some(&loaded), with_property(&loaded, "k", "1"))
        .unwrap();
    assert!(second
        .metadata_location
        .rsplit('/')
        .next()
        .unwrap()
        .starts_with("00001-"));
    let (cur, prev): (String, String) = f
        .raw()
        .query_row(
            "SELECT metadata_location, previous_metadata_location FROM iceberg_tables",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (cur, prev),
        (
            second.metadata_location.clone(),
            created.metadata_location.clone()
        )
    );
    assert_eq!(
        cat.load_table(&t).unwrap().metadata.property("k"),
        Some("1")
    );

    // a commit from a stale base fails, changes nothing and removes its file
    let stale = cat.commit_table(&t, Some(&loaded), with_property(&loaded, "k", "2"));
    assert!(
        matches!(stale, Err(Error::CommitFailed { .. })),
        "{stale:?}"
    );
    assert_eq!(
        cat.load_table(&t).unwrap().metadata_location,
        second.metadata_location
    );
    assert_eq!(files_in(&meta_dir).len(), 2);

    // register another table from the current file
    let u = ident("db.u");
    let registered = cat.register_table(&u, &second.metadata_location).unwrap();
    assert_eq!(registered.metadata_location, second.metadata_location);
    assert!(matches!(
        cat.register_table(&u, &second.metadata_location),
        Err(Error::AlreadyExists { .. })
    ));
    assert!(matches!(
        cat.register_table(&ident("db.v"), "/no/such/file.metadata.json"),
        Err(Error::Io { .. })
    ));
    assert!(!cat.table_exists(&ident("db.v")).unwrap());

    // rename
    cat.create_namespace(&ns(&["other"]), &[]).unwrap();
    assert!(matches!(
        cat.rename_table(&u, &t),
        Err(Error::AlreadyExists { .. })
    ));
    assert!(matches!(
        cat.rename_table(&u, &ident("nope.u")),
        Err(Error::NoSuchNamespace { .. })
    ));
    assert!(matches!(
        cat.rename_table(&ident("db.missing"), &ident("db.x")),
        Err(Error::NoSuchTable { .. })
    ));
    cat.rename_table(&u, &ident("other.u2")).unwrap();
    assert!(!cat.table_exists(&u).unwrap());
    assert_eq!(
        cat.load_table(&ident("other.u2"))
            .unwrap()
            .metadata_location,
        second.metadata_location
    );

    // drop without purge keeps the files
    cat.drop_table(&ident("other.u2")).unwrap();
    assert!(matches!(
        cat.drop_table(&ident("other.u2")),
        Err(Error::NoSuchTable { .. })
    ));
    assert!(matches!(
        cat.load_table(&ident("other.u2")),
        Err(Error::NoSuchTable { .. })
    ));
    assert_eq!(files_in(&meta_dir).len(), 2);
}

#[test]
fn commit_writes_compressed_metadata_and_deletes_old_files_when_asked() {
    let f = Fixture::new("sql-meta");
    let cat = f.open("c");
    cat.create_namespace(&ns(&["db"]), &[]).unwrap();
    let t = ident("db.t");
    let location = cat.default_table_location(&t).unwrap();
    let props = [
        ("write.metadata.compression-codec", "gzip"),
        ("write.metadata.delete-after-commit.enabled", "true"),
    ];
    let mut state = cat
        .commit_table(&t, None, table_metadata(&location, &props))
        .unwrap();
    assert!(state.metadata_location.ends_with(".gz.metadata.json"));
    let first = state.metadata_location.clone();
    for i in 0..3 {
        let mut md = with_property(&state, "i", &i.to_string());
        // as commit/ trims the log to write.metadata.previous-versions-max = 1
        let keep = md.metadata_log.len().saturating_sub(1);
        md.metadata_log.drain(..keep);
        state = cat.commit_table(&t, Some(&state), md).unwrap();
    }
    let names = files_in(&f.dir.join("warehouse/db/t/metadata"));
    // the current file and the one still in the log
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[0].starts_with("00002-") && names[1].starts_with("00003-"));
    assert!(!Path::new(local_path(&first)).exists());
    assert_eq!(
        cat.load_table(&t).unwrap().metadata.property("i"),
        Some("2")
    );
}

#[test]
fn purge_deletes_every_reachable_file() {
    let f = Fixture::new("sql-purge");
    let cat = f.open("c");
    cat.create_namespace(&ns(&["db"]), &[]).unwrap();
    let t = ident("db.t");
    let created = create_table(&cat, "db.t");
    let base = format!("{}/db/t", f.warehouse);
    let io = LocalFileIO;

    // one snapshot: a data file and a delete file, their manifests, the list, stats
    let md = &created.metadata;
    let schema = md.current_schema().unwrap();
    let spec = md.default_spec().unwrap();
    let mut manifests = Vec::new();
    for (content, kind, name) in [
        (ManifestContent::Data, DataContentType::Data, "a.parquet"),
        (
            ManifestContent::Deletes,
            DataContentType::PositionDeletes,
            "d.parquet",
        ),
    ] {
        let path = format!("{base}/data/{name}");
        io.write_new(&path, b"x").unwrap();
        let mut w = ManifestWriter::new(2, content, schema, spec, 5, Codec::Null).unwrap();
        w.add(DataFile::new(
            kind,
            &path,
            FileFormat::Parquet,
            vec![],
            1,
            1,
        ))
        .unwrap();
        manifests.push(
            w.finish(&io, &format!("{base}/metadata/m-{name}.avro"))
                .unwrap(),
        );
    }
    let list = format!("{base}/metadata/snap-5.avro");
    write_manifest_list(&io, &list, 2, 5, None, 1, None, &manifests, Codec::Null).unwrap();
    let stats = format!("{base}/metadata/stats.puffin");
    io.write_new(&stats, b"p").unwrap();
    let mut next = with_property(&created, "x", "y");
    next.snapshots.push(Snapshot {
        snapshot_id: 5,
        sequence_number: 1,
        timestamp_ms: 2,
        manifest_list: Some(list),
        summary: Some(Summary::new(Operation::Append)),
        ..Default::default()
    });
    next.current_snapshot_id = Some(5);
    next.last_sequence_number = 1;
    next.partition_statistics.push(PartitionStatisticsFile {
        snapshot_id: 5,
        statistics_path: stats,
        file_size_in_bytes: 1,
    });
    cat.commit_table(&t, Some(&created), next).unwrap();
    let table_dir = f.dir.join("warehouse/db/t");
    assert_eq!(files_in(&table_dir.join("data")).len(), 2);
    assert_eq!(files_in(&table_dir.join("metadata")).len(), 6);

    cat.purge_table(&t, PurgeScope::TableLocation).unwrap();
    assert!(!cat.table_exists(&t).unwrap());
    assert!(files_in(&table_dir.join("data")).is_empty());
    assert!(files_in(&table_dir.join("metadata")).is_empty());
}

#[test]
fn views() {
    let f = Fixture::new("sql-views");
    let cat = f.open("c");
    cat.create_namespace(&ns(&["db"]), &[]).unwrap();
    let v = ident("db.v");
    let location = cat.default_table_location(&v).unwrap();
    assert!(!cat.view_exists(&v).unwrap());
    let created = cat.commit_view(&v, None, view_metadata(&location)).unwrap();
    assert!(created
        .metadata_location
        .starts_with(&format!("{location}/metadata/00000-")));
    assert!(cat.view_exists(&v).unwrap());
    // a view is not a table, and names are shared between the two
    assert!(!cat.table_exists(&v).unwrap());
    assert!(cat.list_tables(&ns(&["db"])).unwrap().is_empty());
    assert!(matches!(cat.load_table(&v), Err(Error::NoSuchTable { .. })));
    assert!(matches!(
        cat.commit_table(&v, None, table_metadata(&location, &[])),
        Err(Error::AlreadyExists { .. })
    ));
    create_table(&cat, "db.t");
    assert!(matches!(
        cat.commit_view(&ident("db.t"), None, view_metadata(&location)),
        Err(Error::AlreadyExists { .. })
    ));
    assert!(matches!(
        cat.rename_view(&v, &ident("db.t")),
        Err(Error::AlreadyExists { .. })
    ));
    assert!(matches!(
        cat.rename_table(&ident("db.t"), &v),
        Err(Error::AlreadyExists { .. })
    ));
    assert_eq!(cat.list_views(&ns(&["db"])).unwrap(), vec![v.clone()]);
    let kind: String = f
        .raw()
        .query_row(
            "SELECT iceberg_type FROM iceberg_tables WHERE table_name = 'v'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kind, "VIEW");

    // replace
    let loaded = cat.load_view(&v).unwrap();
    assert_eq!(*loaded.metadata, *created.metadata);
    let mut md = (*loaded.metadata).clone();
    md.properties.insert("k".into(), "v".into());
    let replaced = cat.commit_view(&v, Some(&loaded), md.clone()).unwrap();
    assert!(replaced.metadata_location.contains("/00001-"));
    assert!(matches!(
        cat.commit_view(&v, Some(&loaded), md),
        Err(Error::CommitFailed { .. })
    ));

    cat.rename_view(&v, &ident("db.w")).unwrap();
    assert!(!cat.view_exists(&v).unwrap());
    assert!(matches!(cat.drop_view(&v), Err(Error::NoSuchView { .. })));
    assert!(matches!(
        cat.drop_namespace(&ns(&["db"])),
        Err(Error::NamespaceNotEmpty { .. })
    ));
    cat.drop_view(&ident("db.w")).unwrap();
    assert!(cat.list_views(&ns(&["db"])).unwrap().is_empty());
    // the current metadata file went with it (gc.enabled defaults to true), as in Java
    assert!(!Path::new(local_path(&replaced.metadata_location)).exists());
}

#[test]
fn concurrent_writers_lose_no_commit() {
    let f = Fixture::new("sql-concurrent");
    {
        let cat = f.open("c");
        cat.create_namespace(&ns(&["db"]), &[]).unwrap();
        create_table(&cat, "db.t");
    }
    const THREADS: usize = 4;
    const COMMITS: usize = 8;
    let retries: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|w| {
                let f = &f;
                s.spawn(move || {
                    // each writer has its own connection, as separate processes would
                    let cat = f.open("c");
                    let t = ident("db.t");
                    let mut retries = 0;
                    for i in 0..COMMITS {
                        loop {
                            let base = cat.load_table(&t).unwrap();
                            let md = with_property(&base, &format!("w{w}-{i}"), "1");
                            match cat.commit_table(&t, Some(&base), md) {
                                Ok(_) => break,
                                Err(Error::CommitFailed { .. }) => retries += 1,
                                Err(e) => panic!("writer {w}: {e}"),
                            }
                        }
                    }
                    retries
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let cat = f.open("c");
    let state = cat.load_table(&ident("db.t")).unwrap();
    for w in 0..THREADS {
        for i in 0..COMMITS {
            assert_eq!(state.metadata.property(&format!("w{w}-{i}")), Some("1"));
        }
    }
    // every commit is one link in the chain of metadata files, none twice
    assert_eq!(state.metadata.metadata_log.len(), THREADS * COMMITS);
    assert!(state
        .metadata_location
        .contains(&format!("/{:05}-", THREADS * COMMITS)));
    // the losers' files were removed: one file per successful commit, plus the first
    let files = files_in(&f.dir.join("warehouse/db/t/metadata"));
    assert_eq!(files.len(), THREADS * COMMITS + 1, "{retries} retries");
}

#[test]
fn an_unknown_outcome_keeps_the_new_metadata_file() {
    let f = Fixture::new("sql-unknown");
    let cat = f.open("c");
    cat.create_namespace(&ns(&["db"]), &[]).unwrap();
    let t = ident("db.t");
    let base = create_table(&cat, "db.t");
    let meta_dir = f.dir.join("warehouse/db/t/metadata");
    cat.fail_at_commit
        .store(true, std::sync::atomic::Ordering::Relaxed);
    let r = cat.commit_table(&t, Some(&base), with_property(&base, "k", "1"));
    assert!(matches!(r, Err(Error::CommitStateUnknown { .. })), "{r:?}");
    // the file it wrote may be referenced, so it stays
    assert_eq!(files_in(&meta_dir).len(), 2);
    // (here the swap was in fact rolled back)
    assert_eq!(
        cat.load_table(&t).unwrap().metadata_location,
        base.metadata_location
    );
    // whereas a lost race removes its file
    let winner = cat
        .commit_table(&t, Some(&base), with_property(&base, "k", "2"))
        .unwrap();
    assert!(matches!(
        cat.commit_table(&t, Some(&base), with_property(&base, "k", "3")),
        Err(Error::CommitFailed { .. })
    ));
    assert_eq!(files_in(&meta_dir).len(), 3);
    assert!(Path::new(local_path(&winner.metadata_location)).exists());
}

/// A location is never derived from an identifier part that would leave its folder: Java's
/// `JdbcCatalog` places `db.../../x` outside the warehouse; icefloe refuses it.
#[test]
fn identifiers_that_would_escape_the_warehouse_are_refused() {
    use crate::commit::view::{create_view, ViewDefinition};
    use crate::spec::schema::Schema;
    use crate::spec::types::{NestedField, PrimitiveType, Type};

    let f = Fixture::new("sql-escape");
    let cat: Arc<SqlCatalog> = Arc::new(f.open("c"));
    cat.create_namespace(&ns(&["db"]), &[]).unwrap();
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
    let create = |ident: &TableIdent, location: Option<&str>| {
        crate::commit::create_table(
            cat.clone(),
            ident,
            &schema,
            &crate::spec::partition::PartitionSpec::unpartitioned(),
            &crate::spec::sort::SortOrder::unsorted(),
            location,
            &[],
            Some(2),
        )
    };
    for name in ["../../x", "..", ".", "a/b", "a\\b", "nul\0", ""] {
        let t = TableIdent::new(ns(&["db"]), name);
        let err = create(&t, None).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidIdentifier { identifier, .. } if identifier == &t.to_string()),
            "{name:?}: {err:?}"
        );
        assert!(matches!(
            cat.default_table_location(&t),
            Err(Error::InvalidIdentifier { .. })
        ));
        assert!(!cat.table_exists(&t).unwrap());
    }
    // nothing was written next to the warehouse
    assert_eq!(files_in(&f.dir), vec!["catalog.db".to_string()]);

    // a name that is unusual but stays in its folder is fine, as in Java
    let dotted = TableIdent::new(ns(&["db"]), "a.b..c");
    let made = create(&dotted, None).unwrap();
    assert!(made.metadata.location.ends_with("/warehouse/db/a.b..c"));

    // an explicit location derives nothing from the name; registering neither
    let explicit = TableIdent::new(ns(&["db"]), "../elsewhere");
    let place = format!("{}/tables/elsewhere", f.warehouse);
    let made = create(&explicit, Some(&place)).unwrap();
    assert_eq!(made.metadata.location, place);
    let registered = TableIdent::new(ns(&["db"]), "../registered");
    cat.register_table(&registered, &made.metadata_location)
        .unwrap();
    assert!(cat.table_exists(&registered).unwrap());

    // views: the same rule for a derived location, none for an explicit one
    let def = |location: Option<String>| ViewDefinition {
        schema: schema.clone(),
        queries: vec![("spark".into(), "select 1".into())],
        default_namespace: ns(&["db"]),
        default_catalog: None,
        summary: Default::default(),
        properties: Default::default(),
        location,
    };
    let v = TableIdent::new(ns(&["db"]), "../v");
    assert!(matches!(
        create_view(cat.as_ref(), &v, &def(None)),
        Err(Error::InvalidIdentifier { .. })
    ));
    let view_place = format!("{}/views/v", f.warehouse);
    let made = create_view(cat.as_ref(), &v, &def(Some(view_place.clone()))).unwrap();
    assert_eq!(made.metadata.location, view_place);

    // namespaces: their default location comes from their levels ('.' is refused anyway:
    // it separates the stored levels)
    for level in ["a/b", "a\\b", "nul\0"] {
        assert!(
            matches!(
                cat.create_namespace(&ns(&[level]), &[]),
                Err(Error::InvalidIdentifier { .. })
            ),
            "{level:?}"
        );
    }
    let placed = ns(&["p/q"]);
    cat.create_namespace(&placed, &[("location".into(), "/somewhere".into())])
        .unwrap();
    assert!(cat
        .namespace_properties(&placed)
        .unwrap()
        .contains(&("location".to_string(), "/somewhere".to_string())));
    // a table in it needs an explicit location too
    let inside = TableIdent::new(placed.clone(), "t");
    assert!(matches!(
        create(&inside, None),
        Err(Error::InvalidIdentifier { .. })
    ));
    // a namespace another catalog made with such a level has no default location
    f.raw()
        .execute(
            "INSERT INTO iceberg_namespace_properties VALUES ('c', 'x/y', 'exists', 'true')",
            [],
        )
        .unwrap();
    let props = cat.namespace_properties(&ns(&["x/y"])).unwrap();
    assert!(!props.iter().any(|(k, _)| k == "location"), "{props:?}");
}

/// Commits to `state` one snapshot whose data manifest (at `manifest`) lists the data files
/// at `data` (each written first), with its manifest list at `list`.
fn commit_snapshot_of(
    cat: &SqlCatalog,
    t: &TableIdent,
    state: &TableState,
    data: &[String],
    manifest: &str,
    list: &str,
) -> TableState {
    let io = LocalFileIO;
    let md = &state.metadata;
    let mut w = ManifestWriter::new(
        2,
        ManifestContent::Data,
        md.current_schema().unwrap(),
        md.default_spec().unwrap(),
        5,
        Codec::Null,
    )
    .unwrap();
    for path in data {
        io.write_new(path, b"x").unwrap();
        w.add(DataFile::new(
            DataContentType::Data,
            path,
            FileFormat::Parquet,
            vec![],
            1,
            1,
        ))
        .unwrap();
    }
    let manifests = vec![w.finish(&io, manifest).unwrap()];
    write_manifest_list(&io, list, 2, 5, None, 1, None, &manifests, Codec::Null).unwrap();
    let mut next = with_property(state, "x", "y");
    next.snapshots.push(Snapshot {
        snapshot_id: 5,
        sequence_number: 1,
        timestamp_ms: 2,
        manifest_list: Some(list.to_string()),
        summary: Some(Summary::new(Operation::Append)),
        ..Default::default()
    });
    next.current_snapshot_id = Some(5);
    next.last_sequence_number = 1;
    cat.commit_table(t, Some(state), next).unwrap()
}

/// A registered table whose metadata names files of another table and files outside the
/// warehouse: a purge deletes only the files inside the table's location unless told
/// otherwise, and reports the others.
#[test]
fn purge_keeps_files_outside_the_table_location_unless_asked() {
    for scope in [PurgeScope::TableLocation, PurgeScope::Everywhere] {
        let f = Fixture::new("sql-purge-outside");
        let cat = f.open("c");
        cat.create_namespace(&ns(&["db"]), &[]).unwrap();
        let other = create_table(&cat, "db.other");
        let t = ident("db.t");
        let created = create_table(&cat, "db.t");
        let base = format!("{}/db/t", f.warehouse);
        // `db/t` must not be taken as a prefix of `db/tt`
        let near = format!("{}/db/tt/data/near.parquet", f.warehouse);
        let others = format!("{}/data/theirs.parquet", other.metadata.location);
        let outside = format!("file://{}/elsewhere/x.parquet", f.dir.display());
        let escaping = format!("{base}/data/../../other/data/escaping.parquet");
        let own = format!("{base}/data/own.parquet");
        let manifest = format!("file://{}/elsewhere/m.avro", f.dir.display());
        let list = format!("{base}/metadata/snap-5.avro");
        let data = vec![
            own.clone(),
            near.clone(),
            others.clone(),
            outside.clone(),
            escaping.clone(),
        ];
        let state = commit_snapshot_of(&cat, &t, &created, &data, &manifest, &list);
        // registered under another name, as a hostile or careless user would
        let r = ident("db.registered");
        cat.register_table(&r, &state.metadata_location).unwrap();

        let result = cat.purge_table(&r, scope).unwrap();
        assert!(result.failed.is_empty(), "{result:?}");
        let exists = |p: &str| LocalFileIO.exists(p).unwrap();
        assert!(!exists(&own) && !exists(&list) && !exists(&state.metadata_location));
        let outside_files = [&near, &others, &outside, &escaping, &manifest];
        match scope {
            PurgeScope::TableLocation => {
                assert!(outside_files.iter().all(|p| exists(p)));
                let mut kept = result.kept_outside_location.clone();
                kept.sort();
                let mut expected: Vec<String> =
                    outside_files.iter().map(|p| p.to_string()).collect();
                expected.sort();
                assert_eq!(kept, expected);
                // own data file, manifest list, two metadata files
                assert_eq!(result.deleted_files, 4);
            }
            PurgeScope::Everywhere => {
                assert!(!outside_files.iter().any(|p| exists(p)));
                assert!(result.kept_outside_location.is_empty());
                assert_eq!(result.deleted_files, 9);
            }
        }
        // the other table is still readable
        assert!(cat.load_table(&ident("db.other")).is_ok());
    }
}

#[test]
fn a_multi_table_commit_is_unsupported_and_changes_nothing() {
    let f = Fixture::new("sql-multi-table");
    let cat = f.open("c");
    cat.create_namespace(&ns(&["db"]), &[]).unwrap();
    let a = create_table(&cat, "db.a");
    let b = create_table(&cat, "db.b");
    let commits = vec![
        TableCommit {
            ident: ident("db.a"),
            base: Some(a.clone()),
            metadata: with_property(&a, "k", "v"),
        },
        TableCommit {
            ident: ident("db.b"),
            base: Some(b.clone()),
            metadata: with_property(&b, "k", "v"),
        },
    ];
    let e = cat.commit_tables(commits).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    assert!(e.to_string().contains("db.a, db.b"), "{e}");
    assert_eq!(
        cat.load_table(&ident("db.a")).unwrap().metadata_location,
        a.metadata_location
    );
}
