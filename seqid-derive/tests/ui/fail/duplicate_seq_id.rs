// One #[seq_id] per type: error at the second.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid")]
#[seq_id("other")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
