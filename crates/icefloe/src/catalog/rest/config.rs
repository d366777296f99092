//! The catalog's properties and the resource paths built from them.
//!
//! A REST catalog starts from the caller's properties (PyIceberg's and Java's names:
//! `uri`, `warehouse`, `prefix`, `token`, `credential`, `header.*`, `s3.*`, ...), asks the
//! server `GET /v1/config` (with `?warehouse=` when one is given), and merges the answer as
//! the spec says: the server's `defaults` first, then the caller's properties, then the
//! server's `overrides`. The merged map decides the `prefix` of every path and the
//! `namespace-separator` (`%1F` unless the server says otherwise: 1.11 servers send `%2E`).

use serde_json::Value;

use super::errors::protocol_error;
use crate::catalog::TableIdent;
use crate::error::{Error, Result};

/// The separator of namespace levels in a path when the server names none (the unit
/// separator, already percent-encoded as it goes into the path).
pub(super) const DEFAULT_NAMESPACE_SEPARATOR: &str = "%1F";

/// `key` in `properties`, the last occurrence winning.
pub(super) fn get<'a>(properties: &'a [(String, String)], key: &str) -> Option<&'a str> {
    properties
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Sets `key` to `value`, replacing any earlier value.
fn set(properties: &mut Vec<(String, String)>, key: &str, value: &str) {
    properties.retain(|(k, _)| k != key);
    properties.push((key.to_string(), value.to_string()));
}

/// Overlays `updates` on `base`: a key of `updates` replaces the same key of `base`.
pub(super) fn merge(
    base: &[(String, String)],
    updates: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::with_capacity(base.len() + updates.len());
    for (k, v) in base.iter().chain(updates) {
        set(&mut out, k, v);
    }
    out
}

/// The `defaults`, `overrides` and `endpoints` of a `GET /v1/config` answer (`endpoints`
/// only decides whether `loadCredentials` is called: every other endpoint this client calls
/// is in the spec's required set).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct ConfigResponse {
    pub defaults: Vec<(String, String)>,
    pub overrides: Vec<(String, String)>,
    /// `METHOD /path` strings; entries that are not strings are ignored.
    pub endpoints: Vec<String>,
}

fn string_map(value: Option<&Value>, field: &str, shown: &str) -> Result<Vec<(String, String)>> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .filter_map(|(k, v)| match v {
                Value::String(s) => Some(Ok((k.clone(), s.clone()))),
                // a null value means "unset": Java's parser drops it too
                Value::Null => None,
                _ => Some(Err(protocol_error(
                    shown,
                    &format!("'{field}.{k}' is not a string"),
                ))),
            })
            .collect(),
        Some(_) => Err(protocol_error(
            shown,
            &format!("'{field}' is not an object"),
        )),
    }
}

impl ConfigResponse {
    /// Parses the answer of `GET /v1/config`; `shown` names the request in errors.
    pub(super) fn from_json(value: &Value, shown: &str) -> Result<ConfigResponse> {
        let Value::Object(m) = value else {
            return Err(protocol_error(shown, "the answer is not a JSON object"));
        };
        Ok(ConfigResponse {
            defaults: string_map(m.get("defaults"), "defaults", shown)?,
            overrides: string_map(m.get("overrides"), "overrides", shown)?,
            endpoints: m
                .get("endpoints")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// The catalog's properties: server defaults, then the caller's, then server overrides.
    pub(super) fn merge(&self, client: &[(String, String)]) -> Vec<(String, String)> {
        merge(&merge(&self.defaults, client), &self.overrides)
    }
}

/// Percent-encodes a path segment or a query value: every byte but the unreserved ones
/// (`A-Z a-z 0-9 - . _ ~`), so that `/`, `%`, spaces and non-ASCII names stay one segment.
pub(super) fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes (the separator property may come encoded, as `%2E`); anything
/// that is not a valid escape is kept as it is.
pub(super) fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(b) = hex {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The resource paths of one catalog (Java's `ResourcePaths`), relative to the base URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Paths {
    /// `v1` or `v1/<prefix>`.
    root: String,
    /// Joins encoded namespace levels in a path, as the server expects it (e.g. `%1F`).
    separator: String,
}

impl Paths {
    /// The paths for the merged properties (`prefix`, `namespace-separator`).
    pub(super) fn new(properties: &[(String, String)]) -> Paths {
        let root = match get(properties, "prefix").map(|p| p.trim_matches('/')) {
            Some(p) if !p.is_empty() => format!("v1/{p}"),
            _ => "v1".to_string(),
        };
        let separator = get(properties, "namespace-separator")
            .filter(|s| !s.is_empty())
            .unwrap_or(DEFAULT_NAMESPACE_SEPARATOR)
            .to_string();
        Paths { root, separator }
    }

    /// The namespace as one path segment: each level encoded, joined by the separator.
    pub(super) fn namespace_segment(&self, namespace: &[String]) -> Result<String> {
        if namespace.is_empty() {
            return Err(Error::invalid_argument(
                "the empty namespace cannot be used here",
            ));
        }
        // a level that holds the separator would read back as two levels
        let raw_separator = decode(&self.separator);
        if let Some(bad) = namespace
            .iter()
            .find(|l| l.is_empty() || l.contains(&raw_separator))
        {
            return Err(Error::InvalidIdentifier {
                identifier: namespace.join("."),
                message: format!(
                    "namespace level '{}' is empty or holds the catalog's namespace separator",
                    bad.escape_debug()
                ),
            });
        }
        Ok(namespace
            .iter()
            .map(|l| encode(l))
            .collect::<Vec<_>>()
            .join(&self.separator))
    }

    /// The `parent` query value of `GET namespaces` (levels joined by the decoded separator;
    /// the query encoding then applies to the whole value).
    pub(super) fn parent_param(&self, parent: &[String]) -> String {
        parent.join(&decode(&self.separator))
    }

    pub(super) fn config() -> &'static str {
        "v1/config"
    }

    pub(super) fn namespaces(&self) -> String {
        format!("{}/namespaces", self.root)
    }

    pub(super) fn namespace(&self, namespace: &[String]) -> Result<String> {
        Ok(format!(
            "{}/namespaces/{}",
            self.root,
            self.namespace_segment(namespace)?
        ))
    }

    pub(super) fn namespace_properties(&self, namespace: &[String]) -> Result<String> {
        Ok(format!("{}/properties", self.namespace(namespace)?))
    }

    pub(super) fn tables(&self, namespace: &[String]) -> Result<String> {
        Ok(format!("{}/tables", self.namespace(namespace)?))
    }

    pub(super) fn table(&self, ident: &TableIdent) -> Result<String> {
        Ok(format!(
            "{}/{}",
            self.tables(&ident.namespace)?,
            encode(&ident.name)
        ))
    }

    pub(super) fn register(&self, namespace: &[String]) -> Result<String> {
        Ok(format!("{}/register", self.namespace(namespace)?))
    }

    pub(super) fn rename_table(&self) -> String {
        format!("{}/tables/rename", self.root)
    }

    pub(super) fn views(&self, namespace: &[String]) -> Result<String> {
        Ok(format!("{}/views", self.namespace(namespace)?))
    }

    pub(super) fn view(&self, ident: &TableIdent) -> Result<String> {
        Ok(format!(
            "{}/{}",
            self.views(&ident.namespace)?,
            encode(&ident.name)
        ))
    }

    pub(super) fn rename_view(&self) -> String {
        format!("{}/views/rename", self.root)
    }

    pub(super) fn commit_transaction(&self) -> String {
        format!("{}/transactions/commit", self.root)
    }
}

/// The JSON form of a namespace in request bodies and answers: its levels.
pub(super) fn namespace_json(namespace: &[String]) -> Value {
    Value::Array(namespace.iter().map(|l| Value::from(l.as_str())).collect())
}

/// The JSON form of an identifier (`{"namespace": [...], "name": "..."}`).
pub(super) fn ident_json(ident: &TableIdent) -> Value {
    serde_json::json!({
        "namespace": namespace_json(&ident.namespace),
        "name": ident.name,
    })
}

/// Reads a namespace (an array of strings) from an answer.
pub(super) fn namespace_from_json(value: &Value, field: &str, shown: &str) -> Result<Vec<String>> {
    let Value::Array(levels) = value else {
        return Err(protocol_error(
            shown,
            &format!("'{field}' is not an array of strings"),
        ));
    };
    levels
        .iter()
        .map(|l| {
            l.as_str().map(str::to_string).ok_or_else(|| {
                protocol_error(shown, &format!("'{field}' is not an array of strings"))
            })
        })
        .collect()
}

/// Reads an identifier (`{"namespace": [...], "name": "..."}`) from an answer.
pub(super) fn ident_from_json(value: &Value, field: &str, shown: &str) -> Result<TableIdent> {
    let namespace = value
        .get("namespace")
        .ok_or_else(|| protocol_error(shown, &format!("'{field}' has no 'namespace'")))?;
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| protocol_error(shown, &format!("'{field}' has no 'name' string")))?;
    Ok(TableIdent::new(
        namespace_from_json(namespace, &format!("{field}.namespace"), shown)?,
        name,
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::catalog::testing::props;

    #[test]
    fn config_merges_defaults_client_then_overrides() {
        let answer = serde_json::json!({
            "defaults": {"a": "server-default", "b": "server-default", "clients": "4"},
            "overrides": {"b": "server-override", "prefix": "cat1", "unset": null, "empty": ""},
            "endpoints": ["GET /v1/{prefix}/namespaces"]
        });
        let config = ConfigResponse::from_json(&answer, "GET /v1/config").unwrap();
        let merged = config.merge(&props(&[("a", "client"), ("b", "client"), ("c", "client")]));
        assert_eq!(get(&merged, "a"), Some("client"));
        assert_eq!(get(&merged, "b"), Some("server-override"));
        assert_eq!(get(&merged, "c"), Some("client"));
        assert_eq!(get(&merged, "clients"), Some("4"));
        assert_eq!(get(&merged, "unset"), None);
        assert_eq!(get(&merged, "empty"), Some(""));
        let paths = Paths::new(&merged);
        assert_eq!(paths.namespaces(), "v1/cat1/namespaces");
        let bad = serde_json::json!({"defaults": {"a": 1}});
        let e = ConfigResponse::from_json(&bad, "GET /v1/config").unwrap_err();
        assert!(e.to_string().contains("defaults.a"), "{e}");
    }

    #[test]
    fn paths_encode_levels_and_use_the_separator() {
        let paths = Paths::new(&[]);
        let ns = vec!["a b".to_string(), "c/d".to_string()];
        assert_eq!(paths.namespace(&ns).unwrap(), "v1/namespaces/a%20b%1Fc%2Fd");
        assert_eq!(
            paths
                .table(&TableIdent::new(vec!["db".into()], "t%1"))
                .unwrap(),
            "v1/namespaces/db/tables/t%251"
        );
        assert_eq!(paths.parent_param(&ns), "a b\u{1f}c/d");
        // 1.11 servers override the separator with an encoded '.'
        let dotted = Paths::new(&props(&[("namespace-separator", "%2E"), ("prefix", "/p/")]));
        assert_eq!(
            dotted
                .namespace(&["a".to_string(), "b".to_string()])
                .unwrap(),
            "v1/p/namespaces/a%2Eb"
        );
        assert_eq!(dotted.parent_param(&["a".into(), "b".into()]), "a.b");
        // a level holding the separator cannot be sent
        assert!(dotted.namespace(&["a.b".to_string()]).is_err());
        assert!(paths.namespace(&[]).is_err());
        assert_eq!(decode("%2E%zz%"), ".%zz%");
    }
}
