//! Allocator errors. Each variant says how to recover.

use std::fmt;

use expanse_device::DeviceError;

/// Why an allocator call failed. The allocator stays usable after any of
/// them; nothing already allocated is lost.
#[derive(Clone, Debug, PartialEq)]
pub enum AllocError {
    /// Not enough device memory even after freeing every cached segment.
    /// Recover by freeing tensors (and calling `empty_cache`), or by
    /// allocating less. Displayed in PyTorch's wording.
    OutOfMemory {
        /// Device index.
        device: u32,
        /// Bytes the failed request needed from the device.
        requested: u64,
        /// The figures of the explanation, formatted only when displayed
        /// (a caller that catches the error and retries pays nothing).
        report: OomReport,
    },
    /// The request is absurdly large (over 1 EiB); refused outright.
    TooLarge {
        /// Bytes asked for.
        requested: u64,
    },
    /// A bug in the caller: unknown pointer, double free, bad device index.
    /// Nothing was changed.
    Misuse {
        /// What was wrong.
        message: String,
    },
    /// The device's address space ran out: `reserved` of `limit` bytes are
    /// reserved by expandable segments and `requested` more do not fit,
    /// though memory may be free. Recover by freeing and `empty_cache`
    /// (released segments return their address space), by using fewer
    /// streams, a smaller device (`--device-memory`), or
    /// `expandable_segments:False` (classic segments reserve no extra
    /// address space).
    AddressSpace {
        /// Device index.
        device: u32,
        /// Bytes the new reservation needed.
        requested: u64,
        /// Bytes of address space already reserved.
        reserved: u64,
        /// The device's address space for reservations.
        limit: u64,
    },
    /// A panic happened while this device's allocator was in the middle of
    /// an operation; its state may be half-updated, so it serves nothing
    /// more. Not recoverable in this process (restart it); memory it
    /// handed out stays valid until the process ends.
    Poisoned {
        /// Device index.
        device: u32,
    },
    /// The device driver failed (raw code kept). The allocator's state is
    /// consistent, but the device may not be.
    Device(DeviceError),
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllocError::OutOfMemory { device, requested, report } => report.write(f, *device, *requested),
            AllocError::TooLarge { requested } => write!(
                f,
                "out of memory: tried to allocate more than 1 EiB of device memory ({requested} bytes requested)"
            ),
            AllocError::Misuse { message } => f.write_str(message),
            AllocError::AddressSpace { device, requested, reserved, limit } => write!(
                f,
                "address space exhausted on device {device}: a new segment needs {}, but {} of the {} of address space are reserved (one segment per stream and pool). Free memory and call empty_cache, use fewer streams or a smaller --device-memory, or set expandable_segments:False",
                format_size(*requested),
                format_size(*reserved),
                format_size(*limit)
            ),
            AllocError::Poisoned { device } => write!(
                f,
                "the allocator of device {device} is unusable: a panic interrupted an earlier call and may have left its state half-updated"
            ),
            AllocError::Device(e) => write!(f, "device error: {e}"),
        }
    }
}

impl std::error::Error for AllocError {}

/// The figures of an out-of-memory report, as the allocator saw them when
/// the request failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OomReport {
    /// Device memory in total.
    pub total: u64,
    /// Free device memory reported by the driver.
    pub device_free: u64,
    /// Memory this process may use, when a memory fraction is set.
    pub allowed: Option<u64>,
    /// Bytes allocated by this allocator.
    pub allocated: u64,
    /// Bytes reserved by this allocator but not allocated.
    pub cached: u64,
    /// Whether to suggest `expandable_segments:True` (classic segments).
    pub suggest_expandable: bool,
}

impl OomReport {
    fn write(&self, f: &mut fmt::Formatter<'_>, device: u32, requested: u64) -> fmt::Result {
        write!(
            f,
            "Out of memory. Tried to allocate {}. GPU {device} has a total capacity of {} of which {} is free. ",
            format_size(requested),
            format_size(self.total),
            format_size(self.device_free),
        )?;
        if let Some(allowed) = self.allowed {
            write!(f, "{} allowed; ", format_size(allowed))?;
        }
        write!(
            f,
            "Of the allocated memory {} is allocated by this allocator, and {} is reserved by this allocator but unallocated.",
            format_size(self.allocated),
            format_size(self.cached)
        )?;
        if self.suggest_expandable {
            f.write_str(" If reserved but unallocated memory is large try setting expandable_segments:True in EXPANSE_ALLOC_CONF to avoid fragmentation.")?;
        }
        Ok(())
    }
}

impl From<DeviceError> for AllocError {
    fn from(e: DeviceError) -> Self {
        match e {
            DeviceError::Misuse(m) => AllocError::Misuse { message: format!("internal device misuse: {m}") },
            other => AllocError::Device(other),
        }
    }
}

/// PyTorch's `format_size`: bytes, KiB, MiB or GiB with two decimals.
///
/// Integer arithmetic, the same digits as formatting the `f64` quotient
/// with `{:.2}` (ties to even), several times cheaper: the out-of-memory
/// report formats four sizes on every failed allocation.
pub fn format_size(size: u64) -> String {
    let (shift, unit) = match size {
        0..=1024 => return format!("{size} bytes"),
        1025..=0x10_0000 => (10, "KiB"),
        0x10_0001..=0x4000_0000 => (20, "MiB"),
        _ => (30, "GiB"),
    };
    if size >= 1 << 53 {
        // Beyond f64's exact integers the float path rounds the size first.
        return format!("{:.2} {unit}", size as f64 / (1u64 << shift) as f64);
    }
    let hundredths = u128::from(size) * 100;
    let (mut q, r) = (hundredths >> shift, hundredths & ((1 << shift) - 1));
    let half = 1u128 << (shift - 1);
    if r > half || (r == half && q % 2 == 1) {
        q += 1;
    }
    format!("{}.{:02} {unit}", q / 100, q % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_format_like_pytorch() {
        assert_eq!(format_size(1000), "1000 bytes");
        assert_eq!(format_size(1536), "1.50 KiB");
        assert_eq!(format_size(2 << 30), "2.00 GiB");
        assert_eq!(format_size(143771 << 20), "140.40 GiB");
    }

    /// The report formatted when displayed reads as PyTorch's (the text
    /// written out by hand from PyTorch's `c10/cuda/CUDACachingAllocator`).
    #[test]
    fn oom_report_reads_like_pytorch() {
        let report = OomReport {
            total: 80 << 30,
            device_free: 3 << 20,
            allowed: None,
            allocated: 70 << 30,
            cached: 1536 << 20,
            suggest_expandable: true,
        };
        let e = AllocError::OutOfMemory { device: 1, requested: 20 << 20, report };
        assert_eq!(
            e.to_string(),
            "Out of memory. Tried to allocate 20.00 MiB. GPU 1 has a total capacity of 80.00 GiB of which 3.00 MiB is free. Of the allocated memory 70.00 GiB is allocated by this allocator, and 1.50 GiB is reserved by this allocator but unallocated. If reserved but unallocated memory is large try setting expandable_segments:True in EXPANSE_ALLOC_CONF to avoid fragmentation."
        );
        let report = OomReport { allowed: Some(40 << 30), suggest_expandable: false, ..report };
        let e = AllocError::OutOfMemory { device: 0, requested: 512, report };
        assert_eq!(
            e.to_string(),
            "Out of memory. Tried to allocate 512 bytes. GPU 0 has a total capacity of 80.00 GiB of which 3.00 MiB is free. 40.00 GiB allowed; Of the allocated memory 70.00 GiB is allocated by this allocator, and 1.50 GiB is reserved by this allocator but unallocated."
        );
    }

    /// The integer digits against std's float formatting (the oracle):
    /// every KiB size, and strided MiB/GiB sizes with the ties around them.
    #[test]
    fn integer_rounding_matches_float_formatting() {
        let float = |size: u64| {
            let s = size as f64;
            match size {
                0..=1024 => format!("{size} bytes"),
                1025..=0x10_0000 => format!("{:.2} KiB", s / 1024.0),
                0x10_0001..=0x4000_0000 => format!("{:.2} MiB", s / 1048576.0),
                _ => format!("{:.2} GiB", s / 1073741824.0),
            }
        };
        let mut sizes: Vec<u64> = (0..=(1 << 20) + 1).collect();
        sizes.extend((0..200_000u64).map(|i| (1 << 20) + i * 5_347));
        sizes.extend((0..200_000u64).map(|i| (1 << 30) + i * 1_234_567_891));
        // Ties: size * 100 = (2j + 1) * 2^(shift - 1) exactly.
        for shift in [10u32, 20, 30] {
            for j in 0..5_000u64 {
                let twice = (2 * j + 1) << (shift - 1);
                if twice % 100 == 0 {
                    sizes.push(twice / 100);
                }
            }
        }
        sizes.extend([u64::MAX, 1 << 53, (1 << 53) - 1, 1 << 60]);
        for size in sizes {
            assert_eq!(format_size(size), float(size), "size {size}");
        }
    }
}
