//! Benchmarks: what is measured, and how to run it.
//!
//! seqid aims at speed close to a plain insert. The repository's `BENCHMARKS.md` records the
//! runs, where each target stands, and the fault suite's figures; measured numbers live there
//! only (the guide quotes a few, and says so).
//!
//! ```sh
//! cargo run --release --example bench                  # every part
//! cargo run --release --example bench -- --only one     # one part (a list: one,cost)
//! cargo bench -p seqid --bench handout                  # an id from a live block
//! ```
//!
//! `cargo run --release --example bench` prints, for every strategy (and a document with two
//! sequences) at 1, 16 and 64 tasks, inserts per second, round trips per insert (from the
//! driver's command monitoring) and the ratios to a plain `insert_one` and to the hand-written
//! tutorial code, all measured in one run on one server; then bulk inserts, the cost of the
//! optimistic maximum query, and inserts in transactions (`counters` and `gapless` against a
//! plain insert in a transaction). Its parts, one at a time with `--only`:
//!
//! - `--only one` measures one task as users run it (spawned on the multi-thread runtime,
//!   awaited in `main`, on a current-thread runtime; no command monitor), the optimistic
//!   strategy through a handle and through a bare database among its contenders;
//! - `--only cost` the client's own CPU time and heap allocations per insert next to the driver's
//!   `insert_one`;
//! - `--only instructions` the same per insert in instructions, counted by valgrind's callgrind
//!   (repeatable where CPU time is not; needs valgrind);
//! - `--only scopes` the round trips and memory of scoped blocks with 1 to 10,000 scopes;
//! - `--only natural` [find-or-insert](super::find_or_insert): 16 tasks, 10,000 calls over
//!   200 keys, calls per second and ids taken per document stored, next to the same code by
//!   hand and the anchors' upsert with `$setOnInsert`;
//! - `--only drafts` [numbering stored drafts](super::numbering_later): drafts issued per
//!   second by 1 and 16 issuers, counters and gapless, next to a plain `update_one`;
//! - `--only numbers` [numbers on their own](super::numbers): numbers per second from
//!   `db.sequence(name).next()` (counters through a handle and through a bare database,
//!   `.block(25)` and `.block(100)`, `next_n(16)`) at 1, 16 and 64 tasks, next to the
//!   tutorial's `getNextSequence` and the Go post's block of 25 under a mutex, both by hand;
//!   every number taken is checked (none twice, counters dense from 1);
//! - `--only items` [item appends](super::items): `append_<field>` against a plain `$push`
//!   of the same item, 1 and 16 appenders on one document, each trial's document read back
//!   (every item there, the appended ones numbered exactly 1 to n);
//! - `--only first-use` what the check before a missing counter is made costs
//!   ([`ErrorKind::CounterMissing`](crate::error::ErrorKind::CounterMissing)): round trips and latency of a new
//!   scope's first insert, the next, and a fresh handle's, next to the tutorial's upsert by hand;
//! - `--only service` the [example service](super::service) under HTTP load with hang-ups, next
//!   to the same service written with the tutorial's two calls and to the same tickets stored
//!   under an ObjectId and numbered nothing, each round on a server of its own;
//! - `--only cancel` the [cancellation](super::cancellation) storms: inserts cancelled under
//!   load, next to the driver's own `insert_one` run that way;
//! - `--only contention` optimistic writers that do not coordinate: tasks through a bare
//!   `mongodb::Database` or OS processes with a handle each, racing a process that runs the
//!   tutorial's loop by hand without ever waiting;
//! - `--only latency` [the database far away](super::strategies#when-the-database-is-far):
//!   every strategy, the tutorial's two calls and the Go post's block by hand, a plain
//!   `insert_one`, and numbers on their own, through the test harness's proxy with 0, 1, 5 and
//!   20 ms added to each round trip (`--latencies`), at 1 to 256 tasks: calls per second, p50 /
//!   p99 / p99.9, and a chart with a panel per latency (`--latency-chart`).
//!
//! The other parts are `single` (single inserts at 1, 16 and 64 tasks), `ceiling` (the server's
//! ceiling: a trivial command), `bulk`, `maxq` (the optimistic maximum query) and `txn` (inserts
//! in transactions, each committed insert timed: p50, p99, max); `--only` takes a comma-separated list, `--quick` makes a short smoke run,
//! and `--help` lists every option.
//!
//! `cargo bench -p seqid --bench handout` measures handing out an id from a live block. The
//! benchmark finds its server as the tests do (see [the test server](super::test_server)), so
//! its absolute figures depend on that server: both embedded servers are much slower than
//! MongoDB, and on MongoDB every round trip is cheaper and the ratios between strategies can
//! differ.
