// The id field must be serialized.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
struct User {
    #[serde(rename = "_id", skip)]
    id: i64,
}

fn main() {}
