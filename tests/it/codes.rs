//! Display codes (issue 27): a `String` field the insert fills from the document's numbers
//! and fields, `#[seq_display("INV-{year}-{number:04}")]`, stored in the same write. The
//! yearly invoice series of the issue, written by many tasks at once; a number wider than
//! its width; values that would make codes ambiguous, refused before any id is taken; a
//! code set by the caller; a failed insert, which empties the code with the ids; a resumed
//! insert, which writes the code of the id it carries; and a document with a code of each
//! of its two sequences. The multi-process, cancellation and fault suites run models with
//! codes too, checked by `ledger::check_codes`.

use std::collections::{BTreeMap, BTreeSet};

use mongodb::bson::oid::ObjectId;
use mongodb::bson::{Document as BsonDocument, doc};
use seqid::error::ErrorKind;
use seqid::{Document, Model};
use seqid_harness::test_db;
use serde::{Deserialize, Serialize};

use crate::support::{all_documents, one_to, shared};

/// The issue's invoice series: numbered per year, coded `INV-<year>-<number, 4 digits>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, seqid::Document)]
#[seq_id(collection = "invoices")]
struct Invoice {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    year: i32,
    #[seq_id("invoice", scope = "year")]
    number: i64,
    #[seq_display("INV-{year}-{number:04}")]
    code: String,
    total: i64,
}

/// An invoice of `year`, all equal but for the ids the insert gives it.
fn invoice(year: i32) -> Invoice {
    Invoice {
        id: None,
        year,
        number: 0,
        code: String::new(),
        total: 4200,
    }
}

/// Orders numbered per shop, coded `<shop>-<number>`: a shop's name must not hold `-`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, seqid::Document)]
#[seq_id(collection = "orders")]
struct Order {
    shop: String,
    #[seq_id("order", scope = "shop")]
    number: i64,
    #[seq_display("{shop}-{number}")]
    code: String,
}

fn order(shop: &str) -> Order {
    Order {
        shop: shop.into(),
        number: 0,
        code: String::new(),
    }
}

const YEARS: [i32; 3] = [2025, 2026, 2027];

/// 16 tasks through one handle and 8 through bare databases write invoices of three years
/// at once, one per call and in batches of three: every year numbered from 1 with each
/// number once, every code the one its year and number write, none twice, and each
/// invoice found by its code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full suite"]
async fn a_yearly_invoice_series_restarts_every_year_and_never_repeats_a_code() {
    let test = test_db("codes_yearly").await;
    let db = shared(&test);
    assert_eq!(
        Invoice::create_indexes(&db).await.unwrap(),
        ["year_1_number_1", "code_1"]
    );
    let mut tasks = Vec::new();
    for task in 0..24usize {
        let (handle, bare) = (db.clone(), test.db().clone());
        tasks.push(tokio::spawn(async move {
            let mut written = Vec::new();
            for round in 0..6usize {
                let year = YEARS[(task + round) % YEARS.len()];
                let mut batch = match round % 2 {
                    0 => vec![invoice(year)],
                    _ => vec![invoice(year), invoice(year), invoice(year)],
                };
                let result = match (task < 16, batch.len()) {
                    (true, 1) => batch[0].insert(&handle).await.map(|_| ()),
                    (true, _) => Invoice::insert_many(&mut batch, &handle).await.map(drop),
                    (false, 1) => batch[0].insert(&bare).await.map(|_| ()),
                    (false, _) => Invoice::insert_many(&mut batch, &bare).await.map(drop),
                };
                result.unwrap();
                written.extend(batch);
            }
            written
        }));
    }
    let mut written = Vec::new();
    for task in tasks {
        written.extend(task.await.unwrap());
    }
    assert_eq!(written.len(), 24 * 12);
    let mut numbers: BTreeMap<i32, BTreeSet<i64>> = BTreeMap::new();
    let mut codes = BTreeSet::new();
    for invoice in &written {
        assert_eq!(
            invoice.code,
            format!("INV-{}-{:04}", invoice.year, invoice.number)
        );
        assert!(
            numbers
                .entry(invoice.year)
                .or_default()
                .insert(invoice.number),
            "{invoice:?}: its number twice"
        );
        assert!(
            codes.insert(invoice.code.clone()),
            "{invoice:?}: its code twice"
        );
    }
    for (year, numbers) in &numbers {
        // A handle's counter hands each number out once, and the counters strategy
        // leaves no gap but for SecantusDB's unanswered first upsert (see `assert_dense`).
        assert_eq!(numbers.first(), Some(&1), "{year} starts again at 1");
        assert!(numbers.len() >= 90, "{year}: {} invoices", numbers.len());
    }
    // Stored as the callers hold them, each found by its code.
    let stored: Vec<Invoice> = all_documents(&test, "invoices")
        .await
        .into_iter()
        .map(|d| mongodb::bson::from_document(d).unwrap())
        .collect();
    let held: BTreeMap<ObjectId, &Invoice> = written.iter().map(|i| (i.id.unwrap(), i)).collect();
    assert_eq!(stored.len(), written.len());
    for invoice in &stored {
        assert_eq!(Some(&invoice), held.get(&invoice.id.unwrap()));
    }
    for invoice in &written {
        let found = Invoice::find_by_code(&db, &invoice.code).await.unwrap();
        assert_eq!(found.as_ref(), Some(invoice));
    }
    assert_eq!(
        Invoice::find_by_code(&db, "INV-2026-9999").await.unwrap(),
        None
    );
}

/// `{number:04}` pads to four digits and never cuts: invoice 10000 is `INV-2026-10000`.
#[tokio::test]
async fn a_number_wider_than_its_width_is_written_whole() {
    let test = test_db("codes_wide").await;
    let db = shared(&test);
    Invoice::sequence()
        .set_counter(&db, 9998)
        .scope(2026)
        .await
        .unwrap();
    let mut codes = Vec::new();
    for _ in 0..2 {
        let mut one = invoice(2026);
        one.insert(&db).await.unwrap();
        codes.push(one.code);
    }
    assert_eq!(codes, ["INV-2026-9999", "INV-2026-10000"]);
    let mut early = invoice(2027);
    early.insert(&db).await.unwrap();
    assert_eq!(early.code, "INV-2027-0001");
}

/// A shop whose name holds `-` would make `north-east` + `1` read as `north` + `east-1`
/// would: refused with a typed error naming the sequence, the value and the format,
/// before any id is taken, by `insert` and by `insert_many` (the whole call).
#[tokio::test]
async fn a_value_that_would_make_codes_ambiguous_is_refused_before_any_id_is_taken() {
    let test = test_db("codes_ambiguous").await;
    let db = shared(&test);
    let mut refused = order("north-east");
    let error = refused.insert(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidCode { .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "sequence `order`: the code \"{shop}-{number}\" cannot be written into `code`: \
         `shop` = \"north-east\" contains `-`, the character that ends `{shop}` in the \
         code, so that two documents' codes could read alike; nothing was reserved or \
         written"
    );
    assert_eq!(refused, order("north-east"), "the document as it was");
    let mut batch = vec![order("north"), order("north-east"), order("south")];
    let error = Order::insert_many(&mut batch, &db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidCode { .. }),
        "{error:?}"
    );
    assert!(batch.iter().all(|o| o.number == 0 && o.code.is_empty()));
    for shop in ["north", "north-east", "south"] {
        assert_eq!(
            Order::sequence()
                .last_reserved(&db)
                .scope(shop)
                .await
                .unwrap(),
            None
        );
    }
    assert!(all_documents(&test, "orders").await.is_empty());
    // Without the separator, the same shops' orders go in.
    let mut fine = vec![order("north"), order("north"), order("south_east")];
    Order::insert_many(&mut fine, &db).await.unwrap();
    let codes: Vec<&str> = fine.iter().map(|o| o.code.as_str()).collect();
    assert_eq!(codes, ["north-1", "north-2", "south_east-1"]);
}

/// `insert` writes the code with the id: one the caller set is refused, as an id is, and
/// left as it was.
#[tokio::test]
async fn a_code_set_by_the_caller_is_refused() {
    let test = test_db("codes_set").await;
    let db = shared(&test);
    let mut set = Invoice {
        code: "INV-2026-0042".into(),
        ..invoice(2026)
    };
    let error = set.insert(&db).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "sequence `invoice`: the code \"INV-{year}-{number:04}\" cannot be written into \
         `code`: `code` = \"INV-2026-0042\" is set already: insert writes the code with the \
         id, into an empty field; resume_insert finishes an insert whose outcome was unknown"
    );
    assert_eq!((set.number, set.code.as_str()), (0, "INV-2026-0042"));
    let mut batch = vec![invoice(2026), set.clone()];
    let error = Invoice::insert_many(&mut batch, &db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidCode { .. }),
        "{error:?}"
    );
    assert_eq!(
        Invoice::sequence()
            .last_reserved(&db)
            .scope(2026)
            .await
            .unwrap(),
        None
    );
}

/// The database holds the guarantee too: a code stored by other means (an import that
/// wrote its own codes) is refused by the unique index on the field, and the document the
/// server refused is not stored: its ids and its code are emptied together, so that it
/// can be inserted again as it was.
#[tokio::test]
async fn the_unique_index_refuses_a_code_stored_by_other_means() {
    let test = test_db("codes_refused").await;
    let db = shared(&test);
    Invoice::create_indexes(&db).await.unwrap();
    invoice(2026).insert(&db).await.unwrap();
    // Invoice 99 of 2026 was imported under the code seqid gives number 2, its counter
    // never told.
    test.collection::<BsonDocument>("invoices")
        .insert_one(doc! { "year": 2026, "number": 99_i64, "code": "INV-2026-0002", "total": 1 })
        .await
        .unwrap();
    let mut refused = invoice(2026);
    let error = refused.insert(&db).await.unwrap_err();
    let ErrorKind::DuplicateKey { id, index, .. } = error.kind() else {
        panic!("expected DuplicateKey, got {error:?}");
    };
    assert_eq!(*id, 2);
    // Where the server names the index (MongoDB and SecantusDB do; nx-27017 does not).
    if let Some(index) = index {
        assert_eq!(&**index, "code_1", "{error}");
    }
    assert_eq!(refused, invoice(2026), "ids and code emptied together");
    Invoice::sequence()
        .sync_counter(&db)
        .scope(2026)
        .await
        .unwrap();
    refused.insert(&db).await.unwrap();
    assert_eq!(refused.code, "INV-2026-0100");
}

/// A document that carries its ids (an insert whose outcome was unknown) is resumed with
/// the code of those ids: written if the field was emptied meanwhile, and the same code
/// when sent again.
#[tokio::test]
async fn a_resumed_insert_writes_the_code_of_the_ids_it_carries() {
    let test = test_db("codes_resume").await;
    let db = shared(&test);
    Invoice::create_indexes(&db).await.unwrap();
    let mut carried = Invoice {
        id: Some(ObjectId::new()),
        number: 7,
        ..invoice(2026)
    };
    carried.resume_insert(&db).await.unwrap();
    assert_eq!(carried.code, "INV-2026-0007");
    let stored = Invoice::find_by_code(&db, "INV-2026-0007").await.unwrap();
    assert_eq!(stored.as_ref(), Some(&carried));
    // Sent again, as after a second lost answer: the same document, found as its own.
    let mut again = carried.clone();
    again.resume_insert(&db).content_is_unique().await.unwrap();
    assert_eq!(again, carried);
    let mut many = vec![
        Invoice {
            id: Some(ObjectId::new()),
            number: 8,
            ..invoice(2026)
        },
        invoice(2027),
    ];
    Invoice::resume_insert_many(&mut many, &db).await.unwrap();
    let codes: Vec<&str> = many.iter().map(|i| i.code.as_str()).collect();
    assert_eq!(codes, ["INV-2026-0008", "INV-2027-0001"]);
}

/// The tracker's issue with a code of each sequence: a reference from the global `_id`
/// and a code per repo. Both written by one insert, both indexed, each found by its own
/// finder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, seqid::Document)]
#[seq_id(
    "coded_issue_id",
    collection = "coded_issues",
    strategy = "block",
    block_size = 5
)]
struct Issue {
    #[serde(rename = "_id")]
    id: i64,
    repo: String,
    #[seq_id("coded_issue_number", scope = "repo", strategy = "optimistic")]
    number: i64,
    #[seq_display("{repo}#{number}")]
    code: String,
    #[seq_display("ISS-{id:05}")]
    reference: String,
}

#[tokio::test]
async fn each_sequence_may_have_a_code_of_its_own() {
    let test = test_db("codes_several").await;
    let db = shared(&test);
    assert_eq!(
        Issue::create_indexes(&db).await.unwrap(),
        ["repo_1_number_1", "_id_", "code_1", "reference_1"]
    );
    let issue = |repo: &str| Issue {
        id: 0,
        repo: repo.into(),
        number: 0,
        code: String::new(),
        reference: String::new(),
    };
    let mut first = issue("seqid");
    first.insert(&db).await.unwrap();
    let mut rest = vec![issue("serde"), issue("seqid"), issue("serde")];
    Issue::insert_many(&mut rest, &db).await.unwrap();
    let all: Vec<Issue> = std::iter::once(first).chain(rest).collect();
    let codes: Vec<(&str, &str)> = all
        .iter()
        .map(|i| (i.code.as_str(), i.reference.as_str()))
        .collect();
    assert_eq!(
        codes,
        [
            ("seqid#1", "ISS-00001"),
            ("serde#1", "ISS-00002"),
            ("seqid#2", "ISS-00003"),
            ("serde#2", "ISS-00004"),
        ]
    );
    for issue in &all {
        let by_code = Issue::find_by_code(&db, &issue.code).await.unwrap();
        let by_reference = Issue::find_by_reference(&db, &issue.reference)
            .await
            .unwrap();
        assert_eq!(
            (by_code.as_ref(), by_reference.as_ref()),
            (Some(issue), Some(issue))
        );
    }
    assert_eq!(
        Issue::DISPLAYS
            .iter()
            .map(|d| d.sequence.name)
            .collect::<Vec<_>>(),
        ["coded_issue_number", "coded_issue_id"]
    );
    let ids: BTreeSet<i64> = all.iter().map(|i| i.id).collect();
    assert_eq!(ids, one_to(4));
}
