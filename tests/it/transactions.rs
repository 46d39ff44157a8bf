//! Sessions and transactions: the counter outside the caller's transaction (counters,
//! block), the optimistic loop inside it, the gapless strategy's counter inside it; and
//! the write concern of every counter write, seen by the driver's command monitoring.
//!
//! nx-27017 has no real transactions (an aborted transaction keeps its writes): there the
//! transaction tests check that it still has none, say so, and stop; they never pass by
//! running what the server cannot do.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mongodb::Client;
use mongodb::bson::oid::ObjectId;
use mongodb::bson::{Document as BsonDocument, doc};
use mongodb::event::EventHandler;
use mongodb::event::command::CommandEvent;
use mongodb::options::{Acknowledgment, ClientOptions, DatabaseOptions, WriteConcern};
use seqid::action::Transaction;
use seqid::error::ErrorKind;
use seqid::{Document, Error, Sequences, Strategy};
use seqid_harness::{FaultProxy, TestDb, test_db, test_db_with};
use serde::{Deserialize, Serialize};

use crate::support;
use crate::support::ledger::{Told, check};
use crate::support::models::{
    EqualBlock, EqualCounted, EqualGapless, EqualOptimistic, Model, PROJECTS, WIDE,
};
use crate::support::transactions::{in_transactions, without_transactions};
use crate::support::writers::{BATCH, Op, Via, task_writer, write};
use crate::support::{
    all_documents, assert_transaction_required, counter_value, one_to, seed_string_id,
};

unique_model!(
    Invoice = "txn-invoice",
    "invoice",
    collection = "invoices",
    strategy = "gapless"
);
unique_model!(
    Counted = "txn-counted",
    "txn_counted",
    collection = "txn_counted"
);
unique_model!(
    Blocked = "txn-block",
    "txn_block",
    collection = "txn_block",
    strategy = "block",
    block_size = 10
);
unique_model!(
    Opt = "txn-optimistic",
    "txn_opt",
    collection = "txn_opt",
    strategy = "optimistic"
);

/// Every third transaction of tasks 0, 1 and 2 aborts on purpose (see
/// `in_transactions`): the documents they held, `per_task` documents a task, `batch` per
/// transaction.
fn aborted(per_task: u32, batch: u32) -> u32 {
    let aborted: u32 = (0..per_task)
        .step_by(batch as usize)
        .skip(1)
        .step_by(3)
        .map(|first| batch.min(per_task - first))
        .sum();
    3 * aborted
}

/// `tasks` tasks insert `per_task` documents of `T` each through `via`, in transactions
/// of their own of `batch` documents, some aborted on purpose, some run again by `Transaction`
/// after a write conflict (`in_transactions`). Only committed documents are acknowledged,
/// and they are stored, exactly (`ledger::check`, beside what writer `first` stored
/// before); an attempt that did not commit took an id no committed document has; and the
/// ids keep the strategy's promise: counters hand every id out once, to a committed
/// document or an abandoned attempt (a gap, never a repeat); blocks never twice, within
/// what the counter reserved; optimistic and gapless `1..=n` (a rolled back id was never
/// stored, or was taken back: the next maximum, or counter, hands it out again), an
/// abandoned attempt's ids at most a batch past the last. Returns the number of
/// attempts, retries included. With `reads_first`, each transaction reads before its
/// insert (`in_transactions`).
async fn in_transactions_checked<T: Model + Document<Id = i64>>(
    test: &TestDb,
    via: &Via,
    (tasks, per_task, batch): (u32, u32, u32),
    first: usize,
    reads_first: bool,
) -> usize {
    let label = format!("{} {} {batch}", T::SEQUENCE.name, via.name());
    let mut told = Told::default();
    if first > 0 {
        told.add::<T>(
            write::<T>(via, "first", 1, first as u32, Op::One)
                .await
                .unwrap(),
        );
    }
    let seen = in_transactions::<T>(via, tasks, per_task, batch, reads_first).await;
    let n = (tasks * per_task - aborted(per_task, batch)) as usize;
    assert_eq!(seen.committed.len(), n, "{label}: committed");
    let committed = seen
        .committed
        .iter()
        .map(|&(id, task, n)| (id, task_writer::<T>("seqid", task as usize), n));
    told.add::<T>(committed.collect());
    let ids = check::<T>(test, &told, &[("first", first), ("seqid", n)]).await;
    let ids = &ids[""];
    let all = n + first;
    let name = T::SEQUENCE.name;
    match T::SEQUENCE.strategy {
        Strategy::Counters => {
            // Every id the counter handed out went to a committed document or an attempt
            // that did not commit (a gap), once.
            let last = counter_value(test, name).await.unwrap();
            let mut every: Vec<i64> = ids.iter().chain(&seen.abandoned).copied().collect();
            every.sort_unstable();
            assert_eq!(every, (1..=last).collect::<Vec<_>>(), "{label}");
            let aborted = aborted(per_task, batch) as usize;
            assert!(
                seen.abandoned.len() >= aborted,
                "{label}: {:?}",
                seen.abandoned
            );
        }
        Strategy::Block { .. } => {
            let distinct: BTreeSet<i64> = ids.iter().chain(&seen.abandoned).copied().collect();
            assert_eq!(
                distinct.len(),
                ids.len() + seen.abandoned.len(),
                "{label}: no id twice"
            );
            let reserved = counter_value(test, name).await.unwrap();
            assert!(
                distinct.last().is_some_and(|&top| top <= reserved),
                "{label}"
            );
        }
        _ => {
            assert_eq!(ids, &one_to(all), "{label}: no gap, ever");
            // An attempt that did not commit took ids of its snapshot, at most a batch
            // past the last, and gave them back with its rollback.
            let top = (all + batch as usize) as i64;
            assert!(
                seen.abandoned.iter().all(|id| (1..=top).contains(id)),
                "{label}: abandoned {:?}",
                seen.abandoned
            );
            if T::SEQUENCE.strategy == Strategy::Gapless {
                assert_eq!(counter_value(test, name).await, Some(all as i64), "{label}");
            }
        }
    }
    seen.attempts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gapless_ids_are_one_to_n_through_aborts_and_write_conflicts() {
    let test = test_db("txn_gapless").await;
    if without_transactions(&test).await {
        return;
    }
    // Through a bare database, each transaction reading the collection before its insert:
    // its snapshot is then older than the commit it waits its turn for, and its `$inc`
    // conflicts all the same (the process's line cannot spare it). Attempts beyond the six
    // aborted on purpose were run again by `Transaction` after a write conflict on the counter.
    let bare = Via::Bare(test.db().clone());
    let attempts = in_transactions_checked::<Invoice>(&test, &bare, (16, 5, 1), 0, true).await;
    let conflicts = attempts - 16 * 5;
    eprintln!("gapless, bare: {conflicts} attempts retried after a write conflict");
    assert!(conflicts > 0, "16 concurrent transactions never conflicted");
}

/// Through a handle, the process's transactions take the counter in turn (the commit
/// queue): the same promise, through the same aborts, with the turns in between.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gapless_ids_are_one_to_n_through_aborts_taking_turns() {
    let test = test_db("txn_gapless_turns").await;
    if without_transactions(&test).await {
        return;
    }
    let db = Via::Handle(support::shared(&test));
    let attempts = in_transactions_checked::<Invoice>(&test, &db, (16, 5, 1), 0, false).await;
    eprintln!(
        "gapless, handle: {} attempts retried after a write conflict",
        attempts - 16 * 5
    );
}

/// A receipt, numbered per year without a gap.
#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id(collection = "txn_receipts")]
struct Receipt {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    year: i32,
    #[seq_id("txn_receipt", scope = "year", strategy = "gapless")]
    number: i64,
    task: usize,
}

/// [`Receipt`], stored as a draft and numbered when it is issued: the same sequence.
#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id(collection = "txn_receipts")]
struct DraftReceipt {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    year: i32,
    #[seq_id(
        "txn_receipt",
        scope = "year",
        strategy = "gapless",
        numbered = "later"
    )]
    number: Option<i64>,
    task: usize,
}

/// The tasks inserting receipts at once, one receipt of each year each.
const WRITERS: usize = 16;

/// The most transactions of [`receipts_at_once`] run again that the test lets pass (the
/// process's line took them to none in 10 runs of the four cases; two lines, 150 or so).
const MOST_RETRIED: usize = 4;

/// What each task does in its transactions: insert a new receipt, or number a stored
/// draft (`number_draft`, which reads the draft in the transaction before it takes its id).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Work {
    Insert,
    IssueDraft,
}

/// 16 tasks of one process number gapless receipts at once, one of 2026 then one of 2027
/// (each year's counter), each in a transaction of its own run with `Transaction`, half
/// the tasks through `ways[0]` and half through `ways[1]`: inserted, or stored as drafts
/// first and issued (`work`). Every receipt is stored once, with the number its task was
/// told; the numbers of each year are `1..=16`, and its counter 16. Returns how many times
/// the bodies ran again (after a write conflict on a counter).
async fn receipts_at_once(test: &TestDb, ways: [Via; 2], label: &str, work: Work) -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};

    // Concurrent transactions that would create them conflict: this is about the counters.
    for collection in ["txn_receipts", "counters"] {
        test.create_collection(collection).await.unwrap();
    }
    let years = [2026, 2027];
    let mut drafts = BTreeMap::new();
    if work == Work::IssueDraft {
        for task in 0..WRITERS {
            for year in years {
                let draft = DraftReceipt {
                    id: None,
                    year,
                    number: None,
                    task,
                };
                let id = DraftReceipt::collection(test.db())
                    .insert_one(&draft)
                    .await
                    .unwrap();
                drafts.insert((task, year), id.inserted_id.as_object_id().unwrap());
            }
        }
    }
    let drafts = Arc::new(drafts);
    let runs = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(tokio::sync::Barrier::new(WRITERS));
    let handles: Vec<_> = (0..WRITERS)
        .map(|task| {
            let via = ways[task % 2].clone();
            let (runs, barrier, label) = (runs.clone(), barrier.clone(), label.to_owned());
            let drafts = drafts.clone();
            tokio::spawn(async move {
                let mut session = via.db().client().start_session().await.unwrap();
                let mut told = Vec::new();
                for year in years {
                    // All at once, on each year's counter.
                    barrier.wait().await;
                    let draft = drafts.get(&(task, year)).copied();
                    let number = Transaction::new(&mut session)
                        .run((&via, &runs), |session, (via, runs)| {
                            runs.fetch_add(1, Ordering::Relaxed);
                            Box::pin(async move {
                                let number = match (draft, &**via) {
                                    (Some(id), Via::Handle(db)) => {
                                        let filter = doc! { "_id": id };
                                        DraftReceipt::number_draft(db, filter)
                                            .session(session)
                                            .await?
                                            .doc
                                            .number
                                    }
                                    (Some(id), Via::Bare(db)) => {
                                        let filter = doc! { "_id": id };
                                        DraftReceipt::number_draft(db, filter)
                                            .session(session)
                                            .await?
                                            .doc
                                            .number
                                    }
                                    (None, via) => {
                                        let mut receipt = Receipt {
                                            id: None,
                                            year,
                                            number: 0,
                                            task,
                                        };
                                        match via {
                                            Via::Handle(db) => {
                                                receipt.insert(db).session(session).await?
                                            }
                                            Via::Bare(db) => {
                                                receipt.insert(db).session(session).await?
                                            }
                                        };
                                        Some(receipt.number)
                                    }
                                };
                                Ok::<_, Error>(number.expect("numbered"))
                            })
                        })
                        .await
                        .unwrap_or_else(|e| panic!("{label}: task {task}, {year}: {e}"));
                    told.push(((task, year), number));
                }
                told
            })
        })
        .collect();
    let told: BTreeMap<(usize, i32), i64> = crate::support::writers::joined(handles, "the tasks")
        .await
        .into_iter()
        .flatten()
        .collect();
    // Every receipt stored once, with the number its task was told.
    let mut stored = BTreeMap::new();
    for receipt in all_documents(test, "txn_receipts").await {
        let key = (
            receipt.get_i64("task").unwrap() as usize,
            receipt.get_i32("year").unwrap(),
        );
        let number = receipt.get_i64("number").unwrap();
        assert!(
            stored.insert(key, number).is_none(),
            "{label}: {key:?} stored twice"
        );
    }
    assert_eq!(
        stored, told,
        "{label}: what is stored is what the tasks were told"
    );
    for year in years {
        let numbers: Vec<i64> = stored
            .iter()
            .filter(|((_, y), _)| *y == year)
            .map(|(_, &number)| number)
            .collect();
        let numbers: BTreeSet<i64> = numbers.into_iter().collect();
        assert_eq!(
            numbers,
            one_to(WRITERS),
            "{label}: {year}, once each, no gap"
        );
        let counter = format!("[\"txn_receipt\",{year}]");
        assert_eq!(
            counter_value(test, &counter).await,
            Some(WRITERS as i64),
            "{label}: {year}'s counter"
        );
    }
    let transactions = years.len() * WRITERS;
    let runs = runs.load(Ordering::Relaxed);
    assert!(runs >= transactions, "{label}: {runs} runs");
    runs - transactions
}

/// The transactions of a process take a gapless counter in turn across the process's
/// handles and bare databases, not per handle (issue 47): 16 tasks numbering at once, half
/// through each of two handles made from two clients, then half through a handle and half
/// through a bare database of the other client, then through bare databases of the two
/// clients; one handle for reference. Each case inserts receipts, then issues drafts, whose
/// `number_draft` reads the draft in the transaction before it takes its id (so it takes
/// the counter's turn before that read). Before, each handle had a line of its own and a
/// bare call none: the transactions of different lines conflicted on the counter and ran
/// again, about 150 times for these 32 transactions; drafts conflicted through one handle
/// too (160 to 183), the turn coming after the read that fixed their snapshot. Now they
/// wait in one line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gapless_transactions_take_turns_across_the_handles_of_a_process() {
    let cases = [
        ("one handle", ["handle", "the same"]),
        ("two handles", ["handle", "handle"]),
        ("a handle and a bare database", ["handle", "bare"]),
        ("two bare databases", ["bare", "bare"]),
    ];
    for (case, ways) in cases {
        for work in [Work::Insert, Work::IssueDraft] {
            let label = format!("{case}, {work:?}");
            let test = test_db("txn_gapless_lines").await;
            if without_transactions(&test).await {
                return;
            }
            // Two clients of one process: nothing the driver shares between them.
            let other = mongodb::Client::with_uri_str(test.uri()).await.unwrap();
            let first = Via::on(ways[0], test.client(), test.name()).unwrap();
            let second = match ways[1] {
                "the same" => first.clone(),
                way => Via::on(way, &other, test.name()).unwrap(),
            };
            let retried = receipts_at_once(&test, [first, second], &label, work).await;
            eprintln!(
                "gapless receipts, {label}: {retried} of {} transactions run again",
                2 * WRITERS
            );
            assert!(
                retried <= MOST_RETRIED,
                "{label}: {retried} transactions run again, more than {MOST_RETRIED}: the \
                 process's transactions did not take the counter in turn"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_outside_the_transaction_cost_a_gap_per_rollback_never_a_repeat() {
    let test = test_db("txn_counters").await;
    if without_transactions(&test).await {
        return;
    }
    let db = Via::Handle(support::shared(&test));
    // The counter exists before the tasks start: SecantusDB may answer a concurrent first
    // use's upsert with no document after applying it (a gap nobody learns of; see
    // `support::assert_dense`), and this test is about transactions, not first use.
    test.collection::<BsonDocument>("counters")
        .insert_one(doc! { "_id": "txn_counted", "seq": 0 })
        .await
        .unwrap();
    // So does the collection: concurrent transactions that would create it conflict, and
    // an attempt whose insert fails has its id unset, where the accounting cannot see it
    // (a gap all the same, never a repeat).
    test.create_collection("txn_counted").await.unwrap();
    in_transactions_checked::<Counted>(&test, &db, (16, 5, 1), 0, false).await;
    in_transactions_checked::<Blocked>(&test, &db, (16, 5, 1), 0, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn optimistic_inserts_in_transactions_take_fresh_ids_on_retry() {
    let test = test_db("txn_optimistic").await;
    if without_transactions(&test).await {
        return;
    }
    let db = Via::Handle(support::shared(&test));
    in_transactions_checked::<Opt>(&test, &db, (8, 5, 1), 0, false).await;
}

/// The same transactions with equal documents, through a handle and bare, one document
/// or a batch per transaction, 8 tasks of 8 documents, after writer `first` stored one
/// document per scope (the counters exist). The collections exist beforehand
/// (concurrent transactions that would create them conflict), and the optimistic
/// collection holds a string `_id` (`seed_string_id`).
async fn equal_documents_in_transactions<T: Model + Document<Id = i64>>(label: &str) {
    for (via, batch) in [
        ("handle", 1),
        ("bare", 1),
        ("handle", BATCH),
        ("bare", BATCH),
    ] {
        let test = test_db(&format!("{label}_{via}_{batch}")).await;
        if without_transactions(&test).await {
            return;
        }
        for collection in [T::SEQUENCE.collection, T::SEQUENCE.counters] {
            test.create_collection(collection).await.unwrap();
        }
        T::create_indexes(&*test).await.unwrap();
        if T::SEQUENCE.strategy_name() == "optimistic" {
            seed_string_id(&test, T::SEQUENCE.collection).await;
        }
        let via = Via::on(via, test.client(), test.name()).unwrap();
        in_transactions_checked::<T>(&test, &via, (8, 8, batch), PROJECTS as usize, false).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn gapless_ids_are_one_to_n_through_aborts_and_write_conflicts_equal() {
    equal_documents_in_transactions::<EqualGapless>("txn_equal_gapless").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_outside_the_transaction_cost_a_gap_per_rollback_equal() {
    equal_documents_in_transactions::<EqualCounted>("txn_equal_counters").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocks_outside_the_transaction_never_repeat_an_id_equal() {
    equal_documents_in_transactions::<EqualBlock>("txn_equal_block").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn optimistic_inserts_in_transactions_take_fresh_ids_on_retry_equal() {
    equal_documents_in_transactions::<EqualOptimistic>("txn_equal_optimistic").await;
}

#[tokio::test]
async fn a_gapless_insert_outside_a_transaction_is_refused_before_anything_is_written() {
    let test = test_db("txn_required").await;
    let db = support::shared(&test);
    let mut invoice = Invoice::make("seqid-0", 0);
    let error = invoice.insert(&db).await.unwrap_err();
    assert_transaction_required(&error, false);
    assert_eq!(error.sequence().map(|s| s.name), Some("invoice"));
    let mut session = test.client().start_session().await.unwrap();
    let error = invoice.insert(&db).session(&mut session).await.unwrap_err();
    assert_transaction_required(&error, true);
    let mut many = vec![Invoice::make("seqid-0", 1), Invoice::make("seqid-0", 2)];
    let error = Invoice::insert_many(&mut many, &db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::TransactionRequired { .. }),
        "{error:?}"
    );
    // An empty batch is refused the same: whether a call needs a transaction does not
    // depend on how many documents it carries.
    let error = Invoice::insert_many(&mut [], &db).await.unwrap_err();
    assert_transaction_required(&error, false);
    assert_eq!(error.sequence().map(|s| s.name), Some("invoice"));
    assert_eq!(invoice.id, 0);
    assert!(many.iter().all(|i| i.id == 0));
    assert_eq!(
        counter_value(&db, "invoice").await,
        None,
        "no counter written"
    );
    assert!(all_documents(&db, "invoices").await.is_empty());
    // The session is as it was: a plain write in it works.
    test.collection::<BsonDocument>("other")
        .insert_one(doc! { "x": 1 })
        .session(&mut session)
        .await
        .unwrap();
}

/// Started commands, by name, with their bodies.
#[derive(Default)]
struct Commands(Mutex<Vec<(String, BsonDocument)>>);

impl Commands {
    fn handler(self: &Arc<Self>) -> EventHandler<CommandEvent> {
        let commands = self.clone();
        EventHandler::callback(move |event| {
            if let CommandEvent::Started(started) = event {
                commands
                    .0
                    .lock()
                    .unwrap()
                    .push((started.command_name.clone(), started.command.clone()));
            }
        })
    }

    /// The bodies of the `name` commands sent to `collection`.
    fn to(&self, name: &str, collection: &str) -> Vec<BsonDocument> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|(n, body)| n == name && body.get_str(name).ok() == Some(collection))
            .map(|(_, body)| body.clone())
            .collect()
    }

    fn clear(&self) {
        self.0.lock().unwrap().clear();
    }
}

/// The sequence a counter's `findAndModify` updates.
fn sequence_of(body: &BsonDocument) -> String {
    body.get_document("query")
        .and_then(|query| query.get_str("_id"))
        .unwrap_or_default()
        .to_owned()
}

#[derive(Debug, Serialize, Document)]
#[seq_id(
    "wc_block",
    collection = "wc_block",
    strategy = "block",
    block_size = 2,
    counter_write_concern = "database"
)]
struct DatabaseConcern {
    #[serde(rename = "_id")]
    id: i64,
}

#[tokio::test]
async fn counter_writes_carry_their_write_concern_and_inserts_the_collections() {
    let commands = Arc::new(Commands::default());
    let handler = commands.handler();
    let test = test_db_with("write_concern", move |o| {
        o.command_event_handler = Some(handler)
    })
    .await;
    // The database's own: one node, journaled.
    let w1 = DatabaseOptions::builder()
        .write_concern(
            WriteConcern::builder()
                .w(Acknowledgment::Nodes(1))
                .journal(true)
                .build(),
        )
        .build();
    let db = Sequences::new(test.client()).database_with_options(test.name(), w1);
    for n in 0..3 {
        Counted::make("seqid-0", n).insert(&db).await.unwrap();
        DatabaseConcern { id: 0 }.insert(&db).await.unwrap();
    }
    let mut batch = vec![Counted::make("seqid-1", 0), Counted::make("seqid-1", 1)];
    Counted::insert_many(&mut batch, &db).await.unwrap();

    let concern = |body: &BsonDocument| body.get_document("writeConcern").ok().cloned();
    let counted = commands.to("findAndModify", "counters");
    let (majority, database): (Vec<_>, Vec<_>) = counted
        .iter()
        .partition(|body| sequence_of(body) == "txn_counted");
    // Each counter's first `$inc` goes without the upsert and finds none: checked, then
    // made by the upsert, with the same write concern.
    assert_eq!(
        majority.len(),
        1 + 4,
        "the first use's check, three inserts and one insert_many"
    );
    for body in &majority {
        // A majority, and the database's journal: a single server may acknowledge a
        // majority before its journal holds the write.
        assert_eq!(
            concern(body),
            Some(doc! { "w": "majority", "j": true }),
            "{body}"
        );
    }
    assert_eq!(
        database.len(),
        1 + 2,
        "the first use's check, blocks of 2 for 3 inserts"
    );
    for body in &database {
        assert_eq!(concern(body), Some(doc! { "w": 1, "j": true }), "{body}");
    }
    for collection in ["txn_counted", "wc_block"] {
        let inserts = commands.to("insert", collection);
        assert!(!inserts.is_empty());
        for body in &inserts {
            assert_eq!(
                concern(body),
                Some(doc! { "w": 1, "j": true }),
                "the database's own: {body}"
            );
        }
    }

    if without_transactions(&test).await {
        return;
    }
    // In a transaction: the counters strategy's `$inc` stays outside it, with its
    // concern; the gapless one joins it, and the transaction's concern applies at commit.
    commands.clear();
    let mut session = test.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    Counted::make("seqid-2", 0)
        .insert(&db)
        .session(&mut session)
        .await
        .unwrap();
    Invoice::make("seqid-2", 0)
        .insert(&db)
        .session(&mut session)
        .await
        .unwrap();
    session.commit_transaction().await.unwrap();
    let counters = commands.to("findAndModify", "counters");
    // The gapless counter's first `$inc` in the transaction finds none: checked, then made
    // by the upsert, both in the transaction.
    assert_eq!(counters.len(), 1 + 2);
    for body in counters {
        match sequence_of(&body).as_str() {
            "txn_counted" => {
                assert_eq!(concern(&body), Some(doc! { "w": "majority", "j": true }));
                assert!(
                    body.get("autocommit").is_none(),
                    "outside the transaction: {body}"
                );
            }
            _ => {
                assert_eq!(concern(&body), None, "{body}");
                assert_eq!(body.get_bool("autocommit"), Ok(false), "in the transaction");
            }
        }
    }
    for collection in ["txn_counted", "invoices"] {
        for body in commands.to("insert", collection) {
            assert_eq!(
                body.get_bool("autocommit"),
                Ok(false),
                "in the transaction: {body}"
            );
        }
    }
}

/// A call of `Transaction` cut while its commit waits for a connection (the pool's only
/// one taken by a read held at a paused proxy) holds the gapless counter against no one.
/// The driver marks the transaction committed before it sends the commit, so the commit
/// that never left is never heard of, and dropping the session aborts nothing: without
/// seqid's guard (`killSessions` of the session, sent once the connection is free) the
/// transaction would hold the counter until its lifetime ran out (60 s), and the next
/// writer's `$inc` would conflict all that time. The next writer gets the id the cut call
/// took, which its transaction gave back: the cut commit never committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_cut_before_its_commit_left_holds_the_counter_against_no_one() {
    let test = test_db("txn_cut_commit").await;
    if without_transactions(&test).await {
        return;
    }
    for collection in ["invoices", "counters", "held"] {
        test.client()
            .database(test.name())
            .create_collection(collection)
            .await
            .unwrap();
    }
    let proxy = FaultProxy::for_test_db(&test).await.unwrap();
    let mut options = ClientOptions::parse(proxy.uri()).await.unwrap();
    options.max_pool_size = Some(1);
    let client = Client::with_options(options).unwrap();
    let db = Sequences::new(&client).database(test.name());
    let mut session = client.start_session().await.unwrap();
    let call = Transaction::new(&mut session).run((&db, &proxy), |session, (db, proxy)| {
        Box::pin(async move {
            let mut invoice = Invoice::make("cut", 0);
            let id = invoice.insert(*db).session(session).await?;
            // The pool's only connection goes to a read the proxy holds: the commit waits.
            proxy.pause();
            let held = db.collection::<BsonDocument>("held");
            tokio::spawn(async move { held.find_one(doc! {}).await });
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok::<_, Error>(id)
        })
    });
    let cut = tokio::time::timeout(Duration::from_millis(600), call).await;
    assert!(cut.is_err(), "the commit had a connection: {cut:?}");
    // As a request handler that went away drops it.
    drop(session);
    proxy.resume();

    // Through a client of its own, not through the proxy.
    let direct = support::shared(&test);
    let mut session = test.client().start_session().await.unwrap();
    let started = Instant::now();
    let next = Transaction::new(&mut session)
        .time_limit(Duration::from_secs(20))
        .run(&direct, |session, db| {
            Box::pin(async move {
                let mut invoice = Invoice::make("next", 0);
                invoice.insert(*db).session(session).await
            })
        })
        .await
        .unwrap_or_else(|error| {
            panic!(
                "the counter is still held {:.1?} after the cut: {error}",
                started.elapsed()
            )
        });
    assert_eq!(next, 1, "the cut transaction's id, given back");
    let stored = all_documents(&direct, "invoices").await;
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0].get_str("writer"), Ok("next"), "{stored:?}");
    assert_eq!(counter_value(&direct, "invoice").await, Some(1));
}
