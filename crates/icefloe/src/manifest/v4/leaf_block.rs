//! Reading a leaf entry by the Avro block a plan found it in ([`LeafBlock`]), without
//! reading the whole leaf: a commit given its plan's tree positions
//! ([`crate::commit::SnapshotProducer::data_file_position`]) reads the leaf's bytes up to
//! the end of the entry's block with one ranged read, and decodes that block (the blocks
//! before it are skipped by their headers, or, in an upgraded table's v3 manifest whose
//! entries inherit first row ids, decoded with the minimal projection to count rows).
//!
//! Why the prefix and not the header and the block alone: the block's first ordinal is
//! the sum of the object counts of every block before it, which only their headers tell.
//! Taking it from the plan would trust the caller for the one number a manifest DV is
//! addressed by (a wrong one removes another file's entry), so the commit reads the
//! headers it needs. The cost is the leaf's bytes up to the entry, not the whole leaf.
//!
//! The span is checked, never trusted: the prefix must parse as the leaf's header and
//! whole blocks (sync markers, object counts), its last block must start at the span's
//! offset, and it must hold every ordinal asked for. Anything else is reported as `None`
//! and the caller reads the leaf whole, whose errors (a corrupt leaf) are the typed
//! errors of [`super::tree::read_leaf_entries`], naming the leaf.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::tree::{leaf_entries_at, live_items, not_removed, LeafBlock, LeafItem, TreePosition};
use super::{TrackedFile, V4Layout};
use crate::error::Result;
use crate::io::FileIO;
use crate::manifest::avro::Container;

/// The spans of the blocks of a leaf (or a v3 manifest) from its bytes: each block's
/// first ordinal and its [`LeafBlock`], in file order.
pub fn leaf_blocks(bytes: &[u8]) -> Result<Vec<(i64, LeafBlock)>> {
    let c = Container::open(bytes)?;
    Ok(c.block_spans()?
        .into_iter()
        .map(|(first, offset, length)| (first as i64, LeafBlock { offset, length }))
        .collect())
}

/// The block of `blocks` ([`leaf_blocks`]) holding entry `ordinal`.
pub fn block_of(blocks: &[(i64, LeafBlock)], ordinal: i64) -> Option<LeafBlock> {
    let i = blocks.partition_point(|(first, _)| *first <= ordinal);
    i.checked_sub(1).map(|i| blocks[i].1)
}

/// The leaf's bytes up to the end of `block`: one ranged read. A span past the file's
/// end is the FileIO's short-read error.
pub fn fetch_prefix(io: &dyn FileIO, location: &str, block: LeafBlock) -> Result<Vec<u8>> {
    let end = block.offset.checked_add(block.length).ok_or_else(|| {
        crate::error::Error::invalid_argument(format!(
            "{location}: block span {}+{} overflows",
            block.offset, block.length
        ))
    })?;
    io.read_range(location, 0, end)
}

/// The live entries at `ordinals` of `leaf` (its root entry), as
/// [`super::tree::read_leaf_entries`] gives them, from `prefix` ([`fetch_prefix`] of
/// `block`). `None` when the prefix is not what the span says (not whole blocks of a
/// leaf, its last block elsewhere, an ordinal past it): the caller then reads the leaf
/// whole. A manifest DV that does not decode is an error, as with the whole read.
pub fn entries_in_prefix(
    prefix: &[u8],
    partitioning: &V4Layout,
    leaf: &TrackedFile,
    ordinals: &[usize],
    block: LeafBlock,
) -> Result<Option<Vec<LeafItem>>> {
    let wanted = not_removed(leaf, ordinals)?;
    if wanted.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let Ok(blocks) = leaf_blocks(prefix) else {
        return Ok(None);
    };
    if blocks.last().map(|(_, b)| *b) != Some(block) {
        return Ok(None);
    }
    let Ok(entries) = leaf_entries_at(prefix, partitioning, leaf, &wanted) else {
        return Ok(None);
    };
    if entries.len() != wanted.len() {
        return Ok(None);
    }
    Ok(Some(live_items(leaf, entries)))
}

/// [`fetch_prefix`] then [`entries_in_prefix`]; a failed read is `None` too.
pub fn read_leaf_entries_in_block(
    io: &dyn FileIO,
    partitioning: &V4Layout,
    leaf: &TrackedFile,
    ordinals: &[usize],
    block: LeafBlock,
) -> Result<Option<Vec<LeafItem>>> {
    match fetch_prefix(io, &leaf.location, block) {
        Ok(prefix) => entries_in_prefix(&prefix, partitioning, leaf, ordinals, block),
        Err(_) => Ok(None),
    }
}

/// At most this many leaves' prefixes are read ahead by [`fetch_prefixes`]: a commit
/// naming files in more leaves reads the others when it reaches them, as before.
pub const MAX_PREFETCHED_LEAVES: usize = 16;

/// The leaf prefixes a commit given `positions` will read: each leaf named with a block,
/// with the block that ends last among its positions (one ranged read covers them all),
/// at most [`MAX_PREFETCHED_LEAVES`], in leaf-name order.
pub fn prefix_spans<'a>(
    positions: impl IntoIterator<Item = &'a TreePosition>,
) -> Vec<(Arc<str>, LeafBlock)> {
    let mut last: BTreeMap<Arc<str>, LeafBlock> = BTreeMap::new();
    for p in positions {
        if let TreePosition::Leaf {
            manifest,
            block: Some(b),
            ..
        } = p
        {
            let end = |b: &LeafBlock| b.offset.saturating_add(b.length);
            last.entry(Arc::clone(manifest))
                .and_modify(|cur| {
                    if end(b) > end(cur) {
                        *cur = *b;
                    }
                })
                .or_insert(*b);
        }
    }
    last.into_iter().take(MAX_PREFETCHED_LEAVES).collect()
}

/// [`fetch_prefix`] of each span, at once (a thread a leaf, at most
/// [`MAX_PREFETCHED_LEAVES`]), by leaf location: the span and the prefix, `None` when the
/// read failed (a span past the leaf's end, a leaf gone): the commit then reads that leaf
/// whole, and reports its errors as before.
pub fn fetch_prefixes(
    io: &dyn FileIO,
    spans: &[(Arc<str>, LeafBlock)],
) -> HashMap<String, (LeafBlock, Option<Vec<u8>>)> {
    let read = crate::parallel::map_all(MAX_PREFETCHED_LEAVES, spans, |(leaf, block)| {
        fetch_prefix(io, leaf, *block).ok()
    });
    spans
        .iter()
        .zip(read)
        .map(|((leaf, block), bytes)| (leaf.to_string(), (*block, bytes.flatten())))
        .collect()
}
