//! Layer 2: thin functions over the raw symbols that turn every status
//! code into `Result<_, DeviceError>`, keeping the raw code.
//!
//! A function is safe when no argument can make the driver touch memory or
//! a handle that is not the caller's (out-pointers are local, handles are
//! created here). Every function whose arguments must name live handles
//! or device memory the caller owns is an `unsafe fn` with a `# Safety`
//! section; [`crate::handles`] wraps streams, events and the context in
//! owned types that discharge those obligations.

use std::ffi::{c_int, c_void};

use expanse_device::{DeviceError, Result};

use crate::sys::*;

/// Map a status code to a result; out-of-memory is recoverable.
pub fn check(call: &'static str, code: CUresult) -> Result<()> {
    match code {
        CUDA_SUCCESS => Ok(()),
        CUDA_ERROR_OUT_OF_MEMORY => Err(DeviceError::OutOfMemory { call, requested: 0 }),
        c => Err(DeviceError::Driver { call, code: i64::from(c) }),
    }
}

fn with_size(r: Result<()>, size: u64) -> Result<()> {
    r.map_err(|e| match e {
        DeviceError::OutOfMemory { call, .. } => DeviceError::OutOfMemory { call, requested: size },
        other => other,
    })
}

/// `cuInit(0)`.
pub fn init(d: &Driver) -> Result<()> {
    // SAFETY: no pointers.
    check("cuInit", unsafe { (d.init)(0) })
}

/// Number of devices.
pub fn device_count(d: &Driver) -> Result<i32> {
    let mut n: c_int = 0;
    // SAFETY: `n` is a valid out-pointer.
    check("cuDeviceGetCount", unsafe { (d.device_get_count)(&mut n) })?;
    Ok(n)
}

/// The device handle of ordinal `i`.
pub fn device(d: &Driver, i: i32) -> Result<CUdevice> {
    let mut dev: CUdevice = 0;
    // SAFETY: valid out-pointer.
    check("cuDeviceGet", unsafe { (d.device_get)(&mut dev, i) })?;
    Ok(dev)
}

/// Total memory of `dev`.
pub fn total_mem(d: &Driver, dev: CUdevice) -> Result<u64> {
    let mut n: usize = 0;
    // SAFETY: valid out-pointer.
    check("cuDeviceTotalMem", unsafe { (d.device_total_mem)(&mut n, dev) })?;
    Ok(n as u64)
}

/// A device attribute.
pub fn attribute(d: &Driver, dev: CUdevice, attr: c_int) -> Result<i32> {
    let mut v: c_int = 0;
    // SAFETY: valid out-pointer.
    check("cuDeviceGetAttribute", unsafe { (d.device_get_attribute)(&mut v, attr, dev) })?;
    Ok(v)
}

/// Whether `dev` can access `peer`'s memory.
pub fn can_access_peer(d: &Driver, dev: CUdevice, peer: CUdevice) -> Result<bool> {
    let mut v: c_int = 0;
    // SAFETY: valid out-pointer.
    check("cuDeviceCanAccessPeer", unsafe { (d.device_can_access_peer)(&mut v, dev, peer) })?;
    Ok(v != 0)
}

/// Retain the primary context of `dev`.
pub fn primary_ctx_retain(d: &Driver, dev: CUdevice) -> Result<CUcontext> {
    let mut ctx: CUcontext = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check("cuDevicePrimaryCtxRetain", unsafe { (d.primary_ctx_retain)(&mut ctx, dev) })?;
    Ok(ctx)
}

/// Release the primary context of `dev`.
///
/// # Safety
/// The caller must hold a retain of that context (from
/// [`primary_ctx_retain`]) and give it up here: nothing of the caller's may
/// use the context afterwards.
pub unsafe fn primary_ctx_release(d: &Driver, dev: CUdevice) -> Result<()> {
    // SAFETY: the caller gives up a retain it holds.
    check("cuDevicePrimaryCtxRelease", unsafe { (d.primary_ctx_release)(dev) })
}

/// Make `ctx` current on this thread.
///
/// # Safety
/// `ctx` must be a context retained (and not yet released) by the caller.
pub unsafe fn set_current(d: &Driver, ctx: CUcontext) -> Result<()> {
    // SAFETY: the caller guarantees `ctx` is a live context.
    check("cuCtxSetCurrent", unsafe { (d.ctx_set_current)(ctx) })
}

/// The context current on this thread (null when none).
pub fn get_current(d: &Driver) -> Result<CUcontext> {
    let mut ctx: CUcontext = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check("cuCtxGetCurrent", unsafe { (d.ctx_get_current)(&mut ctx) })?;
    Ok(ctx)
}

/// Let the current context access `peer`'s memory (already enabled is fine).
///
/// # Safety
/// `peer` must be a context retained (and not yet released) by the caller.
pub unsafe fn enable_peer_access(d: &Driver, peer: CUcontext) -> Result<()> {
    // SAFETY: the caller guarantees `peer` is a live context.
    match unsafe { (d.ctx_enable_peer_access)(peer, 0) } {
        CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(()),
        c => check("cuCtxEnablePeerAccess", c),
    }
}

/// Free and total memory of the current context's device.
pub fn mem_info(d: &Driver) -> Result<(u64, u64)> {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers.
    check("cuMemGetInfo", unsafe { (d.mem_get_info)(&mut free, &mut total) })?;
    Ok((free as u64, total as u64))
}

/// Allocation properties for pinned device memory on `ordinal`.
pub fn device_prop(ordinal: i32) -> CUmemAllocationProp {
    CUmemAllocationProp {
        type_: CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes: CU_MEM_HANDLE_TYPE_NONE,
        location: CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: ordinal },
        win32HandleMetaData: std::ptr::null_mut(),
        allocFlags: CUmemAllocFlags::default(),
    }
}

/// Minimum page granularity for `prop`.
pub fn granularity(d: &Driver, prop: &CUmemAllocationProp) -> Result<u64> {
    let mut g: usize = 0;
    // SAFETY: valid out-pointer and a fully initialised prop.
    check("cuMemGetAllocationGranularity", unsafe {
        (d.mem_get_allocation_granularity)(&mut g, prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM)
    })?;
    Ok(g as u64)
}

/// Reserve `size` bytes of address space aligned to `align`.
pub fn address_reserve(d: &Driver, size: u64, align: u64) -> Result<u64> {
    let mut p: CUdeviceptr = 0;
    // SAFETY: valid out-pointer; a reservation touches no memory.
    let code = unsafe { (d.mem_address_reserve)(&mut p, size as usize, align as usize, 0, 0) };
    with_size(check("cuMemAddressReserve", code), size)?;
    Ok(p)
}

/// Free a reservation.
///
/// # Safety
/// `[p, p + size)` must be a reservation of the caller's with nothing
/// mapped in it.
pub unsafe fn address_free(d: &Driver, p: u64, size: u64) -> Result<()> {
    // SAFETY: the caller owns the empty reservation.
    check("cuMemAddressFree", unsafe { (d.mem_address_free)(p, size as usize) })
}

/// Create a physical allocation of `size` bytes.
pub fn mem_create(d: &Driver, size: u64, prop: &CUmemAllocationProp) -> Result<u64> {
    let mut h: CUmemGenericAllocationHandle = 0;
    // SAFETY: valid out-pointer and prop.
    with_size(check("cuMemCreate", unsafe { (d.mem_create)(&mut h, size as usize, prop, 0) }), size)?;
    Ok(h)
}

/// Release a physical allocation.
///
/// # Safety
/// `h` must be an unmapped allocation the caller created and still owns.
pub unsafe fn mem_release(d: &Driver, h: u64) -> Result<()> {
    // SAFETY: the caller owns the unmapped handle.
    check("cuMemRelease", unsafe { (d.mem_release)(h) })
}

/// Map all of `h` (`size` bytes) at `p`.
///
/// # Safety
/// `h` must be an allocation of `size` bytes the caller owns, and
/// `[p, p + size)` an unmapped range inside a reservation of the caller's.
pub unsafe fn mem_map(d: &Driver, p: u64, size: u64, h: u64) -> Result<()> {
    // SAFETY: the caller owns both the handle and the range.
    check("cuMemMap", unsafe { (d.mem_map)(p, size as usize, 0, h, 0) })
}

/// Unmap `[p, p + size)`.
///
/// # Safety
/// The range must be mappings the caller made and no one uses any more
/// (kernels or copies still reading it would fault).
pub unsafe fn mem_unmap(d: &Driver, p: u64, size: u64) -> Result<()> {
    // SAFETY: the caller owns the mappings and nothing uses them.
    check("cuMemUnmap", unsafe { (d.mem_unmap)(p, size as usize) })
}

/// Grant read-write access to `[p, p + size)` for each device ordinal.
pub fn mem_set_access(d: &Driver, p: u64, size: u64, devices: &[u32]) -> Result<()> {
    let descs: Vec<CUmemAccessDesc> = devices
        .iter()
        .map(|&i| CUmemAccessDesc {
            location: CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: i as c_int },
            flags: CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        })
        .collect();
    // SAFETY: `descs` is a valid array of `descs.len()` descriptors.
    check("cuMemSetAccess", unsafe { (d.mem_set_access)(p, size as usize, descs.as_ptr(), descs.len()) })
}

/// `cuMemAlloc`.
pub fn mem_alloc(d: &Driver, size: u64) -> Result<u64> {
    let mut p: CUdeviceptr = 0;
    // SAFETY: valid out-pointer.
    with_size(check("cuMemAlloc", unsafe { (d.mem_alloc)(&mut p, size as usize) }), size)?;
    Ok(p)
}

/// `cuMemFree`.
///
/// # Safety
/// `p` must come from [`mem_alloc`], not be freed yet, and not be in use.
pub unsafe fn mem_free(d: &Driver, p: u64) -> Result<()> {
    // SAFETY: the caller owns the allocation and nothing uses it.
    check("cuMemFree", unsafe { (d.mem_free)(p) })
}

/// Copy host bytes to device memory (synchronous).
///
/// # Safety
/// `[dst, dst + src.len())` must be device memory of the current context
/// that the caller owns and may write (mapped with access, or allocated).
pub unsafe fn memcpy_htod(d: &Driver, dst: u64, src: &[u8]) -> Result<()> {
    // SAFETY: `src` is valid for `src.len()` bytes of reads; the caller
    // guarantees the destination.
    check("cuMemcpyHtoD", unsafe { (d.memcpy_htod)(dst, src.as_ptr().cast::<c_void>(), src.len()) })
}

/// Copy device memory to host bytes (synchronous).
///
/// # Safety
/// `[src, src + dst.len())` must be device memory of the current context
/// that the caller owns and may read.
pub unsafe fn memcpy_dtoh(d: &Driver, dst: &mut [u8], src: u64) -> Result<()> {
    // SAFETY: `dst` is valid for `dst.len()` bytes of writes; the caller
    // guarantees the source.
    check("cuMemcpyDtoH", unsafe { (d.memcpy_dtoh)(dst.as_mut_ptr().cast::<c_void>(), src, dst.len()) })
}

/// Create an event without timing in the current context.
pub fn event_create(d: &Driver) -> Result<CUevent> {
    let mut e: CUevent = std::ptr::null_mut();
    // SAFETY: valid out-pointer; no handle goes in.
    check("cuEventCreate", unsafe { (d.event_create)(&mut e, CU_EVENT_DISABLE_TIMING) })?;
    Ok(e)
}

/// Record event `e` on `stream`.
///
/// # Safety
/// `e` must be a live event and `stream` a live stream (or null, the
/// legacy default stream) of the current context.
pub unsafe fn event_record(d: &Driver, e: CUevent, stream: CUstream) -> Result<()> {
    // SAFETY: the caller guarantees both handles.
    check("cuEventRecord", unsafe { (d.event_record)(e, stream) })
}

/// Whether the event completed.
///
/// # Safety
/// `e` must be a live event.
pub unsafe fn event_query(d: &Driver, e: CUevent) -> Result<bool> {
    // SAFETY: the caller guarantees the handle.
    match unsafe { (d.event_query)(e) } {
        CUDA_SUCCESS => Ok(true),
        CUDA_ERROR_NOT_READY => Ok(false),
        c => check("cuEventQuery", c).map(|_| false),
    }
}

/// Destroy an event.
///
/// # Safety
/// `e` must be a live event the caller owns; it is dead afterwards.
pub unsafe fn event_destroy(d: &Driver, e: CUevent) -> Result<()> {
    // SAFETY: the caller owns the handle and gives it up.
    check("cuEventDestroy", unsafe { (d.event_destroy)(e) })
}

/// Create a non-blocking stream (not ordered with the legacy default
/// stream) in the current context.
pub fn stream_create(d: &Driver) -> Result<CUstream> {
    let mut s: CUstream = std::ptr::null_mut();
    // SAFETY: valid out-pointer; no handle goes in.
    check("cuStreamCreate", unsafe { (d.stream_create)(&mut s, CU_STREAM_NON_BLOCKING) })?;
    Ok(s)
}

/// Destroy a stream (work queued on it still completes).
///
/// # Safety
/// `s` must be a live stream the caller created and owns, never null; it is
/// dead afterwards.
pub unsafe fn stream_destroy(d: &Driver, s: CUstream) -> Result<()> {
    // SAFETY: the caller owns the handle and gives it up.
    check("cuStreamDestroy", unsafe { (d.stream_destroy)(s) })
}

/// Make `stream` wait for event `e` (no host wait).
///
/// # Safety
/// `e` must be a live event and `stream` a live stream (or null) of the
/// current context.
pub unsafe fn stream_wait_event(d: &Driver, stream: CUstream, e: CUevent) -> Result<()> {
    // SAFETY: the caller guarantees both handles.
    check("cuStreamWaitEvent", unsafe { (d.stream_wait_event)(stream, e, 0) })
}

/// Wait for `stream`.
///
/// # Safety
/// `stream` must be a live stream (or null) of the current context.
pub unsafe fn stream_synchronize(d: &Driver, stream: CUstream) -> Result<()> {
    // SAFETY: the caller guarantees the handle.
    check("cuStreamSynchronize", unsafe { (d.stream_synchronize)(stream) })
}

/// Wait for the current context.
pub fn ctx_synchronize(d: &Driver) -> Result<()> {
    // SAFETY: no arguments.
    check("cuCtxSynchronize", unsafe { (d.ctx_synchronize)() })
}

/// The driver's text for a status code.
pub fn error_string(d: &Driver, code: CUresult) -> String {
    let mut p: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: valid out-pointer; the driver returns a static string.
    if unsafe { (d.get_error_string)(code, &mut p) } != CUDA_SUCCESS || p.is_null() {
        return format!("CUDA error {code}");
    }
    // SAFETY: non-null, NUL-terminated static string from the driver.
    unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned()
}
