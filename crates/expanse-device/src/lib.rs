//! The device API of expanse: one small trait that every backend (host,
//! mock, CUDA, Level Zero) implements, and the error vocabulary they share.
//!
//! Addresses are plain `u64` device addresses; physical pages, streams and
//! events are opaque ids. The allocator core depends on this crate only and
//! never asks which backend it has: capabilities are queries with constant
//! answers (`granularity()`, `total_memory()`, `supports_virtual_memory()`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod free_ranges;
mod ledger;
mod streams;
mod va_heap;

pub use error::{DeviceError, Misuse, Result};
pub use free_ranges::FreeRanges;
pub use ledger::{Ledger, Live};
pub use streams::TraceStreams;
pub use va_heap::VaHeap;

/// A device address (virtual address in the device's address space).
pub type DevicePtr = u64;

/// An opaque stream id handed out by [`Device::create_stream`];
/// `StreamId::DEFAULT` (0) is the device's default stream. It is a device
/// handle, not a trace's stream index: a replay maps indices to ids with
/// [`TraceStreams`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct StreamId(pub u64);

impl StreamId {
    /// The default (null) stream.
    pub const DEFAULT: StreamId = StreamId(0);
}

/// An opaque event id returned by [`Device::record_event`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId(pub u64);

/// An opaque handle to one physical page (a `cuMemCreate` allocation, a
/// Level Zero physical memory object, a slice of a host memfd).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageHandle(pub u64);

/// One device's memory API.
///
/// Contract (the mock backend asserts every point):
/// - `reserve` returns a range aligned to `granularity()`; `map`, `unmap`
///   and `set_access` take granularity-aligned addresses and sizes that lie
///   inside one reservation;
/// - a page is mapped at most once at a time and its whole size is mapped;
///   no address is mapped twice; only mapped ranges are unmapped;
/// - a page is released only when unmapped; a reservation is released only
///   when nothing in it is mapped;
/// - memory mapped by `map` is usable only after `set_access` named this
///   device (as with `cuMemSetAccess`);
/// - streams: only the default stream and streams made by `create_stream`
///   (and not yet destroyed) are used; backends whose streams are opaque
///   ids (host, mock) accept any id, the CUDA backend refuses unknown ones;
/// - events: `record_event` captures the work queued on the stream so far;
///   `query_event` says whether it completed; `release_event` frees the id.
///
/// All methods take `&self`: backends use interior locking, so one device
/// can be shared by the allocator's threads.
pub trait Device: Send + Sync {
    /// The device's ordinal (the `device` index users pass).
    fn ordinal(&self) -> u32;
    /// A short name for reports ("host", "mock", "cuda:0").
    fn name(&self) -> String;
    /// Total device memory in bytes (the capacity pages and `malloc` draw on).
    fn total_memory(&self) -> u64;
    /// Bytes currently free on the device, as the driver reports them.
    fn free_memory(&self) -> u64;
    /// Page size granularity for `reserve`, `create_page` and `map`.
    fn granularity(&self) -> u64;
    /// Whether reserve / create_page / map are available. When false the
    /// allocator uses classic segments only.
    fn supports_virtual_memory(&self) -> bool;
    /// Bytes of address space the allocator may hold reserved at once, all
    /// reservations together (a real device's address space is finite; the
    /// host's is the process's). The allocator sizes its reservations to
    /// stay within it. Default: no limit the allocator needs to plan for.
    fn address_space(&self) -> u64 {
        u64::MAX
    }

    /// Reserve `size` bytes of address space (no memory behind it).
    fn reserve(&self, size: u64) -> Result<DevicePtr>;
    /// Release a reservation made by `reserve`, with nothing mapped in it.
    fn release_reservation(&self, base: DevicePtr, size: u64) -> Result<()>;
    /// Create a physical page of `size` bytes (a multiple of the granularity).
    fn create_page(&self, size: u64) -> Result<PageHandle>;
    /// Release an unmapped physical page.
    fn release_page(&self, page: PageHandle) -> Result<()>;
    /// Map the whole of `page` at `addr` (inside a reservation).
    fn map(&self, addr: DevicePtr, page: PageHandle) -> Result<()>;
    /// Unmap `[addr, addr + size)`, which must be exactly the union of
    /// whole mapped pages. Does not synchronize.
    fn unmap(&self, addr: DevicePtr, size: u64) -> Result<()>;
    /// Grant read-write access to `[addr, addr + size)` for each device in
    /// `devices` (this device and its peers).
    fn set_access(&self, addr: DevicePtr, size: u64, devices: &[u32]) -> Result<()>;

    /// Classic allocation (`cudaMalloc`): `size` bytes, ready to use.
    fn malloc(&self, size: u64) -> Result<DevicePtr>;
    /// Free memory returned by `malloc`.
    fn free(&self, ptr: DevicePtr) -> Result<()>;

    /// Create a stream for work that is not ordered with the other
    /// streams' (on CUDA a real non-blocking stream).
    fn create_stream(&self) -> Result<StreamId>;
    /// Destroy a stream made by `create_stream`.
    fn destroy_stream(&self, stream: StreamId) -> Result<()>;

    /// Record an event on `stream` capturing the work queued so far.
    fn record_event(&self, stream: StreamId) -> Result<EventId>;
    /// Whether the event's work has completed.
    fn query_event(&self, event: EventId) -> Result<bool>;
    /// Release an event id.
    fn release_event(&self, event: EventId) -> Result<()>;
    /// Make work queued on `stream` from now on wait until `event`
    /// completed (`cuStreamWaitEvent`); the host does not wait.
    fn wait_event(&self, stream: StreamId, event: EventId) -> Result<()>;
    /// Wait until all work queued on `stream` completed.
    fn synchronize_stream(&self, stream: StreamId) -> Result<()>;
    /// Wait until all work on the device completed.
    fn synchronize(&self) -> Result<()>;

    /// Copy host bytes to device memory (`cuMemcpyHtoD`). Used by tests
    /// and tools to check that memory is real.
    fn write(&self, dst: DevicePtr, src: &[u8]) -> Result<()>;
    /// Copy device memory to host bytes (`cuMemcpyDtoH`).
    fn read(&self, src: DevicePtr, dst: &mut [u8]) -> Result<()>;

    /// Whether this device can be given access to `peer`'s memory.
    fn can_access_peer(&self, peer: u32) -> bool {
        peer == self.ordinal()
    }
}

/// Round `x` up to a multiple of `align` (a power of two or any non-zero
/// value), or `None` on overflow.
pub fn round_up(x: u64, align: u64) -> Option<u64> {
    debug_assert!(align > 0);
    let rem = x % align;
    if rem == 0 {
        Some(x)
    } else {
        x.checked_add(align - rem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_up_handles_edges() {
        assert_eq!(round_up(0, 512), Some(0));
        assert_eq!(round_up(1, 512), Some(512));
        assert_eq!(round_up(512, 512), Some(512));
        assert_eq!(round_up(513, 512), Some(1024));
        assert_eq!(round_up(u64::MAX, 512), None);
    }
}
