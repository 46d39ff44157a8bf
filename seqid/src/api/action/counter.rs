//! Administration of a sequence's counters, per scope for a scoped sequence: read one
//! without taking an id ([`LastReserved`]), set it or reset it to the start
//! ([`SetCounter`]), raise it to the ids stored ([`SyncCounter`], and
//! `sync_every_scope` for all the scopes at once).

use std::future::IntoFuture;
use std::marker::PhantomData;

use crate::base::error::{Error, ErrorKind};
use crate::base::future::BoxFuture;
use crate::call::registry::Route;
use crate::counter::Counter;
use crate::counter::admin;
use crate::fields::scope::{GivenScope, Scope};
use crate::optimistic::largest;
use crate::schema::model::Model;
use crate::schema::sequence::{Sequence, Strategy};
use crate::source::counted;

/// An administration call on one counter, named by scope for a scoped sequence: the
/// action (holding its `$field`s too), its constructor, its `scope` setters and its future,
/// which names the counter and awaits `$run` on it, given the `$field`s, for a `$output`
/// (`$what`: what the call does to the counter; `$example` and `$unchecked`: the calls,
/// awaited, of the setters' examples).
macro_rules! counter_call {
    (
        $(#[$doc:meta])*
        $action:ident { $($field:ident: $type:ty),* } -> $output:ty = $run:ident,
        $must_use:literal, $what:literal, $example:literal, $unchecked:literal
    ) => {
        $(#[$doc])*
        ///
        /// `S` is the sequence's scope as a type ([`scoped`](crate::scoped)):
        /// `.scope(...)` takes a value of it, checked at compile time.
        #[must_use = $must_use]
        pub struct $action<'a, T: Model, S = <T as Model>::Scope> {
            db: Route<'a>,
            seq: &'static Sequence,
            scope: GivenScope,
            $($field: $type,)*
            _type: PhantomData<fn() -> (T, S)>,
        }

        impl<'a, T: Model, S> $action<'a, T, S> {
            pub(crate) fn new(db: Route<'a>, seq: &'static Sequence, $($field: $type),*) -> Self {
                $action {
                    db,
                    seq,
                    scope: GivenScope::default(),
                    $($field,)*
                    _type: PhantomData,
                }
            }

            scope_setters! {
                scope,
                scope {
                    #[doc = concat!("The scope whose counter ", $what, ", for a scoped sequence: a value")]
                    /// of its scope field's type, or a tuple of values in the declared order; a value
                    /// of another type does not compile ([`scoped`](crate::scoped)). Required for a
                    /// scoped sequence ([`ErrorKind::InvalidScope`] without it); an unscoped one takes
                    /// none.
                    ///
                    /// ```no_run
                    /// # use seqid::Document;
                    /// # #[derive(serde::Serialize, Document)]
                    /// # #[seq_id(collection = "tickets")]
                    /// # struct Ticket { project: String, #[seq_id("ticket", scope = "project")] number: i64 }
                    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
                    #[doc = $example]
                    /// # Ok(()) }
                    /// ```
                }
                unchecked {
                    /// [`scope`](Self::scope) for a scope known only at run time (from a request, in
                    /// code generic over the type): any serializable value, checked when the call
                    /// runs against the scope fields' Rust types ([`Sequence::scope_types`]): a value
                    /// none of the type's documents can hold is [`ErrorKind::InvalidScope`], naming the
                    /// field's type.
                    ///
                    /// ```no_run
                    /// # use seqid::Document;
                    /// # #[derive(serde::Serialize, Document)]
                    /// # #[seq_id(collection = "tickets")]
                    /// # struct Ticket { project: String, #[seq_id("ticket", scope = "project")] number: i64 }
                    /// # async fn run(db: mongodb::Database, project: mongodb::bson::Bson) -> Result<(), seqid::Error> {
                    #[doc = $unchecked]
                    /// # Ok(()) }
                    /// ```
                }
            }
        }

        impl<'a, T: Model, S> IntoFuture for $action<'a, T, S> {
            type Output = Result<$output, Error>;
            type IntoFuture = BoxFuture<'a, Self::Output>;

            fn into_future(self) -> Self::IntoFuture {
                Box::pin(async move {
                    let scope = self.scope.resolve(self.seq)?;
                    let counter = Counter { seq: self.seq, scope: &scope };
                    $run(self.db, counter $(, self.$field)*).await
                })
            }
        }
    };
}

counter_call!(
    /// Sets a sequence's counter, from [`Document::set_counter`](crate::SequenceOf::set_counter) or
    /// [`Document::reset_counter`](crate::SequenceOf::reset_counter): await it for the value set.
    ///
    /// It refuses to move the counter below the largest numeric id already stored (in its
    /// scope) ([`ErrorKind::CounterBelowStored`]): the next ids would be taken already, and every
    /// insert would fail on the unique index until the counter passed them again. Call
    /// [`below_stored`](SetCounter::below_stored) to do it all the same.
    ///
    /// What this process holds is discarded: the live block of a [`Sequences`](crate::Sequences)
    /// handle (block strategy) is dropped, so the next id comes from the new value. Other
    /// processes' blocks are not: they go on handing out the ids they reserved, which, below
    /// the new value, the counter will hand out again; the unique index (`_id`'s, or the one
    /// [`create_indexes`](crate::Document::create_indexes) makes) refuses the second
    /// document ([`ErrorKind::DuplicateKey`]), never stores it. Set a counter while nothing else
    /// writes the sequence: no other process, and no insert of this one (a reservation in
    /// flight when the counter is set lands under the old value).
    SetCounter { value: Value, below_stored: bool } -> i64 = set,
    "setting a counter does nothing until it is awaited",
    "is set",
    "Ticket::sequence().reset_counter(&db).scope(\"apollo\").await?;",
    "Ticket::sequence().reset_counter(&db).scope_unchecked(project).await?;"
);

counter_call!(
    /// Reads a counter without taking an id, from
    /// [`Document::last_reserved`](crate::SequenceOf::last_reserved): await it for the last id
    /// reserved (with `counters` and `gapless`, the last handed out; with `block`, up to
    /// `2 × block_size - 1` per process ahead of the ids stored, `block_size - 1` with
    /// `prefetch = false`), or `None` while the counter
    /// does not exist (the next id is then `start`).
    LastReserved {} -> Option<i64> = last_reserved,
    "reading a counter does nothing until it is awaited",
    "is read",
    "let last: Option<i64> = Ticket::sequence().last_reserved(&db).scope(\"apollo\").await?;",
    "let last: Option<i64> = Ticket::sequence().last_reserved(&db).scope_unchecked(project).await?;"
);

counter_call!(
    /// Raises a counter to the largest id stored, from [`Document::sync_counter`](crate::SequenceOf::sync_counter):
    /// await it for the counter's value.
    /// [`sync_every_scope`](crate::SequenceOf::sync_every_scope) does it for every scope at
    /// once.
    SyncCounter {} -> i64 = sync,
    "syncing a counter does nothing until it is awaited",
    "is raised to the largest id stored in it",
    "let last = Ticket::sequence().sync_counter(&db).scope(\"apollo\").await?;",
    "let last = Ticket::sequence().sync_counter(&db).scope_unchecked(project).await?;"
);

/// What a [`SetCounter`] sets the counter to.
#[derive(Clone, Copy)]
pub(crate) enum Value {
    /// The last id handed out, as given.
    Last(i64),
    /// The start: the next id is the sequence's `start`.
    Start,
}

impl<'a, T: Model, S> SetCounter<'a, T, S> {
    pub(crate) fn to(db: Route<'a>, seq: &'static Sequence, last: i64) -> Self {
        Self::new(db, seq, Value::Last(last), false)
    }

    pub(crate) fn to_start(db: Route<'a>, seq: &'static Sequence) -> Self {
        Self::new(db, seq, Value::Start, false)
    }

    /// Sets the counter even below the largest id stored: the ids between are taken, and
    /// inserts fail with [`ErrorKind::DuplicateKey`] until the counter passes them.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// // The collection was emptied by hand, and numbering starts over.
    /// User::sequence().reset_counter(&db).below_stored().await?;
    /// # Ok(()) }
    /// ```
    pub fn below_stored(mut self) -> Self {
        self.below_stored = true;
        self
    }
}

/// [`SetCounter`]'s call: sets `counter` to `value`, refusing to set it below the largest
/// id stored unless `below_stored`.
async fn set(
    db: Route<'_>,
    counter: Counter<'_>,
    value: Value,
    below_stored: bool,
) -> Result<i64, Error> {
    let seq = counter.seq;
    let last = match value {
        Value::Last(last) => last,
        Value::Start => counter.last_at_most(i64::MIN)?,
    };
    // The counter holds the last id handed out: with a step, one of the
    // progression `start + k × step` (k may be negative: the counter may be set
    // below `start`), and not below the one before the first id, 0 or `start`.
    let (wide, start) = (i128::from(last), i128::from(seq.start));
    let step = i128::from(seq.layout.step);
    let before_first = (start - step).min(0);
    if wide < before_first || (wide - start).rem_euclid(step) != 0 {
        return Err(Error::new(
            seq,
            ErrorKind::InvalidOption {
                option: "set_counter",
                value: last.to_string().into(),
                reason: "the counter holds the last id handed out: an id of the \
                     sequence, `start + k × step`, not below 0 (or below \
                     `start - step` when that is negative, nothing handed out yet)"
                    .into(),
            },
        ));
    }
    if !below_stored {
        let collection = db.db.collection(seq.collection);
        let largest = largest::stored_floor(&collection, seq, counter.scope).await?;
        if let Some(largest) = largest.filter(|&largest| largest > last) {
            return Err(Error::new(
                seq,
                ErrorKind::CounterBelowStored {
                    scope: counter.scope.to_string().into(),
                    value: last,
                    largest,
                },
            ));
        }
    }
    counted::set(db, seq, counter.scope, last).await?;
    Ok(last)
}

/// [`LastReserved`]'s call.
async fn last_reserved(db: Route<'_>, counter: Counter<'_>) -> Result<Option<i64>, Error> {
    admin::read(db.db, counter).await
}

/// [`SyncCounter`]'s call.
async fn sync(db: Route<'_>, counter: Counter<'_>) -> Result<i64, Error> {
    no_counter_for_optimistic(counter.seq, "bring up to date")?;
    counted::sync(db, counter.seq, counter.scope).await
}

/// The counter's operations and `reserve_ids` are offered by the compiler for the
/// strategies that keep a counter (`kind::WithCounter`); a hand-written `Model` whose
/// `Kind` says so of an optimistic sequence still gets a typed error, from here alone.
pub(crate) fn no_counter_for_optimistic(
    seq: &'static Sequence,
    doing: &'static str,
) -> Result<(), Error> {
    match seq.strategy {
        Strategy::Optimistic { .. } => Err(Error::new(
            seq,
            ErrorKind::InvalidOption {
                option: "strategy",
                value: "optimistic".into(),
                reason: format!("the optimistic strategy keeps no counter to {doing}").into(),
            },
        )),
        _ => Ok(()),
    }
}

/// Raises the counter of every scope that has documents to the largest id stored in it,
/// and returns how many counters it brought up to date. Documents whose scope fields hold
/// no scope value (see [`ErrorKind::InvalidScope`]) belong to no scope and are passed over.
pub(crate) async fn sync_every_scope(
    route: Route<'_>,
    seq: &'static Sequence,
) -> Result<u64, Error> {
    use futures_util::{StreamExt, TryStreamExt};
    no_counter_for_optimistic(seq, "bring up to date")?;
    if seq.scope.is_empty() {
        counted::sync(route, seq, &Scope::NONE).await?;
        return Ok(1);
    }
    let scopes = admin::largest_of_every_scope(route.db, seq).await?;
    // A few counters at a time: an admin call, not a flood.
    let raised: Vec<i64> = futures_util::stream::iter(scopes)
        .map(|(scope, largest)| async move { counted::raise(route, seq, &scope, largest).await })
        .buffer_unordered(8)
        .try_collect()
        .await?;
    Ok(raised.len() as u64)
}
