//! Other writers beside seqid whose documents are equal to seqid's (issue 17): the
//! MongoDB tutorial's loop by hand in another process, and a writer that stores an equal
//! document under the very id seqid is about to write. Nothing in such a document tells
//! one caller's from another's, so nothing but the server's acknowledgement of a caller's
//! own write may tell it "stored under id N"; each test checks by count and by id
//! (`ledger::check`).

use mongodb::bson::doc;
use seqid::Model as _;
use seqid::error::ErrorKind;
use seqid::{AsDatabase, Document, Error};
use seqid_harness::test_db;

use crate::support::ledger::{Fate, Told, assert_strategy, check, fates};
use crate::support::models::{
    EqualBlock, EqualCounted, EqualOptimistic, Model, OptimisticDoc, PROJECTS,
};
use crate::support::writers::{Op, Via, number_of, worker_mode, write};
use crate::support::{Thief, Workers, seed_string_id};

/// 16 tasks insert 40 documents each through `via` with the optimistic strategy (a
/// minute's budget: the models' own), while another OS process runs the tutorial's optimistic loop by hand
/// for 200 documents, on a collection that holds a string `_id`. No insert fails (the
/// loop retries while the server answers), every document is stored once, acknowledged
/// to one caller, and the ids are `1..=840`; with unique and with equal documents.
async fn tasks_beside_the_tutorials_loop_in_another_process<T: Model>(
    label: &str,
    via: &str,
    tutorial: &str,
) {
    let test = test_db(label).await;
    let via = Via::on(via, test.client(), test.name()).unwrap();
    seed_string_id(&test, T::SEQUENCE.collection).await;
    let mode = worker_mode(tutorial, "bare", Op::One, "tutorial");
    let mut tutorial = Workers::spawn(&test, [mode], 1, 200);
    tutorial.go();
    let ours = write::<T>(&via, "seqid", 16, 40, Op::One).await.unwrap();
    let (theirs, _) = tutorial.finish_lines().await;
    let mut told = Told::default();
    told.add::<T>(ours);
    told.add::<T>(theirs);
    // Unique documents' writers are `seqid-<task>`, in the group `seqid`.
    let expected = [("seqid", 640), ("tutorial", 200)];
    let ids = check::<T>(&test, &told, &expected).await;
    assert_strategy::<T>(&ids, &told, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn equal_tickets_of_bare_tasks_and_the_tutorials_loop_are_each_stored_once() {
    tasks_beside_the_tutorials_loop_in_another_process::<EqualOptimistic>(
        "equal_tutorial_bare",
        "bare",
        "tutorial",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn equal_tickets_of_a_handle_and_the_tutorials_loop_are_each_stored_once() {
    tasks_beside_the_tutorials_loop_in_another_process::<EqualOptimistic>(
        "equal_tutorial_handle",
        "handle",
        "tutorial",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn unique_tickets_of_bare_tasks_and_the_tutorials_loop_are_each_stored_once() {
    tasks_beside_the_tutorials_loop_in_another_process::<OptimisticDoc>(
        "unique_tutorial_bare",
        "bare",
        "tutorial-unique",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn unique_tickets_of_a_handle_and_the_tutorials_loop_are_each_stored_once() {
    tasks_beside_the_tutorials_loop_in_another_process::<OptimisticDoc>(
        "unique_tutorial_handle",
        "handle",
        "tutorial-unique",
    )
    .await;
}

/// Through a handle and bare, with `insert` and with `insert_many`.
const EVERY_WAY: [(&str, Op); 4] = [
    ("handle", Op::One),
    ("bare", Op::One),
    ("handle", Op::Many),
    ("bare", Op::Many),
];

/// Another writer stores a document equal to seqid's under the very id seqid is about to
/// write (`support::Thief`: deterministic), through a handle and bare, for `insert` and
/// `insert_many`, after writer `first` stored four documents. The other writer's document
/// is never taken for this call's: the optimistic strategy takes new ids; the others
/// fail the document (`DuplicateKey`, in a batch `failed`), its id unset.
async fn another_writers_equal_document<T: Model>(label: &str) {
    let optimistic = T::SEQUENCE.strategy_name() == "optimistic";
    for (via_kind, op) in EVERY_WAY {
        let label = format!("{label}_{via_kind}_{}", op.name());
        let thief = Thief::writing(T::SEQUENCE.collection, 0, doc! { "writer": "seqid" });
        let test = thief.watch(&label).await;
        if optimistic {
            seed_string_id(&test, T::SEQUENCE.collection).await;
        }
        let via = Via::on(via_kind, test.client(), test.name()).unwrap();
        let mut told = Told::default();
        told.add::<T>(
            write::<T>(&via, "first", 1, PROJECTS, Op::One)
                .await
                .unwrap(),
        );
        // The id of a single document (two for the optimistic strategy: its first
        // attempt's and its retry's), the first two of a batch.
        let steals = if op == Op::One && !optimistic { 1 } else { 2 };
        thief.arm(steals);
        let count = op.batch(0);
        let mut docs: Vec<T> = (0..count).map(|n| T::make("seqid", n)).collect();
        let result = via.insert(&mut docs, None).await;
        let stolen = thief.stolen();
        let ids: Vec<i64> = docs.iter().map(number_of).collect();
        assert!(
            ids.iter().all(|id| !stolen.contains(id)),
            "{label}: {result:?}, ids {ids:?}, where the other writer stored {stolen:?}"
        );
        let failed: Vec<usize> = match &result {
            Ok(()) => {
                assert!(optimistic, "{label}: no error, ids {ids:?}");
                vec![]
            }
            Err(error) => match error.kind() {
                ErrorKind::DuplicateKey { id, .. } if !optimistic && op == Op::One => {
                    assert_eq!((*id, ids[0]), (stolen[0], 0), "{label}: the id is unset");
                    vec![0]
                }
                ErrorKind::Bulk(bulk) if !optimistic && op == Op::Many => {
                    assert_eq!(bulk.inserted, [2, 3], "{label}: {error}");
                    assert!(bulk.unknown.is_empty(), "{label}: {error}");
                    let failed: Vec<_> = bulk
                        .failed
                        .iter()
                        .map(|f| (f.index, f.id, f.code))
                        .collect();
                    let taken = Some(11000);
                    assert_eq!(
                        failed,
                        [(0, stolen[0], taken), (1, stolen[1], taken)],
                        "{label}"
                    );
                    assert_eq!(&ids[..2], [0, 0], "{label}: refused documents are unset");
                    vec![0, 1]
                }
                _ => panic!("{label}: {error:?}"),
            },
        };
        assert_eq!(stolen.len(), steals, "{label}: what the other writer took");
        let acked = (0..count).filter(|n| !failed.contains(&(*n as usize)));
        let lines = acked.map(|n| (ids[n as usize], "seqid".to_owned(), n));
        told.add::<T>(lines.collect());
        // The other writer's documents are `seqid`'s too, acknowledged to it alone.
        told.add::<T>(stolen.iter().map(|&id| (id, "seqid".into(), 0)).collect());
        let seqid = count as usize - failed.len() + stolen.len();
        check::<T>(
            &test,
            &told,
            &[("first", PROJECTS as usize), ("seqid", seqid)],
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_equal_document_under_the_id_is_not_taken_for_ours_counters() {
    another_writers_equal_document::<EqualCounted>("equal_thief_counters").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_equal_document_under_the_id_is_not_taken_for_ours_block() {
    another_writers_equal_document::<EqualBlock>("equal_thief_block").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_equal_document_under_the_id_is_not_taken_for_ours_optimistic() {
    another_writers_equal_document::<EqualOptimistic>("equal_thief_optimistic").await;
}

/// The `optimistic` module's ids taken every time, with equal documents: another writer
/// stores a document equal to seqid's under every id seqid tries, and two attempts run
/// out. Nothing is acknowledged to seqid, through a handle or bare: a single document
/// fails (`RetriesExhausted`), a batch's documents are listed as failed, ids unset.
#[tokio::test]
async fn optimistic_attempts_run_out_on_equal_documents() {
    async fn twice(db: &impl AsDatabase, docs: &mut [EqualOptimistic]) -> Result<(), Error> {
        match docs {
            [doc] => doc.insert(db).max_attempts(2).await.map(drop),
            docs => EqualOptimistic::insert_many(docs, db)
                .max_attempts(2)
                .await
                .map(drop),
        }
    }
    let collection = EqualOptimistic::SEQUENCE.collection;
    for (via_kind, op) in EVERY_WAY {
        let label = format!("optimistic_attempts_run_out_{via_kind}_{}", op.name());
        let thief = Thief::writing(collection, 0, doc! { "writer": "seqid" });
        let test = thief.watch(&label).await;
        seed_string_id(&test, collection).await;
        let via = Via::on(via_kind, test.client(), test.name()).unwrap();
        thief.arm(usize::MAX);
        let mut docs: Vec<EqualOptimistic> = (0..op.batch(0))
            .map(|n| EqualOptimistic::make("seqid", n))
            .collect();
        let result = match &via {
            Via::Handle(db) => twice(db, &mut docs).await,
            Via::Bare(db) => twice(db, &mut docs).await,
        };
        thief.arm(0);
        let refused = [Fate::Refused].repeat(docs.len());
        assert_eq!(fates(&docs, Some(&result)), refused, "{label}: {result:?}");
        match result.as_ref().map_err(Error::kind) {
            Err(ErrorKind::RetriesExhausted { attempts: 2, .. }) if op == Op::One => {}
            Err(ErrorKind::Bulk(bulk)) if op == Op::Many => {
                assert_eq!(bulk.failed.len(), docs.len(), "{label}: {bulk:?}");
            }
            _ => panic!("{label}: {result:?}"),
        }
        let stolen = thief.stolen();
        assert_eq!(stolen.len(), 2 * docs.len(), "{label}: two attempts each");
        let mut told = Told::default();
        told.add::<EqualOptimistic>(stolen.iter().map(|&id| (id, "seqid".into(), 0)).collect());
        check::<EqualOptimistic>(&test, &told, &[("seqid", stolen.len())]).await;
    }
}
