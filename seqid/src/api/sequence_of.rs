//! [`SequenceOf`]: one sequence of a document type that declares several, to find by its
//! numbers and to administer its counter.

use std::future::Future;
use std::marker::PhantomData;

use crate::api::action::find::Deserializable;
use crate::api::action::{FindById, LastReserved, NextNOf, NextOf, SetCounter, SyncCounter};
use crate::api::sequences::{AsDatabase, Database};
use crate::base::error::Error;
use crate::base::kind::{Kind, WithCounter};
use crate::base::model::Model;
use crate::base::sequence::Sequence;
use crate::round_trip::indexes;
use crate::state::registry::Stats;

/// One sequence of a document type `T` that declares several (`K`: its strategy, as a
/// [`kind`](crate::kind); `S`: its scope, as a [`scoped`](crate::scoped) type, which
/// `.scope(...)` on its finds and counter's operations takes). `#[derive(Document)]` gives one per sequence of such a type, as
/// an associated function named after the field the sequence fills: `<field>_sequence()`
/// (`id_sequence()` for the sequence on `_id` of a field named `id`). What
/// [`Document`](crate::Document) does for the
/// type's primary sequence ([`Model::SEQUENCE`]), this does for any of them; the counter's
/// operations exist only for a sequence that keeps one (not `optimistic`), checked at
/// compile time.
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

    /// The document this sequence numbered `id` (in the scope named with
    /// [`.scope(...)`](FindById::scope), for a scoped sequence), read from the primary, as
    /// [`Document::find_by_id`](crate::Document::find_by_id).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, serde::Deserialize, Document)]
    /// # #[seq_id("issue_id", collection = "issues")]
    /// # struct Issue { #[serde(rename = "_id")] id: i64, repo: String,
    /// #   #[seq_id("issue_number", scope = "repo", strategy = "block")] number: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let issue: Option<Issue> = Issue::number_sequence().find(&db, 7).scope("seqid").await?;
    /// # Ok(()) }
    /// ```
    pub fn find(self, db: &impl AsDatabase, id: i64) -> FindById<'_, T, S>
    where
        T: Deserializable,
    {
        FindById::new(db.route(), self.seq, id)
    }

    /// Creates the unique index this sequence relies on, if missing, and returns its name,
    /// as [`Document::create_indexes`](crate::Document::create_indexes) does for every
    /// sequence of the type.
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("issue_id", collection = "issues")]
    /// # struct Issue { #[serde(rename = "_id")] id: i64, repo: String,
    /// #   #[seq_id("issue_number", scope = "repo", strategy = "block")] number: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// assert_eq!(Issue::number_sequence().create_index(&db).await?, ["repo_1_number_1"]);
    /// # Ok(()) }
    /// ```
    pub fn create_index(
        self,
        db: &impl AsDatabase,
    ) -> impl Future<Output = Result<Vec<String>, Error>> + Send {
        // A sequence of a type numbered later is numbered later (every one of them is).
        indexes::create_numbering(db.route(), self.seq, T::NUMBERED_LATER)
    }

    /// What the [`Sequences`](crate::Sequences) handle of `db` has done for this sequence,
    /// as [`Document::stats`](crate::Document::stats).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("issue_id", collection = "issues")]
    /// # struct Issue { #[serde(rename = "_id")] id: i64, repo: String,
    /// #   #[seq_id("issue_number", scope = "repo", strategy = "block")] number: i64 }
    /// # fn run(db: seqid::Database) {
    /// println!("{} blocks reserved", Issue::number_sequence().stats(&db).reservations);
    /// # }
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
        NextOf::new(db.route(), self.seq)
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
    pub fn next_n(self, db: &impl AsDatabase, n: u64) -> NextNOf<'_, T, S> {
        NextNOf::new(db.route(), self.seq, n)
    }

    /// Lists this sequence's counters, as
    /// [`Document::list_counters`](crate::Document::list_counters).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("issue_id", collection = "issues")]
    /// # struct Issue { #[serde(rename = "_id")] id: i64, repo: String,
    /// #   #[seq_id("issue_number", scope = "repo", strategy = "block")] number: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let counters = Issue::number_sequence().list_counters(&db).await?;
    /// # Ok(()) }
    /// ```
    pub fn list_counters(self, db: &impl AsDatabase) -> crate::api::action::ListCounters<'_, T> {
        crate::api::action::ListCounters::new(db.route(), self.seq)
    }

    /// Reads this sequence's counter, as
    /// [`Document::last_reserved`](crate::Document::last_reserved).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("issue_id", collection = "issues")]
    /// # struct Issue { #[serde(rename = "_id")] id: i64, repo: String,
    /// #   #[seq_id("issue_number", scope = "repo", strategy = "block")] number: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let last = Issue::number_sequence().last_reserved(&db).scope("seqid").await?;
    /// # Ok(()) }
    /// ```
    pub fn last_reserved(self, db: &impl AsDatabase) -> LastReserved<'_, T, S> {
        LastReserved::new(db.route(), self.seq)
    }

    /// Sets this sequence's counter, as
    /// [`Document::set_counter`](crate::Document::set_counter).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("issue_id", collection = "issues")]
    /// # struct Issue { #[serde(rename = "_id")] id: i64, repo: String,
    /// #   #[seq_id("issue_number", scope = "repo", strategy = "block")] number: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// Issue::number_sequence().set_counter(&db, 100).scope("imported").await?;
    /// # Ok(()) }
    /// ```
    pub fn set_counter(self, db: &impl AsDatabase, last: i64) -> SetCounter<'_, T, S> {
        SetCounter::to(db.route(), self.seq, last)
    }

    /// Sets this sequence's counter back to its start, as
    /// [`Document::reset_counter`](crate::Document::reset_counter).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("issue_id", collection = "issues")]
    /// # struct Issue { #[serde(rename = "_id")] id: i64, repo: String,
    /// #   #[seq_id("issue_number", scope = "repo", strategy = "block")] number: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// Issue::number_sequence().reset_counter(&db).scope("archived").below_stored().await?;
    /// # Ok(()) }
    /// ```
    pub fn reset_counter(self, db: &impl AsDatabase) -> SetCounter<'_, T, S> {
        SetCounter::to_start(db.route(), self.seq)
    }

    /// Raises this sequence's counter to the largest number stored, as
    /// [`Document::sync_counter`](crate::Document::sync_counter).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("issue_id", collection = "issues")]
    /// # struct Issue { #[serde(rename = "_id")] id: i64, repo: String,
    /// #   #[seq_id("issue_number", scope = "repo", strategy = "block")] number: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let last = Issue::number_sequence().sync_counter(&db).scope("seqid").await?;
    /// # Ok(()) }
    /// ```
    pub fn sync_counter(self, db: &impl AsDatabase) -> SyncCounter<'_, T, S> {
        SyncCounter::new(db.route(), self.seq)
    }

    /// Raises the counter of every scope of this sequence, as
    /// [`Document::sync_every_scope`](crate::Document::sync_every_scope).
    ///
    /// ```no_run
    /// # use seqid::Document;
    /// # #[derive(serde::Serialize, Document)]
    /// # #[seq_id("issue_id", collection = "issues")]
    /// # struct Issue { #[serde(rename = "_id")] id: i64, repo: String,
    /// #   #[seq_id("issue_number", scope = "repo", strategy = "block")] number: i64 }
    /// # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
    /// let scopes = Issue::number_sequence().sync_every_scope(&db).await?;
    /// # Ok(()) }
    /// ```
    pub fn sync_every_scope(
        self,
        db: &impl AsDatabase,
    ) -> impl Future<Output = Result<u64, Error>> + Send {
        crate::api::action::sync_every_scope(db.route(), self.seq)
    }
}
