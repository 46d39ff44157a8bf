//! The counters strategy against a real server process.

use crate::support;
use crate::support::models::CountedDoc;
use crate::support::{
    assert_dense, counted_db, counter_value, insert_concurrently, integer, stored_writes,
    unique_index,
};
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use seqid::error::ErrorKind;
use seqid::{Document, Error};
use seqid_harness::test_db;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Document)]
#[seq_id("userid", collection = "users")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

fn user(name: &str) -> User {
    User {
        id: 0,
        name: name.into(),
    }
}

async fn count(db: &mongodb::Database, collection: &str) -> u64 {
    db.collection::<BsonDocument>(collection)
        .count_documents(doc! {})
        .await
        .unwrap()
}

#[tokio::test]
async fn first_use_starts_at_one_and_stores_the_tutorial_layout() {
    let db = test_db("counters_first_use").await;
    let db = support::shared(&db);
    let mut sarah = user("Sarah C.");
    assert_eq!(sarah.insert(&db).await.unwrap(), 1);
    assert_eq!(sarah.id, 1);
    let mut bob = user("Bob D.");
    assert_eq!(bob.insert(&db).await.unwrap(), 2);

    assert_eq!(stored_users(&db).await, vec![sarah, bob]);
    assert_eq!(counter_value(&db, "userid").await, Some(2));
}

#[tokio::test]
async fn counters_written_by_other_tools_work() {
    let db = test_db("counters_other_tools").await;
    let db = support::shared(&db);
    // The mongo shell writes Doubles: db.counters.insert({_id: "userid", seq: 0}).
    let mut counters = vec![
        (Bson::Double(0.0), 0),
        (Bson::Int32(41), 41),
        (Bson::Int64(5_000_000_000), 5_000_000_000),
    ];
    if stores_decimals() {
        counters.push((decimal("12"), 12));
    }
    for (seq, start) in counters {
        db.collection::<BsonDocument>("counters")
            .delete_many(doc! {})
            .await
            .unwrap();
        db.collection::<BsonDocument>("users")
            .delete_many(doc! {})
            .await
            .unwrap();
        db.collection::<BsonDocument>("counters")
            .insert_one(doc! { "_id": "userid", "seq": seq.clone() })
            .await
            .unwrap();
        assert_eq!(
            user("a").insert(&db).await.unwrap(),
            start + 1,
            "counter written as {seq:?}"
        );
        assert_eq!(
            user("b").insert(&db).await.unwrap(),
            start + 2,
            "counter written as {seq:?}"
        );
    }
}

#[tokio::test]
async fn a_counter_above_the_field_type_is_an_overflow_and_inserts_nothing() {
    #[derive(Serialize, Document)]
    #[seq_id("small", collection = "small")]
    struct Small {
        #[serde(rename = "_id")]
        id: i32,
    }
    let db = test_db("counters_overflow").await;
    let db = support::shared(&db);
    db.collection::<BsonDocument>("counters")
        .insert_one(doc! { "_id": "small", "seq": i32::MAX })
        .await
        .unwrap();
    let mut small = Small { id: 0 };
    let error = small.insert(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Overflow { value, target: "the id field's type i32", .. } if *value == i128::from(i32::MAX) + 1)
            && error.sequence().map(|s| s.name) == Some("small"),
        "{error:?}"
    );
    assert!(error.to_string().contains("2147483648"), "{error}");
    assert_eq!(small.id, 0, "the field is left unset");
    assert_eq!(count(&db, "small").await, 0, "nothing inserted");
    // Bulk: every id is checked before anything is written.
    let mut many = vec![Small { id: 0 }, Small { id: 0 }];
    assert!(matches!(
        Small::insert_many(&mut many, &db)
            .await
            .map_err(Error::into_kind),
        Err(ErrorKind::Overflow { .. })
    ));
    assert_eq!(count(&db, "small").await, 0, "nothing inserted");
}

/// 2^53, from which a Double can no longer count by one.
const TWO_POW_53: f64 = 9_007_199_254_740_992.0;

/// nx-27017's `$bitsAllClear` matches a Double with a fraction (MongoDB's and SecantusDB's
/// do not), so on nx-27017 the guarded update still moves such a counter, and the error
/// shows the value after it. seqid follows MongoDB; only these tests bend to that bug.
fn moves_fractions() -> bool {
    seqid_harness::server_flavor().unwrap() == seqid_harness::ServerFlavor::Nx
}

/// nx-27017 keeps 15 significant digits of a Double that an update writes back (`$inc: 1`
/// on 2^53 - 2 answers 9007199254740990; `$max` that keeps 2^53 - 1 stores
/// 9007199254740990).
fn rounds_updated_doubles() -> bool {
    seqid_harness::server_flavor().unwrap() == seqid_harness::ServerFlavor::Nx
}

/// nx-27017 cannot store a Decimal128 at all: error 8, "Object of type Decimal128 is not
/// JSON serializable".
fn stores_decimals() -> bool {
    seqid_harness::server_flavor().unwrap() != seqid_harness::ServerFlavor::Nx
}

fn decimal(text: &str) -> Bson {
    Bson::Decimal128(text.parse().unwrap())
}

async fn set_counter(db: &mongodb::Database, name: &str, seq: Bson) {
    db.collection::<BsonDocument>("counters")
        .replace_one(doc! { "_id": name }, doc! { "_id": name, "seq": seq })
        .upsert(true)
        .await
        .unwrap();
}

/// The `seq` the counter holds, as stored.
async fn stored_counter(db: &mongodb::Database, name: &str) -> Bson {
    let counter = db
        .collection::<BsonDocument>("counters")
        .find_one(doc! { "_id": name })
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("no counter {name}"));
    counter.get("seq").cloned().unwrap_or(Bson::Null)
}

/// Asserts that `error` reports the counter `userid` holding `value`, and `cause`.
fn assert_not_numeric(error: &Error, value: &Bson, shown: &str, cause: &str) {
    match error.kind() {
        ErrorKind::CounterNotNumeric {
            counter,
            value: reported,
            ..
        } => {
            let sequence = error.sequence().expect("the error names its sequence");
            assert_eq!(
                (sequence.name, &**counter, sequence.counters),
                ("userid", "_id: \"userid\"", "counters")
            );
            assert_eq!(**reported, *value);
        }
        other => panic!("expected CounterNotNumeric, got {other:?}"),
    }
    let text = error.to_string();
    assert!(
        text.starts_with("sequence `userid`: the counter { _id: \"userid\" } in `counters`"),
        "{text}"
    );
    assert!(
        text.contains(&format!("holds seq: {shown}, {cause}")),
        "{text}"
    );
    assert!(text.ends_with("it was left as it is"), "{text}");
}

#[tokio::test]
async fn a_counter_that_is_not_a_whole_number_is_reported_as_it_is_and_never_moved() {
    let db = test_db("counters_not_numeric").await;
    let db = support::shared(&db);
    let mut cases = vec![
        (
            Bson::String("twelve".into()),
            "\"twelve\"",
            "which is not a number",
        ),
        (Bson::Double(1.5), "1.5", "which is not a whole number"),
        (
            Bson::Double(TWO_POW_53),
            "9007199254740992.0",
            "a Double from 2^53 on",
        ),
        // `$inc: 1` would make it 2^53.
        (
            Bson::Double(TWO_POW_53 - 1.0),
            "9007199254740991.0",
            "a Double that the ids asked for would take to 2^53 or beyond",
        ),
    ];
    if stores_decimals() {
        cases.push((decimal("2.5"), "2.5", "which is not a whole number"));
    }
    for (value, shown, cause) in cases {
        set_counter(&db, "userid", value.clone()).await;
        let fraction = matches!(value, Bson::Double(v) if v.fract() != 0.0);
        if fraction && moves_fractions() {
            let error = user("a").insert(&db).await.unwrap_err();
            assert!(
                matches!(error.kind(), ErrorKind::CounterNotNumeric { .. }),
                "{error:?}"
            );
            assert!(error.to_string().contains(cause), "{error}");
            continue;
        }
        // Twice: the first attempt left the counter as it was.
        for _ in 0..2 {
            let mut u = user("a");
            let error = u.insert(&db).await.unwrap_err();
            assert_not_numeric(&error, &value, shown, cause);
            assert_eq!(u.id, 0, "the id field is left unset");
            assert_eq!(stored_counter(&db, "userid").await, value, "never moved");
        }
        let mut many = vec![user("b"), user("c")];
        let error = User::insert_many(&mut many, &db).await.unwrap_err();
        assert_not_numeric(&error, &value, shown, cause);
        assert_eq!(stored_counter(&db, "userid").await, value, "never moved");
        assert_eq!(count(&db, "users").await, 0, "nothing inserted");
    }
}

#[tokio::test]
async fn whole_double_and_decimal_counters_count_on_in_their_own_type() {
    let db = test_db("counters_whole").await;
    let db = support::shared(&db);
    // What the mongo shell writes: `seq: 7` is a Double.
    set_counter(&db, "userid", Bson::Double(7.0)).await;
    assert_eq!(user("a").insert(&db).await.unwrap(), 8);
    assert_eq!(stored_counter(&db, "userid").await, Bson::Double(8.0));
    // The last id a Double counter hands out is 2^53 - 1; the next is refused.
    if !rounds_updated_doubles() {
        set_counter(&db, "userid", Bson::Double(TWO_POW_53 - 2.0)).await;
        assert_eq!(user("b").insert(&db).await.unwrap(), 9_007_199_254_740_991);
        let error = user("c").insert(&db).await.unwrap_err();
        assert_not_numeric(
            &error,
            &Bson::Double(TWO_POW_53 - 1.0),
            "9007199254740991.0",
            "a Double that the ids asked for would take to 2^53 or beyond",
        );
    }
    if stores_decimals() {
        // No query operator tells a whole Decimal128 from a fraction: seqid reads it and
        // updates it only if it still holds what was read.
        set_counter(&db, "userid", decimal("41")).await;
        assert_eq!(user("d").insert(&db).await.unwrap(), 42);
        let mut many = vec![user("e"), user("f")];
        assert_eq!(
            User::insert_many(&mut many, &db).await.unwrap(),
            vec![43, 44]
        );
        assert_eq!(stored_counter(&db, "userid").await, decimal("44"));
        // Beyond 2^53, where a Double would lose count, a Decimal128 counts exactly.
        set_counter(&db, "userid", decimal("9007199254740992")).await;
        assert_eq!(user("g").insert(&db).await.unwrap(), 9_007_199_254_740_993);
    }
}

/// For its first `times` updates of the counter conditional on its value, another writer
/// takes an id (`$inc: 1`, through its own client) just before the update is sent.
fn interloper(times: usize) -> mongodb::event::EventHandler<mongodb::event::command::CommandEvent> {
    use mongodb::event::command::CommandEvent;
    let left = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(times));
    mongodb::event::EventHandler::callback(move |event| {
        let CommandEvent::Started(started) = event else {
            return;
        };
        // The update as read, `{ _id, seq: { $eq: <value read> } }`, not the guarded one.
        let conditional = started.command_name == "findAndModify"
            && started
                .command
                .get_document("query")
                .and_then(|query| query.get_document("seq"))
                .is_ok_and(|seq| seq.contains_key("$eq"));
        if !conditional
            || left
                .fetch_update(
                    std::sync::atomic::Ordering::SeqCst,
                    std::sync::atomic::Ordering::SeqCst,
                    |n| n.checked_sub(1),
                )
                .is_err()
        {
            return;
        }
        // Blocking here holds seqid's update back until the other writer's is applied.
        support::write_meanwhile(&started.db, |db| async move {
            db.collection::<BsonDocument>("counters")
                .update_one(doc! { "_id": "userid" }, doc! { "$inc": { "seq": 1 } })
                .await
                .unwrap();
        });
    })
}

/// 2^60: an Int64 counter beyond the ±2^53 of the guard's range, which seqid updates as
/// read (on condition that it still holds the value read).
const BEYOND_GUARD: i64 = 1 << 60;

#[tokio::test]
async fn a_counter_updated_as_read_gives_way_to_other_writers_boundedly() {
    // Another writer takes an id between seqid's read and its update, twice: seqid reads
    // again and takes the next id.
    let handler = interloper(2);
    let db = seqid_harness::test_db_with("counters_as_read_raced", move |o| {
        o.command_event_handler = Some(handler)
    })
    .await;
    let db = support::shared(&db);
    set_counter(&db, "userid", Bson::Int64(BEYOND_GUARD)).await;
    assert_eq!(user("a").insert(&db).await.unwrap(), BEYOND_GUARD + 3);
    assert_eq!(
        stored_counter(&db, "userid").await,
        Bson::Int64(BEYOND_GUARD + 3)
    );
    assert_eq!(
        User::sequence().stats(&db).retries,
        3,
        "three updates as read"
    );

    // Every time: seqid gives up, having taken no id.
    let handler = interloper(usize::MAX);
    let db = seqid_harness::test_db_with("counters_as_read_contended", move |o| {
        o.command_event_handler = Some(handler)
    })
    .await;
    let db = support::shared(&db);
    set_counter(&db, "userid", Bson::Int64(BEYOND_GUARD)).await;
    let error = user("a").insert(&db).await.unwrap_err();
    let ErrorKind::CounterContended {
        counter, attempts, ..
    } = error.kind()
    else {
        panic!("expected CounterContended, got {error:?}")
    };
    let sequence = error.sequence().expect("the error names its sequence");
    assert_eq!(
        (sequence.name, &**counter, sequence.counters),
        ("userid", "_id: \"userid\"", "counters")
    );
    assert_eq!(
        stored_counter(&db, "userid").await,
        Bson::Int64(BEYOND_GUARD + i64::from(*attempts)),
        "only the other writer's ids were taken"
    );
    assert!(
        error
            .to_string()
            .contains(&format!("{attempts} times in a row")),
        "{error}"
    );
    assert_eq!(count(&db, "users").await, 0);
}

#[tokio::test]
async fn a_whole_decimal_counter_moves_with_one_update() {
    let db = test_db("counters_decimal").await;
    let db = support::shared(&db);
    if !stores_decimals() {
        // nx-27017 cannot store a Decimal128 counter, so this case cannot arise there.
        // Checked, not assumed: the day it stores one, this test fails and runs in full.
        let stored = db
            .collection::<BsonDocument>("counters")
            .insert_one(doc! { "_id": "userid", "seq": decimal("10") })
            .await;
        assert!(
            stored.is_err(),
            "nx-27017 stores Decimal128 now: drop this work-around"
        );
        eprintln!("nx-27017: no Decimal128 counter to count from; the refusal was checked");
        return;
    }
    set_counter(&db, "userid", decimal("10")).await;
    assert_eq!(user("a").insert(&db).await.unwrap(), 11);
    assert_eq!(stored_counter(&db, "userid").await, decimal("11"));
    assert_eq!(
        User::sequence().stats(&db).retries,
        0,
        "the guarded update took it"
    );
}

#[tokio::test]
async fn sync_counter_leaves_a_counter_it_cannot_count_from_as_it_is() {
    let db = test_db("counters_sync_not_numeric").await;
    let db = support::shared(&db);
    db.collection::<BsonDocument>("users")
        .insert_one(doc! { "_id": 150 })
        .await
        .unwrap();
    // `$max: 150` would replace 1.5 silently (and leave a string as it is: numbers sort
    // before strings).
    let mut cases = vec![(
        Bson::String("twelve".into()),
        "\"twelve\"",
        "which is not a number",
    )];
    if !moves_fractions() {
        cases.push((Bson::Double(1.5), "1.5", "which is not a whole number"));
    }
    for (value, shown, cause) in cases {
        set_counter(&db, "userid", value.clone()).await;
        let error = User::sequence().sync_counter(&db).await.unwrap_err();
        assert_not_numeric(&error, &value, shown, cause);
        assert_eq!(stored_counter(&db, "userid").await, value, "never moved");
    }
    // A whole Double just below 2^53 is still a counter `$max` may keep.
    if !rounds_updated_doubles() {
        set_counter(&db, "userid", Bson::Double(TWO_POW_53 - 1.0)).await;
        assert_eq!(
            User::sequence().sync_counter(&db).await.unwrap(),
            9_007_199_254_740_991
        );
    }
    set_counter(&db, "userid", Bson::Double(7.0)).await;
    assert_eq!(User::sequence().sync_counter(&db).await.unwrap(), 150);
}

#[tokio::test]
async fn a_document_that_already_has_an_id_is_refused_before_any_id_is_taken() {
    let db = test_db("counters_id_set").await;
    let db = support::shared(&db);
    let mut explicit = User {
        id: 77,
        name: "explicit".into(),
    };
    let error = explicit.insert(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::IdAlreadySet { value: 77, .. }),
        "{error:?}"
    );
    assert_eq!(counter_value(&db, "userid").await, None, "no id was taken");
    let mut many = vec![
        user("a"),
        User {
            id: 5,
            name: "b".into(),
        },
    ];
    assert!(matches!(
        User::insert_many(&mut many, &db)
            .await
            .map_err(Error::into_kind),
        Err(ErrorKind::IdAlreadySet { value: 5, .. })
    ));
    assert_eq!(counter_value(&db, "userid").await, None, "no id was taken");
    assert_eq!(count(&db, "users").await, 0);
}

#[tokio::test]
async fn a_duplicate_on_another_unique_index_is_an_error_not_a_retry() {
    let (db, counter) = counted_db("counters_unique").await;
    let db = support::shared(&db);
    unique_index(&db, "users", "name").await;
    user("Ada").insert(&db).await.unwrap();
    counter.reset();
    let mut again = user("Ada");
    let error = again.insert(&db).await.unwrap_err();
    match error.kind() {
        ErrorKind::DuplicateKey { id, .. } => {
            let sequence = error.sequence().expect("the error names its sequence");
            assert_eq!(
                (sequence.name, sequence.collection, *id),
                ("userid", "users", 2)
            );
        }
        other => panic!("expected DuplicateKey, got {other:?}"),
    }
    assert_eq!(
        again.id, 0,
        "the id field is unset again after a failed insert"
    );
    assert_eq!(counter.count("insert"), 1, "not retried");
    assert_eq!(count(&db, "users").await, 1);
}

#[tokio::test]
async fn insert_many_takes_all_ids_with_one_increment() {
    let (db, counter) = counted_db("counters_bulk").await;
    let db = support::shared(&db);
    user("first").insert(&db).await.unwrap();
    counter.reset();
    let mut users: Vec<User> = (0..50).map(|i| user(&format!("u{i}"))).collect();
    let ids = User::insert_many(&mut users, &db).await.unwrap();
    assert_eq!(ids, (2..=51).collect::<Vec<i64>>());
    assert!(users.iter().zip(&ids).all(|(u, id)| u.id == *id));
    assert_eq!(counter.count("findAndModify"), 1, "one $inc for all ids");
    assert_eq!(counter.count("insert"), 1, "one insert_many");
    assert_eq!(count(&db, "users").await, 51);
    assert_eq!(
        User::insert_many(&mut [], &db).await.unwrap(),
        Vec::<i64>::new()
    );
}

#[tokio::test]
async fn insert_many_says_which_documents_were_stored() {
    let db = test_db("counters_bulk_partial").await;
    let db = support::shared(&db);
    unique_index(&db, "users", "name").await;
    user("taken").insert(&db).await.unwrap();
    let mut batch = vec![
        user("a"),
        user("taken"),
        user("b"),
        user("taken"),
        user("c"),
    ];
    let error = User::insert_many(&mut batch, &db).await.unwrap_err();
    let ErrorKind::Bulk(bulk) = error.kind() else {
        panic!("expected Bulk, got {error:?}")
    };
    assert_eq!(bulk.inserted, vec![0, 2, 4]);
    assert_eq!(
        bulk.failed
            .iter()
            .map(|f| (f.index, f.id, f.code))
            .collect::<Vec<_>>(),
        vec![(1, 3, Some(11000)), (3, 5, Some(11000))]
    );
    assert!(bulk.unknown.is_empty());
    assert!(error.to_string().contains("stored 3 of 5"), "{error}");
    // Stored documents keep their ids; refused ones are unset so they can be fixed and retried.
    assert_eq!(
        batch.iter().map(|u| u.id).collect::<Vec<_>>(),
        vec![2, 0, 4, 0, 6]
    );
    let stored = stored_names(&db).await;
    assert_eq!(
        stored,
        vec![
            (1, "taken".into()),
            (2, "a".into()),
            (4, "b".into()),
            (6, "c".into())
        ]
    );
}

/// The users stored, in `_id` order.
async fn stored_users(db: &mongodb::Database) -> Vec<User> {
    use futures_util::TryStreamExt;
    let users = db.collection::<User>("users");
    let cursor = users.find(doc! {}).sort(doc! { "_id": 1 }).await.unwrap();
    cursor.try_collect().await.unwrap()
}

async fn stored_names(db: &mongodb::Database) -> Vec<(i64, String)> {
    let users = stored_users(db).await;
    users.into_iter().map(|u| (u.id, u.name)).collect()
}

#[tokio::test]
async fn every_supported_id_type_is_filled() {
    #[derive(Serialize, Document)]
    #[seq_id("types", collection = "types_i32")]
    struct I32 {
        #[serde(rename = "_id")]
        id: i32,
    }
    #[derive(Serialize, Document)]
    #[seq_id("types", collection = "types_u32")]
    struct U32 {
        #[serde(rename = "_id")]
        id: u32,
    }
    #[derive(Serialize, Document)]
    #[seq_id("types", collection = "types_opt_i64")]
    struct OptI64 {
        #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
        id: Option<i64>,
    }
    #[derive(Serialize, Document)]
    #[seq_id("types", collection = "types_opt_u32")]
    struct OptU32 {
        _id: Option<u32>,
    }

    let db = test_db("counters_types").await;

    let db = support::shared(&db);
    let mut a = I32 { id: 0 };
    assert_eq!(a.insert(&db).await.unwrap(), 1_i32);
    let mut b = U32 { id: 0 };
    assert_eq!(b.insert(&db).await.unwrap(), 2_u32);
    let mut c = OptI64 { id: None };
    assert_eq!(c.insert(&db).await.unwrap(), 3_i64);
    assert_eq!(c.id, Some(3));
    let mut d = OptU32 { _id: None };
    assert_eq!(d.insert(&db).await.unwrap(), 4_u32);
    assert_eq!(d._id, Some(4));
    let mut set = OptU32 { _id: Some(9) };
    assert!(matches!(
        set.insert(&db).await.map_err(Error::into_kind),
        Err(ErrorKind::IdAlreadySet { value: 9, .. })
    ));
    for (collection, id) in [
        ("types_i32", 1),
        ("types_u32", 2),
        ("types_opt_i64", 3),
        ("types_opt_u32", 4),
    ] {
        let stored = db
            .collection::<BsonDocument>(collection)
            .find_one(doc! {})
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            stored.get("_id").and_then(integer),
            Some(id),
            "{collection}"
        );
    }
}

#[tokio::test]
async fn the_insert_future_is_send_and_runs_in_spawned_tasks() {
    let db = test_db("counters_send").await;
    let db = support::shared(&db);
    let handle = tokio::spawn({
        let db = db.clone();
        async move { user("spawned").insert(&db).await }
    });
    assert_eq!(handle.await.unwrap().unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn sixty_four_tasks_get_exactly_one_to_3200() {
    let db = test_db("counters_concurrent").await;
    let db = support::shared(&db);
    let writes = insert_concurrently::<CountedDoc>(&db, "task", 64, 50).await;
    assert_dense(
        &writes.keys().copied().collect(),
        3200,
        CountedDoc::sequence().stats(&db).retries,
    );
    assert_eq!(
        stored_writes(&db, "multi_counters").await,
        writes,
        "every document stored under the id it was given"
    );
    let stats = CountedDoc::sequence().stats(&db);
    assert_eq!(stats.ids, 3200);
    assert!(stats.reservations <= 3200, "{stats:?}");
}

#[tokio::test]
async fn a_counter_upsert_that_keeps_failing_is_retried_a_bounded_number_of_times() {
    // E11000 on the counter's upsert is the race of concurrent first use, retried. A
    // unique index on `seq` makes every upsert of a new counter fail that way, so the
    // retries must stop and report, never loop.
    let (db, counter) = counted_db("counters_upsert_retry").await;
    let db = support::shared(&db);
    let counters = db.collection::<BsonDocument>("counters");
    unique_index(&db, "counters", "seq").await;
    counters
        .insert_one(doc! { "_id": "other", "seq": 1 })
        .await
        .unwrap();
    counter.reset();
    let error = user("a").insert(&db).await.unwrap_err();
    let attempts = counter.count("findAndModify");
    let nx = seqid_harness::server_flavor().unwrap() == seqid_harness::ServerFlavor::Nx;
    // nx-27017 stores `{ _id: "userid" }` without `seq` on the first failed upsert, and
    // then answers seqid's update of that counter (`{ seq: { $exists: false } }`), which
    // breaks the unique index too, with no document instead of E11000: it reads as a
    // counter moved meanwhile, retried up to 16 times more. Bounded all the same.
    // The first `$inc` goes without the upsert and finds no counter; then the upserts.
    let bound = if nx { 1 + 1 + 5 + 16 } else { 1 + 5 };
    assert!(
        (3..=bound).contains(&attempts),
        "retried, but boundedly: {attempts} attempts"
    );
    assert_eq!(User::sequence().stats(&db).retries, attempts - 2);
    let sequence = error.sequence().map(|s| s.name);
    match error.kind() {
        ErrorKind::CounterContended { .. } if nx => assert_eq!(sequence, Some("userid")),
        ErrorKind::Driver { .. } => assert_eq!(sequence, Some("userid")),
        // nx-27017 answers this upsert with no document (and stores `{ _id: "userid" }`
        // without `seq`) instead of raising E11000: seqid retries that the same bounded
        // way and then says what the server answered.
        ErrorKind::NoCounter {
            attempts: reported, ..
        } if seqid_harness::server_flavor().unwrap() == seqid_harness::ServerFlavor::Nx => {
            assert_eq!(
                (sequence, u64::from(*reported)),
                (Some("userid"), attempts - 1)
            );
            assert!(error.to_string().contains("no document"), "{error}");
        }
        other => panic!("expected a typed error about the counter, got {other:?}"),
    }
    assert_eq!(count(&db, "users").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_inserts_never_wedge_the_sequence() {
    let db = test_db("counters_cancelled").await;
    let db = support::shared(&db);
    let tasks: Vec<_> = (0..32_u64)
        .map(|task| {
            let db = db.clone();
            tokio::spawn(async move {
                let mut stored = Vec::new();
                for n in 0..20_u64 {
                    // Some inserts are cancelled while waiting for, or holding, a reservation.
                    let budget = std::time::Duration::from_micros((task * 37 + n * 101) % 3000);
                    let mut doc = user(&format!("{task}-{n}"));
                    if let Ok(result) = tokio::time::timeout(budget, doc.insert(&db)).await {
                        stored.push(result.unwrap());
                    }
                }
                stored
            })
        })
        .collect();
    let mut returned = Vec::new();
    for task in tasks {
        returned.extend(task.await.unwrap());
    }
    // Every insert that returned is stored under its id; the sequence still serves,
    // through the same handle: its allocator is what must not be wedged. (The
    // cancelling client's connection pool may take seconds to recover from many
    // cancelled operations, which is the driver's business: hence the generous limit.)
    let fresh = &db;
    // Ids reserved for callers cancelled during the round trip wait in the live block for
    // the next callers: no gap, and no round trip for them.
    // Round trips that cancelled callers started end first (in tasks of their own).
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let given_back = User::sequence().stats(fresh).unused;
    let mut after = Vec::new();
    for n in 0..=given_back {
        let id = tokio::time::timeout(
            std::time::Duration::from_secs(60),
            user(&format!("after-{n}")).insert(fresh),
        )
        .await
        .expect("the sequence is not wedged")
        .unwrap();
        after.push(id);
    }
    assert_eq!(
        User::sequence().stats(fresh).unused,
        0,
        "the given-back ids are used up"
    );
    let last = *after.last().unwrap();
    let stored = stored_names(fresh).await;
    let stored_ids: std::collections::BTreeSet<i64> = stored.iter().map(|(id, _)| *id).collect();
    assert!(
        returned
            .iter()
            .chain(&after)
            .all(|id| stored_ids.contains(id))
    );
    assert!(
        returned.iter().all(|id| *id < last),
        "past the given-back ids, ids keep increasing"
    );
    assert!(
        after.iter().all(|id| !returned.contains(id)),
        "a given-back id was never handed out"
    );
    assert_eq!(stored_ids.len(), stored.len());
}

#[tokio::test]
async fn sync_counter_continues_after_ids_written_by_other_means() {
    #[derive(Serialize, Document)]
    #[seq_id(
        "imported",
        collection = "imported",
        strategy = "block",
        block_size = 10
    )]
    struct Imported {
        #[serde(rename = "_id")]
        id: i64,
    }
    // (`sync_counter` on an optimistic type does not compile: `seqid-derive/tests/ui/fail`.)
    let db = test_db("counters_sync").await;
    let db = support::shared(&db);
    // An import with ids of every numeric type, and one that is not a number.
    db.collection::<BsonDocument>("imported")
        .insert_many([
            doc! { "_id": 3_i32 },
            doc! { "_id": 150_i64 },
            doc! { "_id": 42.0 },
            doc! { "_id": "legacy-7" },
        ])
        .await
        .unwrap();
    assert_eq!(Imported::sequence().sync_counter(&db).await.unwrap(), 150);
    assert_eq!(counter_value(&db, "imported").await, Some(150));
    assert_eq!(Imported { id: 0 }.insert(&db).await.unwrap(), 151);
    // Never lowers the counter: the block above reserved up to 160.
    assert_eq!(Imported::sequence().sync_counter(&db).await.unwrap(), 160);
    // An empty collection and no counter: the counter starts at 0.
    assert_eq!(User::sequence().sync_counter(&db).await.unwrap(), 0);
    assert_eq!(user("first").insert(&db).await.unwrap(), 1);
}
