//! Policies: the decisions that make PyTorch's allocators and expanse
//! differ, as values chosen when the allocator is built.
//!
//! The block and segment machinery (`allocator/`) is one; it asks its
//! [`Policy`] which segments to grow, which pages to create, whether to
//! move pages or lend blocks across streams and which rules apply to
//! expandable blocks. Three named policies:
//!
//! | | segments | pages | moving | lending | oversize/GC rules on expandable blocks |
//! |---|---|---|---|---|---|
//! | [`Policy::pytorch_native`] | classic | - | never | never | yes |
//! | [`Policy::pytorch_expandable`] | expandable | uniform 2/20 MiB | never | never | yes |
//! | [`Policy::expanse`] | expandable | sized to the growth, 2..40 MiB, by the budget | within the budget (optionally not the working set) | across streams | no |
//!
//! expanse's policy also lets a small request that finds no small-pool
//! block take a free large-pool block before the small pool grows
//! (`small_from_large`; PyTorch's policies never do), and grows a segment
//! where the fewest new bytes must be mapped, not at the lowest unmapped
//! stretch with room (`grow_fewest`; PyTorch's policies take the lowest);
//! when it moves pages, whole free blocks give theirs first
//! (`move_whole_first`, [`DonorOrder`]); and, when asked
//! (`move_above_peak_only`, off by default), it moves pages only for the
//! bytes a growth takes above the device's reserved high-water mark
//! ([`MovePolicy::movable_bytes`]).
//!
//! A new rule is a new variant or field here with its decision as a
//! method; the mechanism calls the method and never asks which mode it is
//! in.
//!
//! The page rules are in `pages.rs`, the moving rules and the driver
//! budget they share in `moving.rs`.
#![forbid(unsafe_code)]

mod moving;
mod pages;

pub use moving::{DonorOrder, DriverBudget, MovePolicy, FLOOR_MULTIPLE, MOVE_WHOLE_FIRST, REUSE_WINDOW};
pub use pages::{DeviceMemory, PagePolicy, FREE_SHARE, OVERSHOOT_SHARE, TOTAL_SHARE};

use crate::block::PoolKind;
use crate::config::Config;
use crate::cost::DriverCosts;
use crate::size_class::{MIN_BLOCK_SIZE, SMALL_SIZE};

/// Every decision of one allocator that is a matter of policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// Which segments grow the cache.
    pub segments: SegmentPolicy,
    /// Which pages an expandable segment maps when it grows.
    pub pages: PagePolicy,
    /// Whether growth takes wholly free pages from elsewhere first.
    pub moving: MovePolicy,
    /// Whether a stream may take another stream's free block.
    pub lending: LendPolicy,
    /// Whether PyTorch's oversize rules (a small request never takes a
    /// block of at least `max_split_size`, a large one only a block less
    /// than `max_non_split_rounding` bigger) apply to expandable blocks.
    pub oversize_rules_on_expandable: bool,
    /// Whether a small request that finds no small-pool block takes a free
    /// large-pool block before the small pool grows (`small_from_large`).
    pub small_from_large: bool,
    /// Which unmapped stretch of a segment a growth maps.
    pub growth_site: GrowthSite,
    /// What garbage collection considers.
    pub release: ReleasePolicy,
}

/// Which unmapped stretch of an expandable segment a growth maps, among
/// those that, with the free blocks around them, can hold the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrowthSite {
    /// The lowest address (PyTorch's: its first candidate in address
    /// order).
    Lowest,
    /// The one that maps the fewest new bytes, the free mapped blocks
    /// around it covering the rest (ties: the lowest address), as best
    /// fit picks the smallest free block (`grow_fewest`).
    FewestNewBytes,
}

impl GrowthSite {
    /// The score of a candidate stretch that would map `new_bytes` (lower
    /// is better; 0 cannot be beaten, so the search in address order stops
    /// there).
    pub fn score(self, new_bytes: u64) -> u64 {
        match self {
            GrowthSite::Lowest => 0,
            GrowthSite::FewestNewBytes => new_bytes,
        }
    }
}

/// Whether growth maps the stretch that needs the fewest new bytes
/// (`grow_fewest`) by default. On since the twenty-fourth round
/// (`docs/policy-study.md`): registered before the twenty-first blind
/// batch was recorded, it won 7 of its 8 traces as the former default did,
/// at a geometric mean of 1.0825 against 1.0937 (driver at most 1.50x
/// PyTorch expandable's), and stayed ahead over all 153 held-out traces
/// (1.0542 and 120 wins against 1.0583 and 118).
pub const GROW_FEWEST: bool = true;

/// Which segments grow the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentPolicy {
    /// One device allocation per segment (PyTorch's native allocator).
    Classic,
    /// One growing reservation per stream and pool, where the device
    /// supports virtual memory (classic segments otherwise).
    Expandable,
}

/// Whether streams share one expandable segment per pool
/// (`share_segments`; see [`LendPolicy::SharedSegments`]). On since the
/// fifteenth round (`docs/policy-study.md`): of the real traces it
/// changes, all multi-stream, eight were better and one 0.3% worse, no win
/// or loss changed, and the held-out mean went from 1.0674 to 1.0587; it
/// costs more cross-stream event waits (1.1-6x on those replays).
pub const SHARE_SEGMENTS: bool = true;

/// Whether a small request that finds no free small-pool block takes a free
/// large-pool block before the small pool grows (`small_from_large`). On
/// since the twentieth round (`docs/policy-study.md`): registered before
/// the eighteenth blind batch was recorded, it won 8 of its 8 traces
/// against the former default's 5 (geometric mean 1.0477 against 1.0560),
/// at a lower driver estimate; on the 133 traces seen before, 101 wins
/// against 97 with means within 0.2%.
pub const SMALL_FROM_LARGE: bool = true;

/// Whether a stream with no fitting free block may take another stream's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LendPolicy {
    /// Each stream uses only its own blocks (PyTorch).
    Never,
    /// Free expandable blocks are lent across streams, ordered by an event
    /// wait.
    AcrossStreams,
    /// As `AcrossStreams`, and growth for any stream maps pages into one
    /// segment per pool: the lowest stream's that has one. The grown block
    /// belongs to that segment's stream and is lent to the one asking, so
    /// a stream's freed memory merges with the free memory around it and
    /// serves any stream, the reuse ordered by the same event waits as any
    /// lent block (cudaMallocAsync shares its pool the same way).
    SharedSegments,
}

/// What garbage collection considers, and when idle cached memory goes
/// back to the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReleasePolicy {
    /// Whether free expandable blocks count in the average age that decides
    /// which classic segments are old enough to free (PyTorch: yes; they
    /// are never freed by it either way).
    pub gc_ages_include_expandable: bool,
    /// Cached bytes (reserved minus allocated) kept before wholly free
    /// pages of expandable segments are released, at `free` and at
    /// `malloc` entry, once their streams are synchronized
    /// (`release_threshold_mb`). `None`: never (every mode's default).
    pub threshold: Option<u64>,
}

impl ReleasePolicy {
    /// Bytes to release now, given `reserved` and `allocated` bytes: the
    /// cached bytes above the threshold (0 when the rule is off).
    pub fn excess(&self, reserved: u64, allocated: u64) -> u64 {
        match self.threshold {
            Some(t) => reserved.saturating_sub(allocated).saturating_sub(t),
            None => 0,
        }
    }
}

impl Policy {
    /// PyTorch's native caching allocator: classic segments and its rules.
    pub fn pytorch_native(config: &Config) -> Self {
        Policy { segments: SegmentPolicy::Classic, ..Self::pytorch_expandable(config) }
    }

    /// PyTorch's `expandable_segments:True`, decision for decision: uniform
    /// pages, no moving, no lending.
    pub fn pytorch_expandable(config: &Config) -> Self {
        Policy {
            segments: SegmentPolicy::Expandable,
            pages: PagePolicy::Uniform { small: config.small_page_size, large: config.large_page_size },
            moving: MovePolicy::Never,
            lending: LendPolicy::Never,
            oversize_rules_on_expandable: true,
            small_from_large: false,
            growth_site: GrowthSite::Lowest,
            release: ReleasePolicy { gc_ages_include_expandable: true, threshold: config.release_threshold },
        }
    }

    /// expanse's default: pages sized to the growth and moved within the
    /// driver budget, blocks lent across streams, expandable blocks exempt
    /// from the oversize and GC rules.
    pub fn expanse(config: &Config) -> Self {
        let budget = DriverBudget {
            multiple: config.move_budget,
            floor_multiple: config.move_budget.max(FLOOR_MULTIPLE),
            reference_small_page: config.small_page_size,
            reference_large_page: config.large_page_size,
            costs: DriverCosts::H200,
        };
        Policy {
            segments: SegmentPolicy::Expandable,
            pages: PagePolicy::GrowthSized {
                small: config.small_page_size,
                min_grow: config.min_grow_size,
                max_page: config.max_page_size,
                budget,
                free_share: FREE_SHARE,
                total_share: TOTAL_SHARE,
                overshoot_share: config.overshoot_share,
            },
            moving: MovePolicy::WithinBudget {
                budget,
                reuse_window: config.move_reuse_window,
                donors: if config.move_whole_first { DonorOrder::WholeFirst } else { DonorOrder::HighestOffset },
                above_peak_only: config.move_above_peak_only,
            },
            lending: match (config.lend_across_streams, config.share_segments) {
                (false, _) => LendPolicy::Never,
                (true, false) => LendPolicy::AcrossStreams,
                (true, true) => LendPolicy::SharedSegments,
            },
            oversize_rules_on_expandable: false,
            small_from_large: config.small_from_large,
            growth_site: if config.grow_fewest { GrowthSite::FewestNewBytes } else { GrowthSite::Lowest },
            release: ReleasePolicy { gc_ages_include_expandable: false, threshold: config.release_threshold },
        }
    }

    /// The policy a configuration asks for: classic segments when
    /// `expandable_segments` is off (expanse changes nothing there), PyTorch's
    /// expandable segments under `pytorch_compat`, expanse's otherwise.
    pub fn from_config(config: &Config) -> Self {
        if !config.expandable_segments {
            Self::pytorch_native(config)
        } else if config.pytorch_compat {
            Self::pytorch_expandable(config)
        } else {
            Self::expanse(config)
        }
    }

    /// Whether expandable segments are asked for.
    pub fn expandable(&self) -> bool {
        self.segments == SegmentPolicy::Expandable
    }

    /// Whether the oversize rules apply to a block (`expandable`: whether
    /// it lives in an expandable segment).
    pub fn oversize_rules_apply(&self, expandable: bool) -> bool {
        !expandable || self.oversize_rules_on_expandable
    }

    /// Whether a free block of `block_size` bytes serving a request of
    /// `size` bytes is split, leaving the rest cached (PyTorch's rule).
    pub fn should_split(&self, pool: PoolKind, block_size: u64, size: u64, max_split_size: u64) -> bool {
        let remaining = block_size - size;
        if pool == PoolKind::Small || self.expandable() {
            remaining >= MIN_BLOCK_SIZE
        } else {
            size < max_split_size && remaining > SMALL_SIZE
        }
    }
}

impl LendPolicy {
    /// Whether blocks are lent across streams.
    pub fn lends(&self) -> bool {
        *self != LendPolicy::Never
    }

    /// Whether every stream grows one shared segment per pool.
    pub fn shares_segments(&self) -> bool {
        *self == LendPolicy::SharedSegments
    }
}

#[cfg(test)]
mod tests;
