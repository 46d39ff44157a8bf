//! Sequences on any field, per scope.
//!
//! A sequence may fill a field other than `_id`, and count per scope, as issue numbers count per
//! repository. The struct's attribute then only names the collection, and the field's attribute
//! declares the sequence, with the same keys plus `scope`:
//!
//! ```no_run
//! use mongodb::bson::oid::ObjectId;
//! use seqid::Document;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, Serialize, Deserialize, Document)]
//! #[seq_id(collection = "tickets")]
//! struct Ticket {
//!     #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
//!     id: Option<ObjectId>, // filled by insert when None
//!     project: String,
//!     #[seq_id("ticket", scope = "project", start = 1000)]
//!     number: i64, // 1000, 1001, ... in each project
//! }
//!
//! # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
//! Ticket::create_indexes(&db).await?; // unique { project: 1, number: 1 }
//! let mut t = Ticket { id: None, project: "apollo".into(), number: 0 };
//! t.insert(&db).await?; // t.number == 1000, t.id == Some(..)
//! let found = Ticket::sequence().find(&db, 1000).scope("apollo").await?;
//! let last = Ticket::sequence().last_reserved(&db).scope("apollo").await?; // Some(1000)
//! # Ok(()) }
//! ```
//!
//! [`last_reserved`](crate::SequenceOf::last_reserved) and the counter's other operations are methods
//! of the type's [`SequenceOf`](crate::SequenceOf), offered where its strategy keeps a counter
//! ([`kind::WithCounter`](crate::kind::WithCounter): counters, block and gapless): nothing
//! more to import than `seqid::Document`.
//!
//! An `_id` written `Option<ObjectId>` beside a field sequence is one of the document's ids:
//! `insert` and `insert_many` (and their resumes) fill it with a new `ObjectId` when it is
//! `None`, so you hold every id of what you stored, and set it back to `None` together with the
//! number whenever the document is known not to be stored (a refusal, a call dropped before its
//! write); an unknown outcome keeps both. An `ObjectId` you set is sent as it is and never
//! changed. Since an `ObjectId` the insert made is unique to it, a document found with it after a
//! lost answer is this one: the insert settles that itself, as
//! [`.content_is_unique()`](crate::action::Insert::content_is_unique) would.
//!
//! The `_id` sequence cannot be scoped: a scoped number repeats from one scope to the next, and
//! `_id` must be unique.
//!
//! - **Several sequences per struct**: see [several sequences](super::several_sequences).
//! - **Several scope fields**: `scope = ["tenant", "year"]` (invoices per tenant and year). Scope
//!   fields are named by their Rust names; the document stores them under their serde names.
//! - **Scope values** are read from the document as serialized: a string, an integer (Int32 and
//!   Int64 of one value are one scope), an ObjectId, a boolean, or null; a missing field is the
//!   `null` scope, as MongoDB's equality and indexes have it. Other types (a Double, which may
//!   hold a fraction; an array, indexed element by element; a subdocument, compared in field
//!   order) are refused with [`ErrorKind::InvalidScope`](crate::error::ErrorKind::InvalidScope) before anything
//!   is reserved or written.
//! - **Uniqueness.** The counters, block and gapless strategies hand each number out once per
//!   scope, so they need no index to stay unique. The optimistic strategy needs a unique index on
//!   the scope fields and the field (without it, two writers taking the same largest + 1 would
//!   both be stored), and so does [`resume_insert`](crate::Document::resume_insert) (which
//!   relies on it to refuse a second copy of a document): both return
//!   [`ErrorKind::MissingIndex`](crate::error::ErrorKind::MissingIndex) without it.
//!   [`T::create_indexes(&db)`](crate::Document::create_indexes) creates it (named as MongoDB
//!   names it by default, `project_1_number_1`, by which seqid tells a duplicate number from a
//!   duplicate on another unique index) and is cheap to run at every start. The optimistic loop
//!   retries a duplicate on that index and returns any other unique index's duplicate as
//!   [`ErrorKind::DuplicateKey`](crate::error::ErrorKind::DuplicateKey), as it does for `_id`. A handle checks
//!   for the index once; a bare `mongodb::Database`, on every optimistic insert (one
//!   `listIndexes` more).
//! - **Blocks per scope.** With the block strategy each scope in use has its own live block, and
//!   `insert_many` takes one reservation per scope of its documents (the counters strategy too).
//!   Blocks unused for [`release_idle_after`](crate::Sequences::release_idle_after) (10 minutes
//!   unless set) are released like any other state of the handle, so memory follows the scopes in
//!   use, not every scope ever seen (a test holds 100,000 scopes used once within 129 blocks); a
//!   released block costs the ids left in it, a gap of at most `2 × block_size - 1` in that
//!   scope (the next block reserved early with it; `block_size - 1` with `prefetch = false`).
//! - **Administration per scope** names the scope with
//!   [`.scope(value)`](crate::action::FindOne::scope) (or a tuple, in the declared order) on
//!   `last_reserved`, `set_counter`, `reset_counter`, `sync_counter` and
//!   `find`; [`T::sequence().list_counters(&db)`](crate::SequenceOf::list_counters)
//!   lists every scope's counter at once (it takes no scope);
//!   [`T::sequence().sync_every_scope(&db)`](crate::SequenceOf::sync_every_scope) raises the counter of every
//!   scope that has documents at once.
//! - **A scope is named with a value of its field's type**, checked at compile time: `.scope`
//!   takes what the scope field holds (a `&str` or `String` for a `String`; any integer for an
//!   integer field, which must fit its type when the call runs; `None` or a value for an
//!   `Option`; [`seqid::scoped::Null`](crate::scoped::Null) for documents without the field),
//!   so that `.scope("8")` on an `i32` field, which could only ever find nothing, does not
//!   compile. A scope known only at run time (a request's, generic code's) goes through
//!   [`.scope_unchecked(value)`](crate::action::FindOne::scope_unchecked), checked when the
//!   call runs against the fields' types ([`ErrorKind::InvalidScope`](crate::error::ErrorKind::InvalidScope),
//!   naming the type). A field serialized by other code (`serialize_with`, `with`) stores what
//!   its type does not say: its sequence takes any value. The rules: [`scoped`](crate::scoped).
//!
//! ```no_run
//! # use seqid::Document;
//! # use serde::{Deserialize, Serialize};
//! #[derive(Serialize, Deserialize, Document)]
//! #[seq_id(collection = "invoices")]
//! struct Invoice {
//!     tenant: String,
//!     year: i32,
//!     #[seq_id("invoice", scope = ["tenant", "year"])] // 1, 2, 3, ... per tenant and year
//!     number: i64,
//! }
//!
//! # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
//! let last = Invoice::sequence().last_reserved(&db).scope(("acme", 2026)).await?;
//! Invoice::sequence().set_counter(&db, 41).scope(("acme", 2026)).await?; // the next one is 42
//! let scopes = Invoice::sequence().sync_every_scope(&db).await?; // the counters brought up to date
//! # Ok(()) }
//! ```
//!
//! The counter of a scope and how it is keyed: see [data layout](super::data_layout).
