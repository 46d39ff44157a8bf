// block_size must fit in a u32.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", strategy = "block", block_size = 4294967296)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
