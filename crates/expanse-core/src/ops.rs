//! Random operation sequences for property tests and the fuzzer.
//!
//! [`decode`] turns arbitrary bytes into allocator operations; [`Runner`]
//! applies them to a [`DeviceAllocator`] while a shadow model mirrors
//! every live allocation and checks, after every operation, that
//! allocations never overlap, that their contents survive (when asked to
//! write through the device), that stats agree with the shadow, and that
//! the allocator's invariants hold.
#![forbid(unsafe_code)]

use std::collections::{BTreeMap, BTreeSet};

use expanse_device::StreamId;

use crate::allocator::DeviceAllocator;
use crate::error::AllocError;
use crate::snapshot::BlockState;

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
    /// `set_memory_fraction(per_mille / 1000)` (0 to 1000: nothing to all).
    SetMemoryFraction {
        /// Thousandths of the device.
        per_mille: u16,
    },
    /// Free a pointer that is not a live allocation: inside the
    /// `index`-th live one (`offset` > 0 bytes in), or an address never
    /// handed out when none is live. Must be refused, changing nothing.
    BadFree {
        /// Which live allocation.
        index: usize,
        /// Bytes into it (at least 1).
        offset: u64,
    },
}

/// Most streams an operation uses (stream indices 0 to 63).
pub const MAX_STREAMS: u64 = 64;

/// Decode bytes into operations. Sizes are spread over every size class:
/// zero, tiny, small-pool, large-pool below 10 MiB, large segments up to
/// `max_size`, beyond `max_size` (several times: beyond a device of that
/// size), and over 1 EiB. Streams are mostly 0 and 1, sometimes any of
/// [`MAX_STREAMS`].
pub fn decode(bytes: &[u8], max_size: u64) -> Vec<Op> {
    let mut ops = Vec::new();
    let mut it = bytes.chunks(4);
    for c in &mut it {
        let b = |i: usize| u64::from(c.get(i).copied().unwrap_or(0));
        let raw = (b(1) << 8) | b(2);
        let op = match b(0) % 32 {
            0..=13 => Op::Alloc { size: size_of(raw, b(3) % 16, max_size), stream: stream_of(b(3) >> 4, b(1)) },
            14..=25 => Op::Free { index: raw as usize },
            26..=27 => Op::RecordStream { index: b(1) as usize, stream: 1 + b(2) % (MAX_STREAMS - 1) },
            28 => Op::EmptyCache,
            29 => Op::ResetPeaks,
            // Mostly generous fractions, sometimes tight ones, 0 and 1.
            30 => Op::SetMemoryFraction { per_mille: if b(1) < 96 { 1000 } else { (raw % 1001) as u16 } },
            _ => Op::BadFree { index: b(1) as usize, offset: 1 + b(2) * 8 },
        };
        ops.push(op);
    }
    ops
}

/// A size of class `class` (0..16) from `raw` (16 bits).
fn size_of(raw: u64, class: u64, max_size: u64) -> u64 {
    let max = max_size.max(1);
    match class {
        0 => 0,
        1..=4 => raw % 2048 + 1,
        5..=7 => raw * 16 + 1,
        8..=10 => ((1 << 20) + raw * 128).min(max),
        11..=13 => ((10 << 20) + raw * 4096).min(max),
        14 => max.saturating_mul(2 + raw % 8).saturating_add(raw),
        _ => (1 << 60) + raw,
    }
}

/// A stream index from a 4-bit selector: 0 (half), 1 (a quarter) or any
/// of [`MAX_STREAMS`].
fn stream_of(selector: u64, raw: u64) -> u64 {
    match selector {
        0..=7 => 0,
        8..=11 => 1,
        _ => raw % MAX_STREAMS,
    }
}

/// Bytes [`random_config`] reads: each optional key `i` takes byte `i`
/// (whether it is set) and byte `i + 16` (its value), so every value of
/// every key is reachable.
pub const CONFIG_BYTES: usize = 36;

/// A configuration from [`CONFIG_BYTES`] bytes (fewer read as zeros),
/// covering the valid extremes of every key
/// (max_split_size_mb from 21 MiB to 2^43 MiB, rounding divisions from 1
/// to 64 and per band, garbage collection thresholds near 0 and 1,
/// memory fractions 0 to 1, pages from 2 MiB to `max_page` bytes, move
/// budgets 0 to 10^9), in every mode. Always valid on a device of at
/// least `max_page` bytes with 2 MiB pages.
pub fn random_config(bytes: &[u8], max_page: u64) -> crate::Config {
    let b = |i: usize| bytes.get(i).copied().unwrap_or(0) as usize;
    fn pick<'a>(b: usize, xs: &[&'a str]) -> &'a str {
        xs[b % xs.len()]
    }
    let mut parts = vec![format!("expandable_segments:{}", pick(b(0), &["True", "False"]))];
    parts.push(format!("pytorch_compat:{}", pick(b(1), &["False", "True"])));
    let opt = |i: usize, key: &str, xs: &[&str]| (b(i) % 2 == 1).then(|| format!("{key}:{}", pick(b(i + 16), xs)));
    let max_mb = (max_page >> 20).max(2) / 2 * 2;
    let pages = [2.to_string(), max_mb.to_string(), (max_mb / 4).max(1).next_power_of_two().max(2).to_string()];
    let pages: Vec<&str> = pages.iter().map(String::as_str).collect();
    parts.extend(
        [
            opt(2, "max_split_size_mb", &["21", "64", "1024", "8796093022207"]),
            opt(3, "max_non_split_rounding_mb", &["0", "20", "4096"]),
            opt(4, "roundup_power2_divisions", &["1", "2", "4", "64", "[64:8,256:4,>:1]", "[1:64,>:0]"]),
            opt(5, "garbage_collection_threshold", &["0.0001", "0.5", "0.9999"]),
            opt(6, "per_process_memory_fraction", &["0", "0.001", "0.5", "0.9", "1"]),
            opt(7, "small_page_size_mb", &pages),
            opt(8, "large_page_size_mb", &pages),
            opt(9, "min_grow_size_mb", &["2"]),
            opt(10, "max_page_size_mb", &pages),
            opt(11, "move_budget", &["0", "1.75", "1000000000"]),
            opt(12, "move_reuse_window", &["0", "1", "128", "281474976710656"]),
            opt(13, "lend_across_streams", &["False", "True"]),
            opt(14, "share_segments", &["False", "True"]),
            opt(15, "small_from_large", &["False", "True"]),
            opt(16, "grow_fewest", &["False", "True"]),
            opt(17, "move_whole_first", &["False", "True"]),
            opt(18, "overshoot_share", &["0", "32"]),
            opt(19, "move_above_peak_only", &["False", "True"]),
        ]
        .into_iter()
        .flatten(),
    );
    let text = parts.join(",");
    crate::Config::parse(&text).unwrap_or_else(|e| panic!("generated configuration '{text}' refused: {e}"))
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

/// The bytes requested of the blocks that wait for other streams' events.
fn pending_free_requested(a: &mut DeviceAllocator) -> u64 {
    let snap = a.snapshot();
    let blocks = snap.segments.iter().flat_map(|g| g.blocks.iter());
    blocks.filter(|b| b.state == BlockState::ActivePendingFree).map(|b| b.requested_size).sum()
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
    /// Live allocations used on another stream too (`record_stream`).
    recorded: BTreeSet<u64>,
    /// A freed allocation may still wait for another stream's events:
    /// its requested bytes still count (PyTorch's `free_block`), read from
    /// the snapshot's pending-free blocks until none is left.
    maybe_pending: bool,
    /// Calls refused as they should be, by kind: `out_of_memory`,
    /// `too_large`, `address_space`, `bad_free`, `double_free`.
    pub refused: BTreeMap<&'static str, u64>,
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
            recorded: BTreeSet::new(),
            maybe_pending: false,
            refused: BTreeMap::new(),
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

    /// Allocate, check the address against the shadow, record it.
    fn alloc(&mut self, a: &mut DeviceAllocator, size: u64, stream: StreamId) -> Result<(), String> {
        match a.malloc(size, stream) {
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
                self.streams.insert(ptr, stream);
                self.last = Some(Step { addr: ptr, size, stream, allocated: true });
            }
            Err(AllocError::OutOfMemory { .. }) => {
                self.ooms += 1;
                *self.refused.entry("out_of_memory").or_default() += 1;
            }
            Err(AllocError::TooLarge { .. }) if size > 1 << 60 => *self.refused.entry("too_large").or_default() += 1,
            Err(AllocError::AddressSpace { .. }) => *self.refused.entry("address_space").or_default() += 1,
            Err(e) => return Err(format!("malloc({size}): {e}")),
        }
        Ok(())
    }

    /// Apply one operation; `Err` describes the first broken property.
    pub fn step(&mut self, a: &mut DeviceAllocator, op: Op) -> Result<(), String> {
        self.last = None;
        match op {
            Op::Alloc { size, stream } => self.alloc(a, size, StreamId(stream))?,
            Op::Free { index } => self.free(a, index)?,
            Op::RecordStream { index, stream } => {
                if !self.order.is_empty() {
                    let ptr = self.order[index % self.order.len()];
                    a.record_stream(ptr, StreamId(stream)).map_err(|e| format!("record_stream: {e}"))?;
                    self.recorded.insert(ptr);
                }
            }
            Op::EmptyCache => a.empty_cache().map_err(|e| format!("empty_cache: {e}"))?,
            Op::ResetPeaks => a.reset_peak_stats(),
            Op::SetMemoryFraction { per_mille } => a.set_memory_fraction(f64::from(per_mille) / 1000.0),
            Op::BadFree { index, offset } => self.bad_free(a, index, offset)?,
        }
        if self.check_invariants {
            a.check_invariants()?;
        }
        self.check_counters(a)
    }

    /// Free the live allocation at `index` (modulo their number), checking
    /// its contents first, then that freeing it again is a misuse error.
    fn free(&mut self, a: &mut DeviceAllocator, index: usize) -> Result<(), String> {
        if self.order.is_empty() {
            return Ok(());
        }
        let ptr = self.order.swap_remove(index % self.order.len());
        let (size, byte) = self.live.remove(&ptr).expect("shadow");
        if self.check_contents {
            self.verify(a, ptr, size, byte)?;
        }
        a.free(ptr).map_err(|e| format!("free({ptr:#x}): {e}"))?;
        match a.free(ptr) {
            Err(AllocError::Misuse { .. }) => *self.refused.entry("double_free").or_default() += 1,
            other => return Err(format!("double free of {ptr:#x}: {other:?}, not a misuse error")),
        }
        let stream = self.streams.remove(&ptr).expect("shadow");
        self.maybe_pending |= self.recorded.remove(&ptr);
        self.last = Some(Step { addr: ptr, size, stream, allocated: false });
        Ok(())
    }

    /// Free an address that is no allocation's (an odd offset into a live
    /// one, or a made-up address): it must be a misuse error.
    fn bad_free(&mut self, a: &mut DeviceAllocator, index: usize, offset: u64) -> Result<(), String> {
        // Odd offsets: never a 512-aligned allocation's address.
        let ptr = match self.order.is_empty() {
            true => 0xdead_0000_0000 + (offset | 1),
            false => self.order[index % self.order.len()] + (offset | 1),
        };
        match a.free(ptr) {
            Err(AllocError::Misuse { .. }) => *self.refused.entry("bad_free").or_default() += 1,
            other => return Err(format!("free of non-allocation {ptr:#x}: {other:?}, not a misuse error")),
        }
        Ok(())
    }

    /// The allocator's counters against the shadow: live allocations,
    /// requested bytes (live and pending frees), peaks and reserved bytes.
    fn check_counters(&mut self, a: &mut DeviceAllocator) -> Result<(), String> {
        let s = a.stats();
        if s.allocation.all().current != self.live.len() as i64 {
            return Err(format!("allocation stat {} but {} live", s.allocation.all().current, self.live.len()));
        }
        let mut requested: u64 = self.live.values().map(|v| v.0).sum();
        let current = s.requested_bytes.all().current;
        if self.maybe_pending {
            let pending = pending_free_requested(a);
            self.maybe_pending = pending > 0;
            requested += pending;
        }
        let s = a.stats();
        if current != requested as i64 {
            return Err(format!("requested_bytes stat {current} but shadow {requested} (live and pending free)"));
        }
        if s.reserved_bytes.all().peak < s.reserved_bytes.all().current
            || s.allocated_bytes.all().current as u64 > a.reserved_bytes()
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
            self.recorded.remove(&ptr);
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
