//! The streams seen adopted, so that adopting one again (at every C ABI
//! call) takes no lock.
//!
//! An adopted stream stays in its device's ledger for the device's life:
//! only streams made by `create_stream` are ever removed, and the ledger
//! refuses to make one with a live id. So once adopted, adopting it again
//! changes nothing and cannot fail; remembering it is exact.
//!
//! The memory is one table for the whole process, read without a lock:
//! a slot per hash of `(device instance, raw stream)` packed into one
//! word, written after the adoption (release) and read before the reuse
//! (acquire), so a thread that finds a stream here also sees the ledger
//! entry its adoption made. A slot holds one pair; another pair hashing to
//! it replaces it, and the next call for the first takes the device's lock
//! again (slower, never wrong). It was a thread-local list before: in a
//! library loaded with `dlopen` (PyTorch loads `libexpanse.so` so) every
//! thread-local access is a call into the dynamic loader, on every
//! `expanse_alloc`.

use std::sync::atomic::{AtomicU64, Ordering};

/// Slots of the table (a power of two).
const SLOTS: usize = 256;

/// Bits of a raw stream handle kept in a key: user-space addresses on
/// x86-64 and AArch64 fit in 48. A handle above is never remembered.
const RAW_BITS: u32 = 48;

/// Source of device instance numbers.
static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);

/// `(device instance, raw stream)` keys seen adopted; 0: empty (instance
/// numbers start at 1, so no key is 0).
static SEEN: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];

/// A number no other device of this process has (a device opened later
/// gets another one, so no device is taken for another).
pub(crate) fn new_instance() -> u64 {
    NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed)
}

/// The pair packed into one word, when it fits (instance below 2^16, raw
/// below 2^48).
#[inline]
fn key(instance: u64, raw: u64) -> Option<u64> {
    (instance < 1 << (64 - RAW_BITS) && raw < 1 << RAW_BITS).then_some(instance << RAW_BITS | raw)
}

/// The slot of `key`.
#[inline]
fn slot(key: u64) -> &'static AtomicU64 {
    &SEEN[(key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize]
}

/// Whether `raw` was seen adopted on device `instance` (and is still
/// remembered).
#[inline]
pub(crate) fn seen(instance: u64, raw: u64) -> bool {
    key(instance, raw).is_some_and(|k| slot(k).load(Ordering::Acquire) == k)
}

/// Remember that `raw` is adopted on device `instance`.
pub(crate) fn remember(instance: u64, raw: u64) {
    if let Some(k) = key(instance, raw) {
        slot(k).store(k, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The table is the process's: tests that fill it take turns, so that
    /// none replaces another's pair between its two steps.
    static TURN: Mutex<()> = Mutex::new(());

    #[test]
    fn remembers_per_device() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let (a, b) = (new_instance(), new_instance());
        assert_ne!(a, b);
        remember(a, 0x7f00_1234_5000);
        assert!(seen(a, 0x7f00_1234_5000));
        // The same handle on another device is another stream.
        assert!(!seen(b, 0x7f00_1234_5000));
        assert!(!seen(a, 0x7f00_1234_6000));
    }

    #[test]
    fn a_handle_past_48_bits_is_never_remembered() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let a = new_instance();
        let raw = 1 << 50 | 0x10;
        remember(a, raw);
        assert!(!seen(a, raw));
        // Nor does it alias the handle with its top bits cut off.
        assert!(!seen(a, 0x10));
    }

    #[test]
    fn a_pair_hashing_to_the_same_slot_replaces_it() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let a = new_instance();
        let first = 0x5550_0000;
        let k = key(a, first).unwrap();
        let other = (1..1 << 20)
            .map(|i| first + (i << 12))
            .find(|&r| std::ptr::eq(slot(key(a, r).unwrap()), slot(k)))
            .expect("some handle shares the slot");
        remember(a, first);
        remember(a, other);
        assert!(seen(a, other));
        assert!(!seen(a, first), "forgotten: the next call takes the lock again");
    }

    #[test]
    fn every_thread_sees_what_another_remembered() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let a = new_instance();
        std::thread::spawn(move || remember(a, 0x6000_0000)).join().unwrap();
        assert!(seen(a, 0x6000_0000));
    }
}
