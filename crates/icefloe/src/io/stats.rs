//! Request and byte counters of the object-store FileIOs, so that a benchmark (or a user)
//! can see what a plan or a commit costs in requests, not only in time.

use std::sync::atomic::{AtomicU64, Ordering};

/// What a FileIO has sent and received since it was made (or since
/// [`super::FileIO::reset_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoStats {
    /// Calls to the store: one per GET, HEAD, PUT, DELETE and LIST page, and for a
    /// multipart upload its create, parts and complete. Retries the HTTP client makes
    /// after a throttling or 5xx answer are not counted (the client does not report them).
    pub requests: u64,
    /// Body bytes received by reads.
    pub bytes_read: u64,
    /// Body bytes sent by writes.
    pub bytes_written: u64,
    /// Reads answered from the FileIO's manifest cache (no request sent).
    pub cache_hits: u64,
}

/// The atomic form of [`IoStats`], updated by concurrent planning threads.
#[derive(Debug, Default)]
pub(crate) struct IoCounters {
    requests: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
    cache_hits: AtomicU64,
}

impl IoCounters {
    pub(crate) fn requests(&self, n: u64) {
        self.requests.fetch_add(n, Ordering::Relaxed);
    }
    pub(crate) fn read(&self, bytes: u64) {
        self.bytes_read.fetch_add(bytes, Ordering::Relaxed);
    }
    pub(crate) fn written(&self, bytes: u64) {
        self.bytes_written.fetch_add(bytes, Ordering::Relaxed);
    }
    pub(crate) fn cache_hit(&self) {
        self.cache_hits.fetch_add(1, Ordering::Relaxed);
    }
    pub(crate) fn snapshot(&self) -> IoStats {
        IoStats {
            requests: self.requests.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            bytes_written: self.bytes_written.load(Ordering::Relaxed),
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
        }
    }
    pub(crate) fn reset(&self) {
        for c in [
            &self.requests,
            &self.bytes_read,
            &self.bytes_written,
            &self.cache_hits,
        ] {
            c.store(0, Ordering::Relaxed);
        }
    }
}
