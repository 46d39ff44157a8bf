//! Auto-incrementing sequence ids for MongoDB documents.
//!
//! Derive [`Document`] on a struct, name its sequence with `#[seq_id("name", ...)]`, and
//! [`insert`](Document::insert) fills the field serialized as `_id` (or another integer field)
//! with the next number of the sequence and inserts the document. seqid implements the two
//! methods of MongoDB's tutorial *Create an Auto-Incrementing Sequence Field* and the block
//! allocation of the post *Quick & Dirty Sequential IDs in MongoDB*, and holds them to a higher
//! bar: correct under concurrency, across processes and next to other writers; bulk inserts; a
//! typed error for every bad input; speed close to a plain insert. The derive only emits
//! constants, accessors and a registration of its sequences (so that a sequence named at run
//! time finds its declaration); the logic is ordinary async code in this crate, and every
//! future is `Send`.
//!
//! # Getting started
//!
//! seqid 0.1.0 is not on crates.io yet: a program depends on a clone of its repository by path
//! (or on the repository with `git = "<its URL>"`). What it adds to its `Cargo.toml`:
//!
//! ```toml
//! [dependencies]
//! seqid = { path = "../seqid/seqid" }   # the `seqid` directory of a clone of the repository
//! serde = { version = "1", features = ["derive"] }
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! mongodb = "3.3"
//!
//! [dev-dependencies]
//! seqid-harness = { path = "../seqid/seqid-harness" }   # a throwaway server per test run
//! ```
//!
//! No MongoDB at hand: `seqid-server` (from `cargo install --path ../seqid/seqid-harness`)
//! starts a MongoDB-compatible server on `localhost:27017`, which the program below reaches
//! as it is, and `seqid_harness::test_db("name")` gives each of your tests a database of its
//! own: see the guide's [testing your app](guide::testing).
//!
//! A whole program: one client and one [`Sequences`] handle for the life of the process, and
//! documents numbered 1, 2, 3, ...:
//!
//! ```no_run
//! use mongodb::bson::doc;
//! use seqid::Document; // the derive and its trait; the driver's bson::Document keeps its path
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
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let uri = std::env::var("MONGODB_URI").unwrap_or_else(|_| "mongodb://localhost:27017".into());
//!     let client = mongodb::Client::with_uri_str(&uri).await?;
//!     // Once per process, next to the client; clones share it (cheap, like the client's).
//!     let sequences = seqid::Sequences::new(&client);
//!     let db = sequences.database("app"); // derefs to mongodb::Database for everything else
//!
//!     let mut sarah = User { id: 0, name: "Sarah C.".into() };
//!     sarah.insert(&db).await?; // sarah.id == 1, stored as { _id: 1, name: "Sarah C." }
//!
//!     let mut more = vec![
//!         User { id: 0, name: "Bob D.".into() },
//!         User { id: 0, name: "Ada L.".into() },
//!     ];
//!     let ids = User::insert_many(&mut more, &db).await?; // [2, 3]: one $inc, one insert_many
//!     println!("{ids:?}");
//!
//!     // The driver as usual for the rest; its own Document by its path.
//!     let counter = db
//!         .collection::<mongodb::bson::Document>("counters")
//!         .find_one(doc! { "_id": "userid" })
//!         .await?;
//!     if let Some(counter) = counter {
//!         println!("{counter}"); // { "_id": "userid", "seq": 3 } in a new database
//!     }
//!     Ok(())
//! }
//! ```
//!
//! `use seqid::Document;` brings both the derive and the trait whose methods insert; import
//! `mongodb::bson::doc` (not `mongodb::bson::*`), so that the name `Document` is seqid's, and
//! write the driver's `mongodb::bson::Document` by its path.
//!
//! Inserts also take a bare `mongodb::Database`, but through it every call works alone: `block`
//! reserves ids per call and keeps no block, `counters` tasks share no round trip, `optimistic`
//! tasks take turns, one insert at a time (see [`AsDatabase`], and the guide's
//! [sharing](guide::sharing)); a `block` or `optimistic` insert through one logs a warning,
//! once per process and sequence. `gapless` transactions take their turns at a counter
//! across the whole process either way.
//!
//! # Strategies
//!
//! Chosen per type with `strategy = "..."` (see [`Strategy`], and the guide's
//! [strategies](guide::strategies)):
//!
//! | | `counters` (default) | `optimistic` | `block` | `gapless` |
//! |---|---|---|---|---|
//! | where the id comes from | `findAndModify` + `$inc: 1` on a counter document, as in the tutorial (upsert) | the largest numeric id in the collection + 1, retried if another writer took it | a block of `block_size` ids reserved with one `$inc`, handed out in memory | as counters, inside the caller's transaction (required) |
//! | round trips per insert | 2 (the `$inc` shared by tasks that wait together) | 2 (the maximum query shared), + 1 insert per lost race | 1 + 1/`block_size` | 2, and the transaction's commit |
//! | gaps | an insert that fails after taking its id | none, but where an insert failed while a later id was already stored | as counters, plus up to `2 × block_size - 1` per process restart (`block_size - 1` with `prefetch = false`) | none, ever: an aborted transaction takes its id back |
//! | order | increasing in the order ids are taken, across all writers | each id above every id stored when it was taken | increasing within a process, not across processes | increasing in commit order |
//!
//! Every strategy hands out unique ids under concurrency, across processes and next to other
//! writers of the same counter or collection, and no retry stores a document twice on a
//! server that answers retried writes as MongoDB does ([guarantees](guide::guarantees), and
//! its *risk that remains* for one that does not).
//!
//! Inserts are actions, as in the driver: [`insert`](Document::insert) returns an
//! [`Insert`](action::Insert) that is awaited directly, after options set by method
//! ([`session`](action::Insert::session), and for the optimistic strategy
//! [`time_budget`](action::Insert::time_budget) and
//! [`max_attempts`](action::Insert::max_attempts)). A type's sequence on its own is
//! [`T::sequence()`](Document::sequence), a [`SequenceOf`]: its numbers without a document
//! ([`next`](SequenceOf::next)), a document found by its number ([`find`](SequenceOf::find)),
//! and the counter's operations ([`last_reserved`](SequenceOf::last_reserved),
//! [`set_counter`](SequenceOf::set_counter), [`sync_counter`](SequenceOf::sync_counter), ...),
//! these for the strategies that keep a counter ([`kind::WithCounter`]: counters, block and
//! gapless), checked at compile time. A
//! transaction runs with [`Transaction::new(&mut session).run(...)`](action::Transaction),
//! with MongoDB's retry rules and seqid's typed errors (the guide's
//! [transactions](guide::transactions)).
//!
//! # The guide
//!
//! The [`guide`] holds the whole story, chapter by chapter:
//!
//! - [strategies](guide::strategies), [sharing state](guide::sharing) between tasks, and
//!   [transactions and write concern](guide::transactions);
//! - [any field, per scope](guide::scopes), [several sequences](guide::several_sequences) in
//!   one document, [display codes](guide::display_codes),
//!   [find-or-insert by a natural key](guide::find_or_insert),
//!   [numbering a stored document later](guide::numbering_later), [numbers on their
//!   own](guide::numbers) (`Order::sequence().next(&db)`, `db.sequence("userid").next()`,
//!   and a model's next id before its document, `T::reserve_id(&db)`), [other tools'
//!   counters](guide::other_tools), the [data layout](guide::data_layout);
//! - the [attribute reference](guide::attributes) (also in the [derive's
//!   documentation](macro@Document)), the [operations](guide::operations) and logging, the
//!   [errors](guide::errors), an [example service](guide::service);
//! - the [guarantees](guide::guarantees) under faults and lost answers, [cancelled
//!   calls](guide::cancellation), [limits](guide::limits), [migration notes](guide::migration);
//! - for work on seqid itself: the [architecture](guide::architecture) (the map and the
//!   glossary), [the test server](guide::test_server) and the [benchmarks](guide::benchmarks).
//!
//! # Any field, per scope
//!
//! A sequence may fill another integer field than `_id`, and count per scope: the struct's
//! attribute names the collection, the field's declares the sequence.
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
//! let same = Ticket::sequence().find(&db, 1000).scope("apollo").await?;
//! let last = Ticket::sequence().last_reserved(&db).scope("apollo").await?; // Some(1000)
//! # Ok(()) }
//! ```
//!
//! Each scope value (a string, an integer, an ObjectId, a boolean, or null, which a missing field
//! also is) has a counter of its own, and with the block strategy a live block of its own; other
//! values are refused ([`ErrorKind::InvalidScope`](crate::error::ErrorKind::InvalidScope)). The optimistic strategy, and `resume_insert`,
//! rely on the unique index [`create_indexes`](Document::create_indexes) makes
//! ([`ErrorKind::MissingIndex`](crate::error::ErrorKind::MissingIndex) without it). The guide's [scopes](guide::scopes) chapter has the
//! details, and [data layout](guide::data_layout) how a scope's counter is keyed.
//!
//! # Faults and lost answers
//!
//! No retry, by the driver, by seqid or by the caller, stores a document twice: a document is
//! only ever written under the id it was given, and the `_id` index refuses a second copy. When
//! the outcome of an insert cannot be known (the connection or the server went away after the
//! request was sent), the error [is_outcome_unknown](Error::is_outcome_unknown) and the document keeps its id;
//! [`resume_insert`](Document::resume_insert) (or
//! [`resume_insert_many`](Document::resume_insert_many)) finishes the job. `Ok` always means the
//! server acknowledged this call's own write. Every failure is an [`Error`] naming the sequence
//! and the offending value. See the guide's [guarantees](guide::guarantees) and [cancelled
//! calls](guide::cancellation), and [`Document`'s notes on
//! failures](Document#failures-lost-answers-and-cancellation).
//!
//! # The map of the crate
//!
//! For work on seqid itself: the crate's layers are its folders, each importing only from
//! those below it; the guide's [architecture](guide::architecture) chapter draws the map
//! and holds the glossary of the words the code coins.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// The layers, from the top down (`guide::architecture`); each imports only from those
// below it.
mod api;
mod base;
mod call;
mod counter;

pub mod deployment;
mod fields;
pub mod guide;
mod insert;
mod items;
mod named;
mod optimistic;
mod round_trip;
mod schema;
mod source;
mod state;

#[doc(inline)]
pub use api::action;
pub use api::action::list::CounterState;
pub use api::action::reserve::Reserved;
pub use api::document::Document;
pub use api::sequence_of::SequenceOf;
pub use api::sequences::{AsDatabase, Database, Sequences};
pub use base::error::Error;
pub use call::registry::Stats;
pub use fields::natural::Entry;
pub use insert::later::Numbered;
pub use schema::id::IdField;
pub use schema::item::Item;
#[doc(inline)]
pub use schema::kind;
#[doc(inline)]
pub use schema::layout;
pub use schema::model::Model;
#[doc(inline)]
pub use schema::scoped;
pub use schema::sequence::{Sequence, Strategy};
pub use seqid_derive::{Document, Item};

/// The errors' parts: what went wrong ([`ErrorKind`](crate::error::ErrorKind)) and what a
/// failed batch leaves ([`BulkError`](crate::error::BulkError)); [`Error`] itself is at the
/// crate's root too.
pub mod error {
    pub use crate::base::bulk_error::{BulkError, FailedInsert};
    pub use crate::base::error::{Error, ErrorKind};
}

/// Not public API: what `#[derive(Document)]` expands to refers to these paths.
#[doc(hidden)]
pub mod __private;
