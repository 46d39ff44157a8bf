//! Numbering a stored document later (issue 38): drafts stored without a number get it
//! when they are issued. Issuers racing to number the same drafts give each one number
//! (the others learn it), through a handle and bare, for counters and block, with what a
//! lost race costs; gapless numbers in the caller's transaction with the caller's own
//! change, and an aborted transaction leaves no gap; the bulk form numbers in the order
//! stated, beside inserts of new drafts; what is refused. Lost replies and kills are
//! `faults::later`.

use std::collections::BTreeSet;
use std::time::Duration;

use mongodb::bson::doc;
use seqid::{Document, Error};
use seqid_harness::{TestDb, test_db};

use crate::support::drafts::{
    DraftBlock, DraftCounted, DraftGapless, Drafted, check_issued, race_issuers, store_drafts,
    stored_drafts,
};
use crate::support::transactions::without_transactions;
use crate::support::writers::Via;
use crate::support::{one_to, shared};

fn via(test: &TestDb, kind: &str) -> Via {
    match kind {
        "handle" => Via::Handle(shared(test)),
        _ => Via::Bare(test.db().clone()),
    }
}

/// The counter of `seq`'s scope `year`, as the tutorial's layout keeps a scope's.
async fn year_counter(db: &mongodb::Database, name: &str, year: i32) -> Option<i64> {
    let id = format!("[\"{name}\",{year}]");
    crate::support::counter_value(db, &id).await
}

/// 16 issuers number the same 12 drafts (two years), all at once, through a handle and
/// bare: one number per draft, every issuer holds it, one issuer told it gave it. The
/// numbers of a year are unique; what the races cost is `check(via, stored numbers,
/// counters)`.
async fn races<T: Drafted>(label: &str, check: impl Fn(&str, &Via, &[BTreeSet<i64>], [Option<i64>; 2])) {
    for kind in ["handle", "bare"] {
        let run = format!("{label}_{kind}");
        let test = test_db(&run).await;
        let via = via(&test, kind);
        T::create_indexes(via.db()).await.unwrap();
        let mut drafts = store_drafts::<T>(test.db(), 2026, 0, 6).await;
        drafts.extend(store_drafts::<T>(test.db(), 2027, 6, 6).await);
        let (answers, again) = race_issuers::<T>(&via, &drafts, 16).await;
        assert_eq!(again, 0, "{run}: no fault, nothing made again");
        let stored = check_issued::<T>(test.db(), &answers, &drafts, again, &run).await;
        let numbers = [2026, 2027].map(|year| {
            stored
                .values()
                .filter(|d| d.year() == year)
                .filter_map(Drafted::number)
                .collect::<BTreeSet<i64>>()
        });
        let name = T::SEQUENCE.name;
        let counters = [
            year_counter(test.db(), name, 2026).await,
            year_counter(test.db(), name, 2027).await,
        ];
        check(&run, &via, &numbers, counters);
    }
}

/// Counters: each lost race is a gap, counted by the handle.
#[tokio::test]
async fn issuers_racing_for_a_draft_give_it_one_number_counters() {
    races::<DraftCounted>("later_counters", |run, via, numbers, counters| {
        let counted: i64 = counters.iter().map(|c| c.unwrap()).sum();
        let stored: usize = numbers.iter().map(BTreeSet::len).sum();
        assert_eq!(stored, 12, "{run}");
        if let Via::Handle(db) = via {
            let stats = DraftCounted::stats(db);
            let retries = stats.retries as i64;
            let gaps = counted - stored as i64;
            assert!(
                gaps >= stats.races_lost as i64 && gaps <= stats.races_lost as i64 + retries,
                "{run}: {gaps} gaps for {} races lost",
                stats.races_lost
            );
        }
    })
    .await;
}

/// Block: through a handle a lost race gives its id back: the numbers of each year are
/// 1..=6 (the next draft takes the id another issuer gave back).
#[tokio::test]
async fn issuers_racing_for_a_draft_give_it_one_number_block() {
    races::<DraftBlock>("later_block", |run, via, numbers, _| {
        if let Via::Handle(db) = via {
            for numbers in numbers {
                assert_eq!(*numbers, one_to(6), "{run}: no gap through a handle");
            }
            let stats = DraftBlock::stats(db);
            assert_eq!(stats.ids, 12, "{run}: one id handed out per draft");
        }
    })
    .await;
}

/// A draft numbered before is not numbered again and costs no id; the caller's own
/// fields are set with the number; refusals, before any id is taken: an insert of a type
/// numbered later, a filter that finds nothing, fields that would set the number, its code
/// or `_id`, gapless without a transaction.
#[tokio::test]
async fn a_numbered_draft_keeps_its_number_and_misuse_is_refused_before_any_id_is_taken() {
    let test = test_db("later_refused").await;
    let db = shared(&test);
    DraftCounted::create_indexes(&db).await.unwrap();
    let ids = store_drafts::<DraftCounted>(test.db(), 2026, 0, 2).await;
    let first = DraftCounted::number_draft(&db, doc! { "_id": ids[0] })
        .set(doc! { "status": "issued" })
        .await
        .unwrap();
    assert!(first.by_this_call);
    assert_eq!(
        (first.doc.number, first.doc.code.as_str(), first.doc.status.as_str()),
        (Some(1), "D-2026-0001", "issued")
    );
    let again = DraftCounted::number_draft(&db, doc! { "_id": ids[0] }).await.unwrap();
    assert!(!again.by_this_call);
    assert_eq!(again.doc, first.doc, "numbered once, unchanged");
    assert_eq!(year_counter(test.db(), "draft_counted", 2026).await, Some(1));
    // The other draft is still one.
    let stored = stored_drafts::<DraftCounted>(test.db()).await;
    assert_eq!((stored[&ids[1]].number, stored[&ids[1]].code.as_str()), (None, ""));

    let mut draft = DraftCounted::draft(2026, 9);
    let error = draft.insert(&db).await.unwrap_err();
    assert!(
        matches!(error, Error::NumberedLater { operation: "insert", .. })
            && error.to_string().contains("number_draft"),
        "{error}"
    );
    let error = DraftCounted::number_draft(&db, doc! { "status": "nowhere" }).await.unwrap_err();
    assert!(
        matches!(error, Error::DraftNotFound { .. }) && error.to_string().contains("nowhere"),
        "{error}"
    );
    for set in [doc! { "number": 7 }, doc! { "code": "X" }, doc! { "_id": 1 }] {
        let error = DraftCounted::number_draft(&db, doc! { "_id": ids[1] })
            .set(set.clone())
            .await
            .unwrap_err();
        assert!(matches!(error, Error::InvalidOption { option: "set", .. }), "{set}: {error}");
    }
    assert_eq!(year_counter(test.db(), "draft_counted", 2026).await, Some(1));
    DraftGapless::create_indexes(&db).await.unwrap();
    let gapless = store_drafts::<DraftGapless>(test.db(), 2026, 0, 1).await;
    let error = DraftGapless::number_draft(&db, doc! { "_id": gapless[0] }).await.unwrap_err();
    assert!(matches!(error, Error::TransactionRequired { .. }), "{error}");
    assert_eq!(year_counter(test.db(), "draft_gapless", 2026).await, None);
}

/// Gapless: each draft numbered in the caller's transaction together with its own change
/// (`status: issued`); every third transaction aborted after numbering, which leaves the
/// draft a draft and takes its number back; issuers racing for one draft run their
/// transaction again on a write conflict. The committed numbers are 1..=n, the counter n.
#[tokio::test]
async fn gapless_numbering_aborted_with_its_transaction_leaves_no_gap() {
    let test = test_db("later_gapless").await;
    if without_transactions(&test).await {
        return;
    }
    let db = shared(&test);
    DraftGapless::create_indexes(&db).await.unwrap();
    let drafts = store_drafts::<DraftGapless>(test.db(), 2026, 0, 12).await;
    let handles: Vec<_> = (0..4)
        .map(|issuer| {
            let (db, client, drafts) = (db.clone(), test.client().clone(), drafts.clone());
            tokio::spawn(async move {
                let mut session = client.start_session().await.unwrap();
                let mut committed = Vec::new();
                for (at, draft) in drafts.iter().enumerate() {
                    // Drafts 2, 5, 8 and 11 are numbered and abandoned by issuer 0 only.
                    let abandon = at % 3 == 2;
                    if abandon && issuer != 0 {
                        continue;
                    }
                    loop {
                        session.start_transaction().await.unwrap();
                        let numbered = DraftGapless::number_draft(&db, doc! { "_id": draft })
                            .set(doc! { "status": "issued" })
                            .session(&mut session)
                            .await;
                        match numbered {
                            Ok(_) if abandon => {
                                session.abort_transaction().await.unwrap();
                                break;
                            }
                            Ok(numbered) => match session.commit_transaction().await {
                                Ok(()) => {
                                    committed.push((*draft, numbered));
                                    break;
                                }
                                Err(e) if e.contains_label("TransientTransactionError") => {}
                                Err(e) => panic!("issuer {issuer}: commit: {e}"),
                            },
                            Err(Error::Driver { source, .. })
                                if source.contains_label("TransientTransactionError") =>
                            {
                                let _ = session.abort_transaction().await;
                            }
                            Err(e) => panic!("issuer {issuer}: {e}"),
                        }
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                }
                committed
            })
        })
        .collect();
    let mut committed = Vec::new();
    for handle in handles {
        committed.extend(handle.await.unwrap());
    }
    let stored = stored_drafts::<DraftGapless>(test.db()).await;
    let issued: Vec<&DraftGapless> = stored.values().filter(|d| d.number.is_some()).collect();
    assert_eq!(issued.len(), 8, "the abandoned drafts are drafts still");
    assert!(issued.iter().all(|d| d.status == "issued"), "numbered with the caller's change");
    let numbers: BTreeSet<i64> = issued.iter().filter_map(|d| d.number).collect();
    assert_eq!(numbers, one_to(8), "no gap: every aborted number went back");
    assert_eq!(year_counter(test.db(), "draft_gapless", 2026).await, Some(8));
    for (at, draft) in drafts.iter().enumerate() {
        let doc = &stored[draft];
        match at % 3 == 2 {
            true => assert_eq!((doc.number, doc.status.as_str()), (None, "draft")),
            false => assert!(doc.number.is_some()),
        }
    }
    let gave: BTreeSet<_> = committed
        .iter()
        .filter(|(_, n)| n.by_this_call)
        .map(|(draft, _)| *draft)
        .collect();
    assert_eq!(gave.len(), 8, "one issuer per committed draft gave its number");
    for (draft, numbered) in &committed {
        assert_eq!(&numbered.doc, &stored[draft]);
    }
}

/// The bulk form, beside inserts: while a task stores new drafts, three calls number every
/// draft found, in the order they were made; each call's numbers increase with that order,
/// follow the previous call's, and every draft ends numbered once, the year's numbers
/// 1..=n (counters, one caller: no race).
#[tokio::test]
async fn bulk_numbering_goes_in_the_order_stated_beside_inserts() {
    for kind in ["handle", "bare"] {
        let label = format!("later_bulk_{kind}");
        let test = test_db(&label).await;
        let via = via(&test, kind);
        DraftCounted::create_indexes(via.db()).await.unwrap();
        store_drafts::<DraftCounted>(test.db(), 2026, 0, 10).await;
        let writer = {
            let db = test.db().clone();
            tokio::spawn(async move {
                for batch in 1..=5 {
                    store_drafts::<DraftCounted>(&db, 2026, batch * 10, 10).await;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            })
        };
        let mut calls: Vec<Vec<DraftCounted>> = Vec::new();
        for round in 0..3 {
            let numbered = match &via {
                Via::Handle(db) => DraftCounted::number_drafts(db, doc! { "year": 2026 })
                    .order(doc! { "created": 1 })
                    .set(doc! { "status": "issued" })
                    .await,
                Via::Bare(db) => DraftCounted::number_drafts(db, doc! { "year": 2026 })
                    .order(doc! { "created": 1 })
                    .set(doc! { "status": "issued" })
                    .await,
            }
            .unwrap_or_else(|e| panic!("{label} round {round}: {e}"));
            calls.push(numbered);
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        writer.await.unwrap();
        // The rest, once the writer is done.
        let rest = DraftCounted::number_drafts(via.db(), doc! {}).order(doc! { "created": 1 });
        calls.push(rest.await.unwrap());
        let mut last = 0;
        for (round, call) in calls.iter().enumerate() {
            for pair in call.windows(2) {
                assert!(
                    pair[0].created < pair[1].created && pair[0].number < pair[1].number,
                    "{label} round {round}: numbers follow the order stated"
                );
            }
            if let Some(first) = call.first() {
                assert!(first.number > Some(last), "{label} round {round}: after the last call's");
            }
            last = call.last().map_or(last, |d| d.number.unwrap());
        }
        let stored = stored_drafts::<DraftCounted>(test.db()).await;
        assert_eq!(stored.len(), 60);
        let numbers: BTreeSet<i64> = stored.values().filter_map(|d| d.number).collect();
        assert_eq!(numbers, one_to(60), "{label}: every draft numbered once, no gap");
        let returned: usize = calls.iter().map(Vec::len).sum();
        assert_eq!(returned, 60, "{label}: each draft returned by the call that numbered it");
        for call in &calls {
            for doc in call {
                assert_eq!(doc, &stored[&doc.id.unwrap()], "{label}: as stored");
            }
        }
    }
}
