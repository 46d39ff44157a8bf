// Two fields serialized as `_id`: error at the second.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
struct User {
    _id: i64,
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
