//! Invariants: every structural property of the allocator's state, checked
//! by code. Tests run [`DeviceAllocator::check_invariants`] after every
//! operation.

use super::DeviceAllocator;
use crate::block::{Block, BlockId, PoolKind};
use crate::pool::Pool;

/// What the walk over all blocks adds up, to compare with the pools, the
/// segments and the statistics.
#[derive(Default)]
struct Tally {
    /// Blocks that are in their pool's free set.
    free: usize,
    /// Blocks that are in their pool's unmapped set.
    unmapped: usize,
    /// Bytes of allocated blocks: all, small pool, large pool.
    allocated: [u64; 3],
    /// Bytes of mapped blocks of expandable segments.
    mapped_expandable: u64,
    /// Bytes of classic segments.
    classic: u64,
}

impl DeviceAllocator {
    /// Check every structural invariant; `Err` names the first broken one.
    /// Tests call this after every operation.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut tally = Tally::default();
        for (id, b) in self.blocks.iter() {
            self.check_links(id, b)?;
            self.check_pool_membership(id, b, &mut tally)?;
            self.check_segment(b, &mut tally)?;
        }
        self.check_pending()?;
        self.check_totals(&tally)?;
        if !self.reuse.consistent() {
            return Err(
                "reuse stamps: a stamp is later than the allocation clock, or a previous one later than the last"
                    .into(),
            );
        }
        if !self.order.waits_by_now() {
            return Err("stream order: a wait is stamped past the free clock".into());
        }
        if !self.marks.consistent(self.order.clock()) {
            return Err("marks: a mark or done stamp past the free clock, or marks out of stamp order".into());
        }
        self.check_nothing_to_release()
    }

    /// A pool marked as having nothing to release has nothing to release.
    fn check_nothing_to_release(&self) -> Result<(), String> {
        for pool in [PoolKind::Small, PoolKind::Large] {
            if self.nothing_to_release(pool) && self.has_work_to_release(pool) {
                return Err(format!("{pool:?} pool marked as having nothing to release has cached memory to release"));
            }
        }
        Ok(())
    }

    /// A pending merge is of a free block of a shared pool with the free
    /// block after it, its only free neighbour, or with no free neighbour
    /// at all.
    fn check_pending(&self) -> Result<(), String> {
        let Some(m) = self.pending else { return Ok(()) };
        if !self.blocks.is_live(m.front) || m.rest.is_some_and(|r| !self.blocks.is_live(r)) {
            return Err("pending merge of a removed block".into());
        }
        let b = self.blocks.get(m.front);
        if !b.is_allocatable() || !b.mapped || b.private != 0 || (m.rest.is_some() && b.next != m.rest) {
            return Err(format!("pending merge at {:#x}: not a free mapped shared block before its rest", b.addr));
        }
        let free =
            |x: Option<BlockId>| x.is_some_and(|x| self.blocks.get(x).is_allocatable() && self.blocks.get(x).mapped);
        if free(b.next) != m.rest.is_some() {
            return Err(format!("pending merge at {:#x}: its rest is not the free block after it", b.addr));
        }
        if b.prev.is_some_and(|p| self.blocks.get(p).is_allocatable() && self.blocks.get(p).mapped) {
            return Err(format!("pending merge at {:#x}: a free block before it too", b.addr));
        }
        Ok(())
    }

    /// Size, neighbour links, and no free neighbours left unmerged (but a
    /// pending merge's).
    fn check_links(&self, id: BlockId, b: &Block) -> Result<(), String> {
        if b.size == 0 {
            return Err(format!("block {id} has size 0"));
        }
        if !b.last_use.lags_within(b.freed_at) {
            return Err(format!("block {id} at {:#x}: a user's free stamp before clock 0", b.addr));
        }
        if !self.order.stamped_by_now(b.freed_at) {
            return Err(format!("block {id} at {:#x}: freed at {}, past the free clock", b.addr, b.freed_at));
        }
        // The arena does not check liveness on access (release builds).
        if [b.prev, b.next].into_iter().flatten().any(|x| !self.blocks.is_live(x)) {
            return Err(format!("block {id} at {:#x}: links to a removed block", b.addr));
        }
        if let Some(n) = b.next {
            let nb = self.blocks.get(n);
            if nb.prev != Some(id) || nb.addr != b.end() {
                return Err(format!("block {id} at {:#x}: next link broken", b.addr));
            }
            let mergeable = |x: &Block| !x.allocated && x.event_count == 0 && x.stream_uses.is_empty();
            let pending = self.pending.is_some_and(|m| (m.front, m.rest) == (id, Some(n)));
            if mergeable(b) && mergeable(nb) && b.mapped == nb.mapped && !pending {
                return Err(format!("free neighbours {:#x} and {:#x} left unmerged", b.addr, nb.addr));
            }
        }
        if let Some(p) = b.prev {
            if self.blocks.get(p).next != Some(id) {
                return Err(format!("block {id}: prev link broken"));
            }
        }
        Ok(())
    }

    /// A free mapped block is in the free set, an unmapped one in the
    /// unmapped set, an allocated one in the active map; nothing else.
    fn check_pool_membership(&self, id: BlockId, b: &Block, tally: &mut Tally) -> Result<(), String> {
        let pool = self.pool_of_block(b);
        let in_free = pool.free.contains(&Pool::free_key(id, b));
        let in_unmapped = pool.unmapped.contains(&Pool::unmapped_key(id, b));
        // Not free either: a block waiting on events, or one freed during a
        // capture whose events wait for its end (stream uses still listed).
        // The freed block of a pending merge is cached through it, in no set.
        let pending = self.pending.is_some_and(|m| m.front == id);
        let should_free = b.mapped && !b.allocated && b.event_count == 0 && b.stream_uses.is_empty() && !pending;
        if in_free != should_free {
            return Err(format!("block {:#x}: in free set {in_free}, should be {should_free}", b.addr));
        }
        if in_unmapped == b.mapped {
            return Err(format!("block {:#x}: in unmapped set {in_unmapped}, mapped {}", b.addr, b.mapped));
        }
        if !b.mapped && b.allocated {
            return Err(format!("unmapped block {:#x} is allocated", b.addr));
        }
        if b.allocated != (self.active.get(b.addr) == Some(id)) && b.event_count == 0 {
            return Err(format!("block {:#x}: allocated {} but active map disagrees", b.addr, b.allocated));
        }
        if b.allocated {
            tally.allocated[0] += b.size;
            tally.allocated[1 + b.pool as usize] += b.size;
        }
        tally.free += usize::from(in_free);
        tally.unmapped += usize::from(in_unmapped);
        Ok(())
    }

    /// A block of an expandable segment has its segment's stream, and is
    /// mapped exactly where the segment has pages.
    fn check_segment(&self, b: &Block, tally: &mut Tally) -> Result<(), String> {
        let Some(seg) = self.segment(b) else {
            if b.is_expandable() {
                return Err(format!("block {:#x} in a released segment", b.addr));
            }
            tally.classic += b.size;
            return Ok(());
        };
        if b.stream != seg.stream() {
            return Err(format!(
                "block {:#x} on stream {:?} in a segment of stream {:?}",
                b.addr,
                b.stream,
                seg.stream()
            ));
        }
        if !b.mapped && !b.last_use.is_empty() {
            return Err(format!("unmapped block {:#x} has users", b.addr));
        }
        if b.mapped {
            if !seg.is_mapped(b.addr, b.size) {
                return Err(format!("mapped block {:#x}+{} has unmapped bytes", b.addr, b.size));
            }
            tally.mapped_expandable += b.size;
        } else if seg.any_mapped(b.addr, b.size) {
            return Err(format!("unmapped block {:#x}+{} overlaps a mapped page", b.addr, b.size));
        }
        Ok(())
    }

    /// Pool sets, segments, reserved bytes and statistics agree with the
    /// blocks.
    fn check_totals(&self, tally: &Tally) -> Result<(), String> {
        let all_pools = || self.pools.iter().chain(self.private.all_pools());
        let set_sizes: usize = all_pools().map(|p| p.free.len()).sum();
        let unmapped_sizes: usize = all_pools().map(|p| p.unmapped.len()).sum();
        if set_sizes != tally.free || unmapped_sizes != tally.unmapped {
            return Err(format!(
                "pool sets hold stale entries ({set_sizes} free vs {} blocks, {unmapped_sizes} unmapped vs {})",
                tally.free, tally.unmapped
            ));
        }
        let seg_mapped: u64 = self.segments.iter().flatten().map(|s| s.mapped_bytes()).sum();
        if seg_mapped != tally.mapped_expandable {
            return Err(format!("segments map {seg_mapped} bytes but mapped blocks cover {}", tally.mapped_expandable));
        }
        if self.reserved != tally.classic + tally.mapped_expandable {
            return Err(format!(
                "reserved {} != classic {} + mapped {}",
                self.reserved, tally.classic, tally.mapped_expandable
            ));
        }
        if self.stats.reserved_bytes.all().current as u64 != self.reserved {
            return Err(format!(
                "reserved_bytes stat {} != {}",
                self.stats.reserved_bytes.all().current,
                self.reserved
            ));
        }
        let st = &self.stats.allocated_bytes;
        for (name, stat, bytes) in [
            ("all", st.all(), tally.allocated[0]),
            ("small_pool", st.small_pool, tally.allocated[1]),
            ("large_pool", st.large_pool, tally.allocated[2]),
        ] {
            if stat.current as u64 != bytes {
                return Err(format!("allocated_bytes.{name} stat {} != {bytes}", stat.current));
            }
        }
        if self.active.len() as i64 != self.stats.allocation.all().current {
            return Err(format!(
                "{} active pointers but allocation stat {}",
                self.active.len(),
                self.stats.allocation.all().current
            ));
        }
        Ok(())
    }
}
