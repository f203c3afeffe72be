//! Marks: an event recorded on a stream when it frees memory that another
//! stream may reuse, so that the reuse waits for that stream's work up to
//! the free, not for everything it queued since.
//!
//! Why: reusing a block that another stream used asks that stream's work
//! on it to come first ([`StreamOrder`](super::streams::StreamOrder)).
//! Without a mark the only event to wait on is one recorded at the reuse,
//! which also orders the reusing stream after all the other stream's
//! later work. With a side stream that prefetches (uploads queued ahead
//! of the compute), each such wait made the compute wait for the next
//! upload, and each upload for the compute queued so far: the two streams
//! stopped overlapping, the device fell behind the host, and more freed
//! memory waited for its events (rsvd_pca_stream live: 0.76-1.16 GB
//! reserved against 0.54 GB for its replay; with marks 0.54-1.10 GB,
//! median 0.62 GB against 1.16; `docs/policy-study.md`, round 42).
//!
//! A mark is recorded only where a reuse by another stream is likely: a
//! block of one stream's segment freed by another stream that borrowed
//! it, and a block `record_stream`ed to other streams (its own stream is
//! marked at the user's free, beside the events the other streams get);
//! and only by a stream whose freed memory another stream reused within
//! its last [`DEMAND_WINDOW`] frees. Recording an event costs about a
//! microsecond: marking every borrowed free made one thread on a stream of
//! its own, borrowing from the default stream's segment and never reused
//! by anyone, 3.8x slower on the H200 (`docs/gpu-results.md` 33). Only
//! when the policy lends across streams: the byte-exact PyTorch modes
//! never reuse across streams, and record no mark. A mark changes no
//! decision: which block a request gets is decided before its waits.
//!
//! At a reuse, the first mark of the other stream stamped at or after the
//! block's free covers the block: when it completed, no wait at all (and
//! every earlier mark is retired); otherwise the reusing stream waits on
//! it. A stream keeps at most [`MAX_MARKS`] marks; the oldest go first,
//! and a block no mark covers is ordered as before, by an event recorded
//! at the reuse.
#![forbid(unsafe_code)]

use std::collections::{HashMap, VecDeque};

use expanse_device::{EventId, StreamId};

use super::DeviceAllocator;
use crate::block::BlockId;
use crate::error::AllocError;

/// Marks a stream keeps at most.
const MAX_MARKS: usize = 64;

/// A stream marks its frees while another stream reused memory it freed
/// within this many frees (of any stream).
const DEMAND_WINDOW: u64 = 4096;

/// An event recorded on a stream at the free stamped `stamp`: every work
/// that stream queued on memory freed at or before `stamp` comes before it.
#[derive(Clone, Copy, Debug)]
struct Mark {
    stamp: u64,
    event: EventId,
}

/// The marks of every stream, and what is known done.
#[derive(Debug, Default)]
pub(super) struct Marks {
    /// Per stream, oldest first (stamps increase).
    per_stream: HashMap<StreamId, VecDeque<Mark>>,
    /// Per stream: a mark stamped here completed, so all its work on
    /// memory freed at or before this stamp is done.
    done: HashMap<StreamId, u64>,
    /// Per stream: the free clock when another stream last reused memory
    /// it had used.
    reused: HashMap<StreamId, u64>,
}

/// How a reuse is ordered after a stream's work on a block.
pub(super) enum Cover {
    /// That work is done: nothing to wait for.
    Done,
    /// Wait on this mark, stamped at this free.
    Wait(EventId, u64),
    /// No mark covers the block.
    None,
}

impl Marks {
    /// Whether every mark and done stamp is not past `clock` (for
    /// `check_invariants`), and each stream's marks are in stamp order.
    pub(super) fn consistent(&self, clock: u64) -> bool {
        self.done.values().chain(self.reused.values()).all(|&t| t <= clock)
            && self.per_stream.values().all(|q| {
                q.iter().all(|m| m.stamp <= clock) && q.iter().zip(q.iter().skip(1)).all(|(a, b)| a.stamp <= b.stamp)
            })
    }
}

impl DeviceAllocator {
    /// Whether frees record marks: when the policy lends across streams.
    #[inline(always)]
    pub(super) fn marks_frees(&self) -> bool {
        self.policy.lending.lends()
    }

    /// Block `id`, `record_stream`ed to other streams, was just freed by
    /// the user: stamp it now (its work on its own stream was all queued
    /// before) and mark the stream that allocated it. Its events on the
    /// other streams keep it from reuse until they complete, and the stamp
    /// is kept then (`event_done`).
    pub(super) fn mark_user_free(&mut self, id: BlockId) {
        let stamp = self.order.tick();
        let b = self.blocks.get_mut(id);
        b.stamp_free(stamp);
        let user = b.last_use.iter().next();
        if let Some(user) = user {
            self.mark_free(user, stamp);
        }
    }

    /// A block of another stream's segment was just freed by `user`, the
    /// stream that borrowed it: mark `user` (the free's stamp is the last).
    pub(super) fn mark_lent_free(&mut self, user: StreamId) {
        let stamp = self.order.clock();
        self.mark_free(user, stamp);
    }

    /// Another stream is about to reuse memory that stream `s` used.
    pub(super) fn note_reuse_of(&mut self, s: StreamId) {
        let clock = self.order.clock();
        self.marks.reused.insert(s, clock);
    }

    /// Stream `s` freed memory stamped `stamp` that another stream may
    /// reuse: when others reused its memory lately, retire its marks that
    /// completed, make room, record a mark.
    /// Never fails: without the mark a reuse is ordered as before (a
    /// failed release is kept for teardown, as every event's).
    #[inline(never)]
    pub(super) fn mark_free(&mut self, s: StreamId, stamp: u64) {
        if self.marks.reused.get(&s).is_none_or(|&t| stamp.saturating_sub(t) > DEMAND_WINDOW) {
            return;
        }
        if self.private.capturing() {
            // An event recorded now would be a node of the graph.
            return;
        }
        self.retire_completed_marks(s);
        let full = self.marks.per_stream.get(&s).is_some_and(|q| q.len() >= MAX_MARKS);
        if full {
            let oldest = self.marks.per_stream.get_mut(&s).and_then(VecDeque::pop_front);
            if let Some(m) = oldest {
                let _ = self.release_event(m.event);
            }
        }
        if let Ok(event) = self.device.record_event(s) {
            self.marks.per_stream.entry(s).or_default().push_back(Mark { stamp, event });
        }
    }

    /// Retire stream `s`'s marks from the oldest while they completed.
    fn retire_completed_marks(&mut self, s: StreamId) {
        while let Some(&m) = self.marks.per_stream.get(&s).and_then(VecDeque::front) {
            if !matches!(self.device.query_event(m.event), Ok(true)) {
                break;
            }
            self.retire_marks_through(s, m.stamp);
        }
    }

    /// Retire stream `s`'s marks stamped at or before `stamp`, one of
    /// which completed: its work up to `stamp` is done.
    fn retire_marks_through(&mut self, s: StreamId, stamp: u64) {
        let q = self.marks.per_stream.entry(s).or_default();
        let mut gone = Vec::new();
        while q.front().is_some_and(|m| m.stamp <= stamp) {
            gone.extend(q.pop_front().map(|m| m.event));
        }
        if q.is_empty() {
            self.marks.per_stream.remove(&s);
        }
        let done = self.marks.done.entry(s).or_default();
        *done = (*done).max(stamp);
        for e in gone {
            let _ = self.release_event(e);
        }
    }

    /// How a reuse of memory that stream `s` used and that was freed at
    /// `freed_at` is ordered by the marks. A failed query is the device's
    /// error.
    pub(super) fn cover(&mut self, s: StreamId, freed_at: u64) -> Result<Cover, AllocError> {
        if self.marks.done.get(&s).is_some_and(|&t| freed_at <= t) {
            return Ok(Cover::Done);
        }
        let Some(m) = self.marks.per_stream.get(&s).and_then(|q| q.iter().find(|m| m.stamp >= freed_at)).copied()
        else {
            return Ok(Cover::None);
        };
        if self.device.query_event(m.event)? {
            self.retire_marks_through(s, m.stamp);
            return Ok(Cover::Done);
        }
        Ok(Cover::Wait(m.event, m.stamp))
    }

    /// The whole device is done: every mark completed. Release them all.
    pub(super) fn retire_all_marks(&mut self) {
        let clock = self.order.clock();
        let streams: Vec<StreamId> = self.marks.per_stream.keys().copied().collect();
        for s in streams {
            self.retire_marks_through(s, clock);
        }
    }

    /// The marks' events, for teardown.
    pub(super) fn take_mark_events(&mut self) -> Vec<EventId> {
        std::mem::take(&mut self.marks.per_stream).into_values().flatten().map(|m| m.event).collect()
    }
}
