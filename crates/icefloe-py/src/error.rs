//! Maps core errors to the exception classes of `icefloe.errors` (defined in Python so
//! they are documented and importable without the native module; looked up once).

use icefloe::Error;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// The classes of `icefloe.errors` that core errors map to, in the order of `class_of`.
const CLASSES: [&str; 22] = [
    "IcefloeError",
    "IcefloeIOError",
    "InvalidJsonError",
    "InvalidMetadataError",
    "InvalidInputError",
    "UnknownTypeError",
    "FieldIdClashError",
    "UnsupportedFormatVersionError",
    "InvalidArgumentError",
    "NotFoundError",
    "UnsupportedError",
    "InvalidIdentifierError",
    "NoSuchNamespaceError",
    "NoSuchTableError",
    "NoSuchViewError",
    "AlreadyExistsError",
    "NamespaceNotEmptyError",
    "CommitFailedError",
    "CommitStateUnknownError",
    "ValidationError",
    "NotAuthorizedError",
    "ServiceFailureError",
];
const PRECONDITION_FAILED: &str = "PreconditionFailedError";
/// An I/O error whose kind is `PermissionDenied`: the store refused the credentials.
const ACCESS_DENIED: &str = "AccessDeniedError";

/// The classes, looked up in `icefloe.errors` once per process (`CLASSES`, then
/// `PRECONDITION_FAILED` and `ACCESS_DENIED`).
static LOADED: PyOnceLock<Vec<Py<PyAny>>> = PyOnceLock::new();

/// The index in `CLASSES` (or `CLASSES.len()` for `PRECONDITION_FAILED`, one more for
/// `ACCESS_DENIED`) for an error kind.
fn class_of(e: &Error) -> usize {
    match e {
        Error::Io { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied => {
            CLASSES.len() + 1
        }
        Error::Io { .. } => 1,
        Error::InvalidJson { .. } => 2,
        Error::InvalidMetadata { .. } => 3,
        // a file this reader refuses to decompress: invalid input, with no class of its own
        Error::DecompressionLimit { .. } => 4,
        Error::UnknownType { .. } => 5,
        Error::FieldIdClash { .. } => 6,
        Error::UnsupportedFormatVersion { .. } => 7,
        Error::InvalidArgument { .. } => 8,
        Error::NotFound { .. } => 9,
        Error::Unsupported { .. } => 10,
        Error::InvalidIdentifier { .. } => 11,
        Error::NoSuchNamespace { .. } => 12,
        Error::NoSuchTable { .. } => 13,
        Error::NoSuchView { .. } => 14,
        Error::AlreadyExists { .. } => 15,
        Error::NamespaceNotEmpty { .. } => 16,
        Error::CommitFailed { .. } => 17,
        Error::CommitStateUnknown { .. } => 18,
        Error::ValidationFailed { .. } => 19,
        Error::NotAuthorized { .. } => 20,
        Error::ServiceFailure { .. } => 21,
        Error::PreconditionFailed { .. } => CLASSES.len(),
        _ => 0,
    }
}

fn classes(py: Python<'_>) -> PyResult<&'static [Py<PyAny>]> {
    LOADED
        .get_or_try_init(py, || {
            let module = py.import("icefloe.errors")?;
            CLASSES
                .iter()
                .chain([&PRECONDITION_FAILED, &ACCESS_DENIED])
                .map(|name| module.getattr(*name).map(Bound::unbind))
                .collect::<PyResult<Vec<_>>>()
        })
        .map(Vec::as_slice)
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
    // `class_of` indexes `CLASSES` and the two after it, which `classes` loads
    let made = classes(py).and_then(|all| match all.get(class_of(&e)) {
        Some(cls) => cls.bind(py).call1((message.clone(), file, field)).map(Some),
        None => Ok(None),
    });
    match made {
        Ok(Some(instance)) => PyErr::from_value(instance),
        Ok(None) => PyRuntimeError::new_err(message),
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
