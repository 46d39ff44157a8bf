// The sequence name must not be empty.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
