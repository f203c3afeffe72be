//! Recording: the allocation history (off by default: one branch per
//! event site) and snapshots of the allocator's state for PyTorch's
//! memory viewer.

use expanse_device::StreamId;

use super::DeviceAllocator;
use crate::block::{BlockId, SegmentRef};
use crate::history::{Action, Clock, History};
use crate::snapshot::{BlockInfo, BlockState, DeviceSnapshot, SegmentInfo};

impl DeviceAllocator {
    /// Record the allocation history in a ring buffer of at most
    /// `max_entries` entries (`Some`), timestamped in microseconds from
    /// now; or stop recording and forget it (`None`). Enabling it again
    /// keeps what is held and changes the bound.
    pub fn record_history(&mut self, max_entries: Option<usize>) {
        match (max_entries, self.history.as_deref_mut()) {
            (None, _) => self.history = None,
            (Some(n), Some(h)) => h.set_max_entries(n),
            (Some(n), None) => self.history = Some(Box::new(History::new(n))),
        }
    }

    /// Record the history with timestamps from `clock` (a new, empty
    /// buffer of at most `max_entries` entries).
    pub fn record_history_with_clock(&mut self, max_entries: usize, clock: Clock) {
        self.history = Some(Box::new(History::with_clock(max_entries, clock)));
    }

    /// The history, when recorded.
    pub fn history(&self) -> Option<&History> {
        self.history.as_deref()
    }

    /// Record one event if the history is on.
    #[inline]
    pub(super) fn record(&mut self, action: Action, addr: u64, size: u64, stream: StreamId) {
        if let Some(h) = self.history.as_deref_mut() {
            h.push(action, addr, size, stream);
        }
    }

    /// The state of every segment and block, and the history (a `snapshot`
    /// entry is recorded first).
    pub fn snapshot(&mut self) -> DeviceSnapshot {
        self.settle();
        self.record(Action::Snapshot, 0, 0, StreamId(0));
        let device = self.device.ordinal();
        let firsts: Vec<BlockId> = self.blocks.iter().filter(|(_, b)| b.prev.is_none()).map(|(id, _)| id).collect();
        let mut segments = Vec::new();
        for first in firsts {
            self.segment_infos(device, first, &mut segments);
        }
        segments.sort_by_key(|s| s.address);
        let trace = self.history.as_deref().map(|h| h.entries().copied().collect()).unwrap_or_default();
        DeviceSnapshot { device, segments, trace }
    }

    /// The segments of the block list starting at `first`: the classic
    /// segment, or each mapped run of the expandable one.
    fn segment_infos(&self, device: u32, first: BlockId, out: &mut Vec<SegmentInfo>) {
        let head = self.blocks.get(first);
        let (stream, pool) = (head.stream, head.pool);
        let expandable = matches!(head.segment, SegmentRef::Expandable(_));
        let pool_id = self.pool_id_of(head);
        let segment = |run: Vec<BlockInfo>| SegmentInfo {
            pool_id,
            ..SegmentInfo::from_blocks(device, stream, pool, expandable, run)
        };
        let mut run: Vec<BlockInfo> = Vec::new();
        let mut next = Some(first);
        while let Some(id) = next {
            let b = self.blocks.get(id);
            next = b.next;
            if !b.mapped {
                if !run.is_empty() {
                    out.push(segment(std::mem::take(&mut run)));
                }
                continue;
            }
            let state = if b.allocated {
                BlockState::ActiveAllocated
            } else if b.event_count > 0 {
                BlockState::ActivePendingFree
            } else {
                BlockState::Inactive
            };
            let requested_size = if state == BlockState::Inactive { 0 } else { b.requested };
            run.push(BlockInfo { address: b.addr, size: b.size, requested_size, state });
        }
        if !run.is_empty() {
            out.push(segment(run));
        }
    }
}
