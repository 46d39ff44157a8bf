//! Appends of items under the fault suite's faults: replies lost on the append's
//! `findAndModify` and on the read that settles it (the driver's retry answered from the
//! server's record, or both lost), and the server killed and restarted, while tasks append
//! to two orders. An append whose outcome is left unknown
//! ([`ErrorKind::ItemsOutcomeUnknown`]) is sent again with its token until it is settled; then
//! every append is stored exactly once, with the number it was answered, and each order's
//! numbers are `1..=n`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use mongodb::bson::{Bson, Document as BsonDocument, doc};
use mongodb::options::{DatabaseOptions, WriteConcern};
use seqid::Document;
use seqid::error::ErrorKind;

use crate::support::faults::{Rig, crash_once, pause, twice_in_a_row_three_times};
use crate::support::integer;
use crate::support::items::{Order, line, order};

/// Appending tasks, and appends per task (one line each).
const TASKS: usize = 8;
const PER_TASK: usize = 12;

/// `TASKS` tasks append `PER_TASK` lines each to the orders 1 and 2 of `db`, each append
/// sent again with its token while its outcome is unknown (or the server unreachable);
/// returns the numbers answered by order, and how many appends were sent again.
async fn append_settling(db: &seqid::Database) -> (BTreeMap<i64, Vec<i64>>, usize) {
    let handles: Vec<_> = (0..TASKS)
        .map(|task| {
            let db = db.clone();
            tokio::spawn(async move {
                let mut got = Vec::new();
                let mut again = 0;
                for n in 0..PER_TASK {
                    let id = 1 + ((task + n) % 2) as i64;
                    let mut lines = vec![line("same")];
                    let mut token = None;
                    let mut attempt = 0;
                    let numbers = loop {
                        let append = Order::append_lines(&db, doc! { "_id": id }, &mut lines);
                        let append = match token {
                            Some(token) => append.token(token),
                            None => append,
                        };
                        match append.await {
                            Ok(numbers) => break numbers,
                            Err(error) => match error.kind() {
                                ErrorKind::ItemsOutcomeUnknown { token: unknown, .. } => {
                                    token = Some(*unknown);
                                }
                                // Not written (the server refused it, or it was never sent:
                                // its connection pool cleared, the server killed): sent again,
                                // with the token if an earlier send left its outcome unknown.
                                ErrorKind::Driver { .. } => {}
                                _ => panic!("task {task} #{n}: {error}"),
                            },
                        }
                        again += 1;
                        attempt += 1;
                        assert!(attempt < 200, "task {task} #{n}: never settled");
                        tokio::time::sleep(pause(attempt)).await;
                    };
                    assert_eq!(numbers.len(), 1);
                    assert_eq!(lines[0].no, numbers[0]);
                    got.push((id, numbers[0]));
                }
                (got, again)
            })
        })
        .collect();
    let mut answered: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    let mut again = 0;
    for handle in handles {
        let (got, made) = handle.await.unwrap();
        again += made;
        for (id, number) in got {
            answered.entry(id).or_default().push(number);
        }
    }
    (answered, again)
}

/// Every append stored once, under the number it was answered; each order `1..=n`.
async fn check(checker: &mongodb::Database, answered: &BTreeMap<i64, Vec<i64>>) {
    let orders = checker.collection::<BsonDocument>("orders");
    for (&id, numbers) in answered {
        let stored = orders.find_one(doc! { "_id": id }).await.unwrap().unwrap();
        let stored_numbers: Vec<i64> = stored
            .get_array("lines")
            .unwrap()
            .iter()
            .map(|item| match item {
                Bson::Document(item) => item.get("no").and_then(integer).unwrap(),
                other => panic!("{other}"),
            })
            .collect();
        let unique: BTreeSet<i64> = stored_numbers.iter().copied().collect();
        assert_eq!(
            unique.len(),
            stored_numbers.len(),
            "order {id}: a number twice"
        );
        // One line from the insert, one per append.
        assert_eq!(
            stored_numbers.len(),
            numbers.len() + 1,
            "order {id}: an append twice or lost"
        );
        assert_eq!(
            unique,
            (1..=stored_numbers.len() as i64).collect(),
            "order {id}: dense"
        );
        let answered: BTreeSet<i64> = numbers.iter().copied().collect();
        assert_eq!(
            answered.len(),
            numbers.len(),
            "order {id}: a number answered twice"
        );
        assert!(answered.iter().all(|n| unique.contains(n)));
        assert_eq!(
            stored.get("lines_last").and_then(integer),
            Some(stored_numbers.len() as i64)
        );
    }
}

/// The rig's database `name`, journaled (an append acknowledged before a kill survives
/// it), with orders 1 and 2 of one line each.
async fn orders(rig: &Rig, name: &str) -> seqid::Database {
    let durable = DatabaseOptions::builder()
        .write_concern(WriteConcern::builder().journal(true).build())
        .build();
    let db = rig.app.database_with_options(name, durable);
    for _ in 0..2 {
        order(1).insert(&db).await.unwrap();
    }
    db
}

#[tokio::test]
#[ignore = "full suite"]
async fn lost_replies_to_appends_are_settled_with_nothing_appended_twice() {
    let rig = Rig::start(true).await;
    let proxy = rig.proxy();
    let db = orders(&rig, "items_lost").await;
    let ((answered, again), ()) = tokio::join!(append_settling(&db), async {
        for command in ["findAndModify", "find"] {
            twice_in_a_row_three_times(proxy, command, false).await;
        }
    });
    assert!(proxy.fired() > 0, "the proxy lost replies");
    check(&rig.checker.database("items_lost"), &answered).await;
    eprintln!(
        "items: {} replies lost, {again} appends sent again",
        proxy.fired()
    );
}

#[tokio::test]
#[ignore = "full suite"]
async fn appends_across_a_killed_and_restarted_server_are_settled_with_nothing_appended_twice() {
    let rig = Rig::start(false).await;
    let db = orders(&rig, "items_killed").await;
    let stored = rig
        .checker
        .database("items_killed")
        .collection::<BsonDocument>("orders");
    let ((answered, again), ()) = tokio::join!(append_settling(&db), async {
        // Once a third of the appends are in.
        for _ in 0..600 {
            let lines = stored
                .aggregate(vec![doc! { "$project": { "n": { "$size": "$lines" } } }])
                .await;
            let mut total = 0;
            if let Ok(mut cursor) = lines {
                use futures_util::TryStreamExt;
                while let Ok(Some(doc)) = cursor.try_next().await {
                    total += doc.get("n").and_then(integer).unwrap_or(0);
                }
            }
            if total >= (TASKS * PER_TASK / 3) as i64 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        crash_once(&rig.server, &stored, 0).await;
    });
    check(&rig.checker.database("items_killed"), &answered).await;
    eprintln!("items: {again} appends sent again across the kill");
}
