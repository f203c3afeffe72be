//! Address space: how large a new expandable segment's reservation is.
//!
//! A segment reserves 9/8 of the device (room to grow to all of it and to
//! move pages) while that leaves half of the device's address space
//! ([`Device::address_space`](expanse_device::Device::address_space))
//! free. Past that, each stream and pool needing a new segment gets 1/4096
//! of what is left, and never less than the request: many streams that
//! need little reserve little, and a stream that outgrows its segment
//! reserves another. Only when even the request no longer fits is the
//! address space exhausted: the allocation fails with
//! [`AllocError::AddressSpace`], an honest error, never a false
//! out-of-memory.

use expanse_device::StreamId;

use super::DeviceAllocator;
use crate::error::AllocError;
use crate::expandable_segment::{full_reservation, ExpandableSegment};

/// Once past half the address space, a new segment takes at most
/// 1/`SCARCE_SHARE` of what is left (still at least its request).
const SCARCE_SHARE: u64 = 4096;

/// Why the last reservation was refused (for the error).
#[derive(Clone, Copy, Debug)]
pub(super) struct Exhausted {
    pub(super) needed: u64,
    pub(super) reserved: u64,
    pub(super) limit: u64,
}

/// Bytes to reserve for a new segment of `unit`-byte pages that must hold
/// `need` bytes, with `reserved` of `limit` bytes of address space already
/// reserved on a device of `total` bytes; `None` when it cannot fit.
pub fn reservation_size(total: u64, unit: u64, need: u64, reserved: u64, limit: u64) -> Option<u64> {
    let need = need.max(1).div_ceil(unit).checked_mul(unit)?;
    // A device too large for 64-bit addresses: as much as can be asked.
    let full = full_reservation(total, unit).unwrap_or(u64::MAX / unit * unit).max(need);
    let left = limit.saturating_sub(reserved);
    if reserved.checked_add(full).is_some_and(|end| end <= limit / 2) {
        return Some(full);
    }
    let share = left / SCARCE_SHARE / unit * unit;
    let size = full.min(share.max(need));
    (size <= left).then_some(size)
}

impl DeviceAllocator {
    /// Reserve a new segment for `stream` that can hold `need` bytes in
    /// pages of `unit` bytes. `Ok(None)`: the address space (or the device)
    /// has no room now; freeing cached segments may make some.
    pub(super) fn reserve_segment(
        &mut self,
        stream: StreamId,
        unit: u64,
        need: u64,
    ) -> Result<Option<ExpandableSegment>, AllocError> {
        let reserved: u64 = self.segments.iter().flatten().map(ExpandableSegment::size).sum();
        let limit = self.device.address_space();
        let Some(size) = reservation_size(self.device.total_memory(), unit, need, reserved, limit) else {
            self.exhausted = Some(Exhausted { needed: need, reserved, limit });
            return Ok(None);
        };
        match ExpandableSegment::with_size(self.device.as_ref(), stream, unit, size, &self.peers) {
            Ok(s) => Ok(Some(s)),
            Err(e) if e.is_out_of_memory() => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::reservation_size;

    const GIB: u64 = 1 << 30;
    const TIB: u64 = 1 << 40;
    const MIB2: u64 = 2 << 20;

    #[test]
    fn plenty_of_address_space_reserves_nine_eighths() {
        // 16 GiB device, 2 MiB pages: 18 GiB (hand-computed).
        assert_eq!(reservation_size(16 * GIB, MIB2, MIB2, 0, u64::MAX), Some(18 * GIB));
        assert_eq!(reservation_size(16 * GIB, MIB2, MIB2, 0, 64 * TIB), Some(18 * GIB));
    }

    #[test]
    fn scarce_address_space_reserves_a_share_then_the_request_then_nothing() {
        // 16 TiB device in 64 TiB: the first segment takes 18 TiB, the
        // second only 1/4096 of the 46 TiB left (11.5 GiB).
        assert_eq!(reservation_size(16 * TIB, MIB2, MIB2, 0, 64 * TIB), Some(18 * TIB));
        assert_eq!(reservation_size(16 * TIB, MIB2, MIB2, 18 * TIB, 64 * TIB), Some(46 * TIB / 4096));
        // A request larger than the share gets its own size.
        assert_eq!(reservation_size(16 * TIB, MIB2, 100 * GIB, 18 * TIB, 64 * TIB), Some(100 * GIB));
        // 10 MiB left: a 6 MiB request fits, a 12 MiB one does not.
        let r = 64 * TIB - 10 * (1 << 20);
        assert_eq!(reservation_size(16 * TIB, MIB2, 6 << 20, r, 64 * TIB), Some(6 << 20));
        assert_eq!(reservation_size(16 * TIB, MIB2, 12 << 20, r, 64 * TIB), None);
    }

    #[test]
    fn absurd_device_sizes_do_not_overflow() {
        // 9/8 of 2^64 does not fit in 64 bits: a share of what is left.
        assert_eq!(reservation_size(u64::MAX, MIB2, MIB2, 0, 64 * TIB), Some(16 << 30));
        assert_eq!(reservation_size(u64::MAX, MIB2, MIB2, 0, u64::MAX), Some((u64::MAX / 4096) & !(MIB2 - 1)));
    }
}
