//! Blocks, with the arena that owns them (`arena.rs`) and the sets of
//! streams they were used on (`streams.rs`).
//!
//! A block is a contiguous piece of a segment: allocated, free (mapped,
//! cached in its pool), or unmapped (address space of an expandable segment
//! with no page behind it). Blocks of one segment form a doubly linked list
//! in address order; invariants (checked by
//! [`DeviceAllocator::check_invariants`](crate::DeviceAllocator::check_invariants)):
//! neighbours are contiguous, no two free neighbours with the same mapping
//! state are left unmerged, a free mapped block is in its pool's free set
//! and an unmapped one in its pool's unmapped set, nothing else is.

use expanse_device::StreamId;

mod arena;
mod streams;

pub use arena::Arena;
pub use streams::{StreamList, StreamSet};

/// Index of a block in the arena.
pub type BlockId = u32;

/// Which pool a block belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PoolKind {
    /// Requests up to 1 MiB.
    Small = 0,
    /// Everything larger.
    Large = 1,
}

/// What kind of segment a block lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentRef {
    /// A classic segment (one device malloc).
    Classic,
    /// An expandable segment, by slot index (a `u32`, so that a block
    /// stays two cache lines).
    Expandable(u32),
}

impl SegmentRef {
    /// The slot of an expandable segment.
    #[inline]
    pub fn slot(self) -> Option<usize> {
        match self {
            SegmentRef::Expandable(slot) => Some(slot as usize),
            SegmentRef::Classic => None,
        }
    }
}

/// One block: two cache lines (`align(64)`, 128 bytes).
#[derive(Clone, Debug)]
#[repr(align(64))]
pub struct Block {
    /// Start address.
    pub addr: u64,
    /// Size in bytes.
    pub size: u64,
    /// Bytes the user asked for (0 when free).
    pub requested: u64,
    /// Stream the block was allocated on.
    pub stream: StreamId,
    /// Pool.
    pub pool: PoolKind,
    /// Handed to a user (or waiting for its events).
    pub allocated: bool,
    /// Backed by pages (always true for classic segments).
    pub mapped: bool,
    /// Lower neighbour in the segment.
    pub prev: Option<BlockId>,
    /// Upper neighbour in the segment.
    pub next: Option<BlockId>,
    /// The segment.
    pub segment: SegmentRef,
    /// Outstanding stream events before the block may be reused.
    pub event_count: u32,
    /// Other streams the block was used on (`record_stream`).
    pub stream_uses: StreamList,
    /// Pool's free-block-search count when the block was cached (for GC age).
    pub gc_base: u64,
    /// Streams whose queued work may still touch this memory (the streams
    /// it was last used on). Reuse on another stream, or unmapping, must
    /// first be ordered after them.
    pub last_use: StreamSet,
    /// The private pool (CUDA graph) the block's segment belongs to, by
    /// slot; 0: the shared pools.
    pub private: u32,
    /// The free clock (`allocator/streams.rs`) when this memory was last
    /// freed; for merged blocks the latest of the parts that had users.
    /// Reuse on another stream needs no new event wait when that stream
    /// already waited on the users' streams after this (after each user's
    /// own stamp, [`Self::freed_at_by`], where the set keeps one).
    pub freed_at: u64,
}

impl Block {
    /// A new, free, mapped block.
    pub fn new(addr: u64, size: u64, stream: StreamId, pool: PoolKind, segment: SegmentRef) -> Self {
        Block {
            addr,
            size,
            requested: 0,
            stream,
            pool,
            allocated: false,
            mapped: true,
            prev: None,
            next: None,
            segment,
            event_count: 0,
            stream_uses: StreamList::default(),
            gc_base: 0,
            last_use: StreamSet::default(),
            private: 0,
            freed_at: 0,
        }
    }

    /// [`Self::freed_at`] when the block has users whose work may still
    /// touch it; 0 (before every free) when it has none.
    #[inline]
    pub fn users_freed_at(&self) -> u64 {
        if self.last_use.is_empty() {
            0
        } else {
            self.freed_at
        }
    }

    /// When user `s` last freed this memory: its own stamp where
    /// [`Self::last_use`] keeps one (a merged block keeps each inline
    /// user's latest), else [`Self::freed_at`], the latest of all. Fewer
    /// waits follow, and during a CUDA graph capture more memory is
    /// reusable at once (`DeviceAllocator::reusable_now`).
    #[inline]
    pub fn freed_at_by(&self, s: StreamId) -> u64 {
        self.last_use.stamp_of(s, self.freed_at)
    }

    /// Take on the users of a free block merged into this one, whose
    /// free stamp was `other_freed` (0: no users): the merged stamp is the
    /// later one, and each user keeps its own (`add`: users only in
    /// `other` join; else they are all here already).
    #[inline(always)]
    pub fn absorb_users(&mut self, other: &StreamSet, other_freed: u64, add: bool) {
        let mine = self.users_freed_at();
        let merged = mine.max(other_freed);
        self.last_use.rebase(mine, merged);
        self.freed_at = merged;
        self.last_use.merge_from(other, other_freed, merged, add);
    }

    /// The block was freed at `stamp` by its users: stamp it, and each
    /// user.
    #[inline(always)]
    pub fn stamp_free(&mut self, stamp: u64) {
        self.freed_at = stamp;
        self.last_use.stamp_all();
    }

    /// Whether the block is part of a split segment.
    #[inline]
    pub fn is_split(&self) -> bool {
        self.prev.is_some() || self.next.is_some()
    }

    /// Whether the block lives in an expandable segment.
    #[inline]
    pub fn is_expandable(&self) -> bool {
        matches!(self.segment, SegmentRef::Expandable(_))
    }

    /// Free, no pending events, no foreign stream uses.
    pub fn is_allocatable(&self) -> bool {
        !self.allocated && self.event_count == 0 && self.stream_uses.is_empty()
    }

    /// End address (exclusive).
    pub fn end(&self) -> u64 {
        self.addr + self.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_two_cache_lines() {
        // Adding a field past this makes every block touch a third line on
        // the hot path: keep rare data out of line, as `StreamList` does.
        assert_eq!(std::mem::size_of::<Block>(), 128);
        assert_eq!(std::mem::align_of::<Block>(), 64);
    }
}
