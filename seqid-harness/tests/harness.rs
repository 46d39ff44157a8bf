//! Tests of seqid-harness against whichever server it finds (see the crate docs).

use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mongodb::bson::{Document, doc};
use mongodb::error::{ErrorKind, WriteFailure};
use mongodb::options::{ClientOptions, CollectionOptions, WriteConcern};
use seqid_harness::{RestartableServer, ServerFlavor, TestDb, TestServer};

#[tokio::test]
async fn insert_and_read_back() {
    let db = seqid_harness::test_db("insert_and_read_back").await;
    let coll = db.collection::<Document>("things");
    coll.insert_one(doc! { "_id": 1, "name": "first" })
        .await
        .unwrap();
    let found = coll.find_one(doc! { "_id": 1 }).await.unwrap();
    assert_eq!(found, Some(doc! { "_id": 1, "name": "first" }));
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), 1);
}

#[tokio::test]
async fn test_dbs_are_distinct_and_start_empty() {
    let a = seqid_harness::test_db("distinct").await;
    let b = seqid_harness::test_db("distinct").await;
    assert_ne!(a.name(), b.name());
    assert!(a.name().len() <= 63);
    a.collection::<Document>("c")
        .insert_one(doc! { "x": 1 })
        .await
        .unwrap();
    let in_b = b.collection::<Document>("c").count_documents(doc! {}).await;
    assert_eq!(in_b.unwrap(), 0);
}

#[tokio::test]
async fn dropping_test_db_removes_its_database() {
    let db = seqid_harness::test_db("dropped_on_drop").await;
    let name = db.name().to_owned();
    db.collection::<Document>("c")
        .insert_one(doc! { "x": 1 })
        .await
        .unwrap();

    let observer = mongodb::Client::with_uri_str(db.uri()).await.unwrap();
    let names = observer.list_database_names().await.unwrap();
    assert!(names.contains(&name), "{name} not in {names:?}");

    drop(db);

    let names = observer.list_database_names().await.unwrap();
    assert!(!names.contains(&name), "{name} still in {names:?}");
    let left = observer
        .database(&name)
        .collection::<Document>("c")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(left, 0);
}

#[tokio::test]
async fn command_counter_counts_exactly_the_commands_sent() {
    const N: u64 = 7;
    let counter = seqid_harness::CommandCounter::new();
    let db = seqid_harness::test_db_with("counted", |o| {
        o.command_event_handler = Some(counter.handler())
    })
    .await;
    assert_eq!(counter.total(), 0, "{:?}", counter.snapshot());

    let coll = db.collection::<Document>("c");
    for i in 0..N {
        coll.insert_one(doc! { "i": i as i64 }).await.unwrap();
    }
    assert_eq!(counter.count("insert"), N);
    assert_eq!(counter.total(), N, "{:?}", counter.snapshot());

    coll.find_one_and_update(doc! { "i": 0_i64 }, doc! { "$inc": { "n": 1 } })
        .await
        .unwrap();
    assert_eq!(counter.count("findAndModify"), 1);
    assert_eq!(counter.total(), N + 1);

    // Housekeeping is counted by name but not in the total.
    db.run_command(doc! { "ping": 1 }).await.unwrap();
    assert_eq!(counter.count("ping"), 1);
    assert_eq!(counter.total(), N + 1);

    counter.reset();
    assert_eq!(counter.count("insert"), 0);
    assert_eq!(counter.total(), 0);
}

/// Clients are not shared between runtimes: each runtime gets a working one,
/// also after the first runtime is gone, and also concurrently.
#[test]
fn clients_work_in_separate_runtimes() {
    fn use_client_in_new_runtime(label: &str) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let client = seqid_harness::client().await.unwrap();
            client
                .database("admin")
                .run_command(doc! { "ping": 1 })
                .await
                .unwrap();
            let db = seqid_harness::test_db(label).await;
            db.collection::<Document>("c")
                .insert_one(doc! { "label": label })
                .await
                .unwrap();
        });
    }
    use_client_in_new_runtime("runtime_one");
    use_client_in_new_runtime("runtime_two");
    let threads: Vec<_> = (0..3)
        .map(|i| std::thread::spawn(move || use_client_in_new_runtime(&format!("thread_{i}"))))
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// The port of a `mongodb://127.0.0.1:PORT/...` URI.
fn port_of(uri: &str) -> u16 {
    let hosts = uri.trim_start_matches("mongodb://");
    let host = hosts.split(['/', '?', ',']).next().unwrap();
    host.rsplit_once(':').unwrap().1.parse().unwrap()
}

/// Makes test databases until one lands on a server other than `than`'s, keeping those
/// on `than`'s in `kept`; `None` if none did within `DATABASES_PER_SERVER` + 1 (other tests
/// of this binary take databases meanwhile, so the move may come sooner).
async fn until_another_server(than: &str, kept: &mut Vec<TestDb>) -> Option<TestDb> {
    for n in 0..=seqid_harness::DATABASES_PER_SERVER {
        let db = seqid_harness::test_db(&format!("rotation_{n}")).await;
        if db.uri() != than {
            return Some(db);
        }
        kept.push(db);
    }
    None
}

/// Test databases move on to a fresh server of the same kind once one has held
/// `DATABASES_PER_SERVER`; each server goes on serving the databases still on it; a fresh
/// server replaced stops once its last database is dropped, while the process's server
/// stays. A `MONGODB_URI` server is never replaced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_databases_move_on_to_fresh_servers_and_a_replaced_one_stops_when_unused() {
    let process = seqid_harness::server_uri().unwrap();
    let mut on_process = Vec::new();
    let mut on_second = Vec::new();
    let second = until_another_server(&process, &mut on_process).await;
    if seqid_harness::server_flavor().unwrap() == ServerFlavor::External {
        assert!(second.is_none(), "a MONGODB_URI server was replaced");
        return;
    }
    let second = second.expect("no move to a fresh server");
    let third = until_another_server(second.uri(), &mut on_second)
        .await
        .expect("no second move");
    assert_ne!(third.uri(), process);
    for db in [&second, &third] {
        assert_eq!(seqid_harness::server_uri_for(db.name()).unwrap(), db.uri());
        db.collection::<Document>("c")
            .insert_one(doc! { "on": db.uri() })
            .await
            .unwrap();
    }
    // Every server still serves what is on it; the process's is unchanged.
    assert_eq!(seqid_harness::server_uri().unwrap(), process);
    let found = second
        .collection::<Document>("c")
        .find_one(doc! {})
        .await
        .unwrap();
    assert_eq!(found.unwrap().get_str("on").unwrap(), second.uri());

    // The second server stops once its last database is dropped (ours, and any other
    // test's); the process's server and the third go on.
    let second_port = port_of(second.uri());
    drop(on_second);
    drop(second);
    let deadline = Instant::now() + Duration::from_secs(120);
    while TcpStream::connect(("127.0.0.1", second_port)).is_ok() {
        assert!(
            Instant::now() < deadline,
            "the replaced server on port {second_port} still answers"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(on_process);
    assert!(TcpStream::connect(("127.0.0.1", port_of(&process))).is_ok());
    let n = third
        .collection::<Document>("c")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn server_uri_is_stable_and_described() {
    let uri = seqid_harness::server_uri().unwrap();
    assert_eq!(seqid_harness::server_uri().unwrap(), uri);
    assert!(uri.starts_with("mongodb://"), "{uri}");
    let kind = seqid_harness::server_kind().unwrap();
    assert!(!kind.is_empty());
    eprintln!("server: {kind} ({uri})");
}

#[tokio::test]
async fn fresh_database_starts_empty() {
    let name = format!("fresh_database_test_{}", std::process::id());
    let db = seqid_harness::fresh_database(&name).await.unwrap();
    db.collection::<Document>("c")
        .insert_one(doc! { "x": 1 })
        .await
        .unwrap();
    let db = seqid_harness::fresh_database(&name).await.unwrap();
    let n = db
        .collection::<Document>("c")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(n, 0);
    db.drop().await.unwrap();
}

/// Runs one (ignored) test of this binary in a child process.
fn run_self(test: &str, configure: impl FnOnce(&mut Command)) -> std::process::Output {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        test,
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    configure(&mut cmd);
    cmd.output().unwrap()
}

/// A worker process given `MONGODB_URI` by its parent uses the parent's server.
#[tokio::test]
async fn worker_process_reuses_the_server_via_mongodb_uri() {
    let db = seqid_harness::test_db("from_worker").await;
    let uri = seqid_harness::server_uri_for(db.name()).unwrap();
    assert_eq!(uri, db.uri());
    let out = run_self("worker_side", |c| {
        c.env("MONGODB_URI", &uri)
            .env("SEQID_HARNESS_TEST_DB", db.name());
    });
    assert!(
        out.status.success(),
        "worker failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let written = db
        .collection::<Document>("c")
        .find_one(doc! {})
        .await
        .unwrap();
    assert_eq!(written.unwrap().get_str("by").unwrap(), "worker");
}

#[tokio::test]
#[ignore = "run by worker_process_reuses_the_server_via_mongodb_uri"]
async fn worker_side() {
    let kind = seqid_harness::server_kind().unwrap();
    assert!(kind.contains("from MONGODB_URI"), "{kind}");
    let name = std::env::var("SEQID_HARNESS_TEST_DB").unwrap();
    let client = seqid_harness::client().await.unwrap();
    client
        .database(&name)
        .collection::<Document>("c")
        .insert_one(doc! { "by": "worker" })
        .await
        .unwrap();
}

/// Without any way to get a server, tests fail with instructions; they never skip.
#[test]
fn without_a_server_tests_fail_with_instructions() {
    let out = run_self("no_server_side", |c| {
        c.env_remove("MONGODB_URI")
            .env("SEQID_TEST_SERVER", "nx")
            .env("PATH", "/nonexistent");
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "should have failed:\n{stderr}");
    for needle in [
        "set MONGODB_URI=mongodb://host:port",
        "`mongod` on PATH",
        "python3 -m pip install secantusdb==0.7.0b3",
        "SEQID_TEST_SERVER=nx",
        "python3 -m pip install nx-27017==0.8.1",
    ] {
        assert!(stderr.contains(needle), "{needle:?} missing in:\n{stderr}");
    }
}

#[tokio::test]
#[ignore = "run by without_a_server_tests_fail_with_instructions"]
async fn no_server_side() {
    let _db = seqid_harness::test_db("never").await;
}

/// A directory holding only a `python3` link: a `PATH` without `mongod`.
fn path_with_only_python() -> PathBuf {
    // The interpreter itself: python3 on PATH may be a wrapper (e.g. pyenv's
    // shim) that needs the rest of PATH.
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let python = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    let dir = std::env::temp_dir().join(format!("seqid-harness-path-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("python3");
    if !link.exists() {
        std::os::unix::fs::symlink(python, &link).unwrap();
    }
    dir
}

/// Runs `flavor_side` in a child process with `SEQID_TEST_SERVER=choice` and
/// returns its output.
fn flavor_in_child(choice: &str, configure: impl FnOnce(&mut Command)) -> std::process::Output {
    run_self("flavor_side", |c| {
        c.env_remove("MONGODB_URI").env("SEQID_TEST_SERVER", choice);
        configure(c);
    })
}

fn assert_child_says(out: &std::process::Output, success: bool, needles: &[&str]) {
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.success(), success, "{text}");
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} missing in:\n{text}");
    }
}

/// `SEQID_TEST_SERVER` picks the server; `MONGODB_URI` beats it; without
/// `mongod` on `PATH`, `auto` means SecantusDB.
#[test]
fn seqid_test_server_picks_the_server() {
    let only_python = path_with_only_python();

    let out = flavor_in_child("secantus", |_| {});
    assert_child_says(
        &out,
        true,
        &["flavor: Secantus", "kind: SecantusDB 0.7.0b3 on 127.0.0.1:"],
    );

    let out = flavor_in_child("nx", |_| {});
    assert_child_says(
        &out,
        true,
        &["flavor: Nx", "kind: nx-27017 0.8.1 on 127.0.0.1:"],
    );

    let out = flavor_in_child("auto", |c| {
        c.env("PATH", &only_python);
    });
    assert_child_says(
        &out,
        true,
        &["flavor: Secantus", "kind: SecantusDB 0.7.0b3 on"],
    );

    let out = flavor_in_child("", |c| {
        c.env("PATH", &only_python);
    });
    assert_child_says(&out, true, &["flavor: Secantus"]);

    let out = flavor_in_child("mongod", |c| {
        c.env("PATH", &only_python);
    });
    assert_child_says(
        &out,
        false,
        &["SEQID_TEST_SERVER=mongod is set but there is no `mongod` on PATH"],
    );

    let out = flavor_in_child("mongo", |_| {});
    assert_child_says(
        &out,
        false,
        &[
            "SEQID_TEST_SERVER=\"mongo\" is not understood",
            "Do one of these",
        ],
    );

    // Worker processes inherit SEQID_TEST_SERVER; MONGODB_URI wins.
    let uri = seqid_harness::server_uri().unwrap();
    let out = flavor_in_child("nx", |c| {
        c.env("MONGODB_URI", &uri);
    });
    assert_child_says(&out, true, &["flavor: External", "from MONGODB_URI"]);
    let _ = std::fs::remove_dir_all(&only_python);
}

#[test]
#[ignore = "run by seqid_test_server_picks_the_server"]
fn flavor_side() {
    let flavor = seqid_harness::server_flavor();
    let kind = seqid_harness::server_kind();
    match (flavor, kind) {
        (Ok(flavor), Ok(kind)) => println!("flavor: {flavor:?}\nkind: {kind}"),
        (Err(e), _) | (_, Err(e)) => panic!("{e}"),
    }
}

/// The per-process server's flavor matches its description.
#[test]
fn server_flavor_matches_server_kind() {
    let kind = seqid_harness::server_kind().unwrap();
    let expected = match seqid_harness::server_flavor().unwrap() {
        ServerFlavor::External => "from MONGODB_URI",
        ServerFlavor::Mongod => "mongod ",
        ServerFlavor::Secantus => "SecantusDB 0.7.0b3 on 127.0.0.1:",
        ServerFlavor::Nx => "nx-27017 0.8.1 on 127.0.0.1:",
        other => panic!("unknown flavor {other:?}"),
    };
    assert!(kind.contains(expected), "{kind:?} vs {expected:?}");
}

fn journaled() -> CollectionOptions {
    CollectionOptions::builder()
        .write_concern(WriteConcern::builder().journal(true).build())
        .build()
}

/// The driver sees SecantusDB as a replica set that supports sessions and
/// transactions.
#[tokio::test]
async fn secantus_supports_sessions_and_transactions() {
    let server = RestartableServer::start_async().await.unwrap();
    let client = server.client().await.unwrap();
    let coll = client.database("txn").collection::<Document>("c");
    coll.insert_one(doc! { "_id": 0 }).await.unwrap();

    let mut session = client.start_session().await.unwrap();
    coll.find_one(doc! {}).session(&mut session).await.unwrap();
    assert!(session.cluster_time().is_some(), "no $clusterTime gossiped");

    session.start_transaction().await.unwrap();
    coll.insert_one(doc! { "_id": 1 })
        .session(&mut session)
        .await
        .unwrap();
    // Not visible outside the transaction before the commit.
    assert_eq!(coll.count_documents(doc! { "_id": 1 }).await.unwrap(), 0);
    session.commit_transaction().await.unwrap();
    assert_eq!(coll.count_documents(doc! { "_id": 1 }).await.unwrap(), 1);

    session.start_transaction().await.unwrap();
    coll.insert_one(doc! { "_id": 2 })
        .session(&mut session)
        .await
        .unwrap();
    session.abort_transaction().await.unwrap();
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), 2);
}

/// `configureFailPoint` with `failCommand` works through the driver.
#[tokio::test]
async fn secantus_fail_command_fails_the_named_command() {
    let server = RestartableServer::start_async().await.unwrap();
    let client = server.client().await.unwrap();
    let coll = client.database("fail").collection::<Document>("c");
    client
        .database("admin")
        .run_command(doc! {
            "configureFailPoint": "failCommand",
            "mode": { "times": 1 },
            "data": { "failCommands": ["insert"], "errorCode": 2 },
        })
        .await
        .unwrap();
    let err = coll.insert_one(doc! { "_id": 1 }).await.unwrap_err();
    let code = match *err.kind {
        ErrorKind::Command(ref e) => e.code,
        ErrorKind::Write(WriteFailure::WriteError(ref e)) => e.code,
        ref other => panic!("unexpected error {other:?}"),
    };
    assert_eq!(code, 2, "{err}");
    // Only once.
    coll.insert_one(doc! { "_id": 1 }).await.unwrap();
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), 1);
}

/// Journaled writes survive a crash; the server comes back on the same port
/// with the same data, and the old client reconnects.
#[tokio::test]
async fn restartable_server_keeps_journaled_data_across_kill() {
    const N: i64 = 200;
    let server = RestartableServer::start_async().await.unwrap();
    let uri = server.uri();
    let port = server.port();
    assert!(uri.contains(&format!("127.0.0.1:{port}")), "{uri}");
    assert!(uri.contains("directConnection=true"), "{uri}");
    let data_dir = server.data_dir();
    assert!(data_dir.is_dir(), "{}", data_dir.display());

    let client = server.client().await.unwrap();
    let db = client.database("durable");
    let coll = db.collection_with_options::<Document>("c", journaled());
    for i in 0..N {
        coll.insert_one(doc! { "_id": i }).await.unwrap();
    }
    let counter = coll
        .find_one_and_update(doc! { "_id": "counter" }, doc! { "$inc": { "seq": 5_i64 } })
        .upsert(true)
        .return_document(mongodb::options::ReturnDocument::After)
        .await
        .unwrap();
    assert_eq!(counter.unwrap().get_i64("seq").unwrap(), 5);

    let killed = Instant::now();
    server.kill().unwrap();
    assert!(killed.elapsed() < Duration::from_secs(5));
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "still listening after kill"
    );
    let mut quick = ClientOptions::parse(&uri).await.unwrap();
    quick.server_selection_timeout = Some(Duration::from_millis(500));
    let quick = mongodb::Client::with_options(quick).unwrap();
    assert!(
        quick
            .database("admin")
            .run_command(doc! { "ping": 1 })
            .await
            .is_err(),
        "a killed server answered"
    );

    server.restart_async().await.unwrap();
    assert_eq!(server.uri(), uri);
    assert_eq!(server.port(), port);
    assert_eq!(
        coll.count_documents(doc! { "_id": { "$type": "number" } })
            .await
            .unwrap(),
        N as u64
    );
    let counter = coll.find_one(doc! { "_id": "counter" }).await.unwrap();
    assert_eq!(counter.unwrap().get_i64("seq").unwrap(), 5);

    // Twice in a row, and restart also kills a running server first.
    coll.insert_one(doc! { "_id": N }).await.unwrap();
    server.restart_async().await.unwrap();
    server.kill().unwrap();
    server.kill().unwrap();
    server.restart_async().await.unwrap();
    assert_eq!(coll.count_documents(doc! {}).await.unwrap(), N as u64 + 2);

    drop(server);
    assert!(!data_dir.exists(), "{} not removed", data_dir.display());
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
}

/// A restartable server dies with the test process, however it dies.
#[test]
fn restartable_server_dies_with_its_process() {
    let out = run_self("restartable_orphan_side", |_| {});
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "the child should have aborted:\n{stdout}"
    );
    let field = |name: &str| {
        stdout
            .lines()
            .find_map(|l| l.split_once(name).map(|(_, value)| value))
            .unwrap_or_else(|| panic!("no {name} in:\n{stdout}"))
            .to_owned()
    };
    let port: u16 = field("port=").parse().unwrap();
    let data_dir = PathBuf::from(field("data_dir="));
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_ok() || data_dir.exists() {
        assert!(
            Instant::now() < deadline,
            "port {port} still open or {} still there",
            data_dir.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
#[ignore = "run by restartable_server_dies_with_its_process"]
fn restartable_orphan_side() {
    let server = RestartableServer::start().unwrap();
    server.kill().unwrap();
    server.restart().unwrap();
    println!("port={}", server.port());
    println!("data_dir={}", server.data_dir().display());
    assert!(server.data_dir().is_dir());
    std::process::abort();
}

// ---------------------------------------------------------------------------
// Servers of their own: `TestServer`, its builder, and `seqid-server`

/// Whether the server at `uri` answers a `ping` within half a second.
async fn answers(uri: &str) -> bool {
    let mut options = ClientOptions::parse(uri).await.unwrap();
    options.server_selection_timeout = Some(Duration::from_millis(500));
    options.connect_timeout = Some(Duration::from_millis(500));
    let client = mongodb::Client::with_options(options).unwrap();
    let ping = client
        .database("admin")
        .run_command(doc! { "ping": 1 })
        .await;
    client.shutdown().await;
    ping.is_ok()
}

/// Two `TestServer`s are two servers: what one holds, the other does not. A
/// server stops once the `TestServer` and its test databases are dropped; until
/// then it serves them. With `MONGODB_URI`, both are that server.
#[tokio::test]
async fn test_servers_are_separate_and_stop_when_dropped() {
    let a = TestServer::start().await.unwrap();
    let b = TestServer::start().await.unwrap();
    assert_eq!(a.flavor(), seqid_harness::server_flavor().unwrap());
    if a.flavor() == ServerFlavor::External {
        assert_eq!(a.uri(), b.uri());
        assert_eq!(a.port(), None);
        return;
    }
    assert_ne!(a.uri(), b.uri());
    assert_ne!(a.uri(), seqid_harness::server_uri().unwrap());
    let port = a.port().unwrap();
    assert!(a.kind().contains(&format!("127.0.0.1:{port}")), "{a:?}");

    let db = a.test_db("own_server").await;
    assert_eq!(db.uri(), a.uri());
    assert_eq!(seqid_harness::server_uri_for(db.name()).unwrap(), a.uri());
    db.collection::<Document>("c")
        .insert_one(doc! { "_id": 1 })
        .await
        .unwrap();
    let on_b = b.client().await.unwrap().database(db.name());
    assert_eq!(
        on_b.collection::<Document>("c")
            .count_documents(doc! {})
            .await
            .unwrap(),
        0
    );

    // The test database keeps its server running after the handle is gone.
    let uri = a.uri().to_owned();
    drop(a);
    let found = db
        .collection::<Document>("c")
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap();
    assert!(found.is_some());

    let dropped = Instant::now();
    drop(db);
    assert!(
        dropped.elapsed() < Duration::from_secs(5),
        "stopping took {:?}",
        dropped.elapsed()
    );
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "still listening on {port}"
    );
    let asked = Instant::now();
    assert!(!answers(&uri).await, "a dropped server answered");
    assert!(asked.elapsed() < Duration::from_secs(5));
    assert!(answers(b.uri()).await, "the other server stopped too");
}

/// A free port of 127.0.0.1, free again once this returns.
fn a_free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The builder starts a local server on the port asked for, with its data in a
/// directory that the next server started on it finds again; a port in use is an
/// error that names it.
#[tokio::test]
async fn test_server_builder_takes_a_port_and_keeps_data_in_a_directory() {
    let data = std::env::temp_dir().join(format!("seqid-harness-data-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let port = a_free_port();
    let server = TestServer::builder()
        .port(port)
        .data_dir(&data)
        .start()
        .await
        .unwrap();
    assert_eq!(server.port(), Some(port));
    assert_ne!(server.flavor(), ServerFlavor::External);
    let client = server.client().await.unwrap();
    let coll = client.database("kept").collection::<Document>("c");
    coll.insert_one(doc! { "_id": 1 }).await.unwrap();
    assert!(std::fs::read_dir(&data).unwrap().next().is_some());

    let taken = TestServer::builder().port(port).start().await.unwrap_err();
    let message = taken.to_string();
    assert!(message.contains(&format!("port {port} ")), "{message}");
    assert!(message.contains("0 for any free one"), "{message}");

    client.shutdown().await;
    drop(server);
    let server = TestServer::builder().data_dir(&data).start().await.unwrap();
    assert_ne!(server.port(), Some(port));
    let client = server.client().await.unwrap();
    let coll = client.database("kept").collection::<Document>("c");
    assert!(coll.find_one(doc! { "_id": 1 }).await.unwrap().is_some());
    client.shutdown().await;
    drop(server);
    assert!(data.is_dir(), "the data directory was removed");
    std::fs::remove_dir_all(&data).unwrap();
}

fn seqid_server() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_seqid-server"));
    command.env_remove("MONGODB_URI").stdin(Stdio::null());
    command
}

/// `seqid-server --port 0` prints the server and a plain `MONGODB_URI` (no
/// `directConnection`), which a client uses to write and read, and runs until
/// SIGTERM, when it stops the server.
#[tokio::test]
async fn seqid_server_serves_a_plain_uri_until_sigterm() {
    let mut child = seqid_server()
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let lines = tokio::task::spawn_blocking(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .take(2)
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let uri = lines[1].strip_prefix("MONGODB_URI=").unwrap().to_owned();
    assert!(uri.starts_with("mongodb://127.0.0.1:"), "{uri}");
    assert!(!uri.contains('?'), "{uri}");
    let port = port_of(&uri);
    assert!(
        lines[0].contains(&format!("on 127.0.0.1:{port}")),
        "{lines:?}"
    );

    let client = mongodb::Client::with_uri_str(&uri).await.unwrap();
    let coll = client.database("app").collection::<Document>("c");
    coll.insert_one(doc! { "_id": 1 }).await.unwrap();
    assert!(coll.find_one(doc! { "_id": 1 }).await.unwrap().is_some());
    client.shutdown().await;

    let status = Command::new("kill")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        assert!(Instant::now() < deadline, "seqid-server ignored SIGTERM");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(exit.success(), "{exit}");
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
}

/// `seqid-server --help` prints its usage; a port in use is refused, naming the
/// port and `--port 0`; a bad argument is a usage error.
#[test]
fn seqid_server_explains_itself_and_refuses_a_port_in_use() {
    let help = seqid_server().arg("--help").output().unwrap();
    assert!(help.status.success());
    let text = String::from_utf8(help.stdout).unwrap();
    for needle in [
        "Usage: seqid-server [--port N] [--data DIR]",
        "--port 0",
        "SEQID_TEST_SERVER",
    ] {
        assert!(text.contains(needle), "{needle:?} missing in:\n{text}");
    }

    let taken = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = taken.local_addr().unwrap().port();
    let out = seqid_server()
        .args(["--port", &port.to_string()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("port {port} ")), "{stderr}");
    assert!(stderr.contains("`--port 0`"), "{stderr}");

    let out = seqid_server().arg("--prot").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unexpected argument \"--prot\""));
}

/// Everything is installed into the user-level cache: `SEQID_HARNESS_CACHE`,
/// else the user's cache directory, else the temporary directory; never into the
/// workspace.
#[test]
fn installs_go_to_the_user_level_cache() {
    let cache_in = |configure: &dyn Fn(&mut Command)| {
        let out = run_self("cache_dir_side", |c| configure(c));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        let line = stdout
            .lines()
            .find_map(|l| l.split_once("cache_dir=").map(|(_, dir)| dir));
        PathBuf::from(line.unwrap_or_else(|| panic!("no cache_dir in {stdout}")))
    };
    let workspace = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let workspace = workspace.canonicalize().unwrap();
    assert!(!seqid_harness::cache_dir().starts_with(&workspace));

    assert_eq!(
        cache_in(&|c| {
            c.env("SEQID_HARNESS_CACHE", "/somewhere/cache");
        }),
        PathBuf::from("/somewhere/cache")
    );
    let home = |c: &mut Command| {
        c.env("SEQID_HARNESS_CACHE", "")
            .env("HOME", "/home/someone");
    };
    if cfg!(target_os = "macos") {
        assert_eq!(
            cache_in(&|c| home(c)),
            PathBuf::from("/home/someone/Library/Caches/seqid-harness")
        );
    } else {
        assert_eq!(
            cache_in(&|c| {
                home(c);
                c.env("XDG_CACHE_HOME", "/xdg/cache");
            }),
            PathBuf::from("/xdg/cache/seqid-harness")
        );
        // A relative XDG_CACHE_HOME is ignored, as the specification says.
        assert_eq!(
            cache_in(&|c| {
                home(c);
                c.env("XDG_CACHE_HOME", "relative");
            }),
            PathBuf::from("/home/someone/.cache/seqid-harness")
        );
    }
    assert_eq!(
        cache_in(&|c| {
            c.env_remove("SEQID_HARNESS_CACHE")
                .env_remove("HOME")
                .env_remove("XDG_CACHE_HOME");
        }),
        std::env::temp_dir().join("seqid-harness")
    );
}

#[test]
#[ignore = "run by installs_go_to_the_user_level_cache"]
fn cache_dir_side() {
    println!("cache_dir={}", seqid_harness::cache_dir().display());
    assert_eq!(
        seqid_harness::Tool::MongoEngine.install_dir(),
        seqid_harness::cache_dir().join("mongoengine-0.29.3")
    );
}
