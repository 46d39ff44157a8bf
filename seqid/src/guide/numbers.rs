//! Numbers on their own: a type's next numbers with no document
//! (`Order::sequence().next(&db)`), and the MongoDB tutorial's `getNextSequence("userid")`
//! by name.
//!
//! Some numbers are taken before, or without, the document they number: an order number
//! shown to the customer before the order is stored, a batch of numbers printed on labels,
//! a number written into a document another service stores. Which call gives which:
//!
//! ```no_run
//! use seqid::{AsDatabase, Document}; // AsDatabase: for `db.sequence(name)`
//! # #[derive(serde::Serialize, Document)]
//! # #[seq_id("order", collection = "orders", start = 1001)]
//! # struct Order { #[serde(rename = "_id")] id: i64, total: i64 }
//!
//! # async fn run(sequences: seqid::Sequences) -> Result<(), seqid::Error> {
//! let db = sequences.database("app");
//! // A number of the type's own sequence, with every option the type declares (its
//! // counters collection, layout, start, step, strategy, scope fields and their types).
//! let number: i64 = Order::sequence().next(&db).await?; // 1001 on a new counter
//! let labels: Vec<i64> = Order::sequence().next_n(&db, 10).await?; // ten, increasing
//! // The tutorial's getNextSequence("userid"), by name: a sequence no type declares, or
//! // one that a type declares, whose options it then takes.
//! let id: i64 = db.sequence("userid").next().await?;
//! # Ok(()) }
//! ```
//!
//! **Which call a number comes from.** A number a document of the type will carry (an
//! order number shown to the customer before the order is stored) is reserved for it:
//! [`Order::reserve_id(&db)`](crate::Document::reserve_id), then
//! [`order.insert(&db).reserved(token)`](crate::action::Insert::reserved), which stores
//! the order under it as any insert does (its codes written, its items numbered, in the
//! database it was reserved in); see [below](#a-models-next-id-before-its-document). A
//! number on its own ([`Order::sequence().next(&db)`](crate::SequenceOf::next), or
//! `db.sequence(..).next()`) is for numbers no document of this type carries: a document
//! stored by hand under one is stored as the driver stores it, with nothing of what seqid's
//! insert fills in.
//!
//! # One counter, three kinds of writers
//!
//! A type's sequence, [`T::sequence()`](crate::Document::sequence) (and `<field>_sequence()`
//! for each of a type's several sequences), is the type's counter with the type's options,
//! its scope typed as the counter's operations take it (`.scope(2026)` for an `i32` year;
//! a string does not compile). [`db.sequence(name)`](crate::AsDatabase::sequence) names
//! one at run time, its options by method, as the attribute takes its keys:
//! [`counters`](crate::action::NamedSequence::counters), [`layout`](crate::action::NamedSequence::layout),
//! [`start`](crate::action::NamedSequence::start), [`step`](crate::action::NamedSequence::step),
//! [`field`](crate::action::NamedSequence::field) and
//! [`collection`](crate::action::NamedSequence::collection),
//! [`counter_write_concern`](crate::action::NamedSequence::counter_write_concern),
//! [`scope`](crate::action::NamedSequence::scope) (once per field, in the declared order), and the
//! strategy, [`block`](crate::action::NamedSequence::block) or
//! [`gapless`](crate::action::NamedSequence::gapless) (counters unless said; the optimistic
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
//! # A name the program declares
//!
//! Every type that derives [`Document`](crate::Document) (without generic parameters)
//! registers its sequences when the program starts. A sequence named at run time whose name
//! a type of the program declares, in the same counters collection (given with
//! [`counters`](crate::action::NamedSequence::counters) or through a
//! [`layout`](crate::action::NamedSequence::layout), or, given neither, any), is that type's
//! sequence: the call takes every option the type declares and the call leaves out (its
//! start, step, strategy and block size, layout, write concern, scope fields and their
//! Rust types, and the collection it numbers, so that a missing counter is checked against
//! it), and an option it gives that differs is refused before anything is read or written,
//! naming the type: [`ErrorKind::InvalidOption`](crate::Error) (the option, the value, the
//! declaration), [`ErrorKind::InvalidScope`](crate::Error) for the scope fields or a scope value
//! the declared field's type cannot hold. So `db.sequence("order").next()` on a new
//! database starts the counter at the type's `start = 1001`, `.block(100)` beside a counters
//! type is refused, and `.scope("year", "2026")` for an `i32` year too. Where two types
//! declare the name differently in anything but the collection they number (a program at
//! odds with itself), a call by name is refused whatever it gives, naming both: each type's
//! [`T::sequence()`](crate::Document::sequence) takes its numbers as it declares them. A call
//! given a [`collection`](crate::action::NamedSequence::collection) whose field (`_id` unless
//! [`field`](crate::action::NamedSequence::field) says) a declared sequence of another name
//! numbers is refused too: `db.sequence("order_no").collection("orders")` is a slip for
//! `order`, caught whether or not a counter `order_no` exists.
//!
//! What a program declares is its own: another process, in another service or language, that
//! declares nothing takes its numbers with the options it gives, and seqid there cannot
//! know that another program declares the sequence otherwise. What holds across processes
//! is the counter document: its value (every writer takes numbers after it, none twice),
//! and what seqid reads of it (a `seq` it cannot count from is refused). What does not:
//! the start of a counter that does not exist yet (the first writer's), the step and the
//! block size (each writer's own), and the scope (a counter per scope value as each writer
//! writes it: `2026` and `"2026"` are two counters). Name the counter with the same options
//! everywhere, or give every such process the declaring type.
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
//! sharded (a sequence with no [`collection`](crate::action::NamedSequence::collection) has no
//! other; with one, it is checked as a declared type's is). Each distinct sequence named at
//! run time is made once and kept for the life of the process (a few hundred bytes): name a
//! few per service, not one per request.
//!
//! # Gaps and races
//!
//! A number taken and never used is a gap: seqid cannot know what the caller did with it.
//! Counters and block take their numbers outside the caller's transaction, as inserts do,
//! so an aborted transaction of the caller's costs a gap, never a number handed out twice.
//! What a process holds of a block sequence is a gap if the process ends, as for inserts: at
//! most `2 × block_size - 1` ids, the live block's rest and the next one reserved early
//! (`block_size - 1` with `.prefetch(false)`).
//!
//! A caller cancelled while it waits (its future dropped) costs no number through a handle:
//! the reservation runs to its end, and the numbers the caller never received go back to
//! the handle's live block for the next callers (with `counters` too). Through a bare
//! database, which keeps nothing between calls, they are a gap. Once a call has returned
//! its numbers, they are the caller's.
//!
//! A gapless number lives and dies with the caller's transaction: taken in it (a session
//! with no transaction running is [`ErrorKind::TransactionRequired`](crate::Error)), it is
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
//! sequence without a counter ([`ErrorKind::CounterMissing`](crate::Error)), and so does a
//! number on its own of a type's sequence, or named as a type declares it. A name no type
//! declares has no collection to look in unless it is given one with
//! [`collection`](crate::action::NamedSequence::collection) (and
//! [`field`](crate::action::NamedSequence::field)): give it where the numbers end up in a
//! collection, so that a counter under a mistaken name is caught, not started afresh.
//!
//! # What is refused
//!
//! Every option and value is checked when the call runs, before anything is read or
//! written. [`ErrorKind::InvalidOption`](crate::Error), naming the option, the value and why:
//!
//! - the name: empty, or starting with `[` (seqid keeps that for scoped counters' `_id`);
//! - `counters`: an empty collection name, or one holding `$` or a null character;
//! - `block(0)`, `step(0)`, a step with a layout whose tool always adds 1 (MongoEngine's,
//!   the Go post's), a negative `start`, an empty `field`;
//! - `scope`: a field given twice, an empty field, or a scope with a layout whose tool
//!   counts with no scope;
//! - `next_n(n)` (and `reserve_ids(n)`): `n` ids, `step` apart, that span more than an
//!   `i64`, or more ids than this process can hold in memory (`n` beyond 2^20 whose list
//!   cannot be allocated);
//! - an option that differs from the declaring type's, or one that two types declaring the
//!   name differ in; a collection another declared sequence numbers ([a name the program
//!   declares](#a-name-the-program-declares)).
//!
//! [`ErrorKind::InvalidScope`](crate::Error): a scope value that names no scope (a Double, an
//! array, a document), as for a declared type's `scope_unchecked`; a value the declared
//! field's Rust type cannot hold; no scope for a sequence declared with one, a scope for one
//! declared without, or other scope fields than the declared. A gapless call without a
//! transaction is [`ErrorKind::TransactionRequired`](crate::Error). Through
//! [`T::sequence()`](crate::Document::sequence) the options are the type's, and a scope of
//! the wrong type does not compile.
//!
//! # A model's next id before its document
//!
//! A number on its own is the caller's to do with as it likes; a model's next id, reserved
//! before its document is built, is stored by seqid with that document.
//! [`T::reserve_ids(&db, n)`](crate::Document::reserve_ids) (and
//! [`reserve_id`](crate::Document::reserve_id) for one) takes ids of the type's sequence
//! and hands each out as a [`Reserved<T>`](crate::Reserved) token;
//! [`insert(..).reserved(token)`](crate::action::Insert::reserved) stores a document under
//! it, taking no id:
//!
//! ```no_run
//! use seqid::Document;
//! # use serde::Serialize;
//!
//! #[derive(Serialize, Document)]
//! #[seq_id(collection = "invoices")]
//! struct Invoice {
//!     year: i32,
//!     #[seq_id("invoice", scope = "year")]
//!     number: i64,
//!     #[seq_display("INV-{year}-{number:04}")]
//!     code: String,
//!     total: i64,
//! }
//!
//! # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
//! let token = Invoice::reserve_id(&db).scope(2026).await?;
//! let mut invoice = Invoice { year: 2026, number: 0, code: String::new(), total: 0 };
//! token.fill(&mut invoice)?; // the number and the code, before the invoice is stored
//! println!("{}", invoice.code); // INV-2026-0001
//! invoice.total = 4200; // ... the rest of the document, later ...
//! invoice.insert(&db).reserved(token).await?;
//! # Ok(()) }
//! ```
//!
//! **What it costs.** The ids are taken as the type's inserts take theirs, from the same
//! counter, and through a [`Sequences`](crate::Sequences) handle with the same allocator:
//! `counters` callers that wait together share one `$inc`, and `block` reservations hand
//! out the live block the inserts use (`n` ids: from the block, and whole blocks for what
//! it lacks). The insert of a token is one write, with no reservation. Only the strategies
//! that keep a counter reserve ([`kind::WithCounter`](crate::kind::WithCounter)); on an optimistic
//! type, whose ids are the largest stored plus one, `reserve_ids` does not compile.
//!
//! **What a token is.** It holds the id, the database and scope it was taken for, the
//! [`Sequences`](crate::Sequences) handle it was taken through if any (and for gapless, the
//! session whose transaction took it). Only seqid makes one: it has no public constructor and
//! is not `Deserialize`, so no id typed by a user or read from a request passes for a
//! reserved one; and it is not `Clone`: the insert takes it by value, so a token stores one
//! document, once. A document with an id set and no token is refused as always
//! ([`ErrorKind::IdAlreadySet`](crate::error::ErrorKind::IdAlreadySet)); with a token, its id field is
//! unset or the token's id already (what [`fill`](crate::Reserved::fill) wrote), and it is
//! of the token's scope ([`ErrorKind::ReservedScope`](crate::error::ErrorKind::ReservedScope) otherwise,
//! before anything is written). It is inserted in the database it was reserved in, whose
//! counter alone handed the id out, and if both went through a handle, through the same
//! handle or a clone of it ([`ErrorKind::ReservedElsewhere`](crate::error::ErrorKind::ReservedElsewhere)
//! otherwise, before anything is written; the id is then a gap where it was reserved). The
//! driver gives a `Client` no identity, so through a bare `mongodb::Database` only the
//! database names are compared: with one database per tenant on several deployments, a
//! handle per deployment keeps two databases of one name apart. A document's other
//! sequences take their ids in the insert, as usual. A token's insert fails or loses its
//! answer as any insert does: a lost answer is
//! [`ErrorKind::OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown), the document keeping the id, and
//! [`resume_insert`](crate::Document::resume_insert) settles it (with no token: the
//! document carries its id).
//!
//! **The gaps.** An id reserved and never inserted is a gap, as for an insert that fails
//! after taking its id: seqid cannot know the caller dropped it. A caller cancelled while
//! its reservation waits loses nothing through a handle: the ids go back to the handle's
//! live block. A token dropped unused does not: its id was the caller's.
//!
//! **Gapless and transactions.** A gapless reservation runs in the caller's transaction,
//! given with [`.session(..)`](crate::action::Reserve::session)
//! ([`ErrorKind::TransactionRequired`](crate::error::ErrorKind::TransactionRequired) without one), and its
//! tokens live and die with that transaction: inserted in it, they commit with it, dense;
//! an aborted transaction takes their ids back, the next transaction takes them again, and
//! the tokens are void. The driver keeps a transaction's number to itself, so seqid tells
//! a token's transaction by what it owns, before anything is written
//! ([`ErrorKind::ReservedTransaction`](crate::error::ErrorKind::ReservedTransaction), saying which):
//!
//! - the insert runs in a transaction of the session that reserved the token (none, or
//!   another session's, is refused);
//! - no later reservation of this process took the id again (each gapless token holds
//!   the ticket of its reservation, which a later reservation of the same id replaces);
//! - the counter, read in the inserting transaction (one read more), has handed the id
//!   out: after an abort it shows less.
//!
//! Another process that took the id again after an abort meets the unique index on the
//! field: one document only stores it. A token whose transaction committed without it
//! left a hole in the numbers; inserted in a later transaction of its session, it fills
//! that hole (its id was handed out once, and is stored once).
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, Document)]
//! # #[seq_id("ledger", collection = "ledger", strategy = "gapless")]
//! # struct Entry { #[serde(rename = "_id")] id: i64, total: i64 }
//! # async fn run(db: seqid::Database, client: mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
//! let mut session = client.start_session().await?;
//! session.start_transaction().await?;
//! let tokens = Entry::reserve_ids(&db, 2).session(&mut session).await?;
//! for (token, total) in tokens.into_iter().zip([4200, 1700]) {
//!     let mut entry = Entry { id: 0, total };
//!     entry.insert(&db).reserved(token).session(&mut session).await?;
//! }
//! session.commit_transaction().await?; // or abort: both ids are the next transaction's
//! # Ok(()) }
//! ```
