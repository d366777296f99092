//! View requests: load, and commits (create and replace) as the REST spec sends them.
//!
//! A new view is a `CreateViewRequest` (`POST .../views`): its name, location, current
//! schema, current version and properties; the server builds the metadata (its own uuid,
//! version id 1, log entry) and answers with a `LoadViewResult`. A replacement is a
//! `CommitViewRequest` (`POST .../views/{view}`): `assert-view-uuid` of the base and the
//! updates that turn the base into the new metadata, as Java's `ViewMetadata.Builder`
//! records them (`add-schema`, `add-view-version` with schema id `-1` when it uses the
//! schema added in the same commit, `set-current-view-version` with `-1` for the version
//! added last, `set-location`, `set-properties`, `remove-properties`,
//! `upgrade-format-version`, `assign-uuid` for a base without one).
//!
//! Versions the new metadata no longer lists are not sent: the spec has no update that
//! removes a view version, and the server expires versions itself on the same rule
//! (`version.history.num-entries`). The version log is the server's too. Anything else
//! that cannot be said in updates (a changed uuid, a downgrade, a schema or version
//! rewritten under its id) is an `Unsupported` error: a change is never dropped silently.

use std::sync::Arc;

use serde_json::Value;

use super::errors::{protocol_error, Endpoint};
use super::http::{Method, Request};
use super::RestCatalog;
use crate::catalog::{TableIdent, ViewState};
use crate::error::{Error, Result};
use crate::spec::view_metadata::ViewMetadata;

/// `-1`: the schema or version added last in the same commit (Java's `LAST_ADDED`).
const LAST_ADDED: i32 = -1;

fn unsupported(ident: &TableIdent, what: &str) -> Error {
    Error::unsupported(format!(
        "view {ident}: the REST catalog client cannot send this change: {what}"
    ))
}

/// The spec's `CreateViewRequest` for a view whose first metadata is `new`.
pub(super) fn create_request(ident: &TableIdent, new: &ViewMetadata) -> Result<Value> {
    let version = new.current_version().ok_or_else(|| {
        Error::invalid_metadata(
            "current-version-id",
            format!(
                "view {ident}: no version {} to create the view with",
                new.current_version_id
            ),
        )
    })?;
    let schema_id = version.schema_id.or(new.current_schema_id).ok_or_else(|| {
        Error::invalid_metadata(
            "schema-id",
            format!("view {ident}: the version has no schema"),
        )
    })?;
    let schema = new.schema_by_id(schema_id).ok_or_else(|| {
        Error::invalid_metadata(
            "schema-id",
            format!("view {ident}: the version's schema {schema_id} is not in 'schemas'"),
        )
    })?;
    if new.versions.len() != 1 || new.schemas.len() != 1 {
        return Err(unsupported(
            ident,
            "a new view is created with one version and one schema",
        ));
    }
    Ok(serde_json::json!({
        "name": ident.name,
        "location": new.location,
        "schema": schema.to_json(),
        "view-version": version.to_java_json(),
        "properties": new.properties,
    }))
}

/// The spec's `CommitViewRequest` that turns `base` into `new`: (requirements, updates).
pub(super) fn commit_request(
    ident: &TableIdent,
    base: &ViewMetadata,
    new: &ViewMetadata,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut requirements = Vec::new();
    let mut updates = Vec::new();

    match (&base.view_uuid, &new.view_uuid) {
        (Some(b), Some(n)) if !b.eq_ignore_ascii_case(n) => {
            return Err(unsupported(ident, "the view uuid changed"))
        }
        (Some(_), None) => return Err(unsupported(ident, "the view uuid was removed")),
        (None, Some(n)) => {
            updates.push(serde_json::json!({"action": "assign-uuid", "uuid": n}));
        }
        _ => {}
    }
    if let Some(uuid) = &base.view_uuid {
        requirements.push(serde_json::json!({"type": "assert-view-uuid", "uuid": uuid}));
    }

    if new.format_version < base.format_version {
        return Err(unsupported(
            ident,
            &format!(
                "format version {} to {} is a downgrade",
                base.format_version, new.format_version
            ),
        ));
    }
    if new.format_version > base.format_version {
        updates.push(serde_json::json!({
            "action": "upgrade-format-version",
            "format-version": new.format_version,
        }));
    }

    let mut last_schema = None;
    for s in &new.schemas {
        match base.schema_by_id(s.schema_id()) {
            Some(old) if old == s => {}
            Some(_) => {
                return Err(unsupported(
                    ident,
                    &format!("schema {} was rewritten under the same id", s.schema_id()),
                ))
            }
            None => {
                last_schema = Some(s.schema_id());
                updates.push(serde_json::json!({"action": "add-schema", "schema": s.to_json()}));
            }
        }
    }

    if new.location != base.location {
        updates.push(serde_json::json!({"action": "set-location", "location": new.location}));
    }
    let set: serde_json::Map<String, Value> = new
        .properties
        .iter()
        .filter(|(k, v)| base.properties.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
        .collect();
    if !set.is_empty() {
        updates.push(serde_json::json!({"action": "set-properties", "updates": set}));
    }
    let removed: Vec<&String> = base
        .properties
        .keys()
        .filter(|k| !new.properties.contains_key(*k))
        .collect();
    if !removed.is_empty() {
        updates.push(serde_json::json!({"action": "remove-properties", "removals": removed}));
    }

    let mut last_version = None;
    for v in &new.versions {
        match base.version_by_id(v.version_id) {
            Some(old) if old == v => {}
            Some(_) => {
                return Err(unsupported(
                    ident,
                    &format!("version {} was rewritten under the same id", v.version_id),
                ))
            }
            None => {
                let mut json = v.to_java_json();
                // the server numbers the schemas it adds itself: name the one added here
                if last_schema.is_some() && v.schema_id == last_schema {
                    json["schema-id"] = Value::from(LAST_ADDED);
                }
                last_version = Some(v.version_id);
                updates
                    .push(serde_json::json!({"action": "add-view-version", "view-version": json}));
            }
        }
    }
    if new.current_version_id != base.current_version_id
        || last_version == Some(new.current_version_id)
    {
        let id = if last_version == Some(new.current_version_id) {
            LAST_ADDED
        } else {
            new.current_version_id
        };
        updates
            .push(serde_json::json!({"action": "set-current-view-version", "view-version-id": id}));
    }
    Ok((requirements, updates))
}

/// A `LoadViewResult` as the view's state.
fn view_state(body: &Value, shown: &str) -> Result<ViewState> {
    let location = body
        .get("metadata-location")
        .and_then(Value::as_str)
        .ok_or_else(|| protocol_error(shown, "no 'metadata-location'"))?
        .to_string();
    let metadata = body
        .get("metadata")
        .ok_or_else(|| protocol_error(shown, "no 'metadata'"))?;
    let metadata = ViewMetadata::from_json(metadata).map_err(|e| e.in_file(shown))?;
    Ok(ViewState {
        metadata_location: location,
        metadata: Arc::new(metadata),
    })
}

impl RestCatalog {
    pub(super) fn view_request(&self, method: Method, ident: &TableIdent) -> Result<Request> {
        Ok(Request::new(
            method,
            self.paths.view(ident)?,
            Endpoint::View,
            ident.to_string(),
        ))
    }

    pub(super) fn rest_load_view(&self, ident: &TableIdent) -> Result<ViewState> {
        let req = self.view_request(Method::Get, ident)?;
        let shown = format!("GET /{}", req.path);
        let body = self.http.send(&req)?.json(&shown)?;
        view_state(&body, &shown)
    }

    /// Creates the view (`base` `None`: a `CreateViewRequest`) or replaces it (a
    /// `CommitViewRequest` from `base`).
    pub(super) fn rest_commit_view(
        &self,
        ident: &TableIdent,
        base: Option<&ViewState>,
        new: &ViewMetadata,
    ) -> Result<ViewState> {
        let req = match base {
            None => Request::new(
                Method::Post,
                self.paths.views(&ident.namespace)?,
                Endpoint::CreateTable,
                ident.to_string(),
            )
            .json(create_request(ident, new)?),
            Some(b) => {
                let (requirements, updates) = commit_request(ident, &b.metadata, new)?;
                let mut req = self
                    .view_request(Method::Post, ident)?
                    .json(serde_json::json!({
                        "identifier": super::config::ident_json(ident),
                        "requirements": requirements,
                        "updates": updates,
                    }));
                req.endpoint = Endpoint::ViewCommit;
                req
            }
        };
        let shown = format!("POST /{}", req.path);
        let resp = self.http.send(&req)?;
        let state = resp.json(&shown).and_then(|b| view_state(&b, &shown));
        match (base, state) {
            (_, Ok(s)) => Ok(s),
            // a replacement the server accepted but whose answer cannot be read: its
            // outcome is unknown to the caller
            (Some(_), Err(e)) => Err(Error::CommitStateUnknown {
                message: format!(
                    "{shown}: the server accepted the commit but its answer cannot be used: {e}"
                ),
            }),
            (None, Err(e)) => Err(e),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::commit::view::{new_view_metadata, replace_view_metadata, ViewDefinition};
    use crate::spec::schema::Schema;

    fn ident() -> TableIdent {
        TableIdent::new(vec!["db".to_string()], "v")
    }

    fn schema(extra: bool) -> Schema {
        let mut fields =
            vec![serde_json::json!({"id": 1, "name": "id", "required": true, "type": "long"})];
        if extra {
            fields.push(
                serde_json::json!({"id": 2, "name": "x", "required": false, "type": "string"}),
            );
        }
        Schema::from_json(
            &serde_json::json!({"type": "struct", "schema-id": 0, "fields": fields}),
            "",
        )
        .unwrap()
    }

    fn def(sql: &str, extra: bool) -> ViewDefinition {
        ViewDefinition {
            schema: schema(extra),
            queries: vec![("spark".to_string(), sql.to_string())],
            default_namespace: vec!["db".to_string()],
            default_catalog: None,
            summary: Default::default(),
            properties: [("a".to_string(), "1".to_string())].into(),
            location: None,
        }
    }

    #[test]
    fn a_new_view_is_a_create_request_with_its_version_and_schema() {
        let md = new_view_metadata(&def("SELECT 1", false), "file:///w/db/v", 5).unwrap();
        let req = create_request(&ident(), &md).unwrap();
        assert_eq!(req["name"], "v");
        assert_eq!(req["location"], "file:///w/db/v");
        assert_eq!(req["schema"]["fields"][0]["name"], "id");
        assert_eq!(req["view-version"]["version-id"], 1);
        assert_eq!(req["view-version"]["schema-id"], 0);
        assert_eq!(req["view-version"]["representations"][0]["sql"], "SELECT 1");
        assert_eq!(req["view-version"]["default-namespace"][0], "db");
        assert_eq!(req["properties"]["a"], "1");
    }

    #[test]
    fn a_replacement_is_the_updates_java_records_with_last_added_ids() {
        let base = new_view_metadata(&def("SELECT 1", false), "file:///w/db/v", 5).unwrap();
        let mut d = def("SELECT 2", true);
        d.properties = [("b".to_string(), "2".to_string())].into();
        let mut new = replace_view_metadata(&base, &d, 6).unwrap();
        new.properties.remove("a");
        new.location = "file:///elsewhere".to_string();
        let (req, updates) = commit_request(&ident(), &base, &new).unwrap();
        assert_eq!(
            req,
            vec![serde_json::json!({"type": "assert-view-uuid", "uuid": base.view_uuid})]
        );
        let actions: Vec<&str> = updates
            .iter()
            .map(|u| u["action"].as_str().unwrap())
            .collect();
        assert_eq!(
            actions,
            [
                "add-schema",
                "set-location",
                "set-properties",
                "remove-properties",
                "add-view-version",
                "set-current-view-version"
            ]
        );
        assert_eq!(updates[0]["schema"]["schema-id"], 1);
        assert_eq!(updates[2]["updates"], serde_json::json!({"b": "2"}));
        assert_eq!(updates[3]["removals"], serde_json::json!(["a"]));
        assert_eq!(updates[4]["view-version"]["schema-id"], LAST_ADDED);
        assert_eq!(
            updates[4]["view-version"]["representations"][0]["sql"],
            "SELECT 2"
        );
        assert_eq!(updates[5]["view-version-id"], LAST_ADDED);

        // an old version made current again: its id, nothing added
        let mut again = def("SELECT 1", false);
        again.properties.clear();
        let back = replace_view_metadata(&new, &again, 7).unwrap();
        assert_eq!(back.current_version_id, 1);
        let (_, updates) = commit_request(&ident(), &new, &back).unwrap();
        assert_eq!(
            updates,
            vec![serde_json::json!({"action": "set-current-view-version", "view-version-id": 1})]
        );

        // what updates cannot say
        let mut other = new.clone();
        other.view_uuid = Some("00000000-0000-0000-0000-000000000000".to_string());
        let e = commit_request(&ident(), &new, &other).unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        assert!(e.to_string().contains("uuid"), "{e}");
    }
}
