//! Namespace requests: create, list (every page), exists (HEAD), load and update
//! properties, drop.

use serde_json::{Map, Value};

use super::config::{namespace_from_json, namespace_json};
use super::errors::{protocol_error, Endpoint};
use super::http::{Method, Request};
use super::RestCatalog;
use crate::catalog::Namespace;
use crate::error::{Error, Result};

/// Reads a `{"key": "value", ...}` object of an answer.
pub(super) fn string_map_from_json(
    value: Option<&Value>,
    field: &str,
    shown: &str,
) -> Result<Vec<(String, String)>> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(protocol_error(
                    shown,
                    &format!("'{field}.{k}' is not a string"),
                )),
            })
            .collect(),
        Some(_) => Err(protocol_error(
            shown,
            &format!("'{field}' is not an object"),
        )),
    }
}

pub(super) fn string_map_json(pairs: &[(String, String)]) -> Value {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert(k.clone(), Value::from(v.as_str()));
    }
    Value::Object(m)
}

/// The `next-page-token` of a list answer: absent, null or empty ends the listing.
pub(super) fn next_page_token(body: &Value) -> Option<String> {
    body.get("next-page-token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

/// Lists stop after this many pages: a server that keeps answering with a token would
/// otherwise be followed forever.
pub(super) const MAX_PAGES: usize = 100_000;

impl RestCatalog {
    fn ns_request(&self, method: Method, path: String, namespace: &[String]) -> Request {
        Request::new(method, path, Endpoint::Namespace, namespace.join("."))
    }

    pub(super) fn rest_create_namespace(
        &self,
        namespace: &[String],
        properties: &[(String, String)],
    ) -> Result<()> {
        // the path form checks the levels even though the body carries them
        self.paths.namespace_segment(namespace)?;
        let req = self
            .ns_request(Method::Post, self.paths.namespaces(), namespace)
            .json(serde_json::json!({
                "namespace": namespace_json(namespace),
                "properties": string_map_json(properties),
            }));
        self.http.send(&req)?;
        Ok(())
    }

    pub(super) fn rest_list_namespaces(&self, parent: &[String]) -> Result<Vec<Namespace>> {
        if !parent.is_empty() {
            self.paths.namespace_segment(parent)?;
        }
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut req = self.ns_request(Method::Get, self.paths.namespaces(), parent);
            if !parent.is_empty() {
                req = req.query("parent", self.paths.parent_param(parent));
            }
            if let Some(t) = &token {
                req = req.query("pageToken", t.clone());
            }
            if let Some(size) = &self.page_size {
                req = req.query("pageSize", size.clone());
            }
            let shown = format!("GET /{}", req.path);
            let body = self.http.send(&req)?.json(&shown)?;
            let list = body
                .get("namespaces")
                .and_then(Value::as_array)
                .ok_or_else(|| protocol_error(&shown, "no 'namespaces' array"))?;
            for (i, ns) in list.iter().enumerate() {
                out.push(namespace_from_json(
                    ns,
                    &format!("namespaces[{i}]"),
                    &shown,
                )?);
            }
            token = next_page_token(&body);
            if token.is_none() {
                return Ok(out);
            }
        }
        Err(Error::ServiceFailure {
            message: format!(
                "GET /{}: more than {MAX_PAGES} pages",
                self.paths.namespaces()
            ),
        })
    }

    pub(super) fn rest_namespace_exists(&self, namespace: &[String]) -> Result<bool> {
        let req = self.ns_request(Method::Head, self.paths.namespace(namespace)?, namespace);
        match self.http.send(&req) {
            Ok(_) => Ok(true),
            Err(Error::NoSuchNamespace { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    pub(super) fn rest_namespace_properties(
        &self,
        namespace: &[String],
    ) -> Result<Vec<(String, String)>> {
        let req = self.ns_request(Method::Get, self.paths.namespace(namespace)?, namespace);
        let shown = format!("GET /{}", req.path);
        let body = self.http.send(&req)?.json(&shown)?;
        let mut props = string_map_from_json(body.get("properties"), "properties", &shown)?;
        props.sort();
        Ok(props)
    }

    pub(super) fn rest_update_namespace_properties(
        &self,
        namespace: &[String],
        removals: &[String],
        updates: &[(String, String)],
    ) -> Result<()> {
        if let Some(k) = removals
            .iter()
            .find(|r| updates.iter().any(|(k, _)| k == *r))
        {
            return Err(Error::invalid_argument(format!(
                "property '{k}' is both removed and updated"
            )));
        }
        let req = self
            .ns_request(
                Method::Post,
                self.paths.namespace_properties(namespace)?,
                namespace,
            )
            .json(serde_json::json!({
                "removals": removals,
                "updates": string_map_json(updates),
            }));
        self.http.send(&req)?;
        Ok(())
    }

    pub(super) fn rest_drop_namespace(&self, namespace: &[String]) -> Result<()> {
        let mut req = self.ns_request(Method::Delete, self.paths.namespace(namespace)?, namespace);
        req.endpoint = Endpoint::DropNamespace;
        self.http.send(&req)?;
        Ok(())
    }
}
