//! Refused growth: asking the device once for all the bytes a growth
//! misses, and remembering a refusal until anything changes.
//!
//! An expandable segment grows by creating pages one by one until the
//! device refuses, then undoes them all. When the device's free memory
//! cannot cover the growth, that refusal is certain: the growth asks the
//! device once for all the missing bytes instead (as a classic segment's
//! `malloc` asks once for the whole segment), so memory that another
//! process freed meanwhile is not missed. A refused growth is remembered
//! with a stamp of the blocks and pool sets: while the stamp holds, the
//! same request would search the same blocks, find the same candidate and
//! reach the same refusal, so it only asks the device again. Likewise a
//! request that no other stream's free block could serve is not searched
//! again, and a cache release that found nothing to release is not
//! scanned again (nor are page donors looked for), while the stamp holds.

use std::sync::Arc;

use expanse_device::StreamId;

use super::DeviceAllocator;
use crate::block::PoolKind;
use crate::error::AllocError;
use crate::expandable_segment::{release_pages_keeping, Page};

/// What the allocator's blocks and pool sets look like: equal stamps mean
/// no block and no pool set changed in between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stamp {
    generation: u64,
    set_sizes: [usize; 4],
}

/// A growth of `stream`'s `pool` by a request of `size` bytes that the
/// device refused when asked for `missing` bytes, in the state `stamp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct RefusedGrowth {
    pub stream: StreamId,
    pub pool: PoolKind,
    pub size: u64,
    pub missing: u64,
    pub stamp: Stamp,
}

/// The last out-of-memory path's searches that found nothing, each with
/// the state it searched.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Refusals {
    /// A growth the device refused outright.
    pub growth: Option<RefusedGrowth>,
    /// A request no other stream's free block could serve, as
    /// `(stream, pool, size, stamp)`.
    pub lend: Option<(StreamId, PoolKind, u64, Stamp)>,
    /// Per pool: a cache release that found nothing to release (no free
    /// block holding a wholly free page or last used by another stream, no
    /// free unsplit classic segment).
    pub nothing_to_release: [Option<Stamp>; 2],
}

impl DeviceAllocator {
    /// The state's stamp.
    pub(super) fn stamp(&self) -> Stamp {
        let [small, large] = &self.pools;
        Stamp {
            generation: self.blocks.generation(),
            set_sizes: [small.free.len(), small.unmapped.len(), large.free.len(), large.unmapped.len()],
        }
    }

    /// Whether `stamp` is the state's (compared field by field, without
    /// building a stamp: this runs several times per failed allocation).
    pub(super) fn is_current(&self, stamp: &Stamp) -> bool {
        let [small, large] = &self.pools;
        stamp.generation == self.blocks.generation()
            && stamp.set_sizes[0] == small.free.len()
            && stamp.set_sizes[1] == small.unmapped.len()
            && stamp.set_sizes[2] == large.free.len()
            && stamp.set_sizes[3] == large.unmapped.len()
    }

    /// Whether a cache release found nothing to release in `pool` in this
    /// very state: then there is none, and no page to move either.
    pub(super) fn nothing_to_release(&self, pool: PoolKind) -> bool {
        self.refused.nothing_to_release[pool as usize].is_some_and(|s| self.is_current(&s))
    }

    /// Ask the device for a page of `missing` bytes (a multiple of the
    /// granularity); a page it grants goes straight back. Whether it was
    /// refused for lack of memory.
    pub(super) fn refuses(&mut self, missing: u64) -> Result<bool, AllocError> {
        match self.device.create_page(missing) {
            Ok(handle) => {
                self.stats.pages.created += 1;
                let page = Page { handle, size: missing };
                let device = Arc::clone(&self.device);
                release_pages_keeping(device.as_ref(), vec![page], &mut self.stats.pages, &mut self.unreleased_pages)?;
                Ok(false)
            }
            Err(e) if e.is_out_of_memory() => Ok(true),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether growing `stream`'s `pool` for `size` bytes was refused in
    /// this very state and the device refuses the missing bytes again: the
    /// growth fails as it would after searching, moving nothing and asking
    /// the device for the same bytes. Forgets the refusal otherwise.
    pub(super) fn refused_again(&mut self, stream: StreamId, pool: PoolKind, size: u64) -> Result<bool, AllocError> {
        let Some(r) = self.refused.growth.take() else {
            return Ok(false);
        };
        if (r.stream, r.pool, r.size) != (stream, pool, size)
            || !self.is_current(&r.stamp)
            || !self.refuses(r.missing)?
        {
            return Ok(false);
        }
        self.refused.growth = Some(r);
        Ok(true)
    }
}
