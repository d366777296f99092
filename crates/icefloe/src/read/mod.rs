//! Reading data files into Arrow: the executor side of a scan.
//!
//! - [`filter`]: a task's residual filter evaluated on Arrow record batches (a keep mask).
//! - [`equality_deletes`]: the rows of a task's equality delete files as a set, and the keep
//!   mask of a data batch against it.

pub mod equality_deletes;
pub mod filter;
