//! Cancelled callers never wedge the client (issue 18): storms of inserts of which most
//! are cancelled after 300 µs (a `tokio::time::timeout`, as a service's request timeout
//! or a client hanging up drops a handler), for every strategy that can run outside a
//! caller's transaction, through a `Sequences` handle and through a bare database.
//!
//! Each storm is measured next to the same storm of the driver's own `insert_one` on a
//! client of its own: the normal inserts of the storm stay within a few times the
//! driver's (the limits are generous, so that a loaded CI machine cannot make them
//! flake; the benchmark's `cancel` part prints the exact ratios), none times out, and the
//! insert that follows the storm is as quick as one before it. Then every document a
//! cancelled caller left with an id is finished with `resume_insert`, and the collection
//! is read back: every document stored exactly once, under the id its call returned.
//!
//! And cancelled calls driven to an end the README's way, with unique documents and with
//! documents all equal but for the id: the document a cancelled call left with an id is
//! resumed, one left without is inserted again, and what is stored is held to what the
//! callers were told.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use mongodb::bson::{Document as BsonDocument, doc};
use seqid::error::ErrorKind;
use seqid::{AsDatabase, Error};
use seqid_harness::{ServerFlavor, test_db};

use crate::support;
use crate::support::Payload;
use crate::support::ledger::{Drive, Driven, Told, check, check_others, drive_task};
use crate::support::models::{
    BlockDoc, CountedDoc, EqualBlock, EqualCounted, EqualOptimistic, EqualTracker, Model,
    OptimisticDoc, PROJECTS, TrackerDoc,
};
use crate::support::writers::{Op, Via, task_writer, write};

payload_model!(Counted, "cancel_counters", collection = "docs");
payload_model!(
    Blocked,
    "cancel_block",
    collection = "docs",
    strategy = "block"
);
payload_model!(
    Optimistic,
    "cancel_optimistic",
    collection = "docs",
    strategy = "optimistic",
    time_budget_ms = 60000
);

/// Rounds of [`TASKS`] tasks: all but [`NORMAL`] are cancelled after [`CANCEL_AFTER`].
const ROUNDS: usize = 10;
const TASKS: usize = 64;
const NORMAL: usize = 2;
const CANCEL_AFTER: Duration = Duration::from_micros(300);
/// A normal insert that takes this long has timed out: the client is wedged.
const NORMAL_LIMIT: Duration = Duration::from_secs(10);
/// Added to every bound on a latency, so that a loaded machine's stalls cannot fail a
/// test; a wedged client stalls for seconds to tens of seconds.
const GRACE: Duration = Duration::from_millis(1500);

/// Storms run one at a time: two at once on two cores would measure each other.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// What one storm did.
struct Storm<T> {
    /// The slowest normal insert.
    normal_max: Duration,
    timeouts: usize,
    cancelled: usize,
    /// Documents whose call returned an id: payload → id.
    acknowledged: BTreeMap<String, i64>,
    /// Documents a cancelled call left with an id: maybe stored.
    left: Vec<T>,
}

/// One task's share of a storm.
enum Outcome<T> {
    Acknowledged(String, i64),
    Cancelled(T),
    Normal(Duration, Option<(String, i64)>),
}

async fn seqid_storm<T: Payload, D>(db: &D, label: &str) -> Storm<T>
where
    D: AsDatabase + Clone + Send + Sync + 'static,
{
    let mut storm = Storm {
        normal_max: Duration::ZERO,
        timeouts: 0,
        cancelled: 0,
        acknowledged: BTreeMap::new(),
        left: Vec::new(),
    };
    for round in 0..ROUNDS {
        let tasks: Vec<_> = (0..TASKS)
            .map(|i| {
                let db = db.clone();
                let payload = format!("{label}/{round}/{i}");
                tokio::spawn(async move {
                    let mut doc = T::new(payload.clone());
                    if i < TASKS - NORMAL {
                        return match tokio::time::timeout(CANCEL_AFTER, doc.insert(&db)).await {
                            Ok(Ok(id)) => Outcome::Acknowledged(payload, id),
                            Ok(Err(error)) => panic!("{payload}: {error}"),
                            Err(_) => Outcome::Cancelled(doc),
                        };
                    }
                    let start = Instant::now();
                    let inserted = tokio::time::timeout(NORMAL_LIMIT, doc.insert(&db)).await;
                    let acknowledged = match inserted {
                        Ok(Ok(id)) => Some((payload, id)),
                        Ok(Err(error)) => panic!("{payload}: {error}"),
                        Err(_) => None,
                    };
                    Outcome::Normal(start.elapsed(), acknowledged)
                })
            })
            .collect();
        for task in tasks {
            match task.await.expect("a storm task panicked") {
                Outcome::Acknowledged(payload, id) => {
                    storm.acknowledged.insert(payload, id);
                }
                Outcome::Cancelled(doc) => {
                    storm.cancelled += 1;
                    if doc.id() != 0 {
                        storm.left.push(doc);
                    }
                }
                Outcome::Normal(took, acknowledged) => {
                    storm.normal_max = storm.normal_max.max(took);
                    match acknowledged {
                        Some((payload, id)) => {
                            storm.acknowledged.insert(payload, id);
                        }
                        None => storm.timeouts += 1,
                    }
                }
            }
        }
    }
    storm
}

/// The same storm, of the driver's own `insert_one`: the slowest normal insert, and how
/// many timed out. Each call runs in a task of its own, whose output the cancelled caller
/// stops waiting for: dropping the driver's own future mid-way wedges the client
/// (the `driver_cancellation` module), which would make it no yardstick.
async fn driver_storm(db: &mongodb::Database) -> (Duration, usize) {
    let collection = db.collection::<BsonDocument>("plain");
    let insert = move |doc: BsonDocument| {
        let collection = collection.clone();
        tokio::spawn(async move { collection.insert_one(doc).await })
    };
    let (mut normal_max, mut timeouts) = (Duration::ZERO, 0);
    for round in 0..ROUNDS {
        let tasks: Vec<_> = (0..TASKS)
            .map(|i| {
                let insert = insert.clone();
                tokio::spawn(async move {
                    let doc = doc! { "round": round as i64, "task": i as i64 };
                    if i < TASKS - NORMAL {
                        let _ = tokio::time::timeout(CANCEL_AFTER, insert(doc)).await;
                        return None;
                    }
                    let start = Instant::now();
                    let inserted = tokio::time::timeout(NORMAL_LIMIT, insert(doc)).await;
                    Some((start.elapsed(), matches!(inserted, Ok(Ok(Ok(_))))))
                })
            })
            .collect();
        for task in tasks {
            if let Some((took, ok)) = task.await.unwrap() {
                normal_max = normal_max.max(took);
                timeouts += usize::from(!ok);
            }
        }
    }
    (normal_max, timeouts)
}

/// How long one more insert takes, with a limit.
async fn one_insert<T: Payload>(db: &impl AsDatabase, payload: &str) -> (Duration, T, i64) {
    let mut doc = T::new(payload.to_owned());
    let start = Instant::now();
    let id = match tokio::time::timeout(Duration::from_secs(20), doc.insert(db)).await {
        Ok(Ok(id)) => id,
        Ok(Err(error)) => panic!("{payload}: {error}"),
        Err(_) => panic!("{payload}: the client is wedged"),
    };
    (start.elapsed(), doc, id)
}

async fn storm_leaves_the_client_usable<T: Payload>(label: &str, handle: bool) {
    let _one = ONE_AT_A_TIME.lock().await;
    let plain = test_db(&format!("{label}_driver")).await;
    let test = test_db(label).await;
    if T::SEQUENCE.strategy_name() == "optimistic" {
        // Work-around for nx-27017 only: it orders an unfiltered sort on `_id` as text,
        // so its maximum is wrong past 9; a string `_id` makes seqid use its
        // numeric-bounded query, which nx orders right (see `support::seed_string_id`).
        test.collection::<BsonDocument>("docs")
            .insert_one(doc! { "_id": "nx-27017 sorts _id as text" })
            .await
            .unwrap();
    }
    let shared = support::shared(&test);
    let bare: mongodb::Database = (*test).clone();
    let (driver_max, driver_timeouts) = driver_storm(&plain).await;
    assert_eq!(driver_timeouts, 0, "the driver's own storm timed out");

    // Before: the same kind of insert, warmed up.
    let mut before = Duration::ZERO;
    let mut extra = Vec::new();
    for n in 0..3 {
        let (took, doc, id) = match handle {
            true => one_insert::<T>(&shared, &format!("{label}/before{n}")).await,
            false => one_insert::<T>(&bare, &format!("{label}/before{n}")).await,
        };
        before = took;
        extra.push((doc.payload().to_owned(), id));
    }
    let storm: Storm<T> = match handle {
        true => seqid_storm(&shared, label).await,
        false => seqid_storm(&bare, label).await,
    };
    let (after, doc, id) = match handle {
        true => one_insert::<T>(&shared, &format!("{label}/after")).await,
        false => one_insert::<T>(&bare, &format!("{label}/after")).await,
    };
    extra.push((doc.payload().to_owned(), id));
    eprintln!(
        "{label}: driver storm max {driver_max:?}; seqid storm max {:?} ({} cancelled, {} \
         left with an id); one insert before {before:?}, after {after:?}",
        storm.normal_max,
        storm.cancelled,
        storm.left.len()
    );
    assert_eq!(
        storm.timeouts, 0,
        "a normal insert timed out: the client is wedged"
    );
    assert!(
        storm.cancelled >= ROUNDS * (TASKS - NORMAL) / 2,
        "only {} inserts were cancelled",
        storm.cancelled
    );
    assert!(
        storm.normal_max <= driver_max * 5 + GRACE,
        "normal inserts took up to {:?} under the storm, the driver's own {driver_max:?}",
        storm.normal_max
    );
    assert!(
        after <= before * 5 + GRACE,
        "the insert after the storm took {after:?}, before it {before:?}"
    );

    // Every document a cancelled caller left with an id is finished. Through a handle,
    // the write left running says itself what became of it; through a bare database,
    // resuming meets the landed copy and only the caller's word that its payload is its
    // own settles it.
    let mut acknowledged = storm.acknowledged;
    acknowledged.extend(extra);
    let nx = seqid_harness::server_flavor().unwrap() == ServerFlavor::Nx;
    let mut unsettled = 0;
    for mut doc in storm.left {
        let resumed = match handle {
            true => match doc.resume_insert(&shared).await {
                // Work-around for nx-27017 only: it can refuse a duplicate `_id` (SQLite's
                // UNIQUE constraint) that no read shows yet, so a cancelled write that met
                // another caller's copy of the same candidate is left unknown by seqid, as
                // it must be; then only the caller's word settles it.
                Err(error) if matches!(error.kind(), ErrorKind::OutcomeUnknown { .. }) && nx => {
                    unsettled += 1;
                    doc.resume_insert(&shared).content_is_unique().await
                }
                resumed => resumed,
            },
            false => doc.resume_insert(&bare).content_is_unique().await,
        };
        let id = resumed.unwrap_or_else(|error: Error| panic!("{}: {error}", doc.payload()));
        assert_eq!(doc.id(), id);
        let previous = acknowledged.insert(doc.payload().to_owned(), id);
        assert_eq!(previous, None, "{} acknowledged twice", doc.payload());
    }
    if unsettled > 0 {
        eprintln!("{label}: {unsettled} resumes left unknown by nx-27017's unique constraint");
    }
    // Writes of cancelled callers that had no id yet never went out; those still under
    // way land (or not) first.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stored = support::all_documents(&test, "docs").await;
    let mut by_payload: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for doc in &stored {
        let Ok(payload) = doc.get_str("payload") else {
            continue; // the string `_id` above
        };
        let id = doc.get("_id").and_then(support::integer).unwrap();
        by_payload.entry(payload.to_owned()).or_default().push(id);
    }
    for (payload, id) in &acknowledged {
        assert_eq!(
            by_payload.get(payload),
            Some(&vec![*id]),
            "{payload}: stored once, under the id its call returned"
        );
    }
    for (payload, ids) in &by_payload {
        assert_eq!(ids.len(), 1, "{payload} stored twice: {ids:?}");
        assert!(
            acknowledged.contains_key(payload),
            "{payload} stored under {ids:?}, but no call said so"
        );
    }
    if handle {
        let stats = T::sequence().stats(&shared);
        assert_eq!(stats.in_flight, 0, "no candidate left in flight");
    }
}

/// `name: Model, "label", through a handle;` declares the storm test of one strategy and
/// route.
macro_rules! storm_tests {
    ($($(#[$attr:meta])* $name:ident: $model:ty, $label:literal, $handle:literal;)*) => {$(
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $name() {
            storm_leaves_the_client_usable::<$model>($label, $handle).await;
        }
    )*};
}

storm_tests! {
    #[ignore = "full suite"]
    storms_leave_counters_usable_through_a_handle: Counted, "cancel_counters_handle", true;
    #[ignore = "full suite"]
    storms_leave_counters_usable_through_a_bare_database: Counted, "cancel_counters_bare", false;
    #[ignore = "full suite"]
    storms_leave_block_usable_through_a_handle: Blocked, "cancel_block_handle", true;
    #[ignore = "full suite"]
    storms_leave_block_usable_through_a_bare_database: Blocked, "cancel_block_bare", false;
    #[ignore = "full suite"]
    storms_leave_optimistic_usable_through_a_handle: Optimistic, "cancel_optimistic_handle", true;
    #[ignore = "full suite"]
    storms_leave_optimistic_usable_through_a_bare_database:
        Optimistic, "cancel_optimistic_bare", false;
}

/// Through a handle and bare, with `insert` and with `insert_many`.
const EVERY_WAY: [(&str, Op); 4] = [
    ("handle", Op::One),
    ("bare", Op::One),
    ("handle", Op::Many),
    ("bare", Op::Many),
];

/// Cancelled inserts driven to an end: rounds of 8 tasks whose first call (one document,
/// or a batch) is dropped after 0 to 3 ms (waiting for ids, reserving, inserting),
/// through a handle and bare, after writer `first` stored four documents (the counters
/// exist). A cancelled document that kept its id is resumed; one that did not is
/// inserted again. At least 20 calls are cancelled; the only errors are unknown outcomes
/// (a resume that met a copy already stored, which it cannot tell from another writer's
/// equal document: of a batch, in a bulk error); afterwards the sequence still serves,
/// and what is stored is what the callers were told (`ledger::check`).
async fn cancelled_inserts_driven_to_an_end<T: Model>(label: &str) {
    const ROUNDS: u64 = 10;
    const TASKS: u64 = 8;
    for (via_kind, op) in EVERY_WAY {
        let label = format!("{label}_{via_kind}_{}", op.name());
        let test = test_db(&label).await;
        for collection in [T::SEQUENCE.collection, T::SEQUENCE.counters] {
            test.create_collection(collection).await.unwrap();
        }
        T::create_indexes(&*test).await.unwrap();
        if T::SEQUENCE.strategy_name() == "optimistic" {
            support::seed_string_id(&test, T::SEQUENCE.collection).await;
        }
        let via = Via::on(via_kind, test.client(), test.name()).unwrap();
        let mut told = Told::default();
        told.add::<T>(
            write::<T>(&via, "first", 1, PROJECTS, Op::One)
                .await
                .unwrap(),
        );
        let count = op.batch(0);
        let mut driven = Driven::default();
        for round in 0..ROUNDS {
            let tasks: Vec<_> = (0..TASKS)
                .map(|i| {
                    let via = via.clone();
                    let first = Duration::from_micros((i * 131 + round * 17) % 3000);
                    let drive = Drive {
                        first,
                        ..Drive::PATIENT.with(op)
                    };
                    // Each task a writer of its own for unique documents.
                    let writer = task_writer::<T>("seqid", (round * TASKS + i) as usize);
                    tokio::spawn(
                        async move { drive_task::<T>(&via, &writer, 0, 0..count, drive).await },
                    )
                })
                .collect();
            for task in tasks {
                driven.merge(task.await.unwrap());
            }
        }
        let cancelled = driven.cancelled;
        assert!(
            cancelled >= 20,
            "{label}: only {cancelled} calls were cancelled"
        );
        // Resumes that met a copy already stored, which they cannot tell from another
        // writer's equal document: unknown outcomes (of a batch, in a bulk error), and
        // nothing else.
        let errors: Vec<_> = driven.errors.keys().collect();
        let unknown = ["OutcomeUnknown", "Bulk"];
        assert!(
            errors.iter().all(|e| unknown.contains(e)),
            "{label}: {errors:?}"
        );
        // The sequence is not wedged (the cancelling client's connection pool may take
        // seconds to recover, hence the generous limit).
        let after = write::<T>(&via, "after", 1, 1, Op::One);
        let after = tokio::time::timeout(Duration::from_secs(60), after).await;
        told.add::<T>(after.expect("the sequence is not wedged").unwrap());
        let unknown = driven.unknown();
        driven.record::<T>(&mut told);
        let seqid = (ROUNDS * TASKS) as usize * count as usize;
        let expected = [("first", PROJECTS as usize), ("seqid", seqid), ("after", 1)];
        check::<T>(&test, &told, &expected).await;
        // Through a handle a cancelled caller gives back every id it held and had not
        // written, the other sequences' too: their numbers stay dense in each scope (the
        // handle's one live block hands out given-back ids first). A bare call's ids go
        // back to an allocator of its own, and are gaps.
        if via_kind == "handle" {
            for (seq, numbers) in T::OTHERS.iter().zip(check_others::<T>(&test).await) {
                for (scope, numbers) in &numbers {
                    assert_eq!(
                        numbers,
                        &support::one_to(numbers.len()),
                        "{label}: {} in {scope:?}",
                        seq.name
                    );
                }
            }
        }
        eprintln!("{label}: {cancelled} calls cancelled, {unknown} documents left unknown");
    }
}

/// `name: Model;` makes test `name`, which runs `cancelled_inserts_driven_to_an_end`.
macro_rules! driven_to_an_end {
    ($($(#[$attr:meta])* $name:ident: $model:ty;)*) => {$(
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            cancelled_inserts_driven_to_an_end::<$model>(stringify!($name)).await;
        }
    )*};
}

driven_to_an_end! {
    cancelled_counters_inserts_driven_to_an_end_store_each_document_once: CountedDoc;
    #[ignore = "full suite"]
    cancelled_block_inserts_driven_to_an_end_store_each_document_once: BlockDoc;
    #[ignore = "full suite"]
    cancelled_optimistic_inserts_driven_to_an_end_store_each_document_once: OptimisticDoc;
    #[ignore = "full suite"]
    cancelled_counters_inserts_driven_to_an_end_store_each_document_once_equal: EqualCounted;
    #[ignore = "full suite"]
    cancelled_block_inserts_driven_to_an_end_store_each_document_once_equal: EqualBlock;
    #[ignore = "full suite"]
    cancelled_optimistic_inserts_driven_to_an_end_store_each_document_once_equal:
        EqualOptimistic;
    // Two sequences in one document (issue 26): every id given back or kept together.
    #[ignore = "full suite"]
    cancelled_inserts_of_several_sequences_driven_to_an_end_store_each_document_once:
        TrackerDoc;
    #[ignore = "full suite"]
    cancelled_inserts_of_several_sequences_driven_to_an_end_store_each_document_once_equal:
        EqualTracker;
}
