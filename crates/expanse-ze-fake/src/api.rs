//! The exported Level Zero functions (the direct way in), also the entries
//! of the DDI tables the loader asks for. Each checks its pointers, runs
//! the failure injection, then the model's rules under one lock; a panic
//! becomes `ZE_RESULT_ERROR_UNKNOWN`, never an unwind into C.

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use expanse_ze::sys::*;

use crate::model::{handle, Config, Driver, LiveCounts, KIND_DEVICE, KIND_DRIVER, R};

static DRIVER: Mutex<Option<Driver>> = Mutex::new(None);

/// Armed failures: (function name, calls left before it fails, code).
static FAIL: Mutex<Vec<(String, u32, ze_result_t)>> = Mutex::new(Vec::new());

const DRIVER_HANDLE: u64 = (KIND_DRIVER << 48) | 1;

fn guard(f: impl FnOnce() -> R<()>) -> ze_result_t {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => ZE_RESULT_SUCCESS,
        Ok(Err(code)) => code,
        Err(_) => ZE_RESULT_ERROR_UNKNOWN,
    }
}

fn default_failure(name: &str) -> ze_result_t {
    match name {
        "zePhysicalMemCreate" | "zeMemAllocDevice" | "zeVirtualMemReserve" => ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
        _ => ZE_RESULT_ERROR_UNKNOWN,
    }
}

fn arm(name: &str, nth: u32, code: ze_result_t) {
    let code = if code == 0 { default_failure(name) } else { code };
    FAIL.lock().unwrap_or_else(|e| e.into_inner()).push((name.to_string(), nth.max(1), code));
}

fn injected(name: &str) -> R<()> {
    let mut f = FAIL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(i) = f.iter().position(|(n, _, _)| n == name) else { return Ok(()) };
    f[i].1 -= 1;
    if f[i].1 == 0 {
        let (_, _, code) = f.remove(i);
        return Err(code);
    }
    Ok(())
}

/// Run `f` on the initialised driver, after the failure injection.
fn with<T>(name: &str, f: impl FnOnce(&mut Driver) -> R<T>) -> R<T> {
    injected(name)?;
    let mut d = DRIVER.lock().unwrap_or_else(|e| e.into_inner());
    f(d.as_mut().ok_or(ZE_RESULT_ERROR_UNINITIALIZED)?)
}

fn h<T>(p: *mut T) -> R<u64> {
    if p.is_null() {
        Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
    } else {
        Ok(p as u64)
    }
}

fn nonnull<T>(p: *const T) -> R<()> {
    if p.is_null() {
        Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER)
    } else {
        Ok(())
    }
}

/// Write `v` to the out-pointer `out`.
///
/// # Safety
/// `out` must be null (refused) or valid for a write of `T`.
unsafe fn put<T>(out: *mut T, v: T) -> R<()> {
    nonnull(out)?;
    // SAFETY: non-null; the caller guarantees it is writable.
    unsafe { out.write(v) };
    Ok(())
}

// ------------------------------------------------------------- test hooks

/// Test hook: make the `nth` next call (1: the next one) of the function
/// named `name` fail with `code` (0: out of device memory for allocating
/// calls, `ZE_RESULT_ERROR_UNKNOWN` for the rest).
///
/// # Safety
/// `name` must be a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn expanse_ze_fake_fail(name: *const c_char, nth: u32, code: ze_result_t) -> ze_result_t {
    guard(|| {
        nonnull(name)?;
        // SAFETY: non-null NUL-terminated string (caller).
        let n = unsafe { CStr::from_ptr(name) }.to_str().map_err(|_| ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
        arm(n, nth, code);
        Ok(())
    })
}

/// Test hook: counts of live driver objects.
///
/// # Safety
/// `out` must be valid for a write of [`LiveCounts`].
#[no_mangle]
pub unsafe extern "C" fn expanse_ze_fake_live(out: *mut LiveCounts) -> ze_result_t {
    // SAFETY: the caller's contract.
    guard(|| with("expanse_ze_fake_live", |d| Ok(d.live())).and_then(|c| unsafe { put(out, c) }))
}

// ------------------------------------------------------- driver, devices

/// `zeInit`. The first call reads the `EXPANSE_ZE_FAKE_*` configuration.
#[no_mangle]
pub extern "C" fn zeInit(flags: u32) -> ze_result_t {
    guard(|| {
        if flags & !0x3 != 0 {
            return Err(ZE_RESULT_ERROR_INVALID_ENUMERATION);
        }
        injected("zeInit")?;
        let mut d = DRIVER.lock().unwrap_or_else(|e| e.into_inner());
        if d.is_none() {
            if let Ok(spec) = std::env::var("EXPANSE_ZE_FAKE_FAIL") {
                for item in spec.split(',').filter(|s| !s.is_empty()) {
                    let (name, nth) = item.split_once(':').unwrap_or((item, "1"));
                    arm(name, nth.parse().unwrap_or(1), 0);
                }
            }
            *d = Some(Driver::new(Config::from_env())?);
        }
        Ok(())
    })
}

/// `zeDriverGet`: one driver.
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeDriverGet(count: *mut u32, drivers: *mut ze_driver_handle_t) -> ze_result_t {
    guard(|| {
        nonnull(count)?;
        with("zeDriverGet", |_| Ok(()))?;
        // SAFETY: non-null out-pointers from the caller.
        unsafe {
            if *count == 0 || drivers.is_null() {
                *count = 1;
            } else {
                *count = 1;
                *drivers = DRIVER_HANDLE as ze_driver_handle_t;
            }
        }
        Ok(())
    })
}

fn driver(hd: ze_driver_handle_t) -> R<()> {
    if h(hd)? == DRIVER_HANDLE {
        Ok(())
    } else {
        Err(ZE_RESULT_ERROR_INVALID_ARGUMENT)
    }
}

/// `zeDriverGetApiVersion`: 1.4.
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeDriverGetApiVersion(hd: ze_driver_handle_t, version: *mut u32) -> ze_result_t {
    // SAFETY: the caller's contract.
    guard(|| driver(hd).and_then(|_| unsafe { put(version, ZE_API_VERSION_1_4) }))
}

/// `zeDeviceGet`.
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeDeviceGet(
    hd: ze_driver_handle_t,
    count: *mut u32,
    devs: *mut ze_device_handle_t,
) -> ze_result_t {
    guard(|| {
        driver(hd)?;
        nonnull(count)?;
        let n = with("zeDeviceGet", |d| Ok(d.cfg.devices))?;
        // SAFETY: non-null count; `devs`, when given, holds `*count` handles.
        unsafe {
            if *count == 0 || devs.is_null() {
                *count = n;
            } else {
                let k = (*count).min(n);
                for i in 0..k {
                    *devs.add(i as usize) = handle(KIND_DEVICE, u64::from(i)) as ze_device_handle_t;
                }
                *count = k;
            }
        }
        Ok(())
    })
}

fn fill_name(dst: &mut [c_char], s: &str) {
    let room = dst.len() - 1;
    for (d, b) in dst.iter_mut().zip(s.bytes().take(room)) {
        *d = b as c_char;
    }
}

/// `zeDeviceGetProperties`.
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeDeviceGetProperties(dev: ze_device_handle_t, p: *mut ze_device_properties_t) -> ze_result_t {
    guard(|| {
        nonnull(p)?;
        let (i, mem) = with("zeDeviceGetProperties", |d| Ok((d.device(h(dev)?)?, d.cfg.memory)))?;
        // SAFETY: non-null, the caller's struct.
        let p = unsafe { &mut *p };
        if p.stype != ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let next = p.pNext;
        // SAFETY: all-zero is a valid value of this plain C struct.
        *p = unsafe { std::mem::zeroed() };
        p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
        p.pNext = next;
        p.type_ = ZE_DEVICE_TYPE_GPU;
        p.vendorId = 0x8086;
        p.maxMemAllocSize = mem;
        p.maxHardwareContexts = 1;
        p.uuid[0] = i as u8 + 1;
        fill_name(&mut p.name, &format!("expanse-ze-fake test device {i} (host memory, not a GPU)"));
        Ok(())
    })
}

/// `zeDeviceGetMemoryProperties`: one memory of the configured size.
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeDeviceGetMemoryProperties(
    dev: ze_device_handle_t,
    count: *mut u32,
    props: *mut ze_device_memory_properties_t,
) -> ze_result_t {
    guard(|| {
        nonnull(count)?;
        let mem = with("zeDeviceGetMemoryProperties", |d| d.device(h(dev)?).map(|_| d.cfg.memory))?;
        // SAFETY: non-null count; `props`, when given, holds `*count` structs.
        unsafe {
            if *count == 0 || props.is_null() {
                *count = 1;
                return Ok(());
            }
            *count = 1;
            let p = &mut *props;
            if p.stype != ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            p.flags = 0;
            p.totalSize = mem;
            fill_name(&mut p.name, "HBM (fake: host memfd)");
        }
        Ok(())
    })
}

/// `zeDeviceGetCommandQueueGroupProperties`: one group, compute and copy.
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeDeviceGetCommandQueueGroupProperties(
    dev: ze_device_handle_t,
    count: *mut u32,
    props: *mut ze_command_queue_group_properties_t,
) -> ze_result_t {
    guard(|| {
        nonnull(count)?;
        with("zeDeviceGetCommandQueueGroupProperties", |d| d.device(h(dev)?))?;
        // SAFETY: as in zeDeviceGetMemoryProperties.
        unsafe {
            if *count == 0 || props.is_null() {
                *count = 1;
                return Ok(());
            }
            *count = 1;
            let p = &mut *props;
            if p.stype != ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            p.flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
            p.maxMemoryFillPatternSize = 4;
            p.numQueues = 1;
        }
        Ok(())
    })
}

/// `zeDeviceCanAccessPeer`.
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeDeviceCanAccessPeer(
    dev: ze_device_handle_t,
    peer: ze_device_handle_t,
    value: *mut ze_bool_t,
) -> ze_result_t {
    guard(|| {
        let v = with("zeDeviceCanAccessPeer", |d| Ok(d.can_access_peer(d.device(h(dev)?)?, d.device(h(peer)?)?)))?;
        // SAFETY: the caller's out-pointer.
        unsafe { put(value, ze_bool_t::from(v)) }
    })
}

// --------------------------------------------------------------- contexts

fn check_context_desc(desc: *const ze_context_desc_t) -> R<()> {
    nonnull(desc)?;
    // SAFETY: non-null descriptor from the caller.
    let d = unsafe { &*desc };
    if d.stype != ZE_STRUCTURE_TYPE_CONTEXT_DESC || d.flags > 1 {
        return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    Ok(())
}

/// `zeContextCreate`: a context over every device.
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeContextCreate(
    hd: ze_driver_handle_t,
    desc: *const ze_context_desc_t,
    out: *mut ze_context_handle_t,
) -> ze_result_t {
    guard(|| {
        driver(hd)?;
        check_context_desc(desc)?;
        nonnull(out)?;
        let c = with("zeContextCreate", |d| Ok(d.context_create((0..d.cfg.devices).collect())))?;
        // SAFETY: non-null out-pointer.
        unsafe { put(out, c as ze_context_handle_t) }
    })
}

/// `zeContextCreateEx`: a context over the given devices (all when none).
///
/// # Safety
/// Pointers as in `ze_api.h`.
#[no_mangle]
pub unsafe extern "C" fn zeContextCreateEx(
    hd: ze_driver_handle_t,
    desc: *const ze_context_desc_t,
    n: u32,
    devs: *mut ze_device_handle_t,
    out: *mut ze_context_handle_t,
) -> ze_result_t {
    guard(|| {
        driver(hd)?;
        check_context_desc(desc)?;
        nonnull(out)?;
        if n > 0 {
            nonnull(devs)?;
        }
        let c = with("zeContextCreateEx", |d| {
            let mut list = Vec::new();
            for i in 0..n as usize {
                // SAFETY: `devs` holds `n` handles (caller).
                let dev = d.device(h(unsafe { *devs.add(i) })?)?;
                if list.contains(&dev) {
                    return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
                }
                list.push(dev);
            }
            if list.is_empty() {
                list = (0..d.cfg.devices).collect();
            }
            Ok(d.context_create(list))
        })?;
        // SAFETY: non-null out-pointer.
        unsafe { put(out, c as ze_context_handle_t) }
    })
}

/// `zeContextDestroy`: refused while anything made in it is alive.
#[no_mangle]
pub extern "C" fn zeContextDestroy(ctx: ze_context_handle_t) -> ze_result_t {
    guard(|| with("zeContextDestroy", |d| d.context_destroy(h(ctx)?)))
}

/// `zeContextMakeMemoryResident`: a device's (peer's) view of a range.
#[no_mangle]
pub extern "C" fn zeContextMakeMemoryResident(
    ctx: ze_context_handle_t,
    dev: ze_device_handle_t,
    ptr: *mut c_void,
    size: usize,
) -> ze_result_t {
    guard(|| {
        nonnull(ptr)?;
        with("zeContextMakeMemoryResident", |d| d.make_resident(h(ctx)?, h(dev)?, ptr as u64, size as u64))
    })
}

mod mem;
pub use mem::*;
