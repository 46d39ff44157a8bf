//! Tests of [`FaultProxy`] against this process's test server: each rule
//! shows its effect both to the client (through the proxy) and on the server
//! (read back through a direct client).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mongodb::bson::{Document, doc};
use mongodb::error::{Error, ErrorKind};
use mongodb::event::EventHandler;
use mongodb::event::sdam::SdamEvent;
use mongodb::options::ClientOptions;
use mongodb::{Client, Collection, ServerType};
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

// ---------------------------------------------------------------------------
// Presenting the server as a mongos

/// A client of `proxy` that records the server types the driver's monitoring
/// has seen, in order.
async fn client_recording_server_types(
    proxy: &FaultProxy,
) -> (Client, Arc<Mutex<Vec<ServerType>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut options = ClientOptions::parse(proxy.uri()).await.unwrap();
    options.server_selection_timeout = Some(Duration::from_secs(5));
    let record = Arc::clone(&seen);
    options.sdam_event_handler = Some(EventHandler::callback(move |event: SdamEvent| {
        if let SdamEvent::ServerDescriptionChanged(changed) = event {
            record
                .lock()
                .unwrap()
                .push(changed.new_description.server_type());
        }
    }));
    (Client::with_options(options).unwrap(), seen)
}

#[tokio::test]
async fn as_mongos_hello_answers_isdbgrid_without_replica_set_fields() {
    let proxy = FaultProxy::for_server().await.unwrap();
    assert!(!proxy.presents_as_mongos());
    proxy.present_as_mongos(true);
    assert!(proxy.presents_as_mongos());
    let (client, seen) = client_recording_server_types(&proxy).await;
    let admin = client.database("admin");
    for hello in [
        doc! { "hello": 1 },
        doc! { "isMaster": 1 },
        doc! { "ismaster": 1 },
    ] {
        let reply = admin.run_command(hello.clone()).await.unwrap();
        assert_eq!(reply.get_str("msg"), Ok("isdbgrid"), "{hello}: {reply}");
        for field in [
            "setName",
            "hosts",
            "primary",
            "me",
            "secondary",
            "isreplicaset",
        ] {
            assert!(!reply.contains_key(field), "{hello}: {field} in {reply}");
        }
        assert!(
            reply.get_bool("isWritablePrimary") == Ok(true)
                || reply.get_bool("ismaster") == Ok(true),
            "{hello}: {reply}"
        );
        assert!(reply.contains_key("maxWireVersion"), "{reply}");
        assert_eq!(
            reply
                .get_f64("ok")
                .ok()
                .or(reply.get_i32("ok").ok().map(f64::from)),
            Some(1.0)
        );
    }
    // The driver's own handshake and monitoring saw a mongos, never a member.
    eventually("the monitor's first check", || {
        !seen.lock().unwrap().is_empty()
    })
    .await;
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.iter()
            .all(|t| matches!(t, ServerType::Mongos | ServerType::Unknown)),
        "{seen:?}"
    );
    assert!(seen.contains(&ServerType::Mongos), "{seen:?}");
}

#[tokio::test]
async fn as_mongos_crud_and_a_transaction_go_through() {
    let s = setup("proxy_mongos_crud").await;
    s.proxy.present_as_mongos(true);
    // Retryable writes on (the default), as against a real mongos.
    let client = Client::with_uri_str(s.proxy.uri()).await.unwrap();
    let db_name = s.through.namespace().db;
    let coll = client.database(&db_name).collection::<Document>("c");
    let hello = client
        .database("admin")
        .run_command(doc! { "hello": 1 })
        .await
        .unwrap();
    assert_eq!(hello.get_str("msg"), Ok("isdbgrid"));

    coll.insert_one(doc! { "_id": 1, "n": 0 }).await.unwrap();
    coll.insert_many([doc! { "_id": 2 }, doc! { "_id": 3 }])
        .await
        .unwrap();
    let updated = coll
        .find_one_and_update(doc! { "_id": 1 }, doc! { "$inc": { "n": 1 } })
        .await
        .unwrap();
    assert_eq!(updated, Some(doc! { "_id": 1, "n": 0 }));
    coll.update_one(doc! { "_id": 2 }, doc! { "$set": { "x": true } })
        .await
        .unwrap();
    coll.delete_one(doc! { "_id": 3 }).await.unwrap();
    let mut ids = Vec::new();
    let mut cursor = coll.find(doc! {}).sort(doc! { "_id": 1 }).await.unwrap();
    while cursor.advance().await.unwrap() {
        ids.push(
            cursor
                .deserialize_current()
                .unwrap()
                .get_i32("_id")
                .unwrap(),
        );
    }
    assert_eq!(ids, [1, 2]);

    let mut session = client.start_session().await.unwrap();
    let committed = session
        .start_transaction()
        .and_run(coll.clone(), |session, coll| {
            Box::pin(async move {
                coll.insert_one(doc! { "_id": 10, "in": "transaction" })
                    .session(&mut *session)
                    .await?;
                coll.count_documents(doc! {}).session(&mut *session).await
            })
        })
        .await
        .unwrap();
    assert_eq!(committed, 3);
    // Read back directly, past the proxy.
    assert_eq!(
        s.direct.find_one(doc! { "_id": 10 }).await.unwrap(),
        Some(doc! { "_id": 10, "in": "transaction" })
    );
    assert_eq!(
        s.direct.find_one(doc! { "_id": 1 }).await.unwrap(),
        Some(doc! { "_id": 1, "n": 1 })
    );
    assert_eq!(s.direct.count_documents(doc! {}).await.unwrap(), 3);
    assert_eq!(s.proxy.config_reads(), 0);
}

#[tokio::test]
async fn as_mongos_config_collections_are_the_proxys_own() {
    let proxy = FaultProxy::for_server().await.unwrap();
    proxy.present_as_mongos(true);
    let client = proxied_client(&proxy).await;
    let config = client
        .database("config")
        .collection::<Document>("collections");
    let found = |filter: Document| {
        let config = config.clone();
        async move {
            let mut cursor = config.find(filter).await.unwrap();
            let mut found = Vec::new();
            while cursor.advance().await.unwrap() {
                found.push(cursor.deserialize_current().unwrap());
            }
            found
        }
    };
    let all = || found(doc! {});
    assert_eq!(all().await, Vec::<Document>::new());
    assert_eq!(proxy.config_reads(), 1);

    let orders = doc! { "key": { "_id": "hashed" }, "unique": false };
    proxy.shard_collection("shop.orders", orders);
    let users =
        doc! { "_id": "shop.users", "key": { "email": 1 }, "unique": true, "noBalance": false };
    proxy.shard_collection("shop.users", users.clone());
    let orders = doc! { "_id": "shop.orders", "key": { "_id": "hashed" }, "unique": false };
    assert_eq!(all().await, [orders.clone(), users.clone()]);

    let one = config.find_one(doc! { "_id": "shop.users" }).await.unwrap();
    assert_eq!(one, Some(users.clone()));
    let none = config.find_one(doc! { "_id": "shop.other" }).await.unwrap();
    assert_eq!(none, None);
    let some = found(doc! { "_id": { "$in": ["shop.orders", "shop.missing"] } }).await;
    assert_eq!(some, std::slice::from_ref(&orders));
    // A filter the proxy does not understand answers everything.
    let any = found(doc! { "unique": true }).await;
    assert_eq!(any, [orders, users.clone()]);
    assert_eq!(proxy.config_reads(), 6);
    assert_eq!(proxy.requests("find"), 6);

    proxy.unshard_collection("shop.orders");
    assert_eq!(all().await, [users]);
    proxy.unshard_collection("shop.users");
    proxy.unshard_collection("shop.never");
    assert_eq!(all().await, Vec::<Document>::new());
    assert_eq!(proxy.config_reads(), 8);

    // A rule that names the read closes the connection: no answer.
    proxy.cut_before_request("find", Some("collections"), 1);
    let err = config.find_one(doc! {}).await.unwrap_err();
    assert_network_error(&err);
    assert_eq!(proxy.fired_of(Fault::CutBeforeRequest), 1);
    assert_eq!(proxy.config_reads(), 8);

    // Off, the read goes to the server, whatever it answers.
    proxy.present_as_mongos(false);
    proxy.shard_collection("shop.orders", doc! {});
    let forwarded = config.find_one(doc! { "_id": "shop.orders" }).await;
    assert!(!matches!(forwarded, Ok(Some(_))), "{forwarded:?}");
    assert_eq!(proxy.config_reads(), 8);
}

#[tokio::test]
async fn as_mongos_is_off_by_default() {
    // The server itself, also with `SEQID_TEST_AS_MONGOS` (whose proxy would
    // present it as a mongos already).
    let db = seqid_harness::test_db("proxy_mongos_off").await;
    let upstream = match seqid_harness::mongos_proxy_for(&db) {
        Some(mongos) => mongos.upstream(),
        None => seqid_harness::server_addr().unwrap(),
    };
    let proxy = FaultProxy::start(upstream).await.unwrap();
    let client = proxied_client(&proxy).await;
    let hello = client
        .database("admin")
        .run_command(doc! { "hello": 1 })
        .await
        .unwrap();
    assert!(!hello.contains_key("msg"), "{hello}");
    // The same as the server says directly.
    let direct = Client::with_uri_str(format!("mongodb://{upstream}/?directConnection=true"))
        .await
        .unwrap();
    let direct_hello = direct
        .database("admin")
        .run_command(doc! { "hello": 1 })
        .await
        .unwrap();
    assert_eq!(
        hello.get_str("setName").ok(),
        direct_hello.get_str("setName").ok()
    );
    assert_eq!(proxy.config_reads(), 0);
}

/// `SEQID_TEST_AS_MONGOS`: the harness's clients of test databases see a
/// mongos exactly when it is on (run the harness's tests with it set too).
#[tokio::test]
async fn as_mongos_env_switch_applies_to_test_db_clients() {
    let db = seqid_harness::test_db("proxy_mongos_env").await;
    let hello = db
        .client()
        .database("admin")
        .run_command(doc! { "hello": 1 })
        .await
        .unwrap();
    let proxy = seqid_harness::mongos_proxy_for(&db);
    if seqid_harness::as_mongos() {
        assert_eq!(hello.get_str("msg"), Ok("isdbgrid"), "{hello}");
        let proxy = proxy.expect("a mongos proxy for the test database");
        assert!(proxy.presents_as_mongos());
        assert_eq!(db.uri(), proxy.uri());
        assert_eq!(
            seqid_harness::server_uri_for(db.name()).unwrap(),
            proxy.uri()
        );
        // A test's own sharded collection, seen through its database's client.
        let ns = format!("{}.c", db.name());
        proxy.shard_collection(&ns, doc! { "key": { "_id": 1 }, "unique": true });
        let entry = db
            .client()
            .database("config")
            .collection::<Document>("collections")
            .find_one(doc! { "_id": &ns })
            .await
            .unwrap();
        proxy.unshard_collection(&ns);
        assert_eq!(
            entry,
            Some(doc! { "_id": &ns, "key": { "_id": 1 }, "unique": true })
        );
    } else {
        assert!(!hello.contains_key("msg"), "{hello}");
        assert!(proxy.is_none());
    }
}

/// The legacy handshake: `isMaster` in an `OP_QUERY` on `admin.$cmd`,
/// answered with an `OP_REPLY`, as older drivers send their first one.
#[tokio::test]
async fn as_mongos_rewrites_the_legacy_op_query_handshake() {
    use tokio::io::AsyncWriteExt;
    let proxy = FaultProxy::for_server().await.unwrap();
    proxy.present_as_mongos(true);
    let mut raw = TcpStream::connect(proxy.addr()).await.unwrap();
    let query = mongodb::bson::to_vec(&doc! { "isMaster": 1, "helloOk": true }).unwrap();
    let mut request = vec![0u8; 16];
    request.extend_from_slice(&0_i32.to_le_bytes()); // flags
    request.extend_from_slice(b"admin.$cmd\0");
    request.extend_from_slice(&0_i32.to_le_bytes()); // numberToSkip
    request.extend_from_slice(&(-1_i32).to_le_bytes()); // numberToReturn
    request.extend_from_slice(&query);
    let len = request.len() as i32;
    request[0..4].copy_from_slice(&len.to_le_bytes());
    request[4..8].copy_from_slice(&77_i32.to_le_bytes());
    request[12..16].copy_from_slice(&2004_i32.to_le_bytes());
    raw.write_all(&request).await.unwrap();

    let mut header = [0u8; 16];
    raw.read_exact(&mut header).await.unwrap();
    let int = |at: usize| i32::from_le_bytes(header[at..at + 4].try_into().unwrap());
    assert_eq!(int(8), 77, "responseTo");
    assert_eq!(int(12), 1, "an OP_REPLY");
    let mut rest = vec![0u8; int(0) as usize - 16];
    raw.read_exact(&mut rest).await.unwrap();
    // responseFlags, cursorID, startingFrom, numberReturned, then the document,
    // which must end the message exactly (the length was fixed).
    assert_eq!(i32::from_le_bytes(rest[16..20].try_into().unwrap()), 1);
    let reply = Document::from_reader(&rest[20..]).unwrap();
    assert_eq!(
        mongodb::bson::to_vec(&reply).unwrap().len(),
        rest.len() - 20
    );
    assert_eq!(reply.get_str("msg"), Ok("isdbgrid"), "{reply}");
    assert!(!reply.contains_key("setName"), "{reply}");
    // nx-27017 answers the legacy command with `isWritablePrimary` only.
    assert!(
        reply.get_bool("ismaster") == Ok(true) || reply.get_bool("isWritablePrimary") == Ok(true),
        "{reply}"
    );
}

/// How long a `ping` through `client` takes, the fastest of three.
async fn fastest_ping(client: &Client) -> Duration {
    let mut fastest = Duration::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        client
            .database("admin")
            .run_command(doc! { "ping": 1 })
            .await
            .unwrap();
        fastest = fastest.min(start.elapsed());
    }
    fastest
}

/// The added latency delays every round trip by its two ways' sum, however it is split,
/// each connection on its own: eight pings at once take one delay, not eight; set back to
/// zero, the proxy relays at once again.
#[tokio::test]
async fn latency_delays_each_round_trip_by_both_ways() {
    const DELAY: Duration = Duration::from_millis(300);
    let proxy = FaultProxy::for_server().await.unwrap();
    let client = proxied_client(&proxy).await;
    // Opens the connection and its monitor before any delay.
    fastest_ping(&client).await;
    assert_eq!(proxy.latency(), (Duration::ZERO, Duration::ZERO));
    for (to_server, to_client) in [
        (DELAY, Duration::ZERO),
        (Duration::ZERO, DELAY),
        (DELAY / 2, DELAY / 2),
    ] {
        proxy.set_latency(to_server, to_client);
        assert_eq!(proxy.latency(), (to_server, to_client));
        let took = fastest_ping(&client).await;
        assert!(
            took >= DELAY,
            "{to_server:?} + {to_client:?}: a ping took {took:?}"
        );
    }
    // Eight at once, on eight connections: a delay each, side by side.
    let start = Instant::now();
    let pings: Vec<_> = (0..8)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move {
                client
                    .database("admin")
                    .run_command(doc! { "ping": 1 })
                    .await
                    .unwrap();
            })
        })
        .collect();
    for ping in pings {
        ping.await.unwrap();
    }
    let took = start.elapsed();
    assert!(
        took >= DELAY && took < 8 * DELAY,
        "eight pings at once took {took:?}, one after the other would be {:?}",
        8 * DELAY
    );
    proxy.set_latency(Duration::ZERO, Duration::ZERO);
    let took = fastest_ping(&client).await;
    assert!(took < DELAY, "no latency, and a ping took {took:?}");
}
