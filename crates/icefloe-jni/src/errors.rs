//! Errors and panics as typed Java exceptions.

use std::any::Any;
use std::fmt;

use jni::errors::ErrorPolicy;
use jni::strings::JNIString;
use jni::Env;

/// What a native method can fail with: an icefloe error, or a JNI failure (a Java
/// exception already pending, a null argument, a failed allocation).
#[derive(Debug)]
pub enum Failure {
    Core(icefloe::Error),
    Jni(jni::errors::Error),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Core(e) => write!(f, "{e}"),
            Failure::Jni(e) => write!(f, "JNI: {e}"),
        }
    }
}

impl std::error::Error for Failure {}

impl From<icefloe::Error> for Failure {
    fn from(e: icefloe::Error) -> Self {
        Failure::Core(e)
    }
}

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Self {
        Failure::Jni(e)
    }
}

/// The result of the body of a native method.
pub type Outcome<T> = std::result::Result<T, Failure>;

const BASE: &str = "io/icefloe/spark/jni/IcefloeException";

/// The Java exception class of a core error: the Spark layer maps the not-found and
/// already-exists ones to Spark's analysis exceptions.
fn exception_class(e: &icefloe::Error) -> &'static str {
    use icefloe::Error as E;
    match e {
        E::NoSuchTable { .. } | E::NoSuchView { .. } => {
            "io/icefloe/spark/jni/IcefloeNoSuchTableException"
        }
        E::NoSuchNamespace { .. } => "io/icefloe/spark/jni/IcefloeNoSuchNamespaceException",
        E::AlreadyExists { .. } => "io/icefloe/spark/jni/IcefloeAlreadyExistsException",
        E::NamespaceNotEmpty { .. } => "io/icefloe/spark/jni/IcefloeNamespaceNotEmptyException",
        E::Unsupported { .. } => "io/icefloe/spark/jni/IcefloeUnsupportedException",
        E::ValidationFailed { .. } => "io/icefloe/spark/jni/IcefloeValidationException",
        E::CommitFailed { .. } => "io/icefloe/spark/jni/IcefloeCommitFailedException",
        E::CommitStateUnknown { .. } => "io/icefloe/spark/jni/IcefloeCommitStateUnknownException",
        E::InvalidArgument { .. } | E::InvalidIdentifier { .. } => {
            "io/icefloe/spark/jni/IcefloeInvalidArgumentException"
        }
        _ => BASE,
    }
}

fn throw(env: &mut Env<'_>, class: &str, message: &str) {
    // a failure to throw leaves the JNI error pending, which Java sees instead
    let _ = env.throw_new(JNIString::new(class), JNIString::new(message));
}

/// The error policy of every native method: a pending Java exception wins; an icefloe
/// error becomes its typed exception with the error's message; a JNI failure and a panic
/// become `IcefloeException`. The method then returns its type's default (0, null).
#[derive(Debug, Default)]
pub struct ThrowIcefloe;

impl<T: Default> ErrorPolicy<T, Failure> for ThrowIcefloe {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut Self::Captures<'unowned_env_local, 'native_method>,
        err: Failure,
    ) -> jni::errors::Result<T> {
        if env.exception_check() {
            return Ok(T::default());
        }
        match &err {
            Failure::Core(e) => throw(env, exception_class(e), &e.to_string()),
            Failure::Jni(e) => throw(env, BASE, &format!("icefloe JNI call failed: {e}")),
        }
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut Self::Captures<'unowned_env_local, 'native_method>,
        payload: Box<dyn Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        let message = payload
            .downcast_ref::<&'static str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        // the payload is dropped on the way out; a panicking drop would abort, so leak it
        std::mem::forget(payload);
        if !env.exception_check() {
            throw(
                env,
                BASE,
                &format!("icefloe native code panicked: {message}"),
            );
        }
        Ok(T::default())
    }
}
