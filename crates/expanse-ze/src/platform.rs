//! The loaded library, its driver, its GPUs and the one context they
//! share. A missing loader, no driver or no device is an `Unsupported`
//! error that names what is missing, never a panic.

use std::sync::Arc;

use expanse_device::{DeviceError, Result};

use crate::sys::{self, ze_context_handle_t, ze_device_handle_t, Api, ZE_DEVICE_TYPE_GPU};
use crate::{result, ZeDevice};

/// Driver, devices and context. Handles are kept as addresses: Level Zero
/// handles may be used from any thread.
pub struct Platform {
    api: Api,
    devices: Vec<usize>,
    ctx: usize,
}

impl std::fmt::Debug for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Platform").field("library", &self.api.path).field("devices", &self.devices.len()).finish()
    }
}

fn unsupported(what: String) -> DeviceError {
    DeviceError::Unsupported { what }
}

impl Platform {
    /// Load the library, initialise it, pick the first driver with GPUs and
    /// create one context over all of them.
    pub fn open() -> Result<Arc<Platform>> {
        let api = Api::load().map_err(unsupported)?;
        if let Err(e) = result::init(&api) {
            let why = match e {
                DeviceError::Driver { code, .. } => format!(
                    "{}: zeInit failed with {} ({code:#x}): no Level Zero driver loaded \
                     (install Intel's GPU driver, or name one in ZE_ENABLE_ALT_DRIVERS)",
                    api.path,
                    sys::result_name(code as u32)
                ),
                other => format!("{}: zeInit failed: {other}", api.path),
            };
            return Err(unsupported(why));
        }
        let drivers = result::drivers(&api)?;
        if drivers.is_empty() {
            return Err(unsupported(format!("{}: no Level Zero driver", api.path)));
        }
        let mut chosen = None;
        for d in drivers {
            // SAFETY: `d` was just returned by zeDriverGet.
            let devs = unsafe { result::devices(&api, d)? };
            let mut gpus = Vec::new();
            for dev in devs {
                // SAFETY: `dev` was just returned by zeDeviceGet.
                if unsafe { result::device_properties(&api, dev)? }.0 == ZE_DEVICE_TYPE_GPU {
                    gpus.push(dev);
                }
            }
            if !gpus.is_empty() {
                chosen = Some((d, gpus));
                break;
            }
        }
        let Some((driver, mut gpus)) = chosen else {
            return Err(unsupported(format!("{}: Level Zero driver found but no GPU device", api.path)));
        };
        // SAFETY: the driver and devices were just enumerated.
        let ctx = unsafe { result::context_create(&api, driver, &mut gpus)? };
        Ok(Arc::new(Platform { devices: gpus.into_iter().map(|d| d as usize).collect(), ctx: ctx as usize, api }))
    }

    /// The loaded functions.
    pub fn api(&self) -> &Api {
        &self.api
    }

    /// The shared context (live while `self` lives).
    pub fn context(&self) -> ze_context_handle_t {
        self.ctx as ze_context_handle_t
    }

    /// The handle of GPU `ordinal` (live while `self` lives).
    pub fn device(&self, ordinal: u32) -> Result<ze_device_handle_t> {
        self.devices.get(ordinal as usize).map(|d| *d as ze_device_handle_t).ok_or_else(|| {
            DeviceError::misuse("ze device", u64::from(ordinal), "no Level Zero device with this ordinal")
        })
    }

    /// Number of GPUs.
    pub fn device_count(&self) -> u32 {
        self.devices.len() as u32
    }

    /// The library the functions came from.
    pub fn library(&self) -> &str {
        &self.api.path
    }
}

impl Drop for Platform {
    fn drop(&mut self) {
        // SAFETY: every device (and so every object made in the context)
        // holds an `Arc` to the platform, so none is left.
        if let Err(e) = unsafe { result::context_destroy(&self.api, self.context()) } {
            eprintln!("expanse-ze: zeContextDestroy failed: {e}");
        }
    }
}

/// Open every GPU of the first Level Zero driver that has one.
pub fn open_all() -> Result<Vec<Arc<ZeDevice>>> {
    let platform = Platform::open()?;
    (0..platform.device_count()).map(|i| ZeDevice::open(Arc::clone(&platform), i).map(Arc::new)).collect()
}

/// Whether the backend is usable here: `Ok(description)` or `Err(why not)`.
pub fn probe() -> std::result::Result<String, String> {
    use expanse_device::Device;
    match open_all() {
        Ok(devs) => {
            let d = &devs[0];
            Ok(format!(
                "{} device(s) via {}; device 0: {}, {} bytes, page {} bytes",
                devs.len(),
                d.platform().library(),
                d.device_name(),
                d.total_memory(),
                d.granularity()
            ))
        }
        Err(DeviceError::Unsupported { what }) => Err(what),
        Err(e) => Err(format!("Level Zero initialisation failed: {e}")),
    }
}
