//! What every layer builds on, above the [schema](crate::schema): the error type, the
//! server's constants and numbers, what became of a write, and small tools (a detached
//! round trip, a transaction's end that survives a cut, a warning once, the backoff). They
//! import nothing above.

pub(crate) mod backoff;
pub(crate) mod bulk_error;
pub(crate) mod detach;
pub(crate) mod ending;
pub(crate) mod error;
pub(crate) mod fate;
pub(crate) mod future;
pub(crate) mod message;
pub(crate) mod next_step;
pub(crate) mod numeric;
pub(crate) mod once;
pub(crate) mod replaced;
pub(crate) mod retried;
pub(crate) mod retry;
pub(crate) mod server;
pub(crate) mod session;

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, poisoned or not: every update of the state under these locks leaves it
/// whole (no update panics half-way), so a lock a panic poisoned is still sound.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
