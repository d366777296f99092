//! Settings of the extension's allocator (mimalloc, the `#[global_allocator]` in `lib.rs`).
//!
//! Reading Parquet allocates and frees buffers of megabytes (column chunks, decompressed
//! pages, decoded columns). mimalloc returns freed memory to the OS after a delay, by
//! default with `MADV_DONTNEED`, so a later read faults every page in again and the kernel
//! zeroes it: at 10,000,000 rows, `to_arrow` of a table spent a quarter of its CPU time
//! there (docs/benchmarks.md, "Reading file tasks"). With `purge_decommits` off, mimalloc
//! purges with `MADV_FREE` instead: the kernel still takes the pages back when it needs
//! memory, but pages it has not taken are reused without a fault.

use std::os::raw::{c_int, c_long};

extern "C" {
    /// mimalloc's `mi_option_set` (in the static library `libmimalloc-sys` builds).
    fn mi_option_set(option: c_int, value: c_long);
}

/// `mi_option_purge_decommits` in mimalloc's `mi_option_e` (the same index in v2 and v3).
const MI_OPTION_PURGE_DECOMMITS: c_int = 5;

/// Applies the settings, unless the user chose otherwise through mimalloc's environment
/// variable (read by mimalloc itself at start-up).
pub fn configure() {
    if std::env::var_os("MIMALLOC_PURGE_DECOMMITS").is_none() {
        // SAFETY: mi_option_set takes any option index and value (it ignores indexes out
        // of range); it only stores the value, which mimalloc reads at its next purge.
        unsafe { mi_option_set(MI_OPTION_PURGE_DECOMMITS, 0) };
    }
}
