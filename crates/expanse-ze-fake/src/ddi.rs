//! The driver side of Intel's loader: the `ze*GetProcAddrTable` entry
//! points it calls (through `ZE_ENABLE_ALT_DRIVERS`) to fill its dispatch
//! tables. Loader 1.8 requires every core (non-"Exp") `ze`, `zet` and `zes`
//! table getter to exist and succeed; the tables this driver implements are
//! filled, the rest are left as the loader zero-initialised them (the
//! validation layer answers `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE` for a
//! null entry).
//!
//! A table is a C struct of function pointers (`ze_ddi.h`); it is filled by
//! field index, with the field count and order of loader 1.8's header.

use std::ffi::c_void;

use expanse_ze::sys::*;

use crate::api::*;

type Slot = *const c_void;

/// Zero `len` slots of `table`, then set the given ones.
///
/// # Safety
/// `table` must point to a dispatch table of at least `len` pointers, and
/// every index must be below `len`.
unsafe fn fill(version: u32, table: *mut c_void, len: usize, entries: &[(usize, Slot)]) -> ze_result_t {
    if version >> 16 != 1 {
        return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
    }
    if table.is_null() {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    let t = table.cast::<Slot>();
    for i in 0..len {
        // SAFETY: `i < len` slots exist (caller).
        unsafe { t.add(i).write(std::ptr::null()) };
    }
    for &(i, f) in entries {
        debug_assert!(i < len);
        // SAFETY: `i < len` (caller).
        unsafe { t.add(i).write(f) };
    }
    ZE_RESULT_SUCCESS
}

macro_rules! table {
    ($name:ident, $len:expr, [$($i:expr => $f:expr),* $(,)?]) => {
        /// Dispatch table getter called by Intel's loader.
        ///
        /// # Safety
        /// `table` must point to the table struct of this name in `ze_ddi.h`.
        #[no_mangle]
        pub unsafe extern "C" fn $name(version: u32, table: *mut c_void) -> ze_result_t {
            // SAFETY: the loader passes its table of this type (caller).
            unsafe { fill(version, table, $len, &[$(($i, $f as Slot)),*]) }
        }
    };
}

table!(zeGetGlobalProcAddrTable, 1, [0 => zeInit]);
table!(zeGetDriverProcAddrTable, 6, [0 => zeDriverGet, 1 => zeDriverGetApiVersion]);
table!(zeGetDeviceProcAddrTable, 18, [
    0 => zeDeviceGet,
    2 => zeDeviceGetProperties,
    5 => zeDeviceGetCommandQueueGroupProperties,
    6 => zeDeviceGetMemoryProperties,
    12 => zeDeviceCanAccessPeer,
]);
table!(zeGetContextProcAddrTable, 9, [
    0 => zeContextCreate,
    1 => zeContextDestroy,
    4 => zeContextMakeMemoryResident,
    8 => zeContextCreateEx,
]);
table!(zeGetCommandListProcAddrTable, 28, [
    1 => zeCommandListCreateImmediate,
    2 => zeCommandListDestroy,
    8 => zeCommandListAppendMemoryCopy,
    18 => zeCommandListAppendSignalEvent,
    19 => zeCommandListAppendWaitOnEvents,
]);
table!(zeGetEventProcAddrTable, 7, [
    0 => zeEventCreate,
    1 => zeEventDestroy,
    2 => zeEventHostSignal,
    3 => zeEventHostSynchronize,
    4 => zeEventQueryStatus,
    5 => zeEventHostReset,
]);
table!(zeGetEventPoolProcAddrTable, 5, [0 => zeEventPoolCreate, 1 => zeEventPoolDestroy]);
table!(zeGetMemProcAddrTable, 10, [1 => zeMemAllocDevice, 3 => zeMemFree]);
table!(zeGetPhysicalMemProcAddrTable, 2, [0 => zePhysicalMemCreate, 1 => zePhysicalMemDestroy]);
table!(zeGetVirtualMemProcAddrTable, 7, [
    0 => zeVirtualMemReserve,
    1 => zeVirtualMemFree,
    2 => zeVirtualMemQueryPageSize,
    3 => zeVirtualMemMap,
    4 => zeVirtualMemUnmap,
    5 => zeVirtualMemSetAccessAttribute,
]);

macro_rules! unimplemented_tables {
    ($($name:ident),* $(,)?) => {
        $(
            /// Dispatch table getter for a table this driver does not
            /// implement: succeeds and leaves the loader's (zeroed) table.
            #[no_mangle]
            pub extern "C" fn $name(version: u32, table: *mut c_void) -> ze_result_t {
                if version >> 16 != 1 {
                    ZE_RESULT_ERROR_UNSUPPORTED_VERSION
                } else if table.is_null() {
                    ZE_RESULT_ERROR_INVALID_NULL_POINTER
                } else {
                    ZE_RESULT_SUCCESS
                }
            }
        )*
    };
}

unimplemented_tables!(
    zeGetCommandQueueProcAddrTable,
    zeGetFenceProcAddrTable,
    zeGetImageProcAddrTable,
    zeGetKernelProcAddrTable,
    zeGetModuleProcAddrTable,
    zeGetModuleBuildLogProcAddrTable,
    zeGetSamplerProcAddrTable,
    zetGetCommandListProcAddrTable,
    zetGetContextProcAddrTable,
    zetGetDebugProcAddrTable,
    zetGetDeviceProcAddrTable,
    zetGetKernelProcAddrTable,
    zetGetMetricGroupProcAddrTable,
    zetGetMetricProcAddrTable,
    zetGetMetricQueryPoolProcAddrTable,
    zetGetMetricQueryProcAddrTable,
    zetGetMetricStreamerProcAddrTable,
    zetGetModuleProcAddrTable,
    zetGetTracerExpProcAddrTable,
    zesGetDeviceProcAddrTable,
    zesGetDiagnosticsProcAddrTable,
    zesGetDriverProcAddrTable,
    zesGetEngineProcAddrTable,
    zesGetFabricPortProcAddrTable,
    zesGetFanProcAddrTable,
    zesGetFirmwareProcAddrTable,
    zesGetFrequencyProcAddrTable,
    zesGetLedProcAddrTable,
    zesGetMemoryProcAddrTable,
    zesGetPerformanceFactorProcAddrTable,
    zesGetPowerProcAddrTable,
    zesGetPsuProcAddrTable,
    zesGetRasProcAddrTable,
    zesGetSchedulerProcAddrTable,
    zesGetStandbyProcAddrTable,
    zesGetTemperatureProcAddrTable,
);
