//! [`FaultProxy`]: a TCP proxy between a driver and the server that loses
//! requests and replies on demand, as a flaky network does.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mongodb::bson::RawDocument;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::HarnessError;

/// `OP_MSG`, the opcode of every command a current driver sends.
const OP_MSG: i32 = 2013;
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
fn addr_of_uri(uri: &str) -> io::Result<SocketAddr> {
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

    /// The body (kind-0 section) of an `OP_MSG`.
    fn body(&self) -> Option<&RawDocument> {
        if self.op_code() != OP_MSG {
            return None;
        }
        let bytes = &self.bytes;
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
            let section = &bytes[at..stop];
            match kind {
                0 => return RawDocument::from_bytes(section).ok(),
                1 => at += size,
                _ => return None,
            }
        }
        None
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
    let (mut from_client, mut to_client) = client.split();
    let (mut from_server, mut to_server) = server.split();
    // The requestID whose reply is to be lost.
    let lose: Mutex<Option<i32>> = Mutex::new(None);

    let requests = async {
        loop {
            let request = read_message(&mut from_client).await.ok()?;
            let command = request.command();
            shared.unpaused().await;
            let action = command.and_then(|(name, target)| shared.admit(&name, target.as_deref()));
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
            let reply = read_message(&mut from_server).await.ok()?;
            if *lock(&lose) == Some(reply.response_to()) {
                return None::<(Message, Duration)>;
            }
            to_client.write_all(&reply.bytes).await.ok()?;
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
}
