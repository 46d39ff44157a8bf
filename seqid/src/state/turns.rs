//! The turns the calls of one process take, first come first served: per sequence's
//! scope, bare optimistic inserts ([`scope_turn`]); per natural key or draft,
//! `find_or_insert` and `number_draft` ([`key_turn`]); and, with the same [`Lines`], the
//! items' appends per array (`items::rounds`). A turn shares no id and no state, only who
//! goes next.
//!
//! Per scope: the tasks of one process inserting through
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
//! sequence of the same name share a line, which costs them order, never an id.
//! Other processes still race; the learned wait (`retry`) spreads those retries.
//!
//! A turn is waited for at most the call's patience ([`Tries::patience`], half what is
//! left of its budget): a write that hangs holds the others back no longer, and they go
//! on racing as without turns.
//!
//! Per key, the same mechanism serves [`find_or_insert`](crate::Document::find_or_insert): the
//! calls of one process for one natural key (one value of it, in one collection of one
//! database) take turns, each its lookup and its insert, so that a key new to the
//! database is inserted by the first and found by the others, which take no id: racing
//! them would cost every loser an id (a gap with the counters strategy), and with the
//! optimistic strategy a candidate that a higher one may overtake. Other processes still
//! race, and the key's unique index settles it. Through a handle or a bare database alike:
//! a turn shares no state, only who goes next, so two deployments with the same names
//! share turns at the cost of order, never of an id.
//!
//! [`Tries::patience`]: crate::base::retry::Tries::patience

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Duration;

use mongodb::bson::Document as BsonDocument;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::base::lock;
use crate::fields::scope::Scope;
use crate::schema::sequence::Sequence;

/// A sequence's scope, by what names it: its name, collection and field, and the scope.
type ScopeLine = (&'static str, &'static str, &'static str, Scope);

/// A natural key's value in a collection of a database: the database's name, the
/// collection, and the key's equality filter as BSON bytes.
type KeyLine = (String, &'static str, Vec<u8>);

/// The lines of one kind in use in the process, by what they guard: the turns' (of
/// [`Semaphore`]s), or the gapless counters' commit queues
/// ([`crate::counter::commit_queue`]). An entry lives while its line does (a caller holds
/// or waits for its turn); dead entries are swept when a new one is made.
pub(crate) struct Lines<K, V>(OnceLock<Mutex<HashMap<K, Weak<V>>>>);

impl<K: Eq + Hash, V> Lines<K, V> {
    pub(crate) const fn new() -> Self {
        Lines(OnceLock::new())
    }

    /// The line of `key`: the one in use, else a new one that `make` makes.
    pub(crate) fn line(&self, key: K, make: impl FnOnce() -> V) -> Arc<V> {
        let mut lines = self.lines();
        if let Some(line) = lines.get(&key).and_then(Weak::upgrade) {
            return line;
        }
        lines.retain(|_, line| line.strong_count() > 0);
        let line = Arc::new(make());
        lines.insert(key, Arc::downgrade(&line));
        line
    }

    fn lines(&self) -> MutexGuard<'_, HashMap<K, Weak<V>>> {
        lock(self.0.get_or_init(Mutex::default))
    }
}

impl<K: Eq + Hash> Lines<K, Semaphore> {
    /// The caller's turn in the line of `key`, kept until dropped; `None` if it did
    /// not come within `patience` (the caller then goes on without it).
    pub(crate) async fn turn(&self, key: K, patience: Duration) -> Option<OwnedSemaphorePermit> {
        let semaphore = self.line(key, || Semaphore::new(1));
        // Tokio's semaphore is fair: turns come in the order they were asked for.
        tokio::time::timeout(patience, semaphore.acquire_owned())
            .await
            .ok()?
            .ok()
    }
}

/// The lines of bare optimistic inserts.
static SCOPES: Lines<ScopeLine, Semaphore> = Lines::new();

/// The lines of `find_or_insert`'s keys and `number_draft`'s drafts.
static KEYS: Lines<KeyLine, Semaphore> = Lines::new();

/// The caller's turn in the line of `seq` in `scope`, held until dropped; `None` if
/// it did not come within `patience` (the caller then goes on without it).
pub(crate) async fn scope_turn(
    seq: &'static Sequence,
    scope: &Scope,
    patience: Duration,
) -> Option<OwnedSemaphorePermit> {
    let line = (seq.name, seq.collection, seq.field, scope.clone());
    SCOPES.turn(line, patience).await
}

/// The caller's turn for the natural key `filter` of `seq`'s collection in the database
/// `db`, held until dropped; `None` if it did not come within `patience`.
pub(crate) async fn key_turn(
    db: &str,
    seq: &'static Sequence,
    filter: &BsonDocument,
    patience: Duration,
) -> Option<OwnedSemaphorePermit> {
    let bytes = mongodb::bson::to_vec(filter).ok()?;
    KEYS.turn((db.to_owned(), seq.collection, bytes), patience)
        .await
}

#[cfg(test)]
impl<K: Eq + Hash, V> Lines<K, V> {
    /// How many entries that `which` selects are kept, and how many of them are in use.
    pub(crate) fn kept(&self, which: impl Fn(&K) -> bool) -> (usize, usize) {
        let lines = self.lines();
        let kept = lines.iter().filter(|(key, _)| which(key));
        let live = kept.clone().filter(|(_, line)| line.strong_count() > 0);
        (kept.count(), live.count())
    }
}

/// How many lines of the sequence `name` the process keeps (for tests).
#[cfg(test)]
fn kept(name: &str) -> usize {
    SCOPES.kept(|line| line.0 == name).1
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::schema::sequence::construct::optimistic;
    use crate::schema::sequence::testing::on_id;

    const SEQ: Sequence = on_id("turns", "turns", optimistic(None, None));

    /// One turn at a time, in the order asked; a caller whose turn does not come within
    /// its patience goes without; lines no one holds are not kept.
    #[tokio::test(start_paused = true)]
    async fn turns_come_one_at_a_time_in_order() {
        let scope = Scope::default();
        let first = scope_turn(&SEQ, &scope, Duration::from_secs(1)).await;
        assert!(first.is_some());
        // A caller that cannot wait long goes without a turn.
        assert!(
            scope_turn(&SEQ, &scope, Duration::from_millis(10))
                .await
                .is_none()
        );
        let order = Arc::new(Mutex::new(Vec::new()));
        let waiters: Vec<_> = (0..3)
            .map(|n| {
                let order = Arc::clone(&order);
                let scope = scope.clone();
                tokio::spawn(async move {
                    let turn = scope_turn(&SEQ, &scope, Duration::from_secs(5)).await;
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
