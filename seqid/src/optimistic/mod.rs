//! The optimistic strategy: the largest numeric value of the sequence's field (in the
//! document's scope) plus one, inserted, retried on a duplicate key on the field's unique
//! index (`_id`'s, or the one on the scope fields and the field). No counters collection.
//! This module keeps the candidates, one state per scope; the loop that inserts them is
//! in [`insert`].
//!
//! Tasks sharing a [`Sequences`](crate::Sequences) handle do not race each other: callers
//! waiting at the same moment share one maximum query (through the [`Allocator`]) and get
//! distinct candidates, and a new candidate is always above every candidate of the handle
//! still in flight. So
//! duplicates arise only against other processes or writers, and each costs a retry.
//!
//! Candidates also stay above every id the handle stored or found taken, so the loop
//! makes progress even when the maximum query lags behind the writes that beat it (a
//! lagging read, or a server whose `_id` order is not MongoDB's).

pub(crate) mod insert;

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard, PoisonError};

use std::sync::Arc;

use mongodb::bson::Document as BsonDocument;
use mongodb::{ClientSession, Collection};

use crate::allocator::{Allocator, Source, Tally};
use crate::largest::{self, Ids};
use crate::scope::Scope;
use crate::sequences::Route;
use crate::session::Session;
use crate::{Error, Sequence, numeric};

/// The loop's state for one target collection, shared by the tasks of a
/// [`Sequences`](crate::Sequences) handle (or made for one call).
pub(crate) struct Optimistic {
    pub(crate) allocator: Arc<Allocator>,
    frontier: Mutex<Frontier>,
}

struct Frontier {
    /// Candidates handed out whose insert has not finished.
    in_flight: BTreeSet<i64>,
    /// The largest id stored here, or found taken by another writer.
    floor: Option<i64>,
    /// Bumped whenever `floor` rises: a query that started after that has seen its id.
    epoch: u64,
    /// Whether the collection holds non-numeric `_id`s, which sort above numbers.
    ids: Ids,
}

impl Default for Frontier {
    fn default() -> Self {
        Frontier {
            in_flight: BTreeSet::new(),
            floor: None,
            epoch: 0,
            ids: Ids::MaybeNumeric,
        }
    }
}

impl Optimistic {
    pub(crate) fn new() -> Self {
        Optimistic {
            allocator: Arc::new(Allocator::new(1)),
            frontier: Mutex::default(),
        }
    }

    /// How many candidates are handed out to inserts that have not finished. Candidates
    /// of callers cancelled before they took them wait in the allocator's live block for
    /// the next callers: still kept from other reservations, but not handed out.
    pub(crate) fn in_flight(&self) -> u64 {
        let registered = self.frontier().in_flight.len() as u64;
        registered.saturating_sub(self.allocator.unused())
    }

    fn frontier(&self) -> MutexGuard<'_, Frontier> {
        self.frontier.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Candidate ids for `count` documents, registered as in flight until the returned
    /// guard is dropped or told which were stored. Inside the caller's transaction, the
    /// maximum is read in it (its snapshot), by this caller alone.
    pub(crate) async fn candidates(
        self: &Arc<Self>,
        collection: &Collection<BsonDocument>,
        seq: &Sequence,
        scope: &Scope,
        count: usize,
        session: &mut Session<'_>,
    ) -> Result<Arc<InFlight>, Error> {
        let ids = if session.in_transaction() {
            let first = self
                .reserve(collection, seq, scope, count as u64, session.join())
                .await?;
            (0..count as i64).map(|i| first + i).collect()
        } else {
            let source = || MaxSource {
                state: Arc::clone(self),
                collection: collection.clone(),
                seq: *seq,
                scope: scope.clone(),
            };
            self.allocator.allocate(count as u64, source).await?
        };
        Ok(Arc::new(InFlight {
            state: Arc::clone(self),
            ids,
        }))
    }

    /// Reserves `amount` candidates above the largest numeric `_id` and every candidate
    /// in flight, and returns the first.
    async fn reserve(
        &self,
        collection: &Collection<BsonDocument>,
        seq: &Sequence,
        scope: &Scope,
        amount: u64,
        session: Option<&mut ClientSession>,
    ) -> Result<i64, Error> {
        let epoch_before = self.frontier().epoch;
        let known = self.frontier().ids;
        let (stored, ids) = largest::numeric_id(collection, seq, scope, known, session).await?;
        let largest = stored.as_ref().and_then(numeric::floor);
        let mut frontier = self.frontier();
        frontier.ids = ids;
        if largest.is_none() && frontier.epoch == epoch_before {
            // Emptied (say, dropped) since the floor was raised: start again at 1.
            frontier.floor = None;
        }
        // Never below the first id (`start`), whatever the collection holds.
        let base = [largest, frontier.floor, frontier.in_flight.last().copied()]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(0)
            .max(seq.start - 1);
        let overflow = || Error::Overflow {
            sequence: seq.name.to_owned(),
            value: i128::from(base) + i128::from(amount),
            target: "i64",
            origin: match &stored {
                Some(id) if largest == Some(base) => format!(
                    "one above the largest numeric {} in `{}`{}, which is {}",
                    seq.field,
                    seq.collection,
                    scope.in_scope(),
                    numeric::shown(id)
                ),
                _ => "one above the ids stored or held in flight by this process".into(),
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

/// The loop's state for a call: the handle's, shared by its tasks; or, inside the
/// caller's transaction, or through a bare database, one made for the call (a transaction
/// reads the maximum in its own snapshot, which no other caller shares).
pub(crate) fn state(
    route: Route<'_>,
    seq: &Sequence,
    scope: &Scope,
    session: &Session<'_>,
) -> Arc<Optimistic> {
    match session.in_transaction() {
        true => Arc::new(Optimistic::new()),
        false => route.collection(seq, scope),
    }
}

/// One maximum query serves every caller queued at that moment. It owns what it needs:
/// it runs in the allocator's flusher.
struct MaxSource {
    state: Arc<Optimistic>,
    collection: Collection<BsonDocument>,
    seq: Sequence,
    scope: Scope,
}

impl Source for MaxSource {
    async fn reserve(&self, amount: u64, _: &Tally) -> Result<i64, Error> {
        self.state
            .reserve(&self.collection, &self.seq, &self.scope, amount, None)
            .await
    }

    fn interrupted(&self) -> Error {
        crate::counted::counter::interrupted(&self.seq, &self.scope)
    }
}

/// Candidates being inserted, shared by the insert and the writes it sends: they are
/// released when both are done with them, so that a write left running by a cancelled
/// insert keeps its candidate from every other insert of the handle until it ends (two
/// writes of one id by one handle would be told apart by nothing but their content).
pub(crate) struct InFlight {
    state: Arc<Optimistic>,
    pub(crate) ids: Vec<i64>,
}

impl InFlight {
    /// Records the candidates that were stored, or taken by another writer: every new
    /// candidate goes above them.
    pub(crate) fn finish(&self, used: impl IntoIterator<Item = i64>) {
        if let Some(max) = used.into_iter().max() {
            let mut frontier = self.state.frontier();
            frontier.floor = frontier.floor.max(Some(max));
            frontier.epoch += 1;
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut frontier = self.state.frontier();
        for id in &self.ids {
            frontier.in_flight.remove(id);
        }
    }
}
