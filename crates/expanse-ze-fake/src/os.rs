//! The Linux calls the fake driver's memory is made of: `PROT_NONE`
//! reservations, one sparse memfd for every device's memory, `MAP_FIXED`
//! shared mappings of its slices. Each function turns failure into the
//! OS error; what may be touched is argued at the call site.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn check_map(p: *mut libc::c_void) -> io::Result<u64> {
    if p == libc::MAP_FAILED {
        Err(io::Error::last_os_error())
    } else {
        Ok(p as u64)
    }
}

/// Reserve `size` bytes aligned to `align` (a power of two): no access, no RAM.
pub fn reserve_aligned(size: u64, align: u64) -> io::Result<u64> {
    let total = size.checked_add(align).ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
    // SAFETY: a fresh anonymous PROT_NONE mapping at a kernel-chosen address
    // aliases nothing.
    let raw = check_map(unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            total as usize,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    })?;
    let base = raw.div_ceil(align) * align;
    let (head, tail) = (base - raw, total - (base - raw) - size);
    // SAFETY: both pieces belong to the mapping just made; nothing uses them.
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

/// Unmap `[addr, addr + size)`.
///
/// # Safety
/// The range must be the driver's own (a reservation or an allocation) with
/// no live reference into it.
pub unsafe fn munmap(addr: u64, size: u64) -> io::Result<()> {
    // SAFETY: the caller upholds the contract above.
    check(unsafe { libc::munmap(addr as *mut libc::c_void, size as usize) })
}

/// Map `size` bytes of `fd` at `offset` over `[addr, addr + size)`.
///
/// # Safety
/// The range must lie inside the driver's own reservation or allocation.
pub unsafe fn map_fixed(
    addr: u64,
    size: u64,
    fd: RawFd,
    offset: u64,
    writable: bool,
    readable: bool,
) -> io::Result<()> {
    let prot = if writable {
        libc::PROT_READ | libc::PROT_WRITE
    } else if readable {
        libc::PROT_READ
    } else {
        libc::PROT_NONE
    };
    // SAFETY: the caller guarantees the range is the driver's to replace.
    check_map(unsafe {
        libc::mmap(
            addr as *mut libc::c_void,
            size as usize,
            prot,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd,
            offset as libc::off_t,
        )
    })
    .map(|_| ())
}

/// Put a `PROT_NONE` reservation back over `[addr, addr + size)`.
///
/// # Safety
/// As [`map_fixed`].
pub unsafe fn unmap_to_reserved(addr: u64, size: u64) -> io::Result<()> {
    // SAFETY: the caller guarantees the range is the driver's to replace.
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

/// Change the protection of `[addr, addr + size)`.
///
/// # Safety
/// The range must be mapped by the driver.
pub unsafe fn protect(addr: u64, size: u64, writable: bool, readable: bool) -> io::Result<()> {
    let prot = match (writable, readable) {
        (true, _) => libc::PROT_READ | libc::PROT_WRITE,
        (false, true) => libc::PROT_READ,
        _ => libc::PROT_NONE,
    };
    // SAFETY: the caller guarantees the range is the driver's mapping.
    check(unsafe { libc::mprotect(addr as *mut libc::c_void, size as usize, prot) })
}

/// A sparse anonymous memory file of `size` bytes.
pub fn memfd(size: u64) -> io::Result<OwnedFd> {
    // SAFETY: a valid NUL-terminated name, no other input.
    let fd = unsafe { libc::memfd_create(c"expanse-ze-fake-device-memory".as_ptr(), libc::MFD_CLOEXEC) };
    if fd == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just created and is owned by no one else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: plain syscall on our descriptor.
    check(unsafe { libc::ftruncate(fd, size as libc::off_t) })?;
    Ok(owned)
}

/// Give the RAM behind `[offset, offset + size)` of `fd` back.
pub fn punch_hole(fd: RawFd, offset: u64, size: u64) -> io::Result<()> {
    // SAFETY: plain syscall on our descriptor; touches no Rust memory.
    check(unsafe {
        libc::fallocate(
            fd,
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            offset as libc::off_t,
            size as libc::off_t,
        )
    })
}
