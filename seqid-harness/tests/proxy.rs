//! Tests of [`FaultProxy`] against this process's test server: each rule
//! shows its effect both to the client (through the proxy) and on the server
//! (read back through a direct client).

use std::time::{Duration, Instant};

use mongodb::bson::{Document, doc};
use mongodb::error::{Error, ErrorKind};
use mongodb::options::ClientOptions;
use mongodb::{Client, Collection};
use seqid_harness::{Fault, FaultProxy, TestDb};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// A proxy in front of the test server, a test database, and collection `c`
/// of it both through the proxy and directly.
struct Setup {
    proxy: FaultProxy,
    through: Collection<Document>,
    direct: Collection<Document>,
    _db: TestDb,
}

async fn setup(name: &str) -> Setup {
    let db = seqid_harness::test_db(name).await;
    let proxy = FaultProxy::for_server().await.unwrap();
    let through = proxied_client(&proxy)
        .await
        .database(db.name())
        .collection("c");
    let direct = db.collection("c");
    Setup {
        proxy,
        through,
        direct,
        _db: db,
    }
}

/// A client of `proxy` that shows faults as they are, and quickly.
async fn proxied_client(proxy: &FaultProxy) -> Client {
    let mut options = ClientOptions::parse(proxy.uri()).await.unwrap();
    options.retry_writes = Some(false);
    options.retry_reads = Some(false);
    options.server_selection_timeout = Some(Duration::from_secs(5));
    options.connect_timeout = Some(Duration::from_secs(2));
    Client::with_options(options).unwrap()
}

fn assert_network_error(err: &Error) {
    assert!(
        matches!(*err.kind, ErrorKind::Io(_)),
        "expected a network error, got {err:?}"
    );
}

/// Waits (bounded) until `condition` holds.
async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[test]
fn uri_and_addresses() {
    let upstream = seqid_harness::server_addr().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let proxy = FaultProxy::start(upstream).await.unwrap();
        assert_eq!(proxy.upstream(), upstream);
        assert!(proxy.addr().ip().is_loopback());
        assert_ne!(proxy.addr().port(), 0);
        assert_eq!(
            proxy.uri(),
            format!(
                "mongodb://127.0.0.1:{}/?directConnection=true",
                proxy.addr().port()
            )
        );
    });
}

#[tokio::test]
async fn unmatched_commands_pass_through() {
    let s = setup("proxy_pass").await;
    s.proxy.lose_reply("insert", Some("other"), 1);
    s.proxy.cut_before_request("delete", None, 1);
    s.proxy
        .deliver_late("drop", None, 1, Duration::from_secs(60));

    s.through
        .insert_one(doc! { "_id": 1, "n": 0 })
        .await
        .unwrap();
    s.through
        .insert_many((2..=100).map(|i| doc! { "_id": i, "pad": "x".repeat(1000) }))
        .await
        .unwrap();
    let updated = s
        .through
        .find_one_and_update(doc! { "_id": 1 }, doc! { "$inc": { "n": 1 } })
        .await
        .unwrap();
    assert_eq!(updated, Some(doc! { "_id": 1, "n": 0 }));
    // More than one batch: find and getMore.
    let mut cursor = s.through.find(doc! {}).batch_size(10).await.unwrap();
    let mut found = 0;
    while cursor.advance().await.unwrap() {
        found += 1;
    }
    assert_eq!(found, 100);
    assert_eq!(s.direct.count_documents(doc! {}).await.unwrap(), 100);

    assert_eq!(s.proxy.fired(), 0);
    assert_eq!(s.proxy.armed(), 3);
    assert_eq!(s.proxy.requests("insert"), 2);
    assert_eq!(s.proxy.requests("FINDANDMODIFY"), 1);
    assert_eq!(s.proxy.requests("find"), 1);
    assert!(s.proxy.requests("getMore") >= 9);
    assert!(s.proxy.connections_accepted() >= 1);
    s.proxy.disarm_all();
    assert_eq!(s.proxy.armed(), 0);
}

#[tokio::test]
async fn lose_reply_executes_but_the_client_sees_a_network_error() {
    let s = setup("proxy_lose").await;
    s.proxy.lose_reply("INSERT", Some("c"), 1);
    let err = s.through.insert_one(doc! { "_id": 1 }).await.unwrap_err();
    assert_network_error(&err);
    assert_eq!(s.proxy.fired_of(Fault::LoseReply), 1);
    assert_eq!(s.proxy.armed(), 0);
    // The server executed it.
    let stored = s.direct.find_one(doc! { "_id": 1 }).await.unwrap();
    assert_eq!(stored, Some(doc! { "_id": 1 }));
    // The next insert goes through.
    s.through.insert_one(doc! { "_id": 2 }).await.unwrap();
    assert_eq!(s.direct.count_documents(doc! {}).await.unwrap(), 2);
    assert_eq!(s.proxy.fired(), 1);
}

#[tokio::test]
async fn lose_reply_of_find_and_modify() {
    let s = setup("proxy_lose_fam").await;
    s.direct
        .insert_one(doc! { "_id": "k", "n": 0 })
        .await
        .unwrap();
    s.proxy.lose_reply("findAndModify", None, 2);
    for _ in 0..2 {
        let err = s
            .through
            .find_one_and_update(doc! { "_id": "k" }, doc! { "$inc": { "n": 1 } })
            .await
            .unwrap_err();
        assert_network_error(&err);
    }
    let updated = s
        .through
        .find_one_and_update(doc! { "_id": "k" }, doc! { "$inc": { "n": 1 } })
        .await
        .unwrap();
    assert_eq!(updated, Some(doc! { "_id": "k", "n": 2 }));
    let stored = s.direct.find_one(doc! {}).await.unwrap();
    assert_eq!(stored, Some(doc! { "_id": "k", "n": 3 }));
    assert_eq!(s.proxy.fired_of(Fault::LoseReply), 2);
}

#[tokio::test]
async fn cut_before_request_executes_nothing() {
    let s = setup("proxy_cut").await;
    s.proxy.cut_before_request("insert", Some("c"), 2);
    for i in 1..=2 {
        let err = s.through.insert_one(doc! { "_id": i }).await.unwrap_err();
        assert_network_error(&err);
    }
    assert_eq!(s.direct.count_documents(doc! {}).await.unwrap(), 0);
    s.through.insert_one(doc! { "_id": 3 }).await.unwrap();
    assert_eq!(s.direct.count_documents(doc! {}).await.unwrap(), 1);
    assert!(
        s.direct
            .find_one(doc! { "_id": 3 })
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(s.proxy.fired_of(Fault::CutBeforeRequest), 2);
    assert_eq!(s.proxy.fired(), 2);
    assert_eq!(s.proxy.requests("insert"), 3);
}

#[tokio::test]
async fn deliver_late_fails_at_once_and_executes_later() {
    let s = setup("proxy_late").await;
    let delay = Duration::from_secs(1);
    s.proxy.deliver_late("insert", Some("c"), 1, delay);
    let start = Instant::now();
    let err = s.through.insert_one(doc! { "_id": 1 }).await.unwrap_err();
    assert_network_error(&err);
    assert!(
        start.elapsed() < delay,
        "failed only after {:?}",
        start.elapsed()
    );
    assert_eq!(s.proxy.fired_of(Fault::DeliverLate), 1);
    assert_eq!(s.direct.find_one(doc! { "_id": 1 }).await.unwrap(), None);
    assert_eq!(s.proxy.late_deliveries(), 0);

    eventually("the late delivery", || s.proxy.late_deliveries() == 1).await;
    assert!(start.elapsed() >= delay);
    assert_eq!(
        s.direct.find_one(doc! { "_id": 1 }).await.unwrap(),
        Some(doc! { "_id": 1 })
    );
    // The proxy works on meanwhile.
    s.through.insert_one(doc! { "_id": 2 }).await.unwrap();
    assert_eq!(s.direct.count_documents(doc! {}).await.unwrap(), 2);
}

#[tokio::test]
async fn sever_all_is_a_passing_blip() {
    let s = setup("proxy_sever").await;
    s.through.insert_one(doc! { "_id": 0 }).await.unwrap();
    assert!(s.proxy.open_connections() >= 1);
    let accepted = s.proxy.connections_accepted();

    s.proxy.sever_all();
    // The driver's monitor may reconnect at once: wait until every connection still open
    // is one accepted after the sever.
    eventually("the connections of before closed", || {
        s.proxy.open_connections() <= s.proxy.connections_accepted() - accepted
    })
    .await;
    // The first operation may fail (its pooled connection is gone) ...
    if let Err(err) = s.through.insert_one(doc! { "_id": 1 }).await {
        assert_network_error(&err);
    }
    // ... the following ones succeed, on new connections.
    for i in 2..=4 {
        s.through.insert_one(doc! { "_id": i }).await.unwrap();
    }
    assert!(s.proxy.connections_accepted() > accepted);
    assert!(s.direct.count_documents(doc! {}).await.unwrap() >= 4);
    assert_eq!(s.proxy.fired(), 0);
}

#[tokio::test]
async fn pause_stalls_requests_until_resume() {
    let s = setup("proxy_pause").await;
    s.through.insert_one(doc! { "_id": 0 }).await.unwrap();
    s.proxy.pause();
    let through = s.through.clone();
    let insert = tokio::spawn(async move { through.insert_one(doc! { "_id": 1 }).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!insert.is_finished());
    assert_eq!(s.direct.find_one(doc! { "_id": 1 }).await.unwrap(), None);
    s.proxy.resume();
    insert.await.unwrap().unwrap();
    assert_eq!(s.direct.count_documents(doc! {}).await.unwrap(), 2);
}

#[tokio::test]
async fn dropping_the_proxy_closes_everything() {
    let proxy = FaultProxy::for_server().await.unwrap();
    let addr = proxy.addr();
    let mut raw = TcpStream::connect(addr).await.unwrap();
    eventually("the connection accepted", || proxy.open_connections() == 1).await;
    drop(proxy);

    // The open connection is closed ...
    let mut buf = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_secs(5), raw.read(&mut buf))
        .await
        .expect("connection still open after the proxy's drop");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    // ... and the listener is gone.
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(addr).await.is_ok() {
        assert!(Instant::now() < deadline, "still listening on {addr}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
