//! Block pools: the cached free blocks of one size class, ordered for
//! best-fit search, and the unmapped address space of expandable segments,
//! ordered by address.

use std::collections::BTreeSet;

use expanse_device::StreamId;

use crate::block::{Block, BlockId};

/// Key of a free block: best fit is the first key at or above
/// `(stream, size, 0)`.
pub type FreeKey = (StreamId, u64, u64, BlockId);
/// Key of an unmapped block: lowest address first, per stream.
pub type UnmappedKey = (StreamId, u64, BlockId);

/// One pool.
#[derive(Debug, Default)]
pub struct Pool {
    /// Free mapped blocks.
    pub free: BTreeSet<FreeKey>,
    /// Unmapped blocks of expandable segments.
    pub unmapped: BTreeSet<UnmappedKey>,
    /// Searches for a free block (the clock of garbage collection).
    pub free_block_searches: u64,
}

impl Pool {
    /// Key of `b` in `free`.
    pub fn free_key(id: BlockId, b: &Block) -> FreeKey {
        (b.stream, b.size, b.addr, id)
    }

    /// Key of `b` in `unmapped`.
    pub fn unmapped_key(id: BlockId, b: &Block) -> UnmappedKey {
        (b.stream, b.addr, id)
    }

    /// Cache a free block (or track an unmapped one).
    pub fn insert(&mut self, id: BlockId, b: &mut Block) {
        if b.mapped {
            b.gc_base = self.free_block_searches;
            self.free.insert(Self::free_key(id, b));
        } else {
            self.unmapped.insert(Self::unmapped_key(id, b));
        }
    }

    /// Remove a block from whichever set holds it; returns whether it was there.
    pub fn remove(&mut self, id: BlockId, b: &Block) -> bool {
        if b.mapped {
            self.free.remove(&Self::free_key(id, b))
        } else {
            self.unmapped.remove(&Self::unmapped_key(id, b))
        }
    }
}
