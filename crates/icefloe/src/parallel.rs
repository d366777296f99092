//! Running indexed work on plain threads (no global pool: principle 3 of the design), shared
//! by planning and the metadata tables, which both read a snapshot's manifests at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::error::{Error, Result};

/// Runs `f(0..n)` on up to `threads` threads (at least one, at most `n`); results keep the
/// index order. The first error stops the handing out of further work and is returned.
/// `panicked` and `stopped` are the errors for a thread that panicked and for work left
/// undone (which an error before it explains, so it is not expected to be seen).
pub(crate) fn map_indexed<T: Send>(
    threads: usize,
    n: usize,
    panicked: &str,
    stopped: &str,
    f: impl Fn(usize) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Result<T>>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= n {
            break;
        }
        let r = f(i);
        let failed = r.is_err();
        if let Some(Ok(mut slot)) = slots.get(i).map(|s| s.lock()) {
            *slot = Some(r);
        }
        if failed {
            next.store(n, Ordering::Relaxed);
        }
    };
    let threads = threads.min(n).max(1);
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(work);
        }
        work();
    });
    let mut out = Vec::with_capacity(n);
    for slot in slots {
        let r = slot
            .into_inner()
            .map_err(|_| Error::unsupported(panicked.to_string()))?;
        match r {
            Some(r) => out.push(r?),
            // not run because another item failed; that error comes first
            None => continue,
        }
    }
    if out.len() < n {
        return Err(Error::unsupported(stopped.to_string()));
    }
    Ok(out)
}

/// Runs `f` on every item on up to `threads` threads (at least one, at most the number of
/// items) and returns the results in the items' order. Unlike [`map_indexed`] nothing stops
/// early: a failure of one item is its result, the others still run (deletes that are best
/// effort). `None` marks an item whose worker panicked before reaching it (library code
/// never panics, so it is not expected).
pub(crate) fn map_all<T: Sync, R: Send>(
    threads: usize,
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
) -> Vec<Option<R>> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(|item| Some(f(item))).collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(item) = items.get(i) else { break };
        let r = f(item);
        if let Some(Ok(mut slot)) = slots.get(i).map(|s| s.lock()) {
            *slot = Some(r);
        }
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        work();
        for h in handles {
            // a worker that panicked leaves its slot empty: reported as `None`
            let _ = h.join();
        }
    });
    slots
        .into_iter()
        .map(|slot| slot.into_inner().ok().flatten())
        .collect()
}
