//! Sharing state: one [`Sequences`](crate::Sequences) handle per deployment.
//!
//! [`doc.insert(&db)`](crate::Document::insert) takes a `mongodb::Database`, or a
//! [`seqid::Database`](crate::Database) made by a [`Sequences`](crate::Sequences) handle (both
//! are [`AsDatabase`](crate::AsDatabase)). The handle owns what tasks share: the group commit of
//! the counters strategy, the live blocks, the optimistic loop's candidates. Make one next to
//! your `mongodb::Client` (it is cheap to clone, like the client) and take databases from it:
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, serde::Deserialize, Document)]
//! # #[seq_id("userid", collection = "users")]
//! # struct User { #[serde(rename = "_id")] id: i64, name: String }
//! # async fn run(uri: &str) -> Result<(), Box<dyn std::error::Error>> {
//! # let mut user = User { id: 0, name: "Ada L.".into() };
//! let client = mongodb::Client::with_uri_str(uri).await?;
//! let sequences = seqid::Sequences::new(&client);
//! let db = sequences.database("app"); // derefs to mongodb::Database for everything else
//! user.insert(&db).await?;
//! # Ok(()) }
//! ```
//!
//! Keep the handle for the life of the process (in the application state of a service, as the
//! [example service](super::service) does). Inserts also take a bare `mongodb::Database`, but
//! through it every call works alone: `block` reserves ids per call and keeps no block,
//! `counters` tasks share no round trip and `optimistic` tasks take turns, which costs about half
//! the throughput (on nx-27017, `block` at 0.47 × a plain `insert_one` bare against 0.94 through
//! the handle; the repository's `BENCHMARKS.md` has the runs). `optimistic` pays most: a bare
//! call reads the largest id at every insert where the handle knows it, two commands per insert
//! against one (0.7–0.85 × the handle's inserts per second at one task on SecantusDB, 0.25–0.3 ×
//! on nx-27017, whose query for it scans).
//!
//! The handle makes its databases itself, so all of them reach its client's deployment: two
//! clients to two deployments never share reserved ids or optimistic state, whatever the database
//! names. A bare `mongodb::Database` cannot say which deployment it belongs to (the driver gives a
//! `Client` no identity), so through it every call works alone, with state made for the call and
//! dropped after it: a `counters` insert sends its own `$inc` (the tutorial's two commands), a
//! `block` insert reserves exactly the ids it needs, keeping no block, and an `optimistic` insert
//! queries the maximum itself, so tasks of one process take turns, one insert at a time. A
//! `gapless` transaction takes its turn at the counter in the process's one line whatever way it
//! came in (the line holds no id, only who goes next: see [strategies](super::strategies#gapless)).
//! Ids are as unique either way; the handle makes them cheaper. A `block` or `optimistic` insert through
//! a bare database logs a warning naming the handle, once per process and sequence.
//!
//! # Memory
//!
//! Memory is bounded by the sequences in use: the state of a (database, sequence) that no call
//! has used for [`release_idle_after`](crate::Sequences::release_idle_after) (10 minutes unless
//! set, [`DEFAULT_RELEASE_AFTER`](crate::Sequences::DEFAULT_RELEASE_AFTER)) is released, so a service with a
//! database per tenant keeps state for the tenants in use, not for every name it has seen.
//! Releasing costs nothing but a block's unused ids (a gap of at most one block).
//! [`T::sequence().stats(&db)`](crate::SequenceOf::stats) and [`Sequences::held()`](crate::Sequences::held)
//! show what a handle holds.
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, serde::Deserialize, Document)]
//! # #[seq_id("userid", collection = "users", strategy = "block")]
//! # struct User { #[serde(rename = "_id")] id: i64, name: String }
//! # async fn run(client: mongodb::Client) -> Result<(), seqid::Error> {
//! let sequences = seqid::Sequences::new(&client)
//!     .release_idle_after(std::time::Duration::from_secs(60));
//! let db = sequences.database("tenant_42");
//! let mut ada = User { id: 0, name: "Ada".into() };
//! ada.insert(&db).await?; // the first id of a block of 100, shared by every task
//! let stats = User::sequence().stats(&db); // reservations, ids, retries, unused, in_flight
//! let held = sequences.held(); // sequences (and scopes) it holds state for
//! # Ok(()) }
//! ```
//!
//! # Cancellation
//!
//! A dropped `insert` future (e.g. under `tokio::time::timeout`) never costs an id that seqid
//! still holds, and never leaves a round trip half-done: reservations and writes run in a task of
//! their own when their caller goes away (see [cancelled calls](super::cancellation)). A caller
//! cancelled while it waited for ids gets nothing, and the ids reserved for it go to the next
//! callers of the handle, with every strategy (for the optimistic loop, its candidates are not
//! left "in flight" to push later candidates up); one cancelled after its id was filled in leaves
//! the document with its id, and [`resume_insert`](crate::Document::resume_insert) learns what
//! became of its write.
