//! JNI bindings of icefloe for the Spark DataSource V2 connector (`jvm/icefloe-spark`,
//! class `io.icefloe.spark.jni.Native`). As `icefloe-py`, this crate holds conversions and
//! error mapping only: catalogs, planning and reading are the core's.
//!
//! The interface is kept narrow so that little JNI is needed on either side: requests and
//! answers are JSON strings, task groups are byte arrays, and what lives across calls
//! (an open catalog, a loaded table, a plan) is a handle, a pointer to a boxed Rust value
//! that Java frees exactly once with the matching `*Close` method.
//!
//! No panic crosses into the JVM: every entry point runs inside `EnvUnowned::with_env`
//! (which catches unwinding), and [`ThrowIcefloe`] turns an error or a panic into a typed
//! Java exception (`io.icefloe.spark.jni.IcefloeException` and its subclasses) carrying
//! the core error's message.

mod aggregate;
mod catalog;
mod ddl;
mod errors;
mod metadata_columns;
mod plan;
mod read;
mod rowlevel;
mod staged;
mod stats;
mod write;

pub use errors::Failure;
