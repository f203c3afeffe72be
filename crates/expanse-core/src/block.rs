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
    /// An expandable segment, by slot index.
    Expandable(usize),
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
        }
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamSet {
    inline: [StreamId; 2],
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
            self.len += 1;
        } else {
            self.more.push(s);
        }
    }

    /// Add every stream of `other`.
    #[inline]
    pub fn extend(&mut self, other: &StreamSet) {
        for &s in &other.inline[..usize::from(other.len)] {
            self.insert(s);
        }
        for &s in other.more.iter() {
            self.insert(s);
        }
    }

    /// Whether every stream of `other` is in the set.
    #[inline]
    pub fn includes(&self, other: &StreamSet) -> bool {
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

/// Bits of a [`BlockId`] that name its part of the arena.
const PART_BITS: u32 = 5;
/// Bits of a [`BlockId`] that name its slot in its part.
const SLOT_BITS: u32 = BlockId::BITS - PART_BITS;
/// Parts of an arena: part 0 for streams without a part of their own,
/// then one per stream (see [`Arena::part_of`]).
pub const PARTS: usize = 1 << PART_BITS;

/// The part of the arena block `id` lives in.
#[inline(always)]
pub fn part_of_block(id: BlockId) -> usize {
    (id >> SLOT_BITS) as usize
}

/// Slots of blocks of one part, reused after removal. One cache line
/// (so that a part is found from an id by a shift).
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct Part {
    slots: Vec<Option<Block>>,
    free: Vec<u32>,
    /// Counts every insert, removal and mutable access.
    generation: u64,
}

/// Slots of blocks, reused after removal, in parts: the blocks of one
/// stream's segments all live in that stream's part (part 0 holds those of
/// streams past the first `PARTS - 1`), so that the part can be handed to
/// a thread of its own (`caching.rs`) while the others stay. A block's id
/// says its part; a part taken out leaves an empty one in its place.
#[derive(Debug)]
pub struct Arena {
    /// Indexed by the part bits of an id (so never out of bounds).
    parts: [Part; PARTS],
}

impl Default for Arena {
    fn default() -> Self {
        Arena { parts: std::array::from_fn(|_| Part::default()) }
    }
}

impl Arena {
    #[inline(always)]
    fn part(&self, id: BlockId) -> (&Part, usize) {
        (&self.parts[part_of_block(id)], (id & ((1 << SLOT_BITS) - 1)) as usize)
    }

    #[inline(always)]
    fn part_mut(&mut self, id: BlockId) -> (&mut Part, usize) {
        (&mut self.parts[part_of_block(id)], (id & ((1 << SLOT_BITS) - 1)) as usize)
    }

    /// Store a block in part `part` and return its id.
    #[inline]
    pub fn insert_in(&mut self, part: usize, b: Block) -> BlockId {
        let p = &mut self.parts[part];
        p.generation = p.generation.wrapping_add(1);
        let slot = if let Some(slot) = p.free.pop() {
            p.slots[slot as usize] = Some(b);
            slot
        } else {
            assert!(p.slots.len() < 1 << SLOT_BITS, "more than {} blocks in one part of the arena", 1u64 << SLOT_BITS);
            p.slots.push(Some(b));
            (p.slots.len() - 1) as u32
        };
        ((part as BlockId) << SLOT_BITS) | slot
    }

    /// Store a block next to block `id` (in its part) and return its id.
    #[inline]
    pub fn insert_near(&mut self, id: BlockId, b: Block) -> BlockId {
        self.insert_in(part_of_block(id), b)
    }

    /// Remove a block.
    pub fn remove(&mut self, id: BlockId) -> Block {
        let (p, i) = self.part_mut(id);
        p.generation = p.generation.wrapping_add(1);
        let b = p.slots[i].take().expect("removing a live block");
        p.free.push(i as u32);
        b
    }

    /// Remove a block, dropping it where it lies (no copy out).
    #[inline]
    pub fn discard(&mut self, id: BlockId) {
        let (p, i) = self.part_mut(id);
        p.generation = p.generation.wrapping_add(1);
        let slot = &mut p.slots[i];
        assert!(slot.is_some(), "discarding a live block");
        *slot = None;
        p.free.push(i as u32);
    }

    /// The block `id` (which must be live).
    #[inline(always)]
    pub fn get(&self, id: BlockId) -> &Block {
        let (p, i) = self.part(id);
        p.slots[i].as_ref().expect("live block")
    }

    /// The block `id` (which must be live).
    #[inline(always)]
    pub fn get_mut(&mut self, id: BlockId) -> &mut Block {
        let (p, i) = self.part_mut(id);
        p.generation = p.generation.wrapping_add(1);
        p.slots[i].as_mut().expect("live block")
    }

    /// All live blocks, part by part.
    pub fn iter(&self) -> impl Iterator<Item = (BlockId, &Block)> {
        self.parts.iter().enumerate().flat_map(|(pi, p)| {
            p.slots
                .iter()
                .enumerate()
                .filter_map(move |(i, b)| b.as_ref().map(|b| (((pi as BlockId) << SLOT_BITS) | i as BlockId, b)))
        })
    }

    /// Changes whenever a block is inserted, removed or borrowed mutably:
    /// equal generations mean no block changed in between (a part taken
    /// out and put back unchanged leaves it as it was).
    pub fn generation(&self) -> u64 {
        self.parts.iter().fold(0u64, |g, p| g.wrapping_add(p.generation))
    }

    /// Number of live blocks.
    pub fn len(&self) -> usize {
        self.parts.iter().map(|p| p.slots.len() - p.free.len()).sum()
    }

    /// Take part `part` out, leaving an empty one.
    pub fn take_part(&mut self, part: usize) -> Part {
        std::mem::take(&mut self.parts[part])
    }

    /// Put part `part` (taken out by [`Self::take_part`]) back.
    pub fn put_part(&mut self, part: usize, p: Part) {
        debug_assert!(self.parts[part].slots.is_empty(), "a part put back over a live one");
        self.parts[part] = p;
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
        assert_eq!(std::mem::size_of::<Option<Block>>(), 128);
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
        t.extend(&s);
        assert!(t.includes(&s) && s.includes(&t));
        s.clear();
        assert!(s.is_empty() && s.all_are(StreamId(9)));
    }

    /// The generation moves on every insert, removal and mutable borrow,
    /// and stays on reads (the out-of-memory path's memory of a fruitless
    /// search relies on it).
    #[test]
    fn arena_generation_moves_on_every_change() {
        let mut arena = Arena::default();
        let block = || Block::new(1 << 21, 1 << 21, StreamId(0), PoolKind::Large, SegmentRef::Classic);
        let mut seen = vec![arena.generation()];
        let a = arena.insert_in(0, block());
        seen.push(arena.generation());
        let b = arena.insert_in(3, block());
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

    /// Blocks live in the part they were put in, a part taken out takes
    /// its blocks (and nothing else) with it, and putting it back restores
    /// the arena as it was, generation included.
    #[test]
    fn arena_parts_move_whole() {
        let mut arena = Arena::default();
        let block = |addr: u64| Block::new(addr, 512, StreamId(0), PoolKind::Small, SegmentRef::Classic);
        let a = arena.insert_in(1, block(0x1000));
        let b = arena.insert_near(a, block(0x1200));
        let c = arena.insert_in(2, block(0x4000));
        assert_eq!((part_of_block(a), part_of_block(b), part_of_block(c)), (1, 1, 2));
        assert_eq!(arena.len(), 3);
        let before = arena.generation();
        let taken = arena.take_part(1);
        assert_eq!(arena.len(), 1);
        assert_eq!(arena.iter().map(|(id, _)| id).collect::<Vec<_>>(), [c]);
        // Another arena holding only that part finds its blocks by id.
        let mut lane = Arena::default();
        lane.put_part(1, taken);
        assert_eq!((lane.get(a).addr, lane.get(b).addr), (0x1000, 0x1200));
        arena.put_part(1, lane.take_part(1));
        assert_eq!(arena.generation(), before);
        let mut addrs: Vec<u64> = arena.iter().map(|(_, b)| b.addr).collect();
        addrs.sort_unstable();
        assert_eq!(addrs, [0x1000, 0x1200, 0x4000]);
    }
}
