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
//! [`find_or_insert(&db).by(&["email"])`](crate::action::FindOrInsert::by).
//!
//! # What one call does
//!
//! 1. Reads the key's values from the document as it would be stored, and refuses, before
//!    anything is read or taken, a key field that is missing, null or an array
//!    ([`ErrorKind::InvalidNaturalKey`](crate::error::ErrorKind::InvalidNaturalKey): a unique index takes
//!    every missing field or null for one value, and holds an array's elements apart), and a
//!    collection without a unique index on the key, or on some of its fields
//!    ([`ErrorKind::MissingIndex`](crate::error::ErrorKind::MissingIndex); checked once per handle, on every
//!    call through a bare database). A gapless type outside a transaction is refused here too
//!    ([`ErrorKind::TransactionRequired`](crate::error::ErrorKind::TransactionRequired)), so that the call
//!    never answers one way with a transaction and another without.
//! 2. Waits for its turn: the calls of one process for one key (one value of it, in one
//!    collection of one database) take turns, each its lookup and its insert, so that a key
//!    new to the database is inserted by the first of them and found by the others, which
//!    take no id. A call waits at most 2 s for the one ahead of it (a write that hangs holds
//!    the others back no longer; the key's index still keeps one document).
//! 3. Looks the key up on the primary: one `find_one` by the key's index. Found: done, and
//!    no id was taken.
//! 4. Not found: inserts exactly as [`insert`](crate::Document::insert) does (every
//!    strategy, scopes, several sequences, display codes, another tool's counter layout,
//!    the caller's session), with the next id.
//! 5. A duplicate key on the write: a caller in another process (or a writer that is not
//!    seqid) stored the key between steps 3 and 4. Reads it by the key, and returns it as
//!    [`Entry::Found`](crate::Entry::Found).
//!
//! A found key costs one round trip and no id; a new key costs one more than an insert (the
//! lookup); a lost race costs the failed write and a second lookup.
//!
//! # An empty key is a key
//!
//! Step 1 refuses only what names no one document: a key field missing, null or an array.
//! Every other value is a key as it is, the empty string too: two calls with `email: ""` find
//! the same document, so every customer whose email is empty is one customer, the first one
//! stored. seqid does not trim a key either (`" "` is a key of its own). Where an empty key is
//! a mistake, one check before the call refuses it:
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, serde::Deserialize, Document)]
//! # #[seq_id("customer", collection = "customers", strategy = "block")]
//! # struct Customer { #[serde(rename = "_id")] id: i64, #[seq_key] email: String, name: String }
//! # async fn run(db: seqid::Database, email: String) -> Result<(), Box<dyn std::error::Error>> {
//! let mut customer = Customer { id: 0, email, name: "Ada".into() };
//! // Else every empty email would find the first customer stored with one.
//! if customer.email.trim().is_empty() {
//!     return Err("a customer needs an email".into());
//! }
//! customer.find_or_insert(&db).await?;
//! # Ok(()) }
//! ```
//!
//! # The race, spelled out
//!
//! Within one process there is no race: the turns above make the second caller of a key wait
//! for the first and find its document. Across processes, callers A and B ask for one new key
//! at once. Both look up and find nothing; both take an id (A takes 7, B takes 8) and write.
//! The key's unique index lets exactly one write through, say A's: A answers `Inserted` with
//! 7. B's write is refused with a duplicate key on the key's index (not on `_id`: 8 is free);
//! B reads the key, finds A's document, and answers `Found` with 7, its document replaced by
//! A's. One document is stored, and both callers hold it. What B's 8 becomes is the
//! strategy's promise, and every such race is counted in
//! [`Stats::races_lost`](crate::Stats::races_lost):
//!
//! | strategy | B's id | ids per document stored |
//! |---|---|---|
//! | `counters` | a gap: the counter's `$inc` cannot be undone | 1 + the races lost |
//! | `block` | back to the handle's live block, which the next insert takes first; through a bare database, where no block outlives the call, a gap | 1 through a handle |
//! | `optimistic` | never stored: through a handle it goes back to the frontier, which hands it to the next insert; bare, the next maximum read hands it out again | 1 |
//! | `gapless` | taken back with the transaction: see below | 1 |
//!
//! With the optimistic strategy A and B may also try the same candidate: B's write then meets
//! A's document at its `_id`, the loop tries the next candidate, and that write meets the key.
//! A candidate given back stays a gap only if the process that holds it never inserts into the
//! sequence again while a larger id is stored.
//!
//! **Gapless, in the caller's transaction.** Lookup, counter and write all run in the
//! transaction, so the counter takes no id that the transaction does not keep. Two
//! transactions racing for one new key both `$inc` the counter: the second meets a write
//! conflict (a `TransientTransactionError`) and aborts, its id with it; run the transaction
//! again, as MongoDB's callback API does, and the retry's lookup finds the winner. A key
//! committed by another writer after the transaction's snapshot is a write conflict too, and
//! a duplicate key inside a transaction aborts it as well. So a lost race costs a retry,
//! never an id.
//!
//! Run the transaction with [`Transaction`](crate::action::Transaction), which runs it
//! again after a write conflict and sends a commit whose result is unknown again alone: a
//! loop that started the whole transaction again there would run `find_or_insert` a second
//! time after the first may have committed, and answer `Found` for the document it inserted.
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, serde::Deserialize, Document)]
//! # #[seq_id("invoice", collection = "invoices", strategy = "gapless")]
//! # struct Invoice { #[serde(rename = "_id")] id: i64, #[seq_key] order: String }
//! # async fn run(client: mongodb::Client, db: seqid::Database) -> Result<(), Box<dyn std::error::Error>> {
//! use seqid::action::Transaction;
//!
//! let mut session = client.start_session().await?;
//! let (entry, invoice) = Transaction::new(&mut session)
//!     .run(&db, |session, db| {
//!         Box::pin(async move {
//!             // Made in the body: a run again starts from an unset id.
//!             let mut invoice = Invoice { id: 0, order: "order-1042".into() };
//!             let entry = invoice.find_or_insert(*db).session(session).await?;
//!             Ok::<_, seqid::Error>((entry, invoice))
//!         })
//!     })
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! # Many documents
//!
//! [`T::find_or_insert_many(&mut docs, &db)`](crate::Document::find_or_insert_many) looks every
//! key up in one query, inserts the first document of each key not found in one `insert_many`
//! (one reservation per scope), and gives a later document of a key already in the slice the
//! first's stored document (`Found`). Its turns are taken key by key in one order (the keys'
//! bytes), so that two calls sharing keys never wait on each other in a circle. A race lost
//! and a lost answer are settled as for one document, with one more lookup for all of them;
//! what cannot be settled is [`ErrorKind::Bulk`](crate::error::ErrorKind::Bulk), whose `inserted` lists every
//! document that holds its stored one (found ones too): call it again with the same slice.
//! Adopting seqid on a collection whose documents have a natural key is one such call per
//! batch.
//!
//! # Lost answers, faults and cancellation
//!
//! Nothing is stored twice on any path: the key's unique index keeps one document per key
//! whatever is retried, on top of the `_id` index that keeps one document per id. When the
//! write's answer is lost, the call settles what it can by the key:
//!
//! - a document found with the key at another id is the winner: this call's write, should it
//!   ever land, is refused by the key's index. `Entry::Found`; the id is a gap (it is not
//!   given back: the write that holds it may still be on its way);
//! - a document found with the key at this call's own id is this call's own where the caller
//!   asserted that equal content is
//!   ([`content_is_unique`](crate::action::FindOrInsert::content_is_unique), or an
//!   `Option<ObjectId>` `_id` the call made): `Entry::Inserted`. Without that, equal content
//!   says nothing of who wrote it (a writer that is not seqid may have stored the same key
//!   under that id), and the outcome stays unknown, as for every insert;
//! - the race lost (a duplicate key on the key's index) and the read of the winner failed
//!   (its answer lost too): that read's error, [`ErrorKind::Driver`](crate::error::ErrorKind::Driver). This
//!   call stored nothing; call it again with the same document, which looks the key up
//!   first;
//! - nothing found, or a document that cannot be told apart:
//!   [`ErrorKind::OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown), the document keeping its ids.
//!   Call `find_or_insert` again with the same document: it looks the key up first (found, it
//!   answers `Found`: whoever stored it, this call found it, and the earlier call's answer is
//!   the one that stays unknown), else sends the document again under the ids it carries, as
//!   [`resume_insert`](crate::Document::resume_insert) does.
//!
//! A cancelled call leaves what a cancelled insert leaves (see
//! [cancellation](super::cancellation)): nothing, if it was cancelled before its insert; else
//! a document that keeps its ids, which `find_or_insert` called again settles.
//!
//! # Found documents never change
//!
//! A found document is read, never written: its ids, codes and fields stay as they were
//! stored (the caller's own values are dropped, not merged). To change it, update it by its
//! id afterwards. A key that another writer changes or deletes between the duplicate key and
//! the lookup (step 5) leaves the duplicate key error as it was
//! ([`ErrorKind::DuplicateKey`](crate::error::ErrorKind::DuplicateKey), nothing stored).
