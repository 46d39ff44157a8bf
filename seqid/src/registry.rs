//! Process-wide state, one entry per sequence and database: the allocators that share
//! round trips and blocks between every task of the process.
//!
//! Entries are keyed by database *name*: the driver gives a `Client` no identity to key
//! by. A process that talks to two deployments must not use the same database name,
//! counters collection and sequence on both (the README says so).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::Ordering;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use mongodb::Database;

use crate::allocator::{Allocator, Tally};
use crate::optimistic::Optimistic;
use crate::{Sequence, Strategy};

/// What this process has done for one sequence in one database, from
/// [`Document::stats`](crate::Document::stats).
///
/// ```
/// let stats = seqid::Stats::default();
/// assert_eq!(stats.reservations, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Round trips that reserved ids: `$inc` on the counter, or (optimistic) queries for
    /// the largest `_id`.
    pub reservations: u64,
    /// Ids handed out to inserts.
    pub ids: u64,
    /// Retries: duplicate `_id`s met by the optimistic loop, and counter upserts that
    /// raced with another first use of the sequence.
    pub retries: u64,
}

impl From<&Tally> for Stats {
    fn from(tally: &Tally) -> Self {
        Stats {
            reservations: tally.reservations.load(Ordering::Relaxed),
            ids: tally.ids.load(Ordering::Relaxed),
            retries: tally.retries.load(Ordering::Relaxed),
        }
    }
}

/// A counter document, and how many ids one round trip reserves at least.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct CounterKey {
    counters: &'static str,
    sequence: &'static str,
    chunk: u64,
}

/// A target collection served by the optimistic loop.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct CollectionKey {
    collection: &'static str,
}

/// Entries by database name, then by a key of `'static` parts: a lookup on the insert
/// path borrows the name and allocates nothing.
struct Registry<K, V>(LazyLock<Mutex<ByDatabase<K, V>>>);

type ByDatabase<K, V> = HashMap<String, HashMap<K, Arc<V>>>;

impl<K: Eq + Hash, V> Registry<K, V> {
    const fn new() -> Self {
        Registry(LazyLock::new(Default::default))
    }

    fn get_or_insert(&self, db: &Database, key: K, make: impl FnOnce() -> V) -> Arc<V> {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = map.get(db.name()).and_then(|entries| entries.get(&key)) {
            return entry.clone();
        }
        let entries = map.entry(db.name().to_owned()).or_default();
        entries
            .entry(key)
            .or_insert_with(|| Arc::new(make()))
            .clone()
    }

    fn get(&self, db: &Database, key: &K) -> Option<Arc<V>> {
        let map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(db.name())?.get(key).cloned()
    }
}

static COUNTERS: Registry<CounterKey, Allocator> = Registry::new();
static COLLECTIONS: Registry<CollectionKey, Optimistic> = Registry::new();

/// How many ids one reservation takes at least: the block size for the block strategy,
/// 1 (exactly what is asked) otherwise.
pub(crate) fn chunk(strategy: Strategy) -> u64 {
    match strategy {
        Strategy::Block { block_size } => block_size.into(),
        _ => 1,
    }
}

fn counter_key(seq: &Sequence) -> CounterKey {
    CounterKey {
        counters: seq.counters,
        sequence: seq.name,
        chunk: chunk(seq.strategy),
    }
}

fn collection_key(seq: &Sequence) -> CollectionKey {
    CollectionKey {
        collection: seq.collection,
    }
}

/// The allocator of the sequence's counter document (counters and block strategies).
pub(crate) fn counter(db: &Database, seq: &Sequence) -> Arc<Allocator> {
    let key = counter_key(seq);
    COUNTERS.get_or_insert(db, key, || Allocator::new(key.chunk))
}

/// The optimistic loop's state for the sequence's target collection.
pub(crate) fn collection(db: &Database, seq: &Sequence) -> Arc<Optimistic> {
    COLLECTIONS.get_or_insert(db, collection_key(seq), Optimistic::new)
}

pub(crate) fn stats(db: &Database, seq: &Sequence) -> Stats {
    let tally = match seq.strategy {
        Strategy::Optimistic { .. } => COLLECTIONS
            .get(db, &collection_key(seq))
            .map(|state| Stats::from(&state.allocator.tally)),
        _ => COUNTERS
            .get(db, &counter_key(seq))
            .map(|allocator| Stats::from(&allocator.tally)),
    };
    tally.unwrap_or_default()
}
