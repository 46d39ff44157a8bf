//! Every id known after an insert: an `_id: Option<ObjectId>` left `None` beside a field
//! sequence is filled by `insert` and `insert_many` (and their resumes), so that the
//! caller holds every id of what it stored; it is set back to `None` together with the
//! sequence's field whenever the document is known not to be stored (a refusal, a call
//! dropped before its write), and kept with it when the outcome is unknown. An `ObjectId`
//! the caller set is sent as it is. One the insert made proves a document found with it
//! to be this one: a lost answer is settled.

use std::collections::BTreeSet;
use std::time::Duration;

use mongodb::bson::oid::ObjectId;
use mongodb::bson::{Bson, doc};
use seqid::Document;
use seqid::error::ErrorKind;
use seqid_harness::{FaultProxy, test_db};
use serde::{Deserialize, Serialize};

use crate::support::{all_documents, integer, shared, unique_index};

/// The example service's ticket: a driver-made `_id`, a number per project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, seqid::Document)]
#[seq_id(collection = "tickets")]
struct Ticket {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    project: String,
    #[seq_id("ticket", scope = "project")]
    number: i64,
    title: String,
}

fn ticket(project: &str, title: &str) -> Ticket {
    Ticket {
        id: None,
        project: project.into(),
        number: 0,
        title: title.into(),
    }
}

/// The stored tickets as (`_id`, project, number, title).
async fn stored(db: &mongodb::Database) -> BTreeSet<(ObjectId, String, i64, String)> {
    all_documents(db, "tickets")
        .await
        .into_iter()
        .map(|d| {
            let id = match d.get("_id") {
                Some(Bson::ObjectId(id)) => *id,
                other => panic!("_id {other:?} is not an ObjectId"),
            };
            let number = d.get("number").and_then(integer).unwrap();
            let text = |key| d.get_str(key).unwrap().to_owned();
            (id, text("project"), number, text("title"))
        })
        .collect()
}

/// The rows `stored` should hold for `tickets`, which all carry both ids.
fn rows(tickets: &[&Ticket]) -> BTreeSet<(ObjectId, String, i64, String)> {
    tickets
        .iter()
        .map(|t| {
            let id = t.id.expect("the ObjectId is filled");
            (id, t.project.clone(), t.number, t.title.clone())
        })
        .collect()
}

#[tokio::test]
async fn insert_and_insert_many_fill_an_unset_object_id_and_keep_a_set_one() {
    let test = test_db("object_ids_filled").await;
    let handle = shared(&test);
    let mut all = Vec::new();
    // Through a bare database and through a handle.
    let mut bare = ticket("apollo", "bare");
    assert_eq!(bare.insert(&*test).await.unwrap(), 1);
    let mut handled = ticket("apollo", "handle");
    assert_eq!(handled.insert(&handle).await.unwrap(), 2);
    let mut many: Vec<Ticket> = (0..6)
        .map(|n| ticket(["apollo", "gemini"][n % 2], &format!("many {n}")))
        .collect();
    let numbers = Ticket::insert_many(&mut many, &handle).await.unwrap();
    assert_eq!(numbers, [3, 1, 4, 2, 5, 3]);
    let chosen = ObjectId::new();
    let mut set = Ticket {
        id: Some(chosen),
        ..ticket("gemini", "set by the caller")
    };
    set.insert(&*test).await.unwrap();
    assert_eq!(set.id, Some(chosen), "an ObjectId the caller set is kept");

    all.extend([&bare, &handled, &set]);
    all.extend(many.iter());
    let ids: BTreeSet<ObjectId> = all.iter().map(|t| t.id.unwrap()).collect();
    assert_eq!(ids.len(), all.len(), "every ObjectId is distinct");
    assert_eq!(
        stored(&test).await,
        rows(&all),
        "each stored under both its ids"
    );
}

#[tokio::test]
async fn a_document_refused_gets_its_object_id_back_with_its_number() {
    let test = test_db("object_ids_refused").await;
    let db = &*test;
    unique_index(db, "tickets", "title").await;
    let mut first = ticket("apollo", "same title");
    first.insert(db).await.unwrap();

    // Refused by the unique index on `title`: known not stored, both ids unset.
    let mut again = ticket("apollo", "same title");
    let error = again.insert(db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::DuplicateKey { .. }),
        "{error:?}"
    );
    assert_eq!((again.id, again.number), (None, 0));
    // An ObjectId the caller set stays, whatever the insert's fate.
    let chosen = ObjectId::new();
    let mut set = Ticket {
        id: Some(chosen),
        ..ticket("apollo", "same title")
    };
    set.insert(db).await.unwrap_err();
    assert_eq!((set.id, set.number), (Some(chosen), 0));

    // In a batch: the refused one is unset, the others keep both ids.
    let mut batch = vec![
        ticket("gemini", "one"),
        ticket("gemini", "same title"),
        ticket("gemini", "two"),
    ];
    let error = Ticket::insert_many(&mut batch, db).await.unwrap_err();
    let ErrorKind::Bulk(bulk) = error.kind() else {
        panic!("{error:?}")
    };
    assert_eq!(bulk.inserted, [0, 2]);
    assert_eq!(bulk.failed.len(), 1);
    assert_eq!(bulk.failed[0].index, 1);
    assert_eq!((batch[1].id, batch[1].number), (None, 0));
    assert_eq!(
        stored(db).await,
        rows(&[&first, &batch[0], &batch[2]]),
        "the stored ones under both their ids"
    );
}

/// Through a proxy that stalls, loses or delays requests: an insert dropped before its
/// write leaves both ids unset; a lost answer is settled by the `ObjectId` the insert
/// filled (a document found with it is this one, whatever its content); an answer that
/// cannot be had yet keeps both ids, and `resume_insert` settles it under the same `_id`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn a_dropped_insert_unsets_both_ids_and_a_lost_answer_keeps_both() {
    let test = test_db("object_ids_dropped").await;
    let proxy = FaultProxy::for_test_db(&test).await.unwrap();
    let client = mongodb::Client::with_uri_str(proxy.uri()).await.unwrap();
    let db = client.database(test.name());
    // `resume_insert` relies on the unique index on (project, number).
    Ticket::create_indexes(&db).await.unwrap();
    // A first insert, so that the counter and the connection exist.
    ticket("apollo", "first").insert(&db).await.unwrap();

    proxy.pause();
    let mut dropped = ticket("apollo", "dropped");
    let insert = dropped.insert(&db);
    let timed_out = tokio::time::timeout(Duration::from_millis(300), insert).await;
    assert!(timed_out.is_err(), "the paused insert ended: {timed_out:?}");
    assert_eq!((dropped.id, dropped.number), (None, 0));
    proxy.resume();

    // The insert's answer and its retry's, lost: the document is found stored with the
    // ObjectId this insert gave it, so the insert succeeds.
    proxy.lose_reply("insert", Some("tickets"), 2);
    let mut lost = ticket("apollo", "lost");
    let number = lost.insert(&db).await.unwrap();
    assert!(proxy.fired() >= 1, "no answer was lost");
    assert_eq!(lost.number, number);
    // The same for a batch.
    proxy.lose_reply("insert", Some("tickets"), 2);
    let mut batch = vec![ticket("gemini", "lost 0"), ticket("gemini", "lost 1")];
    let numbers = Ticket::insert_many(&mut batch, &db).await.unwrap();
    assert_eq!(numbers, [1, 2]);
    proxy.disarm_all();

    // The insert and its retry delivered 2 s late, after the client gave up: nothing is
    // found yet, the outcome is unknown, and both ids are kept.
    let late_before = proxy.late_deliveries();
    proxy.deliver_late("insert", Some("tickets"), 2, Duration::from_secs(2));
    let mut late = ticket("apollo", "late");
    let error = late.insert(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::OutcomeUnknown { .. }),
        "{error:?}"
    );
    let (id, number) = (late.id.expect("kept"), late.number);
    assert_ne!(number, 0);
    proxy.disarm_all();
    for _ in 0..100 {
        if proxy.late_deliveries() > late_before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Sent again under both ids: stored once, by this call or the late one.
    let resumed = late.resume_insert(&db).content_is_unique().await.unwrap();
    assert_eq!((late.id, resumed), (Some(id), number));

    let all = stored(&test).await;
    let titled = |title: &str| all.iter().filter(|row| row.3 == title).collect::<Vec<_>>();
    assert_eq!(
        titled("dropped"),
        Vec::<&(ObjectId, String, i64, String)>::new()
    );
    assert_eq!(titled("lost"), [&rows(&[&lost]).pop_first().unwrap()]);
    assert_eq!(
        titled("late"),
        [&(id, "apollo".into(), number, "late".into())]
    );
    let in_batch = rows(&[&batch[0], &batch[1]]);
    assert!(all.is_superset(&in_batch), "{all:?}");
    assert_eq!(all.len(), 5, "{all:?}");
    let count = test
        .collection::<mongodb::bson::Document>("tickets")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(count, 5);
}
