//! The optimistic strategy as an id source: candidates one above the largest numeric
//! value of the sequence's field (in the document's scope), from the scope's
//! [`Frontier`]; a candidate another writer took (a duplicate key on the field's unique
//! index) is taken back and never handed out again by the call. No counters collection.
//!
//! Within one call, on every path, a [`Progress`] keeps the loop from ever trying again
//! an id it saw taken, whatever the maximum answers.

use std::sync::Arc;

use crate::base::error::Error;
use crate::base::scope::Scope;
use crate::state::allocator::Tally;
use crate::state::context::Context;
use crate::state::frontier::{Frontier, InFlight, Maximum};

/// The loop of one call in one scope: the frontier its candidates come from, kept for
/// the whole call (so that a frontier made for the call keeps what each attempt learned),
/// and the largest id the call saw taken by another writer, which it never tries again.
/// Every retry is then above every id the call saw taken, however the maximum it reads
/// lags or errs.
pub(crate) struct Progress {
    frontier: Arc<Frontier>,
    seen_taken: Option<i64>,
}

impl Progress {
    /// The progress of a call in `scope`. Its frontier is the handle's, shared by its
    /// tasks; or, inside the caller's transaction, or through a bare database, one made
    /// for the call (a transaction reads the maximum in its own snapshot, which no other
    /// caller shares).
    pub(crate) fn new(scope: &Scope, cx: &Context<'_>) -> Self {
        let frontier = match cx.session.in_transaction() {
            true => Arc::new(Frontier::for_one_call()),
            false => cx.route.collection(cx.seq, scope),
        };
        Progress {
            frontier,
            seen_taken: None,
        }
    }

    /// What the call's loop did, for [`Stats`](crate::Stats).
    pub(crate) fn tally(&self) -> &Tally {
        &self.frontier.allocator.tally
    }

    /// Candidates for `count` documents, all above every id this call saw taken (the
    /// maximum is then read above it).
    pub(crate) async fn candidates<M: Maximum>(
        &self,
        max: &M,
        scope: &Scope,
        count: usize,
        cx: &mut Context<'_>,
    ) -> Result<Arc<InFlight>, Error> {
        loop {
            let transaction = match cx.session.in_transaction() {
                true => cx.session.join(),
                false => None,
            };
            let allocated = self
                .frontier
                .candidates(max, cx.seq, scope, count, self.seen_taken, transaction)
                .await?;
            cx.reservations += u32::from(allocated.waited);
            let flight = allocated.ids;
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
    /// any other of the frontier tries them again.
    pub(crate) fn taken(&mut self, flight: &InFlight, ids: &[i64]) {
        flight.finish(ids.iter().copied());
        self.seen_taken = self.seen_taken.max(ids.iter().copied().max());
    }
}
