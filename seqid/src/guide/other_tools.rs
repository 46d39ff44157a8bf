//! Other tools' counters: one sequence, several languages.
//!
//! A Python service numbers users with MongoEngine's `SequenceField`; a Node.js one numbers
//! tickets with mongoose-sequence. A Rust service with seqid can insert into the same
//! collections at the same time, numbered from the same counter: name the tool's layout, and the
//! sequence by the name that tool finds its counter by.
//!
//! ```no_run
//! use seqid::Document;
//! use serde::{Deserialize, Serialize};
//!
//! // A Python service saves `User` with MongoEngine's `id = SequenceField(primary_key=True)`.
//! #[derive(Debug, Serialize, Deserialize, Document)]
//! #[seq_id("users.id", collection = "users", layout = "mongoengine")] // MongoEngine's User.id
//! struct User {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     name: String,
//! }
//!
//! #[derive(Debug, Serialize, Deserialize, Document)]
//! #[seq_id("Book", collection = "books", layout = "mongoose-auto-increment")]
//! struct Book {
//!     #[serde(rename = "_id")]
//!     id: Option<i64>, // the plugin starts at 0, an id here, "unset" in a plain i64
//!     title: String,
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
//! let book = Book { id: None, title: "Dune".into() }.insert(&db).await?; // 0, 1, 2, ...
//! let odd = Order { id: 0 }.insert(&db).await?; // 1, 3, 5, ...
//! # Ok(()) }
//! ```
//!
//! | `layout` | the tool, as set up | counters collection | the counter is found by | value (the last id handed out) | first id | scope | step |
//! |---|---|---|---|---|---|---|---|
//! | `"tutorial"` (default) | the MongoDB tutorial; seqid's own | `counters` | `_id: "<name>"` | `seq` | 1 | in the `_id` (see [data layout](super::data_layout)) | any |
//! | `"mongoengine"` | MongoEngine 0.29 `SequenceField(collection_name=...)` | `mongoengine.counters` | `_id: "<collection>.<attribute>"`, the name | `next` | 1 | none | 1 |
//! | `"mongoose-sequence"` | `plugin(AutoIncrement, { id, inc_field, reference_fields, start_seq, inc_amount, collection_name })` | `counters` | `id: "<name>"` and `reference_value`: the scope fields, sorted by name, or `null` | `seq` | `start_seq` (1) | `reference_fields` | `inc_amount` |
//! | `"mongoose-auto-increment"` | `plugin(autoIncrement.plugin, { model, field, startAt, incrementBy })` | `identitycounters`, fixed | `model: "<name>"`, `field: "<field>"` (made with `__v: 0`) | `count` | `startAt` (0) | none | `incrementBy` |
//! | `"typegoose"` | @typegoose/auto-increment `AutoIncrementID({ field, startAt, incrementBy, trackerCollection })` on the model `<name>` | `identitycounters` | `modelName: "<name>"`, `field: "<field>"` | `count`, an Int64 | `startAt` (0) | none | `incrementBy` |
//! | `"go"` | the Go blog post in `seeds` | `counters` | `_id: "<name>"` | `sequence` | 1 | none | 1 |
//!
//! `<field>` is the key of the field the sequence numbers, `_id` or the field's. The tool's own
//! options map to seqid's keys: `collection_name` and `trackerCollection` to `counters`,
//! `start_seq` and `startAt` to `start`, `inc_amount` and `incrementBy` to `step`. What the tool
//! cannot hold does not compile, with the reason: a `scope` but with mongoose-sequence (and
//! seqid's own layout), a `step` with MongoEngine and the Go post (they add 1), `counters` with
//! mongoose-auto-increment, a first id of 0 in a plain integer field. [`Layout`](crate::layout::Layout)
//! holds each layout as a value.
//!
//! What seqid does on every layout, for the counters, block and gapless strategies alike:
//!
//! - **Ids.** `$inc: step` per id (a block of `n`: `$inc: n × step`), with the guard that leaves a
//!   counter that is not a whole number as it is
//!   ([`ErrorKind::CounterNotNumeric`](crate::error::ErrorKind::CounterNotNumeric)); Int32, Int64 and Double
//!   counters are all read, and keep their type (Int64 for typegoose).
//! - **A counter that does not exist yet.** Found by `_id`, it is made by the upsert (or at
//!   `start - step` first, as always). Found by fields (its `_id` an ObjectId), it is made by an
//!   insert after the tool's unique index on those fields (same keys, same name, so the tool's
//!   own index build finds it made), never by an upsert: without that index, two first uses could
//!   make two counters. Whoever writes first, tool or seqid, the other goes on. A gapless
//!   sequence's first use inside a transaction that has already read (`number_draft` reads the
//!   draft first, `find_or_insert` the key; a caller may read too) cannot see a counter made
//!   outside it: seqid makes the counter in the transaction instead (gone if it aborts), and
//!   where one was made since the transaction's snapshot, the insert meets it as a write
//!   conflict, a `TransientTransactionError`: the transaction runs again, as any does, and
//!   numbers from `start`.
//! - **Admin calls** speak ids: [`last_reserved`](crate::SequenceOf::last_reserved) is the last id
//!   handed out, [`set_counter(last)`](crate::SequenceOf::set_counter) takes an id of the sequence
//!   (`start + k × step`), and [`sync_counter`](crate::SequenceOf::sync_counter) raises the
//!   counter, in the tool's field, to the last id of the progression not above the largest stored
//!   (so that writers interleaving by step keep to their own ids).
//!
//! These are tested with the real tools (pinned: MongoEngine 0.29.3, mongoose-sequence 6.0.1
//! with mongoose 8, mongoose-auto-increment 5.0.1 with mongoose 6, @typegoose/auto-increment
//! 5.0.1 with mongoose 9), run by `node` and `python3` beside seqid on both test servers (see
//! [the test server](super::test_server)). Two notes from their source:
//! mongoose-auto-increment raises its counter with `$set` when a document is saved with an id of
//! its own, and MongoEngine's `save()` of a document whose `_id` exists *replaces* it: after
//! importing documents with ids of their own, call `sync_counter` before either tool saves
//! again.
//!
//! # A layout by hand
//!
//! A layout no preset covers is described key by key (`counter_name`, `counter_field`,
//! `counter_value`, `counter_holds`: see the [attribute reference](super::attributes)), e.g. a
//! table of `{ name, next_val }` counters that hold the next id:
//!
//! ```no_run
//! # use seqid::Document;
//! # use serde::{Deserialize, Serialize};
//! #[derive(Serialize, Deserialize, Document)]
//! #[seq_id("orders", counters = "sequences", counter_name = "name", counter_value = "next_val",
//!          counter_holds = "next")]
//! struct Order {
//!     #[serde(rename = "_id")]
//!     id: i64,
//! }
//! ```
//!
//! # Moving a sequence from a tool to seqid, without a pause
//!
//! Deploy the Rust service with the tool's layout, the sequence's name, and the tool's `start`
//! and `step`. From its first insert, both take ids from the one counter, each `$inc` atomic, so
//! nothing stops while traffic moves over, service by service; the tool's last process may run
//! until its last request. Then keep the layout: seqid needs nothing else, and the counter stays
//! where every remaining reader looks for it. (Moving the counter into another layout would make
//! two counters of one sequence while processes of both versions run; if it must move, stop the
//! sequence's writers, [`set_counter`](crate::SequenceOf::set_counter) the new layout's counter to
//! the old one's value, and start them again.)
