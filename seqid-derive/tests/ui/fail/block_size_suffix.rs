// block_size is a u32: other suffixes are refused.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", strategy = "block", block_size = 10u8)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
