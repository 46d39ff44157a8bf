//! Sessions and transactions: the counter outside the caller's transaction (counters,
//! block), the optimistic loop inside it, the gapless strategy's counter inside it; and
//! the write concern of every counter write, seen by the driver's command monitoring.
//!
//! nx-27017 has no real transactions (an aborted transaction keeps its writes): there the
//! transaction tests check that it still has none, say so, and stop; they never pass by
//! running what the server cannot do.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use mongodb::bson::{Document as BsonDocument, doc};
use mongodb::event::EventHandler;
use mongodb::event::command::CommandEvent;
use mongodb::options::{Acknowledgment, DatabaseOptions, WriteConcern};
use seqid::{Document, Error, Sequences, Strategy};
use seqid_harness::{TestDb, test_db, test_db_with};
use serde::Serialize;

use crate::support;
use crate::support::ledger::{Told, check};
use crate::support::models::{
    EqualBlock, EqualCounted, EqualGapless, EqualOptimistic, Model, PROJECTS, WIDE,
};
use crate::support::transactions::{in_transactions, without_transactions};
use crate::support::writers::{BATCH, Op, Via, task_writer, write};
use crate::support::{all_documents, counter_value, one_to, seed_string_id};

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
/// of their own of `batch` documents, some aborted on purpose, some retried by `and_run`
/// after a write conflict (`in_transactions`). Only committed documents are acknowledged,
/// and they are stored, exactly (`ledger::check`, beside what writer `first` stored
/// before); an attempt that did not commit took an id no committed document has; and the
/// ids keep the strategy's promise: counters hand every id out once, to a committed
/// document or an abandoned attempt (a gap, never a repeat); blocks never twice, within
/// what the counter reserved; optimistic and gapless `1..=n` (a rolled back id was never
/// stored, or was taken back: the next maximum, or counter, hands it out again), an
/// abandoned attempt's ids at most a batch past the last. Returns the number of
/// attempts, retries included.
async fn in_transactions_checked<T: Model + Document<Id = i64>>(
    test: &TestDb,
    via: &Via,
    (tasks, per_task, batch): (u32, u32, u32),
    first: usize,
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
    let seen = in_transactions::<T>(via, tasks, per_task, batch).await;
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
    // Through a bare database, each call alone: attempts beyond the six aborted on
    // purpose were retried by `and_run` after a write conflict on the counter.
    let bare = Via::Bare(test.db().clone());
    let attempts = in_transactions_checked::<Invoice>(&test, &bare, (16, 5, 1), 0).await;
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
    let attempts = in_transactions_checked::<Invoice>(&test, &db, (16, 5, 1), 0).await;
    eprintln!(
        "gapless, handle: {} attempts retried after a write conflict",
        attempts - 16 * 5
    );
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
    in_transactions_checked::<Counted>(&test, &db, (16, 5, 1), 0).await;
    in_transactions_checked::<Blocked>(&test, &db, (16, 5, 1), 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn optimistic_inserts_in_transactions_take_fresh_ids_on_retry() {
    let test = test_db("txn_optimistic").await;
    if without_transactions(&test).await {
        return;
    }
    let db = Via::Handle(support::shared(&test));
    in_transactions_checked::<Opt>(&test, &db, (8, 5, 1), 0).await;
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
        in_transactions_checked::<T>(&test, &via, (8, 8, batch), PROJECTS as usize).await;
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
    assert!(
        matches!(&error, Error::TransactionRequired { sequence, has_session: false } if sequence.name == "invoice"),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("no session was given"),
        "{error}"
    );
    let mut session = test.client().start_session().await.unwrap();
    let error = invoice.insert(&db).session(&mut session).await.unwrap_err();
    assert!(
        matches!(
            &error,
            Error::TransactionRequired {
                has_session: true,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("the session given has none running"),
        "{error}"
    );
    let mut many = vec![Invoice::make("seqid-0", 1), Invoice::make("seqid-0", 2)];
    let error = Invoice::insert_many(&mut many, &db).await.unwrap_err();
    assert!(
        matches!(error, Error::TransactionRequired { .. }),
        "{error:?}"
    );
    // An empty batch is refused the same: whether a call needs a transaction does not
    // depend on how many documents it carries.
    let error = Invoice::insert_many(&mut [], &db).await.unwrap_err();
    assert!(
        matches!(&error, Error::TransactionRequired { sequence, has_session: false } if sequence.name == "invoice"),
        "{error:?}"
    );
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
