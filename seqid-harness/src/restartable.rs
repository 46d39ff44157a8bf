//! [`RestartableServer`]: a SecantusDB of one's own, to crash and restart.

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use mongodb::Client;

use crate::start::{self, LocalKind, Program, Started, Storage};
use crate::{HarnessError, secantus};

/// A SecantusDB server of its own, for fault tests: it can be crashed with
/// [`kill`](RestartableServer::kill) and started again with
/// [`restart`](RestartableServer::restart), on the same port and with the
/// same data directory.
///
/// It is independent of the per-process server of [`server_uri`](crate::server_uri)
/// (whatever `MONGODB_URI` and `SEQID_TEST_SERVER` say) and is always
/// SecantusDB, installed on first use like the default server. Its data lives
/// in a temporary directory that is removed when this is dropped, or when the
/// test process dies, however it dies (the server is run by the same watchdog
/// as the per-process server).
///
/// Writes that must survive [`kill`](RestartableServer::kill) need
/// `journal: true` in their write concern: SecantusDB acknowledges a plain
/// `w: 1` write (and even `w: "majority"`) before it reaches its journal file,
/// and loses it on a crash.
///
/// The methods block (starting takes about half a second); from async code
/// use [`start_async`](RestartableServer::start_async) and
/// [`restart_async`](RestartableServer::restart_async).
///
/// ```no_run
/// use mongodb::bson::{Document, doc};
/// use mongodb::options::WriteConcern;
/// use seqid_harness::RestartableServer;
///
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let server = RestartableServer::start_async().await?;
/// let client = server.client().await?;
/// let coll = client.database("db").collection::<Document>("c");
/// coll.insert_one(doc! { "_id": 1 })
///     .write_concern(WriteConcern::builder().journal(true).build())
///     .await?;
/// server.kill()?; // SIGKILL: a crash
/// server.restart_async().await?; // same port, same data directory
/// assert!(coll.find_one(doc! { "_id": 1 }).await?.is_some());
/// # Ok(()) }
/// ```
pub struct RestartableServer {
    inner: Arc<Mutex<Inner>>,
    uri: String,
    port: u16,
    data_dir: PathBuf,
}

struct Inner {
    kind: LocalKind,
    /// `None` only while being dropped.
    started: Option<Started>,
}

impl RestartableServer {
    /// Installs SecantusDB if needed, starts it on a free loopback port with
    /// its data in a new temporary directory, and waits until it answers.
    /// Blocks; see [`start_async`](RestartableServer::start_async).
    ///
    /// ```no_run
    /// let server = seqid_harness::RestartableServer::start()?;
    /// println!("{}", server.uri());
    /// # Ok::<(), seqid_harness::HarnessError>(())
    /// ```
    pub fn start() -> Result<Self, HarnessError> {
        let kind = LocalKind {
            program: Program::Secantus(secantus::PACKAGE.ensure_installed()?),
            storage: Storage::Restartable,
        };
        let started = start::start_local(&kind, None)?;
        Ok(RestartableServer {
            uri: started.uri.clone(),
            port: started.port,
            data_dir: started.watchdog.temp().join("db"),
            inner: Arc::new(Mutex::new(Inner {
                kind,
                started: Some(started),
            })),
        })
    }

    /// [`start`](RestartableServer::start) on tokio's blocking thread pool.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), seqid_harness::HarnessError> {
    /// let server = seqid_harness::RestartableServer::start_async().await?;
    /// # Ok(()) }
    /// ```
    pub async fn start_async() -> Result<Self, HarnessError> {
        tokio::task::spawn_blocking(Self::start)
            .await
            .map_err(|e| HarnessError::other(format!("seqid-harness: starting panicked: {e}")))?
    }

    /// The connection string, with `directConnection=true`. It stays the same
    /// across restarts.
    ///
    /// ```no_run
    /// # fn f(server: &seqid_harness::RestartableServer) {
    /// let mut worker = std::process::Command::new("target/debug/seqid-worker");
    /// worker.env("MONGODB_URI", server.uri());
    /// # }
    /// ```
    pub fn uri(&self) -> String {
        self.uri.clone()
    }

    /// The loopback port the server listens on, the same across restarts.
    ///
    /// ```no_run
    /// # fn f(server: &seqid_harness::RestartableServer) {
    /// println!("mongosh --port {}", server.port());
    /// # }
    /// ```
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The directory that holds the server's data (removed on drop).
    ///
    /// ```no_run
    /// # fn f(server: &seqid_harness::RestartableServer) {
    /// assert!(server.data_dir().is_dir());
    /// # }
    /// ```
    pub fn data_dir(&self) -> PathBuf {
        self.data_dir.clone()
    }

    /// A new [`Client`] of this server. Use it in the tokio runtime that is
    /// current when you call this. It reconnects by itself after a restart.
    ///
    /// ```no_run
    /// # async fn f(server: &seqid_harness::RestartableServer) -> Result<(), seqid_harness::HarnessError> {
    /// let client = server.client().await?;
    /// # Ok(()) }
    /// ```
    pub async fn client(&self) -> Result<Client, HarnessError> {
        Client::with_uri_str(&self.uri)
            .await
            .map_err(|e| HarnessError::other(format!("seqid-harness: cannot create a client: {e}")))
    }

    /// Kills the server with `SIGKILL`, at once, like a crash, and returns
    /// once it is gone. Does nothing if it is not running.
    ///
    /// ```no_run
    /// # fn f(server: &seqid_harness::RestartableServer) -> Result<(), seqid_harness::HarnessError> {
    /// server.kill()?;
    /// // Operations now fail with a network error, until `restart`.
    /// # Ok(()) }
    /// ```
    pub fn kill(&self) -> Result<(), HarnessError> {
        kill(&self.inner)
    }

    /// Starts the server again, on the same port and with the same data
    /// directory, and waits until it answers `ping` (trying again a few times
    /// should the port be briefly unavailable). A server that is still
    /// running is killed first, as by [`kill`](RestartableServer::kill).
    /// Blocks; see [`restart_async`](RestartableServer::restart_async).
    ///
    /// ```no_run
    /// # fn f(server: &seqid_harness::RestartableServer) -> Result<(), seqid_harness::HarnessError> {
    /// server.kill()?;
    /// server.restart()?;
    /// # Ok(()) }
    /// ```
    pub fn restart(&self) -> Result<(), HarnessError> {
        restart(&self.inner)
    }

    /// [`restart`](RestartableServer::restart) on tokio's blocking thread pool.
    ///
    /// ```no_run
    /// # async fn f(server: &seqid_harness::RestartableServer) -> Result<(), seqid_harness::HarnessError> {
    /// server.kill()?;
    /// server.restart_async().await?;
    /// # Ok(()) }
    /// ```
    pub async fn restart_async(&self) -> Result<(), HarnessError> {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || restart(&inner))
            .await
            .map_err(|e| HarnessError::other(format!("seqid-harness: restarting panicked: {e}")))?
    }
}

fn lock(inner: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    inner.lock().unwrap_or_else(PoisonError::into_inner)
}

fn kill(inner: &Mutex<Inner>) -> Result<(), HarnessError> {
    let mut inner = lock(inner);
    let started = inner.started.as_mut().expect("started until dropped");
    match started.watchdog.request("kill") {
        Ok(answer) if answer == "killed" => Ok(()),
        Ok(answer) => Err(HarnessError::other(format!(
            "seqid-harness: cannot kill SecantusDB: {answer}"
        ))),
        Err(e) => Err(HarnessError::other(format!(
            "seqid-harness: cannot kill SecantusDB: {e}"
        ))),
    }
}

fn restart(inner: &Mutex<Inner>) -> Result<(), HarnessError> {
    kill(inner)?;
    let mut inner = lock(inner);
    let Inner { kind, started } = &mut *inner;
    start::restart(kind, started.as_mut().expect("started until dropped"))
}

impl Drop for RestartableServer {
    /// Kills the server and removes its data directory.
    fn drop(&mut self) {
        if let Some(mut started) = lock(&self.inner).started.take() {
            let _ = started.watchdog.request("kill");
            started.watchdog.stop();
        }
    }
}

impl fmt::Debug for RestartableServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestartableServer")
            .field("uri", &self.uri)
            .field("data_dir", &self.data_dir)
            .finish_non_exhaustive()
    }
}
