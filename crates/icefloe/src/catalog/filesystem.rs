//! File-system tables ("File System Tables" in the spec) and a catalog of them.
//!
//! Hadoop-style tables name metadata `v<V>.metadata.json` and may keep the current version
//! in `metadata/version-hint.text`; metastore-style tables name them
//! `<V>-<uuid>.metadata.json`. Either may be gzip-compressed (`.gz.metadata.json`, or
//! Java's alternative `.metadata.json.gz`). Given a table directory we take the hint when
//! it names an existing file, else the highest version present.
//!
//! [`FileSystemCatalog`] lays out a warehouse as Java's `HadoopCatalog` does: namespaces
//! are directories, a table is a directory whose `metadata/` holds metadata files. A
//! commit writes the next version under a temporary name and moves it to `v<N+1>` only if
//! that name is free (a hard link, which fails when the target exists), then updates the
//! version hint. **This is only safe on a file system with an atomic no-replace
//! rename or link, i.e. local or HDFS-like file systems; never on object stores such as
//! S3**, where two writers can both "create" `v<N+1>` (the spec's "File System Tables"
//! section). Use the SQL catalog there.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::metadata_file::{delete_removed_metadata_files, drop_table_data};
use super::{Catalog, Namespace, PurgeResult, PurgeScope, TableIdent, TableState, ViewState};
use crate::error::{Error, Result};
use crate::io::{local_path, FileIO};
use crate::spec::table_metadata::TableMetadata;
use crate::spec::view_metadata::ViewMetadata;

/// The metadata version encoded in a metadata file name, if it follows either scheme.
pub fn metadata_version(file_name: &str) -> Option<u64> {
    let stem = file_name
        .strip_suffix(".gz.metadata.json")
        .or_else(|| file_name.strip_suffix(".metadata.json.gz"))
        .or_else(|| file_name.strip_suffix(".metadata.json"))?;
    if let Some(v) = stem.strip_prefix('v') {
        if let Ok(n) = v.parse::<u64>() {
            return Some(n);
        }
    }
    let (v, uuid) = stem.split_once('-')?;
    if uuid.is_empty() {
        return None;
    }
    v.parse::<u64>().ok()
}

fn join(dir: &str, name: &str) -> String {
    format!("{}/{}", dir.trim_end_matches('/'), name)
}

/// The location of the current metadata file of the table at `table_location`
/// (the table's base directory; its `metadata/` folder is searched).
pub fn latest_metadata_location(io: &dyn FileIO, table_location: &str) -> Result<String> {
    let metadata_dir = join(table_location, "metadata");
    let names = io.list(&metadata_dir).map_err(|e| match e {
        Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            Error::not_found(format!(
                "no table at {table_location}: it has no metadata folder ({metadata_dir})"
            ))
        }
        other => other,
    })?;

    let hint = join(&metadata_dir, "version-hint.text");
    if names.iter().any(|n| n == "version-hint.text") {
        let text = io.read(&hint)?;
        let text = String::from_utf8_lossy(&text);
        if let Ok(v) = text.trim().parse::<u64>() {
            // the hint may lag behind or point at a compressed file
            let hinted = names
                .iter()
                .filter(|n| metadata_version(n) == Some(v) && n.starts_with('v'))
                .max();
            let newer = names
                .iter()
                .filter(|n| metadata_version(n).is_some_and(|m| m > v))
                .count();
            if let (Some(name), 0) = (hinted, newer) {
                return Ok(join(&metadata_dir, name));
            }
        }
    }

    names
        .iter()
        .filter_map(|n| metadata_version(n).map(|v| (v, n)))
        .max()
        .map(|(_, n)| join(&metadata_dir, n))
        .ok_or_else(|| {
            Error::not_found(format!(
                "no metadata file (v<N>.metadata.json or <N>-<uuid>.metadata.json) in {metadata_dir}"
            ))
        })
}

/// The metadata file meant by `path`: `path` itself when it names a JSON file (plain or
/// gzip), else the current metadata file of the table (or view) directory at `path`.
pub fn resolve_metadata_location(io: &dyn FileIO, path: &str) -> Result<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name.ends_with(".json") || name.ends_with(".json.gz") {
        Ok(path.to_string())
    } else {
        latest_metadata_location(io, path)
    }
}

const VERSION_HINT: &str = "version-hint.text";

/// A catalog of file-system tables under a warehouse folder, as Java's `HadoopCatalog`.
/// Local file systems only (see the module docs for why not object stores). Namespace
/// properties, renames, registration and views are not supported, as in Java.
pub struct FileSystemCatalog {
    name: String,
    warehouse: String,
    io: Arc<dyn FileIO>,
}

impl std::fmt::Debug for FileSystemCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileSystemCatalog")
            .field("name", &self.name)
            .field("warehouse", &self.warehouse)
            .finish()
    }
}

/// Namespaces are folders: every level must be a safe folder name (the catalogs' one rule).
fn check_namespace(namespace: &[String]) -> Result<()> {
    super::check_location_namespace(namespace)
}

fn is_dir(path: &Path) -> bool {
    path.is_dir()
}

/// Java's `isTableDir`: a directory whose `metadata/` holds a `*.metadata.json` file.
fn is_table_dir(path: &Path) -> bool {
    std::fs::read_dir(path.join("metadata")).is_ok_and(|rd| {
        rd.flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".metadata.json"))
    })
}

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::io(path.display().to_string(), e)
}

impl FileSystemCatalog {
    /// A catalog of the tables under `warehouse` (a local path or `file:` URI).
    pub fn new(name: &str, warehouse: &str, io: Arc<dyn FileIO>) -> FileSystemCatalog {
        FileSystemCatalog {
            name: name.to_string(),
            warehouse: warehouse.trim_end_matches('/').to_string(),
            io,
        }
    }

    fn location(&self, levels: &[String]) -> String {
        let mut loc = self.warehouse.clone();
        for l in levels {
            loc.push('/');
            loc.push_str(l);
        }
        loc
    }

    fn path(&self, levels: &[String]) -> PathBuf {
        PathBuf::from(local_path(&self.location(levels)))
    }

    fn table_path(&self, ident: &TableIdent) -> Result<PathBuf> {
        super::check_location_ident(ident)?;
        let mut levels = ident.namespace.clone();
        levels.push(ident.name.clone());
        Ok(self.path(&levels))
    }

    fn require_namespace(&self, namespace: &[String]) -> Result<PathBuf> {
        check_namespace(namespace)?;
        let path = self.path(namespace);
        if is_dir(&path) && !is_table_dir(&path) {
            Ok(path)
        } else {
            Err(Error::NoSuchNamespace {
                namespace: namespace.join("."),
            })
        }
    }

    fn subdirs(&self, path: &Path) -> Result<Vec<(String, PathBuf)>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(path).map_err(|e| io_err(path, e))? {
            let entry = entry.map_err(|e| io_err(path, e))?;
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                out.push((
                    entry.file_name().to_string_lossy().into_owned(),
                    entry.path(),
                ));
            }
        }
        out.sort();
        Ok(out)
    }

    fn unsupported(&self, what: &str) -> Error {
        Error::unsupported(format!(
            "{what} is not supported by the file-system catalog '{}'",
            self.name
        ))
    }
}

/// Moves the file at `temp` to `target` only if `target` does not exist: a hard link
/// fails with `AlreadyExists` instead of replacing, unlike `rename`.
fn move_no_replace(temp: &Path, target: &Path) -> std::io::Result<()> {
    std::fs::hard_link(temp, target)?;
    // the commit has happened; the temporary name is only clutter now
    let _ = std::fs::remove_file(temp);
    Ok(())
}

/// Best effort, as Java: readers fall back to listing when the hint is missing or stale.
fn write_version_hint(metadata_dir: &Path, version: u64) {
    let temp = metadata_dir.join(format!("{}-version-hint.temp", uuid::Uuid::new_v4()));
    if std::fs::write(&temp, version.to_string()).is_ok()
        && std::fs::rename(&temp, metadata_dir.join(VERSION_HINT)).is_err()
    {
        let _ = std::fs::remove_file(&temp);
    }
}

impl Catalog for FileSystemCatalog {
    fn name(&self) -> &str {
        &self.name
    }

    fn io(&self) -> Arc<dyn FileIO> {
        Arc::clone(&self.io)
    }

    fn default_table_location(&self, ident: &TableIdent) -> Result<String> {
        self.table_path(ident)?;
        let mut levels = ident.namespace.clone();
        levels.push(ident.name.clone());
        Ok(self.location(&levels))
    }

    fn create_namespace(
        &self,
        namespace: &[String],
        properties: &[(String, String)],
    ) -> Result<()> {
        check_namespace(namespace)?;
        if !properties.is_empty() {
            return Err(self.unsupported("namespace properties"));
        }
        let path = self.path(namespace);
        if is_dir(&path) {
            return Err(Error::already_exists(format!(
                "Namespace already exists: {}",
                namespace.join(".")
            )));
        }
        std::fs::create_dir_all(&path).map_err(|e| io_err(&path, e))
    }

    fn list_namespaces(&self, parent: &[String]) -> Result<Vec<Namespace>> {
        let path = if parent.is_empty() {
            self.path(&[])
        } else {
            self.require_namespace(parent)?
        };
        Ok(self
            .subdirs(&path)?
            .into_iter()
            .filter(|(_, p)| !is_table_dir(p))
            .map(|(name, _)| {
                let mut ns = parent.to_vec();
                ns.push(name);
                ns
            })
            .collect())
    }

    fn namespace_exists(&self, namespace: &[String]) -> Result<bool> {
        match self.require_namespace(namespace) {
            Ok(_) => Ok(true),
            Err(Error::NoSuchNamespace { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Only `location`, as Java's `HadoopCatalog.loadNamespaceMetadata`.
    fn namespace_properties(&self, namespace: &[String]) -> Result<Vec<(String, String)>> {
        self.require_namespace(namespace)?;
        Ok(vec![("location".to_string(), self.location(namespace))])
    }

    fn update_namespace_properties(
        &self,
        namespace: &[String],
        _removals: &[String],
        _updates: &[(String, String)],
    ) -> Result<()> {
        self.require_namespace(namespace)?;
        Err(self.unsupported("namespace properties"))
    }

    fn drop_namespace(&self, namespace: &[String]) -> Result<()> {
        let path = self.require_namespace(namespace)?;
        let mut entries = std::fs::read_dir(&path).map_err(|e| io_err(&path, e))?;
        if entries.next().is_some() {
            return Err(Error::NamespaceNotEmpty {
                namespace: namespace.join("."),
            });
        }
        std::fs::remove_dir(&path).map_err(|e| io_err(&path, e))
    }

    fn list_tables(&self, namespace: &[String]) -> Result<Vec<TableIdent>> {
        let path = self.require_namespace(namespace)?;
        Ok(self
            .subdirs(&path)?
            .into_iter()
            .filter(|(_, p)| is_table_dir(p))
            .map(|(name, _)| TableIdent::new(namespace.to_vec(), name))
            .collect())
    }

    fn table_exists(&self, ident: &TableIdent) -> Result<bool> {
        Ok(is_table_dir(&self.table_path(ident)?))
    }

    fn load_table(&self, ident: &TableIdent) -> Result<TableState> {
        if !self.table_exists(ident)? {
            return Err(Error::NoSuchTable {
                table: ident.to_string(),
            });
        }
        let location = latest_metadata_location(&*self.io, &self.default_table_location(ident)?)?;
        let metadata = TableMetadata::read(&*self.io, &location)?;
        Ok(TableState {
            metadata_location: location,
            metadata: Arc::new(metadata),
        })
    }

    fn register_table(&self, _ident: &TableIdent, _metadata_location: &str) -> Result<TableState> {
        Err(self.unsupported("registering a table"))
    }

    fn rename_table(&self, _from: &TableIdent, _to: &TableIdent) -> Result<()> {
        Err(self.unsupported("renaming a table"))
    }

    /// Deletes the table's directory, as Java's `HadoopCatalog` (the directory *is* the
    /// catalog entry).
    fn drop_table(&self, ident: &TableIdent) -> Result<()> {
        self.load_table(ident)?;
        let path = self.table_path(ident)?;
        std::fs::remove_dir_all(&path).map_err(|e| io_err(&path, e))
    }

    /// First the files the metadata reaches that `scope` allows (with
    /// [`PurgeScope::Everywhere`], also those outside the directory), then the directory.
    fn purge_table(&self, ident: &TableIdent, scope: PurgeScope) -> Result<PurgeResult> {
        let state = self.load_table(ident)?;
        let result = drop_table_data(&*self.io, &state.metadata, &state.metadata_location, scope);
        let path = self.table_path(ident)?;
        std::fs::remove_dir_all(&path).map_err(|e| io_err(&path, e))?;
        Ok(result)
    }

    fn commit_table(
        &self,
        ident: &TableIdent,
        base: Option<&TableState>,
        metadata: TableMetadata,
    ) -> Result<TableState> {
        // the same folder whether written as a path or as a file: URI (Java writes `file:/…`)
        let same_place = |a: &str, b: &str| {
            local_path(a).trim_end_matches('/') == local_path(b).trim_end_matches('/')
        };
        let table_location = self.default_table_location(ident)?;
        if !same_place(&metadata.location, &table_location)
            || base.is_some_and(|b| !same_place(&b.metadata.location, &metadata.location))
        {
            return Err(Error::invalid_argument(format!(
                "file-system tables cannot be relocated: {ident} lives at {table_location}, \
                 not {}",
                metadata.location
            )));
        }
        if metadata
            .property(super::metadata_file::WRITE_METADATA_PATH)
            .is_some()
        {
            return Err(Error::invalid_argument(
                "file-system tables cannot relocate their metadata (write.metadata.path)",
            ));
        }
        let version = match base {
            None => {
                if self.table_exists(ident)? {
                    return Err(Error::already_exists(format!(
                        "Table already exists: {ident}"
                    )));
                }
                1
            }
            Some(b) => {
                let name = b.metadata_location.rsplit('/').next().unwrap_or_default();
                match metadata_version(name).filter(|_| name.starts_with('v')) {
                    Some(v) => v + 1,
                    None => {
                        return Err(Error::invalid_argument(format!(
                            "{} is not a file-system table's metadata file (v<N>.metadata.json)",
                            b.metadata_location
                        )))
                    }
                }
            }
        };
        let compress = match metadata.property(super::metadata_file::METADATA_COMPRESSION) {
            Some(c) if c.eq_ignore_ascii_case("gzip") => true,
            None => false,
            Some(c) if c.eq_ignore_ascii_case("none") => false,
            Some(c) => {
                return Err(Error::invalid_argument(format!(
                    "invalid write.metadata.compression-codec '{c}'"
                )))
            }
        };
        let ext = if compress {
            ".gz.metadata.json"
        } else {
            ".metadata.json"
        };
        let metadata_dir = format!("{}/metadata", metadata.location.trim_end_matches('/'));
        // not `<uuid>.metadata.json` as Java names it: a uuid that starts with digits reads
        // as a `<V>-<uuid>` name to a reader that lists the folder meanwhile
        let temp = format!("{metadata_dir}/temp-{}{ext}", uuid::Uuid::new_v4());
        let target = format!("{metadata_dir}/v{version}{ext}");
        metadata.write(&*self.io, &temp, compress)?;
        let (temp_path, target_path) =
            (Path::new(local_path(&temp)), Path::new(local_path(&target)));
        if let Err(e) = move_no_replace(temp_path, target_path) {
            let _ = std::fs::remove_file(temp_path);
            return Err(if e.kind() == std::io::ErrorKind::AlreadyExists {
                match base {
                    None => Error::already_exists(format!("Table already exists: {ident}")),
                    Some(_) => Error::commit_failed(format!(
                        "version {version} of {ident} already exists: {target}"
                    )),
                }
            } else {
                io_err(target_path, e)
            });
        }
        write_version_hint(Path::new(local_path(&metadata_dir)), version);
        if let Some(base) = base {
            delete_removed_metadata_files(&*self.io, &base.metadata, &metadata);
        }
        Ok(TableState {
            metadata_location: target,
            metadata: Arc::new(metadata),
        })
    }

    fn list_views(&self, _namespace: &[String]) -> Result<Vec<TableIdent>> {
        Err(self.unsupported("views"))
    }

    fn view_exists(&self, _ident: &TableIdent) -> Result<bool> {
        Err(self.unsupported("views"))
    }

    fn load_view(&self, _ident: &TableIdent) -> Result<ViewState> {
        Err(self.unsupported("views"))
    }

    fn rename_view(&self, _from: &TableIdent, _to: &TableIdent) -> Result<()> {
        Err(self.unsupported("views"))
    }

    fn drop_view(&self, _ident: &TableIdent) -> Result<()> {
        Err(self.unsupported("views"))
    }

    fn commit_view(
        &self,
        _ident: &TableIdent,
        _base: Option<&ViewState>,
        _metadata: ViewMetadata,
    ) -> Result<ViewState> {
        Err(self.unsupported("views"))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::io::LocalFileIO;

    #[test]
    fn versions_from_names() {
        assert_eq!(metadata_version("v12.metadata.json"), Some(12));
        assert_eq!(metadata_version("v3.gz.metadata.json"), Some(3));
        assert_eq!(
            metadata_version("00007-1b2c3d4e-aaaa.metadata.json"),
            Some(7)
        );
        assert_eq!(metadata_version("00007-1b2c.metadata.json.gz"), Some(7));
        assert_eq!(metadata_version("snap-1-1-abc.avro"), None);
        assert_eq!(metadata_version("version-hint.text"), None);
        assert_eq!(metadata_version("x-y.metadata.json"), None);
    }

    #[test]
    fn picks_hint_or_highest() {
        let dir = std::env::temp_dir().join(format!("icefloe-fs-{}", std::process::id()));
        let md = dir.join("metadata");
        std::fs::create_dir_all(&md).unwrap();
        let loc = dir.to_str().unwrap();
        assert!(matches!(
            latest_metadata_location(&LocalFileIO, loc),
            Err(Error::NotFound { .. })
        ));
        for n in ["v1.metadata.json", "v2.metadata.json", "v10.metadata.json"] {
            std::fs::write(md.join(n), "{}").unwrap();
        }
        // highest by number, not by string order
        assert!(latest_metadata_location(&LocalFileIO, loc)
            .unwrap()
            .ends_with("/v10.metadata.json"));
        std::fs::write(md.join("version-hint.text"), "2\n").unwrap();
        // a hint older than files present is not trusted
        assert!(latest_metadata_location(&LocalFileIO, loc)
            .unwrap()
            .ends_with("/v10.metadata.json"));
        std::fs::remove_file(md.join("v10.metadata.json")).unwrap();
        assert!(latest_metadata_location(&LocalFileIO, loc)
            .unwrap()
            .ends_with("/v2.metadata.json"));
        assert!(resolve_metadata_location(&LocalFileIO, loc)
            .unwrap()
            .ends_with("/v2.metadata.json"));
        assert_eq!(
            resolve_metadata_location(&LocalFileIO, "/x/v9.metadata.json").unwrap(),
            "/x/v9.metadata.json"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    mod catalog {
        use super::super::*;
        use crate::catalog::testing::{scratch_dir, table_metadata};
        use crate::io::LocalFileIO;
        use crate::spec::snapshot::MetadataLogEntry;

        fn ns(levels: &[&str]) -> Namespace {
            levels.iter().map(|s| s.to_string()).collect()
        }

        fn next(state: &TableState, key: &str) -> TableMetadata {
            let mut md = (*state.metadata).clone();
            md.properties.push((key.to_string(), "1".to_string()));
            md.metadata_log.push(MetadataLogEntry {
                timestamp_ms: 1,
                metadata_file: state.metadata_location.clone(),
            });
            md
        }

        fn names(dir: &Path) -> Vec<String> {
            let mut v: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        }

        #[test]
        fn lifecycle_as_hadoop_catalog() {
            let dir = scratch_dir("fs-cat");
            let wh = format!("file://{}", dir.display());
            let cat = FileSystemCatalog::new("fs", &wh, Arc::new(LocalFileIO));
            cat.create_namespace(&ns(&["db"]), &[]).unwrap();
            cat.create_namespace(&ns(&["db", "inner"]), &[]).unwrap();
            assert!(matches!(
                cat.create_namespace(&ns(&["db"]), &[]),
                Err(Error::AlreadyExists { .. })
            ));
            assert!(matches!(
                cat.create_namespace(&ns(&["p"]), &[("k".into(), "v".into())]),
                Err(Error::Unsupported { .. })
            ));
            let t = TableIdent::parse("db.t").unwrap();
            let location = cat.default_table_location(&t).unwrap();
            assert_eq!(location, format!("{wh}/db/t"));
            // a table elsewhere is refused
            assert!(cat
                .commit_table(&t, None, table_metadata("/elsewhere", &[]))
                .is_err());
            let v1 = cat
                .commit_table(&t, None, table_metadata(&location, &[]))
                .unwrap();
            assert_eq!(
                v1.metadata_location,
                format!("{location}/metadata/v1.metadata.json")
            );
            let meta = dir.join("db/t/metadata");
            assert_eq!(
                std::fs::read_to_string(meta.join("version-hint.text")).unwrap(),
                "1"
            );
            assert!(matches!(
                cat.commit_table(&t, None, table_metadata(&location, &[])),
                Err(Error::AlreadyExists { .. })
            ));
            // the table is listed as a table, not as a namespace
            assert_eq!(cat.list_tables(&ns(&["db"])).unwrap(), vec![t.clone()]);
            assert_eq!(
                cat.list_namespaces(&ns(&["db"])).unwrap(),
                vec![ns(&["db", "inner"])]
            );
            assert_eq!(cat.list_namespaces(&[]).unwrap(), vec![ns(&["db"])]);
            assert!(!cat.namespace_exists(&ns(&["db", "t"])).unwrap());

            let v2 = cat.commit_table(&t, Some(&v1), next(&v1, "a")).unwrap();
            assert!(v2.metadata_location.ends_with("/v2.metadata.json"));
            let stale = cat.commit_table(&t, Some(&v1), next(&v1, "b"));
            assert!(
                matches!(stale, Err(Error::CommitFailed { .. })),
                "{stale:?}"
            );
            // no temporary files are left, and the hint names the winner
            assert_eq!(
                names(&meta),
                vec!["v1.metadata.json", "v2.metadata.json", "version-hint.text"]
            );
            let loaded = cat.load_table(&t).unwrap();
            assert_eq!(loaded.metadata_location, v2.metadata_location);
            assert_eq!(loaded.metadata.property("a"), Some("1"));

            assert!(matches!(
                cat.list_views(&ns(&["db"])),
                Err(Error::Unsupported { .. })
            ));
            assert!(matches!(
                cat.rename_table(&t, &TableIdent::parse("db.u").unwrap()),
                Err(Error::Unsupported { .. })
            ));
            assert!(matches!(
                cat.drop_namespace(&ns(&["db"])),
                Err(Error::NamespaceNotEmpty { .. })
            ));
            cat.drop_table(&t).unwrap();
            assert!(!dir.join("db/t").exists());
            assert!(matches!(cat.load_table(&t), Err(Error::NoSuchTable { .. })));
            cat.drop_namespace(&ns(&["db", "inner"])).unwrap();
            cat.drop_namespace(&ns(&["db"])).unwrap();
            assert!(matches!(
                cat.drop_namespace(&ns(&["db"])),
                Err(Error::NoSuchNamespace { .. })
            ));
            std::fs::remove_dir_all(dir).unwrap();
        }

        #[test]
        fn concurrent_commits_each_win_one_version() {
            let dir = scratch_dir("fs-race");
            let wh = dir.display().to_string();
            let cat = FileSystemCatalog::new("fs", &wh, Arc::new(LocalFileIO));
            cat.create_namespace(&ns(&["db"]), &[]).unwrap();
            let t = TableIdent::parse("db.t").unwrap();
            let location = cat.default_table_location(&t).unwrap();
            cat.commit_table(&t, None, table_metadata(&location, &[]))
                .unwrap();
            const THREADS: usize = 4;
            const COMMITS: usize = 6;
            std::thread::scope(|s| {
                for w in 0..THREADS {
                    let (cat, t) = (&cat, &t);
                    s.spawn(move || {
                        for i in 0..COMMITS {
                            loop {
                                let base = cat.load_table(t).unwrap();
                                match cat.commit_table(
                                    t,
                                    Some(&base),
                                    next(&base, &format!("{w}-{i}")),
                                ) {
                                    Ok(_) => break,
                                    Err(Error::CommitFailed { .. }) => {}
                                    Err(e) => panic!("{e}"),
                                }
                            }
                        }
                    });
                }
            });
            let state = cat.load_table(&t).unwrap();
            assert!(state
                .metadata_location
                .ends_with(&format!("/v{}.metadata.json", THREADS * COMMITS + 1)));
            for w in 0..THREADS {
                for i in 0..COMMITS {
                    assert_eq!(state.metadata.property(&format!("{w}-{i}")), Some("1"));
                }
            }
            std::fs::remove_dir_all(dir).unwrap();
        }
    }
}
