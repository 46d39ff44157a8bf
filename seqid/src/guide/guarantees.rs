//! Guarantees: faults and lost answers.
//!
//! # No path stores a document twice
//!
//! A document is only ever written under the id it was given, so the `_id` index (for a field
//! sequence, the unique index on its scope fields and field, which
//! [`resume_insert`](crate::Document::resume_insert) requires) refuses any second copy of it,
//! whoever sends it: a retry by the driver, by seqid, or by you. What a failed insert leaves in
//! the id field says what is known:
//!
//! - **unset** (`0` / `None`): not stored, and it never will be under the id it had. The server
//!   refused it ([`DuplicateKey`](crate::error::ErrorKind::DuplicateKey), [`Refused`](crate::error::ErrorKind::Refused)),
//!   the driver never sent it ([`Driver`](crate::error::ErrorKind::Driver): no server could be selected, the
//!   document is too large, ...), or no id could be taken. Fix it if needed, insert it again.
//! - **still set**: it may be stored. The connection or the server went away after the request
//!   was sent, the server refused a duplicate id that no document held when seqid looked (a copy
//!   of this insert may still have been being applied), or a write concern was not satisfied:
//!   [`ErrorKind::OutcomeUnknown`](crate::error::ErrorKind::OutcomeUnknown), whose message says which (for
//!   `insert_many`, [`BulkError::unknown`](crate::error::BulkError::unknown)). A cancelled `insert` (its
//!   future dropped, e.g. by a timeout) after the id was filled in leaves the same state.
//!   [`insert`](crate::Document::insert) then refuses the document
//!   ([`IdAlreadySet`](crate::error::ErrorKind::IdAlreadySet)), and
//!   [`resume_insert`](crate::Document::resume_insert) /
//!   [`resume_insert_many`](crate::Document::resume_insert_many) finish the job: the document is
//!   sent again under the same id. Stored: it is yours, `Ok`. No answer, or this copy refused:
//!   still `OutcomeUnknown`, the id kept (an earlier copy may still be on its way); call it again
//!   later. A document already at the id: see below.
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, serde::Deserialize, Document)]
//! # #[seq_id("userid", collection = "users")]
//! # struct User { #[serde(rename = "_id")] id: i64, name: String }
//! # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
//! let mut ada = User { id: 0, name: "Ada".into() };
//! let id = match ada.insert(&db).await {
//!     Ok(id) => id,
//!     // Maybe stored: send it again under the same id; never stored twice.
//!     Err(error) if error.is_outcome_unknown() => ada.resume_insert(&db).await?,
//!     Err(other) => return Err(other),
//! };
//! # Ok(()) }
//! ```
//!
//! # An acknowledged insert is yours
//!
//! `Ok(id)`, or a document in [`BulkError::inserted`](crate::error::BulkError::inserted), means the
//! server acknowledged *this call's* write of that document, never that a document equal to it
//! was found. Two callers inserting equal documents (a like, a page view, a form sent twice) are
//! ordinary, and equal content says nothing of who wrote it. What the server answered decides:
//!
//! - A **duplicate key answering a first send** is another writer's document: the optimistic
//!   strategy takes a new id, the counter strategies fail the document (`DuplicateKey`, id
//!   unset). A first send's only earlier attempt is the driver's own retry, and a replica set
//!   answers a retried insert from its record of the first attempt (retryable writes: same
//!   session, same transaction number), never with a duplicate key; a standalone server gets no
//!   retry at all. seqid still looks the id up, and if no document holds it the outcome is
//!   unknown, not taken.
//! - A **lost answer** is unknown. A document found at the id afterwards proves nothing: it may
//!   be another caller's equal one. (Unless the insert filled an `Option<ObjectId>` `_id` beside
//!   a field sequence: that `ObjectId` is the insert's own, so its document found is this one;
//!   see [scopes](super::scopes).)
//! - A **resume that meets a document at its id** cannot tell this call's earlier copy from
//!   another writer's equal document: `OutcomeUnknown`, the id kept. seqid cannot see the
//!   driver's session and transaction number, which would let the server itself say whether the
//!   earlier copy was applied, so the caller is told it does not know.
//! - **[`content_is_unique()`](crate::action::Insert::content_is_unique)**, asserted by a caller
//!   whose documents each carry something only it writes, lets seqid settle those outcomes by
//!   content: after a lost answer, a document equal to this one at its id (field by field,
//!   numbers by value; a field sequence's document without an `_id` field compared without the
//!   `_id` the server gave each copy) is its own; in a resume, a *different* one is another
//!   writer's (the optimistic strategy then takes a new id; a counter's id, handed out once,
//!   gives `DuplicateKey` with the id left in place, since the document there may be this one
//!   changed since it landed). Asserted falsely, it lets another writer's equal document pass for
//!   this one.
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, serde::Deserialize, Document)]
//! # #[seq_id("like", collection = "likes")]
//! # struct Like { #[serde(rename = "_id")] id: i64, request: String }
//! # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
//! // Each like carries the id of the request that made it, which no other writer sends.
//! let mut like = Like { id: 0, request: "r-8c1f".into() };
//! like.insert(&db).content_is_unique().await?;
//! # Ok(()) }
//! ```
//!
//! # The risk that remains
//!
//! seqid takes a first send's duplicate key for another writer's on the word of the manual's
//! retryable writes: the driver retries a write whose answer was lost with the same session and
//! transaction number, and the server answers the retry from its record of the first attempt.
//! MongoDB (replica sets and sharded clusters) writes that record with the write itself, in the
//! same storage transaction, journaled and replicated with it, so it answers the retry from the
//! record after a restart or a failover too (a write rolled back in a failover takes its record
//! with it, and the retry then writes it once). A server that instead runs the retry again, so
//! that it meets the first attempt's own copy, exposes these callers:
//!
//! | caller | when a retry meets its own first copy |
//! |---|---|
//! | counters, block, several sequences, without `content_is_unique` | [`DuplicateKey`](crate::error::ErrorKind::DuplicateKey), id unset, for a document that *is* stored: inserting it again stores it twice |
//! | optimistic, without `content_is_unique` | `Ok` under a new id: the document is stored twice |
//! | any strategy with [`content_is_unique()`](crate::action::Insert::content_is_unique) | not exposed: the equal document at its id is its own, `Ok` once |
//! | gapless (inside your transaction) | not exposed: writes in a transaction are not retried one by one; a restart aborts the transaction |
//! | [`resume_insert`](crate::Document::resume_insert) | not exposed: a resume that meets a document at its id is `OutcomeUnknown` (settled only with `content_is_unique`) |
//!
//! Which servers do it (the driver's retry reaches a restarted server when it is back within the
//! client's server selection timeout, 30 s by default: a plain restart is):
//!
//! - **MongoDB 6.0 to 8.x**, replica set or sharded: never, by the manual's retryable writes;
//!   nobody above is exposed.
//! - **A standalone `mongod`**, and **nx-27017** (which presents itself as one): the driver
//!   retries no write, so a lost answer is `OutcomeUnknown` and nobody is exposed.
//! - **SecantusDB 0.7.0b3** (a single-node replica set): while it runs, it answers a retried
//!   single insert from its record, but runs again a retried `insert_many` batch that met a
//!   duplicate key; and it forgets its records when restarted, so that after a restart it runs
//!   *any* retried write again. Exposed there: the table's callers across a restart, and the
//!   optimistic strategy's batches (which meet duplicate keys wherever writers race) while it
//!   runs. Assert `content_is_unique` there where your documents allow it.
//!
//! The fault suite measures each of these on SecantusDB (`tests/it/faults.rs`):
//! `retried_batches_run_again` and
//! `a_retried_insert_meets_its_own_first_attempt_after_a_restart_on_secantusdb` show what the
//! server does, and `a_retry_across_a_restart_meets_its_own_copy_counters` and `_optimistic`
//! what the table's callers get through the driver's own retry across a restart (`DuplicateKey`
//! for a stored document; a second copy under a new id; with `content_is_unique`, one copy
//! each). Its kill tests keep the outage longer than their clients' server selection timeout, so
//! that the driver's retry fails and the writers resume instead. The repository's
//! `BENCHMARKS.md` (*Reliability: the fault suite*) has what the suite measured.
//!
//! seqid cannot tell, from the driver's answer, a retry run again from another writer's
//! document: the driver does not say that it retried, and taking every first-send duplicate key
//! for a possible copy of its own would make each real collision `OutcomeUnknown` on the
//! servers that keep their word.
//!
//! # What the driver already does
//!
//! On a replica set the driver retries a write once after a network error or a "not
//! primary"/"shutting down" error, with the same transaction number, and the server answers the
//! retry from its record of the first attempt: a single dropped connection costs no id and stores
//! nothing twice. A counter's `findAndModify` is retried the same way. The fault suite proves both
//! (`tests/it/faults.rs`, `a_single_lost_reply_costs_no_id_and_no_duplicate`).
//!
//! # Gaps
//!
//! An id whose document is refused, or a reservation whose answer is lost after the server
//! applied it, is a gap (counters and block); the optimistic strategy takes a refused id again.
//! A process that ends with ids of the block strategy in hand leaves them as a gap: at most two
//! blocks less one through a `Sequences` handle, which reserves the next block before the live
//! one is spent, or one block less one with `prefetch = false`
//! ([strategies](super::strategies#block)). A
//! crash of the server may cost the reservations in flight, and may apply them once more when the
//! restarted server no longer recognises the driver's retry. Ids are never handed out twice as
//! long as the counter's writes are durable: a counter `$inc` acknowledged with `w: 1` and lost in
//! a crash or a failover would hand the same ids out again, which the `_id` index then refuses
//! (`DuplicateKey`, never a duplicate). That is why the counter's updates go with
//! `w: "majority"` by default (see [the counter's write
//! concern](super::transactions#the-counters-write-concern)); on a single server, `majority`
//! means the primary alone, so use `journal: true` on the database when a crash must not lose a
//! counter update.
//!
//! # Tested, not assumed
//!
//! The fault suite (`tests/it/faults.rs`, on SecantusDB servers of its own) injects
//! `failCommand` faults into every command each strategy sends, loses replies and delivers
//! requests late through a proxy, and kills the server mid-run; after every run it reads the
//! whole collection back: every document stored exactly once, under the id its call returned,
//! nothing lost. The repository's `BENCHMARKS.md` (*Reliability: the fault suite*) has the table
//! of runs, documents and gaps. The crash test writes with `journal: true`: SecantusDB, like a
//! single `mongod`, can lose a `w: 1` write acknowledged just before a crash.
//!
//! # A counter upsert answered with no document
//!
//! MongoDB never does this; SecantusDB does, now and then, during the concurrent first use of a
//! counter. It is retried like the upsert race of the tutorial, a bounded number of times; if it
//! persists, [`ErrorKind::NoCounter`](crate::error::ErrorKind::NoCounter) says what the server answered. If the
//! counter holds something seqid cannot count from, the error says so and shows it, and the
//! counter is left as it is.
//!
//! See also [cancelled calls](super::cancellation), and [`Document`'s notes on
//! failures](crate::Document#failures-lost-answers-and-cancellation).
