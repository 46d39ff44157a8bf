// block_size takes an integer, not a float.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", strategy = "block", block_size = 1.5)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
