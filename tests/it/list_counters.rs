//! `list_counters` (issue 39): every counter of a sequence in one call, whatever its layout
//! keeps the scope in, with what this process holds of each and the largest number stored.

use mongodb::bson::oid::ObjectId;
use mongodb::bson::{Document as BsonDocument, doc};
use seqid::{CounterState, Document};
use seqid_harness::test_db;
use serde::Serialize;

use crate::support::models::{CountedDoc, Model, PROJECTS, ScopedBlock, project_of};
use crate::support::shared;

/// Writes `count` documents of `ScopedBlock` (blocks of 10, the `n`-th in project
/// `p{n % 4}`), then lists: one counter per project, each 10 reserved, the rest of its
/// block held by the handle and none through a bare database, the largest number stored.
#[tokio::test]
async fn a_scoped_block_sequence_lists_each_scope_with_what_this_process_holds() {
    let test = test_db("list_block").await;
    let db = shared(&test);
    let count = 10;
    for n in 0..count {
        ScopedBlock::make("seqid", n).insert(&db).await.unwrap();
    }
    // Made by another writer, by hand: listed; a look-alike of another sequence is not.
    let counters = test.collection::<BsonDocument>("counters");
    counters
        .insert_many([
            doc! { "_id": r#"["scoped_block","p9"]"#, "seq": 30 },
            doc! { "_id": r#"["scoped_blockx","p0"]"#, "seq": 7 },
            doc! { "_id": "scoped_block", "seq": 8 },
        ])
        .await
        .unwrap();
    let listed = ScopedBlock::sequence().list_counters(&db).await.unwrap();
    let stored_in = |p: u32| (0..count).filter(|n| n % PROJECTS == p).count() as i64;
    let mut expected: Vec<CounterStateSeen> = (0..PROJECTS)
        .map(|p| CounterStateSeen {
            scope: doc! { "project": project_of(p) },
            last_reserved: Some(10),
            held_here: 10 - stored_in(p) as u64,
            next_held: Some(stored_in(p) + 1),
            largest_stored: Some(stored_in(p)),
        })
        .collect();
    expected.push(CounterStateSeen {
        scope: doc! { "project": "p9" },
        last_reserved: Some(30),
        held_here: 0,
        next_held: None,
        largest_stored: None,
    });
    assert_eq!(seen(&listed), expected);
    assert!(listed.iter().all(CounterState::strategy_reserves_ahead));
    let shown = listed[0].to_string();
    assert_eq!(
        shown,
        format!(
            "{{ \"project\": \"p0\" }}: last reserved 10, {} held here (next {}), largest stored {}",
            10 - stored_in(0),
            stored_in(0) + 1,
            stored_in(0)
        )
    );

    // A bare database keeps nothing; without the largest numbers, one query in all.
    let bare = ScopedBlock::sequence()
        .list_counters(test.db())
        .without_largest_stored()
        .await
        .unwrap();
    for (state, listed) in bare.iter().zip(&listed) {
        assert_eq!(
            (&state.scope, state.last_reserved, state.held_here),
            (&listed.scope, listed.last_reserved, 0)
        );
        assert_eq!((state.next_held, state.largest_stored), (None, None));
    }
    assert_eq!(bare.len(), listed.len());
}

/// An unscoped counters sequence: one counter, the last id handed out, which is the
/// largest stored.
#[tokio::test]
async fn an_unscoped_counter_lists_its_last_id() {
    let test = test_db("list_counted").await;
    let db = shared(&test);
    assert!(
        CountedDoc::sequence()
            .list_counters(&db)
            .await
            .unwrap()
            .is_empty()
    );
    for n in 0..3 {
        CountedDoc::make("seqid", n).insert(&db).await.unwrap();
    }
    let listed = CountedDoc::sequence().list_counters(&db).await.unwrap();
    assert_eq!(
        seen(&listed),
        [CounterStateSeen {
            scope: doc! {},
            last_reserved: Some(3),
            held_here: 0,
            next_held: None,
            largest_stored: Some(3),
        }]
    );
    assert!(!listed[0].strategy_reserves_ahead());
    assert_eq!(listed[0].to_string(), "last reserved 3, largest stored 3");
}

#[derive(Serialize, Document)]
#[seq_id(collection = "ledgers")]
struct Ledger {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    tenant: ObjectId,
    year: i32,
    #[seq_id("entry", scope = ["tenant", "year"], start = 100, step = 10)]
    number: i64,
}

#[derive(Serialize, Document)]
#[seq_id(collection = "tickets")]
struct Ticket {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    project: String,
    #[seq_id(
        "ticket",
        scope = "project",
        layout = "mongoose-sequence",
        counters = "ticket_counters"
    )]
    number: i64,
}

#[derive(Serialize, Document)]
#[seq_id("Book", collection = "books", layout = "mongoose-auto-increment")]
struct Book {
    #[serde(rename = "_id")]
    id: Option<i64>,
}

/// Scopes of two fields, an ObjectId among them, read back from the counter's `_id`; a
/// step and a start, in the sequence's ids; and the layouts that find a counter by
/// fields, scoped (mongoose-sequence's `reference_value`) and not.
#[tokio::test]
async fn every_layout_lists_its_counters_by_scope() {
    let test = test_db("list_layouts").await;
    let db = shared(&test);
    let (acme, globex) = (ObjectId::new(), ObjectId::new());
    for (tenant, year, count) in [(acme, 2026, 2), (acme, 2027, 1), (globex, 2026, 3)] {
        for _ in 0..count {
            let mut entry = Ledger {
                id: None,
                tenant,
                year,
                number: 0,
            };
            entry.insert(&db).await.unwrap();
        }
    }
    let mut listed: Vec<(BsonDocument, Option<i64>, Option<i64>)> = Ledger::sequence()
        .list_counters(&db)
        .await
        .unwrap()
        .into_iter()
        .map(|state| (state.scope, state.last_reserved, state.largest_stored))
        .collect();
    listed.sort_by_key(|(scope, ..)| scope.to_string());
    let mut expected = vec![
        (
            doc! { "tenant": acme, "year": 2026_i64 },
            Some(110),
            Some(110),
        ),
        (
            doc! { "tenant": acme, "year": 2027_i64 },
            Some(100),
            Some(100),
        ),
        (
            doc! { "tenant": globex, "year": 2026_i64 },
            Some(120),
            Some(120),
        ),
    ];
    expected.sort_by_key(|(scope, ..)| scope.to_string());
    if crate::support::tools::nx() {
        // Work-around for nx-27017 0.8.1 only: it finds no document by equality on an
        // ObjectId field other than `_id` (probed: `{ tenant: <ObjectId> }` matches
        // nothing, stored as it was), so the largest number of a scope holding an
        // ObjectId is not found there. The scopes and counters are compared all the same.
        for (_, _, largest) in &mut expected {
            *largest = None;
        }
    }
    assert_eq!(listed, expected);

    // nx-27017 0.8.1 cannot match a field against a subdocument (it reads its keys as
    // operators), so no counter scoped the way mongoose-sequence scopes it is found there
    // (see `layouts`): the scoped mongoose-sequence layout is listed on other servers.
    if !crate::support::tools::nx() {
        for project in ["apollo", "gemini", "apollo"] {
            let mut ticket = Ticket {
                id: None,
                project: project.into(),
                number: 0,
            };
            ticket.insert(&db).await.unwrap();
        }
        let mut tickets: Vec<(BsonDocument, Option<i64>)> = Ticket::sequence()
            .list_counters(&db)
            .await
            .unwrap()
            .into_iter()
            .map(|state| (state.scope, state.last_reserved))
            .collect();
        tickets.sort_by_key(|(scope, _)| scope.to_string());
        assert_eq!(
            tickets,
            [
                (doc! { "project": "apollo" }, Some(2)),
                (doc! { "project": "gemini" }, Some(1)),
            ]
        );
    }

    for _ in 0..2 {
        Book { id: None }.insert(&db).await.unwrap();
    }
    let books = Book::sequence().list_counters(&db).await.unwrap();
    // mongoose-auto-increment starts at 0: ids 0 and 1.
    assert_eq!(
        seen(&books),
        [CounterStateSeen {
            scope: doc! {},
            last_reserved: Some(1),
            held_here: 0,
            next_held: None,
            largest_stored: Some(1),
        }]
    );
}

/// A [`CounterState`]'s public fields, to compare whole.
#[derive(Debug, PartialEq)]
struct CounterStateSeen {
    scope: BsonDocument,
    last_reserved: Option<i64>,
    held_here: u64,
    next_held: Option<i64>,
    largest_stored: Option<i64>,
}

fn seen(listed: &[CounterState]) -> Vec<CounterStateSeen> {
    listed
        .iter()
        .map(|state| CounterStateSeen {
            scope: state.scope.clone(),
            last_reserved: state.last_reserved,
            held_here: state.held_here,
            next_held: state.next_held,
            largest_stored: state.largest_stored,
        })
        .collect()
}
