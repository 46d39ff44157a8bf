//! The sequence declared on the struct still fills `_id`, unscoped.
use seqid::{Document, Model};
use serde::Serialize;

#[derive(Serialize, Document)]
#[seq_id("userid")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
}

#[test]
fn field_classic_unchanged_is_accepted() {
    assert_eq!(User::SEQUENCE.name, "userid");
    assert_eq!(User::SEQUENCE.field, "_id");
    assert!(User::SEQUENCE.scope.is_empty());
    let user = User {
        id: 3,
        name: String::new(),
    };
    assert_eq!(*user.sequence_id(), 3);
    let _ = user.name;
}
