//! expanse's allocator core: a device caching allocator with expandable
//! segments, on integer addresses.
//!
//! - [`Config`]: the configuration (PyTorch's `key:value` string syntax).
//! - [`DeviceAllocator`]: one device's allocator (pools, blocks, segments).
//! - [`ExpandableSegment`]: a reservation that grows by mapping pages.
//! - [`CachingAllocator`]: thread-safe, one [`DeviceAllocator`] per device.
//! - [`DeviceStats`]: statistics with PyTorch's keys.
#![forbid(unsafe_code)]

mod allocator;
mod block;
mod caching;
pub mod config;
mod error;
pub mod expandable_segment;
pub mod ops;
mod pool;
pub mod size_class;
pub mod stats;

pub use allocator::{DeviceAllocator, OomInfo, OomObserver};
pub use block::PoolKind;
pub use caching::CachingAllocator;
pub use config::{Config, ConfigError};
pub use error::{format_size, AllocError};
pub use expandable_segment::{ExpandableSegment, Page, SegmentRange};
pub use expanse_device::{Device, DeviceError, StreamId};
pub use stats::{DeviceStats, PageOps, Stat};
