//! `Transaction::new(&mut session).run(context, body)` (issue 47): the body's value and its
//! own errors come back as they are (a `seqid::Error` typed, a caller's error as it was),
//! an error ends the transaction and what the body wrote with it; a write conflict runs
//! the whole transaction again. Faults on the commit are `faults::transaction`.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use mongodb::bson::{Document as BsonDocument, doc};
use seqid::action::Transaction;
use seqid::error::ErrorKind;
use seqid::{Document, Entry, Error, Model};
use seqid_harness::test_db;

use crate::support::drafts::{DraftGapless, store_drafts};
use crate::support::keyed::{Keyed, KeyedGapless};
use crate::support::transactions::without_transactions;
use crate::support::{counter_value, shared};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The markers the bodies write with the session, before what may fail.
async fn markers(db: &mongodb::Database) -> Vec<String> {
    let mut cursor = db
        .collection::<BsonDocument>("markers")
        .find(doc! {})
        .await
        .unwrap();
    let mut all = Vec::new();
    while cursor.advance().await.unwrap() {
        let marker: BsonDocument = cursor.deserialize_current().unwrap();
        all.push(marker.get_str("at").unwrap().to_owned());
    }
    all.sort();
    all
}

/// Each case writes a marker in the transaction, then does what it tests. A refusal comes
/// back typed and aborts the transaction, its marker with it (nx-27017 rolls an aborted
/// transaction back too, though it isolates nothing: this holds on both servers).
#[tokio::test]
async fn the_bodys_value_and_its_own_errors_come_back_as_they_are() {
    let test = test_db("in_transaction_errors").await;
    let db = shared(&test);
    KeyedGapless::create_indexes(&db).await.unwrap();
    let mut session = test.client().start_session().await.unwrap();
    let runs = AtomicU32::new(0);

    // A gapless find-or-insert: Inserted, then Found, each run once.
    for (expected, number) in [(Entry::Inserted, 1), (Entry::Found, 1)] {
        let (entry, doc) = Transaction::new(&mut session)
            .run((&db, &runs), |session, (db, runs)| {
                Box::pin(async move {
                    runs.fetch_add(1, Ordering::Relaxed);
                    let mut doc = KeyedGapless::make("ada@example.com".into(), "tx".into());
                    let entry = doc.find_or_insert(*db).session(session).await?;
                    Ok::<_, Error>((entry, doc))
                })
            })
            .await
            .unwrap();
        assert_eq!((entry, doc.id), (expected, number));
    }
    assert_eq!(runs.swap(0, Ordering::Relaxed), 2);

    // seqid's refusals, typed, and the marker written before them gone.
    let drafts = store_drafts::<DraftGapless>(test.db(), 2026, 0, 1).await;
    let error = Transaction::new(&mut session)
        .run(&db, |session, db| {
            Box::pin(async move {
                db.collection::<BsonDocument>("markers")
                    .insert_one(doc! { "at": "draft not found" })
                    .session(&mut *session)
                    .await?;
                let numbered = DraftGapless::number_draft(*db, doc! { "status": "nowhere" })
                    .session(session)
                    .await?;
                Ok::<_, BoxError>(numbered)
            })
        })
        .await
        .unwrap_err();
    let error = error
        .downcast::<Error>()
        .expect("seqid's refusal, as it was");
    assert!(
        matches!(error.kind(), ErrorKind::DraftNotFound { .. }),
        "{error}"
    );
    let error = Transaction::new(&mut session)
        .run(&db, |session, db| {
            Box::pin(async move {
                let mut doc = KeyedGapless::make("bob@example.com".into(), "tx".into());
                doc.find_or_insert(*db).by(&[]).session(session).await
            })
        })
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidNaturalKey { .. }),
        "{error}"
    );

    // A body mixing the driver's calls and seqid's, in a boxed error: the caller's own
    // error comes back as it was, not run again.
    let error = Transaction::new(&mut session)
        .run((&db, &runs), |session, (db, runs)| {
            Box::pin(async move {
                runs.fetch_add(1, Ordering::Relaxed);
                db.collection::<BsonDocument>("markers")
                    .insert_one(doc! { "at": "rejected" })
                    .session(&mut *session)
                    .await?;
                let mut doc = KeyedGapless::make("carol@example.com".into(), "tx".into());
                doc.find_or_insert(*db).session(&mut *session).await?;
                Err::<(), BoxError>("the order was rejected".into())
            })
        })
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "the order was rejected");
    assert_eq!(runs.swap(0, Ordering::Relaxed), 1, "not run again");
    assert!(markers(test.db()).await.is_empty(), "aborted with the body");
    assert_eq!(
        KeyedGapless::collection(test.db())
            .count_documents(doc! {})
            .await
            .unwrap(),
        1,
        "carol's insert aborted with the transaction"
    );
    assert_eq!(
        counter_value(test.db(), KeyedGapless::SEQUENCE.name).await,
        Some(1),
        "gapless: the aborted id taken back"
    );
    let _ = drafts;

    // A body that commits itself: its value, committed.
    let committed = Transaction::new(&mut session)
        .run(&db, |session, db| {
            Box::pin(async move {
                db.collection::<BsonDocument>("markers")
                    .insert_one(doc! { "at": "committed by the body" })
                    .session(&mut *session)
                    .await?;
                session.commit_transaction().await?;
                Ok::<_, mongodb::error::Error>(7)
            })
        })
        .await
        .unwrap();
    assert_eq!(committed, 7);
    assert_eq!(markers(test.db()).await, ["committed by the body"]);
}

/// A gapless `find_or_insert` of `email` in a transaction, counting the body's runs.
async fn first(
    session: &mut mongodb::ClientSession,
    db: &seqid::Database,
    runs: &AtomicU32,
    email: &str,
) -> Result<(Entry, i64), Error> {
    Transaction::new(session)
        .run((db, runs, email), |session, (db, runs, email)| {
            Box::pin(async move {
                runs.fetch_add(1, Ordering::Relaxed);
                let mut doc = KeyedGapless::make(email.to_string(), "tx".into());
                let entry = doc.find_or_insert(*db).session(session).await?;
                Ok((entry, doc.id))
            })
        })
        .await
}

/// A write conflict on the gapless counter (another transaction took it and has not
/// committed) aborts the run; the helper runs the whole transaction again until the other
/// commits, and the number follows the other's. SecantusDB: nx-27017 never conflicts.
#[tokio::test]
async fn a_write_conflict_runs_the_whole_transaction_again() {
    let test = test_db("in_transaction_conflict").await;
    if without_transactions(&test).await {
        return;
    }
    let db = shared(&test);
    KeyedGapless::create_indexes(&db).await.unwrap();
    let mut session = test.client().start_session().await.unwrap();
    let runs = AtomicU32::new(0);
    assert_eq!(
        first(&mut session, &db, &runs, "one@example.com")
            .await
            .unwrap(),
        (Entry::Inserted, 1)
    );
    runs.store(0, Ordering::Relaxed);

    // Another writer's transaction takes the counter (2), and commits 400 ms later.
    let mut other = test.client().start_session().await.unwrap();
    other.start_transaction().await.unwrap();
    test.collection::<BsonDocument>("counters")
        .update_one(
            doc! { "_id": KeyedGapless::SEQUENCE.name },
            doc! { "$inc": { "seq": 1_i64 } },
        )
        .session(&mut other)
        .await
        .unwrap();
    let committer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        other.commit_transaction().await.unwrap();
    });
    let answer = first(&mut session, &db, &runs, "two@example.com")
        .await
        .unwrap();
    committer.await.unwrap();
    assert_eq!(answer, (Entry::Inserted, 3), "after the other's 2");
    let runs = runs.load(Ordering::Relaxed);
    assert!(runs >= 2, "run again after the conflict: {runs} runs");
    eprintln!("{runs} runs of the transaction while the other held the counter");
    assert_eq!(
        KeyedGapless::collection(test.db())
            .count_documents(doc! {})
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        counter_value(test.db(), KeyedGapless::SEQUENCE.name).await,
        Some(3)
    );
}
