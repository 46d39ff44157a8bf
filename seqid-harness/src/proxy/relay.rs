//! The [`FaultProxy`](super::FaultProxy)'s tasks: accepting client
//! connections and relaying whole messages between each and an upstream
//! connection of its own, doing to them what the armed faults and the mongos
//! presentation say, after the delay the latency sets, and delivering late what a
//! rule holds back.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;

use super::faults::Action;
use super::latency::Way;
use super::wire::{Message, op_msg_reply, read_message};
use super::{Shared, lock};

/// How long a late delivery waits for the server's reply before giving up.
const LATE_REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// Pause after a failed `accept` (e.g. out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(20);

/// Returns when the proxy is dropped (`sever_all` does not count).
async fn dropped(events: &mut watch::Receiver<u64>) {
    while events.changed().await.is_ok() {}
}

pub(super) async fn accept_loop(
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
            let read_at = Instant::now();
            let command = request.command();
            shared.faults.unpaused().await;
            let action =
                command.and_then(|(name, target)| shared.faults.admit(&name, target.as_deref()));
            if shared.mongos.on.load(Ordering::SeqCst)
                && let Some(read) = request.config_read()
            {
                match action {
                    None if request.more_to_come() => {}
                    None => {
                        let answer = shared.mongos.answer_config_read(&read);
                        let answer = op_msg_reply(request.request_id(), &answer);
                        // The mongos is as far as the server: a round trip's delay.
                        shared.latency.hold(Way::ToServer, read_at).await;
                        shared.latency.hold(Way::ToClient, Instant::now()).await;
                        to_client.lock().await.write_all(&answer).await.ok()?;
                    }
                    Some(Action::DeliverLate(_)) => {
                        // Nothing is ever sent on: delivered at once.
                        shared.faults.late_delivered.fetch_add(1, Ordering::SeqCst);
                        return None;
                    }
                    Some(_) => return None,
                }
                continue;
            }
            match action {
                None => {
                    shared.latency.hold(Way::ToServer, read_at).await;
                    to_server.write_all(&request.bytes).await.ok()?
                }
                Some(Action::CutBeforeRequest) => return None,
                Some(Action::DeliverLate(delay)) => return Some((request, delay)),
                Some(Action::LoseReply) => {
                    *lock(&lose) = Some(request.request_id());
                    shared.latency.hold(Way::ToServer, read_at).await;
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
            let read_at = Instant::now();
            if *lock(&lose) == Some(reply.response_to()) {
                return None::<(Message, Duration)>;
            }
            if shared.mongos.on.load(Ordering::SeqCst)
                && let Some(as_mongos) = reply.as_mongos_hello()
            {
                reply = as_mongos;
            }
            shared.latency.hold(Way::ToClient, read_at).await;
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
    shared.faults.late_delivered.fetch_add(1, Ordering::SeqCst);
}
