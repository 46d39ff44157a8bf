//! A MongoDB-compatible server for seqid's tests, examples and benchmarks.
//!
//! Everything here talks to a real server over TCP through the real `mongodb`
//! driver; nothing is mocked. The server is found in this order:
//!
//! 1. **`MONGODB_URI`**, when set and not empty: your own MongoDB, used as is.
//!    Tests create uniquely named databases there and drop them again.
//! 2. **`mongod` on `PATH`**: started on a free loopback port
//!    (`--bind_ip 127.0.0.1`) with a temporary `--dbpath` that is removed
//!    afterwards.
//! 3. **[SecantusDB]** 0.7.0b3 (the default), a MongoDB-compatible server on
//!    WiredTiger (PyPI, GPL-2.0, so only ever run as a separate process,
//!    never linked): installed on first use with `python3 -m pip` into
//!    `<workspace>/target/seqid-harness/secantusdb-0.7.0b3` (versions pinned
//!    in `seqid-harness/python/secantusdb-requirements.txt`), then started on
//!    a free loopback port with in-memory storage (`--storage-path :memory:`)
//!    and test commands (`configureFailPoint`) enabled. It presents itself as
//!    a single-node replica set, so sessions and transactions work; the URI
//!    keeps `directConnection=true`.
//!
//! `SEQID_TEST_SERVER` chooses among the local servers: `secantus` requires
//! SecantusDB and `nx` requires **[nx-27017]** 0.8.1 (a MongoDB wire-protocol
//! server backed by SQLite, PyPI, MIT; installed like SecantusDB into
//! `<workspace>/target/seqid-harness/nx-27017-0.8.1` from
//! `seqid-harness/python/nx-27017-requirements.txt`, started with in-memory
//! databases); both skip step 2. `mongod` requires step 2; `auto` or unset
//! means the order above. [`server_flavor`] tells which one a process uses.
//! `SEQID_NX_VERBOSE=1` keeps nx-27017's per-command log lines (two per
//! command; off by default so that long benchmarks do not fill the log and the
//! log tail shown on failure holds the warnings and errors). The log lives in a
//! temporary directory that is removed when the server stops.
//! `SEQID_HARNESS_DEBUG=1` prints which local server was started and how long
//! that took.
//!
//! A local server is started lazily, once per OS process, the first time one
//! is asked for, and is shared by everything in that process. It is stopped
//! when the process exits, however it exits (normally, by panic, abort or
//! `SIGKILL`): a small Python watchdog (`python/watchdog.py`) starts the
//! server and stops it, and removes its temporary files, as soon as the pipe
//! to its standard input is closed, which the kernel does when this process
//! dies. Local servers therefore all need `python3`.
//!
//! Fault tests get a server of their own, which they may crash and restart
//! without disturbing other tests: [`RestartableServer`] (SecantusDB, with
//! its data in a temporary directory that survives the crash).
//!
//! Tests that start worker processes should pass them
//! `MONGODB_URI=`[`server_uri()`] so that they reuse this process's server.
//!
//! If no server can be had, every function here fails with a [`HarnessError`]
//! whose message explains what to do; [`test_db`](test_db()) panics with it. Tests never
//! skip silently.
//!
//! ```no_run
//! use mongodb::bson::doc;
//!
//! #[tokio::test]
//! async fn round_trip() {
//!     let db = seqid_harness::test_db("round_trip").await;
//!     let coll = db.collection::<mongodb::bson::Document>("things");
//!     coll.insert_one(doc! { "_id": 1 }).await.unwrap();
//!     assert!(coll.find_one(doc! { "_id": 1 }).await.unwrap().is_some());
//! } // the database is dropped here
//! ```
//!
//! Other tools that keep auto-increment counters in MongoDB (MongoEngine,
//! mongoose-sequence, mongoose-auto-increment, @typegoose/auto-increment), for
//! the tests that share counters with them, are installed on first use in the
//! same way, with pip and npm, and run in processes of their own: see [`Tool`].
//!
//! [SecantusDB]: https://pypi.org/project/secantusdb/
//! [nx-27017]: https://pypi.org/project/nx-27017/

#![warn(missing_docs)]

mod commands;
mod error;
mod find;
mod install;
mod mongod;
mod nx;
mod pip;
mod probe;
mod proxy;
mod restartable;
mod runtime;
mod secantus;
mod start;
mod test_db;
mod tools;
mod util;
mod watchdog;

use std::sync::OnceLock;
use std::thread;

use mongodb::options::ClientOptions;
use mongodb::{Client, Database};

pub use commands::CommandCounter;
pub use error::HarnessError;
pub use find::ServerFlavor;
pub use nx::NX_VERSION;
pub use proxy::{Fault, FaultProxy, server_addr};
pub use restartable::RestartableServer;
pub use secantus::SECANTUS_VERSION;
pub use test_db::{TestDb, test_db, test_db_with};
pub use tools::Tool;

use watchdog::Watchdog;

/// The python interpreter used for pip, the watchdog, SecantusDB, nx-27017
/// and MongoEngine.
const PYTHON: &str = "python3";

// ---------------------------------------------------------------------------
// The per-process server

struct Server {
    /// Connection string for clients (and for worker processes' MONGODB_URI).
    uri: String,
    /// Human-readable description, see [`server_kind`].
    kind: String,
    /// Which kind of server it is, see [`server_flavor`].
    flavor: ServerFlavor,
    /// For local servers: the watchdog; its stdin is never closed by us.
    _watchdog: Option<Watchdog>,
}

static SERVER: OnceLock<Result<Server, HarnessError>> = OnceLock::new();

fn server() -> Result<&'static Server, HarnessError> {
    SERVER
        .get_or_init(|| {
            // Startup pings through the async driver on its own runtime; a
            // separate thread keeps that legal when we are called from async code.
            thread::scope(|s| s.spawn(find::find_server).join()).unwrap_or_else(|_| {
                Err(HarnessError::other(
                    "seqid-harness: starting the test server panicked",
                ))
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The connection string of this process's server, starting it on first use.
///
/// This blocks while a local server is installed and started (typically well
/// under a second for SecantusDB and nx-27017, plus the pip install on first
/// use ever). The result, success or failure, is cached for the life of the
/// process. Pass the URI to worker processes as `MONGODB_URI` so that they
/// use the same server.
///
/// ```no_run
/// let uri = seqid_harness::server_uri()?;
/// let status = std::process::Command::new("target/debug/seqid-worker")
///     .env("MONGODB_URI", &uri)
///     .status()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn server_uri() -> Result<String, HarnessError> {
    server().map(|s| s.uri.clone())
}

/// Which server is used, e.g. `"SecantusDB 0.7.0b3 on 127.0.0.1:40123"`,
/// starting it on first use. Meant for printing, e.g. at the top of benchmark output; the
/// hosts of a `MONGODB_URI` are shown, never its credentials.
///
/// ```no_run
/// println!("server: {}", seqid_harness::server_kind()?);
/// # Ok::<(), seqid_harness::HarnessError>(())
/// ```
pub fn server_kind() -> Result<String, HarnessError> {
    server().map(|s| s.kind.clone())
}

/// Which kind of server this process uses, starting it on first use.
///
/// For tests that must document a server-specific workaround; see
/// [`ServerFlavor`].
///
/// ```no_run
/// use seqid_harness::ServerFlavor;
///
/// match seqid_harness::server_flavor()? {
///     ServerFlavor::Secantus => println!("SecantusDB {}", seqid_harness::SECANTUS_VERSION),
///     ServerFlavor::Nx => println!("nx-27017 {}", seqid_harness::NX_VERSION),
///     other => println!("{other:?}"),
/// }
/// # Ok::<(), seqid_harness::HarnessError>(())
/// ```
pub fn server_flavor() -> Result<ServerFlavor, HarnessError> {
    server().map(|s| s.flavor)
}

/// A new [`Client`] of this process's server, starting the server on first use.
///
/// Every call returns a fresh client, bound to nothing: use it in the tokio
/// runtime that is current when you call this (each `#[tokio::test]` has its
/// own runtime, and a client must not outlive the runtime it was used in).
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let client = seqid_harness::client().await?;
/// let names = client.list_database_names().await?;
/// # Ok(()) }
/// ```
pub async fn client() -> Result<Client, HarnessError> {
    client_with(|_| {}).await
}

/// Like [`client`], but lets `configure` adjust the [`ClientOptions`] first,
/// e.g. to attach a command event handler such as [`CommandCounter::handler`].
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let counter = seqid_harness::CommandCounter::new();
/// let client = seqid_harness::client_with(|o| {
///     o.command_event_handler = Some(counter.handler());
///     o.app_name = Some("my-test".into());
/// })
/// .await?;
/// # Ok(()) }
/// ```
pub async fn client_with(
    configure: impl FnOnce(&mut ClientOptions),
) -> Result<Client, HarnessError> {
    let uri = server_uri_nonblocking().await?;
    let mut options = ClientOptions::parse(&uri)
        .await
        .map_err(|e| HarnessError::other(format!("seqid-harness: bad server URI: {e}")))?;
    configure(&mut options);
    Client::with_options(options)
        .map_err(|e| HarnessError::other(format!("seqid-harness: cannot create a client: {e}")))
}

/// [`server_uri`] without blocking a runtime worker while the server starts.
async fn server_uri_nonblocking() -> Result<String, HarnessError> {
    if SERVER.get().is_some() || tokio::runtime::Handle::try_current().is_err() {
        return server_uri();
    }
    match tokio::task::spawn_blocking(server_uri).await {
        Ok(result) => result,
        Err(_) => server_uri(),
    }
}

/// Drops the database `name` and returns it, empty, on a fresh [`Client`].
/// For examples and benchmarks, which want a fixed, recognizable name.
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let db = seqid_harness::fresh_database("seqid_bench").await?;
/// println!("server: {}", seqid_harness::server_kind()?);
/// # Ok(()) }
/// ```
pub async fn fresh_database(name: &str) -> Result<Database, HarnessError> {
    emptied(&client().await?, name).await
}

/// Drops the database `name` through `client` and returns it, now empty.
async fn emptied(client: &Client, name: &str) -> Result<Database, HarnessError> {
    let db = client.database(name);
    db.drop().await.map_err(|e| {
        HarnessError::other(format!(
            "seqid-harness: cannot drop database {name:?} on {}: {e}",
            server_kind().unwrap_or_default()
        ))
    })?;
    Ok(db)
}
