//! [`FaultProxy`]: a TCP proxy between a driver and the server that loses
//! requests and replies on demand, as a flaky network does.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mongodb::bson::{Bson, Document, RawDocument, doc};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::HarnessError;

/// `OP_MSG`, the opcode of every command a current driver sends.
const OP_MSG: i32 = 2013;
/// `OP_REPLY`, the server's answer to a legacy `OP_QUERY`: the driver's first
/// handshake (`isMaster`) may still be sent that way.
const OP_REPLY: i32 = 1;
/// Where an `OP_REPLY`'s first document starts: the header, `responseFlags`,
/// `cursorID`, `startingFrom` and `numberReturned`.
const OP_REPLY_DOCUMENTS: usize = 36;
/// The fields of a replica set member's `hello` reply that a mongos never
/// sends: with any of them the driver would not take the server for a mongos
/// (`setName`, `isreplicaset`), or would try to discover the set's members.
const REPLICA_SET_HELLO_FIELDS: [&str; 14] = [
    "setName",
    "setVersion",
    "hosts",
    "passives",
    "arbiters",
    "primary",
    "me",
    "secondary",
    "electionId",
    "lastWrite",
    "isreplicaset",
    "tags",
    "arbiterOnly",
    "hidden",
];
/// `OP_MSG` flag bit: a CRC-32C checksum follows the sections.
const CHECKSUM_PRESENT: u32 = 1 << 0;
/// `OP_MSG` flag bit: the sender sends another message without waiting.
const MORE_TO_COME: u32 = 1 << 1;
/// Larger messages are treated as garbage and end the connection (the
/// server's own limit is 48 MB).
const MAX_MESSAGE_LEN: usize = 64 << 20;
/// How long a late delivery waits for the server's reply before giving up.
const LATE_REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// Pause after a failed `accept` (e.g. out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(20);
/// The port of a `mongodb://` host without one.
const DEFAULT_PORT: u16 = 27017;

/// The kinds of fault a [`FaultProxy`] injects, for [`FaultProxy::fired_of`].
///
/// ```no_run
/// # async fn f(proxy: &seqid_harness::FaultProxy) {
/// use seqid_harness::Fault;
/// proxy.lose_reply("insert", Some("c"), 1);
/// // ... an insert_one through the proxy fails ...
/// assert_eq!(proxy.fired_of(Fault::LoseReply), 1);
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// [`FaultProxy::lose_reply`]: executed, but the reply was lost.
    LoseReply,
    /// [`FaultProxy::deliver_late`]: delivered after the client gave up.
    DeliverLate,
    /// [`FaultProxy::cut_before_request`]: never delivered.
    CutBeforeRequest,
}

impl Fault {
    fn index(self) -> usize {
        match self {
            Fault::LoseReply => 0,
            Fault::DeliverLate => 1,
            Fault::CutBeforeRequest => 2,
        }
    }
}

/// What a rule does to a matching request.
#[derive(Clone, Copy, Debug)]
enum Action {
    LoseReply,
    DeliverLate(Duration),
    CutBeforeRequest,
}

impl Action {
    fn fault(self) -> Fault {
        match self {
            Action::LoseReply => Fault::LoseReply,
            Action::DeliverLate(_) => Fault::DeliverLate,
            Action::CutBeforeRequest => Fault::CutBeforeRequest,
        }
    }
}

/// An armed rule: `action` for the next `remaining` matching requests.
#[derive(Debug)]
struct Rule {
    command: String,
    collection: Option<String>,
    remaining: usize,
    action: Action,
}

/// State shared by the proxy handle and its tasks.
struct Shared {
    rules: Mutex<Vec<Rule>>,
    fired: [AtomicUsize; 3],
    accepted: AtomicUsize,
    open: AtomicUsize,
    late_delivered: AtomicUsize,
    /// Requests seen, by lower-cased command name.
    requests: Mutex<HashMap<String, usize>>,
    paused: watch::Sender<bool>,
    /// [`FaultProxy::present_as_mongos`].
    mongos: AtomicBool,
    /// The `config.collections` documents served while presenting as a
    /// mongos, by namespace.
    sharded: Mutex<BTreeMap<String, Document>>,
    /// `config.collections` reads answered by the proxy.
    config_reads: AtomicUsize,
}

/// Locks `mutex`, ignoring poisoning (the data stays consistent: every
/// critical section here is a few field updates that cannot panic halfway).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    /// The action for a request of `command` on `target`, consuming one
    /// `times` of the first armed rule that matches.
    /// Counts a request and takes the first rule it matches, if any, in one step
    /// under the rules' lock: whoever sees the rules (`armed`) or the count after it
    /// sees both, so a rule armed once a request was counted cannot catch that request.
    fn admit(&self, command: &str, target: Option<&str>) -> Option<Action> {
        let mut rules = lock(&self.rules);
        *lock(&self.requests)
            .entry(command.to_ascii_lowercase())
            .or_default() += 1;
        let i = rules.iter().position(|rule| {
            rule.command.eq_ignore_ascii_case(command)
                && rule
                    .collection
                    .as_deref()
                    .is_none_or(|wanted| Some(wanted) == target)
        })?;
        let action = rules[i].action;
        rules[i].remaining -= 1;
        if rules[i].remaining == 0 {
            rules.remove(i);
        }
        self.fired[action.fault().index()].fetch_add(1, Ordering::SeqCst);
        Some(action)
    }

    /// The proxy's own answer to a `config.collections` read: the configured
    /// documents that `read` selects, as a whole cursor.
    fn answer_config_read(&self, read: &ConfigRead) -> Document {
        let sharded = lock(&self.sharded);
        let mut batch: Vec<Bson> = sharded
            .values()
            .filter(|entry| read.selects(entry))
            .map(|entry| Bson::Document(entry.clone()))
            .collect();
        if let Some(limit) = read.limit {
            batch.truncate(limit);
        }
        self.config_reads.fetch_add(1, Ordering::SeqCst);
        doc! {
            "cursor": { "firstBatch": batch, "id": 0_i64, "ns": "config.collections" },
            "ok": 1.0,
        }
    }

    /// Returns at once unless the proxy is paused, else when it is resumed.
    async fn unpaused(&self) {
        let mut paused = self.paused.subscribe();
        // The sender lives in `self`, so this only ends by a resume.
        let _ = paused.wait_for(|paused| !*paused).await;
    }
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
///   network blip.
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
        let shared = Arc::new(Shared {
            rules: Mutex::new(Vec::new()),
            fired: Default::default(),
            accepted: AtomicUsize::new(0),
            open: AtomicUsize::new(0),
            late_delivered: AtomicUsize::new(0),
            requests: Mutex::new(HashMap::new()),
            paused: watch::Sender::new(false),
            mongos: AtomicBool::new(false),
            sharded: Mutex::new(BTreeMap::new()),
            config_reads: AtomicUsize::new(0),
        });
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

    /// Loses the reply to the next `times` requests of `command` (e.g.
    /// `"insert"`, `"findAndModify"`; case-insensitive) on `collection` (any,
    /// if `None`): the request is forwarded, and when the server's reply
    /// arrives it is discarded and the client's connection closed. The client
    /// sees a network error although the server executed the command.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.lose_reply("findAndModify", Some("counters"), 1);
    /// # }
    /// ```
    pub fn lose_reply(&self, command: &str, collection: Option<&str>, times: usize) {
        self.arm(command, collection, times, Action::LoseReply);
    }

    /// Delivers the next `times` requests of `command` on `collection` (any,
    /// if `None`) late: the client's connection is closed at once, before any
    /// reply, and the request is sent to the server `delay` later on the same
    /// upstream connection (or a fresh one if that one broke meanwhile). Its
    /// reply is discarded; [`late_deliveries`](FaultProxy::late_deliveries)
    /// counts the replies received. A late delivery still waiting when the
    /// proxy is dropped is abandoned; [`sever_all`](FaultProxy::sever_all)
    /// does not cancel it.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// use std::time::Duration;
    /// proxy.deliver_late("insert", None, 1, Duration::from_millis(500));
    /// # }
    /// ```
    pub fn deliver_late(
        &self,
        command: &str,
        collection: Option<&str>,
        times: usize,
        delay: Duration,
    ) {
        self.arm(command, collection, times, Action::DeliverLate(delay));
    }

    /// Cuts the connection before the next `times` requests of `command` on
    /// `collection` (any, if `None`): the client's connection is closed and
    /// the request is never forwarded, so the server executes nothing.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.cut_before_request("update", Some("c"), 2);
    /// # }
    /// ```
    pub fn cut_before_request(&self, command: &str, collection: Option<&str>, times: usize) {
        self.arm(command, collection, times, Action::CutBeforeRequest);
    }

    fn arm(&self, command: &str, collection: Option<&str>, times: usize, action: Action) {
        if times == 0 {
            return;
        }
        lock(&self.shared.rules).push(Rule {
            command: command.to_owned(),
            collection: collection.map(str::to_owned),
            remaining: times,
            action,
        });
    }

    /// Disarms every rule that has not fired its `times` yet.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.lose_reply("insert", None, 10);
    /// proxy.disarm_all();
    /// assert_eq!(proxy.armed(), 0);
    /// # }
    /// ```
    pub fn disarm_all(&self) {
        lock(&self.shared.rules).clear();
    }

    /// How many more faults the armed rules will inject (the sum of their
    /// remaining `times`).
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.cut_before_request("insert", None, 2);
    /// assert_eq!(proxy.armed(), 2);
    /// # }
    /// ```
    pub fn armed(&self) -> usize {
        lock(&self.shared.rules).iter().map(|r| r.remaining).sum()
    }

    /// Closes every current connection, client and server side, at once: a
    /// network blip. New connections are accepted as before. The connections
    /// are closed by their tasks, i.e. within moments rather than before this
    /// returns; late deliveries already scheduled still happen.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.sever_all();
    /// # }
    /// ```
    pub fn sever_all(&self) {
        self.events.send_modify(|epoch| *epoch += 1);
    }

    /// Stalls every request, on existing and new connections, until
    /// [`resume`](FaultProxy::resume) (or the proxy is dropped); replies
    /// already on their way still arrive. Requests are matched against the
    /// rules when they are released.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.pause();
    /// // ... operations through the proxy time out ...
    /// proxy.resume();
    /// # }
    /// ```
    pub fn pause(&self) {
        self.shared.paused.send_replace(true);
    }

    /// Ends a [`pause`](FaultProxy::pause): stalled requests are forwarded.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.resume();
    /// # }
    /// ```
    pub fn resume(&self) {
        self.shared.paused.send_replace(false);
    }

    /// How many faults the rules have injected in total.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// assert_eq!(proxy.fired(), 0);
    /// # }
    /// ```
    pub fn fired(&self) -> usize {
        self.shared
            .fired
            .iter()
            .map(|n| n.load(Ordering::SeqCst))
            .sum()
    }

    /// How many faults of one kind the rules have injected.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// assert_eq!(proxy.fired_of(seqid_harness::Fault::DeliverLate), 0);
    /// # }
    /// ```
    pub fn fired_of(&self, fault: Fault) -> usize {
        self.shared.fired[fault.index()].load(Ordering::SeqCst)
    }

    /// How many late deliveries ([`deliver_late`](FaultProxy::deliver_late))
    /// the server has answered so far: after that, the request is known to
    /// have been executed.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// while proxy.late_deliveries() < proxy.fired_of(seqid_harness::Fault::DeliverLate) {
    ///     tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    /// }
    /// # }
    /// ```
    pub fn late_deliveries(&self) -> usize {
        self.shared.late_delivered.load(Ordering::SeqCst)
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

    /// How many requests of `command` (case-insensitive) clients have sent
    /// through the proxy, faulted or not. A request is counted once it has been
    /// matched against the rules (a request stalled by [`pause`](FaultProxy::pause)
    /// when it is released), so a rule armed after the count has grown cannot
    /// catch the requests counted.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// println!("{} inserts", proxy.requests("insert"));
    /// # }
    /// ```
    pub fn requests(&self, command: &str) -> usize {
        lock(&self.shared.requests)
            .get(&command.to_ascii_lowercase())
            .copied()
            .unwrap_or(0)
    }

    /// While `on`, presents the server as a `mongos` (a sharded cluster's
    /// router) to the clients of the proxy; off by default, when everything is
    /// forwarded unchanged. Takes effect for the next message on every
    /// connection: the driver learns of it at its next handshake or
    /// monitoring check, so turn it on before the client connects.
    ///
    /// While on:
    ///
    /// - every reply to `hello` / `isMaster` (recognized by its content, a
    ///   top-level `isWritablePrimary` or `ismaster` field, whether an
    ///   `OP_MSG`, a streamed monitoring reply flagged `moreToCome`, or the
    ///   legacy `OP_REPLY` to a first handshake sent as `OP_QUERY`) gets
    ///   `msg: "isdbgrid"`, and loses the replica-set fields a mongos never
    ///   sends (`setName`, `setVersion`, `hosts`, `passives`, `arbiters`,
    ///   `primary`, `me`, `secondary`, `electionId`, `lastWrite`,
    ///   `isreplicaset`, `tags`, `arbiterOnly`, `hidden`); the rest is kept
    ///   (`isWritablePrimary`, `maxWireVersion`,
    ///   `logicalSessionTimeoutMinutes`, `topologyVersion`, `$clusterTime`,
    ///   ...). A rewritten `OP_MSG` drops its checksum, if it had one (the
    ///   checksum is optional). Compressed replies (`OP_COMPRESSED`) pass
    ///   unchanged: do not enable compression on a client of the proxy.
    /// - a `find` on `config.collections` (`find: "collections"`,
    ///   `$db: "config"`) is answered by the proxy and never forwarded: one
    ///   batch (cursor id 0) of the [`shard_collection`](FaultProxy::shard_collection)
    ///   entries its `filter` selects, in namespace order. The filters
    ///   understood are none or `{}` (all), `{ _id: <ns> }` and
    ///   `{ _id: { $in: [<ns>, ...] } }`; any other filter answers all the
    ///   entries. A positive `limit` is applied; `projection`, `sort` and
    ///   `skip` are ignored. [`config_reads`](FaultProxy::config_reads) counts
    ///   the answers. Such a read is counted by [`requests`](FaultProxy::requests)
    ///   and matched against the rules; one that a rule catches is never
    ///   answered and its connection is closed, whatever the rule (nothing of it
    ///   reaches the server in any case; a `deliver_late` counts as delivered at
    ///   once, so that waiting on [`late_deliveries`](FaultProxy::late_deliveries)
    ///   ends). Not for a read that starts a transaction: the server would never
    ///   see the transaction start.
    ///
    /// Everything else is forwarded as always: CRUD, sessions and transactions
    /// are the server's own.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
    /// use mongodb::bson::doc;
    /// let proxy = seqid_harness::FaultProxy::for_server().await?;
    /// proxy.present_as_mongos(true);
    /// let client = mongodb::Client::with_uri_str(proxy.uri()).await?;
    /// let hello = client.database("admin").run_command(doc! { "hello": 1 }).await?;
    /// assert_eq!(hello.get_str("msg")?, "isdbgrid");
    /// # Ok(()) }
    /// ```
    pub fn present_as_mongos(&self, on: bool) {
        self.shared.mongos.store(on, Ordering::SeqCst);
    }

    /// Whether the proxy presents the server as a mongos:
    /// [`present_as_mongos`](FaultProxy::present_as_mongos).
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// if proxy.presents_as_mongos() {
    ///     println!("the clients of {} see a mongos", proxy.uri());
    /// }
    /// # }
    /// ```
    pub fn presents_as_mongos(&self) -> bool {
        self.shared.mongos.load(Ordering::SeqCst)
    }

    /// Serves `entry` as the `config.collections` document of the namespace
    /// `ns` (`"db.coll"`) while the proxy presents the server as a mongos
    /// ([`present_as_mongos`](FaultProxy::present_as_mongos)), replacing any
    /// entry of `ns` before. `_id: ns` is added if `entry` has no `_id`.
    /// Nothing is sharded on the server: only the proxy's answers to
    /// `config.collections` reads change.
    ///
    /// A real entry looks like `{ _id: "db.coll", lastmodEpoch: ObjectId,
    /// lastmod: Date, timestamp: Timestamp, uuid: Binary, key: { _id: "hashed" },
    /// unique: false, noBalance: false }`; give the fields the code under test
    /// reads.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// use mongodb::bson::doc;
    /// proxy.shard_collection("shop.orders", doc! { "key": { "customer": 1 }, "unique": false });
    /// # }
    /// ```
    pub fn shard_collection(&self, ns: &str, mut entry: Document) {
        if !entry.contains_key("_id") {
            // `_id` first, as in a real entry.
            let mut with_id = doc! { "_id": ns };
            with_id.extend(entry);
            entry = with_id;
        }
        lock(&self.shared.sharded).insert(ns.to_owned(), entry);
    }

    /// Stops serving a `config.collections` document for `ns`
    /// ([`shard_collection`](FaultProxy::shard_collection)); nothing if there
    /// was none.
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// proxy.unshard_collection("shop.orders");
    /// # }
    /// ```
    pub fn unshard_collection(&self, ns: &str) {
        lock(&self.shared.sharded).remove(ns);
    }

    /// How many `config.collections` reads the proxy has answered itself
    /// while presenting the server as a mongos
    /// ([`present_as_mongos`](FaultProxy::present_as_mongos)).
    ///
    /// ```no_run
    /// # async fn f(proxy: &seqid_harness::FaultProxy) {
    /// println!("{} reads of config.collections", proxy.config_reads());
    /// # }
    /// ```
    pub fn config_reads(&self) -> usize {
        self.shared.config_reads.load(Ordering::SeqCst)
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

// ---------------------------------------------------------------------------
// Wire messages

/// One whole wire-protocol message, header included.
struct Message {
    bytes: Vec<u8>,
}

impl Message {
    fn i32_at(&self, at: usize) -> i32 {
        i32_at(&self.bytes, at).unwrap_or_default()
    }

    fn request_id(&self) -> i32 {
        self.i32_at(4)
    }

    fn response_to(&self) -> i32 {
        self.i32_at(8)
    }

    fn op_code(&self) -> i32 {
        self.i32_at(12)
    }

    fn flags(&self) -> u32 {
        self.i32_at(16) as u32
    }

    /// Whether no reply is expected (an `OP_MSG` flagged `moreToCome`).
    fn more_to_come(&self) -> bool {
        self.op_code() == OP_MSG && self.flags() & MORE_TO_COME != 0
    }

    /// Where the body is: the kind-0 section of an `OP_MSG`, or the first
    /// document of an `OP_REPLY`.
    fn body_range(&self) -> Option<Range<usize>> {
        let bytes = &self.bytes;
        if self.op_code() == OP_REPLY {
            let at = OP_REPLY_DOCUMENTS;
            let size = usize::try_from(i32_at(bytes, at)?).ok()?;
            let stop = at.checked_add(size)?;
            return (size >= 5 && stop <= bytes.len()).then_some(at..stop);
        }
        if self.op_code() != OP_MSG {
            return None;
        }
        let mut end = bytes.len();
        if self.flags() & CHECKSUM_PRESENT != 0 {
            end = end.checked_sub(4)?;
        }
        let mut at = 20;
        while at < end {
            let kind = bytes[at];
            at += 1;
            // Both kinds start with an int32 size that counts itself.
            let size = usize::try_from(i32_at(bytes, at)?).ok()?;
            let stop = at.checked_add(size)?;
            if size < 4 || stop > end {
                return None;
            }
            match kind {
                0 => return Some(at..stop),
                1 => at += size,
                _ => return None,
            }
        }
        None
    }

    /// The body (kind-0 section) of an `OP_MSG`, or the first document of an
    /// `OP_REPLY`.
    fn body(&self) -> Option<&RawDocument> {
        RawDocument::from_bytes(&self.bytes[self.body_range()?]).ok()
    }

    /// This reply as a mongos would send it, if it answers `hello` /
    /// `isMaster` (see [`FaultProxy::present_as_mongos`]); `None` for any
    /// other message, which is forwarded as it is.
    fn as_mongos_hello(&self) -> Option<Message> {
        let range = self.body_range()?;
        let body = RawDocument::from_bytes(&self.bytes[range.clone()]).ok()?;
        if !body
            .iter()
            .flatten()
            .any(|(key, _)| key == "isWritablePrimary" || key == "ismaster")
        {
            return None;
        }
        let mut hello = Document::try_from(body).ok()?;
        for field in REPLICA_SET_HELLO_FIELDS {
            hello.remove(field);
        }
        hello.insert("msg", "isdbgrid");
        let hello = mongodb::bson::to_vec(&hello).ok()?;
        let mut end = self.bytes.len();
        let mut bytes = Vec::with_capacity(end + 16);
        bytes.extend_from_slice(&self.bytes[..range.start]);
        bytes.extend_from_slice(&hello);
        if self.op_code() == OP_MSG {
            // The checksum covers the old bytes: drop it rather than compute
            // a CRC-32C (it is optional, and no test client asks for one).
            if self.flags() & CHECKSUM_PRESENT != 0 {
                end -= 4;
                let flags = self.flags() & !CHECKSUM_PRESENT;
                bytes[16..20].copy_from_slice(&flags.to_le_bytes());
            }
            // Sections after the body, if any (a reply has none in practice).
            bytes.extend_from_slice(&self.bytes[range.end..end]);
        }
        let len = i32::try_from(bytes.len()).ok()?;
        bytes[0..4].copy_from_slice(&len.to_le_bytes());
        Some(Message { bytes })
    }

    /// The `config.collections` read this request is, if it is one.
    fn config_read(&self) -> Option<ConfigRead> {
        if self.op_code() != OP_MSG {
            return None;
        }
        let body = self.body()?;
        let (name, value) = body.iter().next()?.ok()?;
        if name != "find"
            || value.as_str() != Some("collections")
            || body.get_str("$db").ok() != Some("config")
        {
            return None;
        }
        let filter = match body.get_document("filter") {
            Ok(filter) => Some(Document::try_from(filter).ok()?),
            Err(_) => None,
        };
        let limit = body
            .get("limit")
            .ok()
            .flatten()
            .and_then(
                |limit| match limit.as_i64().or(limit.as_i32().map(i64::from)) {
                    Some(n) => Some(n),
                    None => limit.as_f64().map(|n| n as i64),
                },
            )
            .map(|n| n.unsigned_abs())
            .filter(|&n| n > 0)
            .and_then(|n| usize::try_from(n).ok());
        Some(ConfigRead { filter, limit })
    }

    /// The command name and, when it names one, the target collection.
    fn command(&self) -> Option<(String, Option<String>)> {
        let body = self.body()?;
        let (name, value) = body.iter().next()?.ok()?;
        let target = match value.as_str() {
            Some(target) => Some(target.to_owned()),
            None if name.eq_ignore_ascii_case("getMore") => {
                body.get_str("collection").ok().map(str::to_owned)
            }
            None => None,
        };
        Some((name.to_owned(), target))
    }
}

fn i32_at(bytes: &[u8], at: usize) -> Option<i32> {
    let four = bytes.get(at..at.checked_add(4)?)?;
    Some(i32::from_le_bytes(four.try_into().ok()?))
}

/// A `find` on `config.collections`, as the proxy understands it.
#[derive(Debug)]
struct ConfigRead {
    filter: Option<Document>,
    /// A positive `limit` (a negative one, a single batch, taken as positive).
    limit: Option<usize>,
}

impl ConfigRead {
    /// Whether the filter selects `entry`: no filter or `{}`, `{ _id: <ns> }`
    /// and `{ _id: { $in: [...] } }` are understood; any other filter selects
    /// everything.
    fn selects(&self, entry: &Document) -> bool {
        let Some(filter) = &self.filter else {
            return true;
        };
        let (Some(wanted), 1) = (filter.get("_id"), filter.len()) else {
            return true;
        };
        let id = entry.get("_id");
        match wanted {
            Bson::Document(op) => match (op.get_array("$in"), op.len()) {
                (Ok(any_of), 1) => any_of.iter().any(|ns| Some(ns) == id),
                _ => true,
            },
            ns => Some(ns) == id,
        }
    }
}

/// An `OP_MSG` reply from the proxy itself to the request `response_to`:
/// flags 0 and one kind-0 section, as the servers answer.
fn op_msg_reply(response_to: i32, body: &Document) -> Vec<u8> {
    /// The proxy's own request ids, apart from the server's (which start low).
    static NEXT_ID: AtomicI32 = AtomicI32::new(1 << 30);
    let body = mongodb::bson::to_vec(body).expect("a BSON document serializes");
    let mut bytes = Vec::with_capacity(21 + body.len());
    bytes.extend_from_slice(&0_i32.to_le_bytes());
    bytes.extend_from_slice(&NEXT_ID.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    bytes.extend_from_slice(&response_to.to_le_bytes());
    bytes.extend_from_slice(&OP_MSG.to_le_bytes());
    bytes.extend_from_slice(&0_u32.to_le_bytes());
    bytes.push(0);
    bytes.extend_from_slice(&body);
    let len = bytes.len() as i32;
    bytes[0..4].copy_from_slice(&len.to_le_bytes());
    bytes
}

/// Reads one whole message; any error (EOF included) ends the connection.
async fn read_message<R: AsyncRead + Unpin>(reader: &mut R) -> io::Result<Message> {
    let mut header = [0u8; 16];
    reader.read_exact(&mut header).await?;
    let len = i32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    let len = usize::try_from(len)
        .ok()
        .filter(|len| (16..=MAX_MESSAGE_LEN).contains(len))
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "bad message length"))?;
    let mut bytes = vec![0u8; len];
    bytes[..16].copy_from_slice(&header);
    reader.read_exact(&mut bytes[16..]).await?;
    Ok(Message { bytes })
}

// ---------------------------------------------------------------------------
// Tasks

/// Returns when the proxy is dropped (`sever_all` does not count).
async fn dropped(events: &mut watch::Receiver<u64>) {
    while events.changed().await.is_ok() {}
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    upstream: SocketAddr,
    events: watch::Receiver<u64>,
) {
    let mut shutdown = events.clone();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = dropped(&mut shutdown) => return,
        };
        match accepted {
            Ok((client, _)) => {
                shared.accepted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(shared.clone(), client, upstream, events.clone()));
            }
            Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
        }
    }
}

/// Counts an open client connection while alive.
struct OpenGuard<'a>(&'a AtomicUsize);

impl<'a> OpenGuard<'a> {
    fn new(open: &'a AtomicUsize) -> Self {
        open.fetch_add(1, Ordering::SeqCst);
        OpenGuard(open)
    }
}

impl Drop for OpenGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A request to send to the server after the client's connection is closed.
struct Late {
    upstream: TcpStream,
    message: Message,
    delay: Duration,
}

/// Serves one client connection, until it or its upstream connection
/// closes, a rule closes it, `sever_all` or the proxy's drop.
async fn serve(
    shared: Arc<Shared>,
    client: TcpStream,
    upstream: SocketAddr,
    mut events: watch::Receiver<u64>,
) {
    // Severs before this connection existed are not for it.
    events.borrow_and_update();
    let late = {
        let _open = OpenGuard::new(&shared.open);
        tokio::select! {
            late = connect_and_relay(&shared, client, upstream) => late,
            // A sever (value changed) or the proxy's drop (sender gone).
            _ = events.changed() => None,
        }
    };
    // The client's connection is closed now.
    if let Some(late) = late {
        tokio::select! {
            () = deliver_late(&shared, late, upstream) => {}
            () = dropped(&mut events) => {}
        }
    }
}

async fn connect_and_relay(
    shared: &Shared,
    mut client: TcpStream,
    upstream: SocketAddr,
) -> Option<Late> {
    let mut server = TcpStream::connect(upstream).await.ok()?;
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (message, delay) = relay(shared, &mut client, &mut server).await?;
    Some(Late {
        upstream: server,
        message,
        delay,
    })
    // `client` is closed here.
}

/// Relays messages both ways until a side closes or a rule ends the
/// connection; returns the request to deliver late, if a rule said so.
async fn relay(
    shared: &Shared,
    client: &mut TcpStream,
    server: &mut TcpStream,
) -> Option<(Message, Duration)> {
    let (mut from_client, to_client) = client.split();
    let (mut from_server, mut to_server) = server.split();
    // Both directions write to the client: the server's replies, and the
    // proxy's own answers to `config.collections` reads.
    let to_client = tokio::sync::Mutex::new(to_client);
    // The requestID whose reply is to be lost.
    let lose: Mutex<Option<i32>> = Mutex::new(None);

    let requests = async {
        loop {
            let request = read_message(&mut from_client).await.ok()?;
            let command = request.command();
            shared.unpaused().await;
            let action = command.and_then(|(name, target)| shared.admit(&name, target.as_deref()));
            if shared.mongos.load(Ordering::SeqCst)
                && let Some(read) = request.config_read()
            {
                match action {
                    None if request.more_to_come() => {}
                    None => {
                        let answer = shared.answer_config_read(&read);
                        let answer = op_msg_reply(request.request_id(), &answer);
                        to_client.lock().await.write_all(&answer).await.ok()?;
                    }
                    Some(Action::DeliverLate(_)) => {
                        // Nothing is ever sent on: delivered at once.
                        shared.late_delivered.fetch_add(1, Ordering::SeqCst);
                        return None;
                    }
                    Some(_) => return None,
                }
                continue;
            }
            match action {
                None => to_server.write_all(&request.bytes).await.ok()?,
                Some(Action::CutBeforeRequest) => return None,
                Some(Action::DeliverLate(delay)) => return Some((request, delay)),
                Some(Action::LoseReply) => {
                    *lock(&lose) = Some(request.request_id());
                    to_server.write_all(&request.bytes).await.ok()?;
                    if request.more_to_come() {
                        // No reply will come: lose the connection instead.
                        return None;
                    }
                }
            }
        }
    };
    let replies = async {
        loop {
            let mut reply = read_message(&mut from_server).await.ok()?;
            if *lock(&lose) == Some(reply.response_to()) {
                return None::<(Message, Duration)>;
            }
            if shared.mongos.load(Ordering::SeqCst)
                && let Some(as_mongos) = reply.as_mongos_hello()
            {
                reply = as_mongos;
            }
            to_client.lock().await.write_all(&reply.bytes).await.ok()?;
        }
    };
    tokio::select! {
        late = requests => late,
        none = replies => none,
    }
}

/// Sends a request `delay` late and waits (bounded) for its reply.
async fn deliver_late(shared: &Shared, late: Late, upstream: SocketAddr) {
    let Late {
        upstream: mut server,
        message,
        delay,
    } = late;
    tokio::time::sleep(delay).await;
    if server.write_all(&message.bytes).await.is_err() {
        let Ok(fresh) = TcpStream::connect(upstream).await else {
            return;
        };
        server = fresh;
        let _ = server.set_nodelay(true);
        if server.write_all(&message.bytes).await.is_err() {
            return;
        }
    }
    if !message.more_to_come() {
        let reply = async {
            loop {
                match read_message(&mut server).await {
                    Ok(reply) if reply.response_to() == message.request_id() => return true,
                    Ok(_) => {}
                    Err(_) => return false,
                }
            }
        };
        if !matches!(
            tokio::time::timeout(LATE_REPLY_TIMEOUT, reply).await,
            Ok(true)
        ) {
            return;
        }
    }
    shared.late_delivered.fetch_add(1, Ordering::SeqCst);
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

    #[test]
    fn op_msg_command_and_target() {
        use mongodb::bson::{doc, to_vec};
        let body = to_vec(&doc! { "insert": "c", "$db": "d" }).unwrap();
        let docs = to_vec(&doc! { "_id": 1 }).unwrap();
        let mut bytes = vec![0u8; 16];
        bytes.extend_from_slice(&0u32.to_le_bytes());
        // A kind-1 section first, to check that sections are walked.
        bytes.push(1);
        let size = 4 + "documents\0".len() + docs.len();
        bytes.extend_from_slice(&(size as i32).to_le_bytes());
        bytes.extend_from_slice(b"documents\0");
        bytes.extend_from_slice(&docs);
        bytes.push(0);
        bytes.extend_from_slice(&body);
        let len = bytes.len() as i32;
        bytes[0..4].copy_from_slice(&len.to_le_bytes());
        bytes[12..16].copy_from_slice(&OP_MSG.to_le_bytes());
        let message = Message { bytes };
        assert_eq!(
            message.command(),
            Some(("insert".to_owned(), Some("c".to_owned())))
        );
        assert!(!message.more_to_come());
    }

    /// A message of `op_code` with `prefix` after the header, then `docs`.
    fn message(op_code: i32, prefix: &[u8], docs: &[&Document]) -> Message {
        let mut bytes = vec![0u8; 16];
        bytes.extend_from_slice(prefix);
        for doc in docs {
            bytes.extend_from_slice(&mongodb::bson::to_vec(doc).unwrap());
        }
        let len = bytes.len() as i32;
        bytes[0..4].copy_from_slice(&len.to_le_bytes());
        bytes[4..8].copy_from_slice(&7_i32.to_le_bytes());
        bytes[8..12].copy_from_slice(&5_i32.to_le_bytes());
        bytes[12..16].copy_from_slice(&op_code.to_le_bytes());
        Message { bytes }
    }

    fn replica_set_hello() -> Document {
        use mongodb::bson::oid::ObjectId;
        doc! {
            "helloOk": true,
            "ismaster": true,
            "topologyVersion": { "processId": ObjectId::new(), "counter": 0_i64 },
            "hosts": ["127.0.0.1:5"],
            "setName": "rs0",
            "setVersion": 1,
            "secondary": false,
            "primary": "127.0.0.1:5",
            "me": "127.0.0.1:5",
            "electionId": ObjectId::new(),
            "lastWrite": { "opTime": { "ts": 1_i64 } },
            "isreplicaset": false,
            "maxWireVersion": 21,
            "logicalSessionTimeoutMinutes": 30,
            "ok": 1.0,
        }
    }

    fn as_mongos_checks(rewritten: &Message, original: &Message, at: usize) {
        assert_eq!(
            rewritten.i32_at(0) as usize,
            rewritten.bytes.len(),
            "length fixed"
        );
        assert_eq!(rewritten.request_id(), original.request_id());
        assert_eq!(rewritten.response_to(), original.response_to());
        assert_eq!(rewritten.op_code(), original.op_code());
        assert_eq!(&rewritten.bytes[16..at], &original.bytes[16..at]);
        let hello = Document::try_from(rewritten.body().unwrap()).unwrap();
        assert_eq!(hello.get_str("msg"), Ok("isdbgrid"));
        for field in REPLICA_SET_HELLO_FIELDS {
            assert!(!hello.contains_key(field), "{field} in {hello}");
        }
        assert!(hello.contains_key("ismaster") || hello.contains_key("isWritablePrimary"));
        for kept in [
            "helloOk",
            "topologyVersion",
            "maxWireVersion",
            "logicalSessionTimeoutMinutes",
            "ok",
        ] {
            assert!(hello.contains_key(kept), "{kept} missing from {hello}");
        }
    }

    #[test]
    fn as_mongos_rewrites_an_op_reply() {
        // responseFlags, cursorID, startingFrom, numberReturned.
        let mut prefix = Vec::new();
        prefix.extend_from_slice(&8_i32.to_le_bytes());
        prefix.extend_from_slice(&0_i64.to_le_bytes());
        prefix.extend_from_slice(&0_i32.to_le_bytes());
        prefix.extend_from_slice(&1_i32.to_le_bytes());
        let original = message(OP_REPLY, &prefix, &[&replica_set_hello()]);
        let rewritten = original.as_mongos_hello().unwrap();
        as_mongos_checks(&rewritten, &original, OP_REPLY_DOCUMENTS);
        assert!(rewritten.bytes.len() < original.bytes.len());
    }

    #[test]
    fn as_mongos_rewrites_a_streamed_op_msg_and_drops_its_checksum() {
        let flags = MORE_TO_COME | CHECKSUM_PRESENT;
        let mut prefix = flags.to_le_bytes().to_vec();
        prefix.push(0);
        let mut hello = replica_set_hello();
        hello.remove("ismaster");
        hello.insert("isWritablePrimary", true);
        let mut original = message(OP_MSG, &prefix, &[&hello]);
        original.bytes.extend_from_slice(&[1, 2, 3, 4]);
        let len = original.bytes.len() as i32;
        original.bytes[0..4].copy_from_slice(&len.to_le_bytes());
        let rewritten = original.as_mongos_hello().unwrap();
        assert_eq!(rewritten.flags(), MORE_TO_COME);
        assert!(rewritten.more_to_come());
        // The kind-0 section byte is kept.
        assert_eq!(rewritten.bytes[20], 0);
        let body = Document::try_from(rewritten.body().unwrap()).unwrap();
        assert_eq!(body.get_bool("isWritablePrimary"), Ok(true));
        assert_eq!(
            rewritten.body_range().unwrap().end,
            rewritten.bytes.len(),
            "no checksum left"
        );
        as_mongos_checks(&rewritten, &original, 16);
    }

    #[test]
    fn as_mongos_leaves_other_replies_alone() {
        let mut prefix = 0u32.to_le_bytes().to_vec();
        prefix.push(0);
        let reply = message(OP_MSG, &prefix, &[&doc! { "n": 1, "ok": 1.0 }]);
        assert!(reply.as_mongos_hello().is_none());
        // A failed hello carries no role: nothing to present.
        let failed = message(OP_MSG, &prefix, &[&doc! { "ok": 0.0, "errmsg": "x" }]);
        assert!(failed.as_mongos_hello().is_none());
    }

    #[test]
    fn as_mongos_config_collections_reads_and_their_filters() {
        let read = |body: Document| {
            let mut prefix = 0u32.to_le_bytes().to_vec();
            prefix.push(0);
            message(OP_MSG, &prefix, &[&body]).config_read()
        };
        assert!(read(doc! { "find": "collections", "$db": "other" }).is_none());
        assert!(read(doc! { "find": "chunks", "$db": "config" }).is_none());
        assert!(read(doc! { "aggregate": "collections", "$db": "config" }).is_none());

        let entries = [doc! { "_id": "a.x" }, doc! { "_id": "b.y" }];
        let selected = |body: Document| {
            let read = read(body).unwrap();
            entries
                .iter()
                .filter(|e| read.selects(e))
                .map(|e| e.get_str("_id").unwrap())
                .collect::<Vec<_>>()
        };
        let all = vec!["a.x", "b.y"];
        assert_eq!(
            selected(doc! { "find": "collections", "$db": "config" }),
            all
        );
        assert_eq!(
            selected(doc! { "find": "collections", "filter": {}, "$db": "config" }),
            all
        );
        assert_eq!(
            selected(doc! { "find": "collections", "filter": { "_id": "b.y" }, "$db": "config" }),
            vec!["b.y"]
        );
        assert_eq!(
            selected(doc! {
                "find": "collections",
                "filter": { "_id": { "$in": ["a.x", "c.z"] } },
                "$db": "config",
            }),
            vec!["a.x"]
        );
        // Filters not understood select everything.
        assert_eq!(
            selected(doc! { "find": "collections", "filter": { "key": 1 }, "$db": "config" }),
            all
        );
        let limited = read(doc! { "find": "collections", "limit": 1_i64, "$db": "config" });
        assert_eq!(limited.unwrap().limit, Some(1));
    }
}
