//! How the core reads and writes bytes. The library never touches the file system
//! directly: it goes through a [`FileIO`], so object stores can be added behind it.

use std::io::Read;

use crate::error::{Error, Result};

/// Reads and writes whole files by location.
pub trait FileIO: Send + Sync {
    /// Reads the whole file.
    fn read(&self, location: &str) -> Result<Vec<u8>>;
    /// Writes a new file; fails if it exists (Iceberg files are never overwritten).
    fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()>;
    fn exists(&self, location: &str) -> Result<bool>;
    /// Lists the names of the entries of a directory-like location.
    fn list(&self, location: &str) -> Result<Vec<String>>;
}

/// The local file system. Accepts plain paths and `file:` URIs.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalFileIO;

/// Strips a `file:` scheme (`file:///a/b`, `file:/a/b`) to a local path.
pub fn local_path(location: &str) -> &str {
    if let Some(rest) = location.strip_prefix("file://") {
        rest
    } else if let Some(rest) = location.strip_prefix("file:") {
        rest
    } else {
        location
    }
}

impl FileIO for LocalFileIO {
    fn read(&self, location: &str) -> Result<Vec<u8>> {
        let path = local_path(location);
        let mut f = std::fs::File::open(path).map_err(|e| Error::io(location, e))?;
        let mut buf = Vec::new();
        f.read_to_end(&mut buf)
            .map_err(|e| Error::io(location, e))?;
        Ok(buf)
    }

    fn write_new(&self, location: &str, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        let path = local_path(location);
        if let Some(parent) = std::path::Path::new(path).parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(location, e))?;
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| Error::io(location, e))?;
        f.write_all(bytes).map_err(|e| Error::io(location, e))?;
        f.sync_all().map_err(|e| Error::io(location, e))
    }

    fn exists(&self, location: &str) -> Result<bool> {
        Ok(std::path::Path::new(local_path(location)).exists())
    }

    fn list(&self, location: &str) -> Result<Vec<String>> {
        let rd = std::fs::read_dir(local_path(location)).map_err(|e| Error::io(location, e))?;
        let mut names = Vec::new();
        for entry in rd {
            let entry = entry.map_err(|e| Error::io(location, e))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn write_new_refuses_to_overwrite() {
        let dir = std::env::temp_dir().join(format!("icefloe-io-{}", std::process::id()));
        let p = dir.join("a/b.json");
        let loc = format!("file://{}", p.display());
        LocalFileIO.write_new(&loc, b"x").unwrap();
        assert_eq!(LocalFileIO.read(&loc).unwrap(), b"x");
        assert!(LocalFileIO.write_new(&loc, b"y").is_err());
        assert!(LocalFileIO.exists(p.to_str().unwrap()).unwrap());
        assert_eq!(
            LocalFileIO.list(dir.join("a").to_str().unwrap()).unwrap(),
            vec!["b.json"]
        );
        let e = LocalFileIO.read("/no/such/file").unwrap_err();
        assert!(e.to_string().contains("/no/such/file"));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
