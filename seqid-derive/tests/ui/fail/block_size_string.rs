// block_size takes an integer, not a string.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", strategy = "block", block_size = "10")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
