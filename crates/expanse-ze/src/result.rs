//! Layer 2: thin functions over the raw symbols that turn every status
//! code into `Result<_, DeviceError>`, keeping the raw code.
//!
//! Handles are passed as the driver's opaque pointers. A function is
//! `unsafe` where a handle or address it takes must be live for the call
//! to be sound; the owner of the handle (layer 3) argues that at the call.

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use expanse_device::{DeviceError, Result};

use crate::sys::*;

/// Map a status code to a result; out-of-memory is recoverable.
pub fn check(call: &'static str, code: ze_result_t) -> Result<()> {
    match code {
        ZE_RESULT_SUCCESS => Ok(()),
        ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY | ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY => {
            Err(DeviceError::OutOfMemory { call, requested: 0 })
        }
        c => Err(DeviceError::Driver { call, code: i64::from(c) }),
    }
}

fn with_size(r: Result<()>, size: u64) -> Result<()> {
    r.map_err(|e| match e {
        DeviceError::OutOfMemory { call, .. } => DeviceError::OutOfMemory { call, requested: size },
        other => other,
    })
}

/// `zeInit(ZE_INIT_FLAG_GPU_ONLY)`.
pub fn init(a: &Api) -> Result<()> {
    // SAFETY: no pointers.
    check("zeInit", unsafe { (a.init)(ZE_INIT_FLAG_GPU_ONLY) })
}

/// Every driver handle.
pub fn drivers(a: &Api) -> Result<Vec<ze_driver_handle_t>> {
    let mut n = 0u32;
    // SAFETY: valid out-pointer; a null array asks for the count.
    check("zeDriverGet", unsafe { (a.driver_get)(&mut n, null_mut()) })?;
    let mut v = vec![null_mut(); n as usize];
    // SAFETY: `v` holds `n` handles.
    check("zeDriverGet", unsafe { (a.driver_get)(&mut n, v.as_mut_ptr()) })?;
    v.truncate(n as usize);
    Ok(v)
}

/// Every device of `driver`.
///
/// # Safety
/// `driver` must be a handle returned by [`drivers`].
pub unsafe fn devices(a: &Api, driver: ze_driver_handle_t) -> Result<Vec<ze_device_handle_t>> {
    let mut n = 0u32;
    // SAFETY: live driver (caller), valid out-pointer.
    check("zeDeviceGet", unsafe { (a.device_get)(driver, &mut n, null_mut()) })?;
    let mut v = vec![null_mut(); n as usize];
    // SAFETY: `v` holds `n` handles.
    check("zeDeviceGet", unsafe { (a.device_get)(driver, &mut n, v.as_mut_ptr()) })?;
    v.truncate(n as usize);
    Ok(v)
}

/// Device properties: (type, name, maxMemAllocSize).
///
/// # Safety
/// `dev` must be a live device handle.
pub unsafe fn device_properties(a: &Api, dev: ze_device_handle_t) -> Result<(u32, String, u64)> {
    // SAFETY: all-zero is a valid value of this plain C struct.
    let mut p: ze_device_properties_t = unsafe { std::mem::zeroed() };
    p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    // SAFETY: live device (caller), valid out-struct with its stype set.
    check("zeDeviceGetProperties", unsafe { (a.device_get_properties)(dev, &mut p) })?;
    let name: Vec<u8> = p.name.iter().take_while(|c| **c != 0).map(|c| *c as u8).collect();
    Ok((p.type_, String::from_utf8_lossy(&name).into_owned(), p.maxMemAllocSize))
}

/// Sum of `totalSize` over the device's memory properties.
///
/// # Safety
/// `dev` must be a live device handle.
pub unsafe fn total_memory(a: &Api, dev: ze_device_handle_t) -> Result<u64> {
    let mut n = 0u32;
    // SAFETY: live device, valid out-pointer; null asks for the count.
    check("zeDeviceGetMemoryProperties", unsafe { (a.device_get_memory_properties)(dev, &mut n, null_mut()) })?;
    // SAFETY: all-zero is a valid value of this plain C struct.
    let mut props = vec![unsafe { std::mem::zeroed::<ze_device_memory_properties_t>() }; n as usize];
    for p in &mut props {
        p.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
    }
    // SAFETY: `props` holds `n` structs with their stype set.
    check("zeDeviceGetMemoryProperties", unsafe { (a.device_get_memory_properties)(dev, &mut n, props.as_mut_ptr()) })?;
    Ok(props.iter().take(n as usize).map(|p| p.totalSize).sum())
}

/// The ordinal of the first command queue group that can copy.
///
/// # Safety
/// `dev` must be a live device handle.
pub unsafe fn copy_queue_ordinal(a: &Api, dev: ze_device_handle_t) -> Result<u32> {
    let mut n = 0u32;
    // SAFETY: live device, valid out-pointer; null asks for the count.
    check("zeDeviceGetCommandQueueGroupProperties", unsafe {
        (a.device_get_command_queue_group_properties)(dev, &mut n, null_mut())
    })?;
    // SAFETY: all-zero is a valid value of this plain C struct.
    let mut props = vec![unsafe { std::mem::zeroed::<ze_command_queue_group_properties_t>() }; n as usize];
    for p in &mut props {
        p.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    }
    // SAFETY: `props` holds `n` structs with their stype set.
    check("zeDeviceGetCommandQueueGroupProperties", unsafe {
        (a.device_get_command_queue_group_properties)(dev, &mut n, props.as_mut_ptr())
    })?;
    let want = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    props
        .iter()
        .take(n as usize)
        .position(|p| p.flags & want != 0 && p.numQueues > 0)
        .map(|i| i as u32)
        .ok_or(DeviceError::Unsupported { what: "Level Zero device has no compute or copy queue group".into() })
}

/// Whether `dev` can access `peer`'s memory.
///
/// # Safety
/// Both handles must be live device handles.
pub unsafe fn can_access_peer(a: &Api, dev: ze_device_handle_t, peer: ze_device_handle_t) -> Result<bool> {
    let mut v: ze_bool_t = 0;
    // SAFETY: live devices (caller), valid out-pointer.
    check("zeDeviceCanAccessPeer", unsafe { (a.device_can_access_peer)(dev, peer, &mut v) })?;
    Ok(v != 0)
}

/// A context over `devices`.
///
/// # Safety
/// `driver` and every device must be live handles of that driver.
pub unsafe fn context_create(
    a: &Api,
    driver: ze_driver_handle_t,
    devices: &mut [ze_device_handle_t],
) -> Result<ze_context_handle_t> {
    let desc = ze_context_desc_t { stype: ZE_STRUCTURE_TYPE_CONTEXT_DESC, pNext: null(), flags: 0 };
    let mut ctx = null_mut();
    // SAFETY: live handles (caller), a filled descriptor, `devices.len()`
    // handles, valid out-pointer.
    check("zeContextCreateEx", unsafe {
        (a.context_create_ex)(driver, &desc, devices.len() as u32, devices.as_mut_ptr(), &mut ctx)
    })?;
    Ok(ctx)
}

/// Destroy a context.
///
/// # Safety
/// `ctx` must be live and nothing created in it may be used afterwards.
pub unsafe fn context_destroy(a: &Api, ctx: ze_context_handle_t) -> Result<()> {
    // SAFETY: the caller upholds the contract above.
    check("zeContextDestroy", unsafe { (a.context_destroy)(ctx) })
}

/// Make `[ptr, ptr + size)` resident on `dev` (its peer view of memory).
///
/// # Safety
/// `ctx` and `dev` must be live; the range must be memory of `ctx`.
pub unsafe fn make_resident(
    a: &Api,
    ctx: ze_context_handle_t,
    dev: ze_device_handle_t,
    ptr: u64,
    size: u64,
) -> Result<()> {
    // SAFETY: the caller upholds the contract above.
    check("zeContextMakeMemoryResident", unsafe {
        (a.context_make_memory_resident)(ctx, dev, ptr as *mut c_void, size as usize)
    })
}

/// The page size the driver uses for an allocation of `size` bytes.
///
/// # Safety
/// `ctx` and `dev` must be live handles.
pub unsafe fn query_page_size(a: &Api, ctx: ze_context_handle_t, dev: ze_device_handle_t, size: u64) -> Result<u64> {
    let mut p = 0usize;
    // SAFETY: live handles (caller), valid out-pointer.
    check("zeVirtualMemQueryPageSize", unsafe { (a.virtual_mem_query_page_size)(ctx, dev, size as usize, &mut p) })?;
    Ok(p as u64)
}

/// Reserve `size` bytes of virtual address space.
///
/// The 1.4 header lists a null `pStart` as `ZE_RESULT_ERROR_INVALID_NULL_POINTER`
/// and loader 1.8's validation layer refuses it (found by running through
/// it), though the text says null lets the driver choose. So a hint is
/// always given: `hint`, an aligned low address no driver can honour,
/// which the spec says makes it choose another.
///
/// # Safety
/// `ctx` must be live.
pub unsafe fn reserve(a: &Api, ctx: ze_context_handle_t, size: u64, hint: u64) -> Result<u64> {
    let mut p = null_mut();
    let start = hint.max(1) as *const c_void;
    // SAFETY: live context (caller), a start hint, valid out-pointer.
    let r = unsafe { (a.virtual_mem_reserve)(ctx, start, size as usize, &mut p) };
    with_size(check("zeVirtualMemReserve", r), size)?;
    Ok(p as u64)
}

/// Free a reservation.
///
/// # Safety
/// `ctx` must be live; the range a reservation of it with nothing mapped.
pub unsafe fn reserve_free(a: &Api, ctx: ze_context_handle_t, ptr: u64, size: u64) -> Result<()> {
    // SAFETY: the caller upholds the contract above.
    check("zeVirtualMemFree", unsafe { (a.virtual_mem_free)(ctx, ptr as *const c_void, size as usize) })
}

/// Create `size` bytes of physical memory on `dev`.
///
/// # Safety
/// `ctx` and `dev` must be live handles.
pub unsafe fn physical_create(
    a: &Api,
    ctx: ze_context_handle_t,
    dev: ze_device_handle_t,
    size: u64,
) -> Result<ze_physical_mem_handle_t> {
    let mut desc = ze_physical_mem_desc_t {
        stype: ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC,
        pNext: null(),
        flags: 0,
        size: size as usize,
    };
    let mut h = null_mut();
    // SAFETY: live handles (caller), a filled descriptor, valid out-pointer.
    with_size(check("zePhysicalMemCreate", unsafe { (a.physical_mem_create)(ctx, dev, &mut desc, &mut h) }), size)?;
    Ok(h)
}

/// Destroy physical memory.
///
/// # Safety
/// `ctx` and `h` must be live and `h` unmapped.
pub unsafe fn physical_destroy(a: &Api, ctx: ze_context_handle_t, h: ze_physical_mem_handle_t) -> Result<()> {
    // SAFETY: the caller upholds the contract above.
    check("zePhysicalMemDestroy", unsafe { (a.physical_mem_destroy)(ctx, h) })
}

/// Map all `size` bytes of `h` at `ptr`, with no access yet.
///
/// # Safety
/// `ctx` and `h` must be live; the range must lie in one of its reservations.
pub unsafe fn map(a: &Api, ctx: ze_context_handle_t, ptr: u64, size: u64, h: ze_physical_mem_handle_t) -> Result<()> {
    // SAFETY: the caller upholds the contract above.
    check("zeVirtualMemMap", unsafe {
        (a.virtual_mem_map)(ctx, ptr as *const c_void, size as usize, h, 0, ZE_MEMORY_ACCESS_ATTRIBUTE_NONE)
    })
}

/// Unmap `[ptr, ptr + size)`.
///
/// # Safety
/// `ctx` must be live; the range exactly mapped pages.
pub unsafe fn unmap(a: &Api, ctx: ze_context_handle_t, ptr: u64, size: u64) -> Result<()> {
    // SAFETY: the caller upholds the contract above.
    check("zeVirtualMemUnmap", unsafe { (a.virtual_mem_unmap)(ctx, ptr as *const c_void, size as usize) })
}

/// Make `[ptr, ptr + size)` readable and writable in the context.
///
/// # Safety
/// `ctx` must be live; the range mapped.
pub unsafe fn set_access_rw(a: &Api, ctx: ze_context_handle_t, ptr: u64, size: u64) -> Result<()> {
    // SAFETY: the caller upholds the contract above.
    check("zeVirtualMemSetAccessAttribute", unsafe {
        (a.virtual_mem_set_access_attribute)(
            ctx,
            ptr as *const c_void,
            size as usize,
            ZE_MEMORY_ACCESS_ATTRIBUTE_READWRITE,
        )
    })
}

/// `zeMemAllocDevice` of `size` bytes aligned to `align`.
///
/// # Safety
/// `ctx` and `dev` must be live handles.
pub unsafe fn mem_alloc_device(
    a: &Api,
    ctx: ze_context_handle_t,
    dev: ze_device_handle_t,
    size: u64,
    align: u64,
) -> Result<u64> {
    let desc = ze_device_mem_alloc_desc_t {
        stype: ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
        pNext: null(),
        flags: 0,
        ordinal: 0,
    };
    let mut p = null_mut();
    // SAFETY: live handles (caller), a filled descriptor, valid out-pointer.
    let r = unsafe { (a.mem_alloc_device)(ctx, &desc, size as usize, align as usize, dev, &mut p) };
    with_size(check("zeMemAllocDevice", r), size)?;
    Ok(p as u64)
}

/// `zeMemFree`.
///
/// # Safety
/// `ctx` must be live and `p` an allocation of it no work still uses.
pub unsafe fn mem_free(a: &Api, ctx: ze_context_handle_t, p: u64) -> Result<()> {
    // SAFETY: the caller upholds the contract above.
    check("zeMemFree", unsafe { (a.mem_free)(ctx, p as *mut c_void) })
}

/// An immediate, asynchronous, in-order command list on `dev`.
///
/// # Safety
/// `ctx` and `dev` must be live handles.
pub unsafe fn immediate_list(
    a: &Api,
    ctx: ze_context_handle_t,
    dev: ze_device_handle_t,
    ordinal: u32,
) -> Result<ze_command_list_handle_t> {
    let desc = ze_command_queue_desc_t {
        stype: ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
        pNext: null(),
        ordinal,
        index: 0,
        flags: 0,
        mode: ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        priority: ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
    };
    let mut l = null_mut();
    // SAFETY: live handles (caller), a filled descriptor, valid out-pointer.
    check("zeCommandListCreateImmediate", unsafe { (a.command_list_create_immediate)(ctx, dev, &desc, &mut l) })?;
    Ok(l)
}

/// Destroy a command list.
///
/// # Safety
/// `l` must be live and idle.
pub unsafe fn list_destroy(a: &Api, l: ze_command_list_handle_t) -> Result<()> {
    // SAFETY: the caller upholds the contract above.
    check("zeCommandListDestroy", unsafe { (a.command_list_destroy)(l) })
}

/// Append a copy of `size` bytes from `src` to `dst`, signalling `ev` (may
/// be null) when done.
///
/// # Safety
/// `l` and `ev` (if non-null) must be live; `dst` and `src` valid for
/// `size` bytes until the copy completed.
pub unsafe fn append_copy(
    a: &Api,
    l: ze_command_list_handle_t,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    ev: ze_event_handle_t,
) -> Result<()> {
    // SAFETY: the caller upholds the contract above.
    check("zeCommandListAppendMemoryCopy", unsafe {
        (a.command_list_append_memory_copy)(l, dst, src, size, ev, 0, null_mut())
    })
}

/// Signal `ev` once the work queued on `l` so far completed.
///
/// # Safety
/// `l` and `ev` must be live.
pub unsafe fn append_signal(a: &Api, l: ze_command_list_handle_t, ev: ze_event_handle_t) -> Result<()> {
    // SAFETY: the caller upholds the contract above.
    check("zeCommandListAppendSignalEvent", unsafe { (a.command_list_append_signal_event)(l, ev) })
}

/// Make later work on `l` wait for `ev`.
///
/// # Safety
/// `l` and `ev` must be live.
pub unsafe fn append_wait(a: &Api, l: ze_command_list_handle_t, mut ev: ze_event_handle_t) -> Result<()> {
    // SAFETY: the caller upholds the contract above; one event.
    check("zeCommandListAppendWaitOnEvents", unsafe { (a.command_list_append_wait_on_events)(l, 1, &mut ev) })
}

/// A host-visible event pool of `count` events.
///
/// # Safety
/// `ctx` must be live.
pub unsafe fn event_pool_create(a: &Api, ctx: ze_context_handle_t, count: u32) -> Result<ze_event_pool_handle_t> {
    let desc = ze_event_pool_desc_t {
        stype: ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
        pNext: null(),
        flags: ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
        count,
    };
    let mut p = null_mut();
    // SAFETY: live context (caller), a filled descriptor; no device list
    // means every device of the context.
    check("zeEventPoolCreate", unsafe { (a.event_pool_create)(ctx, &desc, 0, null_mut(), &mut p) })?;
    Ok(p)
}

/// Destroy an event pool.
///
/// # Safety
/// `p` must be live with no live events.
pub unsafe fn event_pool_destroy(a: &Api, p: ze_event_pool_handle_t) -> Result<()> {
    // SAFETY: the caller upholds the contract above.
    check("zeEventPoolDestroy", unsafe { (a.event_pool_destroy)(p) })
}

/// Create event `index` of pool `p`, visible to the host.
///
/// # Safety
/// `p` must be live and `index` free in it.
pub unsafe fn event_create(a: &Api, p: ze_event_pool_handle_t, index: u32) -> Result<ze_event_handle_t> {
    let desc = ze_event_desc_t {
        stype: ZE_STRUCTURE_TYPE_EVENT_DESC,
        pNext: null(),
        index,
        signal: ZE_EVENT_SCOPE_FLAG_HOST,
        wait: ZE_EVENT_SCOPE_FLAG_HOST,
    };
    let mut e = null_mut();
    // SAFETY: the caller upholds the contract above; valid out-pointer.
    check("zeEventCreate", unsafe { (a.event_create)(p, &desc, &mut e) })?;
    Ok(e)
}

/// Destroy an event.
///
/// # Safety
/// `e` must be live and no queued work may still use it.
pub unsafe fn event_destroy(a: &Api, e: ze_event_handle_t) -> Result<()> {
    // SAFETY: the caller upholds the contract above.
    check("zeEventDestroy", unsafe { (a.event_destroy)(e) })
}

/// Wait on the host until `e` is signalled.
///
/// # Safety
/// `e` must be live.
pub unsafe fn event_host_synchronize(a: &Api, e: ze_event_handle_t) -> Result<()> {
    // SAFETY: the caller upholds the contract above; no timeout.
    check("zeEventHostSynchronize", unsafe { (a.event_host_synchronize)(e, u64::MAX) })
}

/// Whether `e` is signalled.
///
/// # Safety
/// `e` must be live.
pub unsafe fn event_query(a: &Api, e: ze_event_handle_t) -> Result<bool> {
    // SAFETY: the caller upholds the contract above.
    match unsafe { (a.event_query_status)(e) } {
        ZE_RESULT_SUCCESS => Ok(true),
        ZE_RESULT_NOT_READY => Ok(false),
        c => check("zeEventQueryStatus", c).map(|_| false),
    }
}
