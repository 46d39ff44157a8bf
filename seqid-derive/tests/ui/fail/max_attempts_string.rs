// max_attempts takes an integer.
use serde::Serialize;

#[derive(Serialize, seqid::Document)]
#[seq_id("userid", strategy = "optimistic", max_attempts = "3")]
struct User {
    #[serde(rename = "_id")]
    id: i64,
}

fn main() {}
