//! Several sequences in one document (issue 26): the tracker's `Issue`, a global `_id` and a
//! number per repo. Every id filled by one insert and written once; reservations per
//! sequence and scope, once per call; failures that leave every id unset together or keep
//! them together; a duplicate number named by its own sequence; the typed handle of each
//! sequence; and a transaction holding two gapless sequences.

use std::collections::BTreeSet;

use mongodb::bson::{Document as BsonDocument, doc};
use seqid::error::ErrorKind;
use seqid::{Document, Error};
use seqid_harness::test_db;
use serde::{Deserialize, Serialize};

use crate::support::transactions::without_transactions;
use crate::support::{all_documents, integer, one_to, shared};

/// The issue's tracker, verbatim but for the block size (10: several blocks per run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, seqid::Document)]
#[seq_id("issue_id", collection = "issues")]
struct Issue {
    #[serde(rename = "_id")]
    id: i64,
    repo: String,
    #[seq_id("issue_number", scope = "repo", strategy = "block", block_size = 10)]
    number: i64,
    title: String,
}

fn issue(repo: &str, title: &str) -> Issue {
    Issue {
        id: 0,
        repo: repo.into(),
        number: 0,
        title: title.into(),
    }
}

/// The stored issues as (`_id`, repo, number, title).
async fn stored(db: &mongodb::Database) -> BTreeSet<(i64, String, i64, String)> {
    all_documents(db, "issues")
        .await
        .into_iter()
        .map(|d| {
            let int = |key| d.get(key).and_then(integer).unwrap();
            let text = |key| d.get_str(key).unwrap().to_owned();
            (int("_id"), text("repo"), int("number"), text("title"))
        })
        .collect()
}

fn rows(issues: &[Issue]) -> BTreeSet<(i64, String, i64, String)> {
    issues
        .iter()
        .map(|i| (i.id, i.repo.clone(), i.number, i.title.clone()))
        .collect()
}

#[tokio::test]
async fn insert_and_insert_many_fill_every_sequence_and_write_once() {
    let test = test_db("several_fill").await;
    let db = shared(&test);
    Issue::create_indexes(&db).await.unwrap();
    let mut all = Vec::new();
    for (repo, title) in [("seqid", "a"), ("serde", "b"), ("seqid", "c")] {
        let mut one = issue(repo, title);
        let id = one.insert(&db).await.unwrap();
        assert_eq!(id, one.id);
        all.push(one);
    }
    let mut many: Vec<Issue> = (0..25)
        .map(|n| issue(["seqid", "serde", "tokio"][n % 3], &format!("m{n}")))
        .collect();
    let ids = Issue::insert_many(&mut many, &db).await.unwrap();
    assert_eq!(ids, many.iter().map(|i| i.id).collect::<Vec<_>>());
    all.extend(many);
    assert_eq!(
        stored(&test).await,
        rows(&all),
        "stored as the callers hold them"
    );
    let ids: BTreeSet<i64> = all.iter().map(|i| i.id).collect();
    assert_eq!(ids, one_to(28));
    for repo in ["seqid", "serde", "tokio"] {
        let numbers: BTreeSet<i64> = all
            .iter()
            .filter(|i| i.repo == repo)
            .map(|i| i.number)
            .collect();
        assert_eq!(
            numbers,
            one_to(numbers.len()),
            "{repo}: dense within its blocks"
        );
    }
    // The typed handle of each sequence: its counter, and finds by its numbers.
    let numbers = Issue::number_sequence();
    assert_eq!(
        numbers.last_reserved(&db).scope("tokio").await.unwrap(),
        // 8 numbers from a block of 10 would leave 2, below half a block: the next block
        // comes in the same round trip.
        Some(20)
    );
    let found = numbers.find(&db, 2).scope("serde").await.unwrap().unwrap();
    assert!(found.repo == "serde" && found.number == 2);
    assert_eq!(
        Issue::id_sequence().last_reserved(&db).await.unwrap(),
        Issue::sequence().last_reserved(&db).await.unwrap()
    );
    assert_eq!(
        Issue::sequence().find(&db, found.id).await.unwrap(),
        Some(found)
    );
    assert_eq!(
        Issue::create_indexes(&db).await.unwrap(),
        ["_id_", "repo_1_number_1"]
    );
}

/// One `$inc` per counter per scope for `insert_many`, out together with the primary's.
#[tokio::test]
async fn insert_many_reserves_each_sequence_once_per_scope() {
    let test = test_db("several_once").await;
    let db = shared(&test);
    let mut many: Vec<Issue> = (0..30)
        .map(|n| issue(["a", "b", "c"][n % 3], "x"))
        .collect();
    Issue::insert_many(&mut many, &db).await.unwrap();
    // The primary: one `$inc: 30`; the numbers: one block of 10 per repo.
    assert_eq!(Issue::sequence().stats(&db).reservations, 1);
    assert_eq!(Issue::sequence().stats(&db).ids, 30);
    let numbers = Issue::number_sequence().stats(&db);
    assert_eq!((numbers.reservations, numbers.ids), (3, 30));
    assert_eq!(
        all_documents(&test, "counters").await.len(),
        4,
        "one counter for `_id`, one per repo"
    );
}

/// A number another writer holds: the document is refused, its ids all unset together,
/// and the error names the number's sequence and index where the server names it.
#[tokio::test]
async fn a_duplicate_number_unsets_every_id_and_names_its_sequence() {
    let test = test_db("several_duplicate").await;
    let db = shared(&test);
    Issue::create_indexes(&db).await.unwrap();
    issue("seqid", "first").insert(&db).await.unwrap();
    // Another writer took number 2 of repo `seqid` by hand, the counters untold.
    test.collection::<BsonDocument>("issues")
        .insert_one(doc! { "_id": -1_i64, "repo": "seqid", "number": 2_i64, "title": "hand" })
        .await
        .unwrap();
    let mut taken = issue("seqid", "refused");
    let error = taken.insert(&db).await.unwrap_err();
    match error.kind() {
        ErrorKind::DuplicateKey { index, .. } => {
            // nx-27017 does not name the index (SQLite's message), so the duplicate cannot
            // be told apart from the primary's there; MongoDB and SecantusDB name it.
            if index.as_deref() == Some("repo_1_number_1") {
                assert_eq!(error.sequence().map(|s| s.name), Some("issue_number"));
            }
        }
        other => panic!("expected a duplicate key, got {other:?}"),
    }
    assert_eq!((taken.id, taken.number), (0, 0), "every id unset together");
    // The next one goes on: both sequences moved past what was lost.
    let mut next = issue("seqid", "next");
    next.insert(&db).await.unwrap();
    assert_eq!(next.number, 3);
    assert_eq!(stored(&test).await.len(), 3);
}

/// An id the caller set, of any sequence, is refused before anything is reserved.
#[tokio::test]
async fn a_number_set_by_the_caller_is_refused_and_kept() {
    let test = test_db("several_set").await;
    let db = shared(&test);
    let mut set = issue("seqid", "set");
    set.number = 7;
    let error = set.insert(&db).await.unwrap_err();
    match error.kind() {
        ErrorKind::IdAlreadySet { value, .. } => {
            assert_eq!(
                (error.sequence().map(|s| s.name), *value),
                (Some("issue_number"), 7)
            );
        }
        other => panic!("expected IdAlreadySet, got {other:?}"),
    }
    let mut batch = vec![issue("seqid", "ok"), set.clone()];
    assert!(matches!(
        Issue::insert_many(&mut batch, &db)
            .await
            .map_err(Error::into_kind),
        Err(ErrorKind::IdAlreadySet { .. })
    ));
    assert_eq!((batch[0].id, batch[0].number, batch[1].number), (0, 0, 7));
    assert_eq!(
        Issue::sequence().last_reserved(&db).await.unwrap(),
        None,
        "nothing reserved"
    );
    assert!(all_documents(&test, "issues").await.is_empty());
}

/// An invoice numbered without gaps twice over, per year and across years: two gapless
/// sequences in the caller's transaction; an aborted transaction takes both back.
#[derive(Debug, Serialize, Deserialize, seqid::Document)]
#[seq_id("invoice_id", collection = "invoices", strategy = "gapless")]
struct Invoice {
    #[serde(rename = "_id")]
    id: i64,
    year: i32,
    #[seq_id("invoice_number", scope = "year", strategy = "gapless")]
    number: i64,
    #[seq_id("invoice_audit")]
    audit: i64,
}

#[tokio::test]
async fn gapless_sequences_share_the_callers_transaction() {
    let test = test_db("several_gapless").await;
    if without_transactions(&test).await {
        return;
    }
    for collection in ["invoices", "counters"] {
        test.create_collection(collection).await.unwrap();
    }
    let db = shared(&test);
    let mut outside = Invoice {
        id: 0,
        year: 2026,
        number: 0,
        audit: 0,
    };
    assert!(matches!(
        outside.insert(&db).await.map_err(Error::into_kind),
        Err(ErrorKind::TransactionRequired { .. })
    ));
    assert_eq!((outside.id, outside.number, outside.audit), (0, 0, 0));
    let mut session = test.client().start_session().await.unwrap();
    for (year, commit) in [(2026, true), (2026, false), (2027, true), (2026, true)] {
        session.start_transaction().await.unwrap();
        let mut invoice = Invoice {
            id: 0,
            year,
            number: 0,
            audit: 0,
        };
        invoice.insert(&db).session(&mut session).await.unwrap();
        match commit {
            true => session.commit_transaction().await.unwrap(),
            false => session.abort_transaction().await.unwrap(),
        }
    }
    let mut rows: Vec<(i64, i64, i64)> = all_documents(&test, "invoices")
        .await
        .iter()
        .map(|d| {
            let int = |key| d.get(key).and_then(integer).unwrap();
            (int("_id"), int("year"), int("number"))
        })
        .collect();
    rows.sort();
    // The aborted transaction took back its `_id` and its number; the counters' `audit`
    // was taken outside it (a gap, as documented).
    assert_eq!(rows, [(1, 2026, 1), (2, 2027, 1), (3, 2026, 2)]);
    let audits: BTreeSet<i64> = all_documents(&test, "invoices")
        .await
        .iter()
        .map(|d| d.get("audit").and_then(integer).unwrap())
        .collect();
    assert_eq!(audits.len(), 3);
    assert_eq!(
        Invoice::audit_sequence().last_reserved(&db).await.unwrap(),
        Some(4)
    );
}
