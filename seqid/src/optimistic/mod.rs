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
//! lagging read, or a server whose `_id` order is not MongoDB's). Within one call, on
//! every path, a [`Progress`] keeps the loop from ever trying again an id it saw taken,
//! whatever the maximum answers; a maximum that goes backwards between two reads is
//! logged as a warning, once per process and sequence.

pub(crate) mod insert;

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use mongodb::bson::{Bson, Document as BsonDocument};
use mongodb::{ClientSession, Collection};

use crate::allocator::{Allocator, Source, Tally};
use crate::context::Context;
use crate::largest::{self, Ids};
use crate::once::{Warning, first_time};
use crate::scope::Scope;
use crate::{Error, Sequence, numeric};

/// Reads the largest value of a sequence's field in a scope, and what the read learned of
/// the values there: the maximum query on the target collection (a fake one in tests).
pub(crate) trait Maximum: Clone + Send + Sync + 'static {
    fn largest(
        &self,
        seq: &Sequence,
        scope: &Scope,
        ids: Ids,
        session: Option<&mut ClientSession>,
    ) -> impl Future<Output = Result<(Option<Bson>, Ids), Error>> + Send;
}

impl Maximum for Collection<BsonDocument> {
    fn largest(
        &self,
        seq: &Sequence,
        scope: &Scope,
        ids: Ids,
        session: Option<&mut ClientSession>,
    ) -> impl Future<Output = Result<(Option<Bson>, Ids), Error>> + Send {
        largest::numeric_id(self, seq, scope, ids, session)
    }
}

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
    /// The largest numeric id the last maximum query read.
    last_read: Option<i64>,
}

impl Default for Frontier {
    fn default() -> Self {
        Frontier {
            in_flight: BTreeSet::new(),
            floor: None,
            epoch: 0,
            ids: Ids::MaybeNumeric,
            last_read: None,
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
    async fn candidates<M: Maximum>(
        self: &Arc<Self>,
        max: &M,
        scope: &Scope,
        count: usize,
        cx: &mut Context<'_>,
    ) -> Result<Arc<InFlight>, Error> {
        let seq = cx.seq;
        let ids = if cx.session.in_transaction() {
            let session = cx.session.join();
            let first = self.reserve(max, seq, scope, count as u64, session).await?;
            cx.reservations += 1;
            (0..count as i64).map(|i| first + i).collect()
        } else {
            let source = || MaxSource {
                state: Arc::clone(self),
                max: max.clone(),
                seq: *seq,
                scope: scope.clone(),
            };
            let allocated = self.allocator.allocate(count as u64, source).await?;
            cx.reservations += u32::from(allocated.waited);
            allocated.ids
        };
        Ok(Arc::new(InFlight {
            state: Arc::clone(self),
            ids,
        }))
    }

    /// Reserves `amount` candidates above the largest numeric `_id` and every candidate
    /// in flight, and returns the first.
    async fn reserve<M: Maximum>(
        &self,
        max: &M,
        seq: &Sequence,
        scope: &Scope,
        amount: u64,
        session: Option<&mut ClientSession>,
    ) -> Result<i64, Error> {
        let epoch_before = self.frontier().epoch;
        let known = self.frontier().ids;
        let (stored, ids) = max.largest(seq, scope, known, session).await?;
        let largest = stored.as_ref().and_then(numeric::floor);
        let mut frontier = self.frontier();
        frontier.ids = ids;
        if let (Some(read), Some(before)) = (largest, frontier.last_read)
            && read < before
            && first_time(Warning::MaximumBackwards, seq)
        {
            tracing::warn!(
                sequence = seq.name,
                collection = seq.collection,
                scope = %scope.in_scope(),
                before,
                read,
                "optimistic: the largest {} read went backwards between two reads (a \
                 wrong sort, a failover to a lagging member, or documents deleted); \
                 candidates stay above every id seen stored or taken (logged once per \
                 process and sequence)",
                seq.field,
            );
        }
        frontier.last_read = largest;
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
fn state(scope: &Scope, cx: &Context<'_>) -> Arc<Optimistic> {
    match cx.session.in_transaction() {
        true => Arc::new(Optimistic::new()),
        false => cx.route.collection(cx.seq, scope),
    }
}

/// The loop of one call in one scope: the state its candidates come from, kept for the
/// whole call (so that a state made for the call keeps what each attempt learned), and
/// the largest id the call saw taken by another writer, which it never tries again. Every
/// retry is then above every id the call saw taken, however the maximum it reads lags or
/// errs.
pub(crate) struct Progress {
    state: Arc<Optimistic>,
    seen_taken: Option<i64>,
}

impl Progress {
    pub(crate) fn new(scope: &Scope, cx: &Context<'_>) -> Self {
        Progress {
            state: state(scope, cx),
            seen_taken: None,
        }
    }

    /// What the call's loop did, for [`Stats`](crate::Stats).
    pub(crate) fn tally(&self) -> &Tally {
        &self.state.allocator.tally
    }

    /// Candidates for `count` documents, all above every id this call saw taken.
    pub(crate) async fn candidates<M: Maximum>(
        &self,
        max: &M,
        scope: &Scope,
        count: usize,
        cx: &mut Context<'_>,
    ) -> Result<Arc<InFlight>, Error> {
        loop {
            let flight = self.state.candidates(max, scope, count, cx).await?;
            match self.seen_taken {
                // Ids that were already reserved when this call saw a higher one taken
                // (given back by a cancelled caller of the handle): dropped, and the
                // floor raised, so that the next reservation goes above.
                Some(taken) if flight.ids.iter().any(|&id| id <= taken) => {
                    flight.finish([taken]);
                }
                _ => return Ok(flight),
            }
        }
    }

    /// Records candidates of `flight` that another writer took: neither this call nor
    /// any other of the state tries them again.
    pub(crate) fn taken(&mut self, flight: &InFlight, ids: &[i64]) {
        flight.finish(ids.iter().copied());
        self.seen_taken = self.seen_taken.max(ids.iter().copied().max());
    }
}

/// One maximum query serves every caller queued at that moment. It owns what it needs:
/// it runs in the allocator's flusher.
struct MaxSource<M> {
    state: Arc<Optimistic>,
    max: M,
    seq: Sequence,
    scope: Scope,
}

impl<M: Maximum> Source for MaxSource<M> {
    async fn reserve(&self, amount: u64, _: &Tally) -> Result<i64, Error> {
        self.state
            .reserve(&self.max, &self.seq, &self.scope, amount, None)
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
