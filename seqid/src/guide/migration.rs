//! Migration notes: the layered runtime, and the optimistic loop's budget.
//!
//! What a user writes is unchanged: `#[derive(Document)]`, `use seqid::Document`,
//! `doc.insert(&db)`, `T::insert_many`, `.session`, `.max_attempts`, `.content_is_unique`,
//! `resume_insert`, the counter's administration (methods of the type's
//! [`SequenceOf`](crate::SequenceOf) since 0.1's surface, for strategies that keep a counter:
//! see the CHANGELOG for every name that moved). What moved, for code written against the
//! earlier layout:
//!
//! - **What a model is, apart from what you do with it.** The derive implements
//!   [`seqid::Model`](crate::Model) (`SEQUENCE`, `Id`, `Kind`, `sequence_id`,
//!   `sequence_id_mut`); [`seqid::Document`](crate::Document), with every operation, is
//!   implemented for every `Model`. Naming `User::SEQUENCE` on a type takes `use seqid::Model;`
//!   (a bound `T: Document` still reaches `T::SEQUENCE`, and
//!   `T: Document<Kind: seqid::kind::Retrying>` bounds code to optimistic types).
//!   An insert's id is `<T::Id as IdField>::Value` (`i64` for an `i64` field).
//! - **One path per builder**: [`seqid::action`](crate::action)`::{Insert, FindOrInsert,
//!   FindOne, LastReserved, SetCounter, SyncCounter, ...}` (no longer at the crate's root).
//! - **`seqid::Error` is 16 bytes**: the sequence, said once
//!   ([`error.sequence()`](crate::Error::sequence), an `Option`; `sequence.name`,
//!   `sequence.collection`, `sequence.field`, `sequence.counters` replace the fields of those
//!   names), and the kind, boxed ([`error.kind()`](crate::Error::kind), an
//!   [`ErrorKind`](crate::error::ErrorKind) whose variants are the old ones without
//!   `sequence`). Text made at run time is a `Box<str>` (`&*message` for a `&str`). The
//!   reshapes left every message word for word as it was; later changes made some say more
//!   (a counter is shown by the fields that find it; `IdAlreadySet` and `DuplicateKey` say
//!   what to do). The CHANGELOG lists every old name beside its new one.
//!
//! ```
//! use seqid::{Document, Model};
//! # use serde::Serialize;
//!
//! #[derive(Serialize, Document)]
//! #[seq_id("userid", collection = "users")]
//! struct User {
//!     #[serde(rename = "_id")]
//!     id: i64,
//! }
//!
//! // `Model` in scope names the constants; `Document` alone reaches them through a bound.
//! assert_eq!(User::SEQUENCE.collection, "users");
//! fn collection_of<T: Document>() -> &'static str {
//!     T::SEQUENCE.collection
//! }
//! assert_eq!(collection_of::<User>(), "users");
//! ```
//!
//! # The optimistic loop's budget
//!
//! By default the loop is bounded by time (10 s, `time_budget_ms` /
//! [`.time_budget(d)`](crate::action::Insert::time_budget)), not by 16 attempts.
//! [`Strategy::Optimistic`](crate::Strategy::Optimistic) holds `max_attempts: Option<u32>`
//! (`None` unless set) and `time_budget: Duration`; `seqid::DEFAULT_MAX_ATTEMPTS` is gone,
//! [`seqid::Sequence::DEFAULT_TIME_BUDGET`](crate::Sequence::DEFAULT_TIME_BUDGET) is new.
//! [`ErrorKind::RetriesExhausted`](crate::error::ErrorKind::RetriesExhausted) also holds `elapsed` and
//! `time_budget` (`Some` when the time ended the loop, `None` when `max_attempts` did), and
//! `items` (`None` for an insert, the array for an append of items
//! that gave up); its message says them.
