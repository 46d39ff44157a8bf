//! Cancelled calls: what a dropped future leaves behind.
//!
//! Services drop futures all day: a client hangs up and the framework drops the handler, a
//! `tokio::time::timeout` fires. **A dropped [`insert`](crate::Document::insert),
//! [`insert_many`](crate::Document::insert_many) or `resume_*` never drops a driver operation
//! half-way, and never wedges the client.** Every round trip seqid makes outside the caller's
//! session (a counter's `$inc`, a maximum query, a write and the lookups after it, an index
//! listing) owns what it needs (the document already serialized, a clone of the collection) and
//! is polled where the caller awaits it; if the caller drops it first, the rest of it runs in a
//! task of its own. So nothing is spawned while callers wait to the end, which is nearly always.
//! A round trip that other callers wait on (a shared `$inc`, a shared maximum query) goes on the
//! same way when the caller that happened to start it goes away. What a drop leaves behind, for
//! every strategy and for `insert_many` document by document:
//!
//! - **before the id is filled in**: nothing written, the id unset; insert it again. Ids reserved
//!   for the cancelled caller go to the next callers of the handle (through a bare database, a
//!   `counters` or `block` id is then a gap; optimistic candidates are released).
//! - **after the id is filled in**: the write runs to its end, the document keeps its id, and
//!   [`resume_insert`](crate::Document::resume_insert) settles it. Through a
//!   [`Sequences`](crate::Sequences) handle it learns what became of that very write (waiting for
//!   it if it is still under way): `Ok(id)` if it was stored, a new id if another writer held the
//!   optimistic candidate, the error if it was refused. Through a bare database it sends the
//!   document again, and a copy found at the id is taken for its own only under
//!   [`content_is_unique()`](crate::action::Insert::content_is_unique), as after a lost answer.
//!   An optimistic candidate stays reserved by the handle until that write ends, so no other
//!   insert of the process writes the same id meanwhile.
//! - **in the caller's session** ([`.session(&mut s)`](crate::action::Insert::session), and
//!   always for `gapless`): the operations borrow the session and cannot leave the caller; a drop
//!   drops them as dropping the driver's own future would. Abort the transaction then, or drop
//!   the session, which aborts it. Mind the driver's blind spot: it aborts a transaction only
//!   once one of its commands has answered, so a transaction whose first command was cut in
//!   flight stays open on the server, holding what that command locked until the transaction's
//!   lifetime runs out (60 s by default). A gapless insert makes sure a read of the counter has
//!   answered in the transaction before its `$inc` locks the counter (a round trip more per
//!   call, measured in `BENCHMARKS.md`), so a request cancelled during the `$inc` never holds
//!   the sequence; a write of your own as a transaction's first command is yours to guard.
//!   The driver has a second blind spot at the other end: it marks a transaction committed
//!   (or aborted) before it sends the command, so a commit cut before it left (waiting for a
//!   connection, as under load or after a failover) never reaches the server, and the
//!   session's drop aborts nothing. [`Transaction`](crate::action::Transaction) guards
//!   its commits and aborts: cut before their answer, it ends the transaction on the server
//!   with `killSessions` of its session (a transaction already committed stays committed).
//!   The kill ends whatever runs in that server session when it arrives: a transaction
//!   begun in the same session in those moments is aborted too, and retried, and an
//!   operation to which the driver's pool handed the same server session meanwhile is
//!   interrupted (an error, nothing written); a rare error beside a cut request, where
//!   the driver alone stalls every writer of the counter for a minute. A commit of your own
//!   is yours to guard, or to run in a task of its own.
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, serde::Deserialize, Document)]
//! # #[seq_id("userid", collection = "users")]
//! # struct User { #[serde(rename = "_id")] id: i64, name: String }
//! # async fn run(db: seqid::Database) -> Result<(), seqid::Error> {
//! use std::time::Duration;
//!
//! let mut ada = User { id: 0, name: "Ada".into() };
//! match tokio::time::timeout(Duration::from_millis(50), ada.insert(&db)).await {
//!     Ok(stored) => println!("stored as {}", stored?),
//!     // Dropped before its id was filled in: nothing written, insert it again later.
//!     Err(_elapsed) if ada.id == 0 => {}
//!     // Dropped after: the write goes on; resume_insert says how it ended.
//!     Err(_elapsed) => println!("stored as {}", ada.resume_insert(&db).await?),
//! }
//! # Ok(()) }
//! ```
//!
//! # Why this matters with the driver alone
//!
//! The driver (3.9) documents that dropping its futures before completion is not safe, and the
//! cost is large: a check-out is a request queued to the pool's worker task, and a dropped caller
//! drops only the receiving end. The request stays in the worker's wait queue, which the worker
//! serves one request per turn, turning on its 500 ms maintenance tick when nothing else wakes
//! it; a future dropped while its command is on the wire also costs its connection (closed as
//! `Dropped`). So every abandoned check-out queued ahead of a live one costs it up to half a
//! second, while the pool's connections sit idle and the server is quick to everyone else: a
//! client-side wedge of seconds to tens of seconds after a storm of cancellations
//! (`tests/it/driver_cancellation.rs` reproduces it without seqid). Two driver calls per request
//! (the tutorial's `find_one` then `insert_one`) make it worse: the second call queues behind the
//! dead requests every time. No driver timeout covers that wait (3.9 has no wait-queue, socket or
//! operation timeout).
//!
//! An application that calls the driver itself under timeouts should run each call in
//! `tokio::spawn` and drop only the `JoinHandle` (never `abort()` it, nor hold such tasks in a
//! `JoinSet`, whose drop aborts them). Where it cannot, only raising both `max_pool_size` and
//! `max_connecting` (to 100, say) bounded the damage in our measurements, at the price of that
//! many connections; `max_pool_size` alone, `min_pool_size`, `connect_timeout` and
//! `server_selection_timeout` did not help.
//!
//! `tests/it/cancellation.rs` holds every strategy, bare and through a handle, on both servers, to
//! storms of 64 inserts of which 62 are cancelled after 300 µs: normal inserts within 5 × the
//! driver's own (run that way) and no time-out; the benchmark's `cancel` part prints the table
//! (the repository's `BENCHMARKS.md`, *Cancellation storms*).
//!
//! See also [`Document`'s notes on cancellation](crate::Document#cancellation), and the
//! [example service](super::service), whose handlers are dropped on hang-ups and time-outs.
