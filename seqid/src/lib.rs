//! Auto-incrementing sequence ids for MongoDB documents.
//!
//! Derive [`Document`] on a struct, name its sequence with `#[seq_id("name", ...)]`, and
//! [`insert`](Document::insert) fills the field serialized as `_id` with the next number
//! of the sequence and inserts the document:
//!
//! ```no_run
//! use seqid::Document;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, Serialize, Deserialize, Document)]
//! #[seq_id("userid", collection = "users")]
//! struct User {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     name: String,
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // Once per process, next to the client: the handle owns what tasks share.
//! let client = mongodb::Client::with_uri_str("mongodb://localhost:27017").await?;
//! let sequences = seqid::Sequences::new(&client);
//! let db = sequences.database("app"); // derefs to mongodb::Database
//!
//! let mut sarah = User { id: 0, name: "Sarah C.".into() };
//! sarah.insert(&db).await?; // { _id: 1, name: "Sarah C." }
//!
//! let mut team: Vec<User> = ["Bob D.", "Ada L."]
//!     .into_iter()
//!     .map(|name| User { id: 0, name: name.into() })
//!     .collect();
//! let ids = User::insert_many(&mut team, &db).await?; // [2, 3]
//! # Ok(()) }
//! ```
//!
//! # Strategies
//!
//! Chosen per type with `strategy = "..."` (see [`Strategy`]):
//!
//! - **`counters`** (default): `findAndModify` with `$inc` and upsert on
//!   `counters.{ _id: name, seq }`, as in MongoDB's tutorial (or another tool's counter,
//!   see below). Tasks sharing a
//!   [`Sequences`] handle that wait at the same moment share one `$inc: k`.
//! - **`optimistic`**: the largest numeric `_id` plus one, retried on a duplicate `_id`
//!   within a time budget (10 s unless `time_budget_ms` says otherwise), retries spread
//!   by what the loop learns; no counters collection, no gaps.
//! - **`block`**: `block_size` ids reserved with one `$inc` and handed out in memory by
//!   every task sharing a [`Sequences`] handle.
//! - **`gapless`**: as `counters`, but the `$inc` joins the caller's transaction, so an
//!   aborted transaction takes its id back: committed ids have no gap, ever.
//!
//! Inserts also take a bare `mongodb::Database`, but through it every call works alone:
//! `block` reserves ids per call and keeps no block, `counters` tasks share no round trip,
//! `optimistic` tasks take turns, one insert at a time (see [`AsDatabase`]); a `block` or `optimistic`
//! insert through one logs a warning, once per process and sequence.
//!
//! Inserts are actions, as in the driver: [`insert`](Document::insert) returns an
//! [`Insert`](action::Insert) that is awaited directly, after options set by method
//! ([`session`](action::Insert::session), and for the optimistic strategy
//! [`time_budget`](action::Insert::time_budget) and
//! [`max_attempts`](action::Insert::max_attempts)). See [`Document`'s notes on sessions and
//! transactions](Document#sessions-and-transactions) for what joins the caller's
//! transaction, and [`CounterWriteConcern`] for the counter's write concern
//! (`w: "majority"` unless the type says otherwise).
//!
//! Every strategy hands out unique ids under concurrency, across processes and next to
//! other writers of the same counter or collection; [`Strategy`] sets out the guarantees
//! of each (order, gaps, round trips, other writers). The README of the repository has
//! the attribute reference.
//!
//! # Any field, per scope
//!
//! A sequence may fill another integer field than `_id`, and count per scope: the
//! struct's attribute names the collection, the field's declares the sequence.
//!
//! ```no_run
//! # use seqid::Document;
//! # use serde::{Deserialize, Serialize};
//! use mongodb::bson::oid::ObjectId;
//!
//! #[derive(Debug, Serialize, Deserialize, Document)]
//! #[seq_id(collection = "tickets")]
//! struct Ticket {
//!     #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
//!     id: Option<ObjectId>,
//!     project: String,
//!     #[seq_id("ticket", scope = "project", start = 1000)]
//!     number: i64,
//! }
//!
//! # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
//! Ticket::create_indexes(&db).await?; // unique { project: 1, number: 1 }
//! let mut ticket = Ticket { id: None, project: "apollo".into(), number: 0 };
//! ticket.insert(&db).await?; // 1000, then 1001, ... in each project
//! assert!(ticket.id.is_some()); // an unset `Option<ObjectId>` `_id` is filled too
//! let same = Ticket::find_by_id(&db, 1000).scope("apollo").await?;
//! # Ok(()) }
//! ```
//!
//! Each scope value (a string, an integer, an ObjectId, a boolean, or null, which a missing
//! field also is) has a counter of its own, and with the block strategy a live block of its
//! own; other values are refused ([`Error::InvalidScope`]). The optimistic strategy, and
//! `resume_insert`, rely on the unique index [`create_indexes`](Document::create_indexes)
//! makes ([`Error::MissingIndex`] without it). The README has the counters' layout.
//!
//! # Other tools' counters, and a step
//!
//! A sequence may share its counter with another tool that numbers the same collection:
//! `layout = "mongoengine"`, `"mongoose-sequence"`, `"mongoose-auto-increment"`,
//! `"typegoose"` or `"go"` lays the counter out as that tool does, found by the name the
//! tool finds it by; `counter_name`, `counter_field`, `counter_value` and `counter_holds`
//! describe any other layout. `step = N` spaces the ids (a tool's `inc_amount` or
//! `incrementBy`, or two writers interleaving by parity). Both sides then take ids from the
//! one counter at the same time; [`Layout`] has the table of layouts, and the README how
//! to move a sequence from a tool to seqid without a pause.
//!
//! ```no_run
//! use seqid::Document;
//! use serde::{Deserialize, Serialize};
//!
//! // A Python service saves `User` with MongoEngine's `id = SequenceField(primary_key=True)`.
//! #[derive(Serialize, Deserialize, Document)]
//! #[seq_id("users.id", collection = "users", layout = "mongoengine")]
//! struct User {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     name: String,
//! }
//!
//! // Odd ids here, even ids from another writer with `start = 2, step = 2`.
//! #[derive(Serialize, Deserialize, Document)]
//! #[seq_id("orders", step = 2)]
//! struct Order {
//!     #[serde(rename = "_id")]
//!     id: i64,
//! }
//!
//! # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
//! let id = User { id: 0, name: "Ada".into() }.insert(&db).await?; // `$inc: { next: 1 }`
//! let odd = Order { id: 0 }.insert(&db).await?; // 1, 3, 5, ...
//! # Ok(()) }
//! ```
//!
//! # Several sequences in one document
//!
//! A struct may declare a sequence on `_id` and one on each of any number of integer
//! fields: `insert` reserves them all at once, fills them, and writes the document once;
//! `insert_many` reserves each once per call and scope. Their ids are unset together or
//! kept together. The primary sequence ([`Model::SEQUENCE`]) is the optimistic one if any,
//! else the `_id` one, else the first field's; the others are [`Model::OTHERS`], and each
//! sequence has a typed [`SequenceOf`] handle, named after its field, for its counter and
//! finds. At most one sequence is optimistic, and a name is declared once (compile errors).
//!
//! ```no_run
//! use seqid::Document;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Document)]
//! #[seq_id("issue_id", collection = "issues")]
//! struct Issue {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     repo: String,
//!     #[seq_id("issue_number", scope = "repo", strategy = "block")]
//!     number: i64,
//! }
//!
//! # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
//! Issue::create_indexes(&db).await?; // `_id_` and unique { repo: 1, number: 1 }
//! let mut issue = Issue { id: 0, repo: "seqid".into(), number: 0 };
//! issue.insert(&db).await?; // both filled, one write
//! let same = Issue::number_sequence().find(&db, issue.number).scope("seqid").await?;
//! # Ok(()) }
//! ```
//!
//! # Display codes
//!
//! A `String` field marked `#[seq_display("INV-{year}-{number:04}")]` gets a code written by
//! `insert` from the document's numbers and fields, stored in the same write: the number
//! stays the source of truth, the code is what people read. The derive checks at compile
//! time that no two documents can get one code (the format shows the sequence's number and
//! every scope field of it, kept apart so that a code reads back into them); a string value
//! that would blur that at run time is refused before any id is taken
//! ([`Error::InvalidCode`]). `create_indexes` makes a unique index on the field, and the
//! derive writes `find_by_<field>` ([`action::FindByCode`]). The derive's documentation has
//! the rules.
//!
//! ```no_run
//! use seqid::Document;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Document)]
//! #[seq_id(collection = "invoices")]
//! struct Invoice {
//!     year: i32,
//!     #[seq_id("invoice", scope = "year")]
//!     number: i64,
//!     #[seq_display("INV-{year}-{number:04}")]
//!     code: String,
//! }
//!
//! # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
//! Invoice::create_indexes(&db).await?; // unique { year: 1, number: 1 } and { code: 1 }
//! let mut invoice = Invoice { year: 2026, number: 0, code: String::new() };
//! invoice.insert(&db).await?; // number 1 of 2026, code "INV-2026-0001", one write
//! let same = Invoice::find_by_code(&db, &invoice.code).await?;
//! # Ok(()) }
//! ```
//!
//! # Sharing state between tasks: [`Sequences`]
//!
//! `insert` accepts a bare `mongodb::Database`, as above, or a [`Database`] made by a
//! [`Sequences`] handle, one per client, cheap to clone. The handle owns what the tasks
//! of a process share: the group commit of `counters`, the live blocks of `block`, the
//! candidates of `optimistic`. Through a bare database each call works alone, since the
//! driver cannot say which deployment a database belongs to (see [`AsDatabase`]): ids
//! are as unique, the handle makes them cheaper. State unused for a while is released
//! ([`Sequences::release_idle_after`]), so memory follows the sequences in use.
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, Document)]
//! # #[seq_id("userid", collection = "users", strategy = "block")]
//! # struct User { #[serde(rename = "_id")] id: i64, name: String }
//! # async fn run(client: mongodb::Client) -> Result<(), seqid::Error> {
//! let db = seqid::Sequences::new(&client).database("app");
//! let mut ada = User { id: 0, name: "Ada".into() };
//! ada.insert(&db).await?; // the first id of a block of 100, shared by every task
//! # Ok(()) }
//! ```
//!
//! # Errors
//!
//! Every failure is an [`Error`] naming the sequence and the offending value; nothing is
//! inserted when an id cannot be taken or does not fit the field, and a failed
//! [`insert_many`](Document::insert_many) says which documents were stored
//! ([`BulkError`]).
//!
//! # Faults and lost answers
//!
//! No retry, by the driver, by seqid or by the caller, stores a document twice: a
//! document is only ever written under the id it was given, and the `_id` index refuses
//! a second copy. When the outcome of an insert cannot be known (the connection or the
//! server went away after the request was sent), the error is
//! [`Error::OutcomeUnknown`] and the document keeps its id;
//! [`resume_insert`](Document::resume_insert) (or
//! [`resume_insert_many`](Document::resume_insert_many)) finishes the job. `Ok` always
//! means the server acknowledged this call's own write: an equal document found at the id
//! proves nothing, since it may be another caller's (see
//! [`content_is_unique`](action::Insert::content_is_unique) for callers whose documents carry
//! something only they write). See
//! [`Document`'s notes on failures](Document#failures-lost-answers-and-cancellation).
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, Document)]
//! # #[seq_id("userid", collection = "users")]
//! # struct User { #[serde(rename = "_id")] id: i64, name: String }
//! # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
//! let mut ada = User { id: 0, name: "Ada".into() };
//! let id = match ada.insert(&db).await {
//!     Ok(id) => id,
//!     // Maybe stored: send it again under the same id; never stored twice.
//!     Err(seqid::Error::OutcomeUnknown { .. }) => ada.resume_insert(&db).await?,
//!     Err(other) => return Err(other),
//! };
//! # Ok(()) }
//! ```
//!
//! # Logging
//!
//! With [`tracing`](https://docs.rs/tracing): each insert runs in a `seqid.insert` span at
//! debug level, with the sequence, collection, strategy, operation, documents and scopes,
//! and, when it ends, the reservation round trips it waited for and its outcome
//! (`stored`, or the error's message), so that a service's log shows where an insert's
//! time went. Retries (a taken `_id` in the optimistic loop, a counter's first use) are
//! debug events inside it. Warnings: a `block` or `optimistic` insert through a bare
//! `mongodb::Database`, and a largest `_id` read that went backwards between two reads of
//! the optimistic loop, each once per process and sequence.
//!
//! # The map of the crate
//!
//! Each layer uses only the layers below it (`python3 ../shared/tools/modgraph.py
//! seqid/src` prints the edges and checks that no module cycle is left):
//!
//! | layer | modules | what it does |
//! |---|---|---|
//! | public API | [`document`](Document), [`action`], `sequences` | what a user does with a model: the actions and their builders, admin and find, the [`Sequences`] handle and its [`Database`] |
//! | orchestration | `insert::{one, many, earlier}` | the only place where documents meet writes: reserve, fill, write, record, settle; the loop over rounds |
//! | id sources | `counted`, `optimistic` | hand out ids per scope and take back what became of them; never hold documents |
//! | round trips | `write`, `counter`, `largest`, `indexes` | one kind of command each, and what its answer means |
//! | state | `context`, `pending`, `registry`, `frontier`, `allocator`, `orphan`, `turnstile` | a call's options and context; writes left running; the handle's registry; the optimistic frontier; the allocator that shares reservations; the turns bare optimistic inserts of a process take |
//! | leaves | `model`, `fields`, `batch`, `fate`, `scope`, `span`, `server`, `error`, `sequence`, `id`, `kind`, `numeric`, `session`, `detach`, `once`, `backoff`, `retry`, `future` | what a model is and its id field, a batch's pure bookkeeping, fates and keys, the server's constants, errors and numbers, how long and how the optimistic loop retries |
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod action;
mod allocator;
mod backoff;
mod batch;
mod code;
mod companions;
mod context;
mod counted;
mod counter;
mod detach;
mod display;
mod document;
mod error;
mod fate;
mod fields;
mod frontier;
mod future;
mod id;
mod indexes;
mod insert;
pub mod kind;
mod largest;
mod layout;
mod model;
mod numeric;
mod once;
mod optimistic;
mod orphan;
mod others;
mod pending;
mod registry;
mod retry;
mod scope;
mod sequence;
mod sequence_of;
mod sequences;
mod server;
mod session;
mod span;
mod turnstile;
mod write;

pub use display::{DisplayCode, Unshowable};
pub use document::{CounterBacked, Document};
pub use error::{BulkError, Error, FailedInsert};
pub use id::{AnyIdField, IdField};
pub use layout::{Holds, Layout, ScopeEncoding, Width};
pub use model::{IdValue, Model};
pub use registry::{DEFAULT_RELEASE_AFTER, Stats};
pub use seqid_derive::Document;
pub use sequence::{
    CounterWriteConcern, DEFAULT_BLOCK_SIZE, DEFAULT_COUNTERS, DEFAULT_START, DEFAULT_TIME_BUDGET,
    Sequence, Strategy,
};
pub use sequence_of::SequenceOf;
pub use sequences::{AsDatabase, Database, Sequences};

/// Not public API: what `#[derive(Document)]` expands to refers to these paths.
#[doc(hidden)]
pub mod __private {
    pub use crate::action::find::find_by_code;
    pub use crate::allocator::LiveBlock;
    pub use crate::display::{Integer, display_code, integer, literal, number, text};
    pub use crate::layout::construct::{custom, stepped};
    pub use crate::sequence::construct::{Parts, block, counters, gapless, optimistic, sequence};
    pub use ::core;
    pub use ::std::string::String;
    pub use mongodb::bson::oid::ObjectId;

    use crate::{AnyIdField, IdField};

    /// A field of another sequence, as the runtime reads it: bounded on `IdField`, so that
    /// a field type that cannot hold a number gets `IdField`'s message, at the type.
    pub fn any_id<F: IdField>(field: &F) -> &dyn AnyIdField {
        field
    }

    /// [`any_id`], to fill the field.
    pub fn any_id_mut<F: IdField>(field: &mut F) -> &mut dyn AnyIdField {
        field
    }

    /// The supertraits of `Model`, for the bound of the stand-in impl the derive emits
    /// next to its errors (`for<'a> T: DocumentBounds` proves them without requiring
    /// them). Not a re-export of `Serialize`, which would make rustc name serde's trait by
    /// this path in messages.
    pub trait DocumentBounds: serde::Serialize + Send + Sync {}

    impl<T: serde::Serialize + Send + Sync + ?Sized> DocumentBounds for T {}
}
