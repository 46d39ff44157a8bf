// block_size needs strategy = "block".
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", strategy = "counters", block_size = 10)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
