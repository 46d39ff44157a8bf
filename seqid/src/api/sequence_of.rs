//! [`SequenceOf`]: a sequence of a document type, to take its numbers on their own, find
//! documents by them and administer its counter.

use std::future::Future;
use std::marker::PhantomData;

use crate::api::action::find::Deserializable;
use crate::api::action::{FindOne, LastReserved, NextOf, SetCounter, SyncCounter};
use crate::api::sequences::{AsDatabase, Database};
use crate::base::error::Error;
use crate::call::registry::Stats;
use crate::schema::kind::{Kind, WithCounter};
use crate::schema::model::Model;
use crate::schema::sequence::Sequence;

/// A sequence of the document type `T` (`K`: its strategy, as a [`kind`](crate::kind); `S`:
/// its scope, as a [`scoped`](crate::scoped) type, which `.scope(...)` on its calls takes):
/// the one place for what is done with a type's sequence apart from inserting a document.
/// Its numbers on their own ([`next`](Self::next), [`next_n`](Self::next_n)), a document
/// found by its number ([`find`](Self::find)), what the [`Sequences`](crate::Sequences)
/// handle did for it ([`stats`](Self::stats)), and its counter's operations
/// ([`last_reserved`](Self::last_reserved), [`list_counters`](Self::list_counters),
/// [`set_counter`](Self::set_counter), [`reset_counter`](Self::reset_counter),
/// [`sync_counter`](Self::sync_counter), [`sync_every_scope`](Self::sync_every_scope)), which
/// exist only for a strategy that keeps one ([`kind::WithCounter`](crate::kind::WithCounter):
/// not `optimistic`), checked at compile time.
///
/// [`Document::sequence`](crate::Document::sequence) gives the type's primary sequence
/// ([`Model::SEQUENCE`]); a type that declares several has one associated function per
/// sequence too, named after the field the sequence fills: `<field>_sequence()`
/// (`id_sequence()` for the sequence on `_id` of a field named `id`).
///
/// ```no_run
/// use seqid::Document;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, Document)]
/// #[seq_id("issue_id", collection = "issues")]
/// struct Issue {
///     #[serde(rename = "_id")]
///     id: i64,
///     repo: String,
///     #[seq_id("issue_number", scope = "repo", strategy = "block")]
///     number: i64,
///     title: String,
/// }
///
/// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
/// let numbers = Issue::number_sequence();
/// assert_eq!(numbers.sequence().name, "issue_number");
/// let last = numbers.last_reserved(&db).scope("seqid").await?;
/// let issue = numbers.find(&db, 42).scope("seqid").await?;
/// # Ok(()) }
/// ```
pub struct SequenceOf<T, K, S> {
    seq: &'static Sequence,
    _type: PhantomData<Types<T, K, S>>,
}

/// What a [`SequenceOf`] is of, without holding any of it.
type Types<T, K, S> = fn() -> (T, K, S);

impl<T, K, S> Clone for SequenceOf<T, K, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, K, S> Copy for SequenceOf<T, K, S> {}

impl<T, K, S> std::fmt::Debug for SequenceOf<T, K, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SequenceOf").field(&self.seq.name).finish()
    }
}

impl<T: Model, K: Kind, S> SequenceOf<T, K, S> {
    /// For the derive, which passes one of `T`'s sequences.
    #[doc(hidden)]
    pub const fn __new(seq: &'static Sequence) -> Self {
        SequenceOf {
            seq,
            _type: PhantomData,
        }
    }

    /// The sequence, as declared.
    ///
    /// ```
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("issue_id", collection = "issues")]
    /// # struct Issue { #[serde(rename = "_id")] id: i64, repo: String,
    /// #   #[seq_id("issue_number", scope = "repo", strategy = "block")] number: i64 }
    /// assert_eq!(Issue::number_sequence().sequence().field, "number");
    /// assert_eq!(Issue::id_sequence().sequence().name, "issue_id");
    /// ```
    pub fn sequence(&self) -> &'static Sequence {
        self.seq
    }

    /// The document this sequence numbered `id` (its `_id`, or the field the sequence
    /// numbers), read from the primary, or `None`. Ids compare by value, so a document stored as Int32 by
    /// another tool is found by its `i64` id. For a scoped sequence, name the scope with
    /// [`.scope(...)`](FindOne::scope): numbers repeat across scopes. The type must be
    /// `serde::Deserialize` (`DeserializeOwned`) to be read back.
    ///
    /// A type with several sequences finds by each of them through its own handle,
    /// `Ticket::number_sequence().find(&db, 1041).scope("apollo")`.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64, name: String }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let mut ada = User { id: 0, name: "Ada".into() };
    /// let id = ada.insert(&db).await?;
    /// let found = User::sequence().find(&db, id).await?;
    /// assert_eq!(found.map(|u| u.name).as_deref(), Some("Ada"));
    /// # Ok(()) }
    /// ```
    pub fn find(self, db: &impl AsDatabase, id: impl Into<i128>) -> FindOne<'_, T, S>
    where
        T: Deserializable,
    {
        FindOne::new(db.route(), self.seq, id)
    }

    /// What the [`Sequences`](crate::Sequences) handle of `db` has done for the sequence
    /// in `db` since it took up the sequence: round trips that reserved ids, ids handed
    /// out, and retries. (Calls through a bare `mongodb::Database` share no state, so
    /// there is nothing to count for them.)
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("ticket", strategy = "optimistic")]
    /// # struct Ticket { _id: Option<i64> }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// Ticket { _id: None }.insert(&db).await?;
    /// let stats = Ticket::sequence().stats(&db);
    /// println!("{} retries so far", stats.retries);
    /// # Ok(()) }
    /// ```
    pub fn stats(self, db: &Database) -> Stats {
        db.stats(self.seq)
    }
}

impl<T: Model, K: WithCounter, S> SequenceOf<T, K, S> {
    /// The sequence's next number, with no document: from the counter the type's inserts
    /// take their ids from, with every option the type declares (its counters collection,
    /// layout, start, step, strategy and scope fields, the scope's type checked at compile
    /// time). For a number no document of this type carries (an order number shown before
    /// its order is stored is its document's: [`Document::reserve_id`](crate::Document::reserve_id)).
    /// Gapless numbers are taken in the caller's transaction
    /// ([`session`](NextOf::session), required). The refusals: the guide's [numbers on
    /// their own](crate::guide::numbers#what-is-refused).
    ///
    /// ```no_run
    /// use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("order", collection = "orders", start = 1001)]
    /// # struct Order { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// let number = Order::sequence().next(&db).await?; // 1001 on a new counter
    /// # Ok(()) }
    /// ```
    pub fn next(self, db: &impl AsDatabase) -> NextOf<'_, T, S> {
        NextOf::new(db.route(), self.seq, 1)
    }

    /// The sequence's next `n` numbers, increasing (one reservation for all of them), as
    /// [`next`](Self::next).
    ///
    /// ```no_run
    /// use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id(collection = "tickets")]
    /// # struct Ticket { project: String, #[seq_id("ticket", scope = "project")] number: i64 }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// let numbers = Ticket::sequence().next_n(&db, 3).scope("apollo").await?;
    /// # Ok(()) }
    /// ```
    pub fn next_n(self, db: &impl AsDatabase, n: u64) -> NextOf<'_, T, S, true> {
        NextOf::new(db.route(), self.seq, n)
    }

    /// Every counter of the sequence in one call (one per scope that has one), each with
    /// the last id it gave out (with `block`, the last id **reserved**), the ids this
    /// process's [`Sequences`](crate::Sequences) handle holds of it, and the largest number
    /// stored in its scope: see [`CounterState`](crate::CounterState). One query for the
    /// counters, and one per counter for the largest number stored, unless
    /// [`without_largest_stored`](crate::action::ListCounters::without_largest_stored).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id(collection = "tickets")]
    /// # struct Ticket { project: String, #[seq_id("ticket", scope = "project", strategy = "block")] number: i64 }
    /// # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
    /// for counter in Ticket::sequence().list_counters(&db).await? {
    ///     // { "project": "apollo" }: last reserved 200, 58 held here (next 143), largest stored 142
    ///     println!("{counter}");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn list_counters(self, db: &impl AsDatabase) -> crate::api::action::ListCounters<'_, T> {
        crate::api::action::ListCounters::new(db.route(), self.seq)
    }

    /// The last id reserved from the counter, read without taking one, or `None` while the
    /// counter does not exist (the next id is then `start`). With `counters` and `gapless`
    /// every id is handed out as it is reserved, so that is the last id handed out; with
    /// `block`, ids are reserved a block at a time and handed out from memory, so the
    /// counter runs up to `2 × block_size - 1` ids per process ahead of the ids stored
    /// (the live block's rest, and the next one reserved early; `block_size - 1` with
    /// `prefetch = false`):
    /// [`list_counters`](Self::list_counters) shows what this process still holds. For
    /// a scoped sequence, name the scope with [`.scope(...)`](LastReserved::scope).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let last: Option<i64> = User::sequence().last_reserved(&db).await?;
    /// # Ok(()) }
    /// ```
    pub fn last_reserved(self, db: &impl AsDatabase) -> LastReserved<'_, T, S> {
        LastReserved::new(db.route(), self.seq)
    }

    /// Sets the counter to `last`, the last id handed out: the next id is `last + step`
    /// (`last + 1` by default).
    /// Refused below the largest id stored unless asked ([`SetCounter`]); this process's
    /// live block is dropped. For a scoped sequence, name the scope with
    /// [`.scope(...)`](SetCounter::scope).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// // Leave room for ids assigned by hand: the next one is 10000.
    /// User::sequence().set_counter(&db, 9999).await?;
    /// # Ok(()) }
    /// ```
    pub fn set_counter(self, db: &impl AsDatabase, last: i64) -> SetCounter<'_, T, S> {
        SetCounter::to(db.route(), self.seq, last)
    }

    /// Sets the counter back to `start - step`, so that the next id is the sequence's first.
    /// Refused while ids from `start` on are stored, unless asked ([`SetCounter`]).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// User::collection(&db).delete_many(mongodb::bson::doc! {}).await.ok();
    /// User::sequence().reset_counter(&db).await?;
    /// # Ok(()) }
    /// ```
    pub fn reset_counter(self, db: &impl AsDatabase) -> SetCounter<'_, T, S> {
        SetCounter::to_start(db.route(), self.seq)
    }

    /// Raises the counter to the largest numeric id already in the collection (in the
    /// sequence's field, and for a scoped sequence in the scope named with
    /// [`.scope(...)`](SyncCounter::scope)), and returns the counter's value: adopt seqid on
    /// a collection that holds ids written by other means (an import, explicit ids, the
    /// optimistic strategy), so that the next id is free. It never lowers the counter, so
    /// it is safe to run at every start. This process's live block is dropped, since the
    /// ids left in it may be among those stored; other processes' are not: call it before
    /// they insert.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("userid", collection = "users")]
    /// # struct User { #[serde(rename = "_id")] id: i64, name: String }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// // `users` was imported with _id 1..=5000 and no counter.
    /// assert_eq!(User::sequence().sync_counter(&db).await?, 5000);
    /// let mut next = User { id: 0, name: "first after the import".into() };
    /// assert_eq!(next.insert(&db).await?, 5001);
    /// # Ok(()) }
    /// ```
    pub fn sync_counter(self, db: &impl AsDatabase) -> SyncCounter<'_, T, S> {
        SyncCounter::new(db.route(), self.seq)
    }

    /// Raises the counter of every scope that has documents to the largest id stored in
    /// it, as [`sync_counter`](Self::sync_counter) does for one, and returns how
    /// many counters it brought up to date (1 for an unscoped sequence). Documents whose
    /// scope fields hold no scope value belong to no scope and are passed over.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id(collection = "tickets")]
    /// # struct Ticket { project: String, #[seq_id("ticket", scope = "project")] number: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// // Tickets of 40 projects were imported with their numbers.
    /// assert_eq!(Ticket::sequence().sync_every_scope(&db).await?, 40);
    /// # Ok(()) }
    /// ```
    pub fn sync_every_scope(
        self,
        db: &impl AsDatabase,
    ) -> impl Future<Output = Result<u64, Error>> + Send {
        crate::api::action::sync_every_scope(db.route(), self.seq)
    }
}
