//! Several sequences in one document: the issue tracker's `Issue` (a global `_id` and a
//! number per repo), and which sequence is primary in each shape.
use mongodb::bson::oid::ObjectId;
use seqid::{Model, Strategy, kind};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, seqid::Document)]
#[seq_id("issue_id", collection = "issues")]
struct Issue {
    #[serde(rename = "_id")]
    id: i64,
    repo: String,
    #[seq_id("issue_number", scope = "repo", strategy = "block")]
    number: i64,
    title: String,
}

#[test]
fn the_id_sequence_is_primary_and_the_field_ones_follow() {
    assert_eq!(Issue::SEQUENCE.name, "issue_id");
    assert_eq!(Issue::SEQUENCE.field, "_id");
    assert_eq!(Issue::OTHERS.len(), 1);
    let number = Issue::OTHERS[0];
    assert_eq!(number.name, "issue_number");
    assert_eq!(number.field, "number");
    assert_eq!(number.scope, ["repo"]);
    assert_eq!(number.collection, "issues");
    assert!(matches!(
        number.strategy,
        Strategy::Block {
            block_size: 100,
            ..
        }
    ));

    let mut issue = Issue {
        id: 0,
        repo: "seqid".into(),
        number: 0,
        title: "two sequences".into(),
    };
    assert_eq!(issue.other_id(0).unwrap().value(), None);
    assert!(issue.other_id_mut(0).unwrap().fill(12));
    assert_eq!(issue.number, 12);
    assert!(issue.other_id(1).is_none() && issue.other_id_mut(1).is_none());
    // `_id` is a sequence's: no ObjectId slot.
    assert!(issue.object_id_mut().is_none());
    let _ = (issue.id, issue.title);
}

#[test]
fn every_sequence_has_a_typed_handle_named_after_its_field() {
    // Each with its strategy and its scope as types: `.scope(...)` takes a `String`'s
    // value on the number's, nothing on the id's.
    let ids: seqid::SequenceOf<Issue, kind::Counters, seqid::scoped::Unscoped> =
        Issue::id_sequence();
    let numbers: seqid::SequenceOf<Issue, kind::Block, seqid::scoped::Fields<(String,)>> =
        Issue::number_sequence();
    assert_eq!(ids.sequence().name, "issue_id");
    assert_eq!(numbers.sequence().name, "issue_number");
}

/// The optimistic sequence is primary wherever it is declared: its loop retries the
/// write, and the others are reserved once and kept across its retries.
#[derive(Serialize, seqid::Document)]
#[seq_id("order_id", collection = "orders")]
struct Order {
    #[serde(rename = "_id")]
    id: Option<u64>,
    shop: String,
    #[seq_id(
        "order_number",
        scope = "shop",
        strategy = "optimistic",
        max_attempts = 4
    )]
    number: Option<u32>,
    #[seq_id("order_receipt", strategy = "gapless", start = 1000)]
    receipt: i32,
}

#[test]
fn the_optimistic_sequence_is_primary_wherever_it_is() {
    assert_eq!(Order::SEQUENCE.name, "order_number");
    assert_eq!(Order::SEQUENCE.field, "number");
    let names: Vec<&str> = Order::OTHERS.iter().map(|s| s.name).collect();
    assert_eq!(names, ["order_id", "order_receipt"]);
    assert_eq!(Order::OTHERS[0].field, "_id");
    assert_eq!(Order::OTHERS[1].start, 1000);
    fn optimistic<T: Model<Kind = kind::Optimistic>>() {}
    optimistic::<Order>();
    let mut order = Order {
        id: None,
        shop: "east".into(),
        number: None,
        receipt: 0,
    };
    assert!(order.other_id_mut(0).unwrap().fill(5));
    assert!(order.other_id_mut(1).unwrap().fill(1000));
    assert!(
        !order.other_id_mut(1).unwrap().fill(i64::MAX),
        "an i32 cannot hold it"
    );
    assert_eq!((order.id, order.receipt), (Some(5), 1000));
    let _ = (order.shop, order.number);
    let _: seqid::SequenceOf<Order, kind::Gapless, seqid::scoped::Unscoped> =
        Order::receipt_sequence();
}

/// With `_id` left to seqid as an `ObjectId`, the first field's sequence is primary.
#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "parcels")]
struct Parcel {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    depot: String,
    #[seq_id("parcel_label")]
    label: i64,
    #[seq_id("parcel_slot", scope = "depot", strategy = "block", block_size = 10)]
    slot: i64,
}

#[test]
fn without_an_id_sequence_the_first_field_is_primary_and_id_is_an_object_id() {
    assert_eq!(Parcel::SEQUENCE.field, "label");
    assert_eq!(Parcel::OTHERS[0].field, "slot");
    let mut parcel = Parcel {
        id: None,
        depot: "north".into(),
        label: 0,
        slot: 0,
    };
    assert_eq!(parcel.object_id_mut(), Some(&mut None));
    let _ = (parcel.depot, parcel.label, parcel.slot, parcel.id);
    let _ = Parcel::label_sequence();
    let _ = Parcel::slot_sequence();
}
