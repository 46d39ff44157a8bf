// An unknown strategy; the message lists the valid ones.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", strategy = "blocks")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
