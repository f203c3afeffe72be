//! Allocator configuration: a plain struct, parsed from PyTorch's
//! `key:value,key:value` syntax at the edge.

use std::fmt;

/// One MiB.
pub const MIB: u64 = 1 << 20;

/// Number of power-of-two size bands that `roundup_power2_divisions` can
/// set separately: 1 MiB, 2 MiB, ... 32 GiB and above.
pub const ROUNDUP_BANDS: usize = 16;

/// Allocator configuration. `Config::default()` is expanse's default: the
/// classic allocator's PyTorch defaults plus expandable segments with
/// expanse's page moving.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Use expandable segments (one growing segment per stream and pool).
    pub expandable_segments: bool,
    /// Reproduce PyTorch's decisions exactly, turning off every expanse-only
    /// behaviour (page moving, variable-size pages, exempting expandable
    /// blocks from the oversize and garbage-collection rules).
    pub pytorch_compat: bool,
    /// Blocks at least this large are never split (`max_split_size_mb`).
    /// `u64::MAX` (the default) means no limit.
    pub max_split_size: u64,
    /// A request of at least `max_split_size` may take an oversize block
    /// only if the block is smaller than `size + max_non_split_rounding`.
    pub max_non_split_rounding: u64,
    /// Power-of-two rounding divisions per size band (index 0: below 2 MiB,
    /// index k: [2^k, 2^(k+1)) MiB, last: 32 GiB and above). 0 or 1: off.
    pub roundup_power2_divisions: [u64; ROUNDUP_BANDS],
    /// Free cached segments, oldest first, once reserved memory is above
    /// this fraction of the allowed memory. 0 disables. Needs a memory
    /// fraction to take effect, as in PyTorch.
    pub garbage_collection_threshold: f64,
    /// Fraction of device memory this process may reserve, if set.
    pub per_process_memory_fraction: Option<f64>,
    /// Expandable-segment page size of the small pool (PyTorch: 2 MiB).
    pub small_page_size: u64,
    /// Expandable-segment page size of the large pool (PyTorch: 20 MiB).
    pub large_page_size: u64,
    /// expanse mode: smallest physical page created when a large-pool
    /// segment grows while driver time is far below the budget; pages grow
    /// towards `large_page_size` as the budget is used up (bigger pages
    /// mean fewer driver calls, smaller ones less waste).
    pub min_grow_size: u64,
    /// expanse mode: largest physical page created (a growth larger than
    /// this creates several pages, so that freed memory is more often made
    /// of wholly free pages that can be moved).
    pub max_page_size: u64,
    /// expanse mode: pages are moved only while the estimated driver time
    /// stays below this multiple of what PyTorch's uniform pages would cost
    /// for the same high-water marks (0 turns moving off).
    pub move_budget: f64,
    /// expanse mode: a free page whose memory was allocated twice within
    /// the last this many allocations (the working set) is not moved
    /// (0: any free page may move).
    pub move_reuse_window: u64,
    /// expanse mode: a stream with no fitting free block of its own may
    /// take another stream's (ordered by an event wait). `false` keeps
    /// every stream to its own blocks, as PyTorch does.
    pub lend_across_streams: bool,
    /// expanse mode, when blocks are lent: growth for any stream maps pages
    /// into one expandable segment per pool (the lowest stream's that has
    /// one), and every other stream is served from it by lending, so that
    /// memory one stream frees is memory another can take without moving
    /// pages. `false`: one segment per stream and pool, as PyTorch has.
    pub share_segments: bool,
    /// expanse mode: a small request (1 MiB or less) that finds no free
    /// small-pool block, its stream's or lent, takes a free large-pool
    /// block before the small pool grows (cudaMallocAsync has one pool for
    /// every size). `false`: small requests only ever use the small pool,
    /// as in PyTorch.
    pub small_from_large: bool,
    /// expanse mode: a growth maps the unmapped stretch of its segment that
    /// needs the fewest new bytes (the free blocks around it covering the
    /// rest; ties: the lowest address). `false`: the lowest stretch that
    /// can hold the request, as PyTorch does.
    pub grow_fewest: bool,
    /// expanse mode: when pages move, a free block whose wholly free pages
    /// cover all of it gives its pages before the other free blocks of its
    /// pool (taking them leaves no mapped free remnant beside the hole).
    /// `false`: the highest offset in its segment first, whole or not. On by
    /// default since the twenty-seventh round.
    pub move_whole_first: bool,
    /// expanse mode: pages move only for the bytes a growth takes the
    /// device's reserved memory above the most it has ever reserved; the
    /// rest of that growth, and every growth that stays at or below that
    /// mark, gets new pages. Below the mark a move lowers no peak, while it
    /// spends the driver budget and takes free memory that later requests
    /// would reuse. `false` (the default): a growth moves what the budget
    /// allows wherever it is.
    pub move_above_peak_only: bool,
    /// expanse mode: the smallest large-pool page a growth creates is at
    /// most the larger of what the growth needs and 1/`overshoot_share` of
    /// the large pool's highest reserved bytes, so a growth maps little
    /// beyond its need while the workload is small (`overshoot_share`; 0:
    /// no such bound, pages as the driver budget sizes them).
    pub overshoot_share: u64,
    /// Opt-in release of idle cached memory (`release_threshold_mb`, in the
    /// spirit of cudaMallocAsync's release threshold): once reserved minus
    /// allocated bytes exceed this, wholly free pages of expandable segments
    /// are unmapped and released, largest free block first, after
    /// synchronizing the streams that last used them, until the cache is
    /// back at the threshold. `None` (the default): nothing is released
    /// until `empty_cache` or an out-of-memory retry.
    pub release_threshold: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            expandable_segments: true,
            pytorch_compat: false,
            max_split_size: u64::MAX,
            max_non_split_rounding: 20 * MIB,
            roundup_power2_divisions: [0; ROUNDUP_BANDS],
            garbage_collection_threshold: 0.0,
            per_process_memory_fraction: None,
            small_page_size: 2 * MIB,
            large_page_size: 20 * MIB,
            min_grow_size: 2 * MIB,
            max_page_size: 40 * MIB,
            move_budget: 1.75,
            move_reuse_window: crate::policy::REUSE_WINDOW,
            lend_across_streams: true,
            share_segments: crate::policy::SHARE_SEGMENTS,
            small_from_large: crate::policy::SMALL_FROM_LARGE,
            grow_fewest: crate::policy::GROW_FEWEST,
            move_whole_first: crate::policy::MOVE_WHOLE_FIRST,
            move_above_peak_only: false,
            overshoot_share: crate::policy::OVERSHOOT_SHARE,
            release_threshold: None,
        }
    }
}

/// A configuration string that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// The key is not one expanse knows.
    UnknownKey {
        /// The key as written.
        key: String,
    },
    /// The value is not accepted for this key.
    BadValue {
        /// The key.
        key: String,
        /// The value as written.
        value: String,
        /// What the key accepts.
        expected: &'static str,
    },
    /// The string is not `key:value` pairs separated by commas.
    Syntax {
        /// What was wrong and where.
        message: String,
    },
    /// Values that are each valid but cannot work together, or on this
    /// device (a page larger than the device). Recover by changing one.
    Conflict {
        /// What conflicts, with the values.
        message: String,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownKey { key } => {
                write!(f, "unknown allocator config key '{key}' (known: {})", KNOWN_KEYS.join(", "))
            }
            ConfigError::BadValue { key, value, expected } => {
                write!(f, "bad value '{value}' for allocator config key '{key}': expected {expected}")
            }
            ConfigError::Syntax { message } => write!(f, "malformed allocator config: {message}"),
            ConfigError::Conflict { message } => write!(f, "allocator config cannot work: {message}"),
        }
    }
}

impl std::error::Error for ConfigError {}

const KNOWN_KEYS: &[&str] = &[
    "expandable_segments",
    "pytorch_compat",
    "max_split_size_mb",
    "max_non_split_rounding_mb",
    "roundup_power2_divisions",
    "garbage_collection_threshold",
    "per_process_memory_fraction",
    "small_page_size_mb",
    "large_page_size_mb",
    "min_grow_size_mb",
    "max_page_size_mb",
    "move_budget",
    "move_reuse_window",
    "lend_across_streams",
    "share_segments",
    "small_from_large",
    "grow_fewest",
    "move_whole_first",
    "move_above_peak_only",
    "overshoot_share",
    "release_threshold_mb",
    "backend",
    "release_lock_on_cudamalloc",
    "pinned_use_cuda_host_register",
    "pinned_num_register_threads",
    "pinned_use_background_threads",
];

/// Environment variables read by [`Config::from_env`], first match wins.
pub const ENV_VARS: [&str; 3] = ["EXPANSE_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"];

impl Config {
    /// PyTorch's native caching allocator: classic segments, PyTorch's rules.
    pub fn pytorch_native() -> Self {
        Config { expandable_segments: false, pytorch_compat: true, ..Config::default() }
    }

    /// PyTorch's `expandable_segments:True`, decision for decision.
    pub fn pytorch_expandable() -> Self {
        Config { expandable_segments: true, pytorch_compat: true, ..Config::default() }
    }

    /// Parse a PyTorch-style string on top of the defaults.
    pub fn parse(s: &str) -> Result<Self, ConfigError> {
        let mut c = Config::default();
        c.apply(s)?;
        Ok(c)
    }

    /// The configuration from `EXPANSE_ALLOC_CONF`, else
    /// `PYTORCH_ALLOC_CONF`, else `PYTORCH_CUDA_ALLOC_CONF`, else defaults.
    pub fn from_env() -> Result<Self, ConfigError> {
        for var in ENV_VARS {
            if let Ok(v) = std::env::var(var) {
                return Config::parse(&v);
            }
        }
        Ok(Config::default())
    }

    /// Apply a PyTorch-style string to this configuration.
    pub fn apply(&mut self, s: &str) -> Result<(), ConfigError> {
        // All or nothing: a bad key or value leaves `self` unchanged.
        let mut next = self.clone();
        for (key, value) in split_pairs(s)? {
            next.set(&key, &value)?;
        }
        next.check()?;
        *self = next;
        Ok(())
    }

    /// Values that are each valid but contradict each other.
    fn check(&self) -> Result<(), ConfigError> {
        if self.min_grow_size > self.max_page_size {
            return Err(ConfigError::Conflict {
                message: format!(
                    "min_grow_size_mb ({}) is above max_page_size_mb ({}); raise max_page_size_mb too",
                    self.min_grow_size / MIB,
                    self.max_page_size / MIB
                ),
            });
        }
        Ok(())
    }

    /// Whether this configuration can work on a device of `total_memory`
    /// bytes with pages of `granularity` bytes: with expandable segments,
    /// every configured page size must fit in the device and be a multiple
    /// of its granularity (a page that can never be created would make
    /// every allocation of its pool fail).
    pub fn check_device(&self, total_memory: u64, granularity: u64) -> Result<(), ConfigError> {
        if !self.expandable_segments {
            return Ok(());
        }
        let pages = [
            ("small_page_size_mb", self.small_page_size),
            ("large_page_size_mb", self.large_page_size),
            ("min_grow_size_mb", self.min_grow_size),
            ("max_page_size_mb", self.max_page_size),
        ];
        for (key, bytes) in pages {
            if bytes > total_memory {
                return Err(ConfigError::Conflict {
                    message: format!(
                        "{key} ({} MiB) is larger than the device ({} MiB): no such page can be created",
                        bytes / MIB,
                        total_memory / MIB
                    ),
                });
            }
            if granularity > 0 && !bytes.is_multiple_of(granularity) {
                return Err(ConfigError::Conflict {
                    message: format!(
                        "{key} ({} MiB) is not a multiple of the device's page granularity ({granularity} bytes)",
                        bytes / MIB
                    ),
                });
            }
        }
        Ok(())
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let bad =
            |expected: &'static str| ConfigError::BadValue { key: key.to_string(), value: value.to_string(), expected };
        match key {
            "expandable_segments" => self.expandable_segments = parse_bool(value).ok_or_else(|| bad("True or False"))?,
            "pytorch_compat" => self.pytorch_compat = parse_bool(value).ok_or_else(|| bad("True or False"))?,
            "max_split_size_mb" => {
                let mb = parse_in(value, |&mb: &u64| mb > 20).ok_or_else(|| bad("an integer number of MiB greater than 20"))?;
                self.max_split_size = mb.checked_mul(MIB).ok_or_else(|| bad("a number of MiB below 2^44"))?;
            }
            "max_non_split_rounding_mb" => {
                let mb: u64 = value.parse().map_err(|_| bad("an integer number of MiB"))?;
                self.max_non_split_rounding = mb.checked_mul(MIB).ok_or_else(|| bad("a number of MiB below 2^44"))?;
            }
            "roundup_power2_divisions" => {
                self.roundup_power2_divisions = parse_divisions(value).ok_or_else(|| {
                    bad("a power of two, or a list like [64:8,256:4,>:1] of power-of-two MiB bounds and power-of-two (or 0) divisions")
                })?
            }
            "garbage_collection_threshold" => {
                self.garbage_collection_threshold = parse_in(value, |&t: &f64| t > 0.0 && t < 1.0)
                    .ok_or_else(|| bad("a number strictly between 0 and 1"))?;
            }
            "per_process_memory_fraction" => {
                let f = parse_in(value, |f: &f64| (0.0..=1.0).contains(f)).ok_or_else(|| bad("a number between 0 and 1"))?;
                self.per_process_memory_fraction = Some(f);
            }
            "backend" => {
                if value != "native" {
                    return Err(bad("native (expanse is itself the backend)"));
                }
            }
            // Accepted for compatibility with PyTorch strings; they concern
            // host-pinned memory and locking, not this allocator.
            "release_lock_on_cudamalloc" | "pinned_use_cuda_host_register" | "pinned_use_background_threads" => {
                parse_bool(value).ok_or_else(|| bad("True or False"))?;
            }
            "pinned_num_register_threads" => {
                parse_in(value, |&n: &u64| n.is_power_of_two() && n <= 128).ok_or_else(|| bad("a power of two up to 128"))?;
            }
            _ => return self.set_expanse(key, value),
        }
        Ok(())
    }

    /// expanse's policy rules that are on or off, each key with its value,
    /// in the order `to_conf_string` writes them.
    fn flags(&self) -> [(&'static str, bool); 6] {
        [
            ("lend_across_streams", self.lend_across_streams),
            ("share_segments", self.share_segments),
            ("small_from_large", self.small_from_large),
            ("grow_fewest", self.grow_fewest),
            ("move_whole_first", self.move_whole_first),
            ("move_above_peak_only", self.move_above_peak_only),
        ]
    }

    /// The field of one of [`Self::flags`]' keys.
    fn flag_mut(&mut self, key: &str) -> Option<&mut bool> {
        Some(match key {
            "lend_across_streams" => &mut self.lend_across_streams,
            "share_segments" => &mut self.share_segments,
            "small_from_large" => &mut self.small_from_large,
            "grow_fewest" => &mut self.grow_fewest,
            "move_whole_first" => &mut self.move_whole_first,
            "move_above_peak_only" => &mut self.move_above_peak_only,
            _ => return None,
        })
    }

    /// The keys of expanse's own policy (page sizes, moving, release).
    fn set_expanse(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let bad =
            |expected: &'static str| ConfigError::BadValue { key: key.to_string(), value: value.to_string(), expected };
        if let Some(flag) = self.flag_mut(key) {
            *flag = parse_bool(value).ok_or_else(|| bad("True or False"))?;
            return Ok(());
        }
        match key {
            "small_page_size_mb" | "large_page_size_mb" | "min_grow_size_mb" | "max_page_size_mb" => {
                let mb = parse_in(value, |&mb: &u64| mb > 0 && mb.is_multiple_of(2) && mb <= 1 << 20)
                    .ok_or_else(|| bad("a positive even number of MiB (a multiple of 2 MiB)"))?;
                let bytes = mb * MIB;
                match key {
                    "small_page_size_mb" => self.small_page_size = bytes,
                    "large_page_size_mb" => self.large_page_size = bytes,
                    "max_page_size_mb" => self.max_page_size = bytes,
                    _ => self.min_grow_size = bytes,
                }
            }
            "move_budget" => {
                self.move_budget = parse_in(value, |&f: &f64| f >= 0.0 && f.is_finite())
                    .ok_or_else(|| bad("a non-negative number (multiple of the uniform-page driver cost)"))?;
            }
            "move_reuse_window" => {
                let n: u64 = value.parse().map_err(|_| bad("a non-negative integer number of allocations"))?;
                if n > 1 << 48 {
                    return Err(bad("a number of allocations up to 2^48"));
                }
                self.move_reuse_window = n;
            }
            "overshoot_share" => {
                let n: u64 = value.parse().map_err(|_| bad("a non-negative integer (0: no bound)"))?;
                if n > 1 << 20 {
                    return Err(bad("an integer up to 2^20 (0: no bound)"));
                }
                self.overshoot_share = n;
            }
            "release_threshold_mb" => {
                let mb: u64 = value.parse().map_err(|_| bad("a non-negative integer number of MiB"))?;
                self.release_threshold = Some(mb.checked_mul(MIB).ok_or_else(|| bad("a number of MiB below 2^44"))?);
            }
            _ => return Err(ConfigError::UnknownKey { key: key.to_string() }),
        }
        Ok(())
    }

    /// Divisions that apply to a (rounded) request of `size` bytes.
    pub fn divisions_for(&self, size: u64) -> u64 {
        let log = 63 - u64::from(size.max(1).leading_zeros());
        let index = log.saturating_sub(20).min(ROUNDUP_BANDS as u64 - 1);
        self.roundup_power2_divisions[index as usize]
    }

    /// Render back to the string syntax: `expandable_segments` always, then
    /// every key whose value differs from the default, so that
    /// `Config::parse(&c.to_conf_string()) == Ok(c)` for every configuration
    /// `parse` can produce.
    pub fn to_conf_string(&self) -> String {
        let d = Config::default();
        let mut parts = vec![format!("expandable_segments:{}", py_bool(self.expandable_segments))];
        let mut put = |differs: bool, key: &str, value: String| {
            if differs {
                parts.push(format!("{key}:{value}"));
            }
        };
        put(self.pytorch_compat != d.pytorch_compat, "pytorch_compat", py_bool(self.pytorch_compat).into());
        put(self.max_split_size != d.max_split_size, "max_split_size_mb", (self.max_split_size / MIB).to_string());
        put(
            self.max_non_split_rounding != d.max_non_split_rounding,
            "max_non_split_rounding_mb",
            (self.max_non_split_rounding / MIB).to_string(),
        );
        put(
            self.roundup_power2_divisions != d.roundup_power2_divisions,
            "roundup_power2_divisions",
            divisions_string(&self.roundup_power2_divisions),
        );
        put(
            self.garbage_collection_threshold != d.garbage_collection_threshold,
            "garbage_collection_threshold",
            self.garbage_collection_threshold.to_string(),
        );
        if let Some(f) = self.per_process_memory_fraction {
            put(true, "per_process_memory_fraction", f.to_string());
        }
        for (key, v, dv) in [
            ("small_page_size_mb", self.small_page_size, d.small_page_size),
            ("large_page_size_mb", self.large_page_size, d.large_page_size),
            ("min_grow_size_mb", self.min_grow_size, d.min_grow_size),
            ("max_page_size_mb", self.max_page_size, d.max_page_size),
        ] {
            put(v != dv, key, (v / MIB).to_string());
        }
        put(self.move_budget != d.move_budget, "move_budget", self.move_budget.to_string());
        put(self.move_reuse_window != d.move_reuse_window, "move_reuse_window", self.move_reuse_window.to_string());
        for ((key, v), (_, dv)) in self.flags().into_iter().zip(d.flags()) {
            put(v != dv, key, py_bool(v).into());
        }
        put(self.overshoot_share != d.overshoot_share, "overshoot_share", self.overshoot_share.to_string());
        if let Some(t) = self.release_threshold {
            put(true, "release_threshold_mb", (t / MIB).to_string());
        }
        parts.join(",")
    }
}

/// Every band's divisions as a `[1:d,2:d,...,>:d]` list (bounds in MiB).
fn divisions_string(divisions: &[u64; ROUNDUP_BANDS]) -> String {
    let mut items: Vec<String> =
        divisions[..ROUNDUP_BANDS - 1].iter().enumerate().map(|(i, d)| format!("{}:{d}", 1u64 << i)).collect();
    items.push(format!(">:{}", divisions[ROUNDUP_BANDS - 1]));
    format!("[{}]", items.join(","))
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// `v` parsed as a `T` that `ok` accepts (a number within its range), else `None`.
fn parse_in<T: std::str::FromStr>(v: &str, ok: impl Fn(&T) -> bool) -> Option<T> {
    v.parse().ok().filter(|x| ok(x))
}

fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "True" => Some(true),
        "False" => Some(false),
        _ => None,
    }
}

/// Split `a:b,c:[d:e,f:g]` into pairs, keeping bracketed lists whole.
fn split_pairs(s: &str) -> Result<Vec<(String, String)>, ConfigError> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut items = Vec::new();
    for ch in s.chars() {
        match ch {
            '[' => {
                depth += 1;
                cur.push(ch);
            }
            ']' => {
                depth -= 1;
                if depth < 0 {
                    return Err(ConfigError::Syntax { message: format!("unbalanced ']' in '{s}'") });
                }
                cur.push(ch);
            }
            ',' if depth == 0 => items.push(std::mem::take(&mut cur)),
            c if c.is_whitespace() => {}
            c => cur.push(c),
        }
    }
    if depth != 0 {
        return Err(ConfigError::Syntax { message: format!("unbalanced '[' in '{s}'") });
    }
    items.push(cur);
    for item in items {
        if item.is_empty() {
            continue;
        }
        let Some((k, v)) = item.split_once(':') else {
            return Err(ConfigError::Syntax { message: format!("'{item}' is not key:value") });
        };
        if k.is_empty() || v.is_empty() {
            return Err(ConfigError::Syntax { message: format!("'{item}' is not key:value") });
        }
        out.push((k.to_string(), v.to_string()));
    }
    Ok(out)
}

/// PyTorch's `roundup_power2_divisions` value: one power of two for every
/// band, or `[bound:div,...,>:div]` with bounds in MiB.
fn parse_divisions(v: &str) -> Option<[u64; ROUNDUP_BANDS]> {
    let mut out = [0u64; ROUNDUP_BANDS];
    if let Some(list) = v.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let mut first = true;
        let mut last_index = 0usize;
        for item in list.split(',') {
            let (bound, div) = item.split_once(':')?;
            let div: u64 = div.parse().ok()?;
            if div != 0 && !div.is_power_of_two() {
                return None;
            }
            if bound == ">" {
                for slot in out.iter_mut().skip(last_index + 1) {
                    *slot = div;
                }
            } else {
                let bound: u64 = bound.parse().ok()?;
                if !bound.is_power_of_two() {
                    return None;
                }
                let index = (63 - bound.leading_zeros() as usize).min(ROUNDUP_BANDS - 1);
                if first {
                    for slot in out.iter_mut().take(index) {
                        *slot = div;
                    }
                    first = false;
                }
                out[index] = div;
                last_index = index;
            }
        }
        Some(out)
    } else {
        let div: u64 = v.parse().ok()?;
        if !div.is_power_of_two() {
            return None;
        }
        Some([div; ROUNDUP_BANDS])
    }
}

#[cfg(test)]
mod tests;
