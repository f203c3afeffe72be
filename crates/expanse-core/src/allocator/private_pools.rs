//! Private pools: the memory of a CUDA graph (or a `torch.cuda.MemPool`),
//! as in PyTorch's allocator.
//!
//! While a stream is routed to a pool ([`DeviceAllocator::begin_allocate_to_pool`]),
//! its allocations come from that pool's own free blocks, or from new
//! classic segments that belong to the pool (like PyTorch, private pools
//! never use expandable segments: a graph replays into fixed addresses,
//! so their pages must never move or be unmapped, and creating or mapping
//! pages is no business of a stream capture). A block of a private pool is
//! filed in the pool's own free sets, never in the shared ones, so no other
//! stream or pool is handed it, page moving and lending never see it, and
//! `empty_cache` leaves it alone, for as long as the pool lives.
//!
//! Pools are counted like PyTorch's: each `begin_allocate_to_pool` of a
//! pool takes a use, each [`DeviceAllocator::release_pool`] gives one back.
//! At zero the pool is released: its wholly free segments go to the shared
//! cache at once (free blocks of the shared pools, reusable by anyone
//! without a driver call), the others when their last block is freed. A
//! released pool that still holds live blocks keeps its id: a new `begin`
//! revives it, and its remaining segments are private again (PyTorch's
//! `torch.compile` warm-up begins, ends and releases its pool each time).
//! A `torch.cuda.MemPool` ends as PyTorch's does
//! ([`DeviceAllocator::release_pool_and_empty_cache`]): at its last use
//! its wholly free segments go back to the device rather than to the
//! shared cache.
//!
//! While any pool is being allocated to (a capture is under way), `malloc`
//! does not poll stream events: querying events is not allowed during a
//! stream capture. Events are polled again at the next `malloc` after the
//! capture. Nor does `free` record events then (PyTorch's
//! `needs_events_deferred_until_no_capture`): an event recorded on a
//! capturing stream becomes a node of the graph and can never be queried.
//! A block freed during a capture that was used on other streams waits,
//! handed to no one, until no capture is under way; its events are
//! recorded then, at the next `malloc` or synchronization.

use std::collections::HashMap;

use expanse_device::StreamId;

use super::{DeviceAllocator, Request};
use crate::block::{Block, BlockId};
use crate::error::AllocError;
use crate::pool::Pool;
use crate::size_class::{allocation_size, round_size};

/// A private pool's id: PyTorch's `MempoolId_t`, a pair of integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PoolId(pub u64, pub u64);

/// One private pool. Its slot number is stored in each of its blocks
/// (`Block::private`; 0 means the shared pools).
#[derive(Debug, Default)]
struct PrivatePool {
    id: Option<PoolId>,
    /// Free blocks of the pool, small and large (indexed by [`PoolKind`](crate::block::PoolKind)).
    pools: [Pool; 2],
    /// Uses not yet given back by `release_pool`.
    use_count: u32,
    /// Classic segments that belong to the pool.
    segments: u32,
}

/// The private pools of one device.
#[derive(Debug, Default)]
pub(super) struct PrivatePools {
    /// Slot `i` is `slots[i - 1]`; `None` once the pool is gone.
    slots: Vec<Option<PrivatePool>>,
    by_id: HashMap<PoolId, u32>,
    /// Pools being allocated to (slot), with the stream routed to each
    /// (`None`: the caller names the pool at each `malloc_in_pool`).
    routes: Vec<(Option<StreamId>, u32)>,
    /// Blocks freed during a capture with other streams' uses pending:
    /// neither free nor waiting on events until the capture is over.
    deferred: Vec<BlockId>,
}

impl PrivatePools {
    /// The pool slot `stream` allocates to now, if any.
    pub(super) fn route(&self, stream: StreamId) -> Option<u32> {
        self.routes.iter().find(|(s, _)| *s == Some(stream)).map(|&(_, slot)| slot)
    }

    /// Whether any stream is allocating to a private pool (a capture is
    /// under way).
    pub(super) fn capturing(&self) -> bool {
        !self.routes.is_empty()
    }

    fn get(&self, slot: u32) -> &PrivatePool {
        self.slots[slot as usize - 1].as_ref().expect("live private pool")
    }

    fn get_mut(&mut self, slot: u32) -> &mut PrivatePool {
        self.slots[slot as usize - 1].as_mut().expect("live private pool")
    }

    /// Free sets of every live private pool (for the invariants).
    pub(super) fn all_pools(&self) -> impl Iterator<Item = &Pool> {
        self.slots.iter().flatten().flat_map(|p| p.pools.iter())
    }
}

impl DeviceAllocator {
    /// From now on, allocations on `stream` come from private pool `pool`
    /// (created at its first use); takes one use of the pool, given back by
    /// [`Self::release_pool`].
    pub fn begin_allocate_to_pool(&mut self, pool: PoolId, stream: StreamId) -> Result<(), AllocError> {
        self.begin_pool(pool, Some(stream))
    }

    /// Like [`Self::begin_allocate_to_pool`], for a caller that decides
    /// itself which allocations go to the pool and names it at each
    /// [`Self::malloc_in_pool`] (PyTorch passes a stream filter, evaluated
    /// per allocation).
    pub fn begin_allocate_to_pool_by_name(&mut self, pool: PoolId) -> Result<(), AllocError> {
        self.begin_pool(pool, None)
    }

    /// Allocate `size` bytes on `stream` from private pool `pool`, which
    /// must be being allocated to ([`Self::begin_allocate_to_pool_by_name`]).
    pub fn malloc_in_pool(&mut self, size: u64, stream: StreamId, pool: PoolId) -> Result<u64, AllocError> {
        self.settle();
        let slot = self.pool_slot(pool, "malloc_in_pool")?;
        if !self.private.routes.iter().any(|&(_, s)| s == slot) {
            return Err(AllocError::Misuse {
                message: format!("malloc_in_pool: pool {pool:?} is not being allocated to (call begin first)"),
            });
        }
        if size > crate::size_class::MAX_REQUEST {
            self.stats.num_ooms += 1;
            return Err(AllocError::TooLarge { requested: size });
        }
        self.malloc_private(size, stream, slot)
    }

    fn begin_pool(&mut self, pool: PoolId, stream: Option<StreamId>) -> Result<(), AllocError> {
        self.settle();
        if let Some(slot) = stream.and_then(|s| self.private.route(s)) {
            let other = self.private.get(slot).id;
            return Err(AllocError::Misuse {
                message: format!(
                    "begin_allocate_to_pool({pool:?}) on stream {stream:?}, which already allocates to pool {other:?}: end that first"
                ),
            });
        }
        let slot = match self.private.by_id.get(&pool) {
            Some(&slot) => slot,
            None => {
                self.private.slots.push(Some(PrivatePool { id: Some(pool), ..PrivatePool::default() }));
                let slot = self.private.slots.len() as u32;
                self.private.by_id.insert(pool, slot);
                slot
            }
        };
        self.private.get_mut(slot).use_count += 1;
        self.private.routes.push((stream, slot));
        Ok(())
    }

    /// Stop routing allocations to `pool` (every stream routed to it). Its
    /// memory stays private until [`Self::release_pool`].
    pub fn end_allocate_to_pool(&mut self, pool: PoolId) -> Result<(), AllocError> {
        self.settle();
        let slot = self.pool_slot(pool, "end_allocate_to_pool")?;
        self.private.routes.retain(|&(_, s)| s != slot);
        Ok(())
    }

    /// Give back one use of `pool`. At the last, the pool is released: its
    /// wholly free segments join the shared cache now, the rest once their
    /// blocks are freed.
    pub fn release_pool(&mut self, pool: PoolId) -> Result<(), AllocError> {
        self.settle();
        let slot = self.pool_slot(pool, "release_pool")?;
        let p = self.private.get_mut(slot);
        if p.use_count == 0 {
            return Err(AllocError::Misuse { message: format!("release_pool: pool {pool:?} was already released") });
        }
        p.use_count -= 1;
        if p.use_count > 0 {
            return Ok(());
        }
        self.private.routes.retain(|&(_, s)| s != slot);
        let free: Vec<BlockId> =
            self.private.get(slot).pools.iter().flat_map(|p| p.free.iter().map(|k| k.block)).collect();
        for id in free {
            if !self.blocks.get(id).is_split() {
                self.remove_from_pool(id);
                self.insert_into_pool(id);
            }
        }
        self.drop_pool_if_empty(slot);
        Ok(())
    }

    /// PyTorch's `~MemPool` (`releasePool`, then `emptyCache` of that
    /// pool): give back one use of `pool`, and if it was the last, return
    /// the pool's wholly free segments to the device now instead of filing
    /// them in the shared cache. Its segments with live blocks join the
    /// shared cache as [`Self::release_pool`] says, when their last block
    /// is freed (the next `empty_cache` returns them). While a capture is
    /// under way nothing goes back to the device (no driver free is
    /// allowed then): this is then [`Self::release_pool`].
    pub fn release_pool_and_empty_cache(&mut self, pool: PoolId) -> Result<(), AllocError> {
        self.settle();
        let slot = self.pool_slot(pool, "release_pool_and_empty_cache")?;
        if self.private.get(slot).use_count == 1 && !self.private.capturing() {
            let free: Vec<BlockId> =
                self.private.get(slot).pools.iter().flat_map(|p| p.free.iter().map(|k| k.block)).collect();
            for id in free {
                if !self.blocks.get(id).is_split() {
                    self.release_block(id)?;
                    self.private.get_mut(slot).segments -= 1;
                }
            }
        }
        self.release_pool(pool)
    }

    /// Uses of `pool` not yet given back (PyTorch's `getPoolUseCount`): 0
    /// for a released pool whose segments still hold live blocks.
    pub fn pool_use_count(&self, pool: PoolId) -> Result<u32, AllocError> {
        let slot = self.pool_slot(pool, "pool_use_count")?;
        Ok(self.private.get(slot).use_count)
    }

    /// The id of the pool block `b` belongs to: `PoolId(0, 0)` for the
    /// shared pools (PyTorch's default pool in a snapshot).
    pub(super) fn pool_id_of(&self, b: &Block) -> PoolId {
        if b.private == 0 {
            return PoolId(0, 0);
        }
        self.private.get(b.private).id.unwrap_or(PoolId(0, 0))
    }

    /// Record the events of freed block `id` (used on other streams), or,
    /// during a capture, keep it aside until no capture is under way.
    pub(super) fn insert_events_unless_capturing(&mut self, id: BlockId) -> Result<(), AllocError> {
        if self.private.capturing() {
            self.private.deferred.push(id);
            Ok(())
        } else {
            self.insert_events(id)
        }
    }

    /// Once no capture is under way, record the events of the blocks freed
    /// during one. A failure leaves the blocks not yet done for next time.
    #[inline]
    pub(super) fn insert_deferred_events(&mut self) -> Result<(), AllocError> {
        if self.private.deferred.is_empty() || self.private.capturing() {
            return Ok(());
        }
        self.insert_deferred_events_now()
    }

    /// [`Self::insert_deferred_events`] when there are some (out of line:
    /// every malloc asks, few find any).
    #[inline(never)]
    fn insert_deferred_events_now(&mut self) -> Result<(), AllocError> {
        let ids = std::mem::take(&mut self.private.deferred);
        for (i, &id) in ids.iter().enumerate() {
            if let Err(e) = self.insert_events(id) {
                self.private.deferred.extend_from_slice(&ids[i + 1..]);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Blocks freed during a capture whose events wait for its end.
    pub fn deferred_block_count(&self) -> usize {
        self.private.deferred.len()
    }

    /// Private pools still holding memory (live, or released with blocks
    /// still allocated).
    pub fn private_pool_count(&self) -> usize {
        self.private.slots.iter().flatten().count()
    }

    fn pool_slot(&self, pool: PoolId, what: &str) -> Result<u32, AllocError> {
        self.private
            .by_id
            .get(&pool)
            .copied()
            .ok_or_else(|| AllocError::Misuse { message: format!("{what}: unknown private pool {pool:?}") })
    }

    /// File free block `id` of a private pool in its pool's free sets. A
    /// wholly free segment of a released pool joins the shared pools here.
    pub(super) fn insert_private(&mut self, id: BlockId) {
        let b = self.blocks.get_mut(id);
        let slot = b.private;
        let released = self.private.get(slot).use_count == 0;
        if released && !b.is_split() {
            b.private = 0;
            self.pools[b.pool as usize].insert(id, b);
            self.private.get_mut(slot).segments -= 1;
            self.drop_pool_if_empty(slot);
        } else {
            self.private.get_mut(slot).pools[b.pool as usize].insert(id, b);
        }
    }

    /// Take block `id` of a private pool out of its pool's free sets.
    pub(super) fn remove_private(&mut self, id: BlockId) -> bool {
        let b = self.blocks.get(id);
        self.private.get_mut(b.private).pools[b.pool as usize].remove(id, b)
    }

    /// The free sets block `b` is in (for the invariants).
    pub(super) fn pool_of_block(&self, b: &Block) -> &Pool {
        if b.private != 0 {
            &self.private.get(b.private).pools[b.pool as usize]
        } else {
            &self.pools[b.pool as usize]
        }
    }

    fn drop_pool_if_empty(&mut self, slot: u32) {
        let Some(p) = self.private.slots[slot as usize - 1].as_ref() else { return };
        if p.use_count == 0 && p.segments == 0 {
            if let Some(id) = p.id {
                self.private.by_id.remove(&id);
            }
            self.private.slots[slot as usize - 1] = None;
        }
    }

    /// `malloc` for a stream routed to private pool `slot`: best fit among
    /// the pool's free blocks of this stream, else a new classic segment of
    /// the pool (after freeing the shared cache if the device is full).
    pub(super) fn malloc_private(&mut self, orig_size: u64, stream: StreamId, slot: u32) -> Result<u64, AllocError> {
        let size = round_size(orig_size, &self.config);
        let pool = Self::pool_of(size);
        let mut p = Request { size, segment_size: allocation_size(size), stream, pool, block: None };
        let free = &mut self.private.get_mut(slot).pools[pool as usize].free;
        // Only this stream's keys, smallest first.
        let fit = free.at_least(stream, size).next().copied();
        if let Some(k) = fit {
            free.remove(&k);
            p.block = Some(k.block);
        } else if !self.new_private_segment(&mut p, slot)? {
            // Free what the shared cache holds (never another pool's), retry.
            self.release_cached_blocks()?;
            if !self.new_private_segment(&mut p, slot)? {
                return Err(self.out_of_memory(&p));
            }
        }
        let id = p.block.expect("found block");
        self.alloc_found_block(&p, id, orig_size)
    }

    /// A new classic segment for private pool `slot`; false when the device
    /// (or the memory fraction) has no room.
    fn new_private_segment(&mut self, p: &mut Request, slot: u32) -> Result<bool, AllocError> {
        let size = p.segment_size;
        if self.memory_fraction.is_some() && self.reserved + size > self.allowed_memory_maximum {
            return Ok(false);
        }
        let made = self.new_classic_segment(p, slot)?;
        if made {
            self.private.get_mut(slot).segments += 1;
        }
        Ok(made)
    }
}
