//! Trace stream indices mapped to device streams.
//!
//! A trace names streams by index (0 is the default stream). A replay must
//! not pass those numbers to the device as stream handles: on CUDA, 1 and 2
//! would be the legacy and per-thread default streams and anything larger a
//! bogus pointer. [`TraceStreams`] gives index 0 the device's default
//! stream and every other index a stream the device creates at first use,
//! destroyed when the map is released or dropped.

use std::collections::HashMap;
use std::sync::Arc;

use crate::{Device, DeviceError, Result, StreamId};

/// The device stream of each trace stream index.
pub struct TraceStreams {
    device: Arc<dyn Device>,
    streams: HashMap<u64, StreamId>,
}

impl std::fmt::Debug for TraceStreams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceStreams").field("device", &self.device.name()).field("streams", &self.streams).finish()
    }
}

impl TraceStreams {
    /// An empty map onto `device`'s streams.
    pub fn new(device: Arc<dyn Device>) -> Self {
        TraceStreams { device, streams: HashMap::new() }
    }

    /// The device stream of trace index `index`, created at first use.
    pub fn get(&mut self, index: u64) -> Result<StreamId> {
        if index == 0 {
            return Ok(StreamId::DEFAULT);
        }
        if let Some(s) = self.streams.get(&index) {
            return Ok(*s);
        }
        let s = self.device.create_stream()?;
        self.streams.insert(index, s);
        Ok(s)
    }

    /// Number of streams created so far (the default stream not counted).
    pub fn created(&self) -> usize {
        self.streams.len()
    }

    /// Destroy every created stream; returns the first error, after trying
    /// them all.
    pub fn release(&mut self) -> Result<()> {
        let mut first: Option<DeviceError> = None;
        for (_, s) in self.streams.drain() {
            if let Err(e) = self.device.destroy_stream(s) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for TraceStreams {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            eprintln!("expanse: destroying replay streams on {}: {e}", self.device.name());
        }
    }
}
