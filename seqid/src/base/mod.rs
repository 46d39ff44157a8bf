//! What every layer builds on, above the [schema](crate::schema): natural keys, the error
//! type, the server's constants and numbers, a batch's and a write's pure bookkeeping, and
//! small tools (a detached round trip, a transaction's end that survives a cut, a warning
//! once, the backoff). They import nothing above.

pub(crate) mod backoff;
pub(crate) mod batch;
pub(crate) mod bulk_error;
pub(crate) mod code;
pub(crate) mod companions;
pub(crate) mod declared;
pub(crate) mod detach;
pub(crate) mod ending;
pub(crate) mod error;
pub(crate) mod fate;
pub(crate) mod fields;
pub(crate) mod future;
pub(crate) mod item_fields;
pub(crate) mod message;
pub(crate) mod named;
pub(crate) mod natural;
pub(crate) mod next_step;
pub(crate) mod numeric;
pub(crate) mod once;
pub(crate) mod picked;
pub(crate) mod replaced;
pub(crate) mod reserved;
pub(crate) mod retried;
pub(crate) mod retry;
pub(crate) mod scope;
pub(crate) mod server;
pub(crate) mod session;
pub(crate) mod span;

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, poisoned or not: every update of the state under these locks leaves it
/// whole (no update panics half-way), so a lock a panic poisoned is still sound.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
