//! Finishing an insert whose outcome was unknown (`resume_insert`, `resume_insert_many`),
//! for every strategy, against a real server process. The fault suite (the `faults` module)
//! produces the unknown outcomes for real; here each situation a lost answer can leave
//! behind is set up directly, so that every branch runs on every server.

use crate::support;
use crate::support::{Payload as Model, all_documents, integer};
use mongodb::Database;
use mongodb::bson::{Document as BsonDocument, doc};
use seqid::error::ErrorKind;
use seqid::{Document, Error};
use seqid_harness::test_db;

payload_model!(Counted, "resume_c", collection = "items");
payload_model!(
    Blocked,
    "resume_b",
    collection = "items",
    strategy = "block",
    block_size = 10
);
payload_model!(
    Optimistic,
    "resume_o",
    collection = "items",
    strategy = "optimistic"
);

/// `_id -> payload` of every stored document.
async fn stored(db: &Database) -> Vec<(i64, String)> {
    let mut all: Vec<(i64, String)> = all_documents(db, "items")
        .await
        .iter()
        .map(|d| {
            let id = d.get("_id").and_then(integer).expect("an integer _id");
            (id, d.get_str("payload").unwrap().to_owned())
        })
        .collect();
    all.sort();
    all
}

fn optimistic<T: Model>() -> bool {
    T::SEQUENCE.strategy_name() == "optimistic"
}

/// Makes the stored document at `id` another writer's.
async fn replace_by_another(db: &Database, id: i64) {
    let replaced = db
        .collection::<BsonDocument>("items")
        .replace_one(
            doc! { "_id": id },
            doc! { "payload": "someone else", "n": 0 },
        )
        .await
        .unwrap();
    assert_eq!(replaced.matched_count, 1);
}

/// Removes the stored document at `id`, as if its insert had never arrived.
async fn never_arrived(db: &Database, id: i64) {
    let deleted = db
        .collection::<BsonDocument>("items")
        .delete_one(doc! { "_id": id })
        .await
        .unwrap();
    assert_eq!(deleted.deleted_count, 1);
}

/// A resume that met a document at its id and may not compare contents: unknown, the id
/// kept, and the message says why.
fn held_unknown(resumed: Result<i64, Error>, expected: i64) {
    match resumed {
        Err(error) => match error.kind() {
            ErrorKind::OutcomeUnknown { id, reason, .. } => {
                assert_eq!(*id, expected);
                assert!(reason.contains("another writer's"), "{error}");
                assert!(error.to_string().contains("content_is_unique"), "{error}");
            }
            _ => panic!("expected OutcomeUnknown, got {error:?}"),
        },
        other => panic!("expected OutcomeUnknown, got {other:?}"),
    }
}

/// Two callers with equal documents: the second's earlier copy was lost and the first's
/// now holds the id the second was given. Resuming the second never reports it stored:
/// content equal to another writer's proves nothing. (Only a caller that asserts
/// `content_is_unique` has equal content taken for its own, which is what it asserts.)
async fn equal_documents_are_not_taken_for_each_other<T: Model>(label: &str) {
    let db = test_db(label).await;
    let db = support::shared(&db);
    let mut first = T::new("same".into());
    let id = first.insert(&db).await.unwrap();
    let mut second = first.clone();
    held_unknown(second.resume_insert(&db).await, id);
    let mut seconds = vec![first.clone(), first.clone()];
    seconds[1].set_id(0);
    match T::resume_insert_many(&mut seconds, &db)
        .await
        .map_err(Error::into_kind)
    {
        Err(ErrorKind::Bulk(bulk)) => {
            assert_eq!((bulk.inserted, bulk.unknown), (vec![1], vec![0]));
            assert_eq!(seconds[0].id(), id, "the id stays");
        }
        other => panic!("expected Bulk, got {other:?}"),
    }
    let new_id = seconds[1].id();
    assert_ne!(new_id, id);
    assert_eq!(
        stored(&db).await,
        vec![(id, "same".into()), (new_id, "same".into())]
    );
}

#[tokio::test]
async fn equal_documents_are_not_taken_for_each_other_counters() {
    equal_documents_are_not_taken_for_each_other::<Counted>("resume_equal_c").await;
}

#[tokio::test]
async fn equal_documents_are_not_taken_for_each_other_block() {
    equal_documents_are_not_taken_for_each_other::<Blocked>("resume_equal_b").await;
}

#[tokio::test]
async fn equal_documents_are_not_taken_for_each_other_optimistic() {
    equal_documents_are_not_taken_for_each_other::<Optimistic>("resume_equal_o").await;
}

/// A document already stored (the first attempt landed, its answer was lost), one not
/// stored under the id it was given (the request never arrived), and one whose id
/// another document holds: each is finished exactly once.
async fn resume_single<T: Model>(label: &str) {
    let db = test_db(label).await;
    let db = support::shared(&db);
    let mut landed = T::new("landed".into());
    let id = landed.insert(&db).await.unwrap();
    assert_eq!(landed.id(), id);
    // Inserting it again is refused before anything is written...
    let error = landed.insert(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::IdAlreadySet { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("resume_insert"), "{error}");
    // ...and resuming cannot tell the stored copy from another writer's equal document
    // unless the caller asserts that nobody else writes this content.
    held_unknown(landed.resume_insert(&db).await, id);
    assert_eq!(landed.id(), id, "the id stays");
    assert_eq!(
        landed.resume_insert(&db).content_is_unique().await.unwrap(),
        id
    );
    assert_eq!(stored(&db).await, vec![(id, "landed".into())]);

    // Given an id whose request never arrived: stored under that id.
    let mut lost = T::new("lost".into());
    let lost_id = lost.insert(&db).await.unwrap();
    never_arrived(&db, lost_id).await;
    assert_eq!(lost.resume_insert(&db).await.unwrap(), lost_id);

    // The id is held by a different document. Optimistic: another writer took it, this
    // one gets a new id. Counters and block: the id was this document's alone, so the one
    // there may be this one, changed: nothing is stored, and the id stays.
    let mut other = T::new("other".into());
    let other_id = other.insert(&db).await.unwrap();
    replace_by_another(&db, other_id).await;
    held_unknown(other.resume_insert(&db).await, other_id);
    let new_id = match other.resume_insert(&db).content_is_unique().await {
        Ok(new_id) => {
            assert!(
                optimistic::<T>(),
                "only the optimistic strategy gives a new id"
            );
            assert_ne!(new_id, other_id);
            assert_eq!(other.id(), new_id);
            Some(new_id)
        }
        Err(error) => match error.kind() {
            ErrorKind::DuplicateKey { id, .. } if !optimistic::<T>() => {
                assert_eq!((*id, other.id()), (other_id, other_id), "the id stays");
                None
            }
            _ => panic!("unexpected {error:?}"),
        },
    };

    // An unset id: a plain insert.
    let mut plain = T::new("plain".into());
    let plain_id = plain.resume_insert(&db).await.unwrap();

    let mut expected = vec![
        (id, "landed".to_owned()),
        (lost_id, "lost".into()),
        (other_id, "someone else".into()),
        (plain_id, "plain".into()),
    ];
    expected.extend(new_id.map(|id| (id, "other".to_owned())));
    expected.sort();
    assert_eq!(stored(&db).await, expected, "every document once, no other");
}

#[tokio::test]
async fn resume_insert_counters() {
    resume_single::<Counted>("resume_counters").await;
}

#[tokio::test]
async fn resume_insert_block() {
    resume_single::<Blocked>("resume_block").await;
}

#[tokio::test]
async fn resume_insert_optimistic() {
    resume_single::<Optimistic>("resume_optimistic").await;
}

/// A batch in every state an interrupted `insert_many` leaves: stored, never arrived,
/// id taken by another document, and unset (refused earlier): one call stores each once.
async fn resume_batch<T: Model>(label: &str) {
    let db = test_db(label).await;
    let db = support::shared(&db);
    let mut batch: Vec<T> = (0..6).map(|i| T::new(format!("doc{i}"))).collect();
    let ids: Vec<i64> = T::insert_many(&mut batch, &db).await.unwrap();
    never_arrived(&db, ids[3]).await;
    replace_by_another(&db, ids[4]).await;
    never_arrived(&db, ids[5]).await;
    batch[5].set_id(0);

    // Without the caller's word that its content is its own, a document at an id may be
    // this batch's earlier copy or another writer's: unknown, ids kept. The lost one and
    // the unset one are stored.
    let first = T::resume_insert_many(&mut batch, &db).await;
    let Err(ErrorKind::Bulk(bulk)) = first.as_ref().map_err(Error::kind) else {
        panic!("expected Bulk, got {first:?}")
    };
    assert_eq!(bulk.inserted, vec![3, 5], "{bulk:?}");
    assert_eq!(bulk.unknown, vec![0, 1, 2, 4], "{bulk:?}");
    assert!(bulk.failed.is_empty(), "{bulk:?}");
    assert_eq!(batch[3].id(), ids[3]);
    let unset_id = batch[5].id();
    assert!(!ids.contains(&unset_id));

    let resumed = match T::resume_insert_many(&mut batch, &db)
        .content_is_unique()
        .await
    {
        Ok(resumed) => {
            assert!(
                optimistic::<T>(),
                "only the optimistic strategy replaces a taken id"
            );
            assert!(!ids.contains(&resumed[4]), "a taken id is replaced");
            resumed
        }
        // Counters and block: the document at a counter's id may be this one, changed.
        Err(error) => match error.kind() {
            ErrorKind::Bulk(bulk) if !optimistic::<T>() => {
                assert_eq!(bulk.inserted, vec![0, 1, 2, 3, 5]);
                assert_eq!(bulk.unknown, vec![4], "{error}");
                assert!(bulk.failed.is_empty());
                assert_eq!(batch[4].id(), ids[4], "its id stays");
                batch.iter().map(|d| d.id()).collect()
            }
            _ => panic!("unexpected {error:?}"),
        },
    };
    assert_eq!(
        &resumed[..4],
        &ids[..4],
        "stored and lost documents keep their ids"
    );
    assert_eq!(resumed[5], unset_id, "stored by the first resume");
    assert!(!ids[..5].contains(&resumed[5]) && resumed[5] != resumed[4]);
    for (doc, id) in batch.iter().zip(&resumed) {
        assert_eq!(doc.id(), *id);
    }
    let mut expected: Vec<(i64, String)> = resumed
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != 4 || optimistic::<T>())
        .map(|(i, id)| (*id, format!("doc{i}")))
        .chain([(ids[4], "someone else".to_owned())])
        .collect();
    expected.sort();
    assert_eq!(stored(&db).await, expected, "every document once, no other");
    // Resuming again stores nothing twice.
    let again = T::resume_insert_many(&mut batch, &db)
        .content_is_unique()
        .await;
    assert_eq!(again.is_ok(), optimistic::<T>(), "{again:?}");
    assert_eq!(stored(&db).await, expected);
}

#[tokio::test]
async fn resume_insert_many_counters() {
    resume_batch::<Counted>("resume_many_counters").await;
}

#[tokio::test]
async fn resume_insert_many_block() {
    resume_batch::<Blocked>("resume_many_block").await;
}

#[tokio::test]
async fn resume_insert_many_optimistic() {
    resume_batch::<Optimistic>("resume_many_optimistic").await;
}

/// Where the caller asserts unique content, a document that differs from the stored one
/// under its id is not taken for it: the comparison is field by field, so a changed
/// field means "another document".
#[tokio::test]
async fn a_changed_document_is_not_mistaken_for_the_stored_one() {
    let db = test_db("resume_changed").await;
    let db = support::shared(&db);
    let mut first = Optimistic::new("same payload".into());
    let id = first.insert(&db).await.unwrap();
    let mut changed = first.clone();
    changed.n += 1;
    let new_id = changed
        .resume_insert(&db)
        .content_is_unique()
        .await
        .unwrap();
    assert_ne!(new_id, id);
    assert_eq!(stored(&db).await.len(), 2);
    // The same, identical: recognised as stored.
    assert_eq!(
        first.resume_insert(&db).content_is_unique().await.unwrap(),
        id
    );
    assert_eq!(stored(&db).await.len(), 2);
}

/// Stores a copy of `document` under `id` by hand, as a write's first attempt would have.
async fn first_copy_at<T: Model>(db: &Database, document: &T, id: i64) {
    let mut copy = document.clone();
    copy.set_id(id);
    let copy = mongodb::bson::to_document(&copy).unwrap();
    let items = db.collection::<BsonDocument>("items");
    items.insert_one(copy).await.unwrap();
}

/// A first send that meets its own first copy, which is what a server that runs a retried
/// write again hands seqid (SecantusDB 0.7.0b3 after a restart: see
/// `faults::a_retried_insert_meets_its_own_first_attempt_after_a_restart_on_secantusdb`),
/// set up directly: the copy stored by hand under the id the insert is about to take (the
/// counter's next, or the block's). seqid takes it for another writer's, on the manual's
/// word, unless the caller asserts `content_is_unique`: then the equal document is its own,
/// and it is stored once. The guide's *Guarantees* (*The risk that remains*) tells callers
/// which of the two they are. (The optimistic strategy reads the largest id before it sends,
/// so a copy stored beforehand is above its candidate, never at it: only a retry run again
/// meets it there, and it goes through the same settling as the counters' duplicate key.)
async fn a_first_send_meeting_its_own_copy<T: Model>(label: &str) {
    let db = test_db(label).await;
    let db = support::shared(&db);
    let first = T::new("first".into()).insert(&db).await.unwrap();

    // Asserted: settled as stored, once.
    let mut asserted = T::new("asserted".into());
    first_copy_at(&db, &asserted, first + 1).await;
    let id = asserted.insert(&db).content_is_unique().await.unwrap();
    assert_eq!(
        (id, asserted.id()),
        (first + 1, first + 1),
        "its own copy, found"
    );
    let mut expected = vec![(first, "first".into()), (first + 1, "asserted".to_owned())];

    // Not asserted: refused, the id unset; inserting it again would store it twice.
    let mut exposed = T::new("exposed".into());
    first_copy_at(&db, &exposed, first + 2).await;
    expected.push((first + 2, "exposed".into()));
    match exposed.insert(&db).await.map_err(Error::into_kind) {
        Err(ErrorKind::DuplicateKey { id, .. }) => {
            assert_eq!((id, exposed.id()), (first + 2, 0), "refused, the id unset");
        }
        other => panic!("expected DuplicateKey, got {other:?}"),
    }
    assert_eq!(stored(&db).await, expected, "every document as told");
}

#[tokio::test]
async fn a_first_send_meeting_its_own_copy_counters() {
    a_first_send_meeting_its_own_copy::<Counted>("own_copy_c").await;
}

#[tokio::test]
async fn a_first_send_meeting_its_own_copy_block() {
    a_first_send_meeting_its_own_copy::<Blocked>("own_copy_b").await;
}
