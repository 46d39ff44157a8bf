//! Writing a stored document back (issue 55, item 7): `doc.replace(&db)` refuses a document
//! whose array's mark is below the stored one (an append landed after it was read), where
//! the driver's `replace_one` moves the mark back and the next append hands a number out
//! again; it keeps the hidden list of recent appends, which `replace_one` drops.
//!
//! nx-27017 stores every element of an array `$push` touches as a JSON string (a server
//! bug, see `items.rs`): these tests read orders back by parsing them ([`read_order`]), a
//! work-around of the tests only.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use mongodb::bson::oid::ObjectId;
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use seqid::Document;
use seqid::error::ErrorKind;
use seqid_harness::{ServerFlavor, test_db, test_db_with};
use serde::{Deserialize, Serialize};

use crate::support::Workers;
use crate::support::counting;
use crate::support::integer;
use crate::support::items::{Line, Order, line, order};
use crate::support::transactions::without_transactions;

fn is_nx() -> bool {
    seqid_harness::server_flavor().unwrap() == ServerFlavor::Nx
}

/// An element of a stored array as a document; nx-27017's JSON strings parsed.
fn element(value: &Bson) -> Bson {
    match value {
        Bson::String(json) => {
            let value: serde_json::Value = serde_json::from_str(json).expect("nx's JSON string");
            Bson::Document(mongodb::bson::to_document(&value).expect("an object"))
        }
        other => other.clone(),
    }
}

/// The order `_id: id` as stored.
async fn raw(test: &mongodb::Database, id: i64) -> BsonDocument {
    test.collection::<BsonDocument>("orders")
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .expect("the order is stored")
}

/// The order `_id: id`, read as a form is: into the struct (its arrays' elements parsed
/// where nx-27017 stored them as strings).
pub(crate) async fn read_order(test: &mongodb::Database, id: i64) -> Order {
    let mut stored = raw(test, id).await;
    for field in ["lines", "steps"] {
        if let Ok(items) = stored.get_array_mut(field) {
            for item in items.iter_mut() {
                *item = element(item);
            }
        }
    }
    mongodb::bson::from_document(stored).expect("an order")
}

/// The line numbers stored in `order`, in order, and its mark.
pub(crate) fn numbers(order: &BsonDocument) -> (Vec<i64>, Option<i64>) {
    let lines = order.get_array("lines").map_or(Vec::new(), |lines| {
        let number = |item: &Bson| element(item).as_document()?.get("no").and_then(integer);
        lines
            .iter()
            .map(|item| number(item).expect("a number"))
            .collect()
    });
    (lines, order.get("lines_last").and_then(integer))
}

/// The stale form, from two tasks: the form reads the order (last line 2), the other task
/// appends line 3 and is told 3, then the form is saved with `save`; the stored order
/// after the append, and what the save answered.
async fn stale_form<F, Fut>(
    db: &seqid::Database,
    test: &mongodb::Database,
    id: i64,
    save: F,
) -> (BsonDocument, ObjectId, Fut::Output)
where
    F: FnOnce(Order) -> Fut + Send + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: Send,
{
    let (read, when_read) = tokio::sync::oneshot::channel();
    let (appended, when_appended) = tokio::sync::oneshot::channel();
    let form = tokio::spawn({
        let test = test.clone();
        async move {
            let mut form = read_order(&test, id).await;
            assert_eq!((form.lines.len(), form.lines_last), (2, 2));
            read.send(()).unwrap();
            when_appended.await.unwrap();
            form.lines[0].sku = "edited".into();
            save(form).await
        }
    });
    let appender = tokio::spawn({
        let (db, test) = (db.clone(), test.clone());
        async move {
            when_read.await.unwrap();
            let token = ObjectId::new();
            let mut third = vec![line("third")];
            let told = Order::append_lines(&db, doc! { "_id": id }, &mut third)
                .token(token)
                .await
                .unwrap();
            assert_eq!(told, [3]);
            let after = raw(&test, id).await;
            appended.send(()).unwrap();
            (after, token)
        }
    });
    let (after, token) = appender.await.unwrap();
    (after, token, form.await.unwrap())
}

#[tokio::test]
async fn a_stale_form_is_refused_and_the_next_append_answers_4_never_3_again() {
    let test = test_db("replace_stale").await;
    let db = crate::support::shared(&test);
    let id = order(2).insert(&db).await.unwrap();
    let save = {
        let db = db.clone();
        move |form: Order| async move { form.replace(&db).await }
    };
    let (after_append, token, saved) = stale_form(&db, &test, id, save).await;
    let error = saved.unwrap_err();
    let ErrorKind::ItemsStale {
        items,
        stored,
        written,
        id: at,
        ..
    } = error.kind()
    else {
        panic!("{error:?}");
    };
    assert_eq!((items.field, *stored, *written), ("lines", 3, 2));
    assert_eq!(&**at, id.to_string());
    let message = error.to_string();
    for says in [
        "sequence `order`",
        &format!("_id {id} in `orders`"),
        "mark `lines_last` is 2, the stored one 3",
        "an append to `lines` landed after the document was read",
        "Nothing was written",
        "read the document again, apply the change, and replace it again",
    ] {
        assert!(message.contains(says), "{message}");
    }
    assert_eq!(raw(&test, id).await, after_append, "the order unchanged");
    let mut fourth = vec![line("fourth")];
    let told = Order::append_lines(&db, doc! { "_id": id }, &mut fourth)
        .await
        .unwrap();
    assert_eq!(told, [4], "never 3 again");

    // Read afresh, the change replaces it, and the hidden list of recent appends is kept:
    // the append of line 3 sent again with its token is still recognised.
    let before = raw(&test, id).await;
    let appends = before.get("_seqid_lines_appends").cloned();
    assert!(appends.is_some(), "{before}");
    let mut fresh = read_order(&test, id).await;
    fresh.lines[0].sku = "edited".into();
    fresh.replace(&db).await.unwrap();
    let replaced = raw(&test, id).await;
    assert_eq!(replaced.get("_seqid_lines_appends"), appends.as_ref());
    assert_eq!(numbers(&replaced), (vec![1, 2, 3, 4], Some(4)));
    assert_eq!(read_order(&test, id).await.lines[0].sku, "edited");
    let mut again = vec![line("third")];
    let told = Order::append_lines(&db, doc! { "_id": id }, &mut again)
        .token(token)
        .await
        .unwrap();
    if is_nx() {
        // nx-27017 stores the recent appends as JSON strings (see `items.rs`): no append's
        // token is found there, replaced or not, and this one lands again.
        assert_eq!(told, [5]);
        return;
    }
    assert_eq!(told, [3], "its numbers, nothing appended");
    assert_eq!(numbers(&raw(&test, id).await), (vec![1, 2, 3, 4], Some(4)));
}

/// The reason for `replace`: the same stale form saved with the driver's `replace_one`
/// drops line 3 and moves the mark back, and the next append is told 3 again.
#[tokio::test]
async fn the_driver_s_replace_one_of_a_stale_form_hands_a_number_out_twice() {
    let test = test_db("replace_driver").await;
    let db = crate::support::shared(&test);
    let id = order(2).insert(&db).await.unwrap();
    let save = {
        let orders = Order::collection(&db);
        move |form: Order| async move { orders.replace_one(doc! { "_id": id }, form).await }
    };
    let (_, _, saved) = stale_form(&db, &test, id, save).await;
    assert_eq!(saved.unwrap().modified_count, 1);
    let stored = raw(&test, id).await;
    assert_eq!(numbers(&stored), (vec![1, 2], Some(2)), "line 3 dropped");
    assert!(
        !stored.contains_key("_seqid_lines_appends"),
        "the tokens lost"
    );
    let mut next = vec![line("next")];
    let told = Order::append_lines(&db, doc! { "_id": id }, &mut next)
        .await
        .unwrap();
    assert_eq!(told, [3], "3 handed out a second time");
}

#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id("note", collection = "notes")]
struct Note {
    #[serde(rename = "_id")]
    id: i64,
    text: String,
}

#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id(collection = "tickets")]
struct Ticket {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    #[seq_id("ticket")]
    number: i64,
}

#[tokio::test]
async fn a_replace_with_no_change_and_one_of_a_type_without_items_write_once() {
    let counts = Arc::new(std::sync::Mutex::new(BTreeMap::new()));
    let handler = counting(&counts);
    let test = test_db_with("replace_plain", |options| {
        options.command_event_handler = Some(handler);
    })
    .await;
    let db = crate::support::shared(&test);
    let id = order(2).insert(&db).await.unwrap();
    let mut more = vec![line("c")];
    Order::append_lines(&db, doc! { "_id": id }, &mut more)
        .await
        .unwrap();
    let before = raw(&test, id).await;
    let unchanged = read_order(&test, id).await;
    counts.lock().unwrap().clear();
    unchanged.replace(&db).await.unwrap();
    // Two round trips: the read of the marks and lists, the conditional replace.
    let sent = counts.lock().unwrap().clone();
    assert_eq!(
        sent,
        BTreeMap::from([("find".to_owned(), 1), ("update".to_owned(), 1)])
    );
    let after = raw(&test, id).await;
    assert_eq!(numbers(&after), numbers(&before));
    assert_eq!(
        after.get("_seqid_lines_appends"),
        before.get("_seqid_lines_appends")
    );

    // A type without items: one `replace_one` by `_id`.
    let mut note = Note {
        id: 0,
        text: "draft".into(),
    };
    let note_id = note.insert(&db).await.unwrap();
    note.text = "final".into();
    counts.lock().unwrap().clear();
    note.replace(&db).await.unwrap();
    let sent = counts.lock().unwrap().clone();
    assert_eq!(sent, BTreeMap::from([("update".to_owned(), 1)]));
    let stored = Note::sequence().find(&db, note_id).await.unwrap().unwrap();
    assert_eq!((stored.id, stored.text.as_str()), (note_id, "final"));
}

#[tokio::test]
async fn a_missing_document_and_one_without_an_id_are_refused_with_nothing_written() {
    let counts = Arc::new(std::sync::Mutex::new(BTreeMap::new()));
    let handler = counting(&counts);
    let test = test_db_with("replace_missing", |options| {
        options.command_event_handler = Some(handler);
    })
    .await;
    let db = crate::support::shared(&test);
    let kept = order(1).insert(&db).await.unwrap();
    let mut missing = order(1);
    missing.id = 999;
    let error = missing.replace(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::ReplaceNotFound { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("no document of `orders` has _id 999"),
        "{message}"
    );
    assert!(message.contains("nothing was written"), "{message}");
    let note = Note {
        id: 999,
        text: "gone".into(),
    };
    let error = note.replace(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::ReplaceNotFound { .. }),
        "{error:?}"
    );
    let orders = test.collection::<BsonDocument>("orders");
    assert_eq!(orders.count_documents(doc! {}).await.unwrap(), 1);
    assert_eq!(numbers(&raw(&test, kept).await), (vec![1], Some(1)));
    let notes = test.collection::<BsonDocument>("notes");
    assert_eq!(notes.count_documents(doc! {}).await.unwrap(), 0);

    // No id to find the stored document by: refused before anything is sent.
    counts.lock().unwrap().clear();
    let error = order(1).replace(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::ReplaceWithoutId { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("its _id is 0"), "{error}");
    let ticket = Ticket {
        id: None,
        number: 4,
    };
    let error = ticket.replace(&db).await.unwrap_err();
    assert!(error.to_string().contains("its _id is missing"), "{error}");
    assert!(error.to_string().contains("nothing was sent"), "{error}");
    assert!(counts.lock().unwrap().is_empty(), "{counts:?}");
}

#[derive(Debug, Serialize, Deserialize, Document)]
#[seq_id("basket", collection = "baskets")]
struct Basket {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_items(last = "lines_last")]
    lines: Vec<Line>,
    // Left out when `None`: on nx-27017 an append to a document whose mark is a stored null
    // never lands (its conditional update matches nothing, round after round, for the
    // append's 60 s: a server bug).
    #[serde(skip_serializing_if = "Option::is_none")]
    lines_last: Option<i64>,
}

#[tokio::test]
async fn marks_stored_as_int32_or_null_are_compared_by_value() {
    let test = test_db("replace_numeric").await;
    let db = crate::support::shared(&test);
    let orders = test.collection::<BsonDocument>("orders");
    // Stored by another writer, the numbers as Int32.
    let stored = doc! {
        "_id": 50, "lines": [{ "no": 1, "sku": "a" }], "lines_last": 1,
        "steps": [], "steps_last": 5,
    };
    orders.insert_one(stored).await.unwrap();
    let mut form = read_order(&test, 50).await;
    form.lines[0].sku = "edited".into();
    form.replace(&db).await.unwrap();
    assert_eq!(read_order(&test, 50).await.lines[0].sku, "edited");
    orders
        .update_one(doc! { "_id": 50 }, doc! { "$set": { "lines_last": 2_i32 } })
        .await
        .unwrap();
    let error = form.replace(&db).await.unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::ItemsStale {
                stored: 2,
                written: 1,
                ..
            }
        ),
        "{error:?}"
    );

    // An `Option` mark: `None` is "none yet", as a null or missing mark is.
    let baskets = test.collection::<BsonDocument>("baskets");
    baskets
        .insert_one(doc! { "_id": 60, "lines": [], "lines_last": Bson::Null })
        .await
        .unwrap();
    let form = Basket::sequence().find(&db, 60).await.unwrap().unwrap();
    assert_eq!(form.lines_last, None);
    form.replace(&db).await.unwrap();
    let replaced = baskets.find_one(doc! { "_id": 60 }).await.unwrap().unwrap();
    assert!(!replaced.contains_key("lines_last"), "{replaced}");
    if is_nx() {
        // nx-27017 answers the append's conditional update of a document holding the array
        // and no mark as matched, and writes nothing (a server bug): the mark is moved here
        // as that append would move it.
        let moved = doc! { "$set": { "lines_last": 1_i64 } };
        baskets.update_one(doc! { "_id": 60 }, moved).await.unwrap();
    } else {
        let mut first = vec![line("a")];
        let told = Basket::append_lines(&db, doc! { "_id": 60 }, &mut first)
            .await
            .unwrap();
        assert_eq!(told, [1]);
    }
    let error = form.replace(&db).await.unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::ItemsStale {
                stored: 1,
                written: 0,
                ..
            }
        ),
        "{error:?}"
    );
}

/// How the replacing process writes its forms back: `doc.replace`, or the driver's
/// `replace_one` (to show what it costs).
#[derive(Clone, Copy, PartialEq)]
enum Save {
    Seqid,
    Driver,
}

/// `tasks` tasks reading, editing and writing back the orders `ids` in turn until `done`,
/// reading again on `ItemsStale`, then once more each (which must land); returns the
/// replaces that landed and those refused.
async fn replace_until(
    db: &seqid::Database,
    ids: &[i64],
    tasks: usize,
    save: Save,
    done: Arc<AtomicBool>,
) -> (usize, usize) {
    let (landed, stale) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut replacers = tokio::task::JoinSet::new();
    for task in 0..tasks {
        let (db, ids, done) = (db.clone(), ids.to_vec(), done.clone());
        let (landed, stale) = (landed.clone(), stale.clone());
        replacers.spawn(async move {
            let mut n = task;
            // Once the appends are over, one round more over every order, which no append
            // can make stale.
            let mut last_round = ids.len();
            while last_round > 0 {
                if done.load(Ordering::Relaxed) {
                    last_round -= 1;
                }
                let id = ids[n % ids.len()];
                n += 1;
                let mut form = read_order(&db, id).await;
                for line in &mut form.lines {
                    line.sku = format!("edited-{task}-{n}");
                }
                let saved = match save {
                    Save::Seqid => form.replace(&db).await,
                    Save::Driver => {
                        let orders = Order::collection(&db);
                        orders.replace_one(doc! { "_id": id }, &form).await.unwrap();
                        Ok(())
                    }
                };
                match saved {
                    Ok(()) => landed.fetch_add(1, Ordering::Relaxed),
                    Err(error)
                        if matches!(error.kind(), ErrorKind::ItemsStale { .. })
                            && last_round == ids.len() =>
                    {
                        stale.fetch_add(1, Ordering::Relaxed)
                    }
                    Err(other) => panic!("replacer {task}: {other}"),
                };
            }
        });
    }
    while let Some(ended) = replacers.join_next().await {
        ended.expect("a replacer panicked");
    }
    (
        landed.load(Ordering::Relaxed),
        stale.load(Ordering::Relaxed),
    )
}

/// A worker process appends lines to three orders (`items/1/3`, 4 tasks of 40 appends)
/// while this one reads, edits and replaces them; what the appender was told and what is
/// stored, by order, and the replaces landed and refused.
async fn append_while_replacing(
    label: &str,
    save: Save,
) -> (BTreeMap<i64, (Vec<i64>, Vec<i64>)>, (usize, usize)) {
    let test = test_db(label).await;
    let db = crate::support::shared(&test);
    let ids: Vec<i64> = {
        let mut ids = Vec::new();
        for _ in 0..3 {
            ids.push(order(1).insert(&db).await.unwrap());
        }
        ids
    };
    assert_eq!(ids, [1, 2, 3]);
    let mut workers = Workers::spawn(&test, ["items/1/3".to_owned()], 4, 40);
    let done = Arc::new(AtomicBool::new(false));
    workers.go();
    let replacing = tokio::spawn({
        let (db, ids, done) = (db.clone(), ids.clone(), done.clone());
        async move { replace_until(&db, &ids, 2, save, done).await }
    });
    let lines = workers.finish_raw().await;
    done.store(true, Ordering::Relaxed);
    let replaced = replacing.await.unwrap();
    let mut by_order: BTreeMap<i64, (Vec<i64>, Vec<i64>)> = BTreeMap::new();
    for printed in lines {
        let mut fields = printed
            .strip_prefix("items ")
            .expect("an items line")
            .split(' ');
        let order: i64 = fields.next().unwrap().parse().unwrap();
        let number: i64 = fields.next().unwrap().parse().unwrap();
        by_order.entry(order).or_default().0.push(number);
    }
    for &id in &ids {
        let entry = by_order.entry(id).or_default();
        entry.1 = numbers(&raw(&test, id).await).0;
    }
    (by_order, replaced)
}

/// Two OS processes: the worker appends lines, this one replaces the orders in a loop,
/// reading again on `ItemsStale`. Every order's numbers are distinct, every number the
/// appender was told is stored exactly once, and none was told twice.
///
/// The same with the driver's `replace_one` (`Save::Driver`, the ignored test below),
/// measured: of 160 appends, 47 to 49 numbers told a second time (0 to 2 of them lost for
/// good) on SecantusDB, 33 to 35 (1 or 2 lost) on nx-27017. The deterministic case is
/// [`the_driver_s_replace_one_of_a_stale_form_hands_a_number_out_twice`].
#[tokio::test]
async fn an_appending_process_and_a_replacing_one_never_hand_a_number_out_twice() {
    let (by_order, (landed, stale)) =
        append_while_replacing("replace_processes", Save::Seqid).await;
    let mut told_in_all = 0;
    for (id, (told, stored)) in &by_order {
        let unique: BTreeSet<i64> = stored.iter().copied().collect();
        assert_eq!(
            unique.len(),
            stored.len(),
            "order {id}: a number twice: {stored:?}"
        );
        let told_once: BTreeSet<i64> = told.iter().copied().collect();
        assert_eq!(
            told_once.len(),
            told.len(),
            "order {id}: a number told twice"
        );
        let mut expected: Vec<i64> = told.clone();
        expected.push(1);
        expected.sort_unstable();
        let mut stored = stored.clone();
        stored.sort_unstable();
        assert_eq!(
            stored, expected,
            "order {id}: every number told stored once"
        );
        told_in_all += told.len();
    }
    assert_eq!(told_in_all, 4 * 40);
    assert!(landed >= 2 * 3, "every last round landed");
    eprintln!("replaces landed {landed}, refused as stale {stale}");
}

/// What [`an_appending_process_and_a_replacing_one_never_hand_a_number_out_twice`] guards
/// against, measured: the driver's `replace_one` loses numbers told and tells them again.
#[tokio::test]
#[ignore = "full suite"]
async fn the_driver_s_replace_one_from_another_process_hands_numbers_out_twice() {
    let (by_order, (landed, _)) =
        append_while_replacing("replace_processes_driver", Save::Driver).await;
    let mut lost = 0;
    let mut told_twice = 0;
    for (told, stored) in by_order.values() {
        let stored: BTreeSet<i64> = stored.iter().copied().collect();
        lost += told.iter().filter(|n| !stored.contains(n)).count();
        told_twice += told.len() - told.iter().collect::<BTreeSet<_>>().len();
    }
    eprintln!("driver: {landed} replaces, {lost} numbers told and lost, {told_twice} told twice");
    // Numbers told twice in every run measured (33 to 49 of 160); numbers lost for good only
    // in some (0 to 2): a race's outcome, so only the first is asserted.
    assert!(told_twice > 0, "lost {lost}, told twice {told_twice}");
}

#[tokio::test]
async fn a_replace_in_a_transaction_lands_or_goes_back_with_it() {
    let test = test_db("replace_transaction").await;
    if without_transactions(&test).await {
        return;
    }
    let db = crate::support::shared(&test);
    let id = order(1).insert(&db).await.unwrap();
    let mut form = read_order(&test, id).await;
    form.lines[0].sku = "in a transaction".into();
    let mut session = test.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    form.replace(&db).session(&mut session).await.unwrap();
    session.abort_transaction().await.unwrap();
    assert_eq!(read_order(&test, id).await.lines[0].sku, "same");
    // Through a bare database, committed.
    session.start_transaction().await.unwrap();
    form.replace(&*test).session(&mut session).await.unwrap();
    session.commit_transaction().await.unwrap();
    assert_eq!(read_order(&test, id).await.lines[0].sku, "in a transaction");
}
