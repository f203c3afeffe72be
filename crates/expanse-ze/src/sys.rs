//! Layer 1: the raw Level Zero API (`ze_api.h`, spec 1.4 as shipped with
//! loader 1.8), loaded at run time from `libze_loader.so.1` or the path in
//! `EXPANSE_ZE_LIBRARY`.
//!
//! Only the types and symbols expanse calls are declared; the structure
//! layouts are checked by size below. Status codes stay plain integers
//! (`ze_result_t`) so an unknown code from a newer driver is not an invalid
//! enum value. A missing library or symbol is an error value
//! ([`Api::load`]), never a panic. expanse's test driver
//! (`expanse-ze-fake`) implements these same declarations.
#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_void};

pub type ze_result_t = u32;
pub type ze_bool_t = u8;
pub type ze_structure_type_t = u32;
pub type ze_driver_handle_t = *mut c_void;
pub type ze_device_handle_t = *mut c_void;
pub type ze_context_handle_t = *mut c_void;
pub type ze_command_list_handle_t = *mut c_void;
pub type ze_event_pool_handle_t = *mut c_void;
pub type ze_event_handle_t = *mut c_void;
pub type ze_physical_mem_handle_t = *mut c_void;
pub type ze_memory_access_attribute_t = u32;

pub const ZE_RESULT_SUCCESS: ze_result_t = 0;
pub const ZE_RESULT_NOT_READY: ze_result_t = 1;
pub const ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY: ze_result_t = 0x7000_0002;
pub const ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: ze_result_t = 0x7000_0003;
pub const ZE_RESULT_ERROR_UNINITIALIZED: ze_result_t = 0x7800_0001;
pub const ZE_RESULT_ERROR_UNSUPPORTED_VERSION: ze_result_t = 0x7800_0002;
pub const ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: ze_result_t = 0x7800_0003;
pub const ZE_RESULT_ERROR_INVALID_ARGUMENT: ze_result_t = 0x7800_0004;
pub const ZE_RESULT_ERROR_INVALID_NULL_HANDLE: ze_result_t = 0x7800_0005;
pub const ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE: ze_result_t = 0x7800_0006;
pub const ZE_RESULT_ERROR_INVALID_NULL_POINTER: ze_result_t = 0x7800_0007;
pub const ZE_RESULT_ERROR_INVALID_SIZE: ze_result_t = 0x7800_0008;
pub const ZE_RESULT_ERROR_UNSUPPORTED_SIZE: ze_result_t = 0x7800_0009;
pub const ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT: ze_result_t = 0x7800_000a;
pub const ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT: ze_result_t = 0x7800_000b;
pub const ZE_RESULT_ERROR_INVALID_ENUMERATION: ze_result_t = 0x7800_000c;
pub const ZE_RESULT_ERROR_OVERLAPPING_REGIONS: ze_result_t = 0x7800_001a;
pub const ZE_RESULT_ERROR_UNKNOWN: ze_result_t = 0x7fff_fffe;

/// `ZE_MAKE_VERSION(1, 4)`: the API version expanse is written against.
pub const ZE_API_VERSION_1_4: u32 = (1 << 16) | 4;
pub const ZE_INIT_FLAG_GPU_ONLY: u32 = 1;
pub const ZE_DEVICE_TYPE_GPU: u32 = 1;

pub const ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES: ze_structure_type_t = 0x1;
pub const ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES: ze_structure_type_t = 0x3;
pub const ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES: ze_structure_type_t = 0x6;
pub const ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES: ze_structure_type_t = 0x7;
pub const ZE_STRUCTURE_TYPE_CONTEXT_DESC: ze_structure_type_t = 0xd;
pub const ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC: ze_structure_type_t = 0xe;
pub const ZE_STRUCTURE_TYPE_EVENT_POOL_DESC: ze_structure_type_t = 0x10;
pub const ZE_STRUCTURE_TYPE_EVENT_DESC: ze_structure_type_t = 0x11;
pub const ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC: ze_structure_type_t = 0x15;
pub const ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC: ze_structure_type_t = 0x20;

pub const ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE: u32 = 1;
pub const ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY: u32 = 2;
pub const ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS: u32 = 2;
pub const ZE_COMMAND_QUEUE_PRIORITY_NORMAL: u32 = 0;
pub const ZE_EVENT_POOL_FLAG_HOST_VISIBLE: u32 = 1;
pub const ZE_EVENT_SCOPE_FLAG_HOST: u32 = 4;
pub const ZE_MEMORY_ACCESS_ATTRIBUTE_NONE: ze_memory_access_attribute_t = 0;
pub const ZE_MEMORY_ACCESS_ATTRIBUTE_READWRITE: ze_memory_access_attribute_t = 1;
pub const ZE_MEMORY_ACCESS_ATTRIBUTE_READONLY: ze_memory_access_attribute_t = 2;

pub const ZE_MAX_DEVICE_NAME: usize = 256;

/// `ze_device_properties_t`: 368 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ze_device_properties_t {
    pub stype: ze_structure_type_t,
    pub pNext: *mut c_void,
    pub type_: u32,
    pub vendorId: u32,
    pub deviceId: u32,
    pub flags: u32,
    pub subdeviceId: u32,
    pub coreClockRate: u32,
    pub maxMemAllocSize: u64,
    pub maxHardwareContexts: u32,
    pub maxCommandQueuePriority: u32,
    pub numThreadsPerEU: u32,
    pub physicalEUSimdWidth: u32,
    pub numEUsPerSubslice: u32,
    pub numSubslicesPerSlice: u32,
    pub numSlices: u32,
    pub timerResolution: u64,
    pub timestampValidBits: u32,
    pub kernelTimestampValidBits: u32,
    pub uuid: [u8; 16],
    pub name: [c_char; ZE_MAX_DEVICE_NAME],
}

/// `ze_device_memory_properties_t`: 296 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ze_device_memory_properties_t {
    pub stype: ze_structure_type_t,
    pub pNext: *mut c_void,
    pub flags: u32,
    pub maxClockRate: u32,
    pub maxBusWidth: u32,
    pub totalSize: u64,
    pub name: [c_char; ZE_MAX_DEVICE_NAME],
}

/// `ze_command_queue_group_properties_t`: 40 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ze_command_queue_group_properties_t {
    pub stype: ze_structure_type_t,
    pub pNext: *mut c_void,
    pub flags: u32,
    pub maxMemoryFillPatternSize: usize,
    pub numQueues: u32,
}

/// `ze_context_desc_t`: 24 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ze_context_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: u32,
}

/// `ze_command_queue_desc_t`: 40 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ze_command_queue_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub ordinal: u32,
    pub index: u32,
    pub flags: u32,
    pub mode: u32,
    pub priority: u32,
}

/// `ze_event_pool_desc_t`: 24 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ze_event_pool_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: u32,
    pub count: u32,
}

/// `ze_event_desc_t`: 32 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ze_event_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub index: u32,
    pub signal: u32,
    pub wait: u32,
}

/// `ze_device_mem_alloc_desc_t`: 24 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ze_device_mem_alloc_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: u32,
    pub ordinal: u32,
}

/// `ze_physical_mem_desc_t`: 32 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ze_physical_mem_desc_t {
    pub stype: ze_structure_type_t,
    pub pNext: *const c_void,
    pub flags: u32,
    pub size: usize,
}

const _: () = assert!(std::mem::size_of::<ze_device_properties_t>() == 368);
const _: () = assert!(std::mem::size_of::<ze_device_memory_properties_t>() == 296);
const _: () = assert!(std::mem::size_of::<ze_command_queue_group_properties_t>() == 40);
const _: () = assert!(std::mem::size_of::<ze_context_desc_t>() == 24);
const _: () = assert!(std::mem::size_of::<ze_command_queue_desc_t>() == 40);
const _: () = assert!(std::mem::size_of::<ze_event_pool_desc_t>() == 24);
const _: () = assert!(std::mem::size_of::<ze_event_desc_t>() == 32);
const _: () = assert!(std::mem::size_of::<ze_device_mem_alloc_desc_t>() == 24);
const _: () = assert!(std::mem::size_of::<ze_physical_mem_desc_t>() == 32);

/// The library names tried when `EXPANSE_ZE_LIBRARY` is not set.
pub const LOADER_NAMES: [&str; 2] = ["libze_loader.so.1", "libze_loader.so"];

/// Invoke `$m!` with every API function expanse uses: field name, symbol,
/// argument types. The fake driver uses the same list to export them.
#[macro_export]
macro_rules! ze_functions {
    ($m:ident) => {
        $m! {
            init = "zeInit": fn(u32);
            driver_get = "zeDriverGet": fn(*mut u32, *mut ze_driver_handle_t);
            device_get = "zeDeviceGet": fn(ze_driver_handle_t, *mut u32, *mut ze_device_handle_t);
            device_get_properties = "zeDeviceGetProperties": fn(ze_device_handle_t, *mut ze_device_properties_t);
            device_get_memory_properties = "zeDeviceGetMemoryProperties":
                fn(ze_device_handle_t, *mut u32, *mut ze_device_memory_properties_t);
            device_get_command_queue_group_properties = "zeDeviceGetCommandQueueGroupProperties":
                fn(ze_device_handle_t, *mut u32, *mut ze_command_queue_group_properties_t);
            device_can_access_peer = "zeDeviceCanAccessPeer":
                fn(ze_device_handle_t, ze_device_handle_t, *mut ze_bool_t);
            context_create_ex = "zeContextCreateEx":
                fn(ze_driver_handle_t, *const ze_context_desc_t, u32, *mut ze_device_handle_t, *mut ze_context_handle_t);
            context_destroy = "zeContextDestroy": fn(ze_context_handle_t);
            context_make_memory_resident = "zeContextMakeMemoryResident":
                fn(ze_context_handle_t, ze_device_handle_t, *mut c_void, usize);
            virtual_mem_query_page_size = "zeVirtualMemQueryPageSize":
                fn(ze_context_handle_t, ze_device_handle_t, usize, *mut usize);
            virtual_mem_reserve = "zeVirtualMemReserve": fn(ze_context_handle_t, *const c_void, usize, *mut *mut c_void);
            virtual_mem_free = "zeVirtualMemFree": fn(ze_context_handle_t, *const c_void, usize);
            physical_mem_create = "zePhysicalMemCreate":
                fn(ze_context_handle_t, ze_device_handle_t, *mut ze_physical_mem_desc_t, *mut ze_physical_mem_handle_t);
            physical_mem_destroy = "zePhysicalMemDestroy": fn(ze_context_handle_t, ze_physical_mem_handle_t);
            virtual_mem_map = "zeVirtualMemMap":
                fn(ze_context_handle_t, *const c_void, usize, ze_physical_mem_handle_t, usize, ze_memory_access_attribute_t);
            virtual_mem_unmap = "zeVirtualMemUnmap": fn(ze_context_handle_t, *const c_void, usize);
            virtual_mem_set_access_attribute = "zeVirtualMemSetAccessAttribute":
                fn(ze_context_handle_t, *const c_void, usize, ze_memory_access_attribute_t);
            mem_alloc_device = "zeMemAllocDevice":
                fn(ze_context_handle_t, *const ze_device_mem_alloc_desc_t, usize, usize, ze_device_handle_t, *mut *mut c_void);
            mem_free = "zeMemFree": fn(ze_context_handle_t, *mut c_void);
            command_list_create_immediate = "zeCommandListCreateImmediate":
                fn(ze_context_handle_t, ze_device_handle_t, *const ze_command_queue_desc_t, *mut ze_command_list_handle_t);
            command_list_destroy = "zeCommandListDestroy": fn(ze_command_list_handle_t);
            command_list_append_memory_copy = "zeCommandListAppendMemoryCopy":
                fn(ze_command_list_handle_t, *mut c_void, *const c_void, usize, ze_event_handle_t, u32, *mut ze_event_handle_t);
            command_list_append_signal_event = "zeCommandListAppendSignalEvent":
                fn(ze_command_list_handle_t, ze_event_handle_t);
            command_list_append_wait_on_events = "zeCommandListAppendWaitOnEvents":
                fn(ze_command_list_handle_t, u32, *mut ze_event_handle_t);
            event_pool_create = "zeEventPoolCreate":
                fn(ze_context_handle_t, *const ze_event_pool_desc_t, u32, *mut ze_device_handle_t, *mut ze_event_pool_handle_t);
            event_pool_destroy = "zeEventPoolDestroy": fn(ze_event_pool_handle_t);
            event_create = "zeEventCreate": fn(ze_event_pool_handle_t, *const ze_event_desc_t, *mut ze_event_handle_t);
            event_destroy = "zeEventDestroy": fn(ze_event_handle_t);
            event_host_synchronize = "zeEventHostSynchronize": fn(ze_event_handle_t, u64);
            event_query_status = "zeEventQueryStatus": fn(ze_event_handle_t);
        }
    };
}

macro_rules! declare_api {
    ($( $field:ident = $sym:literal : fn($($arg:ty),*) ; )*) => {
        /// Function pointers of the loaded library. The library stays loaded
        /// as long as this value lives.
        pub struct Api {
            /// The file the functions came from.
            pub path: String,
            _lib: libloading::Library,
            $( pub $field: unsafe extern "C" fn($($arg),*) -> ze_result_t, )*
        }

        impl Api {
            /// Load the Level Zero library: the file named by
            /// `EXPANSE_ZE_LIBRARY` when set, else Intel's loader. The error
            /// names what is missing.
            pub fn load() -> Result<Api, String> {
                let names: Vec<String> = match std::env::var("EXPANSE_ZE_LIBRARY") {
                    Ok(p) if !p.is_empty() => vec![p],
                    _ => LOADER_NAMES.iter().map(|s| s.to_string()).collect(),
                };
                let mut last = String::new();
                for name in &names {
                    // SAFETY: loading a Level Zero loader or driver runs its
                    // initializers, which have no preconditions on our side.
                    match unsafe { libloading::Library::new(name) } {
                        Ok(lib) => {
                            $(
                                // SAFETY: the symbol's type is the C prototype
                                // from ze_api.h for this name.
                                let $field = unsafe {
                                    *lib.get::<unsafe extern "C" fn($($arg),*) -> ze_result_t>(concat!($sym, "\0").as_bytes())
                                        .map_err(|e| format!("{name}: missing symbol {}: {e}", $sym))?
                                };
                            )*
                            return Ok(Api { path: name.clone(), _lib: lib, $( $field, )* });
                        }
                        Err(e) => last = format!("{e}"),
                    }
                }
                Err(format!("Level Zero library not found: {} ({last})", names.join(", ")))
            }
        }
    };
}

ze_functions!(declare_api);

/// The name of a status code, as in `ze_api.h`.
pub fn result_name(code: ze_result_t) -> &'static str {
    match code {
        ZE_RESULT_SUCCESS => "ZE_RESULT_SUCCESS",
        ZE_RESULT_NOT_READY => "ZE_RESULT_NOT_READY",
        ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY => "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY",
        ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY => "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
        ZE_RESULT_ERROR_UNINITIALIZED => "ZE_RESULT_ERROR_UNINITIALIZED",
        ZE_RESULT_ERROR_UNSUPPORTED_VERSION => "ZE_RESULT_ERROR_UNSUPPORTED_VERSION",
        ZE_RESULT_ERROR_UNSUPPORTED_FEATURE => "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE",
        ZE_RESULT_ERROR_INVALID_ARGUMENT => "ZE_RESULT_ERROR_INVALID_ARGUMENT",
        ZE_RESULT_ERROR_INVALID_NULL_HANDLE => "ZE_RESULT_ERROR_INVALID_NULL_HANDLE",
        ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE => "ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE",
        ZE_RESULT_ERROR_INVALID_NULL_POINTER => "ZE_RESULT_ERROR_INVALID_NULL_POINTER",
        ZE_RESULT_ERROR_INVALID_SIZE => "ZE_RESULT_ERROR_INVALID_SIZE",
        ZE_RESULT_ERROR_UNSUPPORTED_SIZE => "ZE_RESULT_ERROR_UNSUPPORTED_SIZE",
        ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT => "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT",
        ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT => "ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT",
        ZE_RESULT_ERROR_INVALID_ENUMERATION => "ZE_RESULT_ERROR_INVALID_ENUMERATION",
        ZE_RESULT_ERROR_OVERLAPPING_REGIONS => "ZE_RESULT_ERROR_OVERLAPPING_REGIONS",
        ZE_RESULT_ERROR_UNKNOWN => "ZE_RESULT_ERROR_UNKNOWN",
        _ => "unknown ze_result_t",
    }
}
