//! Items numbered inside their document (issue 49, item 3): a `Vec` of `#[derive(Item)]`
//! values declared `#[seq_items(last = "...")]`, numbered at insert with no round trip
//! more, and later by `append_<field>`, atomically under concurrent appends. Every test
//! checks numbers and counts, never identifies an item by its content: the concurrent
//! tests append items of equal content.
//!
//! nx-27017 stores every element of an array `$push` touches as a JSON string (a server
//! bug: `{"no":1,"sku":"a"}` becomes `'{"no":1,"sku":"a"}'`); the library does not work
//! around it, and these tests read such elements back by parsing them ([`stored_numbers`]).

use std::collections::{BTreeMap, BTreeSet};
use std::future::IntoFuture;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::event::EventHandler;
use mongodb::event::command::CommandEvent;
use seqid::error::ErrorKind;
use seqid::{Document, Error};
use seqid_harness::{ServerFlavor, test_db, test_db_with};

use crate::support::Workers;
use crate::support::counting;
use crate::support::integer;
use crate::support::items::{Line, Order, append_from_tasks, line, order, step};
use crate::support::transactions::without_transactions;

/// An element of a stored array as a document; nx-27017's JSON strings parsed (see the
/// module's note).
fn element(value: &Bson) -> BsonDocument {
    match value {
        Bson::Document(doc) => doc.clone(),
        Bson::String(json) => {
            let value: serde_json::Value = serde_json::from_str(json).expect("nx's JSON string");
            mongodb::bson::to_document(&value).expect("an object")
        }
        other => panic!("an array element that is not a document: {other}"),
    }
}

/// The numbers stored in `field` (under `key`) of the document `_id: id`, in order, and
/// its mark `last`.
async fn stored_numbers(
    db: &mongodb::Database,
    id: i64,
    field: &str,
    key: &str,
    last: &str,
) -> (Vec<i64>, Option<i64>) {
    let stored = db
        .collection::<BsonDocument>("orders")
        .find_one(doc! { "_id": id })
        .await
        .unwrap()
        .expect("the order is stored");
    let numbers = match stored.get(field) {
        Some(Bson::Array(items)) => items
            .iter()
            .map(|item| element(item).get(key).and_then(integer).expect("a number"))
            .collect(),
        _ => Vec::new(),
    };
    (numbers, stored.get(last).and_then(integer))
}

fn is_nx() -> bool {
    seqid_harness::server_flavor().unwrap() == ServerFlavor::Nx
}

#[tokio::test]
async fn insert_numbers_the_items_in_memory_writes_them_back_and_stores_the_mark() {
    let test = test_db("items_insert").await;
    let db = crate::support::shared(&test);
    let mut one = order(3);
    one.steps = vec![step("cut"), step("sew")];
    let id = one.insert(&db).await.unwrap();
    assert_eq!(
        one.lines.iter().map(|line| line.no).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!((one.lines_last, one.steps_last), (3, 15));
    assert_eq!(
        one.steps.iter().map(|s| s.n).collect::<Vec<_>>(),
        [Some(10), Some(15)]
    );
    assert_eq!(
        stored_numbers(&test, id, "lines", "no", "lines_last").await,
        (vec![1, 2, 3], Some(3))
    );
    assert_eq!(
        stored_numbers(&test, id, "steps", "n", "steps_last").await,
        (vec![10, 15], Some(15))
    );

    // No item: the mark says "none yet", start - step.
    let mut empty = order(0);
    let empty_id = empty.insert(&db).await.unwrap();
    assert_eq!((empty.lines_last, empty.steps_last), (0, 5));
    // Then an append begins at start.
    let mut steps = vec![step("a")];
    let numbers = Order::append_steps(&db, doc! { "_id": empty_id }, &mut steps)
        .await
        .unwrap();
    assert_eq!(numbers, [10]);

    // insert_many numbers each document's arrays from its own start.
    let mut many = vec![order(2), order(1), order(0)];
    Order::insert_many(&mut many, &*test).await.unwrap();
    for (doc, expected) in many.iter().zip([vec![1, 2], vec![1], vec![]]) {
        let numbers: Vec<i64> = doc.lines.iter().map(|line| line.no).collect();
        assert_eq!(numbers, expected);
        let (stored, mark) = stored_numbers(&test, doc.id, "lines", "no", "lines_last").await;
        assert_eq!(stored, expected);
        assert_eq!(mark, Some(expected.len() as i64));
    }
}

#[tokio::test]
async fn an_item_numbered_already_is_refused_at_insert_and_at_append_with_nothing_written() {
    let test = test_db("items_refused").await;
    let db = crate::support::shared(&test);
    let orders = test.collection::<BsonDocument>("orders");
    let mut preset = order(3);
    preset.lines[1].no = 7;
    let error = preset.insert(&db).await.unwrap_err();
    let ErrorKind::ItemNumberSet {
        items,
        position,
        value,
        ..
    } = error.kind()
    else {
        panic!("{error:?}");
    };
    assert_eq!((items.field, *position, *value), ("lines", 1, 7));
    assert!(error.to_string().contains("lines[1].no is 7"), "{error}");
    assert_eq!(orders.count_documents(doc! {}).await.unwrap(), 0);
    assert_eq!(preset.id, 0, "no id taken into the document");
    let mut many = vec![order(1), preset];
    let error = Order::insert_many(&mut many, &db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::ItemNumberSet { .. }),
        "{error:?}"
    );
    assert_eq!(orders.count_documents(doc! {}).await.unwrap(), 0);

    // At append: the number set, a missing document, a field that is not an array.
    let mut stored = order(1);
    let id = stored.insert(&db).await.unwrap();
    let mut set = vec![
        line("x"),
        Line {
            no: 2,
            sku: "y".into(),
        },
    ];
    let error = Order::append_lines(&db, doc! { "_id": id }, &mut set)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::ItemNumberSet {
                position: 1,
                value: 2,
                ..
            }
        ),
        "{error:?}"
    );
    let mut fresh = vec![line("x")];
    let error = Order::append_lines(&db, doc! { "_id": 999 }, &mut fresh)
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::ItemsNotFound { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("999"), "{error}");
    assert_eq!(fresh[0].no, 0);
    orders
        .insert_one(doc! { "_id": 500, "lines": "not an array", "lines_last": 4 })
        .await
        .unwrap();
    let error = Order::append_lines(&db, doc! { "_id": 500 }, &mut fresh)
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::ItemsNotArray { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("not an array"), "{error}");
    let untouched = orders.find_one(doc! { "_id": 500 }).await.unwrap().unwrap();
    assert_eq!(
        untouched,
        doc! { "_id": 500, "lines": "not an array", "lines_last": 4 }
    );
    assert_eq!(
        stored_numbers(&test, id, "lines", "no", "lines_last").await,
        (vec![1], Some(1))
    );
    assert_eq!(fresh[0].no, 0);

    // A mark that is not a number: the pipeline's `$add` refuses it, an error the server
    // answered (nothing written, not an unknown outcome); the conditional way (nx-27017)
    // replaces it, conditioned on the value it read.
    let odd = doc! { "_id": 501, "lines": [], "lines_last": "seven" };
    orders.insert_one(odd.clone()).await.unwrap();
    let appended = Order::append_lines(&db, doc! { "_id": 501 }, &mut fresh).await;
    if is_nx() {
        assert_eq!(appended.unwrap(), [1]);
    } else {
        let error = appended.unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::Driver { .. }),
            "{error:?}"
        );
        assert_eq!(fresh[0].no, 0);
        let stored = orders.find_one(doc! { "_id": 501 }).await.unwrap().unwrap();
        assert_eq!(stored, odd);
    }
}

#[tokio::test]
async fn appends_number_after_the_mark_and_never_reuse_a_number_after_removals() {
    let test = test_db("items_append").await;
    let db = crate::support::shared(&test);
    let orders = test.collection::<BsonDocument>("orders");
    let mut stored = order(2);
    let id = stored.insert(&db).await.unwrap();
    // A user's string starting with `$` is stored as it is, not read as a path.
    let mut more = vec![line("$sku"), line("b"), line("c")];
    let numbers = Order::append_lines(&db, doc! { "_id": id }, &mut more)
        .await
        .unwrap();
    assert_eq!(numbers, [3, 4, 5]);
    assert_eq!(
        more.iter().map(|line| line.no).collect::<Vec<_>>(),
        [3, 4, 5]
    );
    let first = orders.find_one(doc! { "_id": id }).await.unwrap().unwrap();
    let skus: Vec<String> = first
        .get_array("lines")
        .unwrap()
        .iter()
        .map(|item| element(item).get_str("sku").unwrap().to_owned())
        .collect();
    assert_eq!(skus, ["same", "same", "$sku", "b", "c"]);

    // The last items removed by hand: their numbers are not handed out again.
    orders
        .update_one(
            doc! { "_id": id },
            doc! { "$pull": { "lines": { "no": { "$gte": 4 } } } },
        )
        .await
        .unwrap();
    if !is_nx() {
        assert_eq!(
            stored_numbers(&test, id, "lines", "no", "lines_last").await,
            (vec![1, 2, 3], Some(5))
        );
    }
    let mut again = vec![line("d")];
    let numbers = Order::append_lines(&db, doc! { "_id": id }, &mut again)
        .await
        .unwrap();
    assert_eq!(numbers, [6]);
    // Every item removed and the mark unset by another writer: the largest stored number
    // is still counted... and with none stored, the mark alone is lost, as documented.
    orders
        .update_one(doc! { "_id": id }, doc! { "$unset": { "lines_last": "" } })
        .await
        .unwrap();
    let mut later = vec![line("e")];
    let numbers = Order::append_lines(&db, doc! { "_id": id }, &mut later)
        .await
        .unwrap();
    if !is_nx() {
        // nx stores the pushed elements as strings, whose numbers no server can read.
        assert_eq!(numbers, [7]);
    }

    // Start and step, through a bare database; an empty append moves nothing.
    let bare: &mongodb::Database = &test;
    let mut steps = vec![step("a"), step("b")];
    let numbers = Order::append_steps(bare, doc! { "_id": id }, &mut steps)
        .await
        .unwrap();
    assert_eq!(numbers, [10, 15]);
    assert_eq!(steps[1].n, Some(15));
    let numbers = Order::append_steps(bare, doc! { "_id": id }, &mut [])
        .await
        .unwrap();
    assert!(numbers.is_empty());
    let mut steps = vec![step("c")];
    let numbers = Order::append_steps(bare, doc! { "_id": id }, &mut steps)
        .await
        .unwrap();
    assert_eq!(numbers, [20]);

    // A document without the array or the mark at all: numbered from the start.
    orders.insert_one(doc! { "_id": 900 }).await.unwrap();
    let mut first = vec![line("x"), line("y")];
    let numbers = Order::append_lines(&db, doc! { "_id": 900 }, &mut first)
        .await
        .unwrap();
    assert_eq!(numbers, [1, 2]);
    assert_eq!(
        stored_numbers(&test, 900, "lines", "no", "lines_last").await,
        (vec![1, 2], Some(2))
    );
    // A mark stored as 0 by a writer that knew nothing of `start = 10, step = 5`: the first
    // step is still 10.
    orders
        .insert_one(doc! { "_id": 901, "steps": [], "steps_last": 0 })
        .await
        .unwrap();
    let mut steps = vec![step("x")];
    let numbers = Order::append_steps(&db, doc! { "_id": 901 }, &mut steps)
        .await
        .unwrap();
    assert_eq!(numbers, [10]);
}

/// `tasks` tasks, each appending `per_task` times `batch` equal items to one of `docs`
/// (round robin); returns the numbers each call was answered, by document.
async fn append_concurrently<D: seqid::AsDatabase + Clone + Send + 'static>(
    db: &D,
    docs: &[i64],
    tasks: usize,
    per_task: usize,
    batch: usize,
) -> BTreeMap<i64, Vec<i64>> {
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let (db, docs) = (db.clone(), docs.to_vec());
            tokio::spawn(async move {
                let mut got = Vec::new();
                for n in 0..per_task {
                    let id = docs[(task + n) % docs.len()];
                    let mut items: Vec<Line> = (0..batch).map(|_| line("same")).collect();
                    let numbers = Order::append_lines(&db, doc! { "_id": id }, &mut items)
                        .await
                        .unwrap_or_else(|e| panic!("task {task} #{n}: {e}"));
                    assert_eq!(numbers.len(), batch);
                    assert!(items.iter().map(|i| i.no).eq(numbers.iter().copied()));
                    got.push((id, numbers));
                }
                got
            })
        })
        .collect();
    let mut answered: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for handle in handles {
        for (id, numbers) in handle.await.unwrap() {
            answered.entry(id).or_default().extend(numbers);
        }
    }
    answered
}

/// Every document's stored numbers are unique and exactly `1..=n` (nothing removed), each
/// stored once, and the ones the calls were answered; the mark is the last.
async fn assert_every_item_once(
    test: &mongodb::Database,
    answered: &BTreeMap<i64, Vec<i64>>,
    initial: usize,
) {
    for (&id, numbers) in answered {
        let (stored, mark) = stored_numbers(test, id, "lines", "no", "lines_last").await;
        let unique: BTreeSet<i64> = stored.iter().copied().collect();
        assert_eq!(unique.len(), stored.len(), "order {id}: a number twice");
        let expected = numbers.len() + initial;
        assert_eq!(stored.len(), expected, "order {id}: every item stored once");
        assert_eq!(
            unique,
            (1..=expected as i64).collect(),
            "order {id}: dense from 1"
        );
        let mut answered: Vec<i64> = numbers.clone();
        answered.sort_unstable();
        let appended: Vec<i64> = ((initial as i64 + 1)..=expected as i64).collect();
        assert_eq!(answered, appended, "order {id}: the numbers answered");
        assert_eq!(mark, Some(expected as i64), "order {id}: the mark");
    }
}

async fn concurrent(label: &str, conditional: bool) {
    let test = test_db(label).await;
    if conditional {
        seqid::__private::items_without_pipelines(&test);
    }
    let db = crate::support::shared(&test);
    let mut ids = Vec::new();
    for _ in 0..4 {
        let mut one = order(1);
        ids.push(one.insert(&db).await.unwrap());
    }
    // 16 tasks on one document, then on three.
    let answered = append_concurrently(&db, &ids[..1], 16, 4, 2).await;
    assert_every_item_once(&test, &answered, 1).await;
    let answered = append_concurrently(&db, &ids[1..], 16, 4, 1).await;
    assert_every_item_once(&test, &answered, 1).await;
}

#[tokio::test]
async fn sixteen_tasks_appending_to_one_document_and_to_a_few_store_every_item_once() {
    concurrent("items_tasks", false).await;
}

/// The conditional way, which nx-27017 takes for want of pipelines, forced elsewhere.
#[tokio::test]
async fn sixteen_tasks_appending_the_conditional_way_store_every_item_once() {
    concurrent("items_tasks_conditional", true).await;
}

/// On the conditional way (forced where the server takes pipelines), the 16 appenders of
/// one process to one document take turns, each its read and its update: no appender of the
/// process reads a mark another is about to move, so every update lands the first time, one
/// read and one update per append (racing, they sent about 8 commands per append), through
/// a handle and through a bare database alike.
#[tokio::test]
async fn appenders_of_one_process_take_turns_on_the_conditional_way_and_lose_no_race() {
    let counts = Arc::new(std::sync::Mutex::new(BTreeMap::new()));
    let handler = counting(&counts);
    let test = test_db_with("items_turns", |options| {
        options.command_event_handler = Some(handler);
    })
    .await;
    seqid::__private::items_without_pipelines(&test);
    let db = crate::support::shared(&test);
    for handle in [true, false] {
        let mut one = order(1);
        let id = one.insert(&db).await.unwrap();
        counts.lock().unwrap().clear();
        let answered = match handle {
            true => append_concurrently(&db, &[id], 16, 4, 1).await,
            false => {
                append_concurrently(&test.client().database(test.name()), &[id], 16, 4, 1).await
            }
        };
        assert_every_item_once(&test, &answered, 1).await;
        let counts = counts.lock().unwrap().clone();
        // The reads of the check above come after: 64 appends, 64 reads and 64 updates.
        assert_eq!(
            counts.get("update"),
            Some(&64),
            "handle {handle}: {counts:?}"
        );
        assert_eq!(
            counts.get("find").map(|f| f - 1),
            Some(64),
            "handle {handle}: {counts:?}"
        );
    }
}

#[tokio::test]
async fn an_append_is_one_round_trip_where_the_server_takes_pipelines() {
    let counts = Arc::new(std::sync::Mutex::new(BTreeMap::new()));
    let handler = counting(&counts);
    let test = test_db_with("items_one_round_trip", |options| {
        options.command_event_handler = Some(handler);
    })
    .await;
    let db = crate::support::shared(&test);
    let mut stored = order(1);
    let id = stored.insert(&db).await.unwrap();
    counts.lock().unwrap().clear();
    for _ in 0..3 {
        let mut more = vec![line("a"), line("b")];
        Order::append_lines(&db, doc! { "_id": id }, &mut more)
            .await
            .unwrap();
    }
    let counts = counts.lock().unwrap().clone();
    match is_nx() {
        // The first append learns the server refuses pipelines; every one reads, then
        // updates.
        true => assert_eq!(
            counts,
            BTreeMap::from([
                ("findAndModify".to_owned(), 1),
                ("find".to_owned(), 3),
                ("update".to_owned(), 3),
            ])
        ),
        false => assert_eq!(counts, BTreeMap::from([("findAndModify".to_owned(), 3)])),
    }
    assert_eq!(
        stored_numbers(&test, id, "lines", "no", "lines_last").await,
        ((1..=7).collect(), Some(7))
    );
}

#[tokio::test]
async fn an_append_in_an_aborted_transaction_leaves_no_gap() {
    let test = test_db("items_transaction").await;
    if without_transactions(&test).await {
        return;
    }
    let db = crate::support::shared(&test);
    let mut stored = order(1);
    let id = stored.insert(&db).await.unwrap();
    let mut session = test.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let mut more = vec![line("a"), line("b")];
    let numbers = Order::append_lines(&db, doc! { "_id": id }, &mut more)
        .session(&mut session)
        .await
        .unwrap();
    assert_eq!(numbers, [2, 3]);
    session.abort_transaction().await.unwrap();
    assert_eq!(
        stored_numbers(&test, id, "lines", "no", "lines_last").await,
        (vec![1], Some(1))
    );
    session.start_transaction().await.unwrap();
    let mut more = vec![line("c")];
    let numbers = Order::append_lines(&db, doc! { "_id": id }, &mut more)
        .session(&mut session)
        .await
        .unwrap();
    assert_eq!(numbers, [2]);
    // An insert in the transaction numbers its items as any insert does.
    let mut inserted = order(2);
    let inserted_id = inserted.insert(&db).session(&mut session).await.unwrap();
    assert_eq!((inserted.lines[1].no, inserted.lines_last), (2, 2));
    session.commit_transaction().await.unwrap();
    assert_eq!(
        stored_numbers(&test, inserted_id, "lines", "no", "lines_last").await,
        (vec![1, 2], Some(2))
    );
    assert_eq!(
        stored_numbers(&test, id, "lines", "no", "lines_last").await,
        (vec![1, 2], Some(2))
    );
}

#[tokio::test]
async fn appends_dropped_after_their_first_poll_land_at_most_once() {
    let test = test_db("items_cancelled").await;
    let db = crate::support::shared(&test);
    let mut stored = order(0);
    let id = stored.insert(&db).await.unwrap();
    let kept = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..16)
        .map(|task| {
            let (db, kept) = (db.clone(), kept.clone());
            tokio::spawn(async move {
                for n in 0..4 {
                    let mut items = vec![line("same")];
                    let append =
                        Order::append_lines(&db, doc! { "_id": id }, &mut items).into_future();
                    if (task + n) % 2 == 0 {
                        append.await.unwrap();
                        kept.fetch_add(1, Ordering::Relaxed);
                    } else {
                        // Polled once, then dropped: it finishes in a task of its own.
                        let _ = tokio::time::timeout(std::time::Duration::ZERO, append).await;
                    }
                }
            })
        })
        .collect();
    for handle in handles {
        handle.await.unwrap();
    }
    // The dropped appends finish in tasks of their own: wait until the document is still.
    let mut previous = None;
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let now = stored_numbers(&test, id, "lines", "no", "lines_last").await;
        if previous.as_ref() == Some(&now) {
            break;
        }
        previous = Some(now);
    }
    let (numbers, mark) = previous.unwrap();
    let unique: BTreeSet<i64> = numbers.iter().copied().collect();
    assert_eq!(unique.len(), numbers.len(), "no number twice");
    assert!(numbers.len() >= kept.load(Ordering::Relaxed));
    assert!(numbers.len() <= 64, "no append landed twice");
    assert_eq!(unique, (1..=numbers.len() as i64).collect(), "dense");
    assert_eq!(
        mark,
        Some(numbers.len() as i64),
        "the mark is the last number"
    );
}

/// Checks what the appenders were answered against what is stored: per order, every
/// number answered once, the stored numbers exactly `1..=n` (`initial` of them from the
/// insert), the mark the last.
async fn assert_answered_and_stored(
    test: &mongodb::Database,
    answered: &[(i64, i64)],
    orders: i64,
    initial: usize,
) {
    let mut by_order: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for &(order, number) in answered {
        by_order.entry(order).or_default().push(number);
    }
    assert_eq!(by_order.len() as i64, orders);
    for numbers in by_order.values_mut() {
        let unique: BTreeSet<i64> = numbers.iter().copied().collect();
        assert_eq!(unique.len(), numbers.len(), "a number answered twice");
    }
    assert_every_item_once(test, &by_order, initial).await;
}

/// What three processes of 16 tasks and 16 tasks of this one, appending at once, 4 times
/// each, to the `docs` orders from `first`, were answered: each append's order and number.
async fn appended_by_processes_and_here(
    test: &seqid_harness::TestDb,
    db: &seqid::Database,
    first: i64,
    docs: i64,
) -> Vec<(i64, i64)> {
    let modes = (0..3).map(|_| format!("items/{first}/{docs}"));
    let mut workers = Workers::spawn(test, modes, 16, 4);
    workers.go();
    let here = append_from_tasks(db.clone(), first, docs, 16, 4);
    let (here, lines) = futures_util::join!(here, workers.finish_raw());
    let mut answered: Vec<(i64, i64)> = here
        .unwrap()
        .into_iter()
        .map(|(order, number, _, _)| (order, number))
        .collect();
    for line in lines {
        let mut fields = line
            .strip_prefix("items ")
            .expect("an items line")
            .split(' ');
        let order: i64 = fields.next().unwrap().parse().unwrap();
        let number: i64 = fields.next().unwrap().parse().unwrap();
        answered.push((order, number));
    }
    answered
}

/// Three processes of 16 tasks, and 16 tasks of this one, appending at once to one order,
/// then to three others.
#[tokio::test]
async fn three_processes_of_sixteen_tasks_and_this_one_store_every_item_once() {
    let test = test_db("items_processes").await;
    let db = crate::support::shared(&test);
    for _ in 0..4 {
        order(1).insert(&db).await.unwrap();
    }
    for (first, docs) in [(1, 1), (2, 3)] {
        let answered = appended_by_processes_and_here(&test, &db, first, docs).await;
        assert_eq!(answered.len(), 4 * 16 * 4);
        assert_answered_and_stored(&test, &answered, docs, 1).await;
    }
}

#[tokio::test]
async fn an_append_sent_again_with_its_token_appends_nothing_and_answers_its_numbers() {
    let test = test_db("items_token").await;
    let db = crate::support::shared(&test);
    let id = order(1).insert(&db).await.unwrap();
    let token = mongodb::bson::oid::ObjectId::new();
    let mut lines = vec![line("a"), line("b")];
    let numbers = Order::append_lines(&db, doc! { "_id": id }, &mut lines)
        .token(token)
        .await
        .unwrap();
    assert_eq!(numbers, [2, 3]);
    let mut again = vec![line("a"), line("b")];
    let numbers = Order::append_lines(&db, doc! { "_id": id }, &mut again)
        .token(token)
        .await
        .unwrap();
    if is_nx() {
        // nx-27017 stores the recent appends `$push` writes as JSON strings (see the
        // module's note): the token cannot be found there, and the append lands again.
        assert_eq!(numbers, [4, 5]);
        return;
    }
    assert_eq!(numbers, [2, 3], "its numbers, not new ones");
    assert_eq!(again, lines);
    assert_eq!(
        stored_numbers(&test, id, "lines", "no", "lines_last").await,
        (vec![1, 2, 3], Some(3))
    );
    // The conditional way finds it too.
    seqid::__private::items_without_pipelines(&test);
    let mut third = vec![line("a"), line("b")];
    let numbers = Order::append_lines(&db, doc! { "_id": id }, &mut third)
        .token(token)
        .await
        .unwrap();
    assert_eq!(numbers, [2, 3]);
    assert_eq!(
        stored_numbers(&test, id, "lines", "no", "lines_last").await,
        (vec![1, 2, 3], Some(3))
    );
}

#[derive(Debug, serde::Serialize, serde::Deserialize, Document)]
#[seq_id("cart", collection = "carts")]
struct Cart {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_key]
    owner: String,
    #[seq_items(last = "lines_last")]
    lines: Vec<Line>,
    lines_last: i64,
}

fn cart(owner: &str, lines: usize) -> Cart {
    Cart {
        id: 0,
        owner: owner.into(),
        lines: (0..lines).map(|_| line("same")).collect(),
        lines_last: 0,
    }
}

#[tokio::test]
async fn find_or_insert_numbers_what_it_inserts_and_a_refused_insert_unsets_the_numbers() {
    let test = test_db("items_keyed").await;
    let db = crate::support::shared(&test);
    Cart::create_indexes(&db).await.unwrap();
    let mut first = cart("ada", 2);
    let entry = first.find_or_insert(&db).await.unwrap();
    assert!(entry.is_inserted());
    assert_eq!((first.lines[1].no, first.lines_last), (2, 2));
    // Found: the stored cart, its numbers as stored; nothing numbered for the one passed in.
    let mut again = cart("ada", 5);
    let entry = again.find_or_insert(&db).await.unwrap();
    assert!(!entry.is_inserted());
    assert_eq!(again.lines.len(), 2);
    assert_eq!((again.lines[1].no, again.lines_last), (2, 2));
    // find_or_insert_many: each inserted cart numbered from its own start.
    let mut many = vec![cart("bob", 1), cart("ada", 3), cart("cy", 3)];
    Cart::find_or_insert_many(&mut many, &db).await.unwrap();
    let numbers: Vec<Vec<i64>> = many
        .iter()
        .map(|cart| cart.lines.iter().map(|line| line.no).collect())
        .collect();
    assert_eq!(numbers, [vec![1], vec![1, 2], vec![1, 2, 3]]);

    // A plain insert the server refuses (the key is taken): the items' numbers go back to
    // unset with the ids, and the mark to "none yet", so that the struct can be sent again.
    let mut taken = cart("ada", 2);
    let error = taken.insert(&db).await.unwrap_err();
    assert_eq!(taken.id, 0, "{error}");
    assert!(taken.lines.iter().all(|line| line.no == 0), "{error}");
    assert_eq!(taken.lines_last, 0);
    taken.owner = "dee".into();
    taken.insert(&db).await.unwrap();
    assert_eq!((taken.lines[1].no, taken.lines_last), (2, 2));
}

/// Issue 55, item 6: an append names one document. A filter that matches several is
/// refused before anything is written, with how many it matches; one that names `_id` by
/// equality goes in one round trip, any other is first read down to its one document.
#[tokio::test]
async fn an_append_whose_filter_matches_several_documents_is_refused_with_nothing_written() {
    let counts = Arc::new(std::sync::Mutex::new(BTreeMap::new()));
    let handler = counting(&counts);
    let test = test_db_with("items_ambiguous", |options| {
        options.command_event_handler = Some(handler);
    })
    .await;
    let db = crate::support::shared(&test);
    let orders = test.collection::<BsonDocument>("orders");
    // Int32s: nx-27017 answers small Int64s as Int32s.
    let stored = [
        doc! { "_id": 1, "customer": 1, "lines": [], "lines_last": 0 },
        doc! { "_id": 2, "customer": 1, "lines": [], "lines_last": 0 },
        doc! { "_id": 3, "customer": 2, "lines": [], "lines_last": 0 },
    ];
    orders.insert_many(stored.clone()).await.unwrap();
    let (orders, stored) = (&orders, &stored);
    let untouched = move |id: usize| async move {
        let now = orders.find_one(doc! { "_id": id as i64 }).await.unwrap();
        assert_eq!(now.as_ref(), Some(&stored[id - 1]), "order {id} untouched");
    };
    let refused = [
        doc! { "customer": 1 },
        doc! { "_id": { "$in": [1, 2] } },
        doc! { "_id": { "$gte": 1 }, "customer": 1 },
    ];
    for filter in refused {
        let mut lines = vec![line("a")];
        let error = Order::append_lines(&db, filter.clone(), &mut lines)
            .await
            .unwrap_err();
        let ErrorKind::ItemsAmbiguous {
            items,
            filter: shown,
            matched,
            ..
        } = error.kind()
        else {
            panic!("{filter}: {error:?}");
        };
        assert_eq!((items.field, *matched), ("lines", Some(2)), "{error}");
        assert_eq!(&**shown, filter.to_string(), "{error}");
        let text = error.to_string();
        for said in ["`order`", "`lines`", "`orders`", "2 documents", "_id"] {
            assert!(text.contains(said), "{said}: {text}");
        }
        assert!(text.contains(&filter.to_string()), "{text}");
        assert_eq!(lines[0].no, 0, "the item stays unnumbered");
        untouched(1).await;
        untouched(2).await;
        untouched(3).await;
    }

    // A filter that matches one document, by `_id` or not, appends to it.
    let mut lines = vec![line("b")];
    let filter = doc! { "customer": 2 };
    counts.lock().unwrap().clear();
    let numbers = Order::append_lines(&db, filter, &mut lines).await.unwrap();
    assert_eq!((numbers, lines[0].no), (vec![1], 1));
    let not_by_id = counts.lock().unwrap().clone();
    let mut lines = vec![line("c")];
    let filter = doc! { "_id": { "$eq": 3 }, "customer": 2 };
    counts.lock().unwrap().clear();
    let numbers = Order::append_lines(&db, filter, &mut lines).await.unwrap();
    assert_eq!(numbers, [2]);
    let by_id = counts.lock().unwrap().clone();
    assert_eq!(
        stored_numbers(&test, 3, "lines", "no", "lines_last").await,
        (vec![1, 2], Some(2))
    );
    untouched(1).await;
    untouched(2).await;
    // What each cost: a filter not by `_id` is read first (`find`, at most two), except
    // on the conditional way, whose read checks it anyway.
    let pairs = |counts: &BTreeMap<String, usize>| counts.clone().into_iter().collect::<Vec<_>>();
    match is_nx() {
        true => {
            // The first append learned that the server refuses pipelines.
            let expected = [("find", 2), ("findAndModify", 1), ("update", 1)];
            let expected: Vec<_> = expected.map(|(c, n)| (c.to_owned(), n)).into();
            assert_eq!(pairs(&not_by_id), expected);
            let expected = vec![("find".to_owned(), 1), ("update".to_owned(), 1)];
            assert_eq!(pairs(&by_id), expected);
        }
        false => {
            let expected = vec![("find".to_owned(), 1), ("findAndModify".to_owned(), 1)];
            assert_eq!(pairs(&not_by_id), expected);
            assert_eq!(pairs(&by_id), vec![("findAndModify".to_owned(), 1)]);
        }
    }

    // None matched: not found, by `_id` or not.
    for filter in [doc! { "customer": 9 }, doc! { "_id": 9 }] {
        let mut lines = vec![line("d")];
        let error = Order::append_lines(&db, filter, &mut lines)
            .await
            .unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::ItemsNotFound { .. }),
            "{error:?}"
        );
    }

    // The conditional way refuses it from its own read.
    seqid::__private::items_without_pipelines(&test);
    let mut lines = vec![line("e")];
    counts.lock().unwrap().clear();
    let error = Order::append_lines(&db, doc! { "customer": 1 }, &mut lines)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::ItemsAmbiguous {
                matched: Some(2),
                ..
            }
        ),
        "{error:?}"
    );
    let counts = counts.lock().unwrap().clone();
    assert_eq!(counts.get("update"), None, "{counts:?}");
    assert_eq!(counts.get("find"), Some(&1), "{counts:?}");
    untouched(1).await;
    untouched(2).await;
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, seqid::Item)]
struct Entry {
    #[seq_no(start = 1000)]
    no: i64,
    sku: String,
}

#[derive(Debug, serde::Serialize, serde::Deserialize, Document)]
#[seq_id("ledger", collection = "orders")]
struct Ledger {
    #[serde(rename = "_id")]
    id: i64,
    #[seq_items(last = "lines_last")]
    lines: Vec<Entry>,
    lines_last: i64,
}

/// Appends lines of these skus to the order `_id: id`, numbered from `start`.
async fn append_skus(
    db: &seqid::Database,
    start: i64,
    id: i64,
    skus: &[String],
) -> Result<Vec<i64>, Error> {
    let filter = doc! { "_id": id };
    match start {
        1 => {
            let mut lines: Vec<Line> = skus.iter().map(|sku| line(sku)).collect();
            let numbers = Order::append_lines(db, filter, &mut lines).await?;
            assert_eq!(lines.iter().map(|l| l.no).collect::<Vec<_>>(), numbers);
            Ok(numbers)
        }
        _ => {
            let entry = |sku: &String| Entry {
                no: 0,
                sku: sku.clone(),
            };
            let mut lines: Vec<Entry> = skus.iter().map(entry).collect();
            let numbers = Ledger::append_lines(db, filter, &mut lines).await?;
            assert_eq!(lines.iter().map(|l| l.no).collect::<Vec<_>>(), numbers);
            Ok(numbers)
        }
    }
}

/// A collection where the orders' integer `_id`s are not their places: a document with a
/// string `_id` stored first, then orders 3, 1 and 2 (`initial` lines each, numbered from
/// 1, `start` 1 only); returns the other document.
async fn out_of_place(orders: &mongodb::Collection<BsonDocument>, initial: i64) -> BsonDocument {
    let note = doc! { "_id": "note", "text": "not an order", "lines_last": 7 };
    orders.insert_one(note.clone()).await.unwrap();
    for id in [3_i64, 1, 2] {
        let lines: Vec<Bson> = (1..=initial)
            .map(|no| Bson::Document(doc! { "no": no, "sku": "same" }))
            .collect();
        let order = doc! { "_id": id, "lines": lines, "lines_last": initial };
        orders.insert_one(order).await.unwrap();
    }
    note
}

/// Issue 55, item 8: on nx-27017 an update whose filter held `$type` (the conditional way's
/// guard on the array) was applied to another document than the one matched, answered
/// `Ok`. Appends to orders whose `_id`s are not their places, numbered from 1 and from
/// 1000, each land in their own order, on the pipeline's way and on the conditional way.
#[tokio::test]
async fn appends_to_orders_whose_ids_are_not_their_places_land_in_their_own_order() {
    for (start, conditional) in [(1, false), (1000, false), (1, true), (1000, true)] {
        let test = test_db(&format!("items_places_{start}_{conditional}")).await;
        if conditional {
            seqid::__private::items_without_pipelines(&test);
        }
        let db = crate::support::shared(&test);
        let orders = test.collection::<BsonDocument>("orders");
        let note = out_of_place(&orders, 0).await;
        let mut appended: BTreeMap<i64, Vec<String>> = BTreeMap::new();
        for round in 0..2 {
            for id in [1_i64, 2, 3] {
                let skus: Vec<String> = (0..2 - round)
                    .map(|k| format!("o{id}-{round}-{k}"))
                    .collect();
                let numbers = append_skus(&db, start, id, &skus).await.unwrap();
                let before = appended.get(&id).map_or(0, Vec::len) as i64;
                let expected: Vec<i64> =
                    (0..skus.len() as i64).map(|k| start + before + k).collect();
                assert_eq!(
                    numbers, expected,
                    "order {id}, round {round}, start {start}"
                );
                appended.entry(id).or_default().extend(skus);
            }
        }
        // Every document read back: each order holds its own lines, numbered from
        // `start`, and its mark; the other document is as it was stored.
        assert_eq!(orders.count_documents(doc! {}).await.unwrap(), 4);
        let stored_note = orders.find_one(doc! { "_id": "note" }).await.unwrap();
        assert_eq!(
            stored_note,
            Some(note),
            "start {start}, conditional {conditional}"
        );
        for (id, skus) in &appended {
            let stored = orders.find_one(doc! { "_id": id }).await.unwrap().unwrap();
            let lines: Vec<BsonDocument> = stored
                .get_array("lines")
                .unwrap()
                .iter()
                .map(element)
                .collect();
            let got: Vec<(i64, String)> = lines
                .iter()
                .map(|l| {
                    (
                        integer(l.get("no").unwrap()).unwrap(),
                        l.get_str("sku").unwrap().to_owned(),
                    )
                })
                .collect();
            let expected: Vec<(i64, String)> = (start..).zip(skus.iter().cloned()).collect();
            assert_eq!(
                got, expected,
                "order {id}, start {start}, conditional {conditional}"
            );
            let mark = stored.get("lines_last").and_then(integer);
            assert_eq!(mark, Some(start + 2), "order {id}: the mark");
        }
    }
}

/// Item 8 from three processes of 16 tasks, and 16 tasks of this one, appending at once to
/// orders whose `_id`s are not their places: every line of every order once, in its own
/// order, the other document untouched.
#[tokio::test]
#[ignore = "full suite"]
async fn three_processes_appending_to_orders_whose_ids_are_not_their_places_store_every_item_in_its_order()
 {
    let test = test_db("items_places_processes").await;
    let db = crate::support::shared(&test);
    let orders = test.collection::<BsonDocument>("orders");
    let note = out_of_place(&orders, 1).await;
    let answered = appended_by_processes_and_here(&test, &db, 1, 3).await;
    assert_eq!(answered.len(), 4 * 16 * 4);
    assert_answered_and_stored(&test, &answered, 3, 1).await;
    assert_eq!(orders.count_documents(doc! {}).await.unwrap(), 4);
    let stored_note = orders.find_one(doc! { "_id": "note" }).await.unwrap();
    assert_eq!(stored_note, Some(note));
}

/// Item 8: the conditional update no longer checks that the array is an array (nx-27017
/// misapplied that check); a `$push` onto a field another writer made something else
/// between the read and the update is refused by the server, and the append reads again.
#[tokio::test]
async fn an_array_changed_between_the_read_and_the_conditional_update_is_read_again() {
    struct Rival {
        to: std::sync::Mutex<Option<Bson>>,
    }
    let rival = Arc::new(Rival {
        to: std::sync::Mutex::new(None),
    });
    let handler = {
        let rival = rival.clone();
        EventHandler::callback(move |event| {
            let CommandEvent::Started(started) = event else {
                return;
            };
            if started.command.get_str("update") != Ok("orders") {
                return;
            }
            let Some(to) = rival.to.lock().unwrap().take() else {
                return;
            };
            crate::support::write_meanwhile(&started.db, move |db| async move {
                db.collection::<BsonDocument>("orders")
                    .update_one(doc! { "_id": 1 }, doc! { "$set": { "lines": to } })
                    .await
                    .unwrap();
            });
        })
    };
    let test = test_db_with("items_changed_meanwhile", |options| {
        options.command_event_handler = Some(handler);
    })
    .await;
    seqid::__private::items_without_pipelines(&test);
    let db = crate::support::shared(&test);
    let orders = test.collection::<BsonDocument>("orders");
    out_of_place(&orders, 1).await;

    // Made null meanwhile: the `$push` is refused, the read sees no array, and the items
    // are set as the array, after the mark.
    *rival.to.lock().unwrap() = Some(Bson::Null);
    let mut lines = vec![line("a")];
    let numbers = Order::append_lines(&db, doc! { "_id": 1 }, &mut lines)
        .await
        .unwrap();
    assert_eq!(numbers, [2]);
    assert_eq!(
        stored_numbers(&test, 1, "lines", "no", "lines_last").await,
        (vec![2], Some(2))
    );
    assert!(rival.to.lock().unwrap().is_none(), "the rival wrote");

    if is_nx() {
        // nx-27017 answers a `$push` onto a string matched and modified, sets the mark and
        // pushes nothing (a server bug: MongoDB refuses it); the library does not work
        // around it.
        return;
    }
    // Made a string meanwhile: refused, read again, not an array; nothing written.
    *rival.to.lock().unwrap() = Some(Bson::String("not an array".into()));
    let mut lines = vec![line("b")];
    let error = Order::append_lines(&db, doc! { "_id": 1 }, &mut lines)
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::ItemsNotArray { .. }),
        "{error:?}"
    );
    assert_eq!(lines[0].no, 0);
    let mut stored = orders.find_one(doc! { "_id": 1 }).await.unwrap().unwrap();
    // The recent appends, the null case's alone.
    let recent = stored.remove("_seqid_lines_appends").unwrap();
    assert_eq!(recent.as_array().map(Vec::len), Some(1));
    assert_eq!(
        stored,
        doc! { "_id": 1_i64, "lines": "not an array", "lines_last": 2_i64 }
    );
}
