//! Blocks and the arena that owns them.
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

/// A list of streams, most often empty: one word in the block (a vector
/// on the heap once a stream is added), so that blocks stay small.
#[derive(Clone, Debug, Default)]
#[allow(clippy::box_collection, reason = "one pointer in the block, not a vector's three words")]
pub struct StreamList(Option<Box<Vec<StreamId>>>);

impl StreamList {
    /// Add `s` at the end.
    pub fn push(&mut self, s: StreamId) {
        self.0.get_or_insert_with(Box::default).push(s);
    }

    /// Remove every stream (the heap vector is kept for reuse).
    pub fn clear(&mut self) {
        if let Some(v) = self.0.as_mut() {
            v.clear();
        }
    }
}

impl std::ops::Deref for StreamList {
    type Target = [StreamId];

    fn deref(&self) -> &[StreamId] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl PartialEq for StreamList {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for StreamList {}

/// A small set of streams: two inline (the common case), more on the heap.
/// Copying one with at most two streams never allocates.
///
/// Each inline stream carries when it last freed the memory, as a lag
/// behind its block's [`Block::freed_at`] (the latest of its users'): the
/// block's stamp minus the user's, kept in the set's padding, so that a
/// block stays two cache lines. A lag is at most `u16::MAX`: a longer one
/// is kept as that, a later stamp than the user's, which asks for a wait
/// where none was needed and never the other way. A lag of 0, and every
/// stream on the heap, stand for the block's own stamp.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamSet {
    inline: [StreamId; 2],
    lags: [u16; 2],
    len: u8,
    more: StreamList,
}

impl StreamSet {
    /// The streams, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = StreamId> + '_ {
        self.inline[..usize::from(self.len)].iter().copied().chain(self.more.iter().copied())
    }

    /// Whether `s` is in the set.
    #[inline]
    pub fn contains(&self, s: StreamId) -> bool {
        self.inline[..usize::from(self.len)].contains(&s) || self.more.contains(&s)
    }

    /// Whether every stream in the set is `s` (true when empty).
    #[inline]
    pub fn all_are(&self, s: StreamId) -> bool {
        self.more.is_empty() && self.inline[..usize::from(self.len)].iter().all(|&x| x == s)
    }

    /// Add `s` if absent.
    #[inline]
    pub fn insert(&mut self, s: StreamId) {
        if self.contains(s) {
            return;
        }
        if usize::from(self.len) < self.inline.len() {
            self.inline[usize::from(self.len)] = s;
            self.lags[usize::from(self.len)] = 0;
            self.len += 1;
        } else {
            self.more.push(s);
        }
    }

    /// The block's free stamp moves from `old` to `new` (not earlier):
    /// keep each inline stream's own stamp.
    #[inline]
    pub fn rebase(&mut self, old: u64, new: u64) {
        let by = new - old;
        for lag in &mut self.lags[..usize::from(self.len)] {
            *lag = u16::try_from(u64::from(*lag) + by).unwrap_or(u16::MAX);
        }
    }

    /// Take the users of `other`, whose block's free stamp is
    /// `other_freed`, into this set of a block stamped `freed` (at least
    /// `other_freed`): a stream in both keeps the later of its two stamps;
    /// `add`: streams only in `other` join (else they are all here).
    #[inline]
    pub fn merge_from(&mut self, other: &StreamSet, other_freed: u64, freed: u64, add: bool) {
        for (i, &s) in other.inline[..usize::from(other.len)].iter().enumerate() {
            let lag = u16::try_from(freed - other_freed + u64::from(other.lags[i])).unwrap_or(u16::MAX);
            match self.inline[..usize::from(self.len)].iter().position(|&x| x == s) {
                Some(j) => self.lags[j] = self.lags[j].min(lag),
                None if add => {
                    let was_inline = usize::from(self.len) < self.inline.len() && !self.more.contains(&s);
                    self.insert(s);
                    if was_inline {
                        self.lags[usize::from(self.len) - 1] = lag;
                    }
                }
                None => {}
            }
        }
        // `other`'s streams on the heap freed at `other_freed`, as far as
        // its set knows.
        let lag = u16::try_from(freed - other_freed).unwrap_or(u16::MAX);
        for &s in other.more.iter() {
            match self.inline[..usize::from(self.len)].iter().position(|&x| x == s) {
                Some(j) => self.lags[j] = self.lags[j].min(lag),
                None if add => self.insert(s),
                None => {}
            }
        }
    }

    /// Every user freed the memory at the block's stamp.
    #[inline(always)]
    pub fn stamp_all(&mut self) {
        self.lags = [0; 2];
    }

    /// When `s` last freed the memory, for a block stamped `freed`.
    #[inline]
    pub fn stamp_of(&self, s: StreamId, freed: u64) -> u64 {
        match self.inline[..usize::from(self.len)].iter().position(|&x| x == s) {
            Some(i) => freed - u64::from(self.lags[i]),
            None => freed,
        }
    }

    /// Whether no lag reaches back before clock 0 for a block stamped
    /// `freed` (for `check_invariants`).
    pub fn lags_within(&self, freed: u64) -> bool {
        self.lags[..usize::from(self.len)].iter().all(|&l| u64::from(l) <= freed)
    }

    /// Whether `s` is the one stream in the set.
    /// Make `s` the only stream (nothing changes when it already is).
    #[inline]
    pub fn set_only(&mut self, s: StreamId) {
        if !self.is_only(s) {
            self.clear();
            self.insert(s);
        }
    }

    #[inline]
    pub fn is_only(&self, s: StreamId) -> bool {
        self.len == 1 && self.inline[0] == s && self.more.is_empty()
    }

    /// Whether every stream of `other` is in the set.
    #[inline]
    pub fn includes(&self, other: &StreamSet) -> bool {
        // The common case: both are the same one stream.
        if other.len == 1 && other.more.is_empty() && self.len >= 1 && self.inline[0] == other.inline[0] {
            return true;
        }
        other.inline[..usize::from(other.len)].iter().all(|&s| self.contains(s))
            && other.more.iter().all(|&s| self.contains(s))
    }

    /// Remove every stream.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
        self.more.clear();
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

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

    #[test]
    fn a_block_is_two_cache_lines() {
        // Adding a field past this makes every block touch a third line on
        // the hot path: keep rare data out of line, as `StreamList` does.
        assert_eq!(std::mem::size_of::<Block>(), 128);
        assert_eq!(std::mem::align_of::<Block>(), 64);
    }

    #[test]
    fn stream_lists_and_sets_behave_like_vectors() {
        let mut l = StreamList::default();
        assert!(l.is_empty() && l.iter().next().is_none());
        l.push(StreamId(3));
        l.push(StreamId(5));
        assert_eq!(&l[..], &[StreamId(3), StreamId(5)]);
        assert!(l.contains(&StreamId(5)) && !l.contains(&StreamId(4)));
        let taken = std::mem::take(&mut l);
        assert!(l.is_empty() && taken.len() == 2);
        let mut cleared = taken.clone();
        cleared.clear();
        // An emptied list equals one that never held a stream.
        assert_eq!(cleared, StreamList::default());

        let mut s = StreamSet::default();
        for id in [1, 2, 3, 2, 4] {
            s.insert(StreamId(id));
        }
        assert_eq!(s.iter().collect::<Vec<_>>(), [1, 2, 3, 4].map(StreamId));
        let mut t = StreamSet::default();
        t.insert(StreamId(4));
        assert!(s.includes(&t) && !t.includes(&s));
        t.merge_from(&s, 0, 0, true);
        assert!(t.includes(&s) && s.includes(&t));
        s.clear();
        assert!(s.is_empty() && s.all_are(StreamId(9)));
    }

    /// `includes`, `is_only` and each stream's free stamp against sets of
    /// a model, over random inserts, merges (a block merged into another),
    /// frees and clears (sets past the two inline streams too). A set's
    /// block has a free stamp of its own; the model keeps each stream's
    /// stamp exactly: the set's may only be later (never earlier, which
    /// would skip a wait), and is exact for a set of at most two streams.
    #[test]
    fn stream_set_queries_agree_with_a_model() {
        use std::collections::BTreeMap;
        let mut sets = [StreamSet::default(), StreamSet::default(), StreamSet::default()];
        let mut model: [BTreeMap<u64, u64>; 3] = Default::default();
        let mut freed = [0u64; 3];
        let mut clock = 0u64;
        let mut x = 5u64;
        for _ in 0..5_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = x >> 33;
            let (i, j, s) = ((r % 3) as usize, ((r >> 2) % 3) as usize, (r >> 4) % 4);
            clock += (r >> 9) % 3;
            match (r >> 6) % 8 {
                0 => {
                    sets[i].clear();
                    model[i].clear();
                }
                1 if i != j => {
                    // Block j merged into block i.
                    let other = sets[j].clone();
                    let merged = freed[i].max(freed[j]);
                    let add = !sets[i].includes(&other);
                    sets[i].rebase(freed[i], merged);
                    sets[i].merge_from(&other, freed[j], merged, add);
                    freed[i] = merged;
                    for (&t, &at) in &model[j].clone() {
                        let e = model[i].entry(t).or_insert(at);
                        *e = (*e).max(at);
                    }
                }
                2 => {
                    // Block i freed now by all its users.
                    freed[i] = clock;
                    sets[i].stamp_all();
                    model[i].values_mut().for_each(|at| *at = clock);
                }
                _ => {
                    sets[i].insert(StreamId(s));
                    model[i].entry(s).or_insert(freed[i]);
                }
            }
            for a in 0..3 {
                assert_eq!(sets[a].is_only(StreamId(s)), model[a].len() == 1 && model[a].contains_key(&s));
                for b in 0..3 {
                    let (ma, mb) = (model[a].keys().collect::<Vec<_>>(), model[b].keys().collect::<Vec<_>>());
                    assert_eq!(sets[a].includes(&sets[b]), mb.iter().all(|k| ma.contains(k)));
                }
                assert!(sets[a].lags_within(freed[a]));
                for (&t, &at) in &model[a] {
                    let got = sets[a].stamp_of(StreamId(t), freed[a]);
                    assert!(got >= at && got <= freed[a], "stream {t}: stamp {got}, freed at {at}");
                    if model[a].len() <= 2 {
                        assert_eq!(got, at, "stream {t} of a set of at most two streams");
                    }
                }
            }
        }
    }

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
