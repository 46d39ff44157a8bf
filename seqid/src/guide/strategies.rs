//! The four strategies: where each id comes from, what it costs, what it guarantees.
//!
//! Chosen per type with `strategy = "..."` in `#[seq_id(...)]` (see [`Strategy`](crate::Strategy)).
//! Every strategy hands out unique ids under concurrency, across processes and next to other
//! writers of the same counter or collection.
//!
//! | | `counters` (default) | `optimistic` | `block` | `gapless` |
//! |---|---|---|---|---|
//! | where the next id comes from | `findAndModify` + `$inc: 1` on `counters.{_id: name}` (upsert) | largest numeric `_id` in the collection + 1 | a block reserved with one `$inc: block_size` on the same counter, handed out in memory | as counters, inside the caller's transaction |
//! | round trips per insert | 2 (1 for the id, shared by tasks that wait together) | 2 (max query, shared; + 1 insert per retry) | 1 + 1/block_size | 3 (a read of the counter, then as counters), and the transaction's commit |
//! | extra collection | `counters` | none | `counters` | `counters` |
//! | unique | yes | yes (the `_id` index decides) | yes | yes |
//! | `insert_many` of n documents | one `$inc: n`, one `insert_many` | one max query, one `insert_many` (+ retries of taken ids only) | the rest of the block, then whole blocks in one `$inc` | a read of the counter, one `$inc: n`, one `insert_many`, in the transaction |
//! | order | increasing in the order ids are taken, across all writers of the counter (but for ids given back by cancelled callers of a handle) | each id is above every id stored when it was taken | increasing within a process (but for ids given back by cancelled callers), not across processes | increasing in commit order |
//! | gaps | an insert that fails after taking its id leaves a gap | only where an insert failed while a later id was already stored; otherwise the failed id is taken again | as counters, plus up to `2 × block_size - 1` ids per process restart (`block_size - 1` with `prefetch = false`) | none, ever: an aborted transaction takes its id back |
//! | other writers | share the counter: the tutorial's `getNextSequence`, other services, blocks | may insert explicit ids; seqid steps over them | share the counter with plain `$inc: 1` writers | share the counter in transactions of their own |
//! | in the caller's transaction | the document; the counter outside it | the maximum query and the document | the document; the counter outside it | everything; a transaction is required |
//!
//! ```
//! use seqid::{Document, Model, Strategy};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Document)]
//! #[seq_id("orderid", collection = "orders", strategy = "block", block_size = 50)]
//! struct Order {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     total: i64,
//! }
//!
//! assert!(matches!(Order::SEQUENCE.strategy, Strategy::Block { block_size: 50, .. }));
//! ```
//!
//! # counters
//!
//! What the tutorial's `getNextSequence` does, data-compatible with it: the counter
//! document is `{ _id: "<name>", seq: <last id handed out> }`. A sequence that does not exist yet
//! starts at 1. Concurrent first use may make the upsert fail with E11000; it is retried, as the
//! manual says. Counters written by other tools work: `seq` may be an Int32, an Int64, a whole
//! Double (what the mongo shell writes) or a whole Decimal128. The `$inc`'s filter, operators on
//! `seq` alone (`$bitsAllClear: 0` and a range), lets it apply only to a whole number that stays
//! within ±2^53, so a counter holding 1.5, a string, or a Double the ids would take to 2^53 is
//! never moved: [`ErrorKind::CounterNotNumeric`](crate::error::ErrorKind::CounterNotNumeric) shows the value it
//! holds. A counter document without `seq`, or an Int64 beyond 2^53, is read and then updated on
//! condition that it still holds what was read (two round trips more). Tasks sharing a
//! [`Sequences`](crate::Sequences) handle (see [sharing](super::sharing)) that need ids at the
//! same moment are served by one `$inc: k` and share the `k` ids out (group commit), so a busy
//! process makes fewer round trips to the hot counter document without ever reserving an id
//! nobody asked for.
//!
//! # optimistic
//!
//! No counters collection, dense ids. The next id is the largest numeric `_id` plus one; if
//! another writer took it first (duplicate key 11000 on `_id`), the loop asks again. Tasks
//! sharing a [`Sequences`](crate::Sequences) handle never collide with each other: tasks waiting
//! together share one maximum query and get distinct candidates, always above those still in
//! flight, so retries happen only against other processes or writers, each one costing a maximum
//! query and an insert.
//!
//! The loop keeps trying while the server answers, within a time budget (`time_budget_ms`,
//! default 10 s, [`DEFAULT_TIME_BUDGET`](crate::Sequence::DEFAULT_TIME_BUDGET);
//! [`.time_budget(d)`](crate::action::Insert::time_budget) per call), and, if you set one, a
//! count (`max_attempts`, or [`.max_attempts(n)`](crate::action::Insert::max_attempts) per call);
//! it fails with [`ErrorKind::RetriesExhausted`](crate::error::ErrorKind::RetriesExhausted) (how long, how many
//! attempts, which bound) only then.
//!
//! A loser waits before its next attempt a random time in a window learned from the race: twice
//! its last attempt's duration times the ids other writers stored between its two last reads (or
//! its losses in a row, up to 8, when none did), at most 500 ms and never past the budget; and
//! its waits never add up to more than its attempts, so that a writer that never waits (the
//! tutorial's loop, a service in another language) cannot starve it. Writers that lost together
//! thus do not come back together, and since every writer reads the same race, they wait alike
//! (fair, where backing off on one's own losses lets the lucky come straight back).
//!
//! Through a bare `mongodb::Database`, the `insert`s of one process also take turns per sequence
//! and scope, one attempt (maximum read and insert) at a time, first come first served (waiting
//! at most half the remaining budget for a turn): they no longer race each other, only other
//! processes (an `insert_many`'s rounds take no turn: they race, spread by the same learned
//! wait).
//!
//! After a taken id, the maximum is read above it (`{_id: {$gt: taken}}`, one index entry as
//! well), so a lagging read or a wrong sort costs one lost attempt, not one per id. A duplicate
//! on any other unique index is returned at once, never retried; every other error is returned.
//! Non-numeric `_id`s (strings, ObjectIds, which sort after numbers) are ignored; Int32, Int64,
//! Double and Decimal128 ids all count (3.5 counts as 3). The maximum is found with an unfiltered
//! `sort({_id: -1}).limit(1)` (one index entry), or, once the collection is seen to hold
//! non-numeric ids, with `{_id: {$lte: Infinity}}` sorted the same way, which MongoDB also
//! serves from the `_id` index; both read from the primary, whatever the database's read
//! preference.
//!
//! Candidates also stay above every id this process stored or found taken, so the loop makes
//! progress even if the maximum it reads lags behind the writes that beat it or is wrong (a
//! lagging member after a failover, a server whose `_id` order is not MongoDB's): within one
//! call, on every path (handle, bare database, transaction, `insert_many`), no id it saw taken is
//! ever tried again, and a maximum that goes backwards between two reads is logged as a warning,
//! once per process and sequence.
//!
//! Choose it when you want no extra collection and no gaps, and inserts of one collection come
//! mostly from one process: between processes every lost race costs an insert and a share of a
//! maximum query (the repository's `BENCHMARKS.md` has the figures).
//!
//! ```no_run
//! # use seqid::Document;
//! # use serde::{Deserialize, Serialize};
//! #[derive(Serialize, Deserialize, Document)]
//! #[seq_id("ticket", collection = "tickets", strategy = "optimistic", time_budget_ms = 2000)]
//! struct Ticket {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     title: String,
//! }
//!
//! # async fn run(db: mongodb::Database) -> Result<(), seqid::Error> {
//! let mut ticket = Ticket { id: 0, title: "Launch".into() };
//! // At most 3 inserts, and at most 2 s (the type's budget), whichever ends first.
//! ticket.insert(&db).max_attempts(3).await?;
//! # Ok(()) }
//! ```
//!
//! # block
//!
//! Reserve `block_size` ids with one `$inc` and hand them out in memory (pooled semantics:
//! `$inc: N` returning `hi` owns `hi - N + 1 ..= hi`, so block writers and plain `$inc: 1`
//! writers share one counter without collision; hi/lo schemes would collide). There is one live
//! block per (database, counters collection, sequence) in a [`Sequences`](crate::Sequences)
//! handle, shared by all the tasks using it; taking an id from it is a short critical section,
//! and its lock is never held across a database call. Once less than half of it is left, the
//! handle reserves the next block in a task of its own, while callers go on taking from the live
//! one: the caller who would have found it spent, and waited two round trips, waits none, and
//! tasks that outrun the refill wait for that one reservation (no thundering herd of `$inc`s, no
//! wasted blocks). `insert_many` takes the rest of the block and then whole blocks in one round
//! trip (one more when the rest would be below the mark). Through a bare `mongodb::Database`
//! nothing is kept between calls, so nothing is reserved ahead.
//!
//! Ids are unique, increasing within a process (except that ids reserved for a caller that was
//! cancelled before it received them are handed out next, so they cost no gap), but not ordered
//! across processes; a restart loses what the process held: the rest of the live block and the
//! next one reserved early, a gap of at most `2 × block_size - 1` ids; and so does a block
//! released after it went unused (see [sharing](super::sharing)). A sequence whose gaps are
//! counted can turn the early refill off with `prefetch = false` (`.prefetch(false)` by name):
//! a block is then reserved when the last is spent, its caller waits for that round trip, and a
//! restart loses at most `block_size - 1` ids.
//!
//! ```
//! use seqid::{Document, Model, Strategy};
//! # use serde::Serialize;
//! #[derive(Serialize, Document)]
//! #[seq_id("voucher", strategy = "block", block_size = 50, prefetch = false)]
//! struct Voucher {
//!     #[serde(rename = "_id")]
//!     id: i64,
//! }
//! assert!(matches!(
//!     Voucher::SEQUENCE.strategy,
//!     Strategy::Block { block_size: 50, prefetch: false, .. }
//! ));
//! ```
//!
//! # gapless
//!
//! For numbering that law or an auditor wants without holes: invoices, receipts, legal register
//! entries. The counter's `$inc` joins the caller's transaction, so an aborted transaction rolls
//! the counter back with the document: committed ids are 1, 2, 3, … with no gap, ever (the test
//! runs 16 tasks and two other processes, each insert in its own transaction, some aborting on
//! purpose, and finds exactly `1..=N`). The cost is one writer at a time per sequence: the counter
//! is held from its `$inc` until the transaction commits. Within one process, transactions take
//! it in turn, whatever [`Sequences`](crate::Sequences) handle or bare `mongodb::Database` they
//! come through (one line per counter for the whole process), first come first served, each
//! waiting until the one before it shows committed (its counter read outside any transaction),
//! so they do not conflict. Two deployments whose database, counters collection and counter are
//! named alike share that line (the driver cannot tell them apart), which costs them order only:
//! the one in line reads the holder's counter in the holder's deployment, so it neither goes
//! before that commit nor waits past it. A transaction's first read fixes its snapshot, so a
//! turn must come before it: `number_draft` (which reads the draft) and `find_or_insert`
//! (which looks the key up) take the counter's turn before their first read in the
//! transaction (a scoped draft is read once outside the transaction to learn its scope's
//! counter), and `number_drafts` of an unscoped sequence too. The turns cannot spare a
//! transaction that read on its own before its gapless call and then waited: its snapshot is
//! older than the commit it waited for, and its `$inc` conflicts all the same; call seqid
//! first in such a transaction. Between processes, concurrent transactions conflict on the
//! counter document (`WriteConflict`, labelled `TransientTransactionError`), and
//! [`Transaction`](crate::action::Transaction) runs the loser again. Throughput is one
//! transaction's length per id, and with `n` writers each waits about `n` such lengths (16
//! tasks of one process: no re-run, p99 about 60 ms against 1.2 s without the turns, through
//! one handle, two handles of two clients or bare databases alike, inserts and drafts alike;
//! `BENCHMARKS.md`). A holder that never shows its id (its transaction aborted after the
//! insert, or busy long after it) is waited for at most eight times the usual hold, between
//! 20 ms and 2 s; then the next goes on, and at worst conflicts. An insert
//! outside a transaction is refused before anything is written
//! ([`ErrorKind::TransactionRequired`](crate::error::ErrorKind::TransactionRequired)). Choose it only when gaps
//! are not allowed; `counters` is the same layout without the wait. [Transactions and write
//! concern](super::transactions) shows the transaction.
//!
//! # When the database is far
//!
//! Over loopback a round trip costs a fraction of a millisecond; a service in a cloud region
//! waits 1–2 ms for its database, one across regions 20 ms or more. There the round trips of a
//! call decide its time. The chart runs every strategy beside a plain `insert_one`, the
//! tutorial's two calls by hand and the Go post's block of 25 by hand, through a proxy that adds
//! 0, 1, 5 or 20 ms to each round trip, at 1 to 256 tasks, with the driver's default pool of 10
//! connections (nx-27017; `BENCHMARKS.md`, *Across a slow network*, has every figure and the
//! tails):
//!
//! - **block** costs what a plain insert costs, at every distance and task count (0.98–1.03 ×
//!   `insert_one` at 5 and 20 ms): its one round trip is the insert. With the next block
//!   reserved early, its tail is the insert's too: at 5 ms and 1 task, p99.9 of 20 ms against the
//!   plain insert's 23, and 35 ms with `prefetch = false`, whose every hundredth insert waits for
//!   the reservation.
//! - **counters** and **optimistic** take two round trips per insert: half a plain insert's rate
//!   at one task, whatever the distance. What the calls that wait together buy is one `$inc` for
//!   all of them, so that with many tasks the pool's connections bound the rate rather than the
//!   round trips: counters inserts reach 0.89 × a plain insert at 64 tasks and 5 ms (1.88 × the
//!   tutorial's two calls) and 0.97 × at 256. With a few tasks there is little to share, and a
//!   counter has one reservation in flight at a time: a caller that comes while one is out waits
//!   for it and then for its own, so at 4 tasks and 5 ms counters inserts run at 0.76 × the
//!   tutorial.
//! - **numbers on their own**: `.block(25).next()` equals the Go post by hand at 1 and 16 tasks
//!   (0.95–0.99 ×) and doubles it at 64, where the post holds its lock across the refill;
//!   `next()` (counters) takes every waiting caller's number in one round trip, 3.6 × the
//!   tutorial by hand at 64 tasks and 13 × at 256. The tutorial is bounded by its pool (10 numbers
//!   a round trip), the shared `$inc` by the tasks (one number each a round trip), so at 64 tasks
//!   the ratio cannot pass 6.4; at 4 tasks it is 0.5, the turns above.
//! - **gapless** is a transaction of three round trips per id, one transaction at a time per
//!   sequence in a process: its rate is one id per transaction whatever the tasks, about 30 ids
//!   per second at 5 ms on a replica set.
//!
//! So, far from the database: **block**, where gaps and an order across processes do not
//! matter, is the one strategy at a plain insert's speed; **counters** where every id should be
//! used and the tasks are many; **optimistic** only with few writers (two round trips, and a
//! race lost costs another); **gapless** only where the law asks for it, sized by its one
//! transaction per id.
//!
#![doc = include_str!("../../docs/latency.svg")]
//!
//! *Calls per second against tasks, a panel per added round trip: inserts above, numbers on
//! their own below (medians of three rounds, commit f8b379d).*
