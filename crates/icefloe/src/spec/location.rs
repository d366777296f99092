//! Paths in v4 metadata (upstream's `format/spec.md`, "Paths in Metadata", PR #15630):
//! from format version 4 every path a table's metadata stores is either absolute, which
//! means it starts with a URI scheme, or relative to the table location. Readers resolve
//! a relative path by joining the table location, `/` and the path as they are; writers
//! store the files under the table location relative to it, so a table can be moved or
//! copied by changing its location.
//!
//! Before v4 every path is stored and read as it is.

use std::borrow::Cow;

use crate::error::{Error, Result};

/// Whether `path` starts with a URI scheme (RFC 3986 3.1: a letter, then letters, digits,
/// `+`, `-` or `.`, then `:`), which makes it an absolute path in the v4 spec's sense.
pub fn has_uri_scheme(path: &str) -> bool {
    let Some((scheme, _)) = path.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// `path` as a v4 table at `table_location` stores it, made absolute: a path with a URI
/// scheme is used as it is; any other (even one starting with `/`) is the location, `/`
/// and the path, joined without looking at separators (`s3://b/t/` and `/d/x` give
/// `s3://b/t///d/x`, as the spec's examples say). A relative path in a table without a
/// location is an error naming `location`.
pub fn resolve_location<'p>(table_location: &str, path: &'p str) -> Result<Cow<'p, str>> {
    if has_uri_scheme(path) {
        return Ok(Cow::Borrowed(path));
    }
    if table_location.is_empty() {
        return Err(Error::invalid_metadata(
            "location",
            format!("the path '{path}' is relative, but the table has no location"),
        ));
    }
    Ok(Cow::Owned(format!("{table_location}/{path}")))
}

/// Sets `out` to the stored path `stored` as [`resolve_location`] resolves it against
/// `table_location` (`None`: kept as it is), in one allocation at most: a decoder's slot,
/// reused from entry to entry, allocates only while it grows.
pub fn set_resolved(out: &mut String, table_location: Option<&str>, stored: &str) -> Result<()> {
    out.clear();
    match table_location {
        Some(table) if !has_uri_scheme(stored) => {
            if table.is_empty() {
                return resolve_location(table, stored).map(|_| ());
            }
            out.reserve(table.len() + 1 + stored.len());
            out.push_str(table);
            out.push('/');
        }
        _ => {}
    }
    out.push_str(stored);
    Ok(())
}

/// [`resolve_location`] on a `String` in place, the location inserted before a relative
/// path (the metadata file's paths at parse; decoders use [`set_resolved`]).
pub fn resolve_location_in_place(table_location: &str, path: &mut String) -> Result<()> {
    if has_uri_scheme(path) {
        return Ok(());
    }
    if table_location.is_empty() {
        return resolve_location("", path).map(|_| ());
    }
    path.insert(0, '/');
    path.insert_str(0, table_location);
    Ok(())
}

/// How a v4 table at `table_location` stores the absolute `path`, so that
/// [`resolve_location`] gives `path` back:
/// - under the location (the location, `/` and more), the rest, relative;
/// - with a URI scheme elsewhere, as it is;
/// - a scheme-less absolute path elsewhere (`/data/x`, a local file to icefloe, whose
///   file IO reads scheme-less paths from the local disk) is qualified as `file:///data/x`,
///   since the spec reads a scheme-less path as relative; read back, it keeps the scheme.
///
/// A scheme-less path that does not start with `/` and is not under the location has no
/// v4 form: an `InvalidMetadata` error on the field `location`, naming the path.
pub fn stored_location<'p>(table_location: &str, path: &'p str) -> Result<Cow<'p, str>> {
    if let Some(rest) = under_location(table_location, path) {
        return Ok(Cow::Borrowed(rest));
    }
    if has_uri_scheme(path) {
        return Ok(Cow::Borrowed(path));
    }
    if path.starts_with('/') {
        return Ok(Cow::Owned(format!("file://{path}")));
    }
    Err(Error::invalid_metadata(
        "location",
        format!(
            "the path '{path}' has no URI scheme, does not start with '/' and is not under \
             the table location '{table_location}': a format-version 4 table stores a path \
             either relative to its location or absolute with a scheme (e.g. 'file:///...')"
        ),
    ))
}

/// The part of `path` after the table location and `/`, when that part does not itself
/// read as absolute (`x:y` under the location stays whole).
fn under_location<'p>(table_location: &str, path: &'p str) -> Option<&'p str> {
    if table_location.is_empty() {
        return None;
    }
    let rest = path.strip_prefix(table_location)?.strip_prefix('/')?;
    (!rest.is_empty() && !has_uri_scheme(rest)).then_some(rest)
}

/// Whether [`stored_location`] stores `path` qualified (`file://`), so that it reads back
/// under another name than it had: a scheme-less absolute path outside the location.
pub fn gets_qualified(table_location: &str, path: &str) -> bool {
    path.starts_with('/') && under_location(table_location, path).is_none()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_specs_examples_resolve() {
        let examples = [
            // (table location, file path, resolved path)
            (
                "s3://bucket/db/table",
                "data/00000-0.parquet",
                "s3://bucket/db/table/data/00000-0.parquet",
            ),
            (
                "s3://bucket/db/table",
                "hdfs://wh/db/table/data/00000-0.parquet",
                "hdfs://wh/db/table/data/00000-0.parquet",
            ),
            (
                "s3://bucket/db/table/",
                "data/00000-0.parquet",
                "s3://bucket/db/table//data/00000-0.parquet",
            ),
            (
                "s3://bucket/db/table",
                "/data/00000-0.parquet",
                "s3://bucket/db/table//data/00000-0.parquet",
            ),
        ];
        for (location, path, resolved) in examples {
            assert_eq!(
                resolve_location(location, path).unwrap(),
                resolved,
                "{path}"
            );
            let mut s = path.to_string();
            resolve_location_in_place(location, &mut s).unwrap();
            assert_eq!(s, resolved);
            let mut slot = "what the slot held before".to_string();
            set_resolved(&mut slot, Some(location), path).unwrap();
            assert_eq!(slot, resolved);
            set_resolved(&mut slot, None, path).unwrap();
            assert_eq!(slot, path);
        }
        // a scheme is absolute whatever follows its colon
        for absolute in ["file:/tmp/y", "file:///tmp/y", "s3a://b/k", "x-1.y+z:k"] {
            assert!(has_uri_scheme(absolute), "{absolute}");
            assert_eq!(resolve_location("s3://b/t", absolute).unwrap(), absolute);
        }
        for relative in ["data/x", "/tmp/y", "1s3://b/k", ":x", "da_ta:x", ""] {
            assert!(!has_uri_scheme(relative), "{relative}");
        }
        let e = resolve_location("", "data/x.parquet").unwrap_err();
        assert_eq!(e.location().unwrap().field, "location");
        let e = set_resolved(&mut String::new(), Some(""), "data/x.parquet").unwrap_err();
        assert_eq!(e.location().unwrap().field, "location");
    }

    #[test]
    fn stored_paths_resolve_to_what_was_stored() {
        let cases = [
            // (table location, absolute path, stored)
            ("s3://b/t", "s3://b/t/data/x.parquet", "data/x.parquet"),
            ("s3://b/t", "s3://b/t/metadata/r.avro", "metadata/r.avro"),
            // a sibling whose name extends the location's is not under it
            (
                "s3://b/t",
                "s3://b/t2/data/x.parquet",
                "s3://b/t2/data/x.parquet",
            ),
            ("s3://b/t", "gs://o/x.parquet", "gs://o/x.parquet"),
            // a location ending in `/` matches nothing (the join would add a second one)
            ("s3://b/t/", "s3://b/t/data/x", "s3://b/t/data/x"),
            ("s3://b/t", "s3://b/t//x", "/x"),
            // local tables: scheme-less locations and paths
            ("/w/t", "/w/t/data/x.parquet", "data/x.parquet"),
            ("/w/t", "/other/x.parquet", "file:///other/x.parquet"),
            ("file:/w/t", "file:/w/t/data/x", "data/x"),
            ("rel/t", "rel/t/data/x", "data/x"),
            // a rest that reads as absolute is kept whole
            ("s3://b/t", "s3://b/t/a:b", "s3://b/t/a:b"),
            // without a location nothing is relative
            ("", "s3://b/t/x", "s3://b/t/x"),
            ("", "/w/x", "file:///w/x"),
        ];
        for (location, path, stored) in cases {
            let s = stored_location(location, path).unwrap();
            assert_eq!(s, stored, "{location} {path}");
            assert_eq!(
                gets_qualified(location, path),
                s.starts_with("file://") && !path.starts_with("file:"),
                "{location} {path}"
            );
            let back = resolve_location(location, &s).unwrap();
            // only a qualified local path comes back other than it went in
            let expect = if s.starts_with("file://") && !path.starts_with("file:") {
                format!("file://{path}")
            } else {
                path.to_string()
            };
            assert_eq!(back, expect, "{location} {path}");
        }
        let e = stored_location("/w/t", "elsewhere/x.parquet").unwrap_err();
        assert!(e.to_string().contains("'elsewhere/x.parquet'"), "{e}");
    }
}
