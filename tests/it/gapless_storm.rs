//! The gapless strategy in a storm: two processes (this one and a worker), 16 tasks each,
//! insert documents one per transaction of their own (`Transaction`) on one counter, through
//! one `Sequences` handle per process (the process's commit queue makes its transactions
//! take turns), while some calls are cancelled mid-flight and the server is
//! killed and restarted. Whatever befell them, the committed documents are numbered
//! `1..=N`, each once, and the counter is `N`.
//!
//! Always against a SecantusDB of its own, as the fault suite (`faults.rs`): it has real
//! transactions (nx-27017 has none, see `support::transactions`), and it can be killed.
//! Every run of a transaction's callback makes a document of its own, whose fate the
//! writers record (`support::storm`): acknowledged, aborted, or unknown. Every document
//! stored is then read back and held to them.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use mongodb::bson::{Document as BsonDocument, doc};
use seqid::Model as _;

use crate::support::faults::{Rig, until_stored};
use crate::support::ledger::{Told, check, stored};
use crate::support::models::GaplessDoc;
use crate::support::storm::{COMMIT_RETRIED, Cut, Fate, parse, storm};
use crate::support::writers::{Via, task_writer};
use crate::support::{Workers, counter_value, one_to};

/// The storm's database.
const DB: &str = "storm";

/// Tasks in each process, and the documents each commits.
const TASKS: usize = 16;
const QUOTA: usize = 15;

/// About one call in five is given up 0 to 3 ms after it starts (waiting its turn, or
/// taking its id) or, as often, 0 to 3 ms after its commit is sent (a commit takes a
/// round trip or two): some before the commit leaves, some while it is on its way.
fn cut() -> Option<Cut> {
    let after = Duration::from_micros(rand::random_range(0..3000));
    match rand::random_range(0..10) {
        0 => Some(Cut::After(after)),
        1 => Some(Cut::InCommit(after)),
        _ => None,
    }
}

/// Once the storm has stored `threshold` documents, kills the server (SIGKILL) and
/// restarts it on the same port and data, after an outage longer than the clients' server
/// selection timeout (2 s), as `faults::crash_once` does: commands fail meanwhile (and
/// `Transaction` runs its body, or its commit, again until the server is back; a call
/// that still fails is made again by its task); returns how many documents it had seen.
///
/// Work-around for SecantusDB 0.7.0b3 only: it commits a transaction without syncing its
/// journal, whatever the commit's write concern (`j: true` here; only plain writes honour
/// it), so a SIGKILL loses the transactions committed in its last moments, acknowledged
/// ones too, and the counter goes back with them. MongoDB journals such a commit before
/// acknowledging it. So, just before the kill, the proxy holds every request and cuts
/// every connection (the answers still on their way are lost, as a crash loses them: those
/// calls' outcomes are unknown), and `fsync` checkpoints what the server has committed:
/// every acknowledged commit is durable when the server dies. Transactions in progress and
/// commits under way still die with it.
async fn killed_mid_storm(rig: &Rig, threshold: usize) -> usize {
    let docs = rig.checker.database(DB);
    let docs = docs.collection::<BsonDocument>(GaplessDoc::SEQUENCE.collection);
    let stored = until_stored(&docs, threshold).await;
    let proxy = rig.proxy();
    proxy.pause();
    proxy.sever_all();
    // The connections are closed by their tasks, within moments.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let admin = rig.checker.database("admin");
    admin.run_command(doc! { "fsync": 1 }).await.unwrap();
    rig.server.kill().unwrap();
    // Requests now meet a dead server, as in any outage.
    proxy.resume();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    rig.server.restart_async().await.unwrap();
    stored
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn gapless_storm_of_two_processes_with_cancellations_and_a_server_kill_numbers_every_commit_densely_once()
 {
    let started = Instant::now();
    let rig = Rig::start(true).await;
    let db = rig.checker.database(DB);
    // Concurrent transactions that would create them conflict: the storm is about commits.
    for collection in [
        GaplessDoc::SEQUENCE.collection,
        GaplessDoc::SEQUENCE.counters,
    ] {
        db.create_collection(collection).await.unwrap();
    }
    // The worker through the proxy too, with the timeouts of this process's client
    // (`support::faults::app_client`).
    let uri = format!(
        "{}&serverSelectionTimeoutMS=2000&connectTimeoutMS=2000&heartbeatFrequencyMS=500",
        rig.proxy().uri()
    );
    let mut worker = Workers::spawn_at(&uri, DB, ["storm/worker".to_owned()], TASKS, QUOTA as u32);
    let via = Via::Handle(rig.app.database(DB));
    worker.go();
    let here = storm::<GaplessDoc>(&via, "parent", TASKS, QUOTA, cut);
    let (mut stormed, at_kill) = tokio::join!(here, killed_mid_storm(&rig, 2 * TASKS * QUOTA / 3));
    let lines = worker.finish_raw().await;
    stormed.merge(parse(&lines).unwrap_or_else(|| panic!("the worker printed {lines:?}")));
    assert!(at_kill < 2 * TASKS * QUOTA, "the kill came mid-storm");

    // What the writers were told, held to what is stored (`ledger::check`): every
    // acknowledged document stored once, under its id; no document stored twice; each
    // writer's documents stored no fewer than acknowledged, no more than that and its
    // unknown ones.
    let mut told = Told::default();
    for run in &stormed.runs {
        match run.fate {
            Fate::Acked(id) => told.add::<GaplessDoc>(vec![(id, run.writer.clone(), run.n)]),
            Fate::Unknown(_) => *told.unknown.entry(run.writer.clone()).or_default() += 1,
            Fate::Aborted(_) => {}
        }
    }
    check::<GaplessDoc>(&db, &told, &[]).await;
    // Every document stored: ids 1..=N, none twice, and the counter N.
    let stored = stored::<GaplessDoc>(&db).await;
    let n = stored.len();
    let ids: BTreeSet<i64> = stored.keys().map(|(_, id)| *id).collect();
    assert_eq!(ids, one_to(n), "the committed ids are 1..=N");
    let counter = counter_value(&db, GaplessDoc::SEQUENCE.name).await;
    assert_eq!(counter, Some(n as i64), "the counter is N");
    // Each stored document is an acknowledged one, under its id, or of unknown outcome:
    // none that never committed, none nobody made.
    let fates: BTreeMap<(&str, u32), Fate> = stormed
        .runs
        .iter()
        .map(|run| ((run.writer.as_str(), run.n), run.fate))
        .collect();
    assert_eq!(fates.len(), stormed.runs.len(), "a document per run");
    let mut unknown_stored: BTreeMap<&str, usize> = BTreeMap::new();
    for ((_, id), (writer, n)) in &stored {
        let n = n.expect("unique documents");
        match fates.get(&(writer.as_str(), n)) {
            Some(Fate::Acked(acked)) => assert_eq!(acked, id, "{writer} #{n}"),
            Some(Fate::Unknown(why)) => *unknown_stored.entry(why).or_default() += 1,
            other => panic!("{writer} #{n} is stored under {id}, but its run was {other:?}"),
        }
    }
    // The longest calls, and what they went through: a task that misses its quota
    // below has one of them.
    for slow in stormed.longest_calls(3) {
        eprintln!("  a longest call: {:.1?}, {}", slow.took, slow.what);
    }
    // Every task committed its quota before the deadline.
    for by in ["parent", "worker"] {
        for task in 0..TASKS {
            let writer = task_writer::<GaplessDoc>(by, task);
            assert_eq!(stormed.acked_by(&writer), QUOTA, "{writer}: committed");
        }
    }

    let mut fated: BTreeMap<String, usize> = BTreeMap::new();
    for run in &stormed.runs {
        let kind = match run.fate {
            Fate::Acked(_) => "committed".to_owned(),
            Fate::Unknown(why) => format!("unknown, {why}"),
            Fate::Aborted(why) => format!("aborted, {why}"),
        };
        *fated.entry(kind).or_default() += 1;
    }
    let committed = fated.get("committed").copied().unwrap_or(0);
    let unknown: usize = told.unknown.values().sum();
    eprintln!(
        "gapless storm: {} calls ({} cancelled, {} returned an error) made {} documents: \
         {committed} committed, {unknown} unknown ({} of them stored: {unknown_stored:?}), \
         the rest aborted; {n} stored, ids 1..={n}, counter {n}; killed at {at_kill} \
         stored; {} commands failed in this process; {:.1?} in all\n  {fated:?}",
        stormed.calls,
        stormed.cancelled,
        stormed.errors,
        stormed.runs.len(),
        unknown_stored.values().sum::<usize>(),
        rig.failures.all(),
        started.elapsed(),
    );
    if let Some(retried) = unknown_stored.get(COMMIT_RETRIED) {
        eprintln!(
            "  {retried} committed though their commit was answered TransientTransactionError \
             (SecantusDB forgets committed transactions when restarted)"
        );
    }
}
