//! The one place that turns a backend name into devices, and the one
//! configuration loader, shared by the `expanse` command and the C ABI.
//!
//! - [`BackendKind`]: every backend, with [`BackendKind::all`] for listings.
//!   A new backend is one more variant: its name, description, `probe`
//!   and `open` arms below.
//! - [`open`]: the devices of a backend, as `Arc<dyn Device>`, plus what
//!   the C ABI needs beyond the trait (adopting the caller's streams, peer
//!   access on CUDA and Level Zero).
//! - [`probe`]: whether a backend is usable on this machine, and why not
//!   (for `expanse backends`).
//! - [`load_config`]: the allocator configuration. The chain, first match
//!   wins: an explicit string (`--conf`), then `EXPANSE_ALLOC_CONF`, then
//!   `PYTORCH_ALLOC_CONF`, then `PYTORCH_CUDA_ALLOC_CONF`, else expanse's
//!   defaults. Both the command and `libexpanse.so` use exactly this chain.
//! - [`kind_from_env`]: the C ABI's choice: `EXPANSE_BACKEND`, else `cuda`
//!   when a CUDA device is present, else `host`.

use std::fmt;
use std::sync::Arc;

use expanse_core::config::ENV_VARS;
use expanse_core::Config;
use expanse_device::{Device, DeviceError, StreamId};

/// Environment variable naming the C ABI's backend.
pub const BACKEND_VAR: &str = "EXPANSE_BACKEND";
/// Environment variable with the host backend's capacity in bytes (C ABI).
pub const HOST_MEMORY_VAR: &str = "EXPANSE_HOST_MEMORY";

/// Why a backend or a configuration could not be set up.
#[derive(Debug)]
pub enum BackendError {
    /// No backend has this name. Recover by choosing one of `available`.
    UnknownBackend {
        /// The name asked for.
        name: String,
    },
    /// The backend exists but could not open its devices (no driver, no
    /// GPU, bad capacity). Recover by choosing another backend.
    Open {
        /// The backend.
        kind: BackendKind,
        /// What the device layer said.
        error: DeviceError,
    },
    /// A configuration string did not parse. `source` names where it came
    /// from (`--conf` or the environment variable).
    Config {
        /// `--conf` or the variable's name.
        source: String,
        /// The parser's message.
        message: String,
    },
    /// An environment setting other than the configuration is malformed.
    Env {
        /// The variable.
        var: &'static str,
        /// What is wrong with it.
        message: String,
    },
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendError::UnknownBackend { name } => {
                let names: Vec<_> = BackendKind::all().iter().map(|k| k.name()).collect();
                write!(f, "unknown backend '{name}' (available: {})", names.join(", "))
            }
            BackendError::Open { kind, error } => write!(f, "{} backend: {error}", kind.name()),
            BackendError::Config { source, message } => write!(f, "{source}: {message}"),
            BackendError::Env { var, message } => write!(f, "{var}: {message}"),
        }
    }
}

impl std::error::Error for BackendError {}

/// Every backend expanse can run on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// Real Linux virtual memory on the host (no GPU needed).
    Host,
    /// The strict mock device: addresses only, no memory behind them.
    Sim,
    /// NVIDIA GPUs through the CUDA driver's virtual memory API.
    Cuda,
    /// Intel GPUs (XPU) through Level Zero's virtual memory API.
    Ze,
}

impl BackendKind {
    /// Every backend, in the order listings show them.
    pub const fn all() -> &'static [BackendKind] {
        &[BackendKind::Host, BackendKind::Sim, BackendKind::Cuda, BackendKind::Ze]
    }

    /// The name users type (`--backend`, `EXPANSE_BACKEND`).
    pub const fn name(self) -> &'static str {
        match self {
            BackendKind::Host => "host",
            BackendKind::Sim => "sim",
            BackendKind::Cuda => "cuda",
            BackendKind::Ze => "ze",
        }
    }

    /// One line for `expanse help` and listings.
    pub const fn describe(self) -> &'static str {
        match self {
            BackendKind::Host => "real Linux virtual memory (capacity from the options)",
            BackendKind::Sim => "the strict mock device (addresses only, no memory, strict streams)",
            BackendKind::Cuda => "every GPU through the CUDA driver (their own capacity)",
            BackendKind::Ze => {
                "every Intel GPU through Level Zero: EXPANSE_ZE_LIBRARY, else libze_loader.so.1 (their own capacity)"
            }
        }
    }

    /// Whether the memory is real, i.e. usable through pointers by the
    /// caller of the C ABI.
    pub const fn real_memory(self) -> bool {
        !matches!(self, BackendKind::Sim)
    }

    /// The backend called `name`.
    pub fn from_name(name: &str) -> Result<Self, BackendError> {
        Self::all()
            .iter()
            .copied()
            .find(|k| k.name() == name)
            .ok_or_else(|| BackendError::UnknownBackend { name: name.to_string() })
    }
}

/// What a backend is opened with (ignored where the hardware decides).
#[derive(Clone, Debug)]
pub struct Options {
    /// Capacity of host and sim devices, in bytes.
    pub capacity: u64,
    /// Page granularity of host and sim devices, in bytes.
    pub granularity: u64,
}

impl Default for Options {
    /// 16 GiB with 2 MiB pages (the host backend's defaults).
    fn default() -> Self {
        Options { capacity: expanse_host::DEFAULT_CAPACITY, granularity: expanse_host::DEFAULT_GRANULARITY }
    }
}

/// An opened backend: its devices, by ordinal.
pub struct Backend {
    kind: BackendKind,
    devices: Vec<Arc<dyn Device>>,
    cuda: Vec<Arc<expanse_cuda::CudaDevice>>,
    ze: Vec<Arc<expanse_ze::ZeDevice>>,
}

impl fmt::Debug for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Backend").field("kind", &self.kind).field("devices", &self.devices.len()).finish()
    }
}

impl Backend {
    /// Which backend this is.
    pub fn kind(&self) -> BackendKind {
        self.kind
    }

    /// The devices, index = ordinal.
    pub fn devices(&self) -> &[Arc<dyn Device>] {
        &self.devices
    }

    /// Take the devices.
    pub fn into_devices(self) -> Vec<Arc<dyn Device>> {
        self.devices
    }

    /// The id of the caller's stream `raw` on `device` (a `cudaStream_t`
    /// from PyTorch, a `sycl::queue*` on Level Zero; 0 is the default
    /// stream). On CUDA and Level Zero the stream becomes known to the
    /// device (Level Zero gives it a command list of its own); host and sim
    /// streams are opaque ids.
    ///
    /// # Safety
    /// On CUDA, `raw` must be 0 or a live stream of `device`'s primary
    /// context that stays live while the allocator may order work on it.
    #[inline]
    pub unsafe fn adopt_stream(&self, device: u32, raw: u64) -> Result<StreamId, DeviceError> {
        match self.cuda.get(device as usize) {
            // SAFETY: the caller's guarantee, passed on.
            Some(d) => unsafe { d.adopt_stream(raw as expanse_cuda::sys::CUstream) },
            None if self.kind == BackendKind::Cuda => Err(DeviceError::misuse("adopt_stream", raw, "no such device")),
            None if self.kind == BackendKind::Ze => match self.ze.get(device as usize) {
                Some(d) => d.adopt_stream(raw),
                None => Err(DeviceError::misuse("adopt_stream", raw, "no such device")),
            },
            None => Ok(StreamId(raw)),
        }
    }

    /// Let `device` reach `peer`'s memory at the driver level (CUDA's
    /// `cuCtxEnablePeerAccess`; on Level Zero, `peer`'s classic allocations
    /// made resident on `device`, expandable segments getting theirs from
    /// the allocator; nothing to do elsewhere).
    pub fn enable_peer_access(&self, device: u32, peer: u32) -> Result<(), DeviceError> {
        if self.kind == BackendKind::Ze {
            return match (self.ze.get(device as usize), self.ze.get(peer as usize)) {
                (Some(_), Some(owner)) => owner.enable_peer_access(device),
                _ => Err(DeviceError::misuse("enable_peer_access", u64::from(peer), "no such device")),
            };
        }
        if self.kind != BackendKind::Cuda {
            return Ok(());
        }
        match (self.cuda.get(device as usize), self.cuda.get(peer as usize)) {
            (Some(a), Some(b)) => a.enable_peer_access(b),
            _ => Err(DeviceError::misuse("enable_peer_access", u64::from(peer), "no such device")),
        }
    }
}

/// Open every device of backend `kind`: one host or sim device of
/// `options.capacity`, or every GPU.
pub fn open(kind: BackendKind, options: &Options) -> Result<Backend, BackendError> {
    let err = |error| BackendError::Open { kind, error };
    let (mut cuda, mut ze) = (Vec::new(), Vec::new());
    let devices: Vec<Arc<dyn Device>> = match kind {
        BackendKind::Host => {
            let d = expanse_host::HostDevice::with_capacity(options.capacity, options.granularity).map_err(err)?;
            vec![Arc::new(d)]
        }
        BackendKind::Sim => {
            // Strict streams: a caller passing anything but streams the
            // device created (e.g. raw trace indices) gets a misuse error.
            // Classic segments go where the CUDA driver puts them, as on
            // the host backend, so that replays agree with the GPU's.
            let d = expanse_mock::MockDevice::new(options.capacity, options.granularity)
                .with_strict_streams()
                .with_cuda_placement()
                .with_address_space(expanse_host::ADDRESS_SPACE);
            vec![Arc::new(d)]
        }
        BackendKind::Cuda => {
            cuda = expanse_cuda::open_all().map_err(err)?;
            cuda.iter().map(|d| Arc::clone(d) as Arc<dyn Device>).collect()
        }
        BackendKind::Ze => {
            ze = expanse_ze::open_all().map_err(err)?;
            ze.iter().map(|d| Arc::clone(d) as Arc<dyn Device>).collect()
        }
    };
    Ok(Backend { kind, devices, cuda, ze })
}

/// Whether backend `kind` is usable on this machine: a line about what it
/// found, or why not (library missing, no driver, no device, no memory).
pub fn probe(kind: BackendKind) -> Result<String, String> {
    match kind {
        BackendKind::Host => expanse_host::HostDevice::with_capacity(1 << 30, expanse_host::DEFAULT_GRANULARITY)
            .map(|_| "Linux virtual memory (mmap + memfd)".to_string())
            .map_err(|e| e.to_string()),
        BackendKind::Sim => Ok("always available (no memory behind the addresses)".to_string()),
        BackendKind::Cuda => expanse_cuda::open_all()
            .map(|devs| {
                let d = &devs[0];
                format!("{} GPU(s); device 0: {} bytes, page {} bytes", devs.len(), d.total_memory(), d.granularity())
            })
            .map_err(|e| e.to_string()),
        BackendKind::Ze => expanse_ze::probe(),
    }
}

/// The backend named by `EXPANSE_BACKEND`, else `cuda` when a CUDA device
/// is present, else `host`.
pub fn kind_from_env() -> Result<BackendKind, BackendError> {
    match std::env::var(BACKEND_VAR) {
        Ok(name) if !name.is_empty() => BackendKind::from_name(&name),
        _ if expanse_cuda::available() => Ok(BackendKind::Cuda),
        _ => Ok(BackendKind::Host),
    }
}

/// Options from the environment: `EXPANSE_HOST_MEMORY` bytes of capacity,
/// else the defaults.
pub fn options_from_env() -> Result<Options, BackendError> {
    let mut o = Options::default();
    if let Ok(s) = std::env::var(HOST_MEMORY_VAR) {
        o.capacity = s.trim().parse::<u64>().map_err(|_| BackendError::Env {
            var: HOST_MEMORY_VAR,
            message: format!("'{s}' is not a number of bytes"),
        })?;
    }
    Ok(o)
}

/// The allocator configuration: `explicit` (e.g. `--conf`) if given, else
/// the first of `EXPANSE_ALLOC_CONF`, `PYTORCH_ALLOC_CONF`,
/// `PYTORCH_CUDA_ALLOC_CONF` that is set, else the defaults. Errors name
/// where the bad string came from.
pub fn load_config(explicit: Option<&str>) -> Result<Config, BackendError> {
    load_config_with(explicit, |var| std::env::var(var).ok())
}

/// [`load_config`] with the environment given as a lookup (for tests).
pub fn load_config_with(explicit: Option<&str>, env: impl Fn(&str) -> Option<String>) -> Result<Config, BackendError> {
    let found = match explicit {
        Some(s) => Some(("--conf".to_string(), s.to_string())),
        None => ENV_VARS.iter().find_map(|var| env(var).map(|v| (var.to_string(), v))),
    };
    match found {
        Some((source, s)) => Config::parse(&s).map_err(|e| BackendError::Config { source, message: e.to_string() }),
        None => Ok(Config::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for k in BackendKind::all() {
            assert_eq!(BackendKind::from_name(k.name()).unwrap(), *k);
        }
        let e = BackendKind::from_name("opencl").unwrap_err().to_string();
        assert_eq!(e, "unknown backend 'opencl' (available: host, sim, cuda, ze)");
    }

    #[test]
    fn config_chain_is_explicit_then_expanse_then_pytorch() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |var: &str| pairs.iter().find(|(k, _)| *k == var).map(|(_, v)| v.to_string())
        };
        let all = env(&[
            ("EXPANSE_ALLOC_CONF", "max_split_size_mb:64"),
            ("PYTORCH_ALLOC_CONF", "max_split_size_mb:128"),
            ("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:256"),
        ]);
        let mib = |c: Config| c.to_conf_string();
        assert!(mib(load_config_with(Some("max_split_size_mb:32"), all).unwrap()).contains("max_split_size_mb:32"));
        assert!(mib(load_config_with(None, all).unwrap()).contains("max_split_size_mb:64"));
        let pytorch = env(&[("PYTORCH_ALLOC_CONF", "max_split_size_mb:128"), ("PYTORCH_CUDA_ALLOC_CONF", "x:1")]);
        assert!(mib(load_config_with(None, pytorch).unwrap()).contains("max_split_size_mb:128"));
        let legacy = env(&[("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:256")]);
        assert!(mib(load_config_with(None, legacy).unwrap()).contains("max_split_size_mb:256"));
        assert_eq!(mib(load_config_with(None, env(&[])).unwrap()), mib(Config::default()));
        let bad = load_config_with(None, env(&[("PYTORCH_ALLOC_CONF", "no_such_key:1")])).unwrap_err();
        assert!(bad.to_string().starts_with("PYTORCH_ALLOC_CONF: "), "{bad}");
    }

    #[test]
    fn host_and_sim_open_one_device_of_the_asked_capacity() {
        let o = Options { capacity: 64 << 20, granularity: 2 << 20 };
        for kind in [BackendKind::Host, BackendKind::Sim] {
            let b = open(kind, &o).unwrap();
            assert_eq!(b.devices().len(), 1);
            assert_eq!(b.devices()[0].total_memory(), 64 << 20);
            // SAFETY: host and sim streams are opaque ids.
            assert_eq!(unsafe { b.adopt_stream(0, 77) }.unwrap(), StreamId(77));
        }
        let sim = open(BackendKind::Sim, &o).unwrap();
        let d = &sim.devices()[0];
        assert!(d.synchronize_stream(StreamId(1)).is_err(), "sim refuses streams it did not create");
        let s = d.create_stream().unwrap();
        d.synchronize_stream(s).unwrap();
        d.destroy_stream(s).unwrap();
        let bad = open(BackendKind::Host, &Options { capacity: 1, granularity: 2 << 20 }).unwrap_err();
        assert!(bad.to_string().starts_with("host backend: "), "{bad}");
    }
}
