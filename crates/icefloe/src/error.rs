//! The one error type of the core library.
//!
//! Every variant that comes from bad input names the file (`file`, empty while the
//! input is not yet tied to a file; see [`Error::in_file`]) and the field, as a JSON
//! path such as `schemas[0].fields[2].type`. The Python layer maps each variant to
//! one exception class in `icefloe.errors` (a new variant needs a class: its own, or an
//! existing one that fits).

use std::fmt;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where a bad value was found: a file (or `<string>` for in-memory input) and a field path.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    pub file: String,
    pub field: String,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.file.is_empty(), self.field.is_empty()) {
            (true, true) => write!(f, "<input>"),
            (true, false) => write!(f, "field '{}'", self.field),
            (false, true) => write!(f, "{}", self.file),
            (false, false) => write!(f, "{}: field '{}'", self.file, self.field),
        }
    }
}

#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a file failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },

    /// The bytes are not valid JSON (or not valid gzip around JSON).
    #[error("{at}: invalid JSON: {message}")]
    InvalidJson { at: Location, message: String },

    /// Well-formed JSON that breaks the spec: a missing required field, a wrong
    /// JSON type, a value out of range, a reference to an id that does not exist.
    #[error("{at}: {message}")]
    InvalidMetadata { at: Location, message: String },

    /// A compressed part of a file (an Avro block, a Puffin blob or footer, gzip metadata)
    /// decompresses, or declares that it decompresses, to more than the limit allows (see
    /// [`crate::limits`]), or to more than its compressed bytes can hold. `at.field` names
    /// the block or blob.
    #[error("{at}: {message}")]
    DecompressionLimit { at: Location, message: String },

    /// A type string that is not an Iceberg type (Appendix C).
    #[error("{at}: unknown type '{type_string}'")]
    UnknownType { at: Location, type_string: String },

    /// Two fields of one schema share an id.
    #[error("{at}: field id {id} is used by both '{first}' and '{second}'")]
    FieldIdClash {
        at: Location,
        id: i32,
        first: String,
        second: String,
    },

    /// The format version is above what this library supports.
    #[error(
        "{at}: unsupported format version {version} (this version of icefloe supports 1 to {max})"
    )]
    UnsupportedFormatVersion {
        at: Location,
        version: i64,
        max: i32,
    },

    /// A caller passed a value that cannot be used (a bad transform width, a value of the
    /// wrong type for a transform, an unparsable literal).
    #[error("{message}")]
    InvalidArgument { message: String },

    /// A conditional write found the file changed: another writer replaced or deleted it
    /// since its version was read (HTTP 412 on `If-Match`). Re-read and retry.
    #[error("precondition failed on {path}: {message}")]
    PreconditionFailed { path: String, message: String },

    /// A lookup found nothing (a field name, a snapshot id, a ref).
    #[error("{message}")]
    NotFound { message: String },

    /// Valid input that this library does not (yet) handle, e.g. applying an unknown transform.
    #[error("{message}")]
    Unsupported { message: String },

    /// A namespace level or table name that cannot name a place in the warehouse (`..`,
    /// `/`, NUL, ...), refused where a catalog derives a location from it.
    #[error("invalid identifier {identifier}: {message}")]
    InvalidIdentifier { identifier: String, message: String },

    /// A catalog has no such namespace.
    #[error("namespace does not exist: {namespace}")]
    NoSuchNamespace { namespace: String },

    /// A catalog has no such table.
    #[error("table does not exist: {table}")]
    NoSuchTable { table: String },

    /// A catalog has no such view.
    #[error("view does not exist: {view}")]
    NoSuchView { view: String },

    /// A namespace, table or view of that name already exists.
    #[error("{message}")]
    AlreadyExists { message: String },

    /// A namespace cannot be dropped while it holds tables, views or namespaces.
    #[error("namespace is not empty: {namespace}")]
    NamespaceNotEmpty { namespace: String },

    /// The commit was not applied because the table changed since its base (another writer
    /// committed first, or a requirement no longer holds). Nothing is lost: the caller may
    /// refresh and retry.
    #[error("commit failed: {message}")]
    CommitFailed { message: String },

    /// The commit may or may not have been applied (e.g. the catalog's answer was lost).
    /// Files it wrote must not be deleted: they may be referenced.
    #[error("commit state unknown: {message}")]
    CommitStateUnknown { message: String },

    /// A catalog refused the caller's credentials (HTTP 401, 403 or 419, or an OAuth2 token
    /// endpoint's refusal). The message names the request, never the credentials.
    #[error("not authorized: {message}")]
    NotAuthorized { message: String },

    /// A catalog service failed or answered something that is not its protocol (a 5xx
    /// outside a commit, a body that is not the expected JSON, a response over the size
    /// limit). The message names the request.
    #[error("catalog service failure: {message}")]
    ServiceFailure { message: String },

    /// An operation's validation against the table failed (a file to replace is no longer
    /// live, a conflicting delete was committed, a schema change breaks a rule). Retrying
    /// the same operation cannot succeed.
    #[error("validation failed: {message}")]
    ValidationFailed { message: String },
}

impl Error {
    pub fn invalid_metadata(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidMetadata {
            at: Location {
                file: String::new(),
                field: field.into(),
            },
            message: message.into(),
        }
    }

    pub fn decompression_limit(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::DecompressionLimit {
            at: Location {
                file: String::new(),
                field: field.into(),
            },
            message: message.into(),
        }
    }

    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Error::InvalidArgument {
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Error::NotFound {
            message: message.into(),
        }
    }

    pub fn unsupported(message: impl Into<String>) -> Self {
        Error::Unsupported {
            message: message.into(),
        }
    }

    pub fn already_exists(message: impl Into<String>) -> Self {
        Error::AlreadyExists {
            message: message.into(),
        }
    }

    pub fn commit_failed(message: impl Into<String>) -> Self {
        Error::CommitFailed {
            message: message.into(),
        }
    }

    pub fn validation_failed(message: impl Into<String>) -> Self {
        Error::ValidationFailed {
            message: message.into(),
        }
    }

    pub fn io(path: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// The location of an input error, if this is one.
    pub fn location(&self) -> Option<&Location> {
        match self {
            Error::InvalidJson { at, .. }
            | Error::InvalidMetadata { at, .. }
            | Error::DecompressionLimit { at, .. }
            | Error::UnknownType { at, .. }
            | Error::FieldIdClash { at, .. }
            | Error::UnsupportedFormatVersion { at, .. } => Some(at),
            _ => None,
        }
    }

    fn location_mut(&mut self) -> Option<&mut Location> {
        match self {
            Error::InvalidJson { at, .. }
            | Error::InvalidMetadata { at, .. }
            | Error::DecompressionLimit { at, .. }
            | Error::UnknownType { at, .. }
            | Error::FieldIdClash { at, .. }
            | Error::UnsupportedFormatVersion { at, .. } => Some(at),
            _ => None,
        }
    }

    /// Ties an input error to the file it came from (only if no file is set yet).
    pub fn in_file(mut self, file: &str) -> Self {
        if let Some(at) = self.location_mut() {
            if at.file.is_empty() {
                at.file = file.to_string();
            }
        }
        self
    }

    /// Prefixes the field path of an input error with the path of its parent,
    /// so that errors raised deep in a parser name the full path.
    pub fn under(mut self, parent: &str) -> Self {
        if let Some(at) = self.location_mut() {
            if !parent.is_empty() {
                at.field = if at.field.is_empty() {
                    parent.to_string()
                } else if at.field.starts_with('[') {
                    format!("{parent}{}", at.field)
                } else {
                    format!("{parent}.{}", at.field)
                };
            }
        }
        self
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_file_and_field() {
        let e = Error::invalid_metadata("format-version", "missing")
            .under("")
            .in_file("/t/v1.metadata.json");
        assert_eq!(
            e.to_string(),
            "/t/v1.metadata.json: field 'format-version': missing"
        );
        let e = Error::invalid_metadata("type", "bad")
            .under("fields[2]")
            .under("schemas[0]");
        assert_eq!(e.location().unwrap().field, "schemas[0].fields[2].type");
        // a file already set is kept
        let e = e.in_file("a.json").in_file("b.json");
        assert_eq!(e.location().unwrap().file, "a.json");
    }
}
