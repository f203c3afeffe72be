//! Thin, checked wrappers over the Linux memory calls that the host
//! backend (`expanse-host`) and the fake Level Zero driver
//! (`expanse-ze-fake`) build device memory from: `PROT_NONE`
//! reservations, one sparse memfd as physical memory, `MAP_FIXED` shared
//! mappings of its slices, protection changes and hole punching.
//!
//! Every function turns `-1`/`MAP_FAILED` into the OS error and keeps no
//! state. The `unsafe` here is the FFI call itself. The functions that
//! replace or remove existing mappings are `unsafe fn`s whose `# Safety`
//! sections state the one obligation they pass to the caller: the range
//! is the caller's own and nothing Rust knows about points into it.

use std::ffi::CStr;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn check_map(ptr: *mut libc::c_void) -> io::Result<u64> {
    if ptr == libc::MAP_FAILED {
        Err(io::Error::last_os_error())
    } else {
        Ok(ptr as u64)
    }
}

/// Who may touch a mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Nothing (a reservation, or a mapping before access is set).
    None,
    /// Read only.
    Read,
    /// Read and write.
    ReadWrite,
}

impl Access {
    fn prot(self) -> libc::c_int {
        match self {
            Access::None => libc::PROT_NONE,
            Access::Read => libc::PROT_READ,
            Access::ReadWrite => libc::PROT_READ | libc::PROT_WRITE,
        }
    }
}

/// A fresh private anonymous mapping of `size` bytes at an address of the
/// kernel's choosing, with no swap reserved.
fn fresh(size: u64, access: Access) -> io::Result<u64> {
    // SAFETY: a new anonymous mapping at an address the kernel picks cannot
    // alias any memory Rust knows about.
    check_map(unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size as usize,
            access.prot(),
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    })
}

/// Reserve `size` bytes of address space: no access, no backing, no RAM.
pub fn reserve(size: u64) -> io::Result<u64> {
    fresh(size, Access::None)
}

/// Reserve `size` bytes of address space aligned to `align` (a power of
/// two): a reservation `align` bytes larger, trimmed at both ends.
pub fn reserve_aligned(size: u64, align: u64) -> io::Result<u64> {
    let total = size.checked_add(align).ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
    let raw = reserve(total)?;
    let base = raw.div_ceil(align) * align;
    let (head, tail) = (base - raw, total - (base - raw) - size);
    // SAFETY: both trimmed pieces are parts of the reservation just made,
    // which nothing refers to yet.
    unsafe {
        if head > 0 {
            munmap(raw, head)?;
        }
        if tail > 0 {
            munmap(base + size, tail)?;
        }
    }
    Ok(base)
}

/// Map fresh read-write anonymous memory (a classic `malloc`).
pub fn anonymous(size: u64) -> io::Result<u64> {
    fresh(size, Access::ReadWrite)
}

/// Unmap `[addr, addr + size)` entirely.
///
/// # Safety
/// The range must be the caller's own (a reservation or a mapping it made)
/// and no live Rust reference may point into it.
pub unsafe fn munmap(addr: u64, size: u64) -> io::Result<()> {
    // SAFETY: the caller upholds the contract above.
    check(unsafe { libc::munmap(addr as *mut libc::c_void, size as usize) })
}

/// Map `size` bytes of `fd` at `offset` over `[addr, addr + size)`, shared,
/// with `access`.
///
/// # Safety
/// `[addr, addr + size)` must lie inside a reservation or mapping the
/// caller owns, with no live Rust reference into it: `MAP_FIXED` replaces
/// what is there.
pub unsafe fn map_fixed_shared(addr: u64, size: u64, fd: RawFd, offset: u64, access: Access) -> io::Result<()> {
    // SAFETY: the caller guarantees the range is theirs to replace.
    check_map(unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            size as usize,
            access.prot(),
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd,
            offset as libc::off_t,
        )
    })
    .map(|_| ())
}

/// Put a fresh `PROT_NONE` reservation back over `[addr, addr + size)`,
/// dropping whatever was mapped there (an "unmap" that keeps the address
/// range reserved).
///
/// # Safety
/// As [`map_fixed_shared`].
pub unsafe fn map_fixed_none(addr: u64, size: u64) -> io::Result<()> {
    // SAFETY: the caller guarantees the range is theirs to replace.
    check_map(unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            size as usize,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_NORESERVE,
            -1,
            0,
        )
    })
    .map(|_| ())
}

/// Change who may touch `[addr, addr + size)`.
///
/// # Safety
/// The range must be mapped by the caller, and taking access away must not
/// leave a live Rust reference into it.
pub unsafe fn protect(addr: u64, size: u64, access: Access) -> io::Result<()> {
    // SAFETY: the caller guarantees the range is their own mapping.
    check(unsafe { libc::mprotect(addr as *mut libc::c_void, size as usize, access.prot()) })
}

/// Create an anonymous memory file of `size` bytes named `name` (sparse:
/// no RAM until touched), closed on exec.
pub fn memfd(name: &CStr, size: u64) -> io::Result<OwnedFd> {
    // SAFETY: `name` is a valid NUL-terminated string; no other input.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by memfd_create and is owned by no one
    // else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let len = libc::off_t::try_from(size).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
    // SAFETY: a plain call on a descriptor we own.
    check(unsafe { libc::ftruncate(fd, len) })?;
    Ok(owned)
}

/// Give the RAM behind `[offset, offset + size)` of `fd` back to the
/// system (the file keeps its size).
pub fn punch_hole(fd: RawFd, offset: u64, size: u64) -> io::Result<()> {
    // SAFETY: a plain call on a descriptor; it touches no Rust memory.
    check(unsafe {
        libc::fallocate(
            fd,
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            offset as libc::off_t,
            size as libc::off_t,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn aligned_reservations_are_aligned_and_can_be_mapped_and_written() {
        let page = 2 << 20;
        let fd = memfd(c"expanse-sys-test", 2 * page).unwrap();
        let base = reserve_aligned(4 * page, page).unwrap();
        assert_eq!(base % page, 0, "base {base:#x} not aligned to {page:#x}");
        // SAFETY: the range lies in the reservation just made; nothing else
        // refers to it.
        unsafe {
            map_fixed_shared(base + page, page, fd.as_raw_fd(), page, Access::ReadWrite).unwrap();
            // SAFETY (the write): the page was just mapped read-write.
            std::ptr::write_volatile((base + page) as *mut u64, 0xfeed);
            // The same file page mapped a second time shows the write.
            map_fixed_shared(base + 3 * page, page, fd.as_raw_fd(), page, Access::Read).unwrap();
            assert_eq!(std::ptr::read_volatile((base + 3 * page) as *const u64), 0xfeed);
            map_fixed_none(base + page, page).unwrap();
            munmap(base, 4 * page).unwrap();
        }
        // Punching the hole drops the data: a fresh mapping reads zero.
        punch_hole(fd.as_raw_fd(), page, page).unwrap();
        let again = reserve(page).unwrap();
        // SAFETY: as above, on the new reservation.
        unsafe {
            map_fixed_shared(again, page, fd.as_raw_fd(), page, Access::Read).unwrap();
            assert_eq!(std::ptr::read_volatile(again as *const u64), 0);
            munmap(again, page).unwrap();
        }
    }

    #[test]
    fn failures_are_os_errors_not_panics() {
        let fd = memfd(c"expanse-sys-test", 4096).unwrap();
        // An unaligned offset is EINVAL from mmap.
        let base = reserve(8192).unwrap();
        // SAFETY: the range is the reservation just made.
        let e = unsafe { map_fixed_shared(base, 4096, fd.as_raw_fd(), 1, Access::Read) }.unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
        // SAFETY: as above.
        unsafe { munmap(base, 8192).unwrap() };
        // An absurd size: no address space for it, and no overflow.
        assert!(reserve_aligned(u64::MAX - 10, 4096).is_err());
        assert!(memfd(c"expanse-sys-test", u64::MAX).is_err());
    }
}
