//! Errors every backend returns. Each variant says how a caller recovers.

use std::fmt;

/// Result of a device call.
pub type Result<T> = std::result::Result<T, DeviceError>;

/// Why a device call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceError {
    /// The device has no memory for this request. Recover by freeing
    /// cached memory (`empty_cache`) and retrying, or by asking for less.
    OutOfMemory {
        /// The call that failed.
        call: &'static str,
        /// Bytes the call asked for.
        requested: u64,
    },
    /// The driver returned an error code. Not recoverable by retrying the
    /// same call; the raw code is kept for diagnosis.
    Driver {
        /// The call that failed.
        call: &'static str,
        /// The driver's raw status code.
        code: i64,
    },
    /// The caller broke the device contract (a bug in the caller, e.g. an
    /// unaligned address or a double map). Nothing was changed.
    Misuse(Misuse),
    /// The backend cannot do this (no virtual memory, no driver library).
    /// Recover by choosing another backend or the classic path.
    Unsupported {
        /// What is missing.
        what: String,
    },
}

/// A broken contract, with the call and the address involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Misuse {
    /// The call that was misused.
    pub call: &'static str,
    /// The address (or handle value) involved.
    pub addr: u64,
    /// What was wrong.
    pub what: &'static str,
}

impl DeviceError {
    /// Shorthand for a misuse error.
    pub fn misuse(call: &'static str, addr: u64, what: &'static str) -> Self {
        DeviceError::Misuse(Misuse { call, addr, what })
    }

    /// Whether this is an out-of-memory error (the recoverable kind).
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, DeviceError::OutOfMemory { .. })
    }
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceError::OutOfMemory { call, requested } => {
                write!(f, "{call}: out of device memory ({requested} bytes requested)")
            }
            DeviceError::Driver { call, code } => write!(f, "{call}: driver error {code}"),
            DeviceError::Misuse(m) => write!(f, "{m}"),
            DeviceError::Unsupported { what } => write!(f, "unsupported: {what}"),
        }
    }
}

impl fmt::Display for Misuse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} (at {:#x})", self.call, self.what, self.addr)
    }
}

impl std::error::Error for DeviceError {}
