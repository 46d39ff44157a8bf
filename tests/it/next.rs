//! A number on its own (issue 49): `db.sequence(name).next()` and `.next_n(n)`, for the
//! counters, block and gapless strategies, through a handle and a bare database; beside
//! inserts of a type declaring the same sequence (scoped too), the MongoDB tutorial's
//! getNextSequence by hand, and other processes; cancelled callers; every option refused.
//! Every id handed out is checked.

use std::collections::BTreeSet;
use std::future::IntoFuture;
use std::time::Duration;

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use seqid::error::ErrorKind;
use seqid::{AsDatabase, Document, Error};
use seqid_harness::test_db;
use serde::Serialize;

use crate::support::models::{Event, User};
use crate::support::transactions::without_transactions;
use crate::support::tutorial::plain_increment;
use crate::support::{
    Workers, assert_dense, assert_transaction_required, counted_db, counter_value, integer, shared,
};

/// The counter `_id` of the tutorial's layout in `counters`, as stored: its `seq`.
async fn counter_of(db: &mongodb::Database, id: Bson) -> Option<i64> {
    let counters = db.collection::<BsonDocument>("counters");
    let counter = counters.find_one(doc! { "_id": id }).await.unwrap()?;
    counter.get("seq").and_then(integer)
}

#[tokio::test]
async fn next_and_next_n_hand_out_the_counter_s_ids_through_a_handle_and_a_bare_database() {
    let test = test_db("next_values").await;
    let handle = shared(&test);
    let bare: &mongodb::Database = &test;

    // Counters: the tutorial's counter, from `start`, `step` apart.
    let id = handle
        .sequence("next_c")
        .start(10)
        .step(3)
        .next()
        .await
        .unwrap();
    assert_eq!(id, 10);
    let ids = bare
        .sequence("next_c")
        .start(10)
        .step(3)
        .next_n(3)
        .await
        .unwrap();
    assert_eq!(ids, [13, 16, 19]);
    let ids = handle
        .sequence("next_c")
        .start(10)
        .step(3)
        .next_n(2)
        .await
        .unwrap();
    assert_eq!(ids, [22, 25]);
    assert_eq!(counter_value(&test, "next_c").await, Some(25));
    // Default options: the tutorial's `getNextSequence("userid")` (a name of its own:
    // types of this crate declare `userid` in two counters collections).
    assert_eq!(bare.sequence("next_userid").next().await.unwrap(), 1);
    assert_eq!(handle.sequence("next_userid").next().await.unwrap(), 2);
    assert_eq!(counter_value(&test, "next_userid").await, Some(2));

    // Block through the handle: one block of 5 reserved, handed out in memory; each
    // reserved when the last is spent (`prefetch(false)`), so that the counter read after
    // each call is where these calls took it, not where an early refill has got to.
    assert_eq!(
        handle
            .sequence("next_b")
            .block(5)
            .prefetch(false)
            .next()
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        handle
            .sequence("next_b")
            .block(5)
            .prefetch(false)
            .next_n(3)
            .await
            .unwrap(),
        [2, 3, 4]
    );
    assert_eq!(counter_value(&test, "next_b").await, Some(5), "one block");
    // Six more: the block's last id, then a new block of 5 (rounded up from 5 wanted).
    assert_eq!(
        handle
            .sequence("next_b")
            .block(5)
            .prefetch(false)
            .next_n(6)
            .await
            .unwrap(),
        [5, 6, 7, 8, 9, 10]
    );
    assert_eq!(counter_value(&test, "next_b").await, Some(10));
    // Through a bare database, a block call reserves exactly its own ids.
    assert_eq!(
        bare.sequence("next_b").block(5).next_n(2).await.unwrap(),
        [11, 12]
    );
    assert_eq!(counter_value(&test, "next_b").await, Some(12));

    // Another counters collection, and `n` 0.
    let ids = bare.sequence("other").counters("sequences").next_n(0);
    assert_eq!(ids.await.unwrap(), Vec::<i64>::new());
    let ids = bare.sequence("other").counters("sequences").next_n(4);
    assert_eq!(ids.await.unwrap(), [1, 2, 3, 4]);
    let stored = test
        .collection::<BsonDocument>("sequences")
        .find_one(doc! { "_id": "other" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.get("seq").and_then(integer), Some(4));
    assert_eq!(
        counter_value(&test, "other").await,
        None,
        "not in `counters`"
    );
}

#[tokio::test]
async fn n_zero_takes_nothing_and_sends_nothing() {
    let (test, commands) = counted_db("next_zero").await;
    let handle = shared(&test);
    let before = commands.total();
    assert!(handle.sequence("z").next_n(0).await.unwrap().is_empty());
    assert!(
        test.sequence("z")
            .block(3)
            .next_n(0)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(commands.total(), before, "no command sent");
    assert_eq!(counter_value(&test, "z").await, None);
}

#[tokio::test]
async fn gapless_numbers_live_and_die_with_the_transaction() {
    let test = test_db("next_gapless").await;
    let handle = shared(&test);
    let client = test.client();
    // Without a transaction: refused, nothing taken.
    let error = handle.sequence("g").gapless().next().await.unwrap_err();
    assert_transaction_required(&error, false);
    let mut session = client.start_session().await.unwrap();
    let error = (test.sequence("g").gapless().session(&mut session).next_n(2))
        .await
        .unwrap_err();
    assert_transaction_required(&error, true);
    assert_eq!(counter_value(&test, "g").await, None, "nothing taken");

    // nx-27017's transactions are not MongoDB's (see `without_transactions`; its commit
    // of this one answers "No session specified"): the rest needs real ones.
    if without_transactions(&test).await {
        return;
    }
    // One transaction at a time, every third aborted: its numbers are the next one's.
    let mut committed = Vec::new();
    let mut expected = 1;
    for k in 0..9 {
        session.start_transaction().await.unwrap();
        // Through the handle one number, through the bare database two.
        let ids = match k % 2 {
            0 => vec![(handle.sequence("g").gapless().session(&mut session).next()).await],
            _ => (test.sequence("g").gapless().session(&mut session).next_n(2))
                .await
                .map_or_else(|e| vec![Err(e)], |ids| ids.into_iter().map(Ok).collect()),
        };
        let ids: Vec<i64> = ids.into_iter().map(Result::unwrap).collect();
        let wanted: Vec<i64> = (expected..expected + ids.len() as i64).collect();
        assert_eq!(
            ids, wanted,
            "transaction {k}: the next numbers, aborted ones again"
        );
        if k % 3 == 2 {
            session.abort_transaction().await.unwrap();
        } else {
            session.commit_transaction().await.unwrap();
            committed.extend(ids.iter().copied());
            expected += ids.len() as i64;
        }
    }
    let dense: Vec<i64> = (1..=committed.len() as i64).collect();
    assert_eq!(committed, dense, "committed numbers dense, in commit order");
    assert_eq!(
        counter_value(&test, "g").await,
        Some(committed.len() as i64)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gapless_numbers_from_many_transactions_at_once_are_dense() {
    let test = test_db("next_gapless_tasks").await;
    if without_transactions(&test).await {
        return;
    }
    let handle = shared(&test);
    // The counter first, so that no two transactions race to make it.
    let mut session = test.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let first = handle.sequence("gt").gapless().session(&mut session).next();
    assert_eq!(first.await.unwrap(), 1);
    session.commit_transaction().await.unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let (db, client) = (handle.clone(), test.client().clone());
            tokio::spawn(async move {
                let (mut committed, mut aborted) = (Vec::new(), Vec::new());
                let mut session = client.start_session().await.unwrap();
                for k in 0..6 {
                    session.start_transaction().await.unwrap();
                    let taken = db.sequence("gt").gapless().session(&mut session).next();
                    let id = match taken.await {
                        Ok(id) => id,
                        // A write conflict (another process's, or a server's own): the
                        // transaction goes, with its number.
                        Err(_) => {
                            let _ = session.abort_transaction().await;
                            continue;
                        }
                    };
                    if (task + k) % 3 == 0 {
                        session.abort_transaction().await.unwrap();
                        aborted.push(id);
                    } else if session.commit_transaction().await.is_ok() {
                        committed.push(id);
                    }
                }
                (committed, aborted)
            })
        })
        .collect();
    let mut committed = BTreeSet::from([1]);
    let mut aborted = 0;
    for task in tasks {
        let (ids, gone) = task.await.unwrap();
        assert!(ids.is_sorted(), "a task's numbers increase: {ids:?}");
        aborted += gone.len();
        for id in ids {
            assert!(committed.insert(id), "{id} committed twice");
        }
    }
    assert!(aborted > 0);
    let last = committed.len() as i64;
    assert_eq!(
        committed,
        (1..=last).collect(),
        "no gap: aborted numbers reused"
    );
    assert_eq!(counter_value(&test, "gt").await, Some(last));
}

/// Per project and year, as a named sequence's `.scope("project", ..).scope("year", ..)`.
#[derive(Debug, Serialize, Document)]
#[seq_id(collection = "next_tickets")]
struct Ticket {
    project: String,
    year: i32,
    #[seq_id("next_ticket", scope = ["project", "year"])]
    number: i64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn named_calls_inserts_and_the_tutorial_by_hand_share_one_counter() {
    let test = test_db("next_shared").await;
    let handle = shared(&test);
    // The counter made before the race (SecantusDB may answer a concurrent first use's
    // upsert with no document: see `assert_dense`).
    assert_eq!(handle.sequence("users").next().await.unwrap(), 1);
    const TASKS: usize = 24;
    const EACH: usize = 10;
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let (db, bare) = (handle.clone(), (*test).clone());
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for n in 0..EACH {
                    let id = match task % 4 {
                        0 => {
                            let mut user = User {
                                id: 0,
                                by: format!("{task}-{n}"),
                            };
                            user.insert(&db).await.unwrap()
                        }
                        1 => db.sequence("users").next().await.unwrap(),
                        2 => bare.sequence("users").next().await.unwrap(),
                        _ => plain_increment(&bare, "users").await.unwrap(),
                    };
                    ids.push(id);
                }
                ids
            })
        })
        .collect();
    let (mut all, mut inserted) = (BTreeSet::from([1]), BTreeSet::new());
    for (task, taken) in tasks.into_iter().enumerate() {
        for id in taken.await.unwrap() {
            assert!(all.insert(id), "{id} handed out twice");
            if task % 4 == 0 {
                inserted.insert(id);
            }
        }
    }
    let total = 1 + TASKS * EACH;
    assert_dense(&all, total, User::sequence().stats(&handle).retries);
    // The ids stored are exactly those the inserts were given, and the counter holds the
    // last id handed out.
    let stored: BTreeSet<i64> = crate::support::all_documents(&test, "users")
        .await
        .iter()
        .map(|stored| stored.get("_id").and_then(integer).unwrap())
        .collect();
    assert_eq!(stored, inserted);
    assert_eq!(inserted.len(), TASKS / 4 * EACH);
    assert_eq!(counter_value(&test, "users").await, all.last().copied());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_scoped_named_sequence_counts_in_the_declared_type_s_counter() {
    let test = test_db("next_scoped").await;
    let handle = shared(&test);
    fn apollo(db: &seqid::Database) -> seqid::action::NamedSequence<'_> {
        let ticket = db.sequence("next_ticket");
        ticket.scope("project", "apollo").scope("year", 2026)
    }
    assert_eq!(apollo(&handle).next().await.unwrap(), 1);
    let tasks: Vec<_> = (0..16)
        .map(|task| {
            let db = handle.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for _ in 0..8 {
                    if task % 2 == 0 {
                        let mut ticket = Ticket {
                            project: "apollo".into(),
                            year: 2026,
                            number: 0,
                        };
                        ids.push(ticket.insert(&db).await.unwrap());
                    } else {
                        ids.push(apollo(&db).next().await.unwrap());
                    }
                }
                ids
            })
        })
        .collect();
    let mut all = BTreeSet::from([1]);
    for task in tasks {
        for id in task.await.unwrap() {
            assert!(all.insert(id), "{id} handed out twice");
        }
    }
    assert_dense(&all, 1 + 16 * 8, Ticket::sequence().stats(&handle).retries);
    // One counter: the declared type's, `_id` the JSON of the name and the values.
    let id = Bson::String(r#"["next_ticket","apollo",2026]"#.into());
    assert_eq!(counter_of(&test, id).await, all.last().copied());
    let counters = test.collection::<BsonDocument>("counters");
    assert_eq!(counters.count_documents(doc! {}).await.unwrap(), 1);
    // Another scope has a counter of its own. The scope fields in another order would
    // name another counter: refused, since `Ticket` declares the sequence (issue 55).
    let other = handle.sequence("next_ticket").scope("project", "gemini");
    let other = other.scope("year", 2026).next().await.unwrap();
    assert_eq!(other, 1);
    let swapped = handle.sequence("next_ticket").scope("year", 2026);
    let error = swapped.scope("project", "apollo").next().await.unwrap_err();
    match error.kind() {
        ErrorKind::InvalidScope { reason, .. } => {
            assert!(reason.contains("next::Ticket"), "{error}");
            assert!(reason.contains("project, year, in that order"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(counters.count_documents(doc! {}).await.unwrap(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_named_block_sequence_shares_the_declared_type_s_live_block() {
    let test = test_db("next_block_shared").await;
    let handle = shared(&test);
    let tasks: Vec<_> = (0..16)
        .map(|task| {
            let db = handle.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for _ in 0..10 {
                    match task % 2 {
                        0 => ids.push(Event { id: 0 }.insert(&db).await.unwrap()),
                        _ => ids.extend(db.sequence("events").block(10).next_n(2).await.unwrap()),
                    }
                }
                ids
            })
        })
        .collect();
    let mut all = BTreeSet::new();
    for task in tasks {
        for id in task.await.unwrap() {
            assert!(all.insert(id), "{id} handed out twice");
        }
    }
    // 8 × 10 inserts and 8 × 10 × 2 numbers from one live block: 240 ids, the counter
    // moved in blocks of 10 by this one handle, with nothing lost between them.
    assert_eq!(all.len(), 240);
    let reserved = counter_value(&test, "events").await.unwrap();
    assert_eq!(reserved % 10, 0);
    assert_eq!(
        all,
        (1..=240).collect(),
        "one handle, one block at a time: no gap"
    );
    assert_eq!(reserved, 240);
    // Callers waiting together share a reservation (rounded up to whole blocks).
    let stats = Event::sequence().stats(&handle);
    assert_eq!(stats.ids, 240, "{stats:?}");
    assert!((1..=24).contains(&stats.reservations), "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn numbers_from_several_processes_are_distinct() {
    let test = test_db("next_processes").await;
    let handle = shared(&test);
    // The counter made first (see `assert_dense`).
    assert_eq!(handle.sequence("next_processes").next().await.unwrap(), 1);
    let modes = ["next/handle", "next/bare", "next/handle"].map(String::from);
    let mut workers = Workers::spawn(&test, modes, 4, 15);
    workers.go();
    let here: Vec<i64> = {
        let takers: Vec<_> = (0..4)
            .map(|_| {
                let db = handle.clone();
                tokio::spawn(async move {
                    let mut ids = Vec::new();
                    for _ in 0..15 {
                        ids.push(db.sequence("next_processes").next().await.unwrap());
                    }
                    ids
                })
            })
            .collect();
        let mut ids = Vec::new();
        for taker in takers {
            ids.extend(taker.await.unwrap());
        }
        ids
    };
    // `finish` fails on an id reported twice.
    let mut writes = workers.finish().await;
    assert_eq!(writes.len(), 3 * 4 * 15);
    for id in here {
        assert!(
            writes.insert(id, ("here".into(), 0)).is_none(),
            "{id} twice"
        );
    }
    let all: BTreeSet<i64> = writes.keys().copied().chain([1]).collect();
    assert_eq!(all.len(), 1 + 4 * 4 * 15);
    // Other processes' retries are not known here: distinct, and within what the counter
    // handed out.
    let last = counter_value(&test, "next_processes").await.unwrap();
    assert!(
        all.iter().all(|id| (1..=last).contains(id)),
        "beyond {last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_callers_lose_no_id_from_the_block() {
    let test = test_db("next_cancelled").await;
    let handle = shared(&test);
    // Each block reserved when the last is spent, so that what the cancelled callers
    // left is all the live block holds (the cancellation suites run the default).
    let next = || {
        handle
            .sequence("next_cancelled")
            .block(7)
            .prefetch(false)
            .next()
    };
    let mut received = BTreeSet::new();
    let mut cancelled = 0;
    for k in 0..60 {
        // Every other caller goes away after its first poll: while it waits for a
        // reservation (started, and finished in a task of its own), or with its id.
        let result = match k % 2 {
            0 => tokio::time::timeout(Duration::ZERO, next().into_future()).await,
            _ => Ok(next().await),
        };
        match result {
            Ok(id) => assert!(received.insert(id.unwrap()), "twice"),
            Err(_) => cancelled += 1,
        }
    }
    assert!(cancelled > 0, "no caller was cancelled while it waited");
    // One more caller, served once every reservation started before it has ended.
    assert!(received.insert(next().await.unwrap()));
    let reserved = counter_value(&test, "next_cancelled").await.unwrap();
    // What the cancelled callers never received is in the live block: the next callers
    // take exactly the ids not handed out yet, and no new block is reserved.
    let missing: BTreeSet<i64> = (1..=reserved).filter(|id| !received.contains(id)).collect();
    let mut drained = BTreeSet::new();
    for _ in 0..missing.len() {
        drained.insert(next().await.unwrap());
    }
    assert_eq!(
        drained, missing,
        "the ids the cancelled callers never received"
    );
    assert_eq!(
        counter_value(&test, "next_cancelled").await,
        Some(reserved),
        "no block more"
    );
}

#[tokio::test]
async fn every_option_out_of_range_is_refused_before_any_round_trip() {
    let (test, commands) = counted_db("next_refused").await;
    let handle = shared(&test);
    let before = commands.total();
    let option = |error: Error| match error.kind() {
        ErrorKind::InvalidOption { option, .. } => (*option, error.to_string()),
        other => panic!("{other:?}"),
    };
    let (name, message) = option(handle.sequence("").next().await.unwrap_err());
    assert_eq!(name, "name");
    assert_eq!(
        message,
        "sequence ``: name = \"\" is invalid: a sequence needs a name: its counter's `_id`, \
         or the name its layout finds the counter by"
    );
    let (name, message) = option(test.sequence("n").block(0).next().await.unwrap_err());
    assert_eq!(name, "block");
    assert!(message.starts_with("sequence `n`: block = 0 is invalid: a block holds"));
    let (name, message) = option(test.sequence("n").step(0).next_n(2).await.unwrap_err());
    assert_eq!(name, "step");
    assert!(
        message.starts_with("sequence `n`: step = 0 is invalid"),
        "{message}"
    );
    let huge = test.sequence("n").step(2).next_n(i64::MAX as u64 / 2 + 1);
    let (name, message) = option(huge.await.unwrap_err());
    assert_eq!(name, "next_n");
    assert!(message.contains("span more than an i64 holds"), "{message}");
    let twice = test
        .sequence("n")
        .scope("project", "a")
        .scope("project", "b");
    let (name, message) = option(twice.next().await.unwrap_err());
    assert_eq!(name, "scope");
    assert!(message.contains("\"project\" is invalid: the scope field is given twice"));
    // A scope value no scope can hold: a Double, an array.
    for (value, says) in [
        (
            Bson::Double(1.5),
            "a Double or Decimal128 may hold a fraction",
        ),
        (
            Bson::Array(vec![1.into()]),
            "an array is indexed element by element",
        ),
    ] {
        let error = (handle.sequence("n").scope("project", &value).next())
            .await
            .unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::InvalidScope { .. })
                && error.sequence().map(|s| s.name) == Some("n"),
            "{error:?}"
        );
        assert!(error.to_string().contains(says), "{error}");
    }
    assert_eq!(commands.total(), before, "nothing read or written");
}

/// mongoose-auto-increment's model, as a declared type names it (`NextBook`: other types of
/// this crate declare `Book` with other strategies).
#[derive(Debug, Serialize, Document)]
#[seq_id("NextBook", collection = "books", layout = "mongoose-auto-increment")]
struct Book {
    #[serde(rename = "_id")]
    id: Option<i64>,
}

#[tokio::test]
async fn a_named_sequence_in_a_tool_s_layout_shares_the_tool_s_counter() {
    let test = test_db("next_layout").await;
    let handle = shared(&test);
    // The tool counts from 0, in `identitycounters`, found by model and field.
    let mut book = Book { id: None };
    book.insert(&handle).await.unwrap();
    assert_eq!(book.id, Some(0));
    let book_sequence = || {
        test.sequence("NextBook")
            .layout(seqid::layout::Layout::MONGOOSE_AUTO_INCREMENT)
    };
    assert_eq!(book_sequence().next().await.unwrap(), 1);
    assert_eq!(book_sequence().next_n(2).await.unwrap(), [2, 3]);
    book.id = None;
    book.insert(&handle).await.unwrap();
    assert_eq!(book.id, Some(4));
    let counters = test.collection::<BsonDocument>("identitycounters");
    let counter = counters
        .find_one(doc! { "model": "NextBook", "field": "_id" })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(counter.get("count").and_then(integer), Some(4));
    assert_eq!(counters.count_documents(doc! {}).await.unwrap(), 1);
    // Another field is another counter of the tool's.
    let other = test
        .sequence("NextBook")
        .layout(seqid::layout::Layout::MONGOOSE_AUTO_INCREMENT);
    assert_eq!(other.field("isbn").next().await.unwrap(), 0);
    // A step with a layout whose tool always adds 1, a scope with one that has none.
    let error = (test
        .sequence("users.id")
        .layout(seqid::layout::Layout::MONGOENGINE)
        .step(2))
    .next()
    .await
    .unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::InvalidOption { option: "step", .. }
        ),
        "{error:?}"
    );
    let error = (test
        .sequence("x")
        .layout(seqid::layout::Layout::GO)
        .scope("project", "a"))
    .next()
    .await
    .unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::InvalidOption {
                option: "scope",
                ..
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_missing_counter_is_checked_against_the_collection_given() {
    let test = test_db("next_missing_counter").await;
    // Numbers stored by an import, with no counter.
    let imported = test.collection::<BsonDocument>("next_imported");
    let numbers = [doc! { "_id": 1 }, doc! { "_id": 7 }];
    imported.insert_many(numbers).await.unwrap();
    let handle = shared(&test);
    // With the collection, the counter is not made afresh under the numbers stored.
    let error = (handle
        .sequence("next_imported")
        .collection("next_imported")
        .next())
    .await
    .unwrap_err();
    match error.kind() {
        ErrorKind::CounterMissing { largest, .. } => assert_eq!(integer(largest), Some(7)),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        counter_value(&test, "next_imported").await,
        None,
        "nothing made"
    );
    // In another field, none stored: the counter starts.
    let by_field = handle
        .sequence("next_imported")
        .collection("next_imported")
        .field("number");
    assert_eq!(by_field.next().await.unwrap(), 1);
    // Without a collection there is nothing to look in: the counter goes on.
    assert_eq!(test.sequence("next_imported").next().await.unwrap(), 2);
}

/// The tutorial's getNextSequence in Python (pymongo, as the tutorial's shell code is
/// written in the drivers' docs), in processes of its own, while tasks here take numbers
/// through a handle and insert a type declaring the sequence: one counter, every number
/// once, together exactly `1..=N`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_tutorial_s_get_next_sequence_in_python_shares_the_counter() {
    let test = test_db("next_pymongo").await;
    let handle = shared(&test);
    // The counter made first (see `assert_dense`).
    assert_eq!(handle.sequence("users").next().await.unwrap(), 1);
    let script = crate::support::tools::Script {
        tool: seqid_harness::Tool::MongoEngine,
        file: "tutorial_next.py",
        env: vec![("TUTORIAL_SEQUENCE", "users")],
    };
    let mut python = script.start(&test, 40, &["a", "b"]).await;
    python.go();
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let db = handle.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for n in 0..20 {
                    ids.push(match task % 2 {
                        0 => db.sequence("users").next().await.unwrap(),
                        _ => {
                            let by = format!("{task}-{n}");
                            User { id: 0, by }.insert(&db).await.unwrap()
                        }
                    });
                }
                ids
            })
        })
        .collect();
    let mut all = crate::support::tools::ids_of(&python.finish().await, "users");
    assert_eq!(all.len(), 2 * 40);
    all.insert(1);
    for task in tasks {
        for id in task.await.unwrap() {
            assert!(all.insert(id), "{id} handed out twice");
        }
    }
    assert_dense(
        &all,
        1 + 2 * 40 + 8 * 20,
        User::sequence().stats(&handle).retries,
    );
    assert_eq!(counter_value(&test, "users").await, all.last().copied());
}

/// Counters and block take their numbers outside the caller's transaction, as inserts do:
/// an abort costs a gap, never a number handed out twice.
#[tokio::test]
async fn counters_and_block_numbers_outlive_an_aborted_transaction() {
    let test = test_db("next_outside").await;
    if without_transactions(&test).await {
        return;
    }
    let handle = shared(&test);
    let mut session = test.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let counted = handle.sequence("outside").session(&mut session).next();
    assert_eq!(counted.await.unwrap(), 1);
    let blocked = test.sequence("outside_b").block(4).session(&mut session);
    assert_eq!(blocked.next_n(2).await.unwrap(), [1, 2]);
    session.abort_transaction().await.unwrap();
    assert_eq!(counter_value(&test, "outside").await, Some(1), "a gap");
    assert_eq!(counter_value(&test, "outside_b").await, Some(2));
    assert_eq!(handle.sequence("outside").next().await.unwrap(), 2);
    assert_eq!(test.sequence("outside_b").block(4).next().await.unwrap(), 3);
}

/// What a handle did for a named sequence: ids handed out and the reservations they
/// took (one per block), counted with a declared type's calls on the same counter and
/// block size; through a bare database, nothing kept. No round trip.
#[tokio::test]
async fn a_named_sequence_s_stats_count_what_its_handle_did() {
    let test = test_db("next_stats").await;
    let handle = shared(&test);
    let named = || handle.sequence("events").block(10);
    assert_eq!(named().stats().unwrap().ids, 0, "nothing yet");
    for _ in 0..25 {
        named().next().await.unwrap();
    }
    let stats = named().stats().unwrap();
    assert_eq!((stats.ids, stats.reservations), (25, 3), "{stats:?}");
    // The declared type of the same counter and block size shares the handle's block,
    // and its count: 5 more ids, from the third block.
    for _ in 0..5 {
        Event { id: 0 }.insert(&handle).await.unwrap();
    }
    let stats = named().stats().unwrap();
    assert_eq!((stats.ids, stats.reservations), (30, 3), "{stats:?}");
    assert_eq!(Event::sequence().stats(&handle), stats);
    // Another block size than the declared type's is refused (issue 55).
    let error = handle.sequence("events").block(7).stats().unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::InvalidOption {
                option: "strategy",
                ..
            }
        ),
        "{error:?}"
    );
    // A name no type declares: another block size is another allocator, nothing yet.
    for _ in 0..3 {
        handle
            .sequence("next_undeclared")
            .block(10)
            .next()
            .await
            .unwrap();
    }
    let stats = handle.sequence("next_undeclared").block(7).stats().unwrap();
    assert_eq!(stats.ids, 0);
    let bare = test.db().sequence("events").block(10);
    assert_eq!(
        bare.stats().unwrap().ids,
        0,
        "a bare database keeps nothing"
    );
    let error = handle.sequence("").stats().unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::InvalidOption { option: "name", .. }
        ),
        "{error:?}"
    );
}
