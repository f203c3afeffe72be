//! Allocation history: a bounded ring buffer of trace entries, with the
//! actions of PyTorch's memory snapshots plus expanse's own.
//!
//! Off by default: the allocator holds an `Option` and every event site
//! costs one branch on it. When on, each entry is 40 bytes and the oldest
//! entries are dropped once `max_entries` are held.

use std::collections::VecDeque;
use std::fmt;
use std::time::Instant;

use expanse_device::StreamId;

/// What happened. The first nine are PyTorch's trace actions, with its
/// meaning; the last two are expanse's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// A block was handed to the user (`size`: bytes requested).
    Alloc,
    /// The user freed a block; it may still wait for stream events.
    FreeRequested,
    /// The freed block went back to its pool.
    FreeCompleted,
    /// A classic segment was allocated from the device.
    SegmentAlloc,
    /// A classic segment was returned to the device.
    SegmentFree,
    /// Pages were mapped into an expandable segment at `[addr, addr+size)`.
    SegmentMap,
    /// Pages were unmapped from an expandable segment.
    SegmentUnmap,
    /// A request failed for lack of memory (`addr`: free device bytes,
    /// as PyTorch records it; `size`: bytes requested).
    Oom,
    /// A snapshot was taken.
    Snapshot,
    /// expanse: the pages at `[addr, addr+size)` were unmapped to be
    /// mapped where a segment grows (a `segment_unmap` precedes it).
    PageMove,
    /// expanse: a free block of another stream was lent to `stream`.
    Lend,
}

impl Action {
    /// Every action, in declaration order.
    pub const ALL: [Action; 11] = [
        Action::Alloc,
        Action::FreeRequested,
        Action::FreeCompleted,
        Action::SegmentAlloc,
        Action::SegmentFree,
        Action::SegmentMap,
        Action::SegmentUnmap,
        Action::Oom,
        Action::Snapshot,
        Action::PageMove,
        Action::Lend,
    ];

    /// The name PyTorch's snapshot uses (`"alloc"`, `"segment_map"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Action::Alloc => "alloc",
            Action::FreeRequested => "free_requested",
            Action::FreeCompleted => "free_completed",
            Action::SegmentAlloc => "segment_alloc",
            Action::SegmentFree => "segment_free",
            Action::SegmentMap => "segment_map",
            Action::SegmentUnmap => "segment_unmap",
            Action::Oom => "oom",
            Action::Snapshot => "snapshot",
            Action::PageMove => "page_move",
            Action::Lend => "lend",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One recorded event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEntry {
    /// What happened.
    pub action: Action,
    /// Address (free device bytes for [`Action::Oom`]).
    pub addr: u64,
    /// Bytes.
    pub size: u64,
    /// The stream.
    pub stream: StreamId,
    /// Microseconds since recording started (or the injected clock's
    /// reading).
    pub time_us: u64,
}

/// Where timestamps come from.
pub enum Clock {
    /// Real time since this instant.
    Since(Instant),
    /// A clock the caller supplies (deterministic tests).
    Custom(Box<dyn FnMut() -> u64 + Send>),
}

impl Clock {
    fn now_us(&mut self) -> u64 {
        match self {
            Clock::Since(t) => t.elapsed().as_micros() as u64,
            Clock::Custom(f) => f(),
        }
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Clock::Since(t) => write!(f, "Clock::Since({t:?})"),
            Clock::Custom(_) => f.write_str("Clock::Custom"),
        }
    }
}

/// The ring buffer: the newest `max_entries` entries, oldest first.
#[derive(Debug)]
pub struct History {
    entries: VecDeque<TraceEntry>,
    max_entries: usize,
    clock: Clock,
    /// Entries dropped because the buffer was full.
    dropped: u64,
}

/// Entries allocated up front; the buffer grows from there to its bound.
const INITIAL_CAPACITY: usize = 4096;

impl History {
    /// Keep at most `max_entries` entries (at least one), timestamped in
    /// real microseconds from now.
    pub fn new(max_entries: usize) -> Self {
        Self::with_clock(max_entries, Clock::Since(Instant::now()))
    }

    /// Keep at most `max_entries` entries (at least one), timestamped by `clock`.
    pub fn with_clock(max_entries: usize, clock: Clock) -> Self {
        let max_entries = max_entries.max(1);
        History { entries: VecDeque::with_capacity(max_entries.min(INITIAL_CAPACITY)), max_entries, clock, dropped: 0 }
    }

    /// Record one event, dropping the oldest if full.
    pub fn push(&mut self, action: Action, addr: u64, size: u64, stream: StreamId) {
        if self.entries.len() == self.max_entries {
            self.entries.pop_front();
            self.dropped += 1;
        }
        let time_us = self.clock.now_us();
        self.entries.push_back(TraceEntry { action, addr, size, stream, time_us });
    }

    /// Change the bound, keeping the newest entries.
    pub fn set_max_entries(&mut self, max_entries: usize) {
        self.max_entries = max_entries.max(1);
        while self.entries.len() > self.max_entries {
            self.entries.pop_front();
            self.dropped += 1;
        }
    }

    /// The bound.
    pub fn max_entries(&self) -> usize {
        self.max_entries
    }

    /// The entries held, oldest first.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = &TraceEntry> + '_ {
        self.entries.iter()
    }

    /// Number of entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries dropped because the buffer was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counting_clock() -> Clock {
        let mut t = 0;
        Clock::Custom(Box::new(move || {
            t += 10;
            t
        }))
    }

    #[test]
    fn ring_keeps_the_newest_entries_in_order() {
        let mut h = History::with_clock(3, counting_clock());
        for i in 0..5u64 {
            h.push(Action::Alloc, 0x1000 * i, i, StreamId(0));
        }
        let addrs: Vec<u64> = h.entries().map(|e| e.addr).collect();
        assert_eq!(addrs, [0x2000, 0x3000, 0x4000]);
        let times: Vec<u64> = h.entries().map(|e| e.time_us).collect();
        assert_eq!(times, [30, 40, 50]);
        assert_eq!(h.dropped(), 2);
        h.set_max_entries(1);
        assert_eq!(h.entries().map(|e| e.addr).collect::<Vec<_>>(), [0x4000]);
        assert_eq!(h.dropped(), 4);
    }

    #[test]
    fn zero_bound_keeps_one_entry() {
        let mut h = History::new(0);
        h.push(Action::Oom, 7, 8, StreamId(1));
        h.push(Action::Snapshot, 0, 0, StreamId(1));
        assert_eq!(h.len(), 1);
        assert_eq!(h.entries().next().unwrap().action, Action::Snapshot);
    }

    #[test]
    fn action_names_are_pytorchs() {
        let names: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
        assert_eq!(
            names,
            [
                "alloc",
                "free_requested",
                "free_completed",
                "segment_alloc",
                "segment_free",
                "segment_map",
                "segment_unmap",
                "oom",
                "snapshot",
                "page_move",
                "lend"
            ]
        );
    }
}
