//! Small helpers to read the spec's JSON objects field by field with typed errors.
//!
//! Parsers in `spec/` read a `serde_json::Value` through [`Obj`], which knows its own
//! JSON path, so that every error names the exact field (`snapshots[3].summary`). A
//! JSON `null` counts as absent, as Java's parser treats it.

use std::borrow::Cow;
use std::io::Write;

use serde_json::{Map, Value};

use crate::error::{Error, Location, Result};

/// Parses JSON text, mapping syntax errors to [`Error::InvalidJson`] with line and column.
pub fn parse_text(text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| Error::InvalidJson {
        at: Location::default(),
        message: e.to_string(),
    })
}

/// Whether a metadata file name says the file is gzip-compressed: `*.gz.metadata.json`,
/// or Java's older alternative `*.metadata.json.gz` (Appendix F).
pub fn is_gzip_file_name(location: &str) -> bool {
    location.ends_with(".gz.metadata.json") || location.ends_with(".metadata.json.gz")
}

/// The text of a metadata file (table or view): gunzipped when it starts with the gzip
/// magic, whatever its name, then checked to be UTF-8. Gzip may decompress to at most the
/// ceiling of [`crate::limits`].
pub fn metadata_file_text(bytes: &[u8]) -> Result<Cow<'_, str>> {
    let ceiling = if is_gzip(bytes) {
        crate::limits::max_decompressed_usize()?
    } else {
        usize::MAX
    };
    metadata_file_text_within(bytes, ceiling)
}

fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// [`metadata_file_text`] with the ceiling given. Inflating streams and stops as soon as
/// the text passes the ceiling, whatever the gzip trailer claims.
pub(crate) fn metadata_file_text_within(bytes: &[u8], ceiling: usize) -> Result<Cow<'_, str>> {
    let invalid = |message: String| Error::InvalidJson {
        at: Location::default(),
        message,
    };
    if is_gzip(bytes) {
        let text = crate::limits::read_at_most(flate2::read::MultiGzDecoder::new(bytes), ceiling)
            .map_err(|e| invalid(format!("cannot decompress gzip: {e}")))?
            .ok_or_else(|| {
                Error::decompression_limit(
                    "",
                    format!(
                        "the gzip metadata of {} bytes decompresses to more than the limit: {}",
                        bytes.len(),
                        crate::limits::ceiling_note(ceiling as u64)
                    ),
                )
            })?;
        String::from_utf8(text)
            .map(Cow::Owned)
            .map_err(|e| invalid(format!("not UTF-8: {e}")))
    } else {
        std::str::from_utf8(bytes)
            .map(Cow::Borrowed)
            .map_err(|e| invalid(format!("not UTF-8: {e}")))
    }
}

/// The bytes to write for a metadata file: `text`, gzip-compressed when `compress`.
pub fn metadata_file_bytes(text: String, compress: bool) -> std::io::Result<Vec<u8>> {
    if !compress {
        return Ok(text.into_bytes());
    }
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(text.as_bytes())?;
    enc.finish()
}

/// Appends a key to a JSON path.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Appends an index to a JSON path.
pub fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// Describes the JSON type of a value for error messages.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A JSON object with its path.
#[derive(Clone, Copy)]
pub struct Obj<'a> {
    pub map: &'a Map<String, Value>,
    pub path: &'a str,
}

impl<'a> Obj<'a> {
    pub fn new(value: &'a Value, path: &'a str) -> Result<Obj<'a>> {
        match value {
            Value::Object(map) => Ok(Obj { map, path }),
            other => Err(Error::invalid_metadata(
                path,
                format!("expected an object, found {}", kind(other)),
            )),
        }
    }

    pub fn field(&self, key: &str) -> String {
        join(self.path, key)
    }

    pub fn has(&self, key: &str) -> bool {
        self.opt(key).is_some()
    }

    /// The value of `key`, or `None` when absent or `null`.
    pub fn opt(&self, key: &str) -> Option<&'a Value> {
        match self.map.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    pub fn req(&self, key: &str) -> Result<&'a Value> {
        self.opt(key)
            .ok_or_else(|| Error::invalid_metadata(self.field(key), "required field is missing"))
    }

    fn wrong(&self, key: &str, expected: &str, v: &Value) -> Error {
        Error::invalid_metadata(
            self.field(key),
            format!("expected {expected}, found {}", kind(v)),
        )
    }

    pub fn opt_i64(&self, key: &str) -> Result<Option<i64>> {
        match self.opt(key) {
            None => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| self.wrong(key, "a 64-bit integer", v)),
        }
    }

    pub fn req_i64(&self, key: &str) -> Result<i64> {
        let v = self.req(key)?;
        v.as_i64()
            .ok_or_else(|| self.wrong(key, "a 64-bit integer", v))
    }

    pub fn opt_i32(&self, key: &str) -> Result<Option<i32>> {
        match self.opt_i64(key)? {
            None => Ok(None),
            Some(n) => i32::try_from(n).map(Some).map_err(|_| {
                Error::invalid_metadata(self.field(key), format!("{n} is out of range for an int"))
            }),
        }
    }

    pub fn req_i32(&self, key: &str) -> Result<i32> {
        self.opt_i32(key)?
            .ok_or_else(|| Error::invalid_metadata(self.field(key), "required field is missing"))
    }

    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>> {
        match self.opt(key) {
            None => Ok(None),
            Some(v) => v
                .as_bool()
                .map(Some)
                .ok_or_else(|| self.wrong(key, "a boolean", v)),
        }
    }

    pub fn req_bool(&self, key: &str) -> Result<bool> {
        let v = self.req(key)?;
        v.as_bool().ok_or_else(|| self.wrong(key, "a boolean", v))
    }

    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>> {
        match self.opt(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(Some)
                .ok_or_else(|| self.wrong(key, "a string", v)),
        }
    }

    pub fn req_str(&self, key: &str) -> Result<&'a str> {
        let v = self.req(key)?;
        v.as_str().ok_or_else(|| self.wrong(key, "a string", v))
    }

    pub fn opt_array(&self, key: &str) -> Result<Option<&'a Vec<Value>>> {
        match self.opt(key) {
            None => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(v) => Err(self.wrong(key, "a list", v)),
        }
    }

    pub fn req_array(&self, key: &str) -> Result<&'a Vec<Value>> {
        let v = self.req(key)?;
        v.as_array().ok_or_else(|| self.wrong(key, "a list", v))
    }

    /// A list whose items are parsed by `parse`, each with its own path (`snapshots[3]`);
    /// `None` when absent.
    pub fn opt_list<T>(
        &self,
        key: &str,
        parse: impl Fn(&'a Value, &str) -> Result<T>,
    ) -> Result<Option<Vec<T>>> {
        let Some(items) = self.opt_array(key)? else {
            return Ok(None);
        };
        let path = self.field(key);
        items
            .iter()
            .enumerate()
            .map(|(i, v)| parse(v, &index(&path, i)))
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    /// Like [`Obj::opt_list`], for a required list.
    pub fn req_list<T>(
        &self,
        key: &str,
        parse: impl Fn(&'a Value, &str) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.req_array(key)?;
        Ok(self.opt_list(key, parse)?.unwrap_or_default())
    }

    /// A list of ints, e.g. `identifier-field-ids`.
    pub fn opt_i32_list(&self, key: &str) -> Result<Option<Vec<i32>>> {
        self.opt_list(key, |v, path| {
            v.as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(|| {
                    Error::invalid_metadata(path, format!("expected an int, found {}", kind(v)))
                })
        })
    }

    /// A list of strings, e.g. a view's `default-namespace`.
    pub fn opt_str_list(&self, key: &str) -> Result<Option<Vec<String>>> {
        self.opt_list(key, |v, path| {
            v.as_str().map(str::to_string).ok_or_else(|| {
                Error::invalid_metadata(path, format!("expected a string, found {}", kind(v)))
            })
        })
    }

    /// A string-to-string map such as `properties` or a snapshot `summary`.
    pub fn opt_str_map(&self, key: &str) -> Result<Option<Vec<(String, String)>>> {
        let Some(v) = self.opt(key) else {
            return Ok(None);
        };
        let path = self.field(key);
        let map = v
            .as_object()
            .ok_or_else(|| self.wrong(key, "an object", v))?;
        map.iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                other => Err(Error::invalid_metadata(
                    join(&path, k),
                    format!("expected a string, found {}", kind(other)),
                )),
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn typed_errors_name_the_field() {
        let v = parse_text(r#"{"a": "x", "b": 5000000000, "c": null, "m": {"k": 1}}"#).unwrap();
        let o = Obj::new(&v, "root").unwrap();
        let e = o.req_i64("a").unwrap_err();
        assert_eq!(e.location().unwrap().field, "root.a");
        assert!(e.to_string().contains("found a string"));
        assert!(o
            .req_i32("b")
            .unwrap_err()
            .to_string()
            .contains("out of range"));
        assert!(o.opt("c").is_none());
        assert!(o.req("c").unwrap_err().to_string().contains("missing"));
        let e = o.opt_str_map("m").unwrap_err();
        assert_eq!(e.location().unwrap().field, "root.m.k");
    }

    #[test]
    fn metadata_files_gzip_by_magic() {
        let text = r#"{"format-version": 1}"#;
        let gz = metadata_file_bytes(text.to_string(), true).unwrap();
        assert!(gz.starts_with(&[0x1f, 0x8b]));
        assert_eq!(metadata_file_text(&gz).unwrap(), text);
        assert_eq!(
            metadata_file_bytes(text.to_string(), false).unwrap(),
            text.as_bytes()
        );
        assert_eq!(metadata_file_text(text.as_bytes()).unwrap(), text);
        for bad in [&gz[..gz.len() / 2], &[0xff, 0xfe, 0x00][..]] {
            let e = metadata_file_text(bad).unwrap_err();
            assert!(matches!(e, Error::InvalidJson { .. }), "{e:?}");
        }
        assert!(is_gzip_file_name("a/00001-x.gz.metadata.json"));
        assert!(is_gzip_file_name("a/00001-x.metadata.json.gz"));
        assert!(!is_gzip_file_name("a/00001-x.metadata.json"));
    }

    #[test]
    fn syntax_errors_are_invalid_json() {
        let e = parse_text("{\"a\": ").unwrap_err();
        assert!(matches!(e, Error::InvalidJson { .. }), "{e:?}");
    }
}
