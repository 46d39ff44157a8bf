//! `start = N`, the counter's administration (peek, set, reset), newtype ids, and the
//! typed collection with `find_by_id`.

use crate::support;
use std::collections::BTreeSet;

use crate::support::{counter_value, integer};
use mongodb::bson::{Document as BsonDocument, doc};
use seqid::Document;
use seqid::error::ErrorKind;
use seqid_harness::test_db;
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id("from_1000", collection = "from_1000", start = 1000)]
struct Counted {
    #[serde(rename = "_id")]
    id: i64,
    n: u32,
}

#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id(
    "block_from_1000",
    collection = "block_from_1000",
    strategy = "block",
    block_size = 10,
    start = 1000
)]
struct Blocked {
    #[serde(rename = "_id")]
    id: i64,
    n: u32,
}

#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id(
    "opt_from_1000",
    collection = "opt_from_1000",
    strategy = "optimistic",
    start = 1000
)]
struct Optimistic {
    #[serde(rename = "_id")]
    id: i64,
    n: u32,
}

#[tokio::test]
async fn a_new_counter_starts_at_start() {
    let test = test_db("start_counters").await;
    let db = support::shared(&test);
    assert_eq!(Counted { id: 0, n: 0 }.insert(&db).await.unwrap(), 1000);
    assert_eq!(Counted { id: 0, n: 1 }.insert(&db).await.unwrap(), 1001);
    assert_eq!(counter_value(&db, "from_1000").await, Some(1001));
    assert_eq!(Blocked { id: 0, n: 0 }.insert(&db).await.unwrap(), 1000);
    assert_eq!(counter_value(&db, "block_from_1000").await, Some(1009));
    // Through a bare database too: each call makes sure the counter exists.
    let bare = test.db().clone();
    assert_eq!(Counted { id: 0, n: 2 }.insert(&bare).await.unwrap(), 1002);
    assert_eq!(Blocked { id: 0, n: 1 }.insert(&bare).await.unwrap(), 1010);
}

#[tokio::test]
async fn a_counter_that_exists_goes_on_from_its_value() {
    let test = test_db("start_existing").await;
    let db = support::shared(&test);
    // Made by another tool, below `start`: it is the counter, and seqid goes on from it.
    test.collection::<BsonDocument>("counters")
        .insert_one(doc! { "_id": "from_1000", "seq": 7 })
        .await
        .unwrap();
    assert_eq!(Counted { id: 0, n: 0 }.insert(&db).await.unwrap(), 8);
    // `sync_counter` on an empty collection creates the counter at `start - 1`.
    assert_eq!(Blocked::sequence().sync_counter(&db).await.unwrap(), 999);
    assert_eq!(Blocked { id: 0, n: 0 }.insert(&db).await.unwrap(), 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_use_starts_at_start_without_a_gap() {
    let test = test_db("start_concurrent").await;
    let db = support::shared(&test);
    let tasks: Vec<_> = (0..32)
        .map(|n| {
            let db = db.clone();
            tokio::spawn(async move { Counted { id: 0, n }.insert(&db).await.unwrap() })
        })
        .collect();
    let mut ids = BTreeSet::new();
    for task in tasks {
        assert!(ids.insert(task.await.unwrap()), "an id twice");
    }
    // The counter is created once, at 999, before any `$inc`: no upsert race.
    assert_eq!(ids, (1000..1032).collect::<BTreeSet<i64>>());
    assert_eq!(counter_value(&db, "from_1000").await, Some(1031));
}

#[tokio::test]
async fn the_optimistic_strategy_starts_at_start_and_steps_over_what_is_stored() {
    let test = test_db("start_optimistic").await;
    let db = support::shared(&test);
    assert_eq!(Optimistic { id: 0, n: 0 }.insert(&db).await.unwrap(), 1000);
    test.collection::<BsonDocument>("opt_from_1000")
        .insert_one(doc! { "_id": 5000, "n": 9 })
        .await
        .unwrap();
    assert_eq!(Optimistic { id: 0, n: 1 }.insert(&db).await.unwrap(), 5001);
    // A collection holding only ids below `start`: the next is `start`.
    let low = test_db("start_optimistic_low").await;
    low.collection::<BsonDocument>("opt_from_1000")
        .insert_one(doc! { "_id": 3, "n": 9 })
        .await
        .unwrap();
    let low_db = support::shared(&low);
    assert_eq!(
        Optimistic { id: 0, n: 2 }.insert(&low_db).await.unwrap(),
        1000
    );
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
struct TicketNo(i64);

seqid::newtype_id!(TicketNo(i64));

#[derive(Debug, PartialEq, Serialize, Deserialize, Document)]
#[seq_id("ticketno", collection = "tickets")]
struct Ticket {
    #[serde(rename = "_id")]
    number: TicketNo,
    title: String,
}

#[tokio::test]
async fn a_newtype_id_is_filled_stored_as_an_integer_and_found_again() {
    let test = test_db("newtype").await;
    let db = support::shared(&test);
    let mut first = Ticket {
        number: TicketNo(0),
        title: "first".into(),
    };
    assert_eq!(first.insert(&db).await.unwrap(), 1);
    assert_eq!(first.number, TicketNo(1));
    let stored = support::all_documents(&db, "tickets").await;
    assert_eq!(stored.len(), 1);
    assert_eq!(
        integer(stored[0].get("_id").unwrap()),
        Some(1),
        "a plain integer"
    );
    let found = Ticket::sequence().find(&db, 1).await.unwrap();
    assert_eq!(found, Some(first));
    assert_eq!(Ticket::sequence().find(&db, 2).await.unwrap(), None);
    let error = Ticket {
        number: TicketNo(5),
        title: "set".into(),
    }
    .insert(&db)
    .await
    .unwrap_err();
    assert!(
        error.to_string().contains("a TicketNo holding 0 (or None)"),
        "{error}"
    );
    // The typed collection, for what seqid does not do.
    let count = Ticket::collection(&db)
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(count, 1);
}

#[tokio::test]
async fn a_counter_is_read_set_and_reset_without_taking_ids_below_what_is_stored() {
    let test = test_db("admin").await;
    let db = support::shared(&test);
    assert_eq!(
        Counted::sequence().last_reserved(&db).await.unwrap(),
        None,
        "no counter yet"
    );
    for n in 0..3 {
        Counted { id: 0, n }.insert(&db).await.unwrap();
    }
    assert_eq!(
        Counted::sequence().last_reserved(&db).await.unwrap(),
        Some(1002)
    );
    assert_eq!(
        Counted::sequence().last_reserved(&db).await.unwrap(),
        Some(1002),
        "peeking takes nothing"
    );

    assert_eq!(
        Counted::sequence().set_counter(&db, 4999).await.unwrap(),
        4999
    );
    assert_eq!(Counted { id: 0, n: 3 }.insert(&db).await.unwrap(), 5000);

    // Below the largest id stored: refused, with the true cause, and nothing changed.
    let error = Counted::sequence().set_counter(&db, 10).await.unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::CounterBelowStored {
                value: 10,
                largest: 5000,
                ..
            }
        ) && error.sequence().map(|s| s.name) == Some("from_1000"),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("below the largest _id"),
        "{error}"
    );
    assert_eq!(
        Counted::sequence().last_reserved(&db).await.unwrap(),
        Some(5000)
    );
    let error = Counted::sequence().reset_counter(&db).await.unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::CounterBelowStored { value: 999, .. }
        ),
        "{error:?}"
    );
    assert!(matches!(
        Counted::sequence()
            .set_counter(&db, -1)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidOption { .. }
    ));

    // Asked for explicitly: set, and the ids below are refused by the `_id` index, a typed
    // error, never a second document.
    assert_eq!(
        Counted::sequence()
            .reset_counter(&db)
            .below_stored()
            .await
            .unwrap(),
        999
    );
    let error = Counted { id: 0, n: 4 }.insert(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::DuplicateKey { id: 1000, .. }),
        "{error:?}"
    );
    let stored: Vec<i64> = support::all_documents(&db, "from_1000")
        .await
        .iter()
        .filter_map(|d| integer(d.get("_id").unwrap()))
        .collect();
    assert_eq!(stored.len(), 4);
}

#[tokio::test]
async fn setting_the_counter_drops_this_processs_live_block() {
    let test = test_db("admin_block").await;
    let db = support::shared(&test);
    assert_eq!(Blocked { id: 0, n: 0 }.insert(&db).await.unwrap(), 1000);
    assert_eq!(db_stats_unused(&db), 9, "1001..=1009 held in memory");
    Blocked::sequence().set_counter(&db, 2000).await.unwrap();
    assert_eq!(
        db_stats_unused(&db),
        0,
        "dropped: reserved under the old value"
    );
    assert_eq!(Blocked { id: 0, n: 1 }.insert(&db).await.unwrap(), 2001);
    assert_eq!(counter_value(&db, "block_from_1000").await, Some(2010));
}

fn db_stats_unused(db: &seqid::Database) -> u64 {
    Blocked::sequence().stats(db).unused
}
