//! The fault suite: no fault may store a document twice or lose an acknowledged one.
//!
//! Always against SecantusDB servers of its own (`RestartableServer`), whatever the
//! per-process server is: it is a single-node replica set, so the driver uses sessions
//! and retryable writes as on a real deployment, and it implements MongoDB's
//! `failCommand` fault injection. Three kinds of fault:
//!
//! - `failCommand` on the command each strategy sends (the counter's `findAndModify`,
//!   the optimistic maximum query's `find`, the `insert`): closed connections, retryable
//!   error codes once (the driver's own retry absorbs them) and twice (seqid sees them),
//!   a non-retryable code, WriteConflict, and a blocked connection that the caller gives
//!   up on (cancellation);
//! - a TCP proxy that loses the server's reply after the server executed the command, or
//!   delivers the request late, after the client has given up;
//! - the server killed and restarted (same port, same data) while 32 tasks insert.
//!
//! After each: every document (each with a unique payload) is stored exactly once, under
//! the id its insert returned; no id twice; every error was typed and named the sequence;
//! the process goes on inserting; gaps are counted and bounded. Each test prints a table
//! of what it did (`cargo test --test faults -- --nocapture`).

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::faults::{
    Rig, configure, crash_once, fail_commands, lose_one_reply_at_a_time, pause,
    twice_in_a_row_three_times, unmatched_upsert, variant,
};
use common::{Payload, all_documents, integer};
use mongodb::Database;
use mongodb::bson::{Document as BsonDocument, doc};
use mongodb::options::{DatabaseOptions, WriteConcern};
use seqid::{Document, Error, Model};

/// Calls one document (or batch) may take before the workload gives up on it.
const TRIES: u32 = 200;

payload_model!(Counted, "faults_counters", collection = "docs");
payload_model!(
    Blocked,
    "faults_block",
    collection = "docs",
    strategy = "block",
    block_size = 10
);
payload_model!(
    Optimistic,
    "faults_optimistic",
    collection = "docs",
    strategy = "optimistic",
    max_attempts = 64
);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    One,
    Many,
}

/// How the workload was run.
#[derive(Clone, Copy)]
struct Shape {
    tasks: usize,
    per_task: usize,
    op: Op,
    /// A call taking longer is abandoned (its future dropped): a cancellation.
    call_timeout: Duration,
}

impl Shape {
    const SMALL: Shape = Shape {
        tasks: 6,
        per_task: 6,
        op: Op::One,
        call_timeout: Duration::from_secs(30),
    };

    fn with(self, op: Op) -> Shape {
        Shape { op, ..self }
    }

    fn documents(&self) -> usize {
        self.tasks * self.per_task
    }
}

/// What the application saw.
#[derive(Default, Debug)]
struct Seen {
    /// `payload -> id` of every document whose insert (or resume) returned Ok.
    acknowledged: BTreeMap<String, i64>,
    /// Errors returned, by variant.
    errors: BTreeMap<&'static str, usize>,
    /// Calls abandoned by the caller's timeout.
    cancelled: usize,
}

/// Inserts `shape.documents()` documents from `shape.tasks` tasks and finishes every one
/// of them the way the README says: an unknown outcome (or a cancelled call) is finished
/// with `resume_*`, a failure without an id is inserted again. Every loop is bounded.
async fn workload<T: Payload>(db: &seqid::Database, label: &str, shape: Shape) -> Seen {
    let seen = Arc::new(std::sync::Mutex::new(Seen::default()));
    let tasks: Vec<_> = (0..shape.tasks)
        .map(|task| {
            let (db, seen, label) = (db.clone(), seen.clone(), label.to_owned());
            tokio::spawn(async move {
                let mut docs: Vec<T> = (0..shape.per_task)
                    .map(|n| T::new(format!("{label}/{task}/{n}")))
                    .collect();
                match shape.op {
                    Op::One => {
                        for doc in &mut docs {
                            finish_one(doc, &db, shape, &seen).await;
                        }
                    }
                    Op::Many => {
                        for chunk in docs.chunks_mut(3) {
                            finish_many(chunk, &db, shape, &seen).await;
                        }
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a workload task panicked");
    }
    Arc::try_unwrap(seen).unwrap().into_inner().unwrap()
}

fn record_error<T: Payload>(seen: &std::sync::Mutex<Seen>, error: &Error) {
    if std::env::var_os("SEQID_FAULTS_VERBOSE").is_some() {
        eprintln!("{error}");
    }
    assert_eq!(error.sequence(), T::SEQUENCE.name, "{error}");
    assert!(error.to_string().contains(T::SEQUENCE.name), "{error}");
    *seen
        .lock()
        .unwrap()
        .errors
        .entry(variant(error))
        .or_default() += 1;
}

async fn finish_one<T: Payload>(
    doc: &mut T,
    db: &seqid::Database,
    shape: Shape,
    seen: &std::sync::Mutex<Seen>,
) {
    for attempt in 0..TRIES {
        // A document that carries an id may be stored: only resume may touch it.
        let call = async {
            if doc.id() == 0 {
                doc.insert(db).await
            } else {
                // The payload is this task's alone, so equal content is its own.
                doc.resume_insert(db).content_is_unique().await
            }
        };
        match tokio::time::timeout(shape.call_timeout, call).await {
            Ok(Ok(id)) => {
                assert_eq!(doc.id(), id);
                let previous = seen
                    .lock()
                    .unwrap()
                    .acknowledged
                    .insert(doc.payload().to_owned(), id);
                assert_eq!(previous, None, "acknowledged twice");
                return;
            }
            Ok(Err(error)) => {
                record_error::<T>(seen, &error);
                if let Error::OutcomeUnknown { id, .. } = &error {
                    assert_eq!(doc.id(), *id, "an unknown outcome keeps the id");
                }
            }
            Err(_) => seen.lock().unwrap().cancelled += 1,
        }
        tokio::time::sleep(pause(attempt)).await;
    }
    panic!("{} not stored after {TRIES} calls", doc.payload());
}

async fn finish_many<T: Payload>(
    docs: &mut [T],
    db: &seqid::Database,
    shape: Shape,
    seen: &std::sync::Mutex<Seen>,
) {
    for attempt in 0..TRIES {
        let call = async {
            if docs.iter().all(|d| d.id() == 0) {
                T::insert_many(docs, db).await
            } else {
                T::resume_insert_many(docs, db).content_is_unique().await
            }
        };
        match tokio::time::timeout(shape.call_timeout, call).await {
            Ok(Ok(ids)) => {
                let mut seen = seen.lock().unwrap();
                for (doc, id) in docs.iter().zip(ids) {
                    assert_eq!(doc.id(), id);
                    let previous = seen.acknowledged.insert(doc.payload().to_owned(), id);
                    assert_eq!(previous, None, "acknowledged twice");
                }
                return;
            }
            Ok(Err(error)) => {
                record_error::<T>(seen, &error);
                if let Error::Bulk(bulk) = &error {
                    for failed in &bulk.failed {
                        assert_eq!(docs[failed.index].id(), 0, "a failed document is unset");
                    }
                    for &unknown in &bulk.unknown {
                        assert_ne!(docs[unknown].id(), 0, "an unknown document keeps its id");
                    }
                }
            }
            Err(_) => seen.lock().unwrap().cancelled += 1,
        }
        tokio::time::sleep(pause(attempt)).await;
    }
    panic!("a batch was not stored after {TRIES} calls");
}

/// What the check found.
struct Checked {
    documents: usize,
    gaps: i64,
}

/// Reads the collection through `checker` and holds it to the invariants.
async fn check<T: Payload>(checker: &Database, seen: &Seen, expected: usize) -> Checked {
    let stored = all_documents(checker, "docs").await;
    let mut by_payload: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut ids = std::collections::BTreeSet::new();
    for d in &stored {
        let id = d
            .get("_id")
            .and_then(integer)
            .unwrap_or_else(|| panic!("bad _id in {d}"));
        assert!(ids.insert(id), "id {id} stored twice");
        let payload = d.get_str("payload").unwrap().to_owned();
        by_payload.entry(payload).or_default().push(id);
    }
    for (payload, ids) in &by_payload {
        assert_eq!(
            ids.len(),
            1,
            "{payload} stored {} times, under ids {ids:?}",
            ids.len()
        );
    }
    assert_eq!(
        seen.acknowledged.len(),
        expected,
        "every document was acknowledged"
    );
    for (payload, id) in &seen.acknowledged {
        assert_eq!(
            by_payload.get(payload),
            Some(&vec![*id]),
            "{payload} acknowledged with id {id} must be stored under it"
        );
    }
    assert_eq!(
        stored.len(),
        expected,
        "nothing stored but what was acknowledged"
    );
    // Every sequence here starts at 1 in a fresh database.
    Checked {
        documents: stored.len(),
        gaps: ids.last().copied().unwrap_or(0) - stored.len() as i64,
    }
}

/// One row of a test's report.
struct Row {
    fault: String,
    strategy: &'static str,
    op: Op,
    documents: usize,
    faults: usize,
    errors: usize,
    cancelled: usize,
    gaps: i64,
}

fn print_rows(title: &str, rows: &[Row]) {
    eprintln!("\n{title}");
    eprintln!(
        "| fault | strategy | op | documents checked | faults hit | errors returned | cancelled | gaps | stored twice | lost |"
    );
    eprintln!("|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        eprintln!(
            "| {} | {} | {:?} | {} | {} | {} | {} | {} | 0 | 0 |",
            r.fault, r.strategy, r.op, r.documents, r.faults, r.errors, r.cancelled, r.gaps
        );
    }
    let documents: usize = rows.iter().map(|r| r.documents).sum();
    eprintln!(
        "{} runs, {documents} documents checked, 0 stored twice, 0 lost",
        rows.len()
    );
}

/// Every `failCommand` fault on each command the strategy sends, for `insert` and
/// `insert_many`.
async fn fail_command_matrix<T: Payload>(commands: [&str; 2]) -> Vec<Row> {
    let rig = Rig::start(false).await;
    let Rig {
        checker,
        failures,
        app,
        ..
    } = &rig;
    let mut rows = Vec::new();
    let mut run = 0;
    for command in commands {
        for fault in fail_commands(command) {
            for op in [Op::One, Op::Many] {
                run += 1;
                let name = format!("f{run}");
                let mut shape = Shape::SMALL.with(op);
                if !fault.absorbed {
                    // One writer, so that the fault's `times` hit one operation (its
                    // attempt and the driver's retry), not several writers' first tries.
                    shape = Shape {
                        tasks: 1,
                        per_task: 12,
                        ..shape
                    };
                }
                if let Some(timeout) = fault.call_timeout {
                    shape.call_timeout = timeout;
                }
                failures.reset();
                configure(checker, command, Some(&fault)).await;
                let seen = workload::<T>(&app.database(&name), &name, shape).await;
                configure(checker, command, None).await;
                let checked = check::<T>(&checker.database(&name), &seen, shape.documents()).await;
                let hit = failures.total(command);
                let errors: usize = seen.errors.values().sum();
                let label = format!(
                    "{} on {command}: {}, {op:?}",
                    T::SEQUENCE.strategy_name(),
                    fault.name
                );
                assert!(
                    hit >= 1 || seen.cancelled >= 1,
                    "{label}: the fault was never hit"
                );
                if fault.absorbed {
                    assert_eq!(
                        errors, 0,
                        "{label}: the driver's retry absorbs it: {:?}",
                        seen.errors
                    );
                    if T::SEQUENCE.strategy_name() == "counters" {
                        assert_eq!(checked.gaps, 0, "{label}: a retried command costs no id");
                    }
                } else {
                    assert!(
                        errors + seen.cancelled >= 1,
                        "{label}: the application saw the fault"
                    );
                }
                // Gaps: a failed or cancelled reservation of k ids costs at most k (at
                // most every task's), plus the rest of a block.
                let bound = (hit.max(seen.cancelled) * shape.tasks * 3 + 10) as i64;
                assert!(checked.gaps <= bound, "{label}: {} gaps", checked.gaps);
                // The process goes on inserting.
                let mut after = T::new(format!("{name}/after"));
                after.insert(&app.database(&name)).await.unwrap();
                rows.push(Row {
                    fault: format!("{command}: {}", fault.name),
                    strategy: T::SEQUENCE.strategy_name(),
                    op,
                    documents: checked.documents,
                    faults: hit,
                    errors,
                    cancelled: seen.cancelled,
                    gaps: checked.gaps,
                });
            }
        }
    }
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fail_command_counters() {
    let rows = fail_command_matrix::<Counted>(["findAndModify", "insert"]).await;
    print_rows("failCommand, counters", &rows);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fail_command_block() {
    let rows = fail_command_matrix::<Blocked>(["findAndModify", "insert"]).await;
    print_rows("failCommand, block", &rows);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fail_command_optimistic() {
    let rows = fail_command_matrix::<Optimistic>(["find", "insert"]).await;
    print_rows("failCommand, optimistic", &rows);
}

/// A counter upsert that does not take the counter (E11000 in a concurrent first use,
/// where another writer has just created it; here a `failCommand` error) while other writers keep taking ids from it:
/// seqid goes back to the guarded `$inc`, which those writers cannot make fail, instead of
/// an update conditional on the value it read, which loses to each of them in turn (CI
/// once saw 16 such losses in a row). Every insert succeeds, under an id no plain writer
/// took, and every document is stored once under the id its insert returned.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unmatched_counter_upsert_under_load_goes_back_to_the_guarded_inc() {
    const INSERTS: usize = 25;
    let rig = Rig::start(false).await;
    let db = rig.app.database("unmatched");
    let checker = rig.checker.database("unmatched");
    let mut first = Counted::new("unmatched/first".into());
    first.insert(&db).await.unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let plain: Vec<_> = (0..4)
        .map(|_| {
            let (counters, stop) = (checker.collection::<BsonDocument>("counters"), stop.clone());
            tokio::spawn(async move {
                let mut taken = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let counter = counters
                        .find_one_and_update(
                            doc! { "_id": Counted::SEQUENCE.name },
                            doc! { "$inc": { "seq": 1 } },
                        )
                        .return_document(mongodb::options::ReturnDocument::After)
                        .await
                        .unwrap()
                        .expect("the counter exists");
                    taken.push(counter.get("seq").and_then(integer).unwrap());
                }
                taken
            })
        })
        .collect();
    let mut seen = Seen::default();
    seen.acknowledged.insert(first.payload.clone(), first.id);
    let fault = unmatched_upsert();
    rig.failures.reset();
    for n in 0..INSERTS {
        configure(&rig.checker, "findAndModify", Some(&fault)).await;
        let mut doc = Counted::new(format!("unmatched/{n}"));
        let id = doc
            .insert(&db)
            .await
            .unwrap_or_else(|e| panic!("insert {n} under load: {e}"));
        seen.acknowledged.insert(doc.payload.clone(), id);
    }
    configure(&rig.checker, "findAndModify", None).await;
    stop.store(true, Ordering::Relaxed);
    let mut taken = std::collections::BTreeSet::new();
    for task in plain {
        for value in task.await.unwrap() {
            assert!(taken.insert(value), "the plain writers got {value} twice");
        }
    }
    assert!(
        taken.len() >= INSERTS,
        "the plain writers took only {} ids: no load",
        taken.len()
    );
    assert_eq!(
        rig.failures.total("findAndModify"),
        INSERTS,
        "each fault was met once"
    );
    for (payload, id) in &seen.acknowledged {
        assert!(
            !taken.contains(id),
            "{payload} got {id}, a plain writer's id"
        );
    }
    // `check` counts gaps from 1; the plain writers' ids are the gaps here.
    let checked = check::<Counted>(&checker, &seen, INSERTS + 1).await;
    assert_eq!(checked.documents, INSERTS + 1);
}

/// The lost-reply proof: on a replica set the driver retries a `findAndModify` or an
/// `insert` once, with the same transaction number, and the server answers the retry
/// from its record of the first attempt. A reply lost once costs no id and stores
/// nothing twice: the counter ends at exactly the number of documents.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_single_lost_reply_costs_no_id_and_no_duplicate() {
    let rig = Rig::start(true).await;
    let (Rig { checker, app, .. }, proxy) = (&rig, rig.proxy());
    let mut rows = Vec::new();
    for (run, command) in ["findAndModify", "insert"].into_iter().enumerate() {
        let name = format!("lost{run}");
        let db = app.database(&name);
        // A reply lost now and then: one at a time, re-armed only once the lost
        // request's retry has passed, so that each retry gets through.
        let shape = Shape {
            tasks: 1,
            per_task: 30,
            ..Shape::SMALL
        };
        let before = proxy.fired();
        let lose = lose_one_reply_at_a_time(proxy, command);
        let (seen, ()) = tokio::join!(workload::<Counted>(&db, &name, shape), lose);
        let lost = proxy.fired() - before;
        assert!(lost >= 1, "no reply was lost");
        assert!(
            seen.errors.is_empty(),
            "the driver's retry absorbed every loss: {:?}",
            seen.errors
        );
        let checked = check::<Counted>(&checker.database(&name), &seen, shape.documents()).await;
        assert_eq!(checked.gaps, 0, "no id was lost");
        let counter = checker
            .database(&name)
            .collection::<BsonDocument>("counters")
            .find_one(doc! { "_id": Counted::SEQUENCE.name })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            counter.get("seq").and_then(integer),
            Some(30),
            "the counter was advanced once per id"
        );
        rows.push(Row {
            fault: format!("reply to {command} lost once (proxy)"),
            strategy: "counters",
            op: Op::One,
            documents: checked.documents,
            faults: lost,
            errors: 0,
            cancelled: 0,
            gaps: 0,
        });
    }
    print_rows("A reply lost once", &rows);
}

/// The driver's retry lost too: the outcome is unknown, ids kept. A document at the id
/// proves nothing of who wrote it, so only where the caller asserts that its content is
/// its own does seqid settle a lost answer of a write that landed (found stored,
/// identical); otherwise resuming meets the landed copy and still cannot tell. A request
/// still on its way stays unknown; resuming stores each document once, and the late
/// requests that land afterwards are refused by the `_id` index.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lost_answers_are_settled_or_reported_unknown() {
    let rig = Rig::start(true).await;
    let (Rig { checker, app, .. }, proxy) = (&rig, rig.proxy());
    let stored = |name: &'static str| {
        let coll = checker.database(name).collection::<BsonDocument>("docs");
        async move { coll.count_documents(doc! {}).await.unwrap() }
    };

    // The insert landed, both answers were lost: unknown, and resuming meets the landed
    // copy, which may as well be another writer's equal document...
    let db = app.database("landed_one");
    let mut doc = Counted::new("a".into());
    proxy.lose_reply("insert", Some("docs"), 2);
    let error = doc.insert(&db).await.unwrap_err();
    assert_eq!(
        proxy.fired(),
        2,
        "the attempt and the driver's retry were both lost"
    );
    let Error::OutcomeUnknown { id, reason, .. } = &error else {
        panic!("expected OutcomeUnknown, got {error:?}")
    };
    assert_eq!((*id, doc.id), (1, 1));
    assert!(reason.contains("no answer"), "{error}");
    let error = doc.resume_insert(&db).await.unwrap_err();
    let Error::OutcomeUnknown { reason, .. } = &error else {
        panic!("expected OutcomeUnknown, got {error:?}")
    };
    assert!(reason.contains("another writer's"), "{error}");
    // ...until the caller asserts that its content is its own.
    let id = doc.resume_insert(&db).content_is_unique().await.unwrap();
    assert_eq!((id, stored("landed_one").await), (1, 1));

    // Asserted on the insert itself: the lost answer is settled at once.
    let db = app.database("settled_one");
    let mut doc = Counted::new("a".into());
    proxy.lose_reply("insert", Some("docs"), 2);
    let id = doc.insert(&db).content_is_unique().await.unwrap();
    assert_eq!(proxy.fired(), 4);
    assert_eq!((id, stored("settled_one").await), (1, 1));

    let db = app.database("settled_many");
    let mut docs: Vec<Counted> = (0..5).map(|i| Counted::new(format!("m{i}"))).collect();
    proxy.lose_reply("insert", Some("docs"), 2);
    let ids = Counted::insert_many(&mut docs, &db)
        .content_is_unique()
        .await
        .unwrap();
    assert_eq!(proxy.fired(), 6);
    assert_eq!((ids, stored("settled_many").await), ((1..=5).collect(), 5));

    // Both requests still on their way when the client gave up: unknown, ids kept.
    let db = app.database("unknown_one");
    let mut doc = Counted::new("b".into());
    proxy.deliver_late("insert", Some("docs"), 2, Duration::from_secs(5));
    let error = doc.insert(&db).await.unwrap_err();
    let Error::OutcomeUnknown { id, sequence, .. } = error else {
        panic!("expected OutcomeUnknown, got {error:?}")
    };
    assert_eq!((id, doc.id, sequence.name), (1, 1, "faults_counters"));
    assert!(error.to_string().contains("resume_insert"), "{error}");
    assert_eq!(doc.resume_insert(&db).await.unwrap(), 1);

    let db = app.database("unknown_many");
    let mut docs: Vec<Counted> = (0..5).map(|i| Counted::new(format!("u{i}"))).collect();
    proxy.deliver_late("insert", Some("docs"), 2, Duration::from_secs(5));
    let error = Counted::insert_many(&mut docs, &db).await.unwrap_err();
    let Error::Bulk(bulk) = &error else {
        panic!("expected Bulk, got {error:?}")
    };
    assert_eq!(bulk.unknown, vec![0, 1, 2, 3, 4], "{error}");
    assert!(
        bulk.failed.is_empty() && bulk.inserted.is_empty(),
        "{error}"
    );
    assert!(
        docs.iter().all(|d| d.id != 0),
        "unknown documents keep their ids"
    );
    let resumed = Counted::resume_insert_many(&mut docs, &db).await.unwrap();
    assert_eq!(resumed, (1..=5).collect::<Vec<_>>());

    // The late requests land now, and are refused: still one copy of each.
    for _ in 0..1500 {
        if proxy.late_deliveries() == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(proxy.late_deliveries(), 4);
    assert_eq!(stored("unknown_one").await, 1);
    assert_eq!(stored("unknown_many").await, 5);
}

/// Numbered per project in a field, beside the ObjectId `_id` the driver gives each copy.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, seqid::Document)]
#[seq_id(collection = "docs")]
struct Numbered {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<mongodb::bson::oid::ObjectId>,
    project: String,
    #[seq_id("faults_scoped", scope = "project")]
    number: i64,
    payload: String,
}

fn numbered(project: &str, payload: &str) -> Numbered {
    Numbered {
        id: None,
        project: project.into(),
        number: 0,
        payload: payload.into(),
    }
}

/// As above, for a scoped sequence on a field: a lost answer is settled by looking the
/// document up by scope and number (the driver gave the stored copy an `_id` the caller's
/// struct never saw), the rest is unknown, and resuming, which relies on the unique index
/// on the scope and the number, stores each document once, late copies refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lost_answers_of_a_scoped_field_sequence_are_settled_or_reported_unknown() {
    let rig = Rig::start(true).await;
    let (Rig { checker, app, .. }, proxy) = (&rig, rig.proxy());
    let stored = |name: &'static str| {
        let coll = checker.database(name).collection::<BsonDocument>("docs");
        async move { coll.count_documents(doc! {}).await.unwrap() }
    };

    let db = app.database("scoped_settled");
    Numbered::create_indexes(&db).await.unwrap();
    let mut one = numbered("apollo", "a");
    proxy.lose_reply("insert", Some("docs"), 2);
    let error = one.insert(&db).await.unwrap_err();
    assert!(
        matches!(error, Error::OutcomeUnknown { id: 1, .. }),
        "{error:?}"
    );
    assert_eq!(one.resume_insert(&db).content_is_unique().await.unwrap(), 1);
    assert_eq!(
        proxy.fired(),
        2,
        "the attempt and the driver's retry were lost"
    );
    let mut docs: Vec<Numbered> = (0..6)
        .map(|i| numbered(["apollo", "gemini"][i % 2], &format!("m{i}")))
        .collect();
    proxy.lose_reply("insert", Some("docs"), 2);
    let numbers = Numbered::insert_many(&mut docs, &db)
        .content_is_unique()
        .await
        .unwrap();
    assert_eq!(numbers, [2, 1, 3, 2, 4, 3]);
    assert_eq!(stored("scoped_settled").await, 7);

    let db = app.database("scoped_unknown");
    Numbered::create_indexes(&db).await.unwrap();
    let mut docs: Vec<Numbered> = (0..4)
        .map(|i| numbered(["apollo", "gemini"][i % 2], &format!("u{i}")))
        .collect();
    proxy.deliver_late("insert", Some("docs"), 2, Duration::from_secs(5));
    let error = Numbered::insert_many(&mut docs, &db).await.unwrap_err();
    let Error::Bulk(bulk) = &error else {
        panic!("expected Bulk, got {error:?}")
    };
    assert_eq!(bulk.unknown, vec![0, 1, 2, 3], "{error}");
    assert!(docs.iter().all(|d| d.number != 0), "their numbers are kept");
    let resumed = Numbered::resume_insert_many(&mut docs, &db).await.unwrap();
    assert_eq!(resumed, [1, 1, 2, 2]);
    // The late copies land now, with `_id`s of their own, and the unique index on the
    // project and the number refuses them: still one copy of each.
    for _ in 0..1500 {
        if proxy.late_deliveries() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(proxy.late_deliveries(), 2);
    assert_eq!(stored("scoped_unknown").await, 4);
    let payloads: std::collections::BTreeSet<String> =
        all_documents(&checker.database("scoped_unknown"), "docs")
            .await
            .iter()
            .map(|d| d.get_str("payload").unwrap().to_owned())
            .collect();
    assert_eq!(payloads.len(), 4, "each document once");
}

/// Replies lost twice in a row (the driver's retry too), and requests delivered to the
/// server 3 s after the client gave up: seqid must report what it cannot know, and the
/// application's resume must store each document once.
async fn proxy_faults<T: Payload>(commands: [&str; 2]) -> Vec<Row> {
    let rig = Rig::start(true).await;
    let (Rig { checker, app, .. }, proxy) = (&rig, rig.proxy());
    let mut rows = Vec::new();
    let mut run = 0;
    for command in commands {
        for late in [false, true] {
            for op in [Op::One, Op::Many] {
                run += 1;
                let name = format!("p{run}");
                let shape = Shape {
                    tasks: 8,
                    per_task: 6,
                    ..Shape::SMALL
                }
                .with(op);
                let before = proxy.fired();
                // Armed while the workload runs: consecutive matching requests, whoever
                // sends them, so that some attempt and its retry are both lost.
                let db = app.database(&name);
                let inject = twice_in_a_row_three_times(proxy, command, late);
                let (seen, ()) = tokio::join!(workload::<T>(&db, &name, shape), inject);
                // Late requests may still be on their way: wait for them, then check.
                tokio::time::sleep(Duration::from_secs(if late { 4 } else { 0 })).await;
                let checked = check::<T>(&checker.database(&name), &seen, shape.documents()).await;
                let faults = proxy.fired() - before;
                assert!(faults >= 1, "no fault was injected");
                let label = format!(
                    "{} {command} late={late} {op:?}",
                    T::SEQUENCE.strategy_name()
                );
                let bound = (faults * shape.tasks * 3 + 10) as i64;
                assert!(checked.gaps <= bound, "{label}: {} gaps", checked.gaps);
                let mut after = T::new(format!("{name}/after"));
                after.insert(&app.database(&name)).await.unwrap();
                rows.push(Row {
                    fault: if late {
                        format!("{command} delivered 3 s late, 2 in a row, 3 times (proxy)")
                    } else {
                        format!("replies to {command} lost, 2 in a row, 3 times (proxy)")
                    },
                    strategy: T::SEQUENCE.strategy_name(),
                    op,
                    documents: checked.documents,
                    faults,
                    errors: seen.errors.values().sum(),
                    cancelled: seen.cancelled,
                    gaps: checked.gaps,
                });
            }
        }
    }
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn proxy_counters() {
    print_rows(
        "Proxy, counters",
        &proxy_faults::<Counted>(["findAndModify", "insert"]).await,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn proxy_block() {
    print_rows(
        "Proxy, block",
        &proxy_faults::<Blocked>(["findAndModify", "insert"]).await,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn proxy_optimistic() {
    print_rows(
        "Proxy, optimistic",
        &proxy_faults::<Optimistic>(["find", "insert"]).await,
    );
}

/// The server killed (SIGKILL) and restarted on the same port and data while 32 tasks
/// insert. Writes ask for `journal: true`: SecantusDB, like a single mongod, may lose a
/// write acknowledged before it reached the journal, and a counter that went back
/// would hand its ids out again. (`w: "majority"` implies the journal on MongoDB.)
async fn kill_and_restart<T: Payload>() -> Vec<Row> {
    let rig = Rig::start(false).await;
    let Rig {
        server,
        checker,
        failures,
        app,
        ..
    } = &rig;
    let durable = DatabaseOptions::builder()
        .write_concern(WriteConcern::builder().journal(true).build())
        .build();
    let mut rows = Vec::new();
    for (run, op) in [Op::One, Op::Many].into_iter().enumerate() {
        let name = format!("k{run}");
        let db = app.database_with_options(&name, durable.clone());
        let shape = Shape {
            tasks: 32,
            per_task: 12,
            ..Shape::SMALL
        }
        .with(op);
        // Once a third of the documents are in, crash.
        let docs = checker.database(&name).collection("docs");
        let crash = crash_once(server, &docs, shape.documents() / 3);
        let (seen, stored) = tokio::join!(workload::<T>(&db, &name, shape), crash);
        assert!(stored < shape.documents(), "the crash came mid-run");
        let checked = check::<T>(&checker.database(&name), &seen, shape.documents()).await;
        let errors: usize = seen.errors.values().sum();
        let failed = failures.all();
        assert!(failed >= 1, "the crash failed commands in flight");
        // What a crash can cost: the reservations in flight (each at most every task's
        // ids, rounded up to whole blocks), applied once more by a retry that the
        // restarted server no longer recognises.
        assert!(
            checked.gaps <= 4 * shape.tasks as i64 * 10,
            "{} gaps",
            checked.gaps
        );
        let mut after = T::new(format!("{name}/after"));
        after.insert(&db).await.unwrap();
        rows.push(Row {
            fault: "server killed and restarted, 32 tasks inserting".into(),
            strategy: T::SEQUENCE.strategy_name(),
            op,
            documents: checked.documents,
            faults: failed,
            errors,
            cancelled: seen.cancelled,
            gaps: checked.gaps,
        });
    }
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_and_restart_counters() {
    print_rows(
        "Kill and restart, counters",
        &kill_and_restart::<Counted>().await,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_and_restart_block() {
    print_rows(
        "Kill and restart, block",
        &kill_and_restart::<Blocked>().await,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_and_restart_optimistic() {
    print_rows(
        "Kill and restart, optimistic",
        &kill_and_restart::<Optimistic>().await,
    );
}
