//! Helpers shared by the catalog tests: small metadata to commit, scratch folders and
//! property lists.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::spec::table_metadata::TableMetadata;
use crate::spec::view_metadata::ViewMetadata;

/// A v2 table with one column, no snapshots and the given properties.
pub(crate) fn table_metadata(location: &str, props: &[(&str, &str)]) -> TableMetadata {
    let text = format!(
        r#"{{"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
          "location": "{location}", "last-sequence-number": 0, "last-updated-ms": 1,
          "last-column-id": 1, "current-schema-id": 0,
          "schemas": [{{"type": "struct", "schema-id": 0, "fields": [
              {{"id": 1, "name": "id", "required": true, "type": "long"}}]}}],
          "default-spec-id": 0, "partition-specs": [{{"spec-id": 0, "fields": []}}],
          "last-partition-id": 999, "default-sort-order-id": 0,
          "sort-orders": [{{"order-id": 0, "fields": []}}], "properties": {{}}}}"#
    );
    let mut md = TableMetadata::from_json_str(&text).unwrap();
    md.properties = props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    md
}

/// The spec's example view, moved to `location`.
pub(crate) fn view_metadata(location: &str) -> ViewMetadata {
    let text = include_str!("../../tests/fixtures/view/spec-example-create.json");
    let mut md = ViewMetadata::from_json_str(text).unwrap();
    md.location = location.to_string();
    md
}

/// A fresh, empty folder under the system temp folder.
pub(crate) fn scratch_dir(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "icefloe-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Catalog properties as the catalogs take them.
pub(crate) fn props(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
