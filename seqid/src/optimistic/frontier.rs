//! The optimistic strategy's state for one target collection (one scope of its field):
//! the [`Frontier`] of its candidates. A new candidate is always above the largest
//! numeric value the maximum query read, every candidate still in flight, and every id
//! stored or found taken through this state, so that the loop makes progress even when
//! the maximum query lags behind the writes that beat it (a lagging read, or a server
//! whose `_id` order is not MongoDB's).
//!
//! Tasks sharing a [`Sequences`](crate::Sequences) handle share one frontier: callers
//! waiting at the same moment share one maximum query (through the [`Allocator`]) and get
//! distinct candidates, so duplicates arise only against other processes or writers. A
//! maximum that goes backwards between two reads is logged as a warning, once per process
//! and sequence.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use mongodb::ClientSession;
use mongodb::bson::Bson;

use crate::base::error::{Error, ErrorKind};
use crate::base::lock;
use crate::base::numeric;
use crate::base::once::{Warning, first_time};
use crate::fields::scope::Scope;
use crate::schema::sequence::Sequence;
use crate::state::allocator::{Allocated, Allocator, Reserver, Tally, interrupted};

/// What is known of the values of a sequence's field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Ids {
    /// Maybe only numbers: an unfiltered descending sort on the field reads one index
    /// entry and finds the maximum, unless non-numeric values (which sort above numbers)
    /// exist.
    #[default]
    MaybeNumeric,
    /// Non-numeric values were seen: only a query bounded to numbers finds the maximum.
    Mixed,
}

/// What a maximum query reads: the largest value of `seq`'s field in `scope`, only above
/// `above` if given (a read after an id was seen taken asks only above it), in `session`
/// (the caller's transaction) if given.
pub(crate) struct MaximumRead<'a> {
    pub seq: &'static Sequence,
    pub scope: &'a Scope,
    pub above: Option<i64>,
    pub session: Option<&'a mut ClientSession>,
}

/// Reads the largest value a [`MaximumRead`] asks for, knowing `ids` of the values there,
/// and what the read learned of them: the maximum query on the target collection (a fake
/// one in tests).
pub(crate) trait Maximum: Clone + Send + Sync + 'static {
    fn largest(
        &self,
        read: MaximumRead<'_>,
        ids: Ids,
    ) -> impl Future<Output = Result<(Option<Bson>, Ids), Error>> + Send;
}

/// The optimistic loop's state for one target collection (a scope of its field), shared
/// by the tasks of a [`Sequences`](crate::Sequences) handle (or made for one call).
pub(crate) struct Frontier {
    pub(crate) allocator: Arc<Allocator>,
    bounds: Mutex<Bounds>,
}

#[derive(Default)]
struct Bounds {
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

impl Frontier {
    pub(crate) fn new() -> Self {
        Frontier {
            allocator: Arc::new(Allocator::new(1)),
            bounds: Mutex::default(),
        }
    }

    /// A frontier for one call (a bare database's, or one in the caller's transaction):
    /// its maximum query is bounded to numbers from the first. It cannot learn what the
    /// collection holds before it is dropped, and the bounded query finds the largest
    /// number whatever the collection holds, reading one index entry on MongoDB as the
    /// unbounded one does; the unbounded one is worth it only where what it learns is
    /// kept (a handle's). Through a bare database, a first answer that was not the
    /// largest (a server sorting `_id` otherwise, as nx-27017 does) would cost every call
    /// a lost attempt and the wait after it.
    pub(crate) fn for_one_call() -> Self {
        let frontier = Frontier::new();
        lock(&frontier.bounds).ids = Ids::Mixed;
        frontier
    }

    /// How many candidates are handed out to inserts that have not finished. Candidates
    /// of callers cancelled before they took them wait in the allocator's live block for
    /// the next callers: still kept from other reservations, but not handed out.
    pub(crate) fn in_flight(&self) -> u64 {
        let registered = lock(&self.bounds).in_flight.len() as u64;
        registered.saturating_sub(self.allocator.unused())
    }

    /// Candidate ids for `count` documents, registered as in flight until the returned
    /// guard is dropped or told which were stored, and whether a maximum query was waited
    /// for; the maximum is read as `read` says (above an id the caller saw taken, if
    /// given). In a session, the caller's transaction, the maximum is read in it (its
    /// snapshot), by this caller alone.
    pub(crate) async fn candidates<M: Maximum>(
        self: &Arc<Self>,
        max: &M,
        read: MaximumRead<'_>,
        count: usize,
    ) -> Result<Allocated<Arc<InFlight>>, Error> {
        let (ids, waited) = if read.session.is_some() {
            let first = self.reserve(max, read, count as u64).await?;
            ((0..count as i64).map(|i| first + i).collect(), true)
        } else {
            let source = || MaxReserver {
                state: Arc::clone(self),
                max: max.clone(),
                seq: read.seq,
                scope: read.scope.clone(),
                above: read.above,
            };
            let allocated = self.allocator.allocate(count as u64, source).await?;
            (allocated.ids, allocated.waited)
        };
        let ids = Arc::new(InFlight {
            state: Arc::clone(self),
            ids,
            given_back: Mutex::default(),
        });
        Ok(Allocated { ids, waited })
    }

    /// Reserves `amount` candidates above the largest numeric `_id` (as `read` says) and
    /// every candidate in flight, and returns the first.
    async fn reserve<M: Maximum>(
        &self,
        max: &M,
        read: MaximumRead<'_>,
        amount: u64,
    ) -> Result<i64, Error> {
        let (seq, scope, above) = (read.seq, read.scope, read.above);
        let epoch_before = lock(&self.bounds).epoch;
        let known = lock(&self.bounds).ids;
        let (stored, ids) = max.largest(read, known).await?;
        let largest = stored.as_ref().and_then(numeric::floor);
        let mut bounds = lock(&self.bounds);
        bounds.ids = ids;
        if let (Some(read), Some(before)) = (largest, bounds.last_read)
            && read < before
            && above.is_none()
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
        bounds.last_read = largest;
        if largest.is_none() && above.is_none() && bounds.epoch == epoch_before {
            // Emptied (say, dropped) since the floor was raised: start again at 1. (A
            // read above an id seen taken says nothing of the ids below it.)
            bounds.floor = None;
        }
        // Never below the first id (`start`), whatever the collection holds.
        let base = [largest, bounds.floor, bounds.in_flight.last().copied()]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(0)
            .max(seq.start - 1);
        let overflow = || {
            Error::new(
                seq,
                ErrorKind::Overflow {
                    value: i128::from(base) + i128::from(amount),
                    target: "i64",
                    origin: match &stored {
                        Some(id) if largest == Some(base) => format!(
                            "one above the largest numeric {} in `{}`{}, which is {}",
                            seq.field,
                            seq.collection,
                            scope.in_scope(),
                            numeric::shown(id)
                        )
                        .into(),
                        _ => "one above the ids stored or held in flight by this process".into(),
                    },
                },
            )
        };
        let last = i64::try_from(amount)
            .ok()
            .and_then(|n| base.checked_add(n))
            .ok_or_else(overflow)?;
        bounds.in_flight.extend(base + 1..=last);
        Ok(base + 1)
    }
}

/// One maximum query serves every caller queued at that moment. It owns what it needs:
/// it runs in the allocator's flusher.
struct MaxReserver<M> {
    state: Arc<Frontier>,
    max: M,
    seq: &'static Sequence,
    scope: Scope,
    /// The id the caller that made this source saw taken: every caller served with it
    /// goes above it anyway (the frontier's floor holds it).
    above: Option<i64>,
}

impl<M> MaxReserver<M> {
    /// The read the source's callers asked for, outside any transaction.
    fn read(&self) -> MaximumRead<'_> {
        MaximumRead {
            seq: self.seq,
            scope: &self.scope,
            above: self.above,
            session: None,
        }
    }
}

impl<M: Maximum> Reserver for MaxReserver<M> {
    async fn reserve(&self, amount: u64, _: &Tally) -> Result<i64, Error> {
        self.state.reserve(&self.max, self.read(), amount).await
    }

    fn interrupted(&self) -> Error {
        interrupted(self.seq, &self.scope)
    }
}

/// Candidates being inserted, shared by the insert and the writes it sends: they are
/// released when both are done with them, so that a write left running by a cancelled
/// insert keeps its candidate from every other insert of the handle until it ends (two
/// writes of one id by one handle would be told apart by nothing but their content).
pub(crate) struct InFlight {
    state: Arc<Frontier>,
    pub(crate) ids: Vec<i64>,
    /// Candidates given back to the allocator's live block: they stay registered in
    /// flight for the caller that takes them next.
    given_back: Mutex<Vec<i64>>,
}

impl InFlight {
    /// Records the candidates that were stored, or taken by another writer: every new
    /// candidate goes above them.
    pub(crate) fn finish(&self, used: impl IntoIterator<Item = i64>) {
        if let Some(max) = used.into_iter().max() {
            let mut bounds = lock(&self.state.bounds);
            bounds.floor = bounds.floor.max(Some(max));
            bounds.epoch += 1;
        }
    }

    /// Gives the candidate `id` back, known not stored and never to be under this write
    /// (the server refused it): the next caller takes it first, so that a refused insert
    /// leaves no gap while the handle goes on inserting. It stays registered in flight
    /// until that caller is done with it, so that no reservation hands it out meanwhile.
    pub(crate) fn give_back(&self, id: i64) {
        debug_assert!(self.ids.contains(&id));
        lock(&self.given_back).push(id);
        self.state.allocator.give_back(&[id]);
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let given_back = self.given_back.get_mut();
        let given_back = given_back.unwrap_or_else(PoisonError::into_inner);
        let mut bounds = lock(&self.state.bounds);
        for id in self.ids.iter().filter(|id| !given_back.contains(id)) {
            bounds.in_flight.remove(id);
        }
    }
}
