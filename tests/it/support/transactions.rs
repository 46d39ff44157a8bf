//! Transactions: whether the server has them, and tasks inserting in transactions of
//! their own, some aborted.

use std::sync::{Arc, Mutex};

use mongodb::bson::{Document as BsonDocument, doc};
use seqid::action::Transaction;
use seqid::{Document, IdField};
use seqid_harness::{ServerFlavor, TestDb};

use super::models::Model;
use super::writers::BoxError;
use super::writers::{Via, task_writer};

/// On nx-27017, checks that its transactions still lack isolation, says so, and returns
/// `true`: the caller stops. Elsewhere, `false`. nx-27017 accepts transactions and rolls
/// an aborted one back, but shows its writes to everyone before the commit, and never
/// answers a write conflict: concurrent transactions on one counter would interleave
/// where MongoDB makes them take turns.
pub async fn without_transactions(test: &TestDb) -> bool {
    if seqid_harness::server_flavor().unwrap() != ServerFlavor::Nx {
        return false;
    }
    let mut session = test.client().start_session().await.unwrap();
    let coll = test.collection::<BsonDocument>("isolation_probe");
    session.start_transaction().await.unwrap();
    coll.insert_one(doc! { "_id": 1 })
        .session(&mut session)
        .await
        .unwrap();
    let seen_outside = coll.find_one(doc! { "_id": 1 }).await.unwrap().is_some();
    session.abort_transaction().await.unwrap();
    assert!(
        seen_outside,
        "nx-27017 now isolates transactions: run the transaction tests on it"
    );
    eprintln!(
        "nx-27017 shows uncommitted writes outside their transaction: transaction test not \
         run (checked, not assumed)"
    );
    true
}

/// What the tasks saw: ids of committed transactions, and every id an attempt took
/// whose transaction did not commit (aborted on purpose or retried).
#[derive(Default)]
pub struct Seen {
    /// `(id, task, n)` of every committed document.
    pub committed: Vec<(i64, u32, u32)>,
    pub abandoned: Vec<i64>,
    /// Runs of the transaction's body: one per transaction, plus the runs again.
    pub attempts: usize,
}

/// `tasks` tasks, each inserting `per_task` documents through `db` (writer `seqid`, see
/// `writers::task_writer`), `batch` per transaction (one `insert`, or one `insert_many`
/// of `batch`), run with `Transaction` (which runs it again after a transient error); every
/// third transaction of task 0, 1 and 2 aborts on purpose after its insert. With
/// `reads_first`, each transaction reads the collection before its insert, as an
/// application may: its snapshot is taken then, before any wait of its insert.
pub async fn in_transactions<T: Model + Document<Id = i64>>(
    db: &Via,
    tasks: u32,
    per_task: u32,
    batch: u32,
    reads_first: bool,
) -> Seen {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let (db, seen) = (db.clone(), seen.clone());
            tokio::spawn(async move {
                let mut session = db.db().client().start_session().await.unwrap();
                for first in (0..per_task).step_by(batch as usize) {
                    let abort = task < 3 && first / batch % 3 == 1;
                    let range = first..per_task.min(first + batch);
                    let context = (db.clone(), seen.clone());
                    let result = Transaction::new(&mut session)
                        .run(context, |session, (db, seen)| {
                            let range = range.clone();
                            Box::pin(async move {
                                seen.lock().unwrap().attempts += 1;
                                if reads_first {
                                    db.db()
                                        .collection::<BsonDocument>(T::SEQUENCE.collection)
                                        .find_one(doc! {})
                                        .session(&mut *session)
                                        .await?;
                                }
                                let writer = task_writer::<T>("seqid", task as usize);
                                let mut docs: Vec<T> = range.map(|n| T::make(&writer, n)).collect();
                                let inserted = db.insert(&mut docs, Some(&mut *session)).await;
                                // The ids taken by an attempt that does not commit.
                                let ids = docs.iter().filter_map(|doc| doc.sequence_id().get());
                                seen.lock().unwrap().abandoned.extend(ids);
                                inserted?;
                                if abort {
                                    return Err(BoxError::from("abort"));
                                }
                                Ok(docs
                                    .iter()
                                    .map(|doc| doc.sequence_id().get().unwrap())
                                    .collect::<Vec<_>>())
                            })
                        })
                        .await;
                    let mut seen = seen.lock().unwrap();
                    match result {
                        Ok(ids) => {
                            for (id, n) in ids.into_iter().zip(range) {
                                // Committed: not abandoned after all.
                                let at = seen.abandoned.iter().rposition(|&a| a == id).unwrap();
                                seen.abandoned.remove(at);
                                seen.committed.push((id, task, n));
                            }
                        }
                        Err(error) => assert!(
                            abort && error.to_string() == "abort",
                            "task {task} #{first}: {error}"
                        ),
                    }
                }
            })
        })
        .collect();
    for handle in handles {
        handle.await.unwrap();
    }
    Arc::try_unwrap(seen).ok().unwrap().into_inner().unwrap()
}
