//! Listing a sequence's counters in one call ([`ListCounters`]): every scope's, the last id
//! each gave out, what this process holds of it, and the largest number stored, to see the
//! state of a sequence without a call per scope.

use std::fmt;
use std::future::IntoFuture;
use std::marker::PhantomData;

use mongodb::bson::Document as BsonDocument;

use crate::base::error::Error;
use crate::base::future::BoxFuture;
use crate::call::registry::Route;
use crate::counter::admin;
use crate::optimistic::largest;
use crate::schema::model::Model;
use crate::schema::sequence::{Sequence, Strategy};

/// One counter of a sequence, as [`Document::list_counters`](crate::SequenceOf::list_counters)
/// finds it.
///
/// ```
/// use mongodb::bson::doc;
///
/// # fn show(state: seqid::CounterState) {
/// // e.g. { "project": "apollo" }: last reserved 200, 58 held here (next 143), largest stored 142
/// println!("{state}");
/// if state.strategy_reserves_ahead() {
///     // block: the counter is ahead of the ids handed out
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CounterState {
    /// The scope's values, by scope field: `{ project: "apollo" }`; empty when the sequence
    /// has no scope.
    pub scope: BsonDocument,
    /// The last id the counter gave out, in the sequence's ids whatever the layout stores
    /// (`None`: a counter without a value, made by another tool). With `counters` and
    /// `gapless` that is the last id handed out; with `block`, the last id **reserved**:
    /// each process hands out its blocks below it, so the last id stored may be up to
    /// `2 × block_size - 1` per process lower (`block_size - 1` with `prefetch = false`).
    pub last_reserved: Option<i64>,
    /// How many ids of this counter this process's [`Sequences`](crate::Sequences) handle
    /// holds, reserved and not handed out yet: the rest of its block (`block`), ids left by
    /// cancelled callers (`counters`). 0 through a bare `mongodb::Database`, which keeps
    /// nothing.
    pub held_here: u64,
    /// The next id this process hands out from what it holds, if it holds any.
    pub next_held: Option<i64>,
    /// The largest number of the sequence's field stored in the scope (`None`: none, or
    /// not asked for: [`ListCounters::without_largest_stored`]).
    pub largest_stored: Option<i64>,
    strategy: Strategy,
}

impl CounterState {
    /// Whether the counter runs ahead of the ids handed out: the `block` strategy reserves
    /// ids by the block, so [`last_reserved`](Self::last_reserved) is not the last id
    /// stored.
    ///
    /// ```
    /// # fn show(state: seqid::CounterState) {
    /// let ahead = state.strategy_reserves_ahead();
    /// # }
    /// ```
    pub fn strategy_reserves_ahead(&self) -> bool {
        matches!(self.strategy, Strategy::Block { .. })
    }
}

/// `{ "project": "apollo" }: last reserved 200, 58 held here (next 143), largest stored
/// 142`; the scope left out when there is none.
impl fmt::Display for CounterState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.scope.is_empty() {
            write!(f, "{}: ", self.scope)?;
        }
        match self.last_reserved {
            Some(last) => write!(f, "last reserved {last}")?,
            None => write!(f, "no value yet")?,
        }
        if let Some(next) = self.next_held {
            write!(f, ", {} held here (next {next})", self.held_here)?;
        }
        if let Some(largest) = self.largest_stored {
            write!(f, ", largest stored {largest}")?;
        }
        Ok(())
    }
}

/// Lists a sequence's counters, from
/// [`Document::list_counters`](crate::SequenceOf::list_counters): await it for a
/// [`CounterState`] per counter (one per scope that has one), in the order of the counters'
/// `_id`.
#[must_use = "listing counters does nothing until it is awaited"]
pub struct ListCounters<'a, T: Model> {
    db: Route<'a>,
    seq: &'static Sequence,
    largest_stored: bool,
    _type: PhantomData<fn() -> T>,
}

impl<'a, T: Model> ListCounters<'a, T> {
    pub(crate) fn new(db: Route<'a>, seq: &'static Sequence) -> Self {
        ListCounters {
            db,
            seq,
            largest_stored: true,
            _type: PhantomData,
        }
    }

    /// Leaves out the largest number stored per counter: one query each, which reads one
    /// entry of the index on the sequence's field (and scope) that
    /// [`create_indexes`](crate::Document::create_indexes) makes, and the whole collection
    /// without it. For a sequence of thousands of scopes, or a collection without the
    /// index.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id(collection = "tickets")]
    /// # struct Ticket { project: String, #[seq_id("ticket", scope = "project")] number: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let counters = Ticket::sequence().list_counters(&db).without_largest_stored().await?;
    /// # Ok(()) }
    /// ```
    pub fn without_largest_stored(mut self) -> Self {
        self.largest_stored = false;
        self
    }
}

impl<'a, T: Model> IntoFuture for ListCounters<'a, T> {
    type Output = Result<Vec<CounterState>, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(list(self.db, self.seq, self.largest_stored))
    }
}

async fn list(
    route: Route<'_>,
    seq: &'static Sequence,
    with_largest: bool,
) -> Result<Vec<CounterState>, Error> {
    use futures_util::{StreamExt, TryStreamExt};
    let counters = admin::every(route.db, seq).await?;
    let collection = &route.db.collection::<BsonDocument>(seq.collection);
    // A few queries at a time, as `sync_every_scope`: an admin call, not a flood.
    futures_util::stream::iter(counters)
        .map(|(scope, last_reserved)| async move {
            let largest_stored = match with_largest {
                true => largest::stored_floor(collection, seq, &scope).await?,
                false => None,
            };
            let (held_here, next_held) = route.registry.map_or((0, None), |registry| {
                registry.ids_held(route.db.name(), seq, &scope)
            });
            Ok(CounterState {
                scope: scope.filter(),
                last_reserved,
                held_here,
                next_held,
                largest_stored,
                strategy: seq.strategy,
            })
        })
        .buffered(8)
        .try_collect()
        .await
}
