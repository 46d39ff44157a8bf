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
use seqid::action::Transaction;
use seqid::error::ErrorKind;
use seqid::{Document, Error};
use seqid_harness::{TestDb, test_db};

use crate::support::drafts::{
    DraftBlock, DraftCounted, DraftGapless, DraftGaplessTool, Drafted, check_issued, race_issuers,
    store_drafts, stored_drafts,
};
use crate::support::transactions::without_transactions;
use crate::support::writers::Via;
use crate::support::{one_to, shared};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

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
async fn races<T: Drafted>(
    label: &str,
    check: impl Fn(&str, &Via, &[BTreeSet<i64>], [Option<i64>; 2]),
) {
    for kind in ["handle", "bare"] {
        let run = format!("{label}_{kind}");
        let test = test_db(&run).await;
        let via = via(&test, kind);
        crate::support::drafts::create_indexes::<T>(via.db()).await;
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
            let stats = DraftCounted::sequence().stats(db);
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
            let stats = DraftBlock::sequence().stats(db);
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
    crate::support::drafts::create_indexes::<DraftCounted>(&db).await;
    let ids = store_drafts::<DraftCounted>(test.db(), 2026, 0, 2).await;
    let first = DraftCounted::number_draft(&db, doc! { "_id": ids[0] })
        .set(doc! { "status": "issued" })
        .await
        .unwrap();
    assert!(first.by_this_call);
    assert_eq!(
        (
            first.doc.number,
            first.doc.code.as_str(),
            first.doc.status.as_str()
        ),
        (Some(1), "D-2026-0001", "issued")
    );
    let again = DraftCounted::number_draft(&db, doc! { "_id": ids[0] })
        .await
        .unwrap();
    assert!(!again.by_this_call);
    assert_eq!(again.doc, first.doc, "numbered once, unchanged");
    assert_eq!(
        year_counter(test.db(), "draft_counted", 2026).await,
        Some(1)
    );
    // The other draft is still one.
    let stored = stored_drafts::<DraftCounted>(test.db()).await;
    assert_eq!(
        (stored[&ids[1]].number, stored[&ids[1]].code.as_str()),
        (None, "")
    );

    let mut draft = DraftCounted::draft(2026, 9);
    let error = draft.insert(&db).await.unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::NumberedLater {
                operation: "insert",
                ..
            }
        ) && error.to_string().contains("number_draft"),
        "{error}"
    );
    let error = DraftCounted::number_draft(&db, doc! { "status": "nowhere" })
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::DraftNotFound { .. })
            && error.to_string().contains("nowhere"),
        "{error}"
    );
    for set in [
        doc! { "number": 7 },
        doc! { "code": "X" },
        doc! { "_id": 1 },
    ] {
        let error = DraftCounted::number_draft(&db, doc! { "_id": ids[1] })
            .set(set.clone())
            .await
            .unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::InvalidOption { option: "set", .. }),
            "{set}: {error}"
        );
    }
    assert_eq!(
        year_counter(test.db(), "draft_counted", 2026).await,
        Some(1)
    );
    crate::support::drafts::create_indexes::<DraftGapless>(&db).await;
    let gapless = store_drafts::<DraftGapless>(test.db(), 2026, 0, 1).await;
    let error = DraftGapless::number_draft(&db, doc! { "_id": gapless[0] })
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::TransactionRequired { .. }),
        "{error}"
    );
    assert_eq!(year_counter(test.db(), "draft_gapless", 2026).await, None);
}

/// A December draft issued with next year's scope (issue 55, item 5): `.set` refuses a
/// scope field, and a dotted key below it, naming the scope and the fix, before any id is
/// taken; the draft stays a draft of its year, and `.set` of other keys still numbers it.
#[tokio::test]
async fn set_refuses_a_scope_field_before_any_id_is_taken() {
    let test = test_db("later_set_scope").await;
    let db = shared(&test);
    crate::support::drafts::create_indexes::<DraftCounted>(&db).await;
    let ids = store_drafts::<DraftCounted>(test.db(), 2026, 0, 1).await;
    let before = stored_drafts::<DraftCounted>(test.db()).await;
    for (set, names) in [
        (
            doc! { "status": "issued", "year": 2027 },
            r#"{ "year": 2027 } (the scope field `year`)"#,
        ),
        (
            doc! { "status": "issued", "year.x": 1 },
            r#"{ "year.x": 1 } (below the scope field `year`)"#,
        ),
    ] {
        let error = DraftCounted::number_draft(&db, doc! { "_id": ids[0] })
            .set(set.clone())
            .await
            .unwrap_err();
        let text = error.to_string();
        assert!(
            matches!(error.kind(), ErrorKind::InvalidOption { option: "set", .. })
                && text.starts_with(&format!("sequence `draft_counted`: set = {names}"))
                && text.contains("the counter of the scope the draft has when it is issued")
                && text.contains("change the scope with the driver before issuing")
                && text.ends_with("Nothing was reserved or written"),
            "{set}: {text}"
        );
        let error = DraftCounted::number_drafts(&db, doc! { "year": 2026 })
            .set(set.clone())
            .await
            .unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::InvalidOption { option: "set", .. })
                && error.to_string().contains(names),
            "number_drafts, {set}: {error}"
        );
    }
    assert_eq!(stored_drafts::<DraftCounted>(test.db()).await, before);
    for year in [2026, 2027] {
        assert_eq!(
            year_counter(test.db(), "draft_counted", year).await,
            None,
            "{year}: nothing reserved"
        );
    }
    // Other keys are written, with the number of the draft's own year.
    let numbered = DraftCounted::number_draft(&db, doc! { "_id": ids[0] })
        .set(doc! { "status": "issued" })
        .await
        .unwrap();
    assert_eq!(
        (
            numbered.doc.year,
            numbered.doc.number,
            numbered.doc.code.as_str(),
            numbered.doc.status.as_str()
        ),
        (2026, Some(1), "D-2026-0001", "issued")
    );
    let stored = stored_drafts::<DraftCounted>(test.db()).await;
    assert_eq!(stored[&ids[0]], numbered.doc);
}

/// `number_draft` through `via`, in a transaction of `session` when given (`Transaction`:
/// aborted after a refusal, committed after a number).
async fn number_one<T: Drafted>(
    via: &Via,
    filter: mongodb::bson::Document,
    session: Option<&mut mongodb::ClientSession>,
) -> Result<seqid::Numbered<T>, Error> {
    let Some(session) = session else {
        return match via {
            Via::Handle(db) => T::number_draft(db, filter).await,
            Via::Bare(db) => T::number_draft(db, filter).await,
        };
    };
    Transaction::new(session)
        .run((via, filter), |session, (via, filter)| {
            Box::pin(async move {
                match via {
                    Via::Handle(db) => T::number_draft(db, filter.clone()).session(session).await,
                    Via::Bare(db) => T::number_draft(db, filter.clone()).session(session).await,
                }
            })
        })
        .await
}

/// What a user's billing layer met (issue 47), for each strategy that numbers later: a code
/// typed on a draft is never overwritten (refused, the draft as stored), and a filter that
/// finds the draft and an invoice issued before is refused, naming how many it matched;
/// both before any id is taken, by `number_draft` and `number_drafts` alike. The draft
/// named alone is numbered after, with the first number.
async fn refusals_take_no_id<T: Drafted>(label: &str, in_transaction: bool) {
    for kind in ["handle", "bare"] {
        let run = format!("{label}_{kind}");
        let test = test_db(&run).await;
        let via = via(&test, kind);
        let mut session = match in_transaction {
            true => Some(test.client().start_session().await.unwrap()),
            false => None,
        };
        crate::support::drafts::create_indexes::<T>(via.db()).await;
        let name = T::SEQUENCE.name;
        // Customer 8's invoice issued before (number 1), and their draft: `created` is the
        // customer.
        let issued = store_drafts::<T>(test.db(), 2026, 8, 1).await[0];
        number_one::<T>(&via, doc! { "_id": issued }, session.as_mut())
            .await
            .unwrap();
        let draft = store_drafts::<T>(test.db(), 2026, 8, 1).await[0];
        let before = stored_drafts::<T>(test.db()).await;
        // 1, or the end of the block the first number came from.
        let counter = year_counter(test.db(), name, 2026).await;

        // The filter finds the draft and the issued invoice, then a third document too.
        let mut third = None;
        for matched in [2, 3] {
            if matched == 3 {
                third = Some(store_drafts::<T>(test.db(), 2027, 8, 1).await[0]);
            }
            let error = number_one::<T>(&via, doc! { "created": 8 }, session.as_mut())
                .await
                .unwrap_err();
            assert!(
                matches!(error.kind(), ErrorKind::DraftAmbiguous { matched: Some(m), .. } if *m == matched)
                    && error
                        .to_string()
                        .contains(&format!("matches {matched} documents"))
                    && error.to_string().contains("\"created\": 8"),
                "{run}: {error}"
            );
        }
        T::collection(test.db())
            .delete_one(doc! { "_id": third.unwrap() })
            .await
            .unwrap();

        // A code typed on the draft.
        T::collection(test.db())
            .update_one(doc! { "_id": draft }, doc! { "$set": { "code": "HAND-1" } })
            .await
            .unwrap();
        let error = number_one::<T>(&via, doc! { "_id": draft }, session.as_mut())
            .await
            .unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::InvalidCode { .. })
                && error.to_string().contains("\"HAND-1\"")
                && error.to_string().contains("never replaces"),
            "{run}: {error}"
        );
        if !in_transaction {
            let error = T::number_drafts(test.db(), doc! { "year": 2026 })
                .await
                .unwrap_err();
            assert!(
                matches!(error.kind(), ErrorKind::InvalidCode { .. }),
                "{run}: number_drafts: {error}"
            );
        }
        let after = stored_drafts::<T>(test.db()).await;
        assert_eq!(after[&draft].code(), "HAND-1", "{run}: the code as typed");
        assert_eq!(after[&draft].number(), None, "{run}");
        assert_eq!(
            after[&issued], before[&issued],
            "{run}: the issued one unchanged"
        );
        assert_eq!(
            year_counter(test.db(), name, 2026).await,
            counter,
            "{run}: no id taken by a refusal"
        );

        // Emptied, the draft named alone takes the next number: no gap.
        T::collection(test.db())
            .update_one(doc! { "_id": draft }, doc! { "$set": { "code": "" } })
            .await
            .unwrap();
        let numbered = number_one::<T>(&via, doc! { "_id": draft }, session.as_mut())
            .await
            .unwrap();
        assert!(numbered.by_this_call, "{run}");
        // The number after the first: through a bare database a block lives for one call,
        // and the next comes from the counter.
        let next = match (T::SEQUENCE.strategy, kind) {
            (seqid::Strategy::Block { .. }, "bare") => counter.unwrap() + 1,
            _ => 2,
        };
        assert_eq!(
            (numbered.doc.number(), numbered.doc.code().to_owned()),
            (Some(next), format!("D-2026-{next:04}")),
            "{run}"
        );
    }
}

#[tokio::test]
async fn a_typed_code_and_a_filter_finding_two_documents_are_refused_before_any_id_counters() {
    refusals_take_no_id::<DraftCounted>("later_refusals_counters", false).await;
}

#[tokio::test]
async fn a_typed_code_and_a_filter_finding_two_documents_are_refused_before_any_id_block() {
    refusals_take_no_id::<DraftBlock>("later_refusals_block", false).await;
}

/// Gapless, in the caller's transaction. A refusal reads and takes nothing, so it holds
/// on a server whose transactions do not isolate too (nx-27017).
#[tokio::test]
async fn a_typed_code_and_a_filter_finding_two_documents_are_refused_before_any_id_gapless() {
    refusals_take_no_id::<DraftGapless>("later_refusals_gapless", true).await;
}

/// Gapless: each draft numbered in the caller's transaction together with its own change
/// (`status: issued`), run with `Transaction`; every third transaction aborted after
/// numbering (the body's own error), which leaves the draft a draft and takes its number
/// back; issuers racing for one draft run their transaction again on a write conflict. The committed numbers are 1..=n, the counter n.
#[tokio::test]
async fn gapless_numbering_aborted_with_its_transaction_leaves_no_gap() {
    let test = test_db("later_gapless").await;
    if without_transactions(&test).await {
        return;
    }
    let db = shared(&test);
    crate::support::drafts::create_indexes::<DraftGapless>(&db).await;
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
                    // Abandoned: the body's own error aborts the transaction.
                    let numbered = Transaction::new(&mut session)
                        .run((&db, draft), |session, (db, draft)| {
                            Box::pin(async move {
                                let numbered =
                                    DraftGapless::number_draft(*db, doc! { "_id": **draft })
                                        .set(doc! { "status": "issued" })
                                        .session(session)
                                        .await?;
                                match abandon {
                                    true => Err::<_, BoxError>("abandoned".into()),
                                    false => Ok(numbered),
                                }
                            })
                        })
                        .await;
                    match numbered {
                        Ok(numbered) => committed.push((*draft, numbered)),
                        Err(e) if abandon && e.to_string() == "abandoned" => {}
                        Err(e) => panic!("issuer {issuer}: {e}"),
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
    assert!(
        issued.iter().all(|d| d.status == "issued"),
        "numbered with the caller's change"
    );
    let numbers: BTreeSet<i64> = issued.iter().filter_map(|d| d.number).collect();
    assert_eq!(numbers, one_to(8), "no gap: every aborted number went back");
    assert_eq!(
        year_counter(test.db(), "draft_gapless", 2026).await,
        Some(8)
    );
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
    assert_eq!(
        gave.len(),
        8,
        "one issuer per committed draft gave its number"
    );
    for (draft, numbered) in &committed {
        assert_eq!(&numbered.doc, &stored[draft]);
    }
}

/// mongoose-sequence's counter of `name` in scope `year` (`{ id, reference_value }`).
async fn tool_counter(db: &mongodb::Database, name: &str, year: i32) -> Option<i64> {
    let filter = doc! { "id": name, "reference_value": { "year": year } };
    let counter = db
        .collection::<mongodb::bson::Document>("counters")
        .find_one(filter)
        .await
        .unwrap()?;
    Some(crate::support::integer(counter.get("seq").expect("seq")).expect("a number"))
}

/// A gapless insert whose counter seqid makes before its first `$inc` (a tool's layout,
/// found by fields, which no upsert may make), used for the first time in a transaction
/// that has read already: `number_draft` reads the draft first, and a caller may read
/// before an insert. The transaction's snapshot, taken at that read, cannot see a counter
/// made outside it then: seqid makes it in the transaction (gone if the transaction
/// aborts), or, if it was made since the snapshot, the transaction meets a write conflict
/// and runs again. Each year's first number is 1, through a handle and bare; an aborted
/// first use leaves no counter, and the next one starts at 1 again.
#[tokio::test]
async fn a_tool_counter_first_used_in_a_transaction_that_has_read_starts_at_one() {
    let test = test_db("later_gapless_tool").await;
    if without_transactions(&test).await {
        return;
    }
    let handle = shared(&test);
    let bare = test.db().clone();
    crate::support::drafts::create_indexes::<DraftGaplessTool>(test.db()).await;
    let name = "draft_gapless_tool";
    for (kind, year) in [("handle", 2026), ("bare", 2036)] {
        let drafts = store_drafts::<DraftGaplessTool>(test.db(), year, 0, 3).await;
        let mut session = test.client().start_session().await.unwrap();
        // The first use, aborted: the counter made in the transaction goes with it. Run
        // again on a transient error, as any transaction is: making the tool's unique
        // index (outside) may conflict with the transaction's snapshot.
        let via = match kind {
            "handle" => Via::Handle(handle.clone()),
            _ => Via::Bare(bare.clone()),
        };
        let mut first = None;
        let aborted = Transaction::new(&mut session)
            .run(
                (&via, drafts[0], &mut first),
                |session, (via, draft, first)| {
                    Box::pin(async move {
                        let filter = doc! { "_id": *draft };
                        **first = Some(match via {
                            Via::Handle(db) => {
                                DraftGaplessTool::number_draft(db, filter)
                                    .session(session)
                                    .await?
                            }
                            Via::Bare(db) => {
                                DraftGaplessTool::number_draft(db, filter)
                                    .session(session)
                                    .await?
                            }
                        });
                        Err::<(), BoxError>("aborted on purpose".into())
                    })
                },
            )
            .await
            .unwrap_err();
        assert_eq!(aborted.to_string(), "aborted on purpose", "{kind}");
        let numbered = first.expect("numbered before the abort");
        assert_eq!(numbered.doc.number, Some(1), "{kind}");
        assert_eq!(
            tool_counter(test.db(), name, year).await,
            None,
            "{kind}: aborted"
        );
        // Then each draft in a transaction of its own, run again on a transient error.
        for (at, draft) in drafts.iter().enumerate() {
            let numbered = Transaction::new(&mut session)
                .run((&via, *draft), |session, (via, draft)| {
                    Box::pin(async move {
                        let filter = doc! { "_id": *draft };
                        let issued = doc! { "status": "issued" };
                        match via {
                            Via::Handle(db) => {
                                DraftGaplessTool::number_draft(db, filter)
                                    .set(issued)
                                    .session(session)
                                    .await
                            }
                            Via::Bare(db) => {
                                DraftGaplessTool::number_draft(db, filter)
                                    .set(issued)
                                    .session(session)
                                    .await
                            }
                        }
                    })
                })
                .await
                .unwrap_or_else(|e| panic!("{kind}: draft {at}: {e}"));
            assert_eq!(
                numbered.doc.number,
                Some(at as i64 + 1),
                "{kind}: draft {at}"
            );
            assert!(numbered.by_this_call);
        }
        assert_eq!(tool_counter(test.db(), name, year).await, Some(3), "{kind}");
        let stored = stored_drafts::<DraftGaplessTool>(test.db()).await;
        let numbers: BTreeSet<i64> = drafts
            .iter()
            .map(|draft| stored[draft].number.expect("numbered"))
            .collect();
        assert_eq!(numbers, one_to(3), "{kind}");
    }
}

/// The same first use after the caller's own read in its transaction, which seqid cannot
/// see: the counter, made outside the transaction, is out of the snapshot's sight; its
/// insert in the transaction meets it, a write conflict, and `Transaction` runs the
/// transaction again, which numbers from 1. Never a missing counter.
#[tokio::test]
async fn a_tool_counter_first_used_after_the_callers_own_read_starts_at_one() {
    #[derive(Debug, serde::Serialize, serde::Deserialize, seqid::Document)]
    #[seq_id(
        "Order",
        collection = "tool_orders",
        strategy = "gapless",
        layout = "typegoose",
        start = 1
    )]
    struct Order {
        #[serde(rename = "_id")]
        id: i64,
        n: u32,
    }
    let test = test_db("later_gapless_tool_read").await;
    if without_transactions(&test).await {
        return;
    }
    let db = shared(&test);
    let mut session = test.client().start_session().await.unwrap();
    let mut runs = 0;
    for n in 0..3u32 {
        let id = Transaction::new(&mut session)
            .run((&db, &test, &mut runs), |session, (db, test, runs)| {
                Box::pin(async move {
                    **runs += 1;
                    // The caller's own read first: it takes the snapshot.
                    let probe = test.collection::<mongodb::bson::Document>("tool_orders");
                    probe.find_one(doc! {}).session(&mut *session).await?;
                    let mut order = Order { id: 0, n };
                    order.insert(*db).session(session).await?;
                    Ok::<_, BoxError>(order.id)
                })
            })
            .await
            .unwrap_or_else(|e| panic!("order {n}: {e}"));
        assert_eq!(id, i64::from(n) + 1, "order {n}");
    }
    // The first use ran again once (the write conflict), at most.
    assert!((3..=4).contains(&runs), "{runs} runs");
    let counter = test
        .collection::<mongodb::bson::Document>("identitycounters")
        .find_one(doc! { "modelName": "Order" })
        .await
        .unwrap()
        .expect("the tool's counter");
    assert_eq!(
        crate::support::integer(counter.get("count").unwrap()),
        Some(3)
    );
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
        crate::support::drafts::create_indexes::<DraftCounted>(via.db()).await;
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
                Via::Handle(db) => {
                    DraftCounted::number_drafts(db, doc! { "year": 2026 })
                        .order(doc! { "created": 1 })
                        .set(doc! { "status": "issued" })
                        .await
                }
                Via::Bare(db) => {
                    DraftCounted::number_drafts(db, doc! { "year": 2026 })
                        .order(doc! { "created": 1 })
                        .set(doc! { "status": "issued" })
                        .await
                }
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
                assert!(
                    first.number > Some(last),
                    "{label} round {round}: after the last call's"
                );
            }
            last = call.last().map_or(last, |d| d.number.unwrap());
        }
        let stored = stored_drafts::<DraftCounted>(test.db()).await;
        assert_eq!(stored.len(), 60);
        let numbers: BTreeSet<i64> = stored.values().filter_map(|d| d.number).collect();
        assert_eq!(
            numbers,
            one_to(60),
            "{label}: every draft numbered once, no gap"
        );
        let returned: usize = calls.iter().map(Vec::len).sum();
        assert_eq!(
            returned, 60,
            "{label}: each draft returned by the call that numbered it"
        );
        for call in &calls {
            for doc in call {
                assert_eq!(doc, &stored[&doc.id.unwrap()], "{label}: as stored");
            }
        }
    }
}

/// Another issuer that numbers a draft just before seqid's update of it: from the driver's
/// command monitoring it sees the `update` of the draft about to be sent and sets
/// `number: 999` (and its code) first, through its own client, once.
struct RivalIssuer {
    draft: mongodb::bson::oid::ObjectId,
    armed: std::sync::atomic::AtomicBool,
}

impl RivalIssuer {
    fn handler(
        self: &std::sync::Arc<Self>,
    ) -> mongodb::event::EventHandler<mongodb::event::command::CommandEvent> {
        use mongodb::event::command::CommandEvent;
        let rival = self.clone();
        mongodb::event::EventHandler::callback(move |event| {
            let CommandEvent::Started(started) = event else {
                return;
            };
            let Ok(updates) = started.command.get_array("updates") else {
                return;
            };
            let Ok(collection) = started.command.get_str("update") else {
                return;
            };
            let ours = updates.iter().any(|u| {
                u.as_document()
                    .and_then(|u| u.get_document("q").ok())
                    .and_then(|q| q.get_object_id("_id").ok())
                    == Some(rival.draft)
            });
            if !ours || !rival.armed.swap(false, std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            let (collection, draft) = (collection.to_owned(), rival.draft);
            crate::support::write_meanwhile(&started.db, move |db| async move {
                let numbered = doc! { "$set": { "number": 999_i64, "code": "D-2026-0999" } };
                db.collection::<mongodb::bson::Document>(&collection)
                    .update_one(doc! { "_id": draft }, numbered)
                    .await
                    .unwrap();
            });
        })
    }
}

/// A race lost to another issuer, made certain ([`RivalIssuer`]): the caller gets the
/// draft as the rival numbered it, not by this call, and the race is counted; the id it
/// took costs what the strategy promises, seen in the next draft's number: counters a gap
/// (2), block through a handle nothing (1: the id went back to the live block), bare a gap.
async fn a_lost_race<T: Drafted>(kind: &str, next: i64) {
    let label = format!("later_rival_{}_{kind}", T::SEQUENCE.strategy_name());
    let scratch = test_db(&format!("{label}_ids")).await;
    let drafts = store_drafts::<T>(scratch.db(), 2026, 0, 2).await;
    let rival = std::sync::Arc::new(RivalIssuer {
        draft: drafts[0],
        armed: true.into(),
    });
    let handler = rival.handler();
    let test = seqid_harness::test_db_with(&label, move |o| {
        o.command_event_handler = Some(handler);
    })
    .await;
    // The same drafts, with their `_id`s, in the watched database.
    let copies: Vec<_> = stored_drafts::<T>(scratch.db())
        .await
        .into_values()
        .collect();
    T::collection(test.db()).insert_many(&copies).await.unwrap();
    let via = via(&test, kind);
    crate::support::drafts::create_indexes::<T>(via.db()).await;
    let (first, _) = crate::support::drafts::issue::<T>(&via, drafts[0])
        .await
        .unwrap();
    assert!(!first.by_this_call, "{label}: the rival numbered it");
    assert_eq!(
        (first.doc.number(), first.doc.code()),
        (Some(999), "D-2026-0999")
    );
    assert!(!rival.armed.load(std::sync::atomic::Ordering::SeqCst));
    if let Via::Handle(db) = &via {
        assert_eq!(T::sequence().stats(db).races_lost, 1, "{label}");
    }
    let (second, _) = crate::support::drafts::issue::<T>(&via, drafts[1])
        .await
        .unwrap();
    assert!(second.by_this_call);
    assert_eq!(
        second.doc.number(),
        Some(next),
        "{label}: what the lost race cost"
    );
}

#[tokio::test]
async fn a_race_lost_to_another_issuer_costs_what_the_strategy_promises() {
    a_lost_race::<DraftCounted>("handle", 2).await;
    a_lost_race::<DraftCounted>("bare", 2).await;
    a_lost_race::<DraftBlock>("handle", 1).await;
    a_lost_race::<DraftBlock>("bare", 2).await;
}

/// Issuers in three OS processes (two workers and this one), four each, race to number the
/// same 30 drafts: every draft one number, every issuer of every process holds it.
async fn processes_race<T: Drafted>(label: &str, model: &str) {
    let test = test_db(label).await;
    crate::support::drafts::create_indexes::<T>(test.db()).await;
    store_drafts::<T>(test.db(), 2026, 0, 30).await;
    let drafts = crate::support::drafts::draft_ids::<T>(test.db()).await;
    let modes = ["handle", "bare"].map(|via| format!("drafts/{model}/{via}"));
    let mut workers = crate::support::Workers::spawn(test.db(), modes, 4, 0);
    let via = Via::Handle(shared(&test));
    workers.go();
    let (mut answers, again) = race_issuers::<T>(&via, &drafts, 4).await;
    for line in workers.finish_raw().await {
        let answer = crate::support::drafts::parse::<T>(&line, 100)
            .unwrap_or_else(|| panic!("a worker printed {line:?}"));
        answers.push(answer);
    }
    assert_eq!(answers.len(), 3 * 4 * 30);
    check_issued::<T>(test.db(), &answers, &drafts, again, label).await;
}

#[tokio::test]
#[ignore = "full suite"]
async fn issuers_across_processes_give_each_draft_one_number_counters() {
    processes_race::<DraftCounted>("later_procs_counters", "counters").await;
}

#[tokio::test]
#[ignore = "full suite"]
async fn issuers_across_processes_give_each_draft_one_number_block() {
    processes_race::<DraftBlock>("later_procs_block", "block").await;
}

/// A draft type whose two sequences are both numbered later (issue 49): an invoice number
/// per year, with its code, and a ledger number across years from blocks of 5. Issuing a
/// draft numbers both, in one update.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, seqid::Document)]
#[seq_id(collection = "later_two")]
struct TwoNumbers {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<mongodb::bson::oid::ObjectId>,
    year: i32,
    #[seq_id("later_two_number", scope = "year", numbered = "later")]
    number: Option<i64>,
    #[seq_id(
        "later_two_ledger",
        strategy = "block",
        block_size = 5,
        numbered = "later"
    )]
    ledger: Option<i64>,
    #[seq_display("INV-{year}-{number:04}")]
    code: String,
    status: String,
}

impl TwoNumbers {
    fn draft(year: i32) -> Self {
        TwoNumbers {
            id: None,
            year,
            number: None,
            ledger: None,
            code: String::new(),
            status: "draft".into(),
        }
    }
}

/// Drafts of `years`, stored with the driver (unnumbered): their `_id`s.
async fn two_number_drafts(
    db: &mongodb::Database,
    years: &[i32],
) -> Vec<mongodb::bson::oid::ObjectId> {
    let drafts: Vec<TwoNumbers> = years.iter().map(|&year| TwoNumbers::draft(year)).collect();
    let collection = db.collection::<TwoNumbers>("later_two");
    let inserted = collection.insert_many(&drafts).await.unwrap();
    (0..drafts.len())
        .map(|at| inserted.inserted_ids[&at].as_object_id().unwrap())
        .collect()
}

/// Every draft of the collection as stored.
async fn two_numbered(db: &mongodb::Database) -> Vec<TwoNumbers> {
    use futures_util::TryStreamExt;
    let collection = db.collection::<TwoNumbers>("later_two");
    collection
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

/// One draft issued: both numbers, the code, the caller's field, in one update; issued
/// again, it keeps them and takes no id. The bulk form numbers the rest in order, both
/// sequences. A draft with a number typed in either field, the caller's fields setting
/// one, and seqid's insert of the type are refused before any id is taken.
#[tokio::test]
async fn a_type_with_two_sequences_numbered_later_numbers_both_in_one_update() {
    let test = test_db("later_two").await;
    let db = shared(&test);
    crate::support::drafts::create_indexes::<TwoNumbers>(&db).await;
    let ids = two_number_drafts(test.db(), &[2026, 2026, 2027, 2026]).await;
    let first = TwoNumbers::number_draft(&db, doc! { "_id": ids[0] })
        .set(doc! { "status": "issued" })
        .await
        .unwrap();
    assert!(first.by_this_call);
    let doc = &first.doc;
    assert_eq!((doc.number, doc.ledger), (Some(1), Some(1)));
    assert_eq!(
        (doc.code.as_str(), doc.status.as_str()),
        ("INV-2026-0001", "issued")
    );
    let again = TwoNumbers::number_draft(&db, doc! { "_id": ids[0] })
        .await
        .unwrap();
    assert!(!again.by_this_call);
    assert_eq!(again.doc.ledger, Some(1));
    assert_eq!(
        TwoNumbers::sequence().stats(&db).ids,
        1,
        "issued again: no id taken"
    );
    let rest = TwoNumbers::number_drafts(&db, doc! {}).await.unwrap();
    let given: Vec<(i32, Option<i64>, Option<i64>)> =
        rest.iter().map(|d| (d.year, d.number, d.ledger)).collect();
    assert_eq!(
        given,
        [
            (2026, Some(2), Some(2)),
            (2027, Some(1), Some(3)),
            (2026, Some(3), Some(4))
        ],
        "in `_id` order, each year's numbers and the ledger's"
    );
    let stored = two_numbered(test.db()).await;
    let codes: Vec<&str> = stored.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(
        codes,
        [
            "INV-2026-0001",
            "INV-2026-0002",
            "INV-2027-0001",
            "INV-2026-0003"
        ]
    );
    // Refused before any id is taken: the counters do not move.
    let counters = || async {
        let number = year_counter(test.db(), "later_two_number", 2026).await;
        let ledger = crate::support::counter_value(test.db(), "later_two_ledger").await;
        (number, ledger)
    };
    let before = counters().await;
    let mut typed = TwoNumbers::draft(2026);
    typed.ledger = Some(99);
    let collection = test.db().collection::<TwoNumbers>("later_two");
    let typed_id = collection.insert_one(&typed).await.unwrap().inserted_id;
    let error = TwoNumbers::number_draft(&db, doc! { "_id": typed_id.clone() })
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::IdAlreadySet { .. })
            && error.sequence().map(|s| s.name) == Some("later_two_ledger"),
        "{error:?}"
    );
    let error = TwoNumbers::number_draft(&db, doc! { "_id": typed_id })
        .set(doc! { "ledger": 7 })
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidOption { option: "set", .. }),
        "{error:?}"
    );
    let error = TwoNumbers::draft(2026).insert(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::NumberedLater { .. }),
        "{error:?}"
    );
    assert_eq!(
        counters().await,
        before,
        "nothing taken by what was refused"
    );
}

/// 12 issuers number the same 8 drafts (two years) at once, through a handle: each
/// draft gets one invoice number and one ledger number, unique per year and across
/// years respectively, every issuer is told the same, one of them that it gave them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn issuers_racing_for_a_draft_with_two_sequences_give_it_one_of_each() {
    let test = test_db("later_two_race").await;
    let db = shared(&test);
    crate::support::drafts::create_indexes::<TwoNumbers>(&db).await;
    let ids = two_number_drafts(test.db(), &[2026, 2027, 2026, 2027, 2026, 2027, 2026, 2027]).await;
    let issuers: Vec<_> = (0..12)
        .map(|_| {
            let (db, ids) = (db.clone(), ids.clone());
            tokio::spawn(async move {
                let mut told = Vec::new();
                for id in ids {
                    let numbered = TwoNumbers::number_draft(&db, doc! { "_id": id })
                        .await
                        .unwrap();
                    told.push((
                        id,
                        numbered.doc.number,
                        numbered.doc.ledger,
                        numbered.by_this_call,
                    ));
                }
                told
            })
        })
        .collect();
    let mut told = Vec::new();
    for issuer in issuers {
        told.extend(issuer.await.unwrap());
    }
    let stored = two_numbered(test.db()).await;
    assert_eq!(stored.len(), 8);
    for doc in &stored {
        let id = doc.id.unwrap();
        let answers: Vec<_> = told.iter().filter(|(at, ..)| *at == id).collect();
        assert_eq!(answers.len(), 12);
        assert!(
            answers
                .iter()
                .all(|(_, number, ledger, _)| (*number, *ledger) == (doc.number, doc.ledger)),
            "every issuer holds the stored numbers: {answers:?} against {doc:?}"
        );
        assert_eq!(
            answers.iter().filter(|(.., by)| *by).count(),
            1,
            "one gave them"
        );
    }
    for year in [2026, 2027] {
        let numbers: BTreeSet<i64> = stored
            .iter()
            .filter(|d| d.year == year)
            .filter_map(|d| d.number)
            .collect();
        assert_eq!(numbers.len(), 4, "{year}: unique");
    }
    let ledgers: BTreeSet<i64> = stored.iter().filter_map(|d| d.ledger).collect();
    assert_eq!(ledgers.len(), 8, "ledger numbers unique across years");
}

/// Two sequences numbered later, both gapless, in the caller's transaction: an aborted
/// issue takes both numbers back, and the next issue takes them again (no gap in either).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, seqid::Document)]
#[seq_id(collection = "later_two_gapless")]
struct TwoGapless {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<mongodb::bson::oid::ObjectId>,
    #[seq_id("later_two_gapless_a", strategy = "gapless", numbered = "later")]
    a: Option<i64>,
    #[seq_id("later_two_gapless_b", strategy = "gapless", numbered = "later")]
    b: Option<i64>,
}

#[tokio::test]
async fn two_gapless_sequences_numbered_later_go_back_together_with_an_abort() {
    let test = test_db("later_two_gapless").await;
    if without_transactions(&test).await {
        return;
    }
    let db = shared(&test);
    crate::support::drafts::create_indexes::<TwoGapless>(&db).await;
    let collection = test.db().collection::<TwoGapless>("later_two_gapless");
    let draft = TwoGapless {
        id: None,
        a: None,
        b: None,
    };
    let inserted = collection.insert_many([&draft, &draft]).await.unwrap();
    let ids: Vec<_> = (0..2)
        .map(|at| inserted.inserted_ids[&at].as_object_id().unwrap())
        .collect();
    let mut session = test.client().start_session().await.unwrap();
    session.start_transaction().await.unwrap();
    let aborted = TwoGapless::number_draft(&db, doc! { "_id": ids[0] })
        .session(&mut session)
        .await
        .unwrap();
    assert_eq!((aborted.doc.a, aborted.doc.b), (Some(1), Some(1)));
    session.abort_transaction().await.unwrap();
    for (at, id) in ids.iter().enumerate() {
        session.start_transaction().await.unwrap();
        let issued = TwoGapless::number_draft(&db, doc! { "_id": *id })
            .session(&mut session)
            .await
            .unwrap();
        session.commit_transaction().await.unwrap();
        let n = at as i64 + 1;
        assert_eq!(
            (issued.doc.a, issued.doc.b),
            (Some(n), Some(n)),
            "taken again"
        );
    }
    for name in ["later_two_gapless_a", "later_two_gapless_b"] {
        assert_eq!(
            crate::support::counter_value(test.db(), name).await,
            Some(2),
            "{name}"
        );
    }
}
