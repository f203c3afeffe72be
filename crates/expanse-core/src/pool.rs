//! Block pools: the cached free blocks of one size class, ordered for
//! best-fit search, and the unmapped address space of expandable segments,
//! ordered by address.

use std::collections::BTreeSet;

use expanse_device::StreamId;

use crate::block::{Block, BlockId};
use crate::free_set::{FreeSet, Loc};

/// Key of a free block, ordered by stream, then size, then address: best
/// fit is the first key at or above (stream, size): [`FreeSet::at_least`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FreeKey {
    /// The block's stream.
    pub stream: StreamId,
    /// The block's size.
    pub size: u64,
    /// The block's address (ties broken by address, never by id).
    pub addr: u64,
    /// The block.
    pub block: BlockId,
}

impl FreeKey {
    /// The lowest key of `stream` with at least `size` bytes.
    #[cfg(test)]
    pub fn at_least(stream: StreamId, size: u64) -> Self {
        FreeKey { stream, size, addr: 0, block: 0 }
    }
}

/// Key of an unmapped block: lowest address first, per stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct UnmappedKey {
    /// The block's stream.
    pub stream: StreamId,
    /// The block's address.
    pub addr: u64,
    /// The block.
    pub block: BlockId,
}

/// One pool.
#[derive(Debug, Default)]
pub struct Pool {
    /// Free mapped blocks.
    pub free: FreeSet,
    /// Unmapped blocks of expandable segments.
    pub unmapped: BTreeSet<UnmappedKey>,
    /// Searches for a free block (the clock of garbage collection).
    pub free_block_searches: u64,
}

impl Pool {
    /// Key of `b` in `free`.
    #[inline]
    pub fn free_key(id: BlockId, b: &Block) -> FreeKey {
        FreeKey { stream: b.stream, size: b.size, addr: b.addr, block: id }
    }

    /// Key of `b` in `unmapped`.
    pub fn unmapped_key(id: BlockId, b: &Block) -> UnmappedKey {
        UnmappedKey { stream: b.stream, addr: b.addr, block: id }
    }

    /// Cache a free block (or track an unmapped one).
    #[inline]
    pub fn insert(&mut self, id: BlockId, b: &mut Block) {
        if b.mapped {
            b.gc_base = self.free_block_searches;
            self.free.insert(Self::free_key(id, b));
        } else {
            self.unmapped.insert(Self::unmapped_key(id, b));
        }
    }

    /// Cache free mapped block `b` in place of the key `old` (of a block
    /// it was split from or merged with), as removing `old` then
    /// inserting `b` would.
    /// `at`: where `old` was found, as for [`FreeSet::replace`].
    #[inline]
    pub fn replace(&mut self, old: &FreeKey, at: Option<Loc>, id: BlockId, b: &mut Block) {
        debug_assert!(b.mapped);
        b.gc_base = self.free_block_searches;
        self.free.replace(old, at, Self::free_key(id, b));
    }

    /// Remove a block from whichever set holds it; returns whether it was there.
    #[inline]
    pub fn remove(&mut self, id: BlockId, b: &Block) -> bool {
        if b.mapped {
            self.free.remove(&Self::free_key(id, b))
        } else {
            self.unmapped.remove(&Self::unmapped_key(id, b))
        }
    }
}
