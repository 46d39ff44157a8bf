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
#[derive(Clone, PartialEq, Eq, Hash)]
struct CounterKey {
    database: String,
    counters: &'static str,
    sequence: &'static str,
    chunk: u64,
}

/// A target collection served by the optimistic loop.
#[derive(Clone, PartialEq, Eq, Hash)]
struct CollectionKey {
    database: String,
    collection: &'static str,
}

struct Registry<K, V>(LazyLock<Mutex<HashMap<K, Arc<V>>>>);

impl<K: Eq + Hash, V> Registry<K, V> {
    const fn new() -> Self {
        Registry(LazyLock::new(Default::default))
    }

    fn get_or_insert(&self, key: K, make: impl FnOnce() -> V) -> Arc<V> {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        map.entry(key).or_insert_with(|| Arc::new(make())).clone()
    }

    fn get(&self, key: &K) -> Option<Arc<V>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }
}

static COUNTERS: Registry<CounterKey, Allocator> = Registry::new();
static COLLECTIONS: Registry<CollectionKey, Optimistic> = Registry::new();

fn counter_key(db: &Database, seq: &Sequence, chunk: u64) -> CounterKey {
    CounterKey {
        database: db.name().to_owned(),
        counters: seq.counters,
        sequence: seq.name,
        chunk,
    }
}

fn collection_key(db: &Database, seq: &Sequence) -> CollectionKey {
    CollectionKey {
        database: db.name().to_owned(),
        collection: seq.collection,
    }
}

/// The allocator of a counters document; `chunk` is 1 for the counters strategy and the
/// block size for the block strategy.
pub(crate) fn counter(db: &Database, seq: &Sequence, chunk: u64) -> Arc<Allocator> {
    COUNTERS.get_or_insert(counter_key(db, seq, chunk), || Allocator::new(chunk))
}

/// The optimistic loop's state for the sequence's target collection.
pub(crate) fn collection(db: &Database, seq: &Sequence) -> Arc<Optimistic> {
    COLLECTIONS.get_or_insert(collection_key(db, seq), Optimistic::new)
}

pub(crate) fn stats(db: &Database, seq: &Sequence) -> Stats {
    let tally = |allocator: &Allocator| Stats::from(&allocator.tally);
    match seq.strategy {
        Strategy::Counters => COUNTERS.get(&counter_key(db, seq, 1)).map(|a| tally(&a)),
        Strategy::Block { block_size } => COUNTERS
            .get(&counter_key(db, seq, block_size.into()))
            .map(|a| tally(&a)),
        Strategy::Optimistic { .. } => COLLECTIONS
            .get(&collection_key(db, seq))
            .map(|o| tally(&o.allocator)),
    }
    .unwrap_or_default()
}
