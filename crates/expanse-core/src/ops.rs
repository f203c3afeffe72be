//! Random operation sequences for property tests and the fuzzer.
//!
//! [`decode`] turns arbitrary bytes into allocator operations; [`Runner`]
//! applies them to a [`DeviceAllocator`] while a shadow model mirrors
//! every live allocation and checks, after every operation, that
//! allocations never overlap, that their contents survive (when asked to
//! write through the device), that stats agree with the shadow, and that
//! the allocator's invariants hold.
#![forbid(unsafe_code)]

use std::collections::BTreeMap;

use expanse_device::StreamId;

use crate::allocator::DeviceAllocator;
use crate::error::AllocError;

/// One operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Allocate `size` bytes on stream `stream`.
    Alloc {
        /// Bytes.
        size: u64,
        /// Stream index.
        stream: u64,
    },
    /// Free the `index`-th live allocation (modulo the live count).
    Free {
        /// Which live allocation.
        index: usize,
    },
    /// `record_stream` on the `index`-th live allocation.
    RecordStream {
        /// Which live allocation.
        index: usize,
        /// Stream index.
        stream: u64,
    },
    /// `empty_cache()`.
    EmptyCache,
    /// Reset peak statistics.
    ResetPeaks,
}

/// Decode bytes into operations. Sizes are spread over every size class:
/// tiny, small-pool, large-pool below 10 MiB, and large segments.
pub fn decode(bytes: &[u8], max_size: u64) -> Vec<Op> {
    let mut ops = Vec::new();
    let mut it = bytes.chunks(4);
    for c in &mut it {
        let b = |i: usize| u64::from(c.get(i).copied().unwrap_or(0));
        let op = match b(0) % 16 {
            0..=6 => {
                let raw = (b(1) << 8) | b(2);
                let size = match b(3) % 4 {
                    0 => raw % 2048 + 1,
                    1 => raw * 16 + 1,
                    2 => (1 << 20) + raw * 128,
                    _ => (10 << 20) + raw * 4096,
                };
                Op::Alloc { size: size.min(max_size.max(1)), stream: b(3) / 64 % 2 }
            }
            7..=12 => Op::Free { index: ((b(1) << 8) | b(2)) as usize },
            13 => Op::RecordStream { index: b(1) as usize, stream: 1 + b(2) % 2 },
            14 => Op::EmptyCache,
            _ => Op::ResetPeaks,
        };
        ops.push(op);
    }
    ops
}

/// `count` pseudo-random operations from `seed` (xorshift): slightly more
/// frees than allocations so the live set stays bounded; sizes tiny (60%),
/// small-pool (20%) or up to `max_size` (20%); streams 0 and 1 when
/// `streams` is true; an `empty_cache` now and then.
pub fn random_ops(seed: u64, count: usize, max_size: u64, streams: bool) -> Vec<Op> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..count)
        .map(|_| {
            let v = next();
            match v % 100 {
                0..=46 => {
                    let size = match (v >> 8) % 10 {
                        0..=5 => (v >> 16) % 8192 + 1,
                        6..=7 => (v >> 16) % (2 << 20) + 1,
                        _ => (v >> 16) % max_size.max(1) + 1,
                    };
                    Op::Alloc { size, stream: if streams { (v >> 40) % 2 } else { 0 } }
                }
                47..=97 => Op::Free { index: (v >> 8) as usize },
                _ => Op::EmptyCache,
            }
        })
        .collect()
}

/// An allocation or a free made by [`Runner::step`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Address of the allocation.
    pub addr: u64,
    /// Bytes requested.
    pub size: u64,
    /// Stream it was allocated on.
    pub stream: StreamId,
    /// `true`: it was allocated; `false`: it was freed.
    pub allocated: bool,
}

/// Applies operations and checks the allocator against a shadow model.
pub struct Runner {
    /// Live allocations: address -> (size requested, fill byte).
    live: BTreeMap<u64, (u64, u8)>,
    /// Order of allocation, for `Free { index }`.
    order: Vec<u64>,
    /// Write and verify contents through the device.
    pub check_contents: bool,
    /// Run `check_invariants` after every operation.
    pub check_invariants: bool,
    counter: u8,
    /// Allocations refused for lack of memory.
    pub ooms: usize,
    /// What the last step did, if it allocated or freed.
    pub last: Option<Step>,
    /// Stream of each live allocation.
    streams: BTreeMap<u64, StreamId>,
}

impl Default for Runner {
    fn default() -> Self {
        Runner {
            live: BTreeMap::new(),
            order: Vec::new(),
            check_contents: false,
            check_invariants: true,
            counter: 0,
            ooms: 0,
            last: None,
            streams: BTreeMap::new(),
        }
    }
}

/// How many bytes at each end of an allocation are written and verified.
const PROBE: u64 = 64;

impl Runner {
    /// Live allocation count.
    pub fn live(&self) -> usize {
        self.live.len()
    }

    fn fill(&self, a: &DeviceAllocator, ptr: u64, size: u64, byte: u8) -> Result<(), String> {
        let n = size.min(PROBE) as usize;
        let data = vec![byte; n];
        a.device().write(ptr, &data).map_err(|e| format!("write at {ptr:#x}: {e}"))?;
        a.device().write(ptr + size - n as u64, &data).map_err(|e| format!("write at end of {ptr:#x}: {e}"))
    }

    fn verify(&self, a: &DeviceAllocator, ptr: u64, size: u64, byte: u8) -> Result<(), String> {
        let n = size.min(PROBE) as usize;
        let mut buf = vec![0u8; n];
        for at in [ptr, ptr + size - n as u64] {
            a.device().read(at, &mut buf).map_err(|e| format!("read at {at:#x}: {e}"))?;
            if buf.iter().any(|x| *x != byte) {
                return Err(format!("contents of allocation {ptr:#x} (+{size}) were overwritten"));
            }
        }
        Ok(())
    }

    /// Apply one operation; `Err` describes the first broken property.
    pub fn step(&mut self, a: &mut DeviceAllocator, op: Op) -> Result<(), String> {
        self.last = None;
        match op {
            Op::Alloc { size, stream } => match a.malloc(size, StreamId(stream)) {
                Ok(ptr) => {
                    let block = a.allocation_size(ptr).ok_or("malloc returned an untracked pointer")?;
                    if block < size || ptr % 512 != 0 {
                        return Err(format!("allocation {ptr:#x}: block {block} for {size} bytes or misaligned"));
                    }
                    if let Some((&p, &(s, _))) = self.live.range(..ptr + size).next_back() {
                        if p + s > ptr {
                            return Err(format!("allocation {ptr:#x}+{size} overlaps live {p:#x}+{s}"));
                        }
                    }
                    self.counter = self.counter.wrapping_add(1).max(1);
                    if self.check_contents {
                        self.fill(a, ptr, size, self.counter)?;
                    }
                    self.live.insert(ptr, (size, self.counter));
                    self.order.push(ptr);
                    self.streams.insert(ptr, StreamId(stream));
                    self.last = Some(Step { addr: ptr, size, stream: StreamId(stream), allocated: true });
                }
                Err(AllocError::OutOfMemory { .. }) => self.ooms += 1,
                Err(e) => return Err(format!("malloc({size}): {e}")),
            },
            Op::Free { index } => {
                if !self.order.is_empty() {
                    let ptr = self.order.swap_remove(index % self.order.len());
                    let (size, byte) = self.live.remove(&ptr).expect("shadow");
                    if self.check_contents {
                        self.verify(a, ptr, size, byte)?;
                    }
                    a.free(ptr).map_err(|e| format!("free({ptr:#x}): {e}"))?;
                    if a.free(ptr).is_ok() {
                        return Err(format!("double free of {ptr:#x} was accepted"));
                    }
                    let stream = self.streams.remove(&ptr).expect("shadow");
                    self.last = Some(Step { addr: ptr, size, stream, allocated: false });
                }
            }
            Op::RecordStream { index, stream } => {
                if !self.order.is_empty() {
                    let ptr = self.order[index % self.order.len()];
                    a.record_stream(ptr, StreamId(stream)).map_err(|e| format!("record_stream: {e}"))?;
                }
            }
            Op::EmptyCache => a.empty_cache().map_err(|e| format!("empty_cache: {e}"))?,
            Op::ResetPeaks => a.reset_peak_stats(),
        }
        if self.check_invariants {
            a.check_invariants()?;
        }
        let s = a.stats();
        if s.allocation.all.current != self.live.len() as i64 {
            return Err(format!("allocation stat {} but {} live", s.allocation.all.current, self.live.len()));
        }
        let requested: u64 = self.live.values().map(|v| v.0).sum();
        if s.requested_bytes.all.current != requested as i64 {
            return Err(format!("requested_bytes stat {} but shadow {requested}", s.requested_bytes.all.current));
        }
        if s.reserved_bytes.all.peak < s.reserved_bytes.all.current
            || s.allocated_bytes.all.current as u64 > a.reserved_bytes()
        {
            return Err("peak below current, or more allocated than reserved".into());
        }
        Ok(())
    }

    /// Verify every live allocation, free them all, empty the cache, and
    /// check that nothing stays reserved.
    pub fn finish(&mut self, a: &mut DeviceAllocator) -> Result<(), String> {
        for ptr in std::mem::take(&mut self.order) {
            let (size, byte) = self.live.remove(&ptr).expect("shadow");
            if self.check_contents {
                self.verify(a, ptr, size, byte)?;
            }
            a.free(ptr).map_err(|e| format!("free({ptr:#x}): {e}"))?;
            self.streams.remove(&ptr);
        }
        a.empty_cache().map_err(|e| format!("empty_cache: {e}"))?;
        a.check_invariants()?;
        if a.reserved_bytes() != 0 {
            return Err(format!(
                "{} bytes still reserved after freeing everything and empty_cache",
                a.reserved_bytes()
            ));
        }
        Ok(())
    }
}
