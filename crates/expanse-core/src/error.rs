//! Allocator errors. Each variant says how to recover.

use std::fmt;

use expanse_device::DeviceError;

/// Why an allocator call failed. The allocator stays usable after any of
/// them; nothing already allocated is lost.
#[derive(Clone, Debug, PartialEq)]
pub enum AllocError {
    /// Not enough device memory even after freeing every cached segment.
    /// Recover by freeing tensors (and calling `empty_cache`), or by
    /// allocating less. `message` is PyTorch's wording.
    OutOfMemory {
        /// Device index.
        device: u32,
        /// Bytes the failed request needed from the device.
        requested: u64,
        /// PyTorch-style explanation.
        message: String,
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
            AllocError::OutOfMemory { message, .. } => f.write_str(message),
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

impl From<DeviceError> for AllocError {
    fn from(e: DeviceError) -> Self {
        match e {
            DeviceError::Misuse(m) => AllocError::Misuse { message: format!("internal device misuse: {m}") },
            other => AllocError::Device(other),
        }
    }
}

/// PyTorch's `format_size`: bytes, KiB, MiB or GiB with two decimals.
pub fn format_size(size: u64) -> String {
    let s = size as f64;
    if size <= 1024 {
        format!("{size} bytes")
    } else if size <= 1 << 20 {
        format!("{:.2} KiB", s / 1024.0)
    } else if size <= 1 << 30 {
        format!("{:.2} MiB", s / 1048576.0)
    } else {
        format!("{:.2} GiB", s / 1073741824.0)
    }
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
}
