//! A number on its own: [`NamedSequence`], a sequence named at run time, hands out its
//! next id ([`next`](NamedSequence::next)) or its next `n` ids
//! ([`next_n`](NamedSequence::next_n)) with no document, from the counter
//! that seqid's inserts of a type declaring the same sequence, and the MongoDB tutorial's
//! `getNextSequence`, take theirs from. The ids are taken as an insert takes them: through
//! the call's context and the gate, from the strategy's source, sharing the handle's
//! allocator (and live block) with those inserts.

use std::future::IntoFuture;
use std::marker::PhantomData;

use mongodb::bson::Bson;
use serde::Serialize;
use tracing::Instrument;

use crate::base::error::{Error, ErrorKind};
use crate::base::future::BoxFuture;
use crate::call::context::{Call, Context};
use crate::call::registry::{Route, Stats};
use crate::call::span::{self, Traced};
use crate::fields::scope::{GivenScope, Scope, check_types};
use crate::named::{self, Spec};
use crate::schema::layout::{CounterWriteConcern, Layout};
use crate::schema::model::Model;
use crate::schema::sequence::{Sequence, Strategy};
use crate::source::counted;

/// A sequence named at run time, from [`AsDatabase::sequence`](crate::AsDatabase::sequence):
/// its options set by method, then [`next`](Self::next) or [`next_n`](Self::next_n)
/// awaited for ids. The MongoDB tutorial's `getNextSequence("userid")`, as seqid does it:
///
/// ```no_run
/// use seqid::AsDatabase; // for a bare mongodb::Database; a seqid::Database has it too
///
/// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
/// let id: i64 = db.sequence("userid").next().await?; // 1, then 2, ...
/// let ids: Vec<i64> = db.sequence("userid").next_n(3).await?; // [2, 3, 4]
/// # Ok(()) }
/// ```
///
/// The counter is the one a type declaring the same sequence (`#[seq_id("userid")]`, with
/// the same counters collection, layout and scope fields) takes its ids from, and the one
/// the tutorial's `getNextSequence` increments: all of them take ids from it at the same
/// time, and none is handed out twice. Through a [`Database`](crate::Database) of a
/// [`Sequences`](crate::Sequences) handle, callers share its round trips, and with
/// [`block`](Self::block) its live block (the one a declared type with the same name,
/// counters collection and block size uses); through a bare `mongodb::Database`, each call
/// works alone. A number taken and never used is a gap: see the guide's
/// [numbers on their own](crate::guide::numbers).
///
/// A name that a type of the program declares (`#[seq_id("userid")]` on a type deriving
/// [`Document`](crate::Document)) is that type's sequence: the call takes the options the
/// type declares and it does not give, and refuses one it gives that differs, naming the
/// type (the guide's [a name the program
/// declares](crate::guide::numbers#a-name-the-program-declares)). For a type's own numbers,
/// [`T::sequence().next(&db)`](crate::SequenceOf::next) takes them with the type's options,
/// its scope checked at compile time.
///
/// Each distinct sequence named at run time (name and options) is made once and kept for
/// the life of the process, a few hundred bytes: name a few per service, not one per
/// request.
///
/// Every option is checked when the call runs, before anything is read or written: what is
/// refused, and with which error, is listed once, in the guide's [what is
/// refused](crate::guide::numbers#what-is-refused).
#[must_use = "a sequence hands out nothing until `.next()` or `.next_n(n)` is awaited"]
pub struct NamedSequence<'a> {
    route: Route<'a>,
    spec: Spec,
    /// The scope fields' values, in the order of `spec.scope`, as serialized.
    values: Vec<Result<Bson, String>>,
    call: Call<'a>,
}

/// The setters of a named sequence's options, each `self.spec.<name> = Some(<value>)`,
/// with their docs.
macro_rules! spec_setters {
    ($($(#[$doc:meta])* $name:ident($value:ident: $ty:ty) => $set:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name(mut self, $value: $ty) -> Self {
            self.spec.$name = Some($set);
            self
        }
    )*};
}

impl<'a> NamedSequence<'a> {
    pub(crate) fn new(route: Route<'a>, name: &str) -> Self {
        NamedSequence {
            route,
            spec: Spec::new(name),
            values: Vec::new(),
            call: Call::default(),
        }
    }

    spec_setters! {
        /// The collection holding the counter, instead of the layout's tool's (`counters` for
        /// the tutorial's layout): `counters = "..."` in the attribute.
        ///
        /// ```no_run
        /// # use seqid::AsDatabase;
        /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
        /// let id = db.sequence("userid").counters("sequences").next().await?;
        /// # Ok(()) }
        /// ```
        counters(counters: &str) => counters.to_owned();

        /// How the counter document is laid out: one of [`Layout`]'s presets (the tutorial's
        /// by default), to share another tool's counter; its counters collection and first id
        /// come with it unless set. The name is then the one the tool finds its counter by.
        ///
        /// ```no_run
        /// # use seqid::AsDatabase;
        /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
        /// use seqid::layout::Layout;
        /// // MongoEngine's `User.id`, in `mongoengine.counters`.
        /// let id = db.sequence("user.id").layout(Layout::MONGOENGINE).next().await?;
        /// # Ok(()) }
        /// ```
        layout(layout: Layout) => layout;

        /// The first id, where a counter that does not exist yet starts (1, or the layout's
        /// tool's first id, unless set): 0 or more. A counter that exists goes on from its
        /// value.
        ///
        /// ```no_run
        /// # use seqid::AsDatabase;
        /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
        /// let id = db.sequence("order").start(1000).next().await?; // 1000 on a new counter
        /// # Ok(()) }
        /// ```
        start(start: i64) => start;

        /// How far apart ids are (1 unless set): ids `start`, `start + step`, ... At least 1;
        /// refused with a layout whose tool always adds 1 (MongoEngine's, the Go post's).
        ///
        /// ```no_run
        /// # use seqid::AsDatabase;
        /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
        /// let ids = db.sequence("odd").step(2).next_n(3).await?; // [1, 3, 5] on a new counter
        /// # Ok(()) }
        /// ```
        step(step: u32) => step;

        /// The key of the field the numbers go into (`_id` unless set): what a layout that
        /// finds its counter by field finds it by (mongoose-auto-increment's and typegoose's
        /// `field`), and, with [`collection`](Self::collection), where the missing-counter
        /// check looks for numbers stored.
        ///
        /// ```no_run
        /// # use seqid::AsDatabase;
        /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
        /// use seqid::layout::Layout;
        /// let id = db
        ///     .sequence("Book")
        ///     .layout(Layout::MONGOOSE_AUTO_INCREMENT)
        ///     .field("bookId")
        ///     .next()
        ///     .await?;
        /// # Ok(()) }
        /// ```
        field(field: &str) => field.to_owned();

        /// The collection whose documents hold the numbers, if any (none unless set). With
        /// it, a counter that does not exist yet is made only if that collection holds no
        /// number of the sequence in its [`field`](Self::field) ([`ErrorKind::CounterMissing`]
        /// otherwise, as for an insert), and on a sharded cluster its shard key is checked
        /// as a declared type's. Without it, a missing counter starts at `start`, and only
        /// the counters collection is checked.
        ///
        /// ```no_run
        /// # use seqid::AsDatabase;
        /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
        /// let id = db.sequence("userid").collection("users").next().await?;
        /// # Ok(()) }
        /// ```
        collection(collection: &str) => collection.to_owned();

        /// The write concern of the counter's update (`w: "majority"` unless set); gapless
        /// ids take the caller's transaction's.
        ///
        /// ```no_run
        /// # use seqid::AsDatabase;
        /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
        /// use seqid::layout::CounterWriteConcern;
        /// let id = db
        ///     .sequence("userid")
        ///     .counter_write_concern(CounterWriteConcern::Database)
        ///     .next()
        ///     .await?;
        /// # Ok(()) }
        /// ```
        counter_write_concern(concern: CounterWriteConcern) => concern;
    }

    /// A scope field and its value: the ids come from the counter of that scope, the
    /// same counter a type declaring the sequence with `scope = ...` (the same fields, in
    /// the same order) uses for documents holding these values. Called once per field,
    /// in the declared order. The value is a string, an integer, an ObjectId, a boolean
    /// or null ([`ErrorKind::InvalidScope`] otherwise); a field named twice is
    /// [`ErrorKind::InvalidOption`].
    ///
    /// ```no_run
    /// # use seqid::AsDatabase;
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// // The counter of `#[seq_id("ticket", scope = ["project", "year"])]` for apollo, 2026.
    /// let number = db
    ///     .sequence("ticket")
    ///     .scope("project", "apollo")
    ///     .scope("year", 2026)
    ///     .next()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn scope(mut self, field: &str, value: impl Serialize) -> Self {
        self.spec.scope.push(field.to_owned());
        let value = mongodb::bson::to_bson(&value).map_err(|error| error.to_string());
        self.values.push(value);
        self
    }

    /// Takes ids with the block strategy: blocks of `block_size` ids reserved with one
    /// `$inc` and handed out in memory by a [`Sequences`](crate::Sequences) handle (the
    /// block a declared type with the same name, counters collection and block size
    /// uses). At least 1. Through a bare `mongodb::Database`, each call reserves exactly
    /// its own ids.
    ///
    /// ```no_run
    /// # async fn run(sequences: seqid::Sequences) -> Result<(), seqid::Error> {
    /// use seqid::AsDatabase;
    /// let db = sequences.database("app");
    /// let id = db.sequence("event").block(100).next().await?;
    /// # Ok(()) }
    /// ```
    pub fn block(mut self, block_size: u32) -> Self {
        let prefetch = self.spec.prefetch.unwrap_or(true);
        self.spec.strategy = Some(Strategy::Block {
            block_size,
            prefetch,
        });
        self
    }

    /// Whether the block strategy's handle reserves the next block once less than half of
    /// the live one is left, while callers go on taking from it (`true`, the default), or
    /// only once it is spent (`false`: the caller who finds it spent waits for the round
    /// trip, and a process ends holding at most one block less one, not two less one).
    /// As `prefetch = false` in `#[seq_id]`; for the block strategy only
    /// ([`ErrorKind::InvalidOption`] with another).
    ///
    /// ```no_run
    /// # async fn run(sequences: seqid::Sequences) -> Result<(), seqid::Error> {
    /// use seqid::AsDatabase;
    /// let db = sequences.database("app");
    /// let id = db.sequence("voucher").block(50).prefetch(false).next().await?;
    /// # Ok(()) }
    /// ```
    pub fn prefetch(mut self, prefetch: bool) -> Self {
        self.spec.prefetch = Some(prefetch);
        if let Some(Strategy::Block { block_size, .. }) = self.spec.strategy {
            self.spec.strategy = Some(Strategy::Block {
                block_size,
                prefetch,
            });
        }
        self
    }

    /// Takes ids with the gapless strategy: in the caller's transaction, given with
    /// [`session`](Self::session) ([`ErrorKind::TransactionRequired`] without one), so that
    /// an aborted transaction takes them back.
    ///
    /// ```no_run
    /// # use seqid::AsDatabase;
    /// # async fn run(db: mongodb::Database, client: mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// let mut session = client.start_session().await?;
    /// session.start_transaction().await?;
    /// let number = db.sequence("invoice").gapless().session(&mut session).next().await?;
    /// // ... write what the number is for, in the same transaction ...
    /// session.commit_transaction().await?;
    /// # Ok(()) }
    /// ```
    pub fn gapless(mut self) -> Self {
        self.spec.strategy = Some(Strategy::Gapless);
        self
    }

    session!(
        /// The caller's session. A gapless sequence takes its ids in the transaction
        /// running in it (required); counters and block take theirs outside any
        /// transaction, as inserts do, so that a transaction that aborts costs a gap,
        /// never an id handed out twice.
        ///
        /// ```no_run
        /// # use seqid::AsDatabase;
        /// # async fn run(db: mongodb::Database, mut session: mongodb::ClientSession) -> Result<(), seqid::Error> {
        /// let id = db.sequence("userid").session(&mut session).next().await?;
        /// # Ok(()) }
        /// ```
    );

    /// The next id: await it.
    ///
    /// ```no_run
    /// # use seqid::AsDatabase;
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let id: i64 = db.sequence("userid").next().await?;
    /// # Ok(()) }
    /// ```
    pub async fn next(self) -> Result<i64, Error> {
        Ok(self.take("next", 1).await?[0])
    }

    /// The next `n` ids, increasing, `step` apart but for ids a cancelled caller gave
    /// back to a handle's live block (one reservation for all of them): await it. `n` 0
    /// gives none, with no round trip; `n` ids whose span overflows an `i64`, or more than
    /// the process can hold, are [`ErrorKind::InvalidOption`] (the guide's [what is
    /// refused](crate::guide::numbers#what-is-refused)).
    ///
    /// ```no_run
    /// # use seqid::AsDatabase;
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let ids: Vec<i64> = db.sequence("userid").next_n(10).await?;
    /// # Ok(()) }
    /// ```
    pub async fn next_n(self, n: u64) -> Result<Vec<i64>, Error> {
        self.take("next_n", n).await
    }
}

impl NamedSequence<'_> {
    /// `n` ids, every option checked first; one at least for `n` 1. In a
    /// `seqid.numbers` span (`operation`: the call), once the options make a sequence.
    async fn take(self, operation: &'static str, n: u64) -> Result<Vec<i64>, Error> {
        let NamedSequence {
            route,
            spec,
            values,
            call,
        } = self;
        let seq = named::sequence(&spec)?;
        let scope = scope_of(seq, values);
        numbers(seq, route, scope, call, operation, n).await
    }

    /// What the [`Sequences`](crate::Sequences) handle this sequence is named through
    /// has done for it in its database: round trips that reserved ids, ids handed out,
    /// retries. The handle counts per counter, so the calls of a declared type that takes
    /// its ids from the same counter (its name, counters collection and block size) are
    /// counted with these. Through a bare `mongodb::Database` nothing is kept: all zeros.
    /// No round trip; an option refused is its error, as for [`next`](Self::next).
    ///
    /// ```no_run
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// use seqid::AsDatabase;
    /// for _ in 0..30 {
    ///     db.sequence("ticket").block(25).next().await?;
    /// }
    /// let stats = db.sequence("ticket").block(25).stats()?; // ids 30, reservations 2
    /// # Ok(()) }
    /// ```
    pub fn stats(&self) -> Result<Stats, Error> {
        let seq = named::sequence(&self.spec)?;
        Ok(match self.route.registry {
            Some(registry) => registry.stats(self.route.db.name(), seq),
            None => Stats::default(),
        })
    }
}

/// The next id of one of a type's sequences, with the options the type declares, from
/// [`SequenceOf::next`](crate::SequenceOf::next) (`Order::sequence().next(&db)`): await it
/// for the id; or its next `n` ids (`MANY`), from
/// [`SequenceOf::next_n`](crate::SequenceOf::next_n): await them, increasing.
///
/// `S` is the sequence's scope as a type ([`scoped`](crate::scoped)): `.scope(...)` takes
/// a value of it, checked at compile time.
///
/// ```no_run
/// # use seqid::Document;
/// # #[derive(serde::Serialize, Document)]
/// # #[seq_id("order", collection = "orders")]
/// # struct Order { #[serde(rename = "_id")] id: i64 }
/// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
/// let id: i64 = Order::sequence().next(&db).await?;
/// let ids: Vec<i64> = Order::sequence().next_n(&db, 3).await?;
/// # Ok(()) }
/// ```
#[must_use = "a sequence hands out nothing until it is awaited"]
pub struct NextOf<'a, T: Model, S = <T as Model>::Scope, const MANY: bool = false> {
    route: Route<'a>,
    seq: &'static Sequence,
    scope: GivenScope,
    call: Call<'a>,
    n: u64,
    _type: PhantomData<fn() -> (T, S)>,
}

impl<'a, T: Model, S, const MANY: bool> NextOf<'a, T, S, MANY> {
    pub(crate) fn new(route: Route<'a>, seq: &'static Sequence, n: u64) -> Self {
        NextOf {
            route,
            seq,
            scope: GivenScope::default(),
            call: Call::default(),
            n,
            _type: PhantomData,
        }
    }

    scope_setters! {
        scope,
        scope {
            /// The scope whose counter hands the numbers out, for a scoped sequence: a value of
            /// its scope field's type, or a tuple of values in the declared order; a value of
            /// another type does not compile ([`scoped`](crate::scoped)). Required for a scoped
            /// sequence ([`ErrorKind::InvalidScope`] without it); an unscoped one takes none.
            ///
            /// ```no_run
            /// # use seqid::Document;
            /// # #[derive(serde::Serialize, Document)]
            /// # #[seq_id(collection = "invoices")]
            /// # struct Invoice { year: i32, #[seq_id("invoice", scope = "year")] number: i64 }
            /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
            /// let numbers = Invoice::sequence().next_n(&db, 3).scope(2026).await?;
            /// # Ok(()) }
            /// ```
        }
        unchecked {
            /// [`scope`](Self::scope) for a scope known only at run time: any serializable value,
            /// checked when the call runs against the scope fields' Rust types
            /// ([`ErrorKind::InvalidScope`] for a value none of the type's documents can hold).
            ///
            /// ```no_run
            /// # use seqid::Document;
            /// # #[derive(serde::Serialize, Document)]
            /// # #[seq_id(collection = "invoices")]
            /// # struct Invoice { year: i32, #[seq_id("invoice", scope = "year")] number: i64 }
            /// # async fn run(db: seqid::Database, year: mongodb::bson::Bson) -> Result<(), seqid::Error> {
            /// let numbers = Invoice::sequence().next_n(&db, 3).scope_unchecked(year).await?;
            /// # Ok(()) }
            /// ```
        }
    }

    session!(
        /// The caller's session. A gapless sequence takes its numbers in the transaction
        /// running in it (required: [`ErrorKind::TransactionRequired`] without one); counters
        /// and block take theirs outside any transaction, as inserts do.
        ///
        /// ```no_run
        /// # use seqid::Document;
        /// # #[derive(serde::Serialize, Document)]
        /// # #[seq_id("invoice", collection = "invoices", strategy = "gapless")]
        /// # struct Invoice { #[serde(rename = "_id")] id: i64 }
        /// # async fn run(db: seqid::Database, mut session: mongodb::ClientSession) -> Result<(), Box<dyn std::error::Error>> {
        /// session.start_transaction().await?;
        /// let numbers = Invoice::sequence().next_n(&db, 2).session(&mut session).await?;
        /// session.commit_transaction().await?;
        /// # Ok(()) }
        /// ```
    );
}

impl<'a, T: Model, S> IntoFuture for NextOf<'a, T, S, true> {
    type Output = Result<Vec<i64>, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        let scope = self.scope.resolve(self.seq);
        Box::pin(numbers(
            self.seq, self.route, scope, self.call, "next_n", self.n,
        ))
    }
}

impl<'a, T: Model, S> IntoFuture for NextOf<'a, T, S, false> {
    type Output = Result<i64, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        let scope = self.scope.resolve(self.seq);
        let ids = numbers(self.seq, self.route, scope, self.call, "next", 1);
        Box::pin(async move { Ok(ids.await?[0]) })
    }
}

/// `n` numbers of `seq` in `scope` (or why the call named no scope), every option
/// checked first, in a `seqid.numbers` span (`operation`: the call).
async fn numbers(
    seq: &'static Sequence,
    route: Route<'_>,
    scope: Result<Scope, Error>,
    call: Call<'_>,
    operation: &'static str,
    n: u64,
) -> Result<Vec<i64>, Error> {
    let scope = scope.and_then(|scope| fits(seq, operation, n).map(|()| scope));
    let names = (operation, "handed out");
    counted_in_span(seq, (route, call), names, n, scope, move |scope, cx| {
        Box::pin(async move { counted::take_n(&scope, n, cx).await })
    })
    .await
}

/// `n` ids of `seq`'s counter in the scope `scope` names (or why the call named none), in
/// a `seqid.numbers` span (`operation`: the call; `outcome`: what it did with them), in
/// the call's context: `made` takes them and makes them what the call hands out.
pub(crate) async fn counted_in_span<'a, O>(
    seq: &'static Sequence,
    (route, call): (Route<'a>, Call<'a>),
    (operation, outcome): (&'static str, &'static str),
    n: u64,
    scope: Result<Scope, Error>,
    made: impl for<'c> FnOnce(Scope, &'c mut Context<'a>) -> BoxFuture<'c, Result<Vec<O>, Error>>,
) -> Result<Vec<O>, Error> {
    let span = span::of_numbers(seq, operation, n, !seq.scope.is_empty());
    let taken = async {
        let scope = match scope {
            Ok(scope) => scope,
            Err(error) => return Traced::from(Err(error)),
        };
        if n == 0 {
            return Traced::from(Ok(Vec::new()));
        }
        Context::run(seq, route, call, |cx| made(scope, cx)).await
    };
    let taken = taken.instrument(span.clone()).await;
    taken.record_as(&span, outcome)
}

/// The scope the values given with `.scope(...)` name, as a declared sequence's with
/// those fields: the one value, or the values in the order given, each checked against
/// the declared field's Rust type where a type declares the sequence.
fn scope_of(seq: &'static Sequence, values: Vec<Result<Bson, String>>) -> Result<Scope, Error> {
    let mut given = Vec::with_capacity(values.len());
    for (field, value) in seq.scope.iter().zip(values) {
        match value {
            Ok(value) => given.push(value),
            Err(error) => {
                return Err(Error::new(
                    seq,
                    ErrorKind::InvalidScope {
                        scope: format!("{field}: (given)").into(),
                        reason: format!("the value could not be serialized: {error}").into(),
                    },
                ));
            }
        }
    }
    let value = match given.len() {
        0 => return Scope::given(seq, None),
        1 => given.pop().expect("one value"),
        _ => Bson::Array(given),
    };
    check_types(seq, &value)?;
    Scope::given(seq, Some(&value))
}

/// Refuses `n` ids that no counter could hand out at once: `n × step` beyond an `i64`,
/// or more than this process can hold (`option`: the call that asked for them).
pub(crate) fn fits(seq: &'static Sequence, option: &'static str, n: u64) -> Result<(), Error> {
    let refused = |reason| {
        Err(Error::new(
            seq,
            ErrorKind::InvalidOption {
                option,
                value: n.to_string().into(),
                reason,
            },
        ))
    };
    if i128::from(n) * i128::from(seq.layout.step) > i128::from(i64::MAX) {
        return refused("that many ids, `step` apart, span more than an i64 holds".into());
    }
    // A probe for a count that would otherwise abort the process on allocation.
    let huge = n > 1 << 20;
    let size = usize::try_from(n).unwrap_or(usize::MAX);
    if huge && Vec::<i64>::new().try_reserve_exact(size).is_err() {
        return refused("that many ids do not fit in this process's memory".into());
    }
    Ok(())
}
