//! Operations: what you do with a model, and what it logs.
//!
//! What is done with a document is a method of [`Document`](crate::Document), which
//! `#[derive(Document)]` brings: `use seqid::Document;` is the one import (it names both the
//! derive and the trait; the driver's `mongodb::bson::Document` stays reachable by its path).
//! What is done with a type's sequence on its own (its numbers, a find by number, its
//! counter, its stats) is a method of the [`SequenceOf`](crate::SequenceOf) that
//! [`T::sequence()`](crate::Document::sequence) gives.
//!
//! - [`doc.insert(&db)`](crate::Document::insert) → the id. Options by method before `.await`,
//!   as in the driver: [`.session(&mut session)`](crate::action::Insert::session), and for the
//!   optimistic strategy [`.time_budget(d)`](crate::action::Insert::time_budget) and
//!   [`.max_attempts(3)`](crate::action::Insert::max_attempts) (offered for that strategy only:
//!   elsewhere they do not compile).
//! - [`T::insert_many(&mut docs, &db)`](crate::Document::insert_many) → the ids in order: one
//!   reservation, one unordered `insert_many`. If not every document is stored,
//!   [`ErrorKind::Bulk`](crate::error::ErrorKind::Bulk) lists which were stored (they keep their ids), which the
//!   server refused and why (their ids are unset again), and which are of unknown fate (the
//!   answer was lost; they keep their ids): see [`BulkError`](crate::error::BulkError).
//! - [`doc.resume_insert(&db)`](crate::Document::resume_insert) /
//!   [`T::resume_insert_many(&mut docs, &db)`](crate::Document::resume_insert_many) → finish an
//!   insert whose outcome was unknown, or a cancelled one (see [guarantees](super::guarantees)):
//!   each document ends up stored at most once, and `Ok` only when this call's write is known to
//!   be the one stored.
//! - [`doc.find_or_insert(&db)`](crate::Document::find_or_insert) → an [`Entry`](crate::Entry),
//!   `Inserted` or `Found`, the document now the stored one: found by its natural key
//!   (`#[seq_key]`), inserted with the next id only when no document holds the key;
//!   [`T::find_or_insert_many(&mut docs, &db)`](crate::Document::find_or_insert_many) for a
//!   batch (one lookup, one `insert_many`); [`.by(&["email"])`](crate::action::FindOrInsert::by)
//!   names the key per call. The same options as an insert. See
//!   [find-or-insert](super::find_or_insert).
//! - [`T::number_draft(&db, filter)`](crate::Document::number_draft) → the
//!   [`Numbered`](crate::Numbered) draft, for a sequence numbered later: its number and codes set
//!   where it has none, with the caller's own fields
//!   ([`.set(...)`](crate::action::NumberDraft::set)), in its session;
//!   [`T::number_drafts(&db, filter)`](crate::Document::number_drafts) numbers every draft a
//!   filter finds, in [`.order(...)`](crate::action::NumberDraft::order). See
//!   [numbering later](super::numbering_later).
//! - [`.content_is_unique()`](crate::action::Insert::content_is_unique) on any of these: the
//!   caller asserts that no other writer stores a document equal to one of these (each carries a
//!   request id, say), so that a document equal to it found at its id may be taken for its own
//!   after a lost answer. Without it seqid never concludes anything from content.
//! - [`T::sequence().sync_counter(&db)`](crate::SequenceOf::sync_counter) → raises the counter to the largest
//!   numeric id already in the collection (never lowers it), drops this process's live block (the
//!   ids left in it may be among those stored), and returns the counter;
//!   [`T::sequence().sync_every_scope(&db)`](crate::SequenceOf::sync_every_scope) does it for every scope that
//!   has documents and returns how many. For adopting seqid on a collection that holds ids written
//!   by other means (an import, explicit ids). Safe to run at every start. Without it, the
//!   counters and block strategies refuse to overwrite such ids: the insert fails with
//!   [`ErrorKind::DuplicateKey`](crate::error::ErrorKind::DuplicateKey) (the id is then a gap). Where the
//!   counter does not exist yet and the collection already holds numbers of the sequence (in
//!   the scope) at or above its start, no counter is made and no id taken:
//!   [`ErrorKind::CounterMissing`](crate::error::ErrorKind::CounterMissing) names the largest number stored
//!   and what to check (the sequence's name, `counters`, `layout`: most often the counter
//!   exists under another name), and `sync_counter` starts the counter above them on purpose.
//!   That check costs two reads on a counter's first use, and nothing where it exists. A counter seqid
//!   cannot count from (1.5, a string) is reported with
//!   [`ErrorKind::CounterNotNumeric`](crate::error::ErrorKind::CounterNotNumeric), never overwritten.
//! - [`T::sequence().list_counters(&db)`](crate::SequenceOf::list_counters) → every counter of the sequence
//!   (one per scope), each a [`CounterState`](crate::CounterState): its scope, the last id
//!   reserved, the ids this process's handle holds of it (the rest of a block), and the largest
//!   number stored in the scope. One call to see a sequence's state; `println!("{state}")`
//!   prints `{ "project": "apollo" }: last reserved 200, 58 held here (next 143), largest stored
//!   142`.
//! - [`T::sequence().last_reserved(&db)`](crate::SequenceOf::last_reserved) → the last id reserved from the
//!   counter, without taking one: the last id handed out with counters and gapless, but with
//!   block up to `2 × block_size - 1` per process ahead of what is stored (`block_size - 1`
//!   with `prefetch = false`); `None` before first
//!   use. [`T::sequence().set_counter(&db, last)`](crate::SequenceOf::set_counter) sets it (the next id
//!   is `last + step`, `last + 1` by default);
//!   [`T::sequence().reset_counter(&db)`](crate::SequenceOf::reset_counter) sets it back to `start - step`.
//!   Both refuse to go below the largest `_id` stored
//!   ([`ErrorKind::CounterBelowStored`](crate::error::ErrorKind::CounterBelowStored): those ids are taken) unless
//!   called with [`.below_stored()`](crate::action::SetCounter::below_stored). The handle's live
//!   block is dropped (it was reserved under the old value); other processes' blocks are not, and
//!   below the new value their ids are handed out again, which the `_id` index turns into
//!   `ErrorKind::DuplicateKey`, never a second document: set a counter while no other process writes
//!   the sequence.
//! - **The counter's operations** (`sync_counter`, `sync_every_scope`, `list_counters`,
//!   `last_reserved`, `set_counter`, `reset_counter`) are methods of
//!   [`SequenceOf`](crate::SequenceOf) offered where its strategy keeps a counter
//!   ([`kind::WithCounter`](crate::kind::WithCounter): counters, block and gapless), with
//!   nothing more to import than `Document`. On an optimistic type, which keeps no counter,
//!   they do not compile, and the error says so. For a scoped sequence
//!   each of them names the scope: `.scope("apollo")`, or a tuple `.scope(("acme", 2026))` for
//!   several scope fields ([`ErrorKind::InvalidScope`](crate::error::ErrorKind::InvalidScope) if it is missing,
//!   given for an unscoped sequence, or of the wrong length).
//! - [`T::collection(&db)`](crate::Document::collection) → the typed `mongodb::Collection<T>`;
//!   [`T::sequence().find(&db, id)`](crate::SequenceOf::find) → the document the sequence
//!   numbered `id` (in `_id`, or in the field the sequence numbers:
//!   `Ticket::sequence().find(&db, 1041)`), or `None` (numbers compare by value, whatever
//!   integer type stored them). For a scoped sequence, name the scope:
//!   [`.scope(...)`](crate::action::FindOne::scope).
//! - [`T::create_indexes(&db)`](crate::Document::create_indexes) → creates the indexes the
//!   sequence relies on and returns their names: none to create for `_id` (`["_id_"]`); the
//!   unique index on the scope fields and the field for a field sequence (see
//!   [scopes](super::scopes)); and the unique index of each display field (`code_1`).
//! - [`seqid::deployment::check(&db).of::<T>()`](crate::deployment::check) (`.of::<U>()` again
//!   for each type more, [`.sequence(s)`](crate::deployment::Check::sequence) for one sequence) →
//!   what seqid finds of the deployment (standalone, replica set, sharded), each collection's
//!   shard key and the unique indexes relied on, and whether each sequence's promises hold
//!   ([`DeploymentReport`](crate::deployment::DeploymentReport): printable, serializable): for a deploy
//!   script or a health endpoint (see [sharded clusters](super::sharded_clusters)).
//! - `T::find_by_code(&db, "INV-2026-0042")` → the document holding that code, or `None`: one
//!   `find_by_<field>` per display field, written by the derive (see [display
//!   codes](super::display_codes)).
//! - [`T::sequence().stats(&db)`](crate::SequenceOf::stats) (on a [`seqid::Database`](crate::Database)) → what
//!   its handle did for the sequence (summed over the scopes it holds): reservation round trips,
//!   ids handed out, retries, ids left in the blocks, optimistic candidates in flight
//!   ([`Stats`](crate::Stats)). A sequence named at run time has the same, counted with
//!   the type that shares its counter and block size:
//!   [`db.sequence("ticket").stats()`](crate::action::NamedSequence::stats).
//!
//! For a type with several sequences, each has these for its own counter and finds on its
//! [`SequenceOf`](crate::SequenceOf) handle (see [several sequences](super::several_sequences)).
//!
//! ```no_run
//! use seqid::Document; // the counter's operations need nothing more
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Document)]
//! #[seq_id("userid", collection = "users")]
//! struct User {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     name: String,
//! }
//!
//! # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
//! // `users` was imported with ids of its own: bring the counter up to them first.
//! let last = User::sequence().sync_counter(&db).await?;
//! let peeked = User::sequence().last_reserved(&db).await?; // Some(last)
//! let mut ada = User { id: 0, name: "Ada".into() };
//! ada.insert(&db).await?; // last + 1
//! let again = User::sequence().find(&db, ada.id).await?;
//! # Ok(()) }
//! ```
//!
//! # Logging
//!
//! With [`tracing`](https://docs.rs/tracing), each insert runs in a `seqid.insert` span at debug
//! level that records what it is and what it did: `sequence`, `collection`, `strategy`,
//! `operation`, `documents`, `scopes`, `code` (the display code written; the first and the last
//! for many), and when it ends `reservations` (the reservation round trips it waited for: 0 when
//! its id came from a live block) and `outcome` (`stored`, or the error's message). A program
//! shows them with a subscriber; with `tracing-subscriber`'s formatter, each insert's span is a
//! line when it closes, with its busy and idle time:
//!
//! ```toml
//! [dependencies]
//! tracing-subscriber = { version = "0.3", features = ["env-filter"] }
//! ```
//!
//! ```no_run
//! use tracing_subscriber::EnvFilter;
//! use tracing_subscriber::fmt::format::FmtSpan;
//!
//! // At the top of `main`, once: `RUST_LOG=seqid=debug` shows seqid's spans and events,
//! // `RUST_LOG=info,seqid=debug` the program's own info lines too; unset, warnings only.
//! tracing_subscriber::fmt()
//!     .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")))
//!     .with_span_events(FmtSpan::CLOSE)
//!     .init();
//! ```
//!
//! A line then reads `DEBUG seqid.insert{sequence="ticket" collection="tickets"
//! strategy="block" operation="insert" documents=1 ... outcome="stored"}: close time.busy=...
//! time.idle=...`; the example service sets its subscriber up the same way. Numbers taken
//! with no document (`db.sequence(..).next()`, `.next_n(n)`, `T::reserve_ids`) run in a
//! `seqid.numbers` span alike: `sequence`, `counters`, `strategy`, `operation`, `numbers`,
//! `scopes`, `reservations`, and `outcome` (`handed out`, `reserved`, or the error's
//! message); an append of items (`append_<field>`) in a `seqid.append` span: `sequence`,
//! `collection`, `field`, `items`, and `outcome` (`appended`, or the error's message).
//! Retries (a taken `_id` in the optimistic loop, a counter's first use) are debug events
//! inside it. Warnings, once per process and sequence: a
//! `block` or `optimistic` insert through a bare `mongodb::Database`, and a largest id read that
//! went backwards. `tests/it/spans.rs` reads them all from a formatted log.
