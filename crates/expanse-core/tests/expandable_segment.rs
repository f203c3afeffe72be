//! Unit tests that pin the expandable segment's arithmetic and rollback,
//! on the strict mock device.

use expanse_core::expandable_segment::{release_pages, ExpandableSegment, Page, Placement};
use expanse_core::PageOps;
use expanse_device::{DeviceError, StreamId};
use expanse_mock::Call;
use expanse_mock::MockDevice;

const MIB: u64 = 1 << 20;

fn dev() -> MockDevice {
    MockDevice::new(1 << 30, 2 * MIB).with_peers(&[1, 2])
}

fn segment(d: &MockDevice, page: u64, peers: &[u32]) -> ExpandableSegment {
    ExpandableSegment::new(d, StreamId(0), page, peers).unwrap()
}

fn no_supply() -> Vec<Page> {
    Vec::new()
}

#[test]
fn reserves_nine_eighths_of_device_memory_in_whole_pages() {
    let d = dev();
    let mut ops = PageOps::default();
    let mut s = segment(&d, 20 * MIB, &[]);
    // ceil(9/8 * 1 GiB / 20 MiB) = ceil(57.6) = 58 pages.
    assert_eq!(s.size(), 58 * 20 * MIB);
    assert_eq!(s.base() % (2 * MIB), 0);
    s.release_all(&d, &mut ops).unwrap();
    assert!(d.leaks().is_empty());
}

#[test]
fn map_rounds_outward_and_unmap_rounds_inward() {
    let d = dev();
    let mut ops = PageOps::default();
    let mut s = segment(&d, 20 * MIB, &[]);
    let b = s.base();
    // 1 byte maps one whole page; 21 MiB map two.
    let r = s.map(&d, b, 1, Placement::uniform(b + s.size()), &mut no_supply(), &mut ops).unwrap();
    assert_eq!((r.addr, r.size), (b, 20 * MIB));
    let r = s.map(&d, b + 20 * MIB, 21 * MIB, Placement::uniform(b + s.size()), &mut no_supply(), &mut ops).unwrap();
    assert_eq!((r.addr, r.size), (b + 20 * MIB, 40 * MIB));
    assert_eq!(s.mapped_bytes(), 60 * MIB);
    assert_eq!((ops.created, ops.mapped, ops.access_sets), (3, 3, 3));
    // Unmap [10 MiB, 50 MiB): only the page [20, 40) is wholly inside.
    let (r, pages) = s.unmap(&d, b + 10 * MIB, 40 * MIB, &mut ops).unwrap();
    assert_eq!((r.addr, r.size), (b + 20 * MIB, 20 * MIB));
    assert_eq!(pages.len(), 1);
    assert!(s.is_mapped(b, 20 * MIB) && !s.any_mapped(b + 20 * MIB, 20 * MIB) && s.is_mapped(b + 40 * MIB, 20 * MIB));
    assert!(d.synchronizations() >= 1, "unmap synchronizes the segment's stream first");
    // A range holding no whole page unmaps nothing.
    let (r, none) = s.unmap(&d, b + 41 * MIB, 18 * MIB, &mut ops).unwrap();
    assert_eq!(r.size, 0);
    assert!(none.is_empty());
    release_pages(&d, pages, &mut ops).unwrap();
    s.release_all(&d, &mut ops).unwrap();
    assert!(d.leaks().is_empty() && d.violations().is_empty());
}

#[test]
fn start_must_be_page_aligned_and_inside() {
    let d = dev();
    let mut ops = PageOps::default();
    let mut s = segment(&d, 20 * MIB, &[]);
    let b = s.base();
    let end = b + s.size();
    let misuse = |r: Result<_, DeviceError>| matches!(r, Err(DeviceError::Misuse(_)));
    assert!(
        misuse(s.map(&d, b + 2 * MIB, MIB, Placement::uniform(end), &mut no_supply(), &mut ops)),
        "unaligned start"
    );
    // p < base: an error, never a wrapped-around offset.
    assert!(misuse(s.map(&d, b - 20 * MIB, MIB, Placement::uniform(end), &mut no_supply(), &mut ops)), "below base");
    assert!(matches!(s.unmap(&d, b - 1, 4, &mut ops), Err(DeviceError::Misuse(_))), "unmap below base");
    assert!(s.unit_left(b - 1).is_err() && s.unit_right(b - 1).is_err());
    assert!(misuse(s.map(&d, end, 20 * MIB, Placement::uniform(end), &mut no_supply(), &mut ops)), "past the end");
    assert!(
        misuse(s.map(&d, end - 20 * MIB, 40 * MIB, Placement::uniform(end), &mut no_supply(), &mut ops)),
        "runs past the end"
    );
    assert_eq!(s.unit_left(b + 25 * MIB).unwrap(), 1);
    assert_eq!(s.unit_right(b + 25 * MIB).unwrap(), 2);
    assert_eq!(s.unit_right(b + 40 * MIB).unwrap(), 2);
    // Mapping over a mapped page is refused and changes nothing.
    s.map(&d, b, MIB, Placement::uniform(end), &mut no_supply(), &mut ops).unwrap();
    assert!(misuse(s.map(&d, b, MIB, Placement::uniform(end), &mut no_supply(), &mut ops)));
    assert_eq!(s.page_count(), 1);
    assert_eq!(d.live_pages(), 1, "nothing created by the refused calls");
    s.release_all(&d, &mut ops).unwrap();
    assert!(d.violations().is_empty());
}

#[test]
fn failure_on_the_kth_page_rolls_everything_back() {
    for (call, k) in
        [(Call::CreatePage, 1), (Call::CreatePage, 3), (Call::Map, 1), (Call::Map, 4), (Call::SetAccess, 1)]
    {
        for oom in [true, false] {
            let d = dev();
            let mut ops = PageOps::default();
            let mut s = segment(&d, 2 * MIB, &[]);
            let b = s.base();
            s.map(&d, b, 2 * MIB, Placement::uniform(b + s.size()), &mut no_supply(), &mut ops).unwrap();
            let err = if oom {
                DeviceError::OutOfMemory { call: "x", requested: 1 }
            } else {
                DeviceError::Driver { call: "x", code: 3 }
            };
            d.fail_nth(call, k, err);
            let r = s.map(&d, b + 2 * MIB, 10 * MIB, Placement::uniform(b + s.size()), &mut no_supply(), &mut ops);
            if oom {
                assert_eq!(r.unwrap().size, 0, "{call:?}@{k}: OOM gives an empty range");
            } else {
                assert!(r.is_err(), "{call:?}@{k}: driver errors are returned");
            }
            // Nothing of the failed call is left mapped or alive.
            assert_eq!(s.page_count(), 1, "{call:?}@{k}");
            assert_eq!(d.live_pages(), 1, "{call:?}@{k}: pages leaked");
            assert_eq!(d.mapped_bytes(), 2 * MIB, "{call:?}@{k}: pages left mapped");
            assert!(d.violations().is_empty(), "{call:?}@{k}: {:?}", d.violations());
            d.clear_failure(call);
            // And the segment still works.
            let r =
                s.map(&d, b + 2 * MIB, 10 * MIB, Placement::uniform(b + s.size()), &mut no_supply(), &mut ops).unwrap();
            assert_eq!(r.size, 10 * MIB);
            s.release_all(&d, &mut ops).unwrap();
            assert!(d.leaks().is_empty());
        }
    }
}

#[test]
fn peers_before_and_after_mapping_get_access_on_every_page() {
    let d = dev();
    let mut ops = PageOps::default();
    // Peer 1 known from the start.
    let mut s = segment(&d, 2 * MIB, &[1]);
    let b = s.base();
    s.map(&d, b, 6 * MIB, Placement::uniform(b + s.size()), &mut no_supply(), &mut ops).unwrap();
    for i in 0..3 {
        assert_eq!(d.access_at(b + i * 2 * MIB), Some(vec![0, 1]));
    }
    assert_eq!(ops.access_sets, 3 * 2, "one access set per page per device");
    // Peer 2 added after mapping: every mapped page, and every later page.
    s.add_peer(&d, 2, &mut ops).unwrap();
    for i in 0..3 {
        assert_eq!(d.access_at(b + i * 2 * MIB), Some(vec![0, 1, 2]));
    }
    s.map(&d, b + 6 * MIB, 4 * MIB, Placement::uniform(b + s.size()), &mut no_supply(), &mut ops).unwrap();
    for i in 3..5 {
        assert_eq!(d.access_at(b + i * 2 * MIB), Some(vec![0, 1, 2]));
    }
    assert_eq!(s.devices(), &[0, 1, 2]);
    s.release_all(&d, &mut ops).unwrap();
    assert!(d.violations().is_empty() && d.leaks().is_empty());
}

#[test]
fn variable_pages_use_supply_first_then_grow() {
    let d = dev();
    let mut ops = PageOps::default();
    let mut s = segment(&d, 2 * MIB, &[]);
    let b = s.base();
    let end = b + s.size();
    // A 3 MiB request with growth (8 MiB, 40 MiB): one 8 MiB page.
    let r = s.map(&d, b, 3 * MIB, Placement::variable(end, 8 * MIB, 40 * MIB), &mut no_supply(), &mut ops).unwrap();
    assert_eq!(r.size, 8 * MIB);
    assert_eq!(ops.created, 1);
    // 100 MiB: pages capped at 40 MiB: 40 + 40 + 20.
    let r = s
        .map(&d, b + 8 * MIB, 100 * MIB, Placement::variable(end, 8 * MIB, 40 * MIB), &mut no_supply(), &mut ops)
        .unwrap();
    assert_eq!(r.size, 100 * MIB);
    assert_eq!(ops.created, 4);
    // Unmap a middle page and move it to the end: no create, no release.
    let (_, pages) = s.unmap(&d, b + 8 * MIB, 40 * MIB, &mut ops).unwrap();
    assert_eq!(pages.len(), 1);
    let mut supply = pages;
    let r =
        s.map(&d, b + 108 * MIB, 30 * MIB, Placement::variable(end, 8 * MIB, 40 * MIB), &mut supply, &mut ops).unwrap();
    assert_eq!(r.size, 40 * MIB, "the moved page is placed whole");
    assert!(supply.is_empty());
    assert_eq!((ops.created, ops.moved, ops.released), (4, 1, 0));
    // A supply page too big for a bounded hole is left in the supply.
    let (_, mut big) = s.unmap(&d, b + 48 * MIB, 40 * MIB, &mut ops).unwrap();
    let r = s
        .map(&d, b + 8 * MIB, 2 * MIB, Placement::variable(b + 28 * MIB, 8 * MIB, 40 * MIB), &mut big, &mut ops)
        .unwrap();
    assert_eq!(r.size, 8 * MIB, "a new page sized to the hole's needs");
    assert_eq!(big.len(), 1);
    release_pages(&d, big, &mut ops).unwrap();
    s.release_all(&d, &mut ops).unwrap();
    assert!(d.violations().is_empty() && d.leaks().is_empty());
}

/// `has_pages_within` answers whether `pages_within` lists anything,
/// without listing: pages of 8, 40, 40 and 20 MiB with the 40 MiB one at
/// 8 MiB unmapped, every range on a 2 MiB grid (and hand-picked ones).
#[test]
fn has_pages_within_agrees_with_pages_within() {
    let d = dev();
    let mut ops = PageOps::default();
    let mut s = segment(&d, 2 * MIB, &[]);
    let b = s.base();
    let end = b + s.size();
    s.map(&d, b, 3 * MIB, Placement::variable(end, 8 * MIB, 40 * MIB), &mut no_supply(), &mut ops).unwrap();
    s.map(&d, b + 8 * MIB, 100 * MIB, Placement::variable(end, 8 * MIB, 40 * MIB), &mut no_supply(), &mut ops).unwrap();
    let (_, pages) = s.unmap(&d, b + 8 * MIB, 40 * MIB, &mut ops).unwrap();
    // Pages now at [0, 8), [48, 88) and [88, 108) MiB.
    assert!(s.has_pages_within(b, 8 * MIB));
    assert!(!s.has_pages_within(b + 2 * MIB, 80 * MIB), "[2, 82) holds no whole page");
    assert!(s.has_pages_within(b + 2 * MIB, 86 * MIB), "[2, 88) holds [48, 88)");
    assert!(!s.has_pages_within(b + 8 * MIB, 40 * MIB), "the unmapped hole");
    assert!(!s.has_pages_within(b - 2 * MIB, 4 * MIB), "outside the segment");
    for start in (0..120).step_by(2) {
        for len in (2..120).step_by(2) {
            let (a, n) = (b + start * MIB, len * MIB);
            assert_eq!(s.has_pages_within(a, n), !s.pages_within(a, n).is_empty(), "[{start}, {}) MiB", start + len);
        }
    }
    release_pages(&d, pages, &mut ops).unwrap();
    s.release_all(&d, &mut ops).unwrap();
}
