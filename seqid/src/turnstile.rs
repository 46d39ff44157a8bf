//! The turnstile of bare optimistic inserts: the tasks of one process inserting through
//! a bare `mongodb::Database` into one sequence's scope take turns, one attempt (the
//! maximum read and the insert) at a time, first come first served, so that no task of
//! the process reads the maximum while another's insert is under way. A task that lost
//! its id goes back in line: keeping the turn through its wait would make the others
//! wait for its whole loop (BENCHMARKS.md, *Uncoordinated optimistic writers*, has what
//! that cost).
//!
//! Why: through a bare database nothing is shared between calls (the driver cannot say
//! which deployment a database belongs to, so no candidate or frontier may be shared),
//! and the tasks of a process would race each other for the same next id, losing all but
//! one attempt each round and coming back unevenly. Taking turns shares no id and no
//! state about the collection, only who goes next: two deployments that happen to hold a
//! sequence of the same name share a turnstile, which costs them order, never an id.
//! Other processes still race; the learned wait (`retry`) spreads those retries.
//!
//! A turn is waited for at most the call's patience ([`Tries::patience`], half what is
//! left of its budget): a write that hangs holds the others back no longer, and they go
//! on racing as without a turnstile.
//!
//! [`Tries::patience`]: crate::retry::Tries::patience

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::Sequence;
use crate::scope::Scope;

/// A sequence's scope, by what names it: its name, collection and field, and the scope.
type Gate = (&'static str, &'static str, &'static str, Scope);

/// Every turnstile in use in the process. An entry lives while a caller holds or waits
/// for its turn; dead entries are swept when a new one is made.
fn gates() -> &'static Mutex<HashMap<Gate, Weak<Semaphore>>> {
    static GATES: OnceLock<Mutex<HashMap<Gate, Weak<Semaphore>>>> = OnceLock::new();
    GATES.get_or_init(Mutex::default)
}

/// The caller's turn at the turnstile of `seq` in `scope`, held until dropped; `None` if
/// it did not come within `patience` (the caller then goes on without it).
pub(crate) async fn turn(
    seq: &'static Sequence,
    scope: &Scope,
    patience: Duration,
) -> Option<OwnedSemaphorePermit> {
    let semaphore = {
        let mut gates = gates().lock().unwrap_or_else(PoisonError::into_inner);
        let gate = (seq.name, seq.collection, seq.field, scope.clone());
        match gates.get(&gate).and_then(Weak::upgrade) {
            Some(semaphore) => semaphore,
            None => {
                gates.retain(|_, semaphore| semaphore.strong_count() > 0);
                let semaphore = Arc::new(Semaphore::new(1));
                gates.insert(gate, Arc::downgrade(&semaphore));
                semaphore
            }
        }
    };
    // Tokio's semaphore is fair: turns come in the order they were asked for.
    tokio::time::timeout(patience, semaphore.acquire_owned())
        .await
        .ok()?
        .ok()
}

/// How many turnstiles of the sequence `name` the process keeps (for tests).
#[cfg(test)]
fn kept(name: &str) -> usize {
    let gates = gates().lock().unwrap_or_else(PoisonError::into_inner);
    gates
        .iter()
        .filter(|(gate, semaphore)| gate.0 == name && semaphore.strong_count() > 0)
        .count()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::sequence::construct::optimistic;
    use crate::sequence::testing::on_id;

    const SEQ: Sequence = on_id("turns", "turns", optimistic(None, None));

    /// One turn at a time, in the order asked; a caller whose turn does not come within
    /// its patience goes without; turnstiles no one holds are not kept.
    #[tokio::test(start_paused = true)]
    async fn turns_come_one_at_a_time_in_order() {
        let scope = Scope::default();
        let first = turn(&SEQ, &scope, Duration::from_secs(1)).await;
        assert!(first.is_some());
        // A caller that cannot wait long goes without a turn.
        assert!(
            turn(&SEQ, &scope, Duration::from_millis(10))
                .await
                .is_none()
        );
        let order = Arc::new(Mutex::new(Vec::new()));
        let waiters: Vec<_> = (0..3)
            .map(|n| {
                let order = Arc::clone(&order);
                let scope = scope.clone();
                tokio::spawn(async move {
                    let turn = turn(&SEQ, &scope, Duration::from_secs(5)).await;
                    order.lock().unwrap().push(n);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    drop(turn.expect("a turn within 5 s"));
                })
            })
            .collect();
        // Each waiter asks in turn before the first turn ends.
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        drop(first);
        for waiter in waiters {
            waiter.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2]);
        assert_eq!(kept(SEQ.name), 0);
    }
}
