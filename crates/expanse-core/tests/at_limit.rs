//! At the device's limit: growth that fails with the policy's page size is
//! tried again with pages of the device granularity, and moves are no
//! longer bounded by the driver budget. PyTorch's decisions never change.

use std::sync::Arc;

use expanse_core::policy::PagePolicy;
use expanse_core::{Config, DeviceAllocator, Policy, StreamId};
use expanse_device::Device;
use expanse_mock::MockDevice;

const MIB: u64 = 1 << 20;

/// expanse's policy for `conf` without the free-memory bound on pages
/// (tested on its own below), so that these tiny devices still get the
/// page sizes the configuration asks for.
fn allocator(capacity: u64, conf: &str) -> DeviceAllocator {
    let d: Arc<dyn Device> = Arc::new(MockDevice::new(capacity, 2 * MIB));
    let config = Config::parse(conf).unwrap();
    let mut policy = Policy::from_config(&config);
    if let PagePolicy::GrowthSized { free_share, .. } = &mut policy.pages {
        *free_share = 0;
    }
    DeviceAllocator::with_policy(d, config, policy)
}

/// A 20 MiB device; pages of at least 16 MiB. A 2 MiB tensor maps one
/// 16 MiB page (4 MiB left on the device). A 16 MiB tensor then needs 2 MiB
/// more past the page: a 16 MiB page no longer fits, a 2 MiB one does.
/// Counted by hand: reserved 16 + 2 = 18 MiB.
#[test]
fn growth_at_the_limit_falls_back_to_granular_pages() {
    let mut a = allocator(20 * MIB, "expandable_segments:True,min_grow_size_mb:16,max_page_size_mb:16");
    let s = StreamId(0);
    let first = a.malloc(2 * MIB, s).unwrap();
    assert_eq!(a.reserved_bytes(), 16 * MIB);
    let second = a.malloc(16 * MIB, s).expect("fits once pages are granular");
    a.check_invariants().unwrap();
    assert_eq!(a.reserved_bytes(), 18 * MIB);
    assert_eq!(a.stats().num_ooms, 0);
    a.free(second).unwrap();
    a.free(first).unwrap();
    a.check_invariants().unwrap();
}

/// The same sequence in PyTorch's expandable mode (20 MiB pages) keeps
/// PyTorch's decision: the second page does not fit and the request fails.
#[test]
fn pytorch_expandable_mode_keeps_its_decisions_at_the_limit() {
    let mut a = allocator(20 * MIB, "expandable_segments:True,pytorch_compat:True");
    let s = StreamId(0);
    let first = a.malloc(2 * MIB, s).unwrap();
    assert_eq!(a.reserved_bytes(), 20 * MIB);
    assert!(a.malloc(16 * MIB, s).is_ok(), "fits in the first 20 MiB page");
    assert!(a.malloc(4 * MIB, s).is_err(), "no second 20 MiB page on a 20 MiB device");
    a.check_invariants().unwrap();
    a.free(first).unwrap();
}

/// With moving allowed but no budget left (move_budget:0 allows no move),
/// growth at the limit moves wholly free pages instead of releasing them
/// and creating new ones. 16 MiB device, 4 MiB pages: stream 0 holds four
/// 4 MiB tensors and frees two that are not neighbours (no 6 MiB free
/// block to lend); stream 1 then asks for 6 MiB, two pages: both move.
#[test]
fn moves_at_the_limit_ignore_the_budget() {
    let mut a = allocator(16 * MIB, "expandable_segments:True,move_budget:0,max_page_size_mb:4,min_grow_size_mb:4");
    let (s0, s1) = (StreamId(0), StreamId(1));
    let t: Vec<u64> = (0..4).map(|_| a.malloc(4 * MIB, s0).unwrap()).collect();
    assert_eq!(a.reserved_bytes(), 16 * MIB);
    a.free(t[1]).unwrap();
    a.free(t[3]).unwrap();
    let z = a.malloc(6 * MIB, s1).expect("two free pages move at the limit");
    a.check_invariants().unwrap();
    assert_eq!(a.reserved_bytes(), 16 * MIB);
    assert_eq!(a.stats().pages.moved, 2);
    assert_eq!(a.stats().pages.released, 0, "moved, not released and created again");
    a.free(z).unwrap();
    a.free(t[0]).unwrap();
    a.free(t[2]).unwrap();
    a.check_invariants().unwrap();
}

/// A request that cannot fit even at the limit fails without creating
/// granular pages one by one and undoing them: 20 MiB device, 18 MiB live,
/// a 16 MiB request. Each growth attempt asks the device for at most one
/// page (the policy's size, refused at once); the try at the limit is
/// skipped because 2 MiB of free memory cannot cover 16 MiB.
#[test]
fn a_hopeless_growth_at_the_limit_creates_nothing() {
    let d = Arc::new(MockDevice::new(20 * MIB, 2 * MIB));
    let config = Config::parse("expandable_segments:True").unwrap();
    let mut policy = Policy::from_config(&config);
    if let PagePolicy::GrowthSized { free_share, .. } = &mut policy.pages {
        *free_share = 0;
    }
    let mut a = DeviceAllocator::with_policy(Arc::clone(&d) as Arc<dyn Device>, config, policy);
    let s = StreamId(0);
    let live = a.malloc(18 * MIB, s).unwrap();
    let before = d.calls(expanse_mock::Call::CreatePage);
    assert!(a.malloc(16 * MIB, s).is_err());
    let creates = d.calls(expanse_mock::Call::CreatePage) - before;
    // Two growth attempts (before and after the cache is emptied), one
    // refused create each; without the check, the granular try would add
    // one successful 2 MiB create (and its undoing) per attempt.
    assert!(creates <= 2, "{creates} page creations for a request that cannot fit");
    a.check_invariants().unwrap();
    a.free(live).unwrap();
}

/// Pages shrink as the device fills: a new page is at most 1/1024 of the
/// device's free memory. On an empty 16 GiB device that is 16 MiB, so a
/// 30 MiB tensor maps a 16 MiB and a 14 MiB page (counted by hand), where
/// an unbounded policy maps one 30 MiB page; PyTorch's mode keeps its two
/// 20 MiB pages.
#[test]
fn pages_are_bounded_by_the_free_memory() {
    let dev = || Arc::new(MockDevice::new(16 << 30, 2 * MIB)) as Arc<dyn Device>;
    let mut bounded = DeviceAllocator::new(dev(), Config::default());
    let mut unbounded = allocator(16 << 30, "expandable_segments:True");
    let mut pytorch =
        DeviceAllocator::new(dev(), Config::parse("expandable_segments:True,pytorch_compat:True").unwrap());
    for (a, pages, reserved) in
        [(&mut bounded, 2, 30 * MIB), (&mut unbounded, 1, 30 * MIB), (&mut pytorch, 2, 40 * MIB)]
    {
        let p = a.malloc(30 * MIB, StreamId(0)).unwrap();
        assert_eq!(a.stats().pages.created, pages);
        assert_eq!(a.reserved_bytes(), reserved);
        a.check_invariants().unwrap();
        a.free(p).unwrap();
    }
}
