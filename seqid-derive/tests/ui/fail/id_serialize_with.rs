// The id field cannot be written by a custom function.
use serde::{Serialize, Serializer};

fn as_string<S: Serializer>(id: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&id.to_string())
}

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
struct User {
    #[serde(rename = "_id", serialize_with = "as_string")]
    id: i64,
}

fn main() {}
