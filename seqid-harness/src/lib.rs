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
//! 3. **[nx-27017]** 0.8.1, a MongoDB wire-protocol server backed by SQLite
//!    (PyPI, MIT): installed on first use with `python3 -m pip` into
//!    `<workspace>/target/seqid-harness/nx-27017-0.8.1` (versions pinned in
//!    `seqid-harness/python/nx-27017-requirements.txt`), then started on a free
//!    loopback port with in-memory databases (`--data-dir memory`).
//!
//! Set `SEQID_TEST_SERVER=nx` to skip step 2 (use nx-27017 even though `mongod`
//! is on `PATH`), or `SEQID_TEST_SERVER=mongod` to require step 2.
//! `SEQID_NX_VERBOSE=1` keeps nx-27017's per-command log lines (two per
//! command; off by default so that long benchmarks do not fill the log and the
//! log tail shown on failure holds the warnings and errors). The log lives in a
//! temporary directory that is removed when the server stops.
//! `SEQID_HARNESS_DEBUG=1` prints which local server was started and how long
//! that took.
//!
//! A local server (step 2 or 3) is started lazily, once per OS process, the
//! first time one is asked for, and is shared by everything in that process.
//! It is stopped when the process exits, however it exits (normally, by panic,
//! abort or `SIGKILL`): a small Python watchdog (`python/watchdog.py`) starts
//! the server and stops it, and removes its temporary files, as soon as the
//! pipe to its standard input is closed, which the kernel does when this
//! process dies. Steps 2 and 3 therefore both need `python3`.
//!
//! Tests that start worker processes should pass them
//! `MONGODB_URI=`[`server_uri()`] so that they reuse this process's server.
//!
//! If no server can be had, every function here fails with a [`HarnessError`]
//! whose message explains what to do; [`test_db`] panics with it. Tests never
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
//! [nx-27017]: https://pypi.org/project/nx-27017/

#![warn(missing_docs)]

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io::{ErrorKind, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mongodb::bson::{Bson, doc};
use mongodb::event::EventHandler;
use mongodb::event::command::CommandEvent;
use mongodb::options::ClientOptions;
use mongodb::{Client, Database};

/// The nx-27017 version installed and started by the fallback (step 3).
///
/// ```no_run
/// println!("fallback server: nx-27017 {}", seqid_harness::NX_VERSION);
/// ```
pub const NX_VERSION: &str = "0.8.1";

/// Exact pins of nx-27017 and its dependencies, handed to `pip install -r`.
const NX_REQUIREMENTS: &str = include_str!("../python/nx-27017-requirements.txt");
/// Starts a server and stops it when our end of its stdin pipe closes.
const WATCHDOG_PY: &str = include_str!("../python/watchdog.py");
/// Runs nx-27017's `main` from the project-local install directory.
const NX_LAUNCHER_PY: &str = include_str!("../python/nx_launcher.py");

/// How long a local server may take to answer a `ping` after being started.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// How many free ports are tried when a local server exits during startup.
const START_ATTEMPTS: u32 = 3;
/// The python interpreter used for pip, the watchdog and nx-27017.
const PYTHON: &str = "python3";

// ---------------------------------------------------------------------------
// Errors

/// No MongoDB-compatible server could be had (or reached).
///
/// Its [`Display`](fmt::Display) text says what went wrong, what to do about
/// it, and ends with the relevant tail of the server log or pip output.
///
/// ```no_run
/// match seqid_harness::server_uri() {
///     Ok(uri) => println!("using {uri}"),
///     Err(e) => eprintln!("{e}"),
/// }
/// ```
#[derive(Clone, Debug)]
pub struct HarnessError {
    message: String,
}

impl HarnessError {
    /// An error about getting a server at all, with the three ways out.
    fn no_server(problem: impl fmt::Display, details: &str) -> Self {
        let mut message = format!(
            "seqid-harness: no MongoDB-compatible server for seqid's tests, examples and benchmarks: {problem}\n\
             Do one of these:\n\
             \x20 - set MONGODB_URI=mongodb://host:port to use your own MongoDB (databases are created and dropped there);\n\
             \x20 - or put `mongod` on PATH (it is started on a free 127.0.0.1 port with a temporary --dbpath);\n\
             \x20 - or make `{PYTHON} -m pip install nx-27017=={NX_VERSION}` work (Python >= 3.11 with pip, and access to PyPI \
             or your pip index), so that the nx-27017 fallback can be installed into {}.\n",
            display_path(&nx_install_dir()),
        );
        let details = details.trim();
        if !details.is_empty() {
            message.push_str(details);
            message.push('\n');
        }
        HarnessError { message }
    }

    /// Any other failure (e.g. a driver error after the server was found).
    fn other(message: impl Into<String>) -> Self {
        HarnessError {
            message: message.into(),
        }
    }
}

impl fmt::Display for HarnessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message.trim_end())
    }
}

impl std::error::Error for HarnessError {}

// ---------------------------------------------------------------------------
// The per-process server

struct Server {
    /// Connection string for clients (and for worker processes' MONGODB_URI).
    uri: String,
    /// Human-readable description, see [`server_kind`].
    kind: String,
    /// For local servers: the watchdog; its stdin is never closed by us.
    _watchdog: Option<Watchdog>,
}

struct Watchdog {
    _child: Child,
    _stdin: ChildStdin,
}

static SERVER: OnceLock<Result<Server, HarnessError>> = OnceLock::new();

fn server() -> Result<&'static Server, HarnessError> {
    SERVER
        .get_or_init(|| {
            // Startup pings through the async driver on its own runtime; a
            // separate thread keeps that legal when we are called from async code.
            thread::scope(|s| s.spawn(find_server).join()).unwrap_or_else(|_| {
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
/// under a second for nx-27017, plus the pip install on first use ever). The
/// result, success or failure, is cached for the life of the process. Pass the
/// URI to worker processes as `MONGODB_URI` so that they use the same server.
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

/// Which server is used, e.g. `"nx-27017 0.8.1 on 127.0.0.1:40123"`, starting it
/// on first use. Meant for printing, e.g. at the top of benchmark output; the
/// hosts of a `MONGODB_URI` are shown, never its credentials.
///
/// ```no_run
/// println!("server: {}", seqid_harness::server_kind()?);
/// # Ok::<(), seqid_harness::HarnessError>(())
/// ```
pub fn server_kind() -> Result<String, HarnessError> {
    server().map(|s| s.kind.clone())
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
    if let Some(result) = SERVER.get() {
        return result.as_ref().map(|s| s.uri.clone()).map_err(Clone::clone);
    }
    if tokio::runtime::Handle::try_current().is_ok() {
        match tokio::task::spawn_blocking(server_uri).await {
            Ok(result) => result,
            Err(_) => server_uri(),
        }
    } else {
        server_uri()
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
    let db = client().await?.database(name);
    db.drop().await.map_err(|e| {
        HarnessError::other(format!(
            "seqid-harness: cannot drop database {name:?} on {}: {e}",
            server_kind().unwrap_or_default()
        ))
    })?;
    Ok(db)
}

// ---------------------------------------------------------------------------
// Test databases

/// A uniquely named database for one test, dropped again when this is dropped.
///
/// Derefs to [`Database`]; [`client`](TestDb::client) is the client it was made
/// with (e.g. carrying a [`CommandCounter`] when made by [`test_db_with`]).
///
/// ```no_run
/// # async fn f() {
/// let db = seqid_harness::test_db("counters").await;
/// let coll = db.collection::<mongodb::bson::Document>("c");
/// println!("database {} on {}", db.name(), seqid_harness::server_kind().unwrap());
/// let other_db = db.client().database("unrelated");
/// # }
/// ```
pub struct TestDb {
    client: Client,
    db: Database,
    name: String,
}

impl TestDb {
    /// The client the database was obtained from.
    ///
    /// ```no_run
    /// # async fn f() {
    /// let db = seqid_harness::test_db("x").await;
    /// let session = db.client().start_session().await.unwrap();
    /// # }
    /// ```
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The database itself (also reachable through `Deref`).
    ///
    /// ```no_run
    /// # async fn f() {
    /// let db = seqid_harness::test_db("x").await;
    /// let database: mongodb::Database = db.db().clone();
    /// # }
    /// ```
    pub fn db(&self) -> &Database {
        &self.db
    }

    /// The database's name: the label, the process id and a counter.
    ///
    /// ```no_run
    /// # async fn f() {
    /// let db = seqid_harness::test_db("my test").await;
    /// assert!(db.name().starts_with("my_test_"));
    /// # }
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Deref for TestDb {
    type Target = Database;

    fn deref(&self) -> &Database {
        &self.db
    }
}

impl fmt::Debug for TestDb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestDb").field("name", &self.name).finish()
    }
}

impl Drop for TestDb {
    /// Drops the database, through a fresh client on a separate thread with its
    /// own runtime (the test's runtime may be shutting down or blocked here).
    /// Errors are reported on stderr, never as a panic.
    fn drop(&mut self) {
        let Ok(uri) = server_uri() else { return };
        let name = self.name.clone();
        let outcome = thread::spawn(move || -> Result<(), String> {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(async {
                let drop = async {
                    let client = Client::with_uri_str(&uri).await?;
                    client.database(&name).drop().await?;
                    client.shutdown().await;
                    Ok::<(), mongodb::error::Error>(())
                };
                match tokio::time::timeout(Duration::from_secs(20), drop).await {
                    Ok(result) => result.map_err(|e| e.to_string()),
                    Err(_) => Err("timed out".into()),
                }
            })
        })
        .join();
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!(
                "seqid-harness: could not drop test database {}: {e}",
                self.name
            ),
            Err(_) => eprintln!(
                "seqid-harness: dropping test database {} panicked",
                self.name
            ),
        }
    }
}

/// A fresh, empty, uniquely named database for a test.
///
/// The name is `label` (reduced to ASCII letters, digits, `_` and `-`), the
/// process id and a per-process counter, at most 63 bytes. Any leftover
/// database of that name is dropped first. Panics with the [`HarnessError`]
/// message when no server can be had: tests fail, they never skip.
///
/// ```no_run
/// #[tokio::test]
/// async fn inserts() {
///     let db = seqid_harness::test_db("inserts").await;
///     db.collection::<mongodb::bson::Document>("c")
///         .insert_one(mongodb::bson::doc! { "x": 1 })
///         .await
///         .unwrap();
/// }
/// ```
pub async fn test_db(label: &str) -> TestDb {
    test_db_with(label, |_| {}).await
}

/// Like [`test_db`], but `configure` adjusts the client's options first,
/// e.g. to count commands with a [`CommandCounter`].
///
/// ```no_run
/// # async fn f() {
/// let counter = seqid_harness::CommandCounter::new();
/// let db = seqid_harness::test_db_with("counted", |o| {
///     o.command_event_handler = Some(counter.handler())
/// })
/// .await;
/// db.collection::<mongodb::bson::Document>("c")
///     .insert_one(mongodb::bson::doc! {})
///     .await
///     .unwrap();
/// assert_eq!(counter.count("insert"), 1);
/// # }
/// ```
pub async fn test_db_with(label: &str, configure: impl FnOnce(&mut ClientOptions)) -> TestDb {
    let client = match client_with(configure).await {
        Ok(client) => client,
        Err(e) => panic!("{e}"),
    };
    let name = unique_db_name(label);
    // Drop and recreate through a plain client so that a counting handler
    // attached by `configure` does not see these commands.
    let plain = match client_with(|_| {}).await {
        Ok(client) => client,
        Err(e) => panic!("{e}"),
    };
    if let Err(e) = plain.database(&name).drop().await {
        panic!(
            "seqid-harness: cannot drop database {name:?} on {}: {e}",
            server_kind().unwrap_or_default()
        );
    }
    let db = client.database(&name);
    TestDb { client, db, name }
}

fn unique_db_name(label: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let suffix = format!("_{}_{n}", std::process::id());
    let mut label: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if label.is_empty() {
        label.push_str("test");
    }
    label.truncate(63 - suffix.len());
    label + &suffix
}

// ---------------------------------------------------------------------------
// Command counting

/// Counts the commands a client sends, by name, through command monitoring.
///
/// Attach [`handler`](CommandCounter::handler) as the client's
/// `command_event_handler` (see [`client_with`], [`test_db_with`]); every
/// `CommandStarted` event is counted. Commands are counted synchronously, so a
/// count is up to date as soon as the operation's future has completed.
///
/// ```no_run
/// # async fn f() {
/// use mongodb::bson::doc;
/// let counter = seqid_harness::CommandCounter::new();
/// let db = seqid_harness::test_db_with("c", |o| {
///     o.command_event_handler = Some(counter.handler())
/// })
/// .await;
/// let coll = db.collection::<mongodb::bson::Document>("c");
/// coll.find_one_and_update(doc! {}, doc! { "$inc": { "n": 1 } }).await.unwrap();
/// assert_eq!(counter.count("findAndModify"), 1);
/// assert_eq!(counter.total(), 1);
/// counter.reset();
/// # }
/// ```
#[derive(Debug, Default)]
pub struct CommandCounter {
    counts: Mutex<HashMap<String, u64>>,
}

/// Commands that drivers send on their own (handshake, monitoring, auth,
/// session cleanup) and that [`CommandCounter::total`] leaves out.
const NOISE_COMMANDS: &[&str] = &[
    "hello",
    "ismaster",
    "ping",
    "endsessions",
    "buildinfo",
    "saslstart",
    "saslcontinue",
    "authenticate",
    "getnonce",
    "killallsessions",
];

impl CommandCounter {
    /// A new counter with all counts at zero.
    ///
    /// ```no_run
    /// let counter = seqid_harness::CommandCounter::new();
    /// assert_eq!(counter.total(), 0);
    /// ```
    pub fn new() -> Arc<CommandCounter> {
        Arc::new(CommandCounter::default())
    }

    /// An event handler counting into this counter, for
    /// [`ClientOptions::command_event_handler`].
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), seqid_harness::HarnessError> {
    /// let counter = seqid_harness::CommandCounter::new();
    /// let client = seqid_harness::client_with(|o| {
    ///     o.command_event_handler = Some(counter.handler())
    /// })
    /// .await?;
    /// # Ok(()) }
    /// ```
    pub fn handler(self: &Arc<Self>) -> EventHandler<CommandEvent> {
        let this = Arc::clone(self);
        EventHandler::callback(move |event| {
            if let CommandEvent::Started(started) = event {
                *this.lock().entry(started.command_name).or_insert(0) += 1;
            }
        })
    }

    /// How many commands named `command_name` (e.g. `"findAndModify"`,
    /// `"insert"`, `"update"`, `"find"`) were started. Any command counts here,
    /// including the ones [`total`](CommandCounter::total) leaves out.
    ///
    /// ```no_run
    /// let counter = seqid_harness::CommandCounter::new();
    /// assert_eq!(counter.count("findAndModify"), 0);
    /// ```
    pub fn count(&self, command_name: &str) -> u64 {
        self.lock().get(command_name).copied().unwrap_or(0)
    }

    /// All commands started, except driver housekeeping: `hello`/`isMaster`,
    /// `ping`, `endSessions`, `buildInfo` and authentication commands.
    ///
    /// ```no_run
    /// let counter = seqid_harness::CommandCounter::new();
    /// assert_eq!(counter.total(), 0);
    /// ```
    pub fn total(&self) -> u64 {
        self.lock()
            .iter()
            .filter(|(name, _)| !NOISE_COMMANDS.contains(&name.to_ascii_lowercase().as_str()))
            .map(|(_, n)| n)
            .sum()
    }

    /// Every count so far, by command name (housekeeping included).
    ///
    /// ```no_run
    /// let counter = seqid_harness::CommandCounter::new();
    /// for (name, n) in counter.snapshot() {
    ///     println!("{name}: {n}");
    /// }
    /// ```
    pub fn snapshot(&self) -> HashMap<String, u64> {
        self.lock().clone()
    }

    /// Sets all counts back to zero.
    ///
    /// ```no_run
    /// let counter = seqid_harness::CommandCounter::new();
    /// counter.reset();
    /// ```
    pub fn reset(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, u64>> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }
}

// ---------------------------------------------------------------------------
// Finding / starting the server

fn find_server() -> Result<Server, HarnessError> {
    if let Ok(uri) = std::env::var("MONGODB_URI")
        && !uri.trim().is_empty()
    {
        return external_server(uri.trim());
    }
    let choice = std::env::var("SEQID_TEST_SERVER").unwrap_or_default();
    let (try_mongod, try_nx) = match choice.trim() {
        "" | "auto" => (true, true),
        "nx" | "nx-27017" => (false, true),
        "mongod" => (true, false),
        other => {
            return Err(HarnessError::no_server(
                format_args!(
                    "SEQID_TEST_SERVER={other:?} is not understood (use `nx`, `mongod` or `auto`, or unset it)"
                ),
                "",
            ));
        }
    };
    if try_mongod {
        if let Some(mongod) = find_on_path("mongod") {
            return start_local(&LocalKind::Mongod(mongod));
        }
        if !try_nx {
            return Err(HarnessError::no_server(
                "SEQID_TEST_SERVER=mongod is set but there is no `mongod` on PATH",
                "",
            ));
        }
    }
    let install = ensure_nx_installed()?;
    start_local(&LocalKind::Nx(install))
}

/// Step 1: check that `MONGODB_URI` answers, and describe it.
fn external_server(uri: &str) -> Result<Server, HarnessError> {
    let probe = run_async(probe(uri.to_owned(), Duration::from_secs(30)));
    match probe {
        Ok(info) => {
            let hosts = uri_hosts(uri);
            Ok(Server {
                uri: uri.to_owned(),
                kind: format!(
                    "MongoDB {} from MONGODB_URI ({hosts})",
                    info.version.as_deref().unwrap_or("(unknown version)")
                ),
                _watchdog: None,
            })
        }
        Err(e) => Err(HarnessError::no_server(
            format_args!("MONGODB_URI is set but the server does not answer `ping`: {e}"),
            "Fix MONGODB_URI, or unset it to use a local server.",
        )),
    }
}

/// The host list of a connection string, without credentials or options.
fn uri_hosts(uri: &str) -> String {
    let rest = uri.split_once("://").map_or(uri, |(_, rest)| rest);
    let rest = rest.split(['/', '?']).next().unwrap_or("");
    let hosts = rest.rsplit_once('@').map_or(rest, |(_, hosts)| hosts);
    hosts.to_owned()
}

enum LocalKind {
    /// Path of the `mongod` binary.
    Mongod(PathBuf),
    /// The nx-27017 install directory (pip `--target`).
    Nx(PathBuf),
}

impl LocalKind {
    fn command(&self, port: u16, temp: &Path) -> Vec<String> {
        let s = |p: &Path| p.to_string_lossy().into_owned();
        match self {
            LocalKind::Mongod(bin) => {
                let dbpath = temp.join("db");
                let _ = fs::create_dir_all(&dbpath);
                vec![
                    s(bin),
                    "--port".into(),
                    port.to_string(),
                    "--bind_ip".into(),
                    "127.0.0.1".into(),
                    "--dbpath".into(),
                    s(&dbpath),
                    "--logpath".into(),
                    s(&temp.join("mongod.log")),
                    "--nounixsocket".into(),
                    // Many test processes may each run a mongod at the same time.
                    "--wiredTigerCacheSizeGB".into(),
                    "0.25".into(),
                ]
            }
            LocalKind::Nx(install) => vec![
                PYTHON.into(),
                "-s".into(),
                "-c".into(),
                NX_LAUNCHER_PY.into(),
                s(install),
                "--data-dir".into(),
                "memory".into(),
                "-p".into(),
                port.to_string(),
                "--pid-file".into(),
                s(&temp.join("nx-27017.pid")),
                "--log-file".into(),
                s(&temp.join("nx-27017.log")),
            ],
        }
    }

    fn name(&self) -> &'static str {
        match self {
            LocalKind::Mongod(_) => "mongod",
            LocalKind::Nx(_) => "nx-27017",
        }
    }

    fn log_files(&self) -> &'static [&'static str] {
        match self {
            LocalKind::Mongod(_) => &["console.log", "mongod.log"],
            LocalKind::Nx(_) => &["console.log", "nx-27017.log"],
        }
    }
}

/// Why one attempt to start a local server failed.
enum StartFailure {
    /// The server (or watchdog) exited; worth another port.
    Exited(String),
    /// It never answered, or could not be launched at all.
    Fatal(String),
}

/// Steps 2 and 3: start a server under the watchdog and wait until it answers.
fn start_local(kind: &LocalKind) -> Result<Server, HarnessError> {
    let mut failures = Vec::new();
    for attempt in 1..=START_ATTEMPTS {
        let started = Instant::now();
        match start_once(kind, attempt) {
            Ok(server) => {
                if std::env::var_os("SEQID_HARNESS_DEBUG").is_some() {
                    eprintln!(
                        "seqid-harness: started {} in {:?}",
                        server.kind,
                        started.elapsed()
                    );
                }
                return Ok(server);
            }
            Err(StartFailure::Exited(details)) => failures.push(details),
            Err(StartFailure::Fatal(details)) => {
                failures.push(details);
                break;
            }
        }
    }
    let mut last = failures.pop().unwrap_or_default();
    if let LocalKind::Mongod(bin) = kind {
        last.push_str(&format!(
            "(`mongod` was found at {}; set SEQID_TEST_SERVER=nx to use nx-27017 instead.)\n",
            display_path(bin)
        ));
    }
    Err(HarnessError::no_server(
        format_args!(
            "{} could not be started ({} attempt(s))",
            kind.name(),
            failures.len() + 1
        ),
        &last,
    ))
}

fn start_once(kind: &LocalKind, attempt: u32) -> Result<Server, StartFailure> {
    let temp = std::env::temp_dir().join(format!(
        "seqid-harness-{}-{attempt}-{}",
        std::process::id(),
        nanos()
    ));
    fs::create_dir_all(&temp)
        .map_err(|e| StartFailure::Fatal(format!("cannot create {}: {e}", display_path(&temp))))?;
    let port = match free_port() {
        Ok(port) => port,
        Err(e) => {
            let _ = fs::remove_dir_all(&temp);
            return Err(StartFailure::Fatal(format!("cannot find a free port: {e}")));
        }
    };
    let command = kind.command(port, &temp);
    let spawned = Command::new(PYTHON)
        .arg("-s")
        .arg("-c")
        .arg(WATCHDOG_PY)
        .arg(&temp)
        .args(&command)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            let _ = fs::remove_dir_all(&temp);
            let hint = if e.kind() == ErrorKind::NotFound {
                format!(" ({PYTHON} is not on PATH; it runs the watchdog that stops the server)")
            } else {
                String::new()
            };
            return Err(StartFailure::Fatal(format!(
                "cannot run {PYTHON}: {e}{hint}"
            )));
        }
    };
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let uri = format!("mongodb://127.0.0.1:{port}/?directConnection=true");

    match wait_ready(&uri, port, &temp, &mut child) {
        Ok(info) => {
            // Tells the watchdog to report an unexpected exit from now on.
            let _ = stdin.write_all(b"ready\n").and_then(|()| stdin.flush());
            let kind = match kind {
                LocalKind::Mongod(bin) => format!(
                    "mongod {} ({}) on 127.0.0.1:{port}",
                    info.version.as_deref().unwrap_or("(unknown version)"),
                    display_path(bin)
                ),
                LocalKind::Nx(_) => format!("nx-27017 {NX_VERSION} on 127.0.0.1:{port}"),
            };
            Ok(Server {
                uri,
                kind,
                _watchdog: Some(Watchdog {
                    _child: child,
                    _stdin: stdin,
                }),
            })
        }
        Err(failure) => {
            // Read the logs before the watchdog removes them.
            let mut logs = String::new();
            for file in kind.log_files() {
                let tail = tail_of(&temp.join(file), 4000);
                if !tail.trim().is_empty() {
                    logs.push_str(&format!("--- end of {} ---\n{}\n", file, tail.trim_end()));
                }
            }
            drop(stdin);
            wait_with_timeout(&mut child, Duration::from_secs(10));
            let _ = fs::remove_dir_all(&temp);
            let with_logs =
                |msg: String| format!("{} on 127.0.0.1:{port}: {msg}\n{logs}", kind.name());
            Err(match failure {
                StartFailure::Exited(msg) => StartFailure::Exited(with_logs(msg)),
                StartFailure::Fatal(msg) => StartFailure::Fatal(with_logs(msg)),
            })
        }
    }
}

/// Polls until the server we started answers `ping` on `port`.
fn wait_ready(
    uri: &str,
    port: u16,
    temp: &Path,
    child: &mut Child,
) -> Result<ServerInfo, StartFailure> {
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut last_error = String::from("nothing listens on the port");
    let mut foreign_since: Option<Instant> = None;
    loop {
        if let Ok(exit) = fs::read_to_string(temp.join("server-exit")) {
            return Err(StartFailure::Exited(format!(
                "the server exited during startup ({})",
                exit.trim()
            )));
        }
        match child.try_wait() {
            Ok(Some(status)) => {
                return Err(StartFailure::Exited(format!(
                    "the watchdog ({PYTHON}) exited during startup with {status}"
                )));
            }
            Ok(None) => {}
            Err(e) => {
                return Err(StartFailure::Fatal(format!(
                    "cannot watch the watchdog: {e}"
                )));
            }
        }
        if TcpStream::connect_timeout(&addr, Duration::from_millis(250)).is_ok() {
            match run_async(probe(uri.to_owned(), Duration::from_secs(5))) {
                Ok(info) => {
                    // Make sure it is our server, not another one that got the
                    // port between our probe for a free port and our server's
                    // bind. Should the pid not be comparable (e.g. a launcher
                    // that forks), a server that is still alive after two
                    // seconds is taken to be ours: a failed bind exits at once.
                    let ours = fs::read_to_string(temp.join("server-pid"))
                        .ok()
                        .and_then(|s| s.trim().parse::<i64>().ok());
                    if info.pid.is_none() || info.pid == ours {
                        return Ok(info);
                    }
                    let since = *foreign_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > Duration::from_secs(2) {
                        return Ok(info);
                    }
                    last_error = format!(
                        "the server on the port has pid {:?}, ours has {ours:?}",
                        info.pid
                    );
                }
                Err(e) => last_error = e,
            }
        }
        if Instant::now() >= deadline {
            return Err(StartFailure::Fatal(format!(
                "the server did not answer within {} s (last error: {last_error})",
                STARTUP_TIMEOUT.as_secs()
            )));
        }
        thread::sleep(Duration::from_millis(50));
    }
}

struct ServerInfo {
    version: Option<String>,
    pid: Option<i64>,
}

/// `ping`s the server, then asks for its version and pid (best effort).
async fn probe(uri: String, timeout: Duration) -> Result<ServerInfo, String> {
    let mut options = ClientOptions::parse(&uri)
        .await
        .map_err(|e| e.to_string())?;
    options.server_selection_timeout = Some(timeout);
    options.connect_timeout = Some(timeout);
    let client = Client::with_options(options).map_err(|e| e.to_string())?;
    let admin = client.database("admin");
    let result = async {
        admin
            .run_command(doc! { "ping": 1 })
            .await
            .map_err(|e| e.to_string())?;
        let status = admin
            .run_command(doc! { "serverStatus": 1 })
            .await
            .unwrap_or_default();
        let pid = match status.get("pid") {
            Some(Bson::Int32(n)) => Some(i64::from(*n)),
            Some(Bson::Int64(n)) => Some(*n),
            Some(Bson::Double(n)) => Some(*n as i64),
            _ => None,
        };
        let mut version = status.get_str("version").ok().map(str::to_owned);
        if version.is_none() {
            let build_info = admin.run_command(doc! { "buildInfo": 1 }).await;
            version = build_info
                .ok()
                .and_then(|b| b.get_str("version").ok().map(str::to_owned));
        }
        Ok(ServerInfo { version, pid })
    };
    let result = tokio::time::timeout(timeout * 2, result)
        .await
        .unwrap_or_else(|_| Err("timed out".into()));
    client.shutdown().await;
    result
}

/// Runs `future` to completion on a new current-thread runtime in a new
/// thread, so that this works from sync code and from inside any runtime.
fn run_async<T: Send + 'static>(
    future: impl std::future::Future<Output = Result<T, String>> + Send + 'static,
) -> Result<T, String> {
    thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?
            .block_on(future)
    })
    .join()
    .unwrap_or_else(|_| Err("the probe panicked".into()))
}

// ---------------------------------------------------------------------------
// Installing nx-27017

/// `<workspace>/target/seqid-harness/nx-27017-<version>`.
fn nx_install_dir() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("target")
        .join("seqid-harness")
        .join(format!("nx-27017-{NX_VERSION}"))
}

fn nx_is_installed(dir: &Path) -> bool {
    dir.join("nx_27017").join("__init__.py").is_file()
}

/// Installs nx-27017 with pip into a staging directory and renames that into
/// place, so that concurrent processes never see a half-installed directory.
fn ensure_nx_installed() -> Result<PathBuf, HarnessError> {
    let dest = nx_install_dir();
    if nx_is_installed(&dest) {
        return Ok(dest);
    }
    let fail = |problem: String, details: &str| HarnessError::no_server(problem, details);
    let parent = dest.parent().expect("install dir has a parent");
    fs::create_dir_all(parent)
        .map_err(|e| fail(format!("cannot create {}: {e}", display_path(parent)), ""))?;
    let staging = parent.join(format!(
        ".staging-nx-27017-{NX_VERSION}-{}-{}",
        std::process::id(),
        nanos()
    ));
    let site = staging.join("site");
    let requirements = staging.join("requirements.txt");
    fs::create_dir_all(&staging)
        .and_then(|()| fs::write(&requirements, NX_REQUIREMENTS))
        .map_err(|e| fail(format!("cannot write {}: {e}", display_path(&staging)), ""))?;

    eprintln!(
        "seqid-harness: installing nx-27017 {NX_VERSION} into {} (first use)",
        display_path(&dest)
    );
    let output = Command::new(PYTHON)
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
        ])
        .arg("--target")
        .arg(&site)
        .arg("-r")
        .arg(&requirements)
        // Settings that contradict --target would make pip refuse.
        .env("PIP_USER", "0")
        .env("PIP_REQUIRE_VIRTUALENV", "0")
        .stdin(Stdio::null())
        .output();
    let output = match output {
        Ok(output) => output,
        Err(e) => {
            let _ = fs::remove_dir_all(&staging);
            return Err(fail(
                format!("cannot run `{PYTHON} -m pip` to install nx-27017: {e}"),
                "",
            ));
        }
    };
    if !output.status.success() || !nx_is_installed(&site) {
        let _ = fs::remove_dir_all(&staging);
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        return Err(fail(
            format!(
                "`{PYTHON} -m pip install nx-27017=={NX_VERSION}` failed ({})",
                output.status
            ),
            &format!("--- end of pip output ---\n{}", tail_str(&text, 4000)),
        ));
    }
    let renamed = fs::rename(&site, &dest);
    let _ = fs::remove_dir_all(&staging);
    match renamed {
        Ok(()) => Ok(dest),
        // Another process won the race: use its directory.
        Err(_) if nx_is_installed(&dest) => Ok(dest),
        Err(e) => Err(fail(
            format!(
                "cannot move the nx-27017 install into {}: {e}",
                display_path(&dest)
            ),
            "",
        )),
    }
}

// ---------------------------------------------------------------------------
// Small helpers

fn free_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file() || path.with_extension("exe").is_file()
}

fn wait_with_timeout(child: &mut Child, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if !matches!(child.try_wait(), Ok(None)) {
            return;
        }
        thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn tail_of(path: &Path, limit: usize) -> String {
    fs::read(path)
        .map(|bytes| tail_str(&String::from_utf8_lossy(&bytes), limit).to_owned())
        .unwrap_or_default()
}

fn tail_str(text: &str, limit: usize) -> &str {
    let mut start = text.len().saturating_sub(limit);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

fn nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// A path without `..` components, for messages.
fn display_path(path: &Path) -> String {
    let mut clean = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                clean.pop();
            }
            other => clean.push(other),
        }
    }
    clean.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_names_are_valid_and_unique() {
        let long = "x".repeat(200);
        let a = unique_db_name(&long);
        let b = unique_db_name(&long);
        assert_ne!(a, b);
        assert!(a.len() <= 63, "{a}");
        let weird = unique_db_name("a.b/c d$é\"");
        assert!(
            weird
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{weird}"
        );
        assert!(unique_db_name("").starts_with("test_"));
    }

    #[test]
    fn hosts_hide_credentials() {
        assert_eq!(uri_hosts("mongodb://u:p@h1:1,h2:2/db?x=1"), "h1:1,h2:2");
        assert_eq!(uri_hosts("mongodb://h:1"), "h:1");
    }

    #[test]
    fn display_path_removes_parent_components() {
        assert_eq!(display_path(Path::new("/a/b/../c")), "/a/c");
    }
}
