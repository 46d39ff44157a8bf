//! A throwaway MongoDB-compatible server for tests: seqid's own tests,
//! examples and benchmarks, and your program's integration tests too; and
//! `seqid-server`, a server for your program in one command.
//!
//! Everything here talks to a real server over TCP through the real `mongodb`
//! driver; nothing is mocked. The servers are installed on first use, once per
//! user ([below](#what-is-installed-where)), and need `python3` (3.10 or newer,
//! with pip) and nothing else.
//!
//! # In your own tests
//!
//! seqid-harness is not published on crates.io: add it by path, from a clone
//! of seqid, as a dev-dependency of your crate:
//!
//! ```toml
//! [dev-dependencies]
//! seqid-harness = { path = "<clone>/seqid-harness" }
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! ```
//!
//! Then a test gets a fresh database in one line, [`test_db`](test_db()): on
//! the process's server, shared by the tests that `cargo test` runs in one
//! process, each in a uniquely named database dropped when the test is done:
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
//! A test that wants a server to itself (a clean server-wide state, its own
//! failpoints) starts a [`TestServer`], stopped when it is dropped; about half
//! a second each:
//!
//! ```no_run
//! #[tokio::test]
//! async fn alone() {
//!     let server = seqid_harness::TestServer::start().await.unwrap();
//!     let db = server.test_db("alone").await; // or server.client(), server.uri()
//! } // the server stops here
//! ```
//!
//! # A server for your program: `seqid-server`
//!
//! ```sh
//! cargo run -p seqid-harness --bin seqid-server       # from a clone of seqid
//! cargo install --path <clone>/seqid-harness          # or once, then:
//! seqid-server                                        # --port N, --data DIR, --help
//! ```
//!
//! starts the server the tests use on `127.0.0.1:27017` (`--port 0`: any free
//! port; a port in use is refused), with its data in memory, or kept in a
//! directory across runs with `--data DIR`, and prints its kind and
//! `MONGODB_URI=mongodb://127.0.0.1:27017`; a program whose default is
//! `mongodb://localhost:27017` reaches it as it is (SecantusDB presents itself
//! as a one-member replica set whose member is that address, so the driver's
//! discovery needs no `directConnection`). It runs until Ctrl-C or `SIGTERM`,
//! then stops the server ([`TestServer::builder`] does the same from code).
//!
//! # Which server
//!
//! The server is found in this order, for the tests and for `seqid-server`
//! (which starts a local server whatever `MONGODB_URI` says):
//!
//! 1. **`MONGODB_URI`**, when set and not empty: your own MongoDB, used as is.
//!    Tests create uniquely named databases there and drop them again.
//! 2. **`mongod` on `PATH`**: started on a free loopback port
//!    (`--bind_ip 127.0.0.1`) with a temporary `--dbpath` that is removed
//!    afterwards.
//! 3. **[SecantusDB]** 0.7.0b3 (the default), a MongoDB-compatible server on
//!    WiredTiger (PyPI, GPL-2.0, so only ever run as a separate process,
//!    never linked): installed on first use with `python3 -m pip` into
//!    `<cache_dir>/secantusdb-0.7.0b3` (versions pinned in this crate's
//!    `python/secantusdb-requirements.txt`), then started on a free loopback
//!    port with in-memory storage (`--storage-path :memory:`) and test
//!    commands (`configureFailPoint`) enabled. It presents itself as a
//!    single-node replica set, so sessions and transactions work; the
//!    harness's URIs keep `directConnection=true`.
//!
//! `SEQID_TEST_SERVER` chooses among the local servers: `secantus` requires
//! SecantusDB and `nx` requires **[nx-27017]** 0.8.1 (a MongoDB wire-protocol
//! server backed by SQLite, PyPI, MIT; installed like SecantusDB into
//! `<cache_dir>/nx-27017-0.8.1` from `python/nx-27017-requirements.txt`,
//! started with in-memory databases); both skip step 2. `mongod` requires
//! step 2; `auto` or unset means the order above. [`server_flavor`] tells
//! which one a process uses. Neither embedded server is MongoDB: seqid's guide
//! (chapter *the test server*) lists where each differs.
//! `SEQID_NX_VERBOSE=1` keeps nx-27017's per-command log lines (two per
//! command; off by default so that long benchmarks do not fill the log and the
//! log tail shown on failure holds the warnings and errors). The log lives in a
//! temporary directory that is removed when the server stops.
//! `SEQID_HARNESS_DEBUG=1` prints which local server was started and how long
//! that took.
//!
//! `SEQID_TEST_AS_MONGOS=1` (or `true`) presents every server the harness
//! starts or finds for tests as a **mongos**, a sharded cluster's router, which
//! none of the local servers can be: the clients that [`test_db`](test_db()),
//! [`test_db_with`], [`client`], [`client_with`], [`TestServer::client`] and
//! [`TestServer::test_db`] hand out, and the URIs of [`server_uri`],
//! [`server_uri_for`], [`server_addr`], [`TestDb::uri`] and [`TestServer::uri`]
//! (and so worker processes and [`FaultProxy::for_server`] /
//! [`FaultProxy::for_test_db`]), reach the server through one [`FaultProxy`]
//! per server with [`FaultProxy::present_as_mongos`] on and no sharded
//! collection configured. The proxy lives as long as its server, on a runtime
//! of the harness's own. A test reaches it with [`mongos_proxy_for`] (or
//! [`TestServer::mongos_proxy`]), e.g. to configure `config.collections`
//! entries for its own namespaces; [`as_mongos`] tells whether the mode is on.
//! The server behind it stays what it is (a replica set member for SecantusDB,
//! whose sessions and transactions the driver then uses as a mongos's). Not
//! applied to [`TestServer::builder`] (`seqid-server`), [`RestartableServer`],
//! nor the direct clients that empty and drop test databases; a `MONGODB_URI`
//! server needing TLS or credentials cannot be used in this mode.
//!
//! # What is installed where
//!
//! Everything the harness installs (SecantusDB, nx-27017, and the [`Tool`]s)
//! goes to one user-level cache, [`cache_dir`]: `SEQID_HARNESS_CACHE` if set,
//! else the user's cache directory + `/seqid-harness` (`$XDG_CACHE_HOME` or
//! `~/.cache` on Linux, `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on
//! Windows), one directory per package and pinned version, shared by every
//! clone and every program. An install is built in a staging directory and
//! renamed into place, so any number of processes may ask for it at once. The
//! files it needs (pinned requirements, launchers, the watchdog, the npm
//! lockfiles) are compiled into the crate: nothing is read from or written to
//! the source tree or `target/`, so a read-only clone and an installed
//! `seqid-server` work too. A running server's files live in a temporary
//! directory, removed when it stops.
//!
//! # Lifetimes
//!
//! The process's server is started lazily, once per OS process, the first
//! time one is asked for, and is shared by everything in that process; once
//! [`test_db`](test_db()) has put a few dozen test databases on it, the next
//! ones go on a fresh server of the same kind, each stopped once the last test
//! database on it is dropped (a server serving a whole test crate in one
//! process, as `cargo test` runs it, slows down as it accumulates). A test
//! reaches its database's server through [`TestDb::uri`] and
//! [`server_uri_for`]. A local server is stopped when the
//! process exits, however it exits (normally, by panic, abort or `SIGKILL`): a
//! small Python watchdog (`python/watchdog.py`) starts the server and stops it,
//! and removes its temporary files, as soon as the pipe to its standard input
//! is closed, which the kernel does when this process dies. Local servers
//! therefore all need `python3`.
//!
//! Fault tests get a server of their own, which they may crash and restart
//! without disturbing other tests: [`RestartableServer`] (SecantusDB, with
//! its data in a temporary directory that survives the crash).
//!
//! Tests that start worker processes should pass them
//! `MONGODB_URI=`[`server_uri_for`]`(db.name())` so that they reach the test's
//! database.
//!
//! If no server can be had, every function here fails with a [`HarnessError`]
//! whose message explains what to do; [`test_db`](test_db()) panics with it. Tests never
//! skip silently.
//!
//! Other tools that keep auto-increment counters in MongoDB (MongoEngine,
//! mongoose-sequence, mongoose-auto-increment, @typegoose/auto-increment), for
//! seqid's tests that share counters with them, are installed on first use in
//! the same way, with pip and npm, and run in processes of their own: see
//! [`Tool`].
//!
//! [SecantusDB]: https://pypi.org/project/secantusdb/
//! [nx-27017]: https://pypi.org/project/nx-27017/

#![warn(missing_docs)]

mod as_mongos;
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
mod test_server;
mod tools;
mod util;
mod watchdog;

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread;

use mongodb::options::ClientOptions;
use mongodb::{Client, Database};

pub use as_mongos::as_mongos;
pub use commands::CommandCounter;
pub use error::HarnessError;
pub use find::ServerFlavor;
pub use install::cache_dir;
pub use nx::NX_VERSION;
pub use proxy::{Fault, FaultProxy, server_addr};
pub use restartable::RestartableServer;
pub use secantus::SECANTUS_VERSION;
pub use test_db::{TestDb, mongos_proxy_for, test_db, test_db_with};
pub use test_server::{TestServer, TestServerBuilder};
pub use tools::Tool;

use start::LocalKind;
use watchdog::Watchdog;

/// The python interpreter used for pip, the watchdog, SecantusDB, nx-27017
/// and MongoEngine.
const PYTHON: &str = "python3";

// ---------------------------------------------------------------------------
// The per-process server, and the fresh ones test databases move on to

struct Server {
    /// Connection string for clients (and for worker processes' MONGODB_URI).
    uri: String,
    /// For local servers: the loopback port it listens on.
    port: Option<u16>,
    /// Human-readable description, see [`server_kind`].
    kind: String,
    /// Which kind of server it is, see [`server_flavor`].
    flavor: ServerFlavor,
    /// For local servers: the watchdog, which stops the server when this
    /// `Server` is dropped (a replaced test server, once its last test
    /// database is gone) or the process dies.
    watchdog: Option<Watchdog>,
    /// For local servers: how to start a fresh one of the same kind.
    local: Option<LocalKind>,
    /// With `SEQID_TEST_AS_MONGOS`: the proxy the harness's clients reach
    /// this server through, started on first use, dropped with the server.
    mongos: OnceLock<Result<as_mongos::MongosFront, HarnessError>>,
    /// Whether `SEQID_TEST_AS_MONGOS` applies: not to a server started for a
    /// program (`TestServer::builder`, `seqid-server`), whose address is its
    /// user's choice.
    for_tests: bool,
}

impl Server {
    /// A server as found or started, to be reached as a mongos when
    /// `SEQID_TEST_AS_MONGOS` says so.
    fn new(
        uri: String,
        port: Option<u16>,
        kind: String,
        flavor: ServerFlavor,
        watchdog: Option<Watchdog>,
        local: Option<LocalKind>,
    ) -> Server {
        Server {
            uri,
            port,
            kind,
            flavor,
            watchdog,
            local,
            mongos: OnceLock::new(),
            for_tests: true,
        }
    }

    /// The proxy presenting this server as a mongos, started now if needed,
    /// when `SEQID_TEST_AS_MONGOS` applies; `None` otherwise.
    fn mongos_front(&self) -> Result<Option<&as_mongos::MongosFront>, HarnessError> {
        if !self.for_tests || !as_mongos() {
            return Ok(None);
        }
        self.mongos
            .get_or_init(|| as_mongos::start_front(&self.uri))
            .as_ref()
            .map(Some)
            .map_err(Clone::clone)
    }

    /// The URI the harness's clients use: the mongos proxy's with
    /// `SEQID_TEST_AS_MONGOS`, else the server's own.
    fn client_uri(&self) -> Result<&str, HarnessError> {
        Ok(match self.mongos_front()? {
            Some(front) => &front.uri,
            None => &self.uri,
        })
    }

    /// [`client_uri`](Server::client_uri) once it has succeeded (every handle
    /// to a server made for tests has called it): the server's own URI if the
    /// proxy could not start.
    fn client_uri_or_own(&self) -> &str {
        self.client_uri().unwrap_or(&self.uri)
    }

    /// The mongos proxy, if clients reach this server through one.
    fn mongos_proxy(&self) -> Option<&FaultProxy> {
        self.mongos_front().ok().flatten().map(|front| &front.proxy)
    }
}

impl Drop for Server {
    /// Stops a local server: at once (`SIGKILL`) when its data is thrown away
    /// anyway (SecantusDB takes about 4 s to stop gracefully), with `SIGTERM`
    /// when it keeps its data in a directory, which it must close cleanly.
    fn drop(&mut self) {
        if let Some(mut watchdog) = self.watchdog.take() {
            if !self.local.as_ref().is_some_and(LocalKind::keeps_data) {
                let _ = watchdog.request("kill");
            }
            watchdog.stop();
        }
    }
}

/// How many test databases one local server holds before [`test_db`] moves on
/// to a fresh server of the same kind. A server that serves a whole test crate
/// in one process (`cargo test`) slows down as it accumulates: SecantusDB
/// 0.7.0b3 keeps a record of every retryable write for 30 minutes, scans them
/// all on every write and, past 10,000 of them, sorts them all; one process ran
/// the integration crate into that within minutes and then stalled. A fresh
/// server every few dozen databases keeps each small, for about half a second
/// of startup. A `MONGODB_URI` server is never replaced.
///
/// ```no_run
/// // A test that needs one server for more databases than this makes them through
/// // one client of `TestDb::uri` rather than through `test_db`.
/// assert!(seqid_harness::DATABASES_PER_SERVER >= 16);
/// ```
pub const DATABASES_PER_SERVER: usize = 24;

/// This process's server, and the one new test databases go on (at first the
/// same) with how many it has held.
struct Servers {
    process: Arc<Server>,
    for_test_dbs: Arc<Server>,
    databases: usize,
}

static SERVERS: OnceLock<Result<Mutex<Servers>, HarnessError>> = OnceLock::new();

fn servers() -> Result<&'static Mutex<Servers>, HarnessError> {
    SERVERS
        .get_or_init(|| {
            on_a_thread_of_its_own(find::find_server).map(|server| {
                let server = Arc::new(server);
                Mutex::new(Servers {
                    process: Arc::clone(&server),
                    for_test_dbs: server,
                    databases: 0,
                })
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Finds or starts a server. Startup pings through the async driver on a
/// runtime of its own; a separate thread keeps that legal when we are called
/// from async code.
fn on_a_thread_of_its_own(
    start: impl FnOnce() -> Result<Server, HarnessError> + Send,
) -> Result<Server, HarnessError> {
    thread::scope(|s| s.spawn(start).join()).unwrap_or_else(|_| {
        Err(HarnessError::other(
            "seqid-harness: starting the test server panicked",
        ))
    })
}

/// This process's server, the same for the life of the process.
fn server() -> Result<Arc<Server>, HarnessError> {
    let servers = servers()?.lock().unwrap_or_else(PoisonError::into_inner);
    Ok(Arc::clone(&servers.process))
}

/// The server a new test database goes on: this process's server for the first
/// [`DATABASES_PER_SERVER`], then a fresh one of the same kind for each as many
/// more. A fresh server replaced stops once the last test database on it is
/// dropped; this process's server lives as long as the process. Blocks while a
/// fresh server starts.
fn server_for_a_test_db() -> Result<Arc<Server>, HarnessError> {
    let mut servers = servers()?.lock().unwrap_or_else(PoisonError::into_inner);
    if servers.databases >= DATABASES_PER_SERVER
        && let Some(kind) = servers.for_test_dbs.local.clone()
    {
        let fresh = on_a_thread_of_its_own(|| find::local_server(kind, None))?;
        servers.for_test_dbs = Arc::new(fresh);
        servers.databases = 0;
    }
    servers.databases += 1;
    Ok(Arc::clone(&servers.for_test_dbs))
}

/// The connection string of this process's server, starting it on first use.
///
/// This blocks while a local server is installed and started (typically well
/// under a second for SecantusDB and nx-27017, plus the pip install on first
/// use ever). The result, success or failure, is cached for the life of the
/// process. [`test_db`](test_db()) puts its first few dozen databases on this
/// server and the next ones on fresh servers: a test that hands a server to
/// worker processes asks for the one that holds its database,
/// [`server_uri_for`].
///
/// ```no_run
/// let uri = seqid_harness::server_uri()?;
/// let status = std::process::Command::new("target/debug/seqid-worker")
///     .env("MONGODB_URI", &uri)
///     .status()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn server_uri() -> Result<String, HarnessError> {
    let server = server()?;
    server.client_uri().map(str::to_owned)
}

/// The connection string of the server that holds the test database named
/// `database` (made by [`test_db`] and not dropped yet), or else of this
/// process's server, [`server_uri`]. Pass it to worker processes as
/// `MONGODB_URI`, or to a client of its own, so that they reach the test's
/// database.
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let db = seqid_harness::test_db("workers").await;
/// let uri = seqid_harness::server_uri_for(db.name())?;
/// let status = std::process::Command::new("target/debug/seqid-worker")
///     .env("MONGODB_URI", &uri)
///     .arg(db.name())
///     .status()?;
/// # Ok(()) }
/// ```
pub fn server_uri_for(database: &str) -> Result<String, HarnessError> {
    match test_db::server_of(database) {
        Some(uri) => Ok(uri),
        None => server_uri(),
    }
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
    client_of(&server_uri_nonblocking().await?, configure).await
}

/// A new [`Client`] of the server at `uri`, `configure`d.
async fn client_of(
    uri: &str,
    configure: impl FnOnce(&mut ClientOptions),
) -> Result<Client, HarnessError> {
    let mut options = ClientOptions::parse(uri)
        .await
        .map_err(|e| HarnessError::other(format!("seqid-harness: bad server URI: {e}")))?;
    configure(&mut options);
    Client::with_options(options)
        .map_err(|e| HarnessError::other(format!("seqid-harness: cannot create a client: {e}")))
}

/// [`server_uri`] without blocking a runtime worker while the server starts.
async fn server_uri_nonblocking() -> Result<String, HarnessError> {
    if SERVERS.get().is_some() {
        return server_uri();
    }
    off_the_runtime(server_uri).await
}

/// Runs `find` (which may start a server) on tokio's blocking pool when called
/// inside a runtime, so that no runtime worker is blocked while a server starts.
async fn off_the_runtime<T: Send + 'static>(
    find: fn() -> Result<T, HarnessError>,
) -> Result<T, HarnessError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return find();
    }
    match tokio::task::spawn_blocking(find).await {
        Ok(result) => result,
        Err(_) => find(),
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
    emptied(&client().await?, name, &server_kind()?).await
}

/// Drops the database `name` through `client` (of the server described by
/// `kind`) and returns it, now empty.
async fn emptied(client: &Client, name: &str, kind: &str) -> Result<Database, HarnessError> {
    let db = client.database(name);
    db.drop().await.map_err(|e| {
        HarnessError::other(format!(
            "seqid-harness: cannot drop database {name:?} on {kind}: {e}"
        ))
    })?;
    Ok(db)
}
