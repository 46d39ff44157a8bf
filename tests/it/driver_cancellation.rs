//! Issue 18: what cancelled futures do to the `mongodb` driver (3.9.1) alone, without seqid.
//!
//! The mechanism, in the driver's `src/cmap/`: a check-out sends a request to the pool's
//! worker task and awaits a oneshot reply (`connection_requester.rs`). Dropping the caller's
//! future drops only the receiving end: the request stays in the worker's wait queue. The
//! worker takes at most one queued request per turn of its loop (`worker.rs`), and a worker
//! with nothing else to do turns only on its 500 ms maintenance tick. So every abandoned
//! check-out queued ahead of a live one costs that one up to half a second, while the pool's
//! connections sit idle and the server answers other clients at once: a client-side wedge. A
//! future dropped while its command is on the wire also costs its connection (closed with
//! reason `Dropped`), and the pool reconnects at most two at a time (`max_connecting`).
//!
//! Running every driver call in a spawned task that owns what it needs (a cloned
//! `Collection`, the document already serialized), the caller awaiting only the `JoinHandle`,
//! never abandons a check-out nor a command half-way: the same storm leaves no trace.
//!
//! `cargo test --test it driver_cancellation -- --include-ignored --nocapture` prints what each
//! test measured (two of them are `#[ignore = "full suite"]`).

use std::future::{Future, IntoFuture};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mongodb::bson::{Document, RawDocumentBuf, doc, rawdoc};
use mongodb::event::EventHandler;
use mongodb::event::cmap::{CmapEvent, ConnectionClosedReason};
use mongodb::options::ClientOptions;
use mongodb::{Client, Collection, Database};
use seqid_harness::{FaultProxy, test_db};

/// Tasks per round of a storm, as in the issue.
const TASKS: usize = 64;
/// Of which this many are normal calls; the others are cancelled.
const NORMAL: usize = 2;
/// How long a cancelled task runs before its future is dropped (tokio's timer rounds it up
/// to its 1 ms resolution).
const CANCEL_AFTER: Duration = Duration::from_micros(300);
/// The limit of a plain insert that asks whether the client still answers.
const PROBE_LIMIT: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------
// What the pool did, from its CMAP events

/// Counts of a client's CMAP events.
#[derive(Debug, Default)]
struct PoolLog {
    checkouts_started: usize,
    checked_out: usize,
    checkouts_failed: usize,
    created: usize,
    closed_dropped: usize,
    closed_other: usize,
    /// The wait of each check-out that got its connection, in order.
    waits: Vec<Duration>,
}

impl PoolLog {
    /// Check-outs whose caller went away before it got a connection: started, but neither
    /// checked out nor failed (a dropped check-out emits no event of its own).
    fn abandoned(&self) -> usize {
        self.checkouts_started - self.checked_out - self.checkouts_failed
    }
}

type SharedLog = Arc<Mutex<PoolLog>>;

fn record(log: &SharedLog, event: CmapEvent) {
    let mut log = log.lock().unwrap();
    match event {
        CmapEvent::ConnectionCheckoutStarted(_) => log.checkouts_started += 1,
        CmapEvent::ConnectionCheckedOut(e) => {
            log.checked_out += 1;
            log.waits.push(e.duration);
        }
        CmapEvent::ConnectionCheckoutFailed(_) => log.checkouts_failed += 1,
        CmapEvent::ConnectionCreated(_) => log.created += 1,
        CmapEvent::ConnectionClosed(e) if e.reason == ConnectionClosedReason::Dropped => {
            log.closed_dropped += 1
        }
        CmapEvent::ConnectionClosed(_) => log.closed_other += 1,
        _ => {}
    }
}

/// A client of `uri` whose CMAP events are counted.
async fn watched_client(
    uri: &str,
    configure: impl FnOnce(&mut ClientOptions),
) -> (Client, SharedLog) {
    let log = SharedLog::default();
    let mut options = ClientOptions::parse(uri).await.unwrap();
    let handler_log = log.clone();
    options.cmap_event_handler = Some(EventHandler::callback(move |event| {
        record(&handler_log, event)
    }));
    configure(&mut options);
    (Client::with_options(options).unwrap(), log)
}

/// Waits (at most 30 s) until `done` holds for the log.
async fn wait_for(log: &SharedLog, what: &str, done: impl Fn(&PoolLog) -> bool) {
    let start = Instant::now();
    while !done(&log.lock().unwrap()) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "waited 30 s for {what}: {:?}",
            log.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

// ---------------------------------------------------------------------------
// Driver calls, direct or in a task of their own

#[derive(Clone, Copy, Debug, PartialEq)]
enum Calls {
    /// The caller's future drives the driver's future: dropping one drops the other.
    Direct,
    /// Each driver call runs in a spawned task that owns what it needs; the caller awaits
    /// only the `JoinHandle`, and dropping a `JoinHandle` detaches the task.
    Spawned,
}

/// Runs one driver call as `calls` says.
async fn call<T: Send + 'static>(
    calls: Calls,
    driver_call: impl Future<Output = mongodb::error::Result<T>> + Send + 'static,
) -> mongodb::error::Result<T> {
    match calls {
        Calls::Direct => driver_call.await,
        Calls::Spawned => tokio::spawn(driver_call)
            .await
            .expect("a driver call panicked"),
    }
}

/// What each task of a storm does: two driver calls, the second an insert.
#[derive(Clone, Copy, Debug)]
enum Workload {
    /// `find_one`, then `insert_one`.
    FindThenInsert,
    /// `find_one_and_update` on a counter (as seqid's counters do), then `insert_one`.
    IncrementThenInsert,
}

async fn task(
    workload: Workload,
    calls: Calls,
    docs: Collection<RawDocumentBuf>,
    counters: Collection<Document>,
    document: RawDocumentBuf,
) -> mongodb::error::Result<()> {
    match workload {
        Workload::FindThenInsert => {
            let docs = docs.clone();
            call(
                calls,
                async move { docs.find_one(doc! { "_id": -1 }).await },
            )
            .await?;
        }
        Workload::IncrementThenInsert => {
            call(calls, async move {
                counters
                    .find_one_and_update(doc! { "_id": "c" }, doc! { "$inc": { "seq": 1 } })
                    .upsert(true)
                    .await
            })
            .await?;
        }
    }
    call(calls, async move { docs.insert_one(document).await }).await?;
    Ok(())
}

/// `rounds` rounds of [`TASKS`] concurrent tasks, all but [`NORMAL`] of them cancelled after
/// [`CANCEL_AFTER`], the normal ones limited to `normal_limit`. Returns the normal tasks'
/// latencies, `None` for a timeout.
async fn storm(
    db: &Database,
    workload: Workload,
    calls: Calls,
    rounds: usize,
    normal_limit: Duration,
) -> Vec<Option<Duration>> {
    let docs = db.collection::<RawDocumentBuf>("docs");
    let counters = db.collection::<Document>("counters");
    let mut normal = Vec::new();
    for round in 0..rounds {
        let tasks: Vec<_> = (0..TASKS)
            .map(|n| {
                let id = (round * TASKS + n) as i64 + 1;
                let is_normal = n % (TASKS / NORMAL) == 0;
                let work = task(
                    workload,
                    calls,
                    docs.clone(),
                    counters.clone(),
                    rawdoc! { "_id": id },
                );
                tokio::spawn(async move {
                    let limit = if is_normal {
                        normal_limit
                    } else {
                        CANCEL_AFTER
                    };
                    let start = Instant::now();
                    let outcome = tokio::time::timeout(limit, work).await;
                    (is_normal, outcome.map(|r| r.map(|()| start.elapsed())))
                })
            })
            .collect();
        for task in tasks {
            match task.await.unwrap() {
                (true, Ok(result)) => normal.push(Some(result.expect("a normal call failed"))),
                (true, Err(_)) => normal.push(None),
                (false, Ok(result)) => drop(result.expect("a cancelled call failed")),
                (false, Err(_)) => {}
            }
        }
    }
    normal
}

/// One plain insert with [`PROBE_LIMIT`]: its latency (`None`: timed out) and how long its
/// check-out waited (`None`: it got no connection).
async fn probe(
    docs: &Collection<RawDocumentBuf>,
    calls: Calls,
    id: i64,
    log: &SharedLog,
) -> (Option<Duration>, Option<Duration>) {
    let before = log.lock().unwrap().waits.len();
    let docs = docs.clone();
    let start = Instant::now();
    let outcome = tokio::time::timeout(
        PROBE_LIMIT,
        call(calls, async move {
            docs.insert_one(rawdoc! { "_id": id }).await
        }),
    )
    .await;
    let latency = outcome.map(|r| {
        r.expect("the probe failed");
        start.elapsed()
    });
    let wait = log.lock().unwrap().waits.get(before).copied();
    (latency.ok(), wait)
}

/// A plain insert through another client of the same server, with [`PROBE_LIMIT`].
async fn fresh_client_insert(db: &Database, id: i64) -> Duration {
    let start = Instant::now();
    tokio::time::timeout(
        PROBE_LIMIT,
        db.collection::<RawDocumentBuf>("docs")
            .insert_one(rawdoc! { "_id": id }),
    )
    .await
    .expect("the fresh client's insert timed out: the server itself stalls")
    .unwrap();
    start.elapsed()
}

fn show(latency: Option<Duration>) -> String {
    latency.map_or_else(|| "timed out".to_owned(), |d| format!("{d:.1?}"))
}

fn server() -> String {
    seqid_harness::server_kind().unwrap()
}

// ---------------------------------------------------------------------------
// The tests

/// What one run of [`abandoned_checkouts_stay_queued_and_cost_half_a_second_each`] saw.
#[derive(Debug)]
struct QueueRun {
    /// How long the new insert waited for its connection.
    wait: Duration,
    /// The new insert's whole latency.
    latency: Duration,
    /// Another client's insert meanwhile.
    fresh: Duration,
    /// Whether the holder's insert had its answer before the proxy resumed (it should not:
    /// the paused proxy holds its request).
    holder_answered_while_paused: bool,
    /// The watched client's pool when the new insert had its answer.
    pool: String,
}

/// One run of the mechanism on collection `docs` of `db` (ids from `first_id`): `abandoned`
/// check-outs dropped while the pool's only connection is taken, then a new insert once the
/// connection is back and idle, and another client's insert meanwhile.
async fn insert_behind_abandoned_checkouts(
    db: &seqid_harness::TestDb,
    abandoned: usize,
    first_id: i64,
) -> QueueRun {
    // A proxy that can stall requests, so that a live insert holds the connection.
    let proxy = FaultProxy::for_test_db(db).await.unwrap();
    let (client, log) = watched_client(&proxy.uri(), |o| o.max_pool_size = Some(1)).await;
    let docs = client
        .database(db.name())
        .collection::<RawDocumentBuf>("docs");
    docs.insert_one(rawdoc! { "_id": first_id }).await.unwrap();

    proxy.pause();
    let holder = tokio::spawn({
        let docs = docs.clone();
        async move { docs.insert_one(rawdoc! { "_id": first_id + 1 }).await }
    });
    wait_for(&log, "the holder's check-out", |l| l.checked_out == 2).await;
    // Each insert is dropped as soon as its check-out request is on its way to the pool.
    for n in 0..abandoned {
        let insert = docs
            .insert_one(rawdoc! { "_id": first_id + 100 + n as i64 })
            .into_future();
        tokio::select! {
            biased;
            _ = insert => panic!("got the pool's only connection"),
            () = wait_for(&log, "a check-out", |l| l.checkouts_started == 3 + n) => {}
        }
    }
    let holder_answered_while_paused = holder.is_finished();
    proxy.resume();
    holder.await.unwrap().unwrap();
    {
        let log = log.lock().unwrap();
        assert_eq!(log.checkouts_started, 2 + abandoned, "{log:?}");
        assert_eq!(log.abandoned(), abandoned, "{log:?}");
    }

    // The connection is back and idle, the server idle: a new insert through this client...
    let wedged = tokio::spawn({
        let (docs, log) = (docs.clone(), log.clone());
        async move {
            let before = log.lock().unwrap().waits.len();
            let start = Instant::now();
            tokio::time::timeout(
                Duration::from_secs(60),
                docs.insert_one(rawdoc! { "_id": first_id + 2 }),
            )
            .await
            .expect("still waiting after 60 s")
            .unwrap();
            let wait = log.lock().unwrap().waits[before];
            (start.elapsed(), wait)
        }
    });
    // ... waits, while another client of the same server answers at once.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let fresh = fresh_client_insert(db, first_id + 3).await;
    let (latency, wait) = wedged.await.unwrap();
    let log = log.lock().unwrap();
    // The wait was not spent connecting: the pool still has its first connection.
    assert_eq!(
        (log.created, log.closed_dropped, log.closed_other),
        (1, 0, 0),
        "{log:?}"
    );
    QueueRun {
        wait,
        latency,
        fresh,
        holder_answered_while_paused,
        pool: format!("{log:?}"),
    }
}

/// The mechanism, deterministically: check-outs abandoned while the pool's only connection
/// is taken stay queued, and once the connection is back, idle, a new check-out waits for
/// them, up to half a second each (7.5 s for 16 on a quiet machine), while another client
/// of the same server answers at once.
///
/// On a quiet machine: `ABANDONED - 2` dead requests ahead of the new one (the holder's
/// check-in and the new request each turned the pool's worker once), then the new one
/// itself, one per 500 ms tick: 7 to 7.5 s. Other events turn the worker too (1.5 s was
/// seen while `.ci/run` ran its tests two at a time, and once, in CI at stop 45, the queue
/// was gone within a second, by no event the client reported), so what is asserted is that
/// dead requests were waited for at all, a whole tick on an idle connection, in one of up to
/// three runs: a driver that dropped abandoned requests would never wait so in any run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn abandoned_checkouts_stay_queued_and_cost_half_a_second_each() {
    const ABANDONED: usize = 16;
    const RUNS: i64 = 3;
    /// The pool worker's maintenance tick: a wait this long was spent on dead requests.
    const TICK: Duration = Duration::from_millis(500);
    let db = test_db("driver_cancel_queue").await;
    let mut runs = Vec::new();
    for run in 0..RUNS {
        let seen = insert_behind_abandoned_checkouts(&db, ABANDONED, run * 1_000).await;
        println!(
            "{}: {ABANDONED} abandoned check-outs ahead; the next insert waited {:.1?} for \
             its connection ({:.1?} in all); another client's insert took {:.1?}; the \
             holder answered while paused: {}; the pool: {}",
            server(),
            seen.wait,
            seen.latency,
            seen.fresh,
            seen.holder_answered_while_paused,
            seen.pool
        );
        let queued = seen.wait >= TICK;
        assert!(
            !queued || seen.fresh < seen.wait,
            "the other client waited as long: the server stalls ({seen:?})"
        );
        runs.push(seen);
        if queued {
            return;
        }
    }
    panic!("no run waited a whole tick: abandoned check-outs no longer queue ({runs:#?})");
}

/// The storm with the driver alone: the normal calls' second check-out queues
/// behind the cancelled tasks' abandoned ones, and the client stays wedged after the storm
/// although its connections are idle; a fresh client of the same server is not. Up to three
/// storms, each with a client and a database of its own, passing on the first that leaves
/// its client wedged: once on nx-27017 in CI a client's queue was gone before the probe (the
/// normal calls had timed out in the storm all the same), as the abandoned check-outs test
/// above saw its queue go by no event the client reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn a_storm_of_cancelled_driver_calls_wedges_the_client_not_the_server() {
    let mut runs = Vec::new();
    for run in 1..=3 {
        let db = test_db(&format!("driver_cancel_direct_{run}")).await;
        let uri = db.uri().to_owned();
        let (client, log) = watched_client(&uri, |_| {}).await;
        let wedged = client.database(db.name());
        let docs = wedged.collection::<RawDocumentBuf>("docs");
        docs.insert_one(rawdoc! { "_id": 0_i64 }).await.unwrap();

        let normal = storm(
            &wedged,
            Workload::FindThenInsert,
            Calls::Direct,
            2,
            Duration::from_secs(3),
        )
        .await;
        let abandoned = log.lock().unwrap().abandoned();
        let (latency, wait) = probe(&docs, Calls::Direct, -1, &log).await;
        let fresh = fresh_client_insert(&db, -2).await;
        let log = log.lock().unwrap();
        let seen = format!(
            "{}: driver alone, find_one + insert_one, 2 rounds: normal calls (3 s limit) {:?}; \
             {abandoned} abandoned check-outs, {} connections created, {} closed as dropped \
             mid-command; then a plain insert: {} (check-out wait {:?}); a fresh client's: \
             {fresh:.1?}",
            server(),
            normal.iter().map(|l| show(*l)).collect::<Vec<_>>(),
            log.created,
            log.closed_dropped,
            show(latency),
            wait,
        );
        println!("run {run}: {seen}");
        assert!(abandoned >= 16, "few abandoned check-outs: {log:?}");
        if latency.is_none() || wait.is_some_and(|w| w >= Duration::from_secs(1)) {
            return;
        }
        runs.push(seen);
    }
    panic!("the client answered at once after every storm: {runs:#?}");
}

/// The same storm with every driver call in a spawned task: no check-out is ever
/// abandoned, no connection dropped mid-command; the normal calls stay fast and the client
/// answers right after the storm.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn driver_calls_in_spawned_tasks_survive_the_storm() {
    let db = test_db("driver_cancel_spawned").await;
    let uri = db.uri().to_owned();
    let (client, log) = watched_client(&uri, |_| {}).await;
    let database = client.database(db.name());
    let docs = database.collection::<RawDocumentBuf>("docs");
    docs.insert_one(rawdoc! { "_id": 0_i64 }).await.unwrap();

    for (n, workload) in [Workload::FindThenInsert, Workload::IncrementThenInsert]
        .into_iter()
        .enumerate()
    {
        let db = client.database(&format!("{}_{n}", db.name()));
        let normal = storm(&db, workload, Calls::Spawned, 5, Duration::from_secs(10)).await;
        let (latency, wait) = probe(&docs, Calls::Spawned, -1 - n as i64, &log).await;
        println!(
            "{}: spawned calls, {workload:?}, 5 rounds: normal calls {:?}; then a plain \
             insert: {} (check-out wait {wait:?})",
            server(),
            normal.iter().map(|l| show(*l)).collect::<Vec<_>>(),
            show(latency),
        );
        let worst = normal.iter().max().unwrap();
        assert!(
            normal.iter().all(Option::is_some) && worst.unwrap() < Duration::from_secs(5),
            "normal calls: {normal:?}"
        );
        assert!(latency.is_some(), "the client is wedged after the storm");
        db.drop().await.unwrap();
    }
    // Detached calls of cancelled callers may still run; once they are done, every
    // check-out got its connection and none was lost mid-command.
    wait_for(&log, "the detached calls", |l| l.abandoned() == 0).await;
    let log = log.lock().unwrap();
    assert_eq!(
        (log.checkouts_failed, log.closed_dropped),
        (0, 0),
        "{log:?}"
    );
}
