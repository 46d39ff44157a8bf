//! What one insert call is, apart from its documents: the options the caller set
//! ([`Call`]), and the [`Context`] every step of the insert works in.

use std::time::Duration;

use mongodb::bson::RawDocumentBuf;
use mongodb::{ClientSession, Collection};

use crate::base::error::{Error, ErrorKind};
use crate::base::fate::Sending;
use crate::base::future::BoxFuture;
use crate::base::once::{Warning, first_time};
use crate::base::retry::Budget;
use crate::base::session::Session;
use crate::call::registry::Route;
use crate::call::span::Traced;
use crate::counter::commit_queue::Place;
use crate::deployment::gate;
use crate::fields::scope::Scope;
use crate::schema::sequence::{Sequence, Strategy};

/// What one call asks for beyond its documents: the options set on its action.
#[derive(Default)]
pub(crate) struct Call<'a> {
    /// The caller's session, and with it the caller's transaction, if one is running.
    pub session: Option<&'a mut ClientSession>,
    /// The optimistic loop's attempts, overriding `max_attempts` in the attribute.
    pub max_attempts: Option<u32>,
    /// The optimistic loop's time budget, overriding `time_budget_ms` in the attribute.
    pub time_budget: Option<Duration>,
    /// The caller asserts that no other writer stores a document equal to one of these.
    pub content_is_unique: bool,
    /// The call appends items to a stored document: it takes no id of the sequence, and
    /// retries a race of its own (the array's mark) for [`Budget::APPEND`].
    pub appends: bool,
}

/// What one insert call is, apart from its documents: the sequence that numbers them,
/// where they go (and the handle whose state the call shares), the caller's session, how
/// long and how many times the optimistic loop may try, and whether the caller asserted that its
/// content is unique. Every step of an insert takes what it works on (a document, a
/// batch, a scope) and this.
pub(crate) struct Context<'a> {
    /// The derive's constant: a write left running by a cancelled caller refers to it.
    pub seq: &'static Sequence,
    pub route: Route<'a>,
    pub session: Session<'a>,
    /// How long and how many times the call may try again after losing a race to another
    /// writer: the optimistic loop's (once for the other strategies), or the action's own.
    pub budget: Budget,
    /// The caller asserts that no other writer stores a document equal to one of these
    /// (see [`Sending::content_is_unique`]).
    pub content_is_unique: bool,
    /// Reservation round trips the call waited for (shared with the callers waiting with
    /// it), or made itself in its transaction: for the insert's span.
    pub reservations: u32,
    /// A gapless call's turn at the counter of a scope, taken before its first read in the
    /// caller's transaction, for its id (`counted::place_before_reading`). Boxed: every
    /// insert's state holds the context, and few calls take one (`tests/state.rs`).
    pub early_place: Option<Box<(Scope, Place)>>,
}

impl<'a> Context<'a> {
    /// Runs `body` in the context of a call of `route` for `seq` with the options of `call`,
    /// made once the gate lets the call through (else the call answers with the gate's
    /// error); answers with the body's result and what the call did, for its span. Every
    /// action that reaches the database runs so. The body is boxed: an async closure's
    /// future is not yet known `Send` where a generic function awaits it (rustc cannot
    /// prove it for every lifetime of the context it borrows).
    pub(crate) async fn run<O>(
        seq: &'static Sequence,
        route: Route<'a>,
        call: Call<'a>,
        body: impl for<'c> FnOnce(&'c mut Context<'a>) -> BoxFuture<'c, Result<O, Error>>,
    ) -> Traced<Result<O, Error>> {
        let budget = match budget(seq, &call) {
            Ok(budget) => budget,
            Err(error) => return Traced::from(Err(error)),
        };
        if route.registry.is_none() && !call.appends {
            warn_bare(seq);
        }
        // On a sharded cluster, a sequence whose promises would not hold is refused here,
        // before anything is read or taken.
        if let Err(error) = gate::pass(route.known(), route.db, seq).await {
            return Traced::from(Err(error));
        }
        let mut cx = Context {
            seq,
            route,
            session: Session::of(call.session).await,
            budget,
            content_is_unique: call.content_is_unique,
            reservations: 0,
            early_place: None,
        };
        let output = body(&mut cx).await;
        Traced {
            output,
            reservations: cx.reservations,
        }
    }

    /// How documents sent for the first time under their ids are sent.
    pub(crate) fn first(&self) -> Sending {
        Sending::first(self.content_is_unique)
    }

    /// How documents sent again under the ids they were sent with before are sent.
    pub(crate) fn again(&self) -> Sending {
        Sending::again(self.content_is_unique)
    }

    /// The collection the documents go to, typed as `D`.
    pub(crate) fn collection<D: Send + Sync>(&self) -> Collection<D> {
        self.route.db.collection(self.seq.collection)
    }

    /// The collection the documents go to, for documents serialized by seqid: the one a
    /// handle's database keeps, else one made for the call.
    pub(crate) fn raw_collection(&self) -> Collection<RawDocumentBuf> {
        match self.route.collections {
            Some(collections) => collections.get(self.route.db, self.seq.collection),
            None => self.collection(),
        }
    }
}

/// Warns, once per process and sequence, of a `block` or `optimistic` insert through a
/// bare `mongodb::Database`: through it every call works alone, and those two strategies
/// lose what they are for (a `block` insert reserves exactly its own ids and keeps no
/// block; the optimistic loop's tasks take turns instead of sharing candidates).
fn warn_bare(seq: &Sequence) {
    let cost = match seq.strategy {
        Strategy::Block { .. } => {
            "reserves its own ids with one round trip per call and keeps no block"
        }
        Strategy::Optimistic { .. } => {
            "queries the largest id per call, and the tasks of this process take turns, one \
             insert at a time"
        }
        Strategy::Counters | Strategy::Gapless => return,
    };
    if first_time(Warning::BareDatabase, seq) {
        tracing::warn!(
            sequence = seq.name,
            collection = seq.collection,
            strategy = seq.strategy_name(),
            "seqid: a {} insert through a bare mongodb::Database {cost}; make one \
             seqid::Sequences handle next to the client and insert through \
             `sequences.database(..)` (logged once per process and sequence)",
            seq.strategy_name(),
        );
    }
}

/// How long and how many times the call may try: an append's budget, else for the
/// optimistic loop the call's settings, else the attribute's (the other strategies try
/// once).
fn budget(seq: &'static Sequence, call: &Call<'_>) -> Result<Budget, Error> {
    if call.appends {
        return Ok(Budget::APPEND);
    }
    let Strategy::Optimistic {
        max_attempts,
        time_budget,
    } = seq.strategy
    else {
        return Ok(Budget::ONCE);
    };
    let budget = Budget {
        max_attempts: call.max_attempts.or(max_attempts),
        time: call.time_budget.unwrap_or(time_budget),
    };
    let refused = |option, value: &str, reason| {
        Err(Error::new(
            seq,
            ErrorKind::InvalidOption {
                option,
                value: value.into(),
                reason,
            },
        ))
    };
    if budget.max_attempts == Some(0) {
        return refused("max_attempts", "0", "at least one attempt is needed".into());
    }
    if budget.time.is_zero() {
        return refused(
            "time_budget",
            "0 ms",
            "the first attempt needs some time".into(),
        );
    }
    Ok(budget)
}
