//! Streams: cross-stream ordering of reuse (event waits, never host
//! waits), lending free blocks across streams when the policy allows,
//! `record_stream` and the events that hold a freed block until the
//! streams that used it are done.

use std::collections::{HashMap, VecDeque};

use expanse_device::{EventId, StreamId};

use super::marks::Cover;
use super::{DeviceAllocator, PendingEvent, Request};
use crate::block::BlockId;
use crate::error::AllocError;
use crate::history::Action;

/// What each stream already waited for, so that reusing on one stream
/// memory freed by another asks the device for one event wait per free of
/// the other stream at most, not one per block.
///
/// Every free ticks a clock and stamps the block ([`Block::freed_at`]).
/// When `waiter` waits on an event recorded on `on` at clock `t`, all the
/// work `on` queued before `t` comes first on `waiter`: that includes all
/// work on memory freed at or before `t`, since a free follows the work
/// queued on the memory (PyTorch frees a block once its last kernel is
/// queued; `record_stream` delays the free until the events complete).
/// So a block freed at `f <= t` and last used on `on` is already ordered
/// for `waiter`.
///
/// [`Block::freed_at`]: crate::block::Block::freed_at
#[derive(Debug, Default)]
pub(super) struct StreamOrder {
    /// Frees so far.
    clock: u64,
    /// For (waiter, on): the clock when `waiter` last waited on `on`.
    waited: HashMap<(StreamId, StreamId), u64>,
}

impl StreamOrder {
    /// One more free; its stamp.
    #[inline(always)]
    pub(super) fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Whether `waiter` waited on `on` after the free stamped `freed_at`.
    pub(super) fn waited_after(&self, waiter: StreamId, on: StreamId, freed_at: u64) -> bool {
        self.waited.get(&(waiter, on)).is_some_and(|&t| freed_at <= t)
    }

    /// `waiter` waited on an event recorded on `on` at the free stamped
    /// `stamp` (a mark, `marks.rs`), or just now (`stamp` the clock).
    pub(super) fn waited_at(&mut self, waiter: StreamId, on: StreamId, stamp: u64) {
        let t = self.waited.entry((waiter, on)).or_default();
        *t = (*t).max(stamp);
    }

    /// The stamp of the last free.
    pub(super) fn clock(&self) -> u64 {
        self.clock
    }

    /// Whether a block's free stamp is not in the future (for
    /// `check_invariants`).
    pub(super) fn stamped_by_now(&self, freed_at: u64) -> bool {
        freed_at <= self.clock
    }

    /// Whether no wait is stamped in the future (for `check_invariants`).
    pub(super) fn waits_by_now(&self) -> bool {
        self.waited.values().all(|&t| t <= self.clock)
    }
}

impl DeviceAllocator {
    /// Whether block `id` can be handed to `stream` now. Always, outside a
    /// CUDA graph capture. During one, only without an event wait on
    /// another stream: that stream may be capturing, and an event recorded
    /// on it would be a node of the graph, never run, which `stream` would
    /// then wait on (so joining the capture). The block waits for the end
    /// of the capture; the malloc is served otherwise.
    #[inline(always)]
    pub(super) fn reusable_now(&self, id: BlockId, stream: StreamId) -> bool {
        !self.private.capturing() || self.waits_for_reuse(id, stream).next().is_none()
    }

    /// The streams `stream` must wait on before it reuses block `id`: every
    /// other stream that may still touch it, except those `stream` already
    /// waited on after the block was freed ([`StreamOrder`]).
    fn waits_for_reuse(&self, id: BlockId, stream: StreamId) -> impl Iterator<Item = StreamId> + '_ {
        let b = self.blocks.get(id);
        b.last_use.iter().filter(move |&s| s != stream && !self.order.waited_after(stream, s, b.freed_at_by(s)))
    }

    /// Order `stream`'s coming work after every other stream that may still
    /// touch block `id` ([`Self::waits_for_reuse`]): for each, the event
    /// recorded at its free when there is one (`marks.rs`; no wait at all
    /// once it completed), else an event recorded now, waited on by
    /// `stream` (no host wait). Changes neither the block nor the pools
    /// (only the marks and what was waited on), so a failed call leaves the
    /// block exactly where it was; `hand_out` then makes `stream` the
    /// block's only user (a split's remainder keeps its users). Once
    /// `stream` frees it, a third stream that reuses it waits on `stream`,
    /// and so, through this wait, on the earlier users too: stream order is
    /// transitive, and the property tests' ordering model checks it so.
    pub(super) fn order_reuse(&mut self, id: BlockId, stream: StreamId) -> Result<(), AllocError> {
        if self.blocks.get(id).last_use.all_are(stream) {
            return Ok(());
        }
        let others: Vec<StreamId> = self.waits_for_reuse(id, stream).collect();
        for other in others {
            self.note_reuse_of(other);
            let freed_at = self.blocks.get(id).freed_at_by(other);
            let stamp = match self.cover(other, freed_at)? {
                Cover::Done => continue,
                Cover::Wait(e, stamp) => {
                    self.device.wait_event(stream, e)?;
                    stamp
                }
                Cover::None => {
                    let e = self.device.record_event(other)?;
                    let waited = self.device.wait_event(stream, e);
                    let released = self.release_event(e);
                    waited?;
                    released?;
                    self.order.clock()
                }
            };
            self.order.waited_at(stream, other, stamp);
            self.stats.cross_stream_waits += 1;
        }
        Ok(())
    }

    /// When the policy lends and the request's stream has no cached block that fits,
    /// take the best-fitting free block of another stream's expandable
    /// segment instead of growing. The reuse is stream-ordered by
    /// `order_reuse` (an event wait, no page operation, no host wait).
    pub(super) fn lend_free_block(&mut self, p: &mut Request) -> bool {
        if !self.policy.lending.lends() {
            return false;
        }
        // The same request found nothing in this very state (`refusal.rs`).
        if self.refused.lend.is_some_and(|(s, pool, size, stamp)| {
            (s, pool, size) == (p.stream, p.pool, p.size) && self.is_current(&stamp)
        }) {
            return false;
        }
        let best = self.best_fit_across_streams(p.pool, p.size, |k, b| k.stream != p.stream && b.is_expandable());
        if best.is_some_and(|k| !self.reusable_now(k.block, p.stream)) {
            // Not now (`reusable_now`); nor remembered as refused: the
            // same request may lend it once the capture is over.
            return false;
        }
        let pool = &mut self.pools[p.pool as usize];
        let Some(k) = best else {
            self.refused.lend = Some((p.stream, p.pool, p.size, self.stamp()));
            return false;
        };
        pool.free.remove(&k);
        p.block = Some(k.block);
        self.record(Action::Lend, k.addr, k.size, p.stream);
        true
    }

    /// Mark the allocation at `ptr` as used on `stream` too: when freed, it
    /// is reused only after the work queued on `stream` by then completed.
    pub fn record_stream(&mut self, ptr: u64, stream: StreamId) -> Result<(), AllocError> {
        self.settle();
        let Some(id) = self.active.get(ptr) else {
            return Err(AllocError::Misuse { message: format!("record_stream on unknown pointer {ptr:#x}") });
        };
        let b = self.blocks.get_mut(id);
        if stream != b.stream && !b.stream_uses.contains(&stream) {
            b.stream_uses.push(stream);
        }
        Ok(())
    }

    /// Record an event on every stream the freed block `id` was used on;
    /// the block is cached once they all completed.
    pub(super) fn insert_events(&mut self, id: BlockId) -> Result<(), AllocError> {
        let streams = std::mem::take(&mut self.blocks.get_mut(id).stream_uses);
        for (i, s) in streams.iter().enumerate() {
            match self.device.record_event(*s) {
                Ok(e) => {
                    self.blocks.get_mut(id).event_count += 1;
                    self.events.entry(*s).or_default().push_back(PendingEvent { event: e, block: id });
                }
                Err(err) => {
                    // Cannot order the reuse: wait for the streams instead,
                    // so the block is never handed out too early.
                    for rest in &streams[i..] {
                        self.device.synchronize_stream(*rest)?;
                    }
                    if self.blocks.get(id).event_count == 0 {
                        self.free_block(id);
                    }
                    return Err(err.into());
                }
            }
        }
        Ok(())
    }

    /// Free blocks whose stream events completed (lazily, at each malloc).
    pub(super) fn process_events(&mut self) -> Result<(), AllocError> {
        self.insert_deferred_events()?;
        if self.events.is_empty() {
            return Ok(());
        }
        let streams: Vec<StreamId> = self.events.keys().copied().collect();
        for s in streams {
            while let Some(&PendingEvent { event: e, block: id }) = self.events.get(&s).and_then(|q| q.front()) {
                if !self.device.query_event(e)? {
                    break;
                }
                self.events.get_mut(&s).expect("queue").pop_front();
                // The event completed: the block is done with it even if
                // the driver fails to release it (kept for teardown).
                self.event_done(id);
                self.release_event(e)?;
            }
            if self.events.get(&s).is_some_and(VecDeque::is_empty) {
                self.events.remove(&s);
            }
        }
        Ok(())
    }

    /// One of block `id`'s events completed.
    fn event_done(&mut self, id: BlockId) {
        let b = self.blocks.get_mut(id);
        b.event_count -= 1;
        if b.event_count == 0 {
            // Stamped at the user's free when marked (`mark_user_free`).
            let stamped = self.marks_frees();
            self.free_block_stamped(id, stamped);
        }
    }

    /// Wait for the whole device, then complete every pending event.
    pub(super) fn synchronize_and_free_events(&mut self) -> Result<(), AllocError> {
        self.insert_deferred_events()?;
        self.device.synchronize()?;
        self.retire_all_marks();
        if self.events.is_empty() {
            return Ok(());
        }
        let all: Vec<_> = std::mem::take(&mut self.events).into_values().flatten().collect();
        let mut first_error = Ok(());
        for PendingEvent { event: e, block: id } in all {
            self.event_done(id);
            if let Err(err) = self.release_event(e) {
                first_error = first_error.and(Err(err));
            }
        }
        first_error
    }

    /// Release event `e`; one the driver failed to release is kept and
    /// tried again at teardown, so nothing is lost.
    pub(super) fn release_event(&mut self, e: EventId) -> Result<(), AllocError> {
        self.device.release_event(e).map_err(|err| {
            self.unreleased_events.push(e);
            err.into()
        })
    }
}
