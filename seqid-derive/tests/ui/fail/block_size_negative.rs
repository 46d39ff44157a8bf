// block_size must be at least 1.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", strategy = "block", block_size = -3)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
