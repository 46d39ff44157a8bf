//! [`TestServer`]: a server of its own, for one test (or, through
//! [`TestServer::builder`], for a program: `seqid-server`).

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use mongodb::Client;

use crate::start::Storage;
use crate::test_db::{TestDb, test_db_on};
use crate::{HarnessError, Server, ServerFlavor, client_of, find};

/// A server of its own, started for one test and stopped when dropped, where
/// [`test_db`](crate::test_db()) shares the process's server between tests.
///
/// [`start`](TestServer::start) starts the kind of server the process's server
/// is (the crate docs say which: `mongod` on `PATH`, else SecantusDB, or
/// nx-27017 with `SEQID_TEST_SERVER=nx`), on a free loopback port, with its
/// data in memory, run by the same watchdog: it also stops when the process
/// dies, however it dies. A test that wants a server to itself (a clean
/// server-wide state, its own failpoints, a server it may shut down) takes
/// one; it costs about half a second of startup.
///
/// When `MONGODB_URI` is set, `start` gives that server instead (checked with a
/// `ping`), and dropping the handle stops nothing: tests that share it should
/// keep to their [`test_db`](TestServer::test_db)s.
///
/// The server stops when the `TestServer` is dropped and the last
/// [`TestDb`] made by [`test_db`](TestServer::test_db) is dropped too (each
/// keeps it running). Dropping blocks the thread until the server has stopped
/// (usually milliseconds).
///
/// ```no_run
/// use mongodb::bson::{Document, doc};
/// use seqid_harness::TestServer;
///
/// #[tokio::test]
/// async fn on_a_server_of_its_own() {
///     let server = TestServer::start().await.unwrap();
///     let db = server.test_db("mine").await;
///     db.collection::<Document>("c").insert_one(doc! { "x": 1 }).await.unwrap();
/// } // the database is dropped, then the server stops
/// ```
pub struct TestServer {
    server: Arc<Server>,
}

impl TestServer {
    /// Starts a server of the process's kind on a free loopback port, with its
    /// data in memory, and waits until it answers; or, when `MONGODB_URI` is
    /// set, checks that its server answers and gives that. Installs the server
    /// first if needed (once per user, into [`cache_dir`](crate::cache_dir)).
    ///
    /// Fails with a [`HarnessError`] that says what to do when no server can
    /// be had. Needs a tokio runtime (it starts the server on the blocking
    /// pool).
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), seqid_harness::HarnessError> {
    /// let server = seqid_harness::TestServer::start().await?;
    /// println!("{} at {}", server.kind(), server.uri());
    /// # Ok(()) }
    /// ```
    pub async fn start() -> Result<TestServer, HarnessError> {
        let server = start_blocking(find::find_server).await?;
        // With `SEQID_TEST_AS_MONGOS`, fail here if the proxy cannot start
        // rather than hand out the server's own URI later.
        server.server.client_uri()?;
        Ok(server)
    }

    /// A builder to start a local server on a port of your choice, or with its
    /// data kept in a directory across runs, as `seqid-server` does.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), seqid_harness::HarnessError> {
    /// let server = seqid_harness::TestServer::builder()
    ///     .port(27017)
    ///     .data_dir("data")
    ///     .start()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn builder() -> TestServerBuilder {
        TestServerBuilder {
            port: 0,
            data_dir: None,
        }
    }

    /// The connection string, e.g.
    /// `mongodb://127.0.0.1:40123/?directConnection=true` (a `MONGODB_URI`
    /// server's as given; with `SEQID_TEST_AS_MONGOS`, for a server from
    /// [`start`](TestServer::start), the mongos proxy's). Pass it to worker
    /// processes as `MONGODB_URI`.
    ///
    /// ```no_run
    /// # async fn f(server: &seqid_harness::TestServer) {
    /// let mut worker = std::process::Command::new("target/debug/my-worker");
    /// worker.env("MONGODB_URI", server.uri());
    /// # }
    /// ```
    pub fn uri(&self) -> &str {
        self.server.client_uri_or_own()
    }

    /// Which server it is, e.g. `"SecantusDB 0.7.0b3 on 127.0.0.1:40123"`
    /// (a `MONGODB_URI` server's hosts, never its credentials).
    ///
    /// ```no_run
    /// # fn f(server: &seqid_harness::TestServer) {
    /// eprintln!("server: {}", server.kind());
    /// # }
    /// ```
    pub fn kind(&self) -> &str {
        &self.server.kind
    }

    /// Which kind of server it is, see [`ServerFlavor`].
    ///
    /// ```no_run
    /// # fn f(server: &seqid_harness::TestServer) {
    /// let own = server.flavor() != seqid_harness::ServerFlavor::External;
    /// # }
    /// ```
    pub fn flavor(&self) -> ServerFlavor {
        self.server.flavor
    }

    /// The loopback port (of `127.0.0.1`) a local server listens on; `None`
    /// for a `MONGODB_URI` server.
    ///
    /// ```no_run
    /// # fn f(server: &seqid_harness::TestServer) {
    /// if let Some(port) = server.port() {
    ///     println!("mongosh --port {port}");
    /// }
    /// # }
    /// ```
    pub fn port(&self) -> Option<u16> {
        self.server.port
    }

    /// A new [`Client`] of this server (through the mongos proxy with
    /// `SEQID_TEST_AS_MONGOS`: see [`mongos_proxy`](TestServer::mongos_proxy)).
    /// Use it in the tokio runtime that is current when you call this.
    ///
    /// ```no_run
    /// # async fn f(server: &seqid_harness::TestServer) -> Result<(), Box<dyn std::error::Error>> {
    /// let client = server.client().await?;
    /// let names = client.list_database_names().await?;
    /// # Ok(()) }
    /// ```
    pub async fn client(&self) -> Result<Client, HarnessError> {
        client_of(self.server.client_uri()?, |_| {}).await
    }

    /// The proxy through which the harness's clients reach this server,
    /// presenting it as a mongos, when `SEQID_TEST_AS_MONGOS` is on
    /// ([`as_mongos`](crate::as_mongos)) and the server came from
    /// [`start`](TestServer::start); `None` otherwise. Its
    /// [`uri`](crate::FaultProxy::uri) is [`uri`](TestServer::uri).
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), seqid_harness::HarnessError> {
    /// use mongodb::bson::doc;
    /// let server = seqid_harness::TestServer::start().await?;
    /// if let Some(proxy) = server.mongos_proxy() {
    ///     proxy.shard_collection("shop.orders", doc! { "key": { "_id": 1 }, "unique": true });
    /// }
    /// # Ok(()) }
    /// ```
    pub fn mongos_proxy(&self) -> Option<&crate::FaultProxy> {
        self.server.mongos_proxy()
    }

    /// A fresh, empty, uniquely named database on this server, dropped again
    /// when the [`TestDb`] is dropped; named as by
    /// [`test_db`](crate::test_db()) (the label, the process id and a counter),
    /// and it panics as that does when the server cannot be reached. The
    /// server keeps running while the `TestDb` lives.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), seqid_harness::HarnessError> {
    /// let server = seqid_harness::TestServer::start().await?;
    /// let db = server.test_db("orders").await;
    /// assert!(db.name().starts_with("orders_"));
    /// assert_eq!(db.uri(), server.uri());
    /// # Ok(()) }
    /// ```
    pub async fn test_db(&self, label: &str) -> TestDb {
        test_db_on(Arc::clone(&self.server), label, |_| {}).await
    }
}

impl fmt::Debug for TestServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestServer")
            .field("uri", &self.server.uri)
            .field("kind", &self.server.kind)
            .finish()
    }
}

/// Starts a local [`TestServer`] on a port of your choice, or with its data
/// kept in a directory: see [`TestServer::builder`].
///
/// The builder always starts a local server, the kind `SEQID_TEST_SERVER`
/// chooses (`mongod` on `PATH`, else SecantusDB, or nx-27017 with
/// `SEQID_TEST_SERVER=nx`); `MONGODB_URI` is not used.
///
/// ```no_run
/// # async fn f() -> Result<(), seqid_harness::HarnessError> {
/// let server = seqid_harness::TestServer::builder().port(27017).start().await?;
/// // Programs whose default is mongodb://localhost:27017 reach it.
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct TestServerBuilder {
    port: u16,
    data_dir: Option<PathBuf>,
}

impl TestServerBuilder {
    /// The loopback port (of `127.0.0.1`) to listen on; `0`, the default, for
    /// any free one. [`start`](TestServerBuilder::start) fails, naming the
    /// port, if something listens there already.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), seqid_harness::HarnessError> {
    /// let server = seqid_harness::TestServer::builder().port(27018).start().await?;
    /// assert_eq!(server.port(), Some(27018));
    /// # Ok(()) }
    /// ```
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Keeps the server's data in `dir` (created if missing; a relative path
    /// is taken from the current directory), where the next server started on
    /// it finds it again, instead of in memory: SecantusDB's WiredTiger home
    /// (`--storage-path`), nx-27017's SQLite files, one per database
    /// (`--data-dir`), or `mongod`'s `--dbpath`. Stop the server gracefully
    /// (drop it; `seqid-server` stops on Ctrl-C) for its last writes to be
    /// kept. One server at a time per directory.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), seqid_harness::HarnessError> {
    /// let server = seqid_harness::TestServer::builder()
    ///     .data_dir("target/my-app-data")
    ///     .start()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// Installs the server if needed, starts it and waits until it answers.
    /// Fails with a [`HarnessError`] that says what to do (also when the port
    /// is taken or the data directory cannot be created). Needs a tokio
    /// runtime.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), seqid_harness::HarnessError> {
    /// let server = seqid_harness::TestServer::builder().start().await?;
    /// println!("{}", server.kind());
    /// # Ok(()) }
    /// ```
    pub async fn start(self) -> Result<TestServer, HarnessError> {
        let storage = match self.data_dir {
            Some(dir) => Storage::Kept(prepared(dir)?),
            None => Storage::Throwaway,
        };
        let port = (self.port != 0).then_some(self.port);
        start_blocking(move || {
            let mut kind = find::local_kind()?;
            kind.storage = storage;
            let mut server = find::local_server(kind, port)?;
            // A server for a program, at the address asked for: never
            // behind a mongos proxy.
            server.for_tests = false;
            Ok(server)
        })
        .await
    }
}

/// `dir`, created if missing, as an absolute path (the server runs in a
/// directory of its own).
fn prepared(dir: PathBuf) -> Result<PathBuf, HarnessError> {
    let cannot = |e: std::io::Error| {
        HarnessError::other(format!(
            "seqid-harness: cannot use {} as the data directory: {e}",
            dir.display()
        ))
    };
    std::fs::create_dir_all(&dir).map_err(cannot)?;
    std::path::absolute(&dir).map_err(cannot)
}

/// Runs `start` on tokio's blocking pool: it waits for a server to install and
/// answer.
async fn start_blocking(
    start: impl FnOnce() -> Result<Server, HarnessError> + Send + 'static,
) -> Result<TestServer, HarnessError> {
    let server = tokio::task::spawn_blocking(start).await.map_err(|e| {
        HarnessError::other(format!("seqid-harness: starting the server panicked: {e}"))
    })??;
    Ok(TestServer {
        server: Arc::new(server),
    })
}
