//! Sessions and transactions: the counter outside the caller's transaction (counters,
//! block), the optimistic loop inside it, the gapless strategy's counter inside it; and
//! the write concern of every counter write, seen by the driver's command monitoring.
//!
//! nx-27017 has no real transactions (an aborted transaction keeps its writes): there the
//! transaction tests check that it still has none, say so, and stop; they never pass by
//! running what the server cannot do.

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use common::equal::Via;
use common::transactions::{Make, Seen, in_transactions, without_transactions};
use common::{counter_value, integer};

use mongodb::bson::{Document as BsonDocument, doc};
use mongodb::event::EventHandler;
use mongodb::event::command::CommandEvent;
use mongodb::options::{Acknowledgment, DatabaseOptions, WriteConcern};
use seqid::{Document, Error, Sequences};
use seqid_harness::{test_db, test_db_with};
use serde::Serialize;

#[derive(Debug, Serialize, Document)]
#[seq_id("invoice", collection = "invoices", strategy = "gapless")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
    task: u32,
    n: u32,
}

#[derive(Debug, Serialize, Document)]
#[seq_id("txn_counted", collection = "txn_counted")]
struct Counted {
    #[serde(rename = "_id")]
    id: i64,
    task: u32,
    n: u32,
}

#[derive(Debug, Serialize, Document)]
#[seq_id(
    "txn_block",
    collection = "txn_block",
    strategy = "block",
    block_size = 10
)]
struct Blocked {
    #[serde(rename = "_id")]
    id: i64,
    task: u32,
    n: u32,
}

#[derive(Debug, Serialize, Document)]
#[seq_id("txn_opt", collection = "txn_opt", strategy = "optimistic")]
struct Opt {
    #[serde(rename = "_id")]
    id: i64,
    task: u32,
    n: u32,
}

macro_rules! make {
    ($($t:ident),*) => {$(
        impl Make for $t {
            fn make(task: u32, n: u32) -> Self {
                $t { id: 0, task, n }
            }
        }
    )*};
}
make!(Invoice, Counted, Blocked, Opt);

/// Every committed document is stored, once, under its id; nothing else is stored.
async fn stored_as_committed(db: &mongodb::Database, collection: &str, seen: &Seen) -> Vec<i64> {
    let docs = common::all_documents(db, collection).await;
    let mut stored: Vec<(i64, u32, u32)> = docs
        .iter()
        .map(|d| {
            (
                integer(d.get("_id").unwrap()).unwrap(),
                integer(d.get("task").unwrap()).unwrap() as u32,
                integer(d.get("n").unwrap()).unwrap() as u32,
            )
        })
        .collect();
    stored.sort_unstable();
    let mut committed = seen.committed.clone();
    committed.sort_unstable();
    assert_eq!(stored, committed, "stored exactly what was committed");
    stored.iter().map(|(id, ..)| *id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gapless_ids_are_one_to_n_through_aborts_and_write_conflicts() {
    let test = test_db("txn_gapless").await;
    if without_transactions(&test).await {
        return;
    }
    let db = common::shared(&test);
    let seen = in_transactions::<Invoice>(&Via::Handle(db.clone()), 16, 5, 1).await;
    let n = seen.committed.len() as i64;
    assert_eq!(n, 16 * 5 - 6, "six transactions aborted on purpose");
    let ids = stored_as_committed(&db, "invoices", &seen).await;
    assert_eq!(ids, (1..=n).collect::<Vec<_>>(), "no gap, ever");
    assert_eq!(counter_value(&db, "invoice").await, Some(n));
    // An attempt that did not commit took the next id of its snapshot, at most n + 1,
    // and gave it back with its rollback.
    assert!(
        seen.abandoned.iter().all(|id| (1..=n + 1).contains(id)),
        "{:?}",
        seen.abandoned
    );
    // Attempts beyond the six aborted on purpose were retried by `and_run` after a write
    // conflict on the counter: sixteen concurrent transactions take turns.
    let conflicts = seen.attempts - 16 * 5;
    eprintln!("gapless: {conflicts} attempts retried after a write conflict");
    assert!(conflicts > 0, "16 concurrent transactions never conflicted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_outside_the_transaction_cost_a_gap_per_rollback_never_a_repeat() {
    let test = test_db("txn_counters").await;
    if without_transactions(&test).await {
        return;
    }
    let db = common::shared(&test);
    // The counter exists before the tasks start: SecantusDB may answer a concurrent first
    // use's upsert with no document after applying it (a gap nobody learns of; see
    // `common::assert_dense`), and this test is about transactions, not first use.
    test.collection::<BsonDocument>("counters")
        .insert_one(doc! { "_id": "txn_counted", "seq": 0 })
        .await
        .unwrap();
    // So does the collection: concurrent transactions that would create it conflict, and
    // an attempt whose insert fails has its id unset, where the accounting below cannot
    // see it (a gap all the same, never a repeat).
    test.create_collection("txn_counted").await.unwrap();
    let seen = in_transactions::<Counted>(&Via::Handle(db.clone()), 16, 5, 1).await;
    assert_eq!(seen.committed.len(), 16 * 5 - 6);
    let ids = stored_as_committed(&db, "txn_counted", &seen).await;
    // Every id the counter handed out went to a committed document or an attempt that
    // did not commit (a gap), once.
    let last = counter_value(&db, "txn_counted").await.unwrap();
    let mut all: Vec<i64> = ids.iter().chain(&seen.abandoned).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (1..=last).collect::<Vec<_>>());
    assert!(seen.abandoned.len() >= 6, "{:?}", seen.abandoned);

    let seen = in_transactions::<Blocked>(&Via::Handle(db.clone()), 16, 5, 1).await;
    let ids = stored_as_committed(&db, "txn_block", &seen).await;
    let distinct: BTreeSet<i64> = ids.iter().chain(&seen.abandoned).copied().collect();
    assert_eq!(
        distinct.len(),
        ids.len() + seen.abandoned.len(),
        "no id twice"
    );
    let reserved = counter_value(&db, "txn_block").await.unwrap();
    assert!(distinct.last().is_some_and(|&top| top <= reserved));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn optimistic_inserts_in_transactions_take_fresh_ids_on_retry() {
    let test = test_db("txn_optimistic").await;
    if without_transactions(&test).await {
        return;
    }
    let db = common::shared(&test);
    let seen = in_transactions::<Opt>(&Via::Handle(db.clone()), 8, 5, 1).await;
    let n = seen.committed.len() as i64;
    assert_eq!(n, 8 * 5 - 6);
    let ids = stored_as_committed(&db, "txn_opt", &seen).await;
    // A rolled back id was never stored, so the next maximum takes it again: no gap.
    assert_eq!(ids, (1..=n).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_gapless_insert_outside_a_transaction_is_refused_before_anything_is_written() {
    let test = test_db("txn_required").await;
    let db = common::shared(&test);
    let mut invoice = Invoice::make(0, 0);
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
    let mut many = vec![Invoice::make(0, 1), Invoice::make(0, 2)];
    let error = Invoice::insert_many(&mut many, &db).await.unwrap_err();
    assert!(
        matches!(error, Error::TransactionRequired { .. }),
        "{error:?}"
    );
    assert_eq!(invoice.id, 0);
    assert!(many.iter().all(|i| i.id == 0));
    assert_eq!(
        counter_value(&db, "invoice").await,
        None,
        "no counter written"
    );
    assert!(common::all_documents(&db, "invoices").await.is_empty());
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
        Counted::make(0, n).insert(&db).await.unwrap();
        DatabaseConcern { id: 0 }.insert(&db).await.unwrap();
    }
    let mut batch = vec![Counted::make(1, 0), Counted::make(1, 1)];
    Counted::insert_many(&mut batch, &db).await.unwrap();

    let concern = |body: &BsonDocument| body.get_document("writeConcern").ok().cloned();
    let counted = commands.to("findAndModify", "counters");
    let (majority, database): (Vec<_>, Vec<_>) = counted
        .iter()
        .partition(|body| sequence_of(body) == "txn_counted");
    assert_eq!(majority.len(), 4, "three inserts and one insert_many");
    for body in &majority {
        // A majority, and the database's journal: a single server may acknowledge a
        // majority before its journal holds the write.
        assert_eq!(
            concern(body),
            Some(doc! { "w": "majority", "j": true }),
            "{body}"
        );
    }
    assert_eq!(database.len(), 2, "blocks of 2 for 3 inserts");
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
    Counted::make(2, 0)
        .insert(&db)
        .session(&mut session)
        .await
        .unwrap();
    Invoice::make(2, 0)
        .insert(&db)
        .session(&mut session)
        .await
        .unwrap();
    session.commit_transaction().await.unwrap();
    let counters = commands.to("findAndModify", "counters");
    assert_eq!(counters.len(), 2);
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

/// Two other processes of 8 tasks and 16 tasks here, every insert in a transaction of its
/// own: the committed ids are exactly 1..=N across the processes, and the counter is N.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gapless_ids_are_one_to_n_across_processes() {
    use common::models::{GaplessDoc, insert_written};
    let test = test_db("txn_gapless_processes").await;
    if without_transactions(&test).await {
        return;
    }
    let db = common::shared(&test);
    let mut workers = common::Workers::spawn("gapless", &db, 2, 8, 10);
    workers.go();
    let tasks: Vec<_> = (0..16)
        .map(|task| {
            let db = db.clone();
            tokio::spawn(async move {
                let writer = format!("parent-{task}");
                let mut ids = Vec::new();
                for n in 0..10 {
                    let id = insert_written::<GaplessDoc>(&db, &writer, n).await.unwrap();
                    ids.push((id, (writer.clone(), n)));
                }
                ids
            })
        })
        .collect();
    let mut writes = common::Writes::new();
    for task in tasks {
        common::merge(&mut writes, task.await.unwrap().into_iter().collect());
    }
    common::merge(&mut writes, workers.finish().await);
    let n = 2 * 8 * 10 + 16 * 10;
    assert_eq!(
        writes.keys().copied().collect::<BTreeSet<_>>(),
        common::one_to(n),
        "committed ids 1..=N, no gap, no repeat"
    );
    assert_eq!(common::stored_writes(&db, "multi_gapless").await, writes);
    assert_eq!(counter_value(&db, "multi_gapless").await, Some(n as i64));
}
