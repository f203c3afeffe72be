//! Thin, checked wrappers over the Linux calls the host backend uses.
//!
//! Every function turns `-1`/`MAP_FAILED` into an `io::Error`; none of them
//! keeps state. The `unsafe` here is the FFI call itself; what each call may
//! touch is argued at the call site.

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

/// Reserve `size` bytes of address space: no access, no backing, no RAM.
pub fn reserve(size: u64) -> io::Result<u64> {
    // SAFETY: a fresh anonymous PROT_NONE mapping at an address of the
    // kernel's choosing cannot alias any memory Rust knows about.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size as usize,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    check_map(p)
}

/// Map fresh read-write anonymous memory (classic `malloc`).
pub fn anonymous(size: u64) -> io::Result<u64> {
    // SAFETY: as `reserve`; the kernel picks an unused address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    check_map(p)
}

/// Unmap `[addr, addr + size)` entirely.
///
/// # Safety
/// The range must be one the backend owns (a reservation or a `malloc`
/// mapping) and no live Rust reference may point into it.
pub unsafe fn munmap(addr: u64, size: u64) -> io::Result<()> {
    // SAFETY: the caller upholds the contract above.
    check(unsafe { libc::munmap(addr as *mut libc::c_void, size as usize) })
}

/// Map `size` bytes of `fd` at `offset` over `[addr, addr + size)`, with no
/// access until [`protect_rw`] (like a VMM mapping before `cuMemSetAccess`).
///
/// # Safety
/// `[addr, addr + size)` must lie inside a reservation the backend owns,
/// with no live Rust reference into it: MAP_FIXED replaces what is there.
pub unsafe fn map_fixed_shared(addr: u64, size: u64, fd: RawFd, offset: u64) -> io::Result<()> {
    // SAFETY: the caller guarantees the range is ours to replace.
    let p = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            size as usize,
            libc::PROT_NONE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd,
            offset as libc::off_t,
        )
    };
    check_map(p).map(|_| ())
}

/// Put a fresh PROT_NONE reservation back over `[addr, addr + size)`,
/// dropping whatever was mapped there (the host "unmap").
///
/// # Safety
/// As [`map_fixed_shared`].
pub unsafe fn map_fixed_none(addr: u64, size: u64) -> io::Result<()> {
    // SAFETY: the caller guarantees the range is ours to replace.
    let p = unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            size as usize,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    check_map(p).map(|_| ())
}

/// Make `[addr, addr + size)` readable and writable.
///
/// # Safety
/// The range must be mapped by the backend.
pub unsafe fn protect_rw(addr: u64, size: u64) -> io::Result<()> {
    // SAFETY: changing protection on our own mapping has no effect on Rust
    // memory; the caller guarantees the range is ours.
    check(unsafe { libc::mprotect(addr as *mut libc::c_void, size as usize, libc::PROT_READ | libc::PROT_WRITE) })
}

/// Create an anonymous memory file of `size` bytes (sparse: no RAM until
/// touched).
pub fn memfd(size: u64) -> io::Result<OwnedFd> {
    let name = c"expanse-host-device";
    // SAFETY: `name` is a valid NUL-terminated string; the call has no other
    // inputs.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by memfd_create and is owned by no one
    // else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: plain syscall on a descriptor we own.
    check(unsafe { libc::ftruncate(fd, size as libc::off_t) })?;
    Ok(owned)
}

/// Give the RAM behind `[offset, offset + size)` of `fd` back to the system.
pub fn punch_hole(fd: RawFd, offset: u64, size: u64) -> io::Result<()> {
    // SAFETY: plain syscall on a descriptor we own; it touches no Rust memory.
    check(unsafe {
        libc::fallocate(
            fd,
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            offset as libc::off_t,
            size as libc::off_t,
        )
    })
}
