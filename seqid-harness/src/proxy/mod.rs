//! The [`FaultProxy`] handle: starting a proxy, where it listens and what it
//! relays to, its connections counted, and its end.
//!
//! The proxy sits between a driver and the server and loses requests and
//! replies on demand, as a flaky network does. Its other jobs, one a file:
//! [`relay`] runs the connections, [`faults`] arms and counts the faults,
//! [`mongos`] presents the server as a mongos, [`latency`] delays every message
//! as a far network does, [`wire`] reads and writes the messages.

mod faults;
mod latency;
mod mongos;
mod relay;
mod wire;

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::HarnessError;

pub use faults::Fault;
use relay::accept_loop;

/// The port of a `mongodb://` host without one.
const DEFAULT_PORT: u16 = 27017;

/// State shared by the proxy handle and its tasks.
#[derive(Default)]
struct Shared {
    faults: faults::Faults,
    mongos: mongos::Mongos,
    latency: latency::Latency,
    accepted: AtomicUsize,
    open: AtomicUsize,
}

/// Locks `mutex`, ignoring poisoning (the data stays consistent: every
/// critical section here is a few field updates that cannot panic halfway).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A TCP proxy in front of a MongoDB-compatible server that loses requests
/// and replies on demand, as a flaky network does, for fault-injection tests.
///
/// Point a driver at [`uri`](FaultProxy::uri) instead of the server. Every
/// client connection gets its own upstream connection, and the proxy relays
/// whole wire-protocol messages both ways. It reads the command name and
/// target collection of each `OP_MSG` request (the first key of its body and
/// that key's value, e.g. `insert: "c"`; for `getMore`, its `collection`
/// field) and checks it against the armed rules:
///
/// - [`lose_reply`](FaultProxy::lose_reply): the server executes the command,
///   its reply is discarded and the client's connection closed: a lost
///   acknowledgement;
/// - [`deliver_late`](FaultProxy::deliver_late): the client's connection is
///   closed at once and the request reaches the server only later: a request
///   still in flight after the client gave up;
/// - [`cut_before_request`](FaultProxy::cut_before_request): the client's
///   connection is closed and the request never reaches the server;
/// - [`sever_all`](FaultProxy::sever_all) closes every connection at once: a
///   network blip;
/// - [`set_latency`](FaultProxy::set_latency) delays every message, each way: a
///   database far from its client.
///
/// Rules are armed and counted at run time through `&self`, from any thread;
/// a rule applies to the next `times` matching requests on any connection,
/// in the order the proxy reads them. Requests that match no rule, and
/// everything the server sends, pass through unchanged. The driver's own
/// connections (handshake, monitoring with `hello`, streaming `hello` replies
/// flagged `moreToCome`) go through the proxy too: they are never touched
/// unless a rule names their command, but [`sever_all`](FaultProxy::sever_all)
/// closes them as well.
///
/// Dropping the proxy stops its listener and ends every connection and
/// pending late delivery. Its tasks run on the tokio runtime that was current
/// in [`start`](FaultProxy::start), so keep the proxy within that runtime
/// (e.g. one `#[tokio::test]`).
///
/// [`present_as_mongos`](FaultProxy::present_as_mongos) makes the server look
/// like a sharded cluster's router to the driver, with the `config.collections`
/// entries of [`shard_collection`](FaultProxy::shard_collection): for testing
/// code that behaves differently on a sharded cluster without one.
///
/// The proxy forwards bytes, nothing else: a server that needs TLS or
/// credentials (a `MONGODB_URI` with them) cannot be used through
/// [`uri`](FaultProxy::uri) as is.
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// use mongodb::bson::{Document, doc};
/// use mongodb::options::ClientOptions;
/// use seqid_harness::FaultProxy;
///
/// let proxy = FaultProxy::for_server().await?;
/// let mut options = ClientOptions::parse(proxy.uri()).await?;
/// options.retry_writes = Some(false);
/// let client = mongodb::Client::with_options(options)?;
/// let coll = client.database("db").collection::<Document>("c");
///
/// proxy.lose_reply("insert", Some("c"), 1);
/// let err = coll.insert_one(doc! { "_id": 1 }).await.unwrap_err();
/// // The client saw a network error, but the document was stored.
/// assert_eq!(proxy.fired(), 1);
/// assert!(coll.find_one(doc! { "_id": 1 }).await?.is_some());
/// # Ok(()) }
/// ```
pub struct FaultProxy {
    addr: SocketAddr,
    upstream: SocketAddr,
    shared: Arc<Shared>,
    /// Bumped by `sever_all`; dropping it (with the proxy) ends every task.
    events: watch::Sender<u64>,
    accept: JoinHandle<()>,
}

impl fmt::Debug for FaultProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultProxy")
            .field("addr", &self.addr)
            .field("upstream", &self.upstream)
            .field("armed", &self.armed())
            .field("fired", &self.fired())
            .field("connections_accepted", &self.connections_accepted())
            .finish_non_exhaustive()
    }
}

impl FaultProxy {
    /// Starts a proxy on a free port of `127.0.0.1` in front of the server at
    /// `upstream`, with no rules armed.
    ///
    /// Must be called within a tokio runtime, which runs the proxy's tasks.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
    /// let proxy = seqid_harness::FaultProxy::start(seqid_harness::server_addr()?).await?;
    /// println!("proxy for {} at {}", proxy.upstream(), proxy.addr());
    /// # Ok(()) }
    /// ```
    pub async fn start(upstream: SocketAddr) -> io::Result<FaultProxy> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let (events, events_rx) = watch::channel(0);
        let accept = tokio::spawn(accept_loop(listener, shared.clone(), upstream, events_rx));
        Ok(FaultProxy {
            addr,
            upstream,
            shared,
            events,
            accept,
        })
    }

    /// Starts a proxy in front of this process's test server (see
    /// [`server_addr`]), starting that server on first use without blocking
    /// the runtime.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), seqid_harness::HarnessError> {
    /// let proxy = seqid_harness::FaultProxy::for_server().await?;
    /// let client = mongodb::Client::with_uri_str(proxy.uri()).await.unwrap();
    /// # Ok(()) }
    /// ```
    pub async fn for_server() -> Result<FaultProxy, HarnessError> {
        FaultProxy::in_front_of(&crate::server_uri_nonblocking().await?).await
    }

    /// Starts a proxy in front of the server holding the test database `db`
    /// (servers are replaced as test databases accumulate: see
    /// [`server_uri_for`](crate::server_uri_for)).
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), seqid_harness::HarnessError> {
    /// let test = seqid_harness::test_db("proxied").await;
    /// let proxy = seqid_harness::FaultProxy::for_test_db(&test).await?;
    /// let client = mongodb::Client::with_uri_str(proxy.uri()).await.unwrap();
    /// let db = client.database(test.name());
    /// # Ok(()) }
    /// ```
    pub async fn for_test_db(db: &crate::TestDb) -> Result<FaultProxy, HarnessError> {
        FaultProxy::in_front_of(db.uri()).await
    }

    async fn in_front_of(uri: &str) -> Result<FaultProxy, HarnessError> {
        let upstream = addr_of_uri(uri).map_err(|e| {
            HarnessError::other(format!("seqid-harness: cannot proxy the test server: {e}"))
        })?;
        FaultProxy::start(upstream).await.map_err(|e| {
            HarnessError::other(format!("seqid-harness: cannot start a fault proxy: {e}"))
        })
    }

    /// The address the proxy listens on (`127.0.0.1`, a free port).
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// assert!(proxy.addr().ip().is_loopback());
    /// # }
    /// ```
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server's address, as given to [`start`](FaultProxy::start).
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// println!("relaying to {}", proxy.upstream());
    /// # }
    /// ```
    pub fn upstream(&self) -> SocketAddr {
        self.upstream
    }

    /// A connection string for the proxy:
    /// `mongodb://127.0.0.1:PORT/?directConnection=true`. Add options through
    /// [`ClientOptions`](mongodb::options::ClientOptions) after parsing it.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) -> mongodb::error::Result<()> {
    /// use std::time::Duration;
    /// let mut options = mongodb::options::ClientOptions::parse(proxy.uri()).await?;
    /// options.retry_writes = Some(false);
    /// options.server_selection_timeout = Some(Duration::from_secs(5));
    /// let client = mongodb::Client::with_options(options)?;
    /// # Ok(()) }
    /// ```
    pub fn uri(&self) -> String {
        format!("mongodb://{}/?directConnection=true", self.addr)
    }

    /// How many client connections the proxy has accepted (the driver's
    /// monitoring connections included).
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// println!("{} connections", proxy.connections_accepted());
    /// # }
    /// ```
    pub fn connections_accepted(&self) -> usize {
        self.shared.accepted.load(Ordering::SeqCst)
    }

    /// How many client connections are open right now.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// println!("{} open", proxy.open_connections());
    /// # }
    /// ```
    pub fn open_connections(&self) -> usize {
        self.shared.open.load(Ordering::SeqCst)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.accept.abort();
        // `self.events` is dropped next, which ends every connection task.
    }
}

/// The address of this process's test server (the first host of
/// [`server_uri`](crate::server_uri)), to put a [`FaultProxy`] in front of.
/// Starts the server on first use, blocking meanwhile (in async code prefer
/// [`FaultProxy::for_server`]).
///
/// ```no_run
/// let addr = seqid_harness::server_addr()?;
/// println!("test server at {addr}");
/// # Ok::<(), seqid_harness::HarnessError>(())
/// ```
pub fn server_addr() -> Result<SocketAddr, HarnessError> {
    let uri = crate::server_uri()?;
    addr_of_uri(&uri).map_err(|e| {
        HarnessError::other(format!("seqid-harness: no address in the server URI: {e}"))
    })
}

/// The first host of a `mongodb://` URI, resolved. Error messages never
/// contain the URI (it may hold credentials).
pub(crate) fn addr_of_uri(uri: &str) -> io::Result<SocketAddr> {
    let invalid = |what: &str| io::Error::new(io::ErrorKind::InvalidInput, what.to_owned());
    let rest = uri
        .strip_prefix("mongodb://")
        .ok_or_else(|| invalid("not a mongodb:// URI (mongodb+srv:// is not supported)"))?;
    let hosts = rest.split(['/', '?']).next().unwrap_or_default();
    let hosts = hosts.rsplit_once('@').map_or(hosts, |(_, hosts)| hosts);
    let host = hosts
        .split(',')
        .next()
        .filter(|host| !host.is_empty())
        .ok_or_else(|| invalid("no host in the URI"))?;
    let has_port = match host.strip_prefix('[') {
        Some(v6) => v6.contains("]:"),
        None => host.contains(':'),
    };
    let host = if has_port {
        host.to_owned()
    } else {
        format!("{host}:{DEFAULT_PORT}")
    };
    host.to_socket_addrs()?
        .next()
        .ok_or_else(|| invalid("the URI's host resolves to no address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addr_of_uri_takes_the_first_host() {
        let addr = |uri: &str| addr_of_uri(uri).unwrap().to_string();
        assert_eq!(
            addr("mongodb://127.0.0.1:4000/?directConnection=true"),
            "127.0.0.1:4000"
        );
        assert_eq!(addr("mongodb://u:p@127.0.0.1:5,h:6/db"), "127.0.0.1:5");
        assert_eq!(addr("mongodb://127.0.0.1"), "127.0.0.1:27017");
        assert_eq!(addr("mongodb://[::1]:7/"), "[::1]:7");
        assert!(addr_of_uri("mongodb+srv://x.example/").is_err());
        assert!(addr_of_uri("mongodb:///").is_err());
    }
}
