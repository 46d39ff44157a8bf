//! # Sharded clusters: what holds, what is refused, what it costs
//!
//! Every strategy's promise rests on something sharding changes: a unique index, a
//! counter's update reaching one document, a transaction on one server. Through mongos
//! (its `hello` answers `msg: "isdbgrid"`), seqid reads how the collection a sequence
//! numbers and its counters collection are sharded (their `config.collections` entries),
//! once per [`Sequences`](crate::Sequences) handle and collection (for calls through a bare
//! `mongodb::Database`, once per process, database and collection), again every five
//! minutes and as soon as a command answers that the routing changed (a stale shard or
//! database version). Before any id is taken, it refuses a sequence whose promise would not
//! hold, with [`ErrorKind::Sharded`](crate::error::ErrorKind::Sharded) naming the collection, its shard key,
//! why, and what would make it hold; where the promise holds at a cost, it says so once in
//! the log (a `tracing` warning, once per process, sequence, collection and cost). On a replica set
//! or a standalone server it reads one `hello` per handle and database, and nothing else.
//!
//! [`seqid::deployment::check(&db).of::<T>()`](crate::deployment::check) (every sequence of a
//! type; `.of::<U>()` again for more types) reports the same for a deploy script or a health endpoint: the
//! deployment, each collection's shard key, the unique indexes seqid relies on and whether
//! they exist, and each sequence's [`Verdict`](crate::deployment::Verdict).
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, Document)]
//! # #[seq_id("user", strategy = "optimistic")]
//! # struct User { #[serde(rename = "_id")] id: i64 }
//! # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
//! let report = seqid::deployment::check(&db).of::<User>().await?;
//! print!("{report}");
//! // deployment: a sharded cluster (through mongos)
//! // collection app.users: sharded on { "email": 1 }
//! //   index _id_ { "_id": 1 }: present (the optimistic strategy: a number taken refused)
//! // sequence user (optimistic): REFUSED
//! //   app.users (sharded on { "email": 1 }): the optimistic strategy relies on ...
//! # Ok(()) }
//! ```
//!
//! # The facts it rests on
//!
//! - **A unique index is enforced across shards only when the shard key is a prefix of it**;
//!   `_id`'s own index is unique across the cluster only when `_id` is the shard key (ranged
//!   or hashed: equal values go to one shard either way). MongoDB manual, *Unique Indexes*
//!   (sharded collections) and *Shard Keys*; DOCS-15522. The optimistic strategy's whole
//!   promise rests on that index (a number another writer took is refused, and the loop
//!   tries the next); for the counters, block and gapless strategies it is a safety net (the
//!   counter hands each number out once; the index refuses a number stored by other means).
//! - **An upsert, and a `findAndModify` that must reach one document, must carry the whole
//!   shard key in its filter** (SERVER-14491, SERVER-14813; manual, *db.collection.
//!   findAndModify*, sharded collections). A counter is found by `{ _id }` (the tutorial's,
//!   MongoEngine's, the Go post's layouts), or by fields (mongoose-sequence's `{ id,
//!   reference_value }`, mongoose-auto-increment's `{ model, field }`, typegoose's `{
//!   modelName, field }`); those made by fields also need the tool's unique index on them,
//!   which on a sharded counters collection must start with its shard key.
//! - **Retryable writes and `findAndModify` retries work through mongos**; **transactions
//!   span shards** with a two-phase commit when they write to more than one (manual,
//!   *Production Considerations (Sharded Clusters)*): a gapless insert whose counter and
//!   document live on different shards pays it. CVE-2025-10060 (SERVER-95524): an upsert
//!   retried in a transaction could break a unique index before 6.0.25 / 7.0.22 / 8.0.12;
//!   run those or later.
//! - **A ranged shard key whose first field grows with every insert** sends every insert
//!   to the shard holding the last chunk (manual, *Monotonically Changing Shard Keys*).
//! - The tools seqid shares counters with say nothing of clusters: mongoose-sequence's
//!   users asked and were told it was never tested on one (mongoose-sequence #5, #26);
//!   mongodb-autoincrement #11 could not make its unique index under a hashed shard key.
//!
//! # The matrix
//!
//! The collection a sequence numbers (rows) by how it is sharded (columns). *Its index* is
//! the unique index on the sequence's field: `_id`'s own, or `{ <scope fields>, <field> }`
//! ([`create_indexes`](crate::Document::create_indexes) makes it).
//!
//! | strategy | unsharded | sharded on `_id`, ranged | on `_id`, hashed | on its index's first fields (e.g. the scope) | on other fields |
//! |---|---|---|---|---|---|
//! | `counters`, `block` | holds | holds; every insert to the last chunk's shard (logged) | holds | holds | holds; its index a safety net on each shard alone (logged) |
//! | `optimistic` | holds | holds; the last chunk's shard takes every insert (logged) | holds | holds | **refused** |
//! | `gapless` | holds | holds; a two-phase commit where counter and document are apart, and the last chunk (logged) | holds; two-phase commit (logged) | holds; two-phase commit (logged) | holds; safety net per shard, two-phase commit (logged) |
//!
//! For a sequence on `_id`, "its index's first fields" is `_id` itself. The counters
//! collection, for the counters, block and gapless strategies:
//!
//! | counter layout (found by) | unsharded | sharded on the fields that find it (a prefix of the tool's unique index) | sharded on anything else |
//! |---|---|---|---|
//! | `{ _id }` (tutorial, MongoEngine, go) | holds | holds (`_id`, ranged or hashed); each counter on one shard (logged) | **refused** |
//! | `{ id, reference_value }` (mongoose-sequence) | holds | holds (`id`, or `id, reference_value`) | **refused** (e.g. `reference_value` alone: not a prefix of `{ id, reference_value }`) |
//! | `{ model, field }` (mongoose-auto-increment), `{ modelName, field }` (typegoose) | holds | holds when the key starts the tool's index (`{ field, model }` / `{ field, modelName }`: `field` first) | **refused** |
//!
//! Leave the counters collection unsharded: it holds one small document per sequence and
//! scope. A hot counter (one sequence taking thousands of ids a second) is one document on
//! one shard whatever the sharding; the answer is the **block strategy**: one counter write
//! per block of `n` ids, so a sequence taking `r` ids a second writes its counter `r / n`
//! times a second (10,000 ids/s in blocks of 100: 100 counter writes a second), each block
//! handed out in memory by the handle. Its ids are not in insert order across processes (see
//! [strategies](super::strategies)).
//!
//! A natural key ([`find_or_insert`](super::find_or_insert)) rests on its unique index the same
//! way; MongoDB itself refuses to make a unique index that the shard key does not start on a
//! sharded collection (and to shard a collection on a key that does not start an existing
//! one), so a key index seqid finds is enforced across shards, and one MongoDB refused is
//! [`ErrorKind::MissingIndex`](crate::error::ErrorKind::MissingIndex). The same holds for the index of a field
//! sequence (not `_id`): the refusal above comes first, with its reason.
//!
//! # What was tested, and how
//!
//! No mongos can be installed here. The decisions are tested where they are made: the
//! harness's fault proxy presents the test server (SecantusDB or nx-27017) as a mongos (its
//! `hello` answers `msg: "isdbgrid"`, without a replica set's fields) and answers
//! `config.collections` with the entries each test sets; `tests/it/sharding.rs` has one test
//! per cell above that is refused and one per kind of pass, on both servers, and the default
//! suite runs through that proxy with every collection unsharded
//! (`SEQID_TEST_AS_MONGOS=1`, a pass of `.ci/run`). What is not tested: a real mongos's
//! routing, chunk migrations, stale-version errors (the re-read they cause is unit-tested),
//! a two-phase commit, and the servers' enforcement of unique indexes across shards; those
//! are MongoDB's, and the references above are what seqid's decisions rest on.
