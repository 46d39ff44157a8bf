//! Several sequences in one document.
//!
//! A document may take any number of sequences: the struct's `#[seq_id("name", ...)]` for `_id`,
//! and a `#[seq_id("name", ...)]` on each integer field that takes one, each with its own
//! strategy, scope, start, block size, counters collection and write concern. An issue tracker
//! wants a global id and a number per repository:
//!
//! ```no_run
//! use seqid::Document;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, Serialize, Deserialize, Document)]
//! #[seq_id("issue_id", collection = "issues")] // _id: 1, 2, 3, ... overall
//! struct Issue {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     repo: String,
//!     #[seq_id("issue_number", scope = "repo", strategy = "block")] // 1, 2, 3, ... per repo
//!     number: i64,
//!     title: String,
//! }
//!
//! # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
//! Issue::create_indexes(&db).await?; // ["_id_", "repo_1_number_1"]
//! let mut issue = Issue { id: 0, repo: "seqid".into(), number: 0, title: "…".into() };
//! issue.insert(&db).await?; // issue.id and issue.number filled
//! let numbers = Issue::number_sequence(); // one typed handle per sequence
//! let found = numbers.find(&db, issue.number).scope("seqid").await?;
//! let last = numbers.last_reserved(&db).scope("seqid").await?;
//! # Ok(()) }
//! ```
//!
//! - **One insert, one write.** [`insert`](crate::Document::insert) reserves every sequence's id
//!   at once (the reservations go out together, each through the handle's own allocator, block
//!   and group commit for its sequence and scope), fills them all, and writes the document once.
//!   [`insert_many`](crate::Document::insert_many) reserves each sequence once per call and scope
//!   (one `$inc: n` per counter), then sends one `insert_many`.
//! - **The primary sequence** is the one [`Model::SEQUENCE`](crate::Model::SEQUENCE),
//!   [`sequence_id`](crate::Model::sequence_id) and
//!   [`T::sequence()`](crate::Document::sequence) name, and whose write the
//!   insert retries: the `optimistic` sequence if there is one, else the `_id` one, else the
//!   first field's. The others are [`Model::OTHERS`](crate::Model::OTHERS). Each sequence,
//!   primary or not, has a [`SequenceOf`](crate::SequenceOf) handle named after its field,
//!   `Issue::number_sequence()` (`id_sequence()` for `_id`), with
//!   [`find`](crate::SequenceOf::find), [`last_reserved`](crate::SequenceOf::last_reserved),
//!   [`set_counter`](crate::SequenceOf::set_counter),
//!   [`reset_counter`](crate::SequenceOf::reset_counter),
//!   [`sync_counter`](crate::SequenceOf::sync_counter),
//!   [`sync_every_scope`](crate::SequenceOf::sync_every_scope) and
//!   [`stats`](crate::SequenceOf::stats);
//!   the counter's operations exist only for a sequence that keeps a counter, checked at compile
//!   time. [`create_indexes`](crate::Document::create_indexes) makes the unique index of every
//!   sequence on a field; the insert's span lists every sequence in `sequences`.
//! - **All ids together.** The [guarantees](super::guarantees) hold for the document as a whole:
//!   when it is known not to be stored, every id it was given is unset together (and an `_id`
//!   `ObjectId` seqid filled); when its fate is unknown, every id is kept, and
//!   [`resume_insert`](crate::Document::resume_insert) finishes it under them. An id the caller
//!   set, of any sequence, is refused with [`ErrorKind::IdAlreadySet`](crate::error::ErrorKind::IdAlreadySet)
//!   naming that sequence, before anything is reserved. A duplicate on another sequence's unique
//!   index is [`ErrorKind::DuplicateKey`](crate::error::ErrorKind::DuplicateKey) naming that sequence, its number
//!   and the index (where the server names the index: MongoDB does). A caller cancelled while the
//!   reservations are out gives every id back to the handle's allocators; one cancelled once the
//!   write is sent keeps them all, with the write running, as for one sequence.
//! - **Rules, checked at compile time** (each an error at the offending token, with the reason):
//!   a field takes one sequence (`duplicate #[seq_id]`); a sequence name is declared once per
//!   struct, whatever its settings (one counter for two fields would give them two different
//!   numbers of it, and two declarations could set it up differently); at most one sequence is
//!   `optimistic` (the loop writes a candidate and retries when another writer took it: two
//!   loops in one write could not tell whose number was taken); a field's `#[seq_id]` is not put
//!   on the `_id` field (the `_id` sequence is declared on the struct). `gapless` goes with any
//!   other strategy: a gapless sequence is reserved in the caller's transaction (required, as
//!   always), the others as they always are, so an aborted transaction takes the gapless ids back
//!   and leaves the others' as gaps.
//! - **Costs.** An `optimistic` primary reserves the other ids first and keeps them across its
//!   retries; a caller cancelled between two of its attempts leaves those ids as gaps (the
//!   document under them was refused, never stored). A gapless sequence beside others is reserved
//!   after the ones outside the transaction (the session serves one command at a time).
