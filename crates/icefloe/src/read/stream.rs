//! The tasks of a plan read in parallel on plain threads (no runtime), their batches
//! handed out in the plan's order.
//!
//! Workers take tasks in order; each task's batches go through a small channel of its own,
//! and the consumer drains task after task. A worker starts a task only while it is within
//! a window of tasks ahead of the one being consumed, so memory stays bounded whatever the
//! size of the plan. Dropping the reader stops the workers (a cancelled query stops
//! reading).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};

use crate::error::{Error, Result};
use crate::io::FileIO;

use super::context::PlanContext;
use super::options::ReadOptions;
use super::task::ReadTask;
use super::task_reader::read_task;

/// Batches a task may have decoded ahead of the consumer.
const BATCHES_AHEAD: usize = 2;

/// Reading threads alive in this process, over all readers: a cancelled query's readers
/// must get back to none (the JVM connector's tests watch it, see `icefloe-jni`).
static READING_THREADS: AtomicUsize = AtomicUsize::new(0);

/// How many reading threads of [`PlanReader`]s are alive in this process (a worker counts
/// from its start to its return, whether it read to the end or was cancelled).
pub fn reading_threads() -> usize {
    READING_THREADS.load(Ordering::SeqCst)
}

/// Counts a worker in [`READING_THREADS`] while it lives (a panic unwinding out of it too).
struct ThreadCount;

impl ThreadCount {
    fn start() -> ThreadCount {
        READING_THREADS.fetch_add(1, Ordering::SeqCst);
        ThreadCount
    }
}

impl Drop for ThreadCount {
    fn drop(&mut self) {
        READING_THREADS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A task's batches, then `None` when it is read (a channel closed without it means the
/// worker died: an error, never silently fewer rows).
type Batches = Receiver<Result<Option<RecordBatch>>>;

struct Shared {
    ctx: Arc<PlanContext>,
    tasks: Vec<ReadTask>,
    io: Arc<dyn FileIO>,
    batch_size: usize,
    next: AtomicUsize,
    cancelled: AtomicBool,
    /// The index of the task being consumed, and how far ahead workers may start.
    consumed: Mutex<usize>,
    advanced: Condvar,
    window: usize,
}

/// The batches of a plan's tasks, in order. An iterator of `Result<RecordBatch>` with the
/// core's typed errors ([`PlanReader::next_batch`]) and an arrow `RecordBatchReader`
/// (errors wrapped as `ArrowError::ExternalError`).
pub struct PlanReader {
    shared: Arc<Shared>,
    schema: SchemaRef,
    registrations: Receiver<(usize, Batches)>,
    arrived: BTreeMap<usize, Batches>,
    current: usize,
    done: bool,
}

impl PlanReader {
    pub(crate) fn start(
        ctx: Arc<PlanContext>,
        tasks: Vec<ReadTask>,
        io: Arc<dyn FileIO>,
        options: &ReadOptions,
    ) -> PlanReader {
        let threads = options.threads(tasks.len());
        let schema = Arc::clone(&ctx.out_schema);
        let shared = Arc::new(Shared {
            ctx,
            tasks,
            io,
            batch_size: options.batch_size.max(1),
            next: AtomicUsize::new(0),
            cancelled: AtomicBool::new(false),
            consumed: Mutex::new(0),
            advanced: Condvar::new(),
            window: threads * 2,
        });
        let (register, registrations) = channel();
        if !shared.tasks.is_empty() {
            for _ in 0..threads {
                let shared = Arc::clone(&shared);
                let register = register.clone();
                // counted before the spawn, so a reader never looks idle while its threads start
                let count = ThreadCount::start();
                std::thread::spawn(move || {
                    let _count = count;
                    work(&shared, &register)
                });
            }
        }
        PlanReader {
            shared,
            schema,
            registrations,
            arrived: BTreeMap::new(),
            current: 0,
            done: false,
        }
    }

    /// The next batch, `None` at the end. After an error the reader ends.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        while !self.done && self.current < self.shared.tasks.len() {
            let rx = match self.arrived.remove(&self.current) {
                Some(rx) => rx,
                None => match self.registrations.recv() {
                    Ok((i, rx)) => {
                        self.arrived.insert(i, rx);
                        continue;
                    }
                    Err(_) => {
                        self.done = true;
                        return Err(Error::invalid_argument(
                            "the reading threads stopped before the last task",
                        ));
                    }
                },
            };
            match rx.recv() {
                Ok(Ok(Some(batch))) => {
                    self.arrived.insert(self.current, rx);
                    return Ok(Some(batch));
                }
                Ok(Err(e)) => {
                    self.finish();
                    return Err(e);
                }
                Err(_) => {
                    self.finish();
                    return Err(Error::invalid_argument(format!(
                        "the thread reading {} stopped before its end",
                        self.shared
                            .tasks
                            .get(self.current)
                            .map_or("", |t| t.file_path.as_str())
                    )));
                }
                Ok(Ok(None)) => {
                    // the task is done: on to the next
                    self.current += 1;
                    if let Ok(mut consumed) = self.shared.consumed.lock() {
                        *consumed = self.current;
                    }
                    self.shared.advanced.notify_all();
                }
            }
        }
        self.done = true;
        Ok(None)
    }

    fn finish(&mut self) {
        self.done = true;
        self.shared.cancelled.store(true, Ordering::SeqCst);
        self.shared.advanced.notify_all();
        self.arrived.clear();
    }
}

impl Drop for PlanReader {
    fn drop(&mut self) {
        self.finish();
    }
}

fn work(shared: &Shared, register: &Sender<(usize, Batches)>) {
    loop {
        if shared.cancelled.load(Ordering::SeqCst) {
            return;
        }
        let i = shared.next.fetch_add(1, Ordering::SeqCst);
        let Some(task) = shared.tasks.get(i) else {
            return;
        };
        // wait until task i is within the window ahead of the consumer
        {
            let Ok(mut consumed) = shared.consumed.lock() else {
                return;
            };
            while i >= *consumed + shared.window && !shared.cancelled.load(Ordering::SeqCst) {
                consumed = match shared.advanced.wait(consumed) {
                    Ok(c) => c,
                    Err(_) => return,
                };
            }
        }
        if shared.cancelled.load(Ordering::SeqCst) {
            return;
        }
        let (tx, rx) = sync_channel(BATCHES_AHEAD);
        if register.send((i, rx)).is_err() {
            return;
        }
        let mut emit = |batch: RecordBatch| {
            !shared.cancelled.load(Ordering::SeqCst) && tx.send(Ok(Some(batch))).is_ok()
        };
        // a failed send means the reader was dropped: the loop then stops at the top
        // arrow-rs's Parquet decoder can panic on damaged pages (an RLE run past its
        // buffer): that is the file's fault, so it becomes the file's error, not a crash
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            read_task(task, &shared.ctx, &shared.io, shared.batch_size, &mut emit)
        }))
        .unwrap_or_else(|panic| Err(decoder_panic(&task.file_path, panic.as_ref())));
        let _ = match read {
            Ok(()) => tx.send(Ok(None)),
            Err(e) => tx.send(Err(e)),
        };
    }
}

fn decoder_panic(location: &str, panic: &(dyn std::any::Any + Send)) -> Error {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    Error::invalid_metadata(
        "",
        format!("cannot read {location}: the Parquet decoder failed on it ({message})"),
    )
    .in_file(location)
}

impl Iterator for PlanReader {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
            .map_err(|e| ArrowError::ExternalError(Box::new(e)))
            .transpose()
    }
}

impl RecordBatchReader for PlanReader {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
}
