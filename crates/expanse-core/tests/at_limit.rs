//! At the device's limit: growth that fails with the policy's page size is
//! tried again with pages of the device granularity, and moves are no
//! longer bounded by the driver budget. PyTorch's decisions never change.

use std::sync::Arc;

use expanse_core::policy::PagePolicy;
use expanse_core::{Config, DeviceAllocator, Policy, StreamId};
use expanse_device::Device;
use expanse_mock::MockDevice;

const MIB: u64 = 1 << 20;

/// expanse's policy for `conf` without the free- and total-memory bounds on
/// pages (tested on their own below), so that these tiny devices still get
/// the page sizes the configuration asks for.
fn allocator(capacity: u64, conf: &str) -> DeviceAllocator {
    let d: Arc<dyn Device> = Arc::new(MockDevice::new(capacity, 2 * MIB));
    let config = Config::parse(conf).unwrap();
    let mut policy = Policy::from_config(&config);
    if let PagePolicy::GrowthSized { free_share, total_share, .. } = &mut policy.pages {
        *free_share = 0;
        *total_share = 0;
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
/// block to lend); stream 1 then asks for 6 MiB, two pages of a segment
/// of its own (segments not shared): both move.
#[test]
fn moves_at_the_limit_ignore_the_budget() {
    let mut a = allocator(
        16 * MIB,
        "expandable_segments:True,move_budget:0,max_page_size_mb:4,min_grow_size_mb:4,share_segments:False",
    );
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
    if let PagePolicy::GrowthSized { free_share, total_share, .. } = &mut policy.pages {
        *free_share = 0;
        *total_share = 0;
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

/// expanse's policy with only the free-memory bound (`total: false`) or
/// only the total-memory bound on pages.
fn one_bound(capacity: u64, total: bool) -> DeviceAllocator {
    let d: Arc<dyn Device> = Arc::new(MockDevice::new(capacity, 2 * MIB));
    let config = Config::default();
    let mut policy = Policy::from_config(&config);
    if let PagePolicy::GrowthSized { free_share, total_share, .. } = &mut policy.pages {
        if total {
            *free_share = 0;
        } else {
            *total_share = 0;
        }
    }
    DeviceAllocator::with_policy(d, config, policy)
}

/// Pages shrink as the device fills: a new page is at most 1/1024 of the
/// device's free memory. On an empty 16 GiB device that is 16 MiB, so a
/// 30 MiB tensor maps a 16 MiB and a 14 MiB page (counted by hand), where
/// an unbounded policy maps one 30 MiB page; PyTorch's mode keeps its two
/// 20 MiB pages.
#[test]
fn pages_are_bounded_by_the_free_memory() {
    let dev = || Arc::new(MockDevice::new(16 << 30, 2 * MIB)) as Arc<dyn Device>;
    let mut bounded = one_bound(16 << 30, false);
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

/// Pages scale with the device: a new page is at most 1/3578 of its total
/// memory. On a 16 GiB device that is 4 MiB (4.58 MiB rounded down to the
/// granularity), so a 30 MiB tensor maps seven 4 MiB pages and one 2 MiB
/// page (counted by hand); on an H200-sized device (143,771 MiB) the bound
/// is 40 MiB and the same tensor maps one 30 MiB page, as with no bound.
/// With both bounds (the default) the smaller one decides.
#[test]
fn pages_are_bounded_by_the_device_size() {
    let h200 = 143_771 * MIB;
    for (a, pages) in [
        (one_bound(16 << 30, true), 8),
        (one_bound(h200, true), 1),
        (DeviceAllocator::new(Arc::new(MockDevice::new(16 << 30, 2 * MIB)), Config::default()), 8),
    ] {
        let mut a = a;
        let p = a.malloc(30 * MIB, StreamId(0)).unwrap();
        assert_eq!(a.stats().pages.created, pages);
        assert_eq!(a.reserved_bytes(), 30 * MIB);
        a.check_invariants().unwrap();
        a.free(p).unwrap();
    }
}

/// The H200 as CUDA reports it (150,109,880,320 bytes, 143,156 MiB) and
/// as the host backend's default capacity (143,771 MiB) both allow 40 MiB
/// pages (40.01 and 40.18 MiB, rounded down to 2 MiB): a 40 MiB tensor
/// maps one page on each, so CUDA and host replays decide alike. (At
/// 1/3584, the CUDA figure gave 38 MiB: two pages.)
#[test]
fn the_h200_allows_40_mib_pages_on_cuda_and_host_alike() {
    for total in [150_109_880_320, 143_771 * MIB] {
        let mut a = one_bound(total, true);
        let p = a.malloc(40 * MIB, StreamId(0)).unwrap();
        assert_eq!(a.stats().pages.created, 1, "device of {total} bytes");
        a.check_invariants().unwrap();
        a.free(p).unwrap();
    }
}

/// A growth the device's free memory cannot cover fails without creating
/// pages one by one and undoing them, in expanse's mode and PyTorch's
/// expandable mode alike; the decision is unchanged (out of memory, the
/// same bytes reserved, one retry, one OOM) and the device is asked once
/// per growth attempt for all the missing bytes, refused at once, as a
/// classic segment's `malloc` would be. Counted by hand on a 64 MiB
/// device: 40 MiB live, 24 MiB free, 40 MiB asked. Before the check,
/// expanse created the free memory's 12 pages of 2 MiB (pages shrink as
/// the device fills) and released them again, twice (before and after the
/// cache was emptied); PyTorch's mode created one 20 MiB page and
/// released it, twice.
#[test]
fn a_hopeless_growth_creates_no_pages_to_undo() {
    for conf in ["", "expandable_segments:True,pytorch_compat:True"] {
        let d = Arc::new(MockDevice::new(64 * MIB, 2 * MIB));
        let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, Config::parse(conf).unwrap());
        let s = StreamId(0);
        let live = a.malloc(40 * MIB, s).unwrap();
        let reserved = a.reserved_bytes();
        let stats = a.stats().clone();
        let creates = d.calls(expanse_mock::Call::CreatePage);
        let releases = d.calls(expanse_mock::Call::ReleasePage);
        assert!(matches!(a.malloc(40 * MIB, s), Err(expanse_core::AllocError::OutOfMemory { .. })), "{conf:?}");
        assert_eq!(d.calls(expanse_mock::Call::CreatePage) - creates, 2, "{conf:?}: one refused request per attempt");
        assert_eq!(d.calls(expanse_mock::Call::ReleasePage) - releases, 0, "{conf:?}: nothing created to undo");
        assert_eq!(a.stats().pages, stats.pages, "{conf:?}");
        assert_eq!(a.stats().num_alloc_retries, stats.num_alloc_retries + 1, "{conf:?}");
        assert_eq!(a.stats().num_ooms, stats.num_ooms + 1, "{conf:?}");
        assert_eq!(a.reserved_bytes(), reserved, "{conf:?}");
        a.check_invariants().unwrap();
        // What does fit still does.
        let next = a.malloc(16 * MIB, s).unwrap();
        a.check_invariants().unwrap();
        a.free(next).unwrap();
        a.free(live).unwrap();
        assert!(d.violations().is_empty(), "{:?}", d.violations());
    }
}

/// A device whose free-memory answer is `hidden` bytes short of the truth,
/// as when another process frees memory just after the allocator asked.
struct Understated {
    inner: MockDevice,
    hidden: u64,
}

impl Device for Understated {
    fn ordinal(&self) -> u32 {
        self.inner.ordinal()
    }
    fn name(&self) -> String {
        self.inner.name()
    }
    fn total_memory(&self) -> u64 {
        self.inner.total_memory()
    }
    fn free_memory(&self) -> u64 {
        self.inner.free_memory().saturating_sub(self.hidden)
    }
    fn granularity(&self) -> u64 {
        self.inner.granularity()
    }
    fn supports_virtual_memory(&self) -> bool {
        self.inner.supports_virtual_memory()
    }
    fn reserve(&self, size: u64) -> expanse_device::Result<u64> {
        self.inner.reserve(size)
    }
    fn release_reservation(&self, base: u64, size: u64) -> expanse_device::Result<()> {
        self.inner.release_reservation(base, size)
    }
    fn create_page(&self, size: u64) -> expanse_device::Result<expanse_device::PageHandle> {
        self.inner.create_page(size)
    }
    fn release_page(&self, page: expanse_device::PageHandle) -> expanse_device::Result<()> {
        self.inner.release_page(page)
    }
    fn map(&self, addr: u64, page: expanse_device::PageHandle) -> expanse_device::Result<()> {
        self.inner.map(addr, page)
    }
    fn unmap(&self, addr: u64, size: u64) -> expanse_device::Result<()> {
        self.inner.unmap(addr, size)
    }
    fn set_access(&self, addr: u64, size: u64, devices: &[u32]) -> expanse_device::Result<()> {
        self.inner.set_access(addr, size, devices)
    }
    fn malloc(&self, size: u64) -> expanse_device::Result<u64> {
        self.inner.malloc(size)
    }
    fn free(&self, ptr: u64) -> expanse_device::Result<()> {
        self.inner.free(ptr)
    }
    fn create_stream(&self) -> expanse_device::Result<StreamId> {
        self.inner.create_stream()
    }
    fn destroy_stream(&self, stream: StreamId) -> expanse_device::Result<()> {
        self.inner.destroy_stream(stream)
    }
    fn record_event(&self, stream: StreamId) -> expanse_device::Result<expanse_device::EventId> {
        self.inner.record_event(stream)
    }
    fn query_event(&self, event: expanse_device::EventId) -> expanse_device::Result<bool> {
        self.inner.query_event(event)
    }
    fn release_event(&self, event: expanse_device::EventId) -> expanse_device::Result<()> {
        self.inner.release_event(event)
    }
    fn wait_event(&self, stream: StreamId, event: expanse_device::EventId) -> expanse_device::Result<()> {
        self.inner.wait_event(stream, event)
    }
    fn synchronize_stream(&self, stream: StreamId) -> expanse_device::Result<()> {
        self.inner.synchronize_stream(stream)
    }
    fn synchronize(&self) -> expanse_device::Result<()> {
        self.inner.synchronize()
    }
    fn write(&self, dst: u64, src: &[u8]) -> expanse_device::Result<()> {
        self.inner.write(dst, src)
    }
    fn read(&self, src: u64, dst: &mut [u8]) -> expanse_device::Result<()> {
        self.inner.read(src, dst)
    }
}

/// Free memory that the driver's answer missed (another process freed it
/// meanwhile) is not given up for lost: the one request for the missing
/// bytes is granted, handed straight back, and the growth goes ahead as
/// usual. 64 MiB device that claims 32 MiB less free than it has: 40 MiB
/// live, a 16 MiB request, 24 MiB truly free but 0 reported.
#[test]
fn memory_the_free_answer_missed_still_serves() {
    for conf in ["", "expandable_segments:True,pytorch_compat:True"] {
        let d = Arc::new(Understated { inner: MockDevice::new(64 * MIB, 2 * MIB), hidden: 32 * MIB });
        let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, Config::parse(conf).unwrap());
        let s = StreamId(0);
        let live = a.malloc(40 * MIB, s).unwrap();
        let p = a.malloc(16 * MIB, s).expect("the device has the memory");
        assert_eq!(a.stats().num_ooms, 0, "{conf:?}");
        a.check_invariants().unwrap();
        a.free(p).unwrap();
        a.free(live).unwrap();
        drop(a);
        assert!(d.inner.leaks().is_empty(), "{:?}", d.inner.leaks());
    }
}

/// After a failed allocation found nothing to release, the next one skips
/// the scans for cached memory until a block is cached again: a freed
/// tensor's pages are then released by the next failure as ever. 64 MiB
/// device, two 20 MiB tensors (2 MiB pages: the free memory bounds them);
/// 40 MiB asked (24 MiB free): nothing cached to release. Once the first
/// tensor is freed, 48 MiB asked (44 MiB could be had) fails too, after
/// emptying the cache: reserved falls from 40 to 20 MiB.
#[test]
fn a_failure_after_a_free_still_releases_the_cache() {
    let d = Arc::new(MockDevice::new(64 * MIB, 2 * MIB));
    let mut a = DeviceAllocator::new(Arc::clone(&d) as Arc<dyn Device>, Config::default());
    let s = StreamId(0);
    let t1 = a.malloc(20 * MIB, s).unwrap();
    let t2 = a.malloc(20 * MIB, s).unwrap();
    assert!(a.malloc(40 * MIB, s).is_err());
    assert!(a.malloc(40 * MIB, s).is_err());
    assert_eq!(a.reserved_bytes(), 40 * MIB);
    a.check_invariants().unwrap();
    a.free(t1).unwrap();
    a.check_invariants().unwrap();
    assert!(a.malloc(48 * MIB, s).is_err());
    assert_eq!(a.reserved_bytes(), 20 * MIB, "the freed tensor's pages went back to the device");
    a.check_invariants().unwrap();
    a.free(t2).unwrap();
}
