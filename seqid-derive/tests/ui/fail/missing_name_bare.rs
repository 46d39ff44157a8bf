// A bare #[seq_id] has no sequence name.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
