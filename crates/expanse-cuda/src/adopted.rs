//! The streams a thread has seen adopted, so that adopting one again (at
//! every C ABI call) takes no lock.
//!
//! An adopted stream stays in its device's ledger for the device's life:
//! only streams made by `create_stream` are ever removed, and the ledger
//! refuses to make one with a live id. So once adopted, adopting it again
//! changes nothing and cannot fail; remembering it is exact.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Most streams one thread remembers (past it, it forgets them all and
/// the next calls take the device's lock again).
const CAPACITY: usize = 64;

/// Source of device instance numbers.
static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);

/// A number no other device of this process has (a device opened later
/// gets another one, so a thread never takes one device for another).
pub(crate) fn new_instance() -> u64 {
    NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed)
}

/// `(device instance, raw stream)` pairs seen adopted, at most
/// [`CAPACITY`].
#[derive(Debug, Default)]
struct Seen(Vec<(u64, u64)>);

impl Seen {
    fn contains(&self, key: (u64, u64)) -> bool {
        self.0.contains(&key)
    }

    fn add(&mut self, key: (u64, u64)) {
        if self.contains(key) {
            return;
        }
        if self.0.len() == CAPACITY {
            self.0.clear();
        }
        self.0.push(key);
    }
}

thread_local! {
    static SEEN: RefCell<Seen> = const { RefCell::new(Seen(Vec::new())) };
}

/// Whether this thread saw `raw` adopted on device `instance`. False
/// during thread teardown, when the cache may be gone.
pub(crate) fn seen(instance: u64, raw: u64) -> bool {
    SEEN.try_with(|s| s.borrow().contains((instance, raw))).unwrap_or(false)
}

/// Remember that `raw` is adopted on device `instance`.
pub(crate) fn remember(instance: u64, raw: u64) {
    let _ = SEEN.try_with(|s| s.borrow_mut().add((instance, raw)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_per_device_and_forgets_past_capacity() {
        let mut s = Seen::default();
        s.add((1, 0x10));
        s.add((1, 0x10));
        assert!(s.contains((1, 0x10)));
        // The same handle on another device is another stream.
        assert!(!s.contains((2, 0x10)));
        assert_eq!(s.0.len(), 1);
        for raw in 0..63 {
            s.add((3, 0x1000 + raw));
        }
        assert_eq!(s.0.len(), 64);
        assert!(s.contains((1, 0x10)));
        // The 65th forgets the rest: they are looked up again, never wrong.
        s.add((4, 1));
        assert_eq!(s.0, vec![(4, 1)]);
    }

    #[test]
    fn each_thread_has_its_own() {
        let a = new_instance();
        let b = new_instance();
        assert_ne!(a, b);
        remember(a, 7);
        assert!(seen(a, 7) && !seen(b, 7));
        std::thread::spawn(move || assert!(!seen(a, 7))).join().unwrap();
    }
}
