//! [`TestDb`]: a uniquely named database per test, dropped afterwards.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mongodb::options::ClientOptions;
use mongodb::{Client, Database};

use crate::runtime::on_own_runtime;
use crate::{Server, client_of, emptied, off_the_runtime, server_for_a_test_db};

/// The test databases not dropped yet, by name, with the URI of the server that
/// holds each: see [`server_uri_for`](crate::server_uri_for).
static LIVE: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

fn live() -> MutexGuard<'static, BTreeMap<String, String>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The URI of the server holding the live test database `name`.
pub(crate) fn server_of(name: &str) -> Option<String> {
    live().get(name).cloned()
}

/// A uniquely named database for one test, dropped again when this is dropped.
///
/// Derefs to [`Database`]; [`client`](TestDb::client) is the client it was made
/// with (e.g. carrying a [`CommandCounter`](crate::CommandCounter) when made by
/// [`test_db_with`]).
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
    /// The server holding the database, kept running while this lives.
    server: Arc<Server>,
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

    /// The connection string of the server holding the database: the one to
    /// hand to worker processes and to other clients of the test's own. With
    /// `SEQID_TEST_AS_MONGOS`, that of the proxy presenting the server as a
    /// mongos ([`mongos_proxy_for`]).
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
    /// let db = seqid_harness::test_db("x").await;
    /// let other = mongodb::Client::with_uri_str(db.uri()).await?;
    /// let same = other.database(db.name());
    /// # Ok(()) }
    /// ```
    pub fn uri(&self) -> &str {
        self.server.client_uri_or_own()
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
        live().remove(&self.name);
        let (uri, name) = (self.server.uri.clone(), self.name.clone());
        let outcome = on_own_runtime(async move {
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
        });
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

/// The proxy through which the harness's clients reach the server of `db`,
/// presenting it as a mongos, when `SEQID_TEST_AS_MONGOS` is on
/// ([`as_mongos`](crate::as_mongos)); `None` otherwise.
///
/// The proxy serves every test database of that server (the process's server
/// is shared by the tests of a process): configure only the namespaces of
/// `db` on it, e.g. with [`shard_collection`](crate::FaultProxy::shard_collection),
/// and undo that before `db` is dropped if a later test may reuse its name's
/// collections (names are unique per process, so they cannot).
///
/// ```no_run
/// # async fn f() {
/// use mongodb::bson::doc;
/// let db = seqid_harness::test_db("sharded").await;
/// if let Some(proxy) = seqid_harness::mongos_proxy_for(&db) {
///     let ns = format!("{}.orders", db.name());
///     proxy.shard_collection(&ns, doc! { "key": { "_id": "hashed" }, "unique": false });
/// }
/// # }
/// ```
pub fn mongos_proxy_for(db: &TestDb) -> Option<&crate::FaultProxy> {
    db.server.mongos_proxy()
}

/// A fresh, empty, uniquely named database for a test.
///
/// The first [`DATABASES_PER_SERVER`](crate::DATABASES_PER_SERVER) go on this
/// process's server, each as many more on a fresh server of the same kind (a
/// server serving a whole test crate slows down: SecantusDB keeps every
/// retryable write's record for 30 minutes), which stops once the last of them
/// is dropped; a `MONGODB_URI` server is never replaced.
/// Reach the database's own server through [`TestDb::uri`] (for worker
/// processes and other clients) and [`FaultProxy::for_test_db`](crate::FaultProxy::for_test_db).
///
/// The name is `label` (reduced to ASCII letters, digits, `_` and `-`), the
/// process id and a per-process counter, at most 63 bytes. Any leftover
/// database of that name is dropped first. Panics with the
/// [`HarnessError`](crate::HarnessError) message when no server can be had:
/// tests fail, they never skip.
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
/// e.g. to count commands with a [`CommandCounter`](crate::CommandCounter).
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
    let server = off_the_runtime(server_for_a_test_db)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    test_db_on(server, label, configure).await
}

/// A fresh, empty, uniquely named database on `server`, which lives at least
/// as long as the database: see [`test_db_with`].
pub(crate) async fn test_db_on(
    server: Arc<Server>,
    label: &str,
    configure: impl FnOnce(&mut ClientOptions),
) -> TestDb {
    // Through the mongos proxy with `SEQID_TEST_AS_MONGOS`; the database is
    // emptied, and dropped in the end, directly: those are not the test's.
    let uri = server.client_uri().unwrap_or_else(|e| panic!("{e}"));
    let client = client_of(uri, configure)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let name = unique_db_name(label);
    // Drop and recreate through a plain client so that a counting handler
    // attached by `configure` does not see these commands.
    let plain = client_of(&server.uri, |_| {})
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    if let Err(e) = emptied(&plain, &name, &server.kind).await {
        panic!("{e}");
    }
    live().insert(name.clone(), uri.to_owned());
    let db = client.database(&name);
    TestDb {
        client,
        db,
        name,
        server,
    }
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
}
