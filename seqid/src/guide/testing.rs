//! Testing your app: a server for your program in one command, and throwaway servers for your
//! integration tests, from the harness seqid's own tests run on (crate `seqid-harness`, in the
//! repository).
//!
//! What a fresh machine needs: the Rust toolchain, a clone of seqid, and `python3` (3.10 or
//! newer, with pip, and access to PyPI the first time): the servers are Python programs,
//! installed on first use, once per user. Three things are slow the first time only: installing
//! `seqid-server`, its first start, and your first `cargo test`; [what the first runs
//! cost](#what-the-first-runs-cost) gives the figures, and how to shorten them.
//!
//! # A server for your program
//!
//! One command, from the clone:
//!
//! ```sh
//! cargo run -p seqid-harness --bin seqid-server
//! ```
//!
//! or install it once (into `~/.cargo/bin`; a release build, 8 minutes here: see
//! [below](#what-the-first-runs-cost)) and run it from anywhere:
//!
//! ```sh
//! cargo install --path <clone>/seqid-harness
//! seqid-server
//! ```
//!
//! ```text
//! SecantusDB 0.7.0b3 on 127.0.0.1:27017 (data in memory, gone when it stops)
//! MONGODB_URI=mongodb://127.0.0.1:27017
//! seqid-server: ready after 0.5 s; Ctrl-C stops it
//! ```
//!
//! It listens on port 27017, so a program whose default is `mongodb://localhost:27017` (the
//! [front page](crate)'s, the driver's examples') reaches it as it is; or `export` the printed
//! line and read `MONGODB_URI`. No `directConnection` is needed: SecantusDB presents itself as a
//! one-member replica set whose member is the address printed, which the driver's discovery
//! reaches, so sessions and transactions work. It runs until Ctrl-C (or `SIGTERM`), then stops
//! the server; if `seqid-server` is killed, the server stops all the same.
//!
//! - `--port N` listens on another port, `--port 0` on any free one (the URI says which); a
//!   port in use is refused, naming it (another MongoDB is running there).
//! - `--data DIR` keeps the data in `DIR` (created if missing) across runs, instead of in
//!   memory.
//! - `SEQID_TEST_SERVER=nx seqid-server` starts nx-27017 instead of SecantusDB; with a `mongod`
//!   on `PATH`, that is started instead (see below). `--help` says the rest.
//!
//! # Your integration tests
//!
//! The harness is not on crates.io: add it by path, as a dev-dependency of your crate:
//!
//! ```toml
//! [dev-dependencies]
//! seqid-harness = { path = "<clone>/seqid-harness" }
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! ```
//!
//! Then a test gets a fresh database in one line, `seqid_harness::test_db(label)`, and uses it
//! as your program uses its own (here through a [`Sequences`](crate::Sequences) handle, as in
//! [sharing state](super::sharing)):
//!
//! ```no_run
//! use seqid::Document;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, Serialize, Deserialize, Document)]
//! #[seq_id("userid", collection = "users")]
//! struct User {
//!     #[serde(rename = "_id")]
//!     id: i64,
//!     name: String,
//! }
//!
//! #[tokio::test]
//! async fn users_are_numbered_from_one() {
//!     let db = seqid_harness::test_db("users").await; // a database of this test's own
//!     let sequences = seqid::Sequences::new(db.client());
//!     let app = sequences.database(db.name());
//!
//!     let mut ada = User { id: 0, name: "Ada".into() };
//!     assert_eq!(ada.insert(&app).await.unwrap(), 1);
//!     let found = User::sequence().find(&app, 1).await.unwrap();
//!     assert_eq!(found.unwrap().name, "Ada");
//! } // the database is dropped here
//! ```
//!
//! `test_db` returns a `seqid_harness::TestDb`. It derefs to the test's `mongodb::Database`,
//! and holds the client it was made with (`db.client()`), the database's name (`db.name()`:
//! the label, the process id and a counter) and the URI of its server (`db.uri()`); while it
//! lives, that server keeps running. Dropping it, at the end of the test or when the test
//! panics, drops the database, through a client of its own (the test's runtime may be shutting
//! down); a failure is printed on stderr, never a panic.
//!
//! The first `test_db` of a test process starts a server, and the tests of that process share
//! it, each in a database of its own; after every few dozen databases the next ones go on a
//! fresh server, since an embedded server slows down as it fills. A program started by the test
//! (a worker, your own binary) reaches the same database with `MONGODB_URI` set to `db.uri()`
//! and the database name `db.name()`. When no server can be had, `test_db` panics with what to
//! do: a test never skips silently.
//!
//! # A server per test
//!
//! A test that wants a server to itself (server-wide state such as failpoints, or a server it
//! may lose) starts one; it is stopped when dropped, and starting takes about half a second:
//!
//! ```no_run
//! # use seqid::Document;
//! # #[derive(serde::Serialize, serde::Deserialize, Document)]
//! # #[seq_id("userid", collection = "users")]
//! # struct User { #[serde(rename = "_id")] id: i64, name: String }
//! use seqid_harness::TestServer;
//!
//! #[tokio::test]
//! async fn on_a_server_of_its_own() {
//!     let server = TestServer::start().await.unwrap();
//!     let client = server.client().await.unwrap(); // or server.uri(), or server.test_db("x")
//!     let app = seqid::Sequences::new(&client).database("app");
//!     let mut ada = User { id: 0, name: "Ada".into() };
//!     ada.insert(&app).await.unwrap();
//! } // the server stops here
//! ```
//!
//! `TestServer::builder().port(27017).data_dir("data").start()` starts one on a port of your
//! choice, with its data kept in a directory, as `seqid-server` does. When `MONGODB_URI` is set,
//! `TestServer::start()` gives that server instead (and stops nothing when dropped).
//!
//! # What the first runs cost
//!
//! Each is paid once. Measured on a 2-core machine with other builds running on it (fewer
//! seconds on more cores, or on an idle machine):
//!
//! - **`cargo install --path <clone>/seqid-harness`** is a release build of the harness, the
//!   driver and tokio: 8 min 11 s here, with nothing on screen but cargo's `Compiling` lines.
//!   `cargo run -p seqid-harness --bin seqid-server` from the clone builds in debug instead:
//!   3 min 40 s the first time, nothing after; the debug binary starts the server as fast (1.2 s
//!   to ready here, as the installed one), since the server is a Python process.
//! - **The first server start** installs SecantusDB with pip into the cache (120 MB), saying
//!   `seqid-harness: installing secantusdb 0.7.0b3 into ... (first use)`: 16.7 s here from
//!   launch to ready, PyPI's downloads included. Later starts, from any clone, program or test
//!   process, take about 1 s (0.8 to 1.2 s here). In CI, keep the cache directory
//!   (`SEQID_HARNESS_CACHE`, else `~/.cache/seqid-harness`) between runs; a `mongod` on `PATH`
//!   is used as it is, installing nothing.
//! - **Your first `cargo test`** after `cargo build` compiles the harness (with signal-hook, its
//!   one dependency of its own) and your tests, and nothing else: 24 s here, after a `cargo
//!   build` of 3 to 5 min. The harness asks tokio and the driver for no feature that your
//!   program's build lacks (given the driver's default features, and tokio's `macros` and
//!   `rt-multi-thread`, as above), so the tests reuse the tokio, driver and seqid that `cargo
//!   build` compiled. A dev-dependency that adds a feature to one of them (tokio's `test-util`,
//!   say) makes `cargo test` compile tokio, the driver and seqid a second time: 75 s here for
//!   one more tokio feature.
//!
//! # Which server, and what is installed where
//!
//! The tests, and `seqid-server`, take the first of:
//!
//! 1. `MONGODB_URI`, when set: your own MongoDB (the tests create and drop their databases
//!    there; `seqid-server` ignores it and starts a server anyway);
//! 2. a `mongod` on `PATH`, started on a free port with a temporary `--dbpath`;
//! 3. [SecantusDB](https://pypi.org/project/secantusdb/) 0.7.0b3, the default, or
//!    [nx-27017](https://pypi.org/project/nx-27017/) 0.8.1 with `SEQID_TEST_SERVER=nx`, installed
//!    on first use with `python3 -m pip`, at versions pinned in the harness, and started in
//!    memory.
//!
//! They are installed once per user, shared by every clone and every program, into
//! `$SEQID_HARNESS_CACHE` if set, else the user's cache directory: `~/.cache/seqid-harness` on
//! Linux (`$XDG_CACHE_HOME/seqid-harness` if set), `~/Library/Caches/seqid-harness` on macOS,
//! `%LOCALAPPDATA%\seqid-harness` on Windows (`seqid_harness::cache_dir()` says where), one
//! directory per pinned version; nothing is written into the clone, which may be read-only.
//! Delete the directory to uninstall. A running server keeps its files in a temporary
//! directory; a small Python watchdog stops the server and removes them when the process that
//! started it exits, however it exits (panic, abort, `SIGKILL`).
//!
//! # They are not MongoDB
//!
//! SecantusDB and nx-27017 speak MongoDB's wire protocol, and seqid's tests pass on both, but
//! neither is MongoDB, and each differs from it in ways [the test server](super::test_server)
//! lists (SecantusDB loses writes acknowledged without `journal: true` when it is killed, and
//! slows down as it fills; nx-27017 sorts `_id` as text and ignores `$setOnInsert`, among
//! others). Use them for fast, throwaway tests, and run the same tests against the MongoDB you
//! deploy on before you rely on a behaviour: `MONGODB_URI=mongodb://... cargo test`.
//! SecantusDB is GPL-2.0: it runs as a separate process, installed on your machine, and is
//! never linked into your program.
