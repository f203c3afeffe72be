//! The smallest device capacity on which a trace completes without an
//! out-of-memory error, by bisection over the sim backend's capacity.

use expanse_backends::BackendKind;
use expanse_core::Config;

use crate::trace::Event;

/// Granularity of the search: the device granularity of the sim backend.
pub const STEP: u64 = 2 << 20;

/// Whether `trace` (its events with their lines, read once: the search
/// replays it a dozen times, and parsing it again each time took the
/// corpus comparison from 9 s to 21 s) replays to the end under `config`
/// on a sim device of `capacity` bytes. Errors other than running out of
/// memory are errors.
pub fn completes(trace: &[(usize, Event)], config: &Config, capacity: u64) -> Result<bool, String> {
    let device = crate::make_device(BackendKind::Sim, capacity)?;
    let events = trace.iter().map(|&e| Ok(e));
    let r = crate::replay::run(events, device, config.clone(), &mut crate::replay::Quiet).map_err(|f| match f {
        crate::replay::Failed::Trace(e) => e.to_string(),
        crate::replay::Failed::Alloc(line, e) => format!("line {line}, at capacity {capacity}: {e}"),
    })?;
    Ok(r.oom.is_none())
}

/// Doublings of the distance above the unconstrained peak tried before
/// giving up.
const GALLOP: u32 = 12;

/// A multiple `c` of [`STEP`] on which `trace` completes under `config`
/// while `c - STEP` does not: bisection between `peak_requested` (no
/// capacity below it can hold the live bytes) and `peak_reserved`, the
/// peak of an unconstrained run, about log2((peak_reserved -
/// peak_requested) / 2 MiB) replays, most cut short by their
/// out-of-memory error.
///
/// The capacity is not only a limit: expandable segments reserve address
/// space in proportion to it (9/8 of the device), so a run on a device of
/// exactly its unconstrained peak can run out where a larger device's did
/// not. When the upper bound fails, it is raised by doubling steps first.
/// `c` is the smallest capacity if completing is monotone in the
/// capacity; it is always one where the trace completes and 2 MiB less
/// does not. `None` when nothing up to 4096 steps above the peak completes.
pub fn smallest(
    trace: &[(usize, Event)],
    config: &Config,
    peak_requested: u64,
    peak_reserved: u64,
) -> Result<Option<u64>, String> {
    // Known to fail: below the peak of live requested bytes.
    let mut lo = peak_requested.saturating_sub(1) / STEP * STEP;
    let mut hi = peak_reserved.div_ceil(STEP).max(1) * STEP;
    hi = hi.max(lo + STEP);
    let mut hi_checked = false;
    for k in 0..GALLOP {
        if completes(trace, config, hi)? {
            hi_checked = true;
            break;
        }
        lo = hi;
        hi += STEP << k;
    }
    if !hi_checked {
        return Ok(None);
    }
    while hi - lo > STEP {
        let mid = lo + (hi - lo) / 2 / STEP * STEP;
        if mid > 0 && completes(trace, config, mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(Some(hi))
}
