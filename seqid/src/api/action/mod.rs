//! The actions [`Document`](crate::Document)'s methods return, as the driver's: each is awaited directly
//! (`IntoFuture`), after options set by method. This module is their one public path:
//! [`Insert`], [`FindOrInsert`] and [`NumberDraft`] (each of one document, or with `MANY`
//! of many), [`FindOne`], [`Replace`],
//! and the counter's administration, [`ListCounters`], [`LastReserved`], [`SetCounter`] and
//! [`SyncCounter`]; and [`Transaction`], which runs them in a transaction. A number on its
//! own, with no document: [`NamedSequence`] (from
//! [`AsDatabase::sequence`](crate::AsDatabase::sequence)), its
//! [`next`](NamedSequence::next) and [`next_n`](NamedSequence::next_n) awaited; of a type's
//! sequence, [`NextOf`]. A model's next id before its document: [`Reserve`], for
//! [`Reserved`] tokens that [`Insert::reserved`] stores documents under.
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, Document)]
//! # #[seq_id("ticket", strategy = "optimistic")]
//! # struct Ticket { _id: i64 }
//! # async fn run(db: mongodb::Database, client: mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
//! let mut session = client.start_session().await?;
//! let id = Ticket { _id: 0 }.insert(&db).session(&mut session).max_attempts(4).await?;
//! # Ok(()) }
//! ```

/// `session`, the setter of every action that writes (its options in `call`), with the
/// doc comment given, which differs between the inserts and the numbering of drafts.
/// Declared before the modules that use it, which see it without importing it.
macro_rules! session {
    ($(#[$doc:meta])*) => {
        $(#[$doc])*
        pub fn session(mut self, session: impl Into<&'a mut mongodb::ClientSession>) -> Self {
            self.call.session = Some(session.into());
            self
        }
    };
}

/// `scope` and `scope_unchecked` of an action whose scope, as given, is in `$field`, each
/// with its docs: the one scope a call of a scoped sequence names, checked at compile time
/// by its type, or at run time.
macro_rules! scope_setters {
    ($field:ident, scope { $(#[$scope:meta])* } unchecked { $(#[$unchecked:meta])* }) => {
        $(#[$scope])*
        pub fn scope(mut self, scope: impl crate::schema::scoped::Names<S>) -> Self {
            self.$field = crate::fields::scope::GivenScope::new(scope);
            self
        }

        $(#[$unchecked])*
        pub fn scope_unchecked(mut self, scope: impl serde::Serialize) -> Self {
            self.$field = crate::fields::scope::GivenScope::unchecked(scope);
            self
        }
    };
}

/// `IntoFuture` for an action that carries its call in `run`, set by its constructor where
/// `T`'s bounds hold, so that awaiting it requires nothing (see `find::Deserializable`):
/// the `$future` of a `Result<$value, Error>`.
macro_rules! awaits_run {
    ([$($generics:tt)*] $action:ty => $future:ty, $value:ty) => {
        impl<$($generics)*> std::future::IntoFuture for $action {
            type Output = Result<$value, crate::base::error::Error>;
            type IntoFuture = $future;

            fn into_future(self) -> Self::IntoFuture {
                (self.run)(self)
            }
        }
    };
}

mod counter;
pub(crate) mod find;
pub(crate) mod find_or_insert;
pub(crate) mod future;
pub(crate) mod items;
pub(crate) mod list;
pub(crate) mod next;
pub(crate) mod number;
pub(crate) mod replace;
pub(crate) mod reserve;
pub(crate) mod transaction;

use std::future::IntoFuture;

use future::InsertFuture;

pub(crate) use counter::sync_every_scope;
pub use counter::{LastReserved, SetCounter, SyncCounter};
pub use find::FindOne;
pub use find_or_insert::FindOrInsert;
pub use items::AppendItems;
pub use list::ListCounters;
pub use next::{NamedSequence, NextOf};
pub use number::NumberDraft;
pub use replace::Replace;
pub use reserve::{Reserve, Reserved};
pub use transaction::{Labelled, Transaction};

use crate::base::error::Error;
use crate::call::context::Call;
use crate::call::registry::Route;
use crate::counter::reserved::ReservedId;
use crate::insert::{many, one};
use crate::schema::id::IdField;
use crate::schema::kind;
use crate::schema::model::Model;

/// The setters the inserts and the finds-or-inserts offer; `$example` shows the action
/// awaited.
macro_rules! setters {
    ($action:ident [$($generics:tt)*] [$($args:tt)*], $example:literal) => {
        impl<'a, T: Model, $($generics)*> $action<'a, T, $($args)*> {
            session!(
                /// Runs the insert in `session`, and in its transaction if one is running:
                /// see [`Document`'s notes on sessions](crate::Document#sessions-and-transactions).
                ///
                /// ```no_run
                /// # use seqid::Document;
                /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
                /// # #[seq_id("ticket", strategy = "optimistic")]
                /// # struct Ticket { _id: i64, #[seq_key] code: String }
                /// # async fn run(db: mongodb::Database, mut session: mongodb::ClientSession) -> Result<(), seqid::Error> {
                /// # let mut ticket = Ticket { _id: 0, code: "T-1".into() };
                /// # let mut tickets = vec![Ticket { _id: 0, code: "T-2".into() }, Ticket { _id: 0, code: "T-3".into() }];
                #[doc = concat!("let done = ", $example, ".session(&mut session).await?;")]
                /// # Ok(()) }
                /// ```
            );

            /// Asserts that no other writer stores a document equal to this one (for many
            /// documents: to any of them), because each carries something only its writer
            /// puts there, such as a request id. A document equal to it, field by field,
            /// found at its id is then taken to be this very insert's, which settles what
            /// seqid could not learn otherwise: an answer lost after the request was sent,
            /// and, in [`resume_insert`](crate::Document::resume_insert), an id that a document
            /// already holds (this insert's earlier copy, or another writer's).
            ///
            /// Without it, nothing is ever taken to be stored because of what it holds:
            /// equal content says nothing of who wrote it, and those outcomes are
            /// [`ErrorKind::OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown). Asserting it falsely lets another writer's equal
            /// document pass for this one, which is then never stored.
            ///
            /// ```no_run
            /// # use seqid::Document;
            /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
            /// # #[seq_id("ticket", strategy = "optimistic")]
            /// # struct Ticket { _id: i64, #[seq_key] code: String }
            /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
            /// # let mut ticket = Ticket { _id: 0, code: "T-1".into() };
            /// # let mut tickets = vec![Ticket { _id: 0, code: "T-2".into() }, Ticket { _id: 0, code: "T-3".into() }];
            #[doc = concat!("let done = ", $example, ".content_is_unique().await?;")]
            /// # Ok(()) }
            /// ```
            pub fn content_is_unique(mut self) -> Self {
                self.call.content_is_unique = true;
                self
            }
        }

        impl<'a, T: Model, $($generics)*> $action<'a, T, $($args)*> {
            /// Attempts the optimistic loop makes at most for this call before
            /// [`ErrorKind::RetriesExhausted`](crate::error::ErrorKind::RetriesExhausted) (for many documents: rounds of retries of those
            /// whose ids were taken), instead of `max_attempts` in the attribute; at least
            /// 1. The [time budget](Self::time_budget) still holds: the loop stops at
            /// whichever comes first. By default only the time bounds the loop. Offered
            /// for the optimistic strategy only.
            ///
            /// ```no_run
            /// # use seqid::Document;
            /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
            /// # #[seq_id("ticket", strategy = "optimistic")]
            /// # struct Ticket { _id: i64, #[seq_key] code: String }
            /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
            /// # let mut ticket = Ticket { _id: 0, code: "T-1".into() };
            /// # let mut tickets = vec![Ticket { _id: 0, code: "T-2".into() }, Ticket { _id: 0, code: "T-3".into() }];
            #[doc = concat!("let done = ", $example, ".max_attempts(3).await?;")]
            /// # Ok(()) }
            /// ```
            pub fn max_attempts(mut self, attempts: u32) -> Self
            where
                T::Kind: kind::Retrying,
            {
                self.call.max_attempts = Some(attempts);
                self
            }

            /// How long the optimistic loop keeps retrying for this call while other
            /// writers take the ids it tries, from its first attempt, before
            /// [`ErrorKind::RetriesExhausted`](crate::error::ErrorKind::RetriesExhausted); instead of `time_budget_ms` in the attribute
            /// ([`DEFAULT_TIME_BUDGET`](crate::Sequence::DEFAULT_TIME_BUDGET), 10 s, by default).
            /// A write under way is not cut short: the budget decides whether to try
            /// again. More than zero. Offered for the optimistic strategy only.
            ///
            /// ```no_run
            /// # use seqid::Document;
            /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
            /// # #[seq_id("ticket", strategy = "optimistic")]
            /// # struct Ticket { _id: i64, #[seq_key] code: String }
            /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
            /// # let mut ticket = Ticket { _id: 0, code: "T-1".into() };
            /// # let mut tickets = vec![Ticket { _id: 0, code: "T-2".into() }, Ticket { _id: 0, code: "T-3".into() }];
            /// use std::time::Duration;
            #[doc = concat!("let done = ", $example, ".time_budget(Duration::from_secs(2)).await?;")]
            /// # Ok(()) }
            /// ```
            pub fn time_budget(mut self, budget: std::time::Duration) -> Self
            where
                T::Kind: kind::Retrying,
            {
                self.call.time_budget = Some(budget);
                self
            }
        }
    };
}

setters!(Insert [const RESUME: bool, const MANY: bool] [RESUME, MANY], "ticket.insert(&db)");
setters!(FindOrInsert [K, const MANY: bool] [K, MANY], "ticket.find_or_insert(&db)");

/// An insert of one document, from [`Document::insert`](crate::Document::insert), or
/// with `RESUME`, from [`Document::resume_insert`](crate::Document::resume_insert): await
/// it for the id. With `MANY`, of many documents, from
/// [`Document::insert_many`](crate::Document::insert_many), or with `RESUME` too, from
/// [`Document::resume_insert_many`](crate::Document::resume_insert_many): await it for the
/// ids, in order.
#[must_use = "an insert does nothing until it is awaited"]
pub struct Insert<'a, T: Model, const RESUME: bool = false, const MANY: bool = false> {
    /// The document (`MANY` false: a slice of one) or the documents.
    docs: &'a mut [T],
    db: Route<'a>,
    call: Call<'a>,
    /// The id reserved for the document ([`Insert::reserved`]): the action's alone, never
    /// held in an insert's state without one.
    token: Option<ReservedId>,
}

impl<'a, T: Model, const RESUME: bool> Insert<'a, T, RESUME> {
    pub(crate) fn new(doc: &'a mut T, db: Route<'a>) -> Self {
        Insert::with(std::slice::from_mut(doc), db)
    }
}

impl<'a, T: Model, const RESUME: bool> Insert<'a, T, RESUME, true> {
    pub(crate) fn new_many(docs: &'a mut [T], db: Route<'a>) -> Self {
        Insert::with(docs, db)
    }
}

impl<'a, T: Model, const RESUME: bool, const MANY: bool> Insert<'a, T, RESUME, MANY> {
    fn with(docs: &'a mut [T], db: Route<'a>) -> Self {
        Insert {
            docs,
            db,
            call: Call::default(),
            token: None,
        }
    }
}

impl<'a, T: Model> Insert<'a, T> {
    /// Stores the document under an id reserved for it before
    /// ([`Document::reserve_ids`](crate::Document::reserve_ids)), instead of taking one:
    /// the token's id is written into the id field, and the display codes from it. The
    /// document's id field is unset, or the token's id already
    /// ([`Reserved::fill`](crate::Reserved::fill)); any other id is refused as `insert`
    /// refuses it ([`ErrorKind::IdAlreadySet`](crate::error::ErrorKind::IdAlreadySet)). The insert goes to the database the id was
    /// reserved in, and through the same [`Sequences`](crate::Sequences) handle (or a
    /// clone) if both went through one ([`ErrorKind::ReservedElsewhere`](crate::error::ErrorKind::ReservedElsewhere)): the driver gives a
    /// `Client` no identity, so through a bare `mongodb::Database` only the database names
    /// are compared, and a handle per deployment is what tells two deployments' databases
    /// of one name apart. The document is of the scope the id was reserved for
    /// ([`ErrorKind::ReservedScope`](crate::error::ErrorKind::ReservedScope)), and a gapless id is inserted in the transaction it was
    /// reserved in ([`ErrorKind::ReservedTransaction`](crate::error::ErrorKind::ReservedTransaction)): all checked before anything is
    /// written. A document's other sequences take their ids as usual.
    /// The rest is any insert's: a lost answer is [`ErrorKind::OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown), the
    /// document keeping the id, and [`resume_insert`](crate::Document::resume_insert)
    /// settles it; a document refused gets its id unset, and the reserved id is then a
    /// gap. For `insert` only: [`resume_insert`](crate::Document::resume_insert) finishes an
    /// insert under the id the document carries, and takes no token (a compile error).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("order", collection = "orders")]
    /// # struct Order { #[serde(rename = "_id")] id: i64, total: i64 }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// let token = Order::reserve_id(&db).await?;
    /// let mut order = Order { id: 0, total: 4200 };
    /// let id = order.insert(&db).reserved(token).await?;
    /// # Ok(()) }
    /// ```
    pub fn reserved(mut self, token: Reserved<T>) -> Self {
        self.token = Some(token.into_reserved_id());
        self
    }
}

impl<'a, T: Model, const RESUME: bool> IntoFuture for Insert<'a, T, RESUME> {
    type Output = Result<<T::Id as IdField>::Value, Error>;
    type IntoFuture = InsertFuture<'a, <T::Id as IdField>::Value>;

    fn into_future(self) -> Self::IntoFuture {
        // One document: `new`'s slice of one.
        let (doc, db, call) = (&mut self.docs[0], self.db, self.call);
        // Boxed apart: a box as large as the larger of the two would cost every insert
        // (see `crate::insert` on the size of the insert's state).
        let insert = match (RESUME, self.token) {
            (false, None) => {
                InsertFuture::run::<T>("insert", 1, db, call, |cx| Box::pin(one::one(doc, cx)))
            }
            (false, Some(reserved)) => InsertFuture::run::<T>("insert", 1, db, call, |cx| {
                Box::pin(one::reserved(doc, reserved, cx))
            }),
            // `reserved` is offered on an insert alone: a resume holds no token.
            (true, _) => InsertFuture::run::<T>("resume_insert", 1, db, call, |cx| {
                Box::pin(one::resume(doc, cx))
            }),
        };
        insert.scoped(&T::SEQUENCE)
    }
}

impl<'a, T: Model, const RESUME: bool> IntoFuture for Insert<'a, T, RESUME, true> {
    type Output = Result<Vec<<T::Id as IdField>::Value>, Error>;
    type IntoFuture = InsertFuture<'a, Vec<<T::Id as IdField>::Value>>;

    fn into_future(self) -> Self::IntoFuture {
        let (docs, db, call) = (self.docs, self.db, self.call);
        let count = docs.len();
        match RESUME {
            false => InsertFuture::run::<T>("insert_many", count, db, call, |cx| {
                Box::pin(many::many(docs, cx))
            }),
            true => InsertFuture::run::<T>("resume_insert_many", count, db, call, |cx| {
                Box::pin(many::resume_many(docs, cx))
            }),
        }
    }
}
