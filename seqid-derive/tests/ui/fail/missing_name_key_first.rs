// The sequence name must come first.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id(collection = "users")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
