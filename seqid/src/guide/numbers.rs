//! Numbers on their own: the MongoDB tutorial's `getNextSequence("userid")`, with no
//! document.
//!
//! Some numbers are not a document's `_id` when they are taken: an order number shown to
//! the customer before the order is stored, a batch of numbers printed on labels, a number
//! written into a document another service stores. A sequence named at run time hands
//! them out, from the same counter as everything else:
//!
//! ```no_run
//! use seqid::AsDatabase; // for a bare mongodb::Database; a seqid::Database has it too
//!
//! # async fn run(sequences: seqid::Sequences) -> Result<(), seqid::Error> {
//! let db = sequences.database("app");
//! let id: i64 = db.sequence("userid").next().await?; // getNextSequence("userid")
//! let ids: Vec<i64> = db.sequence("userid").next_n(10).await?; // ten at once, increasing
//! let ticket = db
//!     .sequence("ticket")
//!     .scope("project", "apollo") // the counter of #[seq_id("ticket", scope = "project")]
//!     .block(100)                 // in blocks of 100, through the handle
//!     .next()
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! # One counter, three kinds of writers
//!
//! [`db.sequence(name)`](crate::AsDatabase::sequence) takes its options by method, as the
//! attribute takes its keys: [`counters`](crate::NamedSequence::counters),
//! [`layout`](crate::NamedSequence::layout), [`start`](crate::NamedSequence::start),
//! [`step`](crate::NamedSequence::step), [`field`](crate::NamedSequence::field) and
//! [`collection`](crate::NamedSequence::collection),
//! [`counter_write_concern`](crate::NamedSequence::counter_write_concern),
//! [`scope`](crate::NamedSequence::scope) (once per field, in the declared order), and the
//! strategy, [`block`](crate::NamedSequence::block) or
//! [`gapless`](crate::NamedSequence::gapless) (counters unless said; the optimistic
//! strategy keeps no counter, so it has no number to hand out on its own). With the same
//! name, counters collection, layout and scope fields as a type's `#[seq_id(...)]`, it
//! finds the same counter document, and:
//!
//! - the type's inserts and the named calls take ids from it at once, none twice, in the
//!   same process or in others;
//! - the tutorial's `getNextSequence` run by hand (`findAndModify`, `$inc: { seq: 1 }`,
//!   upsert, the new document) takes ids from it too: the tutorial's layout is seqid's own;
//! - through one [`Sequences`](crate::Sequences) handle, named calls and inserts share the
//!   handle's allocator: `counters` callers that wait together share one `$inc`, and a
//!   `block` call shares the live block of a type with the same name, counters collection
//!   and block size.
//!
//! # What a number costs, per strategy
//!
//! | | `counters` | `block` | `gapless` |
//! |---|---|---|---|
//! | round trips per call | 1 (the `$inc`, shared by callers of a handle that wait together) | 1/`block_size` through a handle (one per call through a bare database) | 1 or 2 in the caller's transaction (a read of the counter the first time, then the `$inc`), and its commit |
//! | `next_n(n)` | one `$inc: n` | from the live block, and one `$inc` for what it lacks, rounded up to whole blocks | one `$inc: n` |
//! | order | increasing in the order taken, across all writers | increasing within a process, not across processes | increasing in commit order |
//!
//! The first call on a sequence of a database also asks the deployment what it is (`hello`,
//! once per handle or process), and on a sharded cluster how the counters collection is
//! sharded (a sequence with no [`collection`](crate::NamedSequence::collection) has no
//! other; with one, it is checked as a declared type's is). Each distinct sequence named at
//! run time is made once and kept for the life of the process (a few hundred bytes): name a
//! few per service, not one per request.
//!
//! # Gaps and races
//!
//! A number taken and never used is a gap: seqid cannot know what the caller did with it.
//! Counters and block take their numbers outside the caller's transaction, as inserts do,
//! so an aborted transaction of the caller's costs a gap, never a number handed out twice.
//! A block held by a process is a gap of at most `block_size - 1` if the process ends, as
//! for inserts.
//!
//! A caller cancelled while it waits (its future dropped) costs no number through a handle:
//! the reservation runs to its end, and the numbers the caller never received go back to
//! the handle's live block for the next callers (with `counters` too). Through a bare
//! database, which keeps nothing between calls, they are a gap. Once a call has returned
//! its numbers, they are the caller's.
//!
//! A gapless number lives and dies with the caller's transaction: taken in it (a session
//! with no transaction running is [`Error::TransactionRequired`](crate::Error)), it is
//! the caller's once the transaction commits, and an aborted transaction takes it back, so
//! the next transaction takes it again. Committed numbers have no gap, in commit order. The
//! transactions of one process take turns at the counter, whatever handle or bare database
//! they come through (the [transactions](super::transactions) chapter); those of other
//! processes conflict and run again.
//!
//! ```no_run
//! use seqid::AsDatabase;
//!
//! # async fn run(client: mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
//! let db = client.database("app");
//! let mut session = client.start_session().await?;
//! session.start_transaction().await?;
//! let number = db.sequence("invoice").gapless().session(&mut session).next().await?;
//! let invoices = db.collection::<mongodb::bson::Document>("invoices");
//! invoices
//!     .insert_one(mongodb::bson::doc! { "number": number })
//!     .session(&mut session)
//!     .await?;
//! session.commit_transaction().await?; // or abort: the number is the next one's
//! # Ok(()) }
//! ```
//!
//! # A counter made on first use
//!
//! A counter that does not exist yet is made at `start` by the first call, as for an
//! insert. A declared type first checks that its collection holds no number of the
//! sequence without a counter ([`Error::CounterMissing`](crate::Error)); a number on its
//! own has no collection to look in unless it is given one with
//! [`collection`](crate::NamedSequence::collection) (and
//! [`field`](crate::NamedSequence::field)): give it where the numbers end up in a
//! collection, so that a counter under a mistaken name is caught, not started afresh.
//!
//! # Options refused
//!
//! Every option is checked when the call runs, before anything is read or written, and
//! refused as the derive refuses it at compile time, with
//! [`Error::InvalidOption`](crate::Error) naming the option, the value and why: an empty
//! name or one starting with `[`, an empty counters collection, a block size or a step of
//! 0, a step with a layout whose tool always adds 1, a negative start, a scope field given
//! twice or with a layout that has no scope, and `next_n(n)` whose `n` ids, `step` apart,
//! span more than an `i64`. A scope value that names no scope (a Double, an array, a
//! document) is [`Error::InvalidScope`](crate::Error), as for a declared type's
//! `scope_unchecked`.
