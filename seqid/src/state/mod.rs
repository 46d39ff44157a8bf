//! What calls share and keep: a call's context; the [`Sequences`](crate::Sequences) handle's
//! registry and the allocators, frontiers and writes left running it holds; the process's
//! turns and gapless commit queues. State only: the round trips that fill it are above.

pub(crate) mod allocator;
pub(crate) mod commit_queue;
pub(crate) mod context;
pub(crate) mod frontier;
pub(crate) mod known;
pub(crate) mod orphan;
pub(crate) mod pending;
pub(crate) mod registry;
pub(crate) mod reservations;
pub(crate) mod turns;

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, poisoned or not: every update of the state under these locks leaves it
/// whole (no update panics half-way), so a lock a panic poisoned is still sound.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
