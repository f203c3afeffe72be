//! History and snapshots through the C ABI: `expanse_record_history` and
//! `expanse_dump_snapshot` (the pickle PyTorch's memory viewer reads).

use std::ffi::{c_char, c_int, CStr};

use super::with_global;

/// Record the allocation history of every device (`enabled` non-zero),
/// keeping at most `max_entries` entries per device (0: no bound), or
/// stop and forget it (`enabled` zero). Returns 0, or -1 on error.
#[no_mangle]
pub extern "C" fn expanse_record_history(enabled: c_int, max_entries: usize) -> c_int {
    with_global(-1, |g| {
        let bound = if max_entries == 0 { usize::MAX } else { max_entries };
        let max = (enabled != 0).then_some(bound);
        g.allocator.record_history(max).map(|_| 0).map_err(|e| e.to_string())
    })
}

/// Write a snapshot of every device (segments, blocks, history) to the
/// file `path` as a pickle for PyTorch's memory viewer. Returns 0, or -1
/// on error (last error says why).
///
/// # Safety
/// `path` must be null or a NUL-terminated string valid for reads.
#[no_mangle]
pub unsafe extern "C" fn expanse_dump_snapshot(path: *const c_char) -> c_int {
    with_global(-1, |g| {
        if path.is_null() {
            return Err("dump_snapshot: path is null".into());
        }
        // SAFETY: non-null, and the caller guarantees a NUL-terminated string.
        let path = unsafe { CStr::from_ptr(path) }.to_string_lossy().into_owned();
        let snapshot = g.allocator.snapshot().map_err(|e| e.to_string())?;
        std::fs::write(&path, snapshot.to_pickle()).map_err(|e| format!("dump_snapshot: {path}: {e}"))?;
        Ok(0)
    })
}
