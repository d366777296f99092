//! Counters of the executor-side reading in this JVM, for the connector's tests of
//! cancellation and memory (tests/test_spark_connector_limits.py): how many readers are
//! open, how many reading threads run, how many batches and rows they handed to Spark, and
//! the bytes this library has allocated (now and at its peak).
//!
//! In a Spark `local` session the executors are the driver's JVM, so Python reaches these
//! through py4j (`io.icefloe.spark.jni.NativeReader.stats()`); a killed task must bring
//! the open readers and reading threads back to zero, and a task reading a big file must
//! keep the library's allocations bounded.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

use jni::objects::{JClass, JString};
use jni::EnvUnowned;
use serde_json::json;

use crate::errors::{Outcome, ThrowIcefloe};

static OPEN_READERS: AtomicI64 = AtomicI64::new(0);
static BATCHES: AtomicI64 = AtomicI64::new(0);
static ROWS: AtomicI64 = AtomicI64::new(0);
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
static PEAK_ALLOCATED: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting the bytes live and their peak. Relaxed atomics: the
/// counts are for observation, not synchronisation. Batches handed to Java through the C
/// Data Interface stay counted until Java releases them, which is what bounds a task's
/// native memory.
pub(crate) struct CountingAllocator;

// SAFETY: every call is forwarded to `System` with the caller's layout and pointer; the
// counters do not touch the memory.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as given
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            added(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as given
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            added(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as given
        unsafe { System.dealloc(ptr, layout) };
        ALLOCATED.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as given
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            ALLOCATED.fetch_sub(layout.size(), Ordering::Relaxed);
            added(new_size);
        }
        p
    }
}

fn added(size: usize) {
    let now = ALLOCATED.fetch_add(size, Ordering::Relaxed) + size;
    PEAK_ALLOCATED.fetch_max(now, Ordering::Relaxed);
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Counts an open reader from its creation to its drop (the stream's release).
pub(crate) struct OpenReader;

impl OpenReader {
    pub(crate) fn new() -> OpenReader {
        OPEN_READERS.fetch_add(1, Ordering::SeqCst);
        OpenReader
    }

    /// A batch of `rows` rows handed to Spark.
    pub(crate) fn batch(&self, rows: usize) {
        BATCHES.fetch_add(1, Ordering::SeqCst);
        ROWS.fetch_add(i64::try_from(rows).unwrap_or(i64::MAX), Ordering::SeqCst);
    }
}

impl Drop for OpenReader {
    fn drop(&mut self) {
        OPEN_READERS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The counters as a JSON object: `open-readers`, `reading-threads` (the core's reading
/// threads of every reader in the process), `batches` and `rows` handed out since the
/// library was loaded, `allocated-bytes` now and `peak-allocated-bytes` since the last
/// reset.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_readerStats<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JString<'local> {
    env.with_env(|env| -> Outcome<JString<'local>> {
        let stats = json!({
            "open-readers": OPEN_READERS.load(Ordering::SeqCst),
            "reading-threads": icefloe::read::reading_threads(),
            "batches": BATCHES.load(Ordering::SeqCst),
            "rows": ROWS.load(Ordering::SeqCst),
            "allocated-bytes": ALLOCATED.load(Ordering::Relaxed),
            "peak-allocated-bytes": PEAK_ALLOCATED.load(Ordering::Relaxed),
        });
        Ok(JString::from_str(env, stats.to_string())?)
    })
    .resolve::<ThrowIcefloe>()
}

/// Starts a new peak: the bytes allocated now.
#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_resetPeakAllocated<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
) {
    env.with_env(|_| -> Outcome<()> {
        PEAK_ALLOCATED.store(ALLOCATED.load(Ordering::Relaxed), Ordering::Relaxed);
        Ok(())
    })
    .resolve::<ThrowIcefloe>()
}
