//! Streams as immediate in-order command lists, and events from
//! host-visible pools for ordering: record (append a signal), query, wait
//! (append a wait), host synchronize.
//!
//! Stream id 0 is the device's default list, made at open. Other lists are
//! made by [`Streams::create`] (the id is the list handle's value, so it
//! can never be a live id of another stream) or, for a caller's queue
//! pointer adopted over the C ABI, by [`Streams::adopt`]. The device's
//! ledger decides which ids may be used; an id without a list here is
//! refused, never created on the fly.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard};

use expanse_device::{DeviceError, Result};

use crate::result;
use crate::sys::{ze_command_list_handle_t, ze_event_handle_t, ze_event_pool_handle_t};
use crate::Platform;

/// Events per pool.
const POOL_EVENTS: u32 = 64;

#[derive(Default)]
struct Events {
    /// Pool handle and its free slots.
    pools: Vec<(usize, Vec<u32>)>,
    /// Live event handle -> (pool index, slot).
    live: HashMap<u64, (usize, u32)>,
}

pub(crate) struct Streams {
    platform: Arc<Platform>,
    ordinal: u32,
    queue_ordinal: u32,
    /// Stream id -> command list handle.
    lists: Mutex<HashMap<u64, usize>>,
    events: Mutex<Events>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Streams {
    pub(crate) fn new(platform: Arc<Platform>, ordinal: u32, queue_ordinal: u32) -> Result<Self> {
        let s = Streams {
            platform,
            ordinal,
            queue_ordinal,
            lists: Mutex::new(HashMap::new()),
            events: Mutex::new(Events::default()),
        };
        let default = s.new_list()?;
        lock(&s.lists).insert(0, default as usize);
        Ok(s)
    }

    /// A new immediate in-order command list on this device.
    fn new_list(&self) -> Result<ze_command_list_handle_t> {
        let dev = self.platform.device(self.ordinal)?;
        // SAFETY: the platform keeps the context and device alive.
        unsafe { result::immediate_list(self.platform.api(), self.platform.context(), dev, self.queue_ordinal) }
    }

    fn list(&self, stream: u64) -> Result<ze_command_list_handle_t> {
        match lock(&self.lists).get(&stream) {
            Some(l) => Ok(*l as ze_command_list_handle_t),
            None => Err(DeviceError::misuse("stream", stream, "no command list for this stream")),
        }
    }

    /// A new stream: its own list; the id is the list handle's value.
    pub(crate) fn create(&self) -> Result<u64> {
        let l = self.new_list()?;
        lock(&self.lists).insert(l as u64, l as usize);
        Ok(l as u64)
    }

    /// Give the caller's stream `id` a list of its own, if it has none.
    pub(crate) fn adopt(&self, id: u64) -> Result<()> {
        if lock(&self.lists).contains_key(&id) {
            return Ok(());
        }
        let l = self.new_list()?;
        lock(&self.lists).insert(id, l as usize);
        Ok(())
    }

    /// Wait for everything queued on stream `id`, then destroy its list.
    pub(crate) fn destroy(&self, id: u64) -> Result<()> {
        let l = self.list(id)?;
        self.synchronize(id)?;
        // SAFETY: the list is ours and idle after the synchronize; it is
        // forgotten below, so nothing appends to it again.
        unsafe { result::list_destroy(self.platform.api(), l)? };
        lock(&self.lists).remove(&id);
        Ok(())
    }

    fn new_event(&self) -> Result<ze_event_handle_t> {
        let a = self.platform.api();
        let mut ev = lock(&self.events);
        let i = match ev.pools.iter().position(|(_, free)| !free.is_empty()) {
            Some(i) => i,
            None => {
                // SAFETY: the platform keeps the context alive.
                let p = unsafe { result::event_pool_create(a, self.platform.context(), POOL_EVENTS)? };
                ev.pools.push((p as usize, (0..POOL_EVENTS).rev().collect()));
                ev.pools.len() - 1
            }
        };
        let (pool, free) = &mut ev.pools[i];
        let slot = free.pop().expect("pool chosen for a free slot");
        // SAFETY: the pool is live and `slot` was free in it.
        match unsafe { result::event_create(a, *pool as ze_event_pool_handle_t, slot) } {
            Ok(e) => {
                ev.live.insert(e as u64, (i, slot));
                Ok(e)
            }
            Err(err) => {
                free.push(slot);
                Err(err)
            }
        }
    }

    fn checked_event(&self, event: u64) -> Result<ze_event_handle_t> {
        if lock(&self.events).live.contains_key(&event) {
            Ok(event as ze_event_handle_t)
        } else {
            Err(DeviceError::misuse("event", event, "not a live event of this device"))
        }
    }

    /// Record an event on `stream`.
    pub(crate) fn record(&self, stream: u64) -> Result<u64> {
        let l = self.list(stream)?;
        let e = self.new_event()?;
        // SAFETY: the list and the event are live and ours.
        if let Err(err) = unsafe { result::append_signal(self.platform.api(), l, e) } {
            let _ = self.release(e as u64);
            return Err(err);
        }
        Ok(e as u64)
    }

    pub(crate) fn query(&self, event: u64) -> Result<bool> {
        let e = self.checked_event(event)?;
        // SAFETY: checked live above.
        unsafe { result::event_query(self.platform.api(), e) }
    }

    pub(crate) fn release(&self, event: u64) -> Result<()> {
        let mut ev = lock(&self.events);
        let Some(&(pool, slot)) = ev.live.get(&event) else {
            return Err(DeviceError::misuse("release_event", event, "not a live event of this device"));
        };
        // SAFETY: the event is live and ours; in-order lists that signal it
        // are done with it once it is released by the caller.
        unsafe { result::event_destroy(self.platform.api(), event as ze_event_handle_t)? };
        ev.live.remove(&event);
        ev.pools[pool].1.push(slot);
        Ok(())
    }

    pub(crate) fn wait(&self, stream: u64, event: u64) -> Result<()> {
        let e = self.checked_event(event)?;
        let l = self.list(stream)?;
        // SAFETY: the list and the event are live and ours.
        unsafe { result::append_wait(self.platform.api(), l, e) }
    }

    /// Wait on the host for everything queued on `stream`.
    pub(crate) fn synchronize(&self, stream: u64) -> Result<()> {
        let e = self.record(stream)?;
        // SAFETY: `e` was just recorded.
        let r = unsafe { result::event_host_synchronize(self.platform.api(), e as ze_event_handle_t) };
        self.release(e)?;
        r
    }

    pub(crate) fn synchronize_all(&self) -> Result<()> {
        let ids: Vec<u64> = lock(&self.lists).keys().copied().collect();
        ids.into_iter().try_for_each(|s| self.synchronize(s))
    }

    /// Copy `len` bytes on the default list and wait for it.
    ///
    /// # Safety
    /// `dst` and `src` must be valid for `len` bytes for the device (host
    /// memory or device memory the driver accepts).
    pub(crate) unsafe fn copy(&self, dst: *mut c_void, src: *const c_void, len: usize) -> Result<()> {
        let l = self.list(0)?;
        let e = self.new_event()?;
        let a = self.platform.api();
        // SAFETY: the caller guarantees the ranges; list and event are ours.
        let r = unsafe { result::append_copy(a, l, dst, src, len, e) }
            // SAFETY: the event is live.
            .and_then(|_| unsafe { result::event_host_synchronize(a, e) });
        self.release(e as u64)?;
        r
    }
}

impl Drop for Streams {
    fn drop(&mut self) {
        let a = self.platform.api();
        if let Err(e) = self.synchronize_all() {
            eprintln!("expanse-ze: device {}: synchronizing at shutdown: {e}", self.ordinal);
        }
        let ev = self.events.get_mut().unwrap_or_else(|e| e.into_inner());
        if !ev.live.is_empty() {
            eprintln!("expanse-ze: device {}: {} event(s) never released", self.ordinal, ev.live.len());
        }
        for e in ev.live.keys() {
            // SAFETY: live events of ours; nothing runs any more.
            let _ = unsafe { result::event_destroy(a, *e as ze_event_handle_t) };
        }
        for (p, _) in &ev.pools {
            // SAFETY: every event of the pool was destroyed above.
            if let Err(e) = unsafe { result::event_pool_destroy(a, *p as ze_event_pool_handle_t) } {
                eprintln!("expanse-ze: zeEventPoolDestroy failed: {e}");
            }
        }
        for l in lock(&self.lists).values() {
            // SAFETY: the lists are ours and idle after the synchronize.
            if let Err(e) = unsafe { result::list_destroy(a, *l as ze_command_list_handle_t) } {
                eprintln!("expanse-ze: zeCommandListDestroy failed: {e}");
            }
        }
    }
}
