//! The serialize half of `rename(...)` decides the `_id` field.
use seqid::{Document, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Document)]
#[seq_id("userid")]
struct User {
    #[serde(rename(serialize = "_id", deserialize = "user_id"))]
    id: u64,
    // Deserialized from `_id` but serialized as `legacy`: not the id field.
    #[serde(rename(deserialize = "_id"))]
    legacy: u64,
}

#[test]
fn rename_serialize_is_accepted() {
    let mut user = User { id: 1, legacy: 2 };
    assert_eq!(*user.sequence_id(), 1);
    *user.sequence_id_mut() = 4;
    assert_eq!(user.id, 4);
    assert_eq!(user.legacy, 2);
}
