//! The sequence on a field, per scope: the example, verbatim. The struct's
//! #[seq_id] only names the collection; `_id`, an `Option<ObjectId>`, is filled by insert.
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
    assert_eq!(s.counters, seqid::Sequence::DEFAULT_COUNTERS);
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

/// `_id`, when it is an `Option<ObjectId>` beside a field sequence, is the slot an insert
/// fills; any other `_id` (a string, the sequence's own field) is not.
#[test]
fn an_option_object_id_beside_a_field_sequence_is_the_slot_insert_fills() {
    let mut ticket = Ticket {
        id: None,
        project: "apollo".into(),
        number: 0,
    };
    assert_eq!(ticket.object_id_mut(), Some(&mut None));
    let id = ObjectId::new();
    *ticket.object_id_mut().unwrap() = Some(id);
    assert_eq!(ticket.id, Some(id));

    #[derive(Serialize, seqid::Document)]
    #[seq_id(collection = "labels")]
    struct Named {
        #[serde(rename = "_id")]
        id: Option<String>,
        #[seq_id("label")]
        number: i64,
    }
    let mut named = Named {
        id: None,
        number: 0,
    };
    assert_eq!(named.object_id_mut(), None);

    #[derive(Serialize, seqid::Document)]
    #[seq_id("user")]
    struct OnId {
        #[serde(rename = "_id")]
        id: Option<i64>,
        other: Option<ObjectId>,
    }
    let mut on_id = OnId {
        id: None,
        other: None,
    };
    assert_eq!(on_id.object_id_mut(), None);
    let _ = (named.id, named.number, on_id.id, on_id.other);
}
