//! Puffin files and the deletion vectors (v3) stored in them.
//!
//! [`file`] reads and writes the Puffin container; [`dv`] is the `deletion-vector-v1`
//! blob: a set of deleted row positions of one data file.

pub mod dv;
pub mod file;

pub use dv::{
    merge_position_deletes, read_deletion_vector, read_deletion_vector_blob,
    read_entry_deletion_vector, write_deletion_vectors, DeletionVector, DvBlobRef, DvEntry,
    DELETION_VECTOR_V1,
};
pub use file::{
    BlobMetadata, CompressionCodec, FileMetadata, NewBlob, PuffinReader, PuffinWriter,
    WrittenPuffin,
};

#[cfg(test)]
mod tests;
