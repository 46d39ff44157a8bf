// max_attempts must be at least 1.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", strategy = "optimistic", max_attempts = 0)]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
