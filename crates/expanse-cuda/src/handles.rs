//! Owned driver handles: the primary context, streams and events. Each
//! value owns its handle and releases it in `Drop`; a failure there is
//! recorded on the context ([`Context::take_errors`]), never a panic.
//! Holding the value is what discharges the `# Safety` obligations of the
//! [`result`] functions that take the raw handle.

use std::sync::{Arc, Mutex};

use expanse_device::{DeviceError, Result};

use crate::result;
use crate::sys::{CUcontext, CUdevice, CUevent, CUstream, Driver};

/// A retained primary context of one device.
pub struct Context {
    driver: Arc<Driver>,
    dev: CUdevice,
    raw: CUcontext,
    errors: Mutex<Vec<DeviceError>>,
}

// SAFETY: a CUcontext is a process-wide driver object, not tied to the
// thread that retained it: the driver API lets any thread make it current
// (`cuCtxSetCurrent`) and call into it, and the primary context is shared
// by the whole process (it is the one the runtime and PyTorch use). We never
// rely on it being current on a particular thread: every use goes through
// `enter`, which makes it current on the calling thread first. The driver
// serialises its own internal state, so `&Context` may be used from several
// threads at once, and the retain is released exactly once, in `Drop`.
unsafe impl Send for Context {}
// SAFETY: as for `Send`: all methods take `&self` and only pass the handle
// to the thread-safe driver; `errors` is behind a mutex.
unsafe impl Sync for Context {}

impl Context {
    /// Retain the primary context of `dev`.
    pub fn retain_primary(driver: Arc<Driver>, dev: CUdevice) -> Result<Arc<Context>> {
        let raw = result::primary_ctx_retain(&driver, dev)?;
        Ok(Arc::new(Context { driver, dev, raw, errors: Mutex::new(Vec::new()) }))
    }

    /// Make the context current on this thread until the returned guard
    /// drops, which makes the caller's context current again: expanse
    /// never leaves another device's context current behind it (the
    /// runtime, NCCL and PyTorch read the current device from it).
    pub fn enter(&self) -> Result<Current<'_>> {
        let prev = result::get_current(&self.driver)?;
        if prev != self.raw {
            // SAFETY: `raw` stays retained until `Drop`.
            unsafe { result::set_current(&self.driver, self.raw)? };
        }
        Ok(Current { ctx: self, prev })
    }

    /// The driver, without making the context current (for calls that do
    /// not need one: device queries, error strings).
    pub fn driver(&self) -> &Driver {
        &self.driver
    }

    /// The device this context belongs to.
    pub fn device(&self) -> CUdevice {
        self.dev
    }

    /// The raw context, valid while `self` lives.
    pub fn raw(&self) -> CUcontext {
        self.raw
    }

    /// Record an error met where it could not be returned (a `Drop`).
    pub fn record_error(&self, e: DeviceError) {
        self.errors.lock().unwrap_or_else(|p| p.into_inner()).push(e);
    }

    /// The errors recorded so far, oldest first; forgets them.
    pub fn take_errors(&self) -> Vec<DeviceError> {
        std::mem::take(&mut *self.errors.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        for e in self.take_errors() {
            eprintln!("expanse-cuda: device {}: {e}", self.dev);
        }
        // SAFETY: we hold exactly one retain, given up here; every stream and
        // event holds an `Arc<Context>`, so none outlives this.
        if let Err(e) = unsafe { result::primary_ctx_release(&self.driver, self.dev) } {
            eprintln!("expanse-cuda: releasing the primary context of device {}: {e}", self.dev);
        }
    }
}

/// This thread's context made current by [`Context::enter`]; derefs to the
/// driver. Dropping it makes the context that was current before current
/// again (a failure is recorded on the context, never a panic).
pub struct Current<'a> {
    ctx: &'a Context,
    prev: CUcontext,
}

impl std::ops::Deref for Current<'_> {
    type Target = Driver;

    fn deref(&self) -> &Driver {
        &self.ctx.driver
    }
}

impl Drop for Current<'_> {
    fn drop(&mut self) {
        if self.prev == self.ctx.raw {
            return;
        }
        // SAFETY: `prev` was current on this thread when `enter` ran, so the
        // caller holds it (or it is null, which unbinds the thread); the
        // driver accepts making it current again.
        if let Err(e) = unsafe { result::set_current(&self.ctx.driver, self.prev) } {
            self.ctx.record_error(e);
        }
    }
}

/// A stream of one context: the legacy default stream, one we created
/// (destroyed on drop) or one the caller lent us (never destroyed).
pub struct Stream {
    ctx: Arc<Context>,
    raw: CUstream,
    owned: bool,
}

// SAFETY: a CUstream belongs to its context, not to a thread: any thread
// with the context current may queue work on it, wait on it or destroy it
// (every use here enters the context first), and the driver serialises
// concurrent use of one stream.
unsafe impl Send for Stream {}
// SAFETY: as for `Send`; all methods take `&self` except the one-time
// destruction.
unsafe impl Sync for Stream {}

impl Stream {
    /// The legacy default stream (the null handle).
    pub fn legacy_default(ctx: &Arc<Context>) -> Stream {
        Stream { ctx: Arc::clone(ctx), raw: std::ptr::null_mut(), owned: false }
    }

    /// A new non-blocking stream, destroyed on drop.
    pub fn create(ctx: &Arc<Context>) -> Result<Stream> {
        let raw = result::stream_create(&*ctx.enter()?)?;
        Ok(Stream { ctx: Arc::clone(ctx), raw, owned: true })
    }

    /// A stream of the caller's, used but never destroyed.
    ///
    /// # Safety
    /// `raw` must be null or a live stream of `ctx`'s context, and stay
    /// live as long as the returned value (or anything it is used for) is.
    pub unsafe fn borrowed(ctx: &Arc<Context>, raw: CUstream) -> Stream {
        Stream { ctx: Arc::clone(ctx), raw, owned: false }
    }

    /// The raw handle (null for the legacy default stream).
    pub fn raw(&self) -> CUstream {
        self.raw
    }

    /// Wait on the host until the stream's work completed.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: `self.raw` is null or live while `self` is (created here,
        // or guaranteed by `borrowed`'s caller), and of this context.
        unsafe { result::stream_synchronize(&*self.ctx.enter()?, self.raw) }
    }

    /// Order the stream's later work after `event` (no host wait).
    pub fn wait(&self, event: &Event) -> Result<()> {
        // SAFETY: both handles are live while their owners are; the event
        // belongs to the same context (devices keep one context each).
        unsafe { result::stream_wait_event(&*self.ctx.enter()?, self.raw, event.raw) }
    }

    /// Destroy an owned stream now, returning the driver's verdict (drop
    /// records it instead).
    pub fn destroy(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        if !self.owned {
            return Ok(());
        }
        self.owned = false;
        // SAFETY: we created the stream, it is live and no other value owns
        // it; `owned` is cleared first so it is destroyed once.
        unsafe { result::stream_destroy(&*self.ctx.enter()?, self.raw) }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            self.ctx.record_error(e);
        }
    }
}

/// An event recorded on a stream, destroyed on drop.
pub struct Event {
    ctx: Arc<Context>,
    raw: CUevent,
}

// SAFETY: a CUevent belongs to its context, not to a thread; every use
// enters the context first, and the driver serialises concurrent queries.
unsafe impl Send for Event {}
// SAFETY: as for `Send`; all methods take `&self`.
unsafe impl Sync for Event {}

impl Event {
    /// A new event in `ctx`, recording nothing yet.
    pub fn create(ctx: &Arc<Context>) -> Result<Event> {
        let d = ctx.enter()?;
        Ok(Event { ctx: Arc::clone(ctx), raw: result::event_create(&d)? })
    }

    /// A new event recording the work queued on `stream` so far.
    pub fn record(stream: &Stream) -> Result<Event> {
        let event = Event::create(&stream.ctx)?;
        event.record_on(stream)?;
        Ok(event)
    }

    /// Record the work queued on `stream` so far, replacing what the event
    /// recorded before. (A stream that waited on the event before keeps
    /// waiting on the earlier record only: `cuStreamWaitEvent` takes the
    /// event's state when called, so an event may be recorded again once
    /// every wait on it was queued.)
    pub fn record_on(&self, stream: &Stream) -> Result<()> {
        let d = stream.ctx.enter()?;
        // SAFETY: the event is live while `self` is, and the stream while
        // `stream` is; both belong to the context entered.
        unsafe { result::event_record(&d, self.raw, stream.raw) }
    }

    /// Whether the recorded work completed.
    pub fn query(&self) -> Result<bool> {
        // SAFETY: the event is live while `self` is.
        unsafe { result::event_query(&*self.ctx.enter()?, self.raw) }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        let r = self.ctx.enter().and_then(|d| {
            // SAFETY: we own the live event and give it up once, here.
            unsafe { result::event_destroy(&d, self.raw) }
        });
        if let Err(e) = r {
            self.ctx.record_error(e);
        }
    }
}
