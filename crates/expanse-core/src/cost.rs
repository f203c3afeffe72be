//! The driver cost model: what each page operation costs the driver, the
//! only place these figures are written.
//!
//! The figures are the reference's measurements on an H200 (µs per call):
//! create 10.4, map 0.7, set access 26 per page per device, unmap 17,
//! release 17. They turn [`PageOps`] counts into an estimate of driver
//! time, and they price the driver-time budget of expanse's policy
//! ([`crate::policy`]).
#![forbid(unsafe_code)]

use crate::stats::PageOps;

/// Driver time of each page operation, in microseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DriverCosts {
    /// Creating one physical page.
    pub create_us: f64,
    /// Mapping one page.
    pub map_us: f64,
    /// Granting one device access to one page.
    pub set_access_us: f64,
    /// Unmapping one page.
    pub unmap_us: f64,
    /// Releasing one physical page.
    pub release_us: f64,
}

impl DriverCosts {
    /// The reference's H200 figures.
    pub const H200: DriverCosts =
        DriverCosts { create_us: 10.4, map_us: 0.7, set_access_us: 26.0, unmap_us: 17.0, release_us: 17.0 };

    /// Estimated driver time of `ops`.
    pub fn estimate(&self, ops: &PageOps) -> f64 {
        self.create_us * ops.created as f64
            + self.map_us * ops.mapped as f64
            + self.set_access_us * ops.access_sets as f64
            + self.unmap_us * ops.unmapped as f64
            + self.release_us * ops.released as f64
    }

    /// A new page mapped with access for `devices` devices: create, map,
    /// set access.
    pub fn new_page_us(&self, devices: u64) -> f64 {
        self.create_us + self.map_us + self.set_access_us * devices as f64
    }

    /// A page moved to where a segment grows, with access for `devices`
    /// devices: unmap, map, set access (no create, no release).
    pub fn moved_page_us(&self, devices: u64) -> f64 {
        self.unmap_us + self.map_us + self.set_access_us * devices as f64
    }
}

/// What a budget decision needs to know about the allocator's driver use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostState {
    /// Highest bytes ever reserved by the small pool.
    pub high_water_small: u64,
    /// Highest bytes ever reserved by the large pool.
    pub high_water_large: u64,
    /// Highest bytes ever allocated from the small pool.
    pub allocated_small: u64,
    /// Highest bytes ever allocated from the large pool.
    pub allocated_large: u64,
    /// Devices given access to every page (this one plus its peers).
    pub devices: u64,
    /// Estimated driver time spent so far (µs).
    pub spent_us: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-computed case: 3 creates, 4 maps, 4 access grants, 1 unmap,
    /// 2 releases = 31.2 + 2.8 + 104 + 17 + 34 = 189 µs.
    #[test]
    fn estimate_of_hand_counted_operations() {
        let ops = PageOps { created: 3, mapped: 4, access_sets: 4, unmapped: 1, released: 2, ..PageOps::default() };
        assert!((DriverCosts::H200.estimate(&ops) - 189.0).abs() < 1e-9);
        assert!((DriverCosts::H200.new_page_us(2) - 63.1).abs() < 1e-9);
        assert!((DriverCosts::H200.moved_page_us(1) - 43.7).abs() < 1e-9);
    }
}
