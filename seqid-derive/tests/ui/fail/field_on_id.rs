// The `_id` sequence is declared on the struct, not on the `_id` field.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct User {
    #[serde(rename = "_id")]
    #[seq_id("userid")]
    id: i64,
}

fn main() {}
