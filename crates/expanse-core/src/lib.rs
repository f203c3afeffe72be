//! expanse's allocator core: a device caching allocator with expandable
//! segments, on integer addresses.
//!
//! - [`Config`]: the configuration (PyTorch's `key:value` string syntax).
//! - [`DeviceAllocator`]: one device's allocator (pools, blocks, segments).
//! - [`ExpandableSegment`]: a reservation that grows by mapping pages.
//! - [`CachingAllocator`]: thread-safe, one [`DeviceAllocator`] per device.
//! - [`Policy`]: what differs between PyTorch's allocators and expanse,
//!   chosen when the allocator is built; [`DriverCosts`]: the driver cost
//!   model its budget uses.
//! - [`DeviceStats`]: statistics with PyTorch's keys.
//! - [`History`] and [`Snapshot`]: the allocation history (off by
//!   default) and snapshots for PyTorch's memory viewer, as a pickle
//!   ([`pickle`]).
//! - `ops` (feature `testing`): random operation sequences and a shadow
//!   model, for property tests and the fuzzer; not in the shipped library.
#![forbid(unsafe_code)]

mod allocator;
mod block;
mod caching;
mod combining;
pub mod config;
pub mod cost;
mod error;
pub mod expandable_segment;
mod free_set;
pub mod history;
#[cfg(feature = "testing")]
pub mod ops;
pub mod pickle;
pub mod policy;
mod pool;
pub mod size_class;
pub mod snapshot;
pub mod stats;

pub use allocator::{DeviceAllocator, OomInfo, OomNotices, OomObserver, PoolId};
pub use block::PoolKind;
pub use caching::{CachingAllocator, DeviceGuard};
pub use config::{Config, ConfigError};
pub use cost::{CostState, DriverCosts};
pub use error::{format_size, AllocError, OomReport};
pub use expandable_segment::{ExpandableSegment, Page, SegmentRange};
pub use expanse_device::{Device, DeviceError, StreamId};
pub use history::{Action, Clock, History, TraceEntry};
pub use policy::Policy;
pub use snapshot::{DeviceSnapshot, Snapshot};
pub use stats::{DeviceStats, PageOps, PoolStats, Stat};
