//! The sequence on a field, per scope: the example, verbatim. The struct's
//! #[seq_id] only names the collection; `_id` is left to the driver's ObjectId.
use mongodb::bson::oid::ObjectId;
use seqid::{Model, Strategy};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, seqid::Document)]
#[seq_id(collection = "tickets")]
struct Ticket {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    project: String,
    #[seq_id("ticket", scope = "project", start = 1000)]
    number: i64,
}

#[test]
fn field_ticket_is_accepted() {
    let s = Ticket::SEQUENCE;
    assert_eq!(s.name, "ticket");
    assert_eq!(s.field, "number");
    assert_eq!(s.scope, &["project"]);
    assert_eq!(s.start, 1000);
    assert_eq!(s.collection, "tickets");
    assert_eq!(s.counters, seqid::DEFAULT_COUNTERS);
    assert!(matches!(s.strategy, Strategy::Counters));

    let mut ticket = Ticket {
        id: None,
        project: "apollo".into(),
        number: 0,
    };
    let _: &i64 = ticket.sequence_id();
    *ticket.sequence_id_mut() = 1000;
    assert_eq!(ticket.number, 1000);
    assert_eq!(*ticket.sequence_id(), 1000);
    let _ = (ticket.id, ticket.project);
}
