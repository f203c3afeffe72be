//! **A test driver, not a GPU driver.** `libexpanse_ze_fake.so` implements
//! the Level Zero calls expanse's `ze` backend makes, on host memory, so the
//! backend can be proven where no Intel GPU is reachable:
//!
//! - one or two "devices" (`EXPANSE_ZE_FAKE_DEVICES`), each a region of one
//!   sparse memfd (`EXPANSE_ZE_FAKE_MEMORY` bytes each, default 143771 MiB;
//!   untouched memory costs no RAM), page size `EXPANSE_ZE_FAKE_PAGE`
//!   (default 2 MiB), peer access between them unless
//!   `EXPANSE_ZE_FAKE_NO_P2P=1`;
//! - the API's rules checked on every call (page-aligned sizes, addresses
//!   and offsets; maps only inside reservations; no double map; access only
//!   on mapped ranges; a device touches memory only if it owns it or the
//!   range was made resident on it; descriptors' `stype`; live handles) with
//!   the error code the spec names, never a crash;
//! - failure injection: `EXPANSE_ZE_FAKE_FAIL=zeName:N[,...]` (the N-th call
//!   fails) or the exported hook `expanse_ze_fake_fail`;
//! - two ways in: as a real driver that Intel's loader loads
//!   (`ZE_ENABLE_ALT_DRIVERS=/path/libexpanse_ze_fake.so`, see [`ddi`]), or
//!   directly (`EXPANSE_ZE_LIBRARY=/path/libexpanse_ze_fake.so`): the same
//!   `ze*` symbols are exported.
//!
//! Command lists run each command when it is appended, so every event is
//! signalled as soon as its signal is appended.

pub mod api;
pub mod ddi;
mod model;

pub use model::LiveCounts;
