// The id field must be serialized.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
struct User {
    #[serde(skip_serializing)]
    _id: i64,
}

fn main() {}
