//! Maps core errors to the exception classes of `icefloe.errors` (defined in Python so
//! they are documented and importable without the native module).

use icefloe::Error;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// The `icefloe.errors` class for an error kind.
fn class_name(e: &Error) -> &'static str {
    match e {
        Error::Io { .. } => "IcefloeIOError",
        Error::InvalidJson { .. } => "InvalidJsonError",
        Error::InvalidMetadata { .. } => "InvalidMetadataError",
        // a file this reader refuses to decompress: invalid input, with no class of its own
        Error::DecompressionLimit { .. } => "InvalidInputError",
        Error::UnknownType { .. } => "UnknownTypeError",
        Error::FieldIdClash { .. } => "FieldIdClashError",
        Error::UnsupportedFormatVersion { .. } => "UnsupportedFormatVersionError",
        Error::InvalidArgument { .. } => "InvalidArgumentError",
        Error::NotFound { .. } => "NotFoundError",
        Error::Unsupported { .. } => "UnsupportedError",
        Error::InvalidIdentifier { .. } => "InvalidIdentifierError",
        Error::NoSuchNamespace { .. } => "NoSuchNamespaceError",
        Error::NoSuchTable { .. } => "NoSuchTableError",
        Error::NoSuchView { .. } => "NoSuchViewError",
        Error::AlreadyExists { .. } => "AlreadyExistsError",
        Error::NamespaceNotEmpty { .. } => "NamespaceNotEmptyError",
        Error::CommitFailed { .. } => "CommitFailedError",
        Error::CommitStateUnknown { .. } => "CommitStateUnknownError",
        Error::ValidationFailed { .. } => "ValidationError",
        Error::PreconditionFailed { .. } => "PreconditionFailedError",
        _ => "IcefloeError",
    }
}

/// Converts a core error into the matching Python exception.
pub fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let (file, field) = match (&e, e.location()) {
        (Error::Io { path, .. } | Error::PreconditionFailed { path, .. }, _) => {
            (Some(path.clone()), None)
        }
        (_, Some(at)) => (
            Some(at.file.clone()).filter(|s| !s.is_empty()),
            Some(at.field.clone()).filter(|s| !s.is_empty()),
        ),
        _ => (None, None),
    };
    let message = e.to_string();
    let made = py
        .import("icefloe.errors")
        .and_then(|m| m.getattr(class_name(&e)))
        .and_then(|cls| cls.call1((message.clone(), file, field)));
    match made {
        Ok(instance) => PyErr::from_value(instance),
        // Only if the Python package itself is broken; still never lose the message.
        Err(_) => PyRuntimeError::new_err(message),
    }
}

/// Extension to turn `icefloe::Result` into `PyResult` at the boundary.
pub trait IntoPyResult<T> {
    fn py(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for icefloe::Result<T> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}
