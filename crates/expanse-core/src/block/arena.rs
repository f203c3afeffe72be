//! [`Arena`]: the slots that own every block of a device, reused after
//! removal.

use super::{Block, BlockId};

/// Slots of blocks, reused after removal.
///
/// A removed block stays in its slot, marked dead, until the slot is
/// reused: looking a block up is one bounds-checked index, with no
/// `Option` to unwrap on every access of the hot path. Ids are never
/// exposed outside the allocator, which holds only live ones (its links,
/// free sets, active map and pending merge; `check_invariants` checks
/// every one of them with [`Arena::is_live`], and debug builds assert it
/// on every access).
#[derive(Debug, Default)]
pub struct Arena {
    slots: Vec<Block>,
    /// Whether each slot holds a live block.
    live: Vec<bool>,
    free: Vec<BlockId>,
    /// Counts every insert, removal and mutable access.
    generation: u64,
}

impl Arena {
    /// Store a block and return its id.
    #[inline]
    pub fn insert(&mut self, b: Block) -> BlockId {
        self.generation = self.generation.wrapping_add(1);
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = b;
            self.live[id as usize] = true;
            id
        } else {
            self.slots.push(b);
            self.live.push(true);
            (self.slots.len() - 1) as BlockId
        }
    }

    /// Store a new free block of `size` bytes at `addr`, with no
    /// neighbours, and the segment, stream, pool, mapping state, private
    /// pool and users of live block `of` (a part split off it); returns
    /// its id. The same block as `insert(Block::new(..))` with those
    /// fields copied, but written field by field into a reused slot: a
    /// split is on the hot path, and building the block aside and moving
    /// it in costs as much again.
    pub fn insert_part_of(&mut self, of: BlockId, addr: u64, size: u64) -> BlockId {
        let Some(id) = self.free.pop() else {
            let b = &self.slots[of as usize];
            let mut part = Block::new(addr, size, b.stream, b.pool, b.segment);
            (part.mapped, part.private, part.last_use, part.freed_at) =
                (b.mapped, b.private, b.last_use.clone(), b.freed_at);
            return self.insert(part);
        };
        self.generation = self.generation.wrapping_add(1);
        self.live[id as usize] = true;
        let (src, dst) = if of < id {
            let (low, high) = self.slots.split_at_mut(id as usize);
            (&low[of as usize], &mut high[0])
        } else {
            let (low, high) = self.slots.split_at_mut(of as usize);
            (&high[0], &mut low[id as usize])
        };
        dst.addr = addr;
        dst.size = size;
        dst.requested = 0;
        dst.stream = src.stream;
        dst.pool = src.pool;
        dst.allocated = false;
        dst.mapped = src.mapped;
        dst.prev = None;
        dst.next = None;
        dst.segment = src.segment;
        dst.event_count = 0;
        dst.stream_uses.clear();
        dst.gc_base = 0;
        dst.last_use.clone_from(&src.last_use);
        dst.private = src.private;
        dst.freed_at = src.freed_at;
        id
    }

    /// Remove a block.
    pub fn remove(&mut self, id: BlockId) -> Block {
        self.generation = self.generation.wrapping_add(1);
        assert!(self.live[id as usize], "removing a live block");
        self.live[id as usize] = false;
        self.free.push(id);
        let b = &self.slots[id as usize];
        let dead = Block::new(b.addr, b.size, b.stream, b.pool, b.segment);
        std::mem::replace(&mut self.slots[id as usize], dead)
    }

    /// Remove a block, leaving it where it lies (no copy out; dropped
    /// when the slot is reused).
    #[inline]
    pub fn discard(&mut self, id: BlockId) {
        self.generation = self.generation.wrapping_add(1);
        assert!(std::mem::replace(&mut self.live[id as usize], false), "discarding a live block");
        self.free.push(id);
    }

    /// The block `id` (which must be live).
    #[inline(always)]
    pub fn get(&self, id: BlockId) -> &Block {
        debug_assert!(self.is_live(id), "block {id} is not live");
        &self.slots[id as usize]
    }

    /// The block `id` (which must be live).
    #[inline(always)]
    pub fn get_mut(&mut self, id: BlockId) -> &mut Block {
        debug_assert!(self.is_live(id), "block {id} is not live");
        self.generation = self.generation.wrapping_add(1);
        &mut self.slots[id as usize]
    }

    /// Whether `id` is a live block.
    pub fn is_live(&self, id: BlockId) -> bool {
        self.live.get(id as usize).copied().unwrap_or(false)
    }

    /// All live blocks.
    pub fn iter(&self) -> impl Iterator<Item = (BlockId, &Block)> {
        self.slots.iter().zip(&self.live).enumerate().filter(|(_, (_, &l))| l).map(|(i, (b, _))| (i as BlockId, b))
    }

    /// Changes whenever a block is inserted, removed or borrowed mutably:
    /// equal generations mean no block changed in between.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Number of live blocks.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{PoolKind, SegmentRef};
    use expanse_device::StreamId;

    /// The generation moves on every insert, removal and mutable borrow,
    /// and stays on reads (the out-of-memory path's memory of a fruitless
    /// search relies on it).
    #[test]
    fn arena_generation_moves_on_every_change() {
        let mut arena = Arena::default();
        let block = || Block::new(1 << 21, 1 << 21, StreamId(0), PoolKind::Large, SegmentRef::Classic);
        let mut seen = vec![arena.generation()];
        let a = arena.insert(block());
        seen.push(arena.generation());
        let b = arena.insert(block());
        seen.push(arena.generation());
        arena.get_mut(a).requested = 1;
        seen.push(arena.generation());
        let _ = arena.get(a).size + arena.get(b).size + arena.len() as u64;
        assert_eq!(arena.generation(), *seen.last().unwrap(), "reads change nothing");
        arena.remove(a);
        seen.push(arena.generation());
        arena.discard(b);
        seen.push(arena.generation());
        let mut distinct = seen.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), seen.len(), "{seen:?}");
    }

    /// Removed blocks are dead, a reused slot is live again with the new
    /// block, and only live blocks are listed.
    #[test]
    fn arena_tracks_which_slots_are_live() {
        let mut arena = Arena::default();
        let block = |addr| Block::new(addr, 512, StreamId(0), PoolKind::Small, SegmentRef::Classic);
        let ids: Vec<BlockId> = (1..=4).map(|i| arena.insert(block(i << 20))).collect();
        assert!(ids.iter().all(|&id| arena.is_live(id)) && !arena.is_live(4) && !arena.is_live(u32::MAX));
        assert_eq!(arena.remove(ids[1]).addr, 2 << 20);
        arena.discard(ids[3]);
        assert!(!arena.is_live(ids[1]) && !arena.is_live(ids[3]) && arena.is_live(ids[2]));
        assert_eq!(
            arena.iter().map(|(id, b)| (id, b.addr)).collect::<Vec<_>>(),
            [(ids[0], 1 << 20), (ids[2], 3 << 20)]
        );
        let again = arena.insert(block(5 << 20));
        assert!(again == ids[3] && arena.is_live(again) && arena.get(again).addr == 5 << 20);
        assert_eq!(arena.len(), 3);
    }

    /// A part written into a reused slot is the block `Block::new` and
    /// the copied fields make, whatever the slot held before (its `Debug`
    /// shows every field, so a field added to `Block` and not written
    /// there fails this).
    #[test]
    fn a_part_is_a_new_block_with_the_copied_fields() {
        let mut arena = Arena::default();
        let mut stale = Block::new(7 << 20, 4096, StreamId(9), PoolKind::Large, SegmentRef::Classic);
        (stale.requested, stale.allocated, stale.prev, stale.next) = (100, true, Some(3), Some(4));
        (stale.event_count, stale.gc_base, stale.private, stale.freed_at) = (2, 11, 5, 13);
        stale.stream_uses.push(StreamId(8));
        stale.last_use.insert(StreamId(8));
        stale.last_use.insert(StreamId(10));
        stale.last_use.insert(StreamId(12));
        let mut of = Block::new(1 << 20, 8192, StreamId(2), PoolKind::Small, SegmentRef::Expandable(3));
        (of.mapped, of.private, of.allocated, of.gc_base, of.freed_at) = (false, 6, true, 9, 21);
        of.last_use.insert(StreamId(2));
        let mut expected = Block::new(1 << 20, 512, StreamId(2), PoolKind::Small, SegmentRef::Expandable(3));
        (expected.mapped, expected.private, expected.last_use, expected.freed_at) = (false, 6, of.last_use.clone(), 21);
        for reuse in [false, true] {
            let low = arena.insert(stale.clone());
            let of_id = arena.insert(of.clone());
            if reuse {
                arena.discard(low);
            }
            let part = arena.insert_part_of(of_id, 1 << 20, 512);
            assert_eq!(part == low, reuse);
            let fmt = |b: &Block| format!("{b:?}").replace("Some([])", "None");
            assert_eq!(fmt(arena.get(part)), fmt(&expected), "reused slot: {reuse}");
        }
    }

    #[test]
    #[should_panic(expected = "discarding a live block")]
    fn discarding_a_dead_block_panics() {
        let mut arena = Arena::default();
        let id = arena.insert(Block::new(1 << 20, 512, StreamId(0), PoolKind::Small, SegmentRef::Classic));
        arena.discard(id);
        arena.discard(id);
    }
}
