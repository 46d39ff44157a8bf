//! Every error names the true cause: the value as stored, where a number came from, and
//! what an unset id looks like for the field at hand.

use crate::support;
use mongodb::bson::{Bson, Document as BsonDocument, doc};
use seqid::Document;
use seqid::error::ErrorKind;
use seqid_harness::test_db;
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("zero", collection = "plain")]
struct Plain {
    #[serde(rename = "_id")]
    id: i64,
}

#[derive(Serialize, Document)]
#[seq_id("zero", collection = "optional")]
struct Optional {
    #[serde(rename = "_id")]
    id: Option<i64>,
}

#[derive(Serialize, Document)]
#[seq_id("unsigned", collection = "unsigned")]
struct Unsigned {
    #[serde(rename = "_id")]
    id: Option<u64>,
}

async fn set_counter(db: &mongodb::Database, name: &str, seq: impl Into<Bson>) {
    db.collection::<BsonDocument>("counters")
        .update_one(doc! { "_id": name }, doc! { "$set": { "seq": seq.into() } })
        .upsert(true)
        .await
        .unwrap();
}

#[tokio::test]
async fn zero_is_the_unset_marker_of_a_plain_field_not_an_overflow() {
    let db = test_db("messages_zero").await;
    let db = support::shared(&db);
    set_counter(&db, "zero", -1).await;
    let error = Plain { id: 0 }.insert(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::ZeroId { target: "i64", .. }),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(
        text.contains("id 0") && text.contains("reads 0 as unset"),
        "{text}"
    );
    assert!(text.contains("counter { _id: \"zero\" }"), "{text}");
    assert!(!text.contains("does not fit"), "{text}");
    // An Option field holds it: Some(0) is an id like any other.
    set_counter(&db, "zero", -1).await;
    let mut optional = Optional { id: None };
    assert_eq!(optional.insert(&db).await.unwrap(), 0);
    assert_eq!(optional.id, Some(0));
}

#[tokio::test]
async fn an_id_already_set_says_what_unset_looks_like_for_the_field() {
    let db = test_db("messages_unset").await;
    let db = support::shared(&db);
    let error = Unsigned { id: Some(0) }.insert(&db).await.unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::IdAlreadySet {
                value: 0,
                unset: "None",
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("unset id (None)"), "{error}");
    let error = Plain { id: 5 }.insert(&db).await.unwrap_err();
    let text = error.to_string();
    assert!(text.contains("unset id (0)"), "{text}");
    // What to do with an id of one's own: a reserved one given with its token, one from
    // elsewhere through the driver; not `resume_insert`, which would store it.
    assert!(
        text.contains("reserve it with reserve_id and insert with .reserved(token)")
            && text.contains("insert with the driver, then call sync_counter")
            && text.contains(
                "resume_insert is only for a document whose insert ended in OutcomeUnknown"
            ),
        "{text}"
    );
}

/// A document imported with its id, above the counter: the counter's next id meets it,
/// and the error says why and what raises the counter.
#[tokio::test]
async fn a_duplicate_from_an_import_names_sync_counter() {
    let test = test_db("messages_import").await;
    let db = support::shared(&test);
    assert_eq!(Plain { id: 0 }.insert(&db).await.unwrap(), 1);
    test.collection::<BsonDocument>("plain")
        .insert_one(doc! { "_id": 2 })
        .await
        .unwrap();
    let error = Plain { id: 0 }.insert(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::DuplicateKey { id: 2, .. }),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(
        text.contains("ids stored by other means") && text.contains("sync_counter raises it"),
        "{text}"
    );
}

/// (A Double counter from 2^53 on, or one the ids asked for would take there, is refused
/// for its precision, not called "not a whole number": the `counters` and `block` modules.)
#[tokio::test]
async fn a_counter_with_a_fraction_is_called_so() {
    let db = test_db("messages_fraction").await;
    let db = support::shared(&db);
    set_counter(&db, "zero", 2.5).await;
    let error = Plain { id: 0 }.insert(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::CounterNotNumeric { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("not a whole number"), "{error}");
    assert_eq!(support::all_documents(&db, "plain").await.len(), 0);
}

#[tokio::test]
async fn a_huge_document_is_refused_and_the_rest_of_its_batch_stored() {
    #[derive(Serialize, Document)]
    #[seq_id("big", collection = "big")]
    struct Big {
        #[serde(rename = "_id")]
        id: i64,
        body: String,
    }
    let db = test_db("messages_too_large").await;
    let db = support::shared(&db);
    let mut batch = vec![
        Big {
            id: 0,
            body: "small".into(),
        },
        Big {
            id: 0,
            body: "x".repeat(17 * 1024 * 1024),
        },
        Big {
            id: 0,
            body: "small".into(),
        },
    ];
    let error = Big::insert_many(&mut batch, &db).await.unwrap_err();
    let ErrorKind::Bulk(bulk) = error.kind() else {
        panic!("expected Bulk, got {error:?}")
    };
    // seqid sizes the documents itself and sends the others: the driver would refuse the
    // whole command for one document.
    assert_eq!(bulk.failed.len(), 1, "{error}");
    assert_eq!((bulk.failed[0].index, bulk.failed[0].code), (1, None));
    assert!(
        bulk.failed[0]
            .message
            .contains("above the 16777216-byte limit"),
        "{error}"
    );
    assert!(error.to_string().contains("not sent"), "{error}");
    assert_eq!(bulk.inserted, vec![0, 2], "{error}");
    assert_eq!(batch[1].id, 0, "not sent: its id is unset");
    let stored: Vec<i64> = support::all_documents(&db, "big")
        .await
        .iter()
        .map(|d| d.get("_id").and_then(support::integer).unwrap())
        .collect();
    assert_eq!(stored, vec![batch[0].id, batch[2].id]);
}

#[tokio::test]
async fn an_optimistic_overflow_names_the_id_it_came_from() {
    #[derive(Serialize, Document)]
    #[seq_id("huge", collection = "huge", strategy = "optimistic")]
    struct Ticket {
        #[serde(rename = "_id")]
        id: i64,
    }
    let db = test_db("messages_huge").await;
    let db = support::shared(&db);
    db.collection::<BsonDocument>("huge")
        .insert_one(doc! { "_id": 1e300 })
        .await
        .unwrap();
    let error = Ticket { id: 0 }.insert(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Overflow { target: "i64", .. }),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(
        text.contains("largest numeric _id in `huge`") && text.contains("1e300"),
        "{text}"
    );
}

/// `main` returning `Box<dyn Error>` prints an error with `Debug`: the sequence shows as
/// its name, collection and field, not its whole declaration (layout, display code, the
/// sequence again inside it).
#[tokio::test]
async fn an_errors_debug_names_its_sequence_in_one_line() {
    #[derive(Serialize, Document)]
    #[seq_id(collection = "invoices")]
    struct Invoice {
        #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
        id: Option<mongodb::bson::oid::ObjectId>,
        tenant: String,
        #[seq_id("invoice", scope = "tenant", layout = "mongoose-sequence")]
        number: i64,
        #[seq_display("{tenant}/{number}")]
        code: String,
    }
    let db = test_db("messages_debug").await;
    let db = support::shared(&db);
    // A tenant holding the code's separator: refused before any id is taken.
    let mut invoice = Invoice {
        id: None,
        tenant: "acme/north".into(),
        number: 0,
        code: String::new(),
    };
    let error = invoice.insert(&db).await.unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::InvalidCode { .. }),
        "{error:?}"
    );
    let debug = format!("{error:?}");
    assert!(
        debug.contains(
            r#"sequence: Sequence { name: "invoice", collection: "invoices", field: "number", .. }"#
        ),
        "{debug}"
    );
    assert!(
        debug
            .contains(r#"display: DisplayCode { field: "code", format: "{tenant}/{number}", .. }"#),
        "{debug}"
    );
    for dumped in ["layout", "Layout", "mongoose", "strategy", "counters"] {
        assert!(!debug.contains(dumped), "{dumped:?} in {debug}");
    }
    let boxed: Box<dyn std::error::Error> = Box::new(error);
    assert!(format!("{boxed:?}").len() < 400, "{boxed:?}");
}
