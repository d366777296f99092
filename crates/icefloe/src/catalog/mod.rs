//! Catalogs: where a table's current metadata file is found. For now only the reading
//! half of file-system tables ("File System Tables" in the spec).

pub mod filesystem;
