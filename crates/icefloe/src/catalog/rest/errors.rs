//! HTTP answers that are not successes, as icefloe's typed errors.
//!
//! The REST spec's `ErrorModel` (`{"error": {"message", "type", "code"}}`) is read when the
//! body holds it; the status decides the error as Java's `ErrorHandlers` do, per kind of
//! request (a 404 on a table path is `NoSuchTable` unless the server's `type` says the
//! namespace is missing; a 409 on a commit is `CommitFailed`, elsewhere `AlreadyExists`;
//! 500/502/503/504 on a commit is `CommitStateUnknown`). Every message names the request
//! (method and catalog path) and passes through the catalog's redactor: a server may echo
//! a header or a token.

use serde_json::Value;

use crate::error::Error;
use crate::io::redact::Redactor;

/// How much of an error body is kept in a message.
const MAX_SHOWN_BODY: usize = 500;

/// What a request was about, which decides what its 404 and 409 mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Endpoint {
    Config,
    Namespace,
    /// Dropping a namespace: 409 means it is not empty.
    DropNamespace,
    Table,
    /// Creating or registering a table, or creating a view: 404 means the namespace is
    /// missing, 409 that the name is taken.
    CreateTable,
    /// `POST .../tables/{table}`: 409 is a lost race, 5xx an unknown outcome.
    Commit,
    View,
    /// `POST .../views/{view}`: as `Commit`, for a view.
    ViewCommit,
    /// `POST .../transactions/commit`: as `Commit`, for several tables at once.
    Transaction,
    /// An OAuth2 token endpoint.
    Token,
}

impl Endpoint {
    /// Whether the request asks the server to change a pointer: a 409 is then a lost race,
    /// and a 5xx or a lost answer leaves the outcome unknown.
    pub(super) fn is_commit(self) -> bool {
        matches!(
            self,
            Endpoint::Commit | Endpoint::ViewCommit | Endpoint::Transaction
        )
    }
}

/// The parts of a failed answer that an error is made of.
#[derive(Debug, Clone)]
pub(super) struct Failure<'a> {
    pub endpoint: Endpoint,
    /// `METHOD <path>`, as shown in messages.
    pub shown: &'a str,
    pub status: u16,
    pub body: &'a [u8],
    /// The table, view or namespace the request was about, for `NoSuch*` errors.
    pub subject: &'a str,
}

/// The spec's `ErrorModel`, or what could be read of a body that is not one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct ErrorModel {
    pub message: String,
    /// The server's exception type (`NoSuchTableException`, ...), if it said.
    pub kind: Option<String>,
}

impl ErrorModel {
    /// Reads `{"error": {...}}`; an OAuth2 error (`{"error": "invalid_client",
    /// "error_description": ...}`); or else keeps the start of the body as text.
    pub(super) fn parse(body: &[u8]) -> ErrorModel {
        if let Ok(v) = serde_json::from_slice::<Value>(body) {
            if let Some(e) = v.get("error").filter(|e| e.is_object()) {
                return ErrorModel {
                    message: e
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    kind: e.get("type").and_then(Value::as_str).map(str::to_string),
                };
            }
            if let Some(kind) = v.get("error").and_then(Value::as_str) {
                return ErrorModel {
                    message: v
                        .get("error_description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    kind: Some(kind.to_string()),
                };
            }
        }
        let text = String::from_utf8_lossy(body);
        let text = text.trim();
        let mut shown: String = text.chars().take(MAX_SHOWN_BODY).collect();
        if shown.len() < text.len() {
            shown.push_str("...");
        }
        ErrorModel {
            message: if shown.is_empty() {
                "(no body)".to_string()
            } else {
                format!("(not an Iceberg error body) {shown}")
            },
            kind: None,
        }
    }

    fn is(&self, kind: &str) -> bool {
        self.kind.as_deref() == Some(kind)
    }
}

/// An answer that is not what the protocol promises (not JSON, a field missing).
pub(super) fn protocol_error(shown: &str, what: &str) -> Error {
    Error::ServiceFailure {
        message: format!("{shown}: unexpected answer: {what}"),
    }
}

/// The typed error for a failed answer.
pub(super) fn from_failure(f: &Failure<'_>, redactor: &Redactor) -> Error {
    let model = ErrorModel::parse(f.body);
    let detail = {
        let kind = model
            .kind
            .as_deref()
            .map_or(String::new(), |k| format!(" {k}"));
        redactor.scrub(&format!(
            "{} (HTTP {}{kind}): {}",
            f.shown, f.status, model.message
        ))
    };
    let subject = || format!("{} ({})", f.subject, f.shown);
    // a token endpoint's 4xx is a refusal of the credentials, whatever the status
    if f.endpoint == Endpoint::Token && (400..500).contains(&f.status) {
        return Error::NotAuthorized { message: detail };
    }
    match (f.status, f.endpoint) {
        (400, _) if model.is("NamespaceNotEmptyException") => Error::NamespaceNotEmpty {
            namespace: subject(),
        },
        (400 | 422, _) => Error::invalid_argument(format!("bad request: {detail}")),
        (401 | 403 | 419, _) => Error::NotAuthorized { message: detail },
        (404, _) if model.is("NoSuchNamespaceException") => Error::NoSuchNamespace {
            namespace: subject(),
        },
        (404, _) if model.is("NoSuchTableException") => Error::NoSuchTable { table: subject() },
        (404, _) if model.is("NoSuchViewException") => Error::NoSuchView { view: subject() },
        (404, Endpoint::Table | Endpoint::Commit | Endpoint::Transaction) => {
            Error::NoSuchTable { table: subject() }
        }
        (404, Endpoint::Namespace | Endpoint::DropNamespace | Endpoint::CreateTable) => {
            Error::NoSuchNamespace {
                namespace: subject(),
            }
        }
        (404, Endpoint::View | Endpoint::ViewCommit) => Error::NoSuchView { view: subject() },
        (404, _) => Error::not_found(detail),
        (406 | 501, _) => Error::unsupported(format!("not supported by the server: {detail}")),
        (409, e) if e.is_commit() => Error::commit_failed(detail),
        (409, Endpoint::DropNamespace) => Error::NamespaceNotEmpty {
            namespace: subject(),
        },
        (409, _) => Error::already_exists(detail),
        (500 | 502 | 503 | 504, e) if e.is_commit() => {
            Error::CommitStateUnknown { message: detail }
        }
        _ => Error::ServiceFailure { message: detail },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn fail(endpoint: Endpoint, status: u16, body: &str) -> Error {
        from_failure(
            &Failure {
                endpoint,
                shown: "GET /v1/namespaces/db/tables/t",
                status,
                body: body.as_bytes(),
                subject: "db.t",
            },
            &Redactor::new(["s3cr3t-token".to_string()]),
        )
    }

    fn model(kind: &str, message: &str) -> String {
        serde_json::json!({"error": {"message": message, "type": kind, "code": 0}}).to_string()
    }

    #[test]
    fn statuses_and_types_map_to_typed_errors() {
        let e = fail(Endpoint::Table, 404, &model("NoSuchTableException", "x"));
        assert!(
            matches!(&e, Error::NoSuchTable { table } if table.contains("db.t")
            && table.contains("/v1/namespaces/db/tables/t")),
            "{e}"
        );
        let e = fail(
            Endpoint::Table,
            404,
            &model("NoSuchNamespaceException", "x"),
        );
        assert!(matches!(e, Error::NoSuchNamespace { .. }), "{e}");
        assert!(matches!(
            fail(Endpoint::CreateTable, 404, "not json"),
            Error::NoSuchNamespace { .. }
        ));
        assert!(matches!(
            fail(Endpoint::Table, 409, &model("AlreadyExistsException", "x")),
            Error::AlreadyExists { .. }
        ));
        assert!(matches!(
            fail(Endpoint::Commit, 409, &model("CommitFailedException", "x")),
            Error::CommitFailed { .. }
        ));
        for endpoint in [Endpoint::ViewCommit, Endpoint::Transaction] {
            assert!(matches!(
                fail(endpoint, 409, &model("CommitFailedException", "x")),
                Error::CommitFailed { .. }
            ));
        }
        assert!(matches!(
            fail(Endpoint::ViewCommit, 404, ""),
            Error::NoSuchView { .. }
        ));
        assert!(matches!(
            fail(
                Endpoint::CreateTable,
                409,
                &model("AlreadyExistsException", "x")
            ),
            Error::AlreadyExists { .. }
        ));
        for status in [500, 502, 503, 504] {
            for endpoint in [
                Endpoint::Commit,
                Endpoint::ViewCommit,
                Endpoint::Transaction,
            ] {
                assert!(matches!(
                    fail(endpoint, status, ""),
                    Error::CommitStateUnknown { .. }
                ));
            }
            assert!(matches!(
                fail(Endpoint::Table, status, ""),
                Error::ServiceFailure { .. }
            ));
        }
        assert!(matches!(
            fail(Endpoint::DropNamespace, 409, ""),
            Error::NamespaceNotEmpty { .. }
        ));
        assert!(matches!(
            fail(
                Endpoint::Namespace,
                400,
                &model("NamespaceNotEmptyException", "x")
            ),
            Error::NamespaceNotEmpty { .. }
        ));
        for status in [401, 403, 419] {
            assert!(matches!(
                fail(Endpoint::Table, status, ""),
                Error::NotAuthorized { .. }
            ));
        }
        assert!(matches!(
            fail(Endpoint::Token, 400, r#"{"error":"invalid_client"}"#),
            Error::NotAuthorized { .. }
        ));
        assert!(matches!(
            fail(Endpoint::Table, 400, ""),
            Error::InvalidArgument { .. }
        ));
    }

    #[test]
    fn messages_name_the_request_but_not_credentials() {
        let e = fail(
            Endpoint::Table,
            403,
            &model("ForbiddenException", "token s3cr3t-token is not allowed"),
        );
        let shown = format!("{e} {e:?}");
        assert!(shown.contains("GET /v1/namespaces/db/tables/t"), "{shown}");
        assert!(shown.contains("ForbiddenException"), "{shown}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
        // a non-JSON body is shown (bounded), marked as such
        let long = format!("<html>{}</html>", "x".repeat(5000));
        let e = fail(Endpoint::Table, 502, &long);
        assert!(e.to_string().contains("not an Iceberg error body"), "{e}");
        assert!(e.to_string().len() < 1000, "{e}");
    }
}
