//! Tests of seqid-harness against whichever server it finds (see the crate docs).

use std::process::Command;

use mongodb::bson::{Document, doc};

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

    let observer = seqid_harness::client().await.unwrap();
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
    let uri = seqid_harness::server_uri().unwrap();
    let db = seqid_harness::test_db("from_worker").await;
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
