//! Replaces under lost replies: the replies to `update` (a replace's `replace_one`; an
//! append on SecantusDB is a `findAndModify`) lost two in a row, three times, so that some
//! replace and the driver's retry of it are both lost, while tasks read, edit and replace
//! two orders and another appends lines to them. A replace whose outcome is unknown
//! ([`ErrorKind::ReplaceOutcomeUnknown`]) is sent again as it is; one refused as stale is read
//! again. Then every number the appender was told is stored exactly once: no replace, sent
//! again or not, undid an append.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mongodb::bson::doc;
use mongodb::options::{DatabaseOptions, WriteConcern};
use seqid::Document;
use seqid::error::ErrorKind;

use crate::replace::{numbers, read_order};
use crate::support::faults::{Rig, pause, twice_in_a_row_three_times};
use crate::support::items::{Order, line, order};

const REPLACERS: usize = 4;
const PER_REPLACER: usize = 10;
const APPENDS: usize = 30;

#[tokio::test]
#[ignore = "full suite"]
async fn lost_replies_to_replaces_are_settled_and_undo_no_append() {
    let rig = Rig::start(true).await;
    let proxy = rig.proxy();
    let durable = DatabaseOptions::builder()
        .write_concern(WriteConcern::builder().journal(true).build())
        .build();
    let db = rig.app.database_with_options("replace_lost", durable);
    for _ in 0..2 {
        order(1).insert(&db).await.unwrap();
    }
    let unknown = Arc::new(AtomicUsize::new(0));
    let replacers: Vec<_> = (0..REPLACERS)
        .map(|task| {
            let (db, unknown) = (db.clone(), unknown.clone());
            tokio::spawn(async move {
                for n in 0..PER_REPLACER {
                    let id = 1 + ((task + n) % 2) as i64;
                    let mut attempt = 0;
                    let mut form = None;
                    loop {
                        let mut edited = match form.take() {
                            Some(form) => form,
                            None => read_order(&db, id).await,
                        };
                        for line in &mut edited.lines {
                            line.sku = format!("edited-{task}-{n}");
                        }
                        match edited.replace(&db).await {
                            Ok(()) => break,
                            Err(error) => match error.kind() {
                                // Landed once or not at all: sent again as it is.
                                ErrorKind::ReplaceOutcomeUnknown { .. } => {
                                    unknown.fetch_add(1, Ordering::Relaxed);
                                    form = Some(edited);
                                }
                                ErrorKind::ItemsStale { .. } => {}
                                // Not written (its pool cleared after a lost reply): again.
                                ErrorKind::Driver { .. } => form = Some(edited),
                                _ => panic!("replacer {task} #{n}: {error}"),
                            },
                        }
                        attempt += 1;
                        assert!(attempt < 200, "replacer {task} #{n}: never settled");
                        tokio::time::sleep(pause(attempt)).await;
                    }
                }
            })
        })
        .collect();
    let appender = tokio::spawn({
        let db = db.clone();
        async move {
            let mut told: [Vec<i64>; 2] = [Vec::new(), Vec::new()];
            for n in 0..APPENDS {
                let id = 1 + (n % 2) as i64;
                let mut lines = vec![line("appended")];
                let numbers = Order::append_lines(&db, doc! { "_id": id }, &mut lines)
                    .await
                    .unwrap_or_else(|error| panic!("append #{n}: {error}"));
                told[n % 2].extend(numbers);
            }
            told
        }
    });
    let ((), told) = tokio::join!(twice_in_a_row_three_times(proxy, "update", false), async {
        for replacer in replacers {
            replacer.await.unwrap();
        }
        appender.await.unwrap()
    });
    assert!(proxy.fired() > 0, "the proxy lost replies");
    let checker = rig.checker.database("replace_lost");
    for (at, told) in told.iter().enumerate() {
        let id = 1 + at as i64;
        let stored = checker
            .collection::<mongodb::bson::Document>("orders")
            .find_one(doc! { "_id": id })
            .await
            .unwrap()
            .unwrap();
        let (mut stored, mark) = numbers(&stored);
        let unique: BTreeSet<i64> = stored.iter().copied().collect();
        assert_eq!(unique.len(), stored.len(), "order {id}: a number twice");
        let mut expected = told.clone();
        expected.push(1);
        expected.sort_unstable();
        stored.sort_unstable();
        assert_eq!(
            stored, expected,
            "order {id}: every number told stored once"
        );
        assert_eq!(mark, stored.last().copied(), "order {id}: the mark");
    }
    eprintln!(
        "replace: {} replies lost, {} replaces of unknown outcome sent again",
        proxy.fired(),
        unknown.load(Ordering::Relaxed)
    );
}
