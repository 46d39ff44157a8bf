//! The test server: how the repository's tests, examples and benchmark reach a server, and
//! where those servers differ from MongoDB.
//!
//! Two commands work on a fresh clone of the repository with the Rust toolchain, `python3` (3.10
//! or newer, with pip) and Node.js (20.19 or newer, with npm 7 or newer):
//!
//! ```sh
//! cargo run --example quickstart   # the MongoDB tutorial, with seqid
//! cargo test --workspace           # every feature, against a real server process
//! ```
//!
//! The quickstart needs `python3` alone (for the server, unless `MONGODB_URI` or a `mongod` on
//! `PATH` gives one: see below); `node` and `npm` run the other tools
//! whose counters the tests share (below).
//!
//! # Two suites
//!
//! `cargo test --workspace` runs the **default suite**: every feature at least once (each
//! strategy, scopes, several sequences, display codes, every layout beside its tool, the
//! processes, cancellation, a lost reply and a restart, the derive's compile errors, the
//! doc tests), in a few minutes on a 2-core machine from a fresh clone, build and the servers'
//! installs included ([the figures](super::benchmarks)). The **full suite** adds the tests
//! marked `#[ignore = "full suite"]`, each of which takes from a few seconds to a minute: the
//! fault suite's matrices and kills, every multi-process run, the cancellation storms, the runs
//! beside the tutorial's loop and the tools' long runs; and it runs everything on nx-27017 as
//! well. `.ci/run`, the continuous integration's entry point, is the full suite: after
//! `cargo fmt`, `cargo clippy`, the docs and the packages, it runs the README's
//! `cargo test --workspace`, then the long tests with cargo-nextest
//! (`cargo install cargo-nextest --locked`), each in a process and with a server of its own, four
//! at a time, the longest first (`.config/nextest.toml`), then every test on nx-27017; it prints
//! when each step starts. One long test by hand: `cargo test --test it -- --ignored
//! faults::a_killed_and_restarted_server_loses_nothing_counters`.
//!
//! In one process, as `cargo test` runs a test crate, the tests share the harness's server,
//! each in a database of its own; after every 24 test databases
//! (`seqid_harness::DATABASES_PER_SERVER`) the next ones go on a fresh server, and a fresh
//! one replaced stops once its last test is done. One SecantusDB
//! serving the whole integration crate slowed down for good: it keeps a record of every
//! retryable write for 30 minutes, scans them all on each write and sorts them all once there
//! are 10,000, and the README's command took over 20 minutes, or stalled.
//!
//! # Which server
//!
//! Tests, examples and the benchmark reach a real server process over TCP with the real driver,
//! found in this order (crate `seqid-harness`):
//!
//! 1. `MONGODB_URI` (a real MongoDB 6–8); tests create and drop their own databases;
//! 2. `mongod` on `PATH`, started on a free port with a temporary `--dbpath`;
//! 3. [SecantusDB](https://pypi.org/project/secantusdb/) 0.7.0b3 from PyPI (the default), a
//!    MongoDB-compatible server on WiredTiger, installed on first use with `python3 -m pip` into
//!    the user-level cache, `~/.cache/seqid-harness/` on Linux (`SEQID_HARNESS_CACHE` moves it;
//!    see [what is installed where](super::testing#which-server-and-what-is-installed-where)),
//!    pinned with its dependencies in `seqid-harness/python/secantusdb-requirements.txt`, and
//!    started with in-memory storage. It is GPL-2.0, so it is only ever run as a separate
//!    process, installed at test time, never linked.
//!
//! `SEQID_TEST_SERVER` chooses: `secantus` requires SecantusDB, `nx` requires
//! [nx-27017](https://pypi.org/project/nx-27017/) 0.8.1 (a MongoDB wire-protocol server backed by
//! SQLite, installed the same way from `seqid-harness/python/nx-27017-requirements.txt`,
//! in-memory), both skipping step 2; `mongod` requires step 2; `auto` or unset means the order
//! above. A local server is stopped when the process that started it exits, however it exits. If
//! no server can be had, tests fail with a message saying what to do; they never skip. Fault
//! tests get a SecantusDB of their own that they can kill (`SIGKILL`) and restart on the same
//! port and data directory (`seqid_harness::RestartableServer`). `.ci/run` runs the whole suite
//! on SecantusDB and then on nx-27017 (the compile-time cases, which touch no server, once).
//! `SEQID_TEST_AS_MONGOS=1` puts a proxy in front of every test server that presents it as a
//! mongos (its `hello` answers `msg: "isdbgrid"`; `config.collections` is the proxy's, empty):
//! `.ci/run` runs the integration crate's default tests so on both servers, and
//! `tests/it/sharding.rs` sets `config.collections` entries on a proxy of its own (see
//! [sharded clusters](super::sharded_clusters#what-was-tested-and-how)).
//!
//! # Other tools
//!
//! The tests that share counters with other tools (`tests/it/other_tools.rs`, see [other tools'
//! counters](super::other_tools)) run those tools for real, in processes of their own, with the
//! scripts in `tests/tools/`: MongoEngine 0.29.3 (`SequenceField`; Python >= 3.11, installed
//! with `python3 -m pip` from `seqid-harness/python/mongoengine-requirements.txt`),
//! mongoose-sequence 6.0.1 (mongoose 8.24.10), mongoose-auto-increment 5.0.1 (mongoose 6.13.11)
//! and @typegoose/auto-increment 5.0.1 (mongoose 9.12.1) (Node.js >= 20.19 and npm >= 7,
//! installed with `npm ci` from `seqid-harness/node/<setup>/`, whose `package.json` and
//! `package-lock.json` pin every version). Each is installed on first use into the user-level
//! cache, as the servers are (`seqid_harness::Tool`); if `python3`, `node` or `npm` is missing,
//! those tests fail saying what to install.
//!
//! # Where the servers differ from MongoDB
//!
//! Neither embedded server is MongoDB, and seqid is written for MongoDB 6–8; where one differs,
//! the tests work around it, with a comment, and the library does not.
//!
//! SecantusDB:
//!
//! - under concurrent use, a `findAndModify` upsert with `new: true` may answer `value: null`
//!   even though it applied the update (MongoDB always returns the document). seqid asks again (a
//!   bounded retry, counted in [`Stats::retries`](crate::Stats::retries)), so the value that
//!   upsert took is a gap; the tests that check a counter hands out exactly `1..=n` allow, on
//!   SecantusDB only, as many gaps as there were counter retries (`tests/it/support/mod.rs`,
//!   `assert_dense`), and the test's hand-written tutorial writer asks again too;
//! - `sort({_id: -1}).limit(1)` is a collection scan and an in-memory sort (its `explain` shows
//!   `COLLSCAN` under `SORT`), not one index entry, so the optimistic strategy's maximum query
//!   costs more as the collection grows, most for a bare database's inserts, which read the
//!   maximum at every insert (a handle reads it for every insert too, but its callers waiting
//!   at once share one read); on MongoDB the query reads one entry of the `_id` index whatever
//!   the collection's size (`BENCHMARKS.md`, *A bare optimistic insert, step by step*);
//! - it slows down as data accumulates;
//! - its `commitTransaction` ignores `j: true`: a commit it acknowledged can be lost if the
//!   server process is killed, and after a restart it has forgotten committed transactions, so
//!   that a commit retried across it is answered `NoSuchTransaction`, labelled transient, and
//!   `Transaction` (as the driver's `and_run`) runs the body again although the first run
//!   committed (the storm test, `tests/it/gapless_storm.rs`, syncs the server to disk before its kill, and counts such
//!   runs as of unknown outcome);
//! - it deadlocks (neither command ever answers) when a `create` of a new collection and an
//!   `insert` that creates the same collection run at the same time, as mongoose's `autoCreate`
//!   and the first counter insert of mongoose-auto-increment or @typegoose/auto-increment do;
//!   their tests create `identitycounters` first, on SecantusDB only;
//! - a write acknowledged with the default write concern (`w: 1`), or even with
//!   `w: "majority"`, is not yet in its journal file and is lost if the server process is killed
//!   (`SIGKILL`); only `journal: true` writes survive a crash (on a single-node MongoDB replica
//!   set, `w: "majority"` implies the journal);
//! - it answers a retried `insert_many` batch that met a duplicate key with that duplicate key,
//!   against the first attempt's own copy, and after a restart it has forgotten the records of
//!   the writes before it, so that it runs any retried write again, which then meets its own
//!   first copy (see [the risk that remains](super::guarantees#the-risk-that-remains));
//! - it resolves an array path in an expression (`"$lines.no"`) to null, where MongoDB gives
//!   the array of the values; an append of items reads the largest stored number with `$map`
//!   over the array instead, which both servers read alike;
//! - it presents itself as a single-node replica set (`setName: "secantus"`), so sessions,
//!   transactions and `configureFailPoint`/`failCommand` (enabled with `--enable-test-commands`)
//!   work; the harness connects with `directConnection=true`.
//!
//! nx-27017:
//!
//! - it orders an unfiltered sort on `_id` as text (`99` above `100`), so the maximum it reports
//!   is wrong once ids pass 99; the multi-process optimistic test seeds a string `_id`, which
//!   makes seqid use its numeric-bounded query, which nx orders correctly (with the `_id` index,
//!   MongoDB orders both right); that bounded query, which a bare database's optimistic insert
//!   sends from the first (it keeps nothing that would survive a wrong answer), is a scan there,
//!   costing about 2 ms at 500 documents and 8 ms at 1,000 against 0.4 ms for the unbounded one
//!   (`BENCHMARKS.md`, *The optimistic loop's maximum query* and *A bare optimistic insert, step
//!   by step*): a bare optimistic insert costs 3 × a handle's there at one task, 8 × at 16
//!   (1.2 × and 2.6 × on SecantusDB);
//! - it answers a counter upsert that breaks a unique index with no document (and stores the
//!   counter without `seq`) instead of raising E11000; seqid retries that as it retries E11000,
//!   and then reports [`ErrorKind::NoCounter`](crate::error::ErrorKind::NoCounter), which the bounded-retry test
//!   accepts on nx-27017 only;
//! - it begins no transaction on a `find` of a collection that does not exist, and then refuses
//!   the commit ("No session specified", without a code); a gapless insert begins its
//!   transaction with a read of its counter, so the service test makes the counters' collection
//!   first on nx-27017;
//! - it returns small Int64 values as Int32, so tests read integers of either type;
//! - it refuses collection names with a dot (MongoEngine's `mongoengine.counters`), so the
//!   MongoEngine test names its counters collection `mongoengine_counters` there;
//! - it cannot match a field against an embedded document
//!   (`{reference_value: {project: "apollo"}}`: `find` fails, an upsert stores a document without
//!   those fields), so mongoose-sequence's scoped counters cannot work there and its test runs
//!   only the unscoped sequence;
//! - it names a new index itself (`idx_<collection>_<field>_...`), ignoring the name in
//!   `createIndexes`;
//! - it ignores `$setOnInsert`, so a scoped counter seqid makes there by upsert has no `sequence`
//!   and `scope` fields (its `_id` still names the scope; `start` and the other layouts create
//!   counters by insert, with every field);
//! - it refuses an update pipeline (`'list' object has no attribute 'keys'`, with no code),
//!   so that an append of items takes the conditional way there (see [items](super::items));
//!   it stores every element of an array that `$push` writes to as a JSON string (its items,
//!   and the append's recent tokens): the items tests parse them back, and the token that
//!   settles an append cannot be found there; `$ne` on a missing field matches nothing, and
//!   an update whose filter holds `$nin` on a missing field, or an `$or` of a null and a
//!   `$type`, is answered matched and modified and writes nothing;
//! - it applies an update whose filter holds `$type` not to the document matched but to the
//!   row whose place in the collection (SQLite's row id) is that document's integer `_id`,
//!   the same document only where the `_id`s are 1, 2, 3, ... in the order inserted, and
//!   answers it matched and modified: an append to order 1 in a collection whose first
//!   document had a string `_id` was written into that document, and with `_id`s from 1000
//!   into none (probed with pymongo alone); a `$push` onto a field that holds a string is
//!   answered matched and modified, sets the update's other fields and pushes nothing, and one
//!   onto a null field makes it an array (MongoDB refuses both, `BadValue`). The conditional
//!   way's update filter holds none of the operators above, only the `_id` and the mark as
//!   read, and a null where the array was read missing or null (which nx-27017 matches
//!   right), and leaves a field that is no longer an array to the `$push`, which MongoDB
//!   refuses; so on nx-27017 an array another writer makes a string between an append's
//!   read and its update loses that append's items, acknowledged (the test of that race runs
//!   its string case on the other servers only);
//! - its unique indexes take `null` more than once (SQLite's NULLs are all distinct), so two
//!   first uses of a mongoose-sequence counter (`reference_value: null`) can make two counters
//!   there; the test of concurrent first use makes that counter first on nx-27017 (checked).
//!
//! # The repository's layout
//!
//! `seqid/` (runtime: its layers are the folders of `src/`, see
//! [architecture](super::architecture)), `seqid-derive/` (the proc macro, a pipeline of
//! parse, check and expand; `tests/ui.rs`, the trybuild suite of what it refuses),
//! `seqid-harness/` (the test server,
//! `seqid-server` and the other tools the tests run), `tests/` (`it/`, the integration tests, one crate with a
//! module per concept and `support/`, `derive/` what the derive accepts; `lints.rs`, the
//! derive's code under strict lints; `layers.rs`, the runtime's layers and the derive's
//! pipeline read from the source; `state.rs`, the insert
//! state's size; `bin/worker.rs`, the worker the multi-process tests start; `tools/`, the scripts
//! that other tools run in `it/other_tools.rs`), `examples/` (`quickstart.rs`; `service/`, the
//! [example service](super::service): `main.rs` runs it, `app.rs` is the service, `load.rs` its
//! load generator and the check of what it stored, shared with `tests/it/service.rs` and the
//! benchmark; `bench/`, the [benchmark](super::benchmarks)), `.ci/run` (the full suite, on
//! SecantusDB and on nx-27017, as above).
