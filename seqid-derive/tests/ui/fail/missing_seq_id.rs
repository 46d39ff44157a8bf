// Without #[seq_id] there is no sequence.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
