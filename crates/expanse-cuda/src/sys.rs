//! Layer 1: the raw driver API, loaded from `libcuda.so.1` at run time.
//!
//! Only the types and symbols expanse calls are declared. A missing library
//! or symbol is an error value ([`Driver::load`]), never a panic. Status
//! codes stay plain integers (`CUresult`), so an unknown code from a newer
//! driver cannot be an invalid enum value.
#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_uint, c_void};

pub type CUresult = c_int;
pub type CUdevice = c_int;
pub type CUcontext = *mut c_void;
pub type CUstream = *mut c_void;
pub type CUevent = *mut c_void;
pub type CUdeviceptr = u64;
pub type CUmemGenericAllocationHandle = u64;

pub const CUDA_SUCCESS: CUresult = 0;
pub const CUDA_ERROR_OUT_OF_MEMORY: CUresult = 2;
pub const CUDA_ERROR_NOT_READY: CUresult = 600;
pub const CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED: CUresult = 704;

pub const CU_MEM_ALLOCATION_TYPE_PINNED: c_uint = 1;
pub const CU_MEM_HANDLE_TYPE_NONE: c_uint = 0;
pub const CU_MEM_LOCATION_TYPE_DEVICE: c_uint = 1;
pub const CU_MEM_ALLOC_GRANULARITY_MINIMUM: c_uint = 0;
pub const CU_MEM_ACCESS_FLAGS_PROT_READWRITE: c_uint = 3;
pub const CU_EVENT_DISABLE_TIMING: c_uint = 2;
pub const CU_STREAM_NON_BLOCKING: c_uint = 1;
pub const CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: c_int = 102;

/// `CUmemLocation` (cuda.h): 8 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemLocation {
    pub type_: c_uint,
    pub id: c_int,
}

/// `CUmemAllocationProp::allocFlags` (cuda.h): 8 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUmemAllocFlags {
    pub compressionType: u8,
    pub gpuDirectRDMACapable: u8,
    pub usage: u16,
    pub reserved: [u8; 4],
}

/// `CUmemAllocationProp` (cuda.h): 32 bytes on 64-bit Linux.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemAllocationProp {
    pub type_: c_uint,
    pub requestedHandleTypes: c_uint,
    pub location: CUmemLocation,
    pub win32HandleMetaData: *mut c_void,
    pub allocFlags: CUmemAllocFlags,
}

/// `CUmemAccessDesc` (cuda.h): 12 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemAccessDesc {
    pub location: CUmemLocation,
    pub flags: c_uint,
}

const _: () = assert!(std::mem::size_of::<CUmemLocation>() == 8);
const _: () = assert!(std::mem::size_of::<CUmemAllocationProp>() == 32);
const _: () = assert!(std::mem::size_of::<CUmemAccessDesc>() == 12);

macro_rules! driver_api {
    ($( $field:ident = $sym:literal : fn($($arg:ty),*) ; )*) => {
        /// Function pointers of the loaded driver. The library stays loaded
        /// as long as this value lives.
        pub struct Driver {
            _lib: libloading::Library,
            $( pub $field: unsafe extern "C" fn($($arg),*) -> CUresult, )*
        }

        impl Driver {
            /// Load `libcuda.so.1` (or `libcuda.so`) and resolve every symbol.
            pub fn load() -> Result<Driver, String> {
                let names = ["libcuda.so.1", "libcuda.so"];
                let mut last = String::new();
                for name in names {
                    // SAFETY: loading the CUDA driver runs its initializers,
                    // which have no preconditions on our side.
                    match unsafe { libloading::Library::new(name) } {
                        Ok(lib) => {
                            $(
                                // SAFETY: the symbol's type is the C
                                // prototype from cuda.h for this name.
                                let $field = unsafe {
                                    *lib.get::<unsafe extern "C" fn($($arg),*) -> CUresult>(concat!($sym, "\0").as_bytes())
                                        .map_err(|e| format!("{name}: missing symbol {}: {e}", $sym))?
                                };
                            )*
                            return Ok(Driver { _lib: lib, $( $field, )* });
                        }
                        Err(e) => last = format!("{name}: {e}"),
                    }
                }
                Err(format!("CUDA driver library not found ({last})"))
            }
        }
    };
}

driver_api! {
    init = "cuInit": fn(c_uint);
    device_get = "cuDeviceGet": fn(*mut CUdevice, c_int);
    device_get_count = "cuDeviceGetCount": fn(*mut c_int);
    device_total_mem = "cuDeviceTotalMem_v2": fn(*mut usize, CUdevice);
    device_get_attribute = "cuDeviceGetAttribute": fn(*mut c_int, c_int, CUdevice);
    device_can_access_peer = "cuDeviceCanAccessPeer": fn(*mut c_int, CUdevice, CUdevice);
    primary_ctx_retain = "cuDevicePrimaryCtxRetain": fn(*mut CUcontext, CUdevice);
    primary_ctx_release = "cuDevicePrimaryCtxRelease_v2": fn(CUdevice);
    ctx_set_current = "cuCtxSetCurrent": fn(CUcontext);
    ctx_get_current = "cuCtxGetCurrent": fn(*mut CUcontext);
    ctx_synchronize = "cuCtxSynchronize": fn();
    ctx_enable_peer_access = "cuCtxEnablePeerAccess": fn(CUcontext, c_uint);
    mem_get_info = "cuMemGetInfo_v2": fn(*mut usize, *mut usize);
    mem_address_reserve = "cuMemAddressReserve": fn(*mut CUdeviceptr, usize, usize, CUdeviceptr, u64);
    mem_address_free = "cuMemAddressFree": fn(CUdeviceptr, usize);
    mem_get_allocation_granularity = "cuMemGetAllocationGranularity": fn(*mut usize, *const CUmemAllocationProp, c_uint);
    mem_create = "cuMemCreate": fn(*mut CUmemGenericAllocationHandle, usize, *const CUmemAllocationProp, u64);
    mem_release = "cuMemRelease": fn(CUmemGenericAllocationHandle);
    mem_map = "cuMemMap": fn(CUdeviceptr, usize, usize, CUmemGenericAllocationHandle, u64);
    mem_unmap = "cuMemUnmap": fn(CUdeviceptr, usize);
    mem_set_access = "cuMemSetAccess": fn(CUdeviceptr, usize, *const CUmemAccessDesc, usize);
    mem_alloc = "cuMemAlloc_v2": fn(*mut CUdeviceptr, usize);
    mem_free = "cuMemFree_v2": fn(CUdeviceptr);
    memcpy_htod = "cuMemcpyHtoD_v2": fn(CUdeviceptr, *const c_void, usize);
    memcpy_dtoh = "cuMemcpyDtoH_v2": fn(*mut c_void, CUdeviceptr, usize);
    event_create = "cuEventCreate": fn(*mut CUevent, c_uint);
    event_record = "cuEventRecord": fn(CUevent, CUstream);
    event_query = "cuEventQuery": fn(CUevent);
    event_destroy = "cuEventDestroy_v2": fn(CUevent);
    stream_create = "cuStreamCreate": fn(*mut CUstream, c_uint);
    stream_destroy = "cuStreamDestroy_v2": fn(CUstream);
    stream_synchronize = "cuStreamSynchronize": fn(CUstream);
    stream_wait_event = "cuStreamWaitEvent": fn(CUstream, CUevent, c_uint);
    get_error_string = "cuGetErrorString": fn(CUresult, *mut *const c_char);
}
