//! The exported Level Zero functions for memory, command lists and
//! events (split from `api` for size; same rules: pointers checked, failure
//! injection, the model under one lock, panics caught).

use super::*;

// --------------------------------------------------------- virtual memory

/// `zeVirtualMemQueryPageSize`: the configured page size.
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeVirtualMemQueryPageSize(
    ctx: ze_context_handle_t,
    dev: ze_device_handle_t,
    size: usize,
    out: *mut usize,
) -> ze_result_t {
    guard(|| {
        if size == 0 {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
        }
        let page = with("zeVirtualMemQueryPageSize", |d| {
            d.device(h(dev)?)?;
            h(ctx)?;
            Ok(d.cfg.page)
        })?;
        // SAFETY: the caller's out-pointer.
        unsafe { put(out, page as usize) }
    })
}

/// `zeVirtualMemReserve`. A null start is refused, as the 1.4 header's
/// error list and loader 1.8's validation layer do; the hint is otherwise
/// not honoured (the spec lets a driver choose another address).
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeVirtualMemReserve(
    ctx: ze_context_handle_t,
    start: *const c_void,
    size: usize,
    out: *mut *mut c_void,
) -> ze_result_t {
    guard(|| {
        nonnull(start)?;
        nonnull(out)?;
        let p = with("zeVirtualMemReserve", |d| d.reserve(h(ctx)?, size as u64))?;
        // SAFETY: non-null out-pointer.
        unsafe { put(out, p as *mut c_void) }
    })
}

/// `zeVirtualMemFree`.
#[no_mangle]
pub extern "C" fn zeVirtualMemFree(ctx: ze_context_handle_t, ptr: *const c_void, size: usize) -> ze_result_t {
    guard(|| {
        nonnull(ptr)?;
        with("zeVirtualMemFree", |d| d.reserve_free(h(ctx)?, ptr as u64, size as u64))
    })
}

/// `zePhysicalMemCreate`.
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zePhysicalMemCreate(
    ctx: ze_context_handle_t,
    dev: ze_device_handle_t,
    desc: *mut ze_physical_mem_desc_t,
    out: *mut ze_physical_mem_handle_t,
) -> ze_result_t {
    guard(|| {
        nonnull(desc)?;
        nonnull(out)?;
        // SAFETY: non-null descriptor from the caller.
        let dsc = unsafe { &*desc };
        if dsc.stype != ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC || dsc.flags > 1 {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let p = with("zePhysicalMemCreate", |d| d.physical_create(h(ctx)?, h(dev)?, dsc.size as u64))?;
        // SAFETY: non-null out-pointer.
        unsafe { put(out, p as ze_physical_mem_handle_t) }
    })
}

/// `zePhysicalMemDestroy`: refused while mapped.
#[no_mangle]
pub extern "C" fn zePhysicalMemDestroy(ctx: ze_context_handle_t, ph: ze_physical_mem_handle_t) -> ze_result_t {
    guard(|| with("zePhysicalMemDestroy", |d| d.physical_destroy(h(ctx)?, h(ph)?)))
}

/// `zeVirtualMemMap`.
#[no_mangle]
pub extern "C" fn zeVirtualMemMap(
    ctx: ze_context_handle_t,
    ptr: *const c_void,
    size: usize,
    ph: ze_physical_mem_handle_t,
    offset: usize,
    access: ze_memory_access_attribute_t,
) -> ze_result_t {
    guard(|| {
        nonnull(ptr)?;
        with("zeVirtualMemMap", |d| d.map(h(ctx)?, ptr as u64, size as u64, h(ph)?, offset as u64, access))
    })
}

/// `zeVirtualMemUnmap`.
#[no_mangle]
pub extern "C" fn zeVirtualMemUnmap(ctx: ze_context_handle_t, ptr: *const c_void, size: usize) -> ze_result_t {
    guard(|| {
        nonnull(ptr)?;
        with("zeVirtualMemUnmap", |d| d.unmap(h(ctx)?, ptr as u64, size as u64))
    })
}

/// `zeVirtualMemSetAccessAttribute`.
#[no_mangle]
pub extern "C" fn zeVirtualMemSetAccessAttribute(
    ctx: ze_context_handle_t,
    ptr: *const c_void,
    size: usize,
    access: ze_memory_access_attribute_t,
) -> ze_result_t {
    guard(|| {
        nonnull(ptr)?;
        with("zeVirtualMemSetAccessAttribute", |d| d.set_access(h(ctx)?, ptr as u64, size as u64, access))
    })
}

// ---------------------------------------------------- classic allocations

/// `zeMemAllocDevice`.
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeMemAllocDevice(
    ctx: ze_context_handle_t,
    desc: *const ze_device_mem_alloc_desc_t,
    size: usize,
    align: usize,
    dev: ze_device_handle_t,
    out: *mut *mut c_void,
) -> ze_result_t {
    guard(|| {
        nonnull(desc)?;
        nonnull(out)?;
        // SAFETY: non-null descriptor from the caller.
        let dsc = unsafe { &*desc };
        if dsc.stype != ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC || dsc.flags > 0x7 || dsc.ordinal != 0 {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let p = with("zeMemAllocDevice", |d| d.alloc_device(h(ctx)?, h(dev)?, size as u64, align as u64))?;
        // SAFETY: non-null out-pointer.
        unsafe { put(out, p as *mut c_void) }
    })
}

/// `zeMemFree`.
#[no_mangle]
pub extern "C" fn zeMemFree(ctx: ze_context_handle_t, ptr: *mut c_void) -> ze_result_t {
    guard(|| {
        nonnull(ptr)?;
        with("zeMemFree", |d| d.mem_free(h(ctx)?, ptr as u64))
    })
}

// ------------------------------------------------------- lists and events

/// `zeCommandListCreateImmediate`: commands run when appended.
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeCommandListCreateImmediate(
    ctx: ze_context_handle_t,
    dev: ze_device_handle_t,
    desc: *const ze_command_queue_desc_t,
    out: *mut ze_command_list_handle_t,
) -> ze_result_t {
    guard(|| {
        nonnull(desc)?;
        nonnull(out)?;
        // SAFETY: non-null descriptor from the caller.
        let dsc = unsafe { &*desc };
        let l = with("zeCommandListCreateImmediate", |d| d.list_create(h(ctx)?, h(dev)?, dsc))?;
        // SAFETY: non-null out-pointer.
        unsafe { put(out, l as ze_command_list_handle_t) }
    })
}

/// `zeCommandListDestroy`.
#[no_mangle]
pub extern "C" fn zeCommandListDestroy(l: ze_command_list_handle_t) -> ze_result_t {
    guard(|| with("zeCommandListDestroy", |d| d.list_destroy(h(l)?)))
}

fn wait_list(n: u32, evs: *mut ze_event_handle_t) -> R<Vec<u64>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    nonnull(evs)?;
    // SAFETY: `evs` holds `n` handles (caller).
    (0..n as usize).map(|i| h(unsafe { *evs.add(i) })).collect()
}

/// `zeCommandListAppendMemoryCopy`: checks that the list's device may
/// reach both ranges, then copies at once.
#[no_mangle]
pub extern "C" fn zeCommandListAppendMemoryCopy(
    l: ze_command_list_handle_t,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    signal: ze_event_handle_t,
    n: u32,
    waits: *mut ze_event_handle_t,
) -> ze_result_t {
    guard(|| {
        nonnull(dst)?;
        nonnull(src)?;
        let waits = wait_list(n, waits)?;
        with("zeCommandListAppendMemoryCopy", |d| {
            d.copy(h(l)?, dst as u64, src as u64, size as u64, signal as u64, &waits)
        })
    })
}

/// `zeCommandListAppendSignalEvent`.
#[no_mangle]
pub extern "C" fn zeCommandListAppendSignalEvent(l: ze_command_list_handle_t, ev: ze_event_handle_t) -> ze_result_t {
    guard(|| with("zeCommandListAppendSignalEvent", |d| d.signal(h(l)?, h(ev)?)))
}

/// `zeCommandListAppendWaitOnEvents`.
#[no_mangle]
pub extern "C" fn zeCommandListAppendWaitOnEvents(
    l: ze_command_list_handle_t,
    n: u32,
    evs: *mut ze_event_handle_t,
) -> ze_result_t {
    guard(|| {
        let waits = wait_list(n, evs)?;
        with("zeCommandListAppendWaitOnEvents", |d| d.wait(h(l)?, &waits))
    })
}

/// `zeEventPoolCreate`.
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeEventPoolCreate(
    ctx: ze_context_handle_t,
    desc: *const ze_event_pool_desc_t,
    n: u32,
    devs: *mut ze_device_handle_t,
    out: *mut ze_event_pool_handle_t,
) -> ze_result_t {
    guard(|| {
        nonnull(desc)?;
        nonnull(out)?;
        let devices = wait_list(n, devs)?;
        // SAFETY: non-null descriptor from the caller.
        let dsc = unsafe { &*desc };
        let p = with("zeEventPoolCreate", |d| d.pool_create(h(ctx)?, dsc, &devices))?;
        // SAFETY: non-null out-pointer.
        unsafe { put(out, p as ze_event_pool_handle_t) }
    })
}

/// `zeEventPoolDestroy`: refused while it has events.
#[no_mangle]
pub extern "C" fn zeEventPoolDestroy(p: ze_event_pool_handle_t) -> ze_result_t {
    guard(|| with("zeEventPoolDestroy", |d| d.pool_destroy(h(p)?)))
}

/// `zeEventCreate`.
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeEventCreate(
    p: ze_event_pool_handle_t,
    desc: *const ze_event_desc_t,
    out: *mut ze_event_handle_t,
) -> ze_result_t {
    guard(|| {
        nonnull(desc)?;
        nonnull(out)?;
        // SAFETY: non-null descriptor from the caller.
        let dsc = unsafe { &*desc };
        let e = with("zeEventCreate", |d| d.event_create(h(p)?, dsc))?;
        // SAFETY: non-null out-pointer.
        unsafe { put(out, e as ze_event_handle_t) }
    })
}

/// `zeEventDestroy`.
#[no_mangle]
pub extern "C" fn zeEventDestroy(ev: ze_event_handle_t) -> ze_result_t {
    guard(|| with("zeEventDestroy", |d| d.event_destroy(h(ev)?)))
}

fn status(name: &str, ev: ze_event_handle_t) -> ze_result_t {
    match with(name, |d| d.event_status(h(ev)?)) {
        Ok(true) => ZE_RESULT_SUCCESS,
        Ok(false) => ZE_RESULT_NOT_READY,
        Err(e) => e,
    }
}

/// `zeEventHostSynchronize`: nothing runs later in the fake, so an
/// unsignalled event is `ZE_RESULT_NOT_READY` whatever the timeout.
#[no_mangle]
pub extern "C" fn zeEventHostSynchronize(ev: ze_event_handle_t, _timeout: u64) -> ze_result_t {
    catch_unwind(|| status("zeEventHostSynchronize", ev)).unwrap_or(ZE_RESULT_ERROR_UNKNOWN)
}

/// `zeEventQueryStatus`.
#[no_mangle]
pub extern "C" fn zeEventQueryStatus(ev: ze_event_handle_t) -> ze_result_t {
    catch_unwind(|| status("zeEventQueryStatus", ev)).unwrap_or(ZE_RESULT_ERROR_UNKNOWN)
}

/// `zeEventHostReset`.
#[no_mangle]
pub extern "C" fn zeEventHostReset(ev: ze_event_handle_t) -> ze_result_t {
    guard(|| with("zeEventHostReset", |d| d.event_reset(h(ev)?)))
}

/// `zeEventHostSignal`.
#[no_mangle]
pub extern "C" fn zeEventHostSignal(ev: ze_event_handle_t) -> ze_result_t {
    guard(|| with("zeEventHostSignal", |d| d.event_host_signal(h(ev)?)))
}
