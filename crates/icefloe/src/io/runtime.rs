//! The small async runtime an object-store FileIO owns. The public API stays synchronous
//! (DESIGN.md, principle 3): each call spawns its future on this runtime and blocks the
//! calling thread until it is done. Spawning (rather than `Runtime::block_on`) makes the
//! call safe from any thread, including one that runs another tokio runtime, where
//! `block_on` would panic.

use std::future::Future;

use crate::error::{Error, Result};

/// Two worker threads: object-store calls are I/O-bound, and the machine's CPU belongs to
/// decoding and planning (which never run here).
const WORKER_THREADS: usize = 2;

pub(crate) struct IoRuntime {
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for IoRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IoRuntime")
    }
}

impl IoRuntime {
    pub(crate) fn new() -> Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(WORKER_THREADS)
            .thread_name("icefloe-io")
            .enable_all()
            .build()
            .map_err(|e| Error::io("<object store runtime>", e))?;
        Ok(IoRuntime {
            runtime: Some(runtime),
        })
    }

    /// Runs `future` to completion on this runtime, blocking the calling thread.
    pub(crate) fn block_on<F>(&self, location: &str, future: F) -> Result<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let runtime = self.runtime.as_ref().ok_or_else(|| {
            Error::io(
                location,
                std::io::Error::other("the object store runtime was shut down"),
            )
        })?;
        let handle = runtime.spawn(future);
        futures::executor::block_on(handle).map_err(|e| {
            Error::io(
                location,
                std::io::Error::other(format!("object store task failed: {e}")),
            )
        })
    }
}

impl Drop for IoRuntime {
    fn drop(&mut self) {
        // Dropping a runtime from inside another async context panics; shutting it down in
        // the background does not, and in-flight calls have all returned by now.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}
