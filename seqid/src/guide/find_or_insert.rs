//! Find-or-insert by a natural key, without burning ids.
//!
//! "Give me the customer with this email, creating it with the next number if it does not
//! exist": the call every tool in this space leaves to its users. An upsert cannot do it
//! (`$setOnInsert` of a fresh number takes a number on every call, found or not: what
//! MongoEngine's and mongoose's users are told to write), and `find_one` then `insert` by
//! hand stores two customers for two requests of one new email, or, with a unique index,
//! fails one of them after its number was taken.
//!
//! Mark the fields that identify a document with `#[seq_key]` (several make a compound key),
//! make their unique index with [`create_indexes`](crate::Document::create_indexes), and call
//! [`find_or_insert`](crate::Document::find_or_insert):
//!
//! ```no_run
//! use seqid::{Document, Entry};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, Serialize, Deserialize, Document)]
//! #[seq_id("customer", collection = "customers", strategy = "block")]
//! struct Customer {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     #[seq_key]
//!     email: String,
//!     name: String,
//! }
//!
//! # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
//! Customer::create_indexes(&db).await?; // ["_id_", "email_1"]
//! let mut customer = Customer { id: 0, email: "ada@example.com".into(), name: "Ada".into() };
//! match customer.find_or_insert(&db).await? {
//!     Entry::Inserted => println!("new customer {}", customer.id),
//!     Entry::Found => println!("customer {} was there: {}", customer.id, customer.name),
//! }
//! # Ok(()) }
//! ```
//!
//! Either way the document passed in now holds the stored one: its ids, its display codes,
//! its fields as stored (a found document replaces what the caller filled in, which is only
//! what it would have inserted). A key named per call instead of declared:
//! [`find_or_insert_by(&["email"], &db)`](crate::Document::find_or_insert_by).
//!
//! # What one call does
//!
//! 1. Reads the key's values from the document as it would be stored, and refuses, before
//!    anything is read or taken, a key field that is missing, null or an array
//!    ([`Error::InvalidNaturalKey`](crate::Error::InvalidNaturalKey): a unique index takes
//!    every missing field or null for one value, and holds an array's elements apart), and a
//!    collection without a unique index on the key
//!    ([`Error::MissingIndex`](crate::Error::MissingIndex); checked once per handle).
//! 2. Looks the key up on the primary: one `find_one` by the key's index. Found: done, and
//!    no id was taken.
//! 3. Not found: inserts exactly as [`insert`](crate::Document::insert) does (every
//!    strategy, scopes, several sequences, display codes, another tool's counter layout,
//!    the caller's session), with the next id.
//! 4. A duplicate key on the write: another caller stored the key between steps 2 and 3.
//!    Reads it by the key, and returns it as [`Entry::Found`](crate::Entry::Found).
//!
//! A found key costs one round trip and no id; a new key costs one more than an insert (the
//! lookup); a lost race costs the failed write and a second lookup.
//!
//! # The race, spelled out
//!
//! Callers A and B ask for one new key at once. Both look up and find nothing; both take an
//! id (A takes 7, B takes 8) and write. The key's unique index lets exactly one write
//! through, say A's: A answers `Inserted` with 7. B's write is refused with a duplicate key
//! on the key's index (not on `_id`: 8 is free); B reads the key, finds A's document, and
//! answers `Found` with 7, its document replaced by A's. One document is stored, and both
//! callers hold it. What B's 8 becomes is the strategy's promise:
//!
//! | strategy | B's id | ids per document stored |
//! |---|---|---|
//! | `counters` | a gap: the counter's `$inc` cannot be undone; counted in [`Stats::races_lost`](crate::Stats::races_lost) | 1 + the races lost |
//! | `block` | back to the handle's live block (through a [`Sequences`](crate::Sequences) handle), the next insert takes it; through a bare database, where no block outlives the call, a gap | 1 |
//! | `optimistic` | never stored, so still the largest + 1: the next insert takes it | 1 |
//! | `gapless` | see below | 1 |
//!
//! **Gapless, in the caller's transaction.** Lookup, counter and write all run in the
//! transaction, so the counter takes no id that the transaction does not keep. Two
//! transactions racing for one new key both `$inc` the counter: the second meets a write
//! conflict (a `TransientTransactionError`) and aborts, its id with it; run the transaction
//! again, as MongoDB's callback API does, and the retry's lookup finds the winner. A key
//! committed by another writer after the transaction's snapshot is a write conflict too. So a
//! lost race costs a retry, never an id. Without a running transaction the call is refused
//! before the lookup ([`Error::TransactionRequired`](crate::Error::TransactionRequired)), so
//! that it never answers one way with a transaction and another without.
//!
//! A retried transaction is the caller's loop:
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, serde::Deserialize, Document)]
//! # #[seq_id("invoice", collection = "invoices", strategy = "gapless")]
//! # struct Invoice { #[serde(rename = "_id")] id: i64, #[seq_key] order: String }
//! # async fn run(client: mongodb::Client, db: seqid::Database) -> Result<(), Box<dyn std::error::Error>> {
//! let mut session = client.start_session().await?;
//! let entry = loop {
//!     session.start_transaction().await?;
//!     let mut invoice = Invoice { id: 0, order: "order-1042".into() };
//!     match invoice.find_or_insert(&db).session(&mut session).await {
//!         Ok(entry) => match session.commit_transaction().await {
//!             Ok(()) => break entry,
//!             Err(e) if e.contains_label("UnknownTransactionCommitResult") => continue,
//!             Err(e) => return Err(e.into()),
//!         },
//!         // The race lost (or any transient error): the transaction is aborted; again.
//!         Err(seqid::Error::Driver { source, .. })
//!             if source.contains_label("TransientTransactionError") => continue,
//!         Err(e) => return Err(e.into()),
//!     }
//! };
//! # Ok(()) }
//! ```
//!
//! # Lost answers, faults and cancellation
//!
//! Nothing is stored twice on any path: the key's unique index keeps one document per key
//! whatever is retried, on top of the `_id` index that keeps one document per id. When the
//! write's answer is lost, the call settles what it can by the key:
//!
//! - a document found with the key and this call's id (in its scope) was stored by this
//!   call: counter-backed ids are handed out once. `Entry::Inserted`. With the optimistic
//!   strategy another caller of the same key may have tried the same candidate, so the
//!   outcome stays unknown unless the caller asserted
//!   [`content_is_unique`](crate::action::FindOrInsert::content_is_unique);
//! - a document found with another id is the winner: this call's write, should it ever
//!   land, is refused by the key's index. `Entry::Found`; the id is a gap (it is not given
//!   back: the write that holds it may still be on its way);
//! - nothing found: [`Error::OutcomeUnknown`](crate::Error::OutcomeUnknown), the document
//!   keeping its ids. Call `find_or_insert` again with the same document: it looks the key
//!   up first, then, as [`resume_insert`](crate::Document::resume_insert) does, sends the
//!   document again under the ids it carries.
//!
//! A cancelled call leaves what a cancelled insert leaves (see
//! [cancellation](super::cancellation)): nothing, if it was cancelled during the lookup;
//! else a document that keeps its ids, and that `find_or_insert` or `resume_insert` settles.
//!
//! # Found documents never change
//!
//! A found document is read, never written: its ids, codes and fields stay as they were
//! stored (the caller's own values are dropped, not merged). To change it, update it by its
//! id afterwards. A key that another writer changes or deletes between the duplicate key and
//! the lookup (step 4) leaves the duplicate key error as it was
//! ([`Error::DuplicateKey`](crate::Error::DuplicateKey), nothing stored).
