//! Memory snapshots in the shape PyTorch's memory viewer reads
//! (`torch.cuda.memory._snapshot()`, `torch.cuda._memory_viz`,
//! pytorch.org/memory_viz), and their pickle.
//!
//! `{"segments": [...], "device_traces": [[...], ...]}`:
//! - a segment is a classic segment, or one contiguous mapped run of an
//!   expandable segment (`is_expandable`); its blocks cover it exactly, in
//!   address order;
//! - `device_traces[d]` is device `d`'s history, oldest first.
//!
//! expanse records no stack traces: every `frames` list is empty.

use expanse_device::StreamId;

use crate::allocator::PoolId;
use crate::block::PoolKind;
use crate::history::{Action, TraceEntry};
use crate::pickle::PickleWriter;

/// State of a block, with PyTorch's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockState {
    /// Handed to a user.
    ActiveAllocated,
    /// Freed by the user, waiting for stream events before reuse.
    ActivePendingFree,
    /// Free (cached).
    Inactive,
}

impl BlockState {
    /// PyTorch's name.
    pub fn name(self) -> &'static str {
        match self {
            BlockState::ActiveAllocated => "active_allocated",
            BlockState::ActivePendingFree => "active_pending_free",
            BlockState::Inactive => "inactive",
        }
    }
}

/// One block of a segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockInfo {
    /// Start address.
    pub address: u64,
    /// Bytes.
    pub size: u64,
    /// Bytes the user asked for (0 when inactive).
    pub requested_size: u64,
    /// State.
    pub state: BlockState,
}

/// One segment: a classic segment, or a mapped run of an expandable one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    /// Device index.
    pub device: u32,
    /// Start address.
    pub address: u64,
    /// Bytes (the sum of its blocks' sizes).
    pub total_size: u64,
    /// Bytes of active_allocated blocks.
    pub allocated_size: u64,
    /// Bytes of active blocks (allocated or pending free).
    pub active_size: u64,
    /// Bytes requested by the allocated blocks' users.
    pub requested_size: u64,
    /// The stream it serves.
    pub stream: StreamId,
    /// Its pool.
    pub pool: PoolKind,
    /// A mapped run of an expandable segment.
    pub is_expandable: bool,
    /// The private pool it belongs to (PyTorch's `segment_pool_id`):
    /// `PoolId(0, 0)` for the shared pools.
    pub pool_id: PoolId,
    /// Its blocks, in address order.
    pub blocks: Vec<BlockInfo>,
}

impl SegmentInfo {
    /// A segment of the shared pools with `blocks` (in address order,
    /// contiguous); the sizes are summed from them.
    pub fn from_blocks(
        device: u32,
        stream: StreamId,
        pool: PoolKind,
        is_expandable: bool,
        blocks: Vec<BlockInfo>,
    ) -> Self {
        let sum = |f: &dyn Fn(&BlockInfo) -> bool, g: &dyn Fn(&BlockInfo) -> u64| {
            blocks.iter().filter(|b| f(b)).map(g).sum::<u64>()
        };
        let allocated = |b: &BlockInfo| b.state == BlockState::ActiveAllocated;
        let active = |b: &BlockInfo| b.state != BlockState::Inactive;
        SegmentInfo {
            device,
            address: blocks.first().map_or(0, |b| b.address),
            total_size: sum(&|_| true, &|b| b.size),
            allocated_size: sum(&allocated, &|b| b.size),
            active_size: sum(&active, &|b| b.size),
            requested_size: sum(&allocated, &|b| b.requested_size),
            stream,
            pool,
            is_expandable,
            pool_id: PoolId(0, 0),
            blocks,
        }
    }
}

/// One device's part of a snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceSnapshot {
    /// Device index.
    pub device: u32,
    /// Segments in address order.
    pub segments: Vec<SegmentInfo>,
    /// History, oldest first (empty when not recorded).
    pub trace: Vec<TraceEntry>,
}

/// A snapshot of every device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Segments of every device.
    pub segments: Vec<SegmentInfo>,
    /// `device_traces[d]`: device `d`'s history.
    pub device_traces: Vec<Vec<TraceEntry>>,
}

impl Snapshot {
    /// The snapshot of these devices (a device missing from `parts` gets an
    /// empty trace).
    pub fn from_devices(parts: Vec<DeviceSnapshot>) -> Self {
        let n = parts.iter().map(|p| p.device as usize + 1).max().unwrap_or(1);
        let mut s = Snapshot { segments: Vec::new(), device_traces: vec![Vec::new(); n] };
        for p in parts {
            s.segments.extend(p.segments);
            s.device_traces[p.device as usize] = p.trace;
        }
        s
    }

    /// The pickle PyTorch's `_memory_viz` and pytorch.org/memory_viz load.
    pub fn to_pickle(&self) -> Vec<u8> {
        let mut w = PickleWriter::new();
        w.begin_dict();
        w.str("segments");
        w.begin_list();
        for s in &self.segments {
            write_segment(&mut w, s);
        }
        w.end_list();
        w.str("device_traces");
        w.begin_list();
        for t in &self.device_traces {
            w.begin_list();
            for e in t {
                write_entry(&mut w, e);
            }
            w.end_list();
        }
        w.end_list();
        w.end_dict();
        w.finish()
    }
}

fn write_segment(w: &mut PickleWriter, s: &SegmentInfo) {
    w.begin_dict();
    w.kv_uint("device", u64::from(s.device));
    w.kv_uint("address", s.address);
    w.kv_uint("total_size", s.total_size);
    w.kv_uint("allocated_size", s.allocated_size);
    w.kv_uint("active_size", s.active_size);
    w.kv_uint("requested_size", s.requested_size);
    w.kv_uint("stream", s.stream.0);
    w.kv_str("segment_type", if s.pool == PoolKind::Small { "small" } else { "large" });
    w.str("segment_pool_id");
    w.int_tuple(&[i128::from(s.pool_id.0), i128::from(s.pool_id.1)]);
    w.str("is_expandable");
    w.bool(s.is_expandable);
    w.str("frames");
    w.empty_list();
    w.str("blocks");
    w.begin_list();
    for b in &s.blocks {
        w.begin_dict();
        w.kv_uint("address", b.address);
        w.kv_uint("size", b.size);
        w.kv_uint("requested_size", b.requested_size);
        w.kv_str("state", b.state.name());
        w.str("frames");
        w.empty_list();
        w.end_dict();
    }
    w.end_list();
    w.end_dict();
}

fn write_entry(w: &mut PickleWriter, e: &TraceEntry) {
    w.begin_dict();
    w.kv_str("action", e.action.name());
    w.kv_uint("addr", e.addr);
    if e.action == Action::Oom {
        // PyTorch's viewers read the free memory of an OOM from here.
        w.kv_uint("device_free", e.addr);
    }
    w.kv_uint("size", e.size);
    w.kv_uint("stream", e.stream.0);
    w.kv_uint("time_us", e.time_us);
    w.str("frames");
    w.empty_list();
    w.end_dict();
}
