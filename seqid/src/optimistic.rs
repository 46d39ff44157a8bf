//! The optimistic loop: the largest numeric `_id` plus one, inserted, retried on a
//! duplicate `_id`. No counters collection.
//!
//! Tasks of one process do not race each other: callers waiting at the same moment
//! share one maximum query (through the [`Allocator`]) and get distinct candidates, and
//! a new candidate is always above every candidate of this process still in flight. So
//! duplicates arise only against other processes or writers, and each costs a retry.
//!
//! Candidates also stay above every id this process stored or found taken, so the loop
//! makes progress even when the maximum query lags behind the writes that beat it (a
//! lagging read, or a server whose `_id` order is not MongoDB's).

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mongodb::Collection;
use mongodb::bson::{Bson, Document as BsonDocument, doc};

use crate::allocator::{Allocator, Source, Tally};
use crate::{Error, Sequence, numeric, write};

/// Backoff between attempts: random in `0 ..= min(MAX, BASE * 2^attempt)` ("full jitter").
const BACKOFF_BASE: Duration = Duration::from_millis(1);
const BACKOFF_MAX: Duration = Duration::from_millis(100);

/// The loop's state for one target collection, shared by the whole process.
pub(crate) struct Optimistic {
    pub(crate) allocator: Allocator,
    frontier: Mutex<Frontier>,
}

#[derive(Default)]
struct Frontier {
    /// Candidates handed out whose insert has not finished.
    in_flight: BTreeSet<i64>,
    /// The largest id this process stored or found taken by another writer.
    floor: Option<i64>,
    /// Bumped whenever `floor` rises: a query that started after that has seen its id.
    epoch: u64,
    /// The collection holds non-numeric `_id`s, which sort above numbers.
    mixed_ids: bool,
}

impl Optimistic {
    pub(crate) fn new() -> Self {
        Optimistic {
            allocator: Allocator::new(1),
            frontier: Mutex::default(),
        }
    }

    fn frontier(&self) -> MutexGuard<'_, Frontier> {
        self.frontier.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Candidate ids for `count` documents, registered as in flight until the returned
    /// guard is dropped or told which were stored.
    pub(crate) async fn candidates<'a>(
        &'a self,
        collection: &Collection<BsonDocument>,
        seq: &Sequence,
        count: usize,
    ) -> Result<InFlight<'a>, Error> {
        let source = MaxSource {
            state: self,
            collection,
            seq,
        };
        let ids = self.allocator.allocate(count as u64, &source).await?;
        Ok(InFlight { state: self, ids })
    }

    /// The largest numeric `_id`, or `None` if there is none.
    ///
    /// An unfiltered descending sort on `_id` reads one index entry; it finds the maximum
    /// unless non-numeric ids (which sort above numbers) exist. Then a query bounded to
    /// numbers (`$lte: Infinity`, type-bracketed, so also one index entry on MongoDB) is
    /// used, and remembered for this collection.
    async fn largest_id(
        &self,
        collection: &Collection<BsonDocument>,
    ) -> mongodb::error::Result<Option<Bson>> {
        if !self.frontier().mixed_ids {
            let top = collection
                .find_one(doc! {})
                .sort(doc! { "_id": -1 })
                .projection(doc! { "_id": 1 })
                .selection_criteria(write::PRIMARY)
                .await?;
            let Some(id) = top.and_then(|mut top| top.remove("_id")) else {
                return Ok(None);
            };
            if numeric::floor(&id).is_some() {
                return Ok(Some(id));
            }
            self.frontier().mixed_ids = true;
        }
        write::largest_numeric_id(collection).await
    }
}

/// One maximum query serves every caller queued at that moment.
struct MaxSource<'a> {
    state: &'a Optimistic,
    collection: &'a Collection<BsonDocument>,
    seq: &'a Sequence,
}

impl Source for MaxSource<'_> {
    async fn reserve(&self, amount: u64, _: &Tally) -> Result<i64, Error> {
        let epoch_before = self.state.frontier().epoch;
        let stored = self
            .state
            .largest_id(self.collection)
            .await
            .map_err(|error| {
                Error::driver(
                    self.seq.name,
                    format!("finding the largest _id in `{}`", self.seq.collection),
                    error,
                )
            })?;
        let largest = stored.as_ref().and_then(numeric::floor);
        let mut frontier = self.state.frontier();
        if largest.is_none() && frontier.epoch == epoch_before {
            // Emptied (say, dropped) since the floor was raised: start again at 1.
            frontier.floor = None;
        }
        let base = [largest, frontier.floor, frontier.in_flight.last().copied()]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(0);
        let overflow = || Error::Overflow {
            sequence: self.seq.name.to_owned(),
            value: i128::from(base) + i128::from(amount),
            target: "i64",
            origin: match &stored {
                Some(id) if largest == Some(base) => format!(
                    "one above the largest numeric _id in `{}`, which is {}",
                    self.seq.collection,
                    numeric::shown(id)
                ),
                _ => "one above the ids this process stored or holds in flight".into(),
            },
        };
        let last = i64::try_from(amount)
            .ok()
            .and_then(|n| base.checked_add(n))
            .ok_or_else(overflow)?;
        frontier.in_flight.extend(base + 1..=last);
        Ok(base + 1)
    }
}

/// Candidates being inserted. Whatever is not reported stored is released on drop, also
/// when the insert's future is cancelled.
pub(crate) struct InFlight<'a> {
    state: &'a Optimistic,
    pub(crate) ids: Vec<i64>,
}

impl InFlight<'_> {
    /// Records the candidates that were stored, or taken by another writer, and releases
    /// all of them.
    pub(crate) fn finish(self, used: impl IntoIterator<Item = i64>) {
        if let Some(max) = used.into_iter().max() {
            let mut frontier = self.state.frontier();
            frontier.floor = frontier.floor.max(Some(max));
            frontier.epoch += 1;
        }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut frontier = self.state.frontier();
        for id in &self.ids {
            frontier.in_flight.remove(id);
        }
    }
}

/// Waits before attempt `attempt` (2, 3, ...), so that writers that collided spread out.
pub(crate) async fn backoff(attempt: u32) {
    let cap = BACKOFF_BASE
        .saturating_mul(1 << attempt.min(16))
        .min(BACKOFF_MAX);
    let wait = rand::random_range(Duration::ZERO..=cap);
    tokio::time::sleep(wait).await;
}
